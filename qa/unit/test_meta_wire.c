/*
 * test_meta_wire.c - runtime/user/meta_wire.c: a script's struct stp_meta
 * as bytes and back.
 *
 * A meta that uses every field (scalars, multi-key arrays, slotted values,
 * statistics with log and linear histograms, probes of most kinds, files,
 * formats, errors, autoprint) comes back field by field, in one block.
 * Its encoding cut at every length, and corrupted a few thousand times,
 * is refused or decodes to a meta that passes the checks; the decoder
 * reads copies of exactly the bytes given, so a build with
 * SANITIZE=-fsanitize=address,undefined catches any read past them.  Each
 * invariant broken, and each malformed header or field, is refused with
 * its reason, word for word.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "../../runtime/user/meta_wire.h"

#define NG 7
#define NP 8

/* A meta with every field in use, in arrays a case may break. */
struct fixture {
	struct stp_meta m;
	struct stp_meta_global g[NG];
	struct stp_meta_probe p[NP];
	struct stp_meta_format f[2];
	struct stp_meta_error e[2];
	struct stp_meta_file fl[2];
	int ap[3];
};

static struct fixture fx;
static char err[512];

static int handler(struct stp_uctx *u)
{
	return u != NULL;
}

static void fixture_globals(struct fixture *f)
{
	f->g[0] = (struct stp_meta_global){
		.name = "count", .type = STP_TYPE_LONG, .map = "stp_globals", .value_size = 8,
		.max_entries = 1, .exported = true, .doc = "/** Calls.\n * @units count */",
		.loc = { "t.stp", 2, 8 },
	};
	f->g[1] = (struct stp_meta_global){
		.name = "label", .type = STP_TYPE_STRING, .map = "stp_globals", .offset = 8,
		.value_size = 512, .max_entries = 1,
	};
	f->g[2] = (struct stp_meta_global){
		.name = "bytes", .type = STP_TYPE_LONG, .nkeys = 2,
		.key_types = { STP_TYPE_STRING, STP_TYPE_LONG }, .key_offsets = { 0, 248 },
		.map = "g_bytes", .key_size = 256, .value_size = 8, .max_entries = 4096,
		.exported = true, .doc = "Bytes by name and fd.", .loc = { "t.stp", 4, 8 },
		.values_map = "gv_bytes", .free_map = "gf_bytes",
	};
	f->g[3] = (struct stp_meta_global){
		.name = "names", .type = STP_TYPE_STRING, .nkeys = 3,
		.key_types = { STP_TYPE_LONG, STP_TYPE_STRING, STP_TYPE_LONG },
		.key_offsets = { 0, 8, 168 }, .map = "g_names", .key_size = 176, .value_size = 512,
		.max_entries = 100, .wrap = true, .loc = { "t.stp", 5, 8 },
	};
	f->g[4] = (struct stp_meta_global){
		.name = "lat", .type = STP_TYPE_STATS, .map = "g_lat", .key_size = 4,
		.value_size = 56 + 128 * 8, .max_entries = 1, .percpu = true,
		.hist = { STP_META_HIST_LOG, 0, 0, 0, 128 }, .exported = true,
		.loc = { "x.stp", 6, 1 },
	};
	f->g[5] = (struct stp_meta_global){
		.name = "lin", .type = STP_TYPE_STATS, .nkeys = 1, .key_types = { STP_TYPE_STRING },
		.map = "g_lin", .key_size = 64, .value_size = 56 + 13 * 8, .max_entries = 2048,
		.wrap = true, .percpu = true, .hist = { STP_META_HIST_LINEAR, -20, 80, 10, 13 },
		.loc = { "t.stp", 7, 8 },
	};
	f->g[6] = (struct stp_meta_global){
		.name = "plain", .type = STP_TYPE_STATS, .map = "g_plain", .key_size = 4,
		.value_size = 56, .max_entries = 1, .percpu = true, .loc = { "t.stp", 8, 8 },
	};
}

static void fixture_probes(struct fixture *f)
{
	struct stp_meta_probe *p = f->p;

	p[0] = (struct stp_meta_probe){ .point = "begin(-5)", .loc = { "t.stp", 10, 1 },
		.kind = STP_PROBE_BEGIN, .context = STP_CTX_USER, .handler = handler,
		.priority = -5 };
	p[1] = (struct stp_meta_probe){ .point = "timer.ms(100).randomize(5)",
		.kind = STP_PROBE_TIMER, .context = STP_CTX_USER, .handler = handler,
		.interval_ns = 100000000, .randomize_ns = 5000000 };
	p[2] = (struct stp_meta_probe){ .point = "kernel.trace(\"sched:sched_switch\")?",
		.loc = { "t.stp", 12, 1 }, .kind = STP_PROBE_TRACEPOINT, .context = STP_CTX_KERNEL,
		.prog = "probe_2", .tp_system = "sched", .tp_name = "sched_switch",
		.optional = true };
	p[3] = (struct stp_meta_probe){ .point = "perf.type(1).config(3).sample(10000)",
		.kind = STP_PROBE_PERF, .context = STP_CTX_KERNEL, .prog = "probe_3",
		.perf_type = 1, .perf_config = 0xfedcba9876543210ull, .perf_sample = 10000 };
	p[4] = (struct stp_meta_probe){
		.point = "process(\"/usr/bin/true\").function(\"main\").return",
		.kind = STP_PROBE_UPROBE, .context = STP_CTX_KERNEL, .prog = "probe_4",
		.target = "main", .uprobe_path = "/usr/bin/true",
		.uprobe_offset = 0x8000000000001234ull,
		.uprobe_return = true, .uprobe_ref_ctr_offset = 0x4088, .uprobe_pid = 42,
		.uprobe_file = 1 };
	p[5] = (struct stp_meta_probe){ .point = "kernel.function(\"vfs_read\").return",
		.kind = STP_PROBE_KFUNC, .context = STP_CTX_KERNEL, .prog = "probe_5",
		.target = "vfs_read", .kprobe = true, .kprobe_return = true };
	p[6] = (struct stp_meta_probe){ .point = "kernel.trace(\"irq_handler_entry\")",
		.kind = STP_PROBE_RAW_TRACEPOINT, .context = STP_CTX_KERNEL, .prog = "probe_6",
		.tp_name = "irq_handler_entry", .uprobe_file = -1 };
	p[7] = (struct stp_meta_probe){ .point = "process.end", .kind = STP_PROBE_PROCESS_END,
		.context = STP_CTX_USER, .handler = handler, .uprobe_pid = -7 };
}

static void fixture_init(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	fixture_globals(f);
	fixture_probes(f);
	f->f[0] = (struct stp_meta_format){ "%d bytes from %s\\n", { "t.stp", 12, 3 } };
	f->f[1] = (struct stp_meta_format){ "", { NULL, 0, 0 } };
	f->e[0] = (struct stp_meta_error){ "division by 0", { "t.stp", 13, 9 }, "operator '/'" };
	f->e[1] = (struct stp_meta_error){ "MAXACTION exceeded", { "t.stp", 14, 1 }, NULL };
	f->fl[0] = (struct stp_meta_file){ "/usr/lib/x86_64-linux-gnu/libc.so.6",
		"0123456789abcdefABCDEF0123456789abcdef01", 2125328, 1700000000123456789 };
	f->fl[1] = (struct stp_meta_file){ "/usr/bin/true", "", 39224, -5 };
	f->ap[0] = 0;
	f->ap[1] = 3;
	f->ap[2] = 6;
	f->m = (struct stp_meta){
		.version = STP_META_VERSION, .script = "rich_1",
		.source = "global count\n# \xc3\xbcnicode \xe2\x9c\x93\nprobe begin { }\n",
		.globals = f->g, .nglobals = NG, .probes = f->p, .nprobes = NP,
		.formats = f->f, .nformats = 2, .errors = f->e, .nerrors = 2,
		.files = f->fl, .nfiles = 2, .autoprint = f->ap, .nautoprint = 3,
		.limits = { 512, 2048, 1000, 3, 10, 1 << 20 },
	};
}

/* ---- comparing ---- */

#define EQ(f) CU_ASSERT_EQUAL(a->f, b->f)

static void same_str(const char *a, const char *b)
{
	CU_ASSERT_EQUAL(!a, !b);
	if (a && b)
		CU_ASSERT_STRING_EQUAL(a, b);
}

static void same_loc(const struct stp_loc *a, const struct stp_loc *b)
{
	same_str(a->file, b->file);
	EQ(line);
	EQ(col);
}

static void same_global(const struct stp_meta_global *a, const struct stp_meta_global *b)
{
	same_str(a->name, b->name);
	EQ(type);
	EQ(nkeys);
	for (int k = 0; k < STP_MAX_KEYS; k++) {	/* unused columns: zero on both sides */
		EQ(key_types[k]);
		EQ(key_offsets[k]);
	}
	same_str(a->map, b->map);
	EQ(offset);
	EQ(key_size);
	EQ(value_size);
	EQ(max_entries);
	EQ(wrap);
	EQ(percpu);
	EQ(hist.kind);
	EQ(hist.start);
	EQ(hist.stop);
	EQ(hist.interval);
	EQ(hist.buckets);
	EQ(exported);
	same_str(a->doc, b->doc);
	same_loc(&a->loc, &b->loc);
	same_str(a->values_map, b->values_map);
	same_str(a->free_map, b->free_map);
}

/* B is A decoded: the same, but for the handler. */
static void same_probe(const struct stp_meta_probe *a, const struct stp_meta_probe *b)
{
	same_str(a->point, b->point);
	same_loc(&a->loc, &b->loc);
	EQ(kind);
	EQ(context);
	same_str(a->prog, b->prog);
	CU_ASSERT_PTR_NULL(b->handler);
	EQ(priority);
	EQ(interval_ns);
	EQ(randomize_ns);
	EQ(perf_type);
	EQ(perf_config);
	EQ(perf_sample);
	same_str(a->tp_system, b->tp_system);
	same_str(a->tp_name, b->tp_name);
	same_str(a->target, b->target);
	EQ(optional);
	same_str(a->uprobe_path, b->uprobe_path);
	EQ(uprobe_offset);
	EQ(uprobe_return);
	EQ(uprobe_ref_ctr_offset);
	EQ(uprobe_pid);
	EQ(uprobe_file);
	EQ(kprobe);
	EQ(kprobe_return);
}

static void same_tables(const struct stp_meta *a, const struct stp_meta *b)
{
	for (int i = 0; i < a->nformats && i < b->nformats; i++) {
		same_str(a->formats[i].body, b->formats[i].body);
		same_loc(&a->formats[i].loc, &b->formats[i].loc);
	}
	for (int i = 0; i < a->nerrors && i < b->nerrors; i++) {
		same_str(a->errors[i].what, b->errors[i].what);
		same_loc(&a->errors[i].loc, &b->errors[i].loc);
		same_str(a->errors[i].near, b->errors[i].near);
	}
	for (int i = 0; i < a->nfiles && i < b->nfiles; i++) {
		same_str(a->files[i].path, b->files[i].path);
		same_str(a->files[i].build_id, b->files[i].build_id);
		EQ(files[i].size);
		EQ(files[i].mtime_ns);
	}
	for (int i = 0; i < a->nautoprint && i < b->nautoprint; i++)
		EQ(autoprint[i]);
}

/* B is A decoded; its arrays end as the translator's do. */
static void same_meta(const struct stp_meta *a, const struct stp_meta *b)
{
	EQ(version);
	same_str(a->script, b->script);
	same_str(a->source, b->source);
	EQ(nglobals);
	EQ(nprobes);
	EQ(nformats);
	EQ(nerrors);
	EQ(nfiles);
	EQ(nautoprint);
	EQ(limits.maxstringlen);
	EQ(limits.maxmapentries);
	EQ(limits.maxaction);
	EQ(limits.maxerrors);
	EQ(limits.maxnesting);
	EQ(limits.ringbuf_bytes);
	for (int i = 0; i < a->nglobals && i < b->nglobals; i++)
		same_global(&a->globals[i], &b->globals[i]);
	for (int i = 0; i < a->nprobes && i < b->nprobes; i++)
		same_probe(&a->probes[i], &b->probes[i]);
	same_tables(a, b);
	CU_ASSERT_PTR_NULL(b->globals[b->nglobals].name);
	CU_ASSERT_PTR_NULL(b->probes[b->nprobes].point);
	CU_ASSERT_PTR_NULL(b->formats[b->nformats].body);
	CU_ASSERT_PTR_NULL(b->errors[b->nerrors].what);
	CU_ASSERT_PTR_NULL(b->files[b->nfiles].path);
	CU_ASSERT_EQUAL(b->autoprint[b->nautoprint], -1);
}

#undef EQ

/* ---- helpers ---- */

static uint8_t *encode(const struct stp_meta *m, size_t *len)
{
	uint8_t *buf = stp_meta__encode(m, len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	return buf;
}

/* Decode a copy of exactly LEN bytes of BUF, so that a read past them is caught. */
static struct stp_meta *decode(const uint8_t *buf, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);
	struct stp_meta *m;

	CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
	memcpy(copy, buf, len);
	err[0] = '\0';
	m = stp_meta__decode(copy, len, err, sizeof(err));
	free(copy);
	return m;
}

static void set32(uint8_t *buf, size_t at, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		buf[at + i] = (uint8_t)(v >> (8 * i));
}

#define TOTAL_AT 8
#define COUNTS_AT 12
#define BODY_AT 36

/* Every string and element of M, read: what a reader would touch. */
static size_t walk(const struct stp_meta *m)
{
	size_t n = strlen(m->script) + strlen(m->source);

	for (int i = 0; i < m->nglobals; i++)
		n += strlen(m->globals[i].name) + strlen(m->globals[i].map) +
		     (m->globals[i].doc ? strlen(m->globals[i].doc) : 0) + m->globals[i].value_size;
	for (int i = 0; i < m->nprobes; i++)
		n += strlen(m->probes[i].point) +
		     (m->probes[i].prog ? strlen(m->probes[i].prog) : 0);
	for (int i = 0; i < m->nformats; i++)
		n += strlen(m->formats[i].body);
	for (int i = 0; i < m->nerrors; i++)
		n += strlen(m->errors[i].what);
	for (int i = 0; i < m->nfiles; i++)
		n += strlen(m->files[i].path) + strlen(m->files[i].build_id);
	for (int i = 0; i < m->nautoprint; i++)
		n += strlen(m->globals[m->autoprint[i]].name);
	return n;
}

/* ---- round trips ---- */

static void roundtrip_every_field(void)
{
	size_t len;
	uint8_t *buf;
	struct stp_meta *m;

	fixture_init(&fx);
	CU_ASSERT_EQUAL(stp_meta__check(&fx.m, err, sizeof(err)), 0);
	buf = encode(&fx.m, &len);
	m = decode(buf, len);
	if (!m)
		fprintf(stderr, "decode: %s\n", err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	same_meta(&fx.m, m);
	stp_meta__free(m);
	free(buf);
}

/* Nothing but the script: the arrays are there, empty, and end as emitted. */
static void roundtrip_empty(void)
{
	struct stp_meta e = {
		.version = STP_META_VERSION, .script = "0_empty", .source = "",
		.limits = { .maxstringlen = 16, .maxaction = 1 },
	};
	size_t len;
	uint8_t *buf = encode(&e, &len);
	struct stp_meta *m = decode(buf, len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	same_meta(&e, m);
	CU_ASSERT_STRING_EQUAL(m->source, "");
	stp_meta__free(m);
	free(buf);
}

static void reencode_same_bytes(void)
{
	size_t len, len2;
	uint8_t *buf, *buf2;
	struct stp_meta *m;

	fixture_init(&fx);
	buf = encode(&fx.m, &len);
	m = decode(buf, len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	buf2 = encode(m, &len2);
	CU_ASSERT_EQUAL_FATAL(len2, len);
	CU_ASSERT_EQUAL(memcmp(buf, buf2, len), 0);
	stp_meta__free(m);
	free(buf);
	free(buf2);
}

static bool inside(const void *p, const void *blk, size_t size)
{
	return (const char *)p >= (const char *)blk && (const char *)p < (const char *)blk + size;
}

/* The arrays and every string are in the block stp_meta__free frees. */
static void one_block(void)
{
	size_t len, size;
	uint8_t *buf;
	struct stp_meta *m;

	fixture_init(&fx);
	buf = encode(&fx.m, &len);
	m = decode(buf, len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	size = malloc_usable_size(m);
	CU_ASSERT(inside(m->script, m, size) && inside(m->source, m, size));
	CU_ASSERT(inside(m->globals, m, size) && inside(m->probes, m, size));
	CU_ASSERT(inside(m->formats, m, size) && inside(m->errors, m, size));
	CU_ASSERT(inside(m->files, m, size) && inside(m->autoprint, m, size));
	for (int i = 0; i < m->nglobals; i++)
		CU_ASSERT(inside(m->globals[i].name, m, size) &&
			  inside(m->globals[i].map, m, size));
	for (int i = 0; i < m->nprobes; i++)
		CU_ASSERT(inside(m->probes[i].point, m, size));
	CU_ASSERT(inside(m->files[1].build_id, m, size));
	stp_meta__free(m);
	free(buf);
}

/*
 * Records as small as they get (the script's name and a global as small
 * as valid ones get: 13 bytes more): the counts' bound is exact, and a probe of another kind
 * keeps the translator's uprobe_file 0 though the script has no files.
 */
static void smallest_records(void)
{
	static struct stp_meta_global g = {
		.name = "a", .type = STP_TYPE_LONG, .map = "stp_globals", .value_size = 8,
		.max_entries = 1,
	};
	static struct stp_meta_probe p[1000];
	static struct stp_meta_format f[500];
	static struct stp_meta_error e[500];
	static int ap[1000];
	struct stp_meta s = {
		.version = STP_META_VERSION, .script = "s", .source = "",
		.limits = { .maxstringlen = 16, .maxaction = 1 },
		.globals = &g, .nglobals = 1, .probes = p, .nprobes = 1000, .formats = f,
		.nformats = 500, .errors = e, .nerrors = 500, .autoprint = ap, .nautoprint = 1000,
	};
	size_t len, need = 60 + 91 + 1000 * 173 + 500 * 16 + 500 * 20 + 1000 * 4;
	uint8_t *buf;
	struct stp_meta *m;
	char want[160];

	for (int i = 0; i < 1000; i++)
		p[i] = (struct stp_meta_probe){ .point = "", .kind = STP_PROBE_NEVER,
						.context = STP_CTX_USER };
	for (int i = 0; i < 500; i++) {
		f[i].body = "";
		e[i].what = "";
	}
	buf = encode(&s, &len);
	CU_ASSERT_EQUAL_FATAL(len, BODY_AT + need + 13);
	m = decode(buf, len);
	CU_ASSERT_PTR_NOT_NULL(m);
	stp_meta__free(m);
	set32(buf, TOTAL_AT, (uint32_t)len - 13);	/* the bound holds: cut short later */
	CU_ASSERT_PTR_NULL(decode(buf, len - 13));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ": truncated: "));
	set32(buf, TOTAL_AT, (uint32_t)len - 14);
	CU_ASSERT_PTR_NULL(decode(buf, len - 14));
	snprintf(want, sizeof(want), "meta: header: its counts need %zu bytes or more, and %zu "
		 "follow", need, need - 1);
	CU_ASSERT_STRING_EQUAL(err, want);
	free(buf);
}

/* ---- hostile bytes ---- */

/* Every prefix of an encoding, with its own byte count or with the header's fixed. */
static void every_truncation(void)
{
	size_t len, deep = 0;
	uint8_t *buf;

	fixture_init(&fx);
	buf = encode(&fx.m, &len);
	for (size_t n = 0; n < len; n++) {
		CU_ASSERT_PTR_NULL(decode(buf, n));
		CU_ASSERT_NSTRING_EQUAL(err, "meta: ", 6);
		if (n < TOTAL_AT + 4)
			continue;
		set32(buf, TOTAL_AT, (uint32_t)n);
		CU_ASSERT_PTR_NULL(decode(buf, n));
		CU_ASSERT_NSTRING_EQUAL(err, "meta: ", 6);
		deep += strstr(err, ": truncated: ") != NULL;
		set32(buf, TOTAL_AT, (uint32_t)len);
	}
	CU_ASSERT(deep > 100);	/* cuts past what the counts need fail inside the records */
	free(buf);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* One byte, or one 32-bit word (with values that are counts' and lengths' edges). */
static void corrupt(uint8_t *buf, size_t len)
{
	const uint32_t edges[] = { 0, 1, 2, 9, 10, 65535, 65536, 65537, 0x7fffffff, 0x80000000,
				   0xfffffffe, 0xffffffff, (uint32_t)len, (uint32_t)len + 1,
				   1u << 20, (1u << 20) + 1 };
	uint32_t r = rnd(), at = rnd(), v = rnd();

	if (r & 1)
		buf[at % len] ^= (uint8_t)(1 + v % 255);
	else
		set32(buf, at % (len - 3),
		      r & 2 ? v : edges[v % (sizeof(edges) / sizeof(edges[0]))]);
}

/* Corrupted encodings: refused, or a meta that checks, walks and encodes again. */
static void random_corruptions(void)
{
	size_t len, len2;
	uint8_t *buf, *bad;
	int decoded = 0, refused = 0;

	fixture_init(&fx);
	buf = encode(&fx.m, &len);
	bad = malloc(len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(bad);
	for (int i = 0; i < 5000; i++) {
		struct stp_meta *m;
		uint8_t *again;

		memcpy(bad, buf, len);
		corrupt(bad, len);
		if (i % 2)
			corrupt(bad, len);
		if (!(m = decode(bad, len))) {
			refused++;
			CU_ASSERT_NSTRING_EQUAL(err, "meta: ", 6);
			continue;
		}
		decoded++;
		CU_ASSERT_EQUAL(stp_meta__check(m, err, sizeof(err)), 0);
		CU_ASSERT(walk(m) > 0);
		again = stp_meta__encode(m, &len2);
		CU_ASSERT_PTR_NOT_NULL(again);
		free(again);
		stp_meta__free(m);
	}
	CU_ASSERT(decoded > 100 && refused > 100);
	free(bad);
	free(buf);
}

/* Malformed headers and fields, each with its reason. */
static void wire_refusals(void)
{
	size_t len, at;
	uint8_t *buf, *big;
	char want[160];

	fixture_init(&fx);
	buf = encode(&fx.m, &len);
	buf = realloc(buf, len + 3);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
#define REFUSED(n, msg)                                     \
	do {                                                \
		CU_ASSERT_PTR_NULL(decode(buf, n));         \
		CU_ASSERT_STRING_EQUAL(err, msg);           \
		if (strcmp(err, msg))                       \
			fprintf(stderr, "got: %s\n", err);  \
	} while (0)
	set32(buf, 0, 0x12345678);
	REFUSED(len, "meta: header: not a script's metadata (magic 0x12345678)");
	set32(buf, 0, STP_META_WIRE_MAGIC);
	set32(buf, 4, 2);
	REFUSED(len, "meta: header: wire version 2, this runtime reads version 1");
	set32(buf, 4, STP_META_WIRE_VERSION);
	memset(buf + len, 0, 3);
	snprintf(want, sizeof(want), "meta: header: %zu bytes, and the header counts %zu", len + 1,
		 len);
	REFUSED(len + 1, want);
	set32(buf, TOTAL_AT, (uint32_t)len + 3);
	REFUSED(len + 3, "meta: 3 bytes after its last record");
	set32(buf, TOTAL_AT, (uint32_t)len);
	set32(buf, COUNTS_AT, 65537);
	REFUSED(len, "meta: header: 65537 globals (at most 65536)");
	set32(buf, COUNTS_AT, NG);
	set32(buf, COUNTS_AT + 4, 65536);	/* probes: 173 bytes each at least */
	snprintf(want, sizeof(want), "meta: header: its counts need %d bytes or more, and %zu "
		 "follow", 60 + NG * 91 + 65536 * 173 + 2 * 16 + 2 * 20 + 2 * 24 + 3 * 4,
		 len - BODY_AT);
	REFUSED(len, want);
	set32(buf, COUNTS_AT + 4, NP);
	at = BODY_AT + 4;	/* the script's name: "rich_1" */
	set32(buf, at, (1u << 20) + 1);
	REFUSED(len, "meta: script: a string of 1048577 bytes (at most 1048576)");
	set32(buf, at, 6);
	buf[at + 4 + 2] = '\0';
	REFUSED(len, "meta: script: a NUL byte inside the string");
	buf[at + 4 + 2] = 'c';
	at += 4 + 6 + 4 + strlen(fx.m.source) + 6 * 8;	/* global 0 */
	at += 4 + 5 + 4;	/* name, type: nkeys */
	set32(buf, at, 10);
	REFUSED(len, "meta: global 0: nkeys: 10 keys (0 to 9)");
	set32(buf, at, 0);
	at += 4 + 4 + 11 + 4 * 4;	/* nkeys, map, offset, key_size, value_size, max_entries */
	buf[at] = 2;
	REFUSED(len, "meta: global 0: wrap: 2 is neither 0 nor 1");
	buf[at] = 0;
	CU_ASSERT_PTR_NOT_NULL(big = calloc(1, STP_META_WIRE_MAX_BYTES + 1));
	CU_ASSERT_PTR_NULL(stp_meta__decode(big, STP_META_WIRE_MAX_BYTES + 1, err, sizeof(err)));
	CU_ASSERT_STRING_EQUAL(err, "meta: 67108865 bytes (at most 67108864)");
	free(big);
	CU_ASSERT_PTR_NULL(stp_meta__decode(buf, 0, NULL, 0));	/* nowhere for a reason */
	{
		struct stp_meta *m = decode(buf, len);	/* and it was all put back */

		CU_ASSERT_PTR_NOT_NULL(m);
		stp_meta__free(m);
	}
#undef REFUSED
	free(buf);
}

static void encode_refuses_negative_counts(void)
{
	size_t len;

	fixture_init(&fx);
	fx.m.nerrors = -1;
	errno = 0;
	CU_ASSERT_PTR_NULL(stp_meta__encode(&fx.m, &len));
	CU_ASSERT_EQUAL(errno, EINVAL);
}

/* ---- invariants ---- */

#define NOWIRE ((const char *)1)	/* the case cannot be encoded: check it only */

/*
 * Break case C of the fixture; what check says of it (and, in *WIRE, what
 * decode says when it differs, or NOWIRE).  NULL: no more cases.
 */
static const char *breaks(struct fixture *f, int c, const char **wire)
{
	struct stp_meta_global *g = f->g;
	struct stp_meta_probe *p = f->p;
	static char hex[140];

	*wire = NULL;
	switch (c) {
	case 0:
		f->m.version = 1;
		snprintf(hex, sizeof(hex), "meta: version 1, this runtime reads version %d",
			 STP_META_VERSION);
		return hex;
	case 1:
		f->m.script = "a.b";
		return "meta: the script's name is not 1 to 128 letters, digits or '_'";
	case 2: f->m.source = NULL; return "meta: no source text";
	case 3: f->m.limits.maxstringlen = 8; return "meta: MAXSTRINGLEN 8 (16 to 65536)";
	case 4: f->m.limits.maxaction = 0; return "meta: MAXACTION 0 (1 to 4194304)";
	case 5:
		f->m.limits.ringbuf_bytes = -1;
		return "meta: a negative MAXERRORS, MAXNESTING or STP_RINGBUF_BYTES";
	case 6:
		f->m.limits.maxmapentries = 1 << 25;
		return "meta: MAXMAPENTRIES 33554432 (0 to 16777216)";
	case 7:
		f->m.nformats = 65537;
		*wire = NOWIRE;
		return "meta: 65537 formats (0 to 65536)";
	case 8:
		f->m.files = NULL;
		*wire = NOWIRE;
		return "meta: 2 files and no array of them";
	case 9:
		g[3].name = "na mes";
		return "meta: global 3: its name is not an identifier of 1 to 128 bytes";
	case 10:
		g[3].name = "3x";
		return "meta: global 3: its name is not an identifier of 1 to 128 bytes";
	case 11: g[0].type = 7; return "meta: global 0 'count': type 7 is no type";
	case 12:
		g[2].nkeys = 10;
		*wire = "meta: global 2: nkeys: 10 keys (0 to 9)";
		return "meta: global 2 'bytes': 10 keys (0 to 9)";
	case 13:
		g[2].nkeys = -1;
		*wire = "meta: global 2: nkeys: -1 keys (0 to 9)";
		return "meta: global 2 'bytes': -1 keys (0 to 9)";
	case 14: g[2].map = ""; return "meta: global 2 'bytes': no map";
	case 15:
		g[0].map = "g_count";
		return "meta: global 0 'count': a scalar outside map stp_globals";
	case 16:
		g[1].key_size = 4;
		return "meta: global 1 'label': a scalar with key_size 4, max_entries 1";
	case 17:
		g[0].wrap = true;
		return "meta: global 0 'count': a scalar with key_size 0, max_entries 1 and '%'";
	case 18:
		g[1].offset = UINT32_MAX - 100;
		return "meta: global 1 'label': a scalar at offset 4294967195, past 4 GiB";
	case 19:
		g[2].map = "stp_counters";
		return "meta: global 2 'bytes': its map has the name of the runtime's own "
		       "stp_counters";
	case 20:
		g[3].map = "prog:1";
		return "meta: global 3 'names': its map has the name of the runtime's own prog:N";
	case 21:
		g[3].max_entries = 0;
		return "meta: global 3 'names': max_entries 0 (1 to 16777216)";
	case 22:
		g[3].max_entries = (1u << 24) + 1;
		return "meta: global 3 'names': max_entries 16777217 (1 to 16777216)";
	case 23:
		g[3].key_size = (1u << 20) + 8;
		return "meta: global 3 'names': key_size 1048584 (at most 1048576)";
	case 24:
		g[4].key_size = 8;
		return "meta: global 4 'lat': a scalar statistic with key_size 8, max_entries 1";
	case 25:
		g[3].key_types[1] = STP_TYPE_STATS;
		return "meta: global 3 'names': key 2 has type 3, neither long nor string";
	case 26:
		g[3].key_offsets[2] = 172;
		return "meta: global 3 'names': key 3 (a long) at offset 172 does not fit before "
		       "the key's end at 176";
	case 27:
		g[3].key_offsets[1] = 4;
		return "meta: global 3 'names': key 1 (a long) at offset 0 does not fit before "
		       "the next key at 4";
	case 28:
		g[3].key_offsets[1] = 200;
		return "meta: global 3 'names': key 2 (a string) at offset 200 does not fit before "
		       "the next key at 168";
	case 29:
		g[5].key_offsets[0] = 4096;
		return "meta: global 5 'lin': key 1 (a string) at offset 4096 does not fit before "
		       "the key's end at 64";
	case 30:
		g[2].percpu = true;
		return "meta: global 2 'bytes': per-CPU, and not a statistic";
	case 31:
		g[6].percpu = false;
		return "meta: global 6 'plain': a statistic, not per-CPU";
	case 32:
		g[0].hist.kind = STP_META_HIST_LOG;
		return "meta: global 0 'count': a histogram, and not a statistic";
	case 33:
		g[4].hist.kind = (enum stp_meta_hist_kind)5;
		return "meta: global 4 'lat': histogram kind 5 is no kind";
	case 34:
		g[4].hist.buckets = 64;
		return "meta: global 4 'lat': a histogram of 64 buckets, not 128";
	case 35:
		g[5].hist.stop = 180;
		return "meta: global 5 'lin': a histogram of 13 buckets, not 23";
	case 36:
		g[5].hist.interval = 0;
		return "meta: global 5 'lin': the bucket width of a linear histogram must be "
		       "positive";
	case 37:
		g[5].hist.stop = 1000000;
		g[5].hist.interval = 1;
		return "meta: global 5 'lin': a linear histogram has at most 128 buckets, "
		       "underflow and overflow included";
	case 38:
		g[0].value_size = 4096;
		return "meta: global 0 'count': a value of 4096 bytes, not 8 (a long)";
	case 39:
		g[1].value_size = 256;
		return "meta: global 1 'label': a value of 256 bytes, not 512 (MAXSTRINGLEN)";
	case 40:
		g[5].value_size = 56;
		return "meta: global 5 'lin': a value of 56 bytes, not 160 (a statistic's partial "
		       "and buckets)";
	case 41:
		g[2].free_map = NULL;
		return "meta: global 2 'bytes': a values map needs a free map, and a free map a "
		       "values map";
	case 42:
		g[5].values_map = "gv_lin";
		g[5].free_map = "gf_lin";
		return "meta: global 5 'lin': values in slots, and not an array of longs or "
		       "strings without '%'";
	case 43:
		g[3].values_map = "gv_names";
		g[3].free_map = "gf_names";
		return "meta: global 3 'names': values in slots, and not an array of longs or "
		       "strings without '%'";
	case 44:
		g[2].free_map = "stp_events";
		return "meta: global 2 'bytes': a slot map has the name of the runtime's own "
		       "stp_events";
	case 45: g[6].name = "count"; return "meta: globals 0 and 6 are both named 'count'";
	case 46:
		g[3].map = "g_bytes";
		return "meta: the map of global 2 is also the map of global 3";
	case 47:
		g[2].values_map = "g_lat";
		return "meta: the values map of global 2 is also the map of global 4";
	case 48:
		g[2].free_map = "gv_bytes";
		return "meta: the values map of global 2 is also the free map of global 2";
	case 49: p[1].point = NULL; return "meta: probe 1: no probe point";
	case 50: p[0].kind = 0; return "meta: probe 0: kind 0 is no probe kind";
	case 51:
		p[0].kind = STP_PROBE_NETFILTER + 1;
		return "meta: probe 0: kind 16 is no probe kind";
	case 52:
		p[2].context = (enum stp_context)2;
		return "meta: probe 2: context 2 is neither kernel nor user";
	case 53: p[3].prog = NULL; return "meta: probe 3: runs in the kernel, and names no program";
	case 54:
		p[4].uprobe_file = 2;
		return "meta: probe 4: uprobe file 2, and the script has 2 files";
	case 55:
		p[4].uprobe_file = -2;
		return "meta: probe 4: uprobe file -2, and the script has 2 files";
	case 56:
		p[0].uprobe_file = 5;
		return "meta: probe 0: uprobe file 5, and the script has 2 files";
	case 57: f->f[1].body = NULL; return "meta: format 1: no body";
	case 58: f->e[0].what = NULL; return "meta: error 0: no words for the error";
	case 59: f->fl[1].path = ""; return "meta: file 1: no path";
	case 60:
		f->fl[0].build_id = "xyz0";
		return "meta: file 0: its build-id is not hex of 64 bytes at most";
	case 61:
		f->fl[0].build_id = "abc";
		return "meta: file 0: its build-id is not hex of 64 bytes at most";
	case 62:
		memset(hex, 'a', 130);
		hex[130] = '\0';
		f->fl[0].build_id = hex;
		return "meta: file 0: its build-id is not hex of 64 bytes at most";
	case 63:
		f->ap[1] = 7;
		return "meta: autoprint 1: global 7, and the script has 7 globals";
	case 64:
		f->ap[0] = -1;
		return "meta: autoprint 0: global -1, and the script has 7 globals";
	case 65:
		f->m.nglobals = 2;	/* autoprint 3 and 6 now point past them */
		return "meta: autoprint 1: global 3, and the script has 2 globals";
	case 66:
		p[0].kind = STP_PROBE_PROCFS;	/* no procfs_path */
		return "meta: probe 0: a procfs file with no name or no room";
	}
	return NULL;
}

static void broken_case(int c, const char *want, const char *wire)
{
	char got[512];
	size_t len;
	uint8_t *buf;

	CU_ASSERT_NOT_EQUAL(stp_meta__check(&fx.m, got, sizeof(got)), 0);
	CU_ASSERT_STRING_EQUAL(got, want);
	if (strcmp(got, want))
		fprintf(stderr, "case %d: check said\n\t%s\nnot\n\t%s\n", c, got, want);
	if (wire == NOWIRE)
		return;
	buf = encode(&fx.m, &len);
	CU_ASSERT_PTR_NULL(decode(buf, len));
	CU_ASSERT_STRING_EQUAL(err, wire ? wire : want);
	if (strcmp(err, wire ? wire : want))
		fprintf(stderr, "case %d: decode said\n\t%s\nnot\n\t%s\n", c, err,
			wire ? wire : want);
	free(buf);
}

static void invariants_refused(void)
{
	const char *want, *wire;
	int c;

	for (c = 0;; c++) {
		fixture_init(&fx);
		if (!(want = breaks(&fx, c, &wire)))
			break;
		broken_case(c, want, wire);
	}
	CU_ASSERT_EQUAL(c, 67);
}

#define C(name) { #name, name }

static const struct unit_case meta_wire_cases[] = {
	C(roundtrip_every_field), C(roundtrip_empty), C(reencode_same_bytes), C(one_block),
	C(smallest_records), C(every_truncation), C(random_corruptions), C(wire_refusals),
	C(encode_refuses_negative_counts), C(invariants_refused),
	{ NULL, NULL },
};

void unit_register(void)
{
	unit_add_suite("meta_wire", meta_wire_cases);
}
