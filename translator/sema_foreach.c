/*
 * sema_foreach.c - pass 2: an array may not change while foreach walks it,
 * neither in the loop's body nor in a function the body calls (at any
 * depth), as stap 4.8 rules: a write, or the delete of an element (its semko thirteen, fourteen, fifteen), with
 * its texts.  Runs after resolution, before elision.
 */
#include "arena.h"
#include "diag.h"
#include "sema_int.h"

struct fe {
	struct sema *sm;
	struct vec walking;	/* struct vardecl *: the arrays of the enclosing foreach loops */
	struct hmap writes;	/* struct func * -> struct vec * of the globals it writes */
};

static struct vec *func_writes(struct fe *w, struct func *f);

/* The variable a write or delete target names, if any. */
static struct vardecl *target_decl(struct expr *e)
{
	if (e->kind == EXPR_SYMBOL || e->kind == EXPR_INDEX)
		return e->decl;
	return NULL;
}

static bool is_write(const struct expr *e)
{
	return e->kind == EXPR_ASSIGN || e->kind == EXPR_PREFIX || e->kind == EXPR_POSTFIX;
}

/* ---- what a function writes, calls included ---- */

static void add_unique(struct vec *v, void *p)
{
	for (int i = 0; i < v->len; i++)
		if (VEC_AT(v, i) == p)
			return;
	vec_push(v, p);
}

static void collect_stmt(struct fe *w, struct stmt *s, struct vec *out);

static void collect_expr(struct fe *w, struct expr *e, struct vec *out)
{
	struct vardecl *d;

	if (!e)
		return;
	if (is_write(e) && (d = target_decl(e->left)) && d->scope == VAR_GLOBAL)
		add_unique(out, d);
	if (e->kind == EXPR_CALL && e->func) {
		struct vec *called = func_writes(w, e->func);

		for (int i = 0; i < called->len; i++)
			add_unique(out, VEC_AT(called, i));
	}
	collect_expr(w, e->left, out);
	collect_expr(w, e->right, out);
	collect_expr(w, e->cond, out);
	for (int i = 0; i < e->args.len; i++)
		collect_expr(w, VEC_AT(&e->args, i), out);
}

static void collect_stmt(struct fe *w, struct stmt *s, struct vec *out)
{
	struct vardecl *d;

	if (!s)
		return;
	for (int i = 0; i < s->body.len; i++)
		collect_stmt(w, VEC_AT(&s->body, i), out);
	if (s->kind == STMT_DELETE && s->expr->kind == EXPR_INDEX && (d = target_decl(s->expr)))
		add_unique(out, d);
	collect_expr(w, s->expr, out);
	collect_expr(w, s->init, out);
	collect_expr(w, s->incr, out);
	collect_stmt(w, s->then, out);
	collect_stmt(w, s->otherwise, out);
}

/* Recursion ends at a function already being collected: its set is partial, and enough. */
static struct vec *func_writes(struct fe *w, struct func *f)
{
	struct vec *v = hmap_get(&w->writes, f);

	if (v)
		return v;
	v = ARENA_NEW(struct vec);
	hmap_put(&w->writes, f, v);
	collect_stmt(w, f->body, v);
	return v;
}

/* ---- the check ---- */

/* where to point: the array's name, not the '[' after it */
static struct srcloc name_loc(const struct expr *e)
{
	return e->kind == EXPR_INDEX && e->left ? e->left->loc : e->loc;
}

static bool walking(struct fe *w, struct vardecl *d)
{
	for (int i = 0; i < w->walking.len; i++)
		if (VEC_AT(&w->walking, i) == d)
			return true;
	return false;
}

static void check_call(struct fe *w, struct expr *e)
{
	struct vec *v = func_writes(w, e->func);

	for (int i = 0; i < v->len; i++) {
		struct vardecl *d = VEC_AT(v, i);

		if (walking(w, d)) {
			sema_error(e->loc, w->sm, "function call modifies var '%s' during 'foreach' iteration",
				   d->name);
			return;
		}
	}
}

static void check_expr(struct fe *w, struct expr *e)
{
	struct vardecl *d;

	if (!e)
		return;
	if (w->walking.len && is_write(e) && (d = target_decl(e->left)) && walking(w, d))
		sema_error(name_loc(e->left), w->sm, "variable '%s' modified during 'foreach' iteration",
			   d->name);
	if (w->walking.len && e->kind == EXPR_CALL && e->func)
		check_call(w, e);
	check_expr(w, e->left);
	check_expr(w, e->right);
	check_expr(w, e->cond);
	for (int i = 0; i < e->args.len; i++)
		check_expr(w, VEC_AT(&e->args, i));
}

static void check_stmt(struct fe *w, struct stmt *s)
{
	struct vardecl *d;
	int depth = w->walking.len;

	if (!s)
		return;
	for (int i = 0; i < s->body.len; i++)
		check_stmt(w, VEC_AT(&s->body, i));
	/* an element's delete, as stap: deleting the whole array is allowed */
	if (s->kind == STMT_DELETE && s->expr->kind == EXPR_INDEX && w->walking.len &&
	    (d = target_decl(s->expr)) && walking(w, d))
		sema_error(name_loc(s->expr), w->sm, "variable '%s' modified during 'foreach' iteration",
			   d->name);
	check_expr(w, s->expr);
	check_expr(w, s->init);
	check_expr(w, s->incr);
	if (s->kind == STMT_FOREACH && s->array && (d = target_decl(s->array)))
		vec_push(&w->walking, d);
	check_stmt(w, s->then);
	w->walking.len = depth;
	check_stmt(w, s->otherwise);
}

void sema_foreach_check(struct sema *sm)
{
	struct fe w = { .sm = sm };

	for (int i = 0; i < sm->prog->probes.len; i++)
		check_stmt(&w, ((struct derived_probe *)VEC_AT(&sm->prog->probes, i))->body);
	for (int i = 0; i < sm->all_funcs.len; i++)
		check_stmt(&w, ((struct func *)VEC_AT(&sm->all_funcs, i))->body);
}
