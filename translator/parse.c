/*
 * parse.c - pass 1: tokens to a syntax tree.
 *
 * A hand-written recursive-descent parser over the preprocessor's tokens.
 * This file holds the token cursor, error recovery, literals and the
 * top-level declarations (globals, functions, probes and aliases);
 * statements are in parse_stmt.c and expressions in parse_expr.c.
 *
 * A syntax error is reported where it is found and unwinds (longjmp) to
 * parse_file(), which skips to the next token that can start a
 * declaration, so one run reports every broken declaration.  Everything
 * lives in the arena, so unwinding leaks nothing.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include "parse.h"
#include "parse_int.h"
#include "preproc.h"

/* ---- the token cursor ---- */

struct token *parse_peek_at(struct parser *p, int n)
{
	while (p->nla <= n)
		p->la[p->nla++] = preproc_next(p->pp);
	return p->la[n];
}

struct token *parse_peek(struct parser *p)
{
	return parse_peek_at(p, 0);
}

struct token *parse_next(struct parser *p)
{
	struct token *t = parse_peek(p);

	if (t->type != TOK_EOF) {
		memmove(p->la, p->la + 1, (size_t)(p->nla - 1) * sizeof(p->la[0]));
		p->nla--;
	}
	p->last = t;
	return t;
}

bool parse_peek_op(struct parser *p, const char *op)
{
	return lex_tok_is_op(parse_peek(p), op);
}

bool parse_peek_keyword(struct parser *p, const char *kw)
{
	return lex_tok_is_keyword(parse_peek(p), kw);
}

bool parse_accept_op(struct parser *p, const char *op)
{
	if (!parse_peek_op(p, op))
		return false;
	parse_next(p);
	return true;
}

bool parse_accept_keyword(struct parser *p, const char *kw)
{
	if (!parse_peek_keyword(p, kw))
		return false;
	parse_next(p);
	return true;
}

static void fail_v(struct parser *p, struct srcloc loc, const struct token *t,
		   const char *fmt, va_list ap)
	__attribute__((noreturn, format(printf, 4, 0)));

static void fail_v(struct parser *p, struct srcloc loc, const struct token *t,
		   const char *fmt, va_list ap)
{
	diag_error(loc, "%s", arena_vprintf(fmt, ap));
	/* a token from a macro body: say which use of the macro it came from */
	for (const struct token *use = t ? t->expanded_from : NULL; use; use = use->expanded_from)
		diag_note(use->loc, "in expansion of macro '%s'", use->text);
	longjmp(p->recover, 1);
}

void parse_fail(struct parser *p, const struct token *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_v(p, t->loc, t, fmt, ap);
}

void parse_fail_at(struct parser *p, struct srcloc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_v(p, loc, NULL, fmt, ap);
}

void parse_fail_expected(struct parser *p, const struct token *t, const char *what)
{
	parse_fail(p, t, "expected %s, found %s", what, lex_tok_describe(t));
}

struct token *parse_expect_op(struct parser *p, const char *op)
{
	struct token *t = parse_peek(p);

	if (!lex_tok_is_op(t, op))
		parse_fail_expected(p, t, arena_printf("'%s'", op));
	return parse_next(p);
}

struct token *parse_expect_keyword(struct parser *p, const char *kw)
{
	struct token *t = parse_peek(p);

	if (!lex_tok_is_keyword(t, kw))
		parse_fail_expected(p, t, arena_printf("'%s'", kw));
	return parse_next(p);
}

/* WHAT names the identifier's role: "a global name", "a parameter name"... */
struct token *parse_expect_ident(struct parser *p, const char *what)
{
	struct token *t = parse_peek(p);

	if (t->type != TOK_IDENT || t->text[0] == '$' || t->text[0] == '@')
		parse_fail_expected(p, t, what);
	return parse_next(p);
}

void parse_enter(struct parser *p, const struct token *t)
{
	if (++p->depth > PARSE_MAX_DEPTH)
		parse_fail(p, t, "expressions or statements are nested too deeply (more than %d levels)",
			   PARSE_MAX_DEPTH);
}

void parse_leave(struct parser *p)
{
	p->depth--;
}

void parse_check_embedded(struct parser *p, const struct token *t)
{
	if (!p->privileged)
		diag_error(t->loc, "embedded code in unprivileged script; need stap -g");
}

/* ---- literals ---- */

/* number_literal: ['-'] NUMBER */
struct expr *parse_number_literal(struct parser *p)
{
	struct token *minus = NULL, *t;
	struct expr *e;

	if (parse_peek_op(p, "-"))
		minus = parse_next(p);
	t = parse_peek(p);
	if (t->type != TOK_NUMBER)
		parse_fail_expected(p, t, "a number");
	parse_next(p);
	e = ast_expr(EXPR_NUMBER, minus ? minus->loc : t->loc);
	e->num = t->value;
	e->text = t->text;
	if (minus) {
		/* -9223372036854775808 is the one magnitude that only fits negated */
		if ((uint64_t)t->value > (uint64_t)INT64_MAX + 1)
			parse_fail(p, minus, "number -%s is out of range (the least is %" PRId64 ")",
				   t->text, INT64_MIN);
		e->num = (int64_t)(0 - (uint64_t)t->value);
		e->text = arena_printf("-%s", t->text);
	}
	return e;
}

/*
 * Adjacent strings are joined; with --compatible older than 2.0 not across
 * a comment, as stap (parse.cxx, consume_string_literals).
 */
static bool joins(const struct parser *p, const struct token *t)
{
	return t->type == TOK_STRING && !(t->comment_before && parse_compatible_before(p, "2.0"));
}

/* string_literal: STRING { STRING }   (adjacent strings are joined) */
struct expr *parse_string_literal(struct parser *p)
{
	struct token *t = parse_peek(p);
	struct expr *e;
	const char *body;

	if (t->type != TOK_STRING)
		parse_fail_expected(p, t, "a string");
	parse_next(p);
	body = t->text;
	while (joins(p, parse_peek(p)))
		body = arena_printf("%s%s", body, parse_next(p)->text);
	e = ast_expr(EXPR_STRING, t->loc);
	e->str = body;
	return e;
}

/* literal: number_literal | string_literal */
struct expr *parse_literal(struct parser *p)
{
	struct token *t = parse_peek(p);

	if (t->type == TOK_STRING)
		return parse_string_literal(p);
	if (t->type == TOK_NUMBER || lex_tok_is_op(t, "-"))
		return parse_number_literal(p);
	parse_fail_expected(p, t, "a number or a string");
}

/* ---- globals ---- */

static struct vardecl *find_global(struct stapfile *f, const char *name)
{
	for (int i = 0; i < f->globals.len; i++) {
		struct vardecl *d = VEC_AT(&f->globals, i);

		if (strcmp(d->name, name) == 0)
			return d;
	}
	return NULL;
}

/* global_size: '[' number_literal ']' */
static void parse_global_size(struct parser *p, struct vardecl *d)
{
	struct token *open = parse_expect_op(p, "[");
	struct expr *n = parse_number_literal(p);

	if (n->num <= 0 || n->num > INT_MAX)
		parse_fail(p, open, "array size %s is out of range (1 to %d)",
			   n->text, INT_MAX);
	d->maxsize = n->num;
	parse_expect_op(p, "]");
}

/* global_var: IDENT ['%'] [global_size] ['=' literal] */
static void parse_global_var(struct parser *p, struct token *name,
			     struct vardecl *proto)
{
	struct vardecl *d = ast_vardecl(name->text, name->loc, VAR_GLOBAL);
	struct vardecl *prev = find_global(p->file, name->text);

	if (prev) {
		diag_error(name->loc, "duplicate global '%s'", name->text);
		diag_note(prev->loc, "'%s' was first declared here", name->text);
	}
	d->is_private = proto->is_private;
	d->is_export = proto->is_export;
	d->doc = proto->doc;
	d->file = p->file;
	if (parse_accept_op(p, "%"))
		d->wrap = true;
	if (parse_peek_op(p, "["))
		parse_global_size(p, d);
	if (parse_peek_op(p, "=")) {
		struct token *eq = parse_next(p);

		if (d->wrap || d->maxsize)
			parse_fail(p, eq, "only scalar globals can be initialized, but '%s' is an array",
				   d->name);
		d->init = parse_literal(p);
		d->type = d->init->kind == EXPR_STRING ? TYPE_STRING : TYPE_LONG;
		d->arity = 0;
	}
	if (!prev)
		vec_push(&p->file->globals, d);
}

/* global_list: global_var { ',' global_var } [';'] */
static void parse_global_list(struct parser *p, struct token *first,
			      struct vardecl *proto)
{
	for (;;) {
		struct token *name = first ? first : parse_expect_ident(p, "a global name");

		first = NULL;
		parse_global_var(p, name, proto);
		if (!parse_accept_op(p, ","))
			break;
	}
	parse_accept_op(p, ";");
}

/* ---- functions ---- */

/* type: 'long' | 'string' */
static enum type parse_type(struct parser *p)
{
	struct token *t = parse_peek(p);

	if (t->type == TOK_KEYWORD || t->type == TOK_IDENT) {
		if (strcmp(t->text, "long") == 0) {
			parse_next(p);
			return TYPE_LONG;
		}
		if (strcmp(t->text, "string") == 0) {
			parse_next(p);
			return TYPE_STRING;
		}
	}
	parse_fail_expected(p, t, "a type ('long' or 'string')");
}

static void check_duplicate_param(struct func *f, const struct token *name)
{
	for (int i = 0; i < f->params.len; i++) {
		struct vardecl *prev = VEC_AT(&f->params, i);

		if (strcmp(prev->name, name->text) == 0)
			diag_error(name->loc, "duplicate parameter '%s' of function '%s'",
				   name->text, f->name);
	}
}

/* params: '(' [param { ',' param }] ')'   param: IDENT [':' type] */
static void parse_params(struct parser *p, struct func *f)
{
	parse_expect_op(p, "(");
	if (parse_accept_op(p, ")"))
		return;
	for (;;) {
		struct token *name = parse_expect_ident(p, "a parameter name");
		struct vardecl *d = ast_vardecl(name->text, name->loc, VAR_PARAM);

		check_duplicate_param(f, name);
		d->arity = 0;
		if (parse_accept_op(p, ":")) {
			d->type = parse_type(p);
			d->type_declared = true;
		}
		vec_push(&f->params, d);
		if (parse_accept_op(p, ")"))
			return;
		if (!parse_peek_op(p, ","))
			parse_fail_expected(p, parse_peek(p), "',' or ')'");
		parse_next(p);
	}
}

/* func_name: IDENT | 'long' | 'string' */
static struct token *parse_func_name(struct parser *p)
{
	struct token *t = parse_peek(p);

	if (lex_tok_is_keyword(t, "long") || lex_tok_is_keyword(t, "string"))
		return parse_next(p);
	return parse_expect_ident(p, "a function name");
}

/*
 * function_decl: 'function' func_name [':' type] params [':' number_literal]
 *                (block | EMBEDDED)
 */
static void parse_function(struct parser *p, struct token *kw, bool priv)
{
	struct token *name = parse_func_name(p);
	struct func *f = ARENA_NEW(struct func);
	struct token *t;

	f->name = name->text;
	f->loc = name->loc;
	f->is_private = priv;
	f->doc = kw->doc;
	f->file = p->file;
	if (parse_accept_op(p, ":")) {
		f->ret_type = parse_type(p);
		f->ret_declared = true;
	}
	parse_params(p, f);
	if (parse_peek_op(p, ":")) {
		struct expr *prio;

		t = parse_next(p);
		prio = parse_number_literal(p);
		if (prio->num < 1)
			parse_fail(p, t, "function priority must be greater than 0, not %s",
				   prio->text);
		f->priority = prio->num;
	}
	t = parse_peek(p);
	if (t->type == TOK_EMBEDDED) {
		parse_next(p);
		parse_check_embedded(p, t);
		f->embedded = t->text;
		f->embedded_loc = t->loc;
	} else {
		p->in_function = true;
		f->body = parse_block(p);
		p->in_function = false;
	}
	vec_push(&p->file->funcs, f);
}

/* ---- probe points ---- */

#define PARSE_MAX_POINTS 4096	/* after {a,b} groups multiply out (a fuzzer's 2^16 took minutes) */

static struct vec parse_points(struct parser *p);

/* Is T a piece of a component name: an identifier, keyword, or '*'? */
static bool is_name_piece(const struct token *t)
{
	if (t->type == TOK_IDENT)
		return t->text[0] != '$' && t->text[0] != '@';
	return t->type == TOK_KEYWORD || lex_tok_is_op(t, "*");
}

/* comp_name: name_piece { name_piece }   (pieces written without spaces) */
static const char *parse_comp_name(struct parser *p, struct token *first)
{
	const char *name = first->text;

	while (is_name_piece(parse_peek(p)) && !parse_peek(p)->space_before)
		name = arena_printf("%s%s", name, parse_next(p)->text);
	return name;
}

/* component: comp_name ['(' literal ')'] | '{' points '}'.  Returns points. */
static struct vec parse_component(struct parser *p)
{
	struct token *t = parse_peek(p);
	struct probe_point *pp;
	struct probe_comp *c;
	struct vec pps = { 0 };

	if (lex_tok_is_op(t, "{")) {
		parse_next(p);
		parse_enter(p, t);
		pps = parse_points(p);
		parse_leave(p);
		parse_expect_op(p, "}");
		return pps;
	}
	if (!is_name_piece(t))
		parse_fail_expected(p, t, "a probe point");
	parse_next(p);
	c = ARENA_NEW(struct probe_comp);
	c->loc = t->loc;
	c->name = parse_comp_name(p, t);
	if (parse_accept_op(p, "(")) {
		c->arg = parse_literal(p);
		parse_expect_op(p, ")");
	}
	pp = ARENA_NEW(struct probe_point);
	pp->loc = t->loc;
	vec_push(&pp->comps, c);
	vec_push(&pps, pp);
	return pps;
}

/* Every point of HEADS followed by every point of TAILS. */
static struct vec product(struct parser *p, struct vec heads, struct vec tails)
{
	struct vec out = { 0 };

	if ((int64_t)heads.len * tails.len > PARSE_MAX_POINTS)
		parse_fail(p, parse_peek(p), "the probe point expands to more than %d points",
			   PARSE_MAX_POINTS);
	for (int i = 0; i < heads.len; i++) {
		struct probe_point *h = VEC_AT(&heads, i);

		if (h->optional || h->cond)
			parse_fail_at(p, h->loc,
				      "'?', '!' and 'if' may only follow the last component of a probe point");
		for (int j = 0; j < tails.len; j++) {
			struct probe_point *t = VEC_AT(&tails, j);
			struct probe_point *pp = ARENA_NEW(struct probe_point);

			*pp = *t;
			pp->loc = h->loc;
			pp->comps = (struct vec){ 0 };
			for (int k = 0; k < h->comps.len; k++)
				vec_push(&pp->comps, VEC_AT(&h->comps, k));
			for (int k = 0; k < t->comps.len; k++)
				vec_push(&pp->comps, VEC_AT(&t->comps, k));
			vec_push(&out, pp);
		}
	}
	return out;
}

/* point_suffix: ['?' | '!'] ['if' '(' expr ')'] */
static void parse_point_suffix(struct parser *p, struct vec *pps)
{
	struct token *t = parse_peek(p);

	if (lex_tok_is_op(t, "?") || lex_tok_is_op(t, "!")) {
		parse_next(p);
		for (int i = 0; i < pps->len; i++) {
			struct probe_point *pp = VEC_AT(pps, i);

			if (pp->optional)
				parse_fail(p, t, "'?' or '!' given twice for one probe point");
			pp->optional = true;
			pp->sufficient = lex_tok_is_op(t, "!");
		}
	}
	if (parse_peek_keyword(p, "if")) {
		struct expr *cond;

		t = parse_next(p);
		parse_expect_op(p, "(");
		cond = parse_expr(p);
		parse_expect_op(p, ")");
		for (int i = 0; i < pps->len; i++) {
			struct probe_point *pp = VEC_AT(pps, i);

			if (pp->cond)
				parse_fail(p, t, "a probe point condition given twice");
			pp->cond = cond;
		}
	}
}

/* point: component { '.' component } point_suffix */
static struct vec parse_point(struct parser *p)
{
	struct vec pps = parse_component(p);

	while (parse_accept_op(p, "."))
		pps = product(p, pps, parse_component(p));
	parse_point_suffix(p, &pps);
	return pps;
}

/* points: point { ',' point } */
static struct vec parse_points(struct parser *p)
{
	struct vec pps = { 0 };

	for (;;) {
		struct vec more = parse_point(p);

		for (int i = 0; i < more.len; i++)
			vec_push(&pps, VEC_AT(&more, i));
		if (!parse_accept_op(p, ","))
			return pps;
	}
}

/* ---- probes and aliases ---- */

static void check_alias_names(struct parser *p, struct vec *names)
{
	for (int i = 0; i < names->len; i++) {
		struct probe_point *pp = VEC_AT(names, i);

		if (pp->optional || pp->cond)
			parse_fail_at(p, pp->loc,
				      "a probe alias name cannot be optional ('?'), sufficient ('!') or conditional ('if')");
	}
}

static void add_alias(struct parser *p, struct token *kw, struct vec names,
		      struct vec points, bool epilogue)
{
	struct probe_alias *a = ARENA_NEW(struct probe_alias);

	a->loc = kw->loc;
	a->names = names;
	a->points = points;
	a->epilogue = epilogue;
	a->doc = kw->doc;
	a->file = p->file;
	a->body = parse_block(p);
	if (parse_peek_op(p, ",")) {
		struct token *comma = parse_next(p);

		if (epilogue)
			parse_fail(p, comma,
				   "an epilogue alias ('+=') cannot have a second block; write '=' for a prologue and an epilogue");
		a->body2 = parse_block(p);
	}
	vec_push(&p->file->aliases, a);
}

/*
 * probe_decl: 'probe' points block
 *           | 'probe' alias_names points block [',' block]
 * alias_names: points ('=' | '+=') { points ('=' | '+=') }
 */
static void parse_probe(struct parser *p, struct token *kw)
{
	struct vec names = { 0 }, pps;
	bool epilogue = false;
	struct probe *pr;

	for (;;) {
		struct token *t;

		pps = parse_points(p);
		t = parse_peek(p);
		if (lex_tok_is_op(t, "=") || lex_tok_is_op(t, "+=")) {
			parse_next(p);
			for (int i = 0; i < pps.len; i++)
				vec_push(&names, VEC_AT(&pps, i));
			epilogue |= lex_tok_is_op(t, "+=");
			continue;
		}
		if (!lex_tok_is_op(t, "{"))
			parse_fail_expected(p, t, "',', '{', '=' or '+=' after a probe point");
		break;
	}
	if (names.len) {
		check_alias_names(p, &names);
		add_alias(p, kw, names, pps, epilogue);
		return;
	}
	pr = ARENA_NEW(struct probe);
	pr->loc = kw->loc;
	pr->points = pps;
	pr->doc = kw->doc;
	pr->file = p->file;
	pr->body = parse_block(p);
	vec_push(&p->file->probes, pr);
}

/* ---- declarations ---- */

static bool is_export_global(struct parser *p)
{
	return lex_tok_is(parse_peek(p), TOK_IDENT, "export") &&
	       lex_tok_is_keyword(parse_peek_at(p, 1), "global");
}

/* Can the next token start a declaration?  Recovery stops there. */
static bool at_decl_start(struct parser *p)
{
	struct token *t = parse_peek(p);

	return t->type == TOK_EOF || t->type == TOK_EMBEDDED ||
	       lex_tok_is_keyword(t, "probe") || lex_tok_is_keyword(t, "global") ||
	       lex_tok_is_keyword(t, "function") || lex_tok_is_keyword(t, "private") ||
	       is_export_global(p);
}

/* private_decl: 'private' ('global' global_list | 'function' ... | global_list) */
static void parse_private(struct parser *p, struct token *kw)
{
	struct vardecl proto = { .is_private = true, .doc = kw->doc };
	struct token *t = parse_peek(p);

	if (lex_tok_is_keyword(t, "function")) {
		parse_next(p);
		parse_function(p, kw, true);
	} else if (lex_tok_is_keyword(t, "global")) {
		parse_next(p);
		parse_global_list(p, NULL, &proto);
	} else if (t->type == TOK_IDENT) {
		parse_global_list(p, NULL, &proto);
	} else {
		parse_fail_expected(p, t, "'global', 'function' or a global name after 'private'");
	}
}

static void parse_embed(struct parser *p, struct token *t)
{
	struct embed *e = ARENA_NEW(struct embed);

	parse_check_embedded(p, t);
	e->code = t->text;
	e->loc = t->loc;
	vec_push(&p->file->embeds, e);
}

/*
 * decl: probe_decl | function_decl | 'global' global_list
 *     | 'export' 'global' global_list | private_decl | EMBEDDED
 */
static void parse_decl(struct parser *p)
{
	struct token *t = parse_peek(p);

	if (is_export_global(p)) {
		struct vardecl proto = { .is_export = true, .doc = t->doc };

		parse_next(p);
		parse_next(p);
		parse_global_list(p, NULL, &proto);
		return;
	}
	parse_next(p);
	if (lex_tok_is_keyword(t, "probe")) {
		parse_probe(p, t);
	} else if (lex_tok_is_keyword(t, "global")) {
		struct vardecl proto = { .doc = t->doc };

		parse_global_list(p, NULL, &proto);
	} else if (lex_tok_is_keyword(t, "function")) {
		parse_function(p, t, false);
	} else if (lex_tok_is_keyword(t, "private")) {
		parse_private(p, t);
	} else if (t->type == TOK_EMBEDDED) {
		parse_embed(p, t);
	} else {
		parse_fail_expected(p, t,
				    "'probe', 'global', 'function', 'private' or '%{'");
	}
}

/* file: { decl } */
/*
 * The declarations parse_decl() added to F since BEFORE passed a
 * %( systemtap_v %) condition on their way (--check-version warns about
 * them, as stap does: the condition read while the declaration was parsed,
 * or just before it).
 */
static void mark_systemtap_v(struct stapfile *f, const struct stapfile *before)
{
	for (int i = before->globals.len; i < f->globals.len; i++)
		((struct vardecl *)VEC_AT(&f->globals, i))->systemtap_v = true;
	for (int i = before->funcs.len; i < f->funcs.len; i++)
		((struct func *)VEC_AT(&f->funcs, i))->systemtap_v = true;
	for (int i = before->probes.len; i < f->probes.len; i++)
		((struct probe *)VEC_AT(&f->probes, i))->systemtap_v = true;
	for (int i = before->aliases.len; i < f->aliases.len; i++)
		((struct probe_alias *)VEC_AT(&f->aliases, i))->systemtap_v = true;
}

struct stapfile *parse_file(struct session *s, const struct source *src)
{
	struct parser *p = ARENA_NEW(struct parser);
	struct stapfile *f = ARENA_NEW(struct stapfile);
	int errors = diag_error_count();

	f->src = src;
	f->is_tapset = src->is_tapset;
	p->s = s;
	p->src = src;
	p->file = f;
	p->privileged = s->guru || src->is_tapset;
	p->pp = preproc_open(s, src);
	if (setjmp(p->recover)) {
		p->in_function = false;
		p->depth = 0;
		while (!at_decl_start(p))
			parse_next(p);
	}
	for (int seen = preproc_systemtap_v_seen(p->pp); parse_peek(p)->type != TOK_EOF;
	     seen = preproc_systemtap_v_seen(p->pp)) {
		struct stapfile before = *f;

		parse_decl(p);
		if (preproc_systemtap_v_seen(p->pp) != seen)
			mark_systemtap_v(f, &before);
	}
	if (!src->is_tapset && diag_error_count() == errors &&
	    !f->globals.len && !f->funcs.len && !f->probes.len &&
	    !f->aliases.len && !f->embeds.len)
		diag_error(parse_peek(p)->loc, "the script is empty: no probes, functions or globals");
	return f;
}
