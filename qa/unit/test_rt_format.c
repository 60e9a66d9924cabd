/*
 * test_rt_format.c - runtime/user/format.c: stap printf semantics.
 *
 * Each expected output is worked from stap 4.x's sources: the directive
 * grammar of staptree.cxx (print_format::string_to_components), the
 * compiled printfs of translate.cxx and runtime/vsprintf.c (number(),
 * _stp_vsprint_char/_memory/_binary).  Where stap's own testsuite or the
 * language reference shows the output, the case says so.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "../../runtime/user/format.h"

#define L(v) stp_value_long(v)
#define S(s) stp_value_string(s, sizeof(s) - 1)

static int little_endian(void)
{
	const uint16_t one = 1;

	return *(const char *)&one == 1;
}

static void show(const char *what, const char *p, size_t n)
{
	size_t i;

	fprintf(stderr, "\n    %s (%zu bytes): \"", what, n);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			fputc(c, stderr);
		else
			fprintf(stderr, "\\%03o", c);
	}
	fprintf(stderr, "\"");
}

/* Compile fmt, print args into a large buffer, compare with want. */
static void check_fmt(const char *want, size_t want_len, const char *fmt,
		      const struct stp_value *args, int nargs)
{
	struct stp_format_error err = { 0 };
	struct stp_format *f = stp_format__new(fmt, strlen(fmt), &err);
	char buf[4096];
	struct stp_out out;
	int rc;

	if (!f) {
		fprintf(stderr, "\n    format \"%s\" refused: %s", fmt, err.msg);
		CU_FAIL_FATAL("format refused");
	}
	stp_out_init(&out, buf, sizeof(buf));
	rc = stp_format_print(&out, f, args, nargs);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_FALSE(out.truncated);
	if (out.len != want_len || memcmp(buf, want, want_len) != 0) {
		fprintf(stderr, "\n    format \"%s\":", fmt);
		show("want", want, want_len);
		show("got ", buf, out.len);
		CU_FAIL("output differs");
	}
	stp_format__free(f);
}

/* want is a string literal (it may hold NUL bytes); args may be empty. */
#define FMT(name, want, fmt, ...)                                                       \
	static void name(void)                                                          \
	{                                                                               \
		struct stp_value a[] = { L(0), __VA_ARGS__ };                           \
		check_fmt(want, sizeof(want) - 1, fmt, a + 1,                           \
			  (int)(sizeof(a) / sizeof(a[0])) - 1);                         \
	}

/* A refused format: the message and the offset of the bad directive. */
static void check_error(const char *fmt, size_t len, size_t offset, const char *msg)
{
	struct stp_format_error err = { 0 };
	struct stp_format *f = stp_format__new(fmt, len, &err);

	CU_ASSERT_PTR_NULL(f);
	stp_format__free(f);
	CU_ASSERT_EQUAL(err.offset, offset);
	CU_ASSERT_STRING_EQUAL(err.msg, msg);
	if (strcmp(err.msg, msg) != 0)
		fprintf(stderr, "\n    got \"%s\" at %zu", err.msg, err.offset);
}

#define ERR(name, fmt, offset, msg)                                                     \
	static void name(void)                                                          \
	{                                                                               \
		check_error(fmt, sizeof(fmt) - 1, offset, msg);                         \
	}

#define EXPECTED_CONV ": expected d, i, u, x, X, o, p, c, s, m, M or b"

/* ---- %d %i: signed, 64-bit (stap number() with STP_SIGN) ---------------- */
FMT(d_plain, "42", "%d", L(42))
FMT(d_negative, "-42", "%d", L(-42))
FMT(d_long_min, "-9223372036854775808", "%d", L(INT64_MIN))	/* no overflow */
FMT(d_long_max, "9223372036854775807", "%i", L(INT64_MAX))
FMT(d_width, "[   42][-42  ]", "[%5d][%-5d]", L(42), L(-42))
/* int1.exp: %016d of -1 is "-000000000000001": sign, then zeros */
FMT(d_zero_pad, "-000000000000001|0009000000000000", "%016d|%016d", L(-1), L(9000000000000))
FMT(d_plus_space, "+42 -42| 42|-42", "%+d %+d|% d|% d", L(42), L(-42), L(42), L(-42))
/* one flag only: "+05" is '+' and width 05, so no zero padding */
FMT(d_plus_then_zero_is_width, "[  +42]", "[%+05d]", L(42))
FMT(d_left_then_zero_is_width, "[42   ]", "[%-05d]", L(42))
FMT(d_precision, "[00042][-00042]", "[%.5d][%.5d]", L(42), L(-42))
FMT(d_width_precision, "[  -00042]", "[%8.5d]", L(-42))
/* number() keeps the 0 flag with a precision: zeros fill the width */
FMT(d_zero_flag_with_precision, "[00000005]", "[%08.3d]", L(5))
/* number() always prints a digit: "%.0d" of 0 is "0", unlike C */
FMT(d_precision_zero_of_zero, "[0]", "[%.0d]", L(0))
FMT(d_width_too_small, "12345", "%2d", L(12345))
/* the 'l' modifier is accepted and changes nothing */
FMT(ld_modifier, "5 ff -1", "%ld %lx %li", L(5), L(255), L(-1))

/* ---- %u: unsigned view of the long -------------------------------------- */
FMT(u_negative, "18446744073709551615,18446744073709550592", "%u,%u", L(-1), L(-1024))
FMT(u_long_min, "9223372036854775808", "%u", L(INT64_MIN))
FMT(u_plus_and_space_ignored, "5|5", "%+u|% u", L(5), L(5))

/* ---- %x %X %o ------------------------------------------------------------ */
FMT(x_plain, "beef BEEF", "%x %X", L(0xbeef), L(0xbeef))
/* int1.exp: -1 and -1024 in hex */
FMT(x_negative, "ffffffffffffffff FFFFFFFFFFFFFC00", "%x %X", L(-1), L(-1024))
FMT(x_special, "0xff 0XFF", "%#x %#X", L(255), L(255))
/* stap writes the prefix for 0 too ("0x0"; C prints "0") */
FMT(x_special_zero, "0x0", "%#x", L(0))
/* "#08" is '#' and width 8: space padded, prefix counted in the width */
FMT(x_special_then_zero_is_width, "[    0x2a]", "[%#08x]", L(42))
FMT(x_zero_pad_precision, "000000000000000a|00ab", "%016x|%.4x", L(10), L(0xab))
/* int1.exp: octal of 10, -1, -1024 */
FMT(o_plain, "12,1777777777777777777777,1777777777777777776000", "%o,%o,%o", L(10), L(-1),
    L(-1024))
/* '#' gives a leading 0, even for 0 ("00"; C prints "0") */
FMT(o_special, "010|00", "%#o|%#o", L(8), L(0))
/* the leading 0 counts in the width */
FMT(o_special_width, "[  010][2a   ]", "[%#5o][%-5x]", L(8), L(42))

/* ---- %p: %#x since stap 1.3 (ptr-1.3.exp) -------------------------------- */
FMT(p_plain, "0x0 0x1 0x12345678abcdef00", "%p %p %p", L(0), L(1), L(0x12345678abcdef00))
FMT(p_width, "                 0x1X  0x12345678abcdef00X", "%20pX%20pX", L(1),
    L(0x12345678abcdef00))
FMT(p_left, "0x12345678          X", "%-20pX", L(0x12345678))
FMT(p_precision, "0x00000000000000000001X", "%.20pX", L(1))
FMT(p_width_precision, "          0x00000000X0x00000001          X", "%20.8pX%-20.8pX", L(0),
    L(1))
FMT(p_negative, "0xffffffffffffffff", "%p", L(-1))
FMT(p_zero_flag, "0x000000000000001234", "%020p", L(0x1234))

/* ---- %c ------------------------------------------------------------------ */
FMT(c_plain, "[A][  a|b  ]", "[%c][%3c|%-3c]", L('A'), L('a'), L('b'))
FMT(c_low_byte, "A", "%c", L(0x141))
FMT(c_zero_flag_pads_spaces, "[  x]", "[%03c]", L('x'))
FMT(c_nul_byte, "a\0b", "a%cb", L(0))
/* '#': C escapes for \n ' \ and octal for other unprintables */
FMT(c_special_escapes, "\\n\\'\\\\\\001\\377\"", "%#c%#c%#c%#c%#c%#c", L('\n'), L('\''),
    L('\\'), L(1), L(0xff), L('"'))
FMT(c_special_width, "[   \\t][\\a]", "[%#5c][%#c]", L('\t'), L('\a'))

/* ---- %s ------------------------------------------------------------------ */
FMT(s_plain, "hello", "%s", S("hello"))
FMT(s_width, "[      ab|cd      ]", "[%8s|%-8s]", S("ab"), S("cd"))
FMT(s_precision, "[abc][    ab]", "[%.3s][%6.2s]", S("abcdef"), S("abcdef"))
FMT(s_empty, "[][   ][]", "[%s][%3s][%.0s]", S(""), S(""), S("xyz"))
/* '.' with no digits leaves the precision unspecified */
FMT(s_dot_without_digits, "[abc]", "[%.s]", S("abc"))
FMT(s_stops_at_nul, "[ab]", "[%s]", S("ab\0cd"))
/* the 0 flag on %s appends a NUL byte (_stp_vsprint_memory) */
FMT(s_zero_flag_appends_nul, "[  ab\0]", "[%04s]", S("ab"))
FMT(s_special_ignored, "a\"b", "%#s", S("a\"b"))

/* ---- %m %M: raw bytes, precision bytes (default 1) ------------------------ */
FMT(m_default_one_byte, "x", "%m", S("xyz"))
FMT(m_precision_keeps_nul, "[a\0b]", "[%.3m]", S("a\0b"))
FMT(m_left_width, "[he   ]", "[%-5.2m]", S("hello"))
FMT(M_hex, "01abff10", "%.4M", S("\x01\xab\xff\x10"))
FMT(M_width_counts_hex_digits, "[      dead]", "[%10.2M]", S("\xde\xad"))
FMT(M_default_one_byte, "7a", "%#M", S("z"))

/* ---- %b: binary, host byte order ------------------------------------------ */
static void b_default_eight_bytes(void)
{
	struct stp_value a[] = { L(0x0102030405060708) };

	if (little_endian())
		check_fmt("\x08\x07\x06\x05\x04\x03\x02\x01", 8, "%b", a, 1);
}

/* langref 9.2: printf("%b%b", 0xc0dedbad, 0x12345678) | hexdump */
static void b_langref_hexdump(void)
{
	struct stp_value a[] = { L(0xc0dedbad), L(0x12345678) };

	if (little_endian())
		check_fmt("\xad\xdb\xde\xc0\0\0\0\0\x78\x56\x34\x12\0\0\0\0", 16, "%b%b", a, 2);
}

/* langref 9.2: "Hello World" from %1b */
FMT(b_langref_hello, "Hello World\n", "%1b%1b%1blo %1b%1brld\n", L(72), L(101), L(108), L(87),
    L(111))
FMT(b_one_byte_truncates, "A", "%1b", L(0x341))

static void b_sizes(void)
{
	struct stp_value a[] = { L(0x4142), L(0x43444546), L(0x47) };

	if (little_endian())
		check_fmt("BAFEDCG", 7, "%2b%4b%.1b", a, 3);
}

FMT(b_width_pads_with_nul, "\0\0\0\0\0\0\0Z", "%8.1b", L('Z'))
FMT(b_left_pads_after, "Z\0\0\0|", "%-4.1b|", L('Z'))

/* width 3 is no size: 8 bytes, no padding */
static void b_odd_width(void)
{
	struct stp_value a[] = { L(1) };

	if (little_endian())
		check_fmt("\x01\0\0\0\0\0\0\0", 8, "%3b", a, 1);
}

/* ---- literals, %%, escapes (stap's lexer, then C) ---------------------- */
FMT(percent_percent, "100% sure", "100%% sure")
FMT(percent_at_end_is_literal, "50%", "50%")
FMT(escapes_control, "a\tb\n\\", "a\\tb\\n\\\\")
/* stap's lexer drops the backslash of \%, so it starts a directive */
FMT(escaped_percent_is_directive, "7", "\\%d", L(7))
/* octal and hex escapes are resolved after parsing: a literal '%' */
FMT(octal_percent_is_literal, "%d%d", "\\045d\\x25d")
FMT(hex_and_octal, "AB\001", "\\x41\\102\\1")
FMT(nul_escape_ends_piece, "ab1xy", "ab\\0cd%dxy", L(1))
FMT(quote_and_unknown_escapes, "say \"hi\" q", "say \\\"hi\\\" \\q")
FMT(no_directives_empty, "", "")

/* ---- '*': width and precision from the arguments ---------------------------- */
FMT(star_width, "[   42]", "[%*d]", L(5), L(42))
/* clamp_t(int, arg, 0, ...): a negative width is 0, not left-justified */
FMT(star_negative_width, "[42]", "[%*d]", L(-5), L(42))
FMT(star_precision, "[ab]", "[%.*s]", L(2), S("abcdef"))
/* a negative precision is 0, unlike C's "as if omitted" */
FMT(star_negative_precision, "[]", "[%.*s]", L(-1), S("abc"))
FMT(star_both, "[   007]", "[%*.*d]", L(6), L(3), L(7))
/* the argument is truncated to int first */
FMT(star_truncated_to_int, "[  1]", "[%*d]", L(0x100000003), L(1))

/* ---- compiled directives and argument kinds -------------------------------- */
static void directives_parsed(void)
{
	const char *body = "a%-08.3lxb%%c%*.*sq";
	struct stp_format *f = stp_format__new(body, strlen(body), NULL);
	const struct stp_directive *d;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL_FATAL(f->ndirs, 5);
	d = f->dirs;
	CU_ASSERT(d[0].conv == 0 && d[0].text_len == 1 && d[0].offset == 0);
	/* '-' is the one flag; "08" is the width */
	CU_ASSERT(d[1].conv == 'x' && d[1].flags == STP_FMT_LEFT);
	CU_ASSERT(d[1].width == 8 && d[1].precision == 3 && d[1].offset == 1);
	CU_ASSERT(d[2].conv == 0 && d[2].text_len == 3 && memcmp(d[2].text, "b%c", 3) == 0);
	CU_ASSERT_EQUAL(d[2].offset, 9);
	CU_ASSERT(d[3].conv == 's' && d[3].width == STP_FMT_STAR);
	CU_ASSERT(d[3].precision == STP_FMT_STAR && d[3].offset == 13);
	CU_ASSERT(d[4].conv == 0 && d[4].offset == 18);
	CU_ASSERT_EQUAL_FATAL(f->nargs, 4);
	CU_ASSERT_EQUAL(f->args[0], STP_ARG_LONG);
	CU_ASSERT_EQUAL(f->args[1], STP_ARG_WIDTH);
	CU_ASSERT_EQUAL(f->args[2], STP_ARG_PRECISION);
	CU_ASSERT_EQUAL(f->args[3], STP_ARG_STRING);
	stp_format__free(f);
}

static void arg_kinds_and_value_types(void)
{
	const char *body = "%p%c%b%m%M%d";
	struct stp_format *f = stp_format__new(body, strlen(body), NULL);
	static const enum stp_arg_kind want[] = {
		STP_ARG_LONG, STP_ARG_LONG, STP_ARG_LONG, STP_ARG_MEMORY, STP_ARG_MEMORY,
		STP_ARG_LONG,
	};
	int i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL_FATAL(f->nargs, 6);
	for (i = 0; i < 6; i++)
		CU_ASSERT_EQUAL(f->args[i], want[i]);
	CU_ASSERT_EQUAL(f->dirs[0].flags, STP_FMT_SPECIAL);	/* p is #x */
	CU_ASSERT_EQUAL(stp_arg_value_type(STP_ARG_MEMORY), STP_VALUE_STRING);
	CU_ASSERT_EQUAL(stp_arg_value_type(STP_ARG_WIDTH), STP_VALUE_LONG);
	stp_format__free(f);
}

/* ---- bad formats: exact text and offset ------------------------------------- */
ERR(err_unknown_conversion, "ab%q", 2, "unknown format conversion '%q'" EXPECTED_CONV)
ERR(err_two_l_modifiers, "%lld", 0, "unknown format conversion '%ll'" EXPECTED_CONV)
ERR(err_h_modifier, "x %5hd", 2, "unknown format conversion '%5h'" EXPECTED_CONV)
ERR(err_two_flags, "%-+5d", 0,
    "invalid format conversion '%-+': only one of the flags - + space # 0 may be given")
ERR(err_incomplete_width, "x%5", 1, "incomplete format conversion '%5' at the end of the string")
ERR(err_incomplete_flag, "%-", 0, "incomplete format conversion '%-' at the end of the string")
ERR(err_incomplete_dot, "ab%.", 2, "incomplete format conversion '%.' at the end of the string")
ERR(err_unprintable_conversion, "%\001", 0, "unknown format conversion '%\\001'" EXPECTED_CONV)
/* offsets are in the body as written: "\n" is two bytes */
ERR(err_offset_after_escape, "\\n%z", 2, "unknown format conversion '%z'" EXPECTED_CONV)
/* an escaped '%' starts the directive at its backslash */
ERR(err_offset_escaped_percent, "a\\%z", 1, "unknown format conversion '%z'" EXPECTED_CONV)
ERR(err_second_directive, "%d %s %y", 6, "unknown format conversion '%y'" EXPECTED_CONV)

static void err_null_error_pointer(void)
{
	CU_ASSERT_PTR_NULL(stp_format__new("%q", 2, NULL));
}

/* ---- truncation and argument checks ---------------------------------------- */
static struct stp_format *compile(const char *body)
{
	struct stp_format *f = stp_format__new(body, strlen(body), NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	return f;
}

static void trunc_literal(void)
{
	struct stp_format *f = compile("hello world");
	char buf[8] = "########";
	struct stp_out out;

	stp_out_init(&out, buf, 5);
	CU_ASSERT_EQUAL(stp_format_print(&out, f, NULL, 0), STP_OUT_TRUNCATED);
	CU_ASSERT_TRUE(out.truncated);
	CU_ASSERT_EQUAL(out.len, 5);
	CU_ASSERT_NSTRING_EQUAL(buf, "hello###", 8);	/* nothing past size */
	stp_format__free(f);
}

static void trunc_number_and_exact_fit(void)
{
	struct stp_format *f = compile("%d");
	struct stp_value v = L(12345);
	char buf[8];
	struct stp_out out;

	stp_out_init(&out, buf, 3);
	CU_ASSERT_EQUAL(stp_format_print(&out, f, &v, 1), STP_OUT_TRUNCATED);
	CU_ASSERT(out.len == 3 && memcmp(buf, "123", 3) == 0);
	stp_out_init(&out, buf, 5);
	CU_ASSERT_EQUAL(stp_format_print(&out, f, &v, 1), 0);
	CU_ASSERT(out.len == 5 && !out.truncated && memcmp(buf, "12345", 5) == 0);
	stp_format__free(f);
}

/*
 * stap's sprintf with MAXSTRINGLEN 5 clamps "%10d" to the 5 bytes left,
 * writes "    1" and puts its NUL over the '1': "    ".  An output of
 * size 4 (MAXSTRINGLEN - 1) gives the same.
 */
static void trunc_width_clamped_like_sprintf(void)
{
	struct stp_format *f = compile("%10d");
	struct stp_value v = L(1);
	char buf[8];
	struct stp_out out;

	stp_out_init(&out, buf, 4);
	CU_ASSERT_EQUAL(stp_format_print(&out, f, &v, 1), STP_OUT_TRUNCATED);
	CU_ASSERT(out.len == 4 && memcmp(buf, "    ", 4) == 0);
	stp_format__free(f);
}

/* _stp_vsprint_binary writes all of the value's bytes or none. */
static void trunc_binary_all_or_nothing(void)
{
	struct stp_format *f = compile("xx%4b");
	struct stp_value v = L(0x41424344);
	char buf[8];
	struct stp_out out;

	stp_out_init(&out, buf, 5);
	CU_ASSERT_EQUAL(stp_format_print(&out, f, &v, 1), STP_OUT_TRUNCATED);
	CU_ASSERT(out.len == 2 && memcmp(buf, "xx", 2) == 0);
	stp_format__free(f);
}

static void trunc_zero_size_and_sticky(void)
{
	struct stp_format *f = compile("a");
	char buf[1];
	struct stp_out out;

	stp_out_init(&out, buf, 0);
	CU_ASSERT_EQUAL(stp_format_print(&out, f, NULL, 0), STP_OUT_TRUNCATED);
	CU_ASSERT_EQUAL(out.len, 0);
	stp_format__free(f);
	f = compile("");
	CU_ASSERT_EQUAL(stp_format_print(&out, f, NULL, 0), STP_OUT_TRUNCATED);
	stp_format__free(f);
}

static void args_mismatch_rejected(void)
{
	struct stp_format *f = compile("x%d%s");
	struct stp_value wrong_type[] = { S("a"), S("b") }, right[] = { L(1), S("b") };
	char buf[16];
	struct stp_out out;

	stp_out_init(&out, buf, sizeof(buf));
	CU_ASSERT_EQUAL(stp_format_print(&out, f, wrong_type, 2), -EINVAL);
	CU_ASSERT_EQUAL(stp_format_print(&out, f, right, 1), -EINVAL);
	CU_ASSERT_EQUAL(out.len, 0);	/* nothing written */
	CU_ASSERT_EQUAL(stp_format_print(&out, f, right, 2), 0);
	CU_ASSERT(out.len == 3 && memcmp(buf, "x1b", 3) == 0);
	stp_format__free(f);
}

/* Printing appends: a second record follows the first. */
static void print_appends(void)
{
	struct stp_format *f = compile("<%d>");
	struct stp_value a = L(1), b = L(22);
	char buf[16];
	struct stp_out out;

	stp_out_init(&out, buf, sizeof(buf));
	stp_format_print(&out, f, &a, 1);
	stp_format_print(&out, f, &b, 1);
	CU_ASSERT(out.len == 7 && memcmp(buf, "<1><22>", 7) == 0);
	stp_format__free(f);
}

/* ---- print/println/printd ----------------------------------------------- */
static void check_print(const char *want, size_t want_len, const struct stp_value *args,
			int nargs, const char *delim, bool newline)
{
	char buf[256];
	struct stp_out out;

	stp_out_init(&out, buf, sizeof(buf));
	CU_ASSERT_EQUAL(stp_print_values(&out, args, nargs, delim, delim ? strlen(delim) : 0,
					 newline), 0);
	CU_ASSERT_EQUAL(out.len, want_len);
	CU_ASSERT(out.len == want_len && memcmp(buf, want, want_len) == 0);
}

static void print_long_and_string(void)
{
	struct stp_value a[] = { S("x"), L(5), L(INT64_MIN) };

	check_print("x5-9223372036854775808", 22, a, 3, NULL, false);
}

/* langref 9.3: printd("/", "one", "two", "three", 4, 5, 6) */
static void printdln_langref(void)
{
	struct stp_value a[] = { S("one"), S("two"), S("three"), L(4), L(5), L(6) };

	check_print("one/two/three/4/5/6\n", 20, a, 6, "/", true);
}

static void print_string_stops_at_nul(void)
{
	struct stp_value a[] = { S("ab\0c") };

	check_print("ab\n", 3, a, 1, NULL, true);
}

/* ---- stp_unescape ------------------------------------------------------------- */
static void check_unescape(const char *body, const char *want, size_t want_len)
{
	char buf[64];
	size_t n = stp_unescape(buf, body, strlen(body));

	CU_ASSERT_EQUAL(n, want_len);
	CU_ASSERT(n == want_len && memcmp(buf, want, n) == 0);
}

static void unescape_all_kinds(void)
{
	check_unescape("a\\n\\t\\\\\\101\\x4a\\7\\q\\\"", "a\n\t\\AJ\7q\"", 9);
	check_unescape("\\a\\b\\f\\r\\v", "\a\b\f\r\v", 5);
}

static void unescape_octal_and_hex_lengths(void)
{
	check_unescape("\\377\\0\\1234", "\377\0S4", 4);	/* three octal digits at most */
	check_unescape("\\x414\\xg", "A4xg", 4);		/* two hex digits at most */
	check_unescape("end\\", "end\\", 4);			/* a lone trailing backslash */
}

#define C(name) { #name, name }

static const struct unit_case format_cases[] = {
	C(d_plain), C(d_negative), C(d_long_min), C(d_long_max), C(d_width), C(d_zero_pad),
	C(d_plus_space), C(d_plus_then_zero_is_width), C(d_left_then_zero_is_width),
	C(d_precision), C(d_width_precision), C(d_zero_flag_with_precision),
	C(d_precision_zero_of_zero), C(d_width_too_small), C(ld_modifier),
	C(u_negative), C(u_long_min), C(u_plus_and_space_ignored),
	C(x_plain), C(x_negative), C(x_special), C(x_special_zero),
	C(x_special_then_zero_is_width), C(x_zero_pad_precision), C(o_plain), C(o_special), C(o_special_width),
	C(p_plain), C(p_width), C(p_left), C(p_precision), C(p_width_precision), C(p_negative),
	C(p_zero_flag),
	C(c_plain), C(c_low_byte), C(c_zero_flag_pads_spaces), C(c_nul_byte),
	C(c_special_escapes), C(c_special_width),
	C(s_plain), C(s_width), C(s_precision), C(s_empty), C(s_dot_without_digits),
	C(s_stops_at_nul), C(s_zero_flag_appends_nul), C(s_special_ignored),
	C(m_default_one_byte), C(m_precision_keeps_nul), C(m_left_width), C(M_hex),
	C(M_width_counts_hex_digits), C(M_default_one_byte),
	C(b_default_eight_bytes), C(b_langref_hexdump), C(b_langref_hello),
	C(b_one_byte_truncates), C(b_sizes), C(b_width_pads_with_nul), C(b_left_pads_after),
	C(b_odd_width),
	C(percent_percent), C(percent_at_end_is_literal), C(escapes_control),
	C(escaped_percent_is_directive), C(octal_percent_is_literal), C(hex_and_octal),
	C(nul_escape_ends_piece), C(quote_and_unknown_escapes), C(no_directives_empty),
	C(star_width), C(star_negative_width), C(star_precision), C(star_negative_precision),
	C(star_both), C(star_truncated_to_int),
	C(directives_parsed), C(arg_kinds_and_value_types),
	C(err_unknown_conversion), C(err_two_l_modifiers), C(err_h_modifier), C(err_two_flags),
	C(err_incomplete_width), C(err_incomplete_flag), C(err_incomplete_dot),
	C(err_unprintable_conversion), C(err_offset_after_escape),
	C(err_offset_escaped_percent), C(err_second_directive), C(err_null_error_pointer),
	C(trunc_literal), C(trunc_number_and_exact_fit), C(trunc_width_clamped_like_sprintf),
	C(trunc_binary_all_or_nothing), C(trunc_zero_size_and_sticky),
	C(args_mismatch_rejected), C(print_appends),
	C(print_long_and_string), C(printdln_langref), C(print_string_stops_at_nul),
	C(unescape_all_kinds), C(unescape_octal_and_hex_lengths),
	{ NULL, NULL },
};

void unit_register(void)
{
	unit_add_suite("rt_format", format_cases);
}
