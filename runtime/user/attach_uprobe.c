/*
 * attach_uprobe.c - attach uprobe programs: process(..).function,
 * .statement and .mark.
 *
 * The metadata gives the file and the offset in it (pass 2 resolved the
 * symbol or the line), whether it is a uretprobe, the SDT semaphore's file
 * offset (the kernel raises that counter in every process of the file
 * while the probe is attached: a marker guarded by it then fires), and
 * which processes: process(PID) attaches for that process only, -c/-x for
 * target()'s (the kernel filters by the process's memory, so every thread
 * of it counts); otherwise every process that runs the file.
 */
#include <errno.h>

#include <bpf/libbpf.h>

#include "script_int.h"

/* The process a uprobe is limited to, or -1 for all. */
static int uprobe_pid(const struct stp_script *s, const struct stp_meta_probe *p)
{
	if (p->uprobe_pid > 0)
		return (int)p->uprobe_pid;
	if (p->uprobe_target && s->target > 0)
		return (int)s->target;
	return -1;
}

struct bpf_link *stp_attach_uprobe(struct stp_script *s, const struct stp_meta_probe *p,
				   struct bpf_program *prog)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = p->uprobe_return,
		    .ref_ctr_offset = (size_t)p->uprobe_ref_ctr_offset);

	if (!p->uprobe_path) {
		errno = ENOENT;
		return NULL;
	}
	return bpf_program__attach_uprobe_opts(prog, uprobe_pid(s, p), p->uprobe_path,
					       (size_t)p->uprobe_offset, &opts);
}
