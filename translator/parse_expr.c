/*
 * parse_expr.c - pass 1: expressions.  See parse.c for the overview.
 *
 * Precedence, lowest first (as SystemTap's parser has it):
 *	= <<< += -= *= /= %= <<= >>= &= ^= |= .=	right-assoc
 *	?:
 *	||  &&  |  ^  &
 *	in			[k1, k2] in a
 *	< > <= >= == != =~ !~
 *	<< >> >>>  .  + -  * / %
 *	unary - + ! ~ ++ --, postfix ++ --
 *	&$var, $var->m[i], @cast, @var, values
 */
#define _GNU_SOURCE	/* strverscmp */
#include <string.h>
#include "parse_int.h"

static struct expr *parse_ternary(struct parser *p);
static struct expr *parse_level(struct parser *p, int level);

static bool tok_is_any_op(const struct token *t, const char *const *ops)
{
	for (; *ops; ops++)
		if (lex_tok_is_op(t, *ops))
			return true;
	return false;
}

static struct expr *binary(enum expr_kind kind, struct token *op,
			   struct expr *left, struct expr *right)
{
	struct expr *e = ast_expr(kind, op->loc);

	e->op = op->text;
	e->left = left;
	e->right = right;
	return e;
}

static const char *const assign_ops[] = {
	"=", "<<<", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=",
	"|=", ".=", NULL,
};

/* assignment: ternary [assign_op assignment] */
static struct expr *parse_assignment(struct parser *p)
{
	struct expr *left = parse_ternary(p);
	struct token *t = parse_peek(p);

	if (!tok_is_any_op(t, assign_ops))
		return left;
	parse_next(p);
	return binary(EXPR_ASSIGN, t, left, parse_expr(p));
}

/* expr: assignment */
struct expr *parse_expr(struct parser *p)
{
	struct expr *e;

	parse_enter(p, parse_peek(p));
	e = parse_assignment(p);
	parse_leave(p);
	return e;
}

/* ternary: logical_or ['?' expr ':' ternary] */
static struct expr *parse_ternary(struct parser *p)
{
	struct expr *cond = parse_level(p, 0);
	struct token *t = parse_peek(p);
	struct expr *e;

	if (!lex_tok_is_op(t, "?"))
		return cond;
	parse_next(p);
	e = ast_expr(EXPR_TERNARY, t->loc);
	e->op = "?";
	e->cond = cond;
	e->left = parse_expr(p);
	parse_expect_op(p, ":");
	e->right = parse_ternary(p);
	return e;
}

/* ---- the binary operator ladder ---- */

enum {
	LEVEL_IN = 5,		/* array_in */
	LEVEL_COMPARE = 6,	/* comparison_or_regex */
	LEVEL_UNARY = 11,
};

static const struct level {
	enum expr_kind kind;
	const char *ops[4];
} levels[LEVEL_UNARY] = {
	{ EXPR_LOGICAL, { "||" } },
	{ EXPR_LOGICAL, { "&&" } },
	{ EXPR_BINARY, { "|" } },
	{ EXPR_BINARY, { "^" } },
	{ EXPR_BINARY, { "&" } },
	[LEVEL_COMPARE + 1] = { EXPR_BINARY, { "<<", ">>", ">>>" } },
	{ EXPR_BINARY, { "." } },
	{ EXPR_BINARY, { "+", "-" } },
	{ EXPR_BINARY, { "*", "/", "%" } },
};

static struct expr *parse_array_in(struct parser *p);
static struct expr *parse_comparison(struct parser *p);
static struct expr *parse_unary(struct parser *p);

/*
 * logical_or: logical_and { '||' logical_and }    ... and so on down to
 * multiplicative: unary { ('*' | '/' | '%') unary }
 * All these levels are left-associative.
 */
static struct expr *parse_level(struct parser *p, int level)
{
	struct expr *left;
	struct token *t;

	if (level == LEVEL_IN)
		return parse_array_in(p);
	if (level == LEVEL_COMPARE)
		return parse_comparison(p);
	if (level == LEVEL_UNARY)
		return parse_unary(p);
	left = parse_level(p, level + 1);
	while (tok_is_any_op(t = parse_peek(p), levels[level].ops)) {
		parse_next(p);
		left = binary(levels[level].kind, t, left, parse_level(p, level + 1));
	}
	return left;
}

/* in_key: '*' (in brackets only) | comparison */
static void parse_in_key(struct parser *p, struct vec *keys, bool bracketed)
{
	if (bracketed && parse_accept_op(p, "*"))
		vec_push(keys, NULL);
	else
		vec_push(keys, parse_comparison(p));
}

/*
 * array_in: comparison ['in' indexable]
 *         | '[' in_key { ',' in_key } ']' ['in' indexable]
 */
static struct expr *parse_array_in(struct parser *p)
{
	struct token *open = parse_peek(p), *t;
	bool bracketed = parse_accept_op(p, "[");
	struct vec keys = { 0 };
	struct expr *e;

	for (;;) {
		parse_in_key(p, &keys, bracketed);
		if (!bracketed || parse_accept_op(p, "]"))
			break;
		if (!parse_peek_op(p, ","))
			parse_fail_expected(p, parse_peek(p), "',' or ']'");
		parse_next(p);
	}
	t = parse_peek(p);
	if (!lex_tok_is_keyword(t, "in")) {
		if (keys.len == 1 && VEC_AT(&keys, 0))
			return VEC_AT(&keys, 0);
		parse_fail_expected(p, t, "'in' after a list of keys in '[...]'");
	}
	parse_next(p);
	e = ast_expr(EXPR_IN, bracketed ? open->loc : t->loc);
	e->op = "in";
	e->args = keys;
	e->right = parse_indexable(p);
	return e;
}

static const char *const compare_ops[] = { "<", ">", "<=", ">=", "==", "!=", NULL };

/* comparison: shift (('=~' | '!~') string_literal | { compare_op shift }) */
static struct expr *parse_comparison(struct parser *p)
{
	struct expr *left = parse_level(p, LEVEL_COMPARE + 1);
	struct token *t = parse_peek(p);

	if (lex_tok_is_op(t, "=~") || lex_tok_is_op(t, "!~")) {
		parse_next(p);
		if (parse_peek(p)->type != TOK_STRING)
			parse_fail_expected(p, parse_peek(p),
					    arena_printf("a string (the regular expression) after '%s'", t->text));
		return binary(EXPR_REGEX, t, left, parse_string_literal(p));
	}
	while (tok_is_any_op(t = parse_peek(p), compare_ops)) {
		parse_next(p);
		left = binary(EXPR_COMPARE, t, left, parse_level(p, LEVEL_COMPARE + 1));
	}
	return left;
}

/* ---- unary, crement, and the target-value chain ---- */

static struct expr *parse_dwarf_value(struct parser *p);

static const char *const unary_ops[] = { "+", "-", "!", "~", NULL };

/* unary: ('+' | '-' | '!' | '~') unary | crement */
static struct expr *parse_unary(struct parser *p)
{
	struct token *t = parse_peek(p);
	struct expr *e;

	if (!tok_is_any_op(t, unary_ops)) {
		/* crement: ('++' | '--') dwarf_value | dwarf_value ['++' | '--'] */
		if (lex_tok_is_op(t, "++") || lex_tok_is_op(t, "--")) {
			parse_next(p);
			e = ast_expr(EXPR_PREFIX, t->loc);
			e->op = t->text;
			e->left = parse_dwarf_value(p);
			return e;
		}
		e = parse_dwarf_value(p);
		t = parse_peek(p);
		if (lex_tok_is_op(t, "++") || lex_tok_is_op(t, "--")) {
			parse_next(p);
			e = binary(EXPR_POSTFIX, t, e, NULL);
		}
		return e;
	}
	parse_next(p);
	e = ast_expr(EXPR_UNARY, t->loc);
	e->op = t->text;
	parse_enter(p, t);
	e->left = parse_unary(p);
	parse_leave(p);
	return e;
}

static bool all_dollars(const char *s)
{
	return *s && strspn(s, "$") == strlen(s);
}

/* Split a trailing "$" or "$$" off NAME into E->pretty; return the rest. */
static const char *split_pretty(struct parser *p, const struct token *t,
				const char *name, struct expr *e)
{
	size_t n = strlen(name), k = n;

	while (k > 0 && name[k - 1] == '$')
		k--;
	if (k == 0 || k == n || (k == 1 && name[0] == '$') ||
	    (k == 2 && name[0] == '$' && name[1] == '$'))
		return name;
	if (n - k > 2)
		parse_fail(p, t, "expected '$' or '$$' to pretty-print, found '%s'", name + k);
	e->pretty = (int)(n - k);
	return arena_strndup(name, k);
}

static bool at_components(struct parser *p)
{
	struct token *t = parse_peek(p);

	return lex_tok_is_op(t, "->") || lex_tok_is_op(t, "[") ||
	       (t->type == TOK_IDENT && all_dollars(t->text));
}

static void push_comp(struct expr *e, enum comp_kind kind, struct token *t)
{
	struct target_comp *c = ARENA_NEW(struct target_comp);

	c->kind = kind;
	c->loc = t->loc;
	vec_push(&e->comps, c);
}

/* member: '->' (IDENT | keyword), where IDENT may end in '$' or '$$' */
static void parse_member(struct parser *p, struct expr *e)
{
	struct token *arrow = parse_next(p), *t = parse_peek(p);
	struct target_comp *c;
	const char *name;

	if (t->type != TOK_KEYWORD && (t->type != TOK_IDENT || t->text[0] == '@'))
		parse_fail_expected(p, t, "a member name after '->'");
	parse_next(p);
	if (all_dollars(t->text)) {
		if (strlen(t->text) > 2)
			parse_fail(p, t, "expected '$' or '$$' to pretty-print, found '%s'", t->text);
		e->pretty = (int)strlen(t->text);
		return;
	}
	name = split_pretty(p, t, t->text, e);
	push_comp(e, COMP_MEMBER, arrow);
	c = VEC_AT(&e->comps, e->comps.len - 1);
	c->member = name;
}

/* subscript: '[' expr ']' */
static void parse_subscript(struct parser *p, struct expr *e)
{
	struct token *open = parse_next(p);
	struct expr *index = parse_expr(p);
	struct target_comp *c;

	parse_expect_op(p, "]");
	push_comp(e, index->kind == EXPR_NUMBER ? COMP_INDEX : COMP_INDEX_EXPR, open);
	c = VEC_AT(&e->comps, e->comps.len - 1);
	c->index = index->num;
	c->index_expr = index->kind == EXPR_NUMBER ? NULL : index;
}

/* components: { member | subscript } ['$' | '$$'] */
static void parse_components(struct parser *p, struct expr *e)
{
	struct token *t;

	while (!e->pretty) {
		if (parse_peek_op(p, "->"))
			parse_member(p, e);
		else if (parse_peek_op(p, "["))
			parse_subscript(p, e);
		else
			break;
	}
	t = parse_peek(p);
	if (!e->pretty && t->type == TOK_IDENT && all_dollars(t->text)) {
		if (strlen(t->text) > 2)
			parse_fail(p, t, "expected '$' or '$$' to pretty-print, found '%s'", t->text);
		e->pretty = (int)strlen(parse_next(p)->text);
	}
	t = parse_peek(p);
	if (e->pretty && (lex_tok_is_op(t, "->") || lex_tok_is_op(t, "[")))
		parse_fail(p, t, "'%s' cannot follow a pretty-printed value ('$' or '$$')", t->text);
}

static struct token *expect_string_tok(struct parser *p, const char *what)
{
	struct token *t = parse_peek(p);

	if (t->type != TOK_STRING)
		parse_fail_expected(p, t, what);
	return t;
}

/* cast: '@cast' '(' expr ',' string_literal [',' string_literal] ')' */
static struct expr *parse_cast(struct parser *p)
{
	struct token *kw = parse_next(p), *t;
	struct expr *e = ast_expr(EXPR_CAST, kw->loc);

	parse_expect_op(p, "(");
	e->left = parse_expr(p);
	parse_expect_op(p, ",");
	t = expect_string_tok(p, "a type name string for @cast");
	e->str = parse_string_literal(p)->str;
	if (!*e->str)
		parse_fail(p, t, "the type name of @cast must not be empty");
	if (parse_accept_op(p, ",")) {
		expect_string_tok(p, "a module name string for @cast");
		e->module = parse_string_literal(p)->str;
	}
	parse_expect_op(p, ")");
	return e;
}

/* atvar: '@var' '(' string_literal [',' string_literal] ')' */
static struct expr *parse_atvar(struct parser *p)
{
	struct token *kw = parse_next(p), *t;
	struct expr *e = ast_expr(EXPR_ATVAR, kw->loc);

	parse_expect_op(p, "(");
	t = expect_string_tok(p, "a variable name string for @var");
	e->name = parse_string_literal(p)->str;
	if (!*e->name)
		parse_fail(p, t, "the variable name of @var must not be empty");
	if (parse_accept_op(p, ",")) {
		expect_string_tok(p, "a module name string for @var");
		e->module = parse_string_literal(p)->str;
	}
	parse_expect_op(p, ")");
	return e;
}

static bool is_target_kind(const struct expr *e)
{
	return e->kind == EXPR_TARGET || e->kind == EXPR_CAST ||
	       e->kind == EXPR_ATVAR || e->kind == EXPR_AUTOCAST;
}

static struct expr *parse_value(struct parser *p);

/* --compatible=V with V older than 2.6: no autocasts, as in stap (parse.cxx) */
bool parse_compatible_before(const struct parser *p, const char *version)
{
	return p->s->compatible && strverscmp(p->s->compatible, version) < 0;
}

static bool no_autocast(const struct parser *p)
{
	return parse_compatible_before(p, "2.6");
}

/*
 * dwarf_value: ['&'] (TARGET | cast | atvar | value) [components]
 * A value followed by '->' or '[' (or taken with '&') becomes an autocast.
 */
static struct expr *parse_dwarf_value(struct parser *p)
{
	struct token *amp = parse_accept_op(p, "&") ? p->last : NULL;
	struct token *t = parse_peek(p);
	struct expr *e;
	bool from_value = false;

	if (t->type == TOK_IDENT && t->text[0] == '$') {
		parse_next(p);
		e = ast_expr(EXPR_TARGET, t->loc);
		e->name = split_pretty(p, t, t->text, e);
	} else if (lex_tok_is(t, TOK_IDENT, "@cast")) {
		e = parse_cast(p);
	} else if (lex_tok_is(t, TOK_IDENT, "@var")) {
		e = parse_atvar(p);
	} else {
		if (amp && no_autocast(p))
			parse_fail_expected(p, t, "@cast, @var or $var");
		e = parse_value(p);
		from_value = true;
		if (amp && is_target_kind(e) && e->addr_of)
			parse_fail(p, amp, "cannot take the address of an address");
	}
	/*
	 * Members of an address, (&@cast(p, "T"))->m, are read through it:
	 * an autocast, as in stap, not more components of the @cast.
	 */
	if ((!is_target_kind(e) || (from_value && e->addr_of && at_components(p))) &&
	    (amp || at_components(p)) && !no_autocast(p)) {
		struct expr *cast = ast_expr(EXPR_AUTOCAST, amp ? amp->loc : parse_peek(p)->loc);

		cast->left = e;
		e = cast;
	}
	if (is_target_kind(e)) {
		if (amp)
			e->addr_of = true;
		parse_components(p, e);
	}
	return e;
}

/* ---- values ---- */

static struct expr *parse_symbol(struct parser *p);

/* value: EMBEDDED | '(' expr ')' | symbol | literal */
static struct expr *parse_value(struct parser *p)
{
	struct token *t = parse_peek(p);
	struct expr *e;

	switch (t->type) {
	case TOK_EMBEDDED:
		parse_next(p);
		parse_check_embedded(p, t);
		e = ast_expr(EXPR_EMBEDDED, t->loc);
		e->str = t->text;
		return e;
	case TOK_IDENT:
		return parse_symbol(p);
	case TOK_NUMBER:
	case TOK_STRING:
		return parse_literal(p);
	default:
		if (!lex_tok_is_op(t, "("))
			parse_fail_expected(p, t, "an expression");
		parse_next(p);
		e = parse_expr(p);
		parse_expect_op(p, ")");
		return e;
	}
}

/* args: expr { ',' expr } ')'   (after the '(') */
static void parse_args_rest(struct parser *p, struct vec *args)
{
	for (;;) {
		vec_push(args, parse_expr(p));
		if (parse_accept_op(p, ")"))
			return;
		if (!parse_peek_op(p, ","))
			parse_fail_expected(p, parse_peek(p), "',' or ')'");
		parse_next(p);
	}
}

/* keys: ('*' | expr) { ',' ('*' | expr) } ']'   (after the '[') */
static void parse_keys_rest(struct parser *p, struct vec *keys)
{
	for (;;) {
		if (parse_accept_op(p, "*"))
			vec_push(keys, NULL);
		else
			vec_push(keys, parse_expr(p));
		if (parse_accept_op(p, "]"))
			return;
		if (!parse_peek_op(p, ","))
			parse_fail_expected(p, parse_peek(p), "',' or ']'");
		parse_next(p);
	}
}

static struct expr *index_of(struct parser *p, struct expr *base)
{
	struct token *open = parse_expect_op(p, "[");
	struct expr *e = ast_expr(EXPR_INDEX, open->loc);

	e->left = base;
	parse_keys_rest(p, &e->args);
	return e;
}

static bool is_hist_name(const struct token *t)
{
	return lex_tok_is(t, TOK_IDENT, "@hist_log") || lex_tok_is(t, TOK_IDENT, "@hist_linear");
}

/*
 * hist: '@hist_log' '(' expr ')'
 *     | '@hist_linear' '(' expr ',' number ',' number ',' number ')'
 */
static struct expr *parse_hist(struct parser *p)
{
	struct token *kw = parse_next(p);
	struct expr *e = ast_expr(EXPR_HIST, kw->loc);

	e->hist = lex_tok_is(kw, TOK_IDENT, "@hist_log") ? HIST_LOG : HIST_LINEAR;
	parse_expect_op(p, "(");
	e->left = parse_expr(p);
	if (e->hist == HIST_LINEAR) {
		for (int i = 0; i < 3; i++) {
			parse_expect_op(p, ",");
			vec_push(&e->args, parse_number_literal(p));
		}
	}
	parse_expect_op(p, ")");
	return e;
}

/* indexable: IDENT | hist */
struct expr *parse_indexable(struct parser *p)
{
	struct token *t = parse_peek(p);
	struct expr *e;

	if (is_hist_name(t))
		return parse_hist(p);
	if (t->type != TOK_IDENT || t->text[0] == '$' || t->text[0] == '@')
		parse_fail_expected(p, t, "an array name or a histogram");
	parse_next(p);
	e = ast_expr(EXPR_SYMBOL, t->loc);
	e->name = t->text;
	return e;
}

static const char *const stat_names[] = {
	[STAT_COUNT] = "@count", [STAT_SUM] = "@sum", [STAT_MIN] = "@min",
	[STAT_MAX] = "@max", [STAT_AVG] = "@avg", [STAT_VARIANCE] = "@variance",
};

static int stat_of(const char *name)
{
	for (int i = 0; i <= STAT_VARIANCE; i++)
		if (strcmp(name, stat_names[i]) == 0)
			return i;
	return -1;
}

/* stat: stat_name '(' expr ')' | '@variance' '(' expr [',' number] ')' */
static struct expr *parse_stat(struct parser *p, enum stat_op op)
{
	struct token *kw = parse_next(p), *t;
	struct expr *e = ast_expr(EXPR_STAT, kw->loc);

	e->stat = op;
	parse_expect_op(p, "(");
	e->left = parse_expr(p);
	t = parse_peek(p);
	if (lex_tok_is_op(t, ",") && op != STAT_VARIANCE)
		parse_fail(p, t, "%s takes one argument", kw->text);
	if (parse_accept_op(p, ","))
		e->right = parse_number_literal(p);
	t = parse_peek(p);
	if (lex_tok_is_op(t, ","))
		parse_fail(p, t, "%s takes at most two arguments", kw->text);
	parse_expect_op(p, ")");
	return e;
}

/* op1: ('@defined' | '@entry') '(' expr ')' */
static struct expr *parse_op1(struct parser *p, enum expr_kind kind)
{
	struct token *kw = parse_next(p);
	struct expr *e = ast_expr(kind, kw->loc);

	parse_expect_op(p, "(");
	e->left = parse_expr(p);
	parse_expect_op(p, ")");
	return e;
}

/* perf: '@perf' '(' string_literal ')' */
static struct expr *parse_perf(struct parser *p)
{
	struct token *kw = parse_next(p), *t;
	struct expr *e = ast_expr(EXPR_PERF, kw->loc);

	parse_expect_op(p, "(");
	t = expect_string_tok(p, "a perf counter name string for @perf");
	e->str = parse_string_literal(p)->str;
	if (!*e->str)
		parse_fail(p, t, "the counter name of @perf must not be empty");
	parse_expect_op(p, ")");
	return e;
}

/* A histogram used where a value belongs: only its buckets are values. */
static struct expr *hist_value(struct parser *p, struct expr *h)
{
	if (!parse_peek_op(p, "["))
		parse_fail(p, parse_peek(p),
			   "a histogram is not a value: print it with print(), or take a bucket with [N]");
	return index_of(p, h);
}

/*
 * target_op: ('@kderef' | '@uderef') '(' number ',' expr ')'
 *	    | ('@kregister' | '@uregister') '(' number ')'
 * The kernel's (@k...) need guru mode, as in stap.
 */
static struct expr *parse_target_op(struct parser *p, enum expr_kind kind)
{
	struct token *kw = parse_next(p);
	struct expr *e = ast_expr(kind, kw->loc);

	e->name = kw->text;
	if (kw->text[1] == 'k' && !p->privileged)
		parse_fail(p, kw, "%s is only allowed in guru mode (-g)", kw->text);
	parse_expect_op(p, "(");
	e->num = parse_number_literal(p)->num;
	if (kind == EXPR_DEREF) {
		parse_expect_op(p, ",");
		e->left = parse_expr(p);
	}
	parse_expect_op(p, ")");
	return e;
}

static struct expr *parse_at_operator(struct parser *p)
{
	struct token *t = parse_peek(p);
	int stat = stat_of(t->text);

	if (stat >= 0)
		return parse_stat(p, (enum stat_op)stat);
	if (is_hist_name(t))
		return hist_value(p, parse_hist(p));
	if (strcmp(t->text, "@defined") == 0)
		return parse_op1(p, EXPR_DEFINED);
	if (strcmp(t->text, "@entry") == 0)
		return parse_op1(p, EXPR_ENTRY);
	if (strcmp(t->text, "@perf") == 0)
		return parse_perf(p);
	if (strcmp(t->text, "@kderef") == 0 || strcmp(t->text, "@uderef") == 0)
		return parse_target_op(p, EXPR_DEREF);
	if (strcmp(t->text, "@kregister") == 0 || strcmp(t->text, "@uregister") == 0)
		return parse_target_op(p, EXPR_REGISTER);
	parse_fail(p, t, "unknown macro or operator '%s'", t->text);
}

static bool prints_histograms(const char *name)
{
	return strcmp(name, "print") == 0 || strcmp(name, "println") == 0 ||
	       strcmp(name, "sprint") == 0 || strcmp(name, "sprintln") == 0;
}

/*
 * call: IDENT '(' [args] ')'
 * print(@hist_log(x)) and its kin take a whole histogram as the only argument.
 */
static bool prints_delimited(const char *name)
{
	return strcmp(name, "printd") == 0 || strcmp(name, "printdln") == 0 ||
	       strcmp(name, "sprintd") == 0 || strcmp(name, "sprintdln") == 0;
}

/*
 * printd and its kin: a delimiter string literal, then at least two values
 * (so that the delimiter is used), checked while parsing, as stap does.
 */
static void check_delimited(struct parser *p, struct token *name, struct expr *e)
{
	struct expr *first = e->args.len ? VEC_AT(&e->args, 0) : NULL;

	if (first && first->kind != EXPR_STRING)
		parse_fail_at(p, first->loc, "the delimiter of '%s' must be a literal string",
			      name->text);
	if (e->args.len < 3)
		parse_fail(p, name, "'%s' needs a delimiter and at least two values to join",
			   name->text);
}

static struct expr *parse_call(struct parser *p, struct token *name)
{
	struct expr *e = ast_expr(EXPR_CALL, name->loc);

	e->name = name->text;
	parse_expect_op(p, "(");
	if (parse_accept_op(p, ")")) {
		if (prints_delimited(name->text))
			check_delimited(p, name, e);
		return e;
	}
	if (prints_histograms(name->text) && is_hist_name(parse_peek(p))) {
		struct expr *h = parse_hist(p);

		if (!parse_peek_op(p, "[")) {
			vec_push(&e->args, h);
			parse_expect_op(p, ")");
			return e;
		}
		vec_push(&e->args, index_of(p, h));
		if (parse_accept_op(p, ")"))
			return e;
		parse_expect_op(p, ",");
	}
	parse_args_rest(p, &e->args);
	if (prints_delimited(name->text))
		check_delimited(p, name, e);
	return e;
}

/* symbol: at_operator | call | IDENT '[' keys | IDENT */
static struct expr *parse_symbol(struct parser *p)
{
	struct token *t = parse_peek(p);
	struct expr *e;

	if (t->text[0] == '@')
		return parse_at_operator(p);
	parse_next(p);
	if (parse_peek_op(p, "("))
		return parse_call(p, t);
	e = ast_expr(EXPR_SYMBOL, t->loc);
	e->name = t->text;
	if (parse_peek_op(p, "["))
		return index_of(p, e);
	return e;
}
