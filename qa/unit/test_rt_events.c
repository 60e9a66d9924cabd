/*
 * test_rt_events.c - runtime/user/events.c: ring buffer records to output,
 * errors, warnings and exit, without a kernel.
 *
 * A script is put together by hand (a struct stp_meta with formats and
 * error sites, the output going to a temporary file) and records are fed
 * to stp_events_record() as the ring buffer would.  stderr is captured in
 * a temporary file to check the messages' exact text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "../../runtime/user/script_int.h"

static const struct stp_meta_format formats[] = {
	{ "%d: %s\\n", { "t.stp", 2, 9 } },
	{ "x=%#x %5.2s|\\n", { "t.stp", 3, 9 } },
	{ "no args\\n", { "t.stp", 4, 9 } },
};

static const struct stp_meta_error errors[] = {
	{ "division by 0", { "t.stp", 3, 12 }, "operator '/'" },
	{ "", { "t.stp", 5, 1 }, NULL },
	{ "user string copy fault", { "t.stp", 6, 2 }, NULL },
	{ "array 'a' is full", { "t.stp", 7, 3 }, NULL },
	{ "no location", { NULL, 0, 0 }, NULL },
};

static struct stp_meta meta = {
	.version = STP_META_VERSION,
	.script = "t",
	.formats = formats,
	.nformats = 3,
	.errors = errors,
	.nerrors = 5,
	.limits = { .maxstringlen = 512, .maxerrors = 1 },
};

static struct stp_script *s;
static char out_path[] = "/tmp/test_rt_events.out.XXXXXX";
static char err_path[] = "/tmp/test_rt_events.err.XXXXXX";
static int saved_stderr = -1, err_fd = -1;

static void start(bool suppress, int64_t maxerrors)
{
	int fd = mkstemp(out_path);

	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	err_fd = mkstemp(err_path);
	CU_ASSERT_FATAL(err_fd >= 0);
	fflush(stderr);
	saved_stderr = dup(STDERR_FILENO);
	dup2(err_fd, STDERR_FILENO);
	meta.limits.maxerrors = maxerrors;
	s = calloc(1, sizeof(*s));
	s->meta = &meta;
	s->prog_name = "pmstap";
	s->opts.output_path = out_path;
	s->opts.suppress_handler_errors = suppress;
	s->epfd = s->sigfd = s->deadline_fd = -1;
	s->state = STP_STATE_RUNNING;
	CU_ASSERT_FATAL(stp_out_open(s) == 0);
	CU_ASSERT_FATAL(stp_formats_compile(s) == 0);
}

/* Read a whole file into buf (NUL-terminated); returns its length. */
static size_t slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, size - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return n;
}

/* Stop, and compare what went to the output and to stderr. */
static void finish(const char *want_out, const char *want_err)
{
	static char got[8192];

	stp_out_close(s);
	stp_formats_free(s);
	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	close(err_fd);
	slurp(out_path, got, sizeof(got));
	if (strcmp(got, want_out) != 0)
		fprintf(stderr, "\n    output: \"%s\"\n    wanted: \"%s\"", got, want_out);
	CU_ASSERT_STRING_EQUAL(got, want_out);
	slurp(err_path, got, sizeof(got));
	if (strcmp(got, want_err) != 0)
		fprintf(stderr, "\n    stderr: \"%s\"\n    wanted: \"%s\"", got, want_err);
	CU_ASSERT_STRING_EQUAL(got, want_err);
	unlink(out_path);
	unlink(err_path);
	strcpy(out_path + strlen(out_path) - 6, "XXXXXX");
	strcpy(err_path + strlen(err_path) - 6, "XXXXXX");
	free(s);
	s = NULL;
}

/* ---- building records ---- */

struct rec {
	char buf[1024];
	size_t len;
};

static void rec_start(struct rec *r, int kind, int id)
{
	struct stp_rec_hdr h = { .kind = (uint16_t)kind, .id = (uint16_t)id };

	memcpy(r->buf, &h, sizeof(h));
	r->len = sizeof(h);
}

static void rec_long(struct rec *r, int64_t v)
{
	memcpy(r->buf + r->len, &v, sizeof(v));
	r->len += sizeof(v);
}

static void rec_str(struct rec *r, const char *str)
{
	uint16_t n = (uint16_t)strlen(str);

	memcpy(r->buf + r->len, &n, sizeof(n));
	memcpy(r->buf + r->len + sizeof(n), str, n);
	r->len += sizeof(n) + n;
}

static void rec_send(struct rec *r)
{
	struct stp_rec_hdr h;

	memcpy(&h, r->buf, sizeof(h));
	h.size = (uint32_t)r->len;
	memcpy(r->buf, &h, sizeof(h));
	CU_ASSERT_EQUAL(stp_events_record(s, r->buf, r->len), 0);
}

static void send_error(int id, const char *detail)
{
	struct rec r;

	rec_start(&r, STP_REC_ERROR, id);
	if (detail)
		rec_str(&r, detail);
	rec_send(&r);
}

/* ---- cases ---- */

static void test_printf_records(void)
{
	struct rec r;

	start(false, 0);
	rec_start(&r, STP_REC_PRINTF, 0);
	rec_long(&r, -7);
	rec_str(&r, "abc");
	rec_send(&r);
	rec_start(&r, STP_REC_PRINTF, 1);
	rec_long(&r, 0);
	rec_str(&r, "xyz");
	rec_send(&r);
	rec_start(&r, STP_REC_PRINTF, 2);
	rec_send(&r);
	/* a string holding a NUL: %s stops there */
	rec_start(&r, STP_REC_PRINTF, 0);
	rec_long(&r, 1);
	memcpy(r.buf + r.len, &(uint16_t){ 3 }, 2);
	memcpy(r.buf + r.len + 2, "a\0b", 3);
	r.len += 5;
	rec_send(&r);
	CU_ASSERT_EQUAL(s->state, STP_STATE_RUNNING);
	CU_ASSERT_FALSE(s->internal_error);
	finish("-7: abc\nx=0x0    xy|\nno args\n1: a\n", "");
}

static void test_error_wording(void)
{
	start(false, 10);
	send_error(0, NULL);		/* the site's own words */
	send_error(1, "my own message");	/* error("my own message") */
	send_error(2, "user string copy fault at 0x10");	/* the record's message wins */
	send_error(3, "");		/* an empty message: the site's words */
	send_error(1, NULL);		/* no words at all */
	send_error(4, NULL);		/* a site without a file */
	CU_ASSERT_EQUAL(s->errors, 6);
	CU_ASSERT_EQUAL(s->state, STP_STATE_RUNNING);
	finish("",
	       "ERROR: division by 0 near operator '/' at t.stp:3:12\n"
	       "ERROR: my own message at t.stp:5:1\n"
	       "ERROR: user string copy fault at 0x10 at t.stp:6:2\n"
	       "ERROR: array 'a' is full at t.stp:7:3\n"
	       "ERROR: unknown error at t.stp:5:1\n"
	       "ERROR: no location\n");
}

/* MAXERRORS errors are tolerated; one more stops the script in the error state. */
static void test_maxerrors(void)
{
	start(false, 1);
	send_error(0, NULL);
	CU_ASSERT_EQUAL(s->state, STP_STATE_RUNNING);
	send_error(0, NULL);
	CU_ASSERT_EQUAL(s->state, STP_STATE_ERROR);
	finish("", "ERROR: division by 0 near operator '/' at t.stp:3:12\n"
		   "ERROR: division by 0 near operator '/' at t.stp:3:12\n");

	start(false, 0);
	send_error(0, NULL);
	CU_ASSERT_EQUAL(s->state, STP_STATE_ERROR);
	finish("", "ERROR: division by 0 near operator '/' at t.stp:3:12\n");
}

static void test_suppressed(void)
{
	start(true, 0);
	send_error(0, NULL);
	send_error(1, "x");
	CU_ASSERT_EQUAL(s->state, STP_STATE_RUNNING);
	CU_ASSERT_EQUAL(s->errors, 0);
	CU_ASSERT_EQUAL(s->suppressed, 2);
	finish("", "");
}

/* Output written before a message comes out before it. */
static void test_warn_exit_order(void)
{
	struct rec r;

	start(false, 0);
	rec_start(&r, STP_REC_PRINTF, 2);
	rec_send(&r);
	rec_start(&r, STP_REC_WARN, 0);
	rec_str(&r, "careful");
	rec_send(&r);
	CU_ASSERT_EQUAL(s->state, STP_STATE_RUNNING);
	rec_start(&r, STP_REC_EXIT, 0);
	rec_send(&r);
	CU_ASSERT_EQUAL(s->state, STP_STATE_STOPPING);
	/* an error after exit() still prints, and now stops in the error state */
	send_error(0, NULL);
	CU_ASSERT_EQUAL(s->state, STP_STATE_ERROR);
	finish("no args\n", "WARNING: careful\n"
			    "ERROR: division by 0 near operator '/' at t.stp:3:12\n");
}

static void test_malformed(void)
{
	struct rec r;

	start(false, 0);
	rec_start(&r, STP_REC_PRINTF, 0);
	rec_long(&r, 5);	/* the string is missing */
	rec_send(&r);
	CU_ASSERT_TRUE(s->internal_error);
	rec_start(&r, STP_REC_PRINTF, 9);	/* no such format */
	rec_send(&r);
	rec_start(&r, 77, 0);	/* no such kind */
	rec_send(&r);
	CU_ASSERT_EQUAL(stp_events_record(s, r.buf, 3), 0);	/* shorter than a header */
	CU_ASSERT_EQUAL(s->state, STP_STATE_RUNNING);
	/* reported once */
	finish("", "pmstap: error: internal: malformed record from the kernel (kind 1, id 0, "
		   "16 bytes)\n");
}

static void test_user_services(void)
{
	start(false, 0);
	stp_script__output(s, "hello ", 6);
	stp_script__output(s, "world\n", 6);
	stp_script__warn(s, "w", 1);
	stp_script__error(s, 1, "from a timer", 12);
	CU_ASSERT_TRUE(stp_script__exiting(s));
	finish("hello world\n", "WARNING: w\nERROR: from a timer at t.stp:5:1\n");
}

static const struct unit_case cases[] = {
	{ "printf records", test_printf_records },
	{ "error wording", test_error_wording },
	{ "MAXERRORS", test_maxerrors },
	{ "--suppress-handler-errors", test_suppressed },
	{ "warn, exit, order", test_warn_exit_order },
	{ "malformed records", test_malformed },
	{ "user-context services", test_user_services },
	{ NULL, NULL },
};

void unit_register(void)
{
	unit_add_suite("rt_events", cases);
}
