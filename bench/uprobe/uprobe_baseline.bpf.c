/*
 * uprobe_baseline.bpf.c - the hand-written libbpf baseline for
 * bench/uprobe.sh: count every call of a user function, at its entry
 * (uprobe) or its return (uretprobe), into one global, as stap's `n++`.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

__u64 calls;

SEC("uprobe")
int on_entry(void *ctx)
{
	__sync_fetch_and_add(&calls, 1);
	return 0;
}

SEC("uretprobe")
int on_return(void *ctx)
{
	__sync_fetch_and_add(&calls, 1);
	return 0;
}
