/*
 * inject_call.c - functions called on a stopped thread of the process.
 *
 * One thread runs every call: an interrupted one rather than one in a
 * group-stop or a signal-delivery-stop, the leader rather than another.
 * Its general registers, its FPU/vector state (NT_X86_XSTATE, or the
 * fxsave area where there is none) and the stack bytes the calls use are
 * saved first and given back at the end, whatever happened.
 *
 * The stack below its stack pointer, past the 128-byte red zone, gets the
 * call's strings, then (16-byte aligned) a return address of 0:
 *
 *	sp - 128	----------------- top
 *			LIB\0 FN\0 ARG\0
 *	base		----------------- 16-aligned
 *	base - 8	0		  the return address: sp at each entry
 *
 * A call sets rip, rdi, rsi, rax (0), rsp (base - 8) and orig_rax (-1),
 * clears DF and TF, and continues the thread.  The function returns to 0
 * and faults there: a SIGSEGV stop with rip 0 and rsp at base is the end of
 * the call, rax its value.  The SIGSEGV is never delivered.
 *
 * Syscalls.  A thread interrupted in a blocking syscall (read, nanosleep,
 * epoll_wait, ...) stopped with orig_rax the syscall's number and rax
 * -ERESTARTSYS, -ERESTARTNOHAND, -ERESTARTNOINTR or -ERESTART_RESTARTBLOCK,
 * and rip after the syscall instruction: the kernel decides whether to
 * restart it from these registers, read when the thread leaves its stop.
 * orig_rax -1 during the calls keeps the kernel from "restarting" the
 * function's first instruction; the saved registers, put back before the
 * thread is let go, make it decide for the syscall as it would have: with
 * no handler to run, restart it (restart_syscall() for nanosleep's
 * remaining time); with a signal owed to a handler, -EINTR or a restart by
 * SA_RESTART.
 *
 * Signals that reach the thread during a call: a fault the call raises
 * (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS from the kernel) goes
 * to the process's handler when it has one (the patcher's SIGTRAP handler,
 * a JIT's SIGSEGV handler), and otherwise ends the call as a crash; any
 * other signal is owed to the thread (inject_attach.c) and delivered when
 * it is let go, so no handler runs inside the call and none is lost.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "inject_int.h"

#define CALL_RED_ZONE	128
#define CALL_ARGS_MAX	(64 << 10)	/* LIB, FN and ARG, with their NULs */
#define CALL_USER_CS	0x33		/* __USER_CS: a 64-bit code segment */
#define CALL_XSTATE_MAX (1 << 20)
#define CALL_PAGE	4096ul
#define EFLAGS_TF	0x100ul
#define EFLAGS_DF	0x400ul

/* ---- the process's memory ---- */

int inj_mem__read(const struct inject *in, uintptr_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };
	ssize_t r = process_vm_readv(in->pid, &local, 1, &remote, 1, 0);

	if (r >= 0 && (size_t)r != len)
		errno = EFAULT;
	return r >= 0 && (size_t)r == len ? 0 : -1;
}

static int mem__write(const struct inject *in, uintptr_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)addr, len };
	ssize_t r = process_vm_writev(in->pid, &local, 1, &remote, 1, 0);

	if (r >= 0 && (size_t)r != len)
		errno = EFAULT;
	return r >= 0 && (size_t)r == len ? 0 : -1;
}

/* The string at ADDR in the process, cut to LEN - 1 bytes; read a page at a time. */
int inj_mem__string(const struct inject *in, uintptr_t addr, char *buf, size_t len)
{
	size_t got = 0;

	while (got + 1 < len) {
		size_t n = CALL_PAGE - (addr + got) % CALL_PAGE;

		if (n > len - 1 - got)
			n = len - 1 - got;
		if (inj_mem__read(in, addr + got, buf + got, n) != 0)
			return -1;
		if (memchr(buf + got, 0, n))
			return 0;
		got += n;
	}
	buf[got] = 0;
	return 0;
}

/* ---- the thread's FPU and vector state ---- */

static int fpu__save(struct inject *in, pid_t tid)
{
	for (size_t cap = 4096; cap <= CALL_XSTATE_MAX; cap *= 2) {
		void *buf = calloc(1, cap);
		struct iovec iov = { buf, cap };

		if (!buf || ptrace(PTRACE_GETREGSET, tid, NT_X86_XSTATE, &iov) != 0) {
			free(buf);
			break;
		}
		if (iov.iov_len < cap) {
			in->fpu = buf;
			in->fpulen = iov.iov_len;
			in->xstate = true;
			return 0;
		}
		free(buf);
	}
	in->fpulen = sizeof(struct user_fpregs_struct);
	in->fpu = calloc(1, in->fpulen);
	if (in->fpu && ptrace(PTRACE_GETFPREGS, tid, 0, in->fpu) == 0)
		return 0;
	free(in->fpu);
	in->fpu = NULL;
	return inj__fail(in, "cannot read the FPU state of thread %d of process %d: %s", tid,
			 in->pid, strerror(errno));
}

static int fpu__set(const struct inject *in, pid_t tid, void *buf)
{
	struct iovec iov = { buf, in->fpulen };

	if (in->xstate)
		return (int)ptrace(PTRACE_SETREGSET, tid, NT_X86_XSTATE, &iov);
	return (int)ptrace(PTRACE_SETFPREGS, tid, 0, buf);
}

/* The calls start with an empty x87 stack, as the ABI has it at a call; the rest as it was. */
static int fpu__for_calls(struct inject *in, pid_t tid)
{
	struct user_fpregs_struct *fx = malloc(in->fpulen);
	int r;

	if (!fx)
		return inj__fail(in, "out of memory for an FPU state");
	memcpy(fx, in->fpu, in->fpulen);
	fx->swd = 0;
	fx->ftw = 0;	/* the abridged tag word of fxsave: all empty */
	r = fpu__set(in, tid, fx);
	free(fx);
	if (r != 0)
		return inj__fail(in, "cannot set the FPU state of thread %d of process %d: %s", tid,
				 in->pid, strerror(errno));
	return 0;
}

/* ---- the stack ---- */

/* Save the stack bytes below the red zone, write the strings and the return address. */
static int stack__write(struct inject *in, pid_t tid, const char *const *strs, int n,
			uintptr_t *at)
{
	uintptr_t top = in->regs.rsp - CALL_RED_ZONE, lo;
	unsigned char *img;
	size_t len = 0, off = 8;

	for (int i = 0; i < n; i++)
		len += strlen(strs[i]) + 1;
	if (len > CALL_ARGS_MAX)
		return inj__fail(in, "the library path, function name and argument take %zu bytes, "
				 "more than %d", len, CALL_ARGS_MAX);
	lo = ((top - len) & ~(uintptr_t)15) - 8;
	img = calloc(1, top - lo);
	in->stack = malloc(top - lo);
	if (!img || !in->stack) {
		free(img);
		return inj__fail(in, "out of memory for a copy of the stack");
	}
	for (int i = 0; i < n; i++) {
		at[i] = lo + off;
		memcpy(img + off, strs[i], strlen(strs[i]) + 1);
		off += strlen(strs[i]) + 1;
	}
	if (inj_mem__read(in, lo, in->stack, top - lo) != 0 ||
	    mem__write(in, lo, img, top - lo) != 0) {
		free(img);
		free(in->stack);
		in->stack = NULL;
		return inj__fail(in,
				 "cannot write below the stack pointer of thread %d of process "
				 "%d (0x%lx): %s",
				 tid, in->pid, (unsigned long)lo, strerror(errno));
	}
	free(img);
	in->stack_lo = lo;
	in->stack_len = top - lo;
	return 0;
}

/* ---- the thread ---- */

/* The best thread to run the calls: by enum inj_state's order, the leader first. */
static int pick(const struct inject *in)
{
	int best = -1;

	for (int k = 0; k < in->n; k++) {
		enum inj_state s = in->thr[k].state;

		if (s >= INJ_RUNNING)
			continue;
		if (best < 0 || s < in->thr[best].state ||
		    (s == in->thr[best].state && in->thr[k].tid == in->pid))
			best = k;
	}
	return best;
}

int inj_call__begin(struct inject *in, const char *const *strs, int n, uintptr_t *at)
{
	pid_t tid;

	in->call = pick(in);
	if (in->call < 0)
		return inj__fail(in, "process %d exited while it was being stopped", in->pid);
	tid = in->thr[in->call].tid;
	if (ptrace(PTRACE_GETREGS, tid, 0, &in->regs) != 0)
		return inj__fail(in, "cannot read the registers of thread %d of process %d: %s",
				 tid, in->pid, strerror(errno));
	in->regs_saved = true;
	if (in->regs.cs != CALL_USER_CS)
		return inj__fail(in, "process %d is not a 64-bit x86 process", in->pid);
	if (fpu__save(in, tid) != 0 || stack__write(in, tid, strs, n, at) != 0)
		return -1;
	return fpu__for_calls(in, tid);
}

/* ---- a call ---- */

static int resume(struct inj_thread *t, int sig)
{
	ptrace(PTRACE_CONT, t->tid, 0, sig);	/* when it fails, the thread is dying: wait tells */
	t->state = INJ_RUNNING;
	return 0;
}

static int exited(struct inject *in, const char *name, int status)
{
	pid_t tid = in->thr[in->call].tid;

	in->thr[in->call].state = INJ_GONE;
	if (tid != in->pid && WIFEXITED(status))
		return inj__fail(in, "thread %d of process %d exited with status %d during the "
				 "call to %s", tid, in->pid, WEXITSTATUS(status), name);
	if (WIFEXITED(status))
		return inj__fail(in, "process %d exited with status %d during the call to %s",
				 in->pid, WEXITSTATUS(status), name);
	return inj__fail(in, "process %d was killed by SIG%s during the call to %s", in->pid,
			 sigabbrev_np(WTERMSIG(status)), name);
}

static bool is_fault(int sig, const siginfo_t *si)
{
	return si->si_code > 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
				   sig == SIGFPE || sig == SIGTRAP || sig == SIGSYS);
}

/* Has the process a handler for SIG? */
static bool caught(const struct inject *in, int sig)
{
	char mask[64];

	if (inj__status(in->pid, 0, "SigCgt", mask, sizeof(mask)) != 0)
		return false;
	return (strtoull(mask, NULL, 16) >> (sig - 1)) & 1;
}

/* The calling thread stopped with STATUS: 1 when the call has returned, 0 to wait on, or -1. */
static int stopped(struct inject *in, const char *name, int status, unsigned long *ret)
{
	struct inj_thread *t = &in->thr[in->call];
	int sig = WSTOPSIG(status);
	struct user_regs_struct r;
	siginfo_t si;

	if (status >> 16 == PTRACE_EVENT_STOP)
		return resume(t, 0);	/* a trap for a stop or an interrupt that came late */
	t->state = INJ_SIGNALLED;
	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) != 0 ||
	    ptrace(PTRACE_GETREGS, t->tid, 0, &r) != 0)
		return inj__fail(in, "cannot read the state of thread %d of process %d: %s", t->tid,
				 in->pid, strerror(errno));
	if (sig == SIGSEGV && r.rip == 0 && r.rsp == in->stack_lo + 8) {
		*ret = r.rax;
		return 1;
	}
	if (!is_fault(sig, &si)) {
		inj_attach__owe(in, t, &si);
		return resume(t, 0);
	}
	if (caught(in, sig))
		return resume(t, sig);	/* the process handles its own faults */
	return inj__fail(in, "the call to %s in process %d raised SIG%s at 0x%llx", name, in->pid,
			 sigabbrev_np(sig), r.rip);
}

/* Stop the calling thread again, after a call that did not return. */
static void stop_call(struct inject *in)
{
	struct inj_thread *t = &in->thr[in->call];
	struct timespec end;
	int k, status;
	siginfo_t si;

	ptrace(PTRACE_INTERRUPT, t->tid, 0, 0);
	inj__deadline(&end, INJ_GRACE_MS);
	while (t->state == INJ_RUNNING && (k = inj_attach__wait(in, &status, &end)) >= 0) {
		if (k != in->call || !WIFSTOPPED(status) || status >> 16 == PTRACE_EVENT_STOP) {
			inj_attach__note(in, &in->thr[k], status);
			continue;
		}
		t->state = INJ_SIGNALLED;
		if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) == 0 && !is_fault(si.si_signo, &si))
			inj_attach__owe(in, t, &si);
	}
}

static int timed_out(struct inject *in, const char *name)
{
	stop_call(in);
	if (in->thr[in->call].state == INJ_RUNNING)
		return inj__fail(in, "the call to %s in process %d did not return within %g s, and "
				 "thread %d cannot be stopped to undo it", name, in->pid,
				 in->timeout_ms / 1000.0, in->thr[in->call].tid);
	return inj__fail(in, "the call to %s in process %d did not return within %g s", name,
			 in->pid, in->timeout_ms / 1000.0);
}

static int wait_call(struct inject *in, const char *name, unsigned long *ret)
{
	struct timespec end;
	int k, r = 0, status;

	inj__deadline(&end, in->timeout_ms);
	while (r == 0) {
		k = inj_attach__wait(in, &status, &end);
		if (k < 0)
			return timed_out(in, name);
		if (k != in->call)
			inj_attach__note(in, &in->thr[k], status);	/* the others exit */
		else if (!WIFSTOPPED(status))
			r = exited(in, name, status);
		else
			r = stopped(in, name, status, ret);
	}
	return r < 0 ? -1 : 0;
}

/* Call FN(A0, A1) on the calling thread; NAME for messages; *RET gets rax. */
int inj_call__run(struct inject *in, const char *name, uintptr_t fn, uintptr_t a0, uintptr_t a1,
		  unsigned long *ret)
{
	struct inj_thread *t = &in->thr[in->call];
	struct user_regs_struct r = in->regs;
	static const uint64_t zero;

	r.rip = fn;
	r.rdi = a0;
	r.rsi = a1;
	r.rax = 0;
	r.rsp = in->stack_lo;
	r.orig_rax = -1;	/* not in a syscall: nothing to restart on the way out */
	r.eflags &= ~(EFLAGS_TF | EFLAGS_DF);
	if (mem__write(in, in->stack_lo, &zero, sizeof(zero)) != 0 ||
	    ptrace(PTRACE_SETREGS, t->tid, 0, &r) != 0)
		return inj__fail(in, "cannot set up the call to %s on thread %d of process %d: %s",
				 name, t->tid, in->pid, strerror(errno));
	resume(t, 0);
	return wait_call(in, name, ret);
}

/* ---- the end ---- */

static void restore(struct inject *in, pid_t tid)
{
	if (in->stack && mem__write(in, in->stack_lo, in->stack, in->stack_len) != 0)
		inj__fail(in, "cannot restore the stack of thread %d of process %d: %s", tid,
			  in->pid, strerror(errno));
	if (in->fpu && fpu__set(in, tid, in->fpu) != 0)
		inj__fail(in, "cannot restore the FPU state of thread %d of process %d: %s", tid,
			  in->pid, strerror(errno));
	if (in->regs_saved && ptrace(PTRACE_SETREGS, tid, 0, &in->regs) != 0)
		inj__fail(in, "cannot restore the registers of thread %d of process %d: %s", tid,
			  in->pid, strerror(errno));
}

void inj_call__end(struct inject *in)
{
	struct inj_thread *t = in->call >= 0 ? &in->thr[in->call] : NULL;

	if (t && t->state == INJ_RUNNING)
		stop_call(in);
	if (t && t->state != INJ_RUNNING && t->state != INJ_GONE)
		restore(in, t->tid);
	free(in->stack);
	free(in->fpu);
	in->stack = NULL;
	in->fpu = NULL;
}
