/*
 * patch_mem.c - this process's address space, for the patcher.
 *
 *   maps	/proc/self/maps, sorted: protections of the code to patch,
 *		and the gaps where trampolines can go
 *   chunks	up to 1 MB within 2 GB of a site, mapped RW with
 *		MAP_FIXED_NOREPLACE in a gap (away from [heap]'s and [stack]'s
 *		growth), filled with the stubs of one install, sealed RX; never
 *		unmapped, since a thread may be inside a trampoline at any time
 *   records	the per-site struct patch_rec the trampolines read, bump-
 *		allocated from anonymous pages that are never unmapped either
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "patch_int.h"

#define MEM_PAGE	4096ul
#define MEM_CHUNK	(1ul << 20)
#define MEM_LOWEST	(1ul << 20)		/* nothing below 1 MB */
#define MEM_HIGHEST	0x7ffffffff000ul	/* the 47-bit user address space */
#define MEM_GROWTH	(256ul << 20)		/* left free after [heap], before [stack] */
#define MEM_TRIES	8
#define MEM_RECORDS	(64ul << 10)

/* ---- /proc/self/maps ---- */

static int maps__prot(const char *perms)
{
	return (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
	       (perms[2] == 'x' ? PROT_EXEC : 0);
}

static int maps__push(struct patch_maps *m, int *cap, const struct patch_map *e)
{
	if (m->n == *cap) {
		int ncap = *cap ? *cap * 2 : 64;
		struct patch_map *v = realloc(m->v, ncap * sizeof(*v));

		if (!v)
			return -1;
		m->v = v;
		*cap = ncap;
	}
	m->v[m->n++] = *e;
	return 0;
}

/* Parse one line: "lo-hi perms offset dev inode [path]". */
static int maps__line(const char *line, struct patch_map *e)
{
	unsigned long lo, hi;
	char perms[8], path[16] = "";

	if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %15s", &lo, &hi, perms, path) < 3)
		return -1;
	e->lo = lo;
	e->hi = hi;
	e->prot = maps__prot(perms);
	e->kind = !strcmp(path, "[heap]") ? PATCH_MAP_HEAP :
		  !strcmp(path, "[stack]") ? PATCH_MAP_STACK : PATCH_MAP_OTHER;
	return 0;
}

/* Read /proc/self/maps into M (freed first).  0, or -1 with errno. */
int patch_maps__load(struct patch_maps *m)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char *line = NULL;
	size_t len = 0;
	int cap = 0, r = 0;
	struct patch_map e;

	patch_maps__free(m);
	if (!f)
		return -1;
	while (r == 0 && getline(&line, &len, f) > 0)
		if (maps__line(line, &e) == 0)
			r = maps__push(m, &cap, &e);
	free(line);
	fclose(f);
	return r;
}

void patch_maps__free(struct patch_maps *m)
{
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

/* The mapping holding ADDR, or NULL. */
const struct patch_map *patch_maps__find(const struct patch_maps *m, uintptr_t addr)
{
	int lo = 0, hi = m->n;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (addr < m->v[mid].lo)
			hi = mid;
		else if (addr >= m->v[mid].hi)
			lo = mid + 1;
		else
			return &m->v[mid];
	}
	return NULL;
}

/* How many bytes from ADDR on are readable without a hole. */
size_t patch_maps__readable(const struct patch_maps *m, uintptr_t addr)
{
	const struct patch_map *e = patch_maps__find(m, addr);
	uintptr_t end = addr;

	for (; e && e < m->v + m->n && e->lo <= end && (e->prot & PROT_READ); e++)
		end = e->hi;
	return end - addr;
}

/* ---- chunks of trampolines ---- */

/* The base in [G0, G1) for SIZE bytes within [LO, HI] nearest to NEAR; 0 when none. */
static uintptr_t gap__place(uintptr_t g0, uintptr_t g1, uintptr_t lo, uintptr_t hi, uintptr_t near,
			    size_t size)
{
	uintptr_t b0 = g0 > lo ? g0 : lo, top = g1 < hi ? g1 : hi, b1;

	b0 = (b0 + MEM_PAGE - 1) & ~(MEM_PAGE - 1);
	if (top < size || top - size < b0)
		return 0;
	b1 = (top - size) & ~(MEM_PAGE - 1);
	near &= ~(MEM_PAGE - 1);
	return near < b0 ? b0 : near > b1 ? b1 : near;
}

static uintptr_t distance(uintptr_t a, uintptr_t b)
{
	return a > b ? a - b : b - a;
}

/* Where SIZE bytes fit in [LO, HI] nearest to NEAR, according to M; 0 when nowhere. */
static uintptr_t maps__gap(const struct patch_maps *m, uintptr_t near, uintptr_t lo, uintptr_t hi,
			   size_t size)
{
	uintptr_t best = 0;

	for (int k = 0; k <= m->n; k++) {
		const struct patch_map *prev = k ? &m->v[k - 1] : NULL,
				       *next = k < m->n ? &m->v[k] : NULL;
		uintptr_t g0 = prev ? prev->hi : MEM_LOWEST, g1 = next ? next->lo : MEM_HIGHEST, at;

		if (prev && prev->kind == PATCH_MAP_HEAP)
			g0 = g0 + MEM_GROWTH;
		if (next && next->kind == PATCH_MAP_STACK)
			g1 = g1 > MEM_GROWTH ? g1 - MEM_GROWTH : 0;
		g0 = g0 < MEM_LOWEST ? MEM_LOWEST : g0;
		g1 = g1 > MEM_HIGHEST ? MEM_HIGHEST : g1;
		if (g0 >= g1)
			continue;
		at = gap__place(g0, g1, lo, hi, near, size);
		if (at && (!best || distance(at, near) < distance(best, near)))
			best = at;
	}
	return best;
}

/* Map SIZE bytes RW in [LO, HI] near NEAR.  The address, or 0. */
static uintptr_t mem__map_near(uintptr_t near, uintptr_t lo, uintptr_t hi, size_t size)
{
	struct patch_maps m = { 0 };
	uintptr_t at = 0;

	for (int tries = 0; tries < MEM_TRIES && patch_maps__load(&m) == 0; tries++) {
		void *p;

		at = maps__gap(&m, near, lo, hi, size);
		if (!at)
			break;
		p = mmap((void *)at, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == (void *)at)
			break;
		if (p != MAP_FAILED)
			munmap(p, size);	/* a kernel without MAP_FIXED_NOREPLACE */
		at = 0;
		if (p != MAP_FAILED || errno != EEXIST)
			break;
	}
	patch_maps__free(&m);
	return at;
}

/*
 * A chunk of CS where a stub of up to PATCH_STUB_MAX bytes fits, wholly
 * within [LO, HI]; when none has room, a new one near NEAR, of WANT bytes
 * (rounded to pages, at most MEM_CHUNK).  NULL when no address range is
 * free there.
 */
struct patch_chunk *patch_chunks__reserve(struct patch_chunks *cs, uintptr_t near, uintptr_t lo,
					  uintptr_t hi, size_t want)
{
	size_t size = (want + MEM_PAGE - 1) & ~(MEM_PAGE - 1);
	struct patch_chunk *c;
	uintptr_t base;

	for (int k = 0; k < cs->n; k++) {
		c = &cs->v[k];
		if (c->base >= lo && c->base + c->size <= hi && c->size - c->used >= PATCH_STUB_MAX)
			return c;
	}
	if (cs->n == cs->cap) {
		int ncap = cs->cap ? cs->cap * 2 : 8;
		struct patch_chunk *v = realloc(cs->v, ncap * sizeof(*v));

		if (!v)
			return NULL;
		cs->v = v;
		cs->cap = ncap;
	}
	size = size < MEM_PAGE ? MEM_PAGE : size > MEM_CHUNK ? MEM_CHUNK : size;
	base = mem__map_near(near, lo, hi, size);
	if (!base)
		return NULL;
	c = &cs->v[cs->n++];
	*c = (struct patch_chunk){ .base = base, .size = size };
	return c;
}

/* Make every chunk of CS executable, and no longer writable.  0, or -1 with errno. */
int patch_chunks__seal(struct patch_chunks *cs)
{
	for (int k = 0; k < cs->n; k++)
		if (mprotect((void *)cs->v[k].base, cs->v[k].size, PROT_READ | PROT_EXEC) != 0)
			return -1;
	return 0;
}

/* Forget CS's chunks; they stay mapped. */
void patch_chunks__free(struct patch_chunks *cs)
{
	free(cs->v);
	memset(cs, 0, sizeof(*cs));
}

/* ---- records ---- */

static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *rec_next;
static size_t rec_left;

/* SIZE zeroed bytes, 64-byte aligned, for the life of the process; NULL when out of memory. */
void *patch_mem__record(size_t size)
{
	void *r = NULL;

	size = (size + 63) & ~(size_t)63;
	pthread_mutex_lock(&rec_lock);
	if (size > rec_left) {
		size_t n = size > MEM_RECORDS ? size : MEM_RECORDS;
		void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p != MAP_FAILED) {
			rec_next = p;
			rec_left = n;
		}
	}
	if (size <= rec_left) {
		r = rec_next;
		rec_next += size;
		rec_left -= size;
	}
	pthread_mutex_unlock(&rec_lock);
	return r;
}
