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
 */
#include <errno.h>

#include <bpf/libbpf.h>

#include "script_int.h"

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
	return bpf_program__attach_uprobe_opts(prog, pid, path, (size_t)p->uprobe_offset, &opts);
}
