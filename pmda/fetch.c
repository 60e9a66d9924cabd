/*
 * fetch.c - values: each script's maps read once per fetch, then answered
 * from that snapshot.
 *
 * A fetch (or an instance-domain request) starts a new generation; the
 * first metric of a global asks for the global's snapshot and later ones
 * in the same generation reuse it.  The script's data is read through
 * libstaprt's data interface (runtime/user/data.h), which knows where the
 * script's runtime keeps it: nothing here does.  Each key becomes an
 * instance ("k1::k2" for several keys, spaces as '_') whose pmdaCache
 * private pointer is its element in the snapshot.
 *
 * Arrays whose values stay in place (slotted arrays of longs and strings)
 * have their keys and slots read again only when the array's generation
 * moved (a key came or went); otherwise a fetch is one load per element.
 *
 * A fetch of an array's metric does not go through pmdaFetch's callback,
 * one instance at a time: stap_fetch_values builds its whole value set
 * from the snapshot, in ascending instance order (the order pmdaFetch's
 * cache walk gives), kept with the instances and made again only when they
 * are (result.c puts the fetch's pmResult together).
 *
 * Statistics are merged over CPUs with libstaprt's stats.c; histograms
 * become instances "lo-hi", dense between the lowest and highest bucket
 * in use (a linear histogram shows all its buckets, and underflow/overflow
 * when used).  Instances of keys not in the map any more are made
 * inactive and keep their ids; beyond a bound per array (its size) the
 * ones that went away first are culled (arrays.c).  So are the bucket
 * instances of a statistics array, "key::lo-hi", beyond its size times
 * its bucket count: keys that come and go would add to them for ever.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmdastap.h"
#include "arrays.h"
#include "result.h"
#include "../runtime/user/data.h"
#include "../runtime/user/stats.h"

struct stap_elem {
	int64_t v;
	const char *s;
	struct stp_stat_agg agg;
};

struct stap_gsnap {
	unsigned int gen;
	int n;
	struct stap_elem *elems;
	char *keys, *vals;
	size_t vstride;			/* bytes of each element of vals */
	int *insts;			/* per element: its instance in the key indom */
	int *order;			/* elements by ascending instance, one per instance */
	int *oinsts;			/* the instance of each of order */
	uint32_t *oslots;		/* slotted: the slot of each of order */
	int norder;
	char *strs;			/* slotted strings, copied: nstrs of value_size + 1 */
	int nstrs;
	int64_t *hist;			/* n * cfg.buckets */
	struct stp_stat_cfg cfg;
	struct stap_prune prune;	/* the key indom's */
	struct stap_prune hprune;	/* the hist indom's */

	/* values in place: vals holds each element's uint32_t slot */
	int64_t keys_gen;		/* the generation the keys were read at */
	bool keyed;			/* keys, slots and instances are those of keys_gen */
};

static unsigned int fetch_gen = 1;

void stap_fetch_begin(void)
{
	fetch_gen++;
	stap_outtext_begin();
}

/* ---- the data a child sent ---- */

static void log_data(void *arg, const char *msg)
{
	pmNotifyErr(LOG_ERR, "script %s: %s", ((struct stap_script *)arg)->name, msg);
}

void stap_maps_adopt(struct stap_script *sc)
{
	const struct stp_meta *m = sc->meta;

	stap_maps_close(sc);
	stap_kmod_adopt(sc);
	sc->data = stp_data__new(m, sc->ncpus);	/* handed over, kernel: the segment's slots */
	sc->snaps = calloc((size_t)m->nglobals + 1, sizeof(*sc->snaps));
	sc->probe_stats = calloc((size_t)m->nprobes + 1, sizeof(*sc->probe_stats));
	sc->probe_misses = calloc((size_t)m->nprobes + 1, sizeof(*sc->probe_misses));
	if (sc->data)
		stp_data__set_log(sc->data, log_data, sc);
	for (int i = 0; i < sc->npending; i++) {
		if (strcmp(sc->pending[i].name, "stp_umaps") == 0 && sc->umaps_fd < 0)
			sc->umaps_fd = sc->pending[i].fd;	/* not a global's: for stacks.c */
		else if (!sc->snaps || !stp_data__adopt(sc->data, sc->pending[i].name, sc->pending[i].fd))
			close(sc->pending[i].fd);
		free(sc->pending[i].name);
	}
	free(sc->pending);
	sc->pending = NULL;
	sc->npending = 0;
	if (sc->dseg && sc->snaps)
		stp_data__adopt_dseg(sc->data, sc->dseg, sc->dseg_fd);
	if (sc->snaps)
		stap_kmod_data(sc);
	sc->globals_size = stp_data__scalars_size(sc->data);
	sc->globals_val = sc->globals_size ? calloc(1, sc->globals_size + 1) : NULL;
}

void stap_maps_close(struct stap_script *sc)
{
	stp_data__free(sc->data);
	sc->data = NULL;
	stap_kmod_release(sc);
	free(sc->probe_misses);
	sc->probe_misses = NULL;
	sc->misses = 0;
	free(sc->globals_val);
	sc->globals_val = NULL;
	sc->globals_size = 0;
	if (sc->umaps_fd >= 0)
		close(sc->umaps_fd);
	sc->umaps_fd = -1;
	stap_stacks_free(sc);
	stap_snaps_free(sc);
}

/* What one reading of the map made. */
static void gsnap_clear(struct stap_gsnap *gs)
{
	free(gs->elems);
	free(gs->keys);
	free(gs->vals);
	free(gs->hist);
	free(gs->insts);
	free(gs->order);
	free(gs->oinsts);
	free(gs->oslots);
	free(gs->strs);
	gs->strs = NULL;
	gs->nstrs = 0;
	gs->oinsts = NULL;
	gs->oslots = NULL;
	gs->elems = NULL;
	gs->keys = gs->vals = NULL;
	gs->hist = NULL;
	gs->insts = NULL;
	gs->order = NULL;
	gs->n = gs->norder = 0;
	gs->keyed = false;
}

static void gsnap_free(struct stap_gsnap *gs)
{
	gsnap_clear(gs);
	stap_prune_free(&gs->prune);
	stap_prune_free(&gs->hprune);
	memset(gs, 0, sizeof(*gs));
}

/* The snapshots go, and with them the instances that pointed into them. */
void stap_snaps_free(struct stap_script *sc)
{
	for (int i = 0; i < sc->nmetrics; i++)
		if (sc->metrics[i].desc.indom != PM_INDOM_NULL)
			pmdaCacheOp(sc->metrics[i].desc.indom, PMDA_CACHE_INACTIVE);
	for (int g = 0; sc->snaps && sc->meta && g < sc->meta->nglobals; g++)
		gsnap_free(&sc->snaps[g]);
	free(sc->snaps);
	sc->snaps = NULL;
	free(sc->probe_stats);
	sc->probe_stats = NULL;
}

/* ---- instance names ---- */

static void put(char *buf, size_t size, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void put(char *buf, size_t size, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*n >= size)
		return;
	va_start(ap, fmt);
	k = vsnprintf(buf + *n, size - *n, fmt, ap);
	va_end(ap);
	if (k > 0)
		*n += (size_t)k < size - *n ? (size_t)k : size - *n - 1;
}

static size_t column_size(const struct stp_meta_global *g, int k)
{
	uint32_t end = k + 1 < g->nkeys ? g->key_offsets[k + 1] : g->key_size;

	return end > g->key_offsets[k] ? end - g->key_offsets[k] : 0;
}

/*
 * "k1::k2", spaces and control characters made '_' (PCP's instance names);
 * a string that is a stack, by its frames (stacks.c).
 */
static void key_name(struct stap_script *sc, const struct stp_meta_global *g, const char *key,
		     char *buf, size_t size)
{
	char stack[1024];

	size_t n = 0;

	buf[0] = '\0';
	for (int k = 0; k < g->nkeys; k++) {
		const char *p = key + g->key_offsets[k];
		int64_t v;

		if (k)
			put(buf, size, &n, "::");
		if (g->key_types[k] == STP_TYPE_STRING) {
			int len = (int)strnlen(p, column_size(g, k));

			if (stap_stack_name(sc, p, (size_t)len, stack, sizeof(stack)))
				put(buf, size, &n, "%s", stack);
			else
				put(buf, size, &n, "%.*s", len, p);
		} else {
			memcpy(&v, p, sizeof(v));
			put(buf, size, &n, "%" PRId64, v);
		}
	}
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			*c = '_';
	if (!buf[0])
		snprintf(buf, size, "(empty)");
}

/* The bucket's values as "lo-hi" ("-inf" and "inf" at the open ends). */
static void bucket_name(const struct stp_stat_cfg *cfg, int b, char *buf, size_t size)
{
	char lo[24] = "-inf", hi[24] = "inf";

	if (cfg->type == STP_HIST_LOG) {
		if (b > STP_HIST_LOG_BUCKET0) {
			snprintf(lo, sizeof(lo), "%" PRId64, stp_hist_log_value(b));
			if (b + 1 < cfg->buckets)
				snprintf(hi, sizeof(hi), "%" PRId64, stp_hist_log_value(b + 1) - 1);
		} else if (b == STP_HIST_LOG_BUCKET0) {
			snprintf(lo, sizeof(lo), "0");
			snprintf(hi, sizeof(hi), "0");
		} else {
			if (b > 0)
				snprintf(lo, sizeof(lo), "%" PRId64, stp_hist_log_value(b - 1) + 1);
			snprintf(hi, sizeof(hi), "%" PRId64, stp_hist_log_value(b));
		}
	} else if (b == 0) {
		snprintf(hi, sizeof(hi), "%" PRId64, cfg->start - 1);
	} else {
		snprintf(lo, sizeof(lo), "%" PRId64, cfg->start + (int64_t)(b - 1) * cfg->interval);
		if (b < cfg->buckets - 1)
			snprintf(hi, sizeof(hi), "%" PRId64,
				 cfg->start + (int64_t)b * cfg->interval - 1);
	}
	snprintf(buf, size, "%s-%s", lo, hi);
}

/* ---- snapshots ---- */

static void stat_cfg(const struct stp_meta_global *g, struct stp_stat_cfg *cfg)
{
	const struct stp_meta_hist *h = &g->hist;

	if (stp_stat_cfg_init(cfg, (enum stp_hist_type)h->kind, h->start, h->stop, h->interval, 0) ||
	    cfg->buckets > STP_HIST_MAX_BUCKETS || stp_stat_partial_size(cfg) > g->value_size)
		stp_stat_cfg_init(cfg, STP_HIST_NONE, 0, 0, 0, 0);
	cfg->keyed = g->nkeys > 0;
}

static void fill_elem(struct stap_script *sc, const struct stp_meta_global *g,
		      struct stap_gsnap *gs, int i, const char *val)
{
	struct stap_elem *e = &gs->elems[i];

	if (g->type == STP_TYPE_LONG) {
		memcpy(&e->v, val, sizeof(e->v));
	} else if (g->type == STP_TYPE_STRING) {
		e->s = val;
	} else {
		e->agg.hist = gs->hist ? gs->hist + (size_t)i * (size_t)gs->cfg.buckets : NULL;
		if (g->percpu)
			stp_stat_merge(&e->agg, &gs->cfg, val, stp_percpu_stride(g->value_size),
				       sc->ncpus);
		else
			stp_stat_merge(&e->agg, &gs->cfg, val, g->value_size, 1);
	}
}

/*
 * Global G's elements into GS, cleared first: gs->keys and gs->vals (slots
 * only, for values in place), gs->n.  False, GS left as it was, when a
 * read gave up (a module's probes kept changing the map: stp_data__read):
 * the last snapshot stays served, rather than one missing every key.
 */
static bool read_elems(struct stap_script *sc, int g, struct stap_gsnap *gs, bool slots)
{
	struct stp_data_elems e;
	int n = slots ? stp_data__read_slots(sc->data, g, &e) : stp_data__read(sc->data, g, &e);

	if (n < 0)
		return false;
	gsnap_clear(gs);
	gs->keys = e.keys;
	gs->vals = e.vals;
	gs->vstride = e.vstride;
	gs->n = n;
	return true;
}

static void add_hist_instances(struct stap_gsnap *gs, int i, pmInDom indom, const char *prefix)
{
	const struct stp_stat_cfg *cfg = &gs->cfg;
	int64_t *h = gs->hist + (size_t)i * (size_t)cfg->buckets;
	int lo = 0, hi = cfg->buckets - 1;
	char name[1200], bucket[64];

	if (cfg->type == STP_HIST_LOG) {
		while (lo <= hi && h[lo] == 0)
			lo++;
		while (hi >= lo && h[hi] == 0)
			hi--;
	} else {
		lo = h[0] ? 0 : 1;
		hi = h[cfg->buckets - 1] ? cfg->buckets - 1 : cfg->buckets - 2;
	}
	for (int b = lo; b <= hi; b++) {
		bucket_name(cfg, b, bucket, sizeof(bucket));
		snprintf(name, sizeof(name), "%s%s%s", prefix, *prefix ? "::" : "", bucket);
		stap_prune_add(&gs->hprune, pmdaCacheStore(indom, PMDA_CACHE_ADD, name, &h[b]));
	}
}

static struct stap_metric *hist_metric(struct stap_script *sc, int g)
{
	for (int i = 0; i < sc->nmetrics; i++)
		if (sc->metrics[i].global == g && sc->metrics[i].kind == STAP_M_HIST)
			return &sc->metrics[i];
	return NULL;
}

static struct stap_metric *key_metric(struct stap_script *sc, int g)
{
	for (int i = 0; i < sc->nmetrics; i++)
		if (sc->metrics[i].global == g && sc->metrics[i].kind != STAP_M_HIST)
			return &sc->metrics[i];
	return NULL;
}

/* Inactive instances an array keeps for keys that went away: its size, at least 64. */
static int keep_bound(const struct stp_meta_global *gl)
{
	return gl->max_entries > 64 ? (int)gl->max_entries : 64;
}

/*
 * Inactive bucket instances a histogram keeps: those of as many keys as
 * the array keeps, every bucket of each.  An array's buckets are named by
 * its keys, which come and go; a global's alone are bounded by its bucket
 * count, unless the script is compiled again with other buckets.
 */
static int hist_keep_bound(const struct stp_meta_global *gl, const struct stp_stat_cfg *cfg)
{
	int64_t keys = gl->nkeys ? keep_bound(gl) : 1;
	int64_t keep = keys * (cfg->buckets > 0 ? cfg->buckets : 1);

	return keep < (1 << 22) ? (int)keep : 1 << 22;
}

static const int *order_insts;

/* Ascending instance; of two elements with one instance (names alike), the later first. */
static int by_inst(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	int ix = order_insts[x], iy = order_insts[y];

	return ix != iy ? (ix > iy) - (ix < iy) : y - x;
}

/*
 * The elements in the order of their instances: as pmdaFetch walks the
 * cache, whose private pointer of an instance is its last element stored.
 */
static void order_elems(struct stap_gsnap *gs)
{
	int n = 0;

	free(gs->order);
	gs->norder = 0;
	gs->order = gs->insts ? malloc(((size_t)gs->n + 1) * sizeof(int)) : NULL;
	if (!gs->order)
		return;
	for (int i = 0; i < gs->n; i++)
		if (gs->insts[i] >= 0)
			gs->order[n++] = i;
	order_insts = gs->insts;
	qsort(gs->order, (size_t)n, sizeof(int), by_inst);
	gs->norder = 0;
	for (int k = 0; k < n; k++)
		if (k == 0 || gs->insts[gs->order[k]] != gs->insts[gs->order[k - 1]])
			gs->order[gs->norder++] = gs->order[k];
	free(gs->oinsts);
	gs->oinsts = malloc(((size_t)gs->norder + 1) * sizeof(int));
	for (int k = 0; gs->oinsts && k < gs->norder; k++)
		gs->oinsts[k] = gs->insts[gs->order[k]];
	if (!gs->oinsts) {
		free(gs->order);
		gs->order = NULL;
		gs->norder = 0;
	}
}

/* Each element an instance (of the key indom and, for histograms, the hist indom). */
static void index_elems(struct stap_script *sc, int g, struct stap_gsnap *gs)
{
	const struct stp_meta_global *gl = &sc->meta->globals[g];
	struct stap_metric *km = key_metric(sc, g), *hm = hist_metric(sc, g);
	bool keyed = km && gl->nkeys;
	char name[1024];

	if (keyed)
		stap_prune_begin(&gs->prune, km->desc.indom);
	if (hm)
		stap_prune_begin(&gs->hprune, hm->desc.indom);
	free(gs->insts);
	gs->insts = keyed ? calloc((size_t)gs->n + 1, sizeof(int)) : NULL;
	for (int i = 0; i < gs->n; i++) {
		if (gl->nkeys)
			key_name(sc, gl, gs->keys + (size_t)i * gl->key_size, name, sizeof(name));
		else
			name[0] = '\0';
		if (keyed && gs->insts)
			gs->insts[i] = pmdaCacheStore(km->desc.indom, PMDA_CACHE_ADD, name,
						      &gs->elems[i]);
		if (hm && gs->hist)
			add_hist_instances(gs, i, hm->desc.indom, name);
	}
	if (keyed) {
		gs->prune.keep = keep_bound(gl);
		stap_prune_end(&gs->prune, km->desc.indom, gs->insts, gs->insts ? gs->n : 0);
		order_elems(gs);
	}
	if (hm) {
		gs->hprune.keep = hist_keep_bound(gl, &gs->cfg);
		stap_prune_done(&gs->hprune, hm->desc.indom);
	}
}

static void refresh_scalars(struct stap_script *sc)
{
	if (sc->globals_gen == fetch_gen || !sc->globals_val)
		return;
	sc->globals_gen = fetch_gen;
	stp_data__read_scalars(sc->data, sc->globals_val);
}

static void snap_scalar(struct stap_script *sc, const struct stp_meta_global *g,
			struct stap_gsnap *gs)
{
	refresh_scalars(sc);
	/* the value is one byte longer than the map's, and 0 there: strings end */
	if (!sc->globals_val || g->offset >= sc->globals_size ||
	    (g->type == STP_TYPE_LONG && sc->globals_size - g->offset < sizeof(int64_t)))
		return;
	gs->elems = calloc(1, sizeof(*gs->elems));
	if (!gs->elems)
		return;
	gs->n = 1;
	if (g->type == STP_TYPE_LONG)
		memcpy(&gs->elems[0].v, sc->globals_val + g->offset, sizeof(int64_t));
	else
		gs->elems[0].s = sc->globals_val + g->offset;
}

static bool snap_map(struct stap_script *sc, int g, struct stap_gsnap *gs)
{
	const struct stp_meta_global *gl = &sc->meta->globals[g];

	if (!read_elems(sc, g, gs, false))
		return false;
	if (gl->type == STP_TYPE_STATS)
		stat_cfg(gl, &gs->cfg);
	gs->elems = calloc((size_t)gs->n + 1, sizeof(*gs->elems));
	if (gs->cfg.buckets)
		gs->hist = calloc((size_t)gs->n * (size_t)gs->cfg.buckets + 1, sizeof(int64_t));
	if (!gs->elems) {
		gs->n = 0;
		return true;
	}
	for (int i = 0; i < gs->n; i++)
		fill_elem(sc, gl, gs, i, gs->vals + (size_t)i * gs->vstride);
	return true;
}

/* ---- slotted arrays ---- */

/*
 * The keys and their slots again: the generation moved (or this is the
 * first read).  False when the read gave up: GS stays, its generation
 * too, so the next fetch reads them again.
 */
static bool slots_rekey(struct stap_script *sc, int g, struct stap_gsnap *gs, int64_t gen)
{
	if (!read_elems(sc, g, gs, true))
		return false;
	gs->elems = calloc((size_t)gs->n + 1, sizeof(*gs->elems));
	if (!gs->elems)
		gs->n = 0;
	index_elems(sc, g, gs);
	gs->keys_gen = gen;
	gs->keyed = true;
	return true;
}

/*
 * A string in place, copied: its writer may change it as we read, and a
 * handed-over script's writer may leave it unterminated.
 */
static const char *slotted_string(struct stap_script *sc, int g, struct stap_gsnap *gs, int i,
				  const char *val)
{
	size_t size = sc->meta->globals[g].value_size;
	char *copy;

	if (!gs->strs && gs->n > 0 && (gs->strs = malloc((size_t)gs->n * (size + 1))))
		gs->nstrs = gs->n;	/* made once for the snapshot: the copies do not move */
	if (i >= gs->nstrs)
		return "";
	copy = gs->strs + (size_t)i * (size + 1);
	memcpy(copy, val, size);
	copy[size] = '\0';
	return copy;
}

/* Element I of global G, from its slot, as it is now. */
static void slotted_elem(struct stap_script *sc, int g, struct stap_gsnap *gs, int i)
{
	const char *val;
	uint32_t slot;

	memcpy(&slot, gs->vals + (size_t)i * gs->vstride, sizeof(slot));
	val = stp_data__slot_value(sc->data, g, slot);
	if (sc->meta->globals[g].type == STP_TYPE_STRING)
		gs->elems[i].s = slotted_string(sc, g, gs, i, val);
	else
		gs->elems[i].v = __atomic_load_n((const int64_t *)(const void *)val, __ATOMIC_RELAXED);
}

/* The slot of each element in instance order, for stap_fetch_values. */
static void order_slots(struct stap_gsnap *gs)
{
	free(gs->oslots);
	gs->oslots = gs->order ? malloc(((size_t)gs->norder + 1) * sizeof(uint32_t)) : NULL;
	for (int k = 0; gs->oslots && k < gs->norder; k++)
		memcpy(&gs->oslots[k], gs->vals + (size_t)gs->order[k] * gs->vstride,
		       sizeof(uint32_t));
}

/*
 * The keys again when the generation read before them moved; the values
 * stay in place, read when a fetch wants them (stap_fetch_values, or
 * slotted_elem for the callback).
 */
static void refresh_slotted(struct stap_script *sc, int g, struct stap_gsnap *gs)
{
	int64_t gen = stp_data__generation(sc->data, g);

	if ((!gs->keyed || gen != gs->keys_gen) && slots_rekey(sc, g, gs, gen)) {
		order_slots(gs);
		for (int i = 0; i < gs->n; i++)
			slotted_elem(sc, g, gs, i);
	}
}

static void refresh_global(struct stap_script *sc, int g)
{
	const struct stp_meta_global *gl;
	struct stap_gsnap *gs;

	if (!sc->snaps || !sc->data || !sc->meta)
		return;
	gs = &sc->snaps[g];
	if (gs->gen == fetch_gen)
		return;
	gs->gen = fetch_gen;
	gl = &sc->meta->globals[g];
	if (stp_data__in_place(sc->data, g)) {
		refresh_slotted(sc, g, gs);
	} else if (gl->nkeys == 0 && gl->type != STP_TYPE_STATS) {
		gsnap_clear(gs);
		snap_scalar(sc, gl, gs);
		index_elems(sc, g, gs);
	} else if (snap_map(sc, g, gs)) {
		index_elems(sc, g, gs);
	}
	stap_kmod_check_reads(sc);
}

static void refresh_counters(struct stap_script *sc)
{
	if (sc->counters_gen == fetch_gen || !sc->data)
		return;
	sc->counters_gen = fetch_gen;
	stp_data__counters(sc->data, &sc->counters);
}

static void refresh_probe_stats(struct stap_script *sc)
{
	if (sc->probes_gen == fetch_gen || !sc->data || !sc->probe_stats)
		return;
	sc->probes_gen = fetch_gen;
	sc->misses = 0;
	for (int i = 0; i < sc->meta->nprobes; i++) {
		stp_data__probe_stats(sc->data, i, &sc->probe_stats[i]);
		if (sc->probe_misses) {
			sc->probe_misses[i] = stp_data__probe_misses(sc->data, i);
			sc->misses += sc->probe_misses[i];
		}
	}
}

void stap_fetch_prepare(pmID pmid)
{
	unsigned int cluster = pmID_cluster(pmid);
	struct stap_metric *m;

	if (cluster == STAP_CLUSTER_SCRIPTS) {
		if (pmID_item(pmid) == STAP_SCRIPTS_OUTPUT_TEXT)
			stap_outtext_prepare();
		for (int i = 0; i < stap_nscripts; i++) {
			refresh_counters(stap_scripts[i]);
			refresh_probe_stats(stap_scripts[i]);	/* user-context errors */
		}
	} else if (cluster == STAP_CLUSTER_PROBES) {
		for (int i = 0; i < stap_nscripts; i++)
			refresh_probe_stats(stap_scripts[i]);
	} else if (cluster >= STAP_CLUSTER_FIRST_SCRIPT && (m = stap_metric_by_pmid(pmid)) &&
		   m->kind != STAP_M_PROCFS) {
		refresh_global(m->script, m->global);
	}
}

void stap_fetch_prepare_indom(pmInDom indom)
{
	struct stap_metric *m;

	if (pmInDom_serial(indom) >= STAP_CLUSTER_FIRST_SCRIPT << 10 &&
	    (m = stap_metric_by_indom(indom)))
		refresh_global(m->script, m->global);
}

/* ---- values ---- */

static void *active_private(pmInDom indom, unsigned int inst)
{
	void *priv = NULL;

	if (pmdaCacheLookup(indom, (int)inst, NULL, &priv) != PMDA_CACHE_ACTIVE)
		return NULL;
	return priv;
}

static int stat_value(const struct stap_elem *e, enum stap_mkind kind, pmAtomValue *atom)
{
	static const enum stp_stat_op ops[] = {
		[STAP_M_COUNT] = STP_STAT_COUNT, [STAP_M_SUM] = STP_STAT_SUM,
		[STAP_M_MIN] = STP_STAT_MIN, [STAP_M_MAX] = STP_STAT_MAX, [STAP_M_AVG] = STP_STAT_AVG,
	};
	int64_t v;

	if (stp_stat_extract(&e->agg, ops[kind], &v) < 0)
		return PMDA_FETCH_NOVALUES;	/* min, max, avg of no values */
	atom->ll = v;
	return PMDA_FETCH_STATIC;
}

static int elem_value(const struct stap_metric *m, const struct stp_meta_global *g,
		      const struct stap_elem *e, pmAtomValue *atom)
{
	if (m->kind != STAP_M_VALUE)
		return stat_value(e, m->kind, atom);
	if (g->type == STP_TYPE_STRING)
		atom->cp = (char *)(e->s ? e->s : "");
	else
		atom->ll = e->v;
	return PMDA_FETCH_STATIC;
}

static int script_value(struct stap_metric *m, unsigned int inst, pmAtomValue *atom)
{
	struct stap_script *sc = m->script;
	const struct stp_meta_global *g = &sc->meta->globals[m->global];
	const struct stap_elem *e;
	const int64_t *count;

	if (!sc->snaps)
		return PMDA_FETCH_NOVALUES;
	if (m->kind == STAP_M_HIST) {
		if (!(count = active_private(m->desc.indom, inst)))
			return PM_ERR_INST;
		atom->ll = *count;
		return PMDA_FETCH_STATIC;
	}
	if (g->nkeys) {
		e = active_private(m->desc.indom, inst);
		if (e && stp_data__in_place(sc->data, m->global))
			slotted_elem(sc, m->global, &sc->snaps[m->global],
				     (int)(e - sc->snaps[m->global].elems));
	} else
		e = sc->snaps[m->global].n > 0 ? &sc->snaps[m->global].elems[0] : NULL;
	if (!e)
		return g->nkeys ? PM_ERR_INST : PMDA_FETCH_NOVALUES;
	return elem_value(m, g, e, atom);
}

/* ---- an array's values in one go ---- */

static struct stap_gsnap *array_snap(pmID pmid, struct stap_metric **mp)
{
	struct stap_metric *m;
	struct stap_gsnap *gs;

	if (pmID_cluster(pmid) < STAP_CLUSTER_FIRST_SCRIPT || !(m = stap_metric_by_pmid(pmid)))
		return NULL;
	if (m->kind == STAP_M_HIST || m->desc.indom == PM_INDOM_NULL || !m->script->snaps ||
	    !m->script->meta->globals[m->global].nkeys)
		return NULL;
	gs = &m->script->snaps[m->global];
	if (!gs->order || !gs->oinsts)
		return NULL;
	*mp = m;
	return gs;
}

/* Bytes of the value blocks of every element: an upper bound (strings change in place). */
static size_t blocks_size(const struct stap_gsnap *gs, const struct stap_metric *m,
			  const struct stp_meta_global *g)
{
	size_t each = m->desc.type == PM_TYPE_STRING ? stap_block_size(g->value_size) :
						       STAP_BLOCK64_SIZE;

	return (size_t)gs->norder * each + 1;
}

/* An array of longs in place, every instance: one load each. */
static void slotted_longs(const struct stp_data *d, int g, const struct stap_gsnap *gs,
			  struct stap_vset *vb)
{
	for (int k = 0; k < gs->norder; k++)
		stap_vset_64(vb, gs->oinsts[k],
			     __atomic_load_n((const int64_t *)(const void *)
						     stp_data__slot_value(d, g, gs->oslots[k]),
					     __ATOMIC_RELAXED));
}

/* Each instance in the profile with a value (min, max, avg of none have none). */
static void elem_values(const struct stap_metric *m, const struct stp_meta_global *g,
			struct stap_gsnap *gs, const pmProfile *prof, bool all,
			struct stap_vset *vb)
{
	for (int k = 0; k < gs->norder; k++) {
		int i = gs->order[k];
		pmAtomValue atom;

		if (!all && !stap_in_profile(prof, m->desc.indom, gs->oinsts[k]))
			continue;
		if (gs->oslots)
			slotted_elem(m->script, m->global, gs, i);
		if (elem_value(m, g, &gs->elems[i], &atom) <= 0)
			continue;
		if (m->desc.type == PM_TYPE_STRING)
			stap_vset_string(vb, gs->oinsts[k], atom.cp, strnlen(atom.cp, g->value_size));
		else
			stap_vset_64(vb, gs->oinsts[k], atom.ll);
	}
}

int stap_fetch_values(pmID pmid, const pmProfile *prof, pmValueSet **vsp, char **blocks)
{
	const struct stp_meta_global *g;
	struct stap_gsnap *gs;
	struct stap_metric *m;
	struct stap_vset vb;
	bool all;

	if (!(gs = array_snap(pmid, &m)))
		return 0;
	g = &m->script->meta->globals[m->global];
	if (m->desc.type != PM_TYPE_STRING && m->desc.type != PM_TYPE_64)
		return 0;
	if (stap_vset_init(&vb, pmid, gs->norder, blocks_size(gs, m, g)) < 0)
		return -ENOMEM;
	all = stap_profile_all(prof, m->desc.indom);
	if (all && gs->oslots && m->desc.type == PM_TYPE_64)
		slotted_longs(m->script->data, m->global, gs, &vb);
	else
		elem_values(m, g, gs, prof, all, &vb);
	*vsp = vb.vs;
	*blocks = vb.blocks;
	return 1;
}

static int info_value(int item, pmAtomValue *atom)
{
	switch (item) {
	case STAP_INFO_VERSION: atom->cp = STAP_PMDA_VERSION; break;
	case STAP_INFO_REGISTRATION: atom->ul = stap_config.registration; break;
	case STAP_INFO_AUTOSTART_DIR: atom->cp = stap_config.autostart_dir; break;
	default: return PM_ERR_PMID;
	}
	return PMDA_FETCH_STATIC;
}

static int script_status_value(struct stap_script *sc, int item, pmAtomValue *atom)
{
	switch (item) {
	case STAP_SCRIPTS_STATUS: atom->cp = (char *)stap_status_name(sc->status); break;
	case STAP_SCRIPTS_ERROR: atom->cp = sc->error ? sc->error : ""; break;
	case STAP_SCRIPTS_SOURCE: atom->cp = sc->source ? sc->source : ""; break;
	case STAP_SCRIPTS_UPTIME:
		atom->ull = sc->status == STAP_STATUS_RUNNING ?
				    (uint64_t)(stap_now() - sc->running_since) : 0;
		break;
	case STAP_SCRIPTS_ERRORS:
		atom->ull = sc->counters.errors;
		for (int i = 0; sc->probe_stats && sc->meta && i < sc->meta->nprobes; i++)
			atom->ull += sc->probe_stats[i].errors;	/* raised in user context */
		break;
	case STAP_SCRIPTS_SKIPPED: atom->ull = sc->counters.skipped + sc->misses; break;
	case STAP_SCRIPTS_DROPPED: atom->ull = sc->counters.dropped; break;
	case STAP_SCRIPTS_MAP_FULL: atom->ull = sc->counters.map_full; break;
	case STAP_SCRIPTS_KEYS_CUT:
		atom->ull = sc->counters.keys_cut;
		for (int i = 0; sc->probe_stats && sc->meta && i < sc->meta->nprobes; i++)
			atom->ull += sc->probe_stats[i].keys_cut;	/* cut in user context */
		break;
	case STAP_SCRIPTS_OUTPUT: return stap_output_fetch(sc, atom);
	case STAP_SCRIPTS_OUTPUT_LINES: atom->ull = sc->output_lines; break;
	case STAP_SCRIPTS_OUTPUT_BYTES: atom->ull = sc->output_bytes; break;
	case STAP_SCRIPTS_LAST_OUTPUT: atom->cp = sc->last_output ? sc->last_output : ""; break;
	case STAP_SCRIPTS_OUTPUT_TEXT:
	case STAP_SCRIPTS_OUTPUT_MISSED: return stap_outtext_fetch(sc, item, atom);
	case STAP_SCRIPTS_RESTARTS: atom->ul = sc->restarts; break;
	case STAP_SCRIPTS_PID:		/* its child's, or the pmstap that handed it over */
		if ((sc->pid > 0 ? sc->pid : sc->peer_pid) <= 0)
			return PMDA_FETCH_NOVALUES;
		atom->ul = (uint32_t)(sc->pid > 0 ? sc->pid : sc->peer_pid);
		break;
	default: return PM_ERR_PMID;
	}
	return PMDA_FETCH_STATIC;
}

static int scripts_value(int item, unsigned int inst, pmAtomValue *atom)
{
	struct stap_script *sc;

	if (item == STAP_SCRIPTS_LINE)
		return PMDA_FETCH_NOVALUES;	/* only inside event records */
	sc = active_private(stap_indom(STAP_INDOM_SCRIPTS), inst);
	if (!sc)
		return PM_ERR_INST;
	return script_status_value(sc, item, atom);
}

static int probes_value(int item, unsigned int inst, pmAtomValue *atom)
{
	struct stap_probe_ref *r = active_private(stap_indom(STAP_INDOM_PROBES), inst);
	struct stap_script *sc;

	if (!r)
		return PM_ERR_INST;
	sc = r->script;
	switch (item) {
	case STAP_PROBES_HITS:
		atom->ull = sc->probe_stats ? sc->probe_stats[r->probe].hits : 0;
		break;
	case STAP_PROBES_RUN_TIME:
		atom->ull = sc->probe_stats ? sc->probe_stats[r->probe].run_ns : 0;
		break;
	case STAP_PROBES_ATTACHED:
		atom->ul = sc->status == STAP_STATUS_RUNNING && sc->attached && sc->attached[r->probe];
		break;
	case STAP_PROBES_SKIPPED:
		atom->ull = sc->probe_misses ? sc->probe_misses[r->probe] : 0;
		break;
	default:
		return PM_ERR_PMID;
	}
	return PMDA_FETCH_STATIC;
}

int stap_fetch_callback(pmdaMetric *pm, unsigned int inst, pmAtomValue *atom)
{
	unsigned int cluster = pmID_cluster(pm->m_desc.pmid);
	int item = (int)pmID_item(pm->m_desc.pmid);

	switch (cluster) {
	case STAP_CLUSTER_CONTROL: return stap_control_fetch(item, atom);
	case STAP_CLUSTER_INFO: return info_value(item, atom);
	case STAP_CLUSTER_SCRIPTS: return scripts_value(item, inst, atom);
	case STAP_CLUSTER_PROBES: return probes_value(item, inst, atom);
	}
	if (!pm->m_user)
		return PM_ERR_PMID;
	if (((struct stap_metric *)pm->m_user)->kind == STAP_M_PROCFS)
		return stap_procfs_fetch(pm->m_user, atom);
	return script_value(pm->m_user, inst, atom);
}

/* ---- labels: one per key column, for arrays ---- */

static void json_string(char *buf, size_t size, size_t *n, const char *s, size_t len)
{
	put(buf, size, n, "\"");
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			put(buf, size, n, "\\%c", c);
		else if (c < 0x20)
			put(buf, size, n, "\\u%04x", c);
		else
			put(buf, size, n, "%c", c);
	}
	put(buf, size, n, "\"");
}

int stap_label_callback(pmInDom indom, unsigned int inst, pmLabelSet **lp)
{
	struct stap_metric *m = stap_metric_by_indom(indom);
	const struct stp_meta_global *g;
	char json[2048], *name;
	const char *p;
	size_t n = 0;

	if (!m || m->kind == STAP_M_HIST || pmdaCacheLookup(indom, (int)inst, &name, NULL) < 0)
		return 0;
	g = &m->script->meta->globals[m->global];
	put(json, sizeof(json), &n, "{");
	p = name;
	for (int k = 0; k < g->nkeys && p; k++) {
		const char *sep = k + 1 < g->nkeys ? strstr(p, "::") : NULL;
		size_t len = sep ? (size_t)(sep - p) : strlen(p);

		put(json, sizeof(json), &n, "%s\"key%d\":", k ? "," : "", k + 1);
		if (g->key_types[k] == STP_TYPE_LONG)
			put(json, sizeof(json), &n, "%.*s", (int)len, p);
		else
			json_string(json, sizeof(json), &n, p, len);
		p = sep ? sep + 2 : NULL;
	}
	put(json, sizeof(json), &n, "}");
	return pmdaAddLabels(lp, "%s", json);
}
