/*
 * stp_slots.bpf.h - slotted arrays: arrays of longs and strings whose
 * values pmdastap reads in place.
 *
 * A slotted global a[...] has three maps:
 *
 *	g_a	hash map, key struct -> uint32_t slot
 *	gv_a	BPF_F_MMAPABLE array of the values, indexed by slot; its
 *		head elements hold a generation (STP_SLOT_GEN), bumped after
 *		every insert or delete of a key, and the count of slots ever
 *		handed out (STP_SLOT_NEXT); slots start at STP_SLOT_FIRST
 *	gf_a	queue of freed slots
 *
 * A reader (the PMDA, user context) maps gv_a and reads every value with
 * plain loads; it reads the keys again only when the generation moved.
 * Updating an existing element is one hash lookup and a store (or an
 * atomic add) into gv_a: the verifier inlines array lookups, so it costs
 * what the value in the hash map did.  Inserting takes a slot (from the
 * queue, else a never used one), writes the value, then publishes the key
 * with BPF_NOEXIST: a reader never sees a key before its value.  A CPU
 * that loses an insert race gives its slot back and uses the winner's.
 *
 * Known window: a delete of key K racing with another CPU's delete and
 * re-insert of K may free the re-inserted slot instead (as a preallocated
 * hash map may reuse an element a slow reader still holds).
 *
 * Included by stp_context.bpf.h: uses stp_map_full() and struct context.
 */
#ifndef STP_SLOTS_BPF_H
#define STP_SLOTS_BPF_H

#ifndef EEXIST
#define EEXIST 17
#endif

/* Element I of the values map VALS (a head element or a slot), or NULL. */
static __always_inline void *stp_slot_elem(void *vals, uint32_t i)
{
	return bpf_map_lookup_elem(vals, &i);
}

/* The value of KEY in place, or NULL. */
static __always_inline void *stp_slot_find(void *keys, void *vals, const void *key)
{
	uint32_t *slot = bpf_map_lookup_elem(keys, key);

	return slot ? stp_slot_elem(vals, *slot) : NULL;
}

/* The long in slot SLOT (a foreach callback's value), 0 when out of range. */
static __always_inline int64_t stp_slot_long(void *vals, uint32_t slot)
{
	int64_t *v = stp_slot_elem(vals, slot);

	return v ? *v : 0;
}

/* The string in slot SLOT, "" when out of range. */
static __always_inline const char *stp_slot_str(void *vals, uint32_t slot)
{
	const char *v = stp_slot_elem(vals, slot);

	return v ? v : "";
}

static __always_inline void stp_slot_bump(void *vals)
{
	int64_t *gen = stp_slot_elem(vals, STP_SLOT_GEN);

	if (gen)
		__sync_fetch_and_add(gen, 1);
}

/* A free slot and its element in *ELEM: a freed one, else one never used; -1 when none. */
static __always_inline int64_t stp_slot_alloc(void *vals, void *free, void **elem)
{
	uint32_t slot;
	int64_t *next;

	if (bpf_map_pop_elem(free, &slot) != 0) {
		next = stp_slot_elem(vals, STP_SLOT_NEXT);
		if (!next)
			return -1;
		slot = STP_SLOT_FIRST + (uint32_t)__sync_fetch_and_add(next, 1);
	}
	*elem = stp_slot_elem(vals, slot);
	return *elem ? (int64_t)slot : -1;	/* past the end: every slot is taken */
}

/* Publish KEY -> SLOT, its value written: 0, or the error with SLOT given back. */
static __always_inline long stp_slot_publish(void *keys, void *vals, void *free, const void *key,
					     uint32_t slot)
{
	long err = bpf_map_update_elem(keys, key, &slot, BPF_NOEXIST);

	if (err) {
		bpf_map_push_elem(free, &slot, 0);
		return err;
	}
	stp_slot_bump(vals);
	return 0;
}

static __always_inline int64_t stp_slot_get_long(struct context *c, void *keys, void *vals,
						 void *free, const void *key)
{
	int64_t *v = stp_slot_find(keys, vals, key);

	return v ? *v : 0;
}

static __always_inline char *stp_slot_get_str(struct context *c, void *keys, void *vals,
					      void *free, const void *key, char *buf)
{
	const char *v = stp_slot_find(keys, vals, key);

	if (v)
		stp_strcpy(buf, v);
	else
		buf[0] = '\0';
	return buf;
}

static __always_inline int stp_slot_exists(struct context *c, void *keys, void *vals, void *free,
					   const void *key)
{
	return bpf_map_lookup_elem(keys, key) != NULL;
}

/* The element of KEY, inserted with the long INIT when new; NULL (error raised) when full. */
static __always_inline int64_t *stp_slot_long_elem(struct context *c, void *keys, void *vals,
						   void *free, const void *key, int64_t init,
						   bool *inserted, int site, const char *full)
{
	int64_t *v = stp_slot_find(keys, vals, key);
	void *elem = NULL;
	int64_t slot;
	long err = -E2BIG;

	*inserted = false;
	if (v)
		return v;
	slot = stp_slot_alloc(vals, free, &elem);
	if (slot >= 0) {
		*(int64_t *)elem = init;
		err = stp_slot_publish(keys, vals, free, key, (uint32_t)slot);
		if (!err) {
			*inserted = true;
			return elem;
		}
	}
	if (err == -EEXIST && (v = stp_slot_find(keys, vals, key)))
		return v;	/* another CPU inserted it meanwhile */
	stp_map_full(c, site, full, err);
	return NULL;
}

static __always_inline void stp_slot_set_long(struct context *c, void *keys, void *vals,
					      void *free, const void *key, int64_t v, int site,
					      const char *full)
{
	bool inserted;
	int64_t *p = stp_slot_long_elem(c, keys, vals, free, key, v, &inserted, site, full);

	if (p && !inserted)
		*p = v;
}

/* a[key] += D, atomically; the new value. */
static __always_inline int64_t stp_slot_add_long(struct context *c, void *keys, void *vals,
						 void *free, const void *key, int64_t d, int site,
						 const char *full)
{
	bool inserted;
	int64_t *p = stp_slot_long_elem(c, keys, vals, free, key, d, &inserted, site, full);

	if (!p)
		return 0;
	return inserted ? d : stp_atomic_add(p, d);
}

/* VAL is a MAXSTRINGLEN buffer. */
static __always_inline void stp_slot_set_str(struct context *c, void *keys, void *vals,
					     void *free, const void *key, const char *val,
					     int site, const char *full)
{
	char *p = stp_slot_find(keys, vals, key);
	void *elem = NULL;
	int64_t slot;
	long err = -E2BIG;

	if (p) {
		stp_strcpy(p, val);
		return;
	}
	slot = stp_slot_alloc(vals, free, &elem);
	if (slot >= 0) {
		stp_strcpy(elem, val);
		err = stp_slot_publish(keys, vals, free, key, (uint32_t)slot);
		if (!err)
			return;
	}
	if (err == -EEXIST && (p = stp_slot_find(keys, vals, key))) {
		stp_strcpy(p, val);
		return;
	}
	stp_map_full(c, site, full, err);
}

/* Remove KEY, whose slot was SLOT: the slot goes back only if this CPU removed it. */
static __always_inline void stp_slot_remove(void *keys, void *vals, void *free, const void *key,
					    uint32_t slot)
{
	if (bpf_map_delete_elem(keys, key) != 0)
		return;
	bpf_map_push_elem(free, &slot, 0);
	stp_slot_bump(vals);
}

static __always_inline void stp_slot_delete(struct context *c, void *keys, void *vals, void *free,
					    const void *key)
{
	uint32_t *slot = bpf_map_lookup_elem(keys, key);

	if (slot)
		stp_slot_remove(keys, vals, free, key, *slot);
}

/*
 * delete a: bpf_for_each_map_elem(&g_a, FN, NULL, 0) with a callback
 * that knows a's maps, defined by STP_SLOT_CLEARER(FN, a).
 */
#define STP_SLOT_CLEARER(fn, name)							\
	static long fn(void *map, const void *key, uint32_t *slot, void *data)		\
	{										\
		stp_slot_remove(&g_##name, &gv_##name, &gf_##name, key, *slot);	\
		return 0;								\
	}

#endif
