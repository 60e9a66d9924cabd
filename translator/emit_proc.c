/*
 * emit_proc.c - pass 3 for process.begin/end and thread.begin/end: a raw
 * tracepoint program each, on the sched tracepoints (see
 * runtime/bpf/stp_proc.bpf.h for which and why, and
 * runtime/user/proc_attach.c for how the runner attaches them).
 *
 * The section names the tracepoints, "raw_tp/sched_process_fork+
 * sched_process_exec" for process.begin; the prologue asks
 * stp_proc_begin() whether a hit is the probe's:
 *
 *	process.begin	a new process (fork), or a process's new image (exec)
 *	process.end	the last thread of a process exits, or its old image
 *			ends at an exec (sched_prepare_exec)
 *	thread.begin	a thread that is not a process's first starts
 *	thread.end	such a thread exits
 *
 * process(PID) keeps the hits of that process, process("PATH") those
 * whose executable is PATH's file (by device and inode, which the runner
 * notes at attach time: the path an exec names may be relative or a
 * link, and the kernel's own name for it cannot be read from a
 * tracepoint); with -c or -x, a probe without either keeps target()'s
 * process and its descendants, as stap does.
 *
 * process.syscall and process.syscall.return, stap's utrace probes, are
 * raw tracepoint programs on raw_syscalls' sys_enter and sys_exit: every
 * syscall of the system runs the prologue, which keeps those of the
 * probe's process as above (process(PID): its pid; process("PATH"): its
 * executable's file).  With -c or -x, every such probe but process(PID)
 * keeps target()'s tree only, as stap's task finder attaches to no other
 * process then (as the uprobes do, emit_uprobe.c).  Their $vars read the
 * task's user registers (stp_proc.bpf.h).
 *
 * The dyninst runtime runs these in the process itself, where
 * libstapdyn.so sees the events (runtime/dyninst/stp_dyn.h): no prologue.
 *
 * process.begin and thread.begin also fire once for each process (each
 * thread) that runs already when the script starts: their handler is an
 * inline function that two programs call, the tracepoint one and a task
 * iterator, probe_N_existing, which the runner runs once after the begin
 * probes.  The kernel runtime's module does the same walk itself, on
 * the same handler (emit_kmod.c, runtime/kmod/proc.c).
 */
#include <string.h>
#include "emit_proc.h"

struct proc_kind {
	const char *tracepoints;
	const char *kind;	/* enum stp_proc_kind of stp_proc.bpf.h */
};

static const struct proc_kind *proc_kind(enum probe_kind k, bool dp_return)
{
	static const struct proc_kind kinds[] = {
		{ "sched_process_fork+sched_process_exec", "STP_PROC_BEGIN" },
		{ "sched_process_exit+sched_prepare_exec", "STP_PROC_END" },
		{ "sched_process_fork", "STP_THREAD_BEGIN" },
		{ "sched_process_exit", "STP_THREAD_END" },
		{ "sys_enter", "STP_PROC_SYSCALL" },
		{ "sys_exit", "STP_PROC_SYSCALL" },
	};

	switch (k) {
	case PROBE_PROCESS_BEGIN: return &kinds[0];
	case PROBE_PROCESS_END: return &kinds[1];
	case PROBE_THREAD_BEGIN: return &kinds[2];
	case PROBE_THREAD_END: return &kinds[3];
	default: return &kinds[dp_return ? 5 : 4];
	}
}

bool emit_proc_section(struct emitter *E, struct derived_probe *dp, const char **sec,
		       const char **ctype, enum stp_probe_kind *kind, const char **prologue)
{
	const struct proc_kind *pk = proc_kind(dp->kind, dp->is_return);
	bool syscall = dp->kind == PROBE_PROCESS_SYSCALL;
	bool in_target = (E->s->target_cmd || E->s->target_pid > 0) && (!dp->path || syscall) &&
			 dp->pid <= 0;

	if (E->dyninst) {	/* called by libstapdyn.so at the event, in the process */
		*sec = "dyn";
		*ctype = "struct pt_regs *";
		*kind = STP_PROBE_RAW_TRACEPOINT;
		return true;
	}
	*sec = arena_printf("raw_tp/%s", pk->tracepoints);
	*ctype = "struct bpf_raw_tracepoint_args *";
	*kind = STP_PROBE_RAW_TRACEPOINT;
	*prologue = arena_printf("\tif (!stp_proc_begin(ctx, %s, %d, %lld, %s, %s))\n\t\treturn 0;\n",
				 pk->kind, dp->id, (long long)(dp->pid > 0 ? dp->pid : 0),
				 dp->path ? "true" : "false", in_target ? "true" : "false");
	return true;
}

bool emit_proc_existing(const struct emitter *E, const struct derived_probe *dp)
{
	/* the kernel runtime's module walks the tasks itself (runtime/kmod/proc.c) */
	return !E->dyninst && !E->kmod &&
	       (dp->kind == PROBE_PROCESS_BEGIN || dp->kind == PROBE_THREAD_BEGIN);
}

void emit_proc_programs(FILE *out, const char *sec, int index)
{
	fprintf(out, "SEC(\"%s\")\nint probe_%d(struct bpf_raw_tracepoint_args *ctx)\n{\n"
		"\treturn probe_%d_run(ctx);\n}\n\n", sec, index, index);
	fprintf(out, "/* the same, once for each task that runs already (see stp_proc.bpf.h) */\n");
	fprintf(out, "SEC(\"iter/task\")\nint probe_%d_existing(struct bpf_iter__task *it)\n{\n"
		"\tuint64_t args[2] = { (uint64_t)it->task, STP_PROC_EXISTING };\n\n"
		"\tif (!it->task)\n\t\treturn 0;\n"
		"\treturn probe_%d_run((struct bpf_raw_tracepoint_args *)args);\n}\n\n",
		index, index);
}

/* $syscall, $argN, $$parms and $return of process.syscall[.return] (pass 2 checked which). */
const char *emit_proc_target(struct emitter *E, struct expr *e)
{
	struct vec pieces = { 0 };

	if (!strcmp(e->name, "$syscall"))
		return "(int64_t)stp_usc_regs()->orig_ax";
	if (!strcmp(e->name, "$return"))
		return "(int64_t)stp_usc_regs()->ax";
	if (strcmp(e->name, "$$parms"))
		return arena_printf("stp_usc_arg(%c)", e->name[4]);
	for (int i = 1; i <= 6; i++) {	/* stap's "$arg1=%#x $arg2=%#x ..." */
		struct emit_piece *p = ARENA_NEW(struct emit_piece);

		p->lit = arena_printf("%s$arg%d=", i > 1 ? " " : "", i);
		p->conv = "0x%llx";
		p->val = arena_printf("stp_usc_arg(%d)", i);
		vec_push(&pieces, p);
	}
	return emit_bpf_snprintf(E, &pieces);
}
