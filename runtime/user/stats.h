/*
 * stats.h - statistics (aggregates) for the user-space runtime.
 *
 * A global fed with <<< keeps one partial aggregate per CPU (in a per-CPU
 * BPF map on the kernel side, in the runner's memory for user-context
 * probes).  Reading it merges the partials; the extractors and the
 * histogram printer work on the merged aggregate.  The arithmetic is stap
 * 4.x's (runtime/stat-common.c and stat.c): 64-bit integers, divisions
 * truncated toward zero, @variance by Welford's method per CPU with the
 * global's bit shift, the CPUs combined as stap's _stp_stat_get does.
 * Nothing here allocates: callers pass the histogram arrays.  What a
 * sample does to a partial (stp_stat_add) and the histogram buckets are in
 * ../stp_stats.h, shared with the kernel side.
 */
#ifndef STP_STATS_H
#define STP_STATS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "../stp_stats.h"
#include "format.h"

#define STP_HIST_WIDTH		50	/* columns of '@' for the largest count */
#define STP_HIST_ELISION	2	/* stap's default HIST_ELISION */

/*
 * Set a configuration up (with the @variance terms kept).  Returns NULL,
 * or why the parameters are refused (a bucket width that is not positive,
 * an empty range, too many buckets, a shift out of 0..62).
 */
const char *stp_stat_cfg_init(struct stp_stat_cfg *cfg, enum stp_hist_type type, int64_t start,
			      int64_t stop, int64_t interval, int shift);

static inline size_t stp_stat_partial_size(const struct stp_stat_cfg *cfg)
{
	return sizeof(struct stp_stat_partial) + (size_t)cfg->buckets * sizeof(int64_t);
}

/* The aggregate across CPUs. */
struct stp_stat_agg {
	int64_t count, sum, min, max;
	int64_t avg_s;		/* (sum << shift) / count */
	int64_t variance;	/* shifted back */
	int64_t *hist;		/* the caller's cfg->buckets counters, or NULL */
};

/*
 * Merge ncpus partials laid out stride bytes apart (a per-CPU map value,
 * or an array of partials) into agg, whose hist the caller has pointed at
 * cfg->buckets counters (it may be NULL for STP_HIST_NONE).
 */
void stp_stat_merge(struct stp_stat_agg *agg, const struct stp_stat_cfg *cfg,
		    const void *partials, size_t stride, int ncpus);

enum stp_stat_op {
	STP_STAT_COUNT,
	STP_STAT_SUM,
	STP_STAT_MIN,
	STP_STAT_MAX,
	STP_STAT_AVG,
	STP_STAT_VARIANCE,
};

/* An extractor on an aggregate with no samples (stap's wording). */
#define STP_STAT_EMPTY		(-ENODATA)
#define STP_STAT_EMPTY_MSG	"empty aggregate"
/* @hist_*(s)[i] with i outside the histogram. */
#define STP_STAT_RANGE		(-ERANGE)
#define STP_STAT_RANGE_MSG	"histogram index out of range"

/*
 * @count @sum @min @max @avg @variance.  Returns 0, or STP_STAT_EMPTY for
 * @min @max @avg @variance of an empty aggregate (@count and @sum give 0).
 */
int stp_stat_extract(const struct stp_stat_agg *agg, enum stp_stat_op op, int64_t *val);

/* The value a log bucket's row is labelled with (its bound nearest 0). */
int64_t stp_hist_log_value(int bucket);

/* @hist_*(s)[index]: the count of one bucket, or STP_STAT_RANGE/EMPTY. */
int stp_stat_hist_bucket(const struct stp_stat_cfg *cfg, const struct stp_stat_agg *agg,
			 int64_t index, int64_t *val);

/*
 * print(@hist_log(s)) / print(@hist_linear(...)): stap's ASCII histogram,
 * rows of empty buckets elided beyond `elision` of them next to data
 * (stap's HIST_ELISION: STP_HIST_ELISION by default, negative keeps all).
 * Returns 0, STP_OUT_TRUNCATED, STP_STAT_EMPTY (nothing printed) or
 * -EINVAL when cfg has no histogram.
 */
int stp_stat_print_hist(struct stp_out *out, const struct stp_stat_cfg *cfg,
			const struct stp_stat_agg *agg, int elision);

#endif
