/*
 * hmap.c - the translator's hash map (hmap.h): open addressing with linear
 * probing, kept at most half full, in the arena.
 */
#include <stdint.h>
#include <string.h>
#include "arena.h"
#include "hmap.h"

static unsigned long hash_key(const struct hmap *m, const void *key)
{
	unsigned long h = 1469598103934665603UL;

	if (!m->str_keys)
		return ((unsigned long)(uintptr_t)key >> 4) * 2654435761UL;
	for (const unsigned char *p = key; *p; p++)
		h = (h ^ *p) * 1099511628211UL;
	return h;
}

static bool same_key(const struct hmap *m, const void *a, const void *b)
{
	return m->str_keys ? strcmp(a, b) == 0 : a == b;
}

static struct hmap_slot *find_slot(const struct hmap *m, const void *key, unsigned long h)
{
	unsigned long i = h & (unsigned long)(m->cap - 1);

	while (m->slots[i].key && (m->slots[i].hash != h || !same_key(m, m->slots[i].key, key)))
		i = (i + 1) & (unsigned long)(m->cap - 1);
	return &m->slots[i];
}

void *hmap_get(const struct hmap *m, const void *key)
{
	if (!m->cap)
		return NULL;
	return find_slot(m, key, hash_key(m, key))->val;
}

/* M with CAP slots (a power of two), its keys moved by the hashes they keep. */
static void hmap_resize(struct hmap *m, int cap)
{
	struct hmap old = *m;

	m->cap = cap;
	m->slots = arena_alloc(sizeof(struct hmap_slot) * (size_t)m->cap);
	for (int i = 0; i < old.cap; i++)
		if (old.slots[i].key)
			*find_slot(m, old.slots[i].key, old.slots[i].hash) = old.slots[i];
}

void hmap_reserve(struct hmap *m, int n)
{
	int cap = m->cap ? m->cap : 64;

	while (cap < 2 * n)
		cap *= 2;
	if (cap > m->cap)
		hmap_resize(m, cap);
}

void hmap_put(struct hmap *m, const void *key, void *val)
{
	unsigned long h = hash_key(m, key);
	struct hmap_slot *slot;

	if ((m->len + 1) * 2 > m->cap)
		hmap_resize(m, m->cap ? m->cap * 2 : 64);
	slot = find_slot(m, key, h);
	if (!slot->key) {
		slot->key = key;
		slot->hash = h;
		m->len++;
	}
	slot->val = val;
}
