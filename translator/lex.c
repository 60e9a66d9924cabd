/* lex.c - pass 1a: script text to tokens, with script arguments pasted in. */
#define _GNU_SOURCE	/* memmem */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lex.h"

struct lexer {
	struct session *s;
	const struct source *src;
	const char *p, *end;		/* the source text still to read */
	int line, col;			/* where p is */
	/*
	 * Text of a script argument being read before p, as stap pastes
	 * $N into its input: its characters all sit at the $N.
	 */
	const char *paste, *paste_end;
	struct srcloc paste_loc;
	bool keep_errors;
	const char *doc;		/* a doc comment waiting for its token */
	bool comment;			/* a comment since the last token */
	struct token *eof;
	char *buf;			/* the current token's text */
	size_t len, cap;
};

static const char *const keywords[] = {
	"probe", "global", "function", "if", "else", "for", "foreach", "in",
	"limit", "return", "delete", "while", "break", "continue", "next",
	"string", "long", "try", "catch", "private",
};

/* Longest first: the lexer takes the longest operator that matches. */
static const char *const operators[] = {
	"<<<", ">>>", "<<=", ">>=",
	"==", "!=", "<=", ">=", "=~", "!~", "+=", "-=", "*=", "/=", "%=",
	"&=", "^=", "|=", ".=", "&&", "||", "++", "--", "->", "<<", ">>",
	"%(", "%?", "%:", "%)",
	"(", ")", "[", "]", "{", "}", ",", ";", ":", "?", ".", "+", "-", "*",
	"/", "%", "&", "|", "^", "!", "~", "<", ">", "=",
};

/* ASCII classes: the language is ASCII, whatever the locale. */
static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_ident(int c)
{
	return is_alpha(c) || is_digit(c) || c == '_' || c == '$';
}

static bool is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
	       c == '\v';
}

static int hex_value(int c)
{
	if (is_digit(c))
		return c - '0';
	if ((c | 32) >= 'a' && (c | 32) <= 'f')
		return (c | 32) - 'a' + 10;
	return -1;
}

/* The Nth character ahead, or -1 past the end. */
static int peekc(const struct lexer *lx, size_t n)
{
	size_t pasted = lx->paste ? (size_t)(lx->paste_end - lx->paste) : 0;

	if (n < pasted)
		return (unsigned char)lx->paste[n];
	n -= pasted;
	if (n < (size_t)(lx->end - lx->p))
		return (unsigned char)lx->p[n];
	return -1;
}

static int getch(struct lexer *lx)
{
	int c = peekc(lx, 0);

	if (c < 0)
		return c;
	if (lx->paste) {
		if (++lx->paste == lx->paste_end)
			lx->paste = NULL;
		return c;
	}
	lx->p++;
	if (c == '\n') {
		lx->line++;
		lx->col = 1;
	} else {
		lx->col++;
	}
	return c;
}

static struct srcloc here(const struct lexer *lx)
{
	struct srcloc loc = { lx->src, lx->line, lx->col };

	return lx->paste ? lx->paste_loc : loc;
}

/* Room in the token buffer for N more characters and its NUL. */
static void buf_room(struct lexer *lx, size_t n)
{
	while (lx->len + n >= lx->cap) {
		size_t cap = lx->cap ? lx->cap * 2 : 256;
		char *b = arena_alloc(cap);

		if (lx->len)
			memcpy(b, lx->buf, lx->len);
		lx->buf = b;
		lx->cap = cap;
	}
}

static void buf_putc(struct lexer *lx, int c)
{
	buf_room(lx, 1);
	lx->buf[lx->len++] = (char)c;
}

static void buf_putn(struct lexer *lx, const char *text, size_t n)
{
	buf_room(lx, n);
	memcpy(lx->buf + lx->len, text, n);
	lx->len += n;
}

static const char *buf_take(struct lexer *lx)
{
	const char *s = arena_strndup(lx->buf ? lx->buf : "", lx->len);

	lx->len = 0;
	return s;
}

static struct token *tok_new(struct lexer *lx, enum tok_type type,
			     struct srcloc loc, bool space)
{
	struct token *t = ARENA_NEW(struct token);

	t->type = type;
	t->loc = loc;
	t->space_before = space;
	t->comment_before = lx->comment;
	lx->comment = false;
	t->doc = lx->doc;
	lx->doc = NULL;
	t->text = "";
	return t;
}

struct lexer *lex_open(struct session *s, const struct source *src)
{
	struct lexer *lx = ARENA_NEW(struct lexer);

	lx->s = s;
	lx->src = src;
	lx->p = src->text;
	lx->end = src->text + src->len;
	lx->line = 1;
	lx->col = 1;
	return lx;
}

void lex_keep_errors(struct lexer *lx)
{
	lx->keep_errors = true;
}

/* The error token of a block comment opened at LOC and never closed. */
static struct token *comment_error(struct lexer *lx, struct srcloc loc)
{
	struct token *t = tok_new(lx, TOK_OP, loc, true);

	t->text = "/*";
	t->error = "unterminated comment: missing '*/'";
	return t;
}

/* After the opening of a block comment: skip past its end; keep a doc comment.  False: no end. */
static bool skip_block_comment(struct lexer *lx)
{
	bool doc = peekc(lx, 0) == '*' && peekc(lx, 1) != '/';
	int c;

	if (doc)
		getch(lx);
	while ((c = getch(lx)) >= 0) {
		if (c == '*' && peekc(lx, 0) == '/') {
			getch(lx);
			if (doc)
				lx->doc = buf_take(lx);
			lx->len = 0;
			return true;
		}
		if (doc)
			buf_putc(lx, c);
	}
	lx->len = 0;
	return false;
}

/* Move past the next N characters of the source text, no paste pending. */
static void skip_text(struct lexer *lx, size_t n)
{
	const char *stop = lx->p + n, *nl;

	while ((nl = memchr(lx->p, '\n', (size_t)(stop - lx->p)))) {
		lx->line++;
		lx->col = 1;
		lx->p = nl + 1;
	}
	lx->col += (int)(stop - lx->p);
	lx->p = stop;
}

/*
 * skip_space on the source text itself, a comment at a time rather than a
 * character at a time: tapsets are half comments.
 */
static struct token *skip_space_text(struct lexer *lx, bool *space)
{
	for (;;) {
		const char *p = lx->p, *stop;
		size_t left = (size_t)(lx->end - p);

		if (left && is_space(*p)) {
			for (stop = p; stop < lx->end && is_space(*stop); stop++)
				;
			skip_text(lx, (size_t)(stop - p));
		} else if (left && (*p == '#' || (left > 1 && p[0] == '/' && p[1] == '/'))) {
			stop = memchr(p, '\n', left);
			skip_text(lx, stop ? (size_t)(stop - p) + 1 : left);
			lx->comment = true;
		} else if (left > 1 && p[0] == '/' && p[1] == '*') {
			struct srcloc loc = here(lx);
			bool doc = left > 3 && p[2] == '*' && p[3] != '/';
			const char *body = p + 2 + doc;

			stop = memmem(body, (size_t)(lx->end - body), "*/", 2);
			lx->comment = true;
			if (!stop) {
				skip_text(lx, left);
				return comment_error(lx, loc);
			}
			if (doc)
				lx->doc = arena_strndup(body, (size_t)(stop - body));
			skip_text(lx, (size_t)(stop + 2 - p));
		} else {
			return NULL;
		}
		*space = true;
	}
}

/*
 * Skip blanks and comments; set *SPACE if there were any.  Returns an
 * error token for an unterminated comment, else NULL.
 */
static struct token *skip_space(struct lexer *lx, bool *space)
{
	for (;;) {
		if (!lx->paste)
			return skip_space_text(lx, space);
		int c = peekc(lx, 0), c2 = peekc(lx, 1);

		if (is_space(c)) {
			getch(lx);
		} else if (c == '#' || (c == '/' && c2 == '/')) {
			while (c >= 0 && c != '\n')
				c = getch(lx);
			lx->comment = true;
		} else if (c == '/' && c2 == '*') {
			struct srcloc loc = here(lx);
			bool closed;

			getch(lx);
			getch(lx);
			closed = skip_block_comment(lx);
			lx->comment = true;
			if (!closed)
				return comment_error(lx, loc);
		} else {
			return NULL;
		}
		*space = true;
	}
}

static const char *plural_args(int n)
{
	if (n == 0)
		return "no arguments";
	return n == 1 ? "1 argument" : arena_printf("%d arguments", n);
}

/* Append the argument text as the body of a string literal. */
static void quote_arg(struct lexer *lx, const char *arg)
{
	buf_putc(lx, '"');
	for (; *arg; arg++) {
		unsigned char c = (unsigned char)*arg;

		if (c == '"' || c == '\\') {
			buf_putc(lx, '\\');
			buf_putc(lx, c);
		} else if (c < 0x20 || c >= 0x7f) {
			buf_putc(lx, '\\');
			buf_putc(lx, '0' + ((c >> 6) & 7));
			buf_putc(lx, '0' + ((c >> 3) & 7));
			buf_putc(lx, '0' + (c & 7));
		} else {
			buf_putc(lx, c);
		}
	}
	buf_putc(lx, '"');
}

/*
 * $N @N $# @# at LOC, the sigil already read: paste the argument's text
 * (raw for $, as a string literal for @) in front of the input, as stap
 * does.  Returns an error token when there is no such argument.
 */
static struct token *paste_arg(struct lexer *lx, int sigil, struct srcloc loc,
			       bool space, bool nested)
{
	const char *spelling, *text;
	struct token *t;
	long idx = 0;

	buf_putc(lx, sigil);
	if (peekc(lx, 0) == '#') {
		buf_putc(lx, getch(lx));
		idx = -1;
	}
	while (idx >= 0 && is_digit(peekc(lx, 0))) {
		int c = getch(lx);

		buf_putc(lx, c);
		if (idx < 1000000)
			idx = idx * 10 + (c - '0');
	}
	spelling = buf_take(lx);
	if (!nested && idx < 0) {
		text = arena_printf("%d", lx->s->nargs);
	} else if (!nested && idx >= 1 && idx <= lx->s->nargs) {
		text = lx->s->args[idx - 1];
	} else {
		t = tok_new(lx, sigil == '@' ? TOK_STRING : TOK_IDENT, loc, space);
		t->text = sigil == '@' ? "" : spelling;
		if (nested)
			t->error = arena_printf("script argument '%s' inside the text of another argument is not substituted",
						spelling);
		else if (idx == 0)
			t->error = arena_printf("there is no script argument %s: they count from 1",
						spelling);
		else
			t->error = arena_printf("script argument %s was not given (%s)",
						spelling, plural_args(lx->s->nargs));
		return t;
	}
	if (sigil == '@') {
		quote_arg(lx, text);
		text = buf_take(lx);
	}
	if (*text) {
		lx->paste = text;
		lx->paste_end = text + strlen(text);
		lx->paste_loc = loc;
	}
	return NULL;
}

enum num_check { NUM_OK, NUM_BAD, NUM_RANGE };

/* The value of a number's spelling: decimal, octal (0...) or hex (0x...). */
static enum num_check number_value(const char *s, uint64_t *out)
{
	unsigned base = 10;
	bool range = false;
	uint64_t v = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		if (!*s)
			return NUM_BAD;
	} else if (s[0] == '0') {
		base = 8;
	}
	for (; *s; s++) {
		int d = hex_value((unsigned char)*s);

		if (d < 0 || (unsigned)d >= base)
			return NUM_BAD;
		if (v > (UINT64_MAX - (unsigned)d) / base)
			range = true;
		v = v * base + (unsigned)d;
	}
	*out = v;
	return range ? NUM_RANGE : NUM_OK;
}

/* A number: like stap, take every letter and digit, then check them. */
static struct token *scan_number(struct lexer *lx, struct token *t)
{
	uint64_t v = 0;

	while (is_alpha(peekc(lx, 0)) || is_digit(peekc(lx, 0)))
		buf_putc(lx, getch(lx));
	t->text = buf_take(lx);
	switch (number_value(t->text, &v)) {
	case NUM_OK:
		t->value = (int64_t)v;	/* up to 2^64-1, wrapping as stap does */
		break;
	case NUM_RANGE:
		t->error = arena_printf("number '%s' is out of range (more than 64 bits)",
					t->text);
		break;
	case NUM_BAD:
		t->error = arena_printf("invalid number '%s'", t->text);
		break;
	}
	return t;
}

/* After a backslash in a string: check the escape, keep it as written. */
static const char *scan_escape(struct lexer *lx)
{
	int c = getch(lx), n = 0, v = 0;

	buf_putc(lx, '\\');
	buf_putc(lx, c);
	if (c == 'x') {
		while (hex_value(peekc(lx, 0)) >= 0) {
			v = v * 16 + hex_value(peekc(lx, 0));
			buf_putc(lx, getch(lx));
			if (++n > 2)
				v = 256;
		}
		if (n == 0)
			return "invalid escape '\\x' in string: no hex digits follow";
		if (v > 255)
			return "hex escape in string is out of range (more than 0xff)";
	} else if (c >= '0' && c <= '7') {
		v = c - '0';
		while (++n < 3 && peekc(lx, 0) >= '0' && peekc(lx, 0) <= '7') {
			v = v * 8 + peekc(lx, 0) - '0';
			buf_putc(lx, getch(lx));
		}
		if (v > 0377)
			return "octal escape in string is out of range (more than \\377)";
	}
	return NULL;
}

/* A string literal after its opening quote; the body keeps its escapes. */
static struct token *scan_string(struct lexer *lx, struct token *t)
{
	const char *err = NULL;
	int c;

	for (;;) {
		c = peekc(lx, 0);
		if (c < 0 || c == '\n' ||
		    (c == '\\' && (peekc(lx, 1) < 0 || peekc(lx, 1) == '\n'))) {
			if (!err)
				err = c < 0 || peekc(lx, 1) < 0 ?
					"unterminated string: missing '\"' before the end of input" :
					"unterminated string: missing '\"' before the end of the line";
			if (c == '\\')
				getch(lx);
			break;
		}
		getch(lx);
		if (c == '"')
			break;
		if (c == '\\') {
			const char *e = scan_escape(lx);

			if (!err)
				err = e;
		} else {
			buf_putc(lx, c);
		}
	}
	t->text = buf_take(lx);
	t->error = err;
	return t;
}

/* %{ ... %}: the code between them. */
static struct token *scan_embedded(struct lexer *lx, struct token *t)
{
	int c;

	while ((c = getch(lx)) >= 0) {
		if (c == '%' && peekc(lx, 0) == '}') {
			getch(lx);
			t->text = buf_take(lx);
			return t;
		}
		buf_putc(lx, c);
	}
	t->text = buf_take(lx);
	t->error = "unterminated embedded code: missing '%}'";
	return t;
}

static struct token *scan_word(struct lexer *lx, struct token *t)
{
	size_t i;

	if (!lx->paste) {
		const char *stop = lx->p;

		while (stop < lx->end && is_ident(*stop))
			stop++;
		buf_putn(lx, lx->p, (size_t)(stop - lx->p));
		skip_text(lx, (size_t)(stop - lx->p));
	}
	while (is_ident(peekc(lx, 0)))
		buf_putc(lx, getch(lx));
	t->text = buf_take(lx);
	t->type = TOK_IDENT;
	for (i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (t->text[0] == keywords[i][0] && !strcmp(t->text, keywords[i]))
			t->type = TOK_KEYWORD;
	return t;
}

static struct token *scan_operator(struct lexer *lx, struct token *t)
{
	int c = peekc(lx, 0);
	size_t i, j, n;

	for (i = 0; i < sizeof(operators) / sizeof(operators[0]); i++) {
		if (c != (unsigned char)operators[i][0])
			continue;
		n = strlen(operators[i]);
		for (j = 0; j < n; j++)
			if (peekc(lx, j) != (unsigned char)operators[i][j])
				break;
		if (j == n) {
			for (j = 0; j < n; j++)
				getch(lx);
			t->text = operators[i];
			return t;
		}
	}
	n = (size_t)getch(lx);
	t->text = arena_printf("%c", (int)n);
	if (n >= 0x20 && n < 0x7f)
		t->error = arena_printf("unexpected character '%c'", (int)n);
	else
		t->error = arena_printf("unexpected character '\\x%02x'", (unsigned)n);
	return t;
}

/* One token; a lexical error stays in token->error. */
static struct token *scan(struct lexer *lx)
{
	struct token *t;
	struct srcloc loc;
	bool space = false, pasted;
	int c, c2;

	for (;;) {
		t = skip_space(lx, &space);
		if (t)
			return t;
		loc = here(lx);
		pasted = lx->paste != NULL;
		c = peekc(lx, 0);
		c2 = peekc(lx, 1);
		if (!((c == '$' || c == '@') && !lx->src->is_tapset &&
		      (c2 == '#' || is_digit(c2))))
			break;
		getch(lx);
		t = paste_arg(lx, c, loc, space, pasted);
		if (t)
			return t;
	}
	if (c < 0) {
		if (!lx->eof) {
			lx->eof = tok_new(lx, TOK_EOF, loc, space);
			lx->eof->doc = NULL;
		}
		return lx->eof;
	}
	t = tok_new(lx, TOK_OP, loc, space);
	if (is_alpha(c) || c == '_' || c == '$' || c == '@') {
		buf_putc(lx, getch(lx));
		return scan_word(lx, t);
	}
	if (is_digit(c)) {
		t->type = TOK_NUMBER;
		return scan_number(lx, t);
	}
	if (c == '"') {
		getch(lx);
		t->type = TOK_STRING;
		return scan_string(lx, t);
	}
	if (c == '%' && c2 == '{') {
		getch(lx);
		getch(lx);
		t->type = TOK_EMBEDDED;
		return scan_embedded(lx, t);
	}
	return scan_operator(lx, t);
}

struct token *lex_next(struct lexer *lx)
{
	for (;;) {
		struct token *t = scan(lx);

		if (!t->error || lx->keep_errors)
			return t;
		diag_error(t->loc, "%s", t->error);
		t->error = NULL;
		if (t->type != TOK_OP)
			return t;
	}
}

bool lex_tok_is(const struct token *t, enum tok_type type, const char *text)
{
	return t && t->type == type && t->text[0] == text[0] && !strcmp(t->text, text);
}

bool lex_tok_is_op(const struct token *t, const char *op)
{
	return lex_tok_is(t, TOK_OP, op);
}

bool lex_tok_is_keyword(const struct token *t, const char *kw)
{
	return lex_tok_is(t, TOK_KEYWORD, kw);
}

const char *lex_tok_describe(const struct token *t)
{
	switch (t->type) {
	case TOK_EOF:
		return "end of input";
	case TOK_STRING:
		return arena_printf("string \"%.40s%s\"", t->text,
				    strlen(t->text) > 40 ? "..." : "");
	case TOK_EMBEDDED:
		return "embedded code";
	default:
		return arena_printf("'%s'", t->text);
	}
}

const char *lex_tok_stap_text(const struct token *t)
{
	static const char *const kinds[] = {
		[TOK_EOF] = "junk", [TOK_IDENT] = "identifier", [TOK_KEYWORD] = "keyword",
		[TOK_OP] = "operator", [TOK_NUMBER] = "number", [TOK_STRING] = "string",
		[TOK_EMBEDDED] = "embedded-code",
	};
	char *text;

	if (t->type == TOK_EOF || t->type == TOK_EMBEDDED)
		return kinds[t->type];
	if (t->type == TOK_IDENT && t->text[0] == '@')	/* stap lexes @count, @cast... as operators */
		return arena_printf("operator '%s'", t->text);
	text = arena_strdup(t->text);
	for (char *c = text; *c; c++)	/* stap prints what is not printable as '?' */
		if ((unsigned char)*c < ' ' || (unsigned char)*c > '~')
			*c = '?';
	return arena_printf("%s '%s'", kinds[t->type], text);
}

struct source *lex_source_from_string(const char *name, const char *text)
{
	struct source *src = ARENA_NEW(struct source);

	src->name = arena_strdup(name);
	src->text = arena_strdup(text);
	src->len = strlen(text);
	return src;
}

struct source *lex_source_read_file(const char *path, bool is_tapset)
{
	size_t len;
	char *text = arena_read_file(path, &len);
	struct source *src;

	if (!text) {
		diag_error((struct srcloc){ 0 }, "cannot read '%s': %s", path, strerror(errno));
		return NULL;
	}
	src = ARENA_NEW(struct source);
	src->name = arena_strdup(path);
	src->text = text;
	src->len = len;
	src->is_tapset = is_tapset;
	return src;
}
