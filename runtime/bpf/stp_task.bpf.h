/*
 * stp_task.bpf.h - the task services of runtime/stp_tapset.h in kernel
 * context (tapset/task.stp): a task is the address of its struct
 * task_struct, read through BTF with CO-RE relocations, so the same object
 * runs on kernels whose task_struct differs (state or __state, the cpu in
 * thread_info or in the task).  tapset.bpf.h includes it.
 */
#ifndef STP_TASK_BPF_H
#define STP_TASK_BPF_H

/* Kernels before 5.14 call __state "state". */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

/* Kernels before 5.16 (and without THREAD_INFO_IN_TASK) keep the cpu in the task. */
struct task_struct___cpu {
	unsigned int cpu;
} __attribute__((preserve_access_index));

/*
 * The mm's page counters (MM_FILEPAGES 0, MM_ANONPAGES 1, MM_SHMEMPAGES 3
 * since 4.5): atomic longs in a struct mm_rss_stat before 6.2, an array of
 * percpu_counters since.  A flavour each, so that one object reads both;
 * the kernel runtime calls the kernel's own get_mm_counter().
 */
#ifndef STP_KMOD
struct mm_rss_stat___pre62 {
	atomic_long_t count[4];
} __attribute__((preserve_access_index));

struct mm_struct___pre62 {
	struct mm_rss_stat___pre62 rss_stat;
} __attribute__((preserve_access_index));

struct mm_struct___pcpu {
	struct percpu_counter rss_stat[4];
} __attribute__((preserve_access_index));
#endif

/* The open-descriptor bitmap words counted, at most (64 descriptors each). */
#define STP_TASK_FD_WORDS 256

STP_SERVICE int64_t stp_task_current(struct context *c)
{
	return (int64_t)bpf_get_current_task();
}

static __always_inline int64_t stp__popcount(uint64_t w)
{
	w = w - ((w >> 1) & 0x5555555555555555ULL);
	w = (w & 0x3333333333333333ULL) + ((w >> 2) & 0x3333333333333333ULL);
	w = (w + (w >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (int64_t)((w * 0x0101010101010101ULL) >> 56);
}

static __always_inline int64_t stp__task_open_files(struct task_struct *t)
{
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	unsigned long *bits = BPF_CORE_READ(fdt, open_fds);
	unsigned int max = BPF_CORE_READ(fdt, max_fds);
	int64_t n = 0;

	for (int i = 0; i < STP_TASK_FD_WORDS; i++) {
		uint64_t w = 0;

		if ((unsigned int)i * 64 >= max)
			break;
		if (bpf_probe_read_kernel(&w, sizeof(w), bits + i))
			break;
		n += stp__popcount(w);
	}
	return n;
}

static __always_inline int64_t stp__task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___pre514 *)t, state);
}

static __always_inline int64_t stp__task_cpu(struct task_struct *t)
{
	if (bpf_core_field_exists(t->thread_info.cpu))
		return BPF_CORE_READ(t, thread_info.cpu);
	return BPF_CORE_READ((struct task_struct___cpu *)t, cpu);
}

/* Counter N of MM in pages, as the kernel's get_mm_counter() reads it (never below 0). */
static __always_inline int64_t stp__mm_counter(struct mm_struct *mm, int n)
{
	int64_t v = 0;

#ifdef STP_KMOD
	v = get_mm_counter(mm, n);
#else
	struct mm_struct___pcpu *pc = (void *)mm;
	struct mm_struct___pre62 *pre = (void *)mm;
	struct percpu_counter all[4];
	atomic_long_t cnt[4];

	if (bpf_core_field_exists(pc->rss_stat) && !bpf_core_read(all, sizeof(all), &pc->rss_stat))
		v = all[n & 3].count;
	else if (bpf_core_field_exists(pre->rss_stat) &&
		 !bpf_core_read(cnt, sizeof(cnt), &pre->rss_stat.count))
		v = cnt[n & 3].counter;
#endif
	return v < 0 ? 0 : v;
}

/* FIELD (an STP_TASK_MEM_*) of task T's memory, in pages; 0 for a task with no mm. */
static __always_inline int64_t stp__task_mem(struct task_struct *t, int64_t field)
{
	struct mm_struct *mm = BPF_CORE_READ(t, mm);
	uint64_t start, end;

	if (!mm)
		return 0;
	switch (field) {
	case STP_TASK_MEM_SIZE: return BPF_CORE_READ(mm, total_vm);
	case STP_TASK_MEM_RSS:
		return stp__mm_counter(mm, 0) + stp__mm_counter(mm, 1) + stp__mm_counter(mm, 3);
	case STP_TASK_MEM_SHR: return stp__mm_counter(mm, 0);
	case STP_TASK_MEM_TXT:
		start = BPF_CORE_READ(mm, start_code) & ~4095ULL;
		end = (BPF_CORE_READ(mm, end_code) + 4095) & ~4095ULL;
		return (int64_t)((end - start) >> 12);
	case STP_TASK_MEM_DATA:
		return BPF_CORE_READ(mm, data_vm) + BPF_CORE_READ(mm, stack_vm);
	default: return 0;
	}
}

STP_SERVICE int64_t stp_task_field(struct context *c, int64_t task, int64_t field)
{
	struct task_struct *t = (struct task_struct *)task;
	int pid;

	if (bpf_core_read(&pid, sizeof(pid), &t->pid)) {
		stp__raisef(c, STP_MSG_READ_FAULT("kernel"), (unsigned long long)task);
		return 0;
	}
	switch (field) {
	case STP_TASK_PID: return BPF_CORE_READ(t, tgid);
	case STP_TASK_TID: return pid;
	case STP_TASK_PARENT: return (int64_t)BPF_CORE_READ(t, real_parent);
	case STP_TASK_STATE: return stp__task_state(t);
	case STP_TASK_UID: return BPF_CORE_READ(t, real_cred, uid.val);
	case STP_TASK_EUID: return BPF_CORE_READ(t, real_cred, euid.val);
	case STP_TASK_GID: return BPF_CORE_READ(t, real_cred, gid.val);
	case STP_TASK_EGID: return BPF_CORE_READ(t, real_cred, egid.val);
	case STP_TASK_PRIO: return BPF_CORE_READ(t, prio) - 100;	/* MAX_RT_PRIO */
	case STP_TASK_NICE: return BPF_CORE_READ(t, static_prio) - 120;
	case STP_TASK_CPU: return stp__task_cpu(t);
	case STP_TASK_OPEN_FILES: return stp__task_open_files(t);
	case STP_TASK_MAX_FILES: return BPF_CORE_READ(t, files, fdt, max_fds);
	case STP_TASK_START_TIME: return (int64_t)BPF_CORE_READ(t, start_time);
	case STP_TASK_UTIME: return (int64_t)BPF_CORE_READ(t, utime);
	case STP_TASK_STIME: return (int64_t)BPF_CORE_READ(t, stime);
	case STP_TASK_RLIMIT_NOFILE:	/* RLIMIT_NOFILE is 7 on every architecture */
		return (int64_t)BPF_CORE_READ(t, signal, rlim[7].rlim_cur);
	case STP_TASK_MEM_SIZE: case STP_TASK_MEM_RSS: case STP_TASK_MEM_SHR:
	case STP_TASK_MEM_TXT: case STP_TASK_MEM_DATA:
		return stp__task_mem(t, field);
	default: return 0;
	}
}

STP_SERVICE void stp_task_execname(struct context *c, char *out, int64_t task)
{
	struct task_struct *t = (struct task_struct *)task;

	out[0] = '\0';
	if (bpf_probe_read_kernel_str(out, STP_COMM_LEN, &t->comm) < 0) {
		out[0] = '\0';
		stp__raisef(c, STP_MSG_READ_FAULT("kernel"), (unsigned long long)task);
	}
}

/* The current task or the nearest of its ancestors whose process id is PID; else 0. */
STP_SERVICE int64_t stp_pid2task(struct context *c, int64_t pid)
{
#ifdef STP_KMOD	/* a module looks any task up, as stap's pid2task() */
	struct pid *p;
	int64_t t;

	rcu_read_lock();
	p = find_get_pid((pid_t)pid);
	t = (int64_t)(uintptr_t)pid_task(p, PIDTYPE_PID);
	put_pid(p);
	rcu_read_unlock();
	return t;
#else
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();

	for (int i = 0; i < 64 && t; i++) {
		if (BPF_CORE_READ(t, tgid) == pid)
			return (int64_t)t;
		if (BPF_CORE_READ(t, pid) <= 1)
			break;
		t = BPF_CORE_READ(t, real_parent);
	}
	return 0;
#endif
}

#endif
