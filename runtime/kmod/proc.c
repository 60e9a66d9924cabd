/*
 * proc.c - process.begin/end and thread.begin/end in a module of the
 * kernel runtime (translator/emit_kmod.c's proc_sites()), included by
 * stp_kmod_main.h.
 *
 * The handlers are the BPF runtime's raw tracepoint programs on the
 * sched tracepoints (runtime/bpf/stp_proc.bpf.h): their prologue,
 * stp_proc_begin(), tells from the arguments what a hit is and which task
 * it is about.  So the module gives them those arguments as words:
 *
 *	sched_process_fork	(parent, child)
 *	sched_process_exec	(task, old_pid, bprm)
 *	sched_process_exit	(task, 0): thread.end
 *	taskstats_exit()	(task, 0), a kprobe: process.end, while the
 *				task still has its memory
 *	begin_new_exec()	(current, bprm), a kprobe where Linux 6.10
 *				puts sched_prepare_exec: the old image ends
 *	a task running already	(task, STP_PROC_EXISTING), once for each,
 *				when pmstap writes STP_KMOD_CMD_EXISTING after
 *				its begin probes (the BPF runtime's task
 *				iterator; stap's task finder does the same walk)
 */

static void __maybe_unused stp_kproc_fork(void *site, struct task_struct *parent,
					  struct task_struct *child)
{
	uint64_t args[2] = { (uint64_t)(uintptr_t)parent, (uint64_t)(uintptr_t)child };

	stp_kmod_run_tp(site, args);
}

static void __maybe_unused stp_kproc_exec(void *site, struct task_struct *p, pid_t old_pid,
					  struct linux_binprm *bprm)
{
	uint64_t args[3] = { (uint64_t)(uintptr_t)p, (uint64_t)old_pid, (uint64_t)(uintptr_t)bprm };

	stp_kmod_run_tp(site, args);
}

static void __maybe_unused stp_kproc_exit(void *site, struct task_struct *p)
{
	uint64_t args[2] = { (uint64_t)(uintptr_t)p, 0 };

	stp_kmod_run_tp(site, args);
}

/*
 * begin_new_exec(bprm): the task still has its old image and name; or
 * taskstats_exit(task, group_dead): the task exits, its signal's count
 * of live threads is down, and it still has its memory, whose executable
 * process("PATH").end compares (6.1's sched_process_exit comes after
 * exit_mm()).
 */
static int stp_kproc_kprobe_hit(struct kprobe *kp, struct pt_regs *regs)
{
	const struct stp_ksite *site = container_of(kp, struct stp_kprobe_live, kp)->site;
	uint64_t args[2] = { (uint64_t)(uintptr_t)current,
			     site->kind == STP_KSITE_PROC_EXEC ? regs->di : 0 };

	stp_kmod_hit(site, NULL, NULL, args);
	return 0;
}

static int stp_kproc_kprobe_start(struct stp_kprobe_live *l)
{
	memset(&l->kp, 0, sizeof(l->kp));
	l->kp.symbol_name = l->site->name;
	l->kp.pre_handler = stp_kproc_kprobe_hit;
	return register_kprobe(&l->kp);
}

/*
 * With -c, the runner's child is left out until it execs the command:
 * pmstap notes its own executable (stp_proc_exes' skip_dev, skip_ino) by
 * stat(), which on an overlay (the qa guest's root) gives another inode
 * than the kernel's.  The kernel's, from pmstap itself: current, which
 * writes the command.
 */
static void stp_kproc_note_runner(void)
{
	uint64_t dev = 0, ino = 0;
	struct file *exe;

	if (!current->mm)
		return;
	rcu_read_lock();
	exe = rcu_dereference(current->mm->exe_file);
	if (exe) {
		dev = exe->f_inode->i_sb->s_dev;
		ino = exe->f_inode->i_ino;
	}
	rcu_read_unlock();
	for (uint32_t i = 0; i < STP_NPROBES; i++) {
		struct stp_proc_exe *e = bpf_map_lookup_elem(&stp_proc_exes, &i);

		if (e && e->skip_ino) {
			e->skip_dev = dev;
			e->skip_ino = ino;
		}
	}
}

/*
 * Each STP_KSITE_PROC_EXISTING site's handler on each task (threads in
 * their process's order), as stap's task finder visits them at start;
 * the prologue leaves out kernel threads, exiting tasks and those born
 * since pmstap noted the time (stp_proc_exes), whose fork is a hit.
 */
static void stp_kproc_existing(void)
{
	struct task_struct *g, *t;

	stp_kproc_note_runner();	/* pmstap noted the tasks' time again, and its file */
	for (size_t i = 0; i < STP_KMOD_NSITES; i++) {
		const struct stp_ksite *site = stp_km.live[i].site;

		if (!stp_km.live[i].on || site->kind != STP_KSITE_PROC_EXISTING)
			continue;
		rcu_read_lock();
		for_each_process_thread(g, t) {
			uint64_t args[2] = { (uint64_t)(uintptr_t)t, STP_PROC_EXISTING };

			preempt_disable();
			stp_kmod_hit(site, NULL, NULL, args);
			preempt_enable();
		}
		rcu_read_unlock();
	}
}
