/*
 * emit_kmod.c - what script.kmod.c adds to the kernel-context code for
 * the kernel runtime (--runtime=kernel): the table of its probes for the
 * module's main (runtime/kmod/stp_kmod_main.h), which registers them
 * when pmstap says start.
 *
 * The handlers are BPF's, so each probe gets the context its BPF
 * program would: a kernel.trace handler the tracepoint's arguments as
 * 64-bit words (a raw tracepoint's), a kprobe.function handler the
 * registers, a kernel.function handler the arguments as fentry/fexit
 * give them (words, the return value after them).  The module makes
 * them: a tracepoint's probe here, typed by BTF as the kernel calls it;
 * a kprobe's registers; a kernel.function's arguments from the
 * registers of its kprobe (a kretprobe keeps them from the entry);
 * timer.profile the interrupted registers as a perf event's sample, from
 * a per-CPU hrtimer; a syscall tracepoint the record of its event, built
 * from raw_syscalls' registers; perf.sw.* the event's registers as a
 * sample, kernel.data a breakpoint's; a process(PATH) probe the task's
 * registers, from a uprobe (a .mark's semaphore raised by the kernel;
 * process(PID) kept by its prologue); process.syscall raw_syscalls'
 * arguments, as a raw tracepoint's; process.begin/end and thread.begin/end
 * the sched tracepoints' (proc_sites()).
 * procfs("NAME") probes, which the runner serves on the other runtimes,
 * run in the module too: a reader or writer of /proc/systemtap/MODULE/NAME
 * runs them (runtime/kmod/procfs.c), with no context (NULL).
 */
#include <string.h>
#include <linux/btf.h>
#include <linux/perf_event.h>
#include "emit_int.h"
#include "emit_kprobe.h"
#include "probe_kinds.h"
#include "probes_btf.h"

/*
 * A syscalls:sys_enter_NAME or sys_exit_NAME probe (the syscall tapset's):
 * not tracepoints of the kernel's API but events that raw_syscalls'
 * sys_enter/sys_exit feed, with a record and no arguments.  The module
 * probes raw_syscalls for the syscall's number and builds the record
 * (stp_kmod_main.h), so the handler reads its fields as BPF's does.
 */
bool emit_kmod_syscall_tp(const struct derived_probe *dp)
{
	const struct tracepoint *tp = dp->tp;

	return dp->kind == PROBE_TRACE && tp && tp->system && tp->name &&
	       !strcmp(tp->system, "syscalls") &&
	       (!strncmp(tp->name, "sys_enter_", 10) || !strncmp(tp->name, "sys_exit_", 9));
}

/* Does DP's handler run in the module?  BPF's kernel-context probes, and procfs probes. */
bool emit_kmod_in_module(const struct derived_probe *dp)
{
	return emit_probe_in_kernel(dp) || probe_class(dp) == PCLASS_PROCFS;
}

/*
 * A tracepoint whose handler gets the arguments from a typed probe
 * (stp_tp_N): kernel.trace's but the syscall events', and process.syscall's
 * raw_syscalls:sys_enter/sys_exit (regs, and the number or the return
 * value), which its prologue filters by process as BPF's does.
 */
static bool typed_tp(const struct derived_probe *dp)
{
	if (dp->kind == PROBE_PROCESS_SYSCALL)
		return dp->tp != NULL;
	return probe_class(dp) == PCLASS_TRACEPOINT && !emit_kmod_syscall_tp(dp);
}

/* Where a handler runs in the module: its site's kind, or NULL when it has none yet. */
static const char *site_kind(const struct derived_probe *dp)
{
	switch (probe_class(dp)) {
	case PCLASS_PROC:	/* process.begin...: rows of their own (proc_sites()) */
		return "STP_KSITE_TRACEPOINT";
	case PCLASS_TRACEPOINT:
		if (emit_kmod_syscall_tp(dp))
			return dp->tp->name[4] == 'e' && dp->tp->name[5] == 'n' ? "STP_KSITE_SYS_ENTER"
										  : "STP_KSITE_SYS_EXIT";
		return "STP_KSITE_TRACEPOINT";
	case PCLASS_SAMPLE:
		if (dp->kind == PROBE_PROFILE)
			return "STP_KSITE_PROFILE";
		if (dp->kind == PROBE_KDATA)
			return "STP_KSITE_HWBKPT";
		/* a hardware counter's overflow comes in NMI context, where the module cannot run */
		return dp->perf_type == PERF_TYPE_SOFTWARE ? "STP_KSITE_PERF" : NULL;
	case PCLASS_UPROBE:
		/* the kernel's uprobe API, every process of the file (process(PID): the prologue) */
		if (!dp->elf_path)
			return NULL;
		return dp->is_return ? "STP_KSITE_URETPROBE" : "STP_KSITE_UPROBE";
	case PCLASS_KPROBE:
		if (!dp->kfunc)
			return NULL;
		if (dp->kfunc_kprobe)
			return dp->is_return ? "STP_KSITE_KRETPROBE" : "STP_KSITE_KPROBE";
		return dp->is_return ? "STP_KSITE_KFUNC_RETURN" : "STP_KSITE_KFUNC";
	case PCLASS_PROCFS:
		return dp->procfs_write ? "STP_KSITE_PROCFS_WRITE" : "STP_KSITE_PROCFS_READ";
	case PCLASS_NETFILTER:
		return "STP_KSITE_NETFILTER";
	default:
		return NULL;
	}
}

bool emit_kmod_supports(struct emitter *E, struct derived_probe *dp)
{
	(void)E;
	if (site_kind(dp))
		return true;
	if (probe_class(dp) == PCLASS_SAMPLE) {
		diag_error(dp->orig->loc, "probe point '%s' is not supported by the kernel runtime: "
			   "a hardware counter overflows in NMI context, where the module cannot "
			   "run a handler", dp->point);
		diag_hint("perf.sw.* events run in the module; the bpf runtime runs perf.hw.*");
		return false;
	}
	diag_error(dp->orig->loc, "probe point '%s' is not supported by the kernel runtime yet",
		   dp->point);
	diag_hint("kernel.trace, kernel.function/.statement, module(\"M\").function, "
		  "kprobe.function, timer.profile, perf.sw.*, "
		  "kernel.data, procfs, process(\"PATH\"/PID).function/.statement/.mark, "
		  "process.begin/end, thread.begin/end and process.syscall probes run in the "
		  "module; begin, end and timer probes in pmstap");
	return false;
}

/* The C type a tracepoint's probe declares argument ID with: the kernel's calling convention. */
static const char *param_ctype(uint32_t id)
{
	static const char *const s[] = { "", "int8_t", "int16_t", "", "int32_t",
					 "", "", "", "int64_t" };
	static const char *const u[] = { "", "uint8_t", "uint16_t", "", "uint32_t",
					 "", "", "", "uint64_t" };
	uint32_t t = btf_strip(id);
	const struct btf_type *bt = btf_type_at(t);

	switch (btf_kind(t)) {
	case BTF_KIND_PTR:
		return "const void *";
	case BTF_KIND_INT:
		if (BTF_INT_ENCODING(*(const uint32_t *)(bt + 1)) & BTF_INT_BOOL)
			return "bool";
		/* fall through */
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		if (bt->size == 1 || bt->size == 2 || bt->size == 4 || bt->size == 8)
			return btf_is_signed(t) ? s[bt->size] : u[bt->size];
		return NULL;
	default:
		return NULL;	/* a struct by value: not a tracepoint's */
	}
}

/* probe_N's typed probe for its tracepoint; false when BTF cannot type it. */
static bool tp_probe(struct derived_probe *dp, int i, FILE *out)
{
	const struct tracepoint *tp = dp->tp;
	int n = tp->args.len;

	if (!n && !btf_index_load()) {
		diag_error(dp->orig->loc, "probe point '%s' needs the kernel's BTF on the kernel "
			   "runtime: it types the tracepoint's arguments", dp->point);
		return false;
	}
	fprintf(out, "/* %s: the arguments, as the kernel passes them */\n", dp->point);
	fprintf(out, "static void stp_tp_%d(void *site", i);
	for (int a = 0; a < n; a++) {
		struct tp_arg *arg = VEC_AT(&tp->args, a);
		const char *ct = param_ctype((uint32_t)arg->btf_id);

		if (!ct) {
			diag_error(dp->orig->loc, "probe point '%s': its argument '%s' (%s) is passed "
				   "by value, which the kernel runtime cannot take yet", dp->point,
				   arg->name, arg->ctype);
			return false;
		}
		fprintf(out, ", %s a%d", ct, a);
	}
	fprintf(out, ")\n{\n\tuint64_t args[%d] = {", n ? n : 1);
	for (int a = 0; a < n; a++)
		fprintf(out, "%s(uint64_t)a%d", a ? ", " : " ", a);
	fprintf(out, " };\n\n\tstp_kmod_run_tp(site, args);\n}\n\n");
	return true;
}

/* What the module registers: a tracepoint's or a function's name, or the probe point. */
static const char *site_name(const struct derived_probe *dp)
{
	if (typed_tp(dp) || probe_class(dp) == PCLASS_TRACEPOINT)
		return dp->tp->name;	/* a syscall event's too: its number is found by it */
	switch (probe_class(dp)) {
	case PCLASS_KPROBE:
		return dp->ksite ? dp->ksite : dp->kfunc;
	case PCLASS_UPROBE:
		return dp->elf_path;
	case PCLASS_PROCFS:
		return dp->procfs_path;
	case PCLASS_SAMPLE:
		if (dp->kind == PROBE_KDATA)	/* a symbol, or "": the address (offset) */
			return dp->bp_symbol ? dp->bp_symbol : "";
		return dp->point;
	default:
		return dp->point;
	}
}

/* A kernel.data site's breakpoint, after all the positional fields. */
static const char *bp_fields(const struct derived_probe *dp)
{
	if (dp->kind != PROBE_KDATA)
		return "";
	return arena_printf(", .bp_type = %d, .bp_len = %d", dp->bp_type, dp->bp_len);
}

/* The site's offset: a uprobe's file offset, a kernel.data's address, a kprobe's. */
static unsigned long long site_offset(const struct derived_probe *dp)
{
	if (probe_class(dp) == PCLASS_UPROBE)
		return (unsigned long long)dp->offset;
	if (dp->kind == PROBE_KDATA)
		return (unsigned long long)dp->bp_addr;
	return (unsigned long long)(dp->ksite ? dp->ksite_offset : dp->kfunc_offset);
}

/* The site's words: a kernel.function's argument slots; 0 for the others. */
static int site_words(const struct derived_probe *dp)
{
	if (probe_class(dp) != PCLASS_KPROBE || dp->kfunc_kprobe)
		return 0;
	return emit_kprobe_words(dp);
}

/* A perf.* site's event: type, config and sample period (stap's default 1000000). */
static const char *perf_fields(const struct derived_probe *dp)
{
	if (probe_class(dp) != PCLASS_SAMPLE || dp->kind == PROBE_PROFILE)
		return "";
	return arena_printf(", %lld, %lld, %lld", (long long)dp->perf_type,
			    (long long)dp->perf_config,
			    (long long)(dp->perf_sample ? dp->perf_sample : 1000000));
}

/*
 * A procfs site's file, as stap's module makes it: the mode (0444 with a
 * .read probe, 0222 with a .write probe, less the .read probe's umask and
 * the first .write probe's) and the buffer (the .read probe's .maxsize(N),
 * else MAXSTRINGLEN, stap's STP_PROCFS_BUFSIZE), after the perf fields.
 */
static const char *procfs_fields(struct emitter *E, const struct derived_probe *dp)
{
	unsigned mode = 0, umask = 0;
	int64_t size = E->maxstringlen;
	bool wrote = false;

	if (probe_class(dp) != PCLASS_PROCFS)
		return "";
	for (int i = 0; i < E->prog->probes.len; i++) {
		struct derived_probe *o = VEC_AT(&E->prog->probes, i);

		if (probe_class(o) != PCLASS_PROCFS || strcmp(o->procfs_path, dp->procfs_path))
			continue;
		if (!o->procfs_write) {
			mode |= 0444;
			umask |= (unsigned)o->procfs_umask;
			size = o->procfs_maxsize ? o->procfs_maxsize : E->maxstringlen;
		} else if (!wrote) {
			mode |= 0222;
			umask |= (unsigned)o->procfs_umask;
			wrote = true;
		}
	}
	return arena_printf(", 0, 0, 0, 0%o, %lld", mode & ~umask, (long long)size);
}

/* A netfilter site's family, hook and priority, after the perf and procfs fields. */
static const char *nf_fields(const struct derived_probe *dp)
{
	if (probe_class(dp) != PCLASS_NETFILTER)
		return "";
	return arena_printf(", 0, 0, 0, 0, 0, %lld, %lld, %lld", (long long)dp->nf_pf,
			    (long long)dp->nf_hook, (long long)dp->nf_priority);
}

/*
 * process.begin/end and thread.begin/end: each a row for every sched
 * tracepoint its BPF program attaches to (emit_proc.c), with the module's
 * typed probe of it (runtime/kmod/proc.c), so the handler gets the
 * arguments a raw tracepoint's would.  process.end's old image at an
 * exec, which Linux 6.10's sched_prepare_exec gives BPF, is a kprobe at
 * begin_new_exec(), where that tracepoint is (none on a kernel without
 * kprobes: optional); its exit a kprobe at taskstats_exit(), where the
 * task still has the memory whose executable process("PATH") compares
 * (6.1's sched_process_exit comes after exit_mm()); the tasks that run already when the script starts
 * are a row that the module walks once pmstap's begin probes are done.
 */
struct proc_row {
	enum probe_kind kind;
	const char *site, *name, *fn;
	bool optional;
};

static const struct proc_row proc_rows[] = {
	{ PROBE_PROCESS_BEGIN, "STP_KSITE_TRACEPOINT", "sched_process_fork", "stp_kproc_fork", false },
	{ PROBE_PROCESS_BEGIN, "STP_KSITE_TRACEPOINT", "sched_process_exec", "stp_kproc_exec", false },
	{ PROBE_PROCESS_BEGIN, "STP_KSITE_PROC_EXISTING", "the tasks running", "NULL", false },
	{ PROBE_PROCESS_END, "STP_KSITE_PROC_EXIT", "taskstats_exit", "NULL", false },
	{ PROBE_PROCESS_END, "STP_KSITE_PROC_EXEC", "begin_new_exec", "NULL", true },
	{ PROBE_THREAD_BEGIN, "STP_KSITE_TRACEPOINT", "sched_process_fork", "stp_kproc_fork", false },
	{ PROBE_THREAD_BEGIN, "STP_KSITE_PROC_EXISTING", "the tasks running", "NULL", false },
	{ PROBE_THREAD_END, "STP_KSITE_TRACEPOINT", "sched_process_exit", "stp_kproc_exit", false },
};

static void proc_sites(const struct derived_probe *dp, int i, FILE *out)
{
	for (size_t r = 0; r < sizeof(proc_rows) / sizeof(proc_rows[0]); r++) {
		const struct proc_row *row = &proc_rows[r];

		if (row->kind == dp->kind)
			fprintf(out, "\t{ %d, %s, \"%s\", 0, 0, (void *)%s, (void *)probe_%d, %s },\n",
				i, row->site, row->name, row->fn, i,
				row->optional || (dp->orig && dp->orig->optional) ? "true" : "false");
	}
}

/* A .mark's semaphore, which the kernel raises while the uprobe is on (uprobe_register_refctr()). */
static const char *refctr_field(const struct derived_probe *dp)
{
	if (probe_class(dp) != PCLASS_UPROBE || !dp->ref_ctr_offset)
		return "";
	return arena_printf(", .ref_ctr_offset = %#llx", (unsigned long long)dp->ref_ctr_offset);
}

void emit_kmod_sites(struct emitter *E, FILE *out)
{
	bool ok = true;

	fprintf(out, "/* ---- the module (--runtime=kernel): its probes, for stp_kmod_main.h ---- */\n\n");
	for (int i = 0; i < E->prog->probes.len; i++) {
		struct derived_probe *dp = VEC_AT(&E->prog->probes, i);

		if (E->kernel_probe[i] && typed_tp(dp))
			ok &= tp_probe(dp, i, out);
	}
	fprintf(out, "static const struct stp_ksite stp_kmod_sites[] = {\n");
	for (int i = 0; ok && i < E->prog->probes.len; i++) {
		struct derived_probe *dp = VEC_AT(&E->prog->probes, i);
		const char *kind = site_kind(dp);
		const char *name = site_name(dp);

		if (!E->kernel_probe[i] || !kind)
			continue;
		if (probe_class(dp) == PCLASS_PROC && !typed_tp(dp)) {
			proc_sites(dp, i, out);
			continue;
		}
		fprintf(out, "\t{ %d, %s, %s, %#llx, %d, %s, (void *)probe_%d, %s%s%s%s%s%s%s },\n", i,
			kind, emit_c_string(name, strlen(name)), site_offset(dp), site_words(dp),
			typed_tp(dp) ? arena_printf("(void *)stp_tp_%d", i) : "NULL",
			i, dp->orig && dp->orig->optional ? "true" : "false", perf_fields(dp),
			procfs_fields(E, dp), nf_fields(dp), refctr_field(dp), bp_fields(dp),
			dp->kret_maxactive ? arena_printf(", .maxactive = %d", dp->kret_maxactive) : "");
	}
	fprintf(out, "\t{ -1 }\n};\n\n");
	fprintf(out, "/* the script's maps; the runtime's are listed in stp_kmod_main.h */\n");
	fprintf(out, "static struct stp_dmap_ref *const stp_kmod_script_maps[] = {");
	for (int i = 0; i < E->kmaps.len; i++)
		fprintf(out, "%s&%s", i ? ", " : " ", (const char *)VEC_AT(&E->kmaps, i));
	fprintf(out, "%sNULL };\n\n", E->kmaps.len ? ", " : " ");
	emit_guru_dispatch(E, out);
	fprintf(out, "#include \"kmod/stp_kmod_main.h\"\n");
}
