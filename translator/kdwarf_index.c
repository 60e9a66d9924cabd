/*
 * kdwarf_index.c - the units of a kernel's DWARF that define each
 * function name (kdwarf_index.h).
 *
 * The table, in a file of the cache or in memory, in this machine's byte
 * order (the cache is this machine's):
 *
 *	struct head			magic, counts, the whole size, a checksum
 *	struct name[names]		sorted by their text (strcmp)
 *	uint64_t unit[units]		each name's units: from NAME.first, NAME.count
 *	char text[]			the names, each ended by '\0'
 */
#include <fcntl.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "arena.h"
#include "cache.h"
#include "hmap.h"
#include "kdwarf_index.h"

#define KINDEX_MAGIC "PMSTKX01"

struct head {
	char magic[8];
	uint32_t names, units;
	uint64_t size;
	uint64_t sum;		/* FNV-1a of what follows the head */
};

struct name {
	uint32_t text, first, count;
};

struct kindex {
	const unsigned char *base;
	const struct head *head;
	const struct name *names;
	const uint64_t *units;
	const char *text;
	uint64_t text_size;
};

/* Where the parts of a table of NAMES names and UNITS units start, and its size. */
static uint64_t layout(uint32_t names, uint32_t units, uint64_t text_size, uint64_t *units_at,
		       uint64_t *text_at)
{
	uint64_t names_end = sizeof(struct head) + (uint64_t)names * sizeof(struct name);

	*units_at = (names_end + 7) & ~(uint64_t)7;
	*text_at = *units_at + (uint64_t)units * sizeof(uint64_t);
	return *text_at + text_size;
}

/* FNV-1a over the table's bytes after its head: a damaged file is made again. */
static uint64_t checksum(const unsigned char *base, uint64_t size)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (uint64_t i = sizeof(struct head); i < size; i++)
		h = (h ^ base[i]) * 0x100000001b3ULL;
	return h;
}

/* IX over the table at BASE of SIZE bytes, when it is whole; else false. */
static bool take_table(struct kindex *ix, const void *base, uint64_t size)
{
	const struct head *h = base;
	uint64_t units_at, text_at;

	if (size < sizeof(*h) || memcmp(h->magic, KINDEX_MAGIC, 8) != 0 || h->size != size ||
	    layout(h->names, h->units, 0, &units_at, &text_at) > size ||
	    h->sum != checksum(base, size))
		return false;
	ix->base = base;
	ix->head = h;
	ix->names = (const struct name *)(ix->base + sizeof(*h));
	ix->units = (const uint64_t *)(ix->base + units_at);
	ix->text = (const char *)ix->base + text_at;
	ix->text_size = size - text_at;
	if (ix->text_size && ix->text[ix->text_size - 1] != '\0')
		return false;
	for (uint32_t i = 0; i < h->names; i++)
		if (ix->names[i].text >= ix->text_size ||
		    (uint64_t)ix->names[i].first + ix->names[i].count > h->units)
			return false;
	return true;
}

/* ---- making it ---- */

struct maker {
	struct hmap names;	/* name -> struct units * */
	uint64_t unit;		/* the unit being walked */
	uint32_t refs;
	uint64_t text_size;
};

struct units {
	uint64_t last;
	struct vec offs;	/* uintptr_t */
};

static int take_function(Dwarf_Die *die, void *arg)
{
	struct maker *m = arg;
	const char *name = dwarf_diename(die);
	struct units *u;

	if (!name)
		return DWARF_CB_OK;
	if (!(u = hmap_get(&m->names, name))) {
		u = ARENA_NEW(struct units);
		u->last = UINT64_MAX;
		hmap_put(&m->names, arena_strdup(name), u);
		m->text_size += strlen(name) + 1;
	}
	if (u->last != m->unit) {	/* once per unit (an inline's DIE and its code's) */
		u->last = m->unit;
		vec_push(&u->offs, (void *)(uintptr_t)m->unit);
		m->refs++;
	}
	return DWARF_CB_OK;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* DW's table, in memory (malloc'd): one walk of every unit's functions. */
static void *make_table(Dwarf *dw, uint64_t *size)
{
	struct maker m = { .names = { .str_keys = true } };
	Dwarf_Off off = 0, next;
	size_t hsize;
	const char **sorted;
	uint64_t units_at, text_at, text = 0;
	uint32_t n = 0, ref = 0;
	unsigned char *t;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		m.unit = off + hsize;
		if (dwarf_offdie(dw, off + hsize, &cu))
			dwarf_getfuncs(&cu, take_function, &m, 0);
		off = next;
	}
	sorted = arena_alloc((size_t)m.names.len * sizeof(*sorted) + 1);
	for (int i = 0; i < m.names.cap; i++)
		if (m.names.slots[i].key)
			sorted[n++] = m.names.slots[i].key;
	qsort(sorted, n, sizeof(*sorted), by_text);
	*size = layout(n, m.refs, m.text_size, &units_at, &text_at);
	t = calloc(1, *size);
	memcpy(((struct head *)t)->magic, KINDEX_MAGIC, 8);
	((struct head *)t)->names = n;
	((struct head *)t)->units = m.refs;
	((struct head *)t)->size = *size;
	for (uint32_t i = 0; i < n; i++) {
		struct units *u = hmap_get(&m.names, sorted[i]);
		struct name *nm = (struct name *)(t + sizeof(struct head)) + i;

		*nm = (struct name){ .text = (uint32_t)text, .first = ref, .count = (uint32_t)u->offs.len };
		for (int j = 0; j < u->offs.len; j++)
			((uint64_t *)(t + units_at))[ref++] = (uintptr_t)VEC_AT(&u->offs, j);
		memcpy(t + text_at + text, sorted[i], strlen(sorted[i]) + 1);
		text += strlen(sorted[i]) + 1;
	}
	((struct head *)t)->sum = checksum(t, *size);
	return t;
}

/* ---- keeping it ---- */

/* The table at PATH, mapped, when it is whole. */
static bool load(struct kindex *ix, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *p;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || st.st_size <= 0 ||
	    (p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		close(fd);
		return false;
	}
	close(fd);
	if (take_table(ix, p, (uint64_t)st.st_size)) {
		utimensat(AT_FDCWD, path, NULL, 0);	/* used: kept by the cache's cleanup */
		return true;
	}
	munmap(p, (size_t)st.st_size);
	return false;
}

/* TABLE stored at PATH, whole or not at all (made aside, then renamed). */
static void store(const char *path, const void *table, uint64_t size)
{
	const char *slash = strrchr(path, '/');
	char *tmp = arena_printf("%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1);
	int fd = mkstemp(tmp);
	bool ok;

	if (fd < 0)
		return;
	ok = write(fd, table, size) == (ssize_t)size;
	close(fd);
	if (!ok || rename(tmp, path) != 0)
		unlink(tmp);
}

struct kindex *kindex_open(Dwarf *dw, const char *build_id)
{
	const char *path = build_id && *build_id ?
			   cache_piece_path(arena_printf("kdwarf-%s.idx", build_id)) : NULL;
	struct kindex *ix = calloc(1, sizeof(*ix));
	uint64_t size;
	void *table;

	if (path && load(ix, path))
		return ix;
	table = make_table(dw, &size);
	if (!take_table(ix, table, size) || !ix->head->names) {
		free(table);
		free(ix);
		return NULL;
	}
	if (path)
		store(path, table, size);
	return ix;
}

/* ---- reading it ---- */

static const char *text_of(const struct kindex *ix, uint32_t i)
{
	return ix->text + ix->names[i].text;
}

/* The first name not before KEY's first N bytes (N 0: all of it). */
static uint32_t lower_bound(const struct kindex *ix, const char *key, size_t n)
{
	uint32_t lo = 0, hi = ix->head->names;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = n ? strncmp(text_of(ix, mid), key, n) : strcmp(text_of(ix, mid), key);

		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool kindex_has(const struct kindex *ix, const char *name)
{
	uint32_t i = lower_bound(ix, name, 0);

	return i < ix->head->names && strcmp(text_of(ix, i), name) == 0;
}

static int by_offset(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;

	return (x > y) - (x < y);
}

void kindex_units(const struct kindex *ix, const char *name_pat, struct vec *out)
{
	size_t fixed = strcspn(name_pat, "*?[\\");	/* the names' part in common */
	struct hmap seen = { 0 };
	int from = out->len;

	for (uint32_t i = fixed ? lower_bound(ix, name_pat, fixed) : 0; i < ix->head->names; i++) {
		const char *name = text_of(ix, i);

		if (strncmp(name, name_pat, fixed) != 0 || (!name_pat[fixed] && name[fixed]))
			break;
		if (name_pat[fixed] && fnmatch(name_pat, name, 0) != 0)
			continue;
		for (uint32_t j = 0; j < ix->names[i].count; j++) {
			uintptr_t u = (uintptr_t)ix->units[ix->names[i].first + j];

			if (!hmap_get(&seen, (void *)u)) {
				hmap_put(&seen, (void *)u, (void *)1);
				vec_push(out, (void *)u);
			}
		}
	}
	qsort(out->items + from, (size_t)(out->len - from), sizeof(void *), by_offset);
}
