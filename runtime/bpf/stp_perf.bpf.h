/*
 * stp_perf.bpf.h - per-process perf counters in kernel context:
 * perf.*.process("PATH").counter("NAME") and @perf("NAME")
 * (translator/probes_counter.c; the runner's half: runtime/user/perfctr.c).
 *
 * The runner opens one perf event per counter and thread of each process
 * that runs PATH (perf_event_open(pid = tid, cpu = -1), not inherited:
 * bpf_perf_event_read_value() refuses inherited events), puts them in
 * stp_perf_events at slot * STP_NCOUNTERS + counter, and then the thread's
 * slot in stp_perf_slots.  @perf reads the event of the current thread;
 * a thread with no slot (yet), or a read the kernel refuses, counts in
 * stp_perf_missing, which the runner reports at exit.
 *
 * The runner learns of the threads to count from the programs below: an
 * exec of a counter's file, a fork or clone in a process counted, the
 * exit of a thread that has a slot, each one a STP_REC_PERF record.
 * stp_perf_procs keeps, per process counted, which counters it has.
 *
 * perf.*.process("PATH") probes (sampling) take the same way: the runner
 * opens a sampling event per thread and attaches the probe's program to
 * it.  The bits of a mask are the counters, then those probes (in the
 * order of meta.probes): STP_NPERF of them, at most 32.
 *
 * Included by the generated code after tapset.bpf.h, when the script has
 * any: STP_NCOUNTERS, STP_NPERF and STP_PERF_THREADS are defined.
 */
#ifndef STP_PERF_BPF_H
#define STP_PERF_BPF_H

/* Per counter, filled by the runner: its file (stp_proc.bpf.h's dev_t and inode). */
struct stp_perf_exe {
	uint64_t dev;
	uint64_t ino;
};

STP_MAP(stp_perf_exes, BPF_MAP_TYPE_ARRAY, uint32_t, struct stp_perf_exe, STP_NPERF, 0);
STP_MAP(stp_perf_slots, BPF_MAP_TYPE_HASH, uint32_t, uint32_t, STP_PERF_THREADS, 0);
STP_MAP(stp_perf_procs, BPF_MAP_TYPE_HASH, uint32_t, uint32_t, STP_PERF_THREADS, 0);

#if STP_NCOUNTERS > 0
STP_MAP(stp_perf_events, BPF_MAP_TYPE_PERF_EVENT_ARRAY, uint32_t, uint32_t,
	STP_PERF_THREADS * STP_NCOUNTERS, 0);
STP_MAP(stp_perf_missing, BPF_MAP_TYPE_PERCPU_ARRAY, uint32_t, uint64_t, STP_NCOUNTERS, 0);

/* @perf("NAME"): counter COUNTER's value in the current thread. */
static __always_inline int64_t stp_perf_read(uint32_t counter)
{
	uint32_t tid = (uint32_t)bpf_get_current_pid_tgid();
	uint32_t *slot = bpf_map_lookup_elem(&stp_perf_slots, &tid);
	struct bpf_perf_event_value v;
	uint64_t *missing;

	if (slot && counter < STP_NCOUNTERS &&
	    bpf_perf_event_read_value(&stp_perf_events, (uint64_t)*slot * STP_NCOUNTERS + counter,
				      &v, sizeof(v)) == 0)
		return (int64_t)v.counter;
	missing = bpf_map_lookup_elem(&stp_perf_missing, &counter);
	if (missing)
		(*missing)++;
	return 0;
}
#endif

/* Tell the runner: a thread to count (STP_PERF_NEW, with its counters) or gone. */
static __always_inline void stp_perf_tell(uint16_t what, struct task_struct *t, uint32_t mask)
{
	struct stp_rec_perf r = {
		.hdr = { .kind = STP_REC_PERF, .id = what, .size = sizeof(r) },
		.tid = (uint32_t)BPF_CORE_READ(t, pid),
		.tgid = (uint32_t)BPF_CORE_READ(t, tgid),
		.counters = mask,
	};

	if (bpf_ringbuf_output(&stp_events, &r, sizeof(r), 0))
		stp_count(dropped);
}

/* The counters (and probes) whose file task T runs. */
static __always_inline uint32_t stp_perf_exe_mask(struct task_struct *t)
{
	struct file *exe = BPF_CORE_READ(t, mm, exe_file);
	struct inode *in;
	uint64_t dev, ino;
	uint32_t mask = 0;

	if (!exe)
		return 0;
	in = BPF_CORE_READ(exe, f_inode);
	ino = BPF_CORE_READ(in, i_ino);
	dev = (uint64_t)BPF_CORE_READ(in, i_sb, s_dev);
	for (uint32_t i = 0; i < STP_NPERF; i++) {
		struct stp_perf_exe *e = bpf_map_lookup_elem(&stp_perf_exes, &i);

		if (e && e->ino && e->ino == ino && e->dev == dev)
			mask |= 1U << i;
	}
	return mask;
}

/* sched_process_exec (task, old_pid, bprm): a process starts running a counter's file. */
SEC("raw_tp/sched_process_exec")
int stp_perf_exec(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *t = (struct task_struct *)ctx->args[0];
	uint32_t tgid = (uint32_t)BPF_CORE_READ(t, tgid);
	uint32_t mask = stp_perf_exe_mask(t);

	if (!mask)
		return 0;
	bpf_map_update_elem(&stp_perf_procs, &tgid, &mask, BPF_ANY);
	stp_perf_tell(STP_PERF_NEW, t, mask);
	return 0;
}

/* sched_process_fork (parent, child): a thread or a process in a process counted. */
SEC("raw_tp/sched_process_fork")
int stp_perf_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (struct task_struct *)ctx->args[0];
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	uint32_t ptgid = (uint32_t)BPF_CORE_READ(parent, tgid);
	uint32_t ctgid = (uint32_t)BPF_CORE_READ(child, tgid);
	uint32_t *mask = bpf_map_lookup_elem(&stp_perf_procs, &ptgid), m;

	if (!mask)
		return 0;
	m = *mask;
	if (ctgid != ptgid)
		bpf_map_update_elem(&stp_perf_procs, &ctgid, &m, BPF_ANY);
	stp_perf_tell(STP_PERF_NEW, child, m);
	return 0;
}

/* sched_process_exit (task, ...): a thread that has events ends. */
SEC("raw_tp/sched_process_exit")
int stp_perf_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *t = (struct task_struct *)ctx->args[0];
	uint32_t tid = (uint32_t)BPF_CORE_READ(t, pid), tgid = (uint32_t)BPF_CORE_READ(t, tgid);

	if (BPF_CORE_READ(t, signal, live.counter) == 0)
		bpf_map_delete_elem(&stp_perf_procs, &tgid);
	if (bpf_map_lookup_elem(&stp_perf_slots, &tid))
		stp_perf_tell(STP_PERF_GONE, t, 0);
	return 0;
}

#endif
