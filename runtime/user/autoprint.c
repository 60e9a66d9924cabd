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
 * reproducible.  The values are read through the data interface
 * (data.h), as pmdastap reads them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
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

static void merge(struct stp_script *s, const struct stp_meta_global *g, const void *vals,
		  struct agg_buf *a)
{
	const struct stp_meta_hist *h = &g->hist;

	if (stp_stat_cfg_init(&a->cfg, (enum stp_hist_type)h->kind, h->start, h->stop, h->interval, 0) ||
	    a->cfg.buckets > STP_HIST_MAX_BUCKETS ||
	    stp_stat_partial_size(&a->cfg) > g->value_size)
		stp_stat_cfg_init(&a->cfg, STP_HIST_NONE, 0, 0, 0, 0);
	a->cfg.keyed = g->nkeys > 0;
	a->agg.hist = a->hist;
	if (g->percpu)
		stp_stat_merge(&a->agg, &a->cfg, vals, stp_percpu_stride(g->value_size), s->ncpus);
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

static void print_scalar_stat(struct stp_script *s, struct stp_data *d, int gi, struct line *l)
{
	const struct stp_meta_global *g = &s->meta->globals[gi];
	struct agg_buf *a = calloc(1, sizeof(*a));
	struct stp_data_elems e = { 0 };

	if (a && stp_data__read(d, gi, &e) > 0) {
		merge(s, g, e.vals, a);
		if (a->agg.count == 0)
			put(l, "%s @count=0x0\n", g->name);
		else {
			put(l, "%s", g->name);
			put_stats(l, &a->agg);
			put(l, "\n");
		}
	}
	free(e.keys);
	free(e.vals);
	free(a);
}

/* A scalar; SCALARS is the stp_globals value (SIZE bytes). */
static void print_scalar(struct stp_script *s, struct stp_data *d, int gi, const char *scalars,
			 size_t size, struct line *l)
{
	const struct stp_meta_global *g = &s->meta->globals[gi];
	const char *p = scalars + g->offset;
	int64_t v;

	if (g->type == STP_TYPE_STATS) {
		print_scalar_stat(s, d, gi, l);
		return;
	}
	if (!scalars || g->offset >= size ||
	    (g->type == STP_TYPE_LONG && size - g->offset < sizeof(v)))
		return;
	if (g->type == STP_TYPE_LONG) {
		memcpy(&v, p, sizeof(v));
		put(l, "%s=", g->name);
		put_long(l, v);
		put(l, "\n");
	} else {
		put(l, "%s=", g->name);
		put_str(l, p, size - g->offset);
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

/* Every element of global GI into *OUT (pointing into E); returns how many. */
static int read_elems(struct stp_script *s, struct stp_data *d, int gi, struct stp_data_elems *e,
		      struct elem **out)
{
	const struct stp_meta_global *g = &s->meta->globals[gi];
	int n = stp_data__read(d, gi, e);
	struct elem *es = n > 0 ? calloc((size_t)n, sizeof(*es)) : NULL;

	for (int i = 0; es && i < n; i++) {
		es[i].key = e->keys + (size_t)i * g->key_size;
		es[i].val = e->vals + (size_t)i * e->vstride;
		es[i].sort = elem_sort_value(s, g, es[i].val);
	}
	*out = es;
	return es ? n : 0;
}

static void print_array(struct stp_script *s, struct stp_data *d, int gi, struct line *l)
{
	const struct stp_meta_global *g = &s->meta->globals[gi];
	struct stp_data_elems e;
	struct elem *es = NULL;
	int n = read_elems(s, d, gi, &e, &es);

	sort_global = g;
	if (n > 0)
		qsort(es, (size_t)n, sizeof(*es), elem_cmp);
	for (int i = 0; i < n; i++) {
		l->len = 0;
		put_elem(s, g, &es[i], l);
		stp_script__output(s, l->buf, l->len);
	}
	free(es);
	free(e.keys);
	free(e.vals);
	l->len = 0;
}

void stp_autoprint(struct stp_script *s)
{
	struct line l = { .buf = malloc(LINE_MAX_BYTES), .size = LINE_MAX_BYTES };
	struct stp_data *d = s->meta->nautoprint ? stp_data__new(s->meta, s->ncpus) : NULL;
	size_t size = 0;
	char *scalars = NULL;

	if (d) {
		stp_data__adopt_script(d, s);
		size = stp_data__scalars_size(d);
		scalars = size ? calloc(1, size + 1) : NULL;
		if (scalars)
			stp_data__read_scalars(d, scalars);
	}
	for (int i = 0; l.buf && d && i < s->meta->nautoprint; i++) {
		int gi = s->meta->autoprint[i];

		l.len = 0;
		if (s->meta->globals[gi].nkeys)
			print_array(s, d, gi, &l);
		else
			print_scalar(s, d, gi, scalars, size, &l);
		stp_script__output(s, l.buf, l.len);
	}
	free(scalars);
	stp_data__free(d);
	free(l.buf);
}
