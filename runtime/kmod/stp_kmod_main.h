/*
 * stp_kmod_main.h - the module around a script's handlers
 * (--runtime=kernel), included at the end of the generated script.kmod.c
 * after its probe table (stp_kmod_sites) and its maps (stp_kmod_script_maps).  pmstap plays staprun's part:
 *
 *   load (finit_module)	the segment is laid out: every map, empty, in vmalloc_user() memory;
 *				the device /dev/MODNAME appears (root only)
 *   open, mmap the device	pmstap reads and writes the segment through
 *				dyninst/dmap.h, as the dyninst runtime's;
 *				read() tells "size N" and the last error
 *   write "start"		the probes are registered (tracepoints of the
 *				kernel, kprobes, kretprobes, per-CPU hrtimers
 *				of timer.profile), the procfs files made
 *				(procfs.c); a probe that
 *				cannot be is an error read() then gives, and
 *				none stays registered
 *   ioctl STP_KMOD_IOC_CALL	an embedded-C function of the script (-g)
 *				that pmstap's begin, end, error or timer
 *				probe calls, run here (kmod_abi.h)
 *   write "existing"		process.begin and thread.begin run for
 *				the tasks that run already (proc.c)
 *   write "stop", close	unregistered; a file open or mapped holds the
 *				module, so it unloads only after pmstap is done
 *   delete_module		what is left goes; a pmstap that died left
 *				its module unused, and the next run removes it
 *
 * Handlers run as BPF's: stp_enter() skips them unless pmstap set the run
 * state to running, and counts a CPU's re-entry as skipped.
 */
#include <linux/compat.h>
#include <linux/cpu.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/namei.h>
#include <linux/perf_event.h>
#include <asm/irq_regs.h>
#include <asm/syscall.h>
#include <trace/syscall.h>
#include <linux/trace_events.h>
#include <linux/tracepoint.h>
#include <linux/uprobes.h>
#include <linux/version.h>
#include <linux/vmalloc.h>

#include "kmod_abi.h"
#include "../dyninst/dmap.c"
#include "../dyninst/dmap_hash.c"
#include "../dyninst/dmap_ring.c"
#include "dmap_sync.c"

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("a SystemTap script compiled by pcp-stap's pmstap");

DEFINE_PER_CPU(uint64_t, stp_kmod_func_ip);
DEFINE_PER_CPU(struct pt_regs *, stp_kmod_regs);
DEFINE_PER_CPU(struct stp__vars_mem, stp_kmod_vars);

#define STP_KMOD_NSITES (ARRAY_SIZE(stp_kmod_sites) - 1)
#define STP_KMOD_ERR 256

/* A timer.profile probe's timer on one CPU. */
struct stp_kmod_ptimer {
	struct hrtimer t;
	const struct stp_ksite *site;
	bool on;			/* started: hrtimer_cancel() it */
};

/* One registered probe: a kprobe, a kretprobe, a tracepoint's or a profile's timers. */
struct stp_kprobe_live {
	const struct stp_ksite *site;
	struct tracepoint *tp;
	struct kprobe kp;
	struct kretprobe krp;
	struct stp_kmod_ptimer __percpu *prof;
	struct perf_event **perf;	/* a perf site's event on each CPU (nr_cpu_ids) */
	struct uprobe_consumer uc;	/* a uprobe's, on INODE */
	struct inode *inode;
	struct nf_hook_ops nfo;		/* a netfilter site's, its priv this */
	long nr;			/* a syscall site's syscall */
	struct stp_kprobe_live *next_sys;	/* the next site of that syscall and direction */
	bool on;
};

static struct {
	void *mem;			/* the segment, PAGE_ALIGN(size) bytes */
	uint64_t size;
	struct stp_dseg *seg;
	struct miscdevice dev;
	struct mutex lock;		/* start and stop */
	bool started;
	struct stp_kprobe_live live[STP_KMOD_NSITES + 1];
	char error[STP_KMOD_ERR];
} stp_km;

/* ---- the handlers' entries ---- */

/*
 * A hit at probed address IP (NULL: a tracepoint's) with a kprobe's
 * REGS (or NULL): the site's handler on CTX.  A hit inside a handler (a
 * tracepoint it passes, skipped as re-entry) leaves the outer one's
 * address and registers as they were.
 */
static void stp_kmod_hit(const struct stp_ksite *site, const void *ip, struct pt_regs *regs,
			 void *ctx)
{
	uint64_t ip0 = this_cpu_read(stp_kmod_func_ip);
	struct pt_regs *regs0 = this_cpu_read(stp_kmod_regs);

	this_cpu_write(stp_kmod_func_ip, (uint64_t)(uintptr_t)ip);
	this_cpu_write(stp_kmod_regs, regs);
	site->handler(ctx);
	this_cpu_write(stp_kmod_func_ip, ip0);
	this_cpu_write(stp_kmod_regs, regs0);
}

/* A netfilter site's hook: the handler's return value is the packet's verdict. */
static unsigned int stp_kmod_nf_hit(void *priv, struct sk_buff *skb,
				    const struct nf_hook_state *state)
{
	const struct stp_ksite *site = ((struct stp_kprobe_live *)priv)->site;
	struct stp_nf_ctx ctx = { state, skb };
	uint64_t ip0;
	struct pt_regs *regs0;
	int verdict;

	preempt_disable();
	ip0 = this_cpu_read(stp_kmod_func_ip);
	regs0 = this_cpu_read(stp_kmod_regs);
	this_cpu_write(stp_kmod_func_ip, 0);
	this_cpu_write(stp_kmod_regs, NULL);
	verdict = site->handler(&ctx);
	this_cpu_write(stp_kmod_func_ip, ip0);
	this_cpu_write(stp_kmod_regs, regs0);
	preempt_enable();
	return (unsigned int)verdict;
}

static void stp_kmod_run_tp(void *site, uint64_t *args)
{
	stp_kmod_hit(site, NULL, NULL, args);
}

/* The probe of a kretprobe's hit, or NULL when it is being unregistered. */
static struct stp_kprobe_live *stp_kmod_live_of(struct kretprobe_instance *ri)
{
	struct kretprobe *rp = get_kretprobe(ri);

	return rp ? container_of(rp, struct stp_kprobe_live, krp) : NULL;
}

static int stp_kmod_kprobe_hit(struct kprobe *kp, struct pt_regs *regs)
{
	stp_kmod_hit(container_of(kp, struct stp_kprobe_live, kp)->site, kp->addr, regs, regs);
	return 0;
}

static int stp_kmod_kretprobe_hit(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct stp_kprobe_live *l = stp_kmod_live_of(ri);

	/* addr(): the return address, where the trampoline left regs->ip, as stap's */
	if (l)
		stp_kmod_hit(l->site, (void *)instruction_pointer(regs), regs, regs);
	return 0;
}

/*
 * A function's argument words at its entry, as fentry gives them: the
 * registers of the x86-64 calling convention, then the stack above the
 * return address.
 */
static void stp_kmod_args(const struct pt_regs *regs, uint64_t *args, int words)
{
	const uint64_t r[6] = { regs->di, regs->si, regs->dx, regs->cx, regs->r8, regs->r9 };

	for (int i = 0; i < words && i < STP_KSITE_MAX_WORDS; i++) {
		if (i < 6)
			args[i] = r[i];
		else if (copy_from_kernel_nofault(&args[i], (void *)(regs->sp + 8 * (i - 5)), 8))
			args[i] = 0;
	}
}

static int stp_kmod_kfunc_hit(struct kprobe *kp, struct pt_regs *regs)
{
	struct stp_kprobe_live *l = container_of(kp, struct stp_kprobe_live, kp);
	uint64_t args[STP_KSITE_MAX_WORDS + 1] = { 0 };

	stp_kmod_args(regs, args, l->site->words);
	stp_kmod_hit(l->site, kp->addr, regs, args);
	return 0;
}

/* A kernel.function().return: the arguments kept at the entry, then the value. */
static int stp_kmod_kfunc_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct stp_kprobe_live *l = stp_kmod_live_of(ri);

	if (!l)
		return 1;
	stp_kmod_args(regs, (uint64_t *)ri->data, l->site->words);
	return 0;
}

static int stp_kmod_kfunc_return_hit(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct stp_kprobe_live *l = stp_kmod_live_of(ri);
	uint64_t args[STP_KSITE_MAX_WORDS + 1];
	int words;

	if (!l)
		return 0;
	words = min(l->site->words, STP_KSITE_MAX_WORDS);
	memcpy(args, ri->data, sizeof(uint64_t) * words);
	args[words] = regs_return_value(regs);
	stp_kmod_hit(l->site, (void *)instruction_pointer(regs), regs, args);
	return 0;
}

/*
 * timer.profile: each CPU's hrtimer fires once a tick (TICK_NSEC) in
 * hard interrupt context, on the registers it interrupted (the irq's),
 * which the handler gets as a perf event's sample: user_mode(), pid()
 * and register() are the interrupted task's, as with stap's.
 */
static enum hrtimer_restart stp_kmod_profile_hit(struct hrtimer *t)
{
	struct stp_kmod_ptimer *p = container_of(t, struct stp_kmod_ptimer, t);
	struct pt_regs *regs = get_irq_regs();
	struct bpf_perf_event_data d = { .sample_period = TICK_NSEC };

	if (regs) {
		d.regs = *regs;
		stp_kmod_hit(p->site, NULL, regs, &d);
	}
	hrtimer_forward_now(t, ns_to_ktime(TICK_NSEC));
	return HRTIMER_RESTART;
}

/*
 * perf.sw.*: a software perf event on each online CPU, whose overflow
 * (every perf_period events) runs the handler on the registers of the
 * event (a page fault's, a clock interrupt's) as a BPF perf program's
 * sample.  Hardware counters overflow in NMI context: pass 3 refuses them.
 * kernel.data's breakpoints too: each hit, in the debug exception, runs
 * the handler on the registers of the access, as stap's module does
 * (nothing the handler calls sleeps or waits unbounded: dmap_sync.c).
 */
static void stp_kmod_perf_hit(struct perf_event *event, struct perf_sample_data *data,
			      struct pt_regs *regs)
{
	struct stp_kprobe_live *l = event->overflow_handler_context;
	struct bpf_perf_event_data d = { .sample_period = data->period, .addr = data->addr };

	if (!regs)
		return;
	d.regs = *regs;
	stp_kmod_hit(l->site, NULL, regs, &d);
}

static void stp_kmod_perf_stop(struct stp_kprobe_live *l)
{
	int cpu;

	for_each_possible_cpu(cpu)
		if (l->perf && l->perf[cpu])
			perf_event_release_kernel(l->perf[cpu]);
	kfree(l->perf);
	l->perf = NULL;
}

/*
 * A symbol's address, as stap's module finds a kernel.data("SYMBOL"):
 * kallsyms_lookup_name(), which 5.7 and later do not export, found by
 * a kprobe on it.  0 when kallsyms has no such name: a kernel built
 * without CONFIG_KALLSYMS_ALL has no data symbols.
 */
static unsigned long stp_kmod_lookup_name(const char *name)
{
	static unsigned long (*lookup)(const char *name);
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };

	if (!lookup) {
		if (register_kprobe(&kp) < 0)
			return 0;
		lookup = (unsigned long (*)(const char *))kp.addr;
		unregister_kprobe(&kp);
	}
	return lookup(name);
}

/* kernel.data: a breakpoint as hw_breakpoint_init() makes one (pinned, each hit a sample). */
static int stp_kmod_bp_attr(const struct stp_ksite *site, struct perf_event_attr *attr)
{
	attr->bp_addr = site->name[0] ? stp_kmod_lookup_name(site->name) : site->offset;
	if (!attr->bp_addr)
		return -ENXIO;
	attr->bp_type = site->bp_type;
	attr->bp_len = site->bp_len;
	attr->sample_period = 1;
	return 0;
}

static int stp_kmod_perf_start(struct stp_kprobe_live *l)
{
	struct perf_event_attr attr = {
		.type = l->site->perf_type,
		.size = sizeof(attr),
		.config = l->site->perf_config,
		.sample_period = l->site->perf_period,
		.pinned = 1,
	};
	int cpu, err = 0;

	if (l->site->kind == STP_KSITE_HWBKPT && (err = stp_kmod_bp_attr(l->site, &attr)))
		return err;
	l->perf = kcalloc(nr_cpu_ids, sizeof(*l->perf), GFP_KERNEL);
	if (!l->perf)
		return -ENOMEM;
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct perf_event *e = perf_event_create_kernel_counter(&attr, cpu, NULL,
									 stp_kmod_perf_hit, l);

		if (IS_ERR(e)) {
			err = PTR_ERR(e);
			break;
		}
		l->perf[cpu] = e;
	}
	cpus_read_unlock();
	if (err)
		stp_kmod_perf_stop(l);
	return err;
}

/*
 * process("PATH").function/.statement and .return: the kernel's uprobe
 * API on the file's inode at the file offset pass 2 found, for every
 * process that maps it (the handler keeps target()'s tree with -c/-x, as
 * on BPF).  A uprobe runs in the task's context, preemptible: the
 * handler runs with preemption off, on this CPU's context, as the others.
 */
static int stp_kmod_uprobe_hit(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	struct stp_kprobe_live *l = container_of(uc, struct stp_kprobe_live, uc);

	preempt_disable();
	stp_kmod_hit(l->site, (void *)instruction_pointer(regs), regs, regs);
	preempt_enable();
	return 0;
}

static int stp_kmod_uretprobe_hit(struct uprobe_consumer *uc, unsigned long func,
				  struct pt_regs *regs)
{
	struct stp_kprobe_live *l = container_of(uc, struct stp_kprobe_live, uc);

	preempt_disable();
	stp_kmod_hit(l->site, (void *)func, regs, regs);
	preempt_enable();
	return 0;
}

static int stp_kmod_uprobe_start(struct stp_kprobe_live *l)
{
	struct path p;
	int err = kern_path(l->site->name, LOOKUP_FOLLOW, &p);

	if (err)
		return err;
	/* the file's own inode under an overlay (a container's root, the qa
	 * guest's): the overlay's has no read_folio, and uprobe_register()
	 * refuses it with EIO; the kernel's uprobe events do the same */
	l->inode = igrab(d_real_inode(p.dentry));
	path_put(&p);
	if (!l->inode)
		return -ENOENT;
	memset(&l->uc, 0, sizeof(l->uc));
	if (l->site->kind == STP_KSITE_URETPROBE)
		l->uc.ret_handler = stp_kmod_uretprobe_hit;
	else
		l->uc.handler = stp_kmod_uprobe_hit;
	/* a .mark's semaphore: the kernel raises it in each process while the uprobe is on */
	err = uprobe_register_refctr(l->inode, (loff_t)l->site->offset,
				     (loff_t)l->site->ref_ctr_offset, &l->uc);
	if (err) {
		iput(l->inode);
		l->inode = NULL;
	}
	return err;
}

static void stp_kmod_uprobe_stop(struct stp_kprobe_live *l)
{
	uprobe_unregister(l->inode, (loff_t)l->site->offset, &l->uc);
	iput(l->inode);
	l->inode = NULL;
}

/* On each online CPU (an IPI from stp_kmod_profile_start()): start its timer. */
static void stp_kmod_profile_cpu(void *arg)
{
	struct stp_kmod_ptimer *p = this_cpu_ptr(((struct stp_kprobe_live *)arg)->prof);

	p->site = ((struct stp_kprobe_live *)arg)->site;
	hrtimer_init(&p->t, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	p->t.function = stp_kmod_profile_hit;
	p->on = true;
	hrtimer_start(&p->t, ns_to_ktime(TICK_NSEC), HRTIMER_MODE_REL_PINNED_HARD);
}

static int stp_kmod_profile_start(struct stp_kprobe_live *l)
{
	l->prof = alloc_percpu(struct stp_kmod_ptimer);
	if (!l->prof)
		return -ENOMEM;
	on_each_cpu(stp_kmod_profile_cpu, l, 1);
	return 0;
}

static void stp_kmod_profile_stop(struct stp_kprobe_live *l)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct stp_kmod_ptimer *p = per_cpu_ptr(l->prof, cpu);

		if (p->on)
			hrtimer_cancel(&p->t);
	}
	free_percpu(l->prof);
	l->prof = NULL;
}

/*
 * Syscall tracepoints: the records of syscalls:sys_enter_NAME and
 * sys_exit_NAME as the kernel writes them (kernel/trace/trace_syscalls.c,
 * the events' formats), built from raw_syscalls' registers for the
 * syscall's number, which the event's metadata gives.  As the kernel's
 * events, a compat (32-bit) syscall is none of them.
 */
struct stp_sys_enter_rec {
	struct trace_entry ent;
	int nr;
	unsigned long args[6];
};

struct stp_sys_exit_rec {
	struct trace_entry ent;
	int nr;
	long ret;
};

struct stp_tp_find {
	const char *name;
	struct tracepoint *tp;
};

static void stp_kmod_tp_match(struct tracepoint *tp, void *priv)
{
	struct stp_tp_find *f = priv;

	if (!f->tp && strcmp(tp->name, f->name) == 0)
		f->tp = tp;
}

/*
 * One probe on raw_syscalls:sys_enter and one on sys_exit serve every
 * syscall site, through a table by syscall number (a probe per site made
 * every syscall call all of them: syscall.* is 700 sites).  The chains
 * are built before the probes are registered and cleared after they are
 * gone, so a hit reads them unlocked.
 */
static struct {
	struct stp_kprobe_live *first[2][NR_syscalls];	/* [0] enter, [1] exit: in site order */
	struct tracepoint *tp[2];
	bool on[2];
} stp_ksys;

static void stp_kmod_sys_run(int dir, long nr, void *rec)
{
	struct stp_kprobe_live *l;

	for (l = stp_ksys.first[dir][nr]; l; l = l->next_sys)
		stp_kmod_hit(l->site, NULL, NULL, rec);
}

static void stp_kmod_sys_enter(void *data, struct pt_regs *regs, long id)
{
	struct stp_sys_enter_rec r = { .ent.pid = current->pid, .nr = (int)id };

	if (id < 0 || id >= NR_syscalls || !stp_ksys.first[0][id] || in_compat_syscall())
		return;
	syscall_get_arguments(current, regs, r.args);
	stp_kmod_sys_run(0, id, &r);
}

static void stp_kmod_sys_exit(void *data, struct pt_regs *regs, long ret)
{
	struct stp_sys_exit_rec r = { .ent.pid = current->pid, .ret = ret };

	r.nr = syscall_get_nr(current, regs);
	if (r.nr < 0 || r.nr >= NR_syscalls || !stp_ksys.first[1][r.nr] || in_compat_syscall())
		return;
	stp_kmod_sys_run(1, r.nr, &r);
}

/* Add L, a syscall site whose number is known, at the end of its chain. */
static void stp_kmod_sys_chain(struct stp_kprobe_live *l)
{
	struct stp_kprobe_live **at = &stp_ksys.first[l->site->kind == STP_KSITE_SYS_EXIT][l->nr];

	while (*at)
		at = &(*at)->next_sys;
	l->next_sys = NULL;
	*at = l;
}

/* The two probes, for the directions that have sites; the error of the first that fails. */
static int stp_kmod_sys_register(void)
{
	static const char *const names[2] = { "sys_enter", "sys_exit" };
	void *const fns[2] = { (void *)stp_kmod_sys_enter, (void *)stp_kmod_sys_exit };

	for (int dir = 0; dir < 2; dir++) {
		struct stp_tp_find f = { names[dir], NULL };
		bool any = false;
		int err;

		for (int nr = 0; nr < NR_syscalls && !any; nr++)
			any = stp_ksys.first[dir][nr] != NULL;
		if (!any)
			continue;
		for_each_kernel_tracepoint(stp_kmod_tp_match, &f);
		if (!f.tp)
			return -ENOENT;
		err = tracepoint_probe_register(f.tp, fns[dir], NULL);
		if (err)
			return err;
		stp_ksys.tp[dir] = f.tp;
		stp_ksys.on[dir] = true;
	}
	return 0;
}

/* Unregister them; the chains are cleared after tracepoint_synchronize_unregister(). */
static bool stp_kmod_sys_unregister(void)
{
	void *const fns[2] = { (void *)stp_kmod_sys_enter, (void *)stp_kmod_sys_exit };
	bool any = false;

	for (int dir = 0; dir < 2; dir++) {
		if (!stp_ksys.on[dir])
			continue;
		tracepoint_probe_unregister(stp_ksys.tp[dir], fns[dir], NULL);
		stp_ksys.on[dir] = false;
		any = true;
	}
	return any;
}

/* The number of syscall EVENT (sys_enter_read...), or a negative error. */
static long stp_kmod_syscall_nr(const char *event)
{
	struct trace_event_file *file = trace_get_event_file(NULL, "syscalls", event);
	struct syscall_metadata *meta;
	long nr;

	if (IS_ERR(file))
		return PTR_ERR(file);
	meta = file->event_call->data;
	nr = meta ? meta->syscall_nr : -ENOENT;
	trace_put_event_file(file);
	return nr < 0 ? -ENOENT : nr;
}

#include "procfs.c"
#include "proc.c"

/* ---- registering ---- */

static int stp_kmod_register(struct stp_kprobe_live *l)
{
	const struct stp_ksite *site = l->site;
	struct stp_tp_find f = { site->name, NULL };

	switch (site->kind) {
	case STP_KSITE_TRACEPOINT:
		for_each_kernel_tracepoint(stp_kmod_tp_match, &f);
		if (!f.tp)
			return -ENOENT;
		l->tp = f.tp;
		return tracepoint_probe_register(f.tp, site->fn, (void *)site);
	case STP_KSITE_SYS_ENTER:
	case STP_KSITE_SYS_EXIT:	/* chained now, served once all are (stp_kmod_start()) */
		l->nr = stp_kmod_syscall_nr(site->name);
		if (l->nr < 0)
			return (int)l->nr;
		if (l->nr >= NR_syscalls)
			return -ERANGE;
		stp_kmod_sys_chain(l);
		return 0;
	case STP_KSITE_KPROBE:
	case STP_KSITE_KFUNC:
		memset(&l->kp, 0, sizeof(l->kp));
		if (site->name[0]) {
			l->kp.symbol_name = site->name;	/* "M:F" for module M's function */
			l->kp.offset = (unsigned int)site->offset;
		} else {			/* statement(ADDR).absolute: OFFSET is ADDR */
			l->kp.addr = (kprobe_opcode_t *)(uintptr_t)site->offset;
		}
		l->kp.pre_handler = site->kind == STP_KSITE_KFUNC ? stp_kmod_kfunc_hit
								 : stp_kmod_kprobe_hit;
		return register_kprobe(&l->kp);
	case STP_KSITE_KRETPROBE:
	case STP_KSITE_KFUNC_RETURN:
		memset(&l->krp, 0, sizeof(l->krp));
		l->krp.maxactive = site->maxactive;
		l->krp.kp.symbol_name = site->name;
		l->krp.kp.offset = (unsigned int)site->offset;	/* a module's F defined twice */
		if (site->kind == STP_KSITE_KFUNC_RETURN) {
			l->krp.entry_handler = stp_kmod_kfunc_entry;
			l->krp.handler = stp_kmod_kfunc_return_hit;
			l->krp.data_size = sizeof(uint64_t) * STP_KSITE_MAX_WORDS;
		} else {
			l->krp.handler = stp_kmod_kretprobe_hit;
		}
		return register_kretprobe(&l->krp);
	case STP_KSITE_PROFILE:
		return stp_kmod_profile_start(l);
	case STP_KSITE_PERF:
	case STP_KSITE_HWBKPT:
		return stp_kmod_perf_start(l);
	case STP_KSITE_UPROBE:
	case STP_KSITE_URETPROBE:
		return stp_kmod_uprobe_start(l);
	case STP_KSITE_PROCFS_READ:
	case STP_KSITE_PROCFS_WRITE:	/* made together once all are (stp_kmod_start()) */
		return 0;
	case STP_KSITE_PROC_EXEC:
	case STP_KSITE_PROC_EXIT:
		return stp_kproc_kprobe_start(l);
	case STP_KSITE_PROC_EXISTING:	/* walked on STP_KMOD_CMD_EXISTING (proc.c) */
		return 0;
	case STP_KSITE_NETFILTER:	/* as stap's module: the initial network namespace */
		memset(&l->nfo, 0, sizeof(l->nfo));
		l->nfo.hook = stp_kmod_nf_hit;
		l->nfo.priv = l;
		l->nfo.pf = (u_int8_t)site->nf_pf;
		l->nfo.hooknum = (unsigned int)site->nf_hook;
		l->nfo.priority = site->nf_priority;
		return nf_register_net_hook(&init_net, &l->nfo);
	}
	return -EINVAL;
}

/*
 * Hits a kprobe missed (a CPU already in a kprobe handler) and returns a
 * kretprobe missed (all its .maxactive instances in use: calls that
 * sleep, on many tasks), counted as skipped, as stap's module counts
 * them when it unregisters them.
 */
static void stp_kmod_add_missed(unsigned long missed)
{
	struct stp_counters *c;
	unsigned long flags;

	if (!missed)
		return;
	local_irq_save(flags);	/* no handler of this CPU counts meanwhile */
	c = stp_counters_get();
	if (c)
		c->skipped += missed;
	local_irq_restore(flags);
}

static void stp_kmod_unregister(struct stp_kprobe_live *l)
{
	if (!l->on)
		return;
	l->on = false;
	switch (l->site->kind) {
	case STP_KSITE_TRACEPOINT:
		tracepoint_probe_unregister(l->tp, l->site->fn, (void *)l->site);
		break;
	case STP_KSITE_SYS_ENTER:
	case STP_KSITE_SYS_EXIT:	/* the shared probes: stp_kmod_sys_unregister() */
		break;
	case STP_KSITE_KPROBE:
	case STP_KSITE_KFUNC:
	case STP_KSITE_PROC_EXEC:
	case STP_KSITE_PROC_EXIT:
		unregister_kprobe(&l->kp);
		stp_kmod_add_missed(l->kp.nmissed);
		break;
	case STP_KSITE_KRETPROBE:
	case STP_KSITE_KFUNC_RETURN:
		unregister_kretprobe(&l->krp);
		stp_kmod_add_missed((unsigned long)l->krp.nmissed + l->krp.kp.nmissed);
		break;
	case STP_KSITE_PROFILE:
		stp_kmod_profile_stop(l);
		break;
	case STP_KSITE_PERF:
	case STP_KSITE_HWBKPT:
		stp_kmod_perf_stop(l);
		break;
	case STP_KSITE_UPROBE:
	case STP_KSITE_URETPROBE:
		stp_kmod_uprobe_stop(l);
		break;
	case STP_KSITE_PROCFS_READ:
	case STP_KSITE_PROCFS_WRITE:	/* the files: stp_kprocfs_stop() */
	case STP_KSITE_PROC_EXISTING:
		break;
	case STP_KSITE_NETFILTER:	/* waits for the handlers running (synchronize_net) */
		nf_unregister_net_hook(&init_net, &l->nfo);
		break;
	}
}

static void stp_kmod_stop(void)
{
	bool tps = false;

	stp_kprocfs_stop();	/* no reader or writer runs a handler any more */
	tps = stp_kmod_sys_unregister();
	for (size_t i = 0; i < STP_KMOD_NSITES; i++) {
		tps |= stp_km.live[i].on && stp_km.live[i].site->kind == STP_KSITE_TRACEPOINT;
		stp_kmod_unregister(&stp_km.live[i]);
	}
	if (tps)
		tracepoint_synchronize_unregister();	/* no CPU is still in a handler */
	memset(stp_ksys.first, 0, sizeof(stp_ksys.first));
	stp_km.started = false;
}

/* ---- a module's functions: probed while the module is loaded ---- */

/* Is SITE a kprobe on a function of module MOD ("MOD:F"), or of any module (MOD NULL)? */
static bool stp_kmod_module_site(const struct stp_ksite *site, const char *mod)
{
	const char *colon = strchr(site->name, ':');

	if ((site->kind != STP_KSITE_KPROBE && site->kind != STP_KSITE_KRETPROBE &&
	     site->kind != STP_KSITE_KFUNC && site->kind != STP_KSITE_KFUNC_RETURN) || !colon)
		return false;	/* KFUNC: a module function typed by the module's BTF */
	return !mod || (strlen(mod) == (size_t)(colon - site->name) &&
			strncmp(site->name, mod, colon - site->name) == 0);
}

/*
 * As stap's module does: a module's function not there at the start
 * (the module not loaded: ENOENT) is probed when the module comes, and
 * let go when it goes (kprobes has disarmed it by then).  The notifier
 * is registered for the module's lifetime, outside stp_km.lock, which it
 * takes: a start or stop and a module's coming take turns.
 */
static int stp_kmod_module_event(struct notifier_block *nb, unsigned long state, void *data)
{
	struct module *mod = data;

	if (state != MODULE_STATE_COMING && state != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&stp_km.lock);
	for (size_t i = 0; stp_km.started && i < STP_KMOD_NSITES; i++) {
		struct stp_kprobe_live *l = &stp_km.live[i];

		if (!stp_kmod_module_site(l->site, mod->name))
			continue;
		if (state == MODULE_STATE_COMING && !l->on)
			l->on = stp_kmod_register(l) == 0;
		else if (state == MODULE_STATE_GOING)
			stp_kmod_unregister(l);
	}
	mutex_unlock(&stp_km.lock);
	return NOTIFY_DONE;
}

static struct notifier_block stp_kmod_module_nb = { .notifier_call = stp_kmod_module_event };

static bool stp_kmod_module_sites(void)
{
	for (size_t i = 0; i < STP_KMOD_NSITES; i++)
		if (stp_kmod_module_site(&stp_kmod_sites[i], NULL))
			return true;
	return false;
}

/* Every probe registered, or none (the reason in stp_km.error). */
static int stp_kmod_start(void)
{
	int err;

	for (size_t i = 0; i < STP_KMOD_NSITES; i++) {
		struct stp_kprobe_live *l = &stp_km.live[i];

		l->site = &stp_kmod_sites[i];
		err = stp_kmod_register(l);
		if (err == 0) {
			l->on = true;
			continue;
		}
		if (l->site->optional || (err == -ENOENT && stp_kmod_module_site(l->site, NULL)))
			continue;	/* a module's: when it comes (stp_kmod_module_event()) */
		snprintf(stp_km.error, sizeof(stp_km.error), "probe %d %s: error %d",
			 l->site->probe, l->site->name, -err);
		stp_kmod_stop();
		return err;
	}
	err = stp_kmod_sys_register();
	if (err) {
		snprintf(stp_km.error, sizeof(stp_km.error), "raw_syscalls: error %d", -err);
		stp_kmod_stop();
		return err;
	}
	err = stp_kprocfs_start();
	if (err) {
		stp_kmod_stop();
		return err;
	}
	stp_km.started = true;
	return 0;
}

/* ---- the device ---- */

static int stp_kmod_open(struct inode *inode, struct file *file)
{
	return capable(CAP_SYS_ADMIN) ? 0 : -EPERM;
}

/*
 * pmstap maps the segment read-write; pmdastap read-only, and such a
 * mapping stays so: mprotect() cannot make it writable (EACCES).
 */
static int stp_kmod_mmap(struct file *file, struct vm_area_struct *vma)
{
	if (vma->vm_pgoff != 0 || vma->vm_end - vma->vm_start > PAGE_ALIGN(stp_km.size))
		return -EINVAL;
	if (!(vma->vm_flags & VM_WRITE)) {
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
		vm_flags_clear(vma, VM_MAYWRITE);
#else
		vma->vm_flags &= ~VM_MAYWRITE;
#endif
	}
	return remap_vmalloc_range(vma, stp_km.mem, 0);
}

static ssize_t stp_kmod_read(struct file *file, char __user *buf, size_t n, loff_t *pos)
{
	char text[STP_KMOD_ERR + 64];
	int len = snprintf(text, sizeof(text), "size %llu\nerror %s\n",
			   (unsigned long long)stp_km.size, stp_km.error);

	return simple_read_from_buffer(buf, n, pos, text, len);
}

static ssize_t stp_kmod_write(struct file *file, const char __user *buf, size_t n, loff_t *pos)
{
	char cmd[16] = "";
	int err = 0;

	if (copy_from_user(cmd, buf, min(n, sizeof(cmd) - 1)))
		return -EFAULT;
	mutex_lock(&stp_km.lock);
	stp_km.error[0] = '\0';
	if (strcmp(strim(cmd), STP_KMOD_CMD_START) == 0) {
		err = stp_km.started ? -EBUSY : stp_kmod_start();
		if (!err)
			stp_kproc_note_runner();
	}
	else if (strcmp(strim(cmd), STP_KMOD_CMD_STOP) == 0)
		stp_kmod_stop();
	else if (strcmp(strim(cmd), STP_KMOD_CMD_EXISTING) == 0 && stp_km.started)
		stp_kproc_existing();
	else
		err = -EINVAL;
	mutex_unlock(&stp_km.lock);
	return err ? err : (ssize_t)n;
}

/*
 * The function K names, on this CPU's context with preemption off, as a
 * kernel probe runs it; its string arguments and results in S: the
 * arguments', then the result's, then the message's buffer.
 */
static long stp_kmod_call_run(struct stp_kmod_call *k, char (*s)[MAXSTRINGLEN])
{
	struct context *c;
	uint32_t cpu;
	long err;

	preempt_disable();
	cpu = smp_processor_id();
	c = stp_ctx_hold(cpu);
	if (!c) {
		preempt_enable();
		return -EBUSY;
	}
	c->probe = U32_MAX;
	stp_ctx_reset(c);
	err = stp_kmod_ucall(c, k, s, s[STP_KMOD_CALL_MAXARGS]);
	k->error = c->error;
	strscpy(s[STP_KMOD_CALL_MAXARGS + 1], c->errmsg, MAXSTRINGLEN);
	stp_ctx_release(c);
	preempt_enable();
	return err;
}

/* A result string BUF to user address TO (0: none wanted). */
static int stp_kmod_call_out(__u64 to, const char *buf)
{
	if (!to)
		return 0;
	return copy_to_user(u64_to_user_ptr(to), buf, strnlen(buf, MAXSTRINGLEN - 1) + 1) ?
		-EFAULT : 0;
}

static long stp_kmod_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	char (*s)[MAXSTRINGLEN];
	struct stp_kmod_call k;
	long err = 0;

	if (cmd != STP_KMOD_IOC_CALL)
		return -ENOTTY;
	if (copy_from_user(&k, (void __user *)arg, sizeof(k)))
		return -EFAULT;
	s = kvzalloc((STP_KMOD_CALL_MAXARGS + 2) * MAXSTRINGLEN, GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	for (int i = 0; i < STP_KMOD_CALL_MAXARGS && !err; i++)
		if (k.strs[i] && strncpy_from_user(s[i], u64_to_user_ptr(k.strs[i]),
						   MAXSTRINGLEN - 1) < 0)
			err = -EFAULT;
	if (!err)
		err = stp_kmod_call_run(&k, s);
	if (!err)
		err = stp_kmod_call_out(k.ret_str, s[STP_KMOD_CALL_MAXARGS]);
	if (!err)
		err = stp_kmod_call_out(k.errmsg, s[STP_KMOD_CALL_MAXARGS + 1]);
	if (!err && copy_to_user((void __user *)arg, &k, sizeof(k)))
		err = -EFAULT;
	kvfree(s);
	return err;
}

static int stp_kmod_release(struct inode *inode, struct file *file)
{
	mutex_lock(&stp_km.lock);
	if (stp_km.started)
		stp_kmod_stop();
	mutex_unlock(&stp_km.lock);
	return 0;
}

static const struct file_operations stp_kmod_fops = {
	.owner = THIS_MODULE,
	.open = stp_kmod_open,
	.mmap = stp_kmod_mmap,
	.read = stp_kmod_read,
	.write = stp_kmod_write,
	.unlocked_ioctl = stp_kmod_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.release = stp_kmod_release,
	.llseek = noop_llseek,
};

/* ---- load and unload ---- */

/* The runtime headers' maps: a header that declares one adds it here. */
static struct stp_dmap_ref *const stp_kmod_runtime_maps[] = {
	&stp_control, &stp_counters, &stp_probe_stats, &stp_events, &stp_ctx, &stp_rt_map,
#ifdef STP_PROC_BPF_H
	&stp_proc_exes,
#endif
#ifdef STP_STACK_BPF_H
	&stp_stack_bufs, &stp_umaps, &stp_umod_bufs,
#endif
};

#define STP_KMOD_NRT ARRAY_SIZE(stp_kmod_runtime_maps)

/* Map I of the module: the runtime's, then the script's; NULL past the last. */
static struct stp_dmap_ref *stp_kmod_map(int i)
{
	if (i < (int)STP_KMOD_NRT)
		return stp_kmod_runtime_maps[i];
	return stp_kmod_script_maps[i - STP_KMOD_NRT];
}

/* The maps as definitions (a ring buffer's size rounded up as BPF's). */
static struct stp_dmap_def *stp_kmod_defs(int *n)
{
	struct stp_dmap_def *defs;

	for (*n = 0; stp_kmod_map(*n); ++*n)
		;
	defs = kcalloc(*n + 1, sizeof(*defs), GFP_KERNEL);
	for (int i = 0; defs && i < *n; i++) {
		defs[i] = stp_kmod_map(i)->def;
		if (defs[i].type == BPF_MAP_TYPE_RINGBUF)
			defs[i].max_entries = roundup_pow_of_two(max_t(uint32_t, defs[i].max_entries,
								       STP_DMAP_MIN_RING));
	}
	return defs;
}

/* Each map of the section, found in the segment: where its handlers address it. */
static void stp_kmod_bind(int n)
{
	for (int i = 0; i < n; i++) {
		struct stp_dmap_ref *r = stp_kmod_map(i);

		r->m = stp_dseg__map(stp_km.seg, r->def.name);
		r->base = stp_dmap__array(r->m, &r->vsize, &r->stride);
	}
}

static int stp_kmod_segment(void)
{
	char err[128] = "";
	struct stp_dmap_def *defs;
	int n;

	if (nr_cpu_ids > STP_NCPUS) {
		pr_err("%s: built for %d CPUs, this machine has %u\n", THIS_MODULE->name,
		       STP_NCPUS, nr_cpu_ids);
		return -EINVAL;
	}
	defs = stp_kmod_defs(&n);
	if (!defs)
		return -ENOMEM;
	stp_km.size = stp_dseg__size(defs, n, STP_NCPUS, err, sizeof(err));
	stp_km.mem = stp_km.size ? vmalloc_user(PAGE_ALIGN(stp_km.size)) : NULL;
	if (stp_km.mem)
		stp_km.seg = stp_dseg__create_at(stp_km.mem, stp_km.size, defs, n, STP_NCPUS,
						 err, sizeof(err));
	kfree(defs);
	if (!stp_km.seg) {
		pr_err("%s: cannot lay out the script's maps: %s\n", THIS_MODULE->name,
		       err[0] ? err : "out of memory");
		vfree(stp_km.mem);
		return -ENOMEM;
	}
	stp_kmod_bind(n);
	return 0;
}

static int __init stp_kmod_init(void)
{
	int err;

	mutex_init(&stp_km.lock);
#ifdef STP_STACK_BPF_H
	stp__umod_init();
#endif
	err = stp_kmod_segment();
	if (err)
		return err;
	stp_km.dev.minor = MISC_DYNAMIC_MINOR;
	stp_km.dev.name = THIS_MODULE->name;
	stp_km.dev.fops = &stp_kmod_fops;
	stp_km.dev.mode = 0600;
	err = misc_register(&stp_km.dev);
	if (err) {
		stp_dseg__free(stp_km.seg);
		vfree(stp_km.mem);
	} else if (stp_kmod_module_sites()) {
		register_module_notifier(&stp_kmod_module_nb);
	}
	return err;
}

static void __exit stp_kmod_exit(void)
{
	if (stp_kmod_module_sites())
		unregister_module_notifier(&stp_kmod_module_nb);
	misc_deregister(&stp_km.dev);
	if (stp_km.started)
		stp_kmod_stop();
	stp_dseg__free(stp_km.seg);
	vfree(stp_km.mem);
#ifdef STP_STACK_BPF_H
	stp__umod_sync();
#endif
}

module_init(stp_kmod_init);
module_exit(stp_kmod_exit);
