/*
 * test_regex.c - translator/regex_dfa.c's DFAs against glibc's regexec()
 * (REG_EXTENDED | REG_NOSUB), the matcher user context uses, so that
 * '=~' answers the same in kernel and in user context.
 */
#include <regex.h>
#include <stdio.h>
#include <string.h>
#include "unit.h"
#include "../../translator/regex_dfa.h"

struct pair {
	const char *re, *s;
};

/* Patterns and strings: the DFA must agree with regexec on each. */
static const struct pair pairs[] = {
	{ "abc", "abc" }, { "abc", "xabcx" }, { "abc", "ab" }, { "abc", "" },
	{ "", "" }, { "", "anything" }, { "^", "" }, { "$", "x" }, { "^$", "" },
	{ "^$", "a" }, { "^abc", "abcd" }, { "^abc", "xabc" }, { "abc$", "xabc" },
	{ "abc$", "abcx" }, { "^abc$", "abc" }, { "^abc$", "abcc" },
	{ "a.c", "abc" }, { "a.c", "ac" }, { "a.c", "a\nc" }, { "...", "ab" },
	{ "[abc]", "xxbxx" }, { "[abc]", "xyz" }, { "[^abc]", "abc" },
	{ "[^abc]", "abcd" }, { "[a-f0-9]+$", "zz0ff1" }, { "^[a-f0-9]+$", "zz0ff1" },
	{ "[]a]", "]" }, { "[a-]", "-" }, { "[[:digit:]]", "abc7" },
	{ "^[[:digit:]]+$", "123" }, { "^[[:digit:]]+$", "12a3" },
	{ "[[:alpha:]_][[:alnum:]_]*", "9_x" }, { "[[:space:]]", "a b" },
	{ "[[:upper:]][[:lower:]]", "aBc" }, { "[[:upper:]][[:lower:]]", "aBC" },
	{ "[[:xdigit:]]{4}", "12g45" }, { "[[:xdigit:]]{4}", "1aF9" },
	{ "[[:punct:]]", "abc" }, { "[[:punct:]]", "a.c" },
	{ "a|b", "b" }, { "a|b", "c" }, { "cat|dog", "hotdog" }, { "^(cat|dog)$", "dogs" },
	{ "^(cat|dog)$", "cat" }, { "(a|^b)c", "bc" }, { "(a|^b)c", "xbc" },
	{ "(a$|b)", "xa" }, { "(a$|b)", "ax" }, { "(|a)b", "b" }, { "a|", "zzz" },
	{ "ab*c", "ac" }, { "ab*c", "abbbc" }, { "ab+c", "ac" }, { "ab+c", "abbc" },
	{ "ab?c", "abc" }, { "ab?c", "abbc" }, { "^a{3}$", "aaa" }, { "^a{3}$", "aaaa" },
	{ "^a{2,}$", "a" }, { "^a{2,}$", "aaaaa" }, { "^a{2,4}$", "aaaa" },
	{ "^a{2,4}$", "aaaaa" }, { "^a{,2}$", "aa" }, { "^a{,2}$", "aaa" },
	{ "^a{0}b", "b" }, { "^(ab){2}$", "abab" }, { "^(ab){2}$", "ababab" },
	{ "^(a|b){1,3}c$", "abbc" }, { "^(a|b){1,3}c$", "ababc" },
	{ "x(a|b)*y", "xababay" }, { "x(a|b)*y", "xabcy" }, { "(a*)*", "b" },
	{ "(a+|b)+c", "aabbac" }, { "a\\.b", "a.b" }, { "a\\.b", "axb" },
	{ "\\$", "cost $5" }, { "\\^", "a^b" }, { "a\\|b", "a|b" }, { "a\\|b", "a" },
	{ "\\(x\\)", "(x)" }, { "a)", "a)" }, { "a\\{", "a{" }, { "\\w+", "  " },
	{ "\\w", "_" }, { "\\s", "a\tb" }, { "\\S", "   " }, { "\\W", "abc" },
	{ "[\\]", "\\" }, { "a^b", "a^b" }, { "$a", "a" }, { "^^a", "a" }, { "a$$", "a" },
	{ "(\\.tar\\.(gz|bz2|xz)|\\.zip|\\.tgz|\\.tbz)$", "/tmp/x.tar.gz" },
	{ "(\\.tar\\.(gz|bz2|xz)|\\.zip|\\.tgz|\\.tbz)$", "/tmp/x.tar.gz.orig" },
	{ "(\\.tar\\.(gz|bz2|xz)|\\.zip|\\.tgz|\\.tbz)$", "a.zip" },
	{ "AF_INET*", "AF_INET6" }, { "AF_INET*", "AF_UNIX" }, { "AF_INET*", "AF_INE" },
	{ "^sd[a-z]$", "sda" }, { "^sd[a-z]$", "sda1" }, { "é", "café" },
	{ "[^[:alnum:]]", "abc123" }, { "[^[:alnum:]]", "abc-123" },
	{ "(foo|foobar)baz", "foobarbaz" }, { "^(a|ab)(c|bcd)(d*)$", "abcd" },
	{ "[0-9]+\\.[0-9]+", "v1.25" }, { "[0-9]+\\.[0-9]+", "v1." },
};

static void check_pair(const struct pair *p)
{
	struct regex_dfa d;
	const char *err = NULL;
	regex_t rx;
	int want, got;

	CU_ASSERT_FATAL(regcomp(&rx, p->re, REG_EXTENDED | REG_NOSUB) == 0);
	want = regexec(&rx, p->s, 0, NULL, 0) == 0;
	regfree(&rx);
	if (regex_compile(p->re, REGEX_MAX_STATES, &d, &err) != 0) {
		fprintf(stderr, "\n  /%s/: %s\n", p->re, err);
		CU_FAIL("regex_compile failed");
		return;
	}
	got = regex_match(&d, p->s);
	if (got != want)
		fprintf(stderr, "\n  /%s/ on \"%s\": dfa %d, regexec %d\n", p->re, p->s, got, want);
	CU_ASSERT_EQUAL(got, want);
	regex_free(&d);
}

static void test_pairs(void)
{
	size_t n = sizeof(pairs) / sizeof(pairs[0]);

	CU_ASSERT(n >= 60);
	for (size_t i = 0; i < n; i++)
		check_pair(&pairs[i]);
}

/* Every pattern on every string of the table. */
static void test_cross(void)
{
	size_t n = sizeof(pairs) / sizeof(pairs[0]);

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j += 3)
			check_pair(&(struct pair){ pairs[i].re, pairs[j].s });
}

/* Minimal automata: "abc" needs start, a, ab and matched; bytes fall in 4 classes. */
static void test_minimal(void)
{
	struct regex_dfa d;
	const char *err;

	CU_ASSERT_FATAL(regex_compile("abc", REGEX_MAX_STATES, &d, &err) == 0);
	CU_ASSERT_EQUAL(d.nstates, 4);
	CU_ASSERT_EQUAL(d.nclasses, 4);
	regex_free(&d);
	CU_ASSERT_FATAL(regex_compile("(a|b)*(a|b)*(c|c)", REGEX_MAX_STATES, &d, &err) == 0);
	CU_ASSERT_EQUAL(d.nstates, 2);
	regex_free(&d);
	/* "^ab": start, a, matched, and the dead state "x" leads to */
	CU_ASSERT_FATAL(regex_compile("^ab", REGEX_MAX_STATES, &d, &err) == 0);
	CU_ASSERT_EQUAL(d.nstates, 4);
	CU_ASSERT_EQUAL(d.flags[d.next[d.cls['x']]], REGEX_DEAD);
	CU_ASSERT_EQUAL(d.flags[d.next[d.cls['a']]], 0);
	regex_free(&d);
}

/* Beyond the state limit, and the syntax errors, with their reasons. */
static void test_errors(void)
{
	static const struct pair bad[] = {
		{ "a.{8}$", "its automaton needs 512 states, more than 256" },
		{ "(a", "unmatched '(' at offset 2" },
		{ "*a", "nothing to repeat before a '*', '+', '?' or '{' at offset 1" },
		{ "a{2,1}", "invalid repetition count: the maximum is below the minimum at offset 6" },
		{ "a{1", "unmatched '{' at offset 3" },
		{ "[a", "unterminated bracket expression at offset 2" },
		{ "[[:foo:]]", "unknown character class at offset 8" },
		{ "[z-a]", "invalid range end at offset 4" },
		{ "(a)\\1", "back-references (\\1 to \\9) are not supported at offset 5" },
		{ "\\bx", "word and buffer anchors (\\b \\B \\< \\> \\` \\') are not supported at offset 2" },
		{ "a{300}", "repetition count above 255 at offset 5" },
	};
	struct regex_dfa d;
	const char *err;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = NULL;
		CU_ASSERT_EQUAL(regex_compile(bad[i].re, REGEX_MAX_STATES, &d, &err), -1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(err);
		if (strcmp(err, bad[i].s))
			fprintf(stderr, "\n  /%s/: \"%s\"\n", bad[i].re, err);
		CU_ASSERT_STRING_EQUAL(err, bad[i].s);
	}
}

static const struct unit_case regex_cases[] = {
	{ "pairs agree with regexec", test_pairs },
	{ "every pattern on every string", test_cross },
	{ "minimal automata", test_minimal },
	{ "errors", test_errors },
	{ NULL, NULL },
};

void unit_register(void)
{
	unit_add_suite("regex", regex_cases);
}
