/*
 * emit_stmt.c - statements, the same text for both contexts except for
 * loops (bpf_loop callbacks in the kernel, C loops in user context; see
 * emit_bpf.c and emit_user.c) and the jumps out of them.
 *
 * Errors unwind with goto: to the innermost catch label, else to the end
 * of the C function (`out:`), or out of a kernel loop body with return 1.
 * Temporaries live for one statement.
 */
#include <stdlib.h>
#include <string.h>
#include "emit_int.h"

/* Statements one run of S counts against MAXACTION (nested loops count their own). */
int emit_count_stmts(const struct stmt *s)
{
	int n = 0;

	if (!s)
		return 0;
	switch (s->kind) {
	case STMT_BLOCK:
		for (int i = 0; i < s->body.len; i++)
			n += emit_count_stmts(VEC_AT(&s->body, i));
		return n;
	case STMT_IF:
		return 1 + emit_count_stmts(s->then) + emit_count_stmts(s->otherwise);
	case STMT_TRY:
		return 1 + emit_count_stmts(s->then) + emit_count_stmts(s->otherwise);
	case STMT_NULL:
		return 0;
	default:
		return 1;
	}
}

void emit_locals_init(struct emitter *E, struct vec *locals)
{
	for (int i = 0; i < locals->len; i++) {
		struct vardecl *d = VEC_AT(locals, i);

		emit_frame_local(E, E->frame, d);
		if (d->type == TYPE_STRING)
			emit_line(E, "f->l_%s[0] = '\\0';", d->name);
		else if (d->type == TYPE_LONG)
			emit_line(E, "f->l_%s = 0;", d->name);
	}
}

static void block(struct emitter *E, struct stmt *s)
{
	E->cf->indent++;
	emit_stmt(E, s);
	E->cf->indent--;
}

/* Does E hold a match (=~), a value that also sets what matched() returns? */
static bool has_match(const struct expr *e)
{
	if (!e)
		return false;
	if (e->kind == EXPR_REGEX)
		return true;
	if (has_match(e->left) || has_match(e->right) || has_match(e->cond))
		return true;
	for (int i = 0; i < e->args.len; i++)
		if (has_match(VEC_AT(&e->args, i)))
			return true;
	return false;
}

static void stmt_expr(struct emitter *E, struct stmt *s)
{
	int mark, *keys;
	const char *v;

	emit_temps_mark(E, &mark, &keys);
	v = emit_expr_void(E, s->expr);
	/* the value is dropped, but a match in it must still be evaluated */
	if (has_match(s->expr))
		emit_line(E, "(void)(%s);", v);
	emit_temps_release(E, mark, keys);
}

static void stmt_if(struct emitter *E, struct stmt *s)
{
	int mark, *keys;
	const char *c;
	struct capture cap;

	emit_temps_mark(E, &mark, &keys);
	c = emit_cond_bare(E, s->expr);
	emit_line(E, "if (%s) {", c);
	emit_temps_release(E, mark, keys);
	block(E, s->then);
	while (s->otherwise && s->otherwise->kind == STMT_IF) {
		/* else if: chained when its condition needs no statements */
		int ntemps = E->cf->ntemps;

		emit_temps_mark(E, &mark, &keys);
		emit_capture_begin(E, &cap);
		c = emit_cond_bare(E, s->otherwise->expr);
		emit_capture_end(E, &cap);
		free(cap.buf);
		emit_temps_release(E, mark, keys);
		if (cap.len) {
			E->cf->ntemps = ntemps;	/* written again, nested, below */
			break;
		}
		s = s->otherwise;
		emit_line(E, "} else if (%s) {", c);
		block(E, s->then);
	}
	if (s->otherwise) {
		emit_line(E, "} else {");
		block(E, s->otherwise);
	}
	emit_line(E, "}");
}

/* Close every user foreach iterator opened around the current statement. */
static void close_iterators(struct emitter *E)
{
	for (int i = E->foreach_depth - 1; i >= 0; i--)
		emit_line(E, "stp_foreach_end(&%s);", E->foreach_its[i]);
}

static void stmt_return(struct emitter *E, struct stmt *s)
{
	int mark, *keys;
	const char *v;

	if (s->expr && E->fn) {
		emit_temps_mark(E, &mark, &keys);
		v = emit_expr(E, s->expr);
		if (s->expr->type == TYPE_STRING)
			emit_line(E, "stp_strcpy(ret, %s);", v);
		else
			emit_line(E, "f->ret = %s;", v);
		emit_temps_release(E, mark, keys);
	}
	if (E->cf->is_callback) {
		emit_line(E, "c->error = STP_ERR_RETURN;");
		emit_line(E, "return 1;");
		return;
	}
	close_iterators(E);
	emit_line(E, "goto out;");
}

static void stmt_break(struct emitter *E)
{
	emit_line(E, E->cf->is_callback ? "return 1;" : "break;");
}

static void stmt_continue(struct emitter *E)
{
	if (E->cf->cont_label)
		emit_line(E, "goto %s;", E->cf->cont_label);
	else
		emit_line(E, E->cf->is_callback ? "return 0;" : "continue;");
}

/* stap checks this while translating: its pass 2 lets it by (stap's semok/transko.stp). */
static void stmt_outside_loop(struct emitter *E, const struct stmt *s)
{
	E->errors_reported++;
	diag_error(s->loc, "cannot '%s' outside loop", s->kind == STMT_BREAK ? "break" : "continue");
}

static void stmt_next(struct emitter *E)
{
	emit_line(E, "c->error = STP_ERR_NEXT;");
	if (E->cf->err_label)
		emit_line(E, "goto %s;", E->cf->err_label);
	else if (E->cf->is_callback)
		emit_line(E, "return 1;");
	else
		emit_line(E, "goto out;");
}

/*
 *	try { A } catch (msg) { B }
 * A's errors jump to catch_N; only soft errors are caught, anything else
 * (abort, next, a return from a kernel loop body) goes on unwinding.
 */
static void stmt_try(struct emitter *E, struct stmt *s)
{
	int n = emit_seq(E);
	const char *outer = E->cf->err_label, *label = arena_printf("catch_%d", n);

	emit_line(E, "/* try at %s */", emit_loc_text(s->loc));
	E->cf->err_label = label;
	emit_stmt(E, s->then);
	E->cf->err_label = outer;
	emit_line(E, "goto try_end_%d;", n);
	E->cf->indent--;
	emit_line(E, "%s:", label);
	E->cf->indent++;
	emit_line(E, "if (c->error != STP_ERR_RAISED)");
	emit_fail(E);
	emit_line(E, "c->error = STP_ERR_NONE;");
	emit_line(E, "c->err_site = -1;");
	if (s->catch_var)
		emit_line(E, "stp_strcpy(%s, c->errmsg);", emit_var_ref(E, s->catch_var->decl));
	if (s->otherwise)
		emit_stmt(E, s->otherwise);
	E->cf->indent--;
	emit_line(E, "try_end_%d:;", n);
	E->cf->indent++;
}

static void stmt_embedded(struct emitter *E, struct stmt *s)
{
	if (E->kmod && E->ctx == ECTX_USER && hmap_get(&E->ublock_of, s))
		return emit_guru_ublock(E, s, NULL);
	if (E->kmod && E->ctx == ECTX_USER)
		return emit_guru_user(E, s->loc, "a statement");
	emit_line(E, "{ /* embedded C at %s */", emit_loc_text(s->loc));
	/* stap takes it as an expression statement: "%{ x = 1 %}" needs the ';' */
	emit_raw(E, E->kmod ? "%s\n;\n" : "%s\n", s->code);
	emit_line(E, "}");
}

static void stmt_delete(struct emitter *E, struct stmt *s)
{
	int mark, *keys;

	emit_temps_mark(E, &mark, &keys);
	emit_delete(E, s);
	emit_temps_release(E, mark, keys);
}

void emit_stmt(struct emitter *E, struct stmt *s)
{
	if (!s)
		return;
	switch (s->kind) {
	case STMT_BLOCK:
		for (int i = 0; i < s->body.len; i++)
			emit_stmt(E, VEC_AT(&s->body, i));
		break;
	case STMT_EXPR: stmt_expr(E, s); break;
	case STMT_NULL: break;
	case STMT_IF: stmt_if(E, s); break;
	case STMT_WHILE:
	case STMT_FOR:
		if (E->ctx == ECTX_KERNEL)
			emit_bpf_loop(E, s);
		else
			emit_user_loop(E, s);
		break;
	case STMT_FOREACH:
		if (E->ctx == ECTX_KERNEL)
			emit_bpf_foreach(E, s);
		else
			emit_user_foreach(E, s);
		break;
	case STMT_RETURN: stmt_return(E, s); break;
	case STMT_BREAK:
	case STMT_CONTINUE:
		if (s->outside_loop)
			stmt_outside_loop(E, s);
		else if (s->kind == STMT_BREAK)
			stmt_break(E);
		else
			stmt_continue(E);
		break;
	case STMT_NEXT: stmt_next(E); break;
	case STMT_DELETE: stmt_delete(E, s); break;
	case STMT_TRY: stmt_try(E, s); break;
	case STMT_EMBEDDED: stmt_embedded(E, s); break;
	}
}
