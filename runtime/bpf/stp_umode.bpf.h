/*
 * stp_umode.bpf.h - user_mode() in kernel context: whether the probe
 * point was reached in user mode (the stp_tapset.h service
 * stp_user_mode()), as stap's context tells it; and addr(), the probed
 * or interrupted instruction (stp_perf_addr()).  user_mode() is:
 *
 *	process(...) uprobes and uretprobes	1: the task runs its own code
 *	timer.profile, perf.*			what the sample interrupted: 1
 *						when its registers are user ones
 *	tracepoints, kprobes, process.begin...	0: the kernel's code
 *
 * A perf_event program sees the interrupted registers in its context, a
 * kprobe program the probed function's, which tapset functions do not
 * get.  So the generated prologue of every timer.profile and perf.*
 * program (translator/emit_bpf.c) calls stp_regs_note(REGS, PROBE), that
 * of a kernel function's stp_func_note(ctx, PROBE) (its address, from
 * bpf_get_func_ip(); a kprobe's stp_kprobe_note(REGS, PROBE)) and that of
 * a kretprobe stp_ret_note(REGS, PROBE) (the return address), which keep, per CPU, the probe's index and
 * what the registers say; stp_user_mode() and addr() believe the note only while that probe
 * runs, as stp__task() of stp_proc.bpf.h does.  A uprobe's addr() is the
 * task's user instruction pointer.  The note is
 * written before stp_enter() and left alone when a handler already runs
 * on the CPU (the hit is skipped then anyway).
 *
 * x86-64: registers are user ones when the code segment's privilege
 * level (the low two bits of cs) is not 0, the test of the kernel's
 * user_mode(regs).
 *
 * Included by tapset.bpf.h after the generated stp_ctx_uregs().
 */
#ifndef STP_UMODE_BPF_H
#define STP_UMODE_BPF_H

struct stp_perf_hit {
	uint32_t probe;		/* the perf probe's index + 1; 0: none yet */
	uint32_t user;		/* its sample interrupted user code */
	uint64_t ip;		/* the interrupted instruction pointer */
};

struct stp_perf_hit stp_perf_hits[STP_NCPUS * STP_CTX_LEVELS];

/*
 * The note of the context level the handler about to start on this CPU
 * will hold, or NULL when every level is held (the hit is skipped anyway).
 */
static __always_inline struct stp_perf_hit *stp__hit_slot(uint32_t probe)
{
	uint32_t cpu = bpf_get_smp_processor_id();
	uint32_t i, level = cpu < STP_NCPUS ? stp_ctx_free_level(cpu) : STP_CTX_LEVELS;

	if (level >= STP_CTX_LEVELS)
		return NULL;
	i = cpu * STP_CTX_LEVELS + level;
	/* clang proves the bound from the two above and drops the test; Linux 6.1's verifier cannot */
	asm volatile("" : "+r"(i));
	if (i >= STP_NCPUS * STP_CTX_LEVELS)
		return NULL;
	stp_perf_hits[i].probe = probe + 1;
	return &stp_perf_hits[i];
}

/* The prologue of a timer.profile or perf.* program: note what the sample's REGS say. */
static __always_inline void stp_regs_note(const struct pt_regs *regs, uint32_t probe)
{
	struct stp_perf_hit *h = stp__hit_slot(probe);

	if (!h)
		return;
	/* whole 64-bit loads: the verifier refuses narrower ones of the registers */
	h->user = (*(volatile const uint64_t *)&regs->cs & 3) != 0;
	h->ip = *(volatile const uint64_t *)&regs->ip;
}

/* The prologue of a kernel function's program (kprobe, fentry...): where it was hit. */
static __always_inline void stp_func_note(void *ctx, uint32_t probe)
{
	struct stp_perf_hit *h = stp__hit_slot(probe);

	if (!h)
		return;
	h->user = 0;
	h->ip = bpf_get_func_ip(ctx);
}

/*
 * The prologue of a kprobe program: where it was hit.  bpf_get_func_ip()
 * knows only a kprobe at a function's entry (0 elsewhere: Linux 6.1's
 * KPROBE_FLAG_ON_FUNC_ENTRY test); past it, at an inline instance or a
 * statement, the registers' ip is one past the probed address, as the
 * int3 leaves it (and an optimized or ftrace kprobe sets it).
 */
static __always_inline void stp_kprobe_note(const struct pt_regs *regs, uint32_t probe)
{
	struct stp_perf_hit *h = stp__hit_slot(probe);
	uint64_t ip;

	if (!h)
		return;
	h->user = 0;
	ip = bpf_get_func_ip((void *)regs);
	h->ip = ip ? ip : *(volatile const uint64_t *)&regs->ip - 1;
}

/*
 * The prologue of a kernel function's kretprobe: the return address, in
 * the caller, where the kernel set its registers' ip before the handlers
 * run (stap's addr() in a .return).
 */
static __always_inline void stp_ret_note(const struct pt_regs *regs, uint32_t probe)
{
	struct stp_perf_hit *h = stp__hit_slot(probe);

	if (!h)
		return;
	h->user = 0;
	h->ip = *(volatile const uint64_t *)&regs->ip;
}

/* The note of the running perf probe, or NULL when the running probe is not one. */
static __always_inline struct stp_perf_hit *stp__perf_hit(struct context *c)
{
	uint32_t i = bpf_get_smp_processor_id() * STP_CTX_LEVELS + c->level;

	asm volatile("" : "+r"(i));	/* the test below stays (stp__hit_slot()) */
	if (i < STP_NCPUS * STP_CTX_LEVELS && stp_perf_hits[i].probe == c->probe + 1)
		return &stp_perf_hits[i];
	return NULL;
}

/*
 * probefunc() where the running probe noted kernel registers: the
 * kernel's name of their address, the symbol only (stp__ksym_at());
 * false where it noted none.
 */
static __always_inline bool stp__probe_ksym(struct context *c, char *out)
{
	struct stp_perf_hit *h = stp__perf_hit(c);

	return h && !h->user && h->ip && stp__ksym_at(out, h->ip, STP_SYM_NAME);
}

STP_SERVICE int64_t stp_user_mode(struct context *c)
{
	struct stp_perf_hit *h;

#ifdef STP_CTX_UREGS
	/* a uprobe's registers are the task's own; a syscall tracepoint's are not where it runs */
	if (stp_ctx_uregs(c) && !stp_ctx_syscall_regs(c))
		return 1;
#endif
	h = stp__perf_hit(c);
	return h ? h->user : 0;
}

STP_SERVICE uint64_t stp_perf_addr(struct context *c)
{
	struct stp_perf_hit *h = stp__perf_hit(c);

	if (h)
		return h->ip;
#if defined(STP_CTX_UREGS) && !defined(STP_KMOD)
	if (stp_ctx_uregs(c) && !stp_ctx_syscall_regs(c)) {
		struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
		uint64_t ip = 0;

		/* a helper's read: one load of both pointers would be refused */
		bpf_probe_read_kernel(&ip, sizeof(ip), &r->ip);
		return ip;
	}
#endif
	return 0;
}

#endif
