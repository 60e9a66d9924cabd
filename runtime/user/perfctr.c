/*
 * perfctr.c - per-process perf counters: perf.*.process("PATH")
 * .counter("NAME") and @perf("NAME") (runtime/bpf/stp_perf.bpf.h has the
 * kernel's half and the maps).
 *
 * Each thread of a process that runs PATH gets one perf event per counter
 * of PATH: perf_event_open(pid = tid, cpu = -1), counting from then on,
 * not inherited (bpf_perf_event_read_value() refuses inherited events).
 * The events go to stp_perf_events at slot * ncounters + counter, then the
 * thread's slot to stp_perf_slots, where @perf finds it.
 *
 * Which threads: at attach, those of the processes running PATH already
 * (/proc); then each thread the kernel's programs report (an exec of PATH,
 * a fork or clone in a process counted), until it exits.  The -c command
 * gets its events before it is released to exec (stp_perfctr_hold), so
 * that its first thread is counted from its first instruction; a thread
 * born later runs a moment before the runner has read its record: @perf
 * there finds no event, and that is counted and reported at exit.
 *
 * perf.*.process("PATH") probes (sampling one process) go the same way: a
 * sampling event per thread, with the probe's program attached to it.
 * Counters and those probes are the "users" of a thread's events: the
 * bits of the masks the kernel's programs send, in stp_perf.bpf.h's order.
 *
 * A user whose event this machine cannot open at all (perf.hw.* with no
 * hardware PMU) stops the script at attach, with the reason.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../stp_fileid.h"
#include "script_int.h"

#define NPROGS 3
#define PERF_DEFAULT_SAMPLE 1000000	/* perf.*: stap's default sample period */

static const char *const progs[NPROGS] = { "stp_perf_exec", "stp_perf_fork", "stp_perf_exit" };

/* What keeps an event in each thread of a process: a counter, or a sampling probe. */
struct perf_user {
	const char *name;		/* a counter's; NULL: a probe */
	const char *point;
	const struct stp_loc *loc;
	uint32_t type;
	uint64_t config;
	uint64_t sample;		/* a probe's period; 0: a counter */
	const char *path;		/* NULL: nothing to keep (no handler reads the counter) */
	struct bpf_program *prog;	/* a probe's program */
	uint64_t dev, ino;		/* PATH's file */
};

struct stp_perfctr {
	int ncounters, nusers, nslots;
	struct perf_user users[STP_MAX_COUNTERS];
	int *tid;			/* per slot: its thread, 0 when free */
	int *fds;			/* per slot and user: a counter's event, or -1 */
	struct bpf_link **links;	/* per slot and user: a probe's event and program */
	int slots_fd, events_fd, procs_fd;
	struct bpf_link *prog_links[NPROGS];
	long unopened;			/* events not opened for a thread: slots full, no fds... */
	int unopened_err;
};

static int perf_open(const struct perf_user *u, pid_t tid)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = u->type,
		.config = u->config,
		.sample_period = u->sample,
	};

	return (int)syscall(__NR_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Whether every user's event opens here: for this very thread. */
static int check_users(struct stp_script *s, const struct stp_perfctr *pc)
{
	int err = 0;

	for (int i = 0; i < pc->nusers; i++) {
		const struct perf_user *u = &pc->users[i];
		char where[256];
		const char *why;
		int fd;

		if (!u->path)
			continue;
		fd = perf_open(u, 0);
		if (fd >= 0) {
			close(fd);
			continue;
		}
		err = -errno;
		why = stp_perf_reason(u->type, err);
		stp_loc_str(u->loc, where, sizeof(where));
		if (u->name)
			stp_msg(s, "error", "%s: cannot count perf counter '%s' (%s): %s", where,
				u->name, u->point, why ? why : strerror(-err));
		else
			stp_msg(s, "error", "%s: cannot attach probe %s: %s", where, u->point,
				why ? why : strerror(-err));
	}
	return err;
}

/* The counters, then the perf.*.process probes: stp_perf.bpf.h's order. */
static void add_users(struct stp_script *s, struct stp_perfctr *pc)
{
	for (int i = 0; i < s->meta->ncounters; i++) {
		const struct stp_meta_counter *c = &s->meta->counters[i];

		pc->users[pc->nusers++] = (struct perf_user){
			.name = c->name, .point = c->point, .loc = &c->loc,
			.type = c->perf_type, .config = c->perf_config, .path = c->path,
		};
	}
	for (int i = 0; i < s->meta->nprobes && pc->nusers < STP_MAX_COUNTERS; i++) {
		const struct stp_meta_probe *p = &s->meta->probes[i];

		if (p->kind != STP_PROBE_PERF || !p->perf_path)
			continue;
		pc->users[pc->nusers++] = (struct perf_user){
			.name = NULL, .point = p->point, .loc = &p->loc,
			.type = p->perf_type, .config = p->perf_config,
			.sample = p->perf_sample ? p->perf_sample : PERF_DEFAULT_SAMPLE,
			.path = s->skipped[i] ? NULL : p->perf_path,
			.prog = stp_script__prog(s, p->prog),
		};
	}
}

static struct stp_perfctr *perfctr_new(struct stp_script *s)
{
	struct stp_perfctr *pc = calloc(1, sizeof(*pc));
	size_t n;

	if (!pc)
		return NULL;
	s->perf = pc;
	pc->ncounters = s->meta->ncounters;
	add_users(s, pc);
	pc->nslots = (int)s->meta->limits.maxmapentries;
	n = (size_t)pc->nslots * (size_t)pc->nusers;
	pc->tid = calloc((size_t)pc->nslots, sizeof(int));
	pc->fds = malloc(sizeof(int) * n);
	pc->links = calloc(n, sizeof(struct bpf_link *));
	if (!pc->tid || !pc->fds || !pc->links) {
		stp_perfctr_free(s);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		pc->fds[i] = -1;
	pc->slots_fd = stp_script__map_fd(s, "stp_perf_slots");
	pc->events_fd = stp_script__map_fd(s, "stp_perf_events");
	pc->procs_fd = stp_script__map_fd(s, "stp_perf_procs");
	return pc;
}

/* Each user's file, for the kernel's exec check and for /proc. */
static int note_files(struct stp_script *s, struct stp_perfctr *pc)
{
	int fd = stp_script__map_fd(s, "stp_perf_exes");

	for (uint32_t i = 0; i < (uint32_t)pc->nusers; i++) {
		struct perf_user *u = &pc->users[i];
		uint64_t value[2] = { 0 };
		struct stat st;

		if (u->path && stat(u->path, &st) == 0) {
			u->dev = value[0] = stp_kernel_dev(st.st_dev);
			u->ino = value[1] = st.st_ino;
		}
		if (fd < 0 || bpf_map_update_elem(fd, &i, value, BPF_ANY) < 0)
			return -errno;
	}
	return 0;
}

/* The users whose file PATH is. */
static uint32_t file_mask(const struct stp_perfctr *pc, const char *path)
{
	struct stat st;
	uint32_t mask = 0;

	if (!path || stat(path, &st) != 0)
		return 0;
	for (int i = 0; i < pc->nusers; i++)
		if (pc->users[i].ino && pc->users[i].ino == st.st_ino &&
		    pc->users[i].dev == stp_kernel_dev(st.st_dev))
			mask |= 1U << i;
	return mask;
}

static int slot_of(const struct stp_perfctr *pc, int tid)
{
	for (int i = 0; i < pc->nslots; i++)
		if (pc->tid[i] == tid)
			return i;
	return -1;
}

/* User U's event in thread TID, of slot SLOT: 0, or an errno (ESRCH: the thread is gone). */
static int user_open(struct stp_perfctr *pc, int slot, int u, int tid)
{
	int at = slot * pc->nusers + u, fd;
	uint32_t index = (uint32_t)at;

	if (pc->fds[at] >= 0 || pc->links[at])
		return 0;
	fd = perf_open(&pc->users[u], tid);
	if (fd < 0)
		return errno;
	if (!pc->users[u].sample) {	/* a counter: @perf reads it from the array */
		pc->fds[at] = fd;
		return bpf_map_update_elem(pc->events_fd, &index, &fd, BPF_ANY) < 0 ? errno : 0;
	}
	pc->links[at] = bpf_program__attach_perf_event(pc->users[u].prog, fd);
	if (libbpf_get_error(pc->links[at])) {
		pc->links[at] = NULL;
		close(fd);
		return EINVAL;
	}
	return 0;
}

static void thread_gone(struct stp_perfctr *pc, int tid)
{
	int slot = slot_of(pc, tid);
	uint32_t key = (uint32_t)tid;

	if (slot < 0)
		return;
	bpf_map_delete_elem(pc->slots_fd, &key);
	for (int u = 0; u < pc->nusers; u++) {
		int at = slot * pc->nusers + u;
		uint32_t index = (uint32_t)at;

		if (pc->links[at])
			bpf_link__destroy(pc->links[at]);	/* closes its event */
		pc->links[at] = NULL;
		if (pc->fds[at] < 0)
			continue;
		bpf_map_delete_elem(pc->events_fd, &index);
		close(pc->fds[at]);
		pc->fds[at] = -1;
	}
	pc->tid[slot] = 0;
}

/* Thread TID has its events now: those of the users of MASK it lacks. */
static void thread_add(struct stp_perfctr *pc, int tid, uint32_t mask)
{
	int slot = slot_of(pc, tid), err;
	uint32_t key = (uint32_t)tid, at;

	if (slot < 0 && (slot = slot_of(pc, 0)) < 0) {
		pc->unopened++;
		pc->unopened_err = ENOSPC;
		return;
	}
	pc->tid[slot] = tid;
	for (int u = 0; u < pc->nusers; u++) {
		if (!(mask & (1U << u)) || !pc->users[u].path)
			continue;
		err = user_open(pc, slot, u, tid);
		if (err == ESRCH) {
			thread_gone(pc, tid);	/* it has ended already */
			return;
		}
		if (err) {
			pc->unopened++;
			pc->unopened_err = err;
		}
	}
	at = (uint32_t)slot;
	bpf_map_update_elem(pc->slots_fd, &key, &at, BPF_ANY);
}

/* Process PID and its threads, for the users of MASK (its later threads too: stp_perf_procs). */
static void process_add(struct stp_perfctr *pc, int pid, uint32_t mask)
{
	char dir[64];
	struct dirent *d;
	DIR *task;
	uint32_t key = (uint32_t)pid;

	bpf_map_update_elem(pc->procs_fd, &key, &mask, BPF_ANY);
	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	task = opendir(dir);
	if (!task)
		return;
	while ((d = readdir(task)) != NULL)
		if (d->d_name[0] != '.')
			thread_add(pc, atoi(d->d_name), mask);
	closedir(task);
}

/* The processes that run a user's file already. */
static void scan_processes(struct stp_perfctr *pc)
{
	DIR *proc = opendir("/proc");
	struct dirent *d;

	while (proc && (d = readdir(proc)) != NULL) {
		char exe[64];
		int pid = atoi(d->d_name);
		uint32_t mask;

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
		mask = file_mask(pc, exe);
		if (mask)
			process_add(pc, pid, mask);
	}
	if (proc)
		closedir(proc);
}

static int attach_programs(struct stp_script *s, struct stp_perfctr *pc)
{
	for (int i = 0; i < NPROGS; i++) {
		struct bpf_program *prog = stp_script__prog(s, progs[i]);
		int err;

		if (!prog)
			return -ENOENT;
		pc->prog_links[i] = bpf_program__attach(prog);
		err = libbpf_get_error(pc->prog_links[i]);
		if (err) {
			pc->prog_links[i] = NULL;
			stp_msg(s, "error", "cannot follow the processes of perf counters (%s): %s",
				progs[i], strerror(-err));
			return err;
		}
	}
	return 0;
}

/* Whether the script keeps any perf events per thread. */
static bool has_users(const struct stp_meta *m)
{
	for (int i = 0; i < m->nprobes; i++)
		if (m->probes[i].kind == STP_PROBE_PERF && m->probes[i].perf_path)
			return true;
	return m->ncounters > 0;
}

int stp_perfctr_attach(struct stp_script *s)
{
	struct stp_perfctr *pc;
	int err;

	if (!s->obj || !has_users(s->meta))
		return 0;
	if (s->meta->ncounters > STP_MAX_COUNTERS)
		return -EINVAL;
	pc = perfctr_new(s);
	if (!pc)
		return -ENOMEM;
	err = check_users(s, pc);
	if (err)
		return err;
	if (pc->slots_fd < 0 || pc->procs_fd < 0 || (pc->ncounters && pc->events_fd < 0)) {
		stp_msg(s, "error", "internal: the script keeps perf events and has no stp_perf_* maps");
		return -EINVAL;
	}
	err = note_files(s, pc);
	if (!err)
		err = attach_programs(s, pc);
	if (!err)
		scan_processes(pc);
	return err;
}

void stp_perfctr_hold(struct stp_script *s, pid_t pid, const char *exe)
{
	uint32_t mask = s->perf ? file_mask(s->perf, exe) : 0;

	if (mask)
		process_add(s->perf, pid, mask);
}

int stp_perfctr_record(struct stp_script *s, int what, const void *data, size_t len)
{
	struct stp_rec_perf r;

	if (len + sizeof(r.hdr) < sizeof(r) || !s->perf)
		return -1;
	memcpy((char *)&r + sizeof(r.hdr), data, sizeof(r) - sizeof(r.hdr));
	if (what == STP_PERF_NEW)
		thread_add(s->perf, (int)r.tid, r.counters);
	else
		thread_gone(s->perf, (int)r.tid);
	return 0;
}

void stp_perfctr_summary(struct stp_script *s)
{
	int fd = stp_script__map_fd(s, "stp_perf_missing");
	int ncpus = libbpf_num_possible_cpus();

	if (!s->perf)
		return;
	if (s->perf->unopened)
		fprintf(stderr, "WARNING: %ld perf event%s of threads could not be opened: %s\n",
			s->perf->unopened, s->perf->unopened == 1 ? "" : "s",
			s->perf->unopened_err == ENOSPC ? "more threads than MAXMAPENTRIES"
			: strerror(s->perf->unopened_err));
	for (uint32_t i = 0; fd >= 0 && ncpus > 0 && i < (uint32_t)s->meta->ncounters; i++) {
		uint64_t v[ncpus], n = 0;

		if (bpf_map_lookup_elem(fd, &i, v) == 0)
			for (int c = 0; c < ncpus; c++)
				n += v[c];
		if (n)
			fprintf(stderr, "WARNING: @perf(\"%s\") read no counter %llu time%s: the "
				"thread had no perf event (yet)\n", s->meta->counters[i].name,
				(unsigned long long)n, n == 1 ? "" : "s");
	}
}

/* The events and the programs go; the counts stay for stp_perfctr_summary(). */
void stp_perfctr_detach(struct stp_script *s)
{
	struct stp_perfctr *pc = s->perf;

	if (!pc)
		return;
	for (int i = 0; i < NPROGS; i++) {
		if (pc->prog_links[i])
			bpf_link__destroy(pc->prog_links[i]);
		pc->prog_links[i] = NULL;
	}
	for (int i = 0; pc->tid && pc->fds && pc->links && i < pc->nslots; i++)
		if (pc->tid[i])
			thread_gone(pc, pc->tid[i]);
}

void stp_perfctr_free(struct stp_script *s)
{
	struct stp_perfctr *pc = s->perf;

	stp_perfctr_detach(s);
	if (!pc)
		return;
	free(pc->tid);
	free(pc->fds);
	free(pc->links);
	free(pc);
	s->perf = NULL;
}
