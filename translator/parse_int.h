/*
 * parse_int.h - what the parser's three files share: the token cursor and
 * error recovery (parse.c), statements (parse_stmt.c) and expressions
 * (parse_expr.c).  Not for use outside pass 1.
 */
#ifndef PMSTAP_PARSE_INT_H
#define PMSTAP_PARSE_INT_H

#include <setjmp.h>
#include "ast.h"
#include "lex.h"
#include "session.h"

#define PARSE_LOOKAHEAD 4

struct parser {
	struct session *s;
	struct pp *pp;
	const struct source *src;
	struct stapfile *file;
	struct token *la[PARSE_LOOKAHEAD];	/* peeked, not yet consumed */
	int nla;
	struct token *last;		/* the last token consumed */
	jmp_buf recover;		/* parse_fail() jumps here */
	bool privileged;		/* guru mode or a tapset: embedded code allowed */
	bool in_function;		/* 'return' is allowed */
	int depth;			/* nesting of expressions and statements */
};

/* Deeper nesting is refused, so that no input can exhaust the stack. */
#define PARSE_MAX_DEPTH 500

/* The token cursor. */
struct token *parse_peek(struct parser *p);
struct token *parse_peek_at(struct parser *p, int n);	/* 0 is parse_peek */
struct token *parse_next(struct parser *p);
bool parse_peek_op(struct parser *p, const char *op);
bool parse_peek_keyword(struct parser *p, const char *kw);
bool parse_accept_op(struct parser *p, const char *op);
bool parse_accept_keyword(struct parser *p, const char *kw);
struct token *parse_expect_op(struct parser *p, const char *op);
struct token *parse_expect_keyword(struct parser *p, const char *kw);
struct token *parse_expect_ident(struct parser *p, const char *what);

/* Report a syntax error at T and unwind to the top level, which skips ahead. */
void parse_fail(struct parser *p, const struct token *t, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
void parse_fail_at(struct parser *p, struct srcloc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
/* "expected WHAT, found T" */
void parse_fail_expected(struct parser *p, const struct token *t, const char *what)
	__attribute__((noreturn));
/* Count one level of nesting at T (an error past PARSE_MAX_DEPTH); parse_leave undoes it. */
void parse_enter(struct parser *p, const struct token *t);
void parse_leave(struct parser *p);
/* Report that embedded code at T needs -g, unless the parser is privileged. */
void parse_check_embedded(struct parser *p, const struct token *t);

/* Literals: a number (maybe after '-'), or a string (adjacent ones joined). */
/* --compatible=V given, with V older than VERSION (stap's !has_version) */
bool parse_compatible_before(const struct parser *p, const char *version);

struct expr *parse_literal(struct parser *p);
struct expr *parse_number_literal(struct parser *p);
struct expr *parse_string_literal(struct parser *p);

struct expr *parse_expr(struct parser *p);
struct expr *parse_indexable(struct parser *p);
struct stmt *parse_stmt(struct parser *p);
struct stmt *parse_block(struct parser *p);

#endif
