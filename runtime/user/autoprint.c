/*
 * autoprint.c - print, at exit, the globals a script writes and never reads.
 *
 * stap adds an end probe per such global (elaborate.cxx's global variable
 * display); its output, which we reproduce (checked against the C that
 * stap 4.8 -p3 generates: longs print in decimal, "x=%lld"):
 *	x=42				a long
 *	s="text"			a string
 *	a[1,"k"]=3			an array: one line per element, by value,
 *					largest first (%d for long keys)
 *	st @count=2 @min=1 @max=5 @sum=6 @avg=3		a statistic
 *	st @count=0x0			a statistic with no samples
 *	sa["k"] @count=2 @min=...	an array of statistics, by @count
 * Elements with the same value are ordered by key, so that output is
 * reproducible.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "script_int.h"
#include "stats.h"

#define LINE_MAX_BYTES 65536

struct line {
	char *buf;
	size_t len, size;
};

static void put(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len >= l->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, l->size - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n < l->size - l->len ? (size_t)n : l->size - l->len - 1;
}

static void put_long(struct line *l, int64_t v)
{
	put(l, "%" PRId64, v);
}

static void put_str(struct line *l, const char *p, size_t max)
{
	put(l, "\"%.*s\"", (int)strnlen(p, max), p);
}

/* A statistic, merged over CPUs. */
struct agg_buf {
	struct stp_stat_cfg cfg;
	struct stp_stat_agg agg;
	int64_t hist[STP_HIST_MAX_BUCKETS];
};

static size_t percpu_stride(const struct stp_meta_global *g)
{
	return ((size_t)g->value_size + 7) & ~(size_t)7;
}

static void merge(struct stp_script *s, const struct stp_meta_global *g, const void *vals,
		  struct agg_buf *a)
{
	const struct stp_meta_hist *h = &g->hist;

	if (stp_stat_cfg_init(&a->cfg, (enum stp_hist_type)h->kind, h->start, h->stop, h->interval, 0) ||
	    a->cfg.buckets > STP_HIST_MAX_BUCKETS ||
	    stp_stat_partial_size(&a->cfg) > g->value_size)
		stp_stat_cfg_init(&a->cfg, STP_HIST_NONE, 0, 0, 0, 0);
	a->agg.hist = a->hist;
	if (g->percpu)
		stp_stat_merge(&a->agg, &a->cfg, vals, percpu_stride(g), s->ncpus);
	else
		stp_stat_merge(&a->agg, &a->cfg, vals, g->value_size, 1);
}

static void put_stats(struct line *l, const struct stp_stat_agg *agg)
{
	static const struct {
		const char *name;
		enum stp_stat_op op;
	} ops[] = {
		{ "@count", STP_STAT_COUNT }, { "@min", STP_STAT_MIN }, { "@max", STP_STAT_MAX },
		{ "@sum", STP_STAT_SUM }, { "@avg", STP_STAT_AVG },
	};
	int64_t v;

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		stp_stat_extract(agg, ops[i].op, &v);
		put(l, " %s=%" PRId64, ops[i].name, v);
	}
}

/* ---- scalars ---- */

static void print_scalar_stat(struct stp_script *s, const struct stp_meta_global *g,
			      struct line *l)
{
	int fd = stp_script__map_fd(s, g->map);
	size_t size = g->percpu ? percpu_stride(g) * (size_t)s->ncpus : g->value_size;
	void *vals = calloc(1, size);
	struct agg_buf *a = calloc(1, sizeof(*a));
	uint32_t key = 0;

	if (vals && a && fd >= 0 && bpf_map_lookup_elem(fd, &key, vals) == 0) {
		merge(s, g, vals, a);
		if (a->agg.count == 0)
			put(l, "%s @count=0x0\n", g->name);
		else {
			put(l, "%s", g->name);
			put_stats(l, &a->agg);
			put(l, "\n");
		}
	}
	free(vals);
	free(a);
}

static void print_scalar(struct stp_script *s, const struct stp_meta_global *g, struct line *l)
{
	const char *p = (const char *)s->globals + g->offset;
	int64_t v;

	if (g->type == STP_TYPE_STATS) {
		print_scalar_stat(s, g, l);
		return;
	}
	if (!s->globals || g->offset >= s->globals_size)
		return;
	if (g->type == STP_TYPE_LONG) {
		memcpy(&v, p, sizeof(v));
		put(l, "%s=", g->name);
		put_long(l, v);
		put(l, "\n");
	} else {
		put(l, "%s=", g->name);
		put_str(l, p, s->globals_size - g->offset);
		put(l, "\n");
	}
}

/* ---- arrays ---- */

struct elem {
	char *key;
	char *val;
	int64_t sort;		/* the value, or @count */
};

static const struct stp_meta_global *sort_global;

static int key_cmp(const struct stp_meta_global *g, const char *a, const char *b)
{
	for (int k = 0; k < g->nkeys; k++) {
		const char *x = a + g->key_offsets[k], *y = b + g->key_offsets[k];
		int64_t u, v;
		int c;

		if (g->key_types[k] == STP_TYPE_STRING) {
			c = strncmp(x, y, g->key_size - g->key_offsets[k]);
			if (c)
				return c;
			continue;
		}
		memcpy(&u, x, sizeof(u));
		memcpy(&v, y, sizeof(v));
		if (u != v)
			return u < v ? -1 : 1;
	}
	return 0;
}

static int elem_cmp(const void *pa, const void *pb)
{
	const struct elem *a = pa, *b = pb;

	if (a->sort != b->sort)
		return a->sort > b->sort ? -1 : 1;
	if (sort_global->type == STP_TYPE_STRING && !sort_global->percpu) {
		int c = strcmp(b->val, a->val);

		if (c)
			return c;
	}
	return key_cmp(sort_global, a->key, b->key);
}

static void put_keys(struct line *l, const struct stp_meta_global *g, const char *key)
{
	put(l, "%s[", g->name);
	for (int k = 0; k < g->nkeys; k++) {
		const char *p = key + g->key_offsets[k];
		int64_t v;

		if (k)
			put(l, ",");
		if (g->key_types[k] == STP_TYPE_STRING) {
			put_str(l, p, g->key_size - g->key_offsets[k]);
		} else {
			memcpy(&v, p, sizeof(v));
			put(l, "%" PRId64, v);
		}
	}
	put(l, "]");
}

static void put_elem(struct stp_script *s, const struct stp_meta_global *g, const struct elem *e,
		     struct line *l)
{
	struct agg_buf *a;
	int64_t v;

	put_keys(l, g, e->key);
	if (g->type == STP_TYPE_STATS) {
		a = calloc(1, sizeof(*a));
		if (a) {
			merge(s, g, e->val, a);
			put_stats(l, &a->agg);
		}
		free(a);
	} else if (g->type == STP_TYPE_LONG) {
		memcpy(&v, e->val, sizeof(v));
		put(l, "=");
		put_long(l, v);
	} else {
		put(l, "=");
		put_str(l, e->val, g->value_size);
	}
	put(l, "\n");
}

static int64_t elem_sort_value(struct stp_script *s, const struct stp_meta_global *g,
			       const char *val)
{
	struct agg_buf *a;
	int64_t v = 0;

	if (g->type == STP_TYPE_LONG) {
		memcpy(&v, val, sizeof(v));
	} else if (g->type == STP_TYPE_STATS && (a = calloc(1, sizeof(*a)))) {
		merge(s, g, val, a);
		v = a->agg.count;
		free(a);
	}
	return v;
}

/* The value of KEY in VAL; a slotted array's is in its values map (stp_slots.bpf.h). */
static int lookup_value(struct stp_script *s, const struct stp_meta_global *g, int fd,
			const void *key, void *val)
{
	uint32_t slot;

	if (!g->values_map)
		return bpf_map_lookup_elem(fd, key, val);
	if (bpf_map_lookup_elem(fd, key, &slot) < 0)
		return -1;
	return bpf_map_lookup_elem(stp_script__map_fd(s, g->values_map), &slot, val);
}

/* Every element of an array map; returns how many. */
static int read_elems(struct stp_script *s, const struct stp_meta_global *g, struct elem **out)
{
	int fd = stp_script__map_fd(s, g->map);
	size_t vsize = g->percpu ? percpu_stride(g) * (size_t)s->ncpus : g->value_size;
	struct elem *es = NULL, *bigger;
	char *prev = NULL, *key, *val;
	bool prev_kept = true;
	int n = 0, cap = 0;

	while (fd >= 0) {
		key = malloc(g->key_size);
		if (!key || bpf_map_get_next_key(fd, prev, key) < 0) {
			free(key);
			break;
		}
		if (!prev_kept)
			free(prev);
		prev = key;
		prev_kept = false;
		val = calloc(1, vsize + 1);
		if (!val || lookup_value(s, g, fd, key, val) < 0) {	/* deleted meanwhile */
			free(val);
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			bigger = realloc(es, (size_t)cap * sizeof(*es));
			if (!bigger) {
				free(val);
				break;
			}
			es = bigger;
		}
		es[n++] = (struct elem){ key, val, elem_sort_value(s, g, val) };
		prev_kept = true;
	}
	if (!prev_kept)
		free(prev);
	*out = es;
	return n;
}

static void print_array(struct stp_script *s, const struct stp_meta_global *g, struct line *l)
{
	struct elem *es = NULL;
	int n = read_elems(s, g, &es);

	sort_global = g;
	if (n > 0)
		qsort(es, (size_t)n, sizeof(*es), elem_cmp);
	for (int i = 0; i < n; i++) {
		l->len = 0;
		put_elem(s, g, &es[i], l);
		stp_script__output(s, l->buf, l->len);
		free(es[i].key);
		free(es[i].val);
	}
	free(es);
	l->len = 0;
}

void stp_autoprint(struct stp_script *s)
{
	struct line l = { .buf = malloc(LINE_MAX_BYTES), .size = LINE_MAX_BYTES };

	if (!l.buf)
		return;
	for (int i = 0; i < s->meta->nautoprint; i++) {
		const struct stp_meta_global *g = &s->meta->globals[s->meta->autoprint[i]];

		l.len = 0;
		if (g->nkeys)
			print_array(s, g, &l);
		else
			print_scalar(s, g, &l);
		stp_script__output(s, l.buf, l.len);
	}
	free(l.buf);
}
