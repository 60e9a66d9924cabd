/*
 * patch.h - the x86-64 in-process patcher of --runtime=dyninst.
 *
 * A probe site is an instruction of this process's code.  Installing it
 * overwrites the instruction(s) at the site with a 5-byte `jmp rel32` to a
 * trampoline allocated within 2 GB; the trampoline saves the thread's
 * registers into a struct stp_regs, runs the site's handlers, restores the
 * registers (as the handlers left them) and runs a relocated copy of the
 * displaced instructions before jumping back.  Where no jump fits (the
 * first instruction is shorter than 5 bytes and the next ones are not
 * known to be safe to displace, or a branch lands inside the displaced
 * bytes), the site gets an int3 instead: the SIGTRAP handler sends the
 * thread to the same trampoline, so handlers never run in signal context;
 * a trap costs a signal delivery more than a jump.
 *
 * Return probes replace the return address at function entry with a
 * return trampoline and keep the real one on a per-thread shadow stack
 * (STP_PATCH_SHADOW_MAX calls deep; deeper calls are not hooked and are
 * counted).  Frames skipped by longjmp are dropped from it at the next
 * hooked call or return.  Functions that return twice (setjmp, vfork)
 * must not get return probes.
 *
 * Handlers run on the probed thread, on its stack (below the 128-byte red
 * zone), with the vector registers saved (xmm, ymm or zmm0-31 and k0-7,
 * as the machine has them), MXCSR, and the x87 registers when in use.  A
 * handler that calls probed code (directly or from a signal handler) does
 * not run handlers again: such hits are counted per site as "skipped".
 *
 * What stays valid for the life of the process, whatever is removed or
 * freed: the trampolines (a thread may still be inside one), the return
 * trampoline and the per-site records handlers are dispatched from.
 * Not supported: unwinding through a frame whose return is hooked (its
 * return address is the return trampoline: a C++ throw terminates,
 * backtrace() stops) unless stp_patch_unhook_returns() ran first, and a
 * thread that is between two displaced instructions of a multi-
 * instruction jump site at the moment the site is written, unless a
 * tracer that holds it stopped moves its pc (stp_patcher__moves; a pc
 * saved in a signal frame is not moved).  Restoring a site is safe: a
 * moved thread is in the copy, and the copy stays.
 *
 * Add probes, install, remove, free; none of these may run concurrently
 * with each other on one patcher.  Different patchers may not patch the
 * same instruction.
 */
#ifndef STP_PATCH_H
#define STP_PATCH_H

#include <stddef.h>
#include <stdint.h>

/* The probed thread's registers, in the layout of the kernel's x86-64 struct pt_regs. */
struct stp_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

/*
 * A handler.  Changes it makes to the general registers (ax..di, r8..r15,
 * bp, bx) and to flags take effect; at a return probe a changed ip is
 * where the function returns to.  Changes to sp, cs, ss (and to ip at an
 * entry) are ignored.
 */
typedef void (*stp_patch_fn)(struct stp_regs *regs, void *arg);

struct stp_patcher;

/* How a site was written. */
enum stp_patch_kind {
	STP_PATCH_JUMP,		/* jmp rel32 to its trampoline */
	STP_PATCH_TRAP,		/* int3, the SIGTRAP handler redirects */
};

/* What stp_patcher__info says about one site. */
struct stp_patch_info {
	enum stp_patch_kind kind;
	int len;			/* bytes displaced (replaced at the site) */
	unsigned long skipped;		/* hits whose handlers did not run: the thread was in one */
	unsigned long ret_missed;	/* returns not hooked (shadow stack full) or unhooked */
	char why[96];			/* for a trap: why no jump; else "" */
};

#define STP_PATCH_SHADOW_MAX 256	/* hooked returns pending per thread */

struct stp_patcher *stp_patcher__new(void);

/*
 * Probe ADDR (an instruction boundary inside the function [FUNC_LO,
 * FUNC_HI), both 0 when unknown): ENTRY (may be NULL) runs before the
 * instruction at ADDR with the registers as they are there (regs->ip ==
 * ADDR, regs->sp == the thread's rsp at ADDR); RET (may be NULL; only
 * allowed when ADDR is a function's entry) runs when that call returns,
 * with regs->ax/dx the return value, regs->ip the return address, regs->sp
 * the rsp after the return.  Several probes may be added at the same ADDR:
 * their handlers run in the order added.  Decides jump or trap for the
 * site.  Returns 0, or -1 with a one-line reason in ERR.
 */
int stp_patcher__add(struct stp_patcher *p, uintptr_t addr, uintptr_t func_lo, uintptr_t func_hi,
		     stp_patch_fn entry, stp_patch_fn ret, void *arg, char *err, size_t errlen);

/*
 * Write every added site into the code, all at once (int3 first, then the
 * jumps' tails, then their first bytes).  Installs the SIGTRAP handler,
 * chaining to the one it replaces.  Nothing is written when it fails.
 * May be called again after stp_patcher__remove.  0, or -1 with ERR.
 */
int stp_patcher__install(struct stp_patcher *p, char *err, size_t errlen);

/* Restore every site's original bytes (threads already inside a trampoline finish safely). */
void stp_patcher__remove(struct stp_patcher *p);

/* Remove if installed, and free.  Returns still pending run no handler. */
void stp_patcher__free(struct stp_patcher *p);

/* How many sites use a jump and how many fell back to a trap (for -v and tests). */
void stp_patcher__counts(const struct stp_patcher *p, int *jumps, int *traps);

/* Sum of every site's skipped hits (see struct stp_patch_info). */
unsigned long stp_patcher__skipped(const struct stp_patcher *p);

/* Fill INFO for the site at ADDR: 0, or -1 when ADDR has no probe. */
int stp_patcher__info(const struct stp_patcher *p, uintptr_t addr, struct stp_patch_info *info);

/* A thread stopped at FROM, inside the bytes a jump replaced, goes on at TO. */
struct stp_patch_move {
	uintptr_t from, to;
};

/*
 * For a tracer that held every other thread stopped while
 * stp_patcher__install ran: the pc moves of the installed jump sites,
 * one for each instruction boundary strictly inside one (addr < from <
 * addr + len), TO where the copy of the instruction at FROM runs in the
 * site's trampoline.  A thread whose pc is FROM must get TO before it
 * runs again.  A thread in a system call that the kernel restarts (pc - 2
 * on its way out) is right too: the instruction before FROM was the
 * 2-byte syscall, and its copy is the 2 bytes before TO.  Writes up to MAX
 * moves into V, sorted by FROM; returns how many there are (none unless
 * installed).
 */
int stp_patcher__moves(const struct stp_patcher *p, struct stp_patch_move *v, int max);

/*
 * For unwinders: the return address RA found in the stack slot at SLOT
 * (the slot a call pushed), corrected when it is the return trampoline's:
 * then the real one, from the calling thread's shadow stack.
 */
uintptr_t stp_patch_return_address(uintptr_t ra, uintptr_t slot);

/*
 * For unwinders about to walk the calling thread's stack through hooked
 * frames (a C++ throw, backtrace(): they stop at the return trampoline):
 * give every pending hooked return of the thread its real return address
 * back.  Those returns run no handler; each counts in ret_missed.
 */
void stp_patch_unhook_returns(void);

#endif
