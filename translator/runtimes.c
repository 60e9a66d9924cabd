/*
 * runtimes.c - the runtimes' table (runtimes.h).
 */
#include <string.h>
#include <unistd.h>
#include "compile.h"
#include "diag.h"
#include "emit.h"
#include "runtimes.h"
#include "sysroot.h"

/* Modules load where the kernel lists them; a kernel without CONFIG_MODULES has no /proc/modules. */
static const char *kernel_unavailable(const struct session *s)
{
	if (sysroot_dir() || strcmp(s->kernel_release, sysroot_kernel_release()) != 0)
		return NULL;	/* built for another kernel (-r, a sysroot): run there */
	if (access("/proc/modules", F_OK) != 0)
		return "this kernel cannot load modules (it has no /proc/modules)";
	return NULL;
}

static const struct runtime_info runtimes[RUNTIME_COUNT] = {
	[RUNTIME_BPF] = { "bpf", NULL, NULL, emit_program, compile_program, COMPILE_BPF_SOURCE,
			  COMPILE_BPF_OBJECT },
	[RUNTIME_KERNEL] = { "kernel", kernel_unavailable,
			     "compile it for a kernel that loads modules with -r RELEASE -p4, or use "
			     "--runtime=bpf", emit_program_kmod, compile_program_kmod,
			     COMPILE_KMOD_SOURCE, COMPILE_KMOD_OBJECT },
	[RUNTIME_DYNINST] = { "dyninst", NULL, NULL, emit_program_dyninst, compile_program_dyninst,
			      COMPILE_DYN_SOURCE, COMPILE_DYN_OBJECT },
};

const struct runtime_info *runtime_find(const char *name)
{
	for (int i = 0; i < RUNTIME_COUNT; i++)
		if (name && strcmp(runtimes[i].name, name) == 0)
			return &runtimes[i];
	return NULL;
}

enum runtime_id runtime_id_of(const struct session *s)
{
	const struct runtime_info *rt = runtime_find(s->runtime);

	return rt ? (enum runtime_id)(rt - runtimes) : RUNTIME_BPF;
}

const struct runtime_info *runtime_of(const struct session *s)
{
	return &runtimes[runtime_id_of(s)];
}

/* What a probe of context CTX needs, in words. */
static const char *needs(enum probe_context ctx)
{
	switch (ctx) {
	case PCTX_KERNEL: return "it runs in the kernel";
	case PCTX_TARGET: return "it runs in the probed process";
	default: return "it runs in pmstap's own process";
	}
}

/* The context DP has on the first runtime that can run it. */
static enum runtime_id first_runtime(const struct derived_probe *dp)
{
	for (int i = 0; i < RUNTIME_COUNT; i++)
		if (probe_context(dp, (enum runtime_id)i) != PCTX_NONE)
			return (enum runtime_id)i;
	return RUNTIME_BPF;
}

static void refuse_probe(const struct session *s, const struct derived_probe *dp)
{
	enum runtime_id other = first_runtime(dp);
	const char *why = probe_kind_info(dp->kind)->refusal[runtime_id_of(s)];

	diag_error(dp->orig ? dp->orig->loc : dp->probe->loc,
		   "probe point '%s' cannot run on the %s runtime: %s", dp->point, s->runtime,
		   why ? why : needs(probe_context(dp, other)));
	diag_hint("the %s runtime runs it (--runtime=%s)", runtimes[other].name,
		  runtimes[other].name);
}

/*
 * The dyninst runtime probes the processes it starts (-c, and their
 * children) or the one it attaches to (-x): a process probe needs one.
 */
/*
 * The dyninst runtime runs in the processes it starts (-c) or attaches to
 * (-x); without either, probes that all name one process, process(PID),
 * attach to it as -x PID would (target() stays 0, as stap's).
 */
static bool dyninst_targets(const struct session *s, const struct program *prog)
{
	const struct derived_probe *first = NULL;

	if (s->target_cmd || s->target_pid > 0)
		return true;
	for (int i = 0; i < prog->probes.len; i++) {
		const struct derived_probe *dp = VEC_AT(&prog->probes, i);

		if (probe_context(dp, RUNTIME_DYNINST) != PCTX_TARGET)
			continue;
		if (dp->pid <= 0) {
			diag_error(dp->orig ? dp->orig->loc : dp->probe->loc,
				   "probe point '%s' needs a process to run in: the dyninst runtime "
				   "probes the command it starts or the process it attaches to",
				   dp->point);
			diag_hint("give the command with -c CMD, or the process with -x PID");
			return false;
		}
		if (first && first->pid != dp->pid) {
			diag_error(dp->orig ? dp->orig->loc : dp->probe->loc,
				   "probe point '%s' names process %lld, and '%s' process %lld: the "
				   "dyninst runtime runs in one process", dp->point,
				   (long long)dp->pid, first->point, (long long)first->pid);
			diag_hint("run one pmstap for each process");
			return false;
		}
		first = first ? first : dp;
	}
	return true;
}

/*
 * Per-process perf counters, and perf probes that sample one process: the
 * bpf runtime's runner keeps their events, one per thread.
 */
static bool counters_ok(const struct session *s, const struct program *prog)
{
	bool ok = prog->counters.len == 0;

	for (int i = 0; i < prog->probes.len; i++) {
		const struct derived_probe *dp = VEC_AT(&prog->probes, i);

		if (dp->kind != PROBE_PERF || !dp->path || probe_context(dp, runtime_id_of(s)) ==
		    PCTX_NONE)
			continue;	/* (one it cannot run at all is refused already) */
		diag_error(dp->orig ? dp->orig->loc : dp->probe->loc, "probe point '%s' cannot run "
			   "on the %s runtime: perf probes of one process are built for the bpf "
			   "runtime only", dp->point, s->runtime);
		diag_hint("the bpf runtime runs it (--runtime=bpf)");
		ok = false;
	}
	for (int i = 0; i < prog->counters.len; i++) {
		const struct perf_counter *c = VEC_AT(&prog->counters, i);

		diag_error(c->orig->loc, "probe point '%s' cannot run on the %s runtime: per-process "
			   "perf counters (.counter) are built for the bpf runtime only", c->point,
			   s->runtime);
		diag_hint("the bpf runtime runs it (--runtime=bpf)");
	}
	return ok;
}

bool runtime_check_program(const struct session *s, const struct program *prog)
{
	const struct runtime_info *rt = runtime_of(s);
	enum runtime_id id = runtime_id_of(s);
	const char *why = rt->unavailable ? rt->unavailable(s) : NULL;
	bool ok = true;

	if (why) {
		diag_error((struct srcloc){ 0 }, "the %s runtime cannot run here: %s", rt->name, why);
		diag_hint("%s", rt->unavailable_hint);
		return false;
	}
	for (int i = 0; i < prog->probes.len; i++) {
		const struct derived_probe *dp = VEC_AT(&prog->probes, i);

		if (probe_context(dp, id) == PCTX_NONE) {
			refuse_probe(s, dp);
			ok = false;
		}
	}
	/* a translation-time check, as stap's (SystemTap's semok/transko.stp -p2's them) */
	if (id != RUNTIME_BPF && s->last_pass >= 3 && !counters_ok(s, prog))
		ok = false;
	if (ok && id == RUNTIME_DYNINST && s->last_pass >= 5)
		ok = dyninst_targets(s, prog);
	return ok;
}
