/*
 * fetch.c - values: each script's maps read once per fetch, then answered
 * from that snapshot.
 *
 * A fetch (or an instance-domain request) starts a new generation; the
 * first metric of a global asks for the global's snapshot and later ones
 * in the same generation reuse it.  Maps are read with batch lookups
 * (bpf_map_get_next_key/lookup where the kernel has none); each key
 * becomes an instance ("k1::k2" for several keys, spaces as '_') whose
 * pmdaCache private pointer is its element in the snapshot.
 *
 * Slotted arrays (of longs and strings: runtime/bpf/stp_slots.bpf.h) are
 * read in place: their values map is mmapped, the keys and their slots
 * are read again only when the array's generation moved (a key came or
 * went), and otherwise a fetch is one load per element.
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

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <sys/mman.h>

#include "pmdastap.h"
#include "arrays.h"
#include "result.h"
#include "../runtime/user/script.h"
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
	int64_t *hist;			/* n * cfg.buckets */
	struct stp_stat_cfg cfg;
	struct stap_prune prune;	/* the key indom's */
	struct stap_prune hprune;	/* the hist indom's */

	/* slotted arrays: vals holds each element's uint32_t slot */
	char *vmap;			/* the values map, mmapped read-only */
	size_t vmap_len;
	uint32_t stride, nelems;
	int64_t keys_gen;		/* the generation the keys were read at */
	bool keyed;			/* keys, slots and instances are those of keys_gen */
};

static unsigned int fetch_gen = 1;

void stap_fetch_begin(void)
{
	fetch_gen++;
}

/* ---- the maps a child sent ---- */

static int map_info(int fd, struct bpf_map_info *info)
{
	uint32_t len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	return bpf_obj_get_info_by_fd(fd, info, &len);
}

static bool global_map_ok(struct stap_script *sc, int g, int fd)
{
	const struct stp_meta_global *gl = &sc->meta->globals[g];
	struct bpf_map_info info;

	if (map_info(fd, &info) < 0)
		return false;
	if (info.key_size == gl->key_size &&
	    info.value_size == (gl->values_map ? sizeof(uint32_t) : gl->value_size))
		return true;
	pmNotifyErr(LOG_ERR, "script %s: map %s of global %s has key/value sizes %u/%u, the "
		    "metadata says %u/%u: not served", sc->name, gl->map, gl->name, info.key_size,
		    info.value_size, gl->key_size, gl->value_size);
	return false;
}

static bool adopt_special(struct stap_script *sc, const char *name, int fd)
{
	struct bpf_map_info info;

	if (!strcmp(name, "stp_globals") && map_info(fd, &info) == 0) {
		sc->globals_fd = fd;
		sc->globals_size = info.value_size;
		free(sc->globals_val);
		sc->globals_val = calloc(1, sc->globals_size + 1);
		return true;
	}
	if (!strcmp(name, STP_COUNTERS_MAP)) {
		sc->counters_fd = fd;
		return true;
	}
	if (!strcmp(name, STP_PROBE_STATS_MAP)) {
		sc->probe_stats_fd = fd;
		return true;
	}
	return false;
}

/* "prog:INDEX": probe INDEX's program, for its recursion misses. */
static bool adopt_prog(struct stap_script *sc, const char *name, int fd)
{
	char *end;
	long i;

	if (strncmp(name, "prog:", 5) != 0 || !sc->prog_fds)
		return false;
	i = strtol(name + 5, &end, 10);
	if (*end || i < 0 || i >= sc->meta->nprobes || sc->prog_fds[i] >= 0)
		return false;
	sc->prog_fds[i] = fd;
	return true;
}

static bool adopt_global(struct stap_script *sc, const char *name, int fd)
{
	const struct stp_meta *m = sc->meta;

	for (int g = 0; g < m->nglobals; g++) {
		const struct stp_meta_global *gl = &m->globals[g];

		if (!gl->exported || !gl->map || strcmp(gl->map, name) != 0 || sc->map_fds[g] >= 0)
			continue;
		if (!global_map_ok(sc, g, fd))
			return false;
		sc->map_fds[g] = fd;
		return true;
	}
	return false;
}

/* A slotted array's values map: mmapped, the fd not needed after. */
static bool adopt_values(struct stap_script *sc, const char *name, int fd)
{
	const struct stp_meta *m = sc->meta;
	long page = sysconf(_SC_PAGESIZE);
	struct bpf_map_info info;

	for (int g = 0; g < m->nglobals; g++) {
		const struct stp_meta_global *gl = &m->globals[g];
		struct stap_gsnap *gs = &sc->snaps[g];
		void *p;

		if (!gl->exported || !gl->values_map || strcmp(gl->values_map, name) != 0 ||
		    gs->vmap || map_info(fd, &info) < 0 || info.value_size != gl->value_size)
			continue;
		gs->stride = (info.value_size + 7) & ~7u;
		gs->nelems = info.max_entries;
		gs->vmap_len = ((size_t)gs->nelems * gs->stride + (size_t)page - 1) &
			       ~((size_t)page - 1);
		p = mmap(NULL, gs->vmap_len, PROT_READ, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			pmNotifyErr(LOG_ERR, "script %s: cannot map the values of %s: %s", sc->name,
				    gl->name, strerror(errno));
			return false;
		}
		gs->vmap = p;
		return false;	/* the mapping keeps the map: close the fd */
	}
	return false;
}

void stap_maps_adopt(struct stap_script *sc)
{
	const struct stp_meta *m = sc->meta;

	stap_maps_close(sc);
	sc->map_fds = malloc(((size_t)m->nglobals + 1) * sizeof(int));
	sc->snaps = calloc((size_t)m->nglobals + 1, sizeof(*sc->snaps));
	sc->probe_stats = calloc((size_t)m->nprobes + 1, sizeof(*sc->probe_stats));
	sc->probe_misses = calloc((size_t)m->nprobes + 1, sizeof(*sc->probe_misses));
	sc->prog_fds = malloc(((size_t)m->nprobes + 1) * sizeof(int));
	for (int g = 0; sc->map_fds && g < m->nglobals; g++)
		sc->map_fds[g] = -1;
	for (int i = 0; sc->prog_fds && i < m->nprobes; i++)
		sc->prog_fds[i] = -1;
	for (int i = 0; i < sc->npending; i++) {
		const char *name = sc->pending[i].name;
		int fd = sc->pending[i].fd;

		if (!sc->map_fds || !sc->snaps ||
		    !(adopt_special(sc, name, fd) || adopt_prog(sc, name, fd) ||
		      adopt_global(sc, name, fd) || adopt_values(sc, name, fd)))
			close(fd);
		free(sc->pending[i].name);
	}
	free(sc->pending);
	sc->pending = NULL;
	sc->npending = 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Every fd of *FDS (N of them), then the array. */
static void close_fds(int **fds, int n)
{
	for (int i = 0; *fds && i < n; i++)
		close_fd(&(*fds)[i]);
	free(*fds);
	*fds = NULL;
}

void stap_maps_close(struct stap_script *sc)
{
	close_fds(&sc->map_fds, sc->meta ? sc->meta->nglobals : 0);
	close_fds(&sc->prog_fds, sc->meta ? sc->meta->nprobes : 0);
	free(sc->probe_misses);
	sc->probe_misses = NULL;
	sc->misses = 0;
	close_fd(&sc->globals_fd);
	close_fd(&sc->counters_fd);
	close_fd(&sc->probe_stats_fd);
	free(sc->globals_val);
	sc->globals_val = NULL;
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
	if (gs->vmap)
		munmap(gs->vmap, gs->vmap_len);
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

/* "k1::k2", spaces and control characters made '_' (PCP's instance names). */
static void key_name(const struct stp_meta_global *g, const char *key, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int k = 0; k < g->nkeys; k++) {
		const char *p = key + g->key_offsets[k];
		int64_t v;

		if (k)
			put(buf, size, &n, "::");
		if (g->key_types[k] == STP_TYPE_STRING) {
			put(buf, size, &n, "%.*s", (int)strnlen(p, column_size(g, k)), p);
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

static size_t stride_of(const struct stp_meta_global *g)
{
	return ((size_t)g->value_size + 7) & ~(size_t)7;
}

static size_t value_bytes(const struct stap_script *sc, const struct stp_meta_global *g)
{
	return g->percpu ? stride_of(g) * (size_t)sc->ncpus : (size_t)g->value_size;
}

static void stat_cfg(const struct stp_meta_global *g, struct stp_stat_cfg *cfg)
{
	const struct stp_meta_hist *h = &g->hist;

	if (stp_stat_cfg_init(cfg, (enum stp_hist_type)h->kind, h->start, h->stop, h->interval, 0) ||
	    cfg->buckets > STP_HIST_MAX_BUCKETS || stp_stat_partial_size(cfg) > g->value_size)
		stp_stat_cfg_init(cfg, STP_HIST_NONE, 0, 0, 0, 0);
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
			stp_stat_merge(&e->agg, &gs->cfg, val, stride_of(g), sc->ncpus);
		else
			stp_stat_merge(&e->agg, &gs->cfg, val, g->value_size, 1);
	}
}

/* Walk the map key by key into gs->keys / gs->vals; the element count. */
static int walk_map(struct stap_script *sc, const struct stp_meta_global *g, int fd,
		    struct stap_gsnap *gs, size_t vsize)
{
	size_t ksize = g->key_size;
	long tries = 2 * (long)g->max_entries + 128;	/* for a map changing as we read */
	int n = 0, cap = 0;
	char *prev = NULL;

	while (tries-- > 0) {
		if (n == cap) {
			int more = cap ? cap * 2 : 64;
			char *k = realloc(gs->keys, (size_t)more * ksize);
			char *v = k ? realloc(gs->vals, (size_t)more * vsize) : NULL;

			if (k)
				gs->keys = k;
			if (!k || !v)
				break;
			gs->vals = v;
			cap = more;
			prev = n ? gs->keys + (size_t)(n - 1) * ksize : NULL;
		}
		if (bpf_map_get_next_key(fd, prev, gs->keys + (size_t)n * ksize) < 0)
			break;
		memset(gs->vals + (size_t)n * vsize, 0, vsize);
		if (bpf_map_lookup_elem(fd, gs->keys + (size_t)n * ksize,
					gs->vals + (size_t)n * vsize) < 0)
			continue;	/* deleted meanwhile: the next key still follows prev */
		prev = gs->keys + (size_t)n * ksize;
		n++;
	}
	return n;
}

/* The map into gs->keys / gs->vals (VSIZE bytes a value); the element count. */
static int read_map(struct stap_script *sc, const struct stp_meta_global *g, int fd,
		    struct stap_gsnap *gs, size_t vsize)
{
	int n = stap_batch_read(fd, g->key_size, vsize, g->max_entries, &gs->keys, &gs->vals);

	gs->vstride = vsize;
	if (n >= 0)
		return n;
	free(gs->keys);
	free(gs->vals);
	gs->keys = gs->vals = NULL;
	gs->vstride = vsize + 1;	/* a string value is NUL-terminated in any case */
	return walk_map(sc, g, fd, gs, vsize + 1);
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
			key_name(gl, gs->keys + (size_t)i * gl->key_size, name, sizeof(name));
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
	uint32_t key = 0;

	if (sc->globals_gen == fetch_gen || !sc->globals_val)
		return;
	sc->globals_gen = fetch_gen;
	if (bpf_map_lookup_elem(sc->globals_fd, &key, sc->globals_val) < 0)
		memset(sc->globals_val, 0, sc->globals_size);
}

static void snap_scalar(struct stap_script *sc, const struct stp_meta_global *g,
			struct stap_gsnap *gs)
{
	refresh_scalars(sc);
	if (!sc->globals_val || g->offset >= sc->globals_size)
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

static void snap_map(struct stap_script *sc, int g, struct stap_gsnap *gs)
{
	const struct stp_meta_global *gl = &sc->meta->globals[g];
	int fd = sc->map_fds[g];

	if (gl->type == STP_TYPE_STATS)
		stat_cfg(gl, &gs->cfg);
	gs->n = fd >= 0 ? read_map(sc, gl, fd, gs, value_bytes(sc, gl)) : 0;
	gs->elems = calloc((size_t)gs->n + 1, sizeof(*gs->elems));
	if (gs->cfg.buckets)
		gs->hist = calloc((size_t)gs->n * (size_t)gs->cfg.buckets + 1, sizeof(int64_t));
	if (!gs->elems) {
		gs->n = 0;
		return;
	}
	for (int i = 0; i < gs->n; i++)
		fill_elem(sc, gl, gs, i, gs->vals + (size_t)i * gs->vstride);
}

/* ---- slotted arrays ---- */

static const char *slot_value(const struct stap_gsnap *gs, uint32_t slot)
{
	static const char none[8];

	if (slot < STP_SLOT_FIRST || slot >= gs->nelems)
		return none;
	return gs->vmap + (size_t)slot * gs->stride;
}

static int64_t slot_gen(const struct stap_gsnap *gs)
{
	const void *gen = gs->vmap + (size_t)STP_SLOT_GEN * gs->stride;

	return __atomic_load_n((const int64_t *)gen, __ATOMIC_ACQUIRE);
}

/* The keys and their slots again: the generation moved (or this is the first read). */
static void slots_rekey(struct stap_script *sc, int g, struct stap_gsnap *gs, int64_t gen)
{
	const struct stp_meta_global *gl = &sc->meta->globals[g];
	int fd = sc->map_fds[g];

	gsnap_clear(gs);
	gs->n = fd >= 0 ? read_map(sc, gl, fd, gs, sizeof(uint32_t)) : 0;
	gs->elems = calloc((size_t)gs->n + 1, sizeof(*gs->elems));
	if (!gs->elems)
		gs->n = 0;
	index_elems(sc, g, gs);
	gs->keys_gen = gen;
	gs->keyed = true;
}

/* Element I's value from its slot, as it is now. */
static void slotted_elem(const struct stp_meta_global *gl, struct stap_gsnap *gs, int i)
{
	uint32_t slot;

	memcpy(&slot, gs->vals + (size_t)i * gs->vstride, sizeof(slot));
	if (gl->type == STP_TYPE_STRING)
		gs->elems[i].s = slot_value(gs, slot);
	else
		gs->elems[i].v = __atomic_load_n((const int64_t *)(const void *)slot_value(gs, slot),
						 __ATOMIC_RELAXED);
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
	int64_t gen = slot_gen(gs);

	if (!gs->keyed || gen != gs->keys_gen) {
		slots_rekey(sc, g, gs, gen);
		order_slots(gs);
		for (int i = 0; i < gs->n; i++)
			slotted_elem(&sc->meta->globals[g], gs, i);
	}
}

static void refresh_global(struct stap_script *sc, int g)
{
	const struct stp_meta_global *gl;
	struct stap_gsnap *gs;

	if (!sc->snaps || !sc->map_fds || !sc->meta)
		return;
	gs = &sc->snaps[g];
	if (gs->gen == fetch_gen)
		return;
	gs->gen = fetch_gen;
	gl = &sc->meta->globals[g];
	if (gl->values_map && gs->vmap) {
		refresh_slotted(sc, g, gs);
		return;
	}
	gsnap_clear(gs);
	if (gl->nkeys == 0 && gl->type != STP_TYPE_STATS)
		snap_scalar(sc, gl, gs);
	else
		snap_map(sc, g, gs);
	index_elems(sc, g, gs);
}

static void refresh_counters(struct stap_script *sc)
{
	size_t stride = (sizeof(struct stp_counters) + 7) & ~(size_t)7;
	struct bpf_map_info info;
	uint32_t key = 0;
	char *vals;

	if (sc->counters_gen == fetch_gen || sc->counters_fd < 0 || map_info(sc->counters_fd, &info))
		return;
	sc->counters_gen = fetch_gen;
	vals = calloc((size_t)sc->ncpus + 1, stride);
	if (!vals || bpf_map_lookup_elem(sc->counters_fd, &key, vals) < 0) {
		free(vals);
		return;
	}
	memset(&sc->counters, 0, sizeof(sc->counters));
	for (int c = 0; c < (info.type == BPF_MAP_TYPE_PERCPU_ARRAY ? sc->ncpus : 1); c++) {
		const struct stp_counters *p = (const void *)(vals + (size_t)c * stride);

		sc->counters.errors += p->errors;
		sc->counters.skipped += p->skipped;
		sc->counters.dropped += p->dropped;
		sc->counters.map_full += p->map_full;
		sc->counters.maxaction += p->maxaction;
	}
	free(vals);
}

static void refresh_probe_stats(struct stap_script *sc)
{
	size_t stride = (sizeof(struct stp_probe_stats) + 7) & ~(size_t)7;
	char *vals;

	if (sc->probes_gen == fetch_gen || sc->probe_stats_fd < 0 || !sc->probe_stats)
		return;
	sc->probes_gen = fetch_gen;
	vals = calloc((size_t)sc->ncpus + 1, stride);
	for (uint32_t i = 0; vals && i < (uint32_t)sc->meta->nprobes; i++) {
		struct stp_probe_stats sum = { 0 };

		if (bpf_map_lookup_elem(sc->probe_stats_fd, &i, vals) < 0)
			continue;
		for (int c = 0; c < sc->ncpus; c++) {
			const struct stp_probe_stats *p = (const void *)(vals + (size_t)c * stride);

			sum.hits += p->hits;
			sum.run_ns += p->run_ns;
			sum.errors += p->errors;	/* user context's (helper E) */
		}
		sc->probe_stats[i] = sum;
	}
	free(vals);
	sc->misses = 0;
	for (int i = 0; sc->probe_misses && sc->prog_fds && i < sc->meta->nprobes; i++) {
		sc->probe_misses[i] = stp_prog_misses(sc->prog_fds[i]);
		sc->misses += sc->probe_misses[i];
	}
}

void stap_fetch_prepare(pmID pmid)
{
	unsigned int cluster = pmID_cluster(pmid);
	struct stap_metric *m;

	if (cluster == STAP_CLUSTER_SCRIPTS) {
		for (int i = 0; i < stap_nscripts; i++) {
			refresh_counters(stap_scripts[i]);
			refresh_probe_stats(stap_scripts[i]);	/* user-context errors */
		}
	} else if (cluster == STAP_CLUSTER_PROBES) {
		for (int i = 0; i < stap_nscripts; i++)
			refresh_probe_stats(stap_scripts[i]);
	} else if (cluster >= STAP_CLUSTER_FIRST_SCRIPT && (m = stap_metric_by_pmid(pmid))) {
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
		if (e && g->values_map && sc->snaps[m->global].vmap)
			slotted_elem(g, &sc->snaps[m->global], (int)(e - sc->snaps[m->global].elems));
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

/* A slotted array of longs, every instance: one load from the mapping each. */
static void slotted_longs(const struct stap_gsnap *gs, struct stap_vset *vb)
{
	for (int k = 0; k < gs->norder; k++)
		stap_vset_64(vb, gs->oinsts[k],
			     __atomic_load_n((const int64_t *)(const void *)
						     slot_value(gs, gs->oslots[k]),
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
			slotted_elem(g, gs, i);
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
		slotted_longs(gs, &vb);
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
	case STAP_SCRIPTS_OUTPUT: return stap_output_fetch(sc, atom);
	case STAP_SCRIPTS_OUTPUT_LINES: atom->ull = sc->output_lines; break;
	case STAP_SCRIPTS_OUTPUT_BYTES: atom->ull = sc->output_bytes; break;
	case STAP_SCRIPTS_LAST_OUTPUT: atom->cp = sc->last_output ? sc->last_output : ""; break;
	case STAP_SCRIPTS_RESTARTS: atom->ul = sc->restarts; break;
	case STAP_SCRIPTS_PID:
		if (sc->pid <= 0)
			return PMDA_FETCH_NOVALUES;
		atom->ul = (uint32_t)sc->pid;
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
