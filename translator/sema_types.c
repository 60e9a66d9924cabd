/*
 * sema_types.c - type inference and checking (pass 2, last step).
 *
 * Types live in slots: a variable's value, each key column of an array,
 * a function's return value.  Walking every kept body, each expression's
 * type is computed from its operands and pushed into the slots it touches
 * ("x = 1" makes x a long, printf("%s", y) makes y a string, "s <<< 1"
 * makes s statistics); a slot keeps the first type it gets and the place
 * it came from.  The walk repeats until no slot changes.  A last walk then
 * reports every conflict, at the expression that disagrees, with a note
 * where the slot got its type; slots still unknown are errors too.
 */
#include <regex.h>
#include <string.h>
#include "diag.h"
#include "sema_int.h"

struct tc {
	struct sema *sm;
	bool report;		/* the last walk: say what is wrong */
	bool changed;
	struct func *func;	/* the function being walked, or NULL in a probe */
};

/* A slot: the value of D (key < 0), key column KEY of D, or F's return value. */
struct slotref {
	struct vardecl *d;
	int key;
	struct func *f;
};

static enum type tx(struct tc *tc, struct expr *e);

const char *sema_type_text(enum type t)
{
	switch (t) {
	case TYPE_LONG: return "a long";
	case TYPE_STRING: return "a string";
	case TYPE_STATS: return "statistics";
	case TYPE_VOID: return "no value";
	default: return "unknown";
	}
}

static enum type *slot_ptr(struct tc *tc, struct slotref r, struct srcloc **from)
{
	if (r.f) {
		*from = &sema_funcinfo(tc->sm, r.f)->ret_from;
		return &r.f->ret_type;
	}
	if (r.key >= 0) {
		*from = &sema_declinfo(tc->sm, r.d)->key_from[r.key];
		return &r.d->key_types[r.key];
	}
	*from = &sema_declinfo(tc->sm, r.d)->type_from;
	return &r.d->type;
}

static const char *slot_what(struct slotref r)
{
	if (r.f)
		return arena_printf("the return value of '%s'", r.f->name);
	if (r.key >= 0)
		return arena_printf("key %d of '%s'", r.key + 1, r.d->name);
	return arena_printf("'%s'", r.d->name);
}

static void mismatch(struct tc *tc, struct srcloc at, const char *what, enum type here,
		     enum type was, struct srcloc from)
{
	if (!tc->report)
		return;
	if (!from.src) {
		sema_error(at, tc->sm, "type mismatch: %s is %s here but %s elsewhere", what,
			   sema_type_text(here), sema_type_text(was));
		return;
	}
	if (sema_error(at, tc->sm, "type mismatch: %s is %s here but %s at %s:%d:%d", what,
		       sema_type_text(here), sema_type_text(was), from.src->name, from.line,
		       from.col))
		diag_note(from, "%s became %s here", what, sema_type_text(was));
}

/* Give slot R type T (learned at AT); returns the slot's type. */
static enum type unify(struct tc *tc, struct slotref r, enum type t, struct srcloc at)
{
	struct srcloc *from;
	enum type *cur = slot_ptr(tc, r, &from);

	if (t == TYPE_UNKNOWN)
		return *cur;
	if (*cur == TYPE_UNKNOWN) {
		*cur = t;
		*from = at;
		tc->changed = true;
		return t;
	}
	if (*cur != t && *cur != TYPE_VOID)
		mismatch(tc, at, slot_what(r), t, *cur, *from);
	return *cur;
}

static bool slot_of(const struct expr *e, struct slotref *r)
{
	*r = (struct slotref){ .key = -1 };
	if ((e->kind == EXPR_SYMBOL || (e->kind == EXPR_INDEX && e->left->kind == EXPR_SYMBOL)) &&
	    e->decl) {
		r->d = e->decl;
		return true;
	}
	if (e->kind == EXPR_CALL && e->func) {
		r->f = e->func;
		return true;
	}
	return false;
}

/*
 * E (already typed) must be T: push T into E's slot, or report.  ROLE
 * names E's place for the message when E has no slot ("the condition").
 */
static void expect(struct tc *tc, struct expr *e, enum type t, const char *role)
{
	struct slotref r;

	if (t == TYPE_UNKNOWN)
		return;
	if (e->kind == EXPR_TERNARY) {
		expect(tc, e->left, t, role);
		expect(tc, e->right, t, role);
		e->type = e->left->type ? e->left->type : e->right->type;
		return;
	}
	if (slot_of(e, &r)) {
		struct srcloc at = e->kind == EXPR_INDEX ? e->left->loc : e->loc;

		if (!(r.f && r.f->ret_type == TYPE_VOID))
			e->type = unify(tc, r, t, at);
		return;
	}
	if (e->type == TYPE_UNKNOWN || e->type == t || e->type == TYPE_VOID || !tc->report)
		return;
	sema_error(e->loc, tc->sm, "type mismatch: %s is %s but must be %s", role,
		   sema_type_text(e->type), sema_type_text(t));
}

static void want(struct tc *tc, struct expr *e, enum type t, const char *role)
{
	tx(tc, e);
	expect(tc, e, t, role);
}

/* E's type where a plain value (a long or a string) is needed. */
static enum type value_of(struct tc *tc, struct expr *e)
{
	enum type t = tx(tc, e);

	if (t == TYPE_STATS) {
		if (tc->report)
			sema_error(e->loc, tc->sm, "statistics have no value of their own; use @count, @sum, @min, @max, @avg or @variance");
		return TYPE_UNKNOWN;
	}
	if (t == TYPE_VOID) {
		if (tc->report)
			sema_error(e->loc, tc->sm, "'%s' returns no value", e->name ? e->name : "this");
		return TYPE_UNKNOWN;
	}
	return t;
}

/* A and B must have the same type; returns it.  WHAT describes the pair for a message. */
static enum type same_type(struct tc *tc, struct expr *a, struct expr *b, struct srcloc at,
			   const char *what)
{
	enum type ta = value_of(tc, a), tb = value_of(tc, b);

	if (ta && !tb)
		expect(tc, b, ta, what);
	else if (tb && !ta)
		expect(tc, a, tb, what);
	else if (ta && tb && ta != tb && tc->report)
		sema_error(at, tc->sm, "type mismatch: %s %s and %s", what, sema_type_text(ta),
			   sema_type_text(tb));
	return ta ? ta : tb;
}

/* Link two slots both ways (a loop variable and an array's key column). */
static void link_slots(struct tc *tc, struct slotref a, struct slotref b, struct srcloc at)
{
	struct srcloc *fa, *fb;
	enum type ta = *slot_ptr(tc, a, &fa), tb = *slot_ptr(tc, b, &fb);

	if (ta)
		unify(tc, b, ta, at);
	else if (tb)
		unify(tc, a, tb, at);
}

/* ---- printf formats ---- */

/* One conversion of a format: %[flags][width][.precision][length]type. */
struct conv {
	const char *spec;	/* at its '%' */
	int len;		/* through its type letter */
	int stars;		/* '*' widths and precisions: each takes a long */
	enum type type;		/* what its value must be */
	bool bad;		/* not a conversion stap knows (len covers what was read) */
	bool cut;		/* the format ended inside it */
};

/* The next conversion at or after P ("%%" is none); NULL when there are no more. */
static const char *next_conv(const char *p, struct conv *c)
{
	while ((p = strchr(p, '%')) && p[1] == '%')
		p += 2;
	if (!p)
		return NULL;
	*c = (struct conv){ .spec = p++, .type = TYPE_LONG };
	p += strspn(p, "-+ #0");
	for (int part = 0; part < 2; part++) {
		if (*p == '*') {
			c->stars++;
			p++;
		} else {
			p += strspn(p, "0123456789");
		}
		if (part || *p != '.')
			break;
		p++;
	}
	p += strspn(p, "hlLjzt");
	c->cut = !*p;
	c->bad = c->cut || !strchr("diouxXcpbsmM", *p);
	if (*p == 's')
		c->type = TYPE_STRING;
	if (*p)
		p++;
	c->len = (int)(p - c->spec);
	return p;
}

/* Argument ARG of CALL must be T for conversion C. */
static void format_arg(struct tc *tc, struct expr *call, int arg, enum type t, const struct conv *c)
{
	struct expr *a;
	enum type at;

	if (arg >= call->args.len)
		return;
	a = VEC_AT(&call->args, arg);
	at = value_of(tc, a);
	if (!at)
		expect(tc, a, t, "the value");
	else if (at != t && tc->report)
		sema_error(a->loc, tc->sm, "type mismatch: '%.*s' in the format needs %s, but argument %d is %s",
			   c->len, c->spec, sema_type_text(t), arg + 1, sema_type_text(at));
}

/*
 * Check the args of printf/sprintf against the format: each conversion
 * takes one value (and a '*' width or precision a long); missing, extra
 * or mistyped ones are errors.
 */
static void check_format(struct tc *tc, struct expr *call)
{
	struct expr *fmt = VEC_AT(&call->args, 0);
	const char *p = fmt->str;
	int arg = 1, nargs = call->args.len;
	struct conv c;

	while ((p = next_conv(p, &c))) {
		if (c.bad) {
			if (tc->report)
				sema_error(fmt->loc, tc->sm, c.cut
					   ? "incomplete conversion '%.*s' at the end of the format"
					   : "unknown conversion '%.*s' in the format", c.len, c.spec);
			return;
		}
		for (int i = 0; i < c.stars; i++)
			if (arg < nargs)
				want(tc, VEC_AT(&call->args, arg++), TYPE_LONG, "a '*' width or precision");
			else
				arg++;
		format_arg(tc, call, arg++, c.type, &c);
	}
	if (!tc->report || arg == nargs)
		return;
	if (arg > nargs)
		sema_error(call->loc, tc->sm, "too few arguments for the format: it needs %d, %d given",
			   arg - 1, nargs - 1);
	else
		sema_error(((struct expr *)VEC_AT(&call->args, arg))->loc, tc->sm,
			   "too many arguments for the format: it needs %d, %d given", arg - 1, nargs - 1);
}

static enum type tx_builtin(struct tc *tc, struct expr *e)
{
	int b = e->builtin, first = 0;

	if (b == BUILTIN_PRINTF || b == BUILTIN_SPRINTF) {
		if (e->args.len && ((struct expr *)VEC_AT(&e->args, 0))->kind == EXPR_STRING) {
			check_format(tc, e);
			return b == BUILTIN_SPRINTF ? TYPE_STRING : TYPE_VOID;
		}
		first = 1;
	} else if (b == BUILTIN_PRINTD || b == BUILTIN_PRINTDLN || b == BUILTIN_SPRINTD ||
		   b == BUILTIN_SPRINTDLN) {
		first = 1;
	}
	for (int i = first; i < e->args.len; i++) {
		struct expr *a = VEC_AT(&e->args, i);

		if (a->kind == EXPR_HIST)
			tx(tc, a);
		else
			value_of(tc, a);
	}
	return b >= BUILTIN_SPRINT ? TYPE_STRING : TYPE_VOID;
}

static enum type tx_call(struct tc *tc, struct expr *e)
{
	struct funcinfo *fi;
	struct vec one = { 0 }, *chain;

	if (e->builtin)
		return tx_builtin(tc, e);
	if (!e->func)
		return TYPE_UNKNOWN;
	fi = sema_funcinfo(tc->sm, e->func);
	chain = fi->chain.len ? &fi->chain : &one;
	if (!fi->chain.len)
		vec_push(&one, e->func);
	for (int i = 0; i < e->args.len; i++) {
		struct expr *a = VEC_AT(&e->args, i);
		enum type t = value_of(tc, a);

		for (int k = 0; k < chain->len; k++) {
			struct func *f = VEC_AT(chain, k);
			struct vardecl *p = VEC_AT(&f->params, i);

			if (t)
				unify(tc, (struct slotref){ .d = p, .key = -1 }, t, a->loc);
			else if (p->type)
				expect(tc, a, p->type, "the argument");
		}
	}
	for (int k = 1; k < chain->len; k++) {
		struct func *g = VEC_AT(chain, k);

		if (g->ret_type)
			unify(tc, (struct slotref){ .f = e->func }, g->ret_type, g->loc);
	}
	return e->func->ret_type;
}

/* The keys of an element, slice or 'in' test of array D. */
static void tx_keys(struct tc *tc, struct vardecl *d, struct vec *args)
{
	for (int i = 0; d && i < args->len && i < AST_MAX_KEYS; i++) {
		struct expr *k = VEC_AT(args, i);
		enum type t;

		if (!k)
			continue;
		t = value_of(tc, k);
		if (t)
			unify(tc, (struct slotref){ .d = d, .key = i }, t, k->loc);
		else if (d->key_types[i])
			expect(tc, k, d->key_types[i], "the key");
	}
}

static enum type tx_index(struct tc *tc, struct expr *e)
{
	if (e->left->kind == EXPR_HIST) {
		tx(tc, e->left);
		if (e->args.len)
			want(tc, VEC_AT(&e->args, 0), TYPE_LONG, "a histogram bucket");
		return TYPE_LONG;
	}
	tx_keys(tc, e->decl, &e->args);
	return e->decl ? e->decl->type : TYPE_UNKNOWN;
}

static enum type tx_assign(struct tc *tc, struct expr *e)
{
	const char *op = e->op;
	enum type tl, tr;

	if (!strcmp(op, "<<<")) {
		want(tc, e->left, TYPE_STATS, "the left side of '<<<'");
		want(tc, e->right, TYPE_LONG, "the value added with '<<<'");
		return TYPE_LONG;
	}
	if (strcmp(op, "=") != 0) {
		enum type t = !strcmp(op, ".=") ? TYPE_STRING : TYPE_LONG;
		const char *role = arena_printf("the operand of '%s'", op);

		want(tc, e->left, t, role);
		want(tc, e->right, t, role);
		return t;
	}
	tl = tx(tc, e->left);
	if (tl == TYPE_STATS) {
		if (tc->report)
			sema_error(e->loc, tc->sm, "statistics cannot be assigned; add values with '<<<'");
		tx(tc, e->right);
		return TYPE_UNKNOWN;
	}
	tr = value_of(tc, e->right);
	if (tr)
		expect(tc, e->left, tr, "the left side of '='");
	else if (tl)
		expect(tc, e->right, tl, "the value assigned");
	return tl ? tl : tr;
}

static void check_regex(struct tc *tc, struct expr *re)
{
	regex_t rx;
	char msg[256];
	int rc;

	if (!tc->report)
		return;
	if (re->kind != EXPR_STRING) {
		sema_error(re->loc, tc->sm, "the right side of '=~' must be a literal string (a regular expression)");
		return;
	}
	rc = regcomp(&rx, re->str, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		regerror(rc, &rx, msg, sizeof(msg));
		sema_error(re->loc, tc->sm, "invalid regular expression \"%s\": %s", re->str, msg);
		return;
	}
	regfree(&rx);
}

static enum type tx_target(struct tc *tc, struct expr *e)
{
	if (e->unresolved)
		sema_error(e->loc, tc->sm, "%s", e->unresolved);
	for (int i = 0; i < e->comps.len; i++) {
		struct target_comp *c = VEC_AT(&e->comps, i);

		if (c->index_expr)
			want(tc, c->index_expr, TYPE_LONG, "an index");
	}
	if (e->kind == EXPR_CAST && e->left)
		want(tc, e->left, TYPE_LONG, "the address given to @cast");
	if (e->kind == EXPR_TARGET && e->type)
		return e->type;
	return e->pretty ? TYPE_STRING : TYPE_LONG;
}

static const char *op_role(const struct expr *e)
{
	return arena_printf("the operand of '%s'", e->op);
}

static enum type tx_kind(struct tc *tc, struct expr *e)
{
	switch (e->kind) {
	case EXPR_NUMBER: return TYPE_LONG;
	case EXPR_STRING: return TYPE_STRING;
	case EXPR_SYMBOL: return e->decl ? e->decl->type : TYPE_UNKNOWN;
	case EXPR_INDEX: return tx_index(tc, e);
	case EXPR_CALL: return tx_call(tc, e);
	case EXPR_UNARY:
	case EXPR_PREFIX:
	case EXPR_POSTFIX:
		want(tc, e->left, TYPE_LONG, op_role(e));
		return TYPE_LONG;
	case EXPR_BINARY: {
		enum type t = strcmp(e->op, ".") == 0 ? TYPE_STRING : TYPE_LONG;

		want(tc, e->left, t, op_role(e));
		want(tc, e->right, t, op_role(e));
		return t;
	}
	case EXPR_LOGICAL:
		want(tc, e->left, TYPE_LONG, op_role(e));
		want(tc, e->right, TYPE_LONG, op_role(e));
		return TYPE_LONG;
	case EXPR_COMPARE:
		same_type(tc, e->left, e->right, e->loc, "comparing");
		return TYPE_LONG;
	case EXPR_REGEX:
		want(tc, e->left, TYPE_STRING, op_role(e));
		check_regex(tc, e->right);
		return TYPE_LONG;
	case EXPR_TERNARY:
		want(tc, e->cond, TYPE_LONG, "the condition of '?:'");
		return same_type(tc, e->left, e->right, e->loc, "the branches of '?:' are");
	case EXPR_ASSIGN: return tx_assign(tc, e);
	case EXPR_IN:
		tx_keys(tc, (e->right->kind == EXPR_INDEX ? e->right->left : e->right)->decl, &e->args);
		return TYPE_LONG;
	case EXPR_STAT:
		want(tc, e->left, TYPE_STATS, "the operand of a statistics operator");
		if (e->right)
			want(tc, e->right, TYPE_LONG, "the bit shift of @variance");
		return TYPE_LONG;
	case EXPR_HIST:
		want(tc, e->left, TYPE_STATS, "the operand of a histogram");
		return TYPE_STATS;
	case EXPR_TARGET:
	case EXPR_CAST:
	case EXPR_ATVAR:
	case EXPR_AUTOCAST:
		return tx_target(tc, e);
	case EXPR_DEFINED:
	case EXPR_PERF:
	case EXPR_REGISTER:
		return TYPE_LONG;
	case EXPR_DEREF:
		want(tc, e->left, TYPE_LONG, "the address of @kderef/@uderef");
		return TYPE_LONG;
	case EXPR_ENTRY:	/* a .return probe's are rewritten by now */
		sema_error(e->loc, tc->sm, "@entry can only be used in a .return probe");
		return tx(tc, e->left);
	case EXPR_EMBEDDED:
		return e->str && strstr(e->str, "/* string */") ? TYPE_STRING : TYPE_LONG;
	}
	return TYPE_UNKNOWN;
}

static enum type tx(struct tc *tc, struct expr *e)
{
	enum type t = tx_kind(tc, e);

	if (t || !e->type)
		e->type = t;
	return e->type;
}

/* ---- statements ---- */

static struct slotref var_slot(struct expr *sym)
{
	return (struct slotref){ .d = sym->decl, .key = -1 };
}

static void ts_foreach_keys(struct tc *tc, struct stmt *s, struct vardecl *d)
{
	for (int i = 0; i < s->keys.len && i < AST_MAX_KEYS; i++) {
		struct expr *k = VEC_AT(&s->keys, i);

		if (k->decl)
			link_slots(tc, var_slot(k), (struct slotref){ .d = d, .key = i }, k->loc);
		tx(tc, k);
	}
	if (!s->value || !s->value->decl)
		return;
	if (d->type == TYPE_STATS) {
		if (tc->report)
			sema_error(s->value->loc, tc->sm, "'%s' holds statistics, which cannot be copied into '%s'",
				   d->name, s->value->name);
		return;
	}
	link_slots(tc, var_slot(s->value), (struct slotref){ .d = d, .key = -1 }, s->value->loc);
	tx(tc, s->value);
}

static void ts(struct tc *tc, struct stmt *s);

static void ts_foreach(struct tc *tc, struct stmt *s)
{
	struct expr *a = s->array;

	if (a->kind == EXPR_HIST) {
		tx(tc, a);
		for (int i = 0; i < s->keys.len; i++)
			want(tc, VEC_AT(&s->keys, i), TYPE_LONG, "a histogram bucket");
		if (s->value)
			want(tc, s->value, TYPE_LONG, "a bucket count");
	} else if (a->decl) {
		if (a->kind == EXPR_INDEX)
			tx_keys(tc, a->decl, &a->args);
		if (s->sort_by_stat)	/* foreach (k in a @sum-): a holds statistics */
			unify(tc, (struct slotref){ .d = a->decl, .key = -1 }, TYPE_STATS, a->loc);
		ts_foreach_keys(tc, s, a->decl);
	}
	if (s->limit)
		want(tc, s->limit, TYPE_LONG, "the limit");
	ts(tc, s->then);
}

static void ts_return(struct tc *tc, struct stmt *s)
{
	struct slotref r = { .f = tc->func };
	enum type t;

	if (!s->expr || !tc->func)
		return;
	t = value_of(tc, s->expr);
	if (t)
		unify(tc, r, t, s->expr->loc);
	else if (tc->func->ret_type && tc->func->ret_type != TYPE_VOID)
		expect(tc, s->expr, tc->func->ret_type, "the return value");
}

static void ts(struct tc *tc, struct stmt *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->body.len; i++)
		ts(tc, VEC_AT(&s->body, i));
	switch (s->kind) {
	case STMT_EXPR:
		tx(tc, s->expr);
		break;
	case STMT_IF:
	case STMT_WHILE:
		want(tc, s->expr, TYPE_LONG, "the condition");
		break;
	case STMT_FOR:
		if (s->init)
			tx(tc, s->init);
		if (s->expr)
			want(tc, s->expr, TYPE_LONG, "the condition");
		if (s->incr)
			tx(tc, s->incr);
		break;
	case STMT_FOREACH:
		ts_foreach(tc, s);
		return;
	case STMT_RETURN:
		ts_return(tc, s);
		break;
	case STMT_DELETE:
		if (s->expr->kind == EXPR_INDEX)
			tx_keys(tc, s->expr->decl, &s->expr->args);
		break;
	case STMT_TRY:
		if (s->catch_var)
			want(tc, s->catch_var, TYPE_STRING, "the catch variable");
		break;
	default:
		break;
	}
	ts(tc, s->then);
	ts(tc, s->otherwise);
}

/* Functions first, so that returns and parameters get their types from their bodies. */
static void walk_all(struct tc *tc)
{
	struct program *prog = tc->sm->prog;

	for (int i = 0; i < prog->funcs.len; i++) {
		tc->func = VEC_AT(&prog->funcs, i);
		ts(tc, tc->func->body);
	}
	tc->func = NULL;
	for (int i = 0; i < prog->probes.len; i++) {
		struct derived_probe *dp = VEC_AT(&prog->probes, i);

		ts(tc, dp->body);
		if (dp->cond)
			want(tc, dp->cond, TYPE_LONG, "the probe point condition");
	}
	for (int i = 0; i < prog->globals.len; i++) {
		struct vardecl *d = VEC_AT(&prog->globals, i);

		if (d->init)
			unify(tc, (struct slotref){ .d = d, .key = -1 }, tx(tc, d->init), d->init->loc);
	}
}

/* ---- what is still unknown ---- */

static void check_var(struct tc *tc, struct vardecl *d, const char *what)
{
	if (d->type == TYPE_UNKNOWN)
		sema_error(d->loc, tc->sm, "cannot infer the type of %s'%s'", what, d->name);
	else if (d->type == TYPE_STATS && d->scope != VAR_GLOBAL &&
		 sema_error(d->loc, tc->sm, "%s'%s' cannot hold statistics; only globals can", what,
			    d->name))
		diag_hint("declare it with 'global %s'", d->name);
}

static void check_keys(struct tc *tc, struct vardecl *d)
{
	for (int i = 0; i < d->arity && i < AST_MAX_KEYS; i++)
		if (d->key_types[i] == TYPE_UNKNOWN)
			sema_error(d->loc, tc->sm, "cannot infer the type of key %d of '%s'", i + 1,
				   d->name);
}

static void check_locals(struct tc *tc, struct vec *locals)
{
	for (int i = 0; i < locals->len; i++)
		check_var(tc, VEC_AT(locals, i), "");
}

/*
 * Variables first: an unknown parameter, return value or key always
 * comes from an unknown variable feeding it, so those are reported only
 * when no variable was.
 */
static void check_unknowns(struct tc *tc)
{
	struct program *prog = tc->sm->prog;
	int errors = diag_error_count();

	for (int i = 0; i < prog->globals.len; i++)
		check_var(tc, VEC_AT(&prog->globals, i), "");
	for (int i = 0; i < prog->funcs.len; i++)
		check_locals(tc, &((struct func *)VEC_AT(&prog->funcs, i))->locals);
	for (int i = 0; i < prog->probes.len; i++)
		check_locals(tc, &((struct derived_probe *)VEC_AT(&prog->probes, i))->locals);
	if (diag_error_count() > errors)
		return;
	for (int i = 0; i < prog->globals.len; i++)
		check_keys(tc, VEC_AT(&prog->globals, i));
	for (int i = 0; i < prog->funcs.len; i++) {
		struct func *f = VEC_AT(&prog->funcs, i);

		for (int k = 0; k < f->params.len; k++)
			check_var(tc, VEC_AT(&f->params, k), "parameter ");
		if (f->ret_type == TYPE_UNKNOWN)
			sema_error(f->loc, tc->sm, "cannot infer the return type of '%s'", f->name);
	}
}

/* A function with no "return EXPR" returns nothing (unless declared). */
static void init_returns(struct tc *tc)
{
	struct program *prog = tc->sm->prog;

	for (int i = 0; i < prog->funcs.len; i++) {
		struct func *f = VEC_AT(&prog->funcs, i);
		struct funcinfo *fi = sema_funcinfo(tc->sm, f);

		if (!f->ret_declared && !fi->returns_value && !f->ret_type) {
			f->ret_type = TYPE_VOID;
			fi->ret_from = f->loc;
		}
	}
}

void sema_types_infer(struct sema *sm)
{
	struct tc tc = { .sm = sm };
	int errors;

	init_returns(&tc);
	for (int round = 0; round < 64; round++) {
		tc.changed = false;
		walk_all(&tc);
		if (!tc.changed)
			break;
	}
	tc.report = true;
	errors = diag_error_count();
	walk_all(&tc);
	if (diag_error_count() == errors)	/* else they are likely its echoes */
		check_unknowns(&tc);
}
