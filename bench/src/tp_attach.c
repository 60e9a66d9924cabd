/*
 * tp_attach.c - what attaching a program to many tracepoints costs, and
 * taking it down, two ways (bench/uattach.sh; issue 15's kernel.trace("*:*")).
 *
 *	tp_attach SYSTEM...	every tracepoint of the tracefs SYSTEMs:
 *				"perf N attach_ms detach_ms" with one BPF link
 *				per tracepoint perf event (what pmstap does for
 *				kernel.trace probes that read the record), then
 *				"raw N attach_ms detach_ms" with one raw
 *				tracepoint link each (BPF_PROG_TYPE_RAW_TRACEPOINT:
 *				the tracepoint's arguments, not its record; what
 *				pmstap does for the others on Linux 6.10 and
 *				later).  The program does nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#define MAX_TPS 8192
#define TRACEFS "/sys/kernel/tracing/events"

static char *names[MAX_TPS];
static int ids[MAX_TPS], fds[MAX_TPS], ntps;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void add_system(const char *sys)
{
	char path[512];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), TRACEFS "/%s", sys);
	dir = opendir(path);
	while (dir && (d = readdir(dir)) && ntps < MAX_TPS) {
		FILE *f;

		if (d->d_name[0] == '.' || d->d_type != DT_DIR)
			continue;
		snprintf(path, sizeof(path), TRACEFS "/%s/%s/id", sys, d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%d", &ids[ntps]) == 1)
			names[ntps++] = strdup(d->d_name);
		fclose(f);
	}
	if (dir)
		closedir(dir);
}

static int load(enum bpf_prog_type type)
{
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(type, NULL, "GPL", insns, 2, NULL);
}

static int perf_link(int prog, int id)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT, .size = sizeof(attr), .config = (unsigned)id,
		.sample_period = 1, .wakeup_events = 1,
	};
	int pfd = (int)syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	int link;

	if (pfd < 0)
		return -1;
	link = bpf_link_create(prog, pfd, BPF_PERF_EVENT, NULL);
	close(pfd);	/* the link holds the event */
	return link;
}

static void run(const char *label, int prog, bool raw)
{
	double t0 = now_ms(), t1, t2;
	int n = 0;

	for (int i = 0; i < ntps; i++) {
		fds[i] = raw ? bpf_raw_tracepoint_open(names[i], prog) : perf_link(prog, ids[i]);
		n += fds[i] >= 0;
	}
	t1 = now_ms();
	for (int i = 0; i < ntps; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	t2 = now_ms();
	printf("%s %d %.0f %.0f\n", label, n, t1 - t0, t2 - t1);
}

int main(int argc, char **argv)
{
	int tp, rawp;

	for (int i = 1; i < argc; i++)
		add_system(argv[i]);
	tp = load(BPF_PROG_TYPE_TRACEPOINT);
	rawp = load(BPF_PROG_TYPE_RAW_TRACEPOINT);
	if (tp < 0 || rawp < 0 || !ntps) {
		fprintf(stderr, "tp_attach: %s\n", ntps ? strerror(errno) : "no tracepoints");
		return 1;
	}
	run("perf", tp, false);
	run("raw", rawp, true);
	return 0;
}
