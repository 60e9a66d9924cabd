/*
 * stp_statread.bpf.h - statistics extractors in kernel context: @count,
 * @sum, @min, @max, @avg and @variance of s or s[keys], and a bucket of
 * its histogram (@hist_log(s)[i]), read in a BPF handler.
 *
 * A statistic is one struct stp_stat_partial per CPU (a per-CPU map); the kernel
 * side merges them as runtime/user/stats.c's stp_stat_merge() does, with
 * bpf_map_lookup_percpu_elem() (kernel 6.0 and later) over the possible
 * CPUs.  So an extractor costs O(number of CPUs) map lookups, twice for
 * @variance: cheap on small machines, worth keeping out of hot probes on
 * large ones.
 *
 * Included by stp_context.bpf.h: uses struct context and stp_raise().
 */
#ifndef STP_STATREAD_BPF_H
#define STP_STATREAD_BPF_H

/* runtime/user/stats.h's enum stp_stat_op, in the same order. */
enum stp_stat_read_op {
	STP_STAT_READ_COUNT,
	STP_STAT_READ_SUM,
	STP_STAT_READ_MIN,
	STP_STAT_READ_MAX,
	STP_STAT_READ_AVG,
	STP_STAT_READ_VARIANCE,
};

struct stp_stat_total {
	int64_t count, sum, min, max, avg_s;
};

/* The CPUs' partials of MAP[KEY] merged into *T (count 0: no samples). */
static __always_inline void stp_stat_total(void *map, const void *key, struct stp_stat_total *t)
{
	__builtin_memset(t, 0, sizeof(*t));
	for (uint32_t cpu = 0; cpu < STP_NCPUS; cpu++) {
		const struct stp_stat_partial *p = bpf_map_lookup_percpu_elem(map, key, cpu);

		if (!p)
			break;	/* past the last possible CPU, or no such key */
		if (p->count == 0)
			continue;
		if (t->count == 0 || p->min < t->min)
			t->min = p->min;
		if (t->count == 0 || p->max > t->max)
			t->max = p->max;
		t->count += p->count;
		t->sum = (int64_t)((uint64_t)t->sum + (uint64_t)p->sum);
	}
}

/*
 * The merged variance: an array element's CPUs folded one at a time, a
 * scalar's variances and means about the overall mean (stp_stats.h).
 */
static __always_inline int64_t stp_stat_total_variance(void *map, const void *key,
						       const struct stp_stat_cfg *cfg,
						       struct stp_stat_total *t)
{
	uint64_t s1 = 0, s2 = 0;
	int shift = cfg->shift;

	if (cfg->keyed) {	/* an array's: folded CPU by CPU, as stap's maps (stp_stats.h) */
		struct stp_stat_fold f = { 0 };

		for (uint32_t cpu = 0; cpu < STP_NCPUS; cpu++) {
			const struct stp_stat_partial *p = bpf_map_lookup_percpu_elem(map, key, cpu);

			if (!p)
				break;
			if (p->count)
				stp_stat_fold(&f, p, shift);
		}
		return stp_stat_unshift(f.variance_s, shift);
	}
	t->avg_s = stp_div(stp_shl(t->sum, shift), t->count);
	for (uint32_t cpu = 0; cpu < STP_NCPUS; cpu++) {
		const struct stp_stat_partial *p = bpf_map_lookup_percpu_elem(map, key, cpu);
		uint64_t d;

		if (!p)
			break;
		if (p->count == 0)
			continue;
		d = (uint64_t)p->avg_s - (uint64_t)t->avg_s;
		s1 += (uint64_t)p->count * d * d;
		s2 += (uint64_t)(p->count - 1) * (uint64_t)p->variance_s;
	}
	if (t->count < 2)
		return 0;
	return stp_stat_unshift(stp_div((int64_t)(s1 + s2), t->count - 1), shift);
}

/* @OP of the merged T (count > 0), but @variance */
static __always_inline int64_t stp_stat_pick(const struct stp_stat_total *t, int op)
{
	switch (op) {
	case STP_STAT_READ_COUNT: return t->count;
	case STP_STAT_READ_SUM: return t->sum;
	case STP_STAT_READ_MIN: return t->min;
	case STP_STAT_READ_MAX: return t->max;
	case STP_STAT_READ_AVG: return stp_div(t->sum, t->count);
	}
	return 0;
}

/* @OP(MAP[KEY]); an empty aggregate raises stap's error at SITE, except for @count and @sum. */
static __always_inline int64_t stp_map_stat_read(struct context *c, void *map, const void *key,
						 const struct stp_stat_cfg *cfg, int op, int site)
{
	struct stp_stat_total t;

	stp_stat_total(map, key, &t);
	if (t.count == 0) {
		if (op != STP_STAT_READ_COUNT && op != STP_STAT_READ_SUM)
			stp_raise(c, site, "empty aggregate");
		return 0;
	}
	if (op == STP_STAT_READ_VARIANCE)
		return stp_stat_total_variance(map, key, cfg, &t);
	return stp_stat_pick(&t, op);
}

/*
 * @hist_*(MAP[KEY])[INDEX]: that bucket's counts summed over the CPUs, as
 * runtime/user/uctx.c's stp_map_stat_bucket() reads the merged one:
 * stap's errors for an index out of range (at SITE) and an empty
 * aggregate (at EMPTY_SITE; < 0: 0, a foreach's bucket).
 */
static __always_inline int64_t stp_map_stat_bucket_read(struct context *c, void *map,
							const void *key,
							const struct stp_stat_cfg *cfg,
							int64_t index, int site,
							int empty_site)
{
	uint64_t b = (uint64_t)index;	/* one unsigned compare bounds it for the verifier */
	int64_t count = 0, n = 0;

	for (uint32_t cpu = 0; cpu < STP_NCPUS; cpu++) {
		const struct stp_stat_partial *p = bpf_map_lookup_percpu_elem(map, key, cpu);

		if (!p)
			break;
		count += p->count;
		if (b < (uint64_t)cfg->buckets && b < STP_HIST_MAX_BUCKETS)
			n += p->hist[b];
	}
	if (count == 0) {
		if (empty_site >= 0)
			stp_raise(c, empty_site, "empty aggregate");
		return 0;
	}
	if (b >= (uint64_t)cfg->buckets) {
		stp_raise(c, site, "histogram index out of range");
		return 0;
	}
	return n;
}

#ifdef STP_KMOD
/* @OP of MAP[KEY] (configured by CFG) for sorting a foreach: 0 for an empty aggregate. */
static __always_inline int64_t stp_kmod_stat(void *map, const void *key, int op,
					     const struct stp_stat_cfg *cfg)
{
	struct stp_stat_total t;

	stp_stat_total(map, key, &t);
	if (!t.count)
		return 0;
	return op == STP_STAT_READ_VARIANCE ? stp_stat_total_variance(map, key, cfg, &t)
					    : stp_stat_pick(&t, op);
}

/* delete of a scalar statistic in a module: every CPU's partial of SIZE bytes zeroed. */
static __always_inline void stp_kmod_stat_clear(void *map, const void *key, uint32_t size)
{
	for (uint32_t cpu = 0; cpu < STP_NCPUS; cpu++) {
		void *p = bpf_map_lookup_percpu_elem(map, key, cpu);

		if (!p)
			break;
		memset(p, 0, size);
	}
}

/* The NB buckets of MAP[KEY] summed over the CPUs into H. */
static __always_inline void stp_kmod_hist_sum(void *map, const void *key, uint32_t nb, int64_t *h)
{
	memset(h, 0, 8 * nb);
	for (uint32_t cpu = 0; cpu < STP_NCPUS; cpu++) {
		const struct stp_stat_partial *p = bpf_map_lookup_percpu_elem(map, key, cpu);

		if (!p)
			break;
		for (uint32_t b = 0; b < nb; b++)
			h[b] += p->hist[b];
	}
}

/*
 * print(@hist_*(MAP[KEY])) in a module: the CPUs' partials merged into an
 * STP_REC_HIST record, which the runner prints as user context prints
 * one (runtime/user/events.c).
 */
static __always_inline void stp_kmod_hist_print(struct context *c, void *map, const void *key,
						const struct stp_stat_cfg *cfg, int global)
{
	uint32_t off = stp_rec_start(c, STP_REC_HIST, (uint16_t)global);
	uint32_t nb = (uint32_t)cfg->buckets;
	struct stp_stat_total t;
	int64_t *h;

	stp_stat_total(map, key, &t);
	off = stp_rec_long(c, off, t.count);
	off = stp_rec_long(c, off, t.sum);
	off = stp_rec_long(c, off, t.min);
	off = stp_rec_long(c, off, t.max);
	if (nb > STP_HIST_MAX_BUCKETS || off + 8 * nb > STP_REC_SIZE)
		return;
	h = (int64_t *)(c->rec + off);
	stp_kmod_hist_sum(map, key, nb, h);
	stp_rec_send(c, off + 8 * nb);
}

#include "../user/stats.c"	/* the histogram printer, shared with user context */

/*
 * sprint(@hist_*(MAP[KEY])) in a module: the CPUs' partials merged, then
 * printed into BUF (MAXSTRINGLEN bytes) as user context prints them
 * (runtime/user/uctx.c's stp_map_stat_print()).
 */
static __always_inline void stp_kmod_hist_sprint(struct context *c, void *map, const void *key,
						 const struct stp_stat_cfg *cfg, char *buf)
{
	uint32_t nb = (uint32_t)cfg->buckets;
	struct stp_stat_agg agg = { 0 };
	struct stp_stat_total t;
	struct stp_out out;

	buf[0] = '\0';
	if (nb > STP_HIST_MAX_BUCKETS)
		return;
	stp_stat_total(map, key, &t);
	agg.count = t.count;
	agg.sum = t.sum;
	agg.min = t.min;
	agg.max = t.max;
	agg.hist = c->hist;
	stp_kmod_hist_sum(map, key, nb, c->hist);
	stp_out_init(&out, buf, MAXSTRINGLEN - 1);
	stp_stat_print_hist(&out, cfg, &agg, STP_HIST_ELISION);
	buf[out.len] = '\0';
}
#endif

#endif
