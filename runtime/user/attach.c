/*
 * attach.c - attach kernel-context probes by kind.
 *
 * Tracepoints through tracefs, raw tracepoints (raw_tp or tp_btf, as the
 * program's section says), perf events (timer.profile: cpu-clock on every
 * online CPU; perf.*: the event the metadata gives, with its sample
 * period; kernel.data: a breakpoint whose every hit is a sample),
 * anything else as libbpf's section name says.  A probe that
 * cannot attach is reported with its point, its place in the script and
 * why; an optional one ('?') is skipped with a note at -v.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "handover.h"
#include "script_int.h"
#include "attach_kprobe.h"
#include "attach_netfilter.h"
#include "attach_rawtp.h"
#include "tapset_user.h"
#include "proc_attach.h"
#include "symbolize.h"

#define PMU_DIR "/sys/bus/event_source/devices"
#define PROFILE_PERIOD_NS 4000000	/* timer.profile when HZ is unknown: 250 */
#define PERF_DEFAULT_SAMPLE 1000000	/* perf.*: stap's default sample period */

bool stp_kprobes_available(void)
{
	return access("/sys/bus/event_source/devices/kprobe/type", F_OK) == 0 ||
	       access("/sys/kernel/tracing/kprobe_events", F_OK) == 0 ||
	       access("/sys/kernel/debug/tracing/kprobe_events", F_OK) == 0;
}

static bool uprobes_available(void)
{
	return access("/sys/bus/event_source/devices/uprobe/type", F_OK) == 0 ||
	       access("/sys/kernel/tracing/uprobe_events", F_OK) == 0;
}

/* The CPUs that are online now, as a list of numbers; returns the count. */
static int online_cpus(int *cpus, int max)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	int n = 0, lo, hi;
	char sep;

	if (!f) {
		for (n = 0; n < max && n < (int)sysconf(_SC_NPROCESSORS_ONLN); n++)
			cpus[n] = n;
		return n;
	}
	while (fscanf(f, "%d", &lo) == 1) {
		hi = lo;
		if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
			if (fscanf(f, "%d", &hi) != 1)
				break;
			if (fscanf(f, "%c", &sep) != 1)
				sep = '\n';
		}
		for (int c = lo; c <= hi && n < max; c++)
			cpus[n++] = c;
		if (sep != ',')
			break;
	}
	fclose(f);
	return n;
}

static int perf_open(struct perf_event_attr *attr, int cpu)
{
	return (int)syscall(__NR_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* timer.profile fires once a tick: the kernel's HZ, as the tapset services know it. */
static uint64_t tick_ns(void)
{
	int64_t hz = stp_kernel_hz();

	return hz > 0 ? (uint64_t)(1000000000 / hz) : PROFILE_PERIOD_NS;
}


/*
 * kernel.data: a breakpoint as the kernel's hw_breakpoint_init() makes
 * one, whose every hit is a sample; a symbol is looked up now, as stap's
 * module does when it registers the probe.
 */
static int bp_attr(const struct stp_meta_probe *p, struct perf_event_attr *attr)
{
	attr->bp_addr = p->bp_symbol ? stp_kallsyms_address(p->bp_symbol, false) : p->bp_addr;
	if (!attr->bp_addr)
		return -ENXIO;
	attr->bp_type = p->bp_type;
	attr->bp_len = p->bp_len;
	attr->pinned = 1;
	return 0;
}

static int perf_attr(const struct stp_script *s, const struct stp_meta_probe *p,
		     struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	if (p->kind == STP_PROBE_PROFILE) {
		attr->type = PERF_TYPE_SOFTWARE;
		attr->config = PERF_COUNT_SW_CPU_CLOCK;
		attr->sample_period = p->perf_sample ? p->perf_sample :
				      p->interval_ns > 0 ? (uint64_t)p->interval_ns : tick_ns();
		return 0;
	}
	attr->type = p->perf_type;
	attr->config = p->perf_config;
	attr->sample_period = p->perf_sample ? p->perf_sample : PERF_DEFAULT_SAMPLE;
	return p->perf_type == PERF_TYPE_BREAKPOINT ? bp_attr(p, attr) : 0;
}

/*
 * Link PROG_FD to the perf event PFD with COOKIE and enable it: the link's
 * descriptor, or -errno.  PFD is closed either way: the link holds the
 * event, and closing the link detaches the program and frees the event.
 */
int stp_link_perf(int prog_fd, int pfd, uint64_t cookie)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .perf_event.bpf_cookie = cookie);
	int fd = bpf_link_create(prog_fd, pfd, BPF_PERF_EVENT, &opts), err = 0;

	if (fd < 0)
		err = -errno;
	else if (ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0) < 0)
		err = -errno;
	if (err && fd >= 0)
		close(fd);
	close(pfd);
	return err ? err : fd;
}

/* Tracepoint SYS:NAME's id in tracefs, or -errno. */
static int tracepoint_id(const char *sys, const char *name)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	int err = -ENOENT;

	for (size_t r = 0; r < sizeof(roots) / sizeof(roots[0]); r++) {
		char path[512];
		FILE *f;
		int id;

		snprintf(path, sizeof(path), "%s/events/%s/%s/id", roots[r], sys, name);
		f = fopen(path, "re");
		if (!f) {
			if (errno != ENOENT)
				err = -errno;
			continue;
		}
		id = fscanf(f, "%d", &id) == 1 ? id : -EINVAL;
		fclose(f);
		return id;
	}
	return err;
}

/* PROG_FD on tracepoint SYS:NAME (a perf event, as libbpf's) with COOKIE: the link, or -errno. */
int stp_link_tracepoint(int prog_fd, const char *sys, const char *name, uint64_t cookie)
{
	struct perf_event_attr attr;
	int id = tracepoint_id(sys, name), pfd;

	if (id < 0)
		return id;
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = (uint64_t)id;
	pfd = perf_open(&attr, 0);	/* every CPU's hits: a tracepoint's event is not per CPU */
	if (pfd < 0)
		return -errno;
	return stp_link_perf(prog_fd, pfd, cookie);
}

/*
 * Probe I's link FD, made with bpf(2) (perf events, tracepoints, raw
 * tracepoints, netfilter), kept until the detach; probe I counts as
 * attached from its first.
 */
int stp_keep_link_fd(struct stp_script *s, int i, int fd)
{
	int n = 0, *list;

	if (!s->link_fds)
		s->link_fds = calloc((size_t)s->meta->nprobes + 1, sizeof(*s->link_fds));
	if (s->link_fds && s->link_fds[i])
		while (s->link_fds[i][n] >= 0)
			n++;
	list = s->link_fds ? realloc(s->link_fds[i], (size_t)(n + 2) * sizeof(int)) : NULL;
	if (!s->links[i])
		s->links[i] = calloc(1, sizeof(struct bpf_link *));
	if (!list || !s->links[i]) {
		close(fd);
		return -ENOMEM;
	}
	list[n] = fd;
	list[n + 1] = -1;
	s->link_fds[i] = list;
	return 0;
}

/* One perf event and link per online CPU. */
static int attach_perf(struct stp_script *s, int i, const struct stp_prog *prog)
{
	struct perf_event_attr attr;
	int ncpus = s->ncpus, *cpus = calloc((size_t)ncpus, sizeof(int));
	int n, err = 0;

	if (!cpus)
		return -ENOMEM;
	err = perf_attr(s, &s->meta->probes[i], &attr);
	n = err ? 0 : online_cpus(cpus, ncpus);
	for (int c = 0; c < n && !err; c++) {
		int fd = perf_open(&attr, cpus[c]);

		if (fd < 0) {
			if (errno == ENODEV)	/* went offline */
				continue;
			err = -errno;
			break;
		}
		fd = stp_link_perf(prog->fd, fd, 0);
		err = fd < 0 ? fd : stp_keep_link_fd(s, i, fd);
	}
	free(cpus);
	return err;
}

/* Probe I on its raw tracepoint, without a cookie (its program is its own). */
static int attach_rawtp_plain(struct stp_script *s, int i, const struct stp_prog *prog)
{
	int fd = bpf_raw_tracepoint_open(s->meta->probes[i].tp_name, prog->fd);

	return fd < 0 ? -errno : stp_keep_link_fd(s, i, fd);
}

/* What only libbpf's object attaches: uprobes one by one, kprobes, fentry, by section name. */
static int attach_libbpf(struct stp_script *s, int i)
{
	const struct stp_meta_probe *p = &s->meta->probes[i];
	struct bpf_program *prog = stp_script__prog(s, p->prog);
	struct bpf_link *link;
	int err;

	if (!prog)
		return -ENOENT;
	if (p->kind == STP_PROBE_NETFILTER)
		return stp_nf_attach(s, i, prog);
	if (p->kind == STP_PROBE_UPROBE)
		link = stp_attach_uprobe(s, p, prog);
	else if (p->kind == STP_PROBE_KFUNC)
		link = stp_attach_kprobe(p, prog);
	else
		link = bpf_program__attach(prog);
	err = libbpf_get_error(link);
	if (err)
		return err;
	s->links[i] = calloc(2, sizeof(struct bpf_link *));
	if (!s->links[i]) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	s->links[i][0] = link;
	return 0;
}

/* How probe I attaches: from its program's descriptor, or through libbpf's object. */
enum attach_way {
	BY_PERFCTR,		/* per thread, later: perfctr.c */
	BY_PERF,
	BY_PROC,
	BY_TRACEPOINT,
	BY_UPROBE_MULTI,
	BY_RAW_TRACEPOINT,
	BY_LIBBPF,		/* uprobes one by one, kprobes, fentry, netfilter, by section */
};

static enum attach_way attach_way(const struct stp_script *s, int i, const struct stp_prog *prog)
{
	const struct stp_meta_probe *p = &s->meta->probes[i];

	if (p->kind == STP_PROBE_PERF && p->perf_path)
		return BY_PERFCTR;
	if (p->kind == STP_PROBE_PROFILE || p->kind == STP_PROBE_PERF)
		return BY_PERF;
	if (stp_proc_probe(p, prog->section))
		return BY_PROC;
	if (p->kind == STP_PROBE_TRACEPOINT && p->tp_system && p->tp_name)
		return BY_TRACEPOINT;
	if (p->kind == STP_PROBE_UPROBE && s->um_on)
		return BY_UPROBE_MULTI;
	if (p->kind == STP_PROBE_RAW_TRACEPOINT && prog->type == BPF_PROG_TYPE_RAW_TRACEPOINT &&
	    p->tp_name)
		return BY_RAW_TRACEPOINT;
	return BY_LIBBPF;
}

bool stp_attach_needs_object(const struct stp_script *s, int i, const struct stp_prog *prog)
{
	enum attach_way way = attach_way(s, i, prog);

	return way == BY_LIBBPF || way == BY_PERFCTR;
}

/*
 * Probe I with its loaded program PROG.  Tracepoints, raw tracepoints,
 * perf events, processes' begin and end and uprobe_multi links are made
 * from the program's descriptor alone (a kept set's too: keep.c).
 */
static int attach_one(struct stp_script *s, int i, const struct stp_prog *prog)
{
	const struct stp_meta_probe *p = &s->meta->probes[i];
	int fd;

	switch (attach_way(s, i, prog)) {
	case BY_PERFCTR:
		s->links[i] = calloc(1, sizeof(struct bpf_link *));
		return s->links[i] ? 0 : -ENOMEM;
	case BY_PERF:
		return attach_perf(s, i, prog);
	case BY_PROC:
		return stp_proc_attach(s, i, prog);
	case BY_TRACEPOINT:
		/* cookie I: a program that several probes share (emit_merge.c) knows which fired */
		fd = stp_link_tracepoint(prog->fd, p->tp_system, p->tp_name, (uint64_t)i);
		return fd < 0 ? fd : stp_keep_link_fd(s, i, fd);
	case BY_UPROBE_MULTI:
		return stp_um_attach_one(s, i);
	case BY_RAW_TRACEPOINT:	/* with cookie I where the kernel gives one: a merged program's */
		return stp_rtp_cookies() ? stp_rtp_attach(s, i, prog->fd) :
		       attach_rawtp_plain(s, i, prog);
	case BY_LIBBPF:
	default:
		return attach_libbpf(s, i);
	}
}

/* Why a kernel.data breakpoint cannot be registered (ERR: a negative errno), in words; or NULL. */
static const char *bp_reason(int err)
{
	if (err == -ENXIO)
		return "no such symbol in /proc/kallsyms (a kernel built without "
		       "CONFIG_KALLSYMS_ALL lists no data symbols)";
	if (err == -ENOSPC)
		return "no debug register is free for the breakpoint (a CPU has 4 on x86; "
		       "each kernel.data probe takes one on every CPU, and so do other "
		       "watchpoints, perf's mem: events and debuggers)";
	if (err == -EINVAL)
		return "the kernel refused the breakpoint: its address is not one it watches, "
		       "or not aligned to its length";
	if (err == -ENOENT || err == -EOPNOTSUPP)
		return "this kernel has no hardware breakpoints (no CONFIG_HAVE_HW_BREAKPOINT)";
	return NULL;
}

/* Why a perf event of TYPE cannot be opened here (ERR: a negative errno), in words; or NULL. */
const char *stp_perf_reason(uint32_t type, int err)
{
	bool hw = type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE;

	if (type == PERF_TYPE_BREAKPOINT)
		return bp_reason(err);

	if (hw && (err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV) &&
	    access(PMU_DIR "/cpu", F_OK) != 0)
		return "this machine has no hardware PMU (no 'cpu' in " PMU_DIR "): perf.hw.* "
		       "events need one; perf.sw.* events work";
	if (err == -ENOENT || err == -EOPNOTSUPP)
		return hw ? "this machine has no such hardware counter" :
		       "this kernel has no such perf event";
	if (err == -EACCES || err == -EPERM)
		return "perf events are not permitted (see /proc/sys/kernel/perf_event_paranoid)";
	if (err == -EINVAL)
		return "the kernel refused the perf event's type, config or sample period";
	return NULL;
}

/* Why a probe could not attach, in words; NULL: say strerror(err). */
static const char *attach_reason(const struct stp_meta_probe *p, int err)
{
	switch (p->kind) {
	case STP_PROBE_KFUNC:
		if (!stp_kprobes_available() && (err == -ENOENT || err == -EOPNOTSUPP))
			return "kprobes are not available on this kernel (no CONFIG_KPROBES)";
		if (err == -EPERM)
			return "this kernel refuses fentry/fexit programs (operation not permitted)";
		if (err == -ENOENT)
			return "no such function in this kernel";
		break;
	case STP_PROBE_UPROBE:
		if (!uprobes_available())
			return "uprobes are not available on this kernel (no CONFIG_UPROBES)";
		if (err == -ENOENT)
			return "no such file or symbol";
		break;
	case STP_PROBE_TRACEPOINT:
	case STP_PROBE_RAW_TRACEPOINT:
	case STP_PROBE_PROCESS_BEGIN:
	case STP_PROBE_PROCESS_END:
		if (err == -ENOENT)
			return "no such tracepoint on this kernel";
		break;
	case STP_PROBE_PROFILE:
	case STP_PROBE_PERF:
		return stp_perf_reason(p->perf_type, err);
	case STP_PROBE_NETFILTER:
		return stp_nf_reason(err);
	default:
		break;
	}
	if (err == -EPERM || err == -EACCES)
		return "operation not permitted (pmstap needs root or CAP_BPF and CAP_PERFMON)";
	return NULL;
}

/* Probe I's links, of either kind, closed (its attach failed part way). */
static void drop_links(struct stp_script *s, int i)
{
	for (int j = 0; s->links[i] && s->links[i][j]; j++)
		bpf_link__destroy(s->links[i][j]);
	free(s->links[i]);
	s->links[i] = NULL;
	for (int j = 0; s->link_fds && s->link_fds[i] && s->link_fds[i][j] >= 0; j++)
		close(s->link_fds[i][j]);
	if (s->link_fds) {
		free(s->link_fds[i]);
		s->link_fds[i] = NULL;
	}
}

/*
 * Attach probe i.  Returns 0, 1 when it was skipped (optional and
 * unavailable here), or a negative errno after telling why.
 */
int stp_attach_probe(struct stp_script *s, int i)
{
	const struct stp_meta_probe *p = &s->meta->probes[i];
	const struct stp_prog *prog;
	const char *why;
	char where[256], site[320];
	int err;

	if (p->context != STP_CTX_KERNEL || s->skipped[i])
		return s->skipped[i];
	prog = stp_script__program(s, p->prog);
	err = prog ? attach_one(s, i, prog) : -ENOENT;
	if (!err)
		return 0;
	drop_links(s, i);
	why = attach_reason(p, err);
	if (p->optional) {
		s->skipped[i] = true;
		if (s->opts.verbose)
			stp_msg(s, "note", "skipping optional probe %s: %s", p->point,
				why ? why : strerror(-err));
		return 1;
	}
	stp_msg(s, "error", "%s: cannot attach probe %s%s: %s",
		stp_loc_str(&p->loc, where, sizeof(where)), p->point,
		stp_kprobe_site(p, stp_script__prog(s, p->prog), site, sizeof(site)),
		why ? why : strerror(-err));
	return err;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The kernel attachments made: links, one per CPU for perf events, and the dispatchers. */
static int count_links(const struct stp_script *s)
{
	int n = (s->sc_link_fds[0] >= 0) + (s->sc_link_fds[1] >= 0) + s->um_nfds;

	for (int i = 0; s->link_fds && i < s->meta->nprobes; i++)
		for (int j = 0; s->link_fds[i] && s->link_fds[i][j] >= 0; j++)
			n++;
	for (int i = 0; i < s->meta->nprobes; i++)
		for (int j = 0; s->links[i] && s->links[i][j]; j++)
			n++;
	return n;
}

/*
 * What detaching closes: a link of libbpf's, or a link's file descriptor.
 * Closing a perf event on a tracepoint waits for the kernel's grace
 * periods (tracepoint_synchronize_unregister()): 65-80 ms each for the
 * raw_syscalls dispatchers on this project's VMs, most of a short run's
 * time.  The waits are sleeps, not work, so the attachments are closed
 * by several threads at once, whatever the CPUs, and their waits overlap.
 */
#define DETACH_THREADS 8

struct detach_item {
	struct bpf_link *link;
	int fd;
};

struct detach_work {
	struct detach_item *items;
	int n, next;
};

static void detach_one(struct detach_item it)
{
	if (it.link)
		bpf_link__destroy(it.link);
	else
		close(it.fd);
}

static void *detach_worker(void *arg)
{
	struct detach_work *w = arg;
	int i;

	while ((i = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED)) < w->n)
		detach_one(w->items[i]);
	return NULL;
}

/* IT into W, or closed at once when W has no room (its allocation failed). */
static void put_item(struct detach_work *w, struct detach_item it)
{
	if (w->items)
		w->items[w->n++] = it;
	else
		detach_one(it);
}

/* Close W's items: the calling thread and up to DETACH_THREADS - 1 more. */
static void detach_items(struct detach_work *w)
{
	pthread_t threads[DETACH_THREADS - 1];
	int started = 0;

	while (started < DETACH_THREADS - 1 && started < w->n - 1 &&
	       pthread_create(&threads[started], NULL, detach_worker, w) == 0)
		started++;
	detach_worker(w);
	while (started > 0)
		pthread_join(threads[--started], NULL);
}

/* Every kernel attachment of S into W (room for count_links(S), or none), and none left in S. */
static void collect_links(struct stp_script *s, struct detach_work *w)
{
	for (int d = 0; d < 2; d++) {
		if (s->sc_link_fds[d] >= 0)
			put_item(w, (struct detach_item){ .fd = s->sc_link_fds[d] });
		s->sc_link_fds[d] = -1;
	}
	for (int i = 0; i < s->um_nfds; i++)
		put_item(w, (struct detach_item){ .fd = s->um_fds[i] });
	free(s->um_fds);
	s->um_fds = NULL;
	s->um_nfds = 0;
	for (int i = 0; i < s->meta->nprobes; i++) {
		for (int j = 0; s->links[i] && s->links[i][j]; j++)
			put_item(w, (struct detach_item){ .link = s->links[i][j], .fd = -1 });
		free(s->links[i]);
		s->links[i] = NULL;
		for (int j = 0; s->link_fds && s->link_fds[i] && s->link_fds[i][j] >= 0; j++)
			put_item(w, (struct detach_item){ .fd = s->link_fds[i][j] });
		if (s->link_fds) {
			free(s->link_fds[i]);
			s->link_fds[i] = NULL;
		}
	}
}

void stp_detach_all(struct stp_script *s)
{
	double t0 = now_ms();
	struct detach_work w = { 0 };
	int n;

	stp_dyn_detach_pid(s);	/* -x: the process runs on without the probes */
	stp_kmod_detach(s);
	stp_perfctr_detach(s);
	if (!s->links || !s->meta)
		return;
	n = count_links(s);
	w.items = calloc((size_t)n + 1, sizeof(*w.items));
	collect_links(s, &w);	/* without room: one at a time, as it goes */
	detach_items(&w);
	free(w.items);
	if (s->opts.verbose && n)
		stp_msg(s, "note", "detached %d kernel attachment%s in %.0f ms", n, n == 1 ? "" : "s",
			now_ms() - t0);
}

/*
 * -v: "attached 718 kernel probes (716 through raw_syscalls) with 4 kernel
 * attachments in 9 ms"; "(4090 on 1 uprobe_multi link)".
 */
static void report_attach(const struct stp_script *s, int attached, int skipped, int dispatched,
			  double ms)
{
	char through[128] = "";
	int links = count_links(s), multi, um = stp_um_count(s, &multi);

	if (dispatched && multi)
		snprintf(through, sizeof(through), " (%d through raw_syscalls, %d on %d uprobe_multi "
			 "link%s)", dispatched, multi, um, um == 1 ? "" : "s");
	else if (dispatched)
		snprintf(through, sizeof(through), " (%d through raw_syscalls)", dispatched);
	else if (multi)
		snprintf(through, sizeof(through), " (%d on %d uprobe_multi link%s)", multi, um,
			 um == 1 ? "" : "s");
	stp_msg(s, "note", "attached %d kernel probe%s%s%s with %d kernel attachment%s in %.0f ms",
		attached, attached == 1 ? "" : "s", through,
		skipped ? ", skipped the optional ones above," : "", links, links == 1 ? "" : "s", ms);
}

/* Each kernel probe: through a syscall dispatcher, or on its own. */
static int attach_kernel_probes(struct stp_script *s, int *attached, int *skipped)
{
	int rc, err = 0;

	for (int i = 0; i < s->meta->nprobes; i++) {
		if (s->meta->probes[i].context != STP_CTX_KERNEL)
			continue;
		rc = s->dispatched[i] ? 0 : stp_attach_probe(s, i);
		if (rc < 0) {
			err = err ? err : rc;
			continue;	/* report every probe that cannot attach */
		}
		rc ? (*skipped)++ : (*attached)++;
	}
	return err;
}

int stp_script__attach(struct stp_script *s)
{
	int attached = 0, skipped = 0, dispatched, err = 0, rc;
	double t0;

	stp_sym_use_script(s);	/* user stacks of processes that will be gone */
	err = stp_files_check(s);
	if (err) {
		s->attach_failed = true;
		return err;
	}
	if (s->kmod_fd >= 0) {	/* the kernel runtime: the module registers them */
		err = stp_proc_note_libraries(s);
		err = err ? err : stp_proc_note_kmod(s);
		if (!err)
			err = stp_kmod_start(s);
		if (err)
			s->attach_failed = true;
		return err;
	}
	if (s->dseg) {	/* dyninst: the -c command's loader patches its own code; -x: now */
		stp_files_close(s);
		err = stp_dyn_attach_pid(s);
		if (!err && s->opts.pmda_name)
			err = stp_handover_ready(s);
		if (err)
			s->attach_failed = true;
		return err;
	}
	err = stp_proc_note_libraries(s);
	if (err) {
		s->attach_failed = true;
		return err;
	}
	t0 = now_ms();
	dispatched = stp_sc_attach(s);
	stp_um_attach(s);
	err = attach_kernel_probes(s, &attached, &skipped);
	rc = stp_perfctr_attach(s);	/* also after a failure: it says what it cannot open */
	err = err ? err : rc;
	stp_files_close(s);
	if (err) {
		s->attach_failed = true;
		stp_detach_all(s);
		return err;
	}
	if (s->opts.verbose && (attached || skipped))
		report_attach(s, attached, skipped, dispatched, now_ms() - t0);
	return 0;
}
