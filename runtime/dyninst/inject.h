/*
 * inject.h - a shared object loaded into a process that already runs, and
 * a function of it called there: how `pmstap --runtime=dyninst -x PID`
 * gets libstapdyn.so into PID (same user, no root).
 *
 * The process is traced with ptrace for the time of the operation, so the
 * caller needs the right to trace it: the same user, a process that is
 * dumpable, no other tracer, and with kernel.yama.ptrace_scope 1 a caller
 * that is an ancestor of it (or that it named with prctl(PR_SET_PTRACER)),
 * unless the caller has CAP_SYS_PTRACE.  x86-64 processes only.
 *
 * All ptrace requests are made by the thread that calls; calls for one
 * process must not overlap, and no other thread of the caller may wait for
 * any child meanwhile (waitpid(-1) would take the stops this waits for).
 *
 * glibc keeps little room (about 1.5 KB) for the static TLS of libraries
 * dlopen()ed late: a LIB with more initial-exec TLS than that fails to load
 * ("cannot allocate memory in static TLS block").
 */
#ifndef STP_INJECT_H
#define STP_INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How long a thread may take to stop, and each call to return, by default (ms). */
#define STP_INJECT_TIMEOUT_MS 10000

/*
 * Load the shared object LIB into process PID and call FN(ARG) in it, where FN is
 * `long FN(const char *arg)` exported by LIB: every thread of PID is stopped (ptrace
 * seize + interrupt, each thread of /proc/PID/task, including threads that appear
 * meanwhile) for the whole operation, then resumed as they were (a thread that was
 * already stopped by a signal, or ptrace-stopped by a debugger, must not be harmed:
 * refuse a process already traced by someone else, with a clear reason).
 * *RET gets FN's return value, once FN has returned (even when what follows fails).
 * Returns 0, or -1 with a one-line reason in ERR.
 * LIB already loaded in PID: it is not loaded twice (dlopen of the same path gives the
 * same handle); FN is called again.
 *
 * LIB is opened by the process itself (RTLD_NOW | RTLD_GLOBAL), so a relative
 * path is relative to its working directory and its own search path.  FN runs
 * on one thread of the process, the others stopped (threads FN creates run):
 * a thread that was stopped holding a lock dlopen or FN needs makes the call
 * time out.  A call that times out or crashes is abandoned: the thread gets
 * its registers back, and whatever the call had done (locks taken included)
 * stays done.
 */
int stp_inject__call(pid_t pid, const char *lib, const char *fn, const char *arg, long *ret,
		     char *err, size_t errlen);

/* Set the time limits of the calls that follow (ms; 0: STP_INJECT_TIMEOUT_MS). */
void stp_inject__set_timeout(unsigned int ms);

/*
 * A thread stopped at FROM goes on at TO: what FN may ask of the caller
 * when it rewrote code that threads were stopped in (libstapdyn's patcher
 * moves them out of the bytes a jump replaced, into their copy).
 */
struct stp_inject_move {
	uint64_t from, to;
};

struct stp_inject_moves {
	uint64_t n;
	struct stp_inject_move v[];
};

#define STP_INJECT_MOVES_MAX (1 << 20)

/*
 * For the calls that follow (NULL: none): LIB defines SYMBOL, a variable
 * `const struct stp_inject_moves *` that FN points at its moves (or leaves
 * NULL).  A LIB without SYMBOL fails the call before FN runs.  Once FN has
 * returned, every thread of PID whose pc is a FROM (the one that ran the
 * calls too, with the pc it had before them) gets TO before it resumes.
 * A thread that restarts an interrupted system call when it resumes (the
 * kernel sets its pc 2 bytes back, onto the syscall instruction, from the
 * registers as they are then) is moved only when the 2 bytes before TO
 * are a syscall instruction; otherwise it stays and the call fails.  The
 * caller keeps SYMBOL's string while it is set.
 */
void stp_inject__set_pc_moves(const char *symbol);

#endif
