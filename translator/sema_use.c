/*
 * sema_use.c - who uses what: reachability, dead code, and the warnings
 * about it.
 *
 * Functions are kept when a probe calls them (transitively), globals when
 * kept code uses them.  A local that is assigned but never read (x++ and
 * x += y read x, as in stap) loses its assignments (an assignment whose
 * value has side effects keeps the value as a statement), a statement with
 * no effect goes, and so does control with nothing left to control; all
 * repeat until nothing changes, as stap's optimizer does.  Then a probe
 * whose handler does nothing goes too.  Code from the tapsets is pruned
 * silently; the script's own gets warnings (pmstap -w hides them).  -u
 * turns all of it off.
 */
#include <string.h>
#include "diag.h"
#include "sema_int.h"

struct use {
	struct sema *sm;
	struct vec reached;		/* struct func *: in the order first called */
	struct hmap reached_set;	/* struct func * -> itself */
	struct hmap warned;		/* struct vardecl * / struct stmt * -> itself */
	bool changed;
};

/* ---- side effects ---- */

static bool is_printing(int b)
{
	return b == BUILTIN_PRINT || b == BUILTIN_PRINTLN || b == BUILTIN_PRINTF ||
	       b == BUILTIN_PRINTD || b == BUILTIN_PRINTDLN;
}

static bool func_pure(struct sema *sm, struct func *f);

static bool writes_outside(const struct expr *target)
{
	if (target->kind == EXPR_INDEX)
		return true;	/* arrays are global */
	return !target->decl || target->decl->scope == VAR_GLOBAL;
}

static bool stmt_pure(struct sema *sm, const struct stmt *s);

/* Does E change anything outside its own function or probe's locals? */
static bool expr_escapes(struct sema *sm, const struct expr *e)
{
	if (!e)
		return false;
	switch (e->kind) {
	case EXPR_ASSIGN:
		/* '<<<' into a parameter is kept, for pass 2 to refuse (no stats there) */
		if (strcmp(e->op, "<<<") == 0 && e->left->kind == EXPR_SYMBOL && e->left->decl &&
		    e->left->decl->scope == VAR_PARAM)
			return true;
		/* fall through */
	case EXPR_PREFIX:
	case EXPR_POSTFIX:
		if (writes_outside(e->left))
			return true;
		break;
	case EXPR_EMBEDDED:
	case EXPR_REGEX:	/* =~ sets what matched() returns */
		return true;
	case EXPR_CALL:
		if (is_printing(e->builtin) || (e->func && !func_pure(sm, e->func)))
			return true;
		break;
	default:
		break;
	}
	if (expr_escapes(sm, e->left) || expr_escapes(sm, e->right) || expr_escapes(sm, e->cond))
		return true;
	for (int i = 0; i < e->args.len; i++)
		if (expr_escapes(sm, VEC_AT(&e->args, i)))
			return true;
	return false;
}

static bool stmt_pure(struct sema *sm, const struct stmt *s)
{
	if (!s)
		return true;
	if (s->kind == STMT_EMBEDDED || s->kind == STMT_NEXT)
		return false;
	if (s->kind == STMT_DELETE && writes_outside(s->expr))
		return false;
	if (s->kind == STMT_FOREACH) {
		for (int i = 0; i < s->keys.len; i++)
			if (writes_outside(VEC_AT(&s->keys, i)))
				return false;
		if (s->value && writes_outside(s->value))
			return false;
	}
	if (expr_escapes(sm, s->expr) || expr_escapes(sm, s->init) || expr_escapes(sm, s->incr))
		return false;
	for (int i = 0; i < s->body.len; i++)
		if (!stmt_pure(sm, VEC_AT(&s->body, i)))
			return false;
	return stmt_pure(sm, s->then) && stmt_pure(sm, s->otherwise);
}

/* Pure: changes no global state and prints nothing (embedded C says so with a pure comment). */
static bool func_pure(struct sema *sm, struct func *f)
{
	struct funcinfo *fi = sema_funcinfo(sm, f);
	struct vec *chain = fi->chain.len ? &fi->chain : NULL;

	if (fi->purity == 1 || fi->purity == 2)
		return true;
	if (fi->purity == 3)
		return false;
	fi->purity = 1;
	for (int i = 0; chain && i < chain->len && fi->purity == 1; i++) {
		struct func *g = VEC_AT(chain, i);

		if (g != f && !func_pure(sm, g))
			fi->purity = 3;
	}
	if (fi->purity == 1) {
		bool pure = f->embedded ? strstr(f->embedded, "/* pure */") != NULL
					: stmt_pure(sm, f->body);

		fi->purity = pure ? 2 : 3;
	}
	return fi->purity == 2;
}

/* Would evaluating E do anything besides giving a value? */
bool sema_expr_has_side_effects(struct sema *sm, struct expr *e)
{
	if (!e)
		return false;
	switch (e->kind) {
	case EXPR_ASSIGN:
	case EXPR_PREFIX:
	case EXPR_POSTFIX:
	case EXPR_EMBEDDED:
	case EXPR_REGEX:	/* =~ sets what matched() returns */
		return true;
	case EXPR_CALL:
		if (is_printing(e->builtin) || (e->func && !func_pure(sm, e->func)))
			return true;
		break;
	default:
		break;
	}
	if (sema_expr_has_side_effects(sm, e->left) || sema_expr_has_side_effects(sm, e->right) ||
	    sema_expr_has_side_effects(sm, e->cond))
		return true;
	for (int i = 0; i < e->args.len; i++)
		if (sema_expr_has_side_effects(sm, VEC_AT(&e->args, i)))
			return true;
	return false;
}

/* ---- counting uses ---- */

static void reach(struct use *u, struct func *f)
{
	if (hmap_get(&u->reached_set, f))
		return;
	hmap_put(&u->reached_set, f, f);
	vec_push(&u->reached, f);
}

static void note_read(struct use *u, struct vardecl *d, struct srcloc at)
{
	struct declinfo *di;

	if (!d)
		return;
	di = sema_declinfo(u->sm, d);
	if (!di->reads++)
		di->first_read = at;
}

static void note_write(struct use *u, struct vardecl *d, struct srcloc at)
{
	struct declinfo *di;

	if (!d)
		return;
	di = sema_declinfo(u->sm, d);
	if (!di->writes++)
		di->first_write = at;
}

static void count_expr(struct use *u, struct expr *e);

static void count_args(struct use *u, struct vec *args)
{
	for (int i = 0; i < args->len; i++)
		if (VEC_AT(args, i))
			count_expr(u, VEC_AT(args, i));
}

/* The variable or array that E (a symbol or an element) writes. */
static void count_target(struct use *u, struct expr *e)
{
	if (e->kind == EXPR_SYMBOL) {
		note_write(u, e->decl, e->loc);
	} else if (e->kind == EXPR_INDEX) {
		note_write(u, e->decl, e->loc);
		count_args(u, &e->args);
	} else {
		count_expr(u, e);
	}
}

static void count_call(struct use *u, struct expr *e)
{
	count_args(u, &e->args);
	if (!e->func)
		return;
	{
		struct funcinfo *fi = sema_funcinfo(u->sm, e->func);

		e->func->refs++;
		if (fi->chain.len)
			for (int i = 0; i < fi->chain.len; i++)
				reach(u, VEC_AT(&fi->chain, i));
		else
			reach(u, e->func);
	}
}

static void count_expr(struct use *u, struct expr *e)
{
	switch (e->kind) {
	case EXPR_SYMBOL:
		note_read(u, e->decl, e->loc);
		return;
	case EXPR_INDEX:
		if (e->left->kind == EXPR_SYMBOL)
			note_read(u, e->decl, e->loc);
		else
			count_expr(u, e->left);
		count_args(u, &e->args);
		return;
	case EXPR_CALL:
		count_call(u, e);
		return;
	case EXPR_ASSIGN:	/* x += y reads x too, as in stap (not '=' and '<<<') */
		count_target(u, e->left);
		if (strcmp(e->op, "=") != 0 && strcmp(e->op, "<<<") != 0)
			note_read(u, e->left->decl, e->loc);
		count_expr(u, e->right);
		return;
	case EXPR_PREFIX:
	case EXPR_POSTFIX:	/* a read and a write, as in stap */
		count_target(u, e->left);
		note_read(u, e->left->decl, e->loc);
		return;
	case EXPR_IN:
		count_args(u, &e->args);
		count_expr(u, e->right->kind == EXPR_INDEX ? e->right->left : e->right);
		return;
	default:
		break;
	}
	if (e->left)
		count_expr(u, e->left);
	if (e->right)
		count_expr(u, e->right);
	if (e->cond)
		count_expr(u, e->cond);
	count_args(u, &e->args);
	for (int i = 0; i < e->comps.len; i++) {
		struct target_comp *tc = VEC_AT(&e->comps, i);

		if (tc->index_expr)
			count_expr(u, tc->index_expr);
	}
}

/*
 * An expression evaluated for its effect only.  A bare x++ or x += y reads
 * x (stap keeps it), but only to update it: x is still "never read" for
 * the end-of-run display.
 */
static void count_effect(struct use *u, struct expr *e)
{
	bool update = e->kind == EXPR_PREFIX || e->kind == EXPR_POSTFIX ||
		      (e->kind == EXPR_ASSIGN && strcmp(e->op, "=") != 0 && strcmp(e->op, "<<<") != 0);

	count_expr(u, e);
	if (update && e->left->decl)
		sema_declinfo(u->sm, e->left->decl)->updates++;
}

static void count_stmt(struct use *u, struct stmt *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->body.len; i++)
		count_stmt(u, VEC_AT(&s->body, i));
	switch (s->kind) {
	case STMT_DELETE:
		count_target(u, s->expr);
		return;
	case STMT_FOREACH:
		for (int i = 0; i < s->keys.len; i++)
			count_target(u, VEC_AT(&s->keys, i));
		if (s->value)
			count_target(u, s->value);
		count_expr(u, s->array);
		if (s->limit)
			count_expr(u, s->limit);
		count_stmt(u, s->then);
		return;
	case STMT_TRY:
		if (s->catch_var)
			count_target(u, s->catch_var);
		break;
	default:
		break;
	}
	if (s->kind == STMT_EXPR)
		count_effect(u, s->expr);
	else if (s->expr)
		count_expr(u, s->expr);
	if (s->init)
		count_effect(u, s->init);
	if (s->incr)
		count_effect(u, s->incr);
	count_stmt(u, s->then);
	count_stmt(u, s->otherwise);
}

static void reset_counts(struct use *u)
{
	struct hmap *m = &u->sm->declinfo;

	for (int i = 0; i < m->cap; i++) {
		if (m->slots[i].key) {
			struct declinfo *di = m->slots[i].val;
			struct vardecl *d = (struct vardecl *)m->slots[i].key;

			di->reads = di->writes = di->updates = 0;
			d->refs = 0;
		}
	}
	for (int i = 0; i < u->sm->all_funcs.len; i++)
		((struct func *)VEC_AT(&u->sm->all_funcs, i))->refs = 0;
	u->reached.len = 0;
	u->reached_set = (struct hmap){ 0 };
}

/* Walk what probes reach: their bodies, conditions, and the functions they call. */
static void count_all(struct use *u)
{
	struct program *prog = u->sm->prog;

	reset_counts(u);
	for (int i = 0; i < prog->probes.len; i++) {
		struct derived_probe *dp = VEC_AT(&prog->probes, i);

		count_stmt(u, dp->body);
		if (dp->cond)
			count_expr(u, dp->cond);
	}
	for (int i = 0; i < u->reached.len; i++)
		count_stmt(u, ((struct func *)VEC_AT(&u->reached, i))->body);
}

/* ---- dead code ---- */

static bool user_code(struct sema *sm, struct srcloc loc)
{
	struct stapfile *f = sema_file_of(sm, loc);

	return f && !f->is_tapset;
}

static bool warn_once(struct use *u, const void *what)
{
	if (hmap_get(&u->warned, what))
		return false;
	hmap_put(&u->warned, what, (void *)what);
	return true;
}

static struct vardecl *dead_local(struct use *u, struct expr *e)
{
	struct vardecl *d;

	if (e->kind != EXPR_ASSIGN && e->kind != EXPR_PREFIX && e->kind != EXPR_POSTFIX)
		return NULL;
	d = e->left->kind == EXPR_SYMBOL ? e->left->decl : NULL;
	if (!d || d->scope != VAR_LOCAL || sema_declinfo(u->sm, d)->reads ||
	    sema_declinfo(u->sm, d)->keep)
		return NULL;
	return d;
}

static void elide_expr_stmt(struct use *u, struct stmt **sp)
{
	struct stmt *s = *sp;
	struct expr *e = s->expr;
	struct vardecl *d = dead_local(u, e);

	if (d) {
		if (user_code(u->sm, d->loc) && warn_once(u, d))
			diag_warning(sema_declinfo(u->sm, d)->first_write,
				     "local '%s' is assigned but never read", d->name);
		if (e->kind == EXPR_ASSIGN && sema_expr_has_side_effects(u->sm, e->right))
			s->expr = e->right;
		else
			*sp = ast_stmt(STMT_NULL, s->loc);
		u->changed = true;
	} else if (!sema_expr_has_side_effects(u->sm, e)) {
		if (user_code(u->sm, s->loc) && warn_once(u, s))
			diag_warning(s->loc, "statement has no effect");
		*sp = ast_stmt(STMT_NULL, s->loc);
		u->changed = true;
	}
}

/* Does S do nothing at all: ';', or a block of such? */
static bool stmt_empty(const struct stmt *s)
{
	if (!s || s->kind == STMT_NULL)
		return true;
	if (s->kind != STMT_BLOCK)
		return false;
	for (int i = 0; i < s->body.len; i++)
		if (!stmt_empty(VEC_AT(&s->body, i)))
			return false;
	return true;
}

/* A block loses the statements that elision emptied. */
static void drop_empty_stmts(struct use *u, struct stmt *block)
{
	int n = 0;

	for (int i = 0; i < block->body.len; i++) {
		struct stmt *s = VEC_AT(&block->body, i);

		if (!stmt_empty(s))
			block->body.items[n++] = s;
		else if (s->kind == STMT_BLOCK)
			u->changed = true;
	}
	block->body.len = n;
}

static void make_null(struct use *u, struct stmt **sp)
{
	*sp = ast_stmt(STMT_NULL, (*sp)->loc);
	u->changed = true;
}

/*
 * Control with nothing to control, as stap's dead_stmtexpr_remover: an if
 * with no branches goes (its condition stays as a statement when it has
 * side effects), an if with only an else tests the negation; a loop with
 * an empty body goes when its expressions change nothing (a foreach
 * always), and so does an empty try.
 */
static void elide_control(struct use *u, struct stmt **sp)
{
	struct stmt *s = *sp;
	struct expr *not;

	switch (s->kind) {
	case STMT_IF:
		if (!stmt_empty(s->then))
			return;
		if (stmt_empty(s->otherwise)) {
			if (!sema_expr_has_side_effects(u->sm, s->expr)) {
				make_null(u, sp);
			} else {
				s->kind = STMT_EXPR;
				s->then = s->otherwise = NULL;
				u->changed = true;
			}
			return;
		}
		not = ast_expr(EXPR_UNARY, s->expr->loc);
		not->op = "!";
		not->left = s->expr;
		s->expr = not;
		s->then = s->otherwise;
		s->otherwise = NULL;
		u->changed = true;
		return;
	case STMT_WHILE:
	case STMT_FOR:
		if (stmt_empty(s->then) && !sema_expr_has_side_effects(u->sm, s->init) &&
		    !sema_expr_has_side_effects(u->sm, s->expr) &&
		    !sema_expr_has_side_effects(u->sm, s->incr))
			make_null(u, sp);
		return;
	case STMT_FOREACH:
	case STMT_TRY:
		if (stmt_empty(s->then))
			make_null(u, sp);
		return;
	default:
		return;
	}
}

static void elide_stmt(struct use *u, struct stmt **sp)
{
	struct stmt *s = *sp;

	if (!s)
		return;
	if (s->kind == STMT_EXPR) {
		elide_expr_stmt(u, sp);
		return;
	}
	for (int i = 0; i < s->body.len; i++)
		elide_stmt(u, (struct stmt **)&s->body.items[i]);
	drop_empty_stmts(u, s);
	elide_stmt(u, &s->then);
	elide_stmt(u, &s->otherwise);
	elide_control(u, sp);
}

static void elide_all(struct use *u)
{
	struct program *prog = u->sm->prog;

	for (int i = 0; i < prog->probes.len; i++)
		elide_stmt(u, &((struct derived_probe *)VEC_AT(&prog->probes, i))->body);
	for (int i = 0; i < u->reached.len; i++)
		elide_stmt(u, &((struct func *)VEC_AT(&u->reached, i))->body);
}

/* ---- what the program keeps ---- */

static void keep_used_locals(struct sema *sm, struct vec *locals)
{
	int n = 0;

	for (int i = 0; i < locals->len; i++) {
		struct vardecl *d = VEC_AT(locals, i);
		struct declinfo *di = sema_declinfo(sm, d);

		d->refs = di->reads + di->writes;
		if (d->refs)
			locals->items[n++] = d;
	}
	locals->len = n;
}

static void warn_locals(struct use *u, struct vec *locals)
{
	for (int i = 0; i < locals->len; i++) {
		struct vardecl *d = VEC_AT(locals, i);
		struct declinfo *di = sema_declinfo(u->sm, d);

		if (di->reads && !di->writes && user_code(u->sm, d->loc) && warn_once(u, d))
			diag_warning(di->first_read, "local '%s' is read but never assigned; it is always %s",
				     d->name, "0 or \"\"");
	}
}

/* The reached function of F's name and arity that takes its calls, if any. */
static struct func *shadowing(struct use *u, struct func *f)
{
	for (int i = 0; i < u->reached.len; i++) {
		struct func *g = VEC_AT(&u->reached, i);

		if (!strcmp(g->name, f->name) && g->params.len == f->params.len)
			return g;
	}
	return NULL;
}

static void warn_uncalled(struct use *u, struct func *f)
{
	struct func *g = shadowing(u, f);

	if (!g) {
		diag_warning(f->loc, "function '%s' is never called", f->name);
		return;
	}
	diag_warning(f->loc, "function '%s' is never called: an overload before it takes every call",
		     f->name);
	diag_note(g->loc, "this '%s' runs first and has no 'next'", g->name);
}

static void collect_funcs(struct use *u)
{
	struct sema *sm = u->sm;
	struct program *prog = sm->prog;

	for (int i = 0; i < sm->script->funcs.len; i++) {
		struct func *f = VEC_AT(&sm->script->funcs, i);

		if (hmap_get(&u->reached_set, f))
			vec_push(&prog->funcs, f);
		else
			warn_uncalled(u, f);
	}
	for (int i = 0; i < u->reached.len; i++) {
		struct func *f = VEC_AT(&u->reached, i);
		struct funcinfo *fi = sema_funcinfo(sm, f);

		fi->reachable = true;
		if (f->file && f->file->is_tapset)
			vec_push(&prog->funcs, f);
		if (fi->chain.len > 1 && VEC_AT(&fi->chain, 0) == f) {
			struct overload *o = ARENA_NEW(struct overload);

			o->name = f->name;
			o->arity = f->params.len;
			o->funcs = fi->chain;
			vec_push(&prog->overloads, o);
		}
	}
}

static void keep_global(struct use *u, struct vardecl *d)
{
	struct declinfo *di = sema_declinfo(u->sm, d);

	d->refs = di->reads + di->writes;
	d->written = di->writes > 0;
	if (d->refs)
		vec_push(&u->sm->prog->globals, d);
}

static void collect_globals(struct use *u)
{
	struct sema *sm = u->sm;

	for (int i = 0; i < sm->script->globals.len; i++) {
		struct vardecl *d = VEC_AT(&sm->script->globals, i);
		struct declinfo *di = sema_declinfo(sm, d);
		bool made = d->file && d->file->is_tapset;	/* by pass 2 (@entry) */

		if (made)
			;
		else if (!di->reads && !di->writes)
			diag_warning(d->loc, "global '%s' is never used", d->name);
		else if (di->reads && !di->writes && !d->init)
			diag_warning(di->first_read, "global '%s' is read but never assigned", d->name);
		keep_global(u, d);
	}
	for (int i = 0; i < sm->library.len; i++) {
		struct stapfile *f = VEC_AT(&sm->library, i);

		for (int j = 0; j < f->globals.len; j++) {
			struct vardecl *d = VEC_AT(&f->globals, j);

			if (sema_declinfo(sm, d)->pulled)
				keep_global(u, d);
		}
	}
}

/*
 * A probe whose handler does nothing goes, as stap elides it (not with -u,
 * nor when listing); none left is an error, stap's "no probes found".
 */
static void elide_probes(struct use *u)
{
	struct sema *sm = u->sm;
	struct vec *probes = &sm->prog->probes;
	int n = 0, had = probes->len;

	if (sm->s->unoptimized || sm->s->list_pattern || sm->s->dump)
		return;
	for (int i = 0; i < probes->len; i++) {
		struct derived_probe *dp = VEC_AT(probes, i);

		if (!stmt_empty(dp->body)) {
			probes->items[n++] = dp;
			continue;
		}
		if (user_code(sm, dp->probe->loc) && warn_once(u, dp->probe))
			diag_warning(dp->probe->loc, "probe '%s' has been elided: its handler does nothing",
				     dp->point);
	}
	probes->len = n;
	if (!n && had)
		diag_error((struct srcloc){ 0 }, "no probes found: every probe's handler does nothing "
			   "and was elided");
}

/* Count, prune and repeat until stable; then decide what the program keeps. */
void sema_use_elide_and_collect(struct sema *sm)
{
	struct use *u = ARENA_NEW(struct use);
	struct program *prog = sm->prog;

	u->sm = sm;
	for (int round = 0; round < 32; round++) {
		count_all(u);
		u->changed = false;
		if (sm->s->list_vars)	/* -L lists locals nothing reads: keep them, as stap -L does */
			break;
		if (sm->s->unoptimized)	/* -u: stap's optimizer does not run */
			break;
		elide_all(u);
		if (!u->changed)
			break;
	}
	elide_probes(u);
	for (int i = 0; i < prog->probes.len; i++) {
		struct derived_probe *dp = VEC_AT(&prog->probes, i);

		warn_locals(u, &dp->locals);
		keep_used_locals(sm, &dp->locals);
	}
	collect_funcs(u);
	for (int i = 0; i < prog->funcs.len; i++) {
		struct func *f = VEC_AT(&prog->funcs, i);

		warn_locals(u, &f->locals);
		keep_used_locals(sm, &f->locals);
	}
	collect_globals(u);
}

/* After types: number the probes and list what stap would print at exit. */
void sema_use_finish(struct sema *sm)
{
	struct program *prog = sm->prog;

	for (int i = 0; i < prog->probes.len; i++)
		((struct derived_probe *)VEC_AT(&prog->probes, i))->id = i;
	for (int i = 0; i < prog->globals.len; i++) {
		struct vardecl *d = VEC_AT(&prog->globals, i);
		struct declinfo *di = sema_declinfo(sm, d);

		if (!di->from_tapset && di->writes && di->reads == di->updates)
			vec_push(&prog->autoprint, d);
	}
}
