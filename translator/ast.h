/* ast.h - the script's syntax tree: pass 1 builds it, pass 2 annotates it. */
#ifndef PMSTAP_AST_H
#define PMSTAP_AST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "arena.h"
#include "vec.h"
#include "diag.h"

#define AST_MAX_KEYS 9		/* array index columns, as stap's MAXINDEX */

/* Value types.  Order is not significant. */
enum type {
	TYPE_UNKNOWN,
	TYPE_LONG,
	TYPE_STRING,
	TYPE_STATS,
	TYPE_VOID,		/* a function that returns nothing */
};

const char *ast_type_name(enum type t);	/* "long", "string", "stats", ... */

enum var_scope {
	VAR_GLOBAL,
	VAR_LOCAL,
	VAR_PARAM,
};

/* A global, a function parameter or a local (locals are made by pass 2). */
struct vardecl {
	const char *name;
	struct srcloc loc;
	enum var_scope scope;
	enum type type;		/* the value type; TYPE_UNKNOWN until inferred */
	int arity;		/* -1 unknown, 0 scalar, N: an array with N keys */
	enum type key_types[AST_MAX_KEYS];
	bool type_declared;	/* "x:long" in a parameter list */

	/* globals only */
	int64_t maxsize;	/* "global a[N]"; 0 when not given */
	bool wrap;		/* "global a%" / "a%[N]": overwrite the oldest when full */
	struct expr *init;	/* "global x = 5": a number or string literal */
	bool is_private;
	bool is_export;		/* "export global" (pcp-stap) */
	const char *doc;	/* preceding doc comment body, or NULL */
	struct stapfile *file;
	bool systemtap_v;	/* its declaration passed a %( systemtap_v %) condition */

	int refs;		/* pass 2: how many uses resolved to this */
	bool written;		/* pass 2: assigned somewhere */
};

enum expr_kind {
	EXPR_NUMBER,		/* num; text keeps the spelling when it came from source */
	EXPR_STRING,		/* str: the body, escapes kept as written */
	EXPR_SYMBOL,		/* name -> decl */
	EXPR_INDEX,		/* left[args]: left is a symbol or hist op; a NULL arg is '*' */
	EXPR_CALL,		/* name(args) -> func; print/printf/sprintf... too */
	EXPR_UNARY,		/* op left: - + ! ~ */
	EXPR_PREFIX,		/* op left: ++ -- */
	EXPR_POSTFIX,		/* left op: ++ -- */
	EXPR_BINARY,		/* left op right: + - * / % << >> & | ^ . */
	EXPR_LOGICAL,		/* && || */
	EXPR_COMPARE,		/* < > <= >= == != */
	EXPR_REGEX,		/* =~ !~; right is a string literal */
	EXPR_TERNARY,		/* cond ? left : right */
	EXPR_ASSIGN,		/* left op right: = += -= *= /= %= <<= >>= &= |= ^= .= <<< */
	EXPR_IN,		/* [args] in right: right is a symbol, or an index for slices */
	EXPR_STAT,		/* @count/@sum/@min/@max/@avg/@variance(left[, right]) */
	EXPR_HIST,		/* @hist_log(left) / @hist_linear(left, args[0..2]) */
	EXPR_TARGET,		/* $name comps, $$vars...; pretty, addr_of */
	EXPR_CAST,		/* @cast(left, type_name[, module]) comps */
	EXPR_ATVAR,		/* @var("name[@file]"[, module]) comps */
	EXPR_DEFINED,		/* @defined(left) */
	EXPR_ENTRY,		/* @entry(left) */
	EXPR_PERF,		/* @perf("name") */
	EXPR_DEREF,		/* name(num, left): @kderef/@uderef, num bytes at address left */
	EXPR_REGISTER,		/* name(num): @kregister/@uregister, register number num */
	EXPR_AUTOCAST,		/* left comps: ->member / [i] on a value that is not a $var */
	EXPR_EMBEDDED,		/* %{ code %} used as an expression (guru) */
};

enum stat_op {
	STAT_COUNT,
	STAT_SUM,
	STAT_MIN,
	STAT_MAX,
	STAT_AVG,
	STAT_VARIANCE,
};

enum hist_kind {
	HIST_LOG,
	HIST_LINEAR,
};

/* One step of a $var / @cast / @var chain. */
enum comp_kind {
	COMP_MEMBER,		/* ->name (also .name is not stap: only ->) */
	COMP_INDEX,		/* [number] */
	COMP_INDEX_EXPR,	/* [expression] */
};

struct target_comp {
	enum comp_kind kind;
	struct srcloc loc;
	const char *member;
	int64_t index;
	struct expr *index_expr;
};

struct expr {
	enum expr_kind kind;
	struct srcloc loc;
	enum type type;		/* pass 2 */

	const char *op;		/* operator spelling */
	struct expr *left;
	struct expr *right;
	struct expr *cond;	/* EXPR_TERNARY */
	struct vec args;	/* struct expr *: call args, index keys, in-tuple, hist params */

	const char *name;	/* symbol, call, target ("$x", "$$vars"), @var name */
	const char *str;	/* EXPR_STRING body, @cast type, EXPR_PERF name, EXPR_EMBEDDED code */
	const char *module;	/* @cast / @var module argument, or NULL */
	int64_t num;		/* EXPR_NUMBER; EXPR_PERF (pass 2): 1 + its counter's index, 0: unresolved */
	const char *text;	/* EXPR_NUMBER: the spelling (for -p1), or NULL */

	enum stat_op stat;
	enum hist_kind hist;

	struct vec comps;	/* struct target_comp * */
	int pretty;		/* 0, 1 ($ suffix) or 2 ($$ suffix) */
	bool addr_of;		/* &$var */
	bool entry_key;		/* a number: @entry's pairing key (sema_entry.c) */
	bool foreach_bucket;	/* a foreach's bucket read (sema_resolve.c): empty reads 0 */

	struct vardecl *decl;	/* pass 2: EXPR_SYMBOL, the array of EXPR_INDEX */
	struct func *func;	/* pass 2: EXPR_CALL to a script function */
	int builtin;		/* pass 2: EXPR_CALL to a builtin (print family), else 0 */
	const char *unresolved;	/* pass 2: why this $var cannot be read; an error if elision keeps it */
	const struct expr *saved; /* pass 2: a value an entry probe saved (@entry): what it saved */
	uint32_t autocast_btf;	/* pass 2: EXPR_AUTOCAST, the BTF type its operand points to, or 0 */
};

enum stmt_kind {
	STMT_BLOCK,		/* { body } */
	STMT_EXPR,		/* expr */
	STMT_NULL,		/* ; */
	STMT_IF,		/* if (expr) then [else otherwise] */
	STMT_WHILE,		/* while (expr) then */
	STMT_FOR,		/* for (init; expr; incr) then */
	STMT_FOREACH,
	STMT_RETURN,		/* return [expr] */
	STMT_BREAK,
	STMT_CONTINUE,
	STMT_NEXT,
	STMT_DELETE,		/* delete expr: a symbol, an index (maybe with '*'), a $var */
	STMT_TRY,		/* try then catch [(catch_var)] otherwise */
	STMT_EMBEDDED,		/* %{ code %} as a statement (guru, or a tapset) */
};

struct stmt {
	enum stmt_kind kind;
	struct srcloc loc;

	struct vec body;	/* STMT_BLOCK: struct stmt * */
	struct expr *expr;	/* condition, value, delete target */
	struct stmt *then;	/* if-branch, loop body, try block */
	struct stmt *otherwise;	/* else-branch, catch block */
	struct expr *init;	/* STMT_FOR, may be NULL */
	struct expr *incr;	/* STMT_FOR, may be NULL */
	const char *code;	/* STMT_EMBEDDED */
	bool outside_loop;	/* pass 2: a break/continue with no loop around it (pass 3 refuses it, as stap) */
	const struct stmt *lowered_from;	/* pass 2: the foreach this block was lowered from (printing) */

	/*
	 * STMT_FOREACH: foreach ([value =] [keys...] in array [limit N]).
	 * array is a symbol, a slice (EXPR_INDEX with '*'), or a hist op.
	 * sort_dir is 0 (none), +1 or -1; sort_col is 0 for the value and
	 * 1..N for a key column.
	 */
	struct vec keys;	/* struct expr *, each an EXPR_SYMBOL */
	struct expr *value;	/* EXPR_SYMBOL or NULL */
	struct expr *array;
	struct expr *limit;
	int sort_dir;
	int sort_col;
	bool sort_by_stat;	/* "in a @sum-": sort on that statistic of each value */
	enum stat_op sort_stat;

	struct expr *catch_var;	/* STMT_TRY: EXPR_SYMBOL or NULL */
};

/* A component of a probe point: name, or name(literal).  Wildcards in name. */
struct probe_comp {
	const char *name;
	struct expr *arg;	/* EXPR_NUMBER / EXPR_STRING, or NULL */
	struct srcloc loc;
};

struct probe_point {
	struct vec comps;	/* struct probe_comp * */
	bool optional;		/* ? */
	bool sufficient;	/* ! */
	struct expr *cond;	/* if (cond), or NULL */
	struct srcloc loc;
};

struct probe {
	struct srcloc loc;
	struct vec points;	/* struct probe_point * */
	struct stmt *body;	/* a STMT_BLOCK */
	const char *doc;
	bool is_private;
	struct stapfile *file;
	bool systemtap_v;	/* its declaration passed a %( systemtap_v %) condition */
};

/* probe NAME[, NAME] = POINTS { prologue }   or   += POINTS { epilogue } */
struct probe_alias {
	struct srcloc loc;
	struct vec names;	/* struct probe_point *: the alias names */
	struct vec points;	/* struct probe_point *: what it stands for */
	bool epilogue;		/* += */
	struct stmt *body;
	struct stmt *body2;	/* "= POINTS { prologue }, { epilogue }": the epilogue, else NULL */
	const char *doc;
	struct stapfile *file;
	bool systemtap_v;	/* its declaration passed a %( systemtap_v %) condition */
};

struct func {
	const char *name;
	struct srcloc loc;
	enum type ret_type;	/* declared "function f:long", else inferred in pass 2 */
	bool ret_declared;
	struct vec params;	/* struct vardecl * */
	struct stmt *body;	/* a STMT_BLOCK, or NULL when embedded is set */
	const char *embedded;	/* %{ code %} body */
	struct srcloc embedded_loc;	/* where that body starts */
	int64_t priority;	/* "function f() :N { }" overloads; 0 when not given */
	bool is_private;
	const char *doc;
	struct stapfile *file;
	bool systemtap_v;	/* its declaration passed a %( systemtap_v %) condition */

	struct vec locals;	/* pass 2: struct vardecl * */
	int refs;		/* pass 2 */
};

/* Top-level %{ code %} (guru). */
struct embed {
	const char *code;
	struct srcloc loc;
};

/* One parsed file: the script, or a tapset. */
struct stapfile {
	const struct source *src;
	bool is_tapset;
	struct vec globals;	/* struct vardecl * */
	struct vec funcs;	/* struct func * */
	struct vec probes;	/* struct probe * */
	struct vec aliases;	/* struct probe_alias * */
	struct vec embeds;	/* struct embed * */
};

/* Constructors (ast.c): each returns a zeroed node with kind and loc set. */
struct expr *ast_expr(enum expr_kind kind, struct srcloc loc);
struct stmt *ast_stmt(enum stmt_kind kind, struct srcloc loc);
struct vardecl *ast_vardecl(const char *name, struct srcloc loc, enum var_scope scope);
/* Trees pass 2 builds (@entry's saves, lowered loops): NAME, V, L OP R, E as a statement. */
struct expr *ast_symbol(struct srcloc loc, const char *name);
struct expr *ast_number(struct srcloc loc, int64_t v);
struct expr *ast_binary(enum expr_kind kind, struct srcloc loc, const char *op, struct expr *l,
			struct expr *r);
struct stmt *ast_expr_stmt(struct expr *e);

/*
 * Print FILE as script text (pmstap -p1, ast_print.c).  The text parses
 * back to the same tree, so printing that tree again gives the same text.
 */
void ast_print_file(FILE *out, const struct stapfile *file);
void ast_print_expr(FILE *out, const struct expr *e);
void ast_print_stmt(FILE *out, const struct stmt *s, int indent);
void ast_print_probe_point(FILE *out, const struct probe_point *pp);

#endif
