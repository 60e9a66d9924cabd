/*
 * stp_proc.bpf.h - process.begin/end and thread.begin/end in kernel
 * context: which task a hit is about, and the filters of
 * process("PATH") and process(PID).
 *
 * Each such probe is one raw tracepoint program that the runner attaches
 * to the sched tracepoints its kind needs (runtime/user/proc_attach.c):
 *
 *	process.begin	sched_process_fork (a new thread group: the child)
 *			and sched_process_exec (the task, with its new image)
 *	process.end	sched_process_exit of the group's last thread
 *	thread.begin	sched_process_fork of a thread that is not a leader
 *	thread.end	sched_process_exit of a thread that is not a leader
 *
 * The program tells fork from exec by its arguments: fork passes
 * (parent, child), two task pointers; exec passes (task, old_pid, bprm),
 * and a pid is never a kernel address.
 *
 * process.end also fires when a process execs, for its old image, as
 * stap's does: its program is attached to sched_prepare_exec too (Linux
 * 6.10 and later), which passes (task, bprm) while the task still has
 * its old executable and name; an exit passes (task, group_dead).
 *
 * Processes that run already when the script starts get process.begin
 * once each (threads other than a leader, thread.begin), as stap's
 * startup does: the handler of such a probe is also a BPF task iterator
 * (SEC("iter/task"), emitted by translator/emit_proc.c) that the runner
 * runs once after the begin probes (proc_attach.c).  The iterator hands
 * the handler (task, STP_PROC_EXISTING) as if it were a tracepoint's
 * arguments; the prologue then leaves out kernel threads, exiting
 * tasks, tasks born once the handlers run (their fork is a hit of its
 * own) and, with -c, the runner's child that has not exec'd the
 * command yet.
 *
 * During a hit, pid(), tid(), execname() and the other task services of
 * tapset.bpf.h read the task the hit is about (the child of a fork), not
 * the current one: stp_proc_begin() notes it per CPU with the probe's
 * index, and stp__task() finds it only while that probe runs.
 *
 * process.syscall and process.syscall.return (stap's utrace probes) are
 * raw tracepoint programs on raw_syscalls' sys_enter and sys_exit, one a
 * probe: the hit's task is the current one, kept by the same filters.
 * $syscall, $argN and $return read the task's user registers, where the
 * syscall's number, arguments and (at the exit) return value are, as
 * stap's _utrace_syscall_nr(), _arg() and _return() read them.
 *
 * Included by tapset.bpf.h after stp_rt, before the services.
 */
#ifndef STP_PROC_BPF_H
#define STP_PROC_BPF_H

/* What a probe is about: its kind, as the generated code passes it. */
enum stp_proc_kind {
	STP_PROC_BEGIN,
	STP_PROC_END,
	STP_THREAD_BEGIN,
	STP_THREAD_END,
	STP_PROC_SYSCALL,	/* process.syscall and .return: the current task */
};

/* Per probe, filled by the runner at attach time (proc_attach.c). */
struct stp_proc_exe {
	uint64_t dev;		/* process("PATH"): PATH's file, the kernel's dev_t */
	uint64_t ino;		/* (major << 20 | minor) and inode; 0: no PATH */
	uint64_t since;		/* CLOCK_MONOTONIC ns: the iterator leaves out tasks born since */
	uint64_t skip_dev;	/* -c: the runner's own executable, which the */
	uint64_t skip_ino;	/* command's process has until it execs; 0: none */
};

/* The second "argument" the task iterator passes: not a pid, not an address. */
#define STP_PROC_EXISTING 0xffffffffULL

/* What a hit is. */
enum stp_proc_hit {
	STP_HIT_EVENT,		/* fork, exec or exit */
	STP_HIT_EXEC_END,	/* sched_prepare_exec: the old image ends */
	STP_HIT_EXISTING,	/* a task of the iterator: it ran already */
};

STP_MAP(stp_proc_exes, BPF_MAP_TYPE_ARRAY, uint32_t, struct stp_proc_exe, STP_NPROBES, 0);

/*
 * Per CPU: the probe running and the task it is about.  The task is kept
 * as void *: a global whose type names struct task_struct makes clang emit
 * debug info for the ~1,700 kernel types it reaches, a third of the time
 * of every compile.
 */
struct stp_proc_task {
	uint64_t probe;
	void *task;
};

struct stp_proc_task stp_proc_tasks[STP_NCPUS];

/*
 * The task fields the common services read (pid(), tid(), ppid(),
 * execname(), pexecname()), as a CO-RE flavour of struct task_struct
 * that has only them.  For the same reason as above: a handler that
 * names struct task_struct (a variable, a cast, an inlined function's
 * type) costs its compile 0.1 s of CPU, and execname() or pid() made 4
 * of pmdastap's 9 default scripts pay it.  The module reads the kernel's
 * own struct (flavours are BPF's).
 */
#ifdef STP_KMOD
#define stp_task_s task_struct
#define stp_current_task() ((struct task_struct *)bpf_get_current_task())
#else
struct task_struct___stp {
	int pid;
	int tgid;
	char comm[16];
	struct task_struct___stp *real_parent;
} __attribute__((preserve_access_index));

#define stp_task_s task_struct___stp
/* not bpf_get_current_task_btf(): its prototype names struct task_struct */
#define stp_current_task() ((struct task_struct___stp *)bpf_get_current_task())
#endif

static __always_inline struct stp_task_s *stp__task(struct context *c)
{
	uint32_t cpu = bpf_get_smp_processor_id();

	if (c && cpu < STP_NCPUS && stp_proc_tasks[cpu].task && stp_proc_tasks[cpu].probe == c->probe)
		return (struct stp_task_s *)stp_proc_tasks[cpu].task;
	return NULL;
}

static __always_inline bool stp_proc_file_is(struct task_struct *t, uint64_t dev, uint64_t ino)
{
	struct file *exe = BPF_CORE_READ(t, mm, exe_file);
	struct inode *in;

	if (!ino || !exe)
		return false;
	in = BPF_CORE_READ(exe, f_inode);
	return BPF_CORE_READ(in, i_ino) == ino && (uint64_t)BPF_CORE_READ(in, i_sb, s_dev) == dev;
}

static __always_inline bool stp_proc_exe_is(struct task_struct *t, uint32_t probe)
{
	struct stp_proc_exe *want = bpf_map_lookup_elem(&stp_proc_exes, &probe);

	return want && stp_proc_file_is(t, want->dev, want->ino);
}

/*
 * A process("PATH").library("LIB") uprobe's hit: LIB's uprobe fires in
 * every process that maps it, the probe's in PATH's only (stap's task
 * finder gives it PATH's processes).  The runner noted PATH's file at the
 * probe's index (runtime/user/proc_attach.c, stp_proc_note_libraries()).
 */
static __always_inline bool stp_proc_library_hit(uint32_t probe)
{
	struct stp_proc_exe *want = bpf_map_lookup_elem(&stp_proc_exes, &probe);

	return !want || !want->ino ||
	       stp_proc_file_is(bpf_get_current_task_btf(), want->dev, want->ino);
}

/*
 * Whether a task the iterator found, or one about to exec, is one the
 * probe leaves out: a kernel thread, an exiting task, one born after the
 * probe was attached (existing only), or -c's child before its exec.
 */
static __always_inline bool stp_proc_left_out(struct task_struct *t, uint32_t probe,
					      enum stp_proc_hit hit)
{
	struct stp_proc_exe *e = bpf_map_lookup_elem(&stp_proc_exes, &probe);

	if (!e)
		return true;
	if (hit == STP_HIT_EXISTING &&
	    (!BPF_CORE_READ(t, mm) || BPF_CORE_READ(t, exit_state) ||
	     (BPF_CORE_READ(t, flags) & 0x4 /* PF_EXITING */) ||
	     BPF_CORE_READ(t, start_time) >= e->since))
		return true;
	return stp_proc_file_is(t, e->skip_dev, e->skip_ino);
}

/* Whether T is PID or descends from it (a few generations up). */
static __always_inline bool stp_proc_in_tree(struct task_struct *t, int64_t pid)
{
	for (int i = 0; i < 16 && t; i++) {
		int tgid = BPF_CORE_READ(t, tgid);

		if (tgid == pid)
			return true;
		if (tgid <= 1)
			return false;
		t = BPF_CORE_READ(t, real_parent);
	}
	return false;
}

/* The task a hit of KIND is about (and what the hit is), or NULL when it is not one of KIND's. */
static __always_inline struct task_struct *stp_proc_task_of(struct bpf_raw_tracepoint_args *ctx,
							     enum stp_proc_kind kind,
							     enum stp_proc_hit *hit)
{
	uint64_t a0 = ctx->args[0], a1 = ctx->args[1];
	struct task_struct *t;
	bool leader;

	if (kind == STP_PROC_SYSCALL) {
		*hit = STP_HIT_EVENT;
		return (struct task_struct *)bpf_get_current_task();
	}

	/* both read as they are: no pointer arithmetic on ctx for the verifier */
	asm volatile("" : "+r"(a0), "+r"(a1));
	t = (struct task_struct *)a0;
	*hit = a1 == STP_PROC_EXISTING ? STP_HIT_EXISTING : STP_HIT_EVENT;
	if ((kind == STP_PROC_BEGIN || kind == STP_THREAD_BEGIN) && a1 > 0xffffffffULL)
		t = (struct task_struct *)a1;
	if (!t)
		return NULL;
	leader = BPF_CORE_READ(t, pid) == BPF_CORE_READ(t, tgid);
	switch (kind) {
	case STP_PROC_BEGIN:
		return leader ? t : NULL;
	case STP_PROC_END:
		if (a1 > 0xffffffffULL) {
			*hit = STP_HIT_EXEC_END;
			return t;
		}
		return BPF_CORE_READ(t, signal, live.counter) == 0 ? t : NULL;
	default:
		return leader ? NULL : t;
	}
}

/*
 * The start of a process or thread probe's program: whether the hit is
 * one for probe PROBE of KIND, filtered by process(PID) (PID > 0), by
 * process("PATH") (BY_EXE: the executable the runner noted), or, with
 * -c/-x (IN_TARGET), by target()'s tree.  Notes the task for stp__task().
 */
static __always_inline bool stp_proc_begin(struct bpf_raw_tracepoint_args *ctx,
					   enum stp_proc_kind kind, uint32_t probe, int64_t pid,
					   bool by_exe, bool in_target)
{
	enum stp_proc_hit hit;
	struct task_struct *t = stp_proc_task_of(ctx, kind, &hit);
	uint32_t cpu = bpf_get_smp_processor_id();
	struct stp_control *ctl;

	if (!t)
		return false;
	if (hit != STP_HIT_EVENT && stp_proc_left_out(t, probe, hit))
		return false;
	if (pid > 0 && BPF_CORE_READ(t, tgid) != pid)
		return false;
	if (by_exe && !stp_proc_exe_is(t, probe))
		return false;
	if (in_target) {
		ctl = stp_control_get();
		if (!stp_proc_in_tree(t, ctl && ctl->target ? ctl->target : stp_rt.target))
			return false;
	}
	if (cpu < STP_NCPUS) {
		stp_proc_tasks[cpu].probe = probe;
		stp_proc_tasks[cpu].task = t;
	}
	return true;
}

/* x86's thread_info.status: TS_COMPAT, an ia32 syscall */
#define STP_TS_COMPAT 0x0002

/* Whether the current task is in an ia32 (compat) syscall. */
static __always_inline bool stp_proc_compat(void)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();

	if (!bpf_core_field_exists(t->thread_info.status))
		return false;
	return BPF_CORE_READ(t, thread_info.status) & STP_TS_COMPAT;
}

/* The current task's user registers: a syscall's number, arguments and return value. */
static __always_inline struct pt_regs *stp_usc_regs(void)
{
	return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
}

/* $argN (N 1..6) of process.syscall: x86-64's syscall convention, or ia32's. */
static __always_inline int64_t stp_usc_arg(int n)
{
	struct pt_regs *r = stp_usc_regs();
	bool ia32 = stp_proc_compat();

	switch (n) {
	case 1: return ia32 ? r->bx : r->di;
	case 2: return ia32 ? r->cx : r->si;
	case 3: return r->dx;
	case 4: return ia32 ? r->si : r->r10;
	case 5: return ia32 ? r->di : r->r8;
	default: return ia32 ? r->bp : r->r9;
	}
}

#endif
