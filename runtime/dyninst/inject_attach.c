/*
 * inject_attach.c - every thread of the process held, and let go.
 *
 * Each thread of /proc/PID/task is seized (PTRACE_SEIZE, no options) and
 * interrupted (PTRACE_INTERRUPT), then waited for until it stops; the
 * directory is read again until it lists no thread we do not hold, since
 * a thread that was in clone() when it was interrupted leaves a new one.
 * A seized thread stops in one of three ways (enum inj_state):
 *
 *   interrupted	PTRACE_EVENT_STOP with SIGTRAP: it will go on as it was
 *   group-stopped	PTRACE_EVENT_STOP with a stop signal: it was stopped
 *			by SIGSTOP & co (or is being); the kernel puts it back
 *			in that stop when it is detached
 *   signalled		a signal-delivery-stop: a signal was on its way to it
 *			when it stopped; it is owed that signal, with its
 *			siginfo, when it is let go
 *
 * Signals that reach the thread running a call are owed the same way
 * (inject_call.c).  A thread owing one signal and getting another one:
 * a standard signal it already owes is dropped, as the kernel would drop it
 * when pending; others are sent again once the threads are detached.
 *
 * There is no blocking wait with a time limit for ptrace stops, so the
 * waits poll each held thread (waitpid WNOHANG), sleeping 10 us to 10 ms
 * between rounds.  Polling every thread also reaps the ones that exit,
 * which a dying thread group needs before its leader can be waited for.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "inject_int.h"

#define SIG_STANDARD_LAST 31	/* signals above are real-time: they queue */

/* ---- refusals ---- */

/* Fail when thread TID (0: the process) is traced by another process. */
static int check_tracer(struct inject *in, pid_t tid)
{
	long tracer = inj__status_long(in->pid, tid, "TracerPid", 10);

	if (tracer > 0 && inj__status_long((pid_t)tracer, 0, "Tgid", 10) > 0)
		tracer = inj__status_long((pid_t)tracer, 0, "Tgid", 10);	/* a thread's process */
	if (tracer > 0 && tracer == getpid())
		return inj__fail(in, "process %d is already traced by this process", in->pid);
	if (tracer > 0)
		return inj__fail(in, "process %d is already traced by process %ld", in->pid,
				 tracer);
	return 0;
}

static long yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	long scope = 0;

	if (!f)
		return 0;	/* no Yama */
	if (fscanf(f, "%ld", &scope) != 1)
		scope = 0;
	fclose(f);
	return scope;
}

/* Fail, saying why tracing process PID is not permitted. */
static int denied(struct inject *in)
{
	pid_t pid = in->pid;

	if (inj__status_long(pid, 0, "Kthread", 10) == 1)
		return inj__fail(in, "process %d is a kernel thread", pid);
	switch (yama_scope()) {
	case 1:
		return inj__fail(in,
				 "cannot trace process %d: kernel.yama.ptrace_scope is 1, "
				 "which lets only its ancestors trace it, or a tracer it names "
				 "with prctl(PR_SET_PTRACER), or one with CAP_SYS_PTRACE",
				 pid);
	case 2:
		return inj__fail(in,
				 "cannot trace process %d: kernel.yama.ptrace_scope is 2, "
				 "which lets only a tracer with CAP_SYS_PTRACE trace it",
				 pid);
	case 3:
		return inj__fail(in,
				 "cannot trace process %d: kernel.yama.ptrace_scope is 3, which "
				 "forbids tracing",
				 pid);
	}
	return inj__fail(in,
			 "cannot trace process %d: permission denied (another user's process, a "
			 "set-user-ID program, or one that made itself not dumpable)",
			 pid);
}

static int check_process(struct inject *in)
{
	long tgid;

	if (in->pid <= 0)
		return inj__fail(in, "invalid process id %d", in->pid);
	if (in->pid == getpid())
		return inj__fail(in, "cannot inject into process %d: it is the calling process",
				 in->pid);
	tgid = inj__status_long(in->pid, 0, "Tgid", 10);
	if (tgid < 0)
		return inj__fail(in, "no process %d", in->pid);
	if (tgid != in->pid)
		return inj__fail(in, "%d is a thread of process %ld, not a process", in->pid, tgid);
	return check_tracer(in, 0);
}

/* ---- seizing ---- */

static struct inj_thread *find(struct inject *in, pid_t tid)
{
	for (int k = 0; k < in->n; k++)
		if (in->thr[k].tid == tid)
			return &in->thr[k];
	return NULL;
}

static struct inj_thread *add(struct inject *in, pid_t tid)
{
	if (in->n == in->cap) {
		int cap = in->cap ? 2 * in->cap : 16;
		struct inj_thread *t = realloc(in->thr, cap * sizeof(*t));

		if (!t)
			return NULL;
		in->thr = t;
		in->cap = cap;
	}
	in->thr[in->n] = (struct inj_thread){ .tid = tid, .state = INJ_GONE };
	return &in->thr[in->n++];
}

static bool is_dead(pid_t pid, pid_t tid)
{
	char state[32];

	if (inj__status(pid, tid, "State", state, sizeof(state)) != 0)
		return true;
	return state[0] == 'Z' || state[0] == 'X';
}

/* Seize thread TID and ask it to stop: 1 when held, 0 when it is gone, -1 when refused. */
static int seize(struct inject *in, pid_t tid)
{
	struct inj_thread *t = add(in, tid);
	int e;

	if (!t)
		return inj__fail(in, "out of memory for the threads of process %d", in->pid);
	if (ptrace(PTRACE_SEIZE, tid, 0, 0) == 0) {
		t->state = INJ_RUNNING;
		ptrace(PTRACE_INTERRUPT, tid, 0, 0);	/* when it fails, waiting tells why */
		return 1;
	}
	e = errno;
	if (e == ESRCH || (e == EPERM && is_dead(in->pid, tid)))
		return 0;
	if (check_tracer(in, tid) != 0)
		return -1;
	if (e == EPERM)
		return denied(in);
	return inj__fail(in, "cannot trace thread %d of process %d: %s", tid, in->pid,
			 strerror(e));
}

/* Seize the threads of /proc/PID/task not held yet: how many, or -1. */
static int seize_new(struct inject *in)
{
	struct dirent *e;
	int added = 0, r = 0;
	char dir[64];
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", in->pid);
	d = opendir(dir);
	if (!d)
		return inj__fail(in, "no process %d", in->pid);
	while (r >= 0 && (e = readdir(d))) {
		pid_t tid = (pid_t)strtol(e->d_name, NULL, 10);

		if (tid <= 0 || find(in, tid))
			continue;
		r = seize(in, tid);
		added += r > 0;
	}
	closedir(d);
	return r < 0 ? -1 : added;
}

static int first_running(const struct inject *in)
{
	for (int k = 0; k < in->n; k++)
		if (in->thr[k].state == INJ_RUNNING)
			return k;
	return -1;
}

/* Wait until every seized thread has stopped (or exited). */
static int settle(struct inject *in)
{
	struct timespec end;
	int k, status;

	inj__deadline(&end, in->timeout_ms);
	while ((k = first_running(in)) >= 0) {
		int i = inj_attach__wait(in, &status, &end);

		if (i < 0)
			return inj__fail(in, "thread %d of process %d did not stop within %g s",
					 in->thr[k].tid, in->pid, in->timeout_ms / 1000.0);
		inj_attach__note(in, &in->thr[i], status);
	}
	return 0;
}

int inj_attach__all(struct inject *in)
{
	int added;

	if (check_process(in) != 0)
		return -1;
	do {
		added = seize_new(in);
		if (added < 0 || (added > 0 && settle(in) != 0))
			return -1;
	} while (added > 0);
	for (int k = 0; k < in->n; k++)
		if (in->thr[k].state != INJ_GONE)
			return 0;
	return inj__fail(in, "process %d exited while it was being stopped", in->pid);
}

/* ---- waiting ---- */

/* The first held thread with news, its wait status in STATUS; -1 when none has. */
static int poll_all(struct inject *in, int *status)
{
	for (int k = 0; k < in->n; k++) {
		struct inj_thread *t = &in->thr[k];
		pid_t r;

		if (t->state == INJ_GONE)
			continue;
		r = waitpid(t->tid, status, __WALL | WNOHANG);
		if (r == t->tid)
			return k;
		if (r < 0 && errno == ECHILD)
			t->state = INJ_GONE;	/* not ours to wait for any more */
	}
	return -1;
}

/* Wait until a held thread stops or exits: its index and STATUS, or -1 when END has passed. */
int inj_attach__wait(struct inject *in, int *status, const struct timespec *end)
{
	struct timespec nap = { 0, 10000 };

	for (;;) {
		int k = poll_all(in, status);

		if (k >= 0)
			return k;
		if (inj__past(end))
			return -1;
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 10000000)
			nap.tv_nsec *= 2;
	}
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Note what wait STATUS says of thread T: exited, or stopped, and how. */
void inj_attach__note(struct inject *in, struct inj_thread *t, int status)
{
	int sig = WSTOPSIG(status);
	siginfo_t si;

	if (!WIFSTOPPED(status)) {
		t->state = INJ_GONE;
		return;
	}
	if (status >> 16 == PTRACE_EVENT_STOP) {
		t->state = is_stop_signal(sig) ? INJ_GROUP_STOPPED : INJ_INTERRUPTED;
		return;
	}
	t->state = INJ_SIGNALLED;
	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) != 0) {
		memset(&si, 0, sizeof(si));
		si.si_signo = sig;
	}
	inj_attach__owe(in, t, &si);
}

/* ---- signals owed ---- */

static bool owes(const struct inject *in, const struct inj_thread *t, int sig)
{
	if (t->sig == sig)
		return true;
	for (int k = 0; k < in->nresend; k++)
		if (in->resend[k].tid == t->tid && in->resend[k].si.si_signo == sig)
			return true;
	return false;
}

/* Thread T is owed signal SI: it gets it when it is let go. */
void inj_attach__owe(struct inject *in, struct inj_thread *t, const siginfo_t *si)
{
	if (!t->sig) {
		t->sig = si->si_signo;
		t->si = *si;
		return;
	}
	if (si->si_signo <= SIG_STANDARD_LAST && owes(in, t, si->si_signo))
		return;	/* a standard signal pending twice is pending once */
	if (in->nresend < INJ_RESEND_MAX)
		in->resend[in->nresend++] = (struct inj_resend){ .tid = t->tid, .si = *si };
}

/* Send SIGNAL R again, with its siginfo when the kernel lets us forge it. */
static void resend(const struct inject *in, const struct inj_resend *r)
{
	siginfo_t si = r->si;

	if (si.si_code < 0 && si.si_code != SI_TKILL &&
	    syscall(SYS_rt_tgsigqueueinfo, in->pid, r->tid, si.si_signo, &si) == 0)
		return;
	syscall(SYS_tgkill, in->pid, r->tid, si.si_signo);
}

/* ---- letting go ---- */

/* Stop thread T again, if it can be within INJ_GRACE_MS. */
static void stop_again(struct inject *in, struct inj_thread *t)
{
	struct timespec end;
	int k, status;

	ptrace(PTRACE_INTERRUPT, t->tid, 0, 0);
	inj__deadline(&end, INJ_GRACE_MS);
	while (t->state == INJ_RUNNING && (k = inj_attach__wait(in, &status, &end)) >= 0)
		inj_attach__note(in, &in->thr[k], status);
}

/* Reap thread T, which could not be detached: it is exiting. */
static void reap(struct inject *in, struct inj_thread *t)
{
	struct timespec end;
	int k, status;

	inj__deadline(&end, INJ_GRACE_MS);
	while (t->state != INJ_GONE && (k = inj_attach__wait(in, &status, &end)) >= 0)
		if (!WIFSTOPPED(status))
			in->thr[k].state = INJ_GONE;
}

static void let_go(struct inject *in, struct inj_thread *t)
{
	int sig = 0;

	if (t->state == INJ_RUNNING)
		stop_again(in, t);
	if (t->state == INJ_GONE || t->state == INJ_RUNNING)
		return;
	if (t->sig && t->state == INJ_SIGNALLED) {
		ptrace(PTRACE_SETSIGINFO, t->tid, 0, &t->si);
		sig = t->sig;
	} else if (t->sig && in->nresend < INJ_RESEND_MAX) {
		in->resend[in->nresend++] = (struct inj_resend){ .tid = t->tid, .si = t->si };
	}
	if (ptrace(PTRACE_DETACH, t->tid, 0, sig) != 0 && errno == ESRCH)
		reap(in, t);
}

void inj_attach__release(struct inject *in)
{
	for (int k = 0; k < in->n; k++)
		let_go(in, &in->thr[k]);
	for (int k = 0; k < in->nresend; k++)
		resend(in, &in->resend[k]);
	free(in->thr);
	in->thr = NULL;
	in->n = in->cap = 0;
}
