/*
 * probe_kinds.h - every probe family's properties in one table, and the
 * runtimes a script can be compiled for.  The passes look a family up
 * here instead of testing probe kinds one by one.
 *
 * Adding a probe family (process.plt, say):
 *   1. its kind in program.h's enum probe_kind and its row in
 *      probe_kinds.c: its class, where its $vars come from, whether it is
 *      a function's .return, and the context its handler runs in on each
 *      runtime (PCTX_NONE where a runtime cannot run it);
 *   2. its point shapes in probes.c's pattern list;
 *   3. its resolver (pass 2): for a family of an existing class, one case
 *      in that class's resolver (probes_user.c for PCLASS_UPROBE);
 *   4. tests: a qa/NNN with the probe firing, a semko case for a bad use.
 * Passes 3 to 5 dispatch on the class: a family of an existing class
 * needs nothing there.  A new class needs a section in each runtime's
 * emitter and an attach in the runner.
 */
#ifndef PMSTAP_PROBE_KINDS_H
#define PMSTAP_PROBE_KINDS_H

#include <stdbool.h>
#include "program.h"

/* The runtimes, in the order of the context columns below (the order matters). */
enum runtime_id {
	RUNTIME_BPF,		/* BPF programs and the runner (libstaprt) */
	RUNTIME_KERNEL,		/* a kernel module */
	RUNTIME_DYNINST,	/* inside the probed process, no privileges */
	RUNTIME_COUNT,
};

/* Where a family's handler runs on a runtime. */
enum probe_context {
	PCTX_NONE,		/* the runtime cannot run it */
	PCTX_RUNNER,		/* the runner's own process: begin, end, POSIX timers */
	PCTX_KERNEL,		/* the kernel: a BPF program, or a module's handler */
	PCTX_TARGET,		/* the probed process itself */
};

/* How a family's probes are placed; the passes after 2 dispatch on it. */
enum probe_class {
	PCLASS_LIFECYCLE,	/* begin, end, error, never */
	PCLASS_TIMER,		/* timer.s/ms/us/ns/hz/jiffies */
	PCLASS_SAMPLE,		/* timer.profile, perf.*, kernel.data: perf events */
	PCLASS_TRACEPOINT,	/* kernel.trace */
	PCLASS_KPROBE,		/* kernel functions and statements */
	PCLASS_PROC,		/* process/thread begin and end: sched tracepoints */
	PCLASS_UPROBE,		/* an address in a user-space ELF file */
	PCLASS_PROCFS,		/* procfs("NAME").read/.write: a FIFO the runner serves, or a
			   module's /proc/systemtap file */
	PCLASS_NETFILTER,	/* netfilter.hook(..).pf(..): a BPF netfilter program */
};

/* Where $vars come from, and when they are checked. */
enum probe_targets {
	TARGETS_NONE,		/* no $vars */
	TARGETS_TRACEPOINT,	/* the record's fields and the BTF arguments: pass 2 */
	TARGETS_SDT,		/* the marker's $argN: pass 2 */
	TARGETS_KFUNC,		/* BTF parameters (pass 2) where BTF has the function */
	TARGETS_DWARF,		/* the probed file's debuginfo: pass 3 */
	TARGETS_PLT,		/* $$name, the imported function's name: pass 2 */
	TARGETS_PROCFS,		/* $value, rewritten to calls in pass 2 (probes_procfs.c) */
	TARGETS_USYSCALL,	/* $syscall, $argN, $$parms, $return of a process.syscall: pass 2 */
	TARGETS_NETFILTER,	/* $hooknum, $skb, $in, $out, $okfn, $verdict: pass 2 */
};

struct probe_kind_info {
	const char *family;		/* as messages name it: "kernel.trace" */
	enum probe_class class;
	enum probe_targets targets;
	bool function_return;		/* .return of a function: $return, @entry, $params at entry */
	enum probe_context context[RUNTIME_COUNT];
	const char *refusal[RUNTIME_COUNT];	/* why a runtime with PCTX_NONE lacks it; NULL: by context */
};

const struct probe_kind_info *probe_kind_info(enum probe_kind k);

static inline enum probe_class probe_class(const struct derived_probe *dp)
{
	return probe_kind_info(dp->kind)->class;
}

static inline enum probe_targets probe_targets(const struct derived_probe *dp)
{
	/* kernel.statement(ADDRESS).absolute: no function, so no debuginfo scope */
	if (dp->kind == PROBE_KSTATEMENT && !dp->statement && !dp->function)
		return TARGETS_NONE;
	return probe_kind_info(dp->kind)->targets;
}

/* Where DP's handler runs on runtime RT. */
static inline enum probe_context probe_context(const struct derived_probe *dp, enum runtime_id rt)
{
	return probe_kind_info(dp->kind)->context[rt];
}

/* A .return probe of a function (kernel or user): $return and @entry. */
static inline bool probe_is_function_return(const struct derived_probe *dp)
{
	return dp->is_return && probe_kind_info(dp->kind)->function_return;
}

#endif
