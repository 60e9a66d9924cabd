/*
 * tapset_verify.c - load tapset_verify.bpf.o and check every kernel-context
 * service against the truth and against its user-context twin.
 *
 *	tapset_verify [-v] OBJECT [SEED]
 *
 * Loading runs the verifier over every service (in a tracepoint, a raw
 * tracepoint and a perf_event program).  Then each case is written to the
 * map `input` and run by a getppid() call of this process, pinned to one
 * CPU, and what the program left in that CPU's context is compared: the
 * context services with what this process knows about itself, the string
 * services with runtime/user/tapset_user.c on the same input (fixed cases,
 * then random ones from SEED), errors with the user side's messages.
 * Prints one line "PASSED FAILED SKIPPED"; the exit status is 1 on failures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../../runtime/user/stp_user.h"
#include "../../runtime/user/tapset_user.h"
#include "tapset_verify.h"

/* The user-context runtime's calls, for the user side's twin of each service. */
void stp_raise_msg(struct context *c, const char *msg)
{
	c->error = STP_ERR_RAISED;
	snprintf(c->errmsg, MAXSTRINGLEN, "%s", *msg ? msg : "unknown error");
}

void stp_send_warn(struct context *c, const char *msg)
{
}

void stp_send_system(struct context *c, const char *cmd)
{
}

void stp_send_switch_file(struct context *c)
{
}

void stp_request_exit(struct context *c)
{
}

void stp_request_abort(struct context *c)
{
	c->error = STP_ERR_ABORT;
}

/* A user context of a begin probe, with room for an error message. */
struct ucase {
	struct stp_uctx u;
	struct stp_meta_probe probe;
	char errmsg[MAXSTRINGLEN];
	struct context c;
};

static struct context *ucontext(struct ucase *uc)
{
	memset(uc, 0, sizeof(*uc));
	uc->probe.point = "begin";
	uc->c.u = &uc->u;
	uc->c.probe = &uc->probe;
	uc->c.errmsg = uc->errmsg;
	uc->c.err_site = -1;
	return &uc->c;
}

/* The records a case sent: kinds and texts. */
#define MAX_RECS 8
static struct {
	int kind, id;
	char text[MAXSTRINGLEN];
} recs[MAX_RECS];
static int nrecs;

static int on_record(void *ctx, void *data, size_t size)
{
	const struct stp_rec_hdr *h = data;
	uint16_t len = 0;

	if (nrecs == MAX_RECS || size < sizeof(*h))
		return 0;
	recs[nrecs].kind = h->kind;
	recs[nrecs].id = h->id;
	recs[nrecs].text[0] = '\0';
	if (h->size >= sizeof(*h) + 2 && h->size <= size) {
		memcpy(&len, (const char *)data + sizeof(*h), 2);
		if (len < MAXSTRINGLEN && sizeof(*h) + 2 + len <= h->size) {
			memcpy(recs[nrecs].text, (const char *)data + sizeof(*h) + 2, len);
			recs[nrecs].text[len] = '\0';
		}
	}
	nrecs++;
	return 0;
}

static int verbose, passed, failed;
static int input_fd, results_fd, control_fd, ncpus, my_cpu;
static struct ring_buffer *ring;
static struct tv_result *results;	/* one per CPU */

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		passed++;
		if (verbose < 2)
			return;
	} else {
		failed++;
	}
	printf(ok ? "ok:   " : "FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* Let handlers run (again: exit() stops them), with this process as target(). */
static int set_running(void)
{
	struct stp_control ctl = { .state = STP_RUN_RUNNING, .target = getpid() };
	uint32_t zero = 0;

	return bpf_map_update_elem(control_fd, &zero, &ctl, BPF_ANY);
}

/* Run one case in the kernel; this CPU's result, its records in recs[]. */
static struct tv_result *run(struct tv_input *in)
{
	uint32_t zero = 0;
	int64_t before;

	if (bpf_map_lookup_elem(results_fd, &zero, results) != 0)
		return NULL;
	before = results[my_cpu].runs;
	if (bpf_map_update_elem(input_fd, &zero, in, BPF_ANY) != 0 || set_running() != 0)
		return NULL;
	nrecs = 0;
	syscall(SYS_getppid);
	ring_buffer__consume(ring);
	if (bpf_map_lookup_elem(results_fd, &zero, results) != 0)
		return NULL;
	if (results[my_cpu].runs != before + 1)
		return NULL;
	return &results[my_cpu];
}

static struct tv_result *run_op(int64_t op, const char *s1, const char *s2, int64_t a, int64_t b,
				int64_t c, uint64_t addr)
{
	static struct tv_input in;
	struct tv_result *r;

	memset(&in, 0, sizeof(in));
	in.op = op;
	in.a = a, in.b = b, in.c = c, in.addr = addr;
	snprintf(in.s1, sizeof(in.s1), "%s", s1 ? s1 : "");
	snprintf(in.s2, sizeof(in.s2), "%s", s2 ? s2 : "");
	r = run(&in);
	check(r != NULL, "op %" PRId64 " ran once on cpu %d", op, my_cpu);
	return r;
}

/* ---- the context services ---- */

static void check_long(const char *what, int64_t got, int64_t want)
{
	check(got == want, "%s: kernel %" PRId64 ", want %" PRId64, what, got, want);
}

static void check_str(const char *what, const char *got, const char *want)
{
	check(strcmp(got, want) == 0, "%s: kernel \"%s\", want \"%s\"", what, got, want);
}

static void check_near(const char *what, int64_t got, int64_t want, int64_t slack)
{
	check(llabs(got - want) <= slack, "%s: kernel %" PRId64 ", want %" PRId64 " +- %" PRId64,
	      what, got, want, slack);
}

/* The context services; returns the address of this task's comm in the kernel. */
static uint64_t test_context(const struct stp_rt_info *rt)
{
	struct ucase ucase;
	struct context *uc = ucontext(&ucase);
	char comm[MAXSTRINGLEN], pcomm[MAXSTRINGLEN];
	struct timespec real, mono;
	struct tv_result *r = run_op(TV_OP_CONTEXT, NULL, NULL, 0, 0, 0, 0);

	if (!r)
		return 0;
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	check_long("pid", r->v[TV_PID], getpid());
	check_long("tid", r->v[TV_TID], gettid());
	check_long("ppid", r->v[TV_PPID], getppid());
	check_long("pgrp", r->v[TV_PGRP], getpgrp());
	check_long("sid", r->v[TV_SID], getsid(0));
	check_long("uid", r->v[TV_UID], getuid());
	check_long("gid", r->v[TV_GID], getgid());
	check_long("euid", r->v[TV_EUID], geteuid());
	check_long("egid", r->v[TV_EGID], getegid());
	check_long("cpu", r->v[TV_CPU], my_cpu);
	check_long("target", r->v[TV_TARGET], getpid());
	check_long("is_return", r->v[TV_IS_RETURN], 1);
	check_long("cmdline_start", r->v[TV_CMDLINE_START], (int64_t)stp_cmdline_start(uc));
	check_long("cmdline_end", r->v[TV_CMDLINE_END], (int64_t)stp_cmdline_end(uc));
	check_long("script_argc", r->v[TV_ARGC], rt->argc);
	check_near("gettimeofday_ns", r->v[TV_TIMEOFDAY],
		   (int64_t)real.tv_sec * 1000000000 + real.tv_nsec, 1000000000);
	check_near("ktime_get_ns", r->v[TV_KTIME],
		   (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec, 1000000000);
	check_near("local_clock_ns", r->v[TV_LOCAL_CLOCK], r->v[TV_KTIME], 1000000000);
	check_long("get_cycles", r->v[TV_CYCLES], 0);
	check_long("HZ", r->v[TV_HZ], stp_kernel_hz());
	check_near("jiffies", r->v[TV_JIFFIES], stp_jiffies(uc), 2 * stp_kernel_hz());
	check_long("tz_gmtoff", r->v[TV_TZ_GMTOFF], rt->tz_gmtoff);
	stp_execname(uc, comm);
	stp_pexecname(uc, pcomm);
	check_str("execname", r->s[TV_S_EXECNAME], comm);
	check_str("pexecname", r->s[TV_S_PEXECNAME], pcomm);
	check_str("pp", r->s[TV_S_PP], "kernel.function(\"vfs_read@fs/read_write.c:450\").return");
	check_str("probefunc", r->s[TV_S_PROBEFUNC], "vfs_read");
	check_str("probemod", r->s[TV_S_PROBEMOD], "kernel");
	check_str("tz_name", r->s[TV_S_TZ_NAME], rt->tz_name);
	return (uint64_t)r->v[TV_COMM_ADDR];
}

/* ---- the string services: kernel against user ---- */

/* Compare one string op's kernel result with the user side's on the same input. */
static void diff_op(int64_t op, const char *s1, const char *s2, int64_t a, int64_t b, int64_t c)
{
	struct ucase ucase;
	struct context *uc = ucontext(&ucase);
	char want[MAXSTRINGLEN] = "";
	int64_t want_r = 0;
	struct tv_result *r = run_op(op, s1, s2, a, b, c, 0);

	switch (op) {
	case TV_OP_STRLEN: want_r = stp_strlen(uc, s1); break;
	case TV_OP_SUBSTR: stp_substr(uc, want, s1, a, b); break;
	case TV_OP_CHAR_AT: want_r = stp_char_at(uc, s1, a); break;
	case TV_OP_STRPOS: want_r = stp_strpos(uc, s1, s2); break;
	case TV_OP_STRSPN: want_r = stp_strspn(uc, s1, s2); break;
	case TV_OP_STRCSPN: want_r = stp_strcspn(uc, s1, s2); break;
	case TV_OP_STRTOL: want_r = stp_strtol(uc, s1, a); break;
	case TV_OP_TEXT_STR: stp_text_str(uc, want, s1, a, b, c); break;
	case TV_OP_SUBSTR_SELF:
		snprintf(want, sizeof(want), "%s", s1);
		stp_substr(uc, want, want, a, b);
		break;
	}
	if (!r)
		return;
	if (op == TV_OP_SUBSTR_SELF)
		memcpy(r->s[0], r->s[1], MAXSTRINGLEN);
	check(r->r == want_r && strcmp(r->s[0], want) == 0 && r->error == uc->error &&
		      strcmp(r->err, uc->errmsg) == 0,
	      "op %" PRId64 " (\"%.40s\", \"%.20s\", %" PRId64 ", %" PRId64 ", %" PRId64
	      "): kernel %" PRId64 " \"%.60s\" error %d \"%s\"; user %" PRId64
	      " \"%.60s\" error %d \"%s\"",
	      op, s1, s2, a, b, c, r->r, r->s[0], (int)r->error, r->err, want_r, want, uc->error,
	      uc->errmsg);
}

/* Strings that fill the buffer: matches and escapes at its very end. */
static void test_strings_long(void)
{
	char s[MAXSTRINGLEN];

	memset(s, 'a', MAXSTRINGLEN - 2);
	s[MAXSTRINGLEN - 2] = 'b';
	s[MAXSTRINGLEN - 1] = '\0';
	diff_op(TV_OP_STRLEN, s, NULL, 0, 0, 0);
	diff_op(TV_OP_STRPOS, s, "aab", 0, 0, 0);
	diff_op(TV_OP_STRPOS, s, "b", 0, 0, 0);
	diff_op(TV_OP_STRPOS, s, "ba", 0, 0, 0);
	diff_op(TV_OP_STRSPN, s, "a", 0, 0, 0);
	diff_op(TV_OP_STRCSPN, s, "b", 0, 0, 0);
	diff_op(TV_OP_SUBSTR, s, NULL, MAXSTRINGLEN - 3, 5, 0);
	diff_op(TV_OP_CHAR_AT, s, NULL, MAXSTRINGLEN - 2, 0, 0);
	diff_op(TV_OP_CHAR_AT, s, NULL, MAXSTRINGLEN - 1, 0, 0);
	diff_op(TV_OP_TEXT_STR, s, NULL, 0, 0, 1);
	memset(s, '\n', MAXSTRINGLEN - 1);
	diff_op(TV_OP_TEXT_STR, s, NULL, 0, 0, 0);
	diff_op(TV_OP_TEXT_STR, s, NULL, 0, 0, 1);
	memset(s, '7', MAXSTRINGLEN - 1);
	diff_op(TV_OP_STRTOL, s, NULL, 8, 0, 0);
}

static void test_strings_fixed(void)
{
	static const char *const texts[] = {
		"", "a", "hello world", "tab\there \"q\" back\\slash\n", "caf\xc3\xa9 \xe2\x82\xac",
		"\xf0\x9f\x98\x80 smile", "\xff\xfe bad \xc3", "\xed\xa0\x80 surrogate",
		"\xc0\x80 overlong", "0x1fz", "-0777", "  12", "zz9", "0x", "-", "function(\"f\")",
	};
	const int n = sizeof(texts) / sizeof(texts[0]);

	for (int i = 0; i < n; i++) {
		const char *t = texts[i];

		diff_op(TV_OP_STRLEN, t, NULL, 0, 0, 0);
		diff_op(TV_OP_SUBSTR, t, NULL, 1, 3, 0);
		diff_op(TV_OP_SUBSTR_SELF, t, NULL, 2, 100, 0);
		diff_op(TV_OP_CHAR_AT, t, NULL, 1, 0, 0);
		diff_op(TV_OP_STRPOS, t, "o", 0, 0, 0);
		diff_op(TV_OP_STRSPN, t, "abcdefghijklmnop ", 0, 0, 0);
		diff_op(TV_OP_STRCSPN, t, " \t\"", 0, 0, 0);
		for (int base = 0; base <= 36; base += base == 0 ? 2 : 6)
			diff_op(TV_OP_STRTOL, t, NULL, base, 0, 0);
		diff_op(TV_OP_TEXT_STR, t, NULL, 0, 0, 0);
		diff_op(TV_OP_TEXT_STR, t, NULL, 0, 12, 1);
		diff_op(TV_OP_TEXT_STR, t, NULL, 5, 9, 1);
	}
	test_strings_long();
}

/* A random string of LEN bytes from an alphabet rich in escapes and UTF-8 pieces. */
static void random_text(char *buf, int len)
{
	static const char alphabet[] = "abcxyz019 -\"\\\t\n\x01\x7f\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xff";

	for (int i = 0; i < len; i++)
		buf[i] = alphabet[rand() % (sizeof(alphabet) - 1)];
	buf[len] = '\0';
}

static void test_strings_random(unsigned seed, int count)
{
	char s1[MAXSTRINGLEN], s2[8];
	static const int64_t ops[] = { TV_OP_STRLEN, TV_OP_SUBSTR, TV_OP_CHAR_AT, TV_OP_STRPOS,
				       TV_OP_STRSPN, TV_OP_STRCSPN, TV_OP_STRTOL, TV_OP_TEXT_STR,
				       TV_OP_SUBSTR_SELF };

	srand(seed);
	for (int i = 0; i < count; i++) {
		int len = rand() % 3 == 0 ? rand() % (MAXSTRINGLEN - 1) : rand() % 24;

		random_text(s1, len);
		random_text(s2, rand() % 3);
		diff_op(ops[rand() % (sizeof(ops) / sizeof(ops[0]))], s1, s2, rand() % 40 - 4,
			rand() % 40 - 4, rand() % 2);
	}
}

/* ---- memory, arguments, errors, control ---- */

/* The case raised WANT, and stp_leave() sent it as an error record. */
static void check_error(struct tv_result *r, const char *want)
{
	if (!r)
		return;
	check(r->error == STP_ERR_RAISED && strcmp(r->err, want) == 0, "error \"%s\", want \"%s\"",
	      r->error ? r->err : "(none)", want);
	check(nrecs == 1 && recs[0].kind == STP_REC_ERROR && strcmp(recs[0].text, want) == 0,
	      "error record \"%s\" (%d records, kind %d)", nrecs ? recs[0].text : "", nrecs,
	      nrecs ? recs[0].kind : 0);
}

/* The case sent exactly one record of KIND with TEXT, raising nothing. */
static void check_record(const char *what, struct tv_result *r, int kind, const char *text)
{
	if (!r)
		return;
	check(r->error == STP_ERR_NONE && nrecs == 1 && recs[0].kind == kind &&
		      strcmp(recs[0].text, text) == 0,
	      "%s: error %d, %d records, kind %d \"%s\"", what, (int)r->error, nrecs,
	      nrecs ? recs[0].kind : 0, nrecs ? recs[0].text : "");
}

/* COMM_ADDR: where the kernel keeps this task's name (from the context case). */
static void test_memory(uint64_t comm_addr)
{
	static volatile int32_t neg = -2;
	static volatile uint64_t big = 0x1122334455667788ull;
	static const char text[] = "user text";
	struct tv_result *r;

	r = run_op(TV_OP_READ_USER_INT, NULL, NULL, 4, 1, 0, (uintptr_t)&neg);
	if (r)
		check_long("user int signed", r->r, -2);
	r = run_op(TV_OP_READ_USER_INT, NULL, NULL, 4, 0, 0, (uintptr_t)&neg);
	if (r)
		check_long("user int unsigned", r->r, 0xfffffffe);
	r = run_op(TV_OP_READ_USER_INT, NULL, NULL, 8, 0, 0, (uintptr_t)&big);
	if (r)
		check_long("user long", r->r, (int64_t)big);
	r = run_op(TV_OP_READ_USER_INT, NULL, NULL, 2, 0, 0, (uintptr_t)&big);
	if (r)
		check_long("user u16", r->r, 0x7788);
	r = run_op(TV_OP_READ_USER_INT, NULL, NULL, 8, 0, 0, 8);
	check_error(r, "user read fault at 0x8");
	r = run_op(TV_OP_READ_USER_INT, NULL, NULL, 3, 0, 0, (uintptr_t)&big);
	check_error(r, "user read of 3 bytes: the size must be 1, 2, 4 or 8");
	r = run_op(TV_OP_READ_USER_STRING, NULL, NULL, 100, 0, 0, (uintptr_t)text);
	if (r)
		check(r->r == 9 && strcmp(r->s[0], text) == 0, "user string \"%s\" %" PRId64,
		      r->s[0], r->r);
	r = run_op(TV_OP_READ_USER_STRING, NULL, NULL, 4, 0, 0, (uintptr_t)text);
	if (r)
		check(r->r == 4 && strcmp(r->s[0], "user") == 0, "user string n=4 \"%s\"", r->s[0]);
	r = run_op(TV_OP_READ_USER_STRING, NULL, NULL, 0, 0, 0, (uintptr_t)text);
	if (r)
		check(r->r == 0 && r->s[0][0] == 0 && !r->error, "user string n=0");
	r = run_op(TV_OP_READ_USER_STRING, NULL, NULL, 10, 0, 0, 0x10);
	check_error(r, "user string read fault at 0x10");
	if (r)
		check_long("user string fault returns", r->r, -14);
	r = run_op(TV_OP_READ_KERNEL_INT, NULL, NULL, 8, 0, 0, 16);
	check_error(r, "kernel read fault at 0x10");
	r = run_op(TV_OP_READ_KERNEL_STRING, NULL, NULL, 10, 0, 0, 32);
	check_error(r, "kernel string read fault at 0x20");
	r = run_op(TV_OP_READ_KERNEL_STRING, NULL, NULL, 100, 0, 0, comm_addr);
	if (r)
		check(r->r == 13 && strcmp(r->s[0], "tapset_verify") == 0,
		      "kernel_string(&current->comm) \"%s\" %" PRId64, r->s[0], r->r);
	r = run_op(TV_OP_READ_KERNEL_STRING, NULL, NULL, 6, 0, 0, comm_addr);
	if (r)
		check_str("kernel_string_n(&current->comm, 6)", r->s[0], "tapset");
	r = run_op(TV_OP_READ_KERNEL_INT, NULL, NULL, 1, 1, 0, comm_addr);
	if (r)
		check_long("kernel_char(&current->comm)", r->r, 't');
	r = run_op(TV_OP_READ_KERNEL_INT, NULL, NULL, 4, 0, 0, comm_addr);
	if (r) {
		uint32_t want;

		memcpy(&want, "tapset_verify", 4);
		check_long("kernel_int(&current->comm)", r->r, want);
	}
}

static void test_control(void)
{
	static const char printk_note[] = "printk() in kernel context writes to the tracing "
					  "buffer (/sys/kernel/tracing/trace_pipe), not to the "
					  "kernel log";
	char note[MAXSTRINGLEN];
	size_t n;
	struct tv_result *r;

	r = run_op(TV_OP_SCRIPT_ARG, NULL, NULL, 1, 0, 0, 0);
	if (r)
		check_str("@1", r->s[0], "alpha");
	r = run_op(TV_OP_SCRIPT_ARG, NULL, NULL, 2, 0, 0, 0);
	if (r)
		check_str("@2", r->s[0], "beta gamma");
	r = run_op(TV_OP_SCRIPT_ARG, NULL, NULL, 3, 0, 0, 0);
	if (r)
		check_str("@3", r->s[0], "");
	r = run_op(TV_OP_SCRIPT_ARG, NULL, NULL, 0, 0, 0, 0);
	if (r)
		check_str("@0", r->s[0], "");
	r = run_op(TV_OP_CPU_CLOCK, NULL, NULL, 0, 0, 0, 0);
	if (r)
		check(r->r > 0 && !r->error, "cpu_clock_ns(0) = %" PRId64, r->r);
	r = run_op(TV_OP_CPU_CLOCK, NULL, NULL, -1, 0, 0, 0);
	check_error(r, "cpu_clock_ns: cpu -1 does not exist");
	r = run_op(TV_OP_CPU_CLOCK, NULL, NULL, ncpus, 0, 0, 0);
	if (r) {
		char want[64];

		snprintf(want, sizeof(want), "cpu_clock_ns: cpu %d does not exist", ncpus);
		check_error(r, want);
	}
	r = run_op(TV_OP_CHAR_AT, "abc", NULL, 3, 0, 0, 0);
	check_error(r, "position 3 is outside the string");
	r = run_op(TV_OP_ERROR, "it broke", NULL, 0, 0, 0, 0);
	check_error(r, "it broke");
	r = run_op(TV_OP_ERROR, "", NULL, 0, 0, 0, 0);
	check_error(r, "unknown error");
	r = run_op(TV_OP_WARN, "careful", NULL, 0, 0, 0, 0);
	check_record("warn", r, STP_REC_WARN, "careful");
	r = run_op(TV_OP_SYSTEM, "echo hi", NULL, 0, 0, 0, 0);
	check_record("system", r, STP_REC_SYSTEM, "echo hi");
	r = run_op(TV_OP_SWITCH_FILE, NULL, NULL, 0, 0, 0, 0);
	check_record("switch_file", r, STP_REC_SWITCH_FILE, "");
	r = run_op(TV_OP_PRINTK, "to the trace buffer", NULL, 6, 0, 0, 0);
	n = strnlen(printk_note, MAXSTRINGLEN - 1);	/* as a record carries it */
	memcpy(note, printk_note, n);
	note[n] = '\0';
	check_record("printk warns once", r, STP_REC_WARN, note);
	r = run_op(TV_OP_PRINTK, "again", NULL, 6, 0, 0, 0);
	if (r)
		check(nrecs == 0 && !r->error, "printk warns only once: %d records", nrecs);
	r = run_op(TV_OP_EXIT, NULL, NULL, 0, 0, 0, 0);
	check_record("exit", r, STP_REC_EXIT, "");
	r = run_op(TV_OP_ABORT, NULL, NULL, 0, 0, 0, 0);
	if (r)
		check(r->error == STP_ERR_ABORT && nrecs == 1 && recs[0].kind == STP_REC_EXIT,
		      "abort: error %d, %d records", (int)r->error, nrecs);
	r = run_op(TV_OP_STRLEN, "after exit", NULL, 0, 0, 0, 0);
	if (r)
		check_long("a handler runs when the runner says so again", r->r, 10);
}

/* ---- loading ---- */

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && verbose < 3)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int pin_cpu(void)
{
	cpu_set_t set;

	my_cpu = sched_getcpu();
	CPU_ZERO(&set);
	CPU_SET(my_cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static struct bpf_object *load(const char *path, struct stp_rt_info *rt)
{
	static const char *const args[] = { "alpha", "beta gamma" };
	static char logs[3][4096];
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *prog;
	struct bpf_map *rt_map;
	int nprogs = 0;

	if (!obj) {
		fprintf(stderr, "tapset_verify: cannot open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	rt_map = bpf_object__find_map_by_name(obj, STP_RT_SECTION);
	stp_rt_info_init(rt, getpid(), 2, args);
	if (!rt_map || bpf_map__set_initial_value(rt_map, rt, sizeof(*rt)) != 0) {
		fprintf(stderr, "tapset_verify: no map %s of %zu bytes\n", STP_RT_SECTION,
			sizeof(*rt));
		bpf_object__close(obj);
		return NULL;
	}
	bpf_object__for_each_program(prog, obj) {
		bpf_program__set_log_level(prog, 4);	/* statistics only */
		bpf_program__set_log_buf(prog, logs[nprogs], sizeof(logs[0]));
		if (++nprogs == 3)
			break;
	}
	if (bpf_object__load(obj) != 0) {
		fprintf(stderr, "tapset_verify: the verifier refused %s\n", path);
		bpf_object__close(obj);
		return NULL;
	}
	nprogs = 0;
	bpf_object__for_each_program(prog, obj) {
		const char *stats = strstr(logs[nprogs], "processed ");

		printf("verifier: %s: %.*s\n", bpf_program__name(prog),
		       stats ? (int)strcspn(stats, "\n") : 0, stats ? stats : "");
		if (++nprogs == 3)
			break;
	}
	return obj;
}

int main(int argc, char **argv)
{
	struct stp_rt_info rt;
	struct bpf_object *obj;
	struct bpf_link *link;
	unsigned seed = 1;
	int arg = 1;

	while (arg < argc && strcmp(argv[arg], "-v") == 0)
		verbose++, arg++;
	if (arg >= argc) {
		fprintf(stderr, "usage: tapset_verify [-v] OBJECT [SEED]\n");
		return 2;
	}
	if (arg + 1 < argc)
		seed = (unsigned)strtoul(argv[arg + 1], NULL, 0);
	libbpf_set_print(print_libbpf);
	prctl(PR_SET_NAME, "tapset_verify");
	if (pin_cpu() != 0)
		fprintf(stderr, "tapset_verify: cannot pin to cpu %d: %s\n", my_cpu, strerror(errno));
	obj = load(argv[arg], &rt);
	check(obj != NULL, "the verifier accepts every service (tp, raw_tp, perf_event)");
	if (!obj) {
		printf("%d %d %d\n", passed, failed, 0);
		return 1;
	}
	stp_tapset_user_init(&rt);
	ncpus = libbpf_num_possible_cpus();
	results = calloc((size_t)ncpus, sizeof(*results));
	input_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "input"));
	results_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "results"));
	control_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, STP_CONTROL_MAP));
	ring = ring_buffer__new(bpf_map__fd(bpf_object__find_map_by_name(obj, STP_RINGBUF_MAP)),
				on_record, NULL, NULL);
	check(ring != NULL, "ring buffer %s", STP_RINGBUF_MAP);
	link = bpf_program__attach(bpf_object__find_program_by_name(obj, "tv_tracepoint"));
	check(link != NULL, "attach tp/syscalls/sys_enter_getppid");
	if (link && results && ring) {
		uint64_t comm_addr = test_context(&rt);

		test_strings_fixed();
		test_strings_random(seed, 400);
		test_memory(comm_addr);
		test_control();
		bpf_link__destroy(link);
	}
	ring_buffer__free(ring);
	bpf_object__close(obj);
	free(results);
	printf("%d %d %d\n", passed, failed, 0);
	return failed ? 1 : 0;
}
