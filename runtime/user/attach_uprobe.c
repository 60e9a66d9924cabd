/*
 * attach_uprobe.c - attach uprobe programs: process(..).function,
 * .statement and .mark.
 *
 * The metadata gives the file and the offset in it (pass 2 resolved the
 * symbol or the line), whether it is a uretprobe, the SDT semaphore's file
 * offset (the kernel raises that counter in every process of the file
 * while the probe is attached: a marker guarded by it then fires), and
 * which processes: process(PID) attaches for that process only (the
 * kernel filters by the process's memory, so every thread of it counts);
 * otherwise every process that runs the file.  With -c/-x the program
 * itself keeps only target()'s process tree (translator/emit_uprobe.c):
 * a child has memory of its own, which a per-process uprobe misses.  The
 * file is the one attach_files.c opened and checked, by its descriptor.
 *
 * Probes whose handlers are the same C share one program, which learns
 * the probe from its cookie (translator/emit_merge.c).  Attached one by
 * one, each site is a perf event, and closing one waits for an RCU grace
 * period: `process("pmstap").function("*")`, 4,090 uprobes, took 7.7 s to
 * attach and 448 s to stop on Linux 6.18.  Where the kernel has
 * uprobe_multi links (Linux 6.6 and later, with the process filter of
 * 6.9), every uprobe program is loaded for them (stp_um_prepare(), before
 * the load: such a program cannot go on a perf event) and attached with
 * one link per program, file, process and direction, each site with its
 * probe's index as cookie and its semaphore's offset (stp_um_attach()).
 * A link that fails is made again one site at a time, so the probe at
 * fault is named as before.  PMSTAP_NO_UMULTI set, or an older kernel:
 * each probe on its own perf event (the control of qa/170).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "script_int.h"

/* Linux 6.6's UAPI, newer than the headers this builds with */
#define UM_ATTACH_TYPE 48	/* BPF_TRACE_UPROBE_MULTI */
#define UM_RETURN 1U		/* BPF_F_UPROBE_MULTI_RETURN */

/* union bpf_attr's link_create, as BPF_TRACE_UPROBE_MULTI reads it */
struct um_attr {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t um_flags;
	uint32_t pid;
	uint32_t pad;
};

/* The sites of one link. */
struct um_sites {
	unsigned long *offsets, *ref_ctrs;
	uint64_t *cookies;
	int n;
};

struct bpf_link *stp_attach_uprobe(struct stp_script *s, const struct stp_meta_probe *p,
				   struct bpf_program *prog)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = p->uprobe_return,
		    .ref_ctr_offset = (size_t)p->uprobe_ref_ctr_offset);
	int pid = p->uprobe_pid > 0 ? (int)p->uprobe_pid : -1;
	char buf[64];
	const char *path = stp_file_attach_path(s, p->uprobe_file, buf, sizeof(buf));

	if (!p->uprobe_path || !path) {	/* not a file checked by stp_files_check() */
		errno = ENOENT;
		return NULL;
	}
	opts.bpf_cookie = (uint64_t)(p - s->meta->probes);	/* a merged program's probe */
	return bpf_program__attach_uprobe_opts(prog, pid, path, (size_t)p->uprobe_offset, &opts);
}

/* A uprobe_multi link of PROG_FD on PATH's SITES; its descriptor, or -errno. */
static int um_link(int prog_fd, const char *path, const struct um_sites *sites, bool ret, int pid)
{
	struct um_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog_fd;
	a.attach_type = UM_ATTACH_TYPE;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)sites->offsets;
	a.ref_ctr_offsets = (uint64_t)(uintptr_t)sites->ref_ctrs;
	a.cookies = (uint64_t)(uintptr_t)sites->cookies;
	a.cnt = (uint32_t)sites->n;
	a.um_flags = ret ? UM_RETURN : 0;
	a.pid = (uint32_t)pid;
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

/*
 * Does the kernel make uprobe_multi links, with a process filter that
 * takes every thread of the process?  As libbpf 1.3 asks: a link on "/"
 * fails with EBADF where there are such links; with pid -1 it fails
 * with EINVAL where the filter is the process's (Linux 6.9; 6.6-6.8 took
 * a thread).
 */
static bool um_kernel(void)
{
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = UM_ATTACH_TYPE);
	unsigned long offset = 0;
	struct um_sites one = { .offsets = &offset, .n = 1 };
	int prog, err;
	bool ok;

	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &opts);
	if (prog < 0)
		return false;
	err = um_link(prog, "/", &one, false, 0);
	ok = err == -EBADF && um_link(prog, "/", &one, false, -1) == -EINVAL;
	if (err >= 0)
		close(err);
	close(prog);
	return ok;
}

/* The uprobe probe I, kernel context, loaded. */
static bool um_probe(const struct stp_script *s, int i)
{
	const struct stp_meta_probe *p = &s->meta->probes[i];

	return p->context == STP_CTX_KERNEL && p->kind == STP_PROBE_UPROBE && !s->skipped[i];
}

/* Before the load: uprobe programs for uprobe_multi links, where there are such. */
void stp_um_prepare(struct stp_script *s)
{
	bool any = false;

	for (int i = 0; i < s->meta->nprobes && !any; i++)
		any = um_probe(s, i);
	if (!any || getenv("PMSTAP_NO_UMULTI") || !um_kernel())
		return;
	s->um_on = true;
	for (int i = 0; i < s->meta->nprobes; i++) {
		struct bpf_program *prog;

		if (!um_probe(s, i))
			continue;
		prog = stp_script__prog(s, s->meta->probes[i].prog);
		if (prog)
			bpf_program__set_expected_attach_type(prog, UM_ATTACH_TYPE);
	}
}

static int um_keep(struct stp_script *s, int fd)
{
	int *fds = realloc(s->um_fds, sizeof(int) * (size_t)(s->um_nfds + 1));

	if (!fds) {
		close(fd);
		return -ENOMEM;
	}
	s->um_fds = fds;
	s->um_fds[s->um_nfds++] = fd;
	return 0;
}

/* The script whose probes um_order() sorts (qsort() passes no argument). */
static const struct stp_script *um_sorting;

/* Probes P and Q by what their link is: program, file, process, direction. */
static int um_link_cmp(const struct stp_meta_probe *p, const struct stp_meta_probe *q)
{
	int c = strcmp(p->prog, q->prog);

	if (c)
		return c;
	if (p->uprobe_file != q->uprobe_file)
		return p->uprobe_file < q->uprobe_file ? -1 : 1;
	if (p->uprobe_pid != q->uprobe_pid)
		return p->uprobe_pid < q->uprobe_pid ? -1 : 1;
	return (int)p->uprobe_return - (int)q->uprobe_return;
}

/* Probes on one link next to each other, each link's in their order. */
static int um_order(const void *a, const void *b)
{
	int i = *(const int *)a, j = *(const int *)b;
	int c = um_link_cmp(&um_sorting->meta->probes[i], &um_sorting->meta->probes[j]);

	return c ? c : i < j ? -1 : i > j;
}

/* A link for the N probes of IDS (one program, file, process, direction); 0 or -errno. */
static int um_group(struct stp_script *s, const int *ids, int n, struct um_sites *sites)
{
	const struct stp_meta_probe *p = &s->meta->probes[ids[0]];
	const struct stp_prog *prog = stp_script__program(s, p->prog);
	char buf[64];
	const char *path = stp_file_attach_path(s, p->uprobe_file, buf, sizeof(buf));
	int fd;

	if (!prog || !path || !p->uprobe_path)
		return -ENOENT;
	for (sites->n = 0; sites->n < n; sites->n++) {
		const struct stp_meta_probe *q = &s->meta->probes[ids[sites->n]];

		sites->offsets[sites->n] = (unsigned long)q->uprobe_offset;
		sites->ref_ctrs[sites->n] = (unsigned long)q->uprobe_ref_ctr_offset;
		sites->cookies[sites->n] = (uint64_t)ids[sites->n];	/* the probe, for its program */
	}
	fd = um_link(prog->fd, path, sites, p->uprobe_return,
		     p->uprobe_pid > 0 ? (int)p->uprobe_pid : 0);
	return fd < 0 ? fd : um_keep(s, fd);
}

/* Probe I on a link of its own (its group's link failed: which probe was it?). */
int stp_um_attach_one(struct stp_script *s, int i)
{
	unsigned long offset, ref_ctr;
	uint64_t cookie;
	struct um_sites one = { &offset, &ref_ctr, &cookie, 0 };

	return um_group(s, &i, 1, &one);
}

/* The probes to attach, in um_order(), into IDS; returns how many. */
static int um_sorted(const struct stp_script *s, int *ids)
{
	int n = 0;

	for (int i = 0; i < s->meta->nprobes; i++)
		if (um_probe(s, i))
			ids[n++] = i;
	um_sorting = s;
	qsort(ids, (size_t)n, sizeof(int), um_order);
	return n;
}

/*
 * Attach the uprobes, one link per program, file, process and direction;
 * s->dispatched[i] says which probes the links took (those of a link that
 * failed go one by one, through stp_attach_probe()).
 */
void stp_um_attach(struct stp_script *s)
{
	size_t n = (size_t)s->meta->nprobes + 1;
	int *ids = calloc(n, sizeof(int)), nids;
	struct um_sites sites = {
		calloc(n, sizeof(long)), calloc(n, sizeof(long)), calloc(n, sizeof(uint64_t)), 0
	};

	nids = s->um_on && ids && sites.offsets && sites.ref_ctrs && sites.cookies ?
	       um_sorted(s, ids) : 0;
	for (int a = 0, b; a < nids; a = b) {
		for (b = a + 1; b < nids && !um_link_cmp(&s->meta->probes[ids[a]],
							  &s->meta->probes[ids[b]]); b++)
			;
		if (um_group(s, ids + a, b - a, &sites) < 0)
			continue;
		for (int k = a; k < b; k++)
			s->dispatched[ids[k]] = true;
	}
	free(ids);
	free(sites.offsets);
	free(sites.ref_ctrs);
	free(sites.cookies);
}

/* The uprobe_multi links made, and into PROBES the probes on them. */
int stp_um_count(const struct stp_script *s, int *probes)
{
	*probes = 0;
	for (int i = 0; s->um_on && i < s->meta->nprobes; i++)
		*probes += um_probe(s, i);
	return s->um_nfds;
}
