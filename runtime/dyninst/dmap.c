/*
 * dmap.c - BPF-like maps in a shared segment: the segment (create,
 * attach and its validation, free), arrays, and the entry points, which
 * pass hashes to dmap_hash.c and queues and ring buffers to dmap_ring.c.
 * The layout is described in dmap_int.h.
 */
#ifndef __KERNEL__
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memfd_create, F_ADD_SEALS */
#endif
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#else
#include <linux/random.h>
#endif

#include "dmap_sys.h"
#include "dmap_int.h"

/* What create seals and attach requires: a fixed size, and no seal to come. */
#define DSEG_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
#define DSEG_TMPFS_MAGIC 0x01021994	/* <linux/magic.h>: memfd_create()'s files */

static uint64_t dmap__align(uint64_t n, uint64_t a)
{
	return (n + a - 1) & ~(a - 1);
}

static void dmap__err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* --- types --- */

int dmap_is_hash(uint32_t type)
{
	return type == STP_DMAP_HASH || type == STP_DMAP_PERCPU_HASH || dmap_is_lru(type);
}

int dmap_is_lru(uint32_t type)
{
	return type == STP_DMAP_LRU_HASH || type == STP_DMAP_LRU_PERCPU_HASH;
}

int dmap_is_percpu(uint32_t type)
{
	return type == STP_DMAP_PERCPU_HASH || type == STP_DMAP_PERCPU_ARRAY ||
	       type == STP_DMAP_LRU_PERCPU_HASH;
}

static int dmap__is_array(uint32_t type)
{
	return type == STP_DMAP_ARRAY || type == STP_DMAP_PERCPU_ARRAY;
}

/* --- definitions and layout --- */

static const char *dmap__check_value(const struct stp_dmap_def *d)
{
	if (d->value_size == 0 || d->value_size > STP_DMAP_MAX_VALUE)
		return "value size must be 1 to 1048576 bytes";
	if (dmap_is_percpu(d->type) && d->value_size > STP_DMAP_MAX_PERCPU)
		return "a per-cpu value must be at most 32768 bytes";
	if (d->max_entries == 0 || d->max_entries > STP_DMAP_MAX_ENTRIES)
		return "max_entries must be 1 to 67108864";
	return NULL;
}

/* Why D cannot be a map, or NULL. */
static const char *dmap__check_def(const struct stp_dmap_def *d)
{
	if (d->flags & ~(uint32_t)(STP_DMAP_F_NO_PREALLOC | STP_DMAP_F_MMAPABLE))
		return "unsupported map flags";
	if (dmap_is_hash(d->type) && (d->key_size == 0 || d->key_size > STP_DMAP_MAX_KEY))
		return "a hash key must be 1 to 512 bytes";
	if (dmap__is_array(d->type) && d->key_size != 4)
		return "an array key must be 4 bytes";
	if (dmap_is_hash(d->type) || dmap__is_array(d->type))
		return dmap__check_value(d);
	if (d->type == STP_DMAP_QUEUE)
		return d->key_size ? "a queue has no key" : dmap__check_value(d);
	if (d->type != STP_DMAP_RINGBUF)
		return "unknown map type";
	if (d->key_size || d->value_size)
		return "a ring buffer has no key or value size";
	if (d->max_entries < STP_DMAP_MIN_RING || d->max_entries > STP_DMAP_MAX_RING ||
	    (d->max_entries & (d->max_entries - 1)))
		return "a ring buffer's size must be a power of two from 4096 to 2^30";
	return NULL;
}

static uint32_t dmap__pow2(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* Sizes of a valid definition: every product stays far below 2^64. */
static void dmap__layout(const struct stp_dmap_def *d, uint32_t nslots, struct dmap_layout *l)
{
	memset(l, 0, sizeof(*l));
	/* a slot's value on a cache line of its own: threads write theirs, never a neighbour's line */
	l->stride = (uint32_t)dmap__align(d->value_size, dmap_is_percpu(d->type) ? 64 : 8);
	l->vsize = dmap_is_percpu(d->type) ? nslots * l->stride : l->stride;
	l->kstride = (uint32_t)dmap__align(d->key_size, 8);
	l->elem_size = l->vsize;
	l->data_at = DMAP_META;
	if (dmap_is_hash(d->type)) {
		l->elem_size = sizeof(struct dhash_elem) + l->kstride + l->vsize;
		l->nbuckets = dmap__pow2(d->max_entries);
		l->buckets_at = DMAP_META;
		l->data_at = DMAP_META + dmap__align((uint64_t)l->nbuckets * 4, DMAP_ALIGN);
	}
	if (d->type == STP_DMAP_RINGBUF)
		l->data_len = d->max_entries;
	else
		l->data_len = (uint64_t)d->max_entries * l->elem_size;
	l->len = dmap__align(l->data_at + l->data_len, DMAP_ALIGN);
}

/* The fixed part: header, owners, descriptors; where the first map goes. */
static uint64_t dseg__maps_off(uint32_t nslots, uint32_t nmaps, uint64_t *owners,
			       uint64_t *descs)
{
	*owners = dmap__align(sizeof(struct dseg_hdr), DMAP_ALIGN);
	*descs = *owners + dmap__align((uint64_t)nslots * 4, DMAP_ALIGN);
	return *descs + dmap__align((uint64_t)nmaps * sizeof(struct dmap_desc), DMAP_ALIGN);
}

static struct stp_dmap_def dmap__def_of(const struct dmap_desc *d)
{
	struct stp_dmap_def def = { d->name, d->type, d->key_size, d->value_size,
				    d->max_entries, d->flags };

	return def;
}

static void dmap__desc_of(struct dmap_desc *d, const struct stp_dmap_def *def, uint64_t off,
			  uint64_t len)
{
	memset(d, 0, sizeof(*d));
	strcpy(d->name, def->name);
	d->type = def->type;
	d->key_size = def->key_size;
	d->value_size = def->value_size;
	d->max_entries = def->max_entries;
	d->flags = def->flags;
	d->off = off;
	d->len = len;
}

/* --- this process's view --- */

static struct stp_dseg *dseg__new(uint8_t *base, size_t size, const struct dseg_hdr *h)
{
	struct stp_dseg *s = calloc(1, sizeof(*s) + h->nmaps * sizeof(struct stp_dmap));

	if (!s)
		return NULL;
	s->base = base;
	s->size = size;
	s->fd = -1;
	s->nslots = (int)h->nslots;
	s->nmaps = (int)h->nmaps;
	s->id = h->id;
	s->owners = (uint32_t *)(base + h->owners_off);
	return s;
}

static void dseg__set_map(struct stp_dseg *s, int i, const struct dmap_desc *d,
			  const struct dmap_layout *l)
{
	struct stp_dmap *m = &s->maps[i];

	m->seg = s;
	memcpy(m->name, d->name, sizeof(m->name));
	m->def = dmap__def_of(d);
	m->def.name = m->name;
	m->lay = *l;
	m->area = s->base + d->off;
	m->nslots = (uint32_t)s->nslots;
	m->percpu = dmap_is_percpu(d->type);
}

/* --- create --- */

static int dseg__check_defs(const struct stp_dmap_def *defs, int ndefs, char *err,
			    size_t errlen)
{
	for (int i = 0; i < ndefs; i++) {
		const char *why, *name = defs[i].name;

		if (!name || !*name || strlen(name) >= STP_DMAP_NAME_MAX) {
			dmap__err(err, errlen, "map %d: its name must be 1 to 63 bytes", i);
			return -1;
		}
		for (int j = 0; j < i; j++) {
			if (strcmp(defs[j].name, name) == 0) {
				dmap__err(err, errlen, "map %s: defined twice", name);
				return -1;
			}
		}
		if ((why = dmap__check_def(&defs[i]))) {
			dmap__err(err, errlen, "map %s: %s", name, why);
			return -1;
		}
	}
	return 0;
}

static uint64_t dseg__new_id(void)
{
#ifdef __KERNEL__
	return get_random_u64() | 1;
#else
	uint64_t id;
	struct timespec ts;

	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) == (ssize_t)sizeof(id) && id)
		return id;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec << 32 ^ (uint64_t)ts.tv_nsec ^ (uint64_t)getpid() << 16) | 1;
#endif
}

/* The header and descriptors of a new segment; returns its size (0: too large). */
static uint64_t dseg__plan(const struct stp_dmap_def *defs, int ndefs, int nslots,
			   struct dseg_hdr *h, struct dmap_desc *descs)
{
	uint64_t off;

	memset(h, 0, sizeof(*h));
	h->magic = DMAP_MAGIC;
	h->version = DMAP_VERSION;
	h->hdr_size = sizeof(*h);
	h->id = dseg__new_id();
	h->nslots = (uint32_t)nslots;
	h->nmaps = (uint32_t)ndefs;
	h->desc_size = sizeof(struct dmap_desc);
	off = dseg__maps_off(h->nslots, h->nmaps, &h->owners_off, &h->descs_off);
	for (int i = 0; i < ndefs; i++) {
		struct dmap_layout l;

		dmap__layout(&defs[i], h->nslots, &l);
		dmap__desc_of(&descs[i], &defs[i], off, l.len);
		off += l.len;
		if (off > DMAP_MAX_SIZE)
			return 0;
	}
	h->size = off;
	return off;
}

static struct stp_dseg *dseg__build(const struct dseg_hdr *h, const struct dmap_desc *descs,
				    uint8_t *base, int fd)
{
	struct stp_dseg *s = dseg__new(base, h->size, h);

	if (!s)
		return NULL;
	s->fd = fd;
	memcpy(base + h->descs_off, descs, h->nmaps * sizeof(*descs));
	for (uint32_t i = 0; i < h->nmaps; i++) {
		struct stp_dmap_def d = dmap__def_of(&descs[i]);
		struct dmap_layout l;

		dmap__layout(&d, h->nslots, &l);
		dseg__set_map(s, (int)i, &descs[i], &l);
	}
	memcpy(base, h, sizeof(*h));
	dmap_seg_register(s);
	return s;
}

/*
 * The header and descriptors (*DESCS, calloc'd) of a segment of checked
 * definitions; its size, or 0 with the reason in ERR.
 */
static uint64_t dseg__plan_checked(const struct stp_dmap_def *defs, int ndefs, int nslots,
				   struct dseg_hdr *h, struct dmap_desc **descs, char *err,
				   size_t errlen)
{
	*descs = NULL;
	if (nslots < 1 || nslots > STP_DMAP_MAX_SLOTS || ndefs < 0 || ndefs > STP_DMAP_MAX_MAPS) {
		dmap__err(err, errlen, "%d slots and %d maps: want 1 to %d slots, at most %d maps",
			  nslots, ndefs, STP_DMAP_MAX_SLOTS, STP_DMAP_MAX_MAPS);
		return 0;
	}
	if (dseg__check_defs(defs, ndefs, err, errlen) < 0)
		return 0;
	*descs = calloc((size_t)ndefs + 1, sizeof(**descs));
	if (!*descs || !dseg__plan(defs, ndefs, nslots, h, *descs)) {
		dmap__err(err, errlen, *descs ? "the maps need more than 1 TiB" : "out of memory");
		free(*descs);
		*descs = NULL;
		return 0;
	}
	return h->size;
}

uint64_t stp_dseg__size(const struct stp_dmap_def *defs, int ndefs, int nslots, char *err,
			size_t errlen)
{
	struct dseg_hdr h;
	struct dmap_desc *descs;
	uint64_t size = dseg__plan_checked(defs, ndefs, nslots, &h, &descs, err, errlen);

	free(descs);
	return size;
}

struct stp_dseg *stp_dseg__create_at(void *mem, uint64_t size, const struct stp_dmap_def *defs,
				     int ndefs, int nslots, char *err, size_t errlen)
{
	struct dseg_hdr h;
	struct dmap_desc *descs;
	struct stp_dseg *s = NULL;
	uint64_t need = dseg__plan_checked(defs, ndefs, nslots, &h, &descs, err, errlen);

	if (need && need != size)
		dmap__err(err, errlen, "the maps need %llu bytes, not %llu",
			  (unsigned long long)need, (unsigned long long)size);
	else if (need && !(s = dseg__build(&h, descs, mem, -1)))
		dmap__err(err, errlen, "out of memory");
	if (s)
		s->borrowed = 1;
	free(descs);
	return s;
}

#ifndef __KERNEL__
/* A sealed, owner-only memfd of SIZE bytes, mapped. */
static int dseg__memfd(uint64_t size, uint8_t **base, char *err, size_t errlen)
{
	int fd = memfd_create("pcp-stap-maps", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0) {
		dmap__err(err, errlen, "cannot create the map segment: %s", strerror(errno));
		return -1;
	}
	if (fchmod(fd, 0600) < 0 || ftruncate(fd, (off_t)size) < 0 ||
	    fcntl(fd, F_ADD_SEALS, DSEG_SEALS) < 0) {
		dmap__err(err, errlen, "cannot size the map segment (%llu bytes): %s",
			  (unsigned long long)size, strerror(errno));
		close(fd);
		return -1;
	}
	*base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*base == MAP_FAILED) {
		dmap__err(err, errlen, "cannot map the map segment (%llu bytes): %s",
			  (unsigned long long)size, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

struct stp_dseg *stp_dseg__create(const struct stp_dmap_def *defs, int ndefs, int nslots,
				  char *err, size_t errlen)
{
	struct dseg_hdr h;
	struct dmap_desc *descs;
	struct stp_dseg *s = NULL;
	uint8_t *base;
	int fd;

	if (!dseg__plan_checked(defs, ndefs, nslots, &h, &descs, err, errlen))
		return NULL;
	fd = dseg__memfd(h.size, &base, err, errlen);
	if (fd >= 0 && !(s = dseg__build(&h, descs, base, fd))) {
		dmap__err(err, errlen, "out of memory");
		munmap(base, h.size);
		close(fd);
	}
	free(descs);
	return s;
}
#endif

#ifndef __KERNEL__
/* --- attach --- */

/*
 * A mapping of FD's whole file, which must be a memfd on tmpfs (a
 * hugetlbfs one could fault with SIGBUS), sealed as create seals it.  The
 * seals are read first: once shrinking and growing are sealed the size
 * that fstat then gives is the size for good, so no page of the mapping
 * can go away under a reader.
 */
static uint8_t *dseg__map_fd(int fd, int prot, size_t *size, char *err, size_t errlen)
{
	int seals = fcntl(fd, F_GET_SEALS);
	struct statfs sf;
	struct stat st;
	uint8_t *base;

	if (seals < 0 || (seals & DSEG_SEALS) != DSEG_SEALS || fstatfs(fd, &sf) < 0 ||
	    sf.f_type != DSEG_TMPFS_MAGIC) {
		dmap__err(err, errlen, "not a map segment: not a memfd sealed against shrinking, "
			  "growing and further seals");
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		dmap__err(err, errlen, "cannot examine the map segment: %s", strerror(errno));
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(struct dseg_hdr) ||
	    (uint64_t)st.st_size > DMAP_MAX_SIZE) {
		dmap__err(err, errlen, "not a map segment: %lld bytes", (long long)st.st_size);
		return NULL;
	}
	*size = (size_t)st.st_size;
	base = mmap(NULL, *size, prot, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		dmap__err(err, errlen, "cannot map the map segment: %s", strerror(errno));
		return NULL;
	}
	return base;
}

static const char *dseg__check_hdr(const struct dseg_hdr *h, size_t size)
{
	uint64_t owners, descs;

	if (h->magic != DMAP_MAGIC)
		return "not a map segment: bad magic";
	if (h->version != DMAP_VERSION)
		return "map segment of another version";
	if (h->hdr_size != sizeof(*h) || h->desc_size != sizeof(struct dmap_desc))
		return "corrupt map segment: header or descriptor size";
	if (h->size != size)
		return "corrupt map segment: its size is not the file's (truncated?)";
	if (h->nslots < 1 || h->nslots > STP_DMAP_MAX_SLOTS || h->nmaps > STP_DMAP_MAX_MAPS)
		return "corrupt map segment: slot or map count out of range";
	if (dseg__maps_off(h->nslots, h->nmaps, &owners, &descs) > size)
		return "corrupt map segment: descriptors past its end";
	if (h->owners_off != owners || h->descs_off != descs)
		return "corrupt map segment: header offsets";
	if (h->id == 0)	/* 0 is no segment's: a reader's (stp_dseg__attach_reader) */
		return "corrupt map segment: no id";
	return NULL;
}

/* Why descriptor D, which should start at OFF, is refused; NULL when it is not. */
static const char *dseg__check_desc(const struct dmap_desc *d, uint64_t off, size_t size,
				    uint32_t nslots, struct dmap_layout *l)
{
	struct stp_dmap_def def = dmap__def_of(d);
	const char *why;

	if (!memchr(d->name, '\0', sizeof(d->name)) || !d->name[0])
		return "corrupt map segment: a map name";
	if ((why = dmap__check_def(&def)))
		return why;
	dmap__layout(&def, nslots, l);
	if (d->off != off || d->len != l->len)
		return "corrupt map segment: a map's offset or size";
	if (off > size || l->len > size - off)
		return "corrupt map segment: a map past its end";
	return NULL;
}

static struct stp_dseg *dseg__validate(uint8_t *base, size_t size, char *err, size_t errlen)
{
	struct dseg_hdr h;
	const char *why;
	struct stp_dseg *s;
	uint64_t off, owners, descs;

	memcpy(&h, base, sizeof(h));
	if ((why = dseg__check_hdr(&h, size))) {
		dmap__err(err, errlen, "%s", why);
		return NULL;
	}
	if (!(s = dseg__new(base, size, &h))) {
		dmap__err(err, errlen, "out of memory");
		return NULL;
	}
	off = dseg__maps_off(h.nslots, h.nmaps, &owners, &descs);
	for (uint32_t i = 0; i < h.nmaps; i++) {
		struct dmap_desc d;
		struct dmap_layout l;

		memcpy(&d, base + h.descs_off + i * sizeof(d), sizeof(d));
		if ((why = dseg__check_desc(&d, off, size, h.nslots, &l))) {
			dmap__err(err, errlen, "map %u: %s", i, why);
			free(s);
			return NULL;
		}
		dseg__set_map(s, (int)i, &d, &l);
		off += l.len;
	}
	if (off != size) {
		dmap__err(err, errlen, "corrupt map segment: %llu bytes after its maps",
			  (unsigned long long)(size - off));
		free(s);
		return NULL;
	}
	return s;
}

/* FD's segment, mapped (PROT) and validated; registered by the caller when it may hold slots. */
static struct stp_dseg *dseg__open(int fd, int prot, char *err, size_t errlen)
{
	struct stp_dseg *s;
	uint8_t *base;
	size_t size;

	if (!(base = dseg__map_fd(fd, prot, &size, err, errlen)))
		return NULL;
	if (!(s = dseg__validate(base, size, err, errlen)))
		munmap(base, size);
	return s;
}

struct stp_dseg *stp_dseg__attach(int fd, char *err, size_t errlen)
{
	struct stp_dseg *s = dseg__open(fd, PROT_READ | PROT_WRITE, err, errlen);

	if (s)
		dmap_seg_register(s);
	return s;
}

/*
 * A reader maps the segment read-only: it takes no lock (it copies hash
 * maps and queues between their sequence counts, dmap_seq_read), claims
 * no slot and consumes no ring, so a write through its mapping would be
 * a bug, and faults.  Its safety from the owner, who may rewrite any
 * byte at any moment, comes from copying its layout at attach, reading
 * every word that changes once and checking it, bounding every walk by
 * the map's size and every wait by the patience, and refusing the
 * writes that a reader has no business making (-EPERM).
 */
struct stp_dseg *stp_dseg__attach_reader(int fd, unsigned int patience_us, char *err,
					 size_t errlen)
{
	struct stp_dseg *s = dseg__open(fd, PROT_READ, err, errlen);

	if (!s)
		return NULL;
	s->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (s->fd < 0) {
		dmap__err(err, errlen, "cannot keep the map segment's descriptor: %s",
			  strerror(errno));
		munmap(s->base, s->size);
		free(s);
		return NULL;
	}
	s->reader = 1;
	s->patience_us = patience_us;
	s->id = 0;	/* no slot this thread holds in another mapping of it applies here */
	return s;
}

/* A segment in memory the caller mapped: the runner's (READER 0) or an untrusting reader's. */
static struct stp_dseg *dseg__attach_mem(void *base, size_t size, int fd, int reader,
					 unsigned int patience_us, char *err, size_t errlen)
{
	struct stp_dseg *s;

	if (size < sizeof(struct dseg_hdr)) {
		dmap__err(err, errlen, "not a map segment: %llu bytes", (unsigned long long)size);
		return NULL;
	}
	s = dseg__validate(base, size, err, errlen);
	if (!s)
		return NULL;
	s->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (s->fd < 0) {
		dmap__err(err, errlen, "cannot keep the segment's descriptor: %s", strerror(errno));
		free(s);
		return NULL;
	}
	if (!reader) {
		dmap_seg_register(s);
		return s;
	}
	s->reader = 1;
	s->patience_us = patience_us;
	s->id = 0;
	return s;
}

struct stp_dseg *stp_dseg__attach_mem(void *base, size_t size, int fd, char *err,
				      size_t errlen)
{
	return dseg__attach_mem(base, size, fd, 0, 0, err, errlen);
}

struct stp_dseg *stp_dseg__attach_mem_reader(void *base, size_t size, int fd,
					     unsigned int patience_us, char *err, size_t errlen)
{
	return dseg__attach_mem(base, size, fd, 1, patience_us, err, errlen);
}
#endif /* !__KERNEL__ */

void stp_dseg__free(struct stp_dseg *s)
{
	if (!s)
		return;
	if (!s->reader)
		dmap_seg_unregister(s);
#ifndef __KERNEL__
	if (!s->borrowed)
		munmap(s->base, s->size);
	if (s->fd >= 0)
		close(s->fd);
#endif
	free(s);
}

void stp_dseg__reader_stats(const struct stp_dseg *s, uint64_t *retries, uint64_t *busy)
{
	*retries = s->seq_retries;
	*busy = s->seq_busy;
}

int stp_dseg__fd(const struct stp_dseg *s)
{
	return s->fd;
}

int stp_dseg__nslots(const struct stp_dseg *s)
{
	return s->nslots;
}

int stp_dseg__nmaps(const struct stp_dseg *s)
{
	return s->nmaps;
}

struct stp_dmap *stp_dseg__map(struct stp_dseg *s, const char *name)
{
	for (int i = 0; i < s->nmaps; i++)
		if (strcmp(s->maps[i].name, name) == 0)
			return &s->maps[i];
	return NULL;
}

struct stp_dmap *stp_dseg__map_at(struct stp_dseg *s, int index)
{
	return index >= 0 && index < s->nmaps ? &s->maps[index] : NULL;
}

const struct stp_dmap_def *stp_dmap__def(const struct stp_dmap *m)
{
	return &m->def;
}

/* --- arrays --- */

/* The value of index *KEY (SLOT's, or all slots' from 0), or NULL past the end. */
static uint8_t *darray__elem(struct stp_dmap *m, const void *key, int slot)
{
	uint32_t i;

	memcpy(&i, key, sizeof(i));
	if (i >= m->def.max_entries)
		return NULL;
	return m->area + m->lay.data_at + (uint64_t)i * m->lay.vsize +
	       (slot > 0 ? (uint64_t)slot * m->lay.stride : 0);
}

/* Copy VAL into index *KEY: SLOT's value, or the whole (all slots) when SLOT < 0. */
static int darray__update(struct stp_dmap *m, const void *key, const void *val,
			  uint64_t flags, int slot)
{
	uint8_t *v = darray__elem(m, key, slot);

	if (flags > STP_DMAP_EXIST)
		return -EINVAL;
	if (!v)
		return -E2BIG;
	if (flags == STP_DMAP_NOEXIST)
		return -EEXIST;
	if (slot < 0 && m->percpu)
		dmap_slots_in(m, v, val);
	else
		memcpy(v, val, m->def.value_size);
	return 0;
}

static long darray__for_each(struct stp_dmap *m, stp_dmap_each_fn *cb, void *ctx, int slot)
{
	long n = 0;

	for (uint32_t i = 0; i < m->def.max_entries; i++) {
		uint32_t key = i;	/* the callback's to scribble on */

		n++;
		if (cb(m, &key, darray__elem(m, &i, slot), ctx))
			break;
	}
	return n;
}

static int darray__next_key(struct stp_dmap *m, const void *key, void *next)
{
	uint32_t i = 0;

	if (key) {
		memcpy(&i, key, sizeof(i));
		i = i >= m->def.max_entries ? 0 : i + 1;
	}
	if (i >= m->def.max_entries)
		return -ENOENT;
	memcpy(next, &i, sizeof(i));
	return 0;
}

/* --- the probe side --- */

/* This thread's slot for a per-CPU map (0 for the others), or -1. */
static int dmap__slot(struct stp_dmap *m)
{
	return m->percpu ? stp_dseg__slot(m->seg) : 0;
}

static void *dmap__lookup_at(struct stp_dmap *m, const void *key, int slot)
{
	if (dmap__is_array(m->def.type))
		return darray__elem(m, key, slot);
	if (dmap_is_hash(m->def.type))
		return dmap_hash_lookup(m, key, slot);
	return NULL;
}

void dmap_slots_out(const struct stp_dmap *m, void *out, const uint8_t *in)
{
	uint32_t ostride = (uint32_t)dmap__align(m->def.value_size, 8);

	for (uint32_t s = 0; s < m->nslots; s++)
		memcpy((uint8_t *)out + (uint64_t)s * ostride, in + (uint64_t)s * m->lay.stride,
		       ostride);
}

void dmap_slots_in(const struct stp_dmap *m, uint8_t *out, const void *in)
{
	uint32_t ostride = (uint32_t)dmap__align(m->def.value_size, 8);

	for (uint32_t s = 0; s < m->nslots; s++)
		memcpy(out + (uint64_t)s * m->lay.stride, (const uint8_t *)in + (uint64_t)s * ostride,
		       ostride);
}

uint8_t *stp_dmap__array(struct stp_dmap *m, uint64_t *vsize, uint64_t *stride)
{
	if (!dmap__is_array(m->def.type))
		return NULL;
	*vsize = m->lay.vsize;
	*stride = m->lay.stride;
	return m->area + m->lay.data_at;
}

void *stp_dmap__lookup(struct stp_dmap *m, const void *key)
{
	int slot = dmap__slot(m);

	return slot < 0 ? NULL : dmap__lookup_at(m, key, slot);
}

void *stp_dmap__lookup_slot(struct stp_dmap *m, const void *key, int slot)
{
	if (!m->percpu || slot < 0 || slot >= (int)m->nslots)
		return NULL;
	return dmap__lookup_at(m, key, slot);
}

/* Update at SLOT (>= 0: one slot's value; < 0: the whole value). */
static int dmap__update_at(struct stp_dmap *m, const void *key, const void *val,
			   uint64_t flags, int slot)
{
	if (dmap__is_array(m->def.type))
		return darray__update(m, key, val, flags, slot);
	if (dmap_is_hash(m->def.type))
		return dmap_hash_update(m, key, val, flags, slot);
	return -EINVAL;
}

int stp_dmap__update(struct stp_dmap *m, const void *key, const void *val, uint64_t flags)
{
	int slot;

	if (m->seg->reader)
		return -EPERM;
	if ((slot = dmap__slot(m)) < 0)
		return -EBUSY;
	return dmap__update_at(m, key, val, flags, m->percpu ? slot : -1);
}

int stp_dmap__delete(struct stp_dmap *m, const void *key)
{
	if (m->seg->reader)
		return -EPERM;
	return dmap_is_hash(m->def.type) ? dmap_hash_delete(m, key) : -EINVAL;
}

int stp_dmap__push(struct stp_dmap *m, const void *val, uint64_t flags)
{
	if (m->seg->reader)
		return -EPERM;
	return m->def.type == STP_DMAP_QUEUE ? dmap_queue_push(m, val, flags) : -EINVAL;
}

int stp_dmap__pop(struct stp_dmap *m, void *val)
{
	if (m->seg->reader)
		return -EPERM;
	return m->def.type == STP_DMAP_QUEUE ? dmap_queue_pop(m, val, 1) : -EINVAL;
}

long stp_dmap__for_each(struct stp_dmap *m, stp_dmap_each_fn *cb, void *ctx)
{
	int slot;

	if (!dmap__is_array(m->def.type) && !dmap_is_hash(m->def.type))
		return -EINVAL;
	if ((slot = dmap__slot(m)) < 0)
		return -EBUSY;
	if (dmap__is_array(m->def.type))
		return darray__for_each(m, cb, ctx, slot);
	return dmap_hash_for_each(m, cb, ctx, slot);
}

void *stp_dmap__reserve(struct stp_dmap *m, uint32_t size)
{
	return m->def.type == STP_DMAP_RINGBUF ? dmap_ring_reserve(m, size) : NULL;
}

void stp_dmap__submit(struct stp_dmap *m, void *rec)
{
	if (m->def.type == STP_DMAP_RINGBUF)
		dmap_ring_commit(m, rec, 0);
}

void stp_dmap__discard(struct stp_dmap *m, void *rec)
{
	if (m->def.type == STP_DMAP_RINGBUF)
		dmap_ring_commit(m, rec, STP_DMAP_RB_DISCARD);
}

int stp_dmap__output(struct stp_dmap *m, const void *data, uint32_t size)
{
	void *rec;

	if (m->def.type != STP_DMAP_RINGBUF)
		return -EINVAL;
	if ((uint64_t)size + STP_DMAP_RB_HDR > m->def.max_entries / 2)
		return -E2BIG;
	if (!(rec = dmap_ring_reserve(m, size)))
		return -EAGAIN;
	memcpy(rec, data, size);
	dmap_ring_commit(m, rec, 0);
	return 0;
}

/* --- the reader side --- */

int stp_dmap__read(struct stp_dmap *m, const void *key, void *val)
{
	const uint8_t *v;

	if (m->def.type == STP_DMAP_QUEUE)
		return dmap_queue_pop(m, val, 0);
	if (dmap_is_hash(m->def.type))
		return dmap_hash_read(m, key, val);
	if (!dmap__is_array(m->def.type))
		return -EINVAL;
	if (!(v = darray__elem(m, key, 0)))
		return -ENOENT;
	if (m->percpu)
		dmap_slots_out(m, val, v);
	else
		memcpy(val, v, m->def.value_size);
	return 0;
}

int stp_dmap__write(struct stp_dmap *m, const void *key, const void *val, uint64_t flags)
{
	if (m->seg->reader)
		return -EPERM;
	if (m->def.type == STP_DMAP_QUEUE)
		return dmap_queue_push(m, val, flags);
	return dmap__update_at(m, key, val, flags, -1);
}

int stp_dmap__next_key(struct stp_dmap *m, const void *key, void *next)
{
	if (dmap__is_array(m->def.type))
		return darray__next_key(m, key, next);
	if (dmap_is_hash(m->def.type))
		return dmap_hash_next_key(m, key, next);
	return -EINVAL;
}

void *stp_dmap__values(struct stp_dmap *m, size_t *len)
{
	if (!dmap__is_array(m->def.type))
		return NULL;
	if (len)
		*len = m->lay.data_len;
	return m->area + m->lay.data_at;
}

int stp_dmap__consume(struct stp_dmap *m, int (*cb)(void *ctx, void *data, size_t size),
		      void *ctx)
{
	if (m->seg->reader)	/* moving the consumer position is a write */
		return -EPERM;
	return m->def.type == STP_DMAP_RINGBUF ? dmap_ring_consume(m, cb, ctx) : -EINVAL;
}
