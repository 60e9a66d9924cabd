/*
 * stp_kmod.h - the BPF helpers that kernel-context code calls, in a
 * kernel module (--runtime=kernel).
 *
 * The kernel runtime compiles the handlers the kernel-context emitter
 * writes (script.kmod.c: the script.bpf.c of BPF, with STP_KMOD
 * defined) into a module with kbuild, against the kernel's own headers;
 * runtime/bpf/stp.bpf.h includes this file in place of vmlinux.h and
 * libbpf's headers, so every rule of the BPF runtime (errors, MAXACTION,
 * statistics, records) is written once:
 *
 *  - maps: STP_MAP/STP_QUEUE/STP_RINGBUF declare a struct stp_dmap_ref,
 *    listed by the generated file (the script's) and stp_kmod_main.h
 *    (the runtime's, which every header declaring one adds to: the
 *    kernel links no section bounds into a module to find them by);
 *    the module lays them out in one segment
 *    (dyninst/dmap.h) of vmalloc_user() memory when it loads, which
 *    pmstap maps from the module's device: the same data interface as
 *    the dyninst runtime's shared segment, "per CPU" meaning per CPU.
 *  - memory is read with the kernel's fault-safe copies: a fault is an
 *    error the handler reports, never an oops; BPF_CORE_READ is a chain
 *    of such reads on the structures of the headers the module is built
 *    against.
 *  - stacks: the kernel's, from stack_trace_save(); a user's, walked by
 *    its frame pointers as BPF's.
 */
#ifndef STP_KMOD_H
#define STP_KMOD_H

#include <stdint.h>	/* kmod/libc's, for the runtime headers shared with user space */
/* the types kernel-context code may name ($vars, @cast): the common ones */
#include <linux/binfmts.h>
#include <linux/blkdev.h>
#include <linux/cred.h>
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/net.h>
#include <linux/netdevice.h>
#include <linux/netfilter.h>
/* the headers netfilter probes read, as stap's module includes them */
#include <linux/if_arp.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <linux/skbuff.h>
#include <linux/socket.h>
#include <net/sock.h>

#include <linux/fdtable.h>
#include <linux/fs_struct.h>
#include <linux/irq_work.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/smp.h>
#include <linux/sort.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <uapi/linux/bpf.h>
#include <uapi/linux/bpf_perf_event.h>

#include "../dyninst/dmap.h"

#define __noinline noinline
#define SEC(name)
#define STP_SERVICE static __always_inline __maybe_unused

/* ---- maps ---- */

#define STP_DMAP_REF(name_, type_, ksize_, vsize_, entries_, flags_)			\
	static struct stp_dmap_ref name_ = { { #name_, (type_), (ksize_), (vsize_),	\
					       (entries_), (flags_) }, NULL, NULL, 0, 0 }

/* Handlers run with preemption off (kprobes, tracepoints): the CPU is the slot. */
#define STP_SLOT() ((uint32_t)raw_smp_processor_id())
#include "../stp_bpf_native.h"
#include "../stp_notes.h"

/* ---- what BPF cannot run: sorted foreach (translator/emit_kmod_data.c) ---- */

/* An element a sorted foreach collected: pointers into its map (elements never move). */
struct stp_kmod_item {
	const void *key;
	void *val;
};

#define stp_kmod_sign(r) ((int)(((r) > 0) - ((r) < 0)))

/* matched(): a regular expression's NFA as a program (stp_kmod_regex.h) */
struct stp_kmod_re_insn {
	int8_t kind;		/* translator/regex_dfa.c's enum nfa_kind */
	int16_t out1, out2;	/* next states; SPLIT: out1 preferred; -1 none */
	int16_t arg;		/* SET: its byte set; SAVE: its capture slot */
};

struct stp_kmod_re {
	const struct stp_kmod_re_insn *prog;
	const uint64_t (*sets)[4];
	int16_t n, start, ngroups;	/* ngroups counts the whole match */
};

#ifndef STP_KMOD_RE_STATES
#define STP_KMOD_RE_STATES 1
#endif
#define STP_KMOD_RE_GROUPS 10	/* subexpressions kept, the whole match included */
#define STP_KMOD_RE_STACK (3 * STP_KMOD_RE_STATES + 4)

struct stp_kmod_re_thread {
	int16_t pc;
	int16_t caps[2 * STP_KMOD_RE_GROUPS];
};

struct stp__re_entry {
	int16_t pc;		/* a state to visit, or -1: restore caps[slot] = val */
	int16_t slot, val;
};

struct stp_kmod_re_vm {
	struct stp_kmod_re_thread threads[2][STP_KMOD_RE_STATES];
	uint32_t mark[STP_KMOD_RE_STATES];
	uint32_t gen;
	struct stp__re_entry stack[STP_KMOD_RE_STACK];
};

/* ---- the probes: the generated file's table (stp_kmod_sites), read by stp_kmod_main.h ---- */

enum stp_ksite_kind {
	STP_KSITE_TRACEPOINT,	/* NAME: a tracepoint of the kernel; FN its typed probe */
	STP_KSITE_KPROBE,	/* NAME+OFFSET: a kprobe; NAME "": at address OFFSET */
	STP_KSITE_KRETPROBE,	/* NAME: a kretprobe */
	STP_KSITE_KFUNC,	/* NAME's entry: its WORDS argument words, fentry's way */
	STP_KSITE_KFUNC_RETURN,	/* NAME's return: its arguments, then the value, fexit's way */
	STP_KSITE_PROFILE,	/* timer.profile: a per-CPU hrtimer each tick, the sample's registers */
	STP_KSITE_SYS_ENTER,	/* syscalls:NAME: raw_syscalls:sys_enter for its number; its record */
	STP_KSITE_SYS_EXIT,	/* syscalls:NAME: raw_syscalls:sys_exit for its number; its record */
	STP_KSITE_UPROBE,	/* NAME (a file) + OFFSET: a uprobe, in every process of the file */
	STP_KSITE_URETPROBE,	/* the same, at the function's return */
	STP_KSITE_PERF,		/* perf.sw.* / perf.type(1): a software perf event on each CPU;
				   PERF_TYPE, PERF_CONFIG, every PERF_PERIOD events a sample */
	STP_KSITE_PROCFS_READ,	/* NAME: /proc/systemtap/MODULE/NAME, its reader's handler */
	STP_KSITE_PROCFS_WRITE,	/* the same, a writer's (a file may have both) */
	STP_KSITE_NETFILTER,	/* a netfilter hook of init_net: NF_PF, NF_HOOK, NF_PRIORITY;
				   the handler's return value is the verdict */
	STP_KSITE_PROC_EXEC,	/* process.end at an exec: a kprobe at NAME (begin_new_exec),
				   the handler's arguments sched_prepare_exec's (proc.c) */
	STP_KSITE_PROC_EXIT,	/* process.end at an exit: a kprobe at NAME (taskstats_exit),
				   the handler's arguments sched_process_exit's (proc.c) */
	STP_KSITE_PROC_EXISTING,	/* process/thread.begin: each task that runs already, once
					   pmstap says STP_KMOD_CMD_EXISTING (proc.c) */
	STP_KSITE_HWBKPT,	/* kernel.data: a breakpoint on each CPU at OFFSET (an address),
				   or at symbol NAME's; BP_TYPE, BP_LEN; every hit a sample */
};

#define STP_KSITE_MAX_WORDS 12	/* arguments of a function: BPF's MAX_BPF_FUNC_ARGS */

struct stp_ksite {
	int probe;			/* index in stp_meta.probes; -1 ends the table */
	enum stp_ksite_kind kind;
	const char *name;
	uint64_t offset;
	int words;
	void *fn;			/* a tracepoint's probe: void (void *site, args...) */
	int (*handler)(void *ctx);	/* probe_N: raw tracepoint args, a record, pt_regs, a sample */
	bool optional;			/* probe point?: not there is no error */
	uint32_t perf_type;
	uint64_t perf_config, perf_period;
	uint32_t procfs_mode;		/* a procfs site's file: its mode, as stap computes it */
	uint32_t procfs_size;		/* its buffer: .maxsize(N), else MAXSTRINGLEN */
	int32_t nf_pf, nf_hook, nf_priority;	/* a netfilter site's hook */
	uint64_t ref_ctr_offset;	/* a uprobe's: its .mark's semaphore in the file, or 0 */
	uint32_t bp_type, bp_len;	/* a breakpoint's: HW_BREAKPOINT_W/RW, _LEN_1/2/4/8 */
	int maxactive;			/* a kretprobe's .maxactive(N), or 0: the kernel's default */
};

/* A tracepoint's typed probe calls this with its arguments as 64-bit words. */
static void stp_kmod_run_tp(void *site, uint64_t *args);

/* The typed probes of the sched tracepoints: process.begin/end, thread.begin/end (proc.c). */
static void stp_kproc_fork(void *site, struct task_struct *parent, struct task_struct *child);
static void stp_kproc_exec(void *site, struct task_struct *p, pid_t old_pid,
			   struct linux_binprm *bprm);
static void stp_kproc_exit(void *site, struct task_struct *p);

/* ---- memory ---- */

static inline long bpf_probe_read_kernel(void *dst, uint32_t n, const void *src)
{
	if (copy_from_kernel_nofault(dst, src, n) == 0)
		return 0;
	memset(dst, 0, n);
	return -EFAULT;
}

static inline long bpf_probe_read_user(void *dst, uint32_t n, const void *src)
{
	if (copy_from_user_nofault(dst, (const void __user *)src, n) == 0)
		return 0;
	memset(dst, 0, n);
	return -EFAULT;
}

static inline long bpf_probe_read_kernel_str(void *dst, uint32_t n, const void *src)
{
	return stp__read_str(dst, n, src, bpf_probe_read_kernel);
}

static inline long bpf_probe_read_user_str(void *dst, uint32_t n, const void *src)
{
	return stp__read_str(dst, n, src, bpf_probe_read_user);
}

static inline long bpf_probe_write_user(void *dst, const void *src, uint32_t n)
{
	return copy_to_user_nofault((void __user *)dst, src, n) == 0 ? 0 : -EFAULT;
}

/*
 * SIZE (1, 2, 4 or 8) bytes at SRC to kernel address DST, 0 or -EFAULT:
 * copy_to_kernel_nofault()'s steps, with first the address check that
 * copy_from_kernel_nofault() makes and it does not (x86's
 * copy_from_kernel_nofault_allowed(), not exported): a store to a user
 * address (0, say) under SMAP is an oops, not a fault the exception table
 * fixes (stap 4.8's set_kernel_long(0, 1) oopses 6.1 so).  Guru mode's
 * writes (stp_guru.h, set_kernel_*()).
 */
static inline int stp_kmod_write_kernel(void *dst, const void *src, size_t size)
{
	unsigned long a = (unsigned long)dst;

	if (a < TASK_SIZE_MAX + PAGE_SIZE || !__is_canonical_address(a, boot_cpu_data.x86_virt_bits))
		return -EFAULT;
	pagefault_disable();
	switch (size) {
	case 1: __put_kernel_nofault(dst, src, u8, fault); break;
	case 2: __put_kernel_nofault(dst, src, u16, fault); break;
	case 4: __put_kernel_nofault(dst, src, u32, fault); break;
	case 8: __put_kernel_nofault(dst, src, u64, fault); break;
	default: goto fault;
	}
	pagefault_enable();
	return 0;
fault:
	pagefault_enable();
	return -EFAULT;
}

static inline long bpf_strncmp(const char *s1, uint32_t n, const char *s2)
{
	return strncmp(s1, s2, n);
}

/*
 * CO-RE reads, on the structures of the headers the module is built
 * against: each step a fault-safe copy (a bad pointer reads as 0).
 */
#define __builtin_preserve_access_index(x) (x)
#define bpf_core_field_exists(field) 1

#define preserve_access_index unused	/* BPF's flavour structs: plain structs here */
#define bpf_core_read(dst, size, src) bpf_probe_read_kernel((dst), (size), (src))
#define stp__kread(p)									\
	({										\
		union {									\
			typeof(*(p)) v;							\
			char b[sizeof(*(p))];	/* written even when v is const */	\
		} stp_u_;								\
		if (copy_from_kernel_nofault(stp_u_.b, (p), sizeof(stp_u_.b)))		\
			memset(stp_u_.b, 0, sizeof(stp_u_.b));				\
		stp_u_.v;								\
	})
#define stp__cr1(s, a) stp__kread(&(s)->a)
#define stp__cr2(s, a, b) ({ typeof((s)->a) stp_p2_ = stp__cr1(s, a); stp__cr1(stp_p2_, b); })
#define stp__cr3(s, a, b, c) ({ typeof((s)->a) stp_p3_ = stp__cr1(s, a); stp__cr2(stp_p3_, b, c); })
#define stp__cr4(s, a, b, c, d)								\
	({ typeof((s)->a) stp_p4_ = stp__cr1(s, a); stp__cr3(stp_p4_, b, c, d); })
#define stp__cr_pick(_1, _2, _3, _4, name, ...) name
#define BPF_CORE_READ(s, ...)								\
	stp__cr_pick(__VA_ARGS__, stp__cr4, stp__cr3, stp__cr2, stp__cr1)(s, __VA_ARGS__)

/* ---- the task and the CPU ---- */

static inline uint32_t bpf_get_smp_processor_id(void)
{
	return STP_SLOT();
}

static inline uint64_t bpf_get_current_pid_tgid(void)
{
	return (uint64_t)current->tgid << 32 | (uint32_t)current->pid;
}

static inline uint64_t bpf_get_current_uid_gid(void)
{
	const struct cred *cred = current_cred();

	return (uint64_t)from_kgid(&init_user_ns, cred->gid) << 32 |
	       from_kuid(&init_user_ns, cred->uid);
}

static inline long bpf_get_current_comm(void *out, uint32_t n)
{
	if (n)
		strscpy(out, current->comm, n);
	return 0;
}

static inline uint64_t bpf_get_current_task(void)
{
	return (uint64_t)(uintptr_t)current;
}

static inline struct task_struct *bpf_get_current_task_btf(void)
{
	return current;
}

static inline struct pt_regs *bpf_task_pt_regs(struct task_struct *t)
{
	return task_pt_regs(t);
}

/*
 * The probe's address, set by the wrappers: the kprobe's; in a .return the
 * return address, as stap's addr() (the kretprobe trampoline has put it in
 * regs->ip by then).
 */
DECLARE_PER_CPU(uint64_t, stp_kmod_func_ip);

static inline uint64_t bpf_get_func_ip(void *ctx)
{
	return this_cpu_read(stp_kmod_func_ip);
}

/*
 * The registers of a kprobe's hit (kprobe.function, kernel.function and
 * their .return: the probed function's, for register() and int_arg()) or
 * of a timer.profile sample (the interrupted code's), NULL in the other
 * probes; set by the wrappers as stp_kmod_func_ip.
 */
DECLARE_PER_CPU(struct pt_regs *, stp_kmod_regs);

static inline struct pt_regs *stp_kmod_kregs(void)
{
	return this_cpu_read(stp_kmod_regs);
}

/* The registers' side: the kernel's (a kprobe's), or a user's (a sample's in user code). */
static inline bool stp_kmod_kregs_kernel(void)
{
	struct pt_regs *r = stp_kmod_kregs();

	return r && !user_mode(r);
}

static inline uint64_t bpf_ktime_get_ns(void)
{
	return ktime_get_mono_fast_ns();
}

static inline uint64_t bpf_ktime_get_tai_ns(void)
{
	return ktime_get_tai_fast_ns();
}

static inline uint64_t bpf_jiffies64(void)
{
	return get_jiffies_64();
}

static inline uint32_t bpf_get_prandom_u32(void)
{
	return get_random_u32();
}

/* printk() of the script goes to the kernel's log, as in stap's module runtime. */
#define bpf_printk(fmt, level, msg) printk("%s", (msg))

/* The tapset services' scratch words (the stp_tapset_vars map of BPF): per CPU. */
struct stp__vars_mem {
	uint64_t words[16];
};

DECLARE_PER_CPU(struct stp__vars_mem, stp_kmod_vars);

static inline void *stp__vars(void)
{
	struct stp__vars_mem *v = this_cpu_ptr(&stp_kmod_vars);

	memset(v, 0, sizeof(*v));
	return v;
}

/* ---- stacks ---- */

#define BPF_F_USER_STACK	(1ULL << 8)
#define BPF_F_USER_BUILD_ID	(1ULL << 11)

/*
 * The current task's user stack: as BPF's (perf_callchain_user() of x86),
 * the address it entered the kernel from (a uprobe's: the probed one),
 * then the return addresses of its frame-pointer chain; none for a
 * kernel thread or a 32-bit task.  The kernel does not export
 * stack_trace_save_user().
 */
static inline uint32_t stp_kmod_ustack(unsigned long *ips, uint32_t max)
{
	struct pt_regs *regs = task_pt_regs(current);
	unsigned long fp, frame[2];	/* the saved frame pointer, the return address */
	uint32_t n = 0;

	if (!current->mm || (current->flags & PF_KTHREAD) || !max || !user_mode(regs) ||
	    !user_64bit_mode(regs))
		return 0;
	ips[n++] = instruction_pointer(regs);
	for (fp = regs->bp; n < max && fp; fp = frame[0]) {
		if (copy_from_user_nofault(frame, (const void __user *)fp, sizeof(frame)) ||
		    !frame[1])
			break;
		ips[n++] = frame[1];
	}
	return n;
}

/*
 * The GNU build id of the ELF file whose offset 0 is mapped at BIAS in
 * the current process, into ID (zero-padded): read from the process's
 * memory, as the kernel's build_id_parse() reads the page cache (it is
 * not exported): the ELF header, its program headers, the notes of a
 * PT_NOTE segment, each with copy_from_user_nofault() (a page not present
 * fails), the notes walked by stp_notes_build_id().  False where it is
 * not there.
 */
static inline bool stp_kmod_build_id(unsigned long bias, unsigned char *id)
{
	unsigned char notes[STP_NOTES_MAX];
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	if (copy_from_user_nofault(&eh, (const void __user *)bias, sizeof(eh)) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(ph))
		return false;
	for (int i = 0; i < eh.e_phnum && i < 32; i++) {
		size_t len;

		if (copy_from_user_nofault(&ph, (const void __user *)(bias + eh.e_phoff +
								       i * sizeof(ph)), sizeof(ph)))
			return false;
		if (ph.p_type != PT_NOTE)
			continue;
		len = min_t(size_t, ph.p_filesz, sizeof(notes));
		if (!copy_from_user_nofault(notes, (const void __user *)(bias + ph.p_offset), len) &&
		    stp_notes_build_id(notes, len, id, BPF_BUILD_ID_SIZE))
			return true;
	}
	return false;
}

/*
 * BPF_F_USER_BUILD_ID: each of the N frames of IPS as the file mapped
 * there and its offset in it (by build id), else its address, into IDS,
 * so that a process gone by the time its stack is named is named from
 * its files (stp__umaps_note(), runtime/user/symbolize_umaps.c).  In
 * process context only (the mm's lock, taken if free, must be let go
 * here); elsewhere every frame is an address.
 */
static inline void stp_kmod_build_ids(struct bpf_stack_build_id *ids, const unsigned long *ips,
				      uint32_t n)
{
	struct mm_struct *mm = current->mm;
	unsigned long last = 0;
	unsigned char id[BPF_BUILD_ID_SIZE];
	bool have = false;

	for (uint32_t i = 0; i < n; i++) {
		memset(&ids[i], 0, sizeof(ids[i]));
		ids[i].status = BPF_STACK_BUILD_ID_IP;
		ids[i].ip = ips[i];
	}
	if (!mm || in_interrupt() || irqs_disabled() || !mmap_read_trylock(mm))
		return;
	for (uint32_t i = 0; i < n; i++) {
		struct vm_area_struct *vma = vma_lookup(mm, ips[i]);
		unsigned long bias;

		if (!vma || !vma->vm_file)
			continue;
		bias = vma->vm_start - (vma->vm_pgoff << PAGE_SHIFT);
		if (bias != last) {	/* frames of one file come together */
			last = bias;
			have = stp_kmod_build_id(bias, id);
		}
		if (!have)
			continue;
		memcpy(ids[i].build_id, id, sizeof(id));
		ids[i].offset = ips[i] - bias;
		ids[i].status = BPF_STACK_BUILD_ID_VALID;
	}
	mmap_read_unlock(mm);
}

/*
 * The current task's stack as addresses: its kernel stack, or with
 * BPF_F_USER_STACK its user one (stp_kmod_ustack()), with
 * BPF_F_USER_BUILD_ID too as build ids and offsets (stp_kmod_build_ids()).
 */
static inline long bpf_get_task_stack(struct task_struct *task, void *buf, uint32_t size,
				      uint64_t flags)
{
	unsigned long *ips = buf, frames[64];
	uint32_t max = size / sizeof(*ips), n;

	if (flags & BPF_F_USER_BUILD_ID) {
		max = min_t(uint32_t, size / sizeof(struct bpf_stack_build_id), ARRAY_SIZE(frames));
		n = stp_kmod_ustack(frames, max);
		stp_kmod_build_ids(buf, frames, n);
		return (long)(n * sizeof(struct bpf_stack_build_id));
	}
	n = flags & BPF_F_USER_STACK ? stp_kmod_ustack(ips, max) : stack_trace_save(ips, max, 0);
	memset(ips + n, 0, (max - n) * sizeof(*ips));
	return (long)(n * sizeof(*ips));
}

#endif
