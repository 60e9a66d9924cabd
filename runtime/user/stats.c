/*
 * stats.c - per-CPU statistics: merge, extract, print histograms.  Adding
 * a sample and the arithmetic are ../stp_stats.h's and ../stp_arith.h's,
 * shared with the kernel side; integer arithmetic wraps as in the kernel.
 */
#include <stdbool.h>
#include <string.h>

#include "stats.h"

const char *stp_stat_cfg_init(struct stp_stat_cfg *cfg, enum stp_hist_type type, int64_t start,
			      int64_t stop, int64_t interval, int shift)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->type = type;
	cfg->shift = shift;
	cfg->variance = 1;
	if (shift < 0 || shift > STP_STAT_MAX_SHIFT)
		return "the @variance bit shift must be between 0 and 62";
	if (type == STP_HIST_LOG)
		cfg->buckets = STP_HIST_LOG_BUCKETS;
	if (type != STP_HIST_LINEAR)
		return NULL;
	if (interval <= 0)
		return "the bucket width of a linear histogram must be positive";
	if (stop <= start)
		return "the range of a linear histogram is empty: high must be greater than low";
	if ((uint64_t)(stop - start) / (uint64_t)interval > STP_HIST_MAX_BUCKETS - 3)
		return "a linear histogram has at most 128 buckets, underflow and overflow included";
	cfg->start = start;
	cfg->stop = stop;
	cfg->interval = interval;
	cfg->buckets = (int)((stop - start) / interval) + 3;
	return NULL;
}

/* ---- buckets ------------------------------------------------------------ */

int64_t stp_hist_log_value(int bucket)
{
	if (bucket == STP_HIST_LOG_BUCKET0)
		return 0;
	if (bucket < STP_HIST_LOG_BUCKET0)
		return INT64_MIN >> bucket;
	return (int64_t)1 << (bucket - STP_HIST_LOG_BUCKET0 - 1);
}

/* ---- merge ---------------------------------------------------------------- */

/* stap's _stp_div64: x / y, 0 for y == 0 (a count of 1 has no variance). */
static int64_t div64(int64_t x, int64_t y)
{
	return y ? stp_div(x, y) : 0;
}

static const struct stp_stat_partial *partial_at(const void *partials, size_t stride, int cpu)
{
	return (const struct stp_stat_partial *)((const char *)partials + (size_t)cpu * stride);
}

static void merge_one(struct stp_stat_agg *agg, const struct stp_stat_cfg *cfg,
		      const struct stp_stat_partial *p)
{
	int j;

	if (agg->count == 0) {
		agg->min = p->min;
		agg->max = p->max;
	}
	agg->count = stp_add64(agg->count, p->count);
	agg->sum = stp_add64(agg->sum, p->sum);
	if (p->max > agg->max)
		agg->max = p->max;
	if (p->min < agg->min)
		agg->min = p->min;
	for (j = 0; agg->hist && j < cfg->buckets; j++)
		agg->hist[j] = stp_add64(agg->hist[j], p->hist[j]);
}

/* Combine the CPUs' means and variances about the overall mean. */
static void merge_variance(struct stp_stat_agg *agg, const struct stp_stat_cfg *cfg,
			   const void *partials, size_t stride, int ncpus)
{
	int64_t s1 = 0, s2 = 0, d;
	int cpu;

	agg->avg_s = div64(stp_shl(agg->sum, cfg->shift), agg->count);
	for (cpu = 0; cpu < ncpus; cpu++) {
		const struct stp_stat_partial *p = partial_at(partials, stride, cpu);

		if (p->count == 0)
			continue;
		d = stp_sub64(p->avg_s, agg->avg_s);
		s1 = stp_add64(s1, stp_mul64(stp_mul64(p->count, d), d));
		s2 = stp_add64(s2, stp_mul64(p->count - 1, p->variance_s));
	}
	agg->variance = stp_stat_unshift(div64(stp_add64(s1, s2), agg->count - 1), cfg->shift);
}

/* An array element's: the CPUs folded in order, as stap's maps do (../stp_stats.h). */
static void fold_variance(struct stp_stat_agg *agg, const struct stp_stat_cfg *cfg,
			  const void *partials, size_t stride, int ncpus)
{
	struct stp_stat_fold t = { 0 };

	for (int cpu = 0; cpu < ncpus; cpu++) {
		const struct stp_stat_partial *p = partial_at(partials, stride, cpu);

		if (p->count)
			stp_stat_fold(&t, p, cfg->shift);
	}
	agg->avg_s = t.avg_s;
	agg->variance = stp_stat_unshift(t.variance_s, cfg->shift);
}

void stp_stat_merge(struct stp_stat_agg *agg, const struct stp_stat_cfg *cfg,
		    const void *partials, size_t stride, int ncpus)
{
	int64_t *hist = agg->hist;
	int cpu;

	memset(agg, 0, sizeof(*agg));
	agg->hist = hist;
	if (hist)
		memset(hist, 0, (size_t)cfg->buckets * sizeof(*hist));
	for (cpu = 0; cpu < ncpus; cpu++) {
		const struct stp_stat_partial *p = partial_at(partials, stride, cpu);

		if (p->count)
			merge_one(agg, cfg, p);
	}
	if (agg->count && cfg->keyed)
		fold_variance(agg, cfg, partials, stride, ncpus);
	else if (agg->count)
		merge_variance(agg, cfg, partials, stride, ncpus);
}

/* ---- extractors ---------------------------------------------------------- */

int stp_stat_extract(const struct stp_stat_agg *agg, enum stp_stat_op op, int64_t *val)
{
	*val = 0;
	if (agg->count == 0)
		return op == STP_STAT_COUNT || op == STP_STAT_SUM ? 0 : STP_STAT_EMPTY;
	switch (op) {
	case STP_STAT_COUNT: *val = agg->count; break;
	case STP_STAT_SUM: *val = agg->sum; break;
	case STP_STAT_MIN: *val = agg->min; break;
	case STP_STAT_MAX: *val = agg->max; break;
	case STP_STAT_AVG: *val = div64(agg->sum, agg->count); break;
	case STP_STAT_VARIANCE: *val = agg->variance; break;
	}
	return 0;
}

int stp_stat_hist_bucket(const struct stp_stat_cfg *cfg, const struct stp_stat_agg *agg,
			 int64_t index, int64_t *val)
{
	*val = 0;
	if (agg->count == 0)
		return STP_STAT_EMPTY;
	if (!agg->hist || index < 0 || index >= cfg->buckets)
		return STP_STAT_RANGE;
	*val = agg->hist[index];
	return 0;
}

/* ---- printing histograms ------------------------------------------------- */

/* The rows to print and the columns they need. */
struct hist_layout {
	int low, high;		/* first and last row */
	int under, over;	/* linear: the underflow/overflow row is shown */
	int64_t max;		/* largest count */
	int64_t scale;		/* counts per '@' */
	int val_space, cnt_space;
};

/* Characters printf("%lld") takes for v. */
static int needed_space(int64_t v)
{
	uint64_t mag = v < 0 ? -(uint64_t)v : (uint64_t)v;
	int space = v < 0;

	do {
		space++;
		mag /= 10;
	} while (mag);
	return space;
}

/* The buckets with data, and two empty ones on either side when there. */
static void hist_range(const struct stp_stat_cfg *cfg, const struct stp_stat_agg *agg,
		       struct hist_layout *l)
{
	int i;

	l->low = -1;
	l->high = 0;
	for (i = 0; i < cfg->buckets; i++) {
		if (agg->hist[i] > 0 && l->low == -1)
			l->low = i;
		if (agg->hist[i] > 0)
			l->high = i;
		if (agg->hist[i] > l->max)
			l->max = agg->hist[i];
	}
	for (i = 0; i < 2; i++) {
		/* a log histogram grows below 0 only when it has negatives */
		if (l->low > 0 && (cfg->type != STP_HIST_LOG || l->low != STP_HIST_LOG_BUCKET0))
			l->low--;
		if (l->high < cfg->buckets - 1)
			l->high++;
	}
}

/* Linear: under/overflow rows are shown only when they hold something. */
static void hist_linear_edges(const struct stp_stat_cfg *cfg, const struct stp_stat_agg *agg,
			      struct hist_layout *l)
{
	if (l->low == 0 && agg->hist[0] == 0)
		l->low++;
	if (l->high == cfg->buckets - 1 && agg->hist[l->high] == 0)
		l->high--;
	l->under = l->low == 0;
	l->over = l->high == cfg->buckets - 1;
}

static int max_int(int a, int b)
{
	return a > b ? a : b;
}

static void hist_columns(const struct stp_stat_cfg *cfg, struct hist_layout *l)
{
	l->scale = l->max <= STP_HIST_WIDTH ? 1 : (l->max + STP_HIST_WIDTH - 1) / STP_HIST_WIDTH;
	l->cnt_space = needed_space(l->max);
	if (cfg->type == STP_HIST_LINEAR)
		/* stap sizes the last row as bucket `high`, one interval past it */
		l->val_space = max_int(needed_space(cfg->start) + l->under,
				       needed_space(cfg->start + cfg->interval * l->high) + l->over);
	else
		l->val_space = max_int(needed_space(stp_hist_log_value(l->high)),
				       needed_space(stp_hist_log_value(l->low)));
	l->val_space = max_int(l->val_space, 5);	/* "value" */
}

static void put_int(struct stp_out *out, int64_t v, int width)
{
	char buf[24];
	uint64_t mag = v < 0 ? -(uint64_t)v : (uint64_t)v;
	int i = sizeof(buf);

	do {
		buf[--i] = (char)('0' + mag % 10);
		mag /= 10;
	} while (mag);
	if (v < 0)
		buf[--i] = '-';
	stp_out_fill(out, ' ', width - ((int)sizeof(buf) - i));
	stp_out_write(out, buf + i, sizeof(buf) - (size_t)i);
}

static void put_str(struct stp_out *out, const char *s)
{
	stp_out_write(out, s, strlen(s));
}

static void print_header(struct stp_out *out, const struct hist_layout *l)
{
	stp_out_fill(out, ' ', l->val_space - 5);
	put_str(out, "value |");
	stp_out_fill(out, '-', STP_HIST_WIDTH);
	put_str(out, " count\n");
}

/* Is row i empty, and every row within `elision` of it (in range) too? */
static bool row_elided(const struct stp_stat_cfg *cfg, const struct stp_stat_agg *agg,
		       const struct hist_layout *l, int i, int elision)
{
	int span = elision < cfg->buckets ? elision : cfg->buckets;
	int k;

	if (elision < 0)
		return false;
	for (k = i - span > l->low ? i - span : l->low; k <= i + span && k <= l->high; k++)
		if (agg->hist[k] != 0)
			return false;
	return true;
}

/* The value row i is labelled with, and its "<" or ">" mark. */
static int64_t row_value(const struct stp_stat_cfg *cfg, int i, const char **mark)
{
	*mark = "";
	if (cfg->type == STP_HIST_LOG)
		return stp_hist_log_value(i);
	if (i == 0) {
		*mark = "<";
		return cfg->start;
	}
	if (i == cfg->buckets - 1) {
		*mark = ">";
		return cfg->start + (int64_t)(i - 2) * cfg->interval;
	}
	return cfg->start + (int64_t)(i - 1) * cfg->interval;
}

/* "   64 |@@@@@                     12" */
static void print_row(struct stp_out *out, const struct stp_stat_cfg *cfg,
		      const struct stp_stat_agg *agg, const struct hist_layout *l, int i)
{
	const char *mark;
	int64_t val = row_value(cfg, i, &mark);
	int64_t bars = (int64_t)((uint64_t)agg->hist[i] / (uint64_t)l->scale);

	stp_out_fill(out, ' ', l->val_space - needed_space(val) - (long)strlen(mark));
	put_str(out, mark);
	put_int(out, val, 0);
	put_str(out, " |");
	stp_out_fill(out, '@', bars);
	put_int(out, agg->hist[i], (int)(STP_HIST_WIDTH - bars + 1 + l->cnt_space));
	put_str(out, "\n");
}

static void print_rows(struct stp_out *out, const struct stp_stat_cfg *cfg,
		       const struct stp_stat_agg *agg, const struct hist_layout *l, int elision)
{
	bool eliding = false;
	int i;

	for (i = l->low; i <= l->high; i++) {
		if (row_elided(cfg, agg, l, i, elision)) {
			eliding = true;
			continue;
		}
		if (eliding) {
			stp_out_fill(out, ' ', l->val_space);
			put_str(out, " ~\n");
			eliding = false;
		}
		print_row(out, cfg, agg, l, i);
	}
}

int stp_stat_print_hist(struct stp_out *out, const struct stp_stat_cfg *cfg,
			const struct stp_stat_agg *agg, int elision)
{
	struct hist_layout l = { 0 };

	if (cfg->type == STP_HIST_NONE || !agg->hist)
		return -EINVAL;
	if (agg->count == 0)
		return STP_STAT_EMPTY;
	hist_range(cfg, agg, &l);
	if (l.low < 0)
		return STP_STAT_EMPTY;
	if (cfg->type == STP_HIST_LINEAR)
		hist_linear_edges(cfg, agg, &l);
	hist_columns(cfg, &l);
	print_header(out, &l);
	print_rows(out, cfg, agg, &l, elision);
	put_str(out, "\n");
	return out->truncated ? STP_OUT_TRUNCATED : 0;
}
