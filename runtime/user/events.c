/*
 * events.c - ring buffer records to output, errors and warnings.
 *
 * Kernel-context code writes records (runtime/stp_meta.h) into the ring
 * buffer `stp_events`; user-context code calls the stp_script__output /
 * __error / __warn / __exit services.  Both end up here, so the script's
 * output keeps its order and errors are counted once, the same way:
 *
 *	ERROR: <what> at <file>:<line>:<col>		(stderr)
 *	WARNING: <text>					(stderr, warn())
 *
 * where <what> is the message the error came with (a record's string, the
 * user-context message), or meta.errors[i].what when it came with none, and
 * the location is meta.errors[i]'s.  More than MAXERRORS errors stop the script
 * (the end probes are skipped, error probes run), except with
 * --suppress-handler-errors, where they are only counted (in the exit
 * summary, as stap does; they do not make the exit status 1).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "maps.h"
#include "data.h"
#include "handover.h"
#include "script_int.h"
#include "stats.h"
#include "symbolize.h"

#define OUT_BUFSIZE 65536
#define PRINT_BUFSIZE 8192	/* one printf's output at most, as stap's STP_BUFFER_SIZE */

/* ---- the output stream ---- */

/*
 * -o FILE's name for file number FNUM opened at T, as stap's: FILE's
 * strftime(3) conversions at T, then ".FNUM" once the output is numbered
 * (-S SIZE from the first file; without, FILE is the first and
 * switch_file() or SIGUSR2 make FILE.1 the second).
 */
static int out_name(const struct stp_script *s, int fnum, time_t t, char *buf, size_t size)
{
	bool numbered = fnum > 0 || s->opts.output_size_max;
	struct tm tm;
	size_t n;

	localtime_r(&t, &tm);
	n = strftime(buf, size, s->opts.output_path, &tm);
	if (n == 0 || (numbered && (size_t)snprintf(buf + n, size - n, ".%d", fnum) >= size - n))
		return -1;
	return 0;
}

static int out_open_file(struct stp_script *s, int fnum)
{
	int keep = s->opts.output_files_max;
	time_t t = time(NULL);
	char name[PATH_MAX];

	if (keep && fnum >= keep && out_name(s, fnum - keep, s->out.opened[(fnum - keep) % keep],
					     name, sizeof(name)) == 0)
		unlink(name);	/* the oldest of the N kept */
	if (keep)
		s->out.opened[fnum % keep] = t;
	if (out_name(s, fnum, t, name, sizeof(name)) < 0) {
		stp_msg(s, "error", "invalid output file name '%s' (empty or too long once "
			"its %% conversions are expanded)", s->opts.output_path);
		return -EINVAL;
	}
	s->out.fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (s->out.fd < 0) {
		stp_msg(s, "error", "cannot open output file %s: %s", name, strerror(errno));
		return -errno;
	}
	s->out.fnum = fnum;
	s->out.written = 0;
	return 0;
}

int stp_out_open(struct stp_script *s)
{
	s->out.size = OUT_BUFSIZE;
	s->out.buf = malloc(s->out.size);
	if (!s->out.buf)
		return -ENOMEM;
	if (!s->opts.output_path) {
		s->out.fd = STDOUT_FILENO;
		return 0;
	}
	if (s->opts.output_files_max) {
		s->out.opened = calloc((size_t)s->opts.output_files_max, sizeof(time_t));
		if (!s->out.opened)
			return -ENOMEM;
	}
	s->out.owned = true;
	return out_open_file(s, 0);
}

static void out_write_all(struct stp_script *s, const char *p, size_t n)
{
	stp_handover_output(s, p, n);
	while (n > 0 && !s->out.failed) {
		ssize_t w = write(s->out.fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {	/* a closed pipe (| head) ends the script quietly */
			s->out.failed = true;
			s->internal_error = true;
			if (errno != EPIPE)
				fprintf(stderr, "%s: error: cannot write the script's output: %s\n",
					s->prog_name, strerror(errno));
			stp_request_stop(s, STP_STATE_STOPPING);
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

void stp_out_flush(struct stp_script *s)
{
	if (s->out.len && s->out.fd >= 0)
		out_write_all(s, s->out.buf, s->out.len);
	s->out.len = 0;
}

void stp_out_close(struct stp_script *s)
{
	if (s->out.buf)
		stp_out_flush(s);
	if (s->out.owned && s->out.fd >= 0)
		close(s->out.fd);
	s->out.fd = -1;
	free(s->out.buf);
	s->out.buf = NULL;
	free(s->out.opened);
	s->out.opened = NULL;
}

/* switch_file() (STP_REC_SWITCH_FILE, user context) or SIGUSR2: without -o, nothing to switch. */
void stp_script__switch_file(struct stp_script *s)
{
	if (s->out.owned)
		s->out.switches++;
}

/*
 * Before what comes next: the next file when asked for, or once -S's size
 * is past, as stap's stapio switches before its next message (neither
 * without -o).  A file that cannot be opened stops the script, as a write
 * that fails does.
 */
static void out_rotate(struct stp_script *s)
{
	if (!s->out.switches &&
	    !(s->opts.output_size_max && s->out.written > s->opts.output_size_max))
		return;
	s->out.switches = 0;
	stp_out_flush(s);
	close(s->out.fd);
	s->out.fd = -1;
	if (out_open_file(s, s->out.fnum + 1) < 0) {
		s->out.failed = true;
		s->internal_error = true;
		stp_request_stop(s, STP_STATE_STOPPING);
	}
}

/*
 * One record's output, formatted in place: OUT is room for PRINT_BUFSIZE
 * bytes at the buffer's end (in the next file when it is time), and
 * out_commit() keeps what it holds.
 */
static void out_reserve(struct stp_script *s, struct stp_out *out)
{
	out_rotate(s);
	if (s->out.size - s->out.len < PRINT_BUFSIZE)
		stp_out_flush(s);
	stp_out_init(out, s->out.buf + s->out.len, PRINT_BUFSIZE);
}

static void out_commit(struct stp_script *s, const struct stp_out *out)
{
	s->out.len += out->len;
	s->out.written += out->len;
}

void stp_script__output(struct stp_script *s, const char *buf, size_t len)
{
	if (!s->out.buf || s->out.failed)
		return;
	out_rotate(s);
	if (s->out.failed)
		return;
	s->out.written += len;
	if (len > s->out.size - s->out.len)
		stp_out_flush(s);
	if (len >= s->out.size) {
		out_write_all(s, buf, len);
		return;
	}
	memcpy(s->out.buf + s->out.len, buf, len);
	s->out.len += len;
}

/* ---- formats ---- */

int stp_formats_compile(struct stp_script *s)
{
	const struct stp_meta *m = s->meta;
	struct stp_format_error ferr;
	char where[256];

	s->formats = calloc((size_t)m->nformats + 1, sizeof(*s->formats));
	if (!s->formats)
		return -ENOMEM;
	for (int i = 0; i < m->nformats; i++) {
		const char *body = m->formats[i].body ? m->formats[i].body : "";

		s->formats[i] = stp_format__new(body, strlen(body), &ferr);
		if (!s->formats[i]) {
			stp_msg(s, "error", "internal: %s: format \"%s\" is refused: %s",
				stp_loc_str(&m->formats[i].loc, where, sizeof(where)), body, ferr.msg);
			return -EINVAL;
		}
		if (s->formats[i]->nargs > s->max_args)
			s->max_args = s->formats[i]->nargs;
	}
	s->values = calloc((size_t)s->max_args + 1, sizeof(*s->values));
	return s->values ? 0 : -ENOMEM;
}

void stp_formats_free(struct stp_script *s)
{
	if (s->formats && s->meta)
		for (int i = 0; i < s->meta->nformats; i++)
			stp_format__free(s->formats[i]);
	free(s->formats);
	free(s->values);
	s->formats = NULL;
	s->values = NULL;
}

/* ---- errors and warnings ---- */

static void print_error(struct stp_script *s, const struct stp_meta_error *e, const char *detail,
			size_t len)
{
	const char *what = e && e->what && *e->what ? e->what : "unknown error";
	char where[256];

	len = detail ? strnlen(detail, len) : 0;
	stp_out_flush(s);
	if (len)
		fprintf(stderr, "ERROR: %.*s", (int)len, detail);
	else
		fprintf(stderr, "ERROR: %s", what);
	if (e && e->loc.file && e->near)	/* as stap: "near operator '/' at t.stp:3:12" */
		fprintf(stderr, " near %s", e->near);
	if (e && e->loc.file)	/* a site with no file: the message says it all */
		fprintf(stderr, " at %s", stp_loc_str(&e->loc, where, sizeof(where)));
	fputc('\n', stderr);
}

void stp_report_error(struct stp_script *s, int index, const char *detail, size_t len)
{
	const struct stp_meta_error *e = NULL;

	if (index >= 0 && index < s->meta->nerrors)
		e = &s->meta->errors[index];
	if (s->opts.suppress_handler_errors) {
		s->suppressed++;
		return;
	}
	s->errors++;
	print_error(s, e, detail, len);
	if (s->errors > s->meta->limits.maxerrors)
		stp_request_stop(s, STP_STATE_ERROR);
}

void stp_script__error(struct stp_script *s, int error_index, const char *detail, size_t len)
{
	stp_report_error(s, error_index, detail, len);
}

void stp_script__warn(struct stp_script *s, const char *text, size_t len)
{
	stp_out_flush(s);
	fprintf(stderr, "WARNING: %.*s\n", (int)len, text);
}

/*
 * Started in the background, as stap does: a child forks the command and
 * exits at once, so the command belongs to init and never becomes this
 * process's zombie (nor a SIGCHLD that -c's reaping would take for its
 * own).  What the script printed before comes out before the command's
 * output.
 */
void stp_script__system(struct stp_script *s, const char *cmd, size_t len)
{
	char *line = strndup(cmd, len);
	pid_t pid;

	if (!line) {
		stp_msg(s, "error", "system(): out of memory");
		return;
	}
	stp_out_flush(s);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (fork() == 0) {
			sigset_t none;

			/* the command gets the signals the runner takes through its signalfd */
			sigemptyset(&none);
			sigprocmask(SIG_SETMASK, &none, NULL);
			signal(SIGPIPE, SIG_DFL);
			execl("/bin/sh", "sh", "-c", line, (char *)NULL);
			_exit(127);
		}
		_exit(0);
	}
	if (pid < 0)
		stp_msg(s, "warning", "system(): cannot start '%s': %s", line, strerror(errno));
	else
		waitpid(pid, NULL, 0);
	free(line);
}

void stp_script__exit(struct stp_script *s)
{
	stp_request_stop(s, STP_STATE_STOPPING);
}

bool stp_script__exiting(const struct stp_script *s)
{
	return s->state >= STP_STATE_STOPPING;
}

/* ---- records ---- */

struct reader {
	const char *p, *end;
};

static int read_long(struct reader *r, struct stp_value *v)
{
	int64_t n;

	if (r->end - r->p < (long)sizeof(n))
		return -1;
	memcpy(&n, r->p, sizeof(n));
	r->p += sizeof(n);
	*v = stp_value_long(n);
	return 0;
}

static int read_string(struct reader *r, struct stp_value *v)
{
	uint16_t n;

	if (r->end - r->p < (long)sizeof(n))
		return -1;
	memcpy(&n, r->p, sizeof(n));
	r->p += sizeof(n);
	if (n & STP_REC_SYMS)	/* symbols to name: symname() in kernel context... */
		return stp_sym_read_deferred(&r->p, r->end, n, v);
	if (r->end - r->p < n)
		return -1;
	*v = stp_value_string(r->p, n);
	r->p += n;
	return 0;
}

static int do_printf(struct stp_script *s, int id, struct reader *r)
{
	const struct stp_format *fmt;
	struct stp_out out;
	int rc;

	if (id >= s->meta->nformats)
		return -1;
	fmt = s->formats[id];
	for (int a = 0; a < fmt->nargs; a++) {
		rc = stp_arg_value_type(fmt->args[a]) == STP_VALUE_LONG ?
		     read_long(r, &s->values[a]) : read_string(r, &s->values[a]);
		if (rc < 0)
			return -1;
	}
	out_reserve(s, &out);
	if (stp_format_print(&out, fmt, s->values, fmt->nargs) < 0)
		return -1;
	out_commit(s, &out);
	return 0;
}

static int do_string_record(struct stp_script *s, const struct stp_rec_hdr *h, struct reader *r)
{
	struct stp_value v = stp_value_string(NULL, 0);
	bool has = r->p < r->end;

	if (has && read_string(r, &v) < 0)
		return -1;
	if (h->kind == STP_REC_WARN) {
		stp_script__warn(s, v.str.ptr ? v.str.ptr : "", v.str.len);
		return 0;
	}
	if (h->kind == STP_REC_SYSTEM) {
		stp_script__system(s, v.str.ptr ? v.str.ptr : "", v.str.len);
		return 0;
	}
	s->kernel_error_records++;
	stp_report_error(s, h->id, has ? v.str.ptr : NULL, v.str.len);
	return 0;
}

/* print(@hist_*(s)) in a module (STP_REC_HIST): printed as user context prints it. */
static int do_hist(struct stp_script *s, int id, struct reader *r)
{
	int64_t hist[STP_HIST_MAX_BUCKETS];
	const struct stp_meta_global *g;
	struct stp_stat_agg agg = { 0 };
	struct stp_stat_cfg cfg;
	struct stp_out out;

	if (id >= s->meta->nglobals)
		return -1;
	g = &s->meta->globals[id];
	if (g->type != STP_TYPE_STATS || stp_stat_cfg_init(&cfg, (enum stp_hist_type)g->hist.kind,
							    g->hist.start, g->hist.stop,
							    g->hist.interval, 0) != NULL)
		return -1;
	if (r->end - r->p < 4 * 8L + 8L * cfg.buckets || cfg.buckets > STP_HIST_MAX_BUCKETS)
		return -1;
	memcpy(&agg.count, r->p, 8);
	memcpy(&agg.sum, r->p + 8, 8);
	memcpy(&agg.min, r->p + 16, 8);
	memcpy(&agg.max, r->p + 24, 8);
	memcpy(hist, r->p + 32, 8 * (size_t)cfg.buckets);
	agg.hist = hist;
	out_reserve(s, &out);
	stp_stat_print_hist(&out, &cfg, &agg, STP_HIST_ELISION);
	out_commit(s, &out);
	return 0;
}

static void bad_record(struct stp_script *s, const struct stp_rec_hdr *h, size_t size)
{
	if (!s->internal_error)
		stp_msg(s, "error", "internal: malformed record from the kernel (kind %u, id %u, "
			"%zu bytes)", h->kind, h->id, size);
	s->internal_error = true;
}

int stp_events_record(void *ctx, void *data, size_t size)
{
	struct stp_script *s = ctx;
	struct stp_rec_hdr h;
	struct reader r;
	int rc = -1;

	if (size < sizeof(h)) {
		bad_record(s, &(struct stp_rec_hdr){ 0 }, size);
		return 0;
	}
	memcpy(&h, data, sizeof(h));
	r.p = (const char *)data + sizeof(h);
	r.end = (const char *)data + (h.size <= size && h.size >= sizeof(h) ? h.size : size);
	switch (h.kind) {
	case STP_REC_PRINTF:
		rc = do_printf(s, h.id, &r);
		break;
	case STP_REC_ERROR:
	case STP_REC_WARN:
	case STP_REC_SYSTEM:
		rc = do_string_record(s, &h, &r);
		break;
	case STP_REC_EXIT:
		stp_request_stop(s, STP_STATE_STOPPING);
		rc = 0;
		break;
	case STP_REC_SWITCH_FILE:
		stp_script__switch_file(s);
		rc = 0;
		break;
	case STP_REC_HIST:
		rc = do_hist(s, h.id, &r);
		break;
	case STP_REC_PERF:	/* a thread to count for @perf, or gone: perfctr.c */
		rc = stp_perfctr_record(s, h.id, r.p, (size_t)(r.end - r.p));
		break;
	case STP_REC_STACK:	/* print_stack() and friends: symbolize.h */
		rc = stp_sym_print_record(s, h.id, r.p, (size_t)(r.end - r.p));
		break;
	}
	if (rc < 0)
		bad_record(s, &h, size);
	return 0;
}

int stp_events_open(struct stp_script *s)
{
	int fd = stp_script__map_fd(s, STP_RINGBUF_MAP);

	if (fd < 0 || s->dseg)
		return 0;	/* nothing in the kernel prints, or the segment's ring: dyn.c */
	s->rb = ring_buffer__new(fd, stp_events_record, s, NULL);
	if (!s->rb) {
		stp_msg(s, "error", "cannot read the ring buffer %s: %s", STP_RINGBUF_MAP,
			strerror(errno));
		return -errno;
	}
	return 0;
}

/* Everything the kernel has written so far. */
int stp_events_drain(struct stp_script *s)
{
	int n, total = 0;

	if (s->dseg)
		return stp_dyn_drain(s);
	if (!s->rb)
		return 0;
	while ((n = ring_buffer__consume(s->rb)) > 0)
		total += n;
	return total;
}

void stp_events_close(struct stp_script *s)
{
	ring_buffer__free(s->rb);
	s->rb = NULL;
}

/* ---- the exit summary ---- */

/* The health counters of map NAME, summed over CPUs (or entries) into SUM. */
static int add_counters(struct stp_script *s, const char *name, struct stp_counters *sum)
{
	size_t stride = stp_percpu_stride(sizeof(struct stp_counters));
	struct stp_map_info info;
	int fd = stp_maps__find(s->maps, name, &info);
	uint32_t key = 0;
	char *vals;

	if (fd < 0 || info.value_size < sizeof(struct stp_counters))
		return -ENOENT;
	if (info.type == BPF_MAP_TYPE_PERCPU_ARRAY) {
		vals = calloc((size_t)s->ncpus, stride);
		if (vals && stp_mapfd_lookup(fd, &key, vals) == 0)
			for (int c = 0; c < s->ncpus; c++)
				stp_counters_add(sum, (struct stp_counters *)(vals + (size_t)c * stride));
		free(vals);
		return 0;
	}
	vals = calloc(1, info.value_size);
	for (key = 0; vals && key < info.max_entries; key++)
		if (stp_mapfd_lookup(fd, &key, vals) == 0)
			stp_counters_add(sum, (struct stp_counters *)vals);
	free(vals);
	return 0;
}

/* The kernel side's health counters, summed over CPUs (dyninst: and the shared entry). */
static int read_counters(struct stp_script *s, struct stp_counters *sum)
{
	memset(sum, 0, sizeof(*sum));
	add_counters(s, STP_COUNTERS_SHARED_MAP, sum);
	return add_counters(s, STP_COUNTERS_MAP, sum);
}

/*
 * stap's closing warnings.  Errors count those printed, those suppressed
 * (stap counts them too) and those whose records the ring buffer could not
 * take.  Only errors that were not suppressed make the exit status 1.
 */
void stp_summary(struct stp_script *s)
{
	struct stp_counters c;
	long errors, lost = 0;
	uint64_t busy, misses = stp_script__misses(s);

	read_counters(s, &c);
	busy = c.skipped;
	c.skipped += misses;
	if ((long)c.errors > s->kernel_error_records)
		lost = (long)c.errors - s->kernel_error_records;
	if (s->opts.suppress_handler_errors)
		s->suppressed += lost;
	else
		s->errors += lost;
	errors = s->errors + s->suppressed;
	stp_out_flush(s);
	if (errors || c.skipped)
		fprintf(stderr, "WARNING: Number of errors: %ld, skipped probes: %llu\n", errors,
			(unsigned long long)c.skipped);
	stp_perfctr_summary(s);
	if (c.dropped)
		fprintf(stderr, "WARNING: %llu output record%s dropped (ring buffer full)\n",
			(unsigned long long)c.dropped, c.dropped == 1 ? " was" : "s were");
	c.keys_cut += stp_uctx_keys_cut();
	if (c.keys_cut)
		fprintf(stderr, "WARNING: %llu array key%s cut to fit: an array's key is at most "
			"512 bytes, and its string columns share what the others leave\n",
			(unsigned long long)c.keys_cut, c.keys_cut == 1 ? " was" : "s were");
	if (s->opts.verbose && c.skipped)
		stp_msg(s, "note", "skipped probes: %llu found their CPU's context busy (a probe "
			"inside a probe), %llu were not run by the kernel (the program already running "
			"on that CPU)", (unsigned long long)busy, (unsigned long long)misses);
	if (s->opts.verbose && (c.map_full || c.maxaction))
		stp_msg(s, "note", "array inserts refused (map full): %llu, handlers stopped at "
			"MAXACTION: %llu", (unsigned long long)c.map_full,
			(unsigned long long)c.maxaction);
}
