/*
 * inject_moves.c - the held threads' pcs moved where the called function
 * asks (stp_inject__set_pc_moves): libstapdyn's patcher replaces whole
 * instructions with a jump, and a thread stopped between two of them must
 * go on in their copy, not in the middle of the jump.
 *
 * The variable the function set is read from the process, then the table
 * it points at, which is sorted here; every held thread's pc is looked up
 * in it: the calling thread's saved registers (inj_call__end gives them
 * back), the others' through PTRACE_GETREGS and PTRACE_SETREGS.
 *
 * System calls.  A thread stopped in a system call that the kernel will
 * restart has orig_rax >= 0, rax -ERESTART* and its pc after the syscall
 * instruction; when it leaves the stop, the kernel sets its pc 2 bytes
 * back, onto that instruction, from the registers as the tracer left them.
 * Moved to TO, it restarts at TO - 2.  The patcher copies syscall,
 * sysenter and int $0x80 (2 bytes each) as they are, so the copy of the
 * one before FROM is the 2 bytes before TO; a copy that grew (a short
 * branch made long) is never followed by a thread in a system call.  That
 * is checked anyway, for the table comes from another process: a thread
 * whose TO - 2 holds no such instruction keeps its pc, and the call fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "inject_int.h"

/* The kernel's -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND, -ERESTART_RESTARTBLOCK. */
static bool restarts(const struct user_regs_struct *r)
{
	long ax = (long)r->rax;

	return (long)r->orig_rax >= 0 && (ax == -512 || ax == -513 || ax == -514 || ax == -516);
}

/* syscall, sysenter, int $0x80 */
static bool is_syscall(const uint8_t b[2])
{
	return (b[0] == 0x0f && (b[1] == 0x05 || b[1] == 0x34)) || (b[0] == 0xcd && b[1] == 0x80);
}

struct moves {
	struct stp_inject_move *v;
	size_t n;
};

static int move_cmp(const void *a, const void *b)
{
	const struct stp_inject_move *x = a, *y = b;

	return x->from < y->from ? -1 : x->from > y->from;
}

/* The table the variable at VAR points at, into M (none: M->n 0).  0, or -1. */
static int moves__read(struct inject *in, uintptr_t var, struct moves *m)
{
	uint64_t at, n = 0;

	if (inj_mem__read(in, var, &at, sizeof(at)) != 0 ||
	    (at && inj_mem__read(in, at, &n, sizeof(n)) != 0))
		return inj__fail(in, "cannot read the pc moves of process %d: %s", in->pid,
				 strerror(errno));
	if (n > STP_INJECT_MOVES_MAX)
		return inj__fail(in, "process %d asks for %llu pc moves, more than %d", in->pid,
				 (unsigned long long)n, STP_INJECT_MOVES_MAX);
	if (!n)
		return 0;
	m->v = malloc(n * sizeof(*m->v));
	if (!m->v)
		return inj__fail(in, "out of memory for %llu pc moves", (unsigned long long)n);
	if (inj_mem__read(in, at + offsetof(struct stp_inject_moves, v), m->v,
			  n * sizeof(*m->v)) != 0)
		return inj__fail(in, "cannot read the pc moves of process %d: %s", in->pid,
				 strerror(errno));
	m->n = n;
	qsort(m->v, n, sizeof(*m->v), move_cmp);
	return 0;
}

/* Thread TID's registers R: moved when its pc is a FROM.  1 when moved, 0 when not, -1. */
static int move_regs(struct inject *in, const struct moves *m, pid_t tid,
		     struct user_regs_struct *r)
{
	struct stp_inject_move key = { .from = r->rip };
	const struct stp_inject_move *mv = bsearch(&key, m->v, m->n, sizeof(key), move_cmp);
	uint8_t b[2];

	if (!mv)
		return 0;
	if (restarts(r) && (inj_mem__read(in, mv->to - 2, b, 2) != 0 || !is_syscall(b)))
		return inj__fail(in, "thread %d of process %d restarts a system call at 0x%llx, "
				 "but 0x%llx does not follow a copy of the syscall instruction",
				 tid, in->pid, r->rip, (unsigned long long)mv->to);
	r->rip = mv->to;
	return 1;
}

/* Move held thread T when its pc is a FROM.  0, or -1. */
static int move_thread(struct inject *in, const struct moves *m, const struct inj_thread *t)
{
	struct user_regs_struct r;
	int moved;

	if (ptrace(PTRACE_GETREGS, t->tid, 0, &r) != 0) {
		if (errno == ESRCH)
			return 0;	/* killed: it runs no more */
		return inj__fail(in, "cannot read the registers of thread %d of process %d: %s",
				 t->tid, in->pid, strerror(errno));
	}
	moved = move_regs(in, m, t->tid, &r);
	if (moved > 0 && ptrace(PTRACE_SETREGS, t->tid, 0, &r) != 0 && errno != ESRCH)
		return inj__fail(in, "cannot move the pc of thread %d of process %d: %s", t->tid,
				 in->pid, strerror(errno));
	return moved < 0 ? -1 : 0;
}

/*
 * The variable at VAR points at the moves (or is NULL): every held thread
 * moved, each one that can be when another cannot.  0, or -1.
 */
int inj_moves__apply(struct inject *in, uintptr_t var)
{
	struct moves m = { 0 };
	int r = moves__read(in, var, &m);

	for (int k = 0; m.n && k < in->n; k++) {
		const struct inj_thread *t = &in->thr[k];
		int moved = 0;

		if (k == in->call && in->regs_saved)
			moved = move_regs(in, &m, t->tid, &in->regs);
		else if (k != in->call && t->state < INJ_RUNNING)
			moved = move_thread(in, &m, t);
		if (moved < 0)
			r = -1;
	}
	free(m.v);
	return r;
}
