/*
 * tapset_task.dyn.h - the stp_tapset.h services that BPF answers from the
 * kernel's task, answered in the probed process itself (--runtime=dyninst).
 * runtime/bpf/tapset.bpf.h includes this file in place of its own.
 *
 * The process and thread ids come from libstapdyn.so (cached per thread,
 * forgotten in a forked child); uid and gid from the system calls; the
 * command name from the thread's own comm; user stacks from the
 * thread's registers at the probe.  What only the kernel knows (other
 * tasks, kernel stacks) raises an error naming the runtime.
 */
#ifndef STP_TAPSET_TASK_DYN_H
#define STP_TAPSET_TASK_DYN_H

#include <fcntl.h>
#include <stdlib.h>
#include <sys/prctl.h>

#define STP_COMM_LEN (MAXSTRINGLEN < 16 ? MAXSTRINGLEN : 16)

#define stp__dyn_unsupported(c, what)								\
	stp_raise_msg((c), what " is not available on the dyninst runtime")

STP_SERVICE int64_t stp_pid(struct context *c)
{
	return (int64_t)(bpf_get_current_pid_tgid() >> 32);
}

STP_SERVICE int64_t stp_tid(struct context *c)
{
	return (int64_t)(uint32_t)bpf_get_current_pid_tgid();
}

STP_SERVICE int64_t stp_ppid(struct context *c)
{
	return getppid();
}

STP_SERVICE int64_t stp_pgrp(struct context *c)
{
	return getpgrp();
}

STP_SERVICE int64_t stp_sid(struct context *c)
{
	return getsid(0);
}

STP_SERVICE int64_t stp_uid(struct context *c)
{
	return getuid();
}

STP_SERVICE int64_t stp_gid(struct context *c)
{
	return getgid();
}

STP_SERVICE int64_t stp_euid(struct context *c)
{
	return geteuid();
}

STP_SERVICE int64_t stp_egid(struct context *c)
{
	return getegid();
}

STP_SERVICE void stp_execname(struct context *c, char *out)
{
	bpf_get_current_comm(out, STP_COMM_LEN);
	out[STP_COMM_LEN - 1] = '\0';
}

/* The parent's comm, from /proc: "" when it is gone or unreadable. */
STP_SERVICE void stp_pexecname(struct context *c, char *out)
{
	char path[32];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)getppid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, out, STP_COMM_LEN - 1);
		close(fd);
	}
	if (n > 0 && out[n - 1] == '\n')
		n--;
	out[n > 0 ? n : 0] = '\0';
}

STP_SERVICE int64_t stp_cpu(struct context *c)
{
	return sched_getcpu();
}

STP_SERVICE uint64_t stp_cmdline_start(struct context *c)
{
	stp__dyn_unsupported(c, "the command line's address");
	return 0;
}

STP_SERVICE uint64_t stp_cmdline_end(struct context *c)
{
	stp__dyn_unsupported(c, "the command line's address");
	return 0;
}

STP_SERVICE int64_t stp_jiffies(struct context *c)
{
	int64_t hz = stp_hz(c);

	return hz > 0 ? (int64_t)(bpf_ktime_get_ns() / (1000000000ULL / (uint64_t)hz)) : 0;
}

/* printk(): there is no kernel log in a process; stderr is the nearest. */
STP_SERVICE void stp_printk(struct context *c, int64_t level, const char *msg)
{
	fprintf(stderr, "<%lld>%s\n", (long long)level, msg);
}

/*
 * ---- backtraces: BPF's services (stp_stack.bpf.h), on the user stack
 * that bpf_get_task_stack() walks here (stp_native.h); a process has no
 * kernel stack to give.
 */
#define STP_KSTACK_REFUSED(c) (stp__dyn_unsupported((c), "a kernel backtrace"), true)
#include "../bpf/stp_stack.bpf.h"

/* ---- other tasks ---- */

STP_SERVICE int64_t stp_task_current(struct context *c)
{
	stp__dyn_unsupported(c, "task_current()");
	return 0;
}

STP_SERVICE int64_t stp_task_field(struct context *c, int64_t task, int64_t field)
{
	stp__dyn_unsupported(c, "a task's fields");
	return 0;
}

STP_SERVICE void stp_task_execname(struct context *c, char *out, int64_t task)
{
	out[0] = '\0';
	stp__dyn_unsupported(c, "a task's fields");
}

STP_SERVICE int64_t stp_pid2task(struct context *c, int64_t pid)
{
	stp__dyn_unsupported(c, "pid2task()");
	return 0;
}

/* every hit of this runtime is in user mode */
STP_SERVICE int64_t stp_user_mode(struct context *c)
{
	return 1;
}

/* addr(): where the probe hit the process, 0 in probes without registers */
STP_SERVICE uint64_t stp_perf_addr(struct context *c)
{
	struct pt_regs *r = stp_dyn_regs();

	return r ? r->ip : 0;
}

static __always_inline struct pt_regs *stp__uregs(struct context *c)
{
	struct pt_regs *r = stp_dyn_regs();

	if (!r)
		stp_raise_msg(c, "registers are not available here: only in process(...) probes");
	return r;
}

#endif
