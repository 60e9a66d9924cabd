/* test_lex.c - the lexer and the preprocessor (pass 1a/1b). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "unit.h"
#include "../../translator/lex.h"
#include "../../translator/preproc.h"

static char *diag_text;
static size_t diag_len;
static FILE *diag_f;
static struct session sess;

/* Fresh diagnostics, arena and session for each test. */
static void start(void)
{
	arena_free_all();
	if (diag_f)
		fclose(diag_f);
	free(diag_text);
	diag_text = NULL;
	diag_f = open_memstream(&diag_text, &diag_len);
	diag_set_stream(diag_f);
	diag_reset();
	memset(&sess, 0, sizeof(sess));
	sess.kernel_release = "6.1.0-18-amd64";
	sess.arch = "x86_64";
	sess.runtime = "bpf";
	sess.privilege = "stapusr";
	sess.kconfig_path = "/nonexistent/kconfig";
}

/* Everything printed so far; the stream is reset for the next check. */
static const char *diags(void)
{
	static char *last;

	fflush(diag_f);
	free(last);
	last = strdup(diag_text ? diag_text : "");
	fclose(diag_f);
	free(diag_text);
	diag_text = NULL;
	diag_f = open_memstream(&diag_text, &diag_len);
	diag_set_stream(diag_f);
	return last;
}

static void set_args(int n, const char **args)
{
	sess.args = args;
	sess.nargs = n;
}

static struct source *src(const char *text)
{
	return lex_source_from_string("t.stp", text);
}

/* The tokens' spellings joined by spaces: strings in quotes. */
static const char *spell(struct token *(*next)(void *), void *it)
{
	char *out = arena_strdup("");
	struct token *t;

	while ((t = next(it))->type != TOK_EOF) {
		const char *w = t->text;

		if (t->type == TOK_STRING)
			w = arena_printf("\"%s\"", t->text);
		else if (t->type == TOK_EMBEDDED)
			w = arena_printf("%%{%s%%}", t->text);
		out = arena_printf("%s%s%s", out, *out ? " " : "", w);
	}
	return out;
}

static struct token *lex_it(void *lx)
{
	return lex_next(lx);
}

static struct token *pp_it(void *pp)
{
	return preproc_next(pp);
}

static const char *lexed(const char *text)
{
	return spell(lex_it, lex_open(&sess, src(text)));
}

static const char *pped(const char *text)
{
	return spell(pp_it, preproc_open(&sess, src(text)));
}

static struct token *first(const char *text)
{
	return lex_next(lex_open(&sess, src(text)));
}

/* ---- the lexer ---- */

static void test_identifiers(void)
{
	struct lexer *lx;
	const char *words[] = { "foo", "_x1", "$var", "$$vars", "$var$$", "@count",
				"@define", "export", "$", "@" };
	size_t i;

	start();
	lx = lex_open(&sess, src("foo _x1 $var $$vars $var$$ @count @define export $ @"));
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		struct token *t = lex_next(lx);

		CU_ASSERT_EQUAL(t->type, TOK_IDENT);
		CU_ASSERT_STRING_EQUAL(t->text, words[i]);
	}
	CU_ASSERT_EQUAL(lex_next(lx)->type, TOK_EOF);
	CU_ASSERT_EQUAL(lex_next(lx)->type, TOK_EOF);
	CU_ASSERT_STRING_EQUAL(diags(), "");
}

static void test_keywords(void)
{
	const char *kw = "probe global function if else for foreach in limit return "
			 "delete while break continue next string long try catch private";
	struct lexer *lx;
	struct token *t;
	int n = 0;

	start();
	lx = lex_open(&sess, src(kw));
	while ((t = lex_next(lx))->type != TOK_EOF) {
		CU_ASSERT_EQUAL(t->type, TOK_KEYWORD);
		CU_ASSERT(lex_tok_is_keyword(t, t->text));
		n++;
	}
	CU_ASSERT_EQUAL(n, 20);
	CU_ASSERT_EQUAL(first("probes")->type, TOK_IDENT);
	CU_ASSERT_EQUAL(first("Probe")->type, TOK_IDENT);
}

static void test_numbers(void)
{
	start();
	CU_ASSERT_EQUAL(first("0")->value, 0);
	CU_ASSERT_EQUAL(first("1234567")->value, 1234567);
	CU_ASSERT_EQUAL(first("0755")->value, 0755);
	CU_ASSERT_EQUAL(first("0x7fFF")->value, 0x7fff);
	CU_ASSERT_EQUAL(first("0X10")->value, 16);
	CU_ASSERT_EQUAL(first("9223372036854775807")->value, INT64_MAX);
	CU_ASSERT_EQUAL(first("9223372036854775808")->value, INT64_MIN);
	CU_ASSERT_EQUAL(first("18446744073709551615")->value, -1);
	CU_ASSERT_EQUAL(first("0xffffffffffffffff")->value, -1);
	CU_ASSERT_EQUAL(first("01777777777777777777777")->value, -1);
	CU_ASSERT_EQUAL(first("42")->type, TOK_NUMBER);
	CU_ASSERT_STRING_EQUAL(first("0x2A")->text, "0x2A");
	CU_ASSERT_STRING_EQUAL(lexed("1.5 2-1 3_"), "1 . 5 2 - 1 3 _");
	CU_ASSERT_STRING_EQUAL(diags(), "");
}

static void test_number_errors(void)
{
	start();
	CU_ASSERT_STRING_EQUAL(lexed("x = 08;"), "x = 08 ;");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:5: error: invalid number '08'\n"
		"x = 08;\n"
		"    ^\n");
	lexed("0x + 12abc");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:1: error: invalid number '0x'\n"
		"0x + 12abc\n"
		"^\n"
		"t.stp:1:6: error: invalid number '12abc'\n"
		"0x + 12abc\n"
		"     ^\n");
	lexed("18446744073709551616 0x10000000000000000");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:1: error: number '18446744073709551616' is out of range (more than 64 bits)\n"
		"18446744073709551616 0x10000000000000000\n"
		"^\n"
		"t.stp:1:22: error: number '0x10000000000000000' is out of range (more than 64 bits)\n"
		"18446744073709551616 0x10000000000000000\n"
		"                     ^\n");
	CU_ASSERT_EQUAL(diag_error_count(), 5);
}

static void test_strings(void)
{
	struct token *t;

	start();
	t = first("\"a\\tb\\\"c\\\\ \\101\\x41\\n\\q\"");
	CU_ASSERT_EQUAL(t->type, TOK_STRING);
	CU_ASSERT_STRING_EQUAL(t->text, "a\\tb\\\"c\\\\ \\101\\x41\\n\\q");
	CU_ASSERT_STRING_EQUAL(lexed("\"\" \"x y\"\"z\""), "\"\" \"x y\" \"z\"");
	CU_ASSERT_STRING_EQUAL(first("\"# not // a comment\"")->text,
			       "# not // a comment");
	CU_ASSERT_STRING_EQUAL(diags(), "");
}

static void test_string_errors(void)
{
	start();
	CU_ASSERT_STRING_EQUAL(lexed("s = \"abc\nx"), "s = \"abc\" x");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:5: error: unterminated string: missing '\"' before the end of the line\n"
		"s = \"abc\n"
		"    ^\n");
	lexed("  \"abc");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:3: error: unterminated string: missing '\"' before the end of input\n"
		"  \"abc\n"
		"  ^\n");
	lexed("\"\\xg\" \"\\400\" \"\\x100\"");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:1: error: invalid escape '\\x' in string: no hex digits follow\n"
		"\"\\xg\" \"\\400\" \"\\x100\"\n"
		"^\n"
		"t.stp:1:7: error: octal escape in string is out of range (more than \\377)\n"
		"\"\\xg\" \"\\400\" \"\\x100\"\n"
		"      ^\n"
		"t.stp:1:14: error: hex escape in string is out of range (more than 0xff)\n"
		"\"\\xg\" \"\\400\" \"\\x100\"\n"
		"             ^\n");
}

static void test_comments_and_space(void)
{
	struct lexer *lx;
	struct token *t;

	start();
	CU_ASSERT_STRING_EQUAL(lexed("a # one\nb // two\nc /* three\n */ d/**/e"),
			       "a b c d e");
	lx = lex_open(&sess, src("x(y) /*c*/z#\nw*v"));
	t = lex_next(lx);
	CU_ASSERT_FALSE(t->space_before);
	CU_ASSERT_FALSE(lex_next(lx)->space_before);	/* ( */
	CU_ASSERT_FALSE(lex_next(lx)->space_before);	/* y */
	CU_ASSERT_FALSE(lex_next(lx)->space_before);	/* ) */
	CU_ASSERT_TRUE(lex_next(lx)->space_before);	/* z after a comment */
	CU_ASSERT_TRUE(lex_next(lx)->space_before);	/* w */
	CU_ASSERT_FALSE(lex_next(lx)->space_before);	/* * */
	CU_ASSERT_FALSE(lex_next(lx)->space_before);	/* v */
	CU_ASSERT_TRUE(first(" x")->space_before);
	CU_ASSERT_STRING_EQUAL(diags(), "");
}

static void test_doc_comments(void)
{
	struct lexer *lx;
	struct token *t;

	start();
	lx = lex_open(&sess, src("/** Bytes read. @units bytes */\nglobal x /* plain */ y /**/ z"));
	t = lex_next(lx);
	CU_ASSERT_STRING_EQUAL(t->text, "global");
	CU_ASSERT_PTR_NOT_NULL_FATAL(t->doc);
	CU_ASSERT_STRING_EQUAL(t->doc, " Bytes read. @units bytes ");
	CU_ASSERT_PTR_NULL(lex_next(lx)->doc);
	CU_ASSERT_PTR_NULL(lex_next(lx)->doc);
	CU_ASSERT_PTR_NULL(lex_next(lx)->doc);
	t = first("/***/ a");
	CU_ASSERT_STRING_EQUAL(t->doc, "");
}

static void test_unterminated_comment(void)
{
	start();
	CU_ASSERT_STRING_EQUAL(lexed("a\n  /* no end\n b"), "a");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:2:3: error: unterminated comment: missing '*/'\n"
		"  /* no end\n"
		"  ^\n");
}

static void test_embedded(void)
{
	struct token *t;

	start();
	t = first("%{ #include <x.h>\n int a = 1 % 2; %}");
	CU_ASSERT_EQUAL(t->type, TOK_EMBEDDED);
	CU_ASSERT_STRING_EQUAL(t->text, " #include <x.h>\n int a = 1 % 2; ");
	lexed("x %{ never closed }%");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:3: error: unterminated embedded code: missing '%}'\n"
		"x %{ never closed }%\n"
		"  ^\n");
}

static void test_operators(void)
{
	start();
	CU_ASSERT_STRING_EQUAL(lexed("a<<<1 b<<=2 c>>=3 d<<e>>f"),
			       "a <<< 1 b <<= 2 c >>= 3 d << e >> f");
	CU_ASSERT_STRING_EQUAL(lexed("a---b a+++b a->b !a!=b!~c=~d"),
			       "a -- - b a ++ + b a -> b ! a != b !~ c =~ d");
	CU_ASSERT_STRING_EQUAL(lexed("+=-=*=/=%=&=|=^=.= && || == <= >="),
			       "+= -= *= /= %= &= |= ^= .= && || == <= >=");
	CU_ASSERT_STRING_EQUAL(lexed("%(%?%:%)"), "%( %? %: %)");
	CU_ASSERT_STRING_EQUAL(lexed("()[]{},;:?.+-*/%&|^! ~ < > ="),
			       "( ) [ ] { } , ; : ? . + - * / % & | ^ ! ~ < > =");
	CU_ASSERT(lex_tok_is_op(first("<<<"), "<<<"));
	CU_ASSERT_STRING_EQUAL(diags(), "");
}

static void test_unexpected_character(void)
{
	start();
	CU_ASSERT_STRING_EQUAL(lexed("a ` b\n\\ \x01"), "a b");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:3: error: unexpected character '`'\n"
		"a ` b\n"
		"  ^\n"
		"t.stp:2:1: error: unexpected character '\\'\n"
		"\\ \x01\n"
		"^\n"
		"t.stp:2:3: error: unexpected character '\\x01'\n"
		"\\ \x01\n"
		"  ^\n");
}

static void test_locations(void)
{
	struct lexer *lx;
	struct token *t;
	struct source *s;

	start();
	s = src("probe\n\tbegin {\n  x = \"a\" }");
	lx = lex_open(&sess, s);
	t = lex_next(lx);
	CU_ASSERT(t->loc.src == s && t->loc.line == 1 && t->loc.col == 1);
	t = lex_next(lx);
	CU_ASSERT(t->loc.line == 2 && t->loc.col == 2);
	t = lex_next(lx);
	CU_ASSERT(t->loc.line == 2 && t->loc.col == 8);
	t = lex_next(lx);
	CU_ASSERT(t->loc.line == 3 && t->loc.col == 3);
	lex_next(lx);
	t = lex_next(lx);
	CU_ASSERT(t->type == TOK_STRING && t->loc.line == 3 && t->loc.col == 7);
	lex_next(lx);
	t = lex_next(lx);
	CU_ASSERT(t->type == TOK_EOF && t->loc.line == 3 && t->loc.col == 12);
}

static void test_describe(void)
{
	start();
	CU_ASSERT_STRING_EQUAL(lex_tok_describe(first("foo")), "'foo'");
	CU_ASSERT_STRING_EQUAL(lex_tok_describe(first("probe")), "'probe'");
	CU_ASSERT_STRING_EQUAL(lex_tok_describe(first("<<=")), "'<<='");
	CU_ASSERT_STRING_EQUAL(lex_tok_describe(first("\"hi\"")), "string \"hi\"");
	CU_ASSERT_STRING_EQUAL(lex_tok_describe(first("%{ x %}")), "embedded code");
	CU_ASSERT_STRING_EQUAL(lex_tok_describe(first("  ")), "end of input");
	CU_ASSERT(lex_tok_is(first("12"), TOK_NUMBER, "12"));
	CU_ASSERT_FALSE(lex_tok_is(first("12"), TOK_IDENT, "12"));
}

static void test_source_files(void)
{
	char path[] = "/tmp/test_lex_XXXXXX";
	int fd;
	struct source *s;

	start();
	fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, "probe begin {}\n", 15), 15);
	close(fd);
	s = lex_source_read_file(path, true);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s->text, "probe begin {}\n");
	CU_ASSERT_EQUAL(s->len, 15);
	CU_ASSERT_TRUE(s->is_tapset);
	CU_ASSERT_STRING_EQUAL(s->name, path);
	unlink(path);
	CU_ASSERT_PTR_NULL(lex_source_read_file("/nonexistent/x.stp", false));
	CU_ASSERT_STRING_EQUAL(diags(),
		"pmstap: error: cannot read '/nonexistent/x.stp': No such file or directory\n");
	CU_ASSERT_PTR_NULL(lex_source_read_file("/tmp", false));
	CU_ASSERT_STRING_EQUAL(diags(),
		"pmstap: error: cannot read '/tmp': Is a directory\n");
}

/* ---- script arguments ---- */

static void test_args(void)
{
	const char *args[] = { "42", "sys_read", "1 + 2" };
	struct lexer *lx;
	struct token *t;

	start();
	set_args(3, args);
	CU_ASSERT_STRING_EQUAL(lexed("x = $1 + @1; f($2) $3 @2"),
			       "x = 42 + \"42\" ; f ( sys_read ) 1 + 2 \"sys_read\"");
	lx = lex_open(&sess, src("a =\n  $1 $3"));
	lex_next(lx);
	lex_next(lx);
	t = lex_next(lx);
	CU_ASSERT(t->type == TOK_NUMBER && t->value == 42);
	CU_ASSERT(t->loc.line == 2 && t->loc.col == 3);
	t = lex_next(lx);
	CU_ASSERT(t->loc.line == 2 && t->loc.col == 6 && t->value == 1);
	t = lex_next(lx);
	CU_ASSERT(lex_tok_is_op(t, "+") && t->loc.line == 2 && t->loc.col == 6);
	t = lex_next(lx);
	CU_ASSERT(t->loc.line == 2 && t->loc.col == 6 && t->value == 2);
	CU_ASSERT_EQUAL(lex_next(lx)->type, TOK_EOF);
	/* pasted text runs on into the source, as in stap */
	CU_ASSERT_STRING_EQUAL(lexed("$2_x"), "sys_read_x");
	CU_ASSERT_STRING_EQUAL(diags(), "");
}

static void test_arg_count_and_quoting(void)
{
	const char *args[] = { "a\"b\\c", "" };

	start();
	set_args(2, args);
	CU_ASSERT_STRING_EQUAL(lexed("$# @# @1 @2 $2;"),
			       "2 \"2\" \"a\\\"b\\\\c\" \"\" ;");
	set_args(0, NULL);
	CU_ASSERT_STRING_EQUAL(lexed("$#"), "0");
	CU_ASSERT_STRING_EQUAL(diags(), "");
}

static void test_arg_missing(void)
{
	const char *args[] = { "1" };

	start();
	set_args(1, args);
	CU_ASSERT_STRING_EQUAL(lexed("x = $2 . @3"), "x = $2 . \"\"");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:5: error: script argument $2 was not given (1 argument)\n"
		"x = $2 . @3\n"
		"    ^\n"
		"t.stp:1:10: error: script argument @3 was not given (1 argument)\n"
		"x = $2 . @3\n"
		"         ^\n");
	set_args(0, NULL);
	lexed("$1");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:1: error: script argument $1 was not given (no arguments)\n"
		"$1\n"
		"^\n");
	set_args(1, args);
	lexed("$0");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:1: error: there is no script argument $0: they count from 1\n"
		"$0\n"
		"^\n");
}

static void test_arg_nested_and_tapset(void)
{
	const char *args[] = { "$2", "x" };
	struct source *s;

	start();
	set_args(2, args);
	lexed("y = $1");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:5: error: script argument '$2' inside the text of another argument is not substituted\n"
		"y = $1\n"
		"    ^\n");
	s = src("f($1, @1, $#)");
	s->is_tapset = true;
	CU_ASSERT_STRING_EQUAL(spell(lex_it, lex_open(&sess, s)), "f ( $1 , @1 , $");
	CU_ASSERT_STRING_EQUAL(diags(), "");
}

/* ---- conditionals ---- */

static void test_cond_kernel_version(void)
{
	start();
	CU_ASSERT_STRING_EQUAL(pped("%( kernel_v >= \"6.1\" %? a %: b %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( kernel_v < \"5.10\" %? a %: b %)"), "b");
	CU_ASSERT_STRING_EQUAL(pped("%( kernel_v > \"6.0.99\" %? a %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( kernel_v == \"6.1.0\" %? a %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( kernel_v == \"6.1\" %? a %: b %)"), "b");
	CU_ASSERT_STRING_EQUAL(pped("%( kernel_vr == \"6.1.0-*-amd64\" %? a %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( kernel_vr != \"6.1.0-18-amd64\" %? a %: b %)"), "b");
	CU_ASSERT_STRING_EQUAL(pped("%( kernel_v <= \"6.1.0\" %? a %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( systemtap_v >= \"4.0\" %? a %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( systemtap_v == \"4.8\" %? a %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( systemtap_v < \"4.10\" %? a %: b %)"), "a");
	CU_ASSERT_STRING_EQUAL(diags(), "");
}

static void test_cond_arch_runtime_privilege(void)
{
	start();
	CU_ASSERT_STRING_EQUAL(pped("%( arch == \"x86_64\" %? a %: b %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( arch == \"i?86\" %? a %: b %)"), "b");
	CU_ASSERT_STRING_EQUAL(pped("%( arch != \"*arm*\" %? a %: b %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( runtime == \"bpf\" %? a %: b %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( runtime != \"kernel\" %? a %: b %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( systemtap_privilege == \"stapusr\" %? a %: b %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( guru_mode == 0 %? a %: b %)"), "a");
	sess.guru = true;
	CU_ASSERT_STRING_EQUAL(pped("%( guru_mode == 0 %? a %: b %)"), "b");
	CU_ASSERT_STRING_EQUAL(pped("%( \"abc\" < \"abd\" %? a %: b %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( 0x10 == 16 %? a %: b %)"), "a");
	CU_ASSERT_STRING_EQUAL(diags(), "");
}

static void test_cond_config(void)
{
	char path[] = "/tmp/test_kconfig_XXXXXX";
	const char *cfg = "# comment\nCONFIG_A=y\nCONFIG_B=m\n# CONFIG_C is not set\n"
			  "CONFIG_HZ=250\nCONFIG_LOCALVERSION=\"-foo\"\nCONFIG_NR=250\n";
	int fd;

	start();
	fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, cfg, strlen(cfg)), (ssize_t)strlen(cfg));
	close(fd);
	sess.kconfig_path = path;
	CU_ASSERT_STRING_EQUAL(pped("%( CONFIG_A == \"y\" %? a %: b %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( CONFIG_B == \"[ym]\" %? a %: b %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( CONFIG_C == \"y\" %? a %: b %)"), "b");
	CU_ASSERT_STRING_EQUAL(pped("%( CONFIG_C == \"\" %? a %: b %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( CONFIG_LOCALVERSION == \"-foo\" %? a %: b %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( CONFIG_HZ >= 100 %? a %: b %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( CONFIG_HZ == CONFIG_NR %? a %: b %)"), "a");
	CU_ASSERT_STRING_EQUAL(diags(), "");
	pped("%( CONFIG_A > 1 %? a %)");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:4: error: CONFIG_A is 'y', not a number\n"
		"%( CONFIG_A > 1 %? a %)\n"
		"   ^\n");
	unlink(path);
}

static void test_cond_config_missing(void)
{
	start();
	CU_ASSERT_STRING_EQUAL(pped("%( CONFIG_A == \"y\" %? a %: b %) %( CONFIG_B == \"\" %? c %)"),
			       "b c");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:4: warning: cannot read the kernel configuration '/nonexistent/kconfig': No such file or directory; every CONFIG_ option counts as unset\n"
		"%( CONFIG_A == \"y\" %? a %: b %) %( CONFIG_B == \"\" %? c %)\n"
		"   ^\n");
	CU_ASSERT_EQUAL(diag_error_count(), 0);
}

static void test_cond_and_or(void)
{
	start();
	/* && binds tighter than || */
	CU_ASSERT_STRING_EQUAL(pped("%( 1 == 1 || 1 == 0 && 1 == 0 %? a %: b %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( (1 == 1 || 1 == 0) && 1 == 0 %? a %: b %)"), "b");
	CU_ASSERT_STRING_EQUAL(pped("%( arch == \"x86_64\" && kernel_v >= \"5.0\" %? a %: b %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( arch == \"s390\" || runtime == \"bpf\" %? a %: b %)"), "a");
	CU_ASSERT_STRING_EQUAL(pped("%( arch == \"s390\" || runtime == \"dyninst\" %? a %: b %)"), "b");
	CU_ASSERT_STRING_EQUAL(diags(), "");
}

static void test_cond_nesting_and_position(void)
{
	start();
	CU_ASSERT_STRING_EQUAL(pped("%( 1 == 1 %? %( 2 == 3 %? a %: b %) %: c %) d"), "b d");
	CU_ASSERT_STRING_EQUAL(pped("%( 1 == 2 %? %( 2 == 2 %? a %: b %) %: c %)"), "c");
	CU_ASSERT_STRING_EQUAL(pped("x = 1 + %( 1 == 1 %? 2 %: 3 %) * 4"), "x = 1 + 2 * 4");
	CU_ASSERT_STRING_EQUAL(pped("probe a, %( 1 == 0 %? b, %) c {}"), "probe a , c { }");
	CU_ASSERT_STRING_EQUAL(pped("%( 1 == 0 %? a %)"), "");
	CU_ASSERT_STRING_EQUAL(diags(), "");
}

static void test_cond_untaken_branch(void)
{
	const char *args[] = { "x" };

	start();
	set_args(1, args);
	/* stap substitutes only in taken code: $3 here is no error */
	CU_ASSERT_STRING_EQUAL(pped("%( $# > 2 %? y = $3 ` 08 \"open\n%: y = $1 %)"),
			       "y = x");
	CU_ASSERT_STRING_EQUAL(pped("%( $# == 1 %? a %: $2 %) @1"), "a \"x\"");
	CU_ASSERT_STRING_EQUAL(diags(), "");
	CU_ASSERT_STRING_EQUAL(pped("%( $# < 2 %? y = $2 %)"), "y = $2");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:18: error: script argument $2 was not given (1 argument)\n"
		"%( $# < 2 %? y = $2 %)\n"
		"                 ^\n");
	CU_ASSERT_STRING_EQUAL(pped("%( @1 == \"x\" %? a %: b %)"), "a");
	CU_ASSERT_STRING_EQUAL(diags(), "");
}

static void test_cond_errors(void)
{
	start();
	CU_ASSERT_STRING_EQUAL(pped("%( kernel == \"6\" %? a %: b %)"), "b");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:4: error: unknown name 'kernel' in a condition: expected kernel_v, kernel_vr, systemtap_v, arch, runtime, systemtap_privilege, guru_mode or CONFIG_...\n"
		"%( kernel == \"6\" %? a %: b %)\n"
		"   ^\n");
	CU_ASSERT_STRING_EQUAL(pped("%( arch == 1 %? a %)"), "");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:12: error: 'arch' is compared with a string, saw '1'\n"
		"%( arch == 1 %? a %)\n"
		"           ^\n");
	pped("%( arch < \"x\" %? a %)");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:9: error: 'arch' can only be compared with '==' or '!='\n"
		"%( arch < \"x\" %? a %)\n"
		"        ^\n");
	pped("%( kernel_v < \"6.*\" %? a %)");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:13: error: wildcards are only allowed with '==' and '!='\n"
		"%( kernel_v < \"6.*\" %? a %)\n"
		"            ^\n");
	pped("%( 1 == \"1\" %? a %)");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:9: error: a number can only be compared with a number, saw string \"1\"\n"
		"%( 1 == \"1\" %? a %)\n"
		"        ^\n");
	CU_ASSERT_EQUAL(diag_error_count(), 5);
}

static void test_cond_structure_errors(void)
{
	start();
	CU_ASSERT_STRING_EQUAL(pped("%( arch == \"x86_64\" probe %: b %) c"), "b c");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:21: error: expected '%?' after the condition, saw 'probe'\n"
		"%( arch == \"x86_64\" probe %: b %) c\n"
		"                    ^\n"
		"t.stp:1:1: note: the conditional starts here\n"
		"%( arch == \"x86_64\" probe %: b %) c\n"
		"^\n");
	CU_ASSERT_STRING_EQUAL(pped("a\n%( 1 == 1 %? b\n"), "a b");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:3:1: error: missing '%)': the input ends inside a conditional\n"
		"t.stp:2:1: note: the conditional starts here\n"
		"%( 1 == 1 %? b\n"
		"^\n");
	CU_ASSERT_STRING_EQUAL(pped("a %: b %) c %?"), "a b c");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:3: error: '%:' without a matching '%('\n"
		"a %: b %) c %?\n"
		"  ^\n"
		"t.stp:1:8: error: '%)' without a matching '%('\n"
		"a %: b %) c %?\n"
		"       ^\n"
		"t.stp:1:13: error: '%?' without a matching '%('\n"
		"a %: b %) c %?\n"
		"            ^\n");
	CU_ASSERT_STRING_EQUAL(pped("%( 1 == 1 %? a %: b %: c %) d"), "a d");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:21: error: a second '%:' in one conditional\n"
		"%( 1 == 1 %? a %: b %: c %) d\n"
		"                    ^\n"
		"t.stp:1:1: note: the conditional starts here\n"
		"%( 1 == 1 %? a %: b %: c %) d\n"
		"^\n");
	CU_ASSERT_STRING_EQUAL(pped("%( %? a %: b %)"), "b");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:4: error: expected a condition such as 'kernel_v >= \"5.4\"', saw '%?'\n"
		"%( %? a %: b %)\n"
		"   ^\n");
}

static void test_cond_doc_carried(void)
{
	struct pp *pp;
	struct token *t;

	start();
	pp = preproc_open(&sess, src("/** the doc */\n%( 1 == 0 %? global a %: global b %)"));
	t = preproc_next(pp);
	CU_ASSERT_STRING_EQUAL(t->text, "global");
	CU_ASSERT_PTR_NOT_NULL_FATAL(t->doc);
	CU_ASSERT_STRING_EQUAL(t->doc, " the doc ");
	CU_ASSERT_STRING_EQUAL(preproc_next(pp)->text, "b");
}

/* ---- macros ---- */

static void test_macro_simple(void)
{
	struct pp *pp;
	struct token *t;

	start();
	CU_ASSERT_STRING_EQUAL(pped("@define N %( 42 %) x = @N + @N"), "x = 42 + 42");
	CU_ASSERT_STRING_EQUAL(pped("@define E %( %) a @E b"), "a b");
	CU_ASSERT_STRING_EQUAL(pped("x = @cast(p, \"task_struct\") @count"),
			       "x = @cast ( p , \"task_struct\" ) @count");
	pp = preproc_open(&sess, src("@define N %( 4 2 %)\n  @N"));
	t = preproc_next(pp);
	CU_ASSERT(t->type == TOK_NUMBER && t->value == 4 && t->loc.line == 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t->expanded_from);
	CU_ASSERT_STRING_EQUAL(t->expanded_from->text, "@N");
	CU_ASSERT(t->expanded_from->loc.line == 2 && t->expanded_from->loc.col == 3);
	CU_ASSERT_TRUE(t->space_before);
	CU_ASSERT_PTR_NULL(preproc_next(pp)->doc);
	CU_ASSERT_EQUAL(preproc_next(pp)->type, TOK_EOF);
	CU_ASSERT_STRING_EQUAL(diags(), "");
}

static void test_macro_params(void)
{
	start();
	CU_ASSERT_STRING_EQUAL(pped("@define mx(a, b) %( ((@a) > (@b) ? (@a) : (@b)) %)\n"
				    "y = @mx(x[1, 2], f(3, 4))"),
			       "y = ( ( x [ 1 , 2 ] ) > ( f ( 3 , 4 ) ) ? ( x [ 1 , 2 ] ) : ( f ( 3 , 4 ) ) )");
	CU_ASSERT_STRING_EQUAL(pped("@define one(a) %( [@a] %) @one() @one(1 2)"),
			       "[ ] [ 1 2 ]");
	/* macros inside macros, and arguments that use macros */
	CU_ASSERT_STRING_EQUAL(pped("@define sq(x) %( @x * @x %) @define two %( 2 %)\n"
				    "@define four %( @sq(@two) %) @four @sq(@sq(3))"),
			       "2 * 2 3 * 3 * 3 * 3");
	/* an argument means what it meant where it was written */
	CU_ASSERT_STRING_EQUAL(pped("@define f(a) %( @g(@a) %) @define g(a) %( <@a> %) @f(9)"),
			       "< 9 >");
	CU_ASSERT_STRING_EQUAL(diags(), "");
}

static void test_macro_conditional_body(void)
{
	start();
	CU_ASSERT_STRING_EQUAL(pped("@define A %( %( arch == \"x86_64\" %? x %: y %) %) @A"),
			       "x");
	sess.arch = "aarch64";
	CU_ASSERT_STRING_EQUAL(pped("@define A %( %( arch == \"x86_64\" %? x %: y %) %) @A"),
			       "y");
	/* a conditional may choose which macro to define */
	CU_ASSERT_STRING_EQUAL(pped("%( arch == \"aarch64\" %? @define R %( 1 %) %: @define R %( 2 %) %) @R"),
			       "1");
	/* and a macro may be used in a condition */
	CU_ASSERT_STRING_EQUAL(pped("@define V %( \"5.0\" %) %( kernel_v >= @V %? new %: old %)"),
			       "new");
	CU_ASSERT_STRING_EQUAL(diags(), "");
}

static void test_macro_recursion(void)
{
	start();
	CU_ASSERT_STRING_EQUAL(pped("@define r %( 1 + @r %)\nx = @r;"), "x = 1 + ;");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:18: error: macro '@r' is used inside its own expansion\n"
		"@define r %( 1 + @r %)\n"
		"                 ^\n"
		"t.stp:1:9: note: macro '@r' is defined here\n"
		"@define r %( 1 + @r %)\n"
		"        ^\n");
	CU_ASSERT_STRING_EQUAL(pped("@define a %( @b(2) %) @define b(x) %( @a %) @b(1) z"), "z");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:14: error: macro '@b' is used inside its own expansion\n"
		"@define a %( @b(2) %) @define b(x) %( @a %) @b(1) z\n"
		"             ^\n"
		"t.stp:1:31: note: macro '@b' is defined here\n"
		"@define a %( @b(2) %) @define b(x) %( @a %) @b(1) z\n"
		"                              ^\n");
}

static void test_macro_arity(void)
{
	start();
	CU_ASSERT_STRING_EQUAL(pped("@define f(a, b) %( @a @b %)\nx @f(1) y"), "x y");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:2:3: error: macro '@f' takes 2 arguments, 1 was given\n"
		"x @f(1) y\n"
		"  ^\n"
		"t.stp:1:9: note: macro '@f' is defined here\n"
		"@define f(a, b) %( @a @b %)\n"
		"        ^\n");
	CU_ASSERT_STRING_EQUAL(pped("@define f(a) %( @a %) @f + 1"), "+ 1");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:23: error: macro '@f' takes 1 argument: expected '(' after it, saw '+'\n"
		"@define f(a) %( @a %) @f + 1\n"
		"                      ^\n"
		"t.stp:1:9: note: macro '@f' is defined here\n"
		"@define f(a) %( @a %) @f + 1\n"
		"        ^\n");
	pped("@define f(a) %( @a %) @f(1, (2\n");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:23: error: missing ')' after the arguments of macro '@f'\n"
		"@define f(a) %( @a %) @f(1, (2\n"
		"                      ^\n"
		"t.stp:1:9: note: macro '@f' is defined here\n"
		"@define f(a) %( @a %) @f(1, (2\n"
		"        ^\n");
}

static void test_macro_define_errors(void)
{
	start();
	CU_ASSERT_STRING_EQUAL(pped("@define m %( 1 %) @define m %( 2 %) @m"), "1");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:27: error: macro '@m' is already defined in this file\n"
		"@define m %( 1 %) @define m %( 2 %) @m\n"
		"                          ^\n"
		"t.stp:1:9: note: macro '@m' was first defined here\n"
		"@define m %( 1 %) @define m %( 2 %) @m\n"
		"        ^\n");
	CU_ASSERT_STRING_EQUAL(pped("@define 5 %( x %) probe"), "probe");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:9: error: expected a macro name after '@define', saw '5'\n"
		"@define 5 %( x %) probe\n"
		"        ^\n");
	pped("@define m x %)\n");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:11: error: expected '%(' to start the body of macro '@m', saw 'x'\n"
		"@define m x %)\n"
		"          ^\n");
	pped("@define m %( x\n");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:9: error: macro '@m' has no '%)' to end its body\n"
		"@define m %( x\n"
		"        ^\n");
	CU_ASSERT_STRING_EQUAL(pped("@define count %( 3 %) @count"), "3");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:9: warning: macro '@count' hides the built-in operator '@count'\n"
		"@define count %( 3 %) @count\n"
		"        ^\n");
	pped("@define m(a) %( @define n %( 1 %) %) @m(1)");
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:1:17: error: '@define' is not allowed inside a macro body\n"
		"@define m(a) %( @define n %( 1 %) %) @m(1)\n"
		"                ^\n");
}

static void test_macro_scope_and_library(void)
{
	struct source *lib;

	start();
	lib = lex_source_from_string("lib.stpm",
		"/* tapset macros */\n@define TWO %( 2 %)\n"
		"%( arch == \"x86_64\" %? @define W %( 64 %) %: @define W %( 32 %) %)\n"
		"@define DBL(x) %( (@x * @TWO) %)\n");
	lib->is_tapset = true;
	preproc_load_library(&sess, lib);
	CU_ASSERT_STRING_EQUAL(diags(), "");
	CU_ASSERT_STRING_EQUAL(pped("@TWO @W @DBL(3)"), "2 64 ( 3 * 2 )");
	/* a script's macro does not change what a tapset macro means inside */
	CU_ASSERT_STRING_EQUAL(pped("@define TWO %( 22 %) @TWO @DBL(1)"), "22 ( 1 * 2 )");
	/* a script's macros stay in that script */
	CU_ASSERT_STRING_EQUAL(pped("@define mine %( 1 %) @mine"), "1");
	CU_ASSERT_STRING_EQUAL(pped("@mine"), "@mine");
	CU_ASSERT_STRING_EQUAL(diags(), "");
	preproc_load_library(&sess, lex_source_from_string("dup.stpm", "@define TWO %( 3 %)"));
	CU_ASSERT_STRING_EQUAL(diags(),
		"dup.stpm:1:9: error: macro '@TWO' is already defined by another tapset\n"
		"@define TWO %( 3 %)\n"
		"        ^\n"
		"lib.stpm:2:9: note: macro '@TWO' was first defined here\n"
		"@define TWO %( 2 %)\n"
		"        ^\n");
	preproc_load_library(&sess, lex_source_from_string("bad.stpm",
		"@define X %( 1 %) probe begin {}"));
	CU_ASSERT_STRING_EQUAL(diags(),
		"bad.stpm:1:19: error: a macro library may only contain @define and conditionals, saw 'probe'\n"
		"@define X %( 1 %) probe begin {}\n"
		"                  ^\n");
	CU_ASSERT_STRING_EQUAL(pped("@X"), "@X");
}

static void test_macro_too_large(void)
{
	struct pp *pp;
	struct token *t;
	long n = 0;

	start();
	pp = preproc_open(&sess, src("@define a %( 1 1 1 1 1 1 1 1 1 1 %)\n"
				    "@define b %( @a @a @a @a @a @a @a @a @a @a %)\n"
				    "@define c %( @b @b @b @b @b @b @b @b @b @b %)\n"
				    "@define d %( @c @c @c @c @c @c @c @c @c @c %)\n"
				    "@define e %( @d @d @d @d @d @d @d @d @d @d %)\n"
				    "@define f %( @e @e @e @e @e @e @e @e @e @e %)\n"
				    "@define g %( @f @f @f @f @f @f @f @f @f @f %)\n"
				    "@g x @g y"));
	while ((t = preproc_next(pp))->type == TOK_NUMBER)
		n++;
	CU_ASSERT(n > 500000 && n <= 1000000);	/* @a @b ... count too */
	CU_ASSERT_STRING_EQUAL(t->text, "x");
	CU_ASSERT_STRING_EQUAL(preproc_next(pp)->text, "y");	/* nothing more expands */
	CU_ASSERT_STRING_EQUAL(diags(),
		"t.stp:8:1: error: macro expansion is too large (more than 1000000 tokens in one file)\n"
		"@g x @g y\n"
		"^\n");
}

static const struct unit_case lex_cases[] = {
	{ "identifiers", test_identifiers },
	{ "keywords", test_keywords },
	{ "numbers", test_numbers },
	{ "number errors", test_number_errors },
	{ "strings", test_strings },
	{ "string errors", test_string_errors },
	{ "comments and space_before", test_comments_and_space },
	{ "doc comments", test_doc_comments },
	{ "unterminated comment", test_unterminated_comment },
	{ "embedded code", test_embedded },
	{ "operators", test_operators },
	{ "unexpected character", test_unexpected_character },
	{ "locations", test_locations },
	{ "lex_tok_describe", test_describe },
	{ "source files", test_source_files },
	{ "script arguments", test_args },
	{ "argument count and quoting", test_arg_count_and_quoting },
	{ "missing argument", test_arg_missing },
	{ "nested argument, tapset", test_arg_nested_and_tapset },
	{ NULL, NULL },
};

static const struct unit_case pp_cases[] = {
	{ "kernel_v and systemtap_v", test_cond_kernel_version },
	{ "arch, runtime, privilege, guru", test_cond_arch_runtime_privilege },
	{ "CONFIG_", test_cond_config },
	{ "CONFIG_ without a config", test_cond_config_missing },
	{ "&& and ||", test_cond_and_or },
	{ "nesting and position", test_cond_nesting_and_position },
	{ "untaken branch", test_cond_untaken_branch },
	{ "condition errors", test_cond_errors },
	{ "conditional structure errors", test_cond_structure_errors },
	{ "doc comment through a conditional", test_cond_doc_carried },
	{ "macro", test_macro_simple },
	{ "macro parameters", test_macro_params },
	{ "macro with a conditional", test_macro_conditional_body },
	{ "macro recursion", test_macro_recursion },
	{ "macro arity", test_macro_arity },
	{ "@define errors", test_macro_define_errors },
	{ "macro scope and library", test_macro_scope_and_library },
	{ "macro expansion too large", test_macro_too_large },
	{ NULL, NULL },
};

void unit_register(void)
{
	unit_add_suite("lex", lex_cases);
	unit_add_suite("preproc", pp_cases);
}
