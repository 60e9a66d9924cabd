/*
 * patch_int.h - what patch.c, patch_reloc.c, patch_mem.c and patch_tramp.c share.
 *
 *   patch.c		the patcher object: sites, jump or trap, writing the code
 *   patch_reloc.c	decoding (Zydis) and relocating the displaced instructions
 *   patch_mem.c	/proc/self/maps, trampoline memory within 2 GB, site records
 *   patch_tramp.c	the trampolines, their dispatchers, the shadow stack, SIGTRAP
 *
 * A site's trampoline ("stub"), 16-byte aligned, in a code chunk near it:
 *
 *	+0	.quad record		struct patch_rec of the site
 *	+8	.quad patch_entry_common
 *	+16	lea -128(%rsp),%rsp	<- the site jumps here (PATCH_STUB_ENTRY)
 *	+21	call *-19(%rip)		saves, dispatches, restores; returns to +27
 *	+27	lea 128(%rsp),%rsp
 *	+35	the displaced instructions, relocated
 *		jmp site+len
 */
#ifndef STP_PATCH_INT_H
#define STP_PATCH_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "patch.h"

/* Internal symbols stay inside the shared object that is preloaded into programs. */
#define PATCH_HIDDEN __attribute__((visibility("hidden")))

#define PATCH_JMP_LEN	5	/* jmp rel32 */
#define PATCH_MAX_INSNS	8	/* displaced instructions */
#define PATCH_MAX_LEN	24	/* displaced bytes: fewer than 5 + 15 */
#define PATCH_STUB_ENTRY 16	/* the stub's entry, after its two pointers */
#define PATCH_STUB_RET	27	/* the return address its call pushes */
#define PATCH_STUB_HEAD	35	/* where the relocated copy starts */
#define PATCH_STUB_MAX	256	/* a stub's size, at most */
#define PATCH_INT3	0xcc
#define PATCH_REACH	0x7fff0000l	/* what a rel32 reaches, with a margin */

/* ---- patch_reloc.c ---- */

/* How a displaced instruction is relocated. */
enum patch_insn_kind {
	PATCH_I_COPY,		/* as is */
	PATCH_I_RIPMEM,		/* a RIP-relative memory operand: new disp32 */
	PATCH_I_JMP,		/* jmp rel8/rel32 */
	PATCH_I_JCC,		/* jcc rel8/rel32 */
	PATCH_I_JCC8,		/* loop*, jrcxz: rel8 only */
	PATCH_I_CALL,		/* call rel32: push the return address, jmp */
	PATCH_I_ICALL,		/* call r/m64: push the return address, jmp r/m64 */
};

struct patch_insn {
	uint8_t off, len;	/* where it is in the displaced bytes */
	uint8_t kind;		/* enum patch_insn_kind */
	uint8_t cc;		/* PATCH_I_JCC: the condition; PATCH_I_JCC8: the imm8's offset */
	uint8_t disp_off;	/* RIP-relative operand: its disp32's offset, else 0 */
	uint8_t modrm_off;	/* PATCH_I_ICALL: the ModRM byte's offset */
	uintptr_t target;	/* branch target, or the RIP-relative operand's address */
};

/* The instructions a site displaces. */
struct patch_code {
	uintptr_t addr;
	int n, len;
	uint8_t bytes[PATCH_MAX_LEN];
	struct patch_insn insn[PATCH_MAX_INSNS];
};

int patch_code__decode(struct patch_code *c, const uint8_t *code, size_t avail, uintptr_t addr,
		       int min, char *why, size_t whylen) PATCH_HIDDEN;
void patch_code__window(const struct patch_code *c, uintptr_t *lo, uintptr_t *hi) PATCH_HIDDEN;
int patch_code__relocate(const struct patch_code *c, uintptr_t dst, uint8_t *out, size_t outlen,
			 uintptr_t *copies, char *why, size_t whylen) PATCH_HIDDEN;
uintptr_t patch_code__branch_into(const uint8_t *func, uintptr_t lo, uintptr_t hi, uintptr_t in_lo,
				  uintptr_t in_hi, bool *aligned) PATCH_HIDDEN;

/* ---- patch_mem.c ---- */

enum patch_map_kind {
	PATCH_MAP_OTHER,
	PATCH_MAP_HEAP,		/* [heap]: grows up */
	PATCH_MAP_STACK,	/* [stack]: grows down */
};

struct patch_map {
	uintptr_t lo, hi;
	int prot;		/* PROT_* */
	enum patch_map_kind kind;
};

struct patch_maps {
	struct patch_map *v;
	int n;
};

int patch_maps__load(struct patch_maps *m) PATCH_HIDDEN;
void patch_maps__free(struct patch_maps *m) PATCH_HIDDEN;
const struct patch_map *patch_maps__find(const struct patch_maps *m, uintptr_t addr) PATCH_HIDDEN;
size_t patch_maps__readable(const struct patch_maps *m, uintptr_t addr) PATCH_HIDDEN;

/* Code chunks of one install: written RW, then sealed RX, never unmapped. */
struct patch_chunk {
	uintptr_t base, used, size;
};

struct patch_chunks {
	struct patch_chunk *v;
	int n, cap;
};

struct patch_chunk *patch_chunks__reserve(struct patch_chunks *cs, uintptr_t near, uintptr_t lo,
					  uintptr_t hi, size_t want) PATCH_HIDDEN;
int patch_chunks__seal(struct patch_chunks *cs) PATCH_HIDDEN;
void patch_chunks__free(struct patch_chunks *cs) PATCH_HIDDEN;

void *patch_mem__record(size_t size) PATCH_HIDDEN;

/* ---- patch_tramp.c ---- */

/* One handler of a site. */
struct patch_probe {
	stp_patch_fn entry, ret;
	void *arg;
};

enum patch_rec_state {
	PATCH_REC_OFF,		/* not installed: the trampoline runs no handler */
	PATCH_REC_LIVE,
};

/* What the trampolines know of a site; in never-freed memory (patch_mem__record). */
struct patch_rec {
	uintptr_t addr;		/* first: patch_entry_common reads it */
	uintptr_t stub;		/* the trampoline's entry */
	atomic_int state;	/* enum patch_rec_state */
	int nprobes;
	bool has_ret;
	bool listed;		/* in the SIGTRAP handler's table */
	uint8_t len;		/* bytes displaced */
	atomic_ulong skipped, ret_missed;
	struct patch_probe probes[];
};

int patch_tramp__setup(char *err, size_t errlen) PATCH_HIDDEN;
int patch_tramp__build(uint8_t *out, uintptr_t dst, struct patch_rec *rec,
		       const struct patch_code *c, uintptr_t *copies, char *why,
		       size_t whylen) PATCH_HIDDEN;
int patch_table__add(struct patch_rec *const *recs, int n, char *err, size_t errlen) PATCH_HIDDEN;
void patch_table__remove(struct patch_rec *const *recs, int n) PATCH_HIDDEN;
void patch_lock(void) PATCH_HIDDEN;
void patch_unlock(void) PATCH_HIDDEN;

/* The dispatchers, called by the assembly trampolines. */
void patch__entry(struct stp_regs *regs, struct patch_rec *rec) PATCH_HIDDEN;
uintptr_t patch__return(struct stp_regs *regs) PATCH_HIDDEN;

#endif
