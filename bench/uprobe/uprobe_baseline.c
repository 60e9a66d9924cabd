/*
 * uprobe_baseline.c - loader of the uprobe baseline: attach on_entry
 * (or on_return with -r) to FUNC in BINARY, run CMD..., print the count.
 *
 *	uprobe_baseline [-r] BINARY FUNC CMD...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "uprobe_baseline.skel.h"

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts);
	struct uprobe_baseline_bpf *skel;
	struct bpf_link *link;
	int ret = argc > 1 && strcmp(argv[1], "-r") == 0, status;
	pid_t pid;

	if (argc < 4 + ret) {
		fprintf(stderr, "usage: uprobe_baseline [-r] BINARY FUNC CMD...\n");
		return 2;
	}
	skel = uprobe_baseline_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "uprobe_baseline: cannot load the BPF object\n");
		return 1;
	}
	opts.func_name = argv[2 + ret];
	opts.retprobe = ret;
	link = bpf_program__attach_uprobe_opts(ret ? skel->progs.on_return : skel->progs.on_entry,
					       -1, argv[1 + ret], 0, &opts);
	if (!link) {
		fprintf(stderr, "uprobe_baseline: cannot attach to %s in %s\n", argv[2 + ret],
			argv[1 + ret]);
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		execvp(argv[3 + ret], argv + 3 + ret);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	fprintf(stderr, "calls %llu\n", (unsigned long long)skel->bss->calls);
	bpf_link__destroy(link);
	uprobe_baseline_bpf__destroy(skel);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
