/*
 * sema_int.h - what the files of pass 2 share among themselves: the state
 * of one elaboration (struct sema) and the facts kept beside the tree.
 *
 *	sema.c		the entry point, symbol indexes, pulling symbols in
 *	sema_library.c	the tapset library: scanned once, parsed where used
 *	sema_resolve.c	symbols, calls, $vars, @defined, body copies
 *	sema_entry.c	@entry in return probes, saved by a companion at the entry
 *	sema_write.c	writes to target variables (sema_write.h)
 *	sema_use.c	reachability, dead code, unused-symbol warnings
 *	sema_types.c	type inference and type checks
 *	sema_autocast.c	the C types autocasts read through ('->' on a value)
 *	sema_print.c	pmstap -p2 (sema.h)
 *	sema_dump.c	--dump-functions, --dump-probe-aliases, --dump-probe-types (sema.h)
 *
 * Probe points are pass 2's too; each of their files has its own header:
 *
 *	probes.c	probe points: aliases, wildcards, builtin families
 *	probes_sys.c	what this system has: tracefs events, kallsyms, paths
 *	probes_btf.c	the kernel's BTF: functions, tracepoint arguments, members
 *	probes_user.c	process(..) points: ELF files, functions, statements
 *	probes_sdt.c	process(..).mark: SDT markers
 *	probes_plt.c	process(..).plt: PLT entries
 *
 * Nothing here is for other passes: they read program.h, and those
 * headers where they need what pass 2 found on this system.
 */
#ifndef PMSTAP_SEMA_INT_H
#define PMSTAP_SEMA_INT_H

#include "ast.h"
#include "hmap.h"
#include "program.h"
#include "session.h"

/* Per-variable facts pass 2 gathers (struct vardecl has no room for them). */
struct declinfo {
	struct srcloc type_from;	/* where the value type was decided */
	struct srcloc key_from[AST_MAX_KEYS];
	struct srcloc arity_from;	/* where scalar/array use (and key count) was decided */
	bool must_be_array;		/* global a[N] */
	int reads;
	int writes;
	int updates;			/* of the reads: statements x++, x += y (stap autoprints x) */
	struct srcloc first_read;
	struct srcloc first_write;
	bool from_tapset;
	bool pulled;			/* a tapset global added to the program */
	bool keep;			/* a local pass 2 made whose stores stay though unread */
};

struct funcinfo {
	struct srcloc ret_from;
	struct vec chain;		/* struct func *: the overload chain a call runs */
	bool resolved;			/* its body went through resolve */
	bool reachable;			/* called from a probe, transitively */
	bool has_next;			/* contains 'next' (or STAP_NEXT): the chain goes on */
	bool returns_value;		/* has "return EXPR" */
	int purity;			/* 0 unknown, 1 computing, 2 pure, 3 has side effects */
};

/* One name of a parsed probe alias ("probe a, b = ..." has two). */
struct alias_name {
	struct probe_alias *alias;
	struct probe_point *name;
};

/* Everything one elaboration works on. */
struct sema {
	struct session *s;
	struct program *prog;
	struct stapfile *script;
	int elided_points;		/* points that probe nothing, as stap's (warned) */

	bool library_loaded;		/* the tapset path was scanned */
	struct vec libfiles;		/* struct libfile *: every tapset file, in path order */
	struct hmap lib_funcs;		/* name -> struct vec * of struct libfile *: who declares it */
	struct hmap lib_globals;
	struct vec lib_aliases;		/* struct libalias * */
	struct hmap file_order;		/* struct stapfile * -> its place in the path, plus 1 */
	struct vec library;		/* struct stapfile *: the tapset files parsed so far */
	double library_ms;		/* time spent scanning and parsing them */
	struct hmap funcs;		/* name -> struct vec * of struct func * */
	struct hmap globals;		/* name -> struct vec * of struct vardecl * */
	struct vec aliases;		/* struct probe_alias *: the script's, then the library's */
	struct vec alias_names;		/* struct alias_name *: every name of those aliases */
	struct hmap alias_roots;	/* first component -> struct vec * of struct alias_name * */
	struct hmap files;		/* struct source * -> struct stapfile * */
	struct hmap pulled_files;	/* struct stapfile * -> itself, when anything came from it */

	struct hmap declinfo;		/* struct vardecl * -> struct declinfo * */
	struct hmap funcinfo;		/* struct func * -> struct funcinfo * */
	struct vec pending;		/* struct func *: pulled in, body not yet resolved */
	struct vec all_funcs;		/* struct func *: every function that was resolved */
	struct hmap seen;		/* "loc: message" of errors already printed */
	int next_probe_id;
};

/* sema.c */
struct sema *sema_new(struct session *s, struct stapfile *script);
struct declinfo *sema_declinfo(struct sema *sm, struct vardecl *d);
struct funcinfo *sema_funcinfo(struct sema *sm, struct func *f);
struct stapfile *sema_file_of(struct sema *sm, struct srcloc loc);
void sema_index_file(struct sema *sm, struct stapfile *f);
struct vec *sema_funcs_named(struct sema *sm, const char *name);
struct vardecl *sema_find_global(struct sema *sm, struct stapfile *from, const char *name);
void sema_pull_func(struct sema *sm, struct func *f);
void sema_pull_file(struct sema *sm, struct stapfile *f);
bool sema_error(struct srcloc loc, struct sema *sm, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool sema_warning(struct srcloc loc, struct sema *sm, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* sema_library.c */
void sema_load_library(struct sema *sm);
void sema_need_function(struct sema *sm, const char *name);
void sema_need_global(struct sema *sm, const char *name);
void sema_need_aliases(struct sema *sm, struct probe_point *pt);
int sema_library_func_names(struct sema *sm, const char ***names);
struct vec sema_library_alias_names(struct sema *sm);
int sema_library_files(struct sema *sm);
void sema_library_parse_all(struct sema *sm);

/* sema_resolve.c */
struct stmt *sema_resolve_copy_stmt(const struct stmt *s);
struct expr *sema_resolve_copy_expr(const struct expr *e);
void sema_resolve_probe(struct sema *sm, struct derived_probe *dp);
void sema_resolve_func(struct sema *sm, struct func *f);

/* sema_entry.c: @entry in return probes, saved by a companion at the entry */
void sema_entry_rewrite(struct sema *sm, struct derived_probe *dp);

/* sema_foreach.c: no array changes while foreach walks it */
void sema_foreach_check(struct sema *sm);

/* sema_use.c */
bool sema_expr_has_side_effects(struct sema *sm, struct expr *e);
void sema_use_elide_and_collect(struct sema *sm);
void sema_use_finish(struct sema *sm);

/* sema_types.c */
void sema_types_infer(struct sema *sm);
const char *sema_type_text(enum type t);	/* "a long", "a string", "statistics" */

/* sema_autocast.c */
void sema_autocast_check(struct sema *sm);

#endif
