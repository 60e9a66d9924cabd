/*
 * stp_stats.h - what `s <<< v` does, one copy for both runtimes: a
 * statistic's configuration, its per-CPU partial, the histogram buckets
 * and the update.
 *
 * runtime/bpf/stp.bpf.h (kernel context, one partial per CPU in a per-CPU
 * map) and runtime/user/stats.c (user context, and the merges the runner
 * and pmdastap do) both include this file, so the unit tests of stats.c
 * test what the kernel runs.  The arithmetic is stap 4.x's
 * (runtime/stat-common.c): @variance by Welford's method per CPU, on the
 * values shifted left by the global's bit shift.  One deliberate
 * difference: stap keeps the Welford delta in an int, which wraps once a
 * sample is 2^31 away from the running mean; it is 64 bits here, so both
 * agree whenever stap's value means anything.
 */
#ifndef STP_STATS_SHARED_H
#define STP_STATS_SHARED_H

#include "stp_arith.h"

#ifdef __bpf__
#define stp__bounded(v) barrier_var(v)	/* keep the bound check on the index used */
#else
#define stp__bounded(v) ((void)0)
#endif

enum stp_hist_type {
	STP_HIST_NONE,
	STP_HIST_LOG,
	STP_HIST_LINEAR,
};

#define STP_HIST_LOG_BUCKETS	128	/* bucket 64 holds 0 */
#define STP_HIST_LOG_BUCKET0	64
#define STP_HIST_MAX_BUCKETS	128	/* linear, with underflow and overflow */
#define STP_STAT_MAX_SHIFT	62

/* What a global's aggregate keeps; fixed at translation. */
struct stp_stat_cfg {
	enum stp_hist_type type;
	int64_t start, stop, interval;	/* @hist_linear(s, start, stop, interval) */
	int buckets;			/* histogram counters per partial */
	int shift;			/* @variance(s, shift) bit shift */
	int variance;			/* @variance is read: keep its terms (two divisions a sample) */
	int keyed;			/* an array's (s[k]): its CPUs fold pairwise (stp_stat_fold) */
};

/* One CPU's partial aggregate (the generated code's struct stat_NAME has its layout). */
struct stp_stat_partial {
	int64_t count, sum, min, max;
	int64_t avg_s;		/* running mean, << shift (Welford) */
	int64_t m2;		/* running sum of squared deviations, << 2 * shift */
	int64_t variance_s;	/* m2 / (count - 1), << 2 * shift */
	int64_t hist[];		/* cfg->buckets counters */
};

/* The log histogram bucket of a value: 0..127; 64 for 0, 65 + k for [2^k, 2^(k+1)), 63 - k below 0. */
STP_ARITH_FN int stp_hist_log_bucket(int64_t val)
{
	int b;

	if (val == 0)
		return STP_HIST_LOG_BUCKET0;
	b = STP_HIST_LOG_BUCKET0 + 1 + stp_log2(stp_abs64(val));
	if (val < 0)
		b = STP_HIST_LOG_BUCKETS - b;
	return b < STP_HIST_LOG_BUCKETS ? b : STP_HIST_LOG_BUCKETS - 1;
}

/* The linear bucket: 0 underflow, 1..buckets-2, buckets-1 overflow. */
STP_ARITH_FN int stp_hist_linear_bucket(const struct stp_stat_cfg *cfg, int64_t val)
{
	int64_t off = stp_sub64(val, cfg->start);
	uint64_t q;

	if (off < 0)
		return 0;
	q = (uint64_t)off / (uint64_t)cfg->interval + 1;
	return q >= (uint64_t)cfg->buckets - 1 ? cfg->buckets - 1 : (int)q;
}

STP_ARITH_FN int stp_hist_bucket(const struct stp_stat_cfg *cfg, int64_t val)
{
	if (cfg->type == STP_HIST_LOG)
		return stp_hist_log_bucket(val);
	return stp_hist_linear_bucket(cfg, val);
}

/* Welford's update of the running mean and sum of squares; P has 2 samples or more. */
STP_ARITH_FN void stp_stat_add_variance(struct stp_stat_partial *p, int shift, int64_t val)
{
	int64_t delta = stp_sub64(stp_shl(val, shift), p->avg_s);

	p->avg_s = stp_add64(p->avg_s, stp_div(delta, p->count));
	p->m2 = stp_add64(p->m2, stp_mul64(delta, stp_sub64(stp_shl(val, shift), p->avg_s)));
	p->variance_s = stp_div(p->m2, p->count - 1);
}

/*
 * @variance over CPUs.  stap merges a scalar statistic's CPUs all at once,
 * each CPU's mean and variance taken about the overall mean (stat.c,
 * _stp_stat_get; runtime/user/stats.c and stp_statread.bpf.h do that),
 * but an array's element (s[k]) two at a time in CPU order, as its map
 * aggregation folds each CPU's node into the running one (map.c,
 * _new_map_copy_stat): the first CPU's partial is copied, Welford's mean
 * and all; each next one is folded in about the new mean, sum << shift
 * over count.  The two give different roundings, and stap's output is
 * what scripts compare against.
 */
struct stp_stat_fold {
	int64_t count, sum;
	int64_t avg_s;		/* << shift */
	int64_t variance_s;	/* << 2 * shift */
};

/* A variance kept << 2 * SHIFT, shifted back (arithmetically, the shift possibly past 63). */
STP_ARITH_FN int64_t stp_stat_unshift(int64_t v, int shift)
{
	return 2 * shift > 63 ? (v < 0 ? -1 : 0) : v >> (2 * shift);
}

/* Fold partial P (count > 0) into T, which starts zeroed. */
STP_ARITH_FN void stp_stat_fold(struct stp_stat_fold *t, const struct stp_stat_partial *p,
				int shift)
{
	int64_t c1 = t->count, a1 = t->avg_s, d1, d2, s;

	if (c1 == 0) {
		t->count = p->count;
		t->sum = p->sum;
		t->avg_s = p->avg_s;
		t->variance_s = p->variance_s;
		return;
	}
	t->count = stp_add64(c1, p->count);
	t->sum = stp_add64(t->sum, p->sum);
	t->avg_s = stp_div(stp_shl(t->sum, shift), t->count);
	d1 = stp_sub64(a1, t->avg_s);
	d2 = stp_sub64(p->avg_s, t->avg_s);
	s = stp_add64(stp_mul64(stp_mul64(c1, d1), d1), stp_mul64(c1 - 1, t->variance_s));
	s = stp_add64(s, stp_mul64(stp_mul64(p->count, d2), d2));
	s = stp_add64(s, stp_mul64(p->count - 1, p->variance_s));
	t->variance_s = stp_div(s, t->count - 1);
}

/* s <<< val, on one partial; the terms of @variance only when CFG says it is read. */
STP_ARITH_FN void stp_stat_add(struct stp_stat_partial *p, const struct stp_stat_cfg *cfg,
			       int64_t val)
{
	if (p->count == 0) {
		p->count = 1;
		p->sum = p->min = p->max = val;
		p->avg_s = stp_shl(val, cfg->shift);
		p->m2 = 0;
	} else {
		p->count++;
		p->sum = stp_add64(p->sum, val);
		if (val > p->max)
			p->max = val;
		if (val < p->min)
			p->min = val;
		if (cfg->variance)
			stp_stat_add_variance(p, cfg->shift, val);
	}
	if (cfg->type != STP_HIST_NONE) {
		uint32_t b = (uint32_t)stp_hist_bucket(cfg, val);

		stp__bounded(b);
		if (b < (uint32_t)cfg->buckets && b < STP_HIST_MAX_BUCKETS)
			p->hist[b]++;
	}
}

#endif
