/*
 * probe_kinds.c - the probe families' table (probe_kinds.h says how to add one).
 */
#include "probe_kinds.h"

#define ON(bpf, kernel, dyninst) { [RUNTIME_BPF] = bpf, [RUNTIME_KERNEL] = kernel, \
				   [RUNTIME_DYNINST] = dyninst }

/* Indexed by enum probe_kind. */
static const struct probe_kind_info kinds[] = {
	[PROBE_BEGIN] = { "begin", PCLASS_LIFECYCLE, TARGETS_NONE, false,
			  ON(PCTX_RUNNER, PCTX_KERNEL, PCTX_RUNNER) },
	[PROBE_END] = { "end", PCLASS_LIFECYCLE, TARGETS_NONE, false,
			ON(PCTX_RUNNER, PCTX_KERNEL, PCTX_RUNNER) },
	[PROBE_ERROR] = { "error", PCLASS_LIFECYCLE, TARGETS_NONE, false,
			  ON(PCTX_RUNNER, PCTX_KERNEL, PCTX_RUNNER) },
	[PROBE_NEVER] = { "never", PCLASS_LIFECYCLE, TARGETS_NONE, false,
			  ON(PCTX_RUNNER, PCTX_KERNEL, PCTX_RUNNER) },
	[PROBE_TIMER] = { "timer", PCLASS_TIMER, TARGETS_NONE, false,
			  ON(PCTX_RUNNER, PCTX_KERNEL, PCTX_RUNNER) },
	[PROBE_PROFILE] = { "timer.profile", PCLASS_SAMPLE, TARGETS_NONE, false,
			    ON(PCTX_KERNEL, PCTX_KERNEL, PCTX_NONE) },
	[PROBE_PERF] = { "perf", PCLASS_SAMPLE, TARGETS_NONE, false,
			 ON(PCTX_KERNEL, PCTX_KERNEL, PCTX_NONE) },
	[PROBE_TRACE] = { "kernel.trace", PCLASS_TRACEPOINT, TARGETS_TRACEPOINT, false,
			  ON(PCTX_KERNEL, PCTX_KERNEL, PCTX_NONE) },
	[PROBE_KFUNC] = { "kernel.function", PCLASS_KPROBE, TARGETS_KFUNC, true,
			  ON(PCTX_KERNEL, PCTX_KERNEL, PCTX_NONE) },
	[PROBE_KSTATEMENT] = { "kernel.statement", PCLASS_KPROBE, TARGETS_KFUNC, false,
			       ON(PCTX_KERNEL, PCTX_KERNEL, PCTX_NONE) },
	[PROBE_PROCESS_BEGIN] = { "process.begin", PCLASS_PROC, TARGETS_NONE, false,
				  ON(PCTX_KERNEL, PCTX_KERNEL, PCTX_TARGET) },
	[PROBE_PROCESS_END] = { "process.end", PCLASS_PROC, TARGETS_NONE, false,
				ON(PCTX_KERNEL, PCTX_KERNEL, PCTX_TARGET) },
	[PROBE_THREAD_BEGIN] = { "thread.begin", PCLASS_PROC, TARGETS_NONE, false,
				 ON(PCTX_KERNEL, PCTX_KERNEL, PCTX_TARGET) },
	[PROBE_THREAD_END] = { "thread.end", PCLASS_PROC, TARGETS_NONE, false,
			       ON(PCTX_KERNEL, PCTX_KERNEL, PCTX_TARGET) },
	[PROBE_PROCESS_SYSCALL] = { "process.syscall", PCLASS_PROC, TARGETS_USYSCALL, false,
				    ON(PCTX_KERNEL, PCTX_KERNEL, PCTX_NONE),
				    ON(NULL, NULL, "process.syscall probes not available with the "
				       "dyninst runtime (stap's stapdyn has none either)") },
	[PROBE_UFUNC] = { "process.function", PCLASS_UPROBE, TARGETS_DWARF, true,
			  ON(PCTX_KERNEL, PCTX_KERNEL, PCTX_TARGET) },
	[PROBE_USTATEMENT] = { "process.statement", PCLASS_UPROBE, TARGETS_DWARF, false,
			       ON(PCTX_KERNEL, PCTX_KERNEL, PCTX_TARGET) },
	[PROBE_UMARK] = { "process.mark", PCLASS_UPROBE, TARGETS_SDT, false,
			  ON(PCTX_KERNEL, PCTX_KERNEL, PCTX_TARGET) },
	[PROBE_UPLT] = { "process.plt", PCLASS_UPROBE, TARGETS_PLT, false,
			 ON(PCTX_KERNEL, PCTX_KERNEL, PCTX_TARGET) },
	[PROBE_PROCFS] = { "procfs", PCLASS_PROCFS, TARGETS_PROCFS, false,
			   ON(PCTX_RUNNER, PCTX_KERNEL, PCTX_RUNNER) },
	[PROBE_NETFILTER] = { "netfilter", PCLASS_NETFILTER, TARGETS_NETFILTER, false,
			      ON(PCTX_KERNEL, PCTX_KERNEL, PCTX_NONE),
			      ON(NULL, NULL, "netfilter probes are not available with the dyninst "
				 "runtime (stap's stapdyn has none either)") },
	[PROBE_KDATA] = { "kernel.data", PCLASS_SAMPLE, TARGETS_NONE, false,
			  ON(PCTX_KERNEL, PCTX_KERNEL, PCTX_NONE),
			  ON(NULL, NULL, "kernel.data probes are not supported with "
			     "--runtime=dyninst") },
};

_Static_assert(sizeof(kinds) / sizeof(kinds[0]) == PROBE_KIND_COUNT,
	       "a probe kind without its row in probe_kinds.c");

const struct probe_kind_info *probe_kind_info(enum probe_kind k)
{
	return &kinds[k];
}
