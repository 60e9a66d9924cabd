/*
 * data.c - a running script's data in the BPF runtime's maps (data.h).
 *
 * Arrays and statistics are hash maps (per-CPU arrays for scalar
 * statistics), read whole with batch lookups where the kernel has them,
 * key by key otherwise.  Slotted arrays (runtime/bpf/stp_slots.bpf.h) map
 * each key to a slot of an mmapable values map, which is mapped here
 * read-only and read in place.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "maps.h"
#include "../dyninst/dmap.h"
#include "data.h"
#include "script.h"

/* Global G's pieces. */
struct stp_data_global {
	int fd;				/* its map; -1: not adopted */
	char *vmap;			/* slotted: the values map, mapped here */
	size_t vmap_len;
	int vmap_fd;			/* a segment's values map: kept; -1 otherwise */
	uint32_t stride, nelems;	/* slotted: bytes a slot, slots */
};

struct stp_data {
	const struct stp_meta *meta;
	int ncpus;
	struct stp_data_global *globals;	/* per meta->globals */
	int globals_fd;				/* stp_globals */
	size_t globals_size;
	int counters_fd;
	int counters_shared_fd;			/* dyninst: threads with no slot */
	bool counters_percpu;
	int probe_stats_fd;
	int *prog_fds;				/* per meta->probes */
	void (*log)(void *arg, const char *msg);
	void *log_arg;
};

static void say(struct stp_data *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct stp_data *d, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (d->log)
		d->log(d->log_arg, msg);
	else
		fprintf(stderr, "%s\n", msg);
}

struct stp_data *stp_data__new(const struct stp_meta *m, int ncpus)
{
	struct stp_data *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->meta = m;
	d->ncpus = ncpus > 0 ? ncpus : 1;
	d->globals = calloc((size_t)m->nglobals + 1, sizeof(*d->globals));
	d->prog_fds = malloc(((size_t)m->nprobes + 1) * sizeof(int));
	if (!d->globals || !d->prog_fds) {
		free(d->globals);
		free(d->prog_fds);
		free(d);
		return NULL;
	}
	for (int g = 0; g < m->nglobals; g++)
		d->globals[g].fd = d->globals[g].vmap_fd = -1;
	for (int i = 0; i < m->nprobes; i++)
		d->prog_fds[i] = -1;
	d->globals_fd = d->counters_fd = d->counters_shared_fd = d->probe_stats_fd = -1;
	return d;
}

static void close_fd(int fd)
{
	if (fd < 0)
		return;
	stp_mapfd_unregister(fd);
	close(fd);
}

void stp_data__free(struct stp_data *d)
{
	if (!d)
		return;
	for (int g = 0; g < d->meta->nglobals; g++) {
		close_fd(d->globals[g].fd);
		stp_mapfd_munmap(d->globals[g].vmap_fd, d->globals[g].vmap, d->globals[g].vmap_len);
		close_fd(d->globals[g].vmap_fd);
	}
	for (int i = 0; i < d->meta->nprobes; i++)
		close_fd(d->prog_fds[i]);
	close_fd(d->globals_fd);
	close_fd(d->counters_fd);
	close_fd(d->counters_shared_fd);
	close_fd(d->probe_stats_fd);
	free(d->globals);
	free(d->prog_fds);
	free(d);
}

void stp_data__set_log(struct stp_data *d, void (*log)(void *arg, const char *msg), void *arg)
{
	d->log = log;
	d->log_arg = arg;
}

/* ---- adopting the maps ---- */

static int map_info(int fd, struct stp_map_info *info)
{
	memset(info, 0, sizeof(*info));
	return stp_mapfd_info(fd, info);
}

static bool percpu_type(uint32_t type)
{
	return type == BPF_MAP_TYPE_PERCPU_ARRAY || type == BPF_MAP_TYPE_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

/*
 * The runtime's own maps.  Their value sizes are checked, not trusted: a
 * read copies value_size bytes a CPU into buffers sized for our structs,
 * and a segment handed to the PMDA may say anything.
 */
static bool adopt_special(struct stp_data *d, const char *name, int fd)
{
	struct stp_map_info info;

	if (!strcmp(name, "stp_globals") && d->globals_fd < 0 && map_info(fd, &info) == 0 &&
	    !percpu_type(info.type)) {
		d->globals_fd = fd;
		d->globals_size = info.value_size;
		return true;
	}
	if (!strcmp(name, STP_COUNTERS_MAP) && d->counters_fd < 0 && map_info(fd, &info) == 0 &&
	    info.value_size == sizeof(struct stp_counters)) {
		d->counters_fd = fd;
		d->counters_percpu = percpu_type(info.type);
		return true;
	}
	if (!strcmp(name, STP_COUNTERS_SHARED_MAP) && d->counters_shared_fd < 0 &&
	    map_info(fd, &info) == 0 && info.value_size == sizeof(struct stp_counters) &&
	    !percpu_type(info.type)) {
		d->counters_shared_fd = fd;
		return true;
	}
	if (!strcmp(name, STP_PROBE_STATS_MAP) && d->probe_stats_fd < 0 && map_info(fd, &info) == 0 &&
	    info.value_size == sizeof(struct stp_probe_stats) && percpu_type(info.type)) {
		d->probe_stats_fd = fd;
		return true;
	}
	return false;
}

/* "prog:INDEX": probe INDEX's program, for its recursion misses. */
static bool adopt_prog(struct stp_data *d, const char *name, int fd)
{
	char *end;
	long i;

	if (strncmp(name, "prog:", 5) != 0)
		return false;
	i = strtol(name + 5, &end, 10);
	if (*end || i < 0 || i >= d->meta->nprobes || d->prog_fds[i] >= 0)
		return false;
	d->prog_fds[i] = fd;
	return true;
}

static bool map_matches(struct stp_data *d, const struct stp_meta_global *gl, int fd)
{
	struct stp_map_info info;

	if (map_info(fd, &info) < 0)
		return false;
	if (info.key_size == gl->key_size &&
	    info.value_size == (gl->values_map ? sizeof(uint32_t) : gl->value_size) &&
	    percpu_type(info.type) == gl->percpu)
		return true;
	say(d, "map %s of global %s has key/value sizes %u/%u%s, the metadata says %u/%u%s: "
	    "not read", gl->map, gl->name, info.key_size, info.value_size,
	    percpu_type(info.type) ? " per CPU" : "", gl->key_size, gl->value_size,
	    gl->percpu ? " per CPU" : "");
	return false;
}

/* A slotted array's values map: mapped read-only; the mapping keeps the map. */
static bool adopt_values(struct stp_data *d, struct stp_data_global *dg,
			 const struct stp_meta_global *gl, int fd)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct stp_map_info info;
	void *p;

	if (map_info(fd, &info) < 0 || info.value_size != gl->value_size)
		return false;
	dg->stride = (uint32_t)stp_percpu_stride(info.value_size);	/* array values: 8-aligned too */
	dg->nelems = info.max_entries;
	dg->vmap_len = ((size_t)dg->nelems * dg->stride + page - 1) & ~(page - 1);
	p = stp_mapfd_mmap(fd, dg->vmap_len);
	if (!p) {
		say(d, "cannot map the values of %s: %s", gl->name, strerror(errno));
		return false;
	}
	dg->vmap = p;
	if (stp_mapfd_dmap(fd))
		dg->vmap_fd = fd;	/* a segment's map: its memory is the segment's */
	else
		close(fd);		/* a BPF map: the mapping keeps the map */
	return true;
}

static bool adopt_global(struct stp_data *d, const char *name, int fd)
{
	const struct stp_meta *m = d->meta;

	for (int g = 0; g < m->nglobals; g++) {
		const struct stp_meta_global *gl = &m->globals[g];
		struct stp_data_global *dg = &d->globals[g];

		if (gl->map && !strcmp(gl->map, name) && dg->fd < 0) {
			if (!map_matches(d, gl, fd))
				return false;
			dg->fd = fd;
			return true;
		}
		if (gl->values_map && !strcmp(gl->values_map, name) && !dg->vmap)
			return adopt_values(d, dg, gl, fd);
	}
	return false;
}

bool stp_data__adopt(struct stp_data *d, const char *name, int fd)
{
	if (!d || !name || fd < 0)
		return false;
	return adopt_special(d, name, fd) || adopt_prog(d, name, fd) || adopt_global(d, name, fd);
}

void stp_data__adopt_dseg(struct stp_data *d, struct stp_dseg *seg, int seg_fd)
{
	for (int i = 0; i < stp_dseg__nmaps(seg); i++) {
		struct stp_dmap *m = stp_dseg__map_at(seg, i);
		int fd = stp_mapfd_register(m, seg_fd);

		if (fd >= 0 && !stp_data__adopt(d, stp_dmap__def(m)->name, fd))
			close_fd(fd);
	}
}

void stp_data__adopt_script(struct stp_data *d, const struct stp_script *s)
{
	const struct stp_maps *ms = stp_script__maps(s);

	if (stp_script__dseg(s)) {
		stp_data__adopt_dseg(d, stp_script__dseg(s), stp_dseg__fd(stp_script__dseg(s)));
		return;
	}
	for (int i = 0, n = stp_maps__count(ms); i < n; i++) {
		const char *name = NULL;
		int fd = stp_maps__at(ms, i, &name);

		fd = fd >= 0 ? dup(fd) : -1;
		if (fd >= 0 && !stp_data__adopt(d, name, fd))
			close(fd);
	}
}

/* ---- reading ---- */

bool stp_data__has(const struct stp_data *d, int g)
{
	return d && g >= 0 && g < d->meta->nglobals &&
	       (d->globals[g].fd >= 0 || (!d->meta->globals[g].nkeys &&
					  d->meta->globals[g].type != STP_TYPE_STATS && d->globals_fd >= 0));
}

size_t stp_data__value_size(const struct stp_data *d, int g)
{
	const struct stp_meta_global *gl = &d->meta->globals[g];

	return gl->percpu ? stp_percpu_stride(gl->value_size) * (size_t)d->ncpus
			  : (size_t)gl->value_size;
}

int stp_data__ncpus(const struct stp_data *d)
{
	return d->ncpus;
}

size_t stp_data__scalars_size(const struct stp_data *d)
{
	return d && d->globals_fd >= 0 ? d->globals_size : 0;
}

int stp_data__read_scalars(struct stp_data *d, void *buf)
{
	uint32_t key = 0;

	if (d->globals_fd < 0 || stp_mapfd_lookup(d->globals_fd, &key, buf) < 0) {
		memset(buf, 0, d->globals_size);
		return -1;
	}
	return 0;
}

/*
 * Every element of the hash map FD (at most MAX) into *KEYS and *VALS;
 * the count, or -1 when the kernel has no batch lookup for it.
 */
static int batch_read(int fd, size_t ksize, size_t vsize, uint32_t max, char **keys, char **vals)
{
	uint64_t in_token = 0, out_token = 0;	/* a hash map's batch token is a bucket number */
	void *in = NULL;
	uint32_t n = 0;
	char *k = malloc((size_t)(max + 1) * ksize);
	char *v = malloc((size_t)(max + 1) * vsize);

	*keys = k;
	*vals = v;
	if (!k || !v)
		return 0;
	while (n < max + 1) {
		uint32_t count = max + 1 - n;
		int err = bpf_map_lookup_batch(fd, in, &out_token, k + (size_t)n * ksize,
					       v + (size_t)n * vsize, &count, NULL);

		n += err && errno != ENOENT ? 0 : count;
		if (err && errno == ENOENT)
			break;	/* the end of the map */
		if (err)
			return n == 0 && (errno == EINVAL || errno == ENOTSUP || errno == EOPNOTSUPP) ?
				       -1 : (int)n;
		in_token = out_token;
		in = &in_token;
	}
	return (int)n;
}

/*
 * The map key by key into OUT (VSIZE bytes a value); the element count,
 * or -1 (errno EBUSY) when a read of a reader segment's map gave up (its
 * writers kept changing it): what was read so far is not the map.
 */
static int walk_map(int fd, size_t ksize, size_t vsize, uint32_t max, struct stp_data_elems *out)
{
	long tries = 2 * (long)max + 128;	/* for a map changing as we read */
	int n = 0, cap = 0;
	char *prev = NULL;

	while (tries-- > 0) {
		if (n == cap) {
			int more = cap ? cap * 2 : 64;
			char *k = realloc(out->keys, (size_t)more * ksize);
			char *v = k ? realloc(out->vals, (size_t)more * vsize) : NULL;

			if (k)
				out->keys = k;
			if (!k || !v)
				break;
			out->vals = v;
			cap = more;
			prev = n ? out->keys + (size_t)(n - 1) * ksize : NULL;
		}
		if (stp_mapfd_next_key(fd, prev, out->keys + (size_t)n * ksize) < 0)
			return errno == EBUSY ? -1 : n;
		memset(out->vals + (size_t)n * vsize, 0, vsize);
		if (stp_mapfd_lookup(fd, out->keys + (size_t)n * ksize,
					out->vals + (size_t)n * vsize) < 0) {
			if (errno == EBUSY)
				return -1;
			continue;	/* deleted meanwhile: the next key still follows prev */
		}
		prev = out->keys + (size_t)n * ksize;
		n++;
	}
	return n;
}

/* The map FD of GL into OUT, VSIZE bytes a value. */
static int read_map(int fd, const struct stp_meta_global *gl, size_t vsize,
		    struct stp_data_elems *out)
{
	int n = -1;

	out->keys = out->vals = NULL;
	if (!stp_mapfd_dmap(fd))	/* a segment's map has no batches: key by key */
		n = batch_read(fd, gl->key_size, vsize, gl->max_entries, &out->keys, &out->vals);
	out->vstride = vsize;
	if (n < 0) {	/* key by key; a string value is NUL-terminated in any case */
		free(out->keys);
		free(out->vals);
		out->keys = out->vals = NULL;
		out->vstride = vsize + 1;
		n = walk_map(fd, gl->key_size, vsize + 1, gl->max_entries, out);
	}
	if (n < 0) {	/* gave up: nothing */
		free(out->keys);
		free(out->vals);
		out->keys = out->vals = NULL;
		errno = EBUSY;
	}
	out->n = n;
	return n;
}

int stp_data__read_slots(struct stp_data *d, int g, struct stp_data_elems *out)
{
	memset(out, 0, sizeof(*out));
	if (!stp_data__has(d, g))
		return 0;
	return read_map(d->globals[g].fd, &d->meta->globals[g], sizeof(uint32_t), out);
}

int stp_data__read(struct stp_data *d, int g, struct stp_data_elems *out)
{
	size_t vsize;
	int n;

	memset(out, 0, sizeof(*out));
	if (!stp_data__has(d, g))
		return 0;
	vsize = stp_data__value_size(d, g);
	if (!stp_data__in_place(d, g))
		return read_map(d->globals[g].fd, &d->meta->globals[g], vsize, out);
	/* slotted: each key's slot, then the value there */
	n = stp_data__read_slots(d, g, out);
	if (n < 0)
		return n;
	if (n > 0) {
		char *vals = calloc((size_t)n, vsize + 1);

		for (int i = 0; vals && i < n; i++) {
			uint32_t slot;

			memcpy(&slot, out->vals + (size_t)i * out->vstride, sizeof(slot));
			memcpy(vals + (size_t)i * (vsize + 1), stp_data__slot_value(d, g, slot), vsize);
		}
		free(out->vals);
		out->vals = vals;
		out->vstride = vsize + 1;
		out->n = vals ? n : 0;
	}
	return out->n;
}

bool stp_data__in_place(const struct stp_data *d, int g)
{
	return d && g >= 0 && g < d->meta->nglobals && d->globals[g].vmap;
}

int64_t stp_data__generation(const struct stp_data *d, int g)
{
	const struct stp_data_global *dg = &d->globals[g];
	const void *gen = dg->vmap + (size_t)STP_SLOT_GEN * dg->stride;

	return __atomic_load_n((const int64_t *)gen, __ATOMIC_ACQUIRE);
}

const char *stp_data__slot_value(const struct stp_data *d, int g, uint32_t slot)
{
	static const char none[8];
	const struct stp_data_global *dg = &d->globals[g];

	if (slot < STP_SLOT_FIRST || slot >= dg->nelems)
		return none;
	return dg->vmap + (size_t)slot * dg->stride;
}

/* ---- counters ---- */

void stp_counters_add(struct stp_counters *sum, const struct stp_counters *c)
{
	sum->errors += c->errors;
	sum->skipped += c->skipped;
	sum->dropped += c->dropped;
	sum->map_full += c->map_full;
	sum->maxaction += c->maxaction;
	sum->keys_cut += c->keys_cut;
}

int stp_data__counters(struct stp_data *d, struct stp_counters *sum)
{
	size_t stride = stp_percpu_stride(sizeof(struct stp_counters));
	char *vals = d->counters_fd >= 0 ? calloc((size_t)d->ncpus + 1, stride) : NULL;
	uint32_t key = 0;

	memset(sum, 0, sizeof(*sum));
	if (!vals || stp_mapfd_lookup(d->counters_fd, &key, vals) < 0) {
		free(vals);
		return -1;
	}
	for (int c = 0; c < (d->counters_percpu ? d->ncpus : 1); c++)
		stp_counters_add(sum, (const void *)(vals + (size_t)c * stride));
	if (d->counters_shared_fd >= 0 && stp_mapfd_lookup(d->counters_shared_fd, &key, vals) == 0)
		stp_counters_add(sum, (const void *)vals);
	free(vals);
	return 0;
}

int stp_data__probe_stats(struct stp_data *d, int probe, struct stp_probe_stats *sum)
{
	size_t stride = stp_percpu_stride(sizeof(struct stp_probe_stats));
	char *vals = d->probe_stats_fd >= 0 ? calloc((size_t)d->ncpus + 1, stride) : NULL;
	uint32_t key = (uint32_t)probe;

	memset(sum, 0, sizeof(*sum));
	if (!vals || stp_mapfd_lookup(d->probe_stats_fd, &key, vals) < 0) {
		free(vals);
		return -1;
	}
	for (int c = 0; c < d->ncpus; c++) {
		const struct stp_probe_stats *p = (const void *)(vals + (size_t)c * stride);

		sum->hits += p->hits;
		sum->run_ns += p->run_ns;
		sum->errors += p->errors;	/* user context's */
		sum->keys_cut += p->keys_cut;
	}
	free(vals);
	return 0;
}

uint64_t stp_data__probe_misses(const struct stp_data *d, int probe)
{
	if (!d || probe < 0 || probe >= d->meta->nprobes || d->prog_fds[probe] < 0)
		return 0;
	return stp_prog_misses(d->prog_fds[probe]);
}
