/*
 * meta_wire.c - struct stp_meta as bytes and back, and the checks a meta
 * from anyone must pass (meta_wire.h).
 *
 * Each struct is a table of its fields (offset and wire type), read by
 * both the encoder and the decoder, so the two cannot drift apart; the
 * tables also give the smallest record of each kind on the wire.
 *
 * Decoding is one pass.  The header's counts (each at most
 * STP_META_MAX_COUNT, and together no more than the bytes can hold) size
 * one block for the struct, its arrays and its strings (a string takes no
 * more room there than on the wire: its count's 4 bytes pay for its NUL);
 * then the records are read into it.  A reader that fails stays failed:
 * later reads give zeros, and the first reason is the one reported.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../stp_fileid.h"
#include "meta_wire.h"
#include "stats.h"

#define GLOBALS_MAP "stp_globals"	/* the scalars' map (translator/emit_meta.c) */

/* Fields are read and written through these lvalues. */
_Static_assert(sizeof(enum stp_type) == 4 && sizeof(enum stp_meta_hist_kind) == 4 &&
	       sizeof(enum stp_context) == 4 && sizeof(enum stp_probe_kind) == 4 &&
	       sizeof(int) == 4 && sizeof(bool) == 1, "the wire's types");

/* ---- the records ---- */

enum wtype {
	W_STR,		/* const char * */
	W_BOOL,
	W_32,		/* int, uint32_t, an enum */
	W_64,		/* int64_t, uint64_t */
	W_KEYS,		/* a global's nkeys, key_types and key_offsets */
};

static const size_t wmin[] = { [W_STR] = 4, [W_BOOL] = 1, [W_32] = 4, [W_64] = 8, [W_KEYS] = 4 };

struct field {
	enum wtype type;
	size_t off;
	const char *name;
};

#define F(S, t, f) { t, offsetof(struct S, f), #f }
#define G(t, f) F(stp_meta_global, t, f)
#define P(t, f) F(stp_meta_probe, t, f)

static const struct field top_fields[] = {
	F(stp_meta, W_32, version), F(stp_meta, W_STR, script), F(stp_meta, W_STR, source),
	F(stp_meta, W_64, limits.maxstringlen), F(stp_meta, W_64, limits.maxmapentries),
	F(stp_meta, W_64, limits.maxaction), F(stp_meta, W_64, limits.maxerrors),
	F(stp_meta, W_64, limits.maxnesting), F(stp_meta, W_64, limits.ringbuf_bytes),
};

static const struct field global_fields[] = {
	G(W_STR, name), G(W_32, type), G(W_KEYS, nkeys), G(W_STR, map), G(W_32, offset),
	G(W_32, key_size), G(W_32, value_size), G(W_32, max_entries), G(W_BOOL, wrap),
	G(W_BOOL, percpu), G(W_32, hist.kind), G(W_64, hist.start), G(W_64, hist.stop),
	G(W_64, hist.interval), G(W_32, hist.buckets), G(W_BOOL, exported), G(W_STR, doc),
	G(W_STR, loc.file), G(W_32, loc.line), G(W_32, loc.col), G(W_STR, values_map),
	G(W_STR, free_map),
};

static const struct field probe_fields[] = {
	P(W_STR, point), P(W_STR, name), P(W_STR, loc.file), P(W_32, loc.line), P(W_32, loc.col), P(W_32, kind),
	P(W_32, context), P(W_STR, prog), P(W_64, priority), P(W_64, interval_ns),
	P(W_64, randomize_ns), P(W_32, perf_type), P(W_64, perf_config), P(W_64, perf_sample),
	P(W_STR, tp_system), P(W_STR, tp_name), P(W_STR, target), P(W_BOOL, optional),
	P(W_STR, uprobe_path), P(W_64, uprobe_offset), P(W_BOOL, uprobe_return),
	P(W_64, uprobe_ref_ctr_offset), P(W_64, uprobe_pid), P(W_32, uprobe_file),
	P(W_BOOL, kprobe), P(W_BOOL, kprobe_return), P(W_STR, procfs_path),
	P(W_BOOL, procfs_write), P(W_32, procfs_mode), P(W_64, procfs_maxsize),
	P(W_32, nf_pf), P(W_32, nf_hook), P(W_32, nf_priority),
	P(W_64, bp_addr), P(W_STR, bp_symbol), P(W_32, bp_type), P(W_32, bp_len),
};

static const struct field format_fields[] = {
	F(stp_meta_format, W_STR, body), F(stp_meta_format, W_STR, loc.file),
	F(stp_meta_format, W_32, loc.line), F(stp_meta_format, W_32, loc.col),
};

static const struct field error_fields[] = {
	F(stp_meta_error, W_STR, what), F(stp_meta_error, W_STR, loc.file),
	F(stp_meta_error, W_32, loc.line), F(stp_meta_error, W_32, loc.col),
	F(stp_meta_error, W_STR, near),
};

static const struct field file_fields[] = {
	F(stp_meta_file, W_STR, path), F(stp_meta_file, W_STR, build_id),
	F(stp_meta_file, W_64, size), F(stp_meta_file, W_64, mtime_ns),
};

static const struct field autoprint_fields[] = { { W_32, 0, "index" } };

/* The record arrays, in wire order (the order matters). */
enum rec { REC_GLOBAL, REC_PROBE, REC_FORMAT, REC_ERROR, REC_FILE, REC_AUTOPRINT, NREC };

struct rec_desc {
	const char *name, *plural;
	size_t size;			/* of one element in memory */
	const struct field *fields;
	size_t nfields;
};

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define R(name, plural, type, fields) { name, plural, sizeof(type), fields, N(fields) }

static const struct rec_desc recs[NREC] = {
	R("global", "globals", struct stp_meta_global, global_fields),
	R("probe", "probes", struct stp_meta_probe, probe_fields),
	R("format", "formats", struct stp_meta_format, format_fields),
	R("error", "errors", struct stp_meta_error, error_fields),
	R("file", "files", struct stp_meta_file, file_fields),
	R("autoprint", "autoprint entries", int, autoprint_fields),
};

static const struct rec_desc top_rec = R("meta", "metas", struct stp_meta, top_fields);

#define HEADER_BYTES (3 * 4 + NREC * 4)
#define TOTAL_AT 8	/* the header's byte count */

/* Bytes of the smallest record RD on the wire (NULL strings, no keys). */
static size_t rec_min(const struct rec_desc *rd)
{
	size_t n = 0;

	for (size_t i = 0; i < rd->nfields; i++)
		n += wmin[rd->fields[i].type];
	return n;
}

/* M's arrays and counts, by record kind. */
static void meta_arrays(const struct stp_meta *m, const void *arr[NREC], int n[NREC])
{
	arr[REC_GLOBAL] = m->globals;
	n[REC_GLOBAL] = m->nglobals;
	arr[REC_PROBE] = m->probes;
	n[REC_PROBE] = m->nprobes;
	arr[REC_FORMAT] = m->formats;
	n[REC_FORMAT] = m->nformats;
	arr[REC_ERROR] = m->errors;
	n[REC_ERROR] = m->nerrors;
	arr[REC_FILE] = m->files;
	n[REC_FILE] = m->nfiles;
	arr[REC_AUTOPRINT] = m->autoprint;
	n[REC_AUTOPRINT] = m->nautoprint;
}

static void set_arrays(struct stp_meta *m, char *const arr[NREC], const uint32_t n[NREC])
{
	m->globals = (const void *)arr[REC_GLOBAL];
	m->nglobals = (int)n[REC_GLOBAL];
	m->probes = (const void *)arr[REC_PROBE];
	m->nprobes = (int)n[REC_PROBE];
	m->formats = (const void *)arr[REC_FORMAT];
	m->nformats = (int)n[REC_FORMAT];
	m->errors = (const void *)arr[REC_ERROR];
	m->nerrors = (int)n[REC_ERROR];
	m->files = (const void *)arr[REC_FILE];
	m->nfiles = (int)n[REC_FILE];
	m->autoprint = (const void *)arr[REC_AUTOPRINT];
	m->nautoprint = (int)n[REC_AUTOPRINT];
}

/* ---- encoding ---- */

struct wr {
	uint8_t *buf;
	size_t len, cap;
	int err;		/* the first failure: ENOMEM or EINVAL */
};

static void put(struct wr *w, const void *p, size_t n)
{
	size_t cap = w->cap ? w->cap : 4096;
	uint8_t *b;

	if (w->err || n == 0)
		return;
	while (cap - w->len < n)
		cap *= 2;
	if (cap != w->cap) {
		if (!(b = realloc(w->buf, cap))) {
			w->err = ENOMEM;
			return;
		}
		w->buf = b;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

/* V's low BYTES bytes, little-endian. */
static void put_le(struct wr *w, uint64_t v, int bytes)
{
	uint8_t b[8];

	for (int i = 0; i < bytes; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put(w, b, (size_t)bytes);
}

static void put_str(struct wr *w, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n >= STP_META_WIRE_NULL && !w->err)
		w->err = EINVAL;
	put_le(w, s ? (uint32_t)n : STP_META_WIRE_NULL, 4);
	put(w, s, n);
}

/* As many key columns as the arrays hold: decode refuses a count beyond them. */
static void put_keys(struct wr *w, const struct stp_meta_global *g)
{
	int n = g->nkeys < 0 ? 0 : g->nkeys > STP_MAX_KEYS ? STP_MAX_KEYS : g->nkeys;

	put_le(w, (uint32_t)g->nkeys, 4);
	for (int k = 0; k < n; k++) {
		put_le(w, (uint32_t)g->key_types[k], 4);
		put_le(w, g->key_offsets[k], 4);
	}
}

static void put_fields(struct wr *w, const char *base, const struct rec_desc *rd)
{
	for (size_t i = 0; i < rd->nfields; i++) {
		const void *p = base + rd->fields[i].off;

		switch (rd->fields[i].type) {
		case W_STR: put_str(w, *(const char *const *)p); break;
		case W_BOOL: put_le(w, *(const bool *)p, 1); break;
		case W_32: put_le(w, *(const uint32_t *)p, 4); break;
		case W_64: put_le(w, *(const uint64_t *)p, 8); break;
		case W_KEYS: put_keys(w, (const void *)base); break;
		}
	}
}

void *stp_meta__encode(const struct stp_meta *m, size_t *len)
{
	struct wr w = { 0 };
	const void *arr[NREC];
	int n[NREC];

	meta_arrays(m, arr, n);
	put_le(&w, STP_META_WIRE_MAGIC, 4);
	put_le(&w, STP_META_WIRE_VERSION, 4);
	put_le(&w, 0, 4);	/* the byte count, once known */
	for (int i = 0; i < NREC; i++) {
		if (n[i] < 0 && !w.err)
			w.err = EINVAL;
		put_le(&w, (uint32_t)n[i], 4);
	}
	put_fields(&w, (const char *)m, &top_rec);
	for (int i = 0; i < NREC; i++)
		for (int k = 0; k < n[i]; k++)
			put_fields(&w, (const char *)arr[i] + (size_t)k * recs[i].size, &recs[i]);
	if (!w.err && w.len > UINT32_MAX)
		w.err = EINVAL;
	if (w.err) {
		free(w.buf);
		errno = w.err;
		return NULL;
	}
	for (int i = 0; i < 4; i++)
		w.buf[TOTAL_AT + i] = (uint8_t)(w.len >> (8 * i));
	*len = w.len;
	return w.buf;
}

/* ---- messages ---- */

static void say(char *err, size_t errlen, const char *prefix, const char *fmt, va_list ap)
{
	char msg[256];

	if (!err || !errlen)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	snprintf(err, errlen, "meta: %s%s", prefix, msg);
}

/* ---- decoding ---- */

struct rd {
	const uint8_t *p, *start, *end;
	char *strs;			/* the block's room for the next string */
	char where[80];			/* "global 3: doc: ": the field being read */
	char *err;
	size_t errlen;
	bool failed;
};

static bool rd_fail(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool rd_fail(struct rd *r, const char *fmt, ...)
{
	va_list ap;

	if (r->failed)
		return false;
	r->failed = true;
	va_start(ap, fmt);
	say(r->err, r->errlen, r->where, fmt, ap);
	va_end(ap);
	return false;
}

static const uint8_t *take(struct rd *r, size_t n)
{
	const uint8_t *p = r->p;

	if (r->failed)
		return NULL;
	if ((size_t)(r->end - r->p) < n) {
		rd_fail(r, "truncated: %zu bytes wanted at byte %zu of %zu", n,
			(size_t)(r->p - r->start), (size_t)(r->end - r->start));
		return NULL;
	}
	r->p += n;
	return p;
}

/* BYTES bytes, little-endian; 0 once failed. */
static uint64_t get_le(struct rd *r, int bytes)
{
	const uint8_t *p = take(r, (size_t)bytes);
	uint64_t v = 0;

	for (int i = 0; p && i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static bool get_bool(struct rd *r)
{
	uint64_t v = get_le(r, 1);

	if (v > 1)
		rd_fail(r, "%u is neither 0 nor 1", (unsigned)v);
	return v == 1;
}

static const char *get_str(struct rd *r)
{
	uint32_t n = (uint32_t)get_le(r, 4);
	const uint8_t *p;
	char *s = r->strs;

	if (r->failed || n == STP_META_WIRE_NULL)
		return NULL;
	if (n > STP_META_WIRE_MAX_STR) {
		rd_fail(r, "a string of %u bytes (at most %u)", n, STP_META_WIRE_MAX_STR);
		return NULL;
	}
	if (!(p = take(r, n)))
		return NULL;
	if (memchr(p, '\0', n)) {
		rd_fail(r, "a NUL byte inside the string");
		return NULL;
	}
	memcpy(s, p, n);
	s[n] = '\0';
	r->strs += n + 1;
	return s;
}

static void get_keys(struct rd *r, struct stp_meta_global *g)
{
	g->nkeys = (int)(uint32_t)get_le(r, 4);
	if (g->nkeys < 0 || g->nkeys > STP_MAX_KEYS) {
		rd_fail(r, "%d keys (0 to %d)", g->nkeys, STP_MAX_KEYS);
		return;
	}
	for (int k = 0; k < g->nkeys; k++) {
		g->key_types[k] = (enum stp_type)get_le(r, 4);
		g->key_offsets[k] = (uint32_t)get_le(r, 4);
	}
}

/* Record RD into BASE; WHAT names it in messages ("global 3"). */
static void get_fields(struct rd *r, char *base, const struct rec_desc *rd, const char *what)
{
	for (size_t i = 0; i < rd->nfields && !r->failed; i++) {
		void *p = base + rd->fields[i].off;

		snprintf(r->where, sizeof(r->where), "%s%s%s: ", what, *what ? ": " : "",
			 rd->fields[i].name);
		switch (rd->fields[i].type) {
		case W_STR: *(const char **)p = get_str(r); break;
		case W_BOOL: *(bool *)p = get_bool(r); break;
		case W_32: *(uint32_t *)p = (uint32_t)get_le(r, 4); break;
		case W_64: *(uint64_t *)p = get_le(r, 8); break;
		case W_KEYS: get_keys(r, (void *)base); break;
		}
	}
}

/* The header: its counts into N, once they fit in the bytes. */
static bool get_header(struct rd *r, uint32_t n[NREC])
{
	size_t len = (size_t)(r->end - r->start), need = rec_min(&top_rec);
	uint32_t magic, version, total;

	snprintf(r->where, sizeof(r->where), "header: ");
	magic = (uint32_t)get_le(r, 4);
	version = (uint32_t)get_le(r, 4);
	total = (uint32_t)get_le(r, 4);
	for (int i = 0; i < NREC; i++)
		n[i] = (uint32_t)get_le(r, 4);
	if (r->failed)
		return false;
	if (magic != STP_META_WIRE_MAGIC)
		return rd_fail(r, "not a script's metadata (magic 0x%08x)", magic);
	if (version != STP_META_WIRE_VERSION)
		return rd_fail(r, "wire version %u, this runtime reads version %d", version,
			       STP_META_WIRE_VERSION);
	if (total != len)
		return rd_fail(r, "%zu bytes, and the header counts %u", len, total);
	for (int i = 0; i < NREC; i++) {
		if (n[i] > STP_META_MAX_COUNT)
			return rd_fail(r, "%u %s (at most %d)", n[i], recs[i].plural,
				       STP_META_MAX_COUNT);
		need += (size_t)n[i] * rec_min(&recs[i]);
	}
	if (need > len - HEADER_BYTES)
		return rd_fail(r, "its counts need %zu bytes or more, and %zu follow", need,
			       len - HEADER_BYTES);
	return true;
}

/* Where each array and the strings go in the block. */
struct layout {
	size_t off[NREC];
	size_t strs, size;
};

static size_t align_up(size_t n)
{
	return (n + 15) & ~(size_t)15;
}

/* Each array with one more, zeroed, element; room for LEN bytes of strings. */
static void lay_out(struct layout *l, const uint32_t n[NREC], size_t len)
{
	size_t off = align_up(sizeof(struct stp_meta));

	for (int i = 0; i < NREC; i++) {
		l->off[i] = off;
		off = align_up(off + ((size_t)n[i] + 1) * recs[i].size);
	}
	l->strs = off;
	l->size = off + len + 1;
}

static void get_body(struct rd *r, char *blk, const struct layout *l, const uint32_t n[NREC])
{
	char *arr[NREC], what[32];

	get_fields(r, blk, &top_rec, "");
	for (int i = 0; i < NREC; i++) {
		arr[i] = blk + l->off[i];
		for (uint32_t k = 0; k < n[i] && !r->failed; k++) {
			snprintf(what, sizeof(what), "%s %u", recs[i].name, k);
			get_fields(r, arr[i] + (size_t)k * recs[i].size, &recs[i], what);
		}
	}
	((int *)(void *)arr[REC_AUTOPRINT])[n[REC_AUTOPRINT]] = -1;
	set_arrays((struct stp_meta *)(void *)blk, arr, n);
	r->where[0] = '\0';
	if (!r->failed && r->p != r->end)
		rd_fail(r, "%zu bytes after its last record", (size_t)(r->end - r->p));
}

static void decode_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void decode_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(err, errlen, "", fmt, ap);
	va_end(ap);
}

struct stp_meta *stp_meta__decode(const void *buf, size_t len, char *err, size_t errlen)
{
	struct rd r = { .p = buf, .start = buf, .err = err, .errlen = errlen };
	uint32_t n[NREC];
	struct layout l;
	char *blk;

	if (len > STP_META_WIRE_MAX_BYTES) {
		decode_err(err, errlen, "%zu bytes (at most %u)", len, STP_META_WIRE_MAX_BYTES);
		return NULL;
	}
	r.end = r.start + len;
	if (!get_header(&r, n))
		return NULL;
	lay_out(&l, n, len);
	if (!(blk = calloc(1, l.size))) {
		decode_err(err, errlen, "out of memory for %zu bytes", l.size);
		return NULL;
	}
	r.strs = blk + l.strs;
	get_body(&r, blk, &l, n);
	if (r.failed || stp_meta__check((struct stp_meta *)(void *)blk, err, errlen) < 0) {
		free(blk);
		return NULL;
	}
	return (struct stp_meta *)(void *)blk;
}

void stp_meta__free(struct stp_meta *m)
{
	free(m);
}

/* ---- checks ---- */

struct ck {
	const struct stp_meta *m;
	char *err;
	size_t errlen;
	bool nomem;
};

static bool bad(struct ck *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool rbad(struct ck *c, enum rec rec, int i, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static bool bad(struct ck *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(c->err, c->errlen, "", fmt, ap);
	va_end(ap);
	return false;
}

static bool word_char(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_';
}

/* 1 to STP_META_MAX_NAME letters, digits and '_'; an identifier does not start with a digit. */
static bool name_ok(const char *s, bool ident)
{
	size_t n = 0;

	if (!s)
		return false;
	for (; s[n] && n <= STP_META_MAX_NAME; n++)
		if (!word_char((unsigned char)s[n]))
			return false;
	return n >= 1 && n <= STP_META_MAX_NAME && !(ident && s[0] >= '0' && s[0] <= '9');
}

/* Record I of kind REC is bad: false, and why ("global 3 'x': ..."). */
static bool rbad(struct ck *c, enum rec rec, int i, const char *fmt, ...)
{
	const char *name = rec == REC_GLOBAL ? c->m->globals[i].name : NULL;
	char prefix[200];
	va_list ap;

	if (name_ok(name, true))
		snprintf(prefix, sizeof(prefix), "%s %d '%s': ", recs[rec].name, i, name);
	else
		snprintf(prefix, sizeof(prefix), "%s %d: ", recs[rec].name, i);
	va_start(ap, fmt);
	say(c->err, c->errlen, prefix, fmt, ap);
	va_end(ap);
	return false;
}

static bool check_limits(struct ck *c)
{
	const struct stp_meta_limits *l = &c->m->limits;

	if (l->maxstringlen < STP_META_MIN_STRINGLEN || l->maxstringlen > STP_META_MAX_STRINGLEN)
		return bad(c, "MAXSTRINGLEN %lld (%d to %d)", (long long)l->maxstringlen,
			   STP_META_MIN_STRINGLEN, STP_META_MAX_STRINGLEN);
	if (l->maxaction < 1 || l->maxaction > STP_META_MAX_ACTION)
		return bad(c, "MAXACTION %lld (1 to %d)", (long long)l->maxaction,
			   STP_META_MAX_ACTION);
	if (l->maxmapentries < 0 || l->maxmapentries > STP_META_MAX_ENTRIES)
		return bad(c, "MAXMAPENTRIES %lld (0 to %u)", (long long)l->maxmapentries,
			   STP_META_MAX_ENTRIES);
	if (l->maxerrors < 0 || l->maxnesting < 0 || l->ringbuf_bytes < 0)
		return bad(c, "a negative MAXERRORS, MAXNESTING or STP_RINGBUF_BYTES");
	return true;
}

static bool check_top(struct ck *c)
{
	const struct stp_meta *m = c->m;
	const void *arr[NREC];
	int n[NREC];

	if (m->version != STP_META_VERSION)
		return bad(c, "version %d, this runtime reads version %d", m->version,
			   STP_META_VERSION);
	if (!name_ok(m->script, false))
		return bad(c, "the script's name is not 1 to %d letters, digits or '_'",
			   STP_META_MAX_NAME);
	if (!m->source)
		return bad(c, "no source text");
	meta_arrays(m, arr, n);
	for (int i = 0; i < NREC; i++) {
		if (n[i] < 0 || n[i] > STP_META_MAX_COUNT)
			return bad(c, "%d %s (0 to %d)", n[i], recs[i].plural, STP_META_MAX_COUNT);
		if (n[i] && !arr[i])
			return bad(c, "%d %s and no array of them", n[i], recs[i].plural);
	}
	return check_limits(c);
}

/* The runtime's own maps (data.c adopts them by name): no global's. */
static const char *reserved_map(const char *name)
{
	static const char *const own[] = {
		GLOBALS_MAP, STP_COUNTERS_MAP, STP_COUNTERS_SHARED_MAP, STP_PROBE_STATS_MAP,
		STP_RINGBUF_MAP,
	};

	for (size_t i = 0; i < N(own); i++)
		if (!strcmp(name, own[i]))
			return own[i];
	return strncmp(name, "prog:", 5) ? NULL : "prog:N";
}

/* A scalar long or string is in stp_globals; anything else in a map of its own. */
static bool check_place(struct ck *c, int i)
{
	const struct stp_meta_global *g = &c->m->globals[i];
	const char *own;

	if (!g->nkeys && g->type != STP_TYPE_STATS) {
		if (strcmp(g->map, GLOBALS_MAP))
			return rbad(c, REC_GLOBAL, i, "a scalar outside map " GLOBALS_MAP);
		if (g->key_size || g->max_entries != 1 || g->wrap)
			return rbad(c, REC_GLOBAL, i, "a scalar with key_size %u, max_entries %u%s",
				    g->key_size, g->max_entries, g->wrap ? " and '%'" : "");
		if ((uint64_t)g->offset + g->value_size > UINT32_MAX)
			return rbad(c, REC_GLOBAL, i, "a scalar at offset %u, past 4 GiB",
				    g->offset);
		return true;
	}
	if ((own = reserved_map(g->map)))
		return rbad(c, REC_GLOBAL, i, "its map has the name of the runtime's own %s", own);
	if (g->max_entries < 1 || g->max_entries > STP_META_MAX_ENTRIES)
		return rbad(c, REC_GLOBAL, i, "max_entries %u (1 to %u)", g->max_entries,
			    STP_META_MAX_ENTRIES);
	if (g->key_size > STP_META_MAX_SIZE)
		return rbad(c, REC_GLOBAL, i, "key_size %u (at most %u)", g->key_size,
			    STP_META_MAX_SIZE);
	if (!g->nkeys && (g->key_size != sizeof(uint32_t) || g->max_entries != 1 || g->wrap))
		return rbad(c, REC_GLOBAL, i, "a scalar statistic with key_size %u, "
			    "max_entries %u%s", g->key_size, g->max_entries,
			    g->wrap ? " and '%'" : "");
	return true;
}

/* Each key column inside the key, before the next; a long's 8 bytes. */
static bool check_keys(struct ck *c, int i)
{
	const struct stp_meta_global *g = &c->m->globals[i];

	for (int k = 0; k < g->nkeys; k++) {
		enum stp_type t = g->key_types[k];
		uint32_t off = g->key_offsets[k], need = t == STP_TYPE_LONG ? 8 : 1;
		bool last = k + 1 == g->nkeys;
		uint32_t end = last ? g->key_size : g->key_offsets[k + 1];

		if (t != STP_TYPE_LONG && t != STP_TYPE_STRING)
			return rbad(c, REC_GLOBAL, i, "key %d has type %d, neither long nor string",
				    k + 1, (int)t);
		if (off > end || end - off < need)
			return rbad(c, REC_GLOBAL, i, "key %d (a %s) at offset %u does not fit "
				    "before %s at %u", k + 1,
				    t == STP_TYPE_LONG ? "long" : "string", off,
				    last ? "the key's end" : "the next key", end);
	}
	return true;
}

/* A statistic's histogram: its buckets as stats.c counts them. */
static bool check_hist(struct ck *c, int i)
{
	const struct stp_meta_hist *h = &c->m->globals[i].hist;
	struct stp_stat_cfg cfg;
	const char *why;
	int want;

	switch (h->kind) {
	case STP_META_HIST_NONE: want = 0; break;
	case STP_META_HIST_LOG: want = STP_HIST_LOG_BUCKETS; break;
	case STP_META_HIST_LINEAR:
		why = stp_stat_cfg_init(&cfg, STP_HIST_LINEAR, h->start, h->stop, h->interval, 0);
		if (why)
			return rbad(c, REC_GLOBAL, i, "%s", why);
		want = cfg.buckets;
		break;
	default: return rbad(c, REC_GLOBAL, i, "histogram kind %d is no kind", (int)h->kind);
	}
	if (h->buckets != want)
		return rbad(c, REC_GLOBAL, i, "a histogram of %d buckets, not %d", h->buckets,
			    want);
	return true;
}

/* A long, MAXSTRINGLEN bytes, or a CPU's partial aggregate with its buckets. */
static bool check_value(struct ck *c, int i)
{
	const struct stp_meta_global *g = &c->m->globals[i];
	bool stats = g->type == STP_TYPE_STATS;
	uint64_t want;
	const char *what;

	if (g->percpu != stats)
		return rbad(c, REC_GLOBAL, i, "%s", stats ? "a statistic, not per-CPU" :
			    "per-CPU, and not a statistic");
	if (!stats && (g->hist.kind != STP_META_HIST_NONE || g->hist.buckets))
		return rbad(c, REC_GLOBAL, i, "a histogram, and not a statistic");
	if (stats && !check_hist(c, i))
		return false;
	if (g->type == STP_TYPE_LONG) {
		want = sizeof(int64_t);
		what = "a long";
	} else if (g->type == STP_TYPE_STRING) {
		want = (uint64_t)c->m->limits.maxstringlen;
		what = "MAXSTRINGLEN";
	} else {
		want = sizeof(struct stp_stat_partial) +
		       (uint64_t)g->hist.buckets * sizeof(int64_t);
		what = "a statistic's partial and buckets";
	}
	if (g->value_size != want)
		return rbad(c, REC_GLOBAL, i, "a value of %u bytes, not %llu (%s)", g->value_size,
			    (unsigned long long)want, what);
	return true;
}

/* Values in slots: an array of longs or strings without '%', both maps named. */
static bool check_slots(struct ck *c, int i)
{
	const struct stp_meta_global *g = &c->m->globals[i];
	const char *own;

	if (!g->values_map && !g->free_map)
		return true;
	if (!g->values_map || !g->free_map || !*g->values_map || !*g->free_map)
		return rbad(c, REC_GLOBAL, i, "a values map needs a free map, and a free map a "
			    "values map");
	if (!g->nkeys || g->type == STP_TYPE_STATS || g->wrap)
		return rbad(c, REC_GLOBAL, i, "values in slots, and not an array of longs or "
			    "strings without '%%'");
	if ((own = reserved_map(g->values_map)) || (own = reserved_map(g->free_map)))
		return rbad(c, REC_GLOBAL, i, "a slot map has the name of the runtime's own %s",
			    own);
	return true;
}

static bool check_global(struct ck *c, int i)
{
	const struct stp_meta_global *g = &c->m->globals[i];

	if (!name_ok(g->name, true))
		return rbad(c, REC_GLOBAL, i, "its name is not an identifier of 1 to %d bytes",
			    STP_META_MAX_NAME);
	if (g->type != STP_TYPE_LONG && g->type != STP_TYPE_STRING && g->type != STP_TYPE_STATS)
		return rbad(c, REC_GLOBAL, i, "type %d is no type", (int)g->type);
	if (g->nkeys < 0 || g->nkeys > STP_MAX_KEYS)
		return rbad(c, REC_GLOBAL, i, "%d keys (0 to %d)", g->nkeys, STP_MAX_KEYS);
	if (!g->map || !*g->map)
		return rbad(c, REC_GLOBAL, i, "no map");
	return check_place(c, i) && check_keys(c, i) && check_value(c, i) && check_slots(c, i);
}

/* ---- names: globals' and maps', no two alike ---- */

enum role { ROLE_NAME, ROLE_MAP, ROLE_VALUES, ROLE_FREE };

static const char *const role_names[] = { "name", "map", "values map", "free map" };

struct named {
	const char *name;
	int global;
	enum role role;
};

static int by_name(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int d = strcmp(x->name, y->name);

	if (d)
		return d;
	return x->global != y->global ? (x->global > y->global) - (x->global < y->global) :
					(int)x->role - (int)y->role;
}

static bool unique(struct ck *c, struct named *list, int n)
{
	qsort(list, (size_t)n, sizeof(*list), by_name);
	for (int k = 1; k < n; k++) {
		const struct named *a = &list[k - 1], *b = &list[k];

		if (strcmp(a->name, b->name))
			continue;
		if (a->role == ROLE_NAME)
			return bad(c, "globals %d and %d are both named '%s'", a->global, b->global,
				   a->name);
		return bad(c, "the %s of global %d is also the %s of global %d",
			   role_names[a->role], a->global, role_names[b->role], b->global);
	}
	return true;
}

static int add_maps(const struct stp_meta_global *g, int i, struct named *list)
{
	int n = 0;

	if (g->nkeys || g->type == STP_TYPE_STATS)	/* scalars share stp_globals */
		list[n++] = (struct named){ g->map, i, ROLE_MAP };
	if (g->values_map)
		list[n++] = (struct named){ g->values_map, i, ROLE_VALUES };
	if (g->free_map)
		list[n++] = (struct named){ g->free_map, i, ROLE_FREE };
	return n;
}

static bool check_names(struct ck *c)
{
	const struct stp_meta *m = c->m;
	struct named *list = malloc(((size_t)m->nglobals * 3 + 1) * sizeof(*list));
	bool ok;
	int n = 0;

	if (!list) {
		c->nomem = true;
		return bad(c, "out of memory");
	}
	for (int i = 0; i < m->nglobals; i++)
		list[n++] = (struct named){ m->globals[i].name, i, ROLE_NAME };
	ok = unique(c, list, n);
	n = 0;
	for (int i = 0; i < m->nglobals; i++)
		n += add_maps(&m->globals[i], i, list + n);
	ok = ok && unique(c, list, n);
	free(list);
	return ok;
}

/* ---- probes and the rest ---- */

static bool check_probe(struct ck *c, int i)
{
	const struct stp_meta_probe *p = &c->m->probes[i];
	int f = p->uprobe_file;

	if (!p->point)
		return rbad(c, REC_PROBE, i, "no probe point");
	if (p->kind < STP_PROBE_BEGIN || p->kind > STP_PROBE_NETFILTER)
		return rbad(c, REC_PROBE, i, "kind %d is no probe kind", (int)p->kind);
	if (p->kind == STP_PROBE_PROCFS && (!p->procfs_path || p->procfs_maxsize <= 0))
		return rbad(c, REC_PROBE, i, "a procfs file with no name or no room");
	if (p->context != STP_CTX_KERNEL && p->context != STP_CTX_USER)
		return rbad(c, REC_PROBE, i, "context %d is neither kernel nor user",
			    (int)p->context);
	if (p->context == STP_CTX_KERNEL && !p->prog)
		return rbad(c, REC_PROBE, i, "runs in the kernel, and names no program");
	/* the translator leaves 0 in probes of other kinds, whatever nfiles */
	if ((f < -1 || f >= c->m->nfiles) && (p->kind == STP_PROBE_UPROBE || f != 0))
		return rbad(c, REC_PROBE, i, "uprobe file %d, and the script has %d files", f,
			    c->m->nfiles);
	return true;
}

/* Hex digits, two a byte, STP_BUILD_ID_MAX bytes at most ("": none). */
static bool build_id_ok(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strspn(s, "0123456789abcdefABCDEF");
	return !s[n] && n % 2 == 0 && n <= 2 * STP_BUILD_ID_MAX;
}

static bool check_tables(struct ck *c)
{
	const struct stp_meta *m = c->m;

	for (int i = 0; i < m->nformats; i++)
		if (!m->formats[i].body)
			return rbad(c, REC_FORMAT, i, "no body");
	for (int i = 0; i < m->nerrors; i++)
		if (!m->errors[i].what)
			return rbad(c, REC_ERROR, i, "no words for the error");
	for (int i = 0; i < m->nfiles; i++) {
		if (!m->files[i].path || !*m->files[i].path)
			return rbad(c, REC_FILE, i, "no path");
		if (!build_id_ok(m->files[i].build_id))
			return rbad(c, REC_FILE, i, "its build-id is not hex of %d bytes at most",
				    STP_BUILD_ID_MAX);
	}
	for (int i = 0; i < m->nautoprint; i++)
		if (m->autoprint[i] < 0 || m->autoprint[i] >= m->nglobals)
			return rbad(c, REC_AUTOPRINT, i, "global %d, and the script has %d globals",
				    m->autoprint[i], m->nglobals);
	return true;
}

int stp_meta__check(const struct stp_meta *m, char *err, size_t errlen)
{
	struct ck c = { .m = m, .err = err, .errlen = errlen };
	bool ok = check_top(&c);

	for (int i = 0; ok && i < m->nglobals; i++)
		ok = check_global(&c, i);
	ok = ok && check_names(&c);
	for (int i = 0; ok && i < m->nprobes; i++)
		ok = check_probe(&c, i);
	ok = ok && check_tables(&c);
	if (ok)
		return 0;
	return c.nomem ? -ENOMEM : -EINVAL;
}
