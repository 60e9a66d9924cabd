/*
 * test_dyn_patch.c - runtime/dyninst/patch*.c: probes patched into this
 * very process, then the patched functions called.
 *
 * The targets are written in assembly below, so that each has the
 * instruction shapes a case is about (a RIP-relative first instruction, a
 * short branch back into its first bytes, a call to relocate, ...).  Each
 * has a NAME_end label, which gives its bounds, and call frame information
 * (exact at its entry, and throughout t_add and t_lj) for backtrace().
 * Handlers count into struct hits and note the registers they saw.
 */
#define _GNU_SOURCE
#include <execinfo.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "unit.h"
#include "../../runtime/dyninst/patch.h"
#include "../../runtime/dyninst/patch_int.h"

#define HIDDEN __attribute__((visibility("hidden")))

#define ASM_FN(name, body)                                                                         \
	asm(".text\n.p2align 4\n.globl " #name "\n.hidden " #name "\n.type " #name                 \
	    ", @function\n" #name ":\n.cfi_startproc\n" body ".cfi_endproc\n.globl " #name         \
	    "_end\n.hidden " #name "_end\n" #name "_end:\n.size " #name ", .-" #name "\n")

/* a + b, behind a frame: 3 instructions (8 bytes) displaced */
ASM_FN(t_add, "push %rbp\n .cfi_adjust_cfa_offset 8\n mov %rsp, %rbp\n lea (%rdi,%rsi), %rax\n"
	      " pop %rbp\n .cfi_adjust_cfa_offset -8\n ret\n");
/* e + f (r8 + r9) */
ASM_FN(t_six, "push %rbp\n mov %rsp, %rbp\n lea (%r8,%r9), %rax\n pop %rbp\n ret\n");
/* t_data + x, a RIP-relative load first */
ASM_FN(t_ripmov, "mov t_data(%rip), %rax\n add %rdi, %rax\n ret\n");
/* the same through lea */
ASM_FN(t_riplea, "lea t_data(%rip), %rax\n mov (%rax), %rax\n add %rdi, %rax\n ret\n");
/* a * n (n > 0): the loop branches back to offset 2 */
ASM_FN(t_loop, "xor %eax, %eax\n 1: add %rdi, %rax\n dec %rsi\n jnz 1b\n ret\n");
/* nothing, in 2 bytes */
ASM_FN(t_nop, "nop\n ret\n");
/* x + 1: a 4-byte first instruction */
ASM_FN(t_small, "lea 1(%rdi), %rax\n ret\n");
/* n! */
ASM_FN(t_fact,
       "push %rbx\n mov %rdi, %rbx\n cmp $1, %rdi\n jle 1f\n lea -1(%rdi), %rdi\n"
       " call t_fact\n imul %rbx, %rax\n pop %rbx\n ret\n 1: mov $1, %eax\n pop %rbx\n ret\n");
/* 5 */
ASM_FN(t_five, "mov $5, %eax\n ret\n");
/* 5 + x, a call rel32 first */
ASM_FN(t_callfirst, "call t_five\n add %rdi, %rax\n ret\n");
/* 5 + x, an indirect RIP-relative call first */
ASM_FN(t_callmem, "call *t_fnptr(%rip)\n add %rdi, %rax\n ret\n");
/* fn() + 1, an indirect call through a register first (2 bytes) */
ASM_FN(t_callreg, "call *%rdi\n add $1, %rax\n ret\n");
/* x ? 7 : 9, a jcc rel8 among the displaced instructions */
ASM_FN(t_jcc, "test %rdi, %rdi\n jz 1f\n mov $7, %eax\n ret\n 1: mov $9, %eax\n ret\n");
/* d (rcx) ? 7 : 9, a jrcxz (rel8 only) first */
ASM_FN(t_jrcxz, "jrcxz 1f\n mov $7, %eax\n ret\n 1: mov $9, %eax\n ret\n");
/* fn(x) + x */
ASM_FN(t_lj,
       "push %rbx\n .cfi_adjust_cfa_offset 8\n mov %rdi, %rax\n mov %rsi, %rdi\n"
       " mov %rsi, %rbx\n call *%rax\n add %rbx, %rax\n pop %rbx\n .cfi_adjust_cfa_offset -8\n"
       " ret\n");
/* t_add(a, b), by a tail call (jmp rel32) */
ASM_FN(t_tail, ".byte 0xe9\n .long t_add - . - 4\n");
/* a + b, in SSE registers */
ASM_FN(t_dsum, "movapd %xmm0, %xmm2\n addsd %xmm1, %xmm2\n movapd %xmm2, %xmm0\n ret\n");
/* the upper half of ymm0, low quadword */
ASM_FN(t_yget, "vextractf128 $1, %ymm0, %xmm0\n vmovq %xmm0, %rax\n ret\n");
/* t_yget() with x in the upper half of ymm0 */
ASM_FN(t_ycall, "vmovq %rdi, %xmm1\n vinsertf128 $1, %xmm1, %ymm0, %ymm0\n call t_yget\n"
		" vzeroupper\n ret\n");
/* the upper half of zmm16, low quadword */
ASM_FN(t_zget, "vextracti64x4 $1, %zmm16, %ymm0\n vmovq %xmm0, %rax\n vzeroupper\n ret\n");
/* t_zget() with x in every quadword of zmm16 */
ASM_FN(t_zcall, "vpbroadcastq %rdi, %zmm16\n call t_zget\n ret\n");
/* 2.0L, in st(0) */
ASM_FN(t_ld, "fld1\n fld1\n faddp %st, %st(1)\n ret\n");
/* t_add(a, b) on from where a thread that ran its first instruction was moved to: c (rdx) */
ASM_FN(t_add_at1, "push %rbp\n jmp *%rdx\n");
/* the same after its first two instructions */
ASM_FN(t_add_at4, "push %rbp\n mov %rsp, %rbp\n jmp *%rdx\n");

asm(".data\n.p2align 3\n.globl t_data\n.hidden t_data\nt_data: .quad 1000\n"
    ".globl t_fnptr\n.hidden t_fnptr\nt_fnptr: .quad t_five\n.text\n");

long t_add(long a, long b) HIDDEN;
long t_six(long a, long b, long c, long d, long e, long f) HIDDEN;
long t_ripmov(long x) HIDDEN;
long t_riplea(long x) HIDDEN;
long t_loop(long a, long n) HIDDEN;
void t_nop(void) HIDDEN;
long t_small(long x) HIDDEN;
long t_fact(long n) HIDDEN;
long t_five(void) HIDDEN;
long t_callfirst(long x) HIDDEN;
long t_callmem(long x) HIDDEN;
long t_callreg(long (*fn)(void)) HIDDEN;
long t_jcc(long x) HIDDEN;
long t_jrcxz(long a, long b, long c, long d) HIDDEN;
long t_lj(long (*fn)(long), long x) HIDDEN;
long t_tail(long a, long b) HIDDEN;
double t_dsum(double a, double b) HIDDEN;
long t_yget(void) HIDDEN;
long t_ycall(long x) HIDDEN;
long t_zget(void) HIDDEN;
long t_zcall(long x) HIDDEN;
long double t_ld(void) HIDDEN;
long t_add_at1(long a, long b, uintptr_t to) HIDDEN;
long t_add_at4(long a, long b, uintptr_t to) HIDDEN;
extern const char t_add_end[], t_six_end[], t_loop_end[], t_nop_end[], t_fact_end[], t_jcc_end[],
	t_jrcxz_end[],
	t_lj_end[], t_dsum_end[], t_ld_end[] HIDDEN;
extern long t_data HIDDEN;

#define AT(fn) ((uintptr_t)(fn))

/* What the handlers saw. */
struct hits {
	atomic_long entry, ret;
	unsigned long di, si, ip, sp, ra, ax, ret_ip, ret_sp;
	long add_ax;		/* added to ax by on_ret */
	long set_di;		/* when nonzero, on_entry sets di */
	char order[16];		/* tags of the handlers, in the order they ran */
};

static void tag(struct hits *h, char c)
{
	size_t n = strlen(h->order);

	if (n + 1 < sizeof(h->order))
		h->order[n] = c;
}

static void on_entry(struct stp_regs *r, void *arg)
{
	struct hits *h = arg;

	atomic_fetch_add(&h->entry, 1);
	h->di = r->di;
	h->si = r->si;
	h->ip = r->ip;
	h->sp = r->sp;
	h->ra = *(unsigned long *)r->sp;
	if (h->set_di)
		r->di = h->set_di;
}

static void on_ret(struct stp_regs *r, void *arg)
{
	struct hits *h = arg;

	atomic_fetch_add(&h->ret, 1);
	h->ax = r->ax;
	h->ret_ip = r->ip;
	h->ret_sp = r->sp;
	r->ax += h->add_ax;
}

/* Add a probe, saying why not when it fails. */
static int add(struct stp_patcher *p, uintptr_t addr, uintptr_t lo, uintptr_t hi,
	       stp_patch_fn entry, stp_patch_fn ret, void *arg)
{
	char err[256] = "";
	int r = stp_patcher__add(p, addr, lo, hi, entry, ret, arg, err, sizeof(err));

	if (r != 0)
		fprintf(stderr, "add 0x%lx: %s\n", (unsigned long)addr, err);
	return r;
}

/* A patcher with one probe, installed. */
static struct stp_patcher *patch_one(uintptr_t addr, uintptr_t lo, uintptr_t hi, stp_patch_fn entry,
				     stp_patch_fn ret, void *arg)
{
	struct stp_patcher *p = stp_patcher__new();
	char err[256] = "";

	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT_FATAL(add(p, addr, lo, hi, entry, ret, arg) == 0);
	if (stp_patcher__install(p, err, sizeof(err)) != 0) {
		fprintf(stderr, "install: %s\n", err);
		CU_FAIL_FATAL("cannot install");
	}
	return p;
}

static enum stp_patch_kind kind_of(const struct stp_patcher *p, uintptr_t addr)
{
	struct stp_patch_info info;

	CU_ASSERT_FATAL(stp_patcher__info(p, addr, &info) == 0);
	return info.kind;
}

/* ---- entry probes ---- */

static void test_entry_args(void)
{
	struct hits h = { 0 };
	struct stp_patcher *p = patch_one(AT(t_add), AT(t_add), AT(t_add_end), on_entry, NULL, &h);
	struct stp_patch_info info;

	for (long k = 0; k < 10; k++)
		CU_ASSERT_EQUAL(t_add(k, 3), k + 3);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 10);
	CU_ASSERT_EQUAL(h.di, 9);
	CU_ASSERT_EQUAL(h.si, 3);
	CU_ASSERT_EQUAL(h.ip, AT(t_add));
	CU_ASSERT_EQUAL(h.sp % 16, 8);	/* rsp at a function's entry */
	CU_ASSERT_EQUAL(stp_patcher__info(p, AT(t_add), &info), 0);
	CU_ASSERT_EQUAL(info.kind, STP_PATCH_JUMP);
	CU_ASSERT_EQUAL(info.len, 8);
	CU_ASSERT_STRING_EQUAL(info.why, "");
	CU_ASSERT_EQUAL(*(const unsigned char *)t_add, 0xe9);
	stp_patcher__free(p);
}

static void on_r8(struct stp_regs *r, void *arg)
{
	r->r8 += 1000;
	r->r9 += 20000;
}

static void test_entry_modifies(void)
{
	struct hits h = { .set_di = 100 };
	struct stp_patcher *p = patch_one(AT(t_add), AT(t_add), AT(t_add_end), on_entry, NULL, &h);
	struct stp_patcher *q = patch_one(AT(t_six), AT(t_six), AT(t_six_end), on_r8, NULL, NULL);

	CU_ASSERT_EQUAL(t_add(2, 3), 103);
	CU_ASSERT_EQUAL(h.di, 2);
	CU_ASSERT_EQUAL(t_six(1, 2, 3, 4, 5, 6), 21011);
	stp_patcher__free(p);
	stp_patcher__free(q);
	CU_ASSERT_EQUAL(t_add(2, 3), 5);
	CU_ASSERT_EQUAL(t_six(1, 2, 3, 4, 5, 6), 11);
}

static void test_order(void)
{
	struct hits h = { 0 };
	struct stp_patcher *p = stp_patcher__new();
	char err[256];

	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT_EQUAL(add(p, AT(t_add), 0, 0, on_entry, NULL, &h), 0);
	CU_ASSERT_EQUAL(add(p, AT(t_add), 0, 0, NULL, on_ret, &h), 0);
	CU_ASSERT_EQUAL(add(p, AT(t_add), 0, 0, on_entry, on_ret, &h), 0);
	CU_ASSERT_EQUAL_FATAL(stp_patcher__install(p, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(t_add(4, 5), 9);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 2);
	CU_ASSERT_EQUAL(atomic_load(&h.ret), 2);
	CU_ASSERT_EQUAL(h.ax, 9);
	stp_patcher__free(p);
}

static void tag_a(struct stp_regs *r, void *arg)
{
	tag(arg, 'a');
}

static void tag_b(struct stp_regs *r, void *arg)
{
	tag(arg, 'b');
}

static void tag_c(struct stp_regs *r, void *arg)
{
	tag(arg, 'c');
}

static void test_order_tags(void)
{
	struct hits h = { 0 };
	struct stp_patcher *p = stp_patcher__new();
	char err[256];

	CU_ASSERT_EQUAL(add(p, AT(t_add), 0, 0, tag_b, tag_c, &h), 0);
	CU_ASSERT_EQUAL(add(p, AT(t_add), 0, 0, tag_a, tag_b, &h), 0);
	CU_ASSERT_EQUAL_FATAL(stp_patcher__install(p, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(t_add(1, 1), 2);
	CU_ASSERT_STRING_EQUAL(h.order, "bacb");
	stp_patcher__free(p);
}

/* ---- return probes ---- */

static void test_return(void)
{
	struct hits h = { .add_ax = 1000 };
	struct stp_patcher *p =
		patch_one(AT(t_add), AT(t_add), AT(t_add_end), on_entry, on_ret, &h);

	CU_ASSERT_EQUAL(t_add(2, 3), 1005);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 1);
	CU_ASSERT_EQUAL(atomic_load(&h.ret), 1);
	CU_ASSERT_EQUAL(h.ax, 5);
	CU_ASSERT_EQUAL(h.ret_ip, h.ra);	/* the real return address, not the trampoline */
	CU_ASSERT_EQUAL(h.ret_sp, h.sp + 8);
	h.add_ax = 0;
	CU_ASSERT_EQUAL(t_add(20, 3), 23);
	CU_ASSERT_EQUAL(atomic_load(&h.ret), 2);
	stp_patcher__free(p);
}

/* Entry and return probes on a recursive function: one of each per level. */
static long fact_di[16], fact_ax[16];
static int fact_ndi, fact_nax;

static void fact_entry(struct stp_regs *r, void *arg)
{
	if (fact_ndi < 16)
		fact_di[fact_ndi++] = (long)r->di;
}

static void fact_ret(struct stp_regs *r, void *arg)
{
	if (fact_nax < 16)
		fact_ax[fact_nax++] = (long)r->ax;
}

static void test_recursion(void)
{
	struct stp_patcher *p =
		patch_one(AT(t_fact), AT(t_fact), AT(t_fact_end), fact_entry, fact_ret, NULL);
	long want = 1;

	CU_ASSERT_EQUAL(kind_of(p, AT(t_fact)), STP_PATCH_JUMP);
	CU_ASSERT_EQUAL(t_fact(10), 3628800);
	CU_ASSERT_EQUAL_FATAL(fact_ndi, 10);
	CU_ASSERT_EQUAL_FATAL(fact_nax, 10);
	for (int k = 0; k < 10; k++) {
		want *= k + 1;
		CU_ASSERT_EQUAL(fact_di[k], 10 - k);
		CU_ASSERT_EQUAL(fact_ax[k], want);
	}
	stp_patcher__free(p);
}

static jmp_buf lj_env;

static long lj_cb(long x)
{
	if (x < 0)
		longjmp(lj_env, 1);
	return 2 * x;
}

/* longjmp out of hooked calls, 1000 times: more than the shadow stack holds. */
static void test_longjmp(void)
{
	struct hits h = { 0 };
	struct stp_patcher *p = patch_one(AT(t_lj), AT(t_lj), AT(t_lj_end), on_entry, on_ret, &h);
	struct stp_patch_info info;
	volatile long k, bad = 0;

	for (k = 0; k < 1000; k++) {
		if (setjmp(lj_env) == 0) {
			t_lj(lj_cb, -1);
			bad++;
		}
		if (t_lj(lj_cb, k) != 3 * k)
			bad++;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 2000);
	CU_ASSERT_EQUAL(atomic_load(&h.ret), 1000);
	CU_ASSERT_EQUAL(h.ax, 3 * 999);
	CU_ASSERT_EQUAL(stp_patcher__info(p, AT(t_lj), &info), 0);
	CU_ASSERT_EQUAL(info.ret_missed, 0);
	stp_patcher__free(p);
}

static jmp_buf inner_env;

static long lj_inner(long x)
{
	longjmp(inner_env, 1);
}

static long lj_outer(long x)
{
	if (setjmp(inner_env) == 0)
		t_lj(lj_inner, x);
	return 2 * x;
}

/* longjmp from a hooked call into the middle of another, which then returns: skipped first. */
static void test_longjmp_nested(void)
{
	struct hits h = { 0 };
	struct stp_patcher *p = patch_one(AT(t_lj), AT(t_lj), AT(t_lj_end), on_entry, on_ret, &h);

	CU_ASSERT_EQUAL(t_lj(lj_outer, 5), 15);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 2);
	CU_ASSERT_EQUAL(atomic_load(&h.ret), 1);
	CU_ASSERT_EQUAL(h.ax, 15);
	CU_ASSERT_EQUAL(t_lj(lj_cb, 4), 12);
	CU_ASSERT_EQUAL(atomic_load(&h.ret), 2);
	stp_patcher__free(p);
}

/* A hooked function that tail-calls another: both returns, inner first, to the real address. */
static void test_tail_call(void)
{
	struct hits ha = { 0 }, ht = { 0 };
	struct stp_patcher *p = stp_patcher__new();
	char err[256];

	CU_ASSERT_EQUAL(add(p, AT(t_add), 0, 0, on_entry, on_ret, &ha), 0);
	CU_ASSERT_EQUAL(add(p, AT(t_tail), 0, 0, on_entry, on_ret, &ht), 0);
	CU_ASSERT_EQUAL_FATAL(stp_patcher__install(p, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(kind_of(p, AT(t_tail)), STP_PATCH_JUMP);
	ht.add_ax = 100;
	ha.add_ax = 10;
	CU_ASSERT_EQUAL(t_tail(2, 3), 115);
	CU_ASSERT_EQUAL(atomic_load(&ha.ret), 1);
	CU_ASSERT_EQUAL(atomic_load(&ht.ret), 1);
	CU_ASSERT_EQUAL(ha.ax, 5);	/* t_add's return handler ran first */
	CU_ASSERT_EQUAL(ht.ax, 15);
	CU_ASSERT_EQUAL(ha.ret_ip, ht.ra);
	CU_ASSERT_EQUAL(ht.ret_ip, ht.ra);
	CU_ASSERT_EQUAL(t_add(1, 1), 12);
	stp_patcher__free(p);
}

/* A handler's backtrace() goes through the trampolines to the probed function and its caller. */
static void *bt_frames[32];
static int bt_n;

static bool bt_has(uintptr_t pc)
{
	for (int k = 0; k < bt_n; k++)
		if ((uintptr_t)bt_frames[k] == pc)
			return true;
	return false;
}

static void bt_entry(struct stp_regs *r, void *arg)
{
	((struct hits *)arg)->ra = *(unsigned long *)r->sp;
	bt_n = backtrace(bt_frames, 32);
}

static void bt_ret(struct stp_regs *r, void *arg)
{
	bt_n = backtrace(bt_frames, 32);
}

static void test_backtrace(void)
{
	struct hits h = { 0 };
	struct stp_patcher *p = patch_one(AT(t_add), AT(t_add), AT(t_add_end), bt_entry, NULL, &h);

	CU_ASSERT_EQUAL(t_add(1, 2), 3);
	CU_ASSERT(bt_has(AT(t_add)));
	CU_ASSERT(bt_has(h.ra));
	stp_patcher__free(p);
	p = patch_one(AT(t_add), AT(t_add), AT(t_add_end), bt_entry, bt_ret, &h);
	CU_ASSERT_EQUAL(t_add(1, 2), 3);
	CU_ASSERT(!bt_has(AT(t_add)));
	CU_ASSERT(bt_has(h.ra));
	stp_patcher__free(p);
}

/*
 * A hooked frame stops backtrace(), unless the thread's hooked returns are
 * given back first; stp_patch_return_address() tells the real one.
 */
static struct hits *unhook_hits;
static uintptr_t unhook_seen, unhook_real;

static long unhook_cb(long x)
{
	uintptr_t slot = unhook_hits->sp;

	unhook_seen = *(uintptr_t *)slot;
	unhook_real = stp_patch_return_address(unhook_seen, slot);
	if (x)
		stp_patch_unhook_returns();
	bt_n = backtrace(bt_frames, 32);
	return x;
}

static void test_unhook(void)
{
	struct hits h = { 0 };
	struct stp_patcher *p = patch_one(AT(t_lj), AT(t_lj), AT(t_lj_end), on_entry, on_ret, &h);
	struct stp_patch_info info;

	unhook_hits = &h;
	CU_ASSERT_EQUAL(t_lj(unhook_cb, 0), 0);
	CU_ASSERT(!bt_has(h.ra));
	CU_ASSERT(unhook_seen != h.ra);
	CU_ASSERT_EQUAL(unhook_real, h.ra);
	CU_ASSERT_EQUAL(stp_patch_return_address(h.ra, h.sp), h.ra);
	CU_ASSERT_EQUAL(atomic_load(&h.ret), 1);
	CU_ASSERT_EQUAL(t_lj(unhook_cb, 1), 2);
	CU_ASSERT(bt_has(h.ra));
	CU_ASSERT_EQUAL(atomic_load(&h.ret), 1);
	CU_ASSERT_EQUAL(stp_patcher__info(p, AT(t_lj), &info), 0);
	CU_ASSERT_EQUAL(info.ret_missed, 1);
	CU_ASSERT_EQUAL(t_lj(lj_cb, 2), 6);
	CU_ASSERT_EQUAL(atomic_load(&h.ret), 2);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 3);
	stp_patcher__free(p);
}

/* ---- relocated instructions ---- */

static void test_rip_relative(void)
{
	struct hits h = { 0 };
	struct stp_patcher *p = patch_one(AT(t_ripmov), 0, 0, on_entry, NULL, &h);
	struct stp_patcher *q = patch_one(AT(t_riplea), 0, 0, on_entry, NULL, &h);

	CU_ASSERT_EQUAL(kind_of(p, AT(t_ripmov)), STP_PATCH_JUMP);
	CU_ASSERT_EQUAL(kind_of(q, AT(t_riplea)), STP_PATCH_JUMP);
	CU_ASSERT_EQUAL(t_ripmov(1), 1001);
	CU_ASSERT_EQUAL(t_riplea(2), 1002);
	t_data = 5;
	CU_ASSERT_EQUAL(t_ripmov(1), 6);
	CU_ASSERT_EQUAL(t_riplea(2), 7);
	t_data = 1000;
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 4);
	stp_patcher__free(p);
	stp_patcher__free(q);
}

static long ret_seven(void)
{
	return 7;
}

static void test_relocated_branches(void)
{
	struct hits h = { 0 };
	struct stp_patcher *p = stp_patcher__new();
	char err[256];

	CU_ASSERT_EQUAL(add(p, AT(t_callfirst), 0, 0, on_entry, NULL, &h), 0);
	CU_ASSERT_EQUAL(add(p, AT(t_callmem), 0, 0, on_entry, NULL, &h), 0);
	CU_ASSERT_EQUAL(add(p, AT(t_callreg), 0, 0, on_entry, NULL, &h), 0);
	CU_ASSERT_EQUAL(add(p, AT(t_jcc), AT(t_jcc), AT(t_jcc_end), on_entry, NULL, &h), 0);
	CU_ASSERT_EQUAL(add(p, AT(t_jrcxz), AT(t_jrcxz), AT(t_jrcxz_end), on_entry, NULL, &h), 0);
	CU_ASSERT_EQUAL_FATAL(stp_patcher__install(p, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(kind_of(p, AT(t_callfirst)), STP_PATCH_JUMP);
	CU_ASSERT_EQUAL(kind_of(p, AT(t_callmem)), STP_PATCH_JUMP);
	CU_ASSERT_EQUAL(kind_of(p, AT(t_callreg)), STP_PATCH_TRAP);
	CU_ASSERT_EQUAL(kind_of(p, AT(t_jcc)), STP_PATCH_JUMP);
	CU_ASSERT_EQUAL(kind_of(p, AT(t_jrcxz)), STP_PATCH_JUMP);
	CU_ASSERT_EQUAL(t_callfirst(1), 6);
	CU_ASSERT_EQUAL(t_callmem(2), 7);
	CU_ASSERT_EQUAL(t_callreg(ret_seven), 8);
	CU_ASSERT_EQUAL(t_jcc(0), 9);
	CU_ASSERT_EQUAL(t_jcc(1), 7);
	CU_ASSERT_EQUAL(t_jrcxz(1, 1, 1, 0), 9);
	CU_ASSERT_EQUAL(t_jrcxz(1, 1, 1, 5), 7);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 7);
	stp_patcher__free(p);
}

/*
 * The copies of displaced instructions run more than 2 GB away from them,
 * where branches need their absolute forms: FN's first MIN bytes, copied
 * to FAR (RWX), called there as FN.
 */
static uintptr_t far_code(void)
{
	static const long offsets[] = { 4l << 30, 8l << 30, 16l << 30, -(4l << 30), -(8l << 30) };
	uintptr_t base = (AT(t_jcc) & ~4095ul);

	for (size_t k = 0; k < sizeof(offsets) / sizeof(offsets[0]); k++) {
		void *at = (void *)(base + offsets[k]);

		if (mmap(at, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == at)
			return (uintptr_t)at;
	}
	return 0;
}

static int far_copy(uintptr_t far, uintptr_t fn, int min, char *why)
{
	struct patch_code c;

	if (patch_code__decode(&c, (const uint8_t *)fn, 64, fn, min, why, 160) != 0)
		return -1;
	return patch_code__relocate(&c, far, (uint8_t *)far, 256, NULL, why, 160);
}

static void test_far_relocation(void)
{
	uintptr_t far = far_code();
	char why[160] = "", want[160];

	CU_ASSERT_FATAL(far != 0);
	CU_ASSERT(far_copy(far, AT(t_jcc), 5, why) > 0);
	CU_ASSERT_EQUAL(((long (*)(long))far)(0), 9);
	CU_ASSERT_EQUAL(((long (*)(long))far)(3), 7);
	CU_ASSERT(far_copy(far, AT(t_jrcxz), 5, why) > 0);
	CU_ASSERT_EQUAL(((long (*)(long, long, long, long))far)(1, 1, 1, 0), 9);
	CU_ASSERT_EQUAL(((long (*)(long, long, long, long))far)(1, 1, 1, 2), 7);
	CU_ASSERT(far_copy(far, AT(t_callfirst), 5, why) > 0);
	CU_ASSERT_EQUAL(((long (*)(long))far)(10), 15);
	CU_ASSERT(far_copy(far, AT(t_callreg), 1, why) > 0);
	CU_ASSERT_EQUAL(((long (*)(long (*)(void)))far)(ret_seven), 8);
	CU_ASSERT(far_copy(far, AT(t_tail), 5, why) > 0);
	CU_ASSERT_EQUAL(((long (*)(long, long))far)(20, 22), 42);
	CU_ASSERT_EQUAL(far_copy(far, AT(t_ripmov), 5, why), -1);
	snprintf(want, sizeof(want),
		 "the RIP-relative operand at 0x%lx is out of reach of its copy",
		 (unsigned long)(uintptr_t)&t_data);
	CU_ASSERT_STRING_EQUAL(why, want);
	munmap((void *)far, 4096);
}

/* ---- traps ---- */

static void test_short_jump_trap(void)
{
	struct hits h = { 0 };
	struct stp_patcher *p =
		patch_one(AT(t_loop), AT(t_loop), AT(t_loop_end), on_entry, NULL, &h);
	struct stp_patch_info info;
	char want[96];

	CU_ASSERT_EQUAL(stp_patcher__info(p, AT(t_loop), &info), 0);
	CU_ASSERT_EQUAL(info.kind, STP_PATCH_TRAP);
	CU_ASSERT_EQUAL(info.len, 2);
	snprintf(want, sizeof(want),
		 "the branch at 0x%lx lands inside the 5 bytes a jump displaces",
		 (unsigned long)AT(t_loop) + 8);
	CU_ASSERT_STRING_EQUAL(info.why, want);
	CU_ASSERT_EQUAL(*(const unsigned char *)t_loop, 0xcc);
	CU_ASSERT_EQUAL(t_loop(3, 4), 12);
	CU_ASSERT_EQUAL(t_loop(5, 1), 5);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 2);
	CU_ASSERT_EQUAL(h.di, 5);
	stp_patcher__free(p);
}

static void test_nop_trap(void)
{
	struct hits h = { 0 }, g = { 0 };
	struct stp_patcher *p = patch_one(AT(t_nop), 0, 0, on_entry, NULL, &h);
	int jumps, traps;

	stp_patcher__counts(p, &jumps, &traps);
	CU_ASSERT_EQUAL(jumps, 0);
	CU_ASSERT_EQUAL(traps, 1);
	for (int k = 0; k < 100; k++)
		t_nop();
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 100);
	CU_ASSERT_EQUAL(h.ip, AT(t_nop));
	stp_patcher__free(p);
	p = patch_one(AT(t_nop), AT(t_nop), AT(t_nop_end), on_entry, NULL, &g);
	CU_ASSERT_EQUAL(kind_of(p, AT(t_nop)), STP_PATCH_TRAP);
	t_nop();
	CU_ASSERT_EQUAL(atomic_load(&g.entry), 1);
	stp_patcher__free(p);
	t_nop();
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 100);
	CU_ASSERT_EQUAL(atomic_load(&g.entry), 1);
}

static void test_trap_return(void)
{
	struct hits h = { .add_ax = 50 };
	struct stp_patcher *p = patch_one(AT(t_small), 0, 0, on_entry, on_ret, &h);

	CU_ASSERT_EQUAL(kind_of(p, AT(t_small)), STP_PATCH_TRAP);
	CU_ASSERT_EQUAL(t_small(41), 92);
	CU_ASSERT_EQUAL(h.ax, 42);
	CU_ASSERT_EQUAL(h.ret_ip, h.ra);
	CU_ASSERT_EQUAL(h.ret_sp, h.sp + 8);
	stp_patcher__free(p);
}

/* A thread that reaches a jump site while its first byte is still int3 goes to the trampoline. */
static void test_int3_window(void)
{
	struct hits h = { 0 };
	struct stp_patcher *p = patch_one(AT(t_add), AT(t_add), AT(t_add_end), on_entry, NULL, &h);
	uintptr_t page = AT(t_add) & ~4095ul;
	unsigned char *code = (unsigned char *)t_add, first = code[0];

	CU_ASSERT_FATAL(mprotect((void *)page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC) == 0);
	code[0] = 0xcc;
	CU_ASSERT_EQUAL(t_add(6, 7), 13);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 1);
	code[0] = first;
	CU_ASSERT_FATAL(mprotect((void *)page, 4096, PROT_READ | PROT_EXEC) == 0);
	CU_ASSERT_EQUAL(t_add(6, 8), 14);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 2);
	stp_patcher__free(p);
}

static atomic_int own_traps;

static void own_trap(int sig)
{
	atomic_fetch_add(&own_traps, 1);
}

/* An int3 that is not a site goes to the handler the program had. */
static void test_trap_chain(void)
{
	struct sigaction sa = { .sa_handler = own_trap }, old;
	struct hits h = { 0 };
	struct stp_patcher *p;

	sigemptyset(&sa.sa_mask);
	CU_ASSERT_FATAL(sigaction(SIGTRAP, &sa, &old) == 0);
	p = patch_one(AT(t_nop), 0, 0, on_entry, NULL, &h);
	asm volatile("int3");
	CU_ASSERT_EQUAL(atomic_load(&own_traps), 1);
	t_nop();
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 1);
	CU_ASSERT_EQUAL(atomic_load(&own_traps), 1);
	stp_patcher__free(p);
}

/* ---- handlers calling probed code ---- */

static struct stp_patcher *nested_p;

static void call_probed(struct stp_regs *r, void *arg)
{
	struct hits *h = arg;

	atomic_fetch_add(&h->entry, 1);
	h->ax = (unsigned long)t_add(100, 1);
}

static void test_handler_recursion(void)
{
	struct hits h = { 0 };

	nested_p = patch_one(AT(t_add), AT(t_add), AT(t_add_end), call_probed, on_ret, &h);
	CU_ASSERT_EQUAL(t_add(1, 2), 3);
	CU_ASSERT_EQUAL(t_add(1, 3), 4);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 2);
	CU_ASSERT_EQUAL(atomic_load(&h.ret), 2);
	CU_ASSERT_EQUAL(h.ax, 4);
	CU_ASSERT_EQUAL(stp_patcher__skipped(nested_p), 2);
	stp_patcher__free(nested_p);
}

/* ---- threads ---- */

#define THREADS 4
#define CALLS 100000

static void *thread_calls(void *arg)
{
	long bad = 0;

	for (long k = 0; k < CALLS; k++)
		bad += t_add(k, 1) != k + 1;
	return (void *)bad;
}

static void count_entry(struct stp_regs *r, void *arg)
{
	atomic_fetch_add_explicit(&((struct hits *)arg)->entry, 1, memory_order_relaxed);
}

static void count_ret(struct stp_regs *r, void *arg)
{
	atomic_fetch_add_explicit(&((struct hits *)arg)->ret, 1, memory_order_relaxed);
}

static void test_threads(void)
{
	struct hits h = { 0 };
	struct stp_patcher *p =
		patch_one(AT(t_add), AT(t_add), AT(t_add_end), count_entry, count_ret, &h);
	pthread_t t[THREADS];
	long bad = 0;

	for (int k = 0; k < THREADS; k++)
		CU_ASSERT_FATAL(pthread_create(&t[k], NULL, thread_calls, NULL) == 0);
	for (int k = 0; k < THREADS; k++) {
		void *r;

		pthread_join(t[k], &r);
		bad += (long)r;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), THREADS * CALLS);
	CU_ASSERT_EQUAL(atomic_load(&h.ret), THREADS * CALLS);
	stp_patcher__free(p);
}

/*
 * Sites written and restored while other threads run through them, 100
 * times: each call gets its right value.  (Single-instruction sites: a
 * thread between two displaced instructions while they are replaced is
 * what the int3 protocol cannot save.)
 */
static atomic_int load_stop;

static void *thread_load(void *arg)
{
	long bad = 0;

	for (long k = 0; !atomic_load_explicit(&load_stop, memory_order_relaxed); k++)
		bad += (t_ripmov(k) != k + 1000) + (t_small(k) != k + 1);
	return (void *)bad;
}

static void test_install_under_load(void)
{
	struct hits h = { 0 };
	pthread_t t[2];
	long bad = 0;
	char err[256];

	for (int k = 0; k < 2; k++)
		CU_ASSERT_FATAL(pthread_create(&t[k], NULL, thread_load, NULL) == 0);
	for (int k = 0; k < 100; k++) {
		struct stp_patcher *p = stp_patcher__new();

		CU_ASSERT_EQUAL(add(p, AT(t_ripmov), 0, 0, count_entry, count_ret, &h), 0);
		CU_ASSERT_EQUAL(add(p, AT(t_small), 0, 0, count_entry, count_ret, &h), 0);
		CU_ASSERT_EQUAL(stp_patcher__install(p, err, sizeof(err)), 0);
		bad += t_ripmov(k) != k + 1000;
		stp_patcher__free(p);
	}
	atomic_store(&load_stop, 1);
	for (int k = 0; k < 2; k++) {
		void *r;

		pthread_join(t[k], &r);
		bad += (long)r;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(atomic_load(&h.entry) >= 100);
	CU_ASSERT(atomic_load(&h.ret) <= atomic_load(&h.entry));
}

/* ---- floating point and vector state ---- */

static void clobber_vectors(struct stp_regs *r, void *arg)
{
	atomic_fetch_add(&((struct hits *)arg)->entry, 1);
	asm volatile("pxor %%xmm0, %%xmm0\n pcmpeqd %%xmm1, %%xmm1\n pxor %%xmm2, %%xmm2\n"
		     "pcmpeqd %%xmm3, %%xmm3\n pcmpeqd %%xmm7, %%xmm7\n pxor %%xmm15, %%xmm15\n"
		     ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm7", "xmm15");
}

static void test_doubles(void)
{
	struct hits h = { 0 };
	struct stp_patcher *p =
		patch_one(AT(t_dsum), AT(t_dsum), AT(t_dsum_end), clobber_vectors, NULL, &h);

	CU_ASSERT_EQUAL(kind_of(p, AT(t_dsum)), STP_PATCH_JUMP);
	CU_ASSERT_DOUBLE_EQUAL(t_dsum(1.5, 2.25), 3.75, 0);
	CU_ASSERT_DOUBLE_EQUAL(t_dsum(-8, 0.125), -7.875, 0);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 2);
	stp_patcher__free(p);
}

static void vzeroupper(struct stp_regs *r, void *arg)
{
	atomic_fetch_add(&((struct hits *)arg)->entry, 1);
	asm volatile("vzeroupper" ::: "xmm0", "xmm1");
}

static void test_ymm(void)
{
	struct hits h = { 0 };
	struct stp_patcher *p;

	if (!__builtin_cpu_supports("avx"))
		return;
	p = patch_one(AT(t_yget), 0, 0, vzeroupper, NULL, &h);
	CU_ASSERT_EQUAL(t_ycall(0x1234567890l), 0x1234567890l);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 1);
	stp_patcher__free(p);
}

static void zero_zmm16(struct stp_regs *r, void *arg)
{
	atomic_fetch_add(&((struct hits *)arg)->entry, 1);
	asm volatile("vpxord %zmm16, %zmm16, %zmm16");
}

static void test_zmm(void)
{
	struct hits h = { 0 };
	struct stp_patcher *p;

	if (!__builtin_cpu_supports("avx512f"))
		return;
	p = patch_one(AT(t_zget), 0, 0, zero_zmm16, NULL, &h);
	CU_ASSERT_EQUAL(t_zcall(0x1234567890l), 0x1234567890l);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 1);
	stp_patcher__free(p);
}

/* A handler that fills the x87 stack, at the return of a function returning a long double. */
static void x87_fill(struct stp_regs *r, void *arg)
{
	atomic_fetch_add(&((struct hits *)arg)->ret, 1);
	asm volatile("fldz; fldz; fldz; fldz; fldz; fldz; fldz; fldz\n"
		     "fstp %%st(0); fstp %%st(0); fstp %%st(0); fstp %%st(0)\n"
		     "fstp %%st(0); fstp %%st(0); fstp %%st(0); fstp %%st(0)\n"
		     ::: "st", "st(1)", "st(2)", "st(3)", "st(4)", "st(5)", "st(6)", "st(7)");
}

static void test_x87(void)
{
	struct hits h = { 0 };
	struct stp_patcher *p = patch_one(AT(t_ld), AT(t_ld), AT(t_ld_end), NULL, x87_fill, &h);

	CU_ASSERT_EQUAL(kind_of(p, AT(t_ld)), STP_PATCH_JUMP);
	CU_ASSERT(t_ld() == 2.0L);
	CU_ASSERT_EQUAL(atomic_load(&h.ret), 1);
	stp_patcher__free(p);
}

/* ---- remove, counts, errors ---- */

static void test_remove(void)
{
	struct hits h = { 0 };
	unsigned char before[16];
	struct stp_patcher *p;

	memcpy(before, (const void *)t_add, sizeof(before));
	p = patch_one(AT(t_add), AT(t_add), AT(t_add_end), on_entry, on_ret, &h);
	CU_ASSERT(memcmp(before, (const void *)t_add, sizeof(before)) != 0);
	CU_ASSERT_EQUAL(t_add(1, 2), 3);
	stp_patcher__remove(p);
	CU_ASSERT(memcmp(before, (const void *)t_add, sizeof(before)) == 0);
	CU_ASSERT_EQUAL(t_add(2, 2), 4);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 1);
	CU_ASSERT_EQUAL(atomic_load(&h.ret), 1);
	CU_ASSERT_EQUAL_FATAL(stp_patcher__install(p, (char[64]){ 0 }, 64), 0);
	CU_ASSERT_EQUAL(t_add(3, 2), 5);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 2);
	stp_patcher__free(p);
	CU_ASSERT(memcmp(before, (const void *)t_add, sizeof(before)) == 0);
	CU_ASSERT_EQUAL(t_add(3, 3), 6);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 2);
}

/* Removed while a call is under way: its return runs no handler but returns right. */
static struct stp_patcher *removing;

static long remove_then(long x)
{
	stp_patcher__remove(removing);
	return x;
}

static void test_remove_pending(void)
{
	struct hits h = { 0 };

	removing = patch_one(AT(t_lj), AT(t_lj), AT(t_lj_end), on_entry, on_ret, &h);
	CU_ASSERT_EQUAL(t_lj(remove_then, 21), 42);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 1);
	CU_ASSERT_EQUAL(atomic_load(&h.ret), 0);
	stp_patcher__free(removing);
}

static void test_counts(void)
{
	struct hits h = { 0 };
	struct stp_patcher *p = stp_patcher__new();
	int jumps, traps;
	char err[256];

	CU_ASSERT_EQUAL(add(p, AT(t_add), AT(t_add), AT(t_add_end), on_entry, NULL, &h), 0);
	CU_ASSERT_EQUAL(add(p, AT(t_ripmov), 0, 0, on_entry, NULL, &h), 0);
	CU_ASSERT_EQUAL(add(p, AT(t_nop), 0, 0, on_entry, NULL, &h), 0);
	CU_ASSERT_EQUAL(add(p, AT(t_loop), AT(t_loop), AT(t_loop_end), on_entry, NULL, &h), 0);
	CU_ASSERT_EQUAL(add(p, AT(t_small), 0, 0, on_entry, NULL, &h), 0);
	stp_patcher__counts(p, &jumps, &traps);
	CU_ASSERT_EQUAL(jumps, 2);
	CU_ASSERT_EQUAL(traps, 3);
	CU_ASSERT_EQUAL_FATAL(stp_patcher__install(p, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(t_add(1, 1) + t_ripmov(1) + t_loop(2, 2) + t_small(1), 2 + 1001 + 4 + 2);
	t_nop();
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 5);
	stp_patcher__free(p);
}

/* A jump over the next probed instruction becomes a trap. */
static void test_overlap(void)
{
	struct hits h = { 0 };
	struct stp_patcher *p = stp_patcher__new();
	uintptr_t second = AT(t_add) + 1;	/* mov %rsp, %rbp */
	struct stp_patch_info info;
	char err[256], want[96];

	CU_ASSERT_EQUAL(add(p, AT(t_add), AT(t_add), AT(t_add_end), tag_a, NULL, &h), 0);
	CU_ASSERT_EQUAL(add(p, second, AT(t_add), AT(t_add_end), tag_b, NULL, &h), 0);
	CU_ASSERT_EQUAL_FATAL(stp_patcher__install(p, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(stp_patcher__info(p, AT(t_add), &info), 0);
	CU_ASSERT_EQUAL(info.kind, STP_PATCH_TRAP);
	snprintf(want, sizeof(want), "the probe at 0x%lx is inside the bytes a jump displaces",
		 (unsigned long)second);
	CU_ASSERT_STRING_EQUAL(info.why, want);
	CU_ASSERT_EQUAL(kind_of(p, second), STP_PATCH_JUMP);
	CU_ASSERT_EQUAL(t_add(2, 5), 7);
	CU_ASSERT_STRING_EQUAL(h.order, "ab");
	stp_patcher__free(p);
}

static void expect_add(struct stp_patcher *p, uintptr_t addr, uintptr_t lo, uintptr_t hi,
		       stp_patch_fn entry, stp_patch_fn ret, const char *want)
{
	char err[256] = "";

	CU_ASSERT_EQUAL(stp_patcher__add(p, addr, lo, hi, entry, ret, NULL, err, sizeof(err)), -1);
	CU_ASSERT_STRING_EQUAL(err, want);
}

/*
 * The pc moves of a tracer: t_add's 3 displaced instructions give 2, a
 * jump over one instruction and a trap none.  Each copy is the original
 * instruction, and a thread moved there finishes the call, no handler run.
 */
static void test_moves(void)
{
	struct hits h = { 0 };
	struct stp_patcher *p = stp_patcher__new();
	struct stp_patch_move v[4];
	uint8_t orig[8];
	char err[256];

	memcpy(orig, t_add, sizeof(orig));
	CU_ASSERT_EQUAL(add(p, AT(t_add), AT(t_add), AT(t_add_end), on_entry, NULL, &h), 0);
	CU_ASSERT_EQUAL(add(p, AT(t_ripmov), 0, 0, on_entry, NULL, &h), 0);
	CU_ASSERT_EQUAL(add(p, AT(t_nop), AT(t_nop), AT(t_nop_end), on_entry, NULL, &h), 0);
	CU_ASSERT_EQUAL(stp_patcher__moves(p, v, 4), 0);	/* not installed */
	CU_ASSERT_EQUAL_FATAL(stp_patcher__install(p, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(kind_of(p, AT(t_ripmov)), STP_PATCH_JUMP);
	CU_ASSERT_EQUAL(kind_of(p, AT(t_nop)), STP_PATCH_TRAP);
	CU_ASSERT_EQUAL(stp_patcher__moves(p, NULL, 0), 2);
	CU_ASSERT_EQUAL_FATAL(stp_patcher__moves(p, v, 4), 2);
	CU_ASSERT_EQUAL(v[0].from, AT(t_add) + 1);
	CU_ASSERT_EQUAL(v[1].from, AT(t_add) + 4);
	CU_ASSERT(memcmp((const void *)v[0].to, orig + 1, 3) == 0);
	CU_ASSERT(memcmp((const void *)v[1].to, orig + 4, 4) == 0);
	CU_ASSERT_EQUAL(v[1].to, v[0].to + 3);	/* copied as it is: as long */
	CU_ASSERT_EQUAL(t_add_at1(2, 3, v[0].to), 5);
	CU_ASSERT_EQUAL(t_add_at4(20, 3, v[1].to), 23);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 0);
	CU_ASSERT_EQUAL(t_add(1, 1), 2);
	CU_ASSERT_EQUAL(atomic_load(&h.entry), 1);
	stp_patcher__remove(p);
	CU_ASSERT_EQUAL(stp_patcher__moves(p, v, 4), 0);
	stp_patcher__free(p);
}

static void test_errors(void)
{
	struct stp_patcher *p = stp_patcher__new(), *q = stp_patcher__new();
	uintptr_t a = AT(t_add), e = AT(t_add_end);
	char want[160], err[256] = "";
	static const char data[16] = { 0 };

	snprintf(want, sizeof(want), "a return probe needs a function's entry: 0x%lx is not 0x%lx",
		 (unsigned long)a + 1, (unsigned long)a);
	expect_add(p, a + 1, a, e, NULL, on_ret, want);
	snprintf(want, sizeof(want), "0x%lx is outside its function [0x%lx, 0x%lx)",
		 (unsigned long)e, (unsigned long)a, (unsigned long)e);
	expect_add(p, e, a, e, on_entry, NULL, want);
	expect_add(p, a, 0, 0, NULL, NULL, "a probe needs an entry or a return handler");
	snprintf(want, sizeof(want), "0x%lx is not in readable executable memory",
		 (unsigned long)(uintptr_t)data);
	expect_add(p, (uintptr_t)data, 0, 0, on_entry, NULL, want);
	CU_ASSERT_EQUAL(add(p, a, a, e, on_entry, NULL, NULL), 0);
	CU_ASSERT_EQUAL(add(q, a, a, e, on_entry, NULL, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(stp_patcher__install(p, err, sizeof(err)), 0);
	expect_add(p, AT(t_nop), 0, 0, on_entry, NULL,
		   "probes cannot be added once the patcher is installed");
	snprintf(want, sizeof(want), "the code at 0x%lx changed since it was probed",
		 (unsigned long)a);
	CU_ASSERT_EQUAL(stp_patcher__install(q, err, sizeof(err)), -1);
	CU_ASSERT_STRING_EQUAL(err, want);
	stp_patcher__free(p);
	stp_patcher__free(q);
	CU_ASSERT_EQUAL(t_add(1, 2), 3);
}

static const struct unit_case cases[] = {
	{ "trap_chain", test_trap_chain },
	{ "entry_args", test_entry_args },
	{ "entry_modifies", test_entry_modifies },
	{ "order", test_order },
	{ "order_tags", test_order_tags },
	{ "return", test_return },
	{ "recursion", test_recursion },
	{ "longjmp", test_longjmp },
	{ "longjmp_nested", test_longjmp_nested },
	{ "tail_call", test_tail_call },
	{ "backtrace", test_backtrace },
	{ "unhook", test_unhook },
	{ "rip_relative", test_rip_relative },
	{ "relocated_branches", test_relocated_branches },
	{ "far_relocation", test_far_relocation },
	{ "short_jump_trap", test_short_jump_trap },
	{ "nop_trap", test_nop_trap },
	{ "trap_return", test_trap_return },
	{ "int3_window", test_int3_window },
	{ "handler_recursion", test_handler_recursion },
	{ "threads", test_threads },
	{ "install_under_load", test_install_under_load },
	{ "doubles", test_doubles },
	{ "ymm", test_ymm },
	{ "zmm", test_zmm },
	{ "x87", test_x87 },
	{ "remove", test_remove },
	{ "remove_pending", test_remove_pending },
	{ "counts", test_counts },
	{ "overlap", test_overlap },
	{ "errors", test_errors },
	{ "moves", test_moves },
	{ NULL, NULL },
};

void unit_register(void)
{
	unit_add_suite("dyn_patch", cases);
}
