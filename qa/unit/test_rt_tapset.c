/*
 * test_rt_tapset.c - runtime/user/tapset_user.c: the tapset services in
 * user context, and through them runtime/stp_strings.h, the string code
 * that kernel context runs too (qa/bpf/run.sh checks the kernel side
 * against this one).
 *
 * Expected strings are worked out from stap's runtime (_stp_text_str in
 * stp_string.c), the kernel's simple_strtol() and the C library, as each
 * case says.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"
#include "../../runtime/user/kread.h"
#include "../../runtime/user/stp_user.h"
#include "../../runtime/user/tapset_user.h"

/* What the services asked of the user-context runtime (stp_user.h), recorded. */
static int errors, warnings, exited;
static char warning[MAXSTRINGLEN];

void stp_raise_msg(struct context *c, const char *msg)
{
	errors++;
	c->error = STP_ERR_RAISED;
	snprintf(c->errmsg, MAXSTRINGLEN, "%s", *msg ? msg : "unknown error");
}

void stp_send_warn(struct context *c, const char *msg)
{
	warnings++;
	snprintf(warning, sizeof(warning), "%s", msg);
}

void stp_send_system(struct context *c, const char *cmd)
{
}

void stp_send_switch_file(struct context *c)
{
}

void stp_request_exit(struct context *c)
{
	exited = 1;
}

void stp_request_abort(struct context *c)
{
	exited = 2;
	c->error = STP_ERR_ABORT;
}

static struct stp_uctx uctx;
static struct stp_meta_probe probe;
static char errmsg[MAXSTRINGLEN];
static struct context ctx;
static struct stp_rt_info rt;
static char out[MAXSTRINGLEN];

/* A context for a begin probe, nothing recorded yet. */
static struct context *fresh(void)
{
	memset(&uctx, 0, sizeof(uctx));
	memset(&probe, 0, sizeof(probe));
	memset(&ctx, 0, sizeof(ctx));
	probe.point = "begin";
	probe.kind = STP_PROBE_BEGIN;
	probe.context = STP_CTX_USER;
	ctx.u = &uctx;
	ctx.probe = &probe;
	ctx.err_site = -1;
	ctx.errmsg = errmsg;
	errmsg[0] = '\0';
	errors = warnings = exited = 0;
	warning[0] = '\0';
	memset(out, 'X', sizeof(out));
	out[sizeof(out) - 1] = '\0';
	stp_tapset_user_init(&rt);
	stp_tapset_user_set_maxstringlen(MAXSTRINGLEN);
	return &ctx;
}

#define STR_EQ(got, want)                                                                  \
	do {                                                                               \
		if (strcmp((got), (want)) != 0)                                            \
			fprintf(stderr, "\n    got \"%s\", want \"%s\"", (got), (want));     \
		CU_ASSERT_STRING_EQUAL((got), (want));                                     \
	} while (0)

#define LONG_EQ(got, want)                                                                 \
	do {                                                                               \
		long long g_ = (got), w_ = (want);                                         \
		if (g_ != w_)                                                              \
			fprintf(stderr, "\n    %s: got %lld, want %lld", #got, g_, w_);       \
		CU_ASSERT_EQUAL(g_, w_);                                                   \
	} while (0)

/* A string of N copies of CH (N < MAXSTRINGLEN). */
static const char *repeat(char ch, int n)
{
	static char buf[MAXSTRINGLEN];

	memset(buf, ch, (size_t)n);
	buf[n] = '\0';
	return buf;
}

/* ---- strlen, substr, char_at ---- */

static void test_strlen(void)
{
	struct context *c = fresh();

	LONG_EQ(stp_strlen(c, ""), 0);
	LONG_EQ(stp_strlen(c, "abc"), 3);
	LONG_EQ(stp_strlen(c, "caf\xc3\xa9"), 5);	/* bytes, not characters */
	LONG_EQ(stp_strlen(c, repeat('a', MAXSTRINGLEN - 1)), MAXSTRINGLEN - 1);
}

static void test_strlen_small_limit(void)
{
	struct context *c = fresh();

	stp_tapset_user_set_maxstringlen(8);
	LONG_EQ(stp_strlen(c, "abcdefghijkl"), 7);	/* never past MAXSTRINGLEN - 1 */
	stp_substr(c, out, "abcdefghijkl", 2, 100);
	STR_EQ(out, "cdefg");
}

static void test_substr(void)
{
	struct context *c = fresh();

	stp_substr(c, out, "hello world", 6, 5);
	STR_EQ(out, "world");
	stp_substr(c, out, "hello world", 0, 1);
	STR_EQ(out, "h");
	stp_substr(c, out, "hello world", 6, 100);	/* cut at the end */
	STR_EQ(out, "world");
	stp_substr(c, out, "hello world", 10, 1);
	STR_EQ(out, "d");
}

static void test_substr_empty(void)
{
	struct context *c = fresh();

	stp_substr(c, out, "hello", 5, 1);	/* START at the NUL */
	STR_EQ(out, "");
	stp_substr(c, out, "hello", -1, 3);
	STR_EQ(out, "");
	stp_substr(c, out, "hello", 1, 0);
	STR_EQ(out, "");
	stp_substr(c, out, "hello", 1, -4);
	STR_EQ(out, "");
	stp_substr(c, out, "", 0, 4);
	STR_EQ(out, "");
}

static void test_substr_in_place(void)
{
	struct context *c = fresh();

	strcpy(out, "0123456789");
	stp_substr(c, out, out, 3, 4);
	STR_EQ(out, "3456");
	stp_substr(c, out, out, 0, 2);
	STR_EQ(out, "34");
}

static void test_char_at(void)
{
	struct context *c = fresh();

	LONG_EQ(stp_char_at(c, "abc", 0), 'a');
	LONG_EQ(stp_char_at(c, "abc", 2), 'c');
	LONG_EQ(stp_char_at(c, "\xff", 0), 255);	/* 0..255, not a signed char */
	LONG_EQ(errors, 0);
}

static void test_char_at_outside(void)
{
	struct context *c = fresh();

	LONG_EQ(stp_char_at(c, "abc", 3), 0);
	LONG_EQ(errors, 1);
	STR_EQ(c->errmsg, "position 3 is outside the string");
	LONG_EQ(stp_char_at(c, "abc", -1), 0);
	LONG_EQ(errors, 2);
	STR_EQ(c->errmsg, "position -1 is outside the string");
}

/* ---- strpos, strspn, strcspn ---- */

static void test_strpos(void)
{
	struct context *c = fresh();

	LONG_EQ(stp_strpos(c, "hello world", "world"), 6);
	LONG_EQ(stp_strpos(c, "hello world", "hello"), 0);
	LONG_EQ(stp_strpos(c, "hello world", "o"), 4);	/* the first one */
	LONG_EQ(stp_strpos(c, "hello world", "d"), 10);	/* at the very end */
	LONG_EQ(stp_strpos(c, "aaab", "aab"), 1);	/* a partial match first */
}

static void test_strpos_none(void)
{
	struct context *c = fresh();

	LONG_EQ(stp_strpos(c, "hello", "xyz"), -1);
	LONG_EQ(stp_strpos(c, "hello", "hello!"), -1);	/* longer than S */
	LONG_EQ(stp_strpos(c, "", "a"), -1);
	LONG_EQ(stp_strpos(c, "hello", "lo!"), -1);	/* runs off the end */
}

static void test_strpos_empty(void)
{
	struct context *c = fresh();

	LONG_EQ(stp_strpos(c, "hello", ""), 0);
	LONG_EQ(stp_strpos(c, "", ""), 0);
}

static void test_strpos_long(void)
{
	struct context *c = fresh();
	char s[MAXSTRINGLEN];

	/* the worst case of the search: "aa...ab" in "aa...a" then "b" at the end */
	memset(s, 'a', MAXSTRINGLEN - 2);
	s[MAXSTRINGLEN - 2] = 'b';
	s[MAXSTRINGLEN - 1] = '\0';
	LONG_EQ(stp_strpos(c, s, "aaaaaaaaab"), MAXSTRINGLEN - 11);
	LONG_EQ(stp_strpos(c, s, "c"), -1);
}

static void test_strspn(void)
{
	struct context *c = fresh();

	LONG_EQ(stp_strspn(c, "  \tword", " \t"), 3);
	LONG_EQ(stp_strspn(c, "word", " \t"), 0);
	LONG_EQ(stp_strspn(c, "abcabc", "abc"), 6);
	LONG_EQ(stp_strspn(c, "abc", ""), 0);
	LONG_EQ(stp_strspn(c, "\xc3\xa9\xc3x", "\xc3\xa9"), 3);	/* bytes above 127 */
}

static void test_strcspn(void)
{
	struct context *c = fresh();

	LONG_EQ(stp_strcspn(c, "key=value", "=:"), 3);
	LONG_EQ(stp_strcspn(c, "key", "=:"), 3);
	LONG_EQ(stp_strcspn(c, "key", ""), 3);
	LONG_EQ(stp_strcspn(c, "", "x"), 0);
	LONG_EQ(stp_strcspn(c, "ab\xff", "\xff"), 2);
}

/* ---- strtol: the kernel's simple_strtol() ---- */

static void test_strtol_decimal(void)
{
	struct context *c = fresh();

	LONG_EQ(stp_strtol(c, "1234", 10), 1234);
	LONG_EQ(stp_strtol(c, "-1234", 10), -1234);
	LONG_EQ(stp_strtol(c, "12abc", 10), 12);	/* stops at the first non-digit */
	LONG_EQ(stp_strtol(c, "0012", 10), 12);
	LONG_EQ(stp_strtol(c, "9223372036854775807", 10), INT64_MAX);
}

static void test_strtol_no_digits(void)
{
	struct context *c = fresh();

	LONG_EQ(stp_strtol(c, "", 10), 0);
	LONG_EQ(stp_strtol(c, "abc", 10), 0);
	LONG_EQ(stp_strtol(c, " 12", 10), 0);	/* no blanks skipped, as the kernel */
	LONG_EQ(stp_strtol(c, "+12", 10), 0);	/* and no '+' */
	LONG_EQ(stp_strtol(c, "-", 10), 0);
	LONG_EQ(stp_strtol(c, "8", 8), 0);
}

static void test_strtol_base0(void)
{
	struct context *c = fresh();

	LONG_EQ(stp_strtol(c, "0x1f", 0), 31);
	LONG_EQ(stp_strtol(c, "0X1F", 0), 31);
	LONG_EQ(stp_strtol(c, "017", 0), 15);
	LONG_EQ(stp_strtol(c, "019", 0), 1);	/* octal: 9 is not a digit */
	LONG_EQ(stp_strtol(c, "42", 0), 42);
	LONG_EQ(stp_strtol(c, "-0x10", 0), -16);
	LONG_EQ(stp_strtol(c, "0x", 0), 0);	/* no hex digit after 0x: octal 0 */
	LONG_EQ(stp_strtol(c, "0xg", 0), 0);
}

static void test_strtol_bases(void)
{
	struct context *c = fresh();

	LONG_EQ(stp_strtol(c, "ff", 16), 255);
	LONG_EQ(stp_strtol(c, "0xff", 16), 255);	/* base 16 takes a 0x prefix */
	LONG_EQ(stp_strtol(c, "0xff", 10), 0);	/* others do not */
	LONG_EQ(stp_strtol(c, "1012", 2), 5);
	LONG_EQ(stp_strtol(c, "777", 8), 511);
	LONG_EQ(stp_strtol(c, "zz", 36), 1295);
	LONG_EQ(stp_strtol(c, "Zz", 36), 1295);
	LONG_EQ(stp_strtol(c, "19z", 20), 1 * 20 + 9);	/* z is 35: not a digit in base 20 */
	LONG_EQ(stp_strtol(c, "19j", 20), 1 * 400 + 9 * 20 + 19);
}

static void test_strtol_wraps(void)
{
	struct context *c = fresh();

	/* 2^64 + 1 wraps to 1, as the kernel's unchecked accumulation does */
	LONG_EQ(stp_strtol(c, "18446744073709551617", 10), 1);
	LONG_EQ(stp_strtol(c, "ffffffffffffffff", 16), -1);
}

/* ---- text_str: stap's _stp_text_str() ---- */

static void text(const char *in, int64_t inlen, int64_t outlen, int64_t quoted, const char *want)
{
	struct context *c = fresh();

	stp_text_str(c, out, in, inlen, outlen, quoted);
	STR_EQ(out, want);
	LONG_EQ(errors, 0);
}

static void test_text_plain(void)
{
	text("hello, world ~!", 0, 0, 0, "hello, world ~!");
	text("", 0, 0, 0, "");
}

static void test_text_named_escapes(void)
{
	text("\a\b\f\n\r\t\v\"\\", 0, 0, 0, "\\a\\b\\f\\n\\r\\t\\v\\\"\\\\");
}

static void test_text_octal(void)
{
	text("\x01" "A\x1b\x7f", 0, 0, 0, "\\001A\\033\\177");
	text("\xff\xfe", 0, 0, 0, "\\377\\376");	/* not UTF-8 */
}

static void test_text_utf8(void)
{
	text("caf\xc3\xa9", 0, 0, 0, "caf\\u00E9");
	text("\xe2\x82\xac", 0, 0, 0, "\\u20AC");
	text("\xf0\x9f\x98\x80!", 0, 0, 0, "\\U0001F600!");
}

static void test_text_bad_utf8(void)
{
	text("\xc3", 0, 0, 0, "\\303");				/* cut short */
	text("\xc3(", 0, 0, 0, "\\303(");			/* bad continuation */
	text("\xc0\x80", 0, 0, 0, "\\300\\200");		/* overlong NUL */
	text("\xed\xa0\x80", 0, 0, 0, "\\355\\240\\200");	/* a surrogate */
	text("\xf4\x90\x80\x80", 0, 0, 0, "\\364\\220\\200\\200");	/* past U+10FFFF */
	text("\xe2\x82\xac", 2, 0, 0, "\\342\\202");		/* INLEN cuts the sequence */
}

static void test_text_limits(void)
{
	text("abcdef", 0, 3, 0, "abc");
	text("abcdef", 3, 0, 0, "abc");
	text("ab\x01", 0, 5, 0, "ab");		/* \001 does not fit whole */
	text("ab\x01", 0, 6, 0, "ab\\001");
}

static void test_text_quoted(void)
{
	text("abc", 0, 0, 1, "\"abc\"");
	text("", 0, 0, 1, "\"\"");
	text("a\"b", 0, 0, 1, "\"a\\\"b\"");
	/* budget 8 - 2: "abcdef" fills it, 'g' is left over: the end becomes "... */
	text("abcdefghij", 0, 8, 1, "\"abc\"...");
	/* exactly the budget: no dots */
	text("abcdef", 0, 8, 1, "\"abcdef\"");
	/* INLEN ends the input: not cut, no dots */
	text("abcdefghij", 3, 0, 1, "\"abc\"");
}

static void test_text_quoted_cut_escape(void)
{
	/* the cut would split \n: the whole escape goes */
	text("ab\ncdefg", 0, 8, 1, "\"ab\"...");
	/* OUTLEN below 5 counts as 5 */
	text("abcdef", 0, 1, 1, "\"\"...");
}

static void test_text_long_input(void)
{
	char want[MAXSTRINGLEN];

	/* 511 tabs would need 1022 bytes: 255 escapes fit */
	snprintf(want, sizeof(want), "%s", "");
	for (int i = 0; i < (MAXSTRINGLEN - 1) / 2; i++)
		strcat(want, "\\t");
	text(repeat('\t', MAXSTRINGLEN - 1), 0, 0, 0, want);
}

/* ---- the probe point ---- */

static void pp_case(const char *pp, const char *func, const char *mod)
{
	struct context *c = fresh();

	probe.point = pp;
	stp_pp(c, out);
	STR_EQ(out, pp);
	stp_probefunc(c, out);
	STR_EQ(out, func);
	stp_probemod(c, out);
	STR_EQ(out, mod);
	LONG_EQ(stp_is_return(c), 0);
}

static void test_pp(void)
{
	pp_case("begin", "", "");
	pp_case("timer.ms(100)", "", "");
	pp_case("kernel.trace(\"sched:sched_switch\")", "", "kernel");
	pp_case("kernel.function(\"vfs_read@fs/read_write.c:450\").return", "vfs_read", "kernel");
	pp_case("kprobe.function(\"do_sys_open\")", "do_sys_open", "kernel");
	pp_case("module(\"ext4\").function(\"ext4_file_open\")", "ext4_file_open", "ext4");
	pp_case("process(\"/bin/ls\").function(\"main\")", "main", "");
}

/* ---- the task (the test process itself) ---- */

static void test_ids(void)
{
	struct context *c = fresh();

	LONG_EQ(stp_pid(c), getpid());
	LONG_EQ(stp_tid(c), gettid());
	LONG_EQ(stp_ppid(c), getppid());
	LONG_EQ(stp_pgrp(c), getpgrp());
	LONG_EQ(stp_sid(c), getsid(0));
	LONG_EQ(stp_uid(c), getuid());
	LONG_EQ(stp_gid(c), getgid());
	LONG_EQ(stp_euid(c), geteuid());
	LONG_EQ(stp_egid(c), getegid());
}

static void test_execname(void)
{
	struct context *c = fresh();
	char saved[17] = "";

	prctl(PR_GET_NAME, saved);
	prctl(PR_SET_NAME, "tapset-unit-name");	/* cut to 15 by the kernel */
	stp_execname(c, out);
	STR_EQ(out, "tapset-unit-nam");
	prctl(PR_SET_NAME, saved);
}

static void test_pexecname(void)
{
	struct context *c = fresh();
	char path[64], want[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)getppid());
	f = fopen(path, "r");
	if (f && fgets(want, sizeof(want), f))
		want[strcspn(want, "\n")] = '\0';
	if (f)
		fclose(f);
	stp_pexecname(c, out);
	STR_EQ(out, want);
	CU_ASSERT(out[0] != '\0');
}

static void test_cpu(void)
{
	struct context *c = fresh();
	int64_t cpu = stp_cpu(c);

	CU_ASSERT(cpu >= 0 && cpu < rt.ncpus);
	CU_ASSERT(rt.ncpus >= sysconf(_SC_NPROCESSORS_ONLN));
}

static void test_cmdline(void)
{
	struct context *c = fresh();
	uint64_t start = stp_cmdline_start(c), end = stp_cmdline_end(c);
	char want[MAXSTRINGLEN] = "";
	FILE *f = fopen("/proc/self/cmdline", "r");

	if (f && !fgets(want, sizeof(want), f))
		want[0] = '\0';	/* fgets stops at nothing: the NUL ends argv[0] */
	if (f)
		fclose(f);
	CU_ASSERT(start != 0 && end > start);
	LONG_EQ(stp_read_user_string(c, out, start, (int64_t)(end - start)),
		(long long)strlen(want));
	STR_EQ(out, want);
	LONG_EQ(errors, 0);
}

/* ---- what the runner says: target, arguments, time zone ---- */

static void test_target_and_args(void)
{
	static const char *const args[] = { "one", "two words", "" };
	struct context *c;

	stp_rt_info_init(&rt, 4242, 3, args);
	c = fresh();
	uctx.target = 4242;	/* the runner sets both */
	LONG_EQ(stp_target(c), 4242);
	LONG_EQ(rt.target, 4242);
	LONG_EQ(stp_script_argc(c), 3);
	stp_script_arg(c, 2, out);
	STR_EQ(out, "two words");
	stp_script_arg(c, 3, out);
	STR_EQ(out, "");
	stp_script_arg(c, 4, out);
	STR_EQ(out, "");
	stp_script_arg(c, 0, out);
	STR_EQ(out, "");
}

/* Without a stp_rt_info (no dlsym'd init), the uctx's arguments. */
static void test_args_from_uctx(void)
{
	static const char *const args[] = { "x", "why" };
	struct context *c = fresh();

	stp_tapset_user_init(NULL);
	uctx.argc = 2;
	uctx.argv = args;
	LONG_EQ(stp_script_argc(c), 2);
	stp_script_arg(c, 2, out);
	STR_EQ(out, "why");
	stp_script_arg(c, 3, out);
	STR_EQ(out, "");
}

static void test_args_overflow(void)
{
	const char *args[STP_RT_MAXARGS + 2];
	char big[STP_RT_ARGBYTES];
	struct context *c;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (int i = 0; i < STP_RT_MAXARGS + 2; i++)
		args[i] = "a";
	args[1] = big;	/* too long for the store: reads as "" */
	stp_rt_info_init(&rt, 0, STP_RT_MAXARGS + 2, args);
	c = fresh();
	LONG_EQ(stp_script_argc(c), STP_RT_MAXARGS + 2);	/* all counted */
	stp_script_arg(c, 2, out);
	STR_EQ(out, "");
	stp_script_arg(c, STP_RT_MAXARGS, out);
	STR_EQ(out, "a");
	stp_script_arg(c, STP_RT_MAXARGS + 1, out);	/* past the store */
	STR_EQ(out, "");
	stp_rt_info_init(&rt, 0, 0, NULL);
}

static void test_time_zone(void)
{
	char *saved = getenv("TZ") ? strdup(getenv("TZ")) : NULL;
	struct context *c;

	setenv("TZ", "EST5", 1);
	stp_rt_info_init(&rt, 0, 0, NULL);
	c = fresh();
	LONG_EQ(stp_tz_gmtoff(c), 5 * 3600);	/* seconds west of UTC */
	stp_tz_name(c, out);
	STR_EQ(out, "EST");
	setenv("TZ", "UTC0", 1);
	stp_rt_info_init(&rt, 0, 0, NULL);
	LONG_EQ(stp_tz_gmtoff(c), 0);
	stp_tz_name(c, out);
	STR_EQ(out, "UTC");
	if (saved)
		setenv("TZ", saved, 1);
	else
		unsetenv("TZ");
	free(saved);
	stp_rt_info_init(&rt, 0, 0, NULL);
}

/* ---- clocks ---- */

static int64_t now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void test_clocks(void)
{
	struct context *c = fresh();
	int64_t real = now_ns(CLOCK_REALTIME), mono = now_ns(CLOCK_MONOTONIC);
	int64_t t1 = stp_ktime_get_ns(c), t2;

	CU_ASSERT(llabs(stp_gettimeofday_ns(c) - real) < 100000000);
	CU_ASSERT(llabs(t1 - mono) < 100000000);
	t2 = stp_local_clock_ns(c);
	CU_ASSERT(t2 >= t1);
	CU_ASSERT(stp_cpu_clock_ns(c, 0) >= t2);
	LONG_EQ(errors, 0);
}

static void test_cpu_clock_bad_cpu(void)
{
	struct context *c = fresh();
	char want[64];

	LONG_EQ(stp_cpu_clock_ns(c, rt.ncpus), 0);
	snprintf(want, sizeof(want), "cpu_clock_ns: cpu %lld does not exist", (long long)rt.ncpus);
	STR_EQ(c->errmsg, want);
	LONG_EQ(stp_cpu_clock_ns(c, -1), 0);
	STR_EQ(c->errmsg, "cpu_clock_ns: cpu -1 does not exist");
	LONG_EQ(errors, 2);
}

static void test_hz_and_jiffies(void)
{
	struct context *c = fresh();
	int64_t hz = stp_hz(c), j1, j2, want;
	struct timespec pause = { 0, 100000000 }, t1, t2;

	CU_ASSERT(hz == 100 || hz == 250 || hz == 300 || hz == 1000);
	LONG_EQ(hz, rt.hz);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	j1 = stp_jiffies(c);
	nanosleep(&pause, NULL);
	j2 = stp_jiffies(c);
	clock_gettime(CLOCK_MONOTONIC, &t2);
	/*
	 * at least the tenth of a second slept, at most the time that
	 * really went by around the two reads (a busy machine oversleeps),
	 * in jiffies, give or take a tick or two
	 */
	want = ((t2.tv_sec - t1.tv_sec) * 1000000000LL + (t2.tv_nsec - t1.tv_nsec)) * hz /
	       1000000000LL;
	CU_ASSERT(j2 - j1 >= hz / 10 - 2 && j2 - j1 <= want + 2);
	CU_ASSERT(j1 > 0);
}

static void test_cycles(void)
{
	struct context *c = fresh();
	int64_t a = stp_get_cycles(c), b = stp_get_cycles(c);

#if defined(__x86_64__) || defined(__aarch64__)
	CU_ASSERT(a != 0 && b >= a);
#else
	LONG_EQ(a, 0);
	LONG_EQ(b, 0);
#endif
}

/* ---- memory: this process's own ---- */

static void test_read_user_int(void)
{
	struct context *c = fresh();
	static volatile int8_t s8 = -3;
	static volatile int16_t s16 = -300;
	static volatile int32_t s32 = -70000;
	static volatile uint64_t u64 = 0x8000000000000001ull;

	LONG_EQ(stp_read_user_int(c, (uintptr_t)&s8, 1, 1), -3);
	LONG_EQ(stp_read_user_int(c, (uintptr_t)&s8, 1, 0), 253);
	LONG_EQ(stp_read_user_int(c, (uintptr_t)&s16, 2, 1), -300);
	LONG_EQ(stp_read_user_int(c, (uintptr_t)&s16, 2, 0), 65236);
	LONG_EQ(stp_read_user_int(c, (uintptr_t)&s32, 4, 1), -70000);
	LONG_EQ(stp_read_user_int(c, (uintptr_t)&s32, 4, 0), 4294897296);
	LONG_EQ(stp_read_user_int(c, (uintptr_t)&u64, 8, 0), (int64_t)0x8000000000000001ull);
	LONG_EQ(errors, 0);
}

static void test_read_user_faults(void)
{
	struct context *c = fresh();

	LONG_EQ(stp_read_user_int(c, 0, 4, 1), 0);
	STR_EQ(c->errmsg, "user read fault at 0x0");
	LONG_EQ(stp_read_user_int(c, (uintptr_t)&ctx, 3, 1), 0);
	STR_EQ(c->errmsg, "user read of 3 bytes: the size must be 1, 2, 4 or 8");
	LONG_EQ(stp_read_user_string(c, out, 0x1000, 10), -EFAULT);
	STR_EQ(out, "");
	STR_EQ(c->errmsg, "user string read fault at 0x1000");
	LONG_EQ(errors, 3);
}

static void test_read_user_string(void)
{
	struct context *c = fresh();
	static const char s[] = "a user string";

	LONG_EQ(stp_read_user_string(c, out, (uintptr_t)s, 100), 13);
	STR_EQ(out, s);
	LONG_EQ(stp_read_user_string(c, out, (uintptr_t)s, 6), 6);
	STR_EQ(out, "a user");
	LONG_EQ(stp_read_user_string(c, out, (uintptr_t)s, 0), 0);
	STR_EQ(out, "");
	LONG_EQ(errors, 0);
}

/* A string that ends at the end of a page whose next page is unmapped. */
static void test_read_user_string_page_end(void)
{
	struct context *c = fresh();
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CU_ASSERT_FATAL(p != MAP_FAILED);
	munmap(p + page, page);
	memcpy(p + page - 4, "end", 4);
	LONG_EQ(stp_read_user_string(c, out, (uintptr_t)(p + page - 4), 100), 3);
	STR_EQ(out, "end");
	memcpy(p + page - 4, "endX", 4);	/* no NUL before the hole: a fault */
	LONG_EQ(stp_read_user_string(c, out, (uintptr_t)(p + page - 4), 100), -EFAULT);
	LONG_EQ(errors, 1);
	LONG_EQ(stp_read_user_string(c, out, (uintptr_t)(p + page - 4), 4), 4);	/* N stops first */
	STR_EQ(out, "endX");
	munmap(p, page);
}

/* The kernel's _stext from /proc/kallsyms, 0 when hidden (kptr_restrict) or absent. */
static uint64_t kernel_text(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256], name[128], type;
	unsigned long long addr;
	uint64_t found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %127s", &addr, &type, name) == 3 &&
		    strcmp(name, "_stext") == 0)
			found = addr;
	if (f)
		fclose(f);
	return found;
}

/* Kernel memory in user context: kread.c's BPF program reads it, faults are errors. */
static void test_read_kernel(void)
{
	struct context *c = fresh();
	uint64_t text = kernel_text();

	LONG_EQ(stp_read_kernel_int(c, 0x8, 8, 0), 0);
	STR_EQ(c->errmsg, "kernel read fault at 0x8");
	LONG_EQ(stp_read_kernel_string(c, out, 0x10, 10), -EFAULT);
	STR_EQ(c->errmsg, "kernel string read fault at 0x10");
	LONG_EQ(stp_read_kernel_string(c, out, 0x10, 0), 0);
	LONG_EQ(errors, 2);
	if (text && !stp_kread_unavailable()) {
		stp_read_kernel_int(c, text, 8, 0);	/* readable: no error */
		LONG_EQ(errors, 2);
	}
}

/* ---- control ---- */

static void test_error_warn(void)
{
	struct context *c = fresh();

	stp_error(c, "it broke");
	STR_EQ(c->errmsg, "it broke");
	stp_error(c, "");
	STR_EQ(c->errmsg, "unknown error");
	LONG_EQ(errors, 2);
	stp_warn(c, "careful");
	STR_EQ(warning, "careful");
	LONG_EQ(warnings, 1);
	LONG_EQ(exited, 0);
}

static void test_exit_abort(void)
{
	struct context *c = fresh();

	stp_exit(c);
	LONG_EQ(exited, 1);
	stp_abort(c);
	LONG_EQ(exited, 2);
	LONG_EQ(errors, 0);
}

static void test_printk(void)
{
	struct context *c = fresh();
	int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);

	stp_printk(c, 7, "pmstap test_rt_tapset: printk from user context");
	stp_printk(c, 7, "pmstap test_rt_tapset: again");
	if (fd >= 0) {
		LONG_EQ(warnings, 0);	/* written */
		close(fd);
	} else {
		LONG_EQ(warnings, 1);	/* said once */
		CU_ASSERT(strstr(warning, "/dev/kmsg") != NULL);
	}
}

/* ---- errno.stp against the C library's names ---- */

/* The name tapset/errno.stp gives E ("" for none), read from the file. */
static void tapset_errno_name(const char *text, int e, char *name, size_t size)
{
	char needle[32];
	const char *p;

	snprintf(needle, sizeof(needle), "if (e == %d) return \"", e);
	p = strstr(text, needle);
	name[0] = '\0';
	if (p)
		snprintf(name, size, "%.*s", (int)strcspn(p + strlen(needle), "\""),
			 p + strlen(needle));
}

static void test_errno_names(void)
{
	static char text[32768];
	FILE *f = fopen("tapset/errno.stp", "r");
	size_t n;
	int checked = 0;

	if (!f)
		f = fopen("../../tapset/errno.stp", "r");
	CU_ASSERT_FATAL(f != NULL);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	for (int e = 1; e < 134; e++) {
		const char *libc = strerrorname_np(e);
		char name[32];

		tapset_errno_name(text, e, name, sizeof(name));
		if (!libc)
			libc = "";
		if (strcmp(name, libc) != 0)
			fprintf(stderr, "\n    errno %d: tapset \"%s\", C library \"%s\"", e, name, libc);
		CU_ASSERT_STRING_EQUAL(name, libc);
		checked++;
	}
	LONG_EQ(checked, 133);
}

void unit_register(void)
{
	static const struct unit_case strings[] = {
		{ "strlen", test_strlen },
		{ "strlen and substr under -D MAXSTRINGLEN=8", test_strlen_small_limit },
		{ "substr", test_substr },
		{ "substr gives \"\"", test_substr_empty },
		{ "substr of itself", test_substr_in_place },
		{ "char_at", test_char_at },
		{ "char_at outside raises", test_char_at_outside },
		{ "strpos", test_strpos },
		{ "strpos finds none", test_strpos_none },
		{ "strpos of \"\"", test_strpos_empty },
		{ "strpos worst case", test_strpos_long },
		{ "strspn", test_strspn },
		{ "strcspn", test_strcspn },
		{ "strtol decimal", test_strtol_decimal },
		{ "strtol with no digits", test_strtol_no_digits },
		{ "strtol base 0", test_strtol_base0 },
		{ "strtol bases 2-36", test_strtol_bases },
		{ "strtol wraps", test_strtol_wraps },
		{ "text_str printable", test_text_plain },
		{ "text_str named escapes", test_text_named_escapes },
		{ "text_str octal", test_text_octal },
		{ "text_str UTF-8", test_text_utf8 },
		{ "text_str bad UTF-8", test_text_bad_utf8 },
		{ "text_str limits", test_text_limits },
		{ "text_str quoted", test_text_quoted },
		{ "text_str quoted cut at an escape", test_text_quoted_cut_escape },
		{ "text_str long input", test_text_long_input },
		{ NULL, NULL },
	};
	static const struct unit_case context[] = {
		{ "pp, probefunc, probemod", test_pp },
		{ "ids", test_ids },
		{ "execname", test_execname },
		{ "pexecname", test_pexecname },
		{ "cpu", test_cpu },
		{ "cmdline", test_cmdline },
		{ "target and arguments", test_target_and_args },
		{ "arguments from the uctx", test_args_from_uctx },
		{ "arguments past the store", test_args_overflow },
		{ "time zone", test_time_zone },
		{ "clocks", test_clocks },
		{ "cpu_clock_ns of no cpu", test_cpu_clock_bad_cpu },
		{ "HZ and jiffies", test_hz_and_jiffies },
		{ "get_cycles", test_cycles },
		{ NULL, NULL },
	};
	static const struct unit_case memory[] = {
		{ "user ints", test_read_user_int },
		{ "user faults", test_read_user_faults },
		{ "user strings", test_read_user_string },
		{ "user string at a page end", test_read_user_string_page_end },
		{ "kernel reads fault", test_read_kernel },
		{ NULL, NULL },
	};
	static const struct unit_case control[] = {
		{ "error and warn", test_error_warn },
		{ "exit and abort", test_exit_abort },
		{ "printk", test_printk },
		{ "errno.stp names", test_errno_names },
		{ NULL, NULL },
	};

	stp_rt_info_init(&rt, 0, 0, NULL);
	unit_add_suite("tapset strings", strings);
	unit_add_suite("tapset context", context);
	unit_add_suite("tapset memory", memory);
	unit_add_suite("tapset control", control);
}
