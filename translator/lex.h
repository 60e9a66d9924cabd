/*
 * lex.h - pass 1a: script text to tokens (lex.c); the preprocessor
 * (preproc.h) sits on top.
 */
#ifndef PMSTAP_LEX_H
#define PMSTAP_LEX_H

#include <stdbool.h>
#include <stdint.h>
#include "diag.h"
#include "session.h"

enum tok_type {
	TOK_EOF,
	TOK_IDENT,	/* foo, $foo, $$vars, $var$$, @count, @define, @1 */
	TOK_KEYWORD,	/* probe global function if else ... private */
	TOK_OP,		/* operators and punctuation, incl. %( %? %: %) */
	TOK_NUMBER,	/* text is the spelling; value is filled */
	TOK_STRING,	/* text is the body between the quotes, escapes kept */
	TOK_EMBEDDED,	/* %{ ... %}: text is the code between the braces */
};

struct token {
	enum tok_type type;
	const char *text;
	int64_t value;		/* TOK_NUMBER: the value, as stap's 64-bit literal */
	struct srcloc loc;
	const char *doc;	/* the body of a directly preceding doc comment, or NULL */
	bool space_before;	/* blank or comment between this and the previous token */
	bool comment_before;	/* a comment between them */
	const struct token *expanded_from;	/* the @macro use this came from */
	/*
	 * A lexical error in this token (bad number, unterminated string,
	 * missing script argument, ...).  lex_next() reports it at the
	 * token; after lex_keep_errors() it is left here, and the
	 * preprocessor reports it only where the token is used, never in a
	 * skipped %( %) branch, as stap does.  A TOK_OP with an error is an
	 * unexpected character or an unterminated comment: drop it.
	 */
	const char *error;
};

struct lexer;

/*
 * Tokens of SRC.  In a user script (not a tapset), $N and @N become the
 * Nth script argument (as tokens, and as a string literal), $# and @# the
 * argument count, as stap does; a missing argument is an error at its use.
 */
struct lexer *lex_open(struct session *s, const struct source *src);
struct token *lex_next(struct lexer *lx);	/* TOK_EOF at the end, forever */
void lex_keep_errors(struct lexer *lx);		/* see token->error */

bool lex_tok_is(const struct token *t, enum tok_type type, const char *text);
bool lex_tok_is_op(const struct token *t, const char *op);
bool lex_tok_is_keyword(const struct token *t, const char *kw);
const char *lex_tok_describe(const struct token *t);	/* "'foo'", "end of input" */
/* As stap 4.8 names a token in runtime errors ("near operator '/'"): "operator '/'". */
const char *lex_tok_stap_text(const struct token *t);

/*
 * String bodies keep their escapes as written.  stap accepts \n \t \r \a
 * \b \f \v \\ \" \NNN (octal) and \xHH; any other \c stands for c.
 */

/* Read a whole file into a source in the arena; NULL (and an error) if unreadable. */
struct source *lex_source_read_file(const char *path, bool is_tapset);
struct source *lex_source_from_string(const char *name, const char *text);

#endif
