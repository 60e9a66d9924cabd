/*
 * program.h - the elaborated program: what pass 2 hands to pass 3.
 *
 * Everything here is resolved and typed.  Every expression has its type
 * (expr->type); every symbol points at its declaration (expr->decl); every
 * call to a script or tapset function points at the first function of its
 * overload chain (expr->func); every call to a print-family builtin has
 * expr->builtin set (enum sema_builtin).  Nothing that pass 2 elided (unused
 * functions, globals, locals assigned but never read) is reachable from
 * here.  All memory is in the arena.
 *
 * Target variables: in kernel.trace probes $name is a field of the event
 * record (struct tp_field) or an argument of the raw tracepoint (struct
 * tp_arg, ->member chains typed through BTF; a member that is an array,
 * such as $next->comm, is a long holding its address, as in stap, and
 * $next->comm$ its contents as a string); @defined() there, and in
 * probes that have no target variables at all, is already a literal 0 or
 * 1, with the branches it ruled out gone.  In probes whose variables come
 * from debuginfo (kernel.function, process(..).function/.statement/.mark)
 * $vars are typed long (string for $$vars and $var$ forms) and EXPR_DEFINED
 * nodes remain, for the pass that reads the debuginfo.
 */
#ifndef PMSTAP_PROGRAM_H
#define PMSTAP_PROGRAM_H

#include <stdint.h>
#include "ast.h"

/* expr->builtin for EXPR_CALL nodes that are not script functions. */
enum sema_builtin {
	BUILTIN_NONE,
	BUILTIN_PRINT,		/* print(v, ...): values back to back */
	BUILTIN_PRINTLN,	/* println(v, ...) and a newline */
	BUILTIN_PRINTF,		/* printf("fmt", v, ...) */
	BUILTIN_PRINTD,		/* printd("delim", v, ...) */
	BUILTIN_PRINTDLN,	/* printdln("delim", v, ...) and a newline */
	BUILTIN_SPRINT,		/* the s- forms return the text as a string */
	BUILTIN_SPRINTLN,
	BUILTIN_SPRINTF,
	BUILTIN_SPRINTD,
	BUILTIN_SPRINTDLN,
};

/* One field of a tracepoint's record, from tracefs' format file. */
struct tp_field {
	const char *name;
	const char *ctype;	/* as the format spells it: "pid_t", "char", "__data_loc char[]" */
	int offset;		/* bytes into the record */
	int size;		/* bytes */
	bool is_signed;
	int array_len;		/* N for "char x[N]", -1 for __data_loc, else 0 */
	bool is_common;		/* common_pid, ...: not part of $$parms */
	enum type type;		/* what $name reads as: TYPE_STRING for char arrays, else TYPE_LONG */
};

/* An argument the kernel passes a tracepoint (its TP_PROTO), from BTF. */
struct tp_arg {
	const char *name;	/* "prev" */
	int btf_id;		/* its type in /sys/kernel/btf/vmlinux */
	const char *ctype;	/* "struct task_struct *" */
};

/*
 * A tracepoint of this system (tracefs events/SYSTEM/NAME).  $name in its
 * probes reads a field of the event record, else an argument of the raw
 * tracepoint (as stap's $prev in sched_switch; ->member chains on it are
 * typed through BTF).
 */
struct tracepoint {
	const char *system;	/* "sched" */
	const char *name;	/* "sched_switch" */
	int id;			/* tracefs' event id, or -1 if the format had none */
	struct vec fields;	/* struct tp_field *, in record order (common_* first) */
	struct vec args;	/* struct tp_arg *: the raw tracepoint's arguments; empty without BTF */
};

/* The families of concrete probe points pass 2 accepts. */
enum probe_kind {
	PROBE_BEGIN,		/* begin[(prio)] */
	PROBE_END,		/* end[(prio)] */
	PROBE_ERROR,		/* error[(prio)] */
	PROBE_NEVER,		/* never */
	PROBE_TIMER,		/* timer.UNIT(N)[.randomize(R)] */
	PROBE_PROFILE,		/* timer.profile[.tick] */
	PROBE_PERF,		/* perf.type(T).config(C) / perf.sw.NAME / perf.hw.NAME [.sample(S)] */
	PROBE_TRACE,		/* kernel.trace("SYS:NAME"): one per matched tracepoint */
	PROBE_KFUNC,		/* kernel.function, module().function, kprobe.function [.return] */
	PROBE_KSTATEMENT,	/* kernel.statement, module().statement, kprobe.statement */
	PROBE_PROCESS_BEGIN,	/* process[(PATH|PID)].begin */
	PROBE_PROCESS_END,	/* process[(PATH|PID)].end */
	PROBE_THREAD_BEGIN,	/* thread.begin, process[(..)].thread.begin */
	PROBE_THREAD_END,
	PROBE_PROCESS_SYSCALL,	/* process[(PATH|PID)].syscall[.return]: raw_syscalls, filtered */
	PROBE_UFUNC,		/* process(..)[.library(..)].function(..)[.call|.return] */
	PROBE_USTATEMENT,	/* process(..).statement(..) */
	PROBE_UMARK,		/* process(..)[.provider(..)].mark(..) (SDT) */
	PROBE_UPLT,		/* process(..)[.library(..)].plt[(..)][.return]: a PLT entry */
	PROBE_PROCFS,		/* procfs[("NAME")][.umask(N)].read[.maxsize(N)] / .write: a FIFO */
	PROBE_NETFILTER,	/* netfilter.hook("H").pf("P")[.priority("N")]: a BPF netfilter link */
	PROBE_KDATA,		/* kernel.data(ADDR|"SYM")[.length(N)].write/.rw: a hardware breakpoint */
	PROBE_KIND_COUNT,	/* each kind has its row in probe_kinds.c */
};

/*
 * One probe of the program: a concrete probe point and the handler that
 * runs there.  A script probe with several points, a wildcard, or an alias
 * that stands for several points gives several derived probes; each has its
 * own copy of the body (so $vars, locals and types are per probe).
 */
struct derived_probe {
	int id;			/* 0.. in program order: a name for generated code */
	const char *point;	/* the concrete point as text: kernel.trace("sched:sched_switch") */
	enum probe_kind kind;
	struct probe *probe;	/* the script (or tapset) probe it came from */
	struct probe_point *orig;	/* the point as written in that probe */
	struct vec aliases;	/* struct probe_alias *: the expansion chain, outermost first */
	struct stmt *body;	/* the merged handler: alias prologues, the body, epilogues */
	struct vec locals;	/* struct vardecl *: the handler's locals, typed */
	struct expr *cond;	/* the point's (and aliases') if-conditions joined with &&, or NULL */

	/* parameters of the point, as its kind uses them */
	int64_t priority;	/* begin/end/error(N); 0 when not given */
	const char *timer_unit;	/* "s", "ms", "us", "ns", "hz", "jiffies" */
	int64_t timer_value;
	int64_t timer_randomize;	/* 0: not randomized */
	int64_t interval_ns;	/* the timer's period in ns (hz and jiffies converted) */
	const char *perf_event;	/* "sw.cpu_clock", "hw.cpu_cycles", or NULL for type/config */
	int64_t perf_type;
	int64_t perf_config;
	int64_t perf_sample;	/* sample period; 0: the default */
	struct tracepoint *tp;	/* PROBE_TRACE */
	const char *function;	/* function name or pattern (may hold wildcards, @file, :line) */
	int function_matches;	/* how many kernel functions the pattern matched (kernel only) */
	const char *module;	/* module("m"), or NULL for the kernel */
	const char *statement;	/* statement("...") as given */
	bool is_return;		/* .return */
	bool entry_companion;	/* made by pass 2 to save @entry values: not the script's to list */
	const char *path;	/* process("PATH"): absolute, or NULL */
	int64_t pid;		/* process(PID), or 0 */
	const char *library;	/* .library("lib") or NULL */
	const char *provider;	/* .provider("p") or NULL */
	const char *mark;	/* .mark("m") */

	/* user-space probes (PROBE_UFUNC, PROBE_USTATEMENT, PROBE_UMARK), once resolved */
	/* (function: the function's name; PROBE_UPLT: the imported function's, $$name) */
	uint64_t addr;		/* the probe's address in the ELF file (virtual, as symtab/DWARF give it) */
	uint64_t entry_addr;	/* the function's entry (its low_pc or symbol value) */
	uint64_t func_lo, func_hi;	/* an out-of-line function's code [lo, hi) as DWARF gives it; 0: not known */
	uint64_t offset;	/* the file offset a uprobe attaches at */
	const char *elf_path;	/* the ELF file probed: dp->path, or the .library() it names */
	const char *dwarf_path;	/* the file that holds its DWARF (elf_path or a separate debug file); NULL: none */
	uint64_t ref_ctr_offset;	/* PROBE_UMARK: the file offset of its semaphore, or 0 */
	const struct sdt_note *sdt;	/* PROBE_UMARK: its .note.stapsdt entry (probes_sdt.h) */
	const char *pn;		/* pn(): the point after wildcard expansion, before alias
				   resolution (syscall.read for syscall.*) */
	const char *list_point;	/* the point as -l lists it, where it differs (PROBE_UPLT), or NULL */

	/* kernel functions (PROBE_KFUNC), once resolved (probes_btf.h) */
	const char *kfunc;	/* the function probed, no wildcard: "ksys_read"; NULL if unresolved */
	bool kfunc_kprobe;	/* a kprobe/kretprobe (kprobe.function, module(), no BTF); else fentry/fexit */
	bool kfunc_inline;	/* an instance of an inline function, entered at addr (in vmlinux, kdwarf.h) */
	uint64_t kfunc_offset;	/* a kprobe this far into kfunc (an inline instance's entry) */
	uint64_t kfunc_die;	/* a DWARF DIE for its $params (an inline instance, a clone; kdwarf.h) */
	uint64_t kfunc_dwarf;	/* its DWARF DIE where known, for -L (kdwarf.h), or 0 */
	const char *kfunc_untyped; /* why a module's function is not typed by its BTF, or NULL */
	int8_t kfunc_ret_ip;	/* pass 3, a .return: 1 if its handler reads addr() (emit_kprobe.c), -1 not, 0 unknown */
	int32_t kret_maxactive;	/* .return.maxactive(N): N, or 0 for the kernel's default */
	const char *ksite;	/* a module's F defined twice: the kprobe's "M:ANCHOR" (kmodfile.h) */
	uint64_t ksite_offset;	/* and the global F's offset from ANCHOR */

	/* PROBE_PROCFS (probes_procfs.c) */
	const char *procfs_path;	/* the file's name in the module's folder: "command" by default */
	bool procfs_write;	/* .write: the handler gets what was written; else .read */
	int64_t procfs_umask;	/* .umask(N); stap's default: 0044 (.read), 0022 (.write) */
	int64_t procfs_maxsize;	/* .maxsize(N): the read buffer's bytes; 0: MAXSTRINGLEN */

	/* PROBE_NETFILTER (probes_netfilter.c) */
	int64_t nf_pf, nf_hook, nf_priority;	/* NFPROTO_*, NF_INET_* and the like, as numbers */
	const char *nf_unknown;	/* a name guru mode let through that has no number, or NULL */

	/* PROBE_KDATA (probes_kdata.c): also perf_type PERF_TYPE_BREAKPOINT, perf_sample 1 */
	uint64_t bp_addr;	/* the watched address; 0: bp_symbol's */
	const char *bp_symbol;	/* kernel.data("SYM"), looked up when registered; or NULL */
	int bp_type;		/* HW_BREAKPOINT_W (.write) or HW_BREAKPOINT_RW (.rw) */
	int bp_len;		/* HW_BREAKPOINT_LEN_1/2/4/8 */
};

/*
 * A per-process perf counter: perf.*.process("PATH").counter("NAME") {}
 * (probes_counter.c).  It has no handler: the runner keeps one perf event
 * per thread of each process that runs PATH, and @perf("NAME") in a
 * process("PATH") uprobe handler reads the event of the thread it runs in.
 */
struct perf_counter {
	const char *name;	/* NAME */
	const char *event;	/* "perf.sw.page_faults", "perf.type(T).config(C)" */
	const char *point;	/* EVENT.process("PATH").counter("NAME") */
	struct probe_point *orig;	/* the point as written */
	int64_t type;		/* perf_event_attr.type and .config */
	int64_t config;
	const char *path;	/* PATH, absolute; NULL until the first @perf names it */
	bool used;		/* a handler reads it */
};

/* Functions of one name and arity, in the order next walks them (priority). */
struct overload {
	const char *name;
	int arity;
	struct vec funcs;	/* struct func *, ascending priority, then declaration order */
};

struct program {
	struct stapfile *script;
	struct vec globals;	/* struct vardecl *: used globals, the script's first */
	struct vec funcs;	/* struct func *: called functions, the script's first */
	struct vec overloads;	/* struct overload *: only chains with more than one function */
	struct vec probes;	/* struct derived_probe * */
	struct vec embeds;	/* struct embed *: top-level %{ %} of the script and used tapsets */
	struct vec tapset_files;	/* struct stapfile *: the tapset files anything came from */
	struct vec autoprint;	/* struct vardecl *: globals written but never read (stap prints them at exit) */
	struct vec counters;	/* struct perf_counter *, in declaration order */
};

#endif
