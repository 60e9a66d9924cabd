/*
 * baseline.c - loader of the hand-written libbpf baseline (baseline.bpf.c)
 *
 *	bench_baseline count|pid|hist CMD [ARG...]
 *
 * Loads the one program of the case, attaches it, runs CMD and waits for
 * it (the probe is attached before CMD starts, as with pmstap -c and
 * bpftrace -c), then prints the number of events the program saw to
 * stderr and exits with CMD's status.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "baseline.skel.h"

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static struct bpf_program *select_prog(struct baseline_bpf *skel, const char *mode)
{
	struct bpf_program *progs[] = { skel->progs.count, skel->progs.pid, skel->progs.hist_pid };
	const char *names[] = { "count", "pid", "hist" };
	struct bpf_program *chosen = NULL;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(mode, names[i]) == 0)
			chosen = progs[i];
		else
			bpf_program__set_autoload(progs[i], false);
	}
	return chosen;
}

static int run(char **argv)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "bench_baseline: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static unsigned long long pid_events(struct baseline_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.pid_counts);
	unsigned long long total = 0, val;
	__u32 key, next, *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (bpf_map_lookup_elem(fd, &next, &val) == 0)
			total += val;
		key = next;
		prev = &key;
	}
	return total;
}

static unsigned long long hist_events(struct baseline_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.hist), ncpus = libbpf_num_possible_cpus();
	unsigned long long total = 0;
	__u64 *vals = calloc(ncpus > 0 ? ncpus : 1, sizeof(*vals));
	__u32 slot;
	int c;

	for (slot = 0; vals && slot < 64; slot++) {
		if (bpf_map_lookup_elem(fd, &slot, vals) != 0)
			continue;
		for (c = 0; c < ncpus; c++)
			total += vals[c];
	}
	free(vals);
	return total;
}

int main(int argc, char **argv)
{
	struct baseline_bpf *skel;
	struct bpf_program *prog;
	struct bpf_link *link;
	unsigned long long events;
	int rc;

	if (argc < 3) {
		fprintf(stderr, "usage: bench_baseline count|pid|hist CMD [ARG...]\n");
		return 2;
	}
	libbpf_set_print(quiet_print);
	skel = baseline_bpf__open();
	if (!skel) {
		fprintf(stderr, "bench_baseline: cannot open the BPF object\n");
		return 1;
	}
	prog = select_prog(skel, argv[1]);
	if (!prog) {
		fprintf(stderr, "bench_baseline: unknown case '%s'\n", argv[1]);
		baseline_bpf__destroy(skel);
		return 2;
	}
	if (baseline_bpf__load(skel) != 0 || !(link = bpf_program__attach(prog))) {
		fprintf(stderr, "bench_baseline: cannot load or attach: %s\n", strerror(errno));
		baseline_bpf__destroy(skel);
		return 1;
	}
	rc = run(argv + 2);
	if (strcmp(argv[1], "count") == 0)
		events = skel->bss->count_events;
	else if (strcmp(argv[1], "pid") == 0)
		events = pid_events(skel);
	else
		events = hist_events(skel);
	fprintf(stderr, "bench_baseline %s: %llu events\n", argv[1], events);
	bpf_link__destroy(link);
	baseline_bpf__destroy(skel);
	return rc < 0 ? 1 : rc;
}
