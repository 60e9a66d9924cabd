/*
 * test_rt_stats.c - runtime/user/stats.c: aggregates and histograms.
 *
 * Expected values are worked by hand from stap 4.x's runtime/stat-common.c
 * (_stp_val_to_bucket, _stp_bucket_to_val, __stp_stat_add,
 * _stp_stat_print_histogram_buf) and stat.c (_stp_stat_get), or copied
 * from the language reference (langref 8.4).  Histogram rows are written
 * as label, count of '@', count of spaces, count: for each row
 * '@' + spaces + digits = 50 + 1 + digits of the largest count.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "../../runtime/user/stats.h"

#define NCPUS 4

/* Partials of up to 128 buckets for NCPUS CPUs, and a merged aggregate. */
struct fixture {
	struct stp_stat_cfg cfg;
	int64_t cpu[NCPUS][7 + STP_HIST_MAX_BUCKETS];
	int64_t hist[STP_HIST_MAX_BUCKETS];
	struct stp_stat_agg agg;
};

static struct fixture fx;

static void setup(enum stp_hist_type type, int64_t start, int64_t stop, int64_t interval,
		  int shift)
{
	memset(&fx, 0, sizeof(fx));
	CU_ASSERT_PTR_NULL_FATAL(stp_stat_cfg_init(&fx.cfg, type, start, stop, interval, shift));
	fx.agg.hist = type == STP_HIST_NONE ? NULL : fx.hist;
}

static struct stp_stat_partial *cpu(int i)
{
	return (struct stp_stat_partial *)fx.cpu[i];
}

static void add_n(int c, int64_t val, int n)
{
	while (n-- > 0)
		stp_stat_add(cpu(c), &fx.cfg, val);
}

static void merge(void)
{
	stp_stat_merge(&fx.agg, &fx.cfg, fx.cpu, sizeof(fx.cpu[0]), NCPUS);
}

static int64_t extract(enum stp_stat_op op)
{
	int64_t v = -12345;

	CU_ASSERT_EQUAL(stp_stat_extract(&fx.agg, op, &v), 0);
	return v;
}

/* ---- configurations --------------------------------------------------- */

/* _stp_stat_calc_buckets: (stop - start) / interval + 3 */
static void cfg_linear_bucket_count(void)
{
	struct stp_stat_cfg c;

	CU_ASSERT_PTR_NULL(stp_stat_cfg_init(&c, STP_HIST_LINEAR, 0, 100, 10, 0));
	CU_ASSERT_EQUAL(c.buckets, 13);
	CU_ASSERT_PTR_NULL(stp_stat_cfg_init(&c, STP_HIST_LINEAR, 0, 95, 10, 0));
	CU_ASSERT_EQUAL(c.buckets, 12);
	CU_ASSERT_PTR_NULL(stp_stat_cfg_init(&c, STP_HIST_LINEAR, 0, 1250, 10, 0));
	CU_ASSERT_EQUAL(c.buckets, 128);	/* STP_MAX_BUCKETS */
}

static void cfg_linear_errors(void)
{
	struct stp_stat_cfg c;

	CU_ASSERT_STRING_EQUAL(stp_stat_cfg_init(&c, STP_HIST_LINEAR, 0, 100, 0, 0),
			       "the bucket width of a linear histogram must be positive");
	CU_ASSERT_STRING_EQUAL(stp_stat_cfg_init(&c, STP_HIST_LINEAR, 0, 100, -5, 0),
			       "the bucket width of a linear histogram must be positive");
	CU_ASSERT_STRING_EQUAL(
		stp_stat_cfg_init(&c, STP_HIST_LINEAR, 10, 10, 1, 0),
		"the range of a linear histogram is empty: high must be greater than low");
	CU_ASSERT_STRING_EQUAL(
		stp_stat_cfg_init(&c, STP_HIST_LINEAR, 0, 1260, 10, 0),
		"a linear histogram has at most 128 buckets, underflow and overflow included");
}

static void cfg_log_none_and_shift(void)
{
	struct stp_stat_cfg c;

	CU_ASSERT_PTR_NULL(stp_stat_cfg_init(&c, STP_HIST_LOG, 0, 0, 0, 0));
	CU_ASSERT_EQUAL(c.buckets, 128);
	CU_ASSERT_PTR_NULL(stp_stat_cfg_init(&c, STP_HIST_NONE, 0, 0, 0, 62));
	CU_ASSERT_EQUAL(c.buckets, 0);
	CU_ASSERT_EQUAL(stp_stat_partial_size(&c), 7 * sizeof(int64_t));
	CU_ASSERT_STRING_EQUAL(stp_stat_cfg_init(&c, STP_HIST_NONE, 0, 0, 0, 63),
			       "the @variance bit shift must be between 0 and 62");
	CU_ASSERT_PTR_NOT_NULL(stp_stat_cfg_init(&c, STP_HIST_NONE, 0, 0, 0, -1));
}

/* ---- bucket indices ------------------------------------------------------- */

/* _stp_val_to_bucket: 0 -> 64; |v| in [2^k, 2^(k+1)) -> 65 + k, or 63 - k */
static void log_bucket_zero_and_small(void)
{
	CU_ASSERT_EQUAL(stp_hist_log_bucket(0), 64);
	CU_ASSERT_EQUAL(stp_hist_log_bucket(1), 65);
	CU_ASSERT_EQUAL(stp_hist_log_bucket(2), 66);
	CU_ASSERT_EQUAL(stp_hist_log_bucket(3), 66);
	CU_ASSERT_EQUAL(stp_hist_log_bucket(4), 67);
	CU_ASSERT_EQUAL(stp_hist_log_bucket(7), 67);
	CU_ASSERT_EQUAL(stp_hist_log_bucket(8), 68);
	CU_ASSERT_EQUAL(stp_hist_log_bucket(1023), 74);
	CU_ASSERT_EQUAL(stp_hist_log_bucket(1024), 75);
}

static void log_bucket_negative(void)
{
	CU_ASSERT_EQUAL(stp_hist_log_bucket(-1), 63);
	CU_ASSERT_EQUAL(stp_hist_log_bucket(-2), 62);
	CU_ASSERT_EQUAL(stp_hist_log_bucket(-3), 62);
	CU_ASSERT_EQUAL(stp_hist_log_bucket(-4), 61);
	CU_ASSERT_EQUAL(stp_hist_log_bucket(-1024), 53);
}

/* the 2^62 and 2^63 boundaries: INT64_MIN is bucket 0, INT64_MAX 127 */
static void log_bucket_extremes(void)
{
	CU_ASSERT_EQUAL(stp_hist_log_bucket(INT64_MAX), 127);
	CU_ASSERT_EQUAL(stp_hist_log_bucket((int64_t)1 << 62), 127);
	CU_ASSERT_EQUAL(stp_hist_log_bucket(((int64_t)1 << 62) - 1), 126);
	CU_ASSERT_EQUAL(stp_hist_log_bucket(INT64_MIN), 0);
	CU_ASSERT_EQUAL(stp_hist_log_bucket(INT64_MIN + 1), 1);
	CU_ASSERT_EQUAL(stp_hist_log_bucket(-((int64_t)1 << 62)), 1);
	CU_ASSERT_EQUAL(stp_hist_log_bucket(-((int64_t)1 << 62) + 1), 2);
}

static void log_bucket_every_power_of_two(void)
{
	int k;

	for (k = 0; k < 63; k++) {
		int64_t p = (int64_t)((uint64_t)1 << k);

		CU_ASSERT_EQUAL(stp_hist_log_bucket(p), 65 + k);
		CU_ASSERT_EQUAL(stp_hist_log_bucket(-p), 63 - k);
		if (k < 62)
			CU_ASSERT_EQUAL(stp_hist_log_bucket(2 * p - 1), 65 + k);
	}
}

/* _stp_bucket_to_val: the row labels */
static void log_value_labels(void)
{
	CU_ASSERT_EQUAL(stp_hist_log_value(64), 0);
	CU_ASSERT_EQUAL(stp_hist_log_value(65), 1);
	CU_ASSERT_EQUAL(stp_hist_log_value(66), 2);
	CU_ASSERT_EQUAL(stp_hist_log_value(75), 1024);
	CU_ASSERT_EQUAL(stp_hist_log_value(127), (int64_t)1 << 62);
	CU_ASSERT_EQUAL(stp_hist_log_value(63), -1);
	CU_ASSERT_EQUAL(stp_hist_log_value(62), -2);
	CU_ASSERT_EQUAL(stp_hist_log_value(1), -((int64_t)1 << 62));
	CU_ASSERT_EQUAL(stp_hist_log_value(0), INT64_MIN);
}

/* __stp_stat_add, HIST_LINEAR: 0 underflow, (v - start) / interval + 1, last overflow */
static void linear_bucket_boundaries(void)
{
	setup(STP_HIST_LINEAR, 0, 100, 10, 0);
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, INT64_MIN), 0);
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, -1), 0);
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, 0), 1);
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, 9), 1);
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, 10), 2);
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, 99), 10);
	/* stap keeps a bucket for [stop, stop + interval) before overflowing */
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, 100), 11);
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, 109), 11);
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, 110), 12);
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, INT64_MAX), 12);
}

static void linear_bucket_negative_start(void)
{
	setup(STP_HIST_LINEAR, -50, 50, 25, 0);	/* 7 buckets */
	CU_ASSERT_EQUAL(fx.cfg.buckets, 7);
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, -51), 0);
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, -50), 1);
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, -26), 1);
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, -25), 2);
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, 0), 3);
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, 50), 5);
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, 74), 5);
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, 75), 6);
}

/* a range that is not a multiple of the width: the last bucket runs past stop */
static void linear_bucket_uneven_range(void)
{
	setup(STP_HIST_LINEAR, 0, 95, 10, 0);	/* 12 buckets */
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, 95), 10);
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, 99), 10);
	CU_ASSERT_EQUAL(stp_hist_linear_bucket(&fx.cfg, 100), 11);
}

/* ---- add, merge, extract ----------------------------------------------------- */

static void add_count_sum_min_max(void)
{
	setup(STP_HIST_NONE, 0, 0, 0, 0);
	add_n(0, 5, 1);
	add_n(0, 1, 1);
	add_n(0, 9, 1);
	CU_ASSERT(cpu(0)->count == 3 && cpu(0)->sum == 15);
	CU_ASSERT(cpu(0)->min == 1 && cpu(0)->max == 9);
}

static void add_fills_histogram(void)
{
	setup(STP_HIST_LINEAR, 0, 100, 10, 0);
	add_n(1, -3, 2);
	add_n(1, 42, 3);
	add_n(1, 1000, 1);
	CU_ASSERT_EQUAL(cpu(1)->hist[0], 2);
	CU_ASSERT_EQUAL(cpu(1)->hist[5], 3);
	CU_ASSERT_EQUAL(cpu(1)->hist[12], 1);
	CU_ASSERT_EQUAL(cpu(1)->hist[1], 0);
}

/* PR 2142+2610: since stap 1.5 @count and @sum of nothing are 0, the rest fail */
static void extract_empty(void)
{
	int64_t v = 7;

	setup(STP_HIST_NONE, 0, 0, 0, 0);
	merge();
	CU_ASSERT_EQUAL(stp_stat_extract(&fx.agg, STP_STAT_COUNT, &v), 0);
	CU_ASSERT_EQUAL(v, 0);
	CU_ASSERT_EQUAL(stp_stat_extract(&fx.agg, STP_STAT_SUM, &v), 0);
	CU_ASSERT_EQUAL(v, 0);
	CU_ASSERT_EQUAL(stp_stat_extract(&fx.agg, STP_STAT_MIN, &v), STP_STAT_EMPTY);
	CU_ASSERT_EQUAL(stp_stat_extract(&fx.agg, STP_STAT_MAX, &v), STP_STAT_EMPTY);
	CU_ASSERT_EQUAL(stp_stat_extract(&fx.agg, STP_STAT_AVG, &v), STP_STAT_EMPTY);
	CU_ASSERT_EQUAL(stp_stat_extract(&fx.agg, STP_STAT_VARIANCE, &v), STP_STAT_EMPTY);
	CU_ASSERT_STRING_EQUAL(STP_STAT_EMPTY_MSG, "empty aggregate");
}

/* @avg is _stp_div64(sum, count): truncated toward zero */
static void extract_avg_truncates_toward_zero(void)
{
	setup(STP_HIST_NONE, 0, 0, 0, 0);
	add_n(0, 1, 1);
	add_n(2, 2, 1);
	merge();
	CU_ASSERT_EQUAL(extract(STP_STAT_AVG), 1);
	setup(STP_HIST_NONE, 0, 0, 0, 0);
	add_n(0, -1, 1);
	add_n(0, -2, 1);
	merge();
	CU_ASSERT_EQUAL(extract(STP_STAT_AVG), -1);	/* not -2 */
}

static void merge_across_cpus(void)
{
	setup(STP_HIST_NONE, 0, 0, 0, 0);
	add_n(0, 1, 1);
	add_n(0, 2, 1);
	add_n(1, 10, 1);
	merge();
	CU_ASSERT_EQUAL(extract(STP_STAT_COUNT), 3);
	CU_ASSERT_EQUAL(extract(STP_STAT_SUM), 13);
	CU_ASSERT_EQUAL(extract(STP_STAT_MIN), 1);
	CU_ASSERT_EQUAL(extract(STP_STAT_MAX), 10);
	CU_ASSERT_EQUAL(extract(STP_STAT_AVG), 4);
}

/* an empty CPU's zeroed min/max must not count */
static void merge_skips_empty_cpus(void)
{
	setup(STP_HIST_NONE, 0, 0, 0, 0);
	add_n(1, 5, 1);
	add_n(1, 7, 1);
	add_n(3, -7, 1);
	add_n(3, -5, 1);
	merge();
	CU_ASSERT_EQUAL(extract(STP_STAT_MIN), -7);
	CU_ASSERT_EQUAL(extract(STP_STAT_MAX), 7);
	setup(STP_HIST_NONE, 0, 0, 0, 0);
	add_n(2, 5, 1);
	merge();
	CU_ASSERT_EQUAL(extract(STP_STAT_MIN), 5);
	CU_ASSERT_EQUAL(extract(STP_STAT_MAX), 5);
}

/* per-CPU map values sit a fixed stride apart, maybe more than a partial */
static void merge_respects_stride(void)
{
	int64_t buf[3][10];
	struct stp_stat_agg agg = { 0 };
	int64_t v;

	setup(STP_HIST_NONE, 0, 0, 0, 0);
	memset(buf, 0, sizeof(buf));
	stp_stat_add((struct stp_stat_partial *)buf[0], &fx.cfg, 4);
	stp_stat_add((struct stp_stat_partial *)buf[2], &fx.cfg, 6);
	buf[1][0] = 99;	/* would be a count if the stride were ignored */
	buf[1][7] = 99;
	stp_stat_merge(&agg, &fx.cfg, buf[0], sizeof(buf[0]), 3);
	CU_ASSERT_EQUAL(agg.count, 101);	/* 1 + 99 + 1: buf[1] is CPU 1 */
	stp_stat_merge(&agg, &fx.cfg, buf[0], 2 * sizeof(buf[0]), 2);
	CU_ASSERT(stp_stat_extract(&agg, STP_STAT_SUM, &v) == 0 && v == 10);
	CU_ASSERT_EQUAL(agg.count, 2);
}

static void merge_histograms_and_reuse(void)
{
	setup(STP_HIST_LOG, 0, 0, 0, 0);
	add_n(0, 3, 2);
	add_n(1, 3, 5);
	add_n(3, -1, 1);
	merge();
	CU_ASSERT_EQUAL(fx.hist[66], 7);
	CU_ASSERT_EQUAL(fx.hist[63], 1);
	merge();	/* merging again starts from zero */
	CU_ASSERT_EQUAL(fx.hist[66], 7);
	CU_ASSERT_EQUAL(extract(STP_STAT_COUNT), 8);
}

/* ---- @variance ----------------------------------------------------------------- */

/*
 * 1, 2, 3, 4 with shift 0.  Welford per CPU, integer division:
 * avg_s 1,1,1,1; m2 0,1,5,14; variance_s 14/3 = 4.  Merge: avg_s = 10/4 = 2,
 * S1 = 4 * (1 - 2)^2 = 4, S2 = 3 * 4 = 12, variance = 16 / 3 = 5.
 */
static void variance_integer_welford(void)
{
	setup(STP_HIST_NONE, 0, 0, 0, 0);
	add_n(0, 1, 1);
	add_n(0, 2, 1);
	add_n(0, 3, 1);
	add_n(0, 4, 1);
	CU_ASSERT(cpu(0)->avg_s == 1 && cpu(0)->m2 == 14 && cpu(0)->variance_s == 4);
	merge();
	CU_ASSERT_EQUAL(extract(STP_STAT_VARIANCE), 5);
}

/*
 * The same with @variance(s, 2): avg_s 4,6,8,10; m2 0,8,32,80;
 * variance_s 80/3 = 26.  Merge: avg_s = 40/4 = 10, S1 = 0, S2 = 3 * 26 = 78,
 * 78/3 = 26, >> 4 = 1.
 */
static void variance_with_shift(void)
{
	setup(STP_HIST_NONE, 0, 0, 0, 2);
	add_n(0, 1, 1);
	add_n(0, 2, 1);
	add_n(0, 3, 1);
	add_n(0, 4, 1);
	CU_ASSERT(cpu(0)->avg_s == 10 && cpu(0)->m2 == 80 && cpu(0)->variance_s == 26);
	merge();
	CU_ASSERT_EQUAL(fx.agg.avg_s, 10);
	CU_ASSERT_EQUAL(extract(STP_STAT_VARIANCE), 1);
}

/*
 * {2, 4} on CPU 0 (avg_s 3, variance_s 2), {6, 8} on CPU 2 (avg_s 7,
 * variance_s 2).  avg_s = 20/4 = 5, S1 = 2*4 + 2*4 = 16, S2 = 2 + 2,
 * variance = 20 / 3 = 6.
 */
static void variance_two_cpus(void)
{
	setup(STP_HIST_NONE, 0, 0, 0, 0);
	add_n(0, 2, 1);
	add_n(0, 4, 1);
	add_n(2, 6, 1);
	add_n(2, 8, 1);
	cpu(1)->avg_s = 77;		/* stale fields of a cleared CPU (stap's clear */
	cpu(1)->variance_s = 1000;	/* zeroes count, sum, min, max only) */
	merge();
	CU_ASSERT_EQUAL(extract(STP_STAT_VARIANCE), 6);
}

/*
 * 4, 1: delta -3, avg_s 4 + -3/2 = 3 (truncated, not floored), m2 -3 * (1 - 3)
 * = 6.  Merge: avg_s = 5/2 = 2, S1 = 2 * 1, S2 = 6, variance 8.
 */
static void variance_truncating_division(void)
{
	setup(STP_HIST_NONE, 0, 0, 0, 0);
	add_n(0, 4, 1);
	add_n(0, 1, 1);
	CU_ASSERT(cpu(0)->avg_s == 3 && cpu(0)->m2 == 6 && cpu(0)->variance_s == 6);
	merge();
	CU_ASSERT_EQUAL(extract(STP_STAT_VARIANCE), 8);
}

/*
 * An array's element folds its CPUs as stap's maps do (stp_stat_fold):
 * 0, 3, 6 on one CPU: Welford's avg_s 0, 1, 2, m2 0, 6, 26, variance_s 13,
 * copied as it is: 13, stap's @variance(a[k]).  A scalar takes the CPU's
 * mean about the exact one: avg_s 9/3 = 3, S1 = 3 * (2 - 3)^2 = 3,
 * S2 = 2 * 13: 29 / 2 = 14, stap's @variance(s).
 */
static void variance_keyed_one_cpu(void)
{
	setup(STP_HIST_NONE, 0, 0, 0, 0);
	add_n(0, 0, 1);
	add_n(0, 3, 1);
	add_n(0, 6, 1);
	CU_ASSERT(cpu(0)->avg_s == 2 && cpu(0)->m2 == 26 && cpu(0)->variance_s == 13);
	merge();
	CU_ASSERT_EQUAL(extract(STP_STAT_VARIANCE), 14);
	fx.cfg.keyed = 1;
	merge();
	CU_ASSERT_EQUAL(extract(STP_STAT_VARIANCE), 13);
}

/*
 * Folded in CPU order: {0, 3, 6} on CPU 0 (count 3, avg_s 2, variance_s
 * 13), {10} on CPU 1, {20} on CPU 3.  With CPU 1: count 4, sum 19, avg_s
 * 4, 3 * (2 - 4)^2 + 2 * 13 + 1 * (10 - 4)^2 + 0 = 74, / 3 = 24.  With
 * CPU 3: count 5, sum 39, avg_s 7, 4 * (4 - 7)^2 + 3 * 24 + (20 - 7)^2 =
 * 277, / 4 = 69.  CPU 2's cleared partial is skipped.
 */
static void variance_keyed_fold_order(void)
{
	setup(STP_HIST_NONE, 0, 0, 0, 0);
	fx.cfg.keyed = 1;
	add_n(0, 0, 1);
	add_n(0, 3, 1);
	add_n(0, 6, 1);
	add_n(1, 10, 1);
	add_n(3, 20, 1);
	cpu(2)->avg_s = 77;
	cpu(2)->variance_s = 1000;
	merge();
	CU_ASSERT_EQUAL(extract(STP_STAT_VARIANCE), 69);
	CU_ASSERT_EQUAL(fx.agg.avg_s, 7);
}

/* one sample: stap divides by count - 1 = 0 with _stp_div64, which gives 0 */
static void variance_single_sample(void)
{
	setup(STP_HIST_NONE, 0, 0, 0, 0);
	add_n(1, 7, 1);
	merge();
	CU_ASSERT_EQUAL(extract(STP_STAT_VARIANCE), 0);
}

/* -3, 3: delta 6, avg_s 0, m2 18: variance 18 */
static void variance_symmetric_negatives(void)
{
	setup(STP_HIST_NONE, 0, 0, 0, 0);
	add_n(0, -3, 1);
	add_n(0, 3, 1);
	merge();
	CU_ASSERT_EQUAL(extract(STP_STAT_VARIANCE), 18);
	CU_ASSERT_EQUAL(extract(STP_STAT_AVG), 0);
}

/* @hist_log(s)[i]: the raw bucket, "histogram index out of range" outside */
static void hist_bucket_index(void)
{
	int64_t v;

	setup(STP_HIST_LOG, 0, 0, 0, 0);
	merge();
	CU_ASSERT_EQUAL(stp_stat_hist_bucket(&fx.cfg, &fx.agg, 65, &v), STP_STAT_EMPTY);
	add_n(0, 1, 3);
	merge();
	CU_ASSERT(stp_stat_hist_bucket(&fx.cfg, &fx.agg, 65, &v) == 0 && v == 3);
	CU_ASSERT(stp_stat_hist_bucket(&fx.cfg, &fx.agg, 66, &v) == 0 && v == 0);
	CU_ASSERT_EQUAL(stp_stat_hist_bucket(&fx.cfg, &fx.agg, 128, &v), STP_STAT_RANGE);
	CU_ASSERT_EQUAL(stp_stat_hist_bucket(&fx.cfg, &fx.agg, -1, &v), STP_STAT_RANGE);
	CU_ASSERT_STRING_EQUAL(STP_STAT_RANGE_MSG, "histogram index out of range");
}

/* ---- histogram printing ------------------------------------------------------ */

struct text {
	char buf[8192];
	size_t len;
};

static void text_rep(struct text *t, char c, int n)
{
	while (n-- > 0)
		t->buf[t->len++] = c;
}

static void text_str(struct text *t, const char *s)
{
	size_t n = strlen(s);

	memcpy(t->buf + t->len, s, n);
	t->len += n;
}

/* "value |" right-aligned in `lead` + 5 columns, 50 dashes, " count" */
static void header(struct text *t, int lead)
{
	text_rep(t, ' ', lead);
	text_str(t, "value |");
	text_rep(t, '-', 50);
	text_str(t, " count\n");
}

/* label (already padded, with " |"), bars '@', spaces, the count */
static void row(struct text *t, const char *label, int bars, int spaces, const char *count)
{
	text_str(t, label);
	text_rep(t, '@', bars);
	text_rep(t, ' ', spaces);
	text_str(t, count);
	text_str(t, "\n");
}

static void check_hist(const struct text *want, int elision)
{
	char buf[8192];
	struct stp_out out;

	merge();
	stp_out_init(&out, buf, sizeof(buf));
	CU_ASSERT_EQUAL(stp_stat_print_hist(&out, &fx.cfg, &fx.agg, elision), 0);
	CU_ASSERT_EQUAL(out.len, want->len);
	if (out.len != want->len || memcmp(buf, want->buf, want->len) != 0) {
		fprintf(stderr, "\n--- want:\n%.*s--- got:\n%.*s---\n", (int)want->len, want->buf,
			(int)out.len, buf);
		CU_FAIL("histogram differs");
	}
}

/*
 * 0, 1 x3, 4 x2: rows from bucket 64 (no margin below 0 without
 * negatives) to 67 + 2; the empty bucket 2 between data is printed.
 */
static void print_log_small(void)
{
	struct text t = { .len = 0 };

	setup(STP_HIST_LOG, 0, 0, 0, 0);
	add_n(0, 0, 1);
	add_n(1, 1, 3);
	add_n(2, 4, 2);
	header(&t, 0);
	row(&t, "    0 |", 1, 50, "1");
	row(&t, "    1 |", 3, 48, "3");
	row(&t, "    2 |", 0, 51, "0");
	row(&t, "    4 |", 2, 49, "2");
	row(&t, "    8 |", 0, 51, "0");
	row(&t, "   16 |", 0, 51, "0");
	text_str(&t, "\n");
	check_hist(&t, STP_HIST_ELISION);
}

/* with negatives the margin grows two buckets below the lowest */
static void print_log_negative_margin(void)
{
	struct text t = { .len = 0 };

	setup(STP_HIST_LOG, 0, 0, 0, 0);
	add_n(0, -1, 2);
	add_n(0, 1, 1);
	header(&t, 0);
	row(&t, "   -4 |", 0, 51, "0");
	row(&t, "   -2 |", 0, 51, "0");
	row(&t, "   -1 |", 2, 49, "2");
	row(&t, "    0 |", 0, 51, "0");
	row(&t, "    1 |", 1, 50, "1");
	row(&t, "    2 |", 0, 51, "0");
	row(&t, "    4 |", 0, 51, "0");
	text_str(&t, "\n");
	check_hist(&t, STP_HIST_ELISION);
}

static void data_1_and_1024(void)
{
	setup(STP_HIST_LOG, 0, 0, 0, 0);
	add_n(0, 1, 1);
	add_n(3, 1024, 1);
}

/* HIST_ELISION 2: a row is elided when it and 2 neighbours each side are empty */
static void print_log_elision_default(void)
{
	struct text t = { .len = 0 };

	data_1_and_1024();
	header(&t, 0);
	row(&t, "    0 |", 0, 51, "0");
	row(&t, "    1 |", 1, 50, "1");
	row(&t, "    2 |", 0, 51, "0");
	row(&t, "    4 |", 0, 51, "0");
	text_str(&t, "      ~\n");	/* 8 .. 128 */
	row(&t, "  256 |", 0, 51, "0");
	row(&t, "  512 |", 0, 51, "0");
	row(&t, " 1024 |", 1, 50, "1");
	row(&t, " 2048 |", 0, 51, "0");
	row(&t, " 4096 |", 0, 51, "0");
	text_str(&t, "\n");
	check_hist(&t, STP_HIST_ELISION);
}

/* HIST_ELISION 0: every empty row goes, a '~' where rows were left out before data */
static void print_log_elision_zero(void)
{
	struct text t = { .len = 0 };

	data_1_and_1024();
	header(&t, 0);
	text_str(&t, "      ~\n");
	row(&t, "    1 |", 1, 50, "1");
	text_str(&t, "      ~\n");
	row(&t, " 1024 |", 1, 50, "1");
	text_str(&t, "\n");
	check_hist(&t, 0);
}

/* a negative HIST_ELISION keeps every row */
static void print_log_elision_disabled(void)
{
	static const char *const labels[] = {
		"    0 |", "    2 |", "    4 |", "    8 |", "   16 |", "   32 |",
		"   64 |", "  128 |", "  256 |", "  512 |", " 2048 |", " 4096 |",
	};
	struct text t = { .len = 0 };
	int i;

	data_1_and_1024();
	header(&t, 0);
	row(&t, labels[0], 0, 51, "0");
	row(&t, "    1 |", 1, 50, "1");
	for (i = 1; i < 10; i++)
		row(&t, labels[i], 0, 51, "0");
	row(&t, " 1024 |", 1, 50, "1");
	row(&t, labels[10], 0, 51, "0");
	row(&t, labels[11], 0, 51, "0");
	text_str(&t, "\n");
	check_hist(&t, -1);
}

/*
 * langref 8.4.1, verbatim (less the document's indent): hist_linear(reads,
 * 0, 10240, 200) with 1650 reads of 0-199, 8 of 200-399, 1 of 1400-1599.
 */
static void print_linear_langref(void)
{
	struct text t = { .len = 0 };

	setup(STP_HIST_LINEAR, 0, 10240, 200, 0);
	add_n(0, 100, 1650);
	add_n(1, 200, 8);
	add_n(2, 1450, 1);
	header(&t, 0);
	row(&t, "    0 |", 50, 1, "1650");
	row(&t, "  200 |", 0, 54, "8");
	row(&t, "  400 |", 0, 54, "0");
	row(&t, "  600 |", 0, 54, "0");
	text_str(&t, "      ~\n");
	row(&t, " 1000 |", 0, 54, "0");
	row(&t, " 1200 |", 0, 54, "0");
	row(&t, " 1400 |", 0, 54, "1");
	row(&t, " 1600 |", 0, 54, "0");
	row(&t, " 1800 |", 0, 54, "0");
	text_str(&t, "\n");
	check_hist(&t, STP_HIST_ELISION);
}

/*
 * langref 8.4.2's data: 254 x 32, 3 x 64, 2 x 128, 2 x 256, 4 x 512,
 * 16689 x 1024.  Scale ceil(16689 / 50) = 334, so 1024 gets 49 '@'.  The
 * count column is needed_space(16689) = 5 wide: rows are 56 columns after
 * the '|' where the langref's (hand-edited) figure shows 55.
 */
static void print_log_langref_data(void)
{
	struct text t = { .len = 0 };

	setup(STP_HIST_LOG, 0, 0, 0, 0);
	add_n(0, 32, 254);
	add_n(1, 64, 3);
	add_n(1, 128, 2);
	add_n(2, 256, 2);
	add_n(2, 512, 4);
	add_n(3, 1024, 16689);
	header(&t, 0);
	row(&t, "    8 |", 0, 55, "0");
	row(&t, "   16 |", 0, 55, "0");
	row(&t, "   32 |", 0, 53, "254");
	row(&t, "   64 |", 0, 55, "3");
	row(&t, "  128 |", 0, 55, "2");
	row(&t, "  256 |", 0, 55, "2");
	row(&t, "  512 |", 0, 55, "4");
	row(&t, " 1024 |", 49, 2, "16689");
	row(&t, " 2048 |", 0, 55, "0");
	row(&t, " 4096 |", 0, 55, "0");
	text_str(&t, "\n");
	check_hist(&t, STP_HIST_ELISION);
}

/*
 * Underflow "<0" and overflow rows.  The value column is sized for
 * start + interval * high = 120 plus the '>' mark; the overflow row is
 * labelled start + (buckets - 3) * interval = ">100", after the row "100"
 * that holds [100, 110).
 */
static void print_linear_under_overflow(void)
{
	struct text t = { .len = 0 };

	setup(STP_HIST_LINEAR, 0, 100, 10, 0);
	add_n(0, -5, 1);
	add_n(0, 5, 2);
	add_n(1, 200, 1);
	header(&t, 0);
	row(&t, "   <0 |", 1, 50, "1");
	row(&t, "    0 |", 2, 49, "2");
	row(&t, "   10 |", 0, 51, "0");
	row(&t, "   20 |", 0, 51, "0");
	text_str(&t, "      ~\n");
	row(&t, "   90 |", 0, 51, "0");
	row(&t, "  100 |", 0, 51, "0");
	row(&t, " >100 |", 1, 50, "1");
	text_str(&t, "\n");
	check_hist(&t, STP_HIST_ELISION);
}

/*
 * Only overflow: the value column is needed_space(0 + 1000 * 12) + 1 for
 * the '>' = 6, so "value" moves one column right.
 */
static void print_linear_overflow_mark_widens(void)
{
	struct text t = { .len = 0 };

	setup(STP_HIST_LINEAR, 0, 10000, 1000, 0);	/* 13 buckets */
	add_n(0, 50000, 1);
	header(&t, 1);
	row(&t, "  9000 |", 0, 51, "0");
	row(&t, " 10000 |", 0, 51, "0");
	row(&t, ">10000 |", 1, 50, "1");
	text_str(&t, "\n");
	check_hist(&t, STP_HIST_ELISION);
}

/* the margin reaches the underflow bucket, but an empty one is not shown */
static void print_linear_empty_underflow_hidden(void)
{
	struct text t = { .len = 0 };

	setup(STP_HIST_LINEAR, 0, 100, 10, 0);
	add_n(0, 5, 1);
	header(&t, 0);
	row(&t, "    0 |", 1, 50, "1");
	row(&t, "   10 |", 0, 51, "0");
	row(&t, "   20 |", 0, 51, "0");
	text_str(&t, "\n");
	check_hist(&t, STP_HIST_ELISION);
}

/* and likewise an empty overflow bucket at the top */
static void print_linear_empty_overflow_hidden(void)
{
	struct text t = { .len = 0 };

	setup(STP_HIST_LINEAR, 0, 30, 10, 0);	/* 6 buckets: <0 0 10 20 30 >30 */
	add_n(0, 25, 1);			/* bucket 3 */
	header(&t, 0);
	row(&t, "    0 |", 0, 51, "0");
	row(&t, "   10 |", 0, 51, "0");
	row(&t, "   20 |", 1, 50, "1");
	row(&t, "   30 |", 0, 51, "0");
	text_str(&t, "\n");
	check_hist(&t, STP_HIST_ELISION);
}

/* 51 samples: scale = ceil(51 / 50) = 2, 25 '@'; the count column is 2 wide */
static void print_scale_rounds_up(void)
{
	struct text t = { .len = 0 };

	setup(STP_HIST_LOG, 0, 0, 0, 0);
	add_n(0, 1, 51);
	header(&t, 0);
	row(&t, "    0 |", 0, 52, "0");
	row(&t, "    1 |", 25, 26, "51");
	row(&t, "    2 |", 0, 52, "0");
	row(&t, "    4 |", 0, 52, "0");
	text_str(&t, "\n");
	check_hist(&t, STP_HIST_ELISION);
}

/* INT64_MIN: bucket 0, 20-character labels widen the value column */
static void print_wide_negative_labels(void)
{
	struct text t = { .len = 0 };

	setup(STP_HIST_LOG, 0, 0, 0, 0);
	add_n(0, INT64_MIN, 1);
	header(&t, 15);
	row(&t, "-9223372036854775808 |", 1, 50, "1");
	row(&t, "-4611686018427387904 |", 0, 51, "0");
	row(&t, "-2305843009213693952 |", 0, 51, "0");
	text_str(&t, "\n");
	check_hist(&t, STP_HIST_ELISION);
}

/* linear labels that are negative and wider than "value" */
static void print_linear_negative_wide(void)
{
	struct text t = { .len = 0 };

	setup(STP_HIST_LINEAR, -100000, 100000, 50000, 0);	/* 7 buckets */
	add_n(0, -100000, 1);					/* bucket 1 */
	header(&t, 2);	/* needed_space(-100000 + 50000 * 3) = 5, of -100000 = 7 */
	row(&t, "-100000 |", 1, 50, "1");
	row(&t, " -50000 |", 0, 51, "0");
	row(&t, "      0 |", 0, 51, "0");
	text_str(&t, "\n");
	check_hist(&t, STP_HIST_ELISION);
}

static void print_empty_or_no_histogram(void)
{
	char buf[64];
	struct stp_out out;

	stp_out_init(&out, buf, sizeof(buf));
	setup(STP_HIST_LOG, 0, 0, 0, 0);
	merge();
	CU_ASSERT_EQUAL(stp_stat_print_hist(&out, &fx.cfg, &fx.agg, 2), STP_STAT_EMPTY);
	setup(STP_HIST_NONE, 0, 0, 0, 0);
	add_n(0, 1, 1);
	merge();
	CU_ASSERT_EQUAL(stp_stat_print_hist(&out, &fx.cfg, &fx.agg, 2), -EINVAL);
	CU_ASSERT_EQUAL(out.len, 0);
}

static void print_truncated(void)
{
	char buf[40];
	struct stp_out out;

	setup(STP_HIST_LOG, 0, 0, 0, 0);
	add_n(0, 1, 1);
	merge();
	stp_out_init(&out, buf, sizeof(buf));
	CU_ASSERT_EQUAL(stp_stat_print_hist(&out, &fx.cfg, &fx.agg, 2), STP_OUT_TRUNCATED);
	CU_ASSERT_EQUAL(out.len, sizeof(buf));
	CU_ASSERT_NSTRING_EQUAL(buf, "value |---------------------------------", sizeof(buf));
}

#define C(name) { #name, name }

static const struct unit_case stats_cases[] = {
	C(cfg_linear_bucket_count), C(cfg_linear_errors), C(cfg_log_none_and_shift),
	C(log_bucket_zero_and_small), C(log_bucket_negative), C(log_bucket_extremes),
	C(log_bucket_every_power_of_two), C(log_value_labels),
	C(linear_bucket_boundaries), C(linear_bucket_negative_start),
	C(linear_bucket_uneven_range),
	C(add_count_sum_min_max), C(add_fills_histogram), C(extract_empty),
	C(extract_avg_truncates_toward_zero), C(merge_across_cpus), C(merge_skips_empty_cpus),
	C(merge_respects_stride), C(merge_histograms_and_reuse),
	C(variance_integer_welford), C(variance_with_shift), C(variance_two_cpus),
	C(variance_keyed_one_cpu), C(variance_keyed_fold_order),
	C(variance_truncating_division), C(variance_single_sample), C(variance_symmetric_negatives), C(hist_bucket_index),
	C(print_log_small), C(print_log_negative_margin), C(print_log_elision_default),
	C(print_log_elision_zero), C(print_log_elision_disabled), C(print_linear_langref),
	C(print_log_langref_data), C(print_linear_under_overflow), C(print_linear_overflow_mark_widens),
	C(print_linear_empty_underflow_hidden), C(print_linear_empty_overflow_hidden),
	C(print_scale_rounds_up), C(print_wide_negative_labels),
	C(print_linear_negative_wide), C(print_empty_or_no_histogram), C(print_truncated),
	{ NULL, NULL },
};

void unit_register(void)
{
	unit_add_suite("rt_stats", stats_cases);
}
