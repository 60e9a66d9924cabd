/*
 * loader.c - libstapdyn.so: the dyninst runtime in the probed process.
 *
 * `pmstap --runtime=dyninst -c CMD` starts CMD with this library in
 * LD_PRELOAD and three variables (STP_DYN_ENV_* in stp_dyn.h): the
 * script's shared segment (an inherited descriptor), its script.dyn.so,
 * and a descriptor to report on.  Before CMD's main() runs, the
 * constructor below maps the segment, loads script.dyn.so, points the
 * script's maps at the segment's, raises the SDT semaphores and patches
 * every probe site found in this process's files (patch.h), then writes
 * one line to the report descriptor: "ok N probe sites (J jumps, T traps)" or
 * "error: WHY", and closes it.  When it cannot set up, the process exits
 * with status 127 without running CMD: a program never runs half-probed.
 *
 * Children and programs CMD execs inherit the variables (not the report
 * descriptor) and load the script the same way, so process probes apply
 * to the target's whole tree, as with stap's -c.
 *
 * -x loads libstapdyn-attach.so into a process that runs already, every
 * thread stopped (inject.h), and calls stp_dyn_attach() there.  A thread
 * may be stopped between two instructions that a jump replaces: the
 * patcher's pc moves (stp_patcher__moves) are left in stp_dyn_pc_moves
 * for pmstap to apply before the threads run again.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "inject.h"
#include "native.h"
#include "patch.h"

_Static_assert(sizeof(struct stp_regs) == sizeof(struct pt_regs),
	       "the trampolines' registers are the handlers' struct pt_regs");

static struct stp_patcher *patcher;
static bool attached;		/* -x: loaded and patched, not detached yet */

struct load {
	int report_fd;
	void *dl;
	const struct stp_dyn_site *sites;
	int patched;
	char err[512];
};

static int fail(struct load *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct load *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(l->err, sizeof(l->err), fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- where a file's bytes are in this process ---- */

/* The address of file offset OFF of the file (DEV, INO) here, or 0 when it is not mapped. */
static uintptr_t mapped_at(dev_t dev, ino_t ino, uint64_t off, bool code)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096], perms[8];
	uintptr_t at = 0;

	if (!f)
		return 0;
	while (!at && fgets(line, sizeof(line), f)) {
		unsigned long start, end, major, minor, inode;
		unsigned long long moff;

		if (sscanf(line, "%lx-%lx %7s %llx %lx:%lx %lu", &start, &end, perms, &moff, &major,
			   &minor, &inode) != 7)
			continue;
		if (inode != ino || makedev(major, minor) != dev || (code && perms[2] != 'x'))
			continue;
		if (off >= moff && off - moff < end - start)
			at = start + (uintptr_t)(off - moff);
	}
	fclose(f);
	return at;
}

/* ---- the handlers ---- */

/* A site patched here: its table entry and where it is in this process. */
struct live_site {
	const struct stp_dyn_site *site;
	uintptr_t addr;
};

static void on_hit(struct stp_regs *regs, void *arg)
{
	const struct live_site *live = arg;
	struct pt_regs *prev = stp_dyn_cur_regs;
	uintptr_t prev_ip = stp_dyn_cur_func;

	stp_dyn_cur_regs = (struct pt_regs *)regs;
	stp_dyn_cur_func = live->addr;
	live->site->fn(stp_dyn_cur_regs);
	stp_dyn_cur_regs = prev;
	stp_dyn_cur_func = prev_ip;
}

/* ---- set-up ---- */

static int find_maps(struct load *l)
{
	stp_dyn_maps_fn maps_of = (stp_dyn_maps_fn)dlsym(l->dl, "stp_dyn_maps");
	struct stp_dmap_ref **refs;
	int n;

	if (!maps_of)
		return fail(l, "the script's code has no map table");
	refs = maps_of(&n);
	for (int i = 0; i < n; i++) {
		const struct stp_dmap_def *want = &refs[i]->def, *have;

		refs[i]->m = stp_dseg__map(stp_dyn_seg, want->name);
		have = refs[i]->m ? stp_dmap__def(refs[i]->m) : NULL;
		if (!have)
			return fail(l, "the segment has no map '%s'", want->name);
		if (have->type != want->type || have->key_size != want->key_size ||
		    have->value_size != want->value_size || have->max_entries != want->max_entries)
			return fail(l, "map '%s' in the segment is not the script's", want->name);
		refs[i]->base = stp_dmap__array(refs[i]->m, &refs[i]->vsize, &refs[i]->stride);
	}
	return 0;
}

/* Raise the SDT semaphore of SITE in this process (the kernel does it for uprobes). */
static void raise_semaphore(const struct stp_dyn_site *site, const struct stat *st)
{
	uintptr_t at = mapped_at(st->st_dev, st->st_ino, site->ref_ctr_offset, false);

	if (at)
		__atomic_add_fetch((uint16_t *)at, 1, __ATOMIC_RELAXED);
}

static int add_site(struct load *l, const struct stp_dyn_site *site)
{
	uintptr_t addr, lo = 0, hi = 0;
	struct live_site *live;
	struct stat st;
	char err[256];

	if (site->event != STP_DYN_CODE || stat(site->path, &st) != 0)
		return 0;	/* an event (events.c), or not this process's file (a child may map it) */
	addr = mapped_at(st.st_dev, st.st_ino, site->offset, true);
	if (!addr)
		return 0;
	if (site->func_lo && site->func_hi) {
		lo = addr - (uintptr_t)(site->offset - site->func_lo);
		hi = addr + (uintptr_t)(site->func_hi - site->offset);
	}
	live = malloc(sizeof(*live));	/* once, at load time; kept as long as the patch */
	if (!live)
		return fail(l, "out of memory");
	*live = (struct live_site){ site, addr };
	if (stp_patcher__add(patcher, addr, lo, hi, site->ret ? NULL : on_hit,
			     site->ret ? on_hit : NULL, live, err, sizeof(err)) != 0)
		return fail(l, "cannot probe %s at offset 0x%" PRIx64 ": %s", site->path,
			    site->offset, err);
	if (site->ref_ctr_offset)
		raise_semaphore(site, &st);
	l->patched++;
	return 0;
}

static int load(struct load *l, int seg_fd, const char *so)
{
	struct stp_dseg *seg;
	char err[256];
	int n = 0;

	stp_dyn_native_init();
	seg = stp_dseg__attach(seg_fd, err, sizeof(err));
	if (!seg)
		return fail(l, "cannot map the script's segment: %s", err);
	/*
	 * A second -x attach (the last pmstap detached): the last segment
	 * stays mapped and the last patcher's trampolines stay, since a
	 * thread stopped in one of its handlers, or with a .return pending,
	 * still finishes there.  Threads claim slots of the new segment.
	 */
	stp_dyn_seg = seg;
	__atomic_add_fetch(&stp_dyn_seg_gen, 1, __ATOMIC_RELEASE);
	l->dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!l->dl)
		return fail(l, "cannot load %s: %s", so, dlerror());
	if (find_maps(l) != 0)
		return -1;
	l->sites = dlsym(l->dl, "stp_dyn_sites");
	patcher = stp_patcher__new();
	if (!l->sites || !patcher)
		return fail(l, "the script's code has no probe sites");
	/*
	 * Last first: several probes at one address then run in the order
	 * the kernel runs uprobe consumers (the newest first), which is the
	 * order the other runtimes print in.
	 */
	while (l->sites[n].fn)
		n++;
	while (n-- > 0)
		if (add_site(l, &l->sites[n]) != 0)
			return -1;
	if (stp_patcher__install(patcher, err, sizeof(err)) != 0)
		return fail(l, "cannot patch the probe sites: %s", err);
	return 0;
}

static int env_fd(const char *name)
{
	const char *v = getenv(name);
	char *end;
	long fd;

	if (!v)
		return -1;
	fd = strtol(v, &end, 10);
	return *end || fd < 0 || fd > 1 << 20 ? -1 : (int)fd;
}

/* The one line pmstap reads on the report pipe. */
static void report(struct load *l, int r)
{
	int jumps = 0, traps = 0;

	if (l->report_fd < 0) {
		if (r != 0)
			dprintf(2, "libstapdyn: %s\n", l->err);
		return;
	}
	if (patcher)
		stp_patcher__counts(patcher, &jumps, &traps);
	if (r == 0)
		dprintf(l->report_fd, "ok %d probe sites (%d jumps, %d traps)\n", l->patched, jumps,
			traps);
	else
		dprintf(l->report_fd, "error: %s\n", l->err);
	close(l->report_fd);
	l->report_fd = -1;
}

__attribute__((constructor)) static void stp_dyn_load(void)
{
	struct load l = { .report_fd = env_fd(STP_DYN_ENV_REPORT) };
	const char *so = getenv(STP_DYN_ENV_SO);
	int seg_fd = env_fd(STP_DYN_ENV_SEG), r;

	if (seg_fd < 0 || !so)
		return;	/* not started by pmstap: do nothing */
	r = load(&l, seg_fd, so);
	report(&l, r);
	unsetenv(STP_DYN_ENV_REPORT);
	if (r != 0)
		_exit(127);
	stp_dyn_events_start(l.sites, true);	/* process.begin, here, after the report */
}

/* ---- -x: loaded into a running process (libstapdyn-attach.so) ---- */

/* What pmstap reads once stp_dyn_attach returns (stp_inject__set_pc_moves); NULL: nothing. */
__attribute__((visibility("default"))) const struct stp_inject_moves *stp_dyn_pc_moves;
static struct stp_inject_moves *pc_moves;

static void moves_clear(void)
{
	stp_dyn_pc_moves = NULL;
	free(pc_moves);
	pc_moves = NULL;
}

/* The installed patcher's pc moves, in stp_dyn_pc_moves.  0, or -1. */
static int moves_publish(struct load *l)
{
	int n = stp_patcher__moves(patcher, NULL, 0);
	struct stp_patch_move *v = calloc(n ? n : 1, sizeof(*v));
	struct stp_inject_moves *t = malloc(sizeof(*t) + n * sizeof(t->v[0]));

	moves_clear();
	if (!v || !t) {
		free(v);
		free(t);
		return fail(l, "out of memory for the pc moves");
	}
	stp_patcher__moves(patcher, v, n);
	t->n = n;
	for (int k = 0; k < n; k++)
		t->v[k] = (struct stp_inject_move){ v[k].from, v[k].to };
	free(v);
	stp_dyn_pc_moves = pc_moves = t;
	return 0;
}

/*
 * pmstap -x calls this in the process, every thread stopped (inject.h):
 * ARG is "SEGMENT\nSCRIPT\nREPORT", the segment's and the report pipe's
 * paths as /proc/PMSTAP/fd/N, and script.dyn.so's.  0 with
 * stp_dyn_pc_moves set, or -1 (reported).
 */
__attribute__((visibility("default"))) long stp_dyn_attach(const char *arg)
{
	char seg[256], so[4096], rep[256];
	struct load l = { .report_fd = -1 };
	int seg_fd, r;

	if (attached || sscanf(arg, "%255[^\n]\n%4095[^\n]\n%255[^\n]", seg, so, rep) != 3)
		return -1;	/* attached already, or not pmstap's word */
	l.report_fd = open(rep, O_WRONLY | O_CLOEXEC);
	seg_fd = open(seg, O_RDWR | O_CLOEXEC);
	r = seg_fd < 0 ? fail(&l, "cannot open the script's segment: %s", strerror(errno)) :
			 load(&l, seg_fd, so);
	if (r == 0)
		r = moves_publish(&l);
	if (seg_fd >= 0)
		close(seg_fd);	/* the mapping stays */
	if (r != 0 && patcher)
		stp_patcher__remove(patcher);
	report(&l, r);
	if (r == 0) {
		stp_dyn_events_start(l.sites, false);
		stp_dyn_got_hook();
	}
	attached = r == 0;
	return r;
}

/* pmstap -x once its begin probes ran: process.begin for the process that ran already. */
__attribute__((visibility("default"))) long stp_dyn_begin(const char *arg)
{
	(void)arg;
	stp_dyn_events_begin();
	return 0;
}

/* pmstap -x at the end: the code as it was; handlers running finish in their trampolines. */
__attribute__((visibility("default"))) long stp_dyn_detach(const char *arg)
{
	(void)arg;
	stp_dyn_got_unhook();
	stp_dyn_events_stop();
	if (patcher)
		stp_patcher__remove(patcher);
	moves_clear();
	attached = false;	/* another pmstap -x may attach again */
	return 0;
}
