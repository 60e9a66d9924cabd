/*
 * baseline.bpf.c - the hand-written libbpf baseline for the benchmarks.
 *
 * Three programs on the syscalls:sys_enter_getppid tracepoint, one per
 * benchmark case; the loader attaches exactly one:
 *   count  count every event into one global (an atomic add), like stap's
 *          `n++` on a global long;
 *   pid    count per process in a hash map keyed by pid, like `c[pid()]++`;
 *   hist   a log2 histogram of the pid in a per-CPU array, like
 *          `h <<< pid()` printed with @hist_log (buckets only: the least
 *          work such a histogram can take).
 * No vmlinux.h: none of them reads the tracepoint's record.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define MAX_PIDS 10240
#define HIST_SLOTS 64

char LICENSE[] SEC("license") = "GPL";

__u64 count_events;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PIDS);
	__type(key, __u32);
	__type(value, __u64);
} pid_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HIST_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

SEC("tp/syscalls/sys_enter_getppid")
int count(void *ctx)
{
	__sync_fetch_and_add(&count_events, 1);
	return 0;
}

SEC("tp/syscalls/sys_enter_getppid")
int pid(void *ctx)
{
	__u32 key = bpf_get_current_pid_tgid() >> 32;
	__u64 one = 1, *val;

	val = bpf_map_lookup_elem(&pid_counts, &key);
	if (val) {
		__sync_fetch_and_add(val, 1);
		return 0;
	}
	bpf_map_update_elem(&pid_counts, &key, &one, BPF_NOEXIST);
	return 0;
}

/* floor(log2(v)) + 1 for v > 0, 0 for 0: the slot of v. */
static __always_inline __u32 log2_slot(__u64 v)
{
	__u32 r = 0, shift;

	if (!v)
		return 0;
	shift = (v > 0xffffffff) << 5; v >>= shift; r |= shift;
	shift = (v > 0xffff) << 4; v >>= shift; r |= shift;
	shift = (v > 0xff) << 3; v >>= shift; r |= shift;
	shift = (v > 0xf) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r + 1;
}

SEC("tp/syscalls/sys_enter_getppid")
int hist_pid(void *ctx)
{
	__u32 slot = log2_slot(bpf_get_current_pid_tgid() >> 32);
	__u64 *val;

	if (slot >= HIST_SLOTS)
		slot = HIST_SLOTS - 1;
	val = bpf_map_lookup_elem(&hist, &slot);
	if (val)
		*val += 1;
	return 0;
}
