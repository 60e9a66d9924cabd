/*
 * emit_int.h - pass 3 internals, shared by the emit*.c files:
 *
 *	emit.c		the driver: what runs where, limits, globals, files
 *	emit_data.c	globals: structs, maps, lvalues, arrays, statistics
 *	emit_expr.c	expressions, shared by both contexts
 *	emit_stmt.c	statements, shared; loops and foreach per context
 *	emit_print.c	the printf family: records (kernel), format.c (user)
 *	emit_symdefer.c	symbol names printed from kernel context (emit_symdefer.h)
 *	emit_func.c	script and embedded-C functions, call graph, frames
 *	emit_bpf.c	kernel context: script.bpf.c, probe programs, $vars
 *	emit_btf.c	kernel context: $arg->member chains and @cast through BTF
 *	emit_kprobe.c	kernel context: kernel function probes (emit_kprobe.h)
 *	emit_uprobe.c	kernel context: user-space probes, SDT $argN (emit_uprobe.h)
 *	emit_dwarf.c	kernel context: user-space $vars through DWARF (emit_dwarf.h)
 *	emit_proc.c	kernel context: process and thread begin/end (emit_proc.h)
 *	emit_merge.c	kernel context: handlers alike but for names, one program
 *	emit_body.c	kernel context: a probe's body on many points, one program
 *	emit_user.c	user context: script.c's probe functions
 *	emit_dyninst.c	script.dyn.c: kernel context run natively in the probed process
 *	emit_kmod.c	script.kmod.c: kernel context in a kernel module
 *	emit_meta.c	script.c's struct stp_meta
 *
 * Generated code of both contexts shares its statements: a handler or
 * function keeps its locals and temporaries in a frame struct (`f->`), the
 * scalar globals in struct stp_globals (`g->`), arrays behind map handles
 * (`&g_NAME`), and calls the helpers of runtime/bpf/stp.bpf.h or
 * runtime/user/stp_user.h, which have the same names and meanings.  In
 * kernel context frames sit in the per-CPU context at offsets fixed here
 * (no recursion), loops are bpf_loop() callbacks; in user context frames
 * are C locals and loops are C loops.
 */
#ifndef PMSTAP_EMIT_INT_H
#define PMSTAP_EMIT_INT_H

#include <stdio.h>
#include <stdlib.h>
#include "../runtime/stp_meta.h"
#include "emit.h"
#include "hmap.h"
#include "program.h"

/* stp_meta.h's enum stp_meta_hist_kind, as stored in struct eglobal */
#define STP_HIST_LOG_KIND 1
#define STP_HIST_LINEAR_KIND 2

enum ectx {
	ECTX_KERNEL,
	ECTX_USER,
};

/* A global of the program. */
struct eglobal {
	struct vardecl *d;
	int index;			/* in stp_meta.globals */
	const char *cname;		/* C name: the stp_globals field, g_NAME, key_NAME... */
	bool array;			/* arity > 0 */
	bool stats;
	int64_t max_entries;
	int keystr;			/* bytes of each string key column */
	/* statistics: the histogram every @hist_* of it asks for */
	int hist;			/* enum stp_meta_hist_kind: 0 none, 1 log, 2 linear */
	int64_t start, stop, interval;
	int buckets;
	struct srcloc hist_loc;
	int shift;			/* @variance(s, N) */
	bool variance;			/* @variance(s) is read somewhere */
	bool shift_set;
	bool exported;
	bool slice_fns;			/* its slice functions are written (emit_data.c) */
};

/* A script or embedded-C function. */
struct efunc {
	struct func *fn;
	const char *cname;		/* fn_NAME */
	bool kernel, user;		/* called from handlers of that context */
	struct vec callees;		/* struct efunc * */
	int mark;			/* recursion search: 0 new, 1 on the path, 2 done */
	struct vec callers;		/* struct efunc * (kernel frames) */
	bool probe_caller;		/* called from a kernel handler directly */
	int kcalls;			/* BPF: the calls of it in kernel handlers and functions */
	bool outline;			/* BPF: a subprogram of its own, not inlined */
};

/* The frame of one handler or function in one context. */
struct frame {
	const char *name;		/* frame_probe_3, frame_fn_foo */
	const char *off;		/* kernel: its offset macro FRAME_probe_3 */
	int nstr, maxstr;		/* string temporaries s[] */
	int *nkey, *maxkey;		/* key temporaries per global index */
	int nlong;			/* long temporaries */
	bool has_ret;			/* int64_t ret */
	bool empty;			/* nothing in it: no struct is declared */
	bool pushed;			/* a module's function: pushed on its context's frame
					   stack (recursion), at MAXNESTING error site push_site */
	int push_site;
	FILE *fields;			/* locals, in declaration order */
	char *fields_buf;
	size_t fields_len;
};

/* A C function being written: its body goes to a memory stream. */
struct cfunc {
	FILE *f;
	char *buf;
	size_t len;
	int indent;
	int ntemps;			/* int64_t t1..tN */
	int nptrs;			/* const char *p1..pN */
	bool uses_g;			/* needs the globals pointer */
	bool uses_ctx;			/* reads the program's context (kernel: $vars) */
	bool uses_env;			/* passes struct stp_env to a loop body */
	bool is_callback;		/* a kernel loop body: errors return 1 */
	bool has_ret_ptr;		/* char *ret: a string function */
	const char *err_label;		/* where an error jumps; NULL: leave the C function */
	const char *break_label, *cont_label;	/* user loops */
	struct cfunc *parent;
};

struct eformat {
	const char *body;
	struct srcloc loc;
};

struct eerror {
	const char *what;
	struct srcloc loc;
	const char *near;	/* the token at loc, as stap names it: "operator '/'" */
};

struct emitter {
	struct session *s;
	struct program *prog;
	enum ectx ctx;

	/* limits */
	int64_t maxstringlen, maxaction, maxmapentries, maxerrors, maxnesting, ringbuf;
	int ncpus;

	struct vec globals;		/* struct eglobal * */
	struct hmap gmap;		/* struct vardecl * -> struct eglobal * */
	bool has_scalars;		/* stp_globals exists */
	struct vec funcs;		/* struct efunc * */
	struct hmap fmap;		/* struct func * -> struct efunc * */
	struct vec ublocks;		/* struct ublock *: %{ %} user context has the module run */
	struct hmap ublock_of;		/* its struct expr * or struct stmt * -> struct ublock * */
	struct vec formats;		/* struct eformat * */
	struct vec errors;		/* struct eerror * */
	int rec_size;			/* the largest kernel record */
	int zero_size;			/* the largest statistics value */
	int seq;			/* labels, callbacks */

	/* output */
	FILE *decls;			/* frame structs */
	char *decls_buf;
	size_t decls_len;
	FILE *protos;			/* function prototypes */
	char *protos_buf;
	size_t protos_len;
	FILE *defs;			/* function definitions */
	char *defs_buf;
	size_t defs_len;

	/* what is being written */
	struct derived_probe *dp;	/* the handler being written */
	int hprobe;			/* its index, where its callbacks are its own; else -1 */
	int hseq;			/* its labels and callbacks, numbered within it (emit_seq) */
	FILE *hdefs;			/* its callbacks' definitions, written with its program */
	const char *ctx_ctype;		/* kernel: the type of its program's context */
	bool raw_args;			/* kernel.trace: a raw_tp program, $vars are arguments */
	bool *kernel_probe;		/* per probe: runs in the kernel (dyninst: in the probed process) */
	bool dyninst;			/* script.dyn.c: the kernel-context code, native (emit_dyninst.c) */
	bool kmod;			/* script.kmod.c: the same in a kernel module (emit_kmod.c) */
	int64_t kmod_items;		/* elements the sorted foreach loops collect at most */
	int kmod_re_states;		/* the largest NFA that matched() runs */
	struct vec kmaps;		/* kernel side: the names of the maps the file declares */
	int *probe_kinds;		/* per probe: enum stp_probe_kind */
	bool *frame_empty;		/* per probe: its handler has no frame (no locals, temporaries) */
	int *prog_of;			/* per probe: the probe whose program it runs (itself, or merged) */
	int *member_of;			/* per probe: its row in a merged program's tables */
	struct merge *merge;		/* handlers held to be merged (emit_merge.c) */
	struct body_state *bodies;	/* split handlers' bodies (emit_body.c) */
	bool no_merge;			/* PMSTAP_NO_MERGE: one program per probe, none split */
	bool no_subprogs;		/* PMSTAP_NO_SUBPROGS: every script function inlined */
	int rawtp_cookies;		/* the kernel gives raw_tp programs cookies (Linux 6.10):
					   1 yes, 0 no, -1 not asked yet (rawtp_cookies()) */
	int sc_probes[2];		/* probes on syscalls:sys_enter_*, sys_exit_* */
	bool sc_dispatch;		/* enough of them: stp_syscall.bpf.h's dispatchers */
	struct efunc *fn;		/* the function, or NULL in a handler */
	struct frame *frame;
	struct cfunc *cf;
	int side_effects;		/* stores and calls emitted so far */
	const char *str_into;		/* the temporary a string ternary's arm that is a
					   ternary writes its result to (ternary()) */
	const char **slice_vals;	/* user foreach over a slice: the fixed keys */
	int foreach_depth;		/* user foreach iterators open */
	const char *foreach_its[16];
	struct vec flavours;		/* kernel structs read through CO-RE flavours (emit_flavour.c) */
	struct hmap flavour_of;		/* BTF id -> its flavour */
	struct hmap flavour_enums;	/* enum names written (str_keys) */
	struct hmap reported;		/* one error per construct and context */
	int errors_reported;
};

/* A piece of a string formatted by bpf_snprintf: literal text, then a value. */
struct emit_piece {
	const char *lit;		/* bytes ('%' doubled) */
	const char *conv;		/* bpf_snprintf directive, or NULL */
	const char *val;		/* its C value */
	bool str;
	const char *width;		/* a '*' width's C value, or NULL */
	bool left;			/* '-': pad on the right */
};

/* emit.c */
const char *emit_script_name(const struct emitter *E);
void emit_extra_defines(struct emitter *E, FILE *out);
void emit_line(struct emitter *E, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void emit_raw(struct emitter *E, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *emit_c_string(const char *bytes, size_t len);
const char *emit_c_literal(const char *body);
size_t emit_unescape(char *dst, const char *body);
int emit_error_site(struct emitter *E, struct srcloc loc, const char *what);
int emit_format(struct emitter *E, const char *body, struct srcloc loc);
bool emit_unsupported(struct emitter *E, struct srcloc loc, const char *what, const char *hint);
const char *emit_loc_text(struct srcloc loc);
const char *emit_probe_text(const struct derived_probe *dp);
void emit_drop_final_jump(char *body);
struct cfunc *emit_cfunc_begin(struct emitter *E);
void emit_cfunc_end(struct emitter *E, struct cfunc *cf, char **text);
bool emit_is_kernel(const struct emitter *E);
int emit_seq(struct emitter *E);
const char *emit_callback_name(const struct emitter *E, const char *kind, int n);
FILE *emit_callback_out(const struct emitter *E);

/* emit_data.c */
void emit_data_setup(struct emitter *E);
struct eglobal *emit_global(struct emitter *E, const struct vardecl *d);
/* An array whose values live in slots of an mmapable array (stp_slots.bpf.h). */
bool emit_slotted(const struct eglobal *g);
void emit_data_decls(struct emitter *E, FILE *out);
const char *emit_key(struct emitter *E, struct eglobal *g, const struct vec *args);
const char *emit_var_ref(struct emitter *E, struct vardecl *d);
const char *emit_assign(struct emitter *E, struct expr *e, bool used);
const char *emit_incdec(struct emitter *E, struct expr *e, bool used);
const char *emit_index_read(struct emitter *E, struct expr *e);
const char *emit_in(struct emitter *E, struct expr *e);
const char *emit_stat(struct emitter *E, struct expr *e);
const char *emit_hist_index(struct emitter *E, struct expr *e);
void emit_delete(struct emitter *E, struct stmt *s);
const char *emit_stat_key(struct emitter *E, struct expr *target, struct eglobal **gp);

/* emit_expr.c */
struct capture {		/* statements written aside, to be placed later */
	FILE *saved;
	FILE *f;
	char *buf;
	size_t len;
};
void emit_capture_begin(struct emitter *E, struct capture *cap);
void emit_capture_end(struct emitter *E, struct capture *cap);
void emit_capture_put(struct emitter *E, struct capture *cap);
const char *emit_number(int64_t v);
const char *emit_snapshot(struct emitter *E, const char *text, enum type t);
/* A bit field's bits: WIDTH of RAW from SHIFT up; the read size that covers BITS bits. */
const char *emit_bits_of(const char *raw, int shift, int width, bool sgn);
int emit_bytes_for(int bits);
unsigned long long emit_low_bits(int n);
void emit_exprs_ordered(struct emitter *E, struct expr **es, int n, const char **out);
const char *emit_arith(struct emitter *E, const char *op, const char *l, const char *r,
		       struct srcloc loc);
const char *emit_expr(struct emitter *E, struct expr *e);
const char *emit_expr_void(struct emitter *E, struct expr *e);
const char *emit_strbuf(struct emitter *E, struct expr *e);
const char *emit_cond(struct emitter *E, struct expr *e);
const char *emit_cond_bare(struct emitter *E, struct expr *e);
const char *emit_long_temp(struct emitter *E);
const char *emit_str_temp(struct emitter *E);
void emit_fail(struct emitter *E);
void emit_check(struct emitter *E, int site);
bool emit_is_stable(const char *text);
void emit_temps_mark(struct emitter *E, int *mark, int **keys);
void emit_temps_release(struct emitter *E, int mark, int *keys);

/* emit_stmt.c */
void emit_stmt(struct emitter *E, struct stmt *s);
void emit_locals_init(struct emitter *E, struct vec *locals);
int emit_count_stmts(const struct stmt *s);

/* emit_print.c */
const char *emit_print_call(struct emitter *E, struct expr *e, bool used);
const char *emit_bpf_snprintf(struct emitter *E, struct vec *pieces);

/*
 * A pretty-printed text ($x$, $x$$, $$vars) being put together: literal
 * text and values, then one string (emit_bpf_snprintf()).  DWARF's
 * (emit_dwarf.c) and BTF's (emit_btf.c) printers build it alike.
 */
#define PRETTY_MAX_VALUES 32	/* as stap: values in one pretty-printed text */
struct emit_pretty {
	struct emitter *E;
	struct vec pieces;	/* struct emit_piece * */
	const char *lit;	/* text waiting for the next value */
	bool full;		/* $$: nested structs and arrays too */
	int values;
};
void emit_pretty_lit(struct emit_pretty *p, const char *text);
/* A value VAL printed with CONV (a string temporary when STR), after the text waiting. */
void emit_pretty_put(struct emit_pretty *p, const char *conv, const char *val, bool str);
/* A char as stap's '%#c' shows it: itself when printable, else an octal escape. */
void emit_pretty_char(struct emit_pretty *p, const char *val);
/* The text: a string temporary. */
const char *emit_pretty_text(struct emit_pretty *p);

/* emit_func.c */
typedef void (*emit_walk_fn)(struct expr *e, void *arg);
void emit_walk_expr(struct expr *e, emit_walk_fn fn, void *arg);
void emit_walk_stmt(struct stmt *s, emit_walk_fn fn, void *arg);
void emit_walk_program(struct emitter *E, emit_walk_fn fn, void *arg);
void emit_funcs_analyze(struct emitter *E);
struct efunc *emit_efunc(struct emitter *E, const struct func *fn);
const char *emit_call(struct emitter *E, struct expr *e, bool used);
void emit_functions(struct emitter *E);
struct frame *emit_frame_new(struct emitter *E, const char *name);
void emit_frame_local(struct emitter *E, struct frame *fr, struct vardecl *d);
void emit_frame_decl(struct emitter *E, struct frame *fr, bool handler);
void emit_cfunc_decls(struct emitter *E, struct cfunc *cf, FILE *out, const char *fail_ret);
void emit_func_offsets(struct emitter *E, FILE *out);

/* emit_bpf.c */
int emit_bpf_file(struct emitter *E, FILE *out);
const char *emit_target(struct emitter *E, struct expr *e);
void emit_bpf_loop(struct emitter *E, struct stmt *s);
void emit_bpf_foreach(struct emitter *E, struct stmt *s);
bool emit_probe_in_kernel(const struct derived_probe *dp);
/* The function NAME if the program calls it (it is among those kept), else NULL (emit_bpf.c). */
const struct func *emit_called(const struct emitter *E, const char *name);
/* Does the program call pn()?  Only then do the tables carry its names (emit_bpf.c, emit_meta.c). */
bool emit_uses_pn(const struct emitter *E);
/* A string temporary holding S (a constant), for kernel-context code. */
const char *emit_string_const(struct emitter *E, const char *s);

/* emit_merge.c */
void emit_merge_add(struct emitter *E, int index, const char *text, const char *cbs,
		    const char *decl, const char *family);
void emit_merge_flush(struct emitter *E, FILE *out);
/* TEXT without its first two lines, comments, INDEX and copied literals (into LITS). */
char *emit_merge_canonical(const char *text, int index, struct vec *lits);
/* Loop callbacks CBS (NULL: none) of handler INDEX, canonical as it is; "" for none. */
char *emit_merge_callbacks(const char *cbs, int index, struct vec *lits);

/* emit_body.c */
struct stmt *emit_body_inner(struct emitter *E, struct derived_probe *dp, int index,
			     struct vec *prologue);
int emit_body_locals(struct derived_probe *dp, struct stmt *inner, struct vec *ordered);
void emit_body_add(struct emitter *E, int index, const char *text, const char *cbs,
		   const char *decl);
void emit_body_decls(struct emitter *E, FILE *out);
void emit_body_programs(struct emitter *E, FILE *out);
void emit_body_meta(struct emitter *E, FILE *out);
void emit_body_meta_fields(struct emitter *E, FILE *out);
bool emit_body_has_frame(struct emitter *E, int index);

/* emit_btf.c */
const char *emit_btf_chain(struct emitter *E, struct expr *e, const struct tp_arg *a, int index);
/* The same of the 64-bit word WORD (a C expression), however it was read. */
const char *emit_btf_chain_at(struct emitter *E, struct expr *e, const struct tp_arg *a,
			      const char *word);
/* The same of a struct or union (BTF type A->btf_id) at kernel address ADDR. */
const char *emit_btf_record_at(struct emitter *E, struct expr *e, const struct tp_arg *a,
			       const char *addr);
/*
 * $name$ or $name$$ (E->pretty) of a variable of BTF type ID, as $$vars$
 * prints each: VAL is its value, or a struct's or union's address.
 */
const char *emit_btf_pretty_var(struct emitter *E, struct expr *e, int id, const char *val);
const char *emit_btf_cast(struct emitter *E, struct expr *e);

/* emit_flavour.c: CO-RE flavours of the kernel's structs for $var chains in BPF programs */
bool emit_flavour_on(const struct emitter *E);
/* "struct NAME___stp *" for struct or union ID, registered; NULL: no flavour (use vmlinux.h's) */
const char *emit_flavour_ptr(struct emitter *E, uint32_t id);
/* Member NAME (BTF type TYPE) of record OWNER's flavour, read by a chain */
void emit_flavour_member(struct emitter *E, uint32_t owner, const char *name, uint32_t type);
/* The flavours' declarations and definitions, before the code that uses them */
void emit_flavour_defs(struct emitter *E, FILE *out);
int emit_btf_defined(struct emitter *E, struct expr *e);
/* The index of tracepoint TP's argument NAME ("prev"), or -1. */
int emit_tp_arg_index(const struct tracepoint *tp, const char *name);

/* emit_user.c */
int emit_user_file(struct emitter *E, FILE *out);

/* emit_dyninst.c */
void emit_dyninst_sites(struct emitter *E, FILE *out);

/* emit_guru.c */
void emit_guru_prelude(struct emitter *E, FILE *out);
void emit_guru_user(struct emitter *E, struct srcloc loc, const char *what);
void emit_guru_module_only(struct emitter *E, struct srcloc loc, const char *name,
			   const char *body);
const char *emit_guru_expr(struct emitter *E, struct expr *e);
int emit_guru_ucall(const struct emitter *E, const struct efunc *ef);
void emit_guru_analyze(struct emitter *E);
void emit_guru_ublock(struct emitter *E, const void *node, const char *t);
bool emit_guru_ucalls(const struct emitter *E);
void emit_guru_dispatch(struct emitter *E, FILE *out);
/* emit_kmod.c */
bool emit_kmod_supports(struct emitter *E, struct derived_probe *dp);
bool emit_kmod_in_module(const struct derived_probe *dp);
bool emit_kmod_syscall_tp(const struct derived_probe *dp);
void emit_kmod_sites(struct emitter *E, FILE *out);
/* emit_kmod_data.c */
void emit_kmod_foreach(struct emitter *E, struct stmt *s, struct eglobal *g, int n,
		       const char *env, const char *want);
/* emit_data.c: array slices */
void emit_slice_functions(struct emitter *E, struct eglobal *g);
const char *emit_slice_in_kernel(struct emitter *E, struct eglobal *g, const char *key,
				 unsigned mask);
void emit_slice_delete_in_kernel(struct emitter *E, struct eglobal *g, const char *key,
				 unsigned mask);
unsigned emit_slice_mask(const struct vec *args);
void emit_user_loop(struct emitter *E, struct stmt *s);
void emit_user_foreach(struct emitter *E, struct stmt *s);

/* emit_meta.c */
void emit_meta(struct emitter *E, FILE *out);

#endif
