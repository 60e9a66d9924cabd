/*
 * patch_tramp.c - what runs when a probed thread reaches a site: the
 * trampolines, their C dispatchers, the shadow stack of hooked returns,
 * the SIGTRAP handler, and the table it looks sites up in.
 *
 * Entry (a site's stub calls patch_entry_common; R is the thread's rsp at
 * the site, and everything below R - 128 is ours):
 *
 *	R-128	the stub skipped the red zone
 *	R-136	return address into the stub
 *	R-144	flags (pushfq)
 *	R-312	struct stp_regs (F)
 *	...	vector state, 64-byte aligned, then the C call
 *
 * Return (a hooked function returned to patch_ret_tramp; S is its rsp
 * after the return, the slot below is dead):
 *
 *	S-8	where to go: the dispatcher writes the real return address
 *	S-16	flags
 *	S-184	struct stp_regs (F)
 *
 * Both restore the registers from struct stp_regs (as handlers left them)
 * and leave by `ret`.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "patch_int.h"

_Static_assert(sizeof(struct stp_regs) == 168, "the trampolines' frame layout");

/*
 * How the trampolines save the vector state; set by patch_tramp__setup.
 * Below F, at these offsets: whether the x87 registers were saved, MXCSR,
 * the x87 registers (fnsave), k0-k7, the vector registers.  Handlers may
 * use any of it (memcpy and friends pick AVX2 or AVX-512 versions).
 */
enum tramp_ext {
	TRAMP_EXT_SSE,		/* xmm0-xmm15 */
	TRAMP_EXT_AVX,		/* ymm0-ymm15 */
	TRAMP_EXT_AVX512,	/* zmm0-zmm31, k0-k7 (64 bits) */
	TRAMP_EXT_AVX512F,	/* zmm0-zmm31, k0-k7 (16 bits: no AVX512BW) */
};

#define TRAMP_EXT_VECTORS 192

extern unsigned long patch_ext_size PATCH_HIDDEN;
extern unsigned int patch_ext_mode PATCH_HIDDEN;
extern char patch_entry_common[] PATCH_HIDDEN;
extern char patch_ret_tramp[] PATCH_HIDDEN;

unsigned long patch_ext_size = TRAMP_EXT_VECTORS + 16 * 16;
unsigned int patch_ext_mode = TRAMP_EXT_SSE;

/* ---- the trampolines ---- */

/* struct stp_regs in memory at %rsp; flags were pushed just above it */
asm(".macro PATCH_SAVE_GPRS\n"
    "	mov %r15, 0(%rsp); mov %r14, 8(%rsp); mov %r13, 16(%rsp); mov %r12, 24(%rsp)\n"
    "	mov %rbp, 32(%rsp); mov %rbx, 40(%rsp); mov %r11, 48(%rsp); mov %r10, 56(%rsp)\n"
    "	mov %r9, 64(%rsp); mov %r8, 72(%rsp); mov %rax, 80(%rsp); mov %rcx, 88(%rsp)\n"
    "	mov %rdx, 96(%rsp); mov %rsi, 104(%rsp); mov %rdi, 112(%rsp)\n"
    "	movq $-1, 120(%rsp)\n"
    "	mov 168(%rsp), %rax; mov %rax, 144(%rsp)\n"
    ".endm\n"
    /*
     * F in %rbx, CFA = F + cfa; below F, 64-byte aligned, the vector state
     * (TRAMP_EXT_* offsets), then an aligned call.  x87 registers only
     * when the x87 stack is not empty (TOP != 0: a long double return).
     */
    ".macro PATCH_SAVE_EXT cfa\n"
    "	mov %rsp, %rbx\n"
    "	.cfi_def_cfa %rbx, \\cfa\n"
    "	.cfi_offset 16, 128 - \\cfa\n"	/* the return address column: regs->ip */
    "	.cfi_offset %r15, 0 - \\cfa; .cfi_offset %r14, 8 - \\cfa\n"
    "	.cfi_offset %r13, 16 - \\cfa; .cfi_offset %r12, 24 - \\cfa\n"
    "	.cfi_offset %rbp, 32 - \\cfa; .cfi_offset %rbx, 40 - \\cfa\n"
    "	.cfi_offset %r11, 48 - \\cfa; .cfi_offset %r10, 56 - \\cfa\n"
    "	.cfi_offset %r9, 64 - \\cfa; .cfi_offset %r8, 72 - \\cfa\n"
    "	.cfi_offset %rax, 80 - \\cfa; .cfi_offset %rcx, 88 - \\cfa\n"
    "	.cfi_offset %rdx, 96 - \\cfa; .cfi_offset %rsi, 104 - \\cfa\n"
    "	.cfi_offset %rdi, 112 - \\cfa\n"
    "	cld\n"
    "	and $-64, %rsp\n"
    "	sub patch_ext_size(%rip), %rsp\n"
    "	stmxcsr 8(%rsp)\n"
    "	movq $0, 0(%rsp)\n"
    "	fnstsw %ax\n"
    "	test $0x3800, %ax\n"
    "	jz 1f\n"
    "	fnsave 16(%rsp)\n"
    "	movq $1, 0(%rsp)\n"
    "1:	mov patch_ext_mode(%rip), %eax\n"
    "	cmp $1, %eax\n"
    "	je 2f\n"
    "	ja 3f\n"
    "	movdqa %xmm0, 192(%rsp); movdqa %xmm1, 208(%rsp); movdqa %xmm2, 224(%rsp)\n"
    "	movdqa %xmm3, 240(%rsp)\n"
    "	movdqa %xmm4, 256(%rsp); movdqa %xmm5, 272(%rsp); movdqa %xmm6, 288(%rsp)\n"
    "	movdqa %xmm7, 304(%rsp)\n"
    "	movdqa %xmm8, 320(%rsp); movdqa %xmm9, 336(%rsp); movdqa %xmm10, 352(%rsp)\n"
    "	movdqa %xmm11, 368(%rsp)\n"
    "	movdqa %xmm12, 384(%rsp); movdqa %xmm13, 400(%rsp); movdqa %xmm14, 416(%rsp)\n"
    "	movdqa %xmm15, 432(%rsp)\n"
    "	jmp 9f\n"
    "2:\n"
    "	vmovdqa %ymm0, 192(%rsp); vmovdqa %ymm1, 224(%rsp); vmovdqa %ymm2, 256(%rsp)\n"
    "	vmovdqa %ymm3, 288(%rsp)\n"
    "	vmovdqa %ymm4, 320(%rsp); vmovdqa %ymm5, 352(%rsp); vmovdqa %ymm6, 384(%rsp)\n"
    "	vmovdqa %ymm7, 416(%rsp)\n"
    "	vmovdqa %ymm8, 448(%rsp); vmovdqa %ymm9, 480(%rsp); vmovdqa %ymm10, 512(%rsp)\n"
    "	vmovdqa %ymm11, 544(%rsp)\n"
    "	vmovdqa %ymm12, 576(%rsp); vmovdqa %ymm13, 608(%rsp); vmovdqa %ymm14, 640(%rsp)\n"
    "	vmovdqa %ymm15, 672(%rsp)\n"
    "	vzeroupper\n"
    "	jmp 9f\n"
    "3:\n"
    "	vmovdqa64 %zmm0, 192(%rsp); vmovdqa64 %zmm1, 256(%rsp); vmovdqa64 %zmm2, 320(%rsp)\n"
    "	vmovdqa64 %zmm3, 384(%rsp)\n"
    "	vmovdqa64 %zmm4, 448(%rsp); vmovdqa64 %zmm5, 512(%rsp); vmovdqa64 %zmm6, 576(%rsp)\n"
    "	vmovdqa64 %zmm7, 640(%rsp)\n"
    "	vmovdqa64 %zmm8, 704(%rsp); vmovdqa64 %zmm9, 768(%rsp); vmovdqa64 %zmm10, 832(%rsp)\n"
    "	vmovdqa64 %zmm11, 896(%rsp)\n"
    "	vmovdqa64 %zmm12, 960(%rsp); vmovdqa64 %zmm13, 1024(%rsp)\n"
    "	vmovdqa64 %zmm14, 1088(%rsp); vmovdqa64 %zmm15, 1152(%rsp)\n"
    "	vmovdqa64 %zmm16, 1216(%rsp); vmovdqa64 %zmm17, 1280(%rsp)\n"
    "	vmovdqa64 %zmm18, 1344(%rsp); vmovdqa64 %zmm19, 1408(%rsp)\n"
    "	vmovdqa64 %zmm20, 1472(%rsp); vmovdqa64 %zmm21, 1536(%rsp)\n"
    "	vmovdqa64 %zmm22, 1600(%rsp); vmovdqa64 %zmm23, 1664(%rsp)\n"
    "	vmovdqa64 %zmm24, 1728(%rsp); vmovdqa64 %zmm25, 1792(%rsp)\n"
    "	vmovdqa64 %zmm26, 1856(%rsp); vmovdqa64 %zmm27, 1920(%rsp)\n"
    "	vmovdqa64 %zmm28, 1984(%rsp); vmovdqa64 %zmm29, 2048(%rsp)\n"
    "	vmovdqa64 %zmm30, 2112(%rsp); vmovdqa64 %zmm31, 2176(%rsp)\n"
    "	cmp $3, %eax\n"
    "	je 4f\n"
    "	kmovq %k0, 128(%rsp); kmovq %k1, 136(%rsp); kmovq %k2, 144(%rsp); kmovq %k3, 152(%rsp)\n"
    "	kmovq %k4, 160(%rsp); kmovq %k5, 168(%rsp); kmovq %k6, 176(%rsp); kmovq %k7, 184(%rsp)\n"
    "	jmp 5f\n"
    "4:\n"
    "	kmovw %k0, 128(%rsp); kmovw %k1, 136(%rsp); kmovw %k2, 144(%rsp); kmovw %k3, 152(%rsp)\n"
    "	kmovw %k4, 160(%rsp); kmovw %k5, 168(%rsp); kmovw %k6, 176(%rsp); kmovw %k7, 184(%rsp)\n"
    "5:	vzeroupper\n"
    "9:\n"
    ".endm\n"
    ".macro PATCH_RESTORE_EXT cfa\n"
    "	mov patch_ext_mode(%rip), %eax\n"
    "	cmp $1, %eax\n"
    "	je 2f\n"
    "	ja 3f\n"
    "	movdqa 192(%rsp), %xmm0; movdqa 208(%rsp), %xmm1; movdqa 224(%rsp), %xmm2\n"
    "	movdqa 240(%rsp), %xmm3\n"
    "	movdqa 256(%rsp), %xmm4; movdqa 272(%rsp), %xmm5; movdqa 288(%rsp), %xmm6\n"
    "	movdqa 304(%rsp), %xmm7\n"
    "	movdqa 320(%rsp), %xmm8; movdqa 336(%rsp), %xmm9; movdqa 352(%rsp), %xmm10\n"
    "	movdqa 368(%rsp), %xmm11\n"
    "	movdqa 384(%rsp), %xmm12; movdqa 400(%rsp), %xmm13; movdqa 416(%rsp), %xmm14\n"
    "	movdqa 432(%rsp), %xmm15\n"
    "	jmp 9f\n"
    "2:\n"
    "	vmovdqa 192(%rsp), %ymm0; vmovdqa 224(%rsp), %ymm1; vmovdqa 256(%rsp), %ymm2\n"
    "	vmovdqa 288(%rsp), %ymm3\n"
    "	vmovdqa 320(%rsp), %ymm4; vmovdqa 352(%rsp), %ymm5; vmovdqa 384(%rsp), %ymm6\n"
    "	vmovdqa 416(%rsp), %ymm7\n"
    "	vmovdqa 448(%rsp), %ymm8; vmovdqa 480(%rsp), %ymm9; vmovdqa 512(%rsp), %ymm10\n"
    "	vmovdqa 544(%rsp), %ymm11\n"
    "	vmovdqa 576(%rsp), %ymm12; vmovdqa 608(%rsp), %ymm13; vmovdqa 640(%rsp), %ymm14\n"
    "	vmovdqa 672(%rsp), %ymm15\n"
    "	jmp 9f\n"
    "3:\n"
    "	vmovdqa64 192(%rsp), %zmm0; vmovdqa64 256(%rsp), %zmm1; vmovdqa64 320(%rsp), %zmm2\n"
    "	vmovdqa64 384(%rsp), %zmm3\n"
    "	vmovdqa64 448(%rsp), %zmm4; vmovdqa64 512(%rsp), %zmm5; vmovdqa64 576(%rsp), %zmm6\n"
    "	vmovdqa64 640(%rsp), %zmm7\n"
    "	vmovdqa64 704(%rsp), %zmm8; vmovdqa64 768(%rsp), %zmm9; vmovdqa64 832(%rsp), %zmm10\n"
    "	vmovdqa64 896(%rsp), %zmm11\n"
    "	vmovdqa64 960(%rsp), %zmm12; vmovdqa64 1024(%rsp), %zmm13\n"
    "	vmovdqa64 1088(%rsp), %zmm14; vmovdqa64 1152(%rsp), %zmm15\n"
    "	vmovdqa64 1216(%rsp), %zmm16; vmovdqa64 1280(%rsp), %zmm17\n"
    "	vmovdqa64 1344(%rsp), %zmm18; vmovdqa64 1408(%rsp), %zmm19\n"
    "	vmovdqa64 1472(%rsp), %zmm20; vmovdqa64 1536(%rsp), %zmm21\n"
    "	vmovdqa64 1600(%rsp), %zmm22; vmovdqa64 1664(%rsp), %zmm23\n"
    "	vmovdqa64 1728(%rsp), %zmm24; vmovdqa64 1792(%rsp), %zmm25\n"
    "	vmovdqa64 1856(%rsp), %zmm26; vmovdqa64 1920(%rsp), %zmm27\n"
    "	vmovdqa64 1984(%rsp), %zmm28; vmovdqa64 2048(%rsp), %zmm29\n"
    "	vmovdqa64 2112(%rsp), %zmm30; vmovdqa64 2176(%rsp), %zmm31\n"
    "	cmp $3, %eax\n"
    "	je 4f\n"
    "	kmovq 128(%rsp), %k0; kmovq 136(%rsp), %k1; kmovq 144(%rsp), %k2; kmovq 152(%rsp), %k3\n"
    "	kmovq 160(%rsp), %k4; kmovq 168(%rsp), %k5; kmovq 176(%rsp), %k6; kmovq 184(%rsp), %k7\n"
    "	jmp 9f\n"
    "4:\n"
    "	kmovw 128(%rsp), %k0; kmovw 136(%rsp), %k1; kmovw 144(%rsp), %k2; kmovw 152(%rsp), %k3\n"
    "	kmovw 160(%rsp), %k4; kmovw 168(%rsp), %k5; kmovw 176(%rsp), %k6; kmovw 184(%rsp), %k7\n"
    "9:	ldmxcsr 8(%rsp)\n"
    "	cmpq $0, 0(%rsp)\n"
    "	je 1f\n"
    "	frstor 16(%rsp)\n"
    "1:	mov %rbx, %rsp\n"
    "	.cfi_def_cfa %rsp, \\cfa\n"
    ".endm\n"
    /* the registers from struct stp_regs, flags last; return to what is above them */
    ".macro PATCH_RESTORE_GPRS_RET cfa\n"
    "	mov 144(%rsp), %rax; mov %rax, 168(%rsp)\n"
    "	mov 0(%rsp), %r15; mov 8(%rsp), %r14; mov 16(%rsp), %r13; mov 24(%rsp), %r12\n"
    "	mov 32(%rsp), %rbp; mov 40(%rsp), %rbx; mov 48(%rsp), %r11; mov 56(%rsp), %r10\n"
    "	mov 64(%rsp), %r9; mov 72(%rsp), %r8; mov 80(%rsp), %rax; mov 88(%rsp), %rcx\n"
    "	mov 96(%rsp), %rdx; mov 104(%rsp), %rsi; mov 112(%rsp), %rdi\n"
    "	lea 168(%rsp), %rsp\n"
    "	.cfi_def_cfa_offset \\cfa - 168\n"
    "	.cfi_undefined 16\n"
    "	popfq\n"
    "	.cfi_adjust_cfa_offset -8\n"
    "	ret\n"
    ".endm\n"

    "	.text\n"
    "	.p2align 4\n"
    "	.globl patch_entry_common\n"
    "	.hidden patch_entry_common\n"
    "	.type patch_entry_common, @function\n"
    "patch_entry_common:\n"	/* rsp = R-136, [rsp] = the stub's return address */
    "	.cfi_startproc simple\n"
    "	.cfi_signal_frame\n"	/* the caller's ip is the site's, exact */
    "	.cfi_def_cfa %rsp, 136\n"
    "	.cfi_undefined 16\n"
    "	pushfq\n"
    "	.cfi_adjust_cfa_offset 8\n"
    "	lea -168(%rsp), %rsp\n"
    "	.cfi_adjust_cfa_offset 168\n"
    "	PATCH_SAVE_GPRS\n"
    "	lea 312(%rsp), %rax; mov %rax, 152(%rsp)\n"	/* sp = R */
    "	mov 176(%rsp), %rsi\n"
    "	mov -27(%rsi), %rsi\n"				/* the record, at stub+0 */
    "	mov (%rsi), %rax; mov %rax, 128(%rsp)\n"	/* ip = its address */
    "	mov %rsp, %rdi\n"
    "	PATCH_SAVE_EXT 312\n"
    "	call patch__entry\n"
    "	PATCH_RESTORE_EXT 312\n"
    "	PATCH_RESTORE_GPRS_RET 312\n"
    "	.cfi_endproc\n"
    "	.size patch_entry_common, .-patch_entry_common\n"

    /*
     * An unwinder in a hooked frame finds patch_ret_tramp as its return
     * address and looks up the byte before: an end of the stack.
     */
    "	.p2align 4\n"
    "	.skip 15, 0xcc\n"
    "	.cfi_startproc simple\n"
    "	.cfi_def_cfa %rsp, 0\n"
    "	.cfi_undefined 16\n"
    "	int3\n"
    "	.cfi_endproc\n"
    "	.globl patch_ret_tramp\n"
    "	.hidden patch_ret_tramp\n"
    "	.type patch_ret_tramp, @function\n"
    "patch_ret_tramp:\n"	/* rsp = S */
    "	.cfi_startproc simple\n"
    "	.cfi_signal_frame\n"
    "	.cfi_def_cfa %rsp, 0\n"
    "	.cfi_undefined 16\n"
    "	lea -8(%rsp), %rsp\n"
    "	.cfi_adjust_cfa_offset 8\n"
    "	pushfq\n"
    "	.cfi_adjust_cfa_offset 8\n"
    "	lea -168(%rsp), %rsp\n"
    "	.cfi_adjust_cfa_offset 168\n"
    "	PATCH_SAVE_GPRS\n"
    "	lea 184(%rsp), %rax; mov %rax, 152(%rsp)\n"	/* sp = S */
    "	movq $0, 128(%rsp)\n"				/* ip: known once popped */
    "	mov %rsp, %rdi\n"
    "	PATCH_SAVE_EXT 184\n"
    "	call patch__return\n"
    "	mov %rax, 176(%rbx)\n"				/* where to go, at S-8 */
    "	PATCH_RESTORE_EXT 184\n"
    "	PATCH_RESTORE_GPRS_RET 184\n"
    "	.cfi_endproc\n"
    "	.size patch_ret_tramp, .-patch_ret_tramp\n");

_Static_assert(PATCH_STUB_RET == 27,
	       "patch_entry_common finds the record at its return address - 27");
_Static_assert(offsetof(struct patch_rec, addr) == 0,
	       "patch_entry_common reads the site's address");

/* Which vector registers this machine has (and its kernel enabled). */
static void tramp__ext_setup(void)
{
	unsigned a, b, c, d, lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX))
		return;
	asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	if ((lo & 0x6) != 0x6)	/* SSE, AVX */
		return;
	patch_ext_mode = TRAMP_EXT_AVX;
	patch_ext_size = TRAMP_EXT_VECTORS + 16 * 32;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & bit_AVX512F) || (lo & 0xe0) != 0xe0)
		return;	/* opmask, ZMM_Hi256, Hi16_ZMM */
	patch_ext_mode = (b & bit_AVX512BW) ? TRAMP_EXT_AVX512 : TRAMP_EXT_AVX512F;
	patch_ext_size = TRAMP_EXT_VECTORS + 32 * 64;
}

/*
 * Write the stub of REC (displacing C's instructions) at OUT, to run at
 * DST; COPIES gets where each instruction's copy runs (patch_code__relocate).
 * Its size, or -1.
 */
int patch_tramp__build(uint8_t *out, uintptr_t dst, struct patch_rec *rec,
		       const struct patch_code *c, uintptr_t *copies, char *why, size_t whylen)
{
	static const uint8_t head[] = {
		0x48, 0x8d, 0x64, 0x24, 0x80,			/* lea -128(%rsp),%rsp */
		0xff, 0x15, 0xed, 0xff, 0xff, 0xff,		/* call *-19(%rip) */
		0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0,		/* lea 128(%rsp),%rsp */
	};
	uint64_t common = (uintptr_t)patch_entry_common, r = (uintptr_t)rec;
	int n;

	_Static_assert(PATCH_STUB_ENTRY + sizeof(head) == PATCH_STUB_HEAD, "the stub's layout");
	memcpy(out, &r, 8);
	memcpy(out + 8, &common, 8);
	memcpy(out + PATCH_STUB_ENTRY, head, sizeof(head));
	n = patch_code__relocate(c, dst + PATCH_STUB_HEAD, out + PATCH_STUB_HEAD,
				 PATCH_STUB_MAX - PATCH_STUB_HEAD, copies, why, whylen);
	return n < 0 ? -1 : PATCH_STUB_HEAD + n;
}

/* ---- the dispatchers ---- */

struct tramp_shadow {
	uintptr_t ret;		/* the real return address */
	uintptr_t sp;		/* where it was: the rsp at the function's entry */
	struct patch_rec *rec;
};

/* A thread's state.  Signal handlers on the thread share it: see shadow__push. */
struct tramp_thread {
	int busy;		/* running handlers */
	int depth;
	struct tramp_shadow stack[STP_PATCH_SHADOW_MAX];
};

/*
 * Initial-exec: no call to reach it.  libstapdyn-attach.so, which -x
 * loads with dlopen() into a running process whose static TLS block has
 * no room for it, is built with STP_DYN_TLS_DYNAMIC.
 */
#ifdef STP_DYN_TLS_DYNAMIC
static __thread struct tramp_thread tramp_self;
#else
static __thread struct tramp_thread tramp_self __attribute__((tls_model("initial-exec")));
#endif

static void regs__fill(struct stp_regs *regs, uintptr_t ip)
{
	regs->ip = ip;
	regs->cs = 0x33;	/* __USER_CS, __USER_DS */
	regs->ss = 0x2b;
}

static void tramp__fatal(const char *msg)
{
	ssize_t r = write(2, msg, strlen(msg));

	(void)r;
	abort();
}

/* The depth once frames that are gone are dropped, at a call whose return address is at SP. */
static int shadow__trim_call(const struct tramp_thread *t, uintptr_t sp, uintptr_t ra)
{
	int d = t->depth;

	/* Same slot: gone, unless a tail call reached a second hooked function (ra is ours). */
	while (d > 0 && (t->stack[d - 1].sp < sp ||
			 (t->stack[d - 1].sp == sp && ra != (uintptr_t)patch_ret_tramp)))
		d--;
	return d;
}

/*
 * Hook the return of the call whose return address is at regs->sp.  The
 * entry is written, then counted, then written again: a signal handler
 * that runs hooked code in between uses the same slot and gives it back.
 */
static void shadow__push(struct tramp_thread *t, struct stp_regs *regs, struct patch_rec *rec)
{
	uintptr_t *slot = (uintptr_t *)regs->sp;
	struct tramp_shadow e = { .ret = *slot, .sp = regs->sp, .rec = rec };
	int d = shadow__trim_call(t, e.sp, e.ret);

	if (d >= STP_PATCH_SHADOW_MAX) {
		t->depth = d;
		atomic_fetch_add_explicit(&rec->ret_missed, 1, memory_order_relaxed);
		return;
	}
	t->stack[d] = e;
	atomic_signal_fence(memory_order_seq_cst);
	t->depth = d + 1;
	atomic_signal_fence(memory_order_seq_cst);
	t->stack[d] = e;
	atomic_signal_fence(memory_order_seq_cst);
	*slot = (uintptr_t)patch_ret_tramp;
}

/* The real return address of entry D: a tail call's entry holds the trampoline's. */
static uintptr_t shadow__real(const struct tramp_thread *t, int d)
{
	while (d > 0 && t->stack[d].ret == (uintptr_t)patch_ret_tramp &&
	       t->stack[d - 1].sp == t->stack[d].sp)
		d--;
	return t->stack[d].ret;
}

/* Pop the entry of the return that left rsp at SP, and the ones longjmp skipped. */
static struct tramp_shadow shadow__pop(struct tramp_thread *t, uintptr_t sp, uintptr_t *real)
{
	uintptr_t slot = sp - 8;
	struct tramp_shadow e;
	int d = t->depth;

	while (d > 0 && t->stack[d - 1].sp < slot)
		d--;
	if (d == 0 || t->stack[d - 1].sp != slot)
		tramp__fatal("libstapdyn: a hooked return lost its return address\n");
	e = t->stack[d - 1];
	*real = shadow__real(t, d - 1);
	atomic_signal_fence(memory_order_seq_cst);
	t->depth = d - 1;
	return e;
}

static bool tramp__enter(struct tramp_thread *t, struct patch_rec *rec)
{
	if (atomic_load_explicit(&rec->state, memory_order_acquire) != PATCH_REC_LIVE)
		return false;
	if (t->busy) {
		atomic_fetch_add_explicit(&rec->skipped, 1, memory_order_relaxed);
		return false;
	}
	t->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	return true;
}

static void tramp__leave(struct tramp_thread *t)
{
	atomic_signal_fence(memory_order_seq_cst);
	t->busy = 0;
}

/* Called by patch_entry_common: run REC's entry handlers, hook the return. */
void patch__entry(struct stp_regs *regs, struct patch_rec *rec)
{
	struct tramp_thread *t = &tramp_self;

	regs__fill(regs, rec->addr);
	if (!tramp__enter(t, rec))
		return;
	for (int k = 0; k < rec->nprobes; k++)
		if (rec->probes[k].entry)
			rec->probes[k].entry(regs, rec->probes[k].arg);
	if (rec->has_ret)
		shadow__push(t, regs, rec);
	tramp__leave(t);
}

/* Called by patch_ret_tramp: run the return handlers; where to return to. */
uintptr_t patch__return(struct stp_regs *regs)
{
	struct tramp_thread *t = &tramp_self;
	uintptr_t real;
	struct tramp_shadow e = shadow__pop(t, regs->sp, &real);
	struct patch_rec *rec = e.rec;

	regs__fill(regs, real);
	if (!tramp__enter(t, rec))
		return e.ret;
	for (int k = 0; k < rec->nprobes; k++)
		if (rec->probes[k].ret)
			rec->probes[k].ret(regs, rec->probes[k].arg);
	tramp__leave(t);
	return regs->ip == real ? e.ret : regs->ip;
}

uintptr_t stp_patch_return_address(uintptr_t ra, uintptr_t slot)
{
	const struct tramp_thread *t = &tramp_self;

	if (ra != (uintptr_t)patch_ret_tramp)
		return ra;
	for (int d = t->depth - 1; d >= 0; d--)
		if (t->stack[d].sp == slot)
			return shadow__real(t, d);
	return ra;
}

void stp_patch_unhook_returns(void)
{
	struct tramp_thread *t = &tramp_self;
	int d = t->depth;

	t->depth = 0;
	atomic_signal_fence(memory_order_seq_cst);
	while (d-- > 0) {
		struct tramp_shadow *e = &t->stack[d];
		uintptr_t *slot = (uintptr_t *)e->sp;

		/* a frame longjmp skipped may be gone: only a slot still ours is written */
		if (*slot != (uintptr_t)patch_ret_tramp)
			continue;
		*slot = e->ret;
		atomic_fetch_add_explicit(&e->rec->ret_missed, 1, memory_order_relaxed);
	}
}

/* ---- the sites, for the SIGTRAP handler ---- */

struct table_ent {
	uintptr_t addr;
	struct patch_rec *rec;
};

/* Installed sites, sorted.  Replaced whole; freed once no handler reads it. */
struct tramp_table {
	int n;
	struct table_ent e[];
};

#define GRAVE_SIZE 4096	/* addresses restored lately: a trap taken just before still resumes */

static pthread_mutex_t tramp_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tramp_table *_Atomic table_cur;
static atomic_int table_readers;
static uintptr_t grave[GRAVE_SIZE];
static atomic_uint grave_next;
static struct sigaction trap_old;

void patch_lock(void)
{
	pthread_mutex_lock(&tramp_lock);
}

void patch_unlock(void)
{
	pthread_mutex_unlock(&tramp_lock);
}

/* The stub of the site at PC, or 0. */
static uintptr_t table__stub(uintptr_t pc)
{
	const struct tramp_table *t;
	uintptr_t stub = 0;
	int lo = 0, hi;

	atomic_fetch_add(&table_readers, 1);
	t = atomic_load(&table_cur);
	for (hi = t ? t->n : 0; lo < hi && !stub;) {
		int mid = (lo + hi) / 2;

		if (pc < t->e[mid].addr)
			hi = mid;
		else if (pc > t->e[mid].addr)
			lo = mid + 1;
		else
			stub = t->e[mid].rec->stub;
	}
	atomic_fetch_sub(&table_readers, 1);
	return stub;
}

static void table__publish(struct tramp_table *t)
{
	struct tramp_table *old = atomic_exchange(&table_cur, t);

	while (atomic_load(&table_readers))
		sched_yield();
	free(old);
}

static int ent__cmp(const void *a, const void *b)
{
	const struct table_ent *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Add N records to the table (the lock held): 0, or -1 when one overlaps a site already there. */
int patch_table__add(struct patch_rec *const *recs, int n, char *err, size_t errlen)
{
	const struct tramp_table *cur = atomic_load(&table_cur);
	int m = cur ? cur->n : 0;
	struct tramp_table *t = malloc(sizeof(*t) + (m + n) * sizeof(t->e[0]));

	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	t->n = m + n;
	if (m)
		memcpy(t->e, cur->e, m * sizeof(t->e[0]));
	for (int k = 0; k < n; k++)
		t->e[m + k] = (struct table_ent){ recs[k]->addr, recs[k] };
	qsort(t->e, t->n, sizeof(t->e[0]), ent__cmp);
	for (int k = 0; k + 1 < t->n; k++) {
		if (t->e[k].addr + t->e[k].rec->len > t->e[k + 1].addr) {
			snprintf(err, errlen, "0x%lx is already patched",
				 (unsigned long)t->e[k + 1].addr);
			free(t);
			return -1;
		}
	}
	for (int k = 0; k < n; k++)
		recs[k]->listed = true;
	table__publish(t);
	return 0;
}

/* Drop N records from the table (the lock held); their addresses go to the graveyard first. */
void patch_table__remove(struct patch_rec *const *recs, int n)
{
	const struct tramp_table *cur = atomic_load(&table_cur);
	struct tramp_table *t;

	if (!cur)
		return;
	t = malloc(sizeof(*t) + cur->n * sizeof(t->e[0]));
	if (!t)
		return;	/* they stay: their stubs are valid, their records off */
	for (int k = 0; k < n; k++) {
		grave[atomic_fetch_add(&grave_next, 1) % GRAVE_SIZE] = recs[k]->addr;
		recs[k]->listed = false;
	}
	t->n = 0;
	for (int k = 0; k < cur->n; k++)
		if (cur->e[k].rec->listed)
			t->e[t->n++] = cur->e[k];
	table__publish(t);
}

static bool grave__has(uintptr_t pc)
{
	for (int k = 0; k < GRAVE_SIZE; k++)
		if (grave[k] == pc)
			return true;
	return false;
}

/* ---- SIGTRAP ---- */

/* Not ours: what the handler we replaced would have done. */
static void trap__chain(int sig, siginfo_t *si, void *ctx)
{
	int saved = errno;

	if (trap_old.sa_flags & SA_SIGINFO) {
		trap_old.sa_sigaction(sig, si, ctx);
	} else if (trap_old.sa_handler != SIG_DFL && trap_old.sa_handler != SIG_IGN) {
		trap_old.sa_handler(sig);
	} else {
		signal(SIGTRAP, SIG_DFL);
		raise(SIGTRAP);
	}
	errno = saved;
}

/*
 * An int3 at a site sends the thread to the site's stub, as the jump
 * would: a trap site, or a jump site being written or restored.  A trap
 * taken at a site restored since resumes at the original instruction.
 * Until it knows the trap is not ours, it calls nothing outside this
 * file (not even errno's): any libc function may be a probe site.
 */
static void trap__handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *rip = &uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t pc = (uintptr_t)*rip - 1, stub;

	if (si->si_code == SI_KERNEL) {
		stub = table__stub(pc);
		if (stub) {
			*rip = (greg_t)stub;
			return;
		}
		if (grave__has(pc) && *(volatile uint8_t *)pc != PATCH_INT3) {
			*rip = (greg_t)pc;
			return;
		}
	}
	trap__chain(sig, si, ctx);
}

/* Make trap__handler the SIGTRAP handler (again, if the program replaced it). */
static int trap__install(char *err, size_t errlen)
{
	struct sigaction cur, sa;

	if (sigaction(SIGTRAP, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
	    cur.sa_sigaction == trap__handler)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = trap__handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	trap_old = cur;
	if (sigaction(SIGTRAP, &sa, NULL) != 0) {
		snprintf(err, errlen, "cannot install the SIGTRAP handler: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Before trampolines run (the lock held): the vector state's size, the SIGTRAP handler. */
int patch_tramp__setup(char *err, size_t errlen)
{
	static bool ext_done;

	if (!ext_done) {
		tramp__ext_setup();
		ext_done = true;
	}
	return trap__install(err, errlen);
}
