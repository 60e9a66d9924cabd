/* parse_stmt.c - pass 1: statements.  See parse.c for the overview. */
#include <string.h>
#include "parse_int.h"

static struct stmt *parse_paren_cond(struct parser *p, enum stmt_kind kind)
{
	struct token *kw = parse_next(p);
	struct stmt *s = ast_stmt(kind, kw->loc);

	parse_expect_op(p, "(");
	s->expr = parse_expr(p);
	parse_expect_op(p, ")");
	return s;
}

/* Can T only start a declaration, so that a '}' must be missing before it? */
static bool starts_decl(const struct token *t)
{
	return lex_tok_is_keyword(t, "probe") || lex_tok_is_keyword(t, "function") ||
	       lex_tok_is_keyword(t, "global") || lex_tok_is_keyword(t, "private");
}

/* block: '{' { stmt } '}' */
struct stmt *parse_block(struct parser *p)
{
	struct token *open = parse_expect_op(p, "{");
	struct stmt *s = ast_stmt(STMT_BLOCK, open->loc);

	for (;;) {
		struct token *t = parse_peek(p);

		if (lex_tok_is_op(t, "}"))
			break;
		if (t->type == TOK_EOF || starts_decl(t))
			parse_fail(p, t, "expected '}' to close the block opened at line %d, found %s",
				   open->loc.line, lex_tok_describe(t));
		vec_push(&s->body, parse_stmt(p));
	}
	parse_next(p);
	return s;
}

/* if_stmt: 'if' '(' expr ')' stmt ['else' stmt] */
static struct stmt *parse_if(struct parser *p)
{
	struct stmt *s = parse_paren_cond(p, STMT_IF);

	s->then = parse_stmt(p);
	if (parse_accept_keyword(p, "else"))
		s->otherwise = parse_stmt(p);
	return s;
}

/* while_stmt: 'while' '(' expr ')' stmt */
static struct stmt *parse_while(struct parser *p)
{
	struct stmt *s = parse_paren_cond(p, STMT_WHILE);

	s->then = parse_stmt(p);
	return s;
}

/* for_stmt: 'for' '(' [expr] ';' [expr] ';' [expr] ')' stmt */
static struct stmt *parse_for(struct parser *p)
{
	struct token *kw = parse_next(p);
	struct stmt *s = ast_stmt(STMT_FOR, kw->loc);

	parse_expect_op(p, "(");
	if (!parse_peek_op(p, ";"))
		s->init = parse_expr(p);
	parse_expect_op(p, ";");
	if (!parse_peek_op(p, ";"))
		s->expr = parse_expr(p);
	parse_expect_op(p, ";");
	if (!parse_peek_op(p, ")"))
		s->incr = parse_expr(p);
	parse_expect_op(p, ")");
	s->then = parse_stmt(p);
	return s;
}

static struct expr *symbol_of(const struct token *t)
{
	struct expr *e = ast_expr(EXPR_SYMBOL, t->loc);

	e->name = t->text;
	return e;
}

/* sort: '+' | '-'; returns 0 when absent.  COL is the column it sorts. */
static int parse_sort(struct parser *p, struct stmt *s, int col)
{
	struct token *t = parse_peek(p);
	int dir;

	if (!lex_tok_is_op(t, "+") && !lex_tok_is_op(t, "-"))
		return 0;
	parse_next(p);
	dir = lex_tok_is_op(t, "+") ? 1 : -1;
	if (s->sort_dir)
		parse_fail(p, t, "foreach can sort on one column only, and a sort order was already given");
	s->sort_dir = dir;
	s->sort_col = col;
	return dir;
}

/* foreach_keys: IDENT [sort] | '[' IDENT [sort] { ',' IDENT [sort] } ']' */
static void parse_foreach_keys(struct parser *p, struct stmt *s)
{
	bool bracketed = parse_accept_op(p, "[");

	for (;;) {
		struct token *t = parse_expect_ident(p, "a loop variable");

		vec_push(&s->keys, symbol_of(t));
		parse_sort(p, s, s->keys.len);
		if (!bracketed)
			return;
		if (parse_accept_op(p, "]"))
			return;
		if (!parse_peek_op(p, ","))
			parse_fail_expected(p, parse_peek(p), "',' or ']'");
		parse_next(p);
	}
}

/* slice: '[' ('*' | expr) { ',' ('*' | expr) } ']' -- applied to BASE */
static struct expr *parse_slice(struct parser *p, struct expr *base)
{
	struct token *open = parse_next(p);
	struct expr *e = ast_expr(EXPR_INDEX, open->loc);

	e->left = base;
	for (;;) {
		if (parse_accept_op(p, "*"))
			vec_push(&e->args, NULL);
		else
			vec_push(&e->args, parse_expr(p));
		if (parse_accept_op(p, "]"))
			return e;
		if (!parse_peek_op(p, ","))
			parse_fail_expected(p, parse_peek(p), "',' or ']'");
		parse_next(p);
	}
}

static const char *const stat_names[] = {
	[STAT_COUNT] = "@count", [STAT_SUM] = "@sum", [STAT_MIN] = "@min",
	[STAT_MAX] = "@max", [STAT_AVG] = "@avg", [STAT_VARIANCE] = "@variance",
};

/* stat_sort: ('@count' | '@sum' | '@min' | '@max' | '@avg' | '@variance') sort */
static void parse_stat_sort(struct parser *p, struct stmt *s)
{
	struct token *t = parse_next(p);
	int i;

	for (i = 0; i <= STAT_VARIANCE; i++)
		if (strcmp(t->text, stat_names[i]) == 0)
			break;
	if (i > STAT_VARIANCE)
		parse_fail(p, t, "expected a statistic to sort on (@count, @sum, @min, @max, @avg or @variance), found %s",
			   lex_tok_describe(t));
	s->sort_by_stat = true;
	s->sort_stat = (enum stat_op)i;
	if (!parse_sort(p, s, 0))
		parse_fail_expected(p, parse_peek(p), arena_printf("'+' or '-' after '%s'", t->text));
}

static bool is_word(const struct token *t, const char *w)
{
	return (t->type == TOK_KEYWORD || t->type == TOK_IDENT) && strcmp(t->text, w) == 0;
}

/*
 * foreach_stmt: 'foreach' '(' [IDENT [sort] '='] foreach_keys 'in' indexable
 *               [slice] [stat_sort | sort] ['limit' expr] ')' stmt
 */
static struct stmt *parse_foreach(struct parser *p)
{
	struct token *kw = parse_next(p), *t;
	struct stmt *s = ast_stmt(STMT_FOREACH, kw->loc);

	parse_expect_op(p, "(");
	t = parse_peek(p);
	if (t->type == TOK_IDENT && lex_tok_is_op(parse_peek_at(p, 1), "=")) {
		s->value = symbol_of(parse_next(p));
		parse_next(p);
	} else if (t->type == TOK_IDENT && lex_tok_is_op(parse_peek_at(p, 2), "=") &&
		   (lex_tok_is_op(parse_peek_at(p, 1), "+") ||
		    lex_tok_is_op(parse_peek_at(p, 1), "-"))) {
		s->value = symbol_of(parse_next(p));
		parse_sort(p, s, 0);
		parse_next(p);
	}
	parse_foreach_keys(p, s);
	parse_expect_keyword(p, "in");
	s->array = parse_indexable(p);
	if (parse_peek_op(p, "["))
		s->array = parse_slice(p, s->array);
	t = parse_peek(p);
	if (t->type == TOK_IDENT && t->text[0] == '@')
		parse_stat_sort(p, s);
	else
		parse_sort(p, s, 0);
	if (is_word(parse_peek(p), "limit")) {
		parse_next(p);
		s->limit = parse_expr(p);
	}
	parse_expect_op(p, ")");
	s->then = parse_stmt(p);
	return s;
}

/* try_stmt: 'try' block 'catch' ['(' IDENT ')'] block */
static struct stmt *parse_try(struct parser *p)
{
	struct token *kw = parse_next(p);
	struct stmt *s = ast_stmt(STMT_TRY, kw->loc);

	s->then = parse_block(p);
	parse_expect_keyword(p, "catch");
	if (parse_accept_op(p, "(")) {
		s->catch_var = symbol_of(parse_expect_ident(p, "a variable for the error message"));
		parse_expect_op(p, ")");
	}
	s->otherwise = parse_block(p);
	return s;
}

/* return_stmt: 'return' [expr]   (no value before ';' or '}') */
static struct stmt *parse_return(struct parser *p)
{
	struct token *kw = parse_next(p);
	struct stmt *s = ast_stmt(STMT_RETURN, kw->loc);

	if (!p->in_function)
		parse_fail(p, kw, "'return' is only allowed in a function, not in a probe");
	if (!parse_peek_op(p, ";") && !parse_peek_op(p, "}"))
		s->expr = parse_expr(p);
	return s;
}

static struct stmt *parse_simple(struct parser *p, enum stmt_kind kind)
{
	return ast_stmt(kind, parse_next(p)->loc);
}

/* delete_stmt: 'delete' expr */
static struct stmt *parse_delete(struct parser *p)
{
	struct stmt *s = parse_simple(p, STMT_DELETE);

	s->expr = parse_expr(p);
	return s;
}

static struct stmt *parse_embedded_stmt(struct parser *p)
{
	struct token *t = parse_next(p);
	struct stmt *s = ast_stmt(STMT_EMBEDDED, t->loc);

	parse_check_embedded(p, t);
	s->code = t->text;
	return s;
}

/* The statements that end without a closing brace; a ';' may follow them. */
static struct stmt *parse_simple_stmt(struct parser *p)
{
	struct token *t = parse_peek(p);
	struct stmt *s;

	if (lex_tok_is_keyword(t, "return"))
		return parse_return(p);
	if (lex_tok_is_keyword(t, "delete"))
		return parse_delete(p);
	if (lex_tok_is_keyword(t, "break"))
		return parse_simple(p, STMT_BREAK);
	if (lex_tok_is_keyword(t, "continue"))
		return parse_simple(p, STMT_CONTINUE);
	if (lex_tok_is_keyword(t, "next"))
		return parse_simple(p, STMT_NEXT);
	if (t->type == TOK_EMBEDDED)
		return parse_embedded_stmt(p);
	if (t->type == TOK_EOF || t->type == TOK_KEYWORD || lex_tok_is_op(t, "}"))
		parse_fail_expected(p, t, "a statement");
	s = ast_stmt(STMT_EXPR, t->loc);
	s->expr = parse_expr(p);
	return s;
}

static struct stmt *parse_any_stmt(struct parser *p);

struct stmt *parse_stmt(struct parser *p)
{
	struct stmt *s;

	parse_enter(p, parse_peek(p));
	s = parse_any_stmt(p);
	parse_leave(p);
	return s;
}

/*
 * stmt: ';' | block | if_stmt | while_stmt | for_stmt | foreach_stmt | try_stmt
 *     | (return_stmt | delete_stmt | 'break' | 'continue' | 'next'
 *        | EMBEDDED | expr) [';']
 */
static struct stmt *parse_any_stmt(struct parser *p)
{
	struct token *t = parse_peek(p);
	struct stmt *s;

	if (lex_tok_is_op(t, ";"))
		return parse_simple(p, STMT_NULL);
	if (lex_tok_is_op(t, "{"))
		return parse_block(p);
	if (lex_tok_is_keyword(t, "if"))
		return parse_if(p);
	if (lex_tok_is_keyword(t, "while"))
		return parse_while(p);
	if (lex_tok_is_keyword(t, "for"))
		return parse_for(p);
	if (lex_tok_is_keyword(t, "foreach"))
		return parse_foreach(p);
	if (lex_tok_is_keyword(t, "try"))
		return parse_try(p);
	s = parse_simple_stmt(p);
	parse_accept_op(p, ";");
	return s;
}
