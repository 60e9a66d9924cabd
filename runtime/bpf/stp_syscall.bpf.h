/*
 * stp_syscall.bpf.h - the probes on syscall tracepoints run from two
 * programs on raw_syscalls, chosen by the syscall's number.
 *
 * Attaching a program to each syscalls:sys_enter_NAME and sys_exit_NAME
 * tracepoint is a perf event each, and closing one waits for an RCU grace
 * period: a script on every syscall took about a minute to stop.  So the
 * runtime (runtime/user/attach_syscall.c) attaches stp_sc_enter to
 * raw_syscalls:sys_enter and stp_sc_exit to raw_syscalls:sys_exit, fills
 * stp_sc_probe (syscall number -> the probe on its tracepoint) and
 * stp_sc_progs (probe -> its program), and leaves those tracepoints alone.
 *
 * The handlers run unchanged: raw_syscalls' records have the layout of the
 * syscall tracepoints' (the number at 8 -- a long there, an int here, the
 * same low half --, the arguments at 16 + 8 * i, the return value at 16).
 * A tail call keeps the caller's attach cookie, so the probe that fired is
 * in stp_sc_cur, this CPU's slot, for the handlers that a cookie names
 * (translator/emit_merge.c): the dispatchers run under the kernel's
 * bpf_prog_active guard, so none nests on this CPU before it is read.
 *
 * The syscall tracepoints fire for no compat (ia32) syscall, raw_syscalls
 * for each, with the ia32 number: those are left out here too.
 */
#ifndef STP_SYSCALL_BPF_H
#define STP_SYSCALL_BPF_H

#define STP_SC_NR 1024			/* numbers 0 .. STP_SC_NR - 1: x32's have bit 30 */
#define STP_SC_COOKIE (1ULL << 32)	/* the dispatchers' cookie: no probe's index */

/* Per direction (enter, then exit) and number: the probe's index + 1; 0: none. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * STP_SC_NR);
	__type(key, uint32_t);
	__type(value, uint32_t);
} stp_sc_probe SEC(".maps");

/* Per probe: its program, for the probes dispatched. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, STP_NPROBES);
	__type(key, uint32_t);
	__type(value, uint32_t);
} stp_sc_progs SEC(".maps");

/* The probe a dispatcher jumped to on this CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, uint32_t);
	__type(value, uint32_t);
} stp_sc_cur SEC(".maps");

/* A merged handler's probe: its cookie, or the dispatcher's choice. */
static __always_inline uint32_t stp_probe_cookie(void *ctx)
{
	uint64_t cookie = bpf_get_attach_cookie(ctx);
	uint32_t zero = 0, *cur;

	if (cookie != STP_SC_COOKIE)
		return (uint32_t)cookie;
	cur = bpf_map_lookup_elem(&stp_sc_cur, &zero);
	return cur ? *cur : STP_NPROBES;
}

/* raw_syscalls:sys_enter's and sys_exit's common part */
struct stp_sc_raw {
	uint64_t common;
	long id;
};

static __always_inline int stp_sc_dispatch(struct stp_sc_raw *ctx, uint32_t base)
{
	uint32_t key, zero = 0, probe, *p, *cur;
	long nr = ctx->id;

	if (nr < 0 || nr >= STP_SC_NR)
		return 0;
	key = base + (uint32_t)nr;
	p = bpf_map_lookup_elem(&stp_sc_probe, &key);
	if (!p || !*p || stp_proc_compat())
		return 0;
	probe = *p - 1;
	cur = bpf_map_lookup_elem(&stp_sc_cur, &zero);
	if (!cur)
		return 0;
	*cur = probe;
	bpf_tail_call(ctx, &stp_sc_progs, probe);
	return 0;
}

SEC("tp/raw_syscalls/sys_enter")
int stp_sc_enter(struct stp_sc_raw *ctx)
{
	return stp_sc_dispatch(ctx, 0);
}

SEC("tp/raw_syscalls/sys_exit")
int stp_sc_exit(struct stp_sc_raw *ctx)
{
	return stp_sc_dispatch(ctx, STP_SC_NR);
}

#endif /* STP_SYSCALL_BPF_H */
