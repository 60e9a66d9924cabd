/*
 * ast_print.c - the syntax tree as script text (pmstap -p1).
 *
 * The output parses back to the same tree, so printing that tree again
 * gives the same text.  Compound expressions are fully parenthesised (so
 * precedence never matters), except at the top of a statement, a
 * condition or an argument; simple statements end in ';' so that the next
 * one cannot be read as their continuation.
 */
#include <inttypes.h>
#include "ast.h"

static void print_expr(FILE *out, const struct expr *e, bool top);
static void print_stmt(FILE *out, const struct stmt *s, int indent);

static void tabs(FILE *out, int n)
{
	while (n-- > 0)
		fputc('\t', out);
}

static const char *const stat_names[] = {
	[STAT_COUNT] = "@count", [STAT_SUM] = "@sum", [STAT_MIN] = "@min",
	[STAT_MAX] = "@max", [STAT_AVG] = "@avg", [STAT_VARIANCE] = "@variance",
};

static void print_number(FILE *out, const struct expr *e)
{
	if (e->text)
		fputs(e->text, out);
	else
		fprintf(out, "%" PRId64, e->num);
}

/* ARGS separated by ", "; a NULL item is the '*' of a slice. */
static void print_list(FILE *out, const struct vec *args)
{
	for (int i = 0; i < args->len; i++) {
		const struct expr *a = VEC_AT(args, i);

		if (i)
			fputs(", ", out);
		if (a)
			print_expr(out, a, true);
		else
			fputc('*', out);
	}
}

static void print_comps(FILE *out, const struct expr *e)
{
	for (int i = 0; i < e->comps.len; i++) {
		const struct target_comp *c = VEC_AT(&e->comps, i);

		switch (c->kind) {
		case COMP_MEMBER:
			fprintf(out, "->%s", c->member);
			break;
		case COMP_INDEX:
			fprintf(out, "[%" PRId64 "]", c->index);
			break;
		case COMP_INDEX_EXPR:
			fputc('[', out);
			print_expr(out, c->index_expr, true);
			fputc(']', out);
			break;
		}
	}
	if (e->pretty && e->kind == EXPR_AUTOCAST && !e->comps.len)
		fputc(' ', out);	/* "x $", not the identifier "x$" */
	fputs(e->pretty == 2 ? "$$" : e->pretty ? "$" : "", out);
}

static void print_module(FILE *out, const struct expr *e)
{
	if (e->module)
		fprintf(out, ", \"%s\"", e->module);
	fputc(')', out);
}

static void print_in(FILE *out, const struct expr *e)
{
	const struct expr *k0 = e->args.len ? VEC_AT(&e->args, 0) : NULL;

	if (e->args.len == 1 && k0) {
		print_expr(out, k0, false);
	} else {
		fputc('[', out);
		for (int i = 0; i < e->args.len; i++) {
			const struct expr *k = VEC_AT(&e->args, i);

			if (i)
				fputs(", ", out);
			if (k)
				print_expr(out, k, false);
			else
				fputc('*', out);
		}
		fputc(']', out);
	}
	fputs(" in ", out);
	print_expr(out, e->right, true);
}

static void print_hist(FILE *out, const struct expr *e)
{
	fputs(e->hist == HIST_LOG ? "@hist_log(" : "@hist_linear(", out);
	print_expr(out, e->left, true);
	for (int i = 0; i < e->args.len; i++) {
		fputs(", ", out);
		print_expr(out, VEC_AT(&e->args, i), true);
	}
	fputc(')', out);
}

/* The operator forms, which get parentheses unless TOP. */
static void print_operator(FILE *out, const struct expr *e)
{
	switch (e->kind) {
	case EXPR_UNARY:
	case EXPR_PREFIX:
		fputs(e->op, out);
		print_expr(out, e->left, false);
		break;
	case EXPR_POSTFIX:
		print_expr(out, e->left, false);
		fputs(e->op, out);
		break;
	case EXPR_TERNARY:
		print_expr(out, e->cond, false);
		fputs(" ? ", out);
		print_expr(out, e->left, false);
		fputs(" : ", out);
		print_expr(out, e->right, false);
		break;
	case EXPR_IN:
		print_in(out, e);
		break;
	default:
		print_expr(out, e->left, false);
		fprintf(out, " %s ", e->op);
		print_expr(out, e->right, false);
		break;
	}
}

/* The target-like forms: &$x->a[1]$, @cast(...)->b, @var("x"), (e)->c. */
static void print_target(FILE *out, const struct expr *e)
{
	if (e->addr_of)
		fputc('&', out);
	switch (e->kind) {
	case EXPR_TARGET:
		fputs(e->name, out);
		break;
	case EXPR_CAST:
		fputs("@cast(", out);
		print_expr(out, e->left, true);
		fprintf(out, ", \"%s\"", e->str);
		print_module(out, e);
		break;
	case EXPR_ATVAR:
		fprintf(out, "@var(\"%s\"", e->name);
		print_module(out, e);
		break;
	default:	/* an autocast: (&@cast(p, "T"))->m needs its parentheses */
		if (e->left->addr_of)
			fputc('(', out);
		print_expr(out, e->left, false);
		if (e->left->addr_of)
			fputc(')', out);
		break;
	}
	print_comps(out, e);
}

static void print_call_like(FILE *out, const char *name, const struct expr *arg)
{
	fprintf(out, "%s(", name);
	print_expr(out, arg, true);
	fputc(')', out);
}

static void print_expr(FILE *out, const struct expr *e, bool top)
{
	switch (e->kind) {
	case EXPR_NUMBER: print_number(out, e); break;
	case EXPR_STRING: fprintf(out, "\"%s\"", e->str); break;
	case EXPR_SYMBOL: fputs(e->name, out); break;
	case EXPR_EMBEDDED: fprintf(out, "%%{%s%%}", e->str); break;
	case EXPR_PERF: fprintf(out, "@perf(\"%s\")", e->str); break;
	case EXPR_DEFINED: print_call_like(out, "@defined", e->left); break;
	case EXPR_ENTRY: print_call_like(out, "@entry", e->left); break;
	case EXPR_REGISTER: fprintf(out, "%s(%" PRId64 ")", e->name, e->num); break;
	case EXPR_DEREF:
		fprintf(out, "%s(%" PRId64 ", ", e->name, e->num);
		print_expr(out, e->left, true);
		fputc(')', out);
		break;
	case EXPR_HIST: print_hist(out, e); break;
	case EXPR_INDEX:
		print_expr(out, e->left, false);
		fputc('[', out);
		print_list(out, &e->args);
		fputc(']', out);
		break;
	case EXPR_CALL:
		fprintf(out, "%s(", e->name);
		print_list(out, &e->args);
		fputc(')', out);
		break;
	case EXPR_STAT:
		fprintf(out, "%s(", stat_names[e->stat]);
		print_expr(out, e->left, true);
		if (e->right) {
			fputs(", ", out);
			print_expr(out, e->right, true);
		}
		fputc(')', out);
		break;
	case EXPR_TARGET:
	case EXPR_CAST:
	case EXPR_ATVAR:
	case EXPR_AUTOCAST:
		print_target(out, e);
		break;
	default:
		if (!top)
			fputc('(', out);
		print_operator(out, e);
		if (!top)
			fputc(')', out);
		break;
	}
}

void ast_print_expr(FILE *out, const struct expr *e)
{
	print_expr(out, e, false);
}

/* ---- statements ---- */

static void print_block(FILE *out, const struct stmt *s, int indent)
{
	fputs("{\n", out);
	for (int i = 0; i < s->body.len; i++) {
		tabs(out, indent + 1);
		print_stmt(out, VEC_AT(&s->body, i), indent + 1);
		fputc('\n', out);
	}
	tabs(out, indent);
	fputc('}', out);
}

/* The body of an if, a loop or an else: a block on this line, else indented. */
static void print_sub(FILE *out, const struct stmt *s, int indent)
{
	if (s->kind == STMT_BLOCK) {
		fputc(' ', out);
		print_block(out, s, indent);
		return;
	}
	fputc('\n', out);
	tabs(out, indent + 1);
	print_stmt(out, s, indent + 1);
}

static void print_if(FILE *out, const struct stmt *s, int indent)
{
	fputs("if (", out);
	print_expr(out, s->expr, true);
	fputc(')', out);
	print_sub(out, s->then, indent);
	if (!s->otherwise)
		return;
	if (s->then->kind == STMT_BLOCK)
		fputc(' ', out);
	else {
		fputc('\n', out);
		tabs(out, indent);
	}
	fputs("else", out);
	if (s->otherwise->kind == STMT_IF) {
		fputc(' ', out);
		print_if(out, s->otherwise, indent);
	} else {
		print_sub(out, s->otherwise, indent);
	}
}

static void print_for(FILE *out, const struct stmt *s, int indent)
{
	fputs("for (", out);
	if (s->init)
		print_expr(out, s->init, true);
	fputc(';', out);
	if (s->expr) {
		fputc(' ', out);
		print_expr(out, s->expr, true);
	}
	fputc(';', out);
	if (s->incr) {
		fputc(' ', out);
		print_expr(out, s->incr, true);
	}
	fputc(')', out);
	print_sub(out, s->then, indent);
}

static const char *sort_sign(int dir)
{
	return dir > 0 ? "+" : "-";
}

static void print_foreach_keys(FILE *out, const struct stmt *s)
{
	if (s->keys.len != 1)
		fputc('[', out);
	for (int i = 0; i < s->keys.len; i++) {
		if (i)
			fputs(", ", out);
		print_expr(out, VEC_AT(&s->keys, i), true);
		if (s->sort_dir && s->sort_col == i + 1)
			fputs(sort_sign(s->sort_dir), out);
	}
	if (s->keys.len != 1)
		fputc(']', out);
}

static void print_foreach(FILE *out, const struct stmt *s, const struct stmt *body, int indent)
{
	fputs("foreach (", out);
	if (s->value) {
		print_expr(out, s->value, true);
		fputs(" = ", out);
	}
	print_foreach_keys(out, s);
	fputs(" in ", out);
	print_expr(out, s->array, true);
	if (s->sort_by_stat)
		fprintf(out, " %s", stat_names[s->sort_stat]);
	if (s->sort_dir && s->sort_col == 0)
		fputs(sort_sign(s->sort_dir), out);
	if (s->limit) {
		fputs(" limit ", out);
		print_expr(out, s->limit, true);
	}
	fputc(')', out);
	print_sub(out, body, indent);
}

/*
 * A block pass 2 lowered from a foreach over histogram buckets
 * (sema_resolve.c), printed as the foreach it was: its body is what is
 * left of the loop's last statement.
 */
static void print_lowered(FILE *out, const struct stmt *s, int indent)
{
	const struct stmt *loop = VEC_AT(&s->body, s->body.len - 1);
	const struct stmt *body = loop->kind == STMT_FOR && loop->then->body.len ?
				  VEC_AT(&loop->then->body, loop->then->body.len - 1) : NULL;

	if (body)
		print_foreach(out, s->lowered_from, body, indent);
	else
		print_block(out, s, indent);
}

static void print_try(FILE *out, const struct stmt *s, int indent)
{
	fputs("try ", out);
	print_block(out, s->then, indent);
	fputs(" catch ", out);
	if (s->catch_var) {
		fputc('(', out);
		print_expr(out, s->catch_var, true);
		fputs(") ", out);
	}
	print_block(out, s->otherwise, indent);
}

/* One statement, without the leading indentation or a trailing newline. */
static void print_stmt(FILE *out, const struct stmt *s, int indent)
{
	switch (s->kind) {
	case STMT_BLOCK:
		if (s->lowered_from)
			print_lowered(out, s, indent);
		else
			print_block(out, s, indent);
		break;
	case STMT_NULL: fputc(';', out); break;
	case STMT_IF: print_if(out, s, indent); break;
	case STMT_FOR: print_for(out, s, indent); break;
	case STMT_FOREACH: print_foreach(out, s, s->then, indent); break;
	case STMT_TRY: print_try(out, s, indent); break;
	case STMT_BREAK: fputs("break;", out); break;
	case STMT_CONTINUE: fputs("continue;", out); break;
	case STMT_NEXT: fputs("next;", out); break;
	case STMT_EMBEDDED: fprintf(out, "%%{%s%%}", s->code); break;
	case STMT_WHILE:
		fputs("while (", out);
		print_expr(out, s->expr, true);
		fputc(')', out);
		print_sub(out, s->then, indent);
		break;
	case STMT_RETURN:
		fputs("return", out);
		if (s->expr) {
			fputc(' ', out);
			print_expr(out, s->expr, true);
		}
		fputc(';', out);
		break;
	case STMT_DELETE:
		fputs("delete ", out);
		print_expr(out, s->expr, true);
		fputc(';', out);
		break;
	case STMT_EXPR:
		print_expr(out, s->expr, true);
		fputc(';', out);
		break;
	}
}

void ast_print_stmt(FILE *out, const struct stmt *s, int indent)
{
	tabs(out, indent);
	print_stmt(out, s, indent);
	fputc('\n', out);
}

/* ---- declarations ---- */

void ast_print_probe_point(FILE *out, const struct probe_point *pp)
{
	for (int i = 0; i < pp->comps.len; i++) {
		const struct probe_comp *c = VEC_AT(&pp->comps, i);

		if (i)
			fputc('.', out);
		fputs(c->name, out);
		if (c->arg) {
			fputc('(', out);
			print_expr(out, c->arg, true);
			fputc(')', out);
		}
	}
	if (pp->sufficient)
		fputc('!', out);
	else if (pp->optional)
		fputc('?', out);
	if (pp->cond) {
		fputs(" if (", out);
		print_expr(out, pp->cond, true);
		fputc(')', out);
	}
}

static void print_points(FILE *out, const struct vec *points, const char *sep)
{
	for (int i = 0; i < points->len; i++) {
		if (i)
			fputs(sep, out);
		ast_print_probe_point(out, VEC_AT(points, i));
	}
}

static void print_doc(FILE *out, const char *doc)
{
	if (doc)
		fprintf(out, "/**%s*/\n", doc);
}

static void print_global(FILE *out, const struct vardecl *d)
{
	print_doc(out, d->doc);
	if (d->is_private)
		fputs("private ", out);
	if (d->is_export)
		fputs("export ", out);
	fprintf(out, "global %s", d->name);
	if (d->wrap)
		fputc('%', out);
	if (d->maxsize)
		fprintf(out, "[%" PRId64 "]", d->maxsize);
	if (d->init) {
		fputs(" = ", out);
		print_expr(out, d->init, true);
	}
	fputc('\n', out);
}

static void print_type(FILE *out, bool declared, enum type t)
{
	if (declared)
		fprintf(out, ":%s", ast_type_name(t));
}

static void print_func(FILE *out, const struct func *f)
{
	print_doc(out, f->doc);
	fprintf(out, "%sfunction %s", f->is_private ? "private " : "", f->name);
	print_type(out, f->ret_declared, f->ret_type);
	fputc('(', out);
	for (int i = 0; i < f->params.len; i++) {
		const struct vardecl *d = VEC_AT(&f->params, i);

		fprintf(out, "%s%s", i ? ", " : "", d->name);
		print_type(out, d->type_declared, d->type);
	}
	fputc(')', out);
	if (f->priority)
		fprintf(out, " :%" PRId64, f->priority);
	if (f->embedded)
		fprintf(out, " %%{%s%%}\n", f->embedded);
	else {
		fputc(' ', out);
		print_block(out, f->body, 0);
		fputc('\n', out);
	}
}

static void print_alias(FILE *out, const struct probe_alias *a)
{
	const char *sep = a->epilogue ? " += " : " = ";

	print_doc(out, a->doc);
	fputs("probe ", out);
	print_points(out, &a->names, sep);
	fputs(sep, out);
	print_points(out, &a->points, ", ");
	fputc(' ', out);
	print_block(out, a->body, 0);
	if (a->body2) {
		fputs(", ", out);
		print_block(out, a->body2, 0);
	}
	fputc('\n', out);
}

static void print_probe(FILE *out, const struct probe *p)
{
	print_doc(out, p->doc);
	fputs("probe ", out);
	print_points(out, &p->points, ", ");
	fputc(' ', out);
	print_block(out, p->body, 0);
	fputc('\n', out);
}

/* Declarations in groups: embedded code, globals, functions, aliases, probes. */
void ast_print_file(FILE *out, const struct stapfile *file)
{
	const char *sep = "";

	for (int i = 0; i < file->embeds.len; i++, sep = "\n") {
		const struct embed *e = VEC_AT(&file->embeds, i);

		fprintf(out, "%s%%{%s%%}\n", sep, e->code);
	}
	if (file->globals.len)
		fputs(sep, out), sep = "\n";
	for (int i = 0; i < file->globals.len; i++)
		print_global(out, VEC_AT(&file->globals, i));
	for (int i = 0; i < file->funcs.len; i++, sep = "\n") {
		fputs(sep, out);
		print_func(out, VEC_AT(&file->funcs, i));
	}
	for (int i = 0; i < file->aliases.len; i++, sep = "\n") {
		fputs(sep, out);
		print_alias(out, VEC_AT(&file->aliases, i));
	}
	for (int i = 0; i < file->probes.len; i++, sep = "\n") {
		fputs(sep, out);
		print_probe(out, VEC_AT(&file->probes, i));
	}
}
