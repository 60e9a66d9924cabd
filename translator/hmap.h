/*
 * hmap.h - a hash map from a string (or a pointer) to a pointer, in the
 * arena (hmap.c): the translator's one map type.  A zeroed struct hmap is
 * an empty map keyed by pointer; set str_keys for C string keys.
 */
#ifndef PMSTAP_HMAP_H
#define PMSTAP_HMAP_H

#include <stdbool.h>

struct hmap_slot {
	const void *key;
	void *val;
	unsigned long hash;	/* the key's: compared before the key, kept when the map grows */
};

struct hmap {
	struct hmap_slot *slots;
	int cap;		/* a power of two, or 0 */
	int len;
	bool str_keys;		/* keys are C strings compared by content */
};

/* KEY's value, or NULL when KEY is not in M. */
void *hmap_get(const struct hmap *m, const void *key);
/* Set KEY's value in M (KEY is kept, not copied). */
void hmap_put(struct hmap *m, const void *key, void *val);
/* Room in M for N keys in all, so that putting them never grows it. */
void hmap_reserve(struct hmap *m, int n);

#endif
