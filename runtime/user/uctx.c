/*
 * uctx.c - the user-context runtime: what generated user-context code
 * (script.so) calls to reach the script's maps, print, and raise errors.
 * See stp_user.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "maps.h"
#include "script.h"
#include "stp_user.h"

#define STP_OUT_CHUNK 65536	/* the longest output of one printf or histogram */

static size_t round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static size_t maxstringlen(const struct stp_uctx *u)
{
	int64_t n = u->meta->limits.maxstringlen;

	return n > 0 ? (size_t)n : 512;
}

/* ---- setup --------------------------------------------------------------- */

static int map_fd(const struct stp_maps *maps, const char *name)
{
	int fd = stp_maps__find(maps, name, NULL);

	return fd >= 0 ? fd : -1;
}

/* A slotted array's values map, mapped here, and its queue of free slots. */
static void setup_slots(struct stp_uctx *u, const struct stp_meta_global *g, struct stp_umap *m)
{
	long page = sysconf(_SC_PAGESIZE);
	struct stp_map_info info;
	int fd = stp_maps__find(u->maps_of, g->values_map, &info);

	m->free_fd = map_fd(u->maps_of, g->free_map);
	if (fd < 0)
		return;
	m->vals_fd = fd;
	m->stride = (uint32_t)round8(g->value_size);
	m->nelems = info.max_entries;
	m->vals_len = ((size_t)m->nelems * m->stride + (size_t)page - 1) & ~((size_t)page - 1);
	m->vals = stp_mapfd_mmap(fd, m->vals_len);
}

static void setup_global(struct stp_uctx *u, int i)
{
	const struct stp_meta_global *g = &u->meta->globals[i];
	struct stp_umap *m = &u->maps[i];
	size_t need;

	m->fd = -1;
	m->free_fd = -1;
	if (g->nkeys == 0 && g->type != STP_TYPE_STATS)
		return;
	m->fd = map_fd(u->maps_of, g->map);
	if (g->values_map && u->maps_of)
		setup_slots(u, g, m);
	m->key_size = g->key_size;
	m->value_size = g->value_size;
	m->percpu = g->percpu;
	if (g->type == STP_TYPE_STATS) {
		stp_stat_cfg_init(&m->cfg, (enum stp_hist_type)g->hist.kind, g->hist.start,
				  g->hist.stop, g->hist.interval, 0);
		m->cfg.keyed = g->nkeys > 0;
	}
	need = round8(g->value_size) * (size_t)(g->percpu ? u->ncpus : 1);
	if (need > u->valbuf_len)
		u->valbuf_len = need;
}

static void map_globals(struct stp_uctx *u)
{
	long page = sysconf(_SC_PAGESIZE);
	struct stp_map_info info;
	int fd = stp_maps__find(u->maps_of, "stp_globals", &info);

	if (fd < 0)
		return;
	u->globals_fd = fd;
	u->globals_len = (info.value_size + (size_t)page - 1) & ~((size_t)page - 1);
	u->globals = stp_mapfd_mmap(fd, u->globals_len);
}

struct stp_uctx *stp_uctx__new(const struct stp_maps *maps, const struct stp_meta *meta, FILE *out)
{
	struct stp_uctx *u = calloc(1, sizeof(*u));
	int n;

	if (!u)
		return NULL;
	u->meta = meta;
	u->maps_of = maps;
	u->out = out ? out : stdout;
	n = stp_maps__ncpus(maps);
	u->ncpus = n > 0 ? n : 1;
	u->maps = calloc((size_t)meta->nglobals + 1, sizeof(*u->maps));
	u->formats = calloc((size_t)meta->nformats + 1, sizeof(*u->formats));
	u->ctx.errmsg = calloc(1, maxstringlen(u));
	u->valbuf_len = 64;
	for (int i = 0; u->maps && i < meta->nglobals; i++)
		setup_global(u, i);
	u->valbuf = calloc(1, u->valbuf_len);
	if (!u->maps || !u->formats || !u->ctx.errmsg || !u->valbuf) {
		stp_uctx__free(u);
		return NULL;
	}
	u->control_fd = map_fd(maps, STP_CONTROL_MAP);
	map_globals(u);
	u->ctx.u = u;
	return u;
}

void stp_uctx__set_ops(struct stp_uctx *u, const struct stp_uctx_ops *ops)
{
	u->ops = *ops;
}

void stp_uctx__set_target(struct stp_uctx *u, int64_t pid)
{
	u->target = pid;
}

void stp_uctx__set_args(struct stp_uctx *u, int argc, const char *const *argv)
{
	u->argc = argc;
	u->argv = argv;
}

bool stp_uctx__exiting(const struct stp_uctx *u)
{
	return u->exiting;
}

void stp_uctx__free(struct stp_uctx *u)
{
	if (!u)
		return;
	for (int i = 0; u->formats && i < u->meta->nformats; i++)
		stp_format__free(u->formats[i]);
	stp_mapfd_munmap(u->globals_fd, u->globals, u->globals_len);
	for (int i = 0; u->maps && i < u->meta->nglobals; i++)
		stp_mapfd_munmap(u->maps[i].vals_fd, u->maps[i].vals, u->maps[i].vals_len);
	free(u->formats);
	free(u->maps);
	free(u->valbuf);
	free(u->ctx.errmsg);
	free(u);
}

/* ---- handlers, errors, exit ----------------------------------------------- */

struct context *stp_enter(struct stp_uctx *u, int probe)
{
	struct context *c = &u->ctx;

	c->probe = probe >= 0 && probe < u->meta->nprobes ? &u->meta->probes[probe] : NULL;
	c->probe_index = probe;
	c->error = STP_ERR_NONE;
	c->err_site = -1;
	c->actions = 0;
	c->nesting = 0;
	c->errmsg[0] = '\0';
	return c;
}

static void report_error(struct context *c)
{
	struct stp_uctx *u = c->u;
	const struct stp_meta *meta = u->meta;
	int site = c->err_site;

	if (!c->errmsg[0] && site >= 0 && site < meta->nerrors)
		snprintf(c->errmsg, maxstringlen(u), "%s", meta->errors[site].what);
	if (u->ops.error) {
		u->ops.error(u->ops.arg, site, c->errmsg, strlen(c->errmsg));
	} else if (site >= 0 && site < meta->nerrors) {
		fprintf(stderr, "ERROR: %s at %s:%d:%d\n", c->errmsg, meta->errors[site].loc.file,
			meta->errors[site].loc.line, meta->errors[site].loc.col);
	} else {
		fprintf(stderr, "ERROR: %s\n", c->errmsg);
	}
}

int stp_leave(struct context *c)
{
	if (c->error != STP_ERR_RAISED && c->error != STP_ERR_FATAL)
		return 0;
	report_error(c);
	return 1;
}

void stp_raise(struct context *c, int site, const char *msg)
{
	c->error = STP_ERR_RAISED;
	c->err_site = site;
	snprintf(c->errmsg, maxstringlen(c->u), "%s", msg);
}

void stp_raise_msg(struct context *c, const char *msg)
{
	stp_raise(c, -1, msg && *msg ? msg : "unknown error");
}

void stp_send_warn(struct context *c, const char *msg)
{
	struct stp_uctx *u = c->u;

	if (u->ops.warn)
		u->ops.warn(u->ops.arg, msg, strlen(msg));
	else
		fprintf(stderr, "WARNING: %s\n", msg);
}

void stp_request_exit(struct context *c)
{
	struct stp_uctx *u = c->u;
	struct stp_control ctl;
	uint32_t zero = 0;

	u->exiting = true;
	if (u->control_fd >= 0 && stp_mapfd_lookup(u->control_fd, &zero, &ctl) == 0) {
		ctl.state = STP_RUN_STOPPING;
		stp_mapfd_update(u->control_fd, &zero, &ctl, BPF_ANY);
	}
	if (u->ops.exit)
		u->ops.exit(u->ops.arg);
}

void stp_send_system(struct context *c, const char *cmd)
{
	struct stp_uctx *u = c->u;

	if (u->ops.system)
		u->ops.system(u->ops.arg, cmd, strlen(cmd));
	else
		fprintf(stderr, "WARNING: system() has no runner to start: %s\n", cmd);
}

void stp_send_switch_file(struct context *c)
{
	struct stp_uctx *u = c->u;

	if (u->ops.switch_file)
		u->ops.switch_file(u->ops.arg);
}

void stp_request_abort(struct context *c)
{
	stp_request_exit(c);
	c->error = STP_ERR_ABORT;
}

/* ---- arrays ----------------------------------------------------------------- */

static struct stp_umap *umap(struct context *c, struct stp_map *m)
{
	return &c->u->maps[m->global];
}

static const char *map_name(struct context *c, struct stp_map *m)
{
	return c->u->meta->globals[m->global].name;
}

/*
 * Slotted arrays (runtime/bpf/stp_slots.bpf.h): the key map gives a slot,
 * the value is in the mmapped values map, read and written in place.
 */
static void *slot_elem(const struct stp_umap *um, uint32_t slot)
{
	if (!um->vals || slot >= um->nelems)
		return NULL;
	return um->vals + (size_t)slot * um->stride;
}

static void *slot_find(const struct stp_umap *um, const void *key)
{
	uint32_t slot;

	if (um->fd < 0 || stp_mapfd_lookup(um->fd, key, &slot))
		return NULL;
	return slot_elem(um, slot);
}

static void slot_bump(const struct stp_umap *um)
{
	int64_t *gen = slot_elem(um, STP_SLOT_GEN);

	if (gen)
		__atomic_fetch_add(gen, 1, __ATOMIC_SEQ_CST);
}

/* A free slot: a freed one, else one never used; -1 when every slot is taken. */
static int64_t slot_alloc(const struct stp_umap *um)
{
	int64_t *next = slot_elem(um, STP_SLOT_NEXT);
	uint32_t slot;

	if (stp_mapfd_pop(um->free_fd, &slot) == 0)
		return slot;
	if (!next)
		return -1;
	slot = STP_SLOT_FIRST + (uint32_t)__atomic_fetch_add(next, 1, __ATOMIC_SEQ_CST);
	return slot_elem(um, slot) ? (int64_t)slot : -1;
}

/* KEY inserted with the value VAL (value_size bytes): 0, or an errno (EEXIST: it exists). */
static int slot_insert(const struct stp_umap *um, const void *key, const void *val)
{
	int64_t s = slot_alloc(um);
	uint32_t slot = (uint32_t)s;
	int err;

	if (s < 0)
		return E2BIG;
	memcpy(slot_elem(um, slot), val, um->value_size);
	if (stp_mapfd_update(um->fd, key, &slot, BPF_NOEXIST) == 0) {
		slot_bump(um);
		return 0;
	}
	err = errno;
	stp_mapfd_update(um->free_fd, NULL, &slot, BPF_ANY);
	return err;
}

/* Delete KEY; its slot goes back to the queue if this call removed it. */
static void delete_key(const struct stp_umap *um, const void *key)
{
	uint32_t slot;

	if (!um->vals) {
		stp_mapfd_delete(um->fd, key);
		return;
	}
	if (stp_mapfd_lookup(um->fd, key, &slot) || stp_mapfd_delete(um->fd, key))
		return;
	stp_mapfd_update(um->free_fd, NULL, &slot, BPF_ANY);
	slot_bump(um);
}

/* The value at KEY (all CPUs' for a per-CPU map) in u->valbuf or in place, or NULL. */
static void *lookup(struct context *c, struct stp_map *m, const void *key)
{
	struct stp_umap *um = umap(c, m);
	uint32_t zero = 0;

	if (um->vals)
		return slot_find(um, key);
	if (um->fd < 0 || stp_mapfd_lookup(um->fd, key ? key : &zero, c->u->valbuf))
		return NULL;
	return c->u->valbuf;
}

static void update_failed(struct context *c, struct stp_map *m, int err, int site,
			  const char *full)
{
	char msg[256];

	if (err == E2BIG || err == ENOMEM) {
		stp_raise(c, site, full);
		return;
	}
	snprintf(msg, sizeof(msg), "cannot update array '%s': %s", map_name(c, m), strerror(err));
	stp_raise(c, site, msg);
}

/* A slotted array's KEY set to VAL (value_size bytes), inserted when new. */
static void slot_update(struct context *c, struct stp_map *m, const void *key, const void *val,
			int site, const char *full)
{
	struct stp_umap *um = umap(c, m);
	void *p = slot_find(um, key);
	int err = 0;

	if (!p && (err = slot_insert(um, key, val)) == EEXIST)
		p = slot_find(um, key);
	if (p && um->value_size == sizeof(int64_t))
		__atomic_store_n((int64_t *)p, *(const int64_t *)val, __ATOMIC_RELAXED);
	else if (p)
		memcpy(p, val, um->value_size);
	else if (err)
		update_failed(c, m, err, site, full);
}

static void update(struct context *c, struct stp_map *m, const void *key, const void *val,
		   int site, const char *full)
{
	struct stp_umap *um = umap(c, m);
	uint32_t zero = 0;

	if (um->vals) {
		slot_update(c, m, key, val, site, full);
		return;
	}
	if (um->fd < 0 || stp_mapfd_update(um->fd, key ? key : &zero, val, BPF_ANY))
		update_failed(c, m, um->fd < 0 ? EBADF : errno, site, full);
}

int64_t stp_map_get_long(struct context *c, struct stp_map *m, const void *key)
{
	int64_t *v = lookup(c, m, key);

	return v ? *v : 0;
}

char *stp_map_get_str(struct context *c, struct stp_map *m, const void *key, char *buf)
{
	const char *v = lookup(c, m, key);
	size_t n = v ? strnlen(v, umap(c, m)->value_size) : 0;

	if (n >= maxstringlen(c->u))
		n = maxstringlen(c->u) - 1;
	memcpy(buf, v ? v : "", n);
	buf[n] = '\0';
	return buf;
}

/* User context's keys cut to their column (stp_strlcpy() of stp_user.h). */
static uint64_t keys_cut;

void stp_key_cut(void)
{
	__atomic_fetch_add(&keys_cut, 1, __ATOMIC_RELAXED);
}

uint64_t stp_uctx_keys_cut(void)
{
	return __atomic_load_n(&keys_cut, __ATOMIC_RELAXED);
}

int stp_map_exists(struct context *c, struct stp_map *m, const void *key)
{
	return lookup(c, m, key) != NULL;
}

void stp_map_set_long(struct context *c, struct stp_map *m, const void *key, int64_t v, int site,
		      const char *full)
{
	update(c, m, key, &v, site, full);
}

void stp_map_set_str(struct context *c, struct stp_map *m, const void *key, const char *v,
		     int site, const char *full)
{
	struct stp_umap *um = umap(c, m);
	size_t n = strnlen(v, um->value_size ? um->value_size - 1 : 0);

	memset(c->u->valbuf, 0, um->value_size);
	memcpy(c->u->valbuf, v, n);
	update(c, m, key, c->u->valbuf, site, full);
}

/* A slotted array's KEY += D, atomically (the kernel may add at the same time). */
static int64_t slot_add_long(struct context *c, struct stp_map *m, const void *key, int64_t d,
			     int site, const char *full)
{
	struct stp_umap *um = umap(c, m);
	int64_t *p = slot_find(um, key);
	int err = 0;

	if (!p && (err = slot_insert(um, key, &d)) == 0)
		return d;
	if (!p && err == EEXIST)
		p = slot_find(um, key);
	if (p)
		return (int64_t)__atomic_add_fetch((uint64_t *)p, (uint64_t)d, __ATOMIC_SEQ_CST);
	update_failed(c, m, err ? err : ENOENT, site, full);
	return 0;
}

int64_t stp_map_add_long(struct context *c, struct stp_map *m, const void *key, int64_t d,
			 int site, const char *full)
{
	int64_t v;

	if (umap(c, m)->vals)
		return slot_add_long(c, m, key, d, site, full);
	v = (int64_t)((uint64_t)stp_map_get_long(c, m, key) + (uint64_t)d);

	update(c, m, key, &v, site, full);
	return v;
}

void stp_map_delete(struct context *c, struct stp_map *m, const void *key)
{
	struct stp_umap *um = umap(c, m);

	if (um->fd >= 0)
		delete_key(um, key);
}

/* Every key of M, into a malloc'd array; its count, or -1. */
static long all_keys(struct stp_umap *um, char **out)
{
	size_t n = 0, cap = 64;
	char *keys = malloc(cap * um->key_size), *grown;
	const void *prev = NULL;

	if (!keys)
		return -1;
	while (stp_mapfd_next_key(um->fd, prev, keys + n * um->key_size) == 0) {
		prev = keys + n * um->key_size;
		if (++n < cap)
			continue;
		cap *= 2;
		grown = realloc(keys, cap * um->key_size);
		if (!grown) {
			free(keys);
			return -1;
		}
		keys = grown;
		prev = keys + (n - 1) * um->key_size;
	}
	*out = keys;
	return (long)n;
}

void stp_map_clear(struct context *c, struct stp_map *m)
{
	struct stp_umap *um = umap(c, m);
	char *keys;
	long n;

	if (um->fd < 0)
		return;
	if (c->u->meta->globals[m->global].nkeys == 0) {	/* a scalar statistic */
		uint32_t zero = 0;

		memset(c->u->valbuf, 0, c->u->valbuf_len);
		stp_mapfd_update(um->fd, &zero, c->u->valbuf, BPF_ANY);
		return;
	}
	n = all_keys(um, &keys);
	for (long i = 0; i < n; i++)
		delete_key(um, keys + (size_t)i * um->key_size);
	if (n >= 0)
		free(keys);
}

static int cmp_key_col(const struct stp_meta_global *g, int col, const char *a, const char *b);

/* Whether KEY matches K in every column whose bit is set in MASK (a slice). */
static bool slice_match(const struct stp_meta_global *g, const char *k, const char *key,
			unsigned mask)
{
	for (int col = 0; col < g->nkeys; col++)
		if ((mask & (1u << col)) && cmp_key_col(g, col, k, key) != 0)
			return false;
	return true;
}

/* Apply DELETE (or only test) to the elements of M that match the slice KEY/MASK. */
static int slice_walk(struct context *c, struct stp_map *m, const void *key, unsigned mask,
		      bool delete)
{
	const struct stp_meta_global *g = &c->u->meta->globals[m->global];
	struct stp_umap *um = umap(c, m);
	char *keys;
	long n = um->fd >= 0 ? all_keys(um, &keys) : -1;
	int found = 0;

	for (long i = 0; i < n && (delete || !found); i++) {
		const char *k = keys + (size_t)i * um->key_size;

		if (!slice_match(g, k, key, mask))
			continue;
		found = 1;
		if (delete)
			delete_key(um, k);
	}
	if (n >= 0)
		free(keys);
	return found;
}

int stp_map_exists_slice(struct context *c, struct stp_map *m, const void *key, unsigned mask)
{
	return slice_walk(c, m, key, mask, false);
}

void stp_map_delete_slice(struct context *c, struct stp_map *m, const void *key, unsigned mask)
{
	slice_walk(c, m, key, mask, true);
}

/* ---- statistics ------------------------------------------------------------ */

void stp_map_stat_add(struct context *c, struct stp_map *m, const void *key,
		  const struct stp_stat_cfg *cfg, int64_t val, int site, const char *full)
{
	void *v = lookup(c, m, key);

	if (!v) {
		v = c->u->valbuf;
		memset(v, 0, c->u->valbuf_len);
	}
	stp_stat_add(v, cfg, val);	/* CPU 0's partial */
	update(c, m, key, v, site, full);
}

/* The statistic's configuration: the generated code's, else the one meta implies. */
static const struct stp_stat_cfg *stat_cfg(struct context *c, struct stp_map *m)
{
	return m->cfg ? m->cfg : &umap(c, m)->cfg;
}

/* The merged aggregate of M[KEY]; HIST (cfg.buckets counters) may be NULL. */
static void merge(struct context *c, struct stp_map *m, const void *key, struct stp_stat_agg *agg,
		  int64_t *hist)
{
	struct stp_umap *um = umap(c, m);
	const struct stp_stat_cfg *cfg = stat_cfg(c, m);
	const void *v = lookup(c, m, key);

	memset(agg, 0, sizeof(*agg));
	agg->hist = hist;
	if (hist)
		memset(hist, 0, sizeof(int64_t) * (size_t)cfg->buckets);
	if (v)
		stp_stat_merge(agg, cfg, v, round8(um->value_size), um->percpu ? c->u->ncpus : 1);
}

int64_t stp_map_stat_get(struct context *c, struct stp_map *m, const void *key,
			 enum stp_stat_op op, int site)
{
	struct stp_stat_agg agg;
	int64_t val = 0;

	merge(c, m, key, &agg, NULL);
	if (stp_stat_extract(&agg, op, &val) == STP_STAT_EMPTY) {
		stp_raise(c, site, STP_STAT_EMPTY_MSG);
		return 0;
	}
	return val;
}

int64_t stp_map_stat_bucket(struct context *c, struct stp_map *m, const void *key,
			    int64_t index, int site, int empty_site)
{
	int64_t hist[STP_HIST_MAX_BUCKETS], val = 0;
	struct stp_stat_agg agg;
	int r;

	merge(c, m, key, &agg, hist);
	r = stp_stat_hist_bucket(stat_cfg(c, m), &agg, index, &val);
	if (r == STP_STAT_RANGE)
		stp_raise(c, site, STP_STAT_RANGE_MSG);
	else if (r == STP_STAT_EMPTY && empty_site >= 0)
		stp_raise(c, empty_site, "empty aggregate");
	return r ? 0 : val;
}

void stp_map_stat_print(struct context *c, struct stp_map *m, const void *key, char *buf,
			int site)
{
	int64_t hist[STP_HIST_MAX_BUCKETS];
	struct stp_stat_agg agg;
	struct stp_out out;
	char *text = buf ? buf : malloc(STP_OUT_CHUNK);

	if (!text)
		return;
	merge(c, m, key, &agg, hist);
	stp_out_init(&out, text, buf ? maxstringlen(c->u) - 1 : STP_OUT_CHUNK);
	stp_stat_print_hist(&out, stat_cfg(c, m), &agg, STP_HIST_ELISION);
	if (buf)
		buf[out.len] = '\0';
	else
		stp_output(c, text, out.len);
	if (!buf)
		free(text);
	(void)site;
}

/* ---- foreach ------------------------------------------------------------------ */

struct sort_item {
	const char *key;
	int64_t num;		/* the value, or its statistic */
	const char *str;	/* a string value */
};

struct sort_spec {
	const struct stp_meta_global *g;
	int col, dir;
};

static int cmp_key_col(const struct stp_meta_global *g, int col, const char *a, const char *b)
{
	const char *x = a + g->key_offsets[col], *y = b + g->key_offsets[col];
	int64_t p, q;

	if (g->key_types[col] == STP_TYPE_STRING)
		return stp_strcmp(x, y);
	memcpy(&p, x, 8);
	memcpy(&q, y, 8);
	return (p > q) - (p < q);
}

static int cmp_items(const void *pa, const void *pb, void *arg)
{
	const struct sort_item *a = pa, *b = pb;
	const struct sort_spec *spec = arg;
	int r = 0;

	if (spec->col == 0)
		r = a->str ? stp_strcmp(a->str, b->str) : (a->num > b->num) - (a->num < b->num);
	else if (spec->col > 0)
		r = cmp_key_col(spec->g, spec->col - 1, a->key, b->key);
	r *= spec->dir;
	for (int k = 0; !r && k < spec->g->nkeys; k++)
		r = cmp_key_col(spec->g, k, a->key, b->key);
	return r;
}

static void item_value(struct context *c, struct stp_map *m, struct sort_item *it,
		       enum stp_stat_op stat, char *strs, size_t i)
{
	const struct stp_meta_global *g = &c->u->meta->globals[m->global];
	struct stp_stat_agg agg;
	const void *v;

	if (g->type == STP_TYPE_STATS) {
		merge(c, m, it->key, &agg, NULL);
		stp_stat_extract(&agg, stat, &it->num);
		return;
	}
	v = lookup(c, m, it->key);
	if (g->type == STP_TYPE_LONG) {
		it->num = v ? *(const int64_t *)v : 0;
		return;
	}
	it->str = strs + i * g->value_size;
	memcpy(strs + i * g->value_size, v ? v : "", v ? g->value_size : 1);
}

static int sort_keys(struct context *c, struct stp_map *m, struct stp_iter *it, int col, int dir,
		     enum stp_stat_op stat)
{
	const struct stp_meta_global *g = &c->u->meta->globals[m->global];
	struct sort_item *items = calloc(it->n + 1, sizeof(*items));
	char *strs = NULL, *sorted = malloc(it->n * it->key_size + 1);
	struct sort_spec spec = { g, col, dir };

	if (col == 0 && g->type == STP_TYPE_STRING)
		strs = calloc(it->n + 1, g->value_size);
	if (!items || !sorted || (col == 0 && g->type == STP_TYPE_STRING && !strs)) {
		free(items);
		free(strs);
		free(sorted);
		return -1;
	}
	for (size_t i = 0; i < it->n; i++) {
		items[i].key = it->keys + i * it->key_size;
		if (col == 0)
			item_value(c, m, &items[i], stat, strs, i);
	}
	qsort_r(items, it->n, sizeof(*items), cmp_items, &spec);
	for (size_t i = 0; i < it->n; i++)
		memcpy(sorted + i * it->key_size, items[i].key, it->key_size);
	free(it->keys);
	it->keys = sorted;
	free(items);
	free(strs);
	return 0;
}

int stp_foreach_start(struct context *c, struct stp_map *m, struct stp_iter *it, int sort_col,
		      int sort_dir, enum stp_stat_op sort_stat)
{
	struct stp_umap *um = umap(c, m);
	long n;

	memset(it, 0, sizeof(*it));
	if (um->fd < 0)
		return 0;
	n = all_keys(um, &it->keys);
	if (n < 0) {
		stp_raise_msg(c, "out of memory in foreach");
		return -1;
	}
	it->n = (size_t)n;
	it->key_size = um->key_size;
	if (sort_dir && it->n > 1 && sort_keys(c, m, it, sort_col, sort_dir, sort_stat)) {
		stp_raise_msg(c, "out of memory in foreach");
		return -1;
	}
	return 0;
}

const void *stp_foreach_next(struct stp_iter *it)
{
	if (it->i >= it->n)
		return NULL;
	return it->keys + it->key_size * it->i++;
}

void stp_foreach_end(struct stp_iter *it)
{
	free(it->keys);
	it->keys = NULL;
	it->n = it->i = 0;
}

/* ---- output -------------------------------------------------------------------- */

void stp_output(struct context *c, const char *buf, size_t len)
{
	struct stp_uctx *u = c->u;

	if (u->ops.output)
		u->ops.output(u->ops.arg, buf, len);
	else
		fwrite(buf, 1, len, u->out);
}

static const struct stp_format *format(struct context *c, int fmt)
{
	struct stp_uctx *u = c->u;
	const char *body;

	if (fmt < 0 || fmt >= u->meta->nformats)
		return NULL;
	if (!u->formats[fmt]) {
		body = u->meta->formats[fmt].body;
		u->formats[fmt] = stp_format__new(body, strlen(body), NULL);
	}
	return u->formats[fmt];
}

void stp_printf(struct context *c, int fmt, const struct stp_value *args, int nargs)
{
	const struct stp_format *f = format(c, fmt);
	char *text = malloc(STP_OUT_CHUNK);
	struct stp_out out;

	if (!f || !text) {
		free(text);
		return;
	}
	stp_out_init(&out, text, STP_OUT_CHUNK);
	stp_format_print(&out, f, args, nargs);
	stp_output(c, text, out.len);
	free(text);
}

char *stp_sprintf(struct context *c, char *buf, int fmt, const struct stp_value *args, int nargs)
{
	const struct stp_format *f = format(c, fmt);
	struct stp_out out;

	stp_out_init(&out, buf, maxstringlen(c->u) - 1);
	if (f)
		stp_format_print(&out, f, args, nargs);
	buf[out.len] = '\0';
	return buf;
}

void stp_print(struct context *c, const struct stp_value *args, int nargs, const char *delim,
	       bool newline)
{
	char *text = malloc(STP_OUT_CHUNK);
	struct stp_out out;

	if (!text)
		return;
	stp_out_init(&out, text, STP_OUT_CHUNK);
	stp_print_values(&out, args, nargs, delim, delim ? strlen(delim) : 0, newline);
	stp_output(c, text, out.len);
	free(text);
}

char *stp_sprint(struct context *c, char *buf, const struct stp_value *args, int nargs,
		 const char *delim, bool newline)
{
	struct stp_out out;

	stp_out_init(&out, buf, maxstringlen(c->u) - 1);
	stp_print_values(&out, args, nargs, delim, delim ? strlen(delim) : 0, newline);
	buf[out.len] = '\0';
	return buf;
}

/* ---- regular expressions ------------------------------------------------------ */

#define STP_REGEX_CACHE 16
#define STP_REGEX_GROUPS 32	/* subexpressions kept of a match, the whole one included */

struct regex_slot {
	const char *re;		/* the literal's address in script.so */
	regex_t compiled;
};

static struct regex_slot regex_cache[STP_REGEX_CACHE];
static int regex_used;

/*
 * The last '=~' or '!~' run in user context, for matched() and ngroups()
 * (tapset/regex.stp): the string it looked at and where its subexpressions
 * matched.  As in stap, it lasts until the next match runs; CTX says which
 * script's handlers ran it, so a second script in the same process (the
 * PMDA's) sees no match of its own.
 */
static struct {
	const struct context *ctx;	/* NULL: no match has run */
	bool matched;			/* the last one succeeded */
	int ngroups;			/* re_nsub + 1 */
	char *text;			/* a copy of the string: maxstringlen bytes */
	size_t text_len;
	regmatch_t groups[STP_REGEX_GROUPS];
} regex_last;

static struct regex_slot *regex_compiled(struct context *c, const char *re, int site)
{
	struct regex_slot *slot;
	char msg[160];
	int r;

	for (int i = 0; i < regex_used; i++)
		if (regex_cache[i].re == re)
			return &regex_cache[i];
	slot = &regex_cache[regex_used < STP_REGEX_CACHE ? regex_used++ : STP_REGEX_CACHE - 1];
	if (slot->re)
		regfree(&slot->compiled);
	slot->re = NULL;
	r = regcomp(&slot->compiled, re, REG_EXTENDED);
	if (r) {
		regerror(r, &slot->compiled, msg, sizeof(msg));
		stp_raise(c, site, msg);
		return NULL;
	}
	slot->re = re;
	return slot;
}

/* Keep S and the match's subexpressions for stp_regex_matched(). */
static void regex_keep(struct context *c, const regex_t *re, const char *s, bool matched)
{
	size_t len = strlen(s), max = maxstringlen(c->u);

	regex_last.ctx = c;
	regex_last.matched = matched;
	regex_last.ngroups = (int)re->re_nsub + 1;
	if (!matched)
		return;
	if (regex_last.text_len < max) {
		char *text = realloc(regex_last.text, max);

		if (!text) {
			regex_last.matched = false;
			return;
		}
		regex_last.text = text;
		regex_last.text_len = max;
	}
	if (len >= max)
		len = max - 1;
	memcpy(regex_last.text, s, len);
	regex_last.text[len] = '\0';
}

int64_t stp_regex_match(struct context *c, const char *s, const char *re, int site)
{
	struct regex_slot *slot = regex_compiled(c, re, site);
	bool matched;

	if (!slot)
		return 0;
	matched = regexec(&slot->compiled, s, STP_REGEX_GROUPS, regex_last.groups, 0) == 0;
	regex_keep(c, &slot->compiled, s, matched);
	return matched;
}

/* False, with NAME's error raised, when the last match of C's script did not succeed. */
static bool regex_have_match(struct context *c, const char *name)
{
	char msg[128];

	if (regex_last.ctx == c && regex_last.matched)
		return true;
	snprintf(msg, sizeof(msg), "%s: %s", name,
		 regex_last.ctx == c ? "the last regular expression match ('=~') failed"
				     : "no regular expression match ('=~') has run yet");
	stp_raise_msg(c, msg);
	return false;
}

void stp_regex_matched(struct context *c, char *out, int64_t n)
{
	char name[40], msg[160];
	const regmatch_t *g;

	out[0] = '\0';
	snprintf(name, sizeof(name), "matched(%lld)", (long long)n);
	if (!regex_have_match(c, name))
		return;
	if (n < 0 || n >= regex_last.ngroups) {
		if (regex_last.ngroups == 1)
			snprintf(msg, sizeof(msg), "%s: no such subexpression: the last match has "
				 "only 0, the whole match", name);
		else
			snprintf(msg, sizeof(msg), "%s: no such subexpression: the last match has "
				 "0 to %d", name, regex_last.ngroups - 1);
		stp_raise_msg(c, msg);
		return;
	}
	if (n >= STP_REGEX_GROUPS) {
		snprintf(msg, sizeof(msg), "%s: only subexpressions 0 to %d are kept", name,
			 STP_REGEX_GROUPS - 1);
		stp_raise_msg(c, msg);
		return;
	}
	g = &regex_last.groups[n];
	if (g->rm_so < 0 || g->rm_eo < g->rm_so || (size_t)g->rm_eo >= regex_last.text_len)
		return;		/* a group that took no part in the match: "" as in stap */
	memcpy(out, regex_last.text + g->rm_so, (size_t)(g->rm_eo - g->rm_so));
	out[g->rm_eo - g->rm_so] = '\0';
}

int64_t stp_regex_ngroups(struct context *c)
{
	return regex_have_match(c, "ngroups()") ? regex_last.ngroups : 0;
}
