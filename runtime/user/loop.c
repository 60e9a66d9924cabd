/*
 * loop.c - run a loaded script: begin probes, the event loop, end probes.
 *
 * The sequence is stap's.  Kernel probes are attached already, but their
 * handlers do nothing until the run state in the map stp_control says
 * running (runtime/bpf/stp_control.bpf.h):
 *   1. begin probes, by priority then script order; then the state is
 *      running;
 *   2. the event loop (epoll): the ring buffer, user-context timers,
 *      SIGINT/SIGTERM/SIGHUP, SIGCHLD for -c, SIGUSR2 (-o's next file),
 *      the -T deadline, until
 *      exit(), a signal, the deadline, the -c command's end, or more errors
 *      than MAXERRORS;
 *   3. the kernel probes are detached and the ring buffer drained;
 *   4. end probes (skipped once an error stopped the script), or error
 *      probes when one did, by priority; then the globals stap prints at
 *      exit (written, never read); the ring buffer is drained between
 *      every handler so that output keeps its order;
 *   5. the summary.
 * The -c command starts when the begin probes are done.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "script_int.h"
#include "uctx_glue.h"
#include "proc_attach.h"
#include "procfs.h"

#define MAX_TIMER_RUNS 64	/* handler runs for one wakeup of an overrun timer */

/* What an epoll event is about: the tag's high half. */
enum {
	EV_RINGBUF = 1,
	EV_SIGNAL,
	EV_DEADLINE,
	EV_TIMER,		/* low half: index in s->timers */
	EV_DYN_POLL,		/* the dyninst runtime's timer to read its ring buffer */
	EV_DYN_REPORT,		/* the dyninst runtime's loader in the -c command */
	EV_PROCFS,		/* low half: a procfs file's thread asks for its handlers */
};

void stp_request_stop(struct stp_script *s, enum stp_state state)
{
	if (state <= s->state)
		return;
	if (s->state < STP_STATE_STOPPING)
		stp_control_set(s, state);	/* kernel handlers stop here */
	s->state = state;
}

static int watch(struct stp_script *s, int fd, uint32_t kind, uint32_t index)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)kind << 32 | index };

	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		stp_msg(s, "error", "cannot watch a descriptor: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/* ---- probes run here ---- */

static void drain(struct stp_script *s)
{
	stp_events_drain(s);
}

static int by_priority(const struct stp_meta *m, int a, int b)
{
	int64_t pa = m->probes[a].priority, pb = m->probes[b].priority;

	return pa < pb ? -1 : pa > pb ? 1 : a - b;
}

/* Run the user-context probes of one kind, by priority then order, while the state is `want`. */
static void run_phase(struct stp_script *s, enum stp_probe_kind kind, enum stp_state want)
{
	const struct stp_meta *m = s->meta;
	int n = 0, *order = calloc((size_t)m->nprobes + 1, sizeof(int));

	if (!order)
		return;
	for (int i = 0; i < m->nprobes; i++)
		if (m->probes[i].kind == kind && m->probes[i].context == STP_CTX_USER)
			order[n++] = i;
	for (int i = 1; i < n; i++)	/* insertion sort: stable, few probes */
		for (int j = i; j > 0 && by_priority(m, order[j - 1], order[j]) > 0; j--) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (int i = 0; i < n && s->state == want; i++) {
		stp_uctx_run(s, order[i]);
		drain(s);
	}
	free(order);
}

/* ---- timers ---- */

static int64_t timer_next_ns(const struct stp_meta_probe *p)
{
	int64_t ns = p->interval_ns;

	if (p->randomize_ns > 0)
		ns += (int64_t)(random() % (2 * p->randomize_ns + 1)) - p->randomize_ns;
	return ns < 1000 ? 1000 : ns;
}

static struct timespec ns_to_ts(int64_t ns)
{
	return (struct timespec){ .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };
}

static int timer_arm(struct stp_script *s, struct stp_timer *t)
{
	const struct stp_meta_probe *p = &s->meta->probes[t->probe];
	struct itimerspec its = { .it_value = ns_to_ts(timer_next_ns(p)) };

	if (p->randomize_ns <= 0)
		its.it_interval = ns_to_ts(p->interval_ns < 1000 ? 1000 : p->interval_ns);
	return timerfd_settime(t->fd, 0, &its, NULL);
}

static int timers_start(struct stp_script *s)
{
	const struct stp_meta *m = s->meta;

	s->timers = calloc((size_t)m->nprobes + 1, sizeof(*s->timers));
	if (!s->timers)
		return -ENOMEM;
	for (int i = 0; i < m->nprobes; i++) {
		struct stp_timer *t = &s->timers[s->ntimers];

		if (m->probes[i].kind != STP_PROBE_TIMER || m->probes[i].context != STP_CTX_USER)
			continue;
		t->probe = i;
		t->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (t->fd < 0 || timer_arm(s, t) < 0 ||
		    watch(s, t->fd, EV_TIMER, (uint32_t)s->ntimers) < 0) {
			stp_msg(s, "error", "cannot start the timer of probe %s: %s",
				m->probes[i].point, strerror(errno));
			if (t->fd >= 0)
				close(t->fd);
			return -errno;
		}
		s->ntimers++;
	}
	return 0;
}

static void timers_stop(struct stp_script *s)
{
	for (int i = 0; i < s->ntimers; i++)
		close(s->timers[i].fd);
	free(s->timers);
	s->timers = NULL;
	s->ntimers = 0;
}

static void on_timer(struct stp_script *s, struct stp_timer *t)
{
	uint64_t expirations = 0;

	if (read(t->fd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return;
	if (s->meta->probes[t->probe].randomize_ns > 0)
		timer_arm(s, t);
	if (expirations > MAX_TIMER_RUNS)
		expirations = MAX_TIMER_RUNS;
	for (uint64_t k = 0; k < expirations && s->state == STP_STATE_RUNNING; k++) {
		stp_uctx_run(s, t->probe);
		drain(s);
	}
}

static int watch_procfs(struct stp_script *s, int fd, int i)
{
	return watch(s, fd, EV_PROCFS, (uint32_t)i);
}

/* ---- signals and the deadline ---- */

static void stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGUSR2);	/* -o's next file, as stap's stapio */
}

static int signals_open(struct stp_script *s)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	stop_signals(&set);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	s->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (s->sigfd < 0) {
		stp_msg(s, "error", "cannot receive signals: %s", strerror(errno));
		return -errno;
	}
	return watch(s, s->sigfd, EV_SIGNAL, 0);
}

static void signals_close(struct stp_script *s)
{
	sigset_t set;

	if (s->sigfd >= 0)
		close(s->sigfd);
	s->sigfd = -1;
	stop_signals(&set);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

static void on_signal(struct stp_script *s)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			stp_target_reap(s);
		else if (si.ssi_signo == SIGUSR2)
			stp_script__switch_file(s);
		else
			stp_request_stop(s, STP_STATE_STOPPING);
	}
}

static int deadline_open(struct stp_script *s)
{
	struct itimerspec its = { .it_value = { .tv_sec = s->opts.timeout_s } };

	if (s->opts.timeout_s <= 0)
		return 0;
	s->deadline_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->deadline_fd < 0 || timerfd_settime(s->deadline_fd, 0, &its, NULL) < 0) {
		stp_msg(s, "error", "cannot set the -T deadline: %s", strerror(errno));
		return -errno;
	}
	return watch(s, s->deadline_fd, EV_DEADLINE, 0);
}

/* ---- the loop ---- */

static void dispatch(struct stp_script *s, const struct epoll_event *ev)
{
	uint32_t kind = (uint32_t)(ev->data.u64 >> 32), index = (uint32_t)ev->data.u64;

	switch (kind) {
	case EV_RINGBUF:
		drain(s);
		break;
	case EV_DYN_POLL:
		stp_dyn_on_poll(s);
		break;
	case EV_SIGNAL:
		on_signal(s);
		break;
	case EV_DEADLINE:
		stp_request_stop(s, STP_STATE_STOPPING);
		break;
	case EV_TIMER:
		on_timer(s, &s->timers[index]);
		break;
	case EV_PROCFS:
		stp_procfs_on_request(s, (int)index);
		break;
	case EV_DYN_REPORT:
		if (stp_dyn_on_report(s) < 0) {
			s->internal_error = true;
			stp_request_stop(s, STP_STATE_STOPPING);
		}
		break;
	}
}

static void event_loop(struct stp_script *s)
{
	struct epoll_event evs[16];

	while (s->state == STP_STATE_RUNNING) {
		int n = epoll_wait(s->epfd, evs, 16, -1);

		if (n < 0 && errno != EINTR) {
			stp_msg(s, "error", "epoll_wait: %s", strerror(errno));
			s->internal_error = true;
			break;
		}
		drain(s);	/* kernel output first: it happened before the timers ran */
		for (int i = 0; i < n; i++)
			dispatch(s, &evs[i]);
		stp_out_flush(s);
	}
}

/*
 * The dyninst runtime: its ring buffer is in the segment, with no
 * descriptor to wait on, so a timer wakes the loop to read it; and the
 * -c command's loader reports on a pipe.
 */
static int dyn_poll_open(struct stp_script *s)
{
	struct itimerspec its = { .it_interval = { 0, STP_DYN_POLL_MS * 1000000L },
				  .it_value = { 0, STP_DYN_POLL_MS * 1000000L } };
	int err;

	s->dyn_poll_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->dyn_poll_fd < 0 || timerfd_settime(s->dyn_poll_fd, 0, &its, NULL) < 0) {
		stp_msg(s, "error", "cannot set the ring buffer's timer: %s", strerror(errno));
		return -errno;
	}
	err = watch(s, s->dyn_poll_fd, EV_DYN_POLL, 0);
	if (!err && s->dyn_report >= 0)
		err = watch(s, s->dyn_report, EV_DYN_REPORT, 0);
	return err;
}

static int loop_open(struct stp_script *s)
{
	int err;

	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return -errno;
	err = stp_events_open(s);
	if (!err && s->rb)
		err = watch(s, ring_buffer__epoll_fd(s->rb), EV_RINGBUF, 0);
	if (!err && s->dseg)
		err = dyn_poll_open(s);
	if (!err)
		err = signals_open(s);
	if (!err)
		err = deadline_open(s);
	if (!err)
		stp_target_reap(s);	/* a SIGCHLD before signalfd existed */
	return err;
}

static void loop_close(struct stp_script *s)
{
	timers_stop(s);
	signals_close(s);
	if (s->deadline_fd >= 0)
		close(s->deadline_fd);
	if (s->dyn_poll_fd >= 0)
		close(s->dyn_poll_fd);
	s->dyn_poll_fd = -1;
	if (s->epfd >= 0)
		close(s->epfd);
	s->deadline_fd = s->epfd = -1;
}

/* End or error probes, autoprint; each handler's kernel output drained. */
static void finish(struct stp_script *s)
{
	stp_request_stop(s, STP_STATE_STOPPING);
	stp_procfs_stop(s);	/* readers now find no file, as after stap's module exit */
	stp_detach_all(s);
	drain(s);
	run_phase(s, STP_PROBE_END, STP_STATE_STOPPING);
	if (s->state == STP_STATE_STOPPING)
		stp_autoprint(s);
	run_phase(s, STP_PROBE_ERROR, STP_STATE_ERROR);
	drain(s);
	stp_out_flush(s);
}

int stp_script__run(struct stp_script *s)
{
	int err = loop_open(s);

	if (err) {
		loop_close(s);
		return 1;
	}
	s->state = STP_STATE_STARTING;
	run_phase(s, STP_PROBE_BEGIN, STP_STATE_STARTING);
	if (s->state == STP_STATE_STARTING) {
		s->state = STP_STATE_RUNNING;
		if (stp_control_set(s, STP_STATE_RUNNING) < 0 || timers_start(s) < 0)
			stp_request_stop(s, STP_STATE_STOPPING);
		if (s->state == STP_STATE_RUNNING && stp_procfs_start(s, watch_procfs) < 0) {
			s->internal_error = true;
			stp_request_stop(s, STP_STATE_STOPPING);
		}
		stp_proc_existing(s);
		stp_dyn_begin_pid(s);	/* the same for the dyninst runtime's -x */
		stp_out_flush(s);
		stp_target_release(s);
		event_loop(s);
	}
	finish(s);
	loop_close(s);
	stp_target_stop(s);
	stp_summary(s);
	return s->errors || s->internal_error || s->child_failed ? 1 : 0;
}
