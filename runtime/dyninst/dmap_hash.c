/*
 * dmap_hash.c - hash maps (plain, per-CPU, LRU) in a shared segment.
 *
 * A map's area: its header (lock, counts, list heads), a power-of-two
 * table of bucket heads, then a pool of max_entries elements.  An
 * element is a header (bucket chain, hash, insertion order, in-use flag),
 * the key rounded up to 8, then the value (per-CPU: every slot's).
 * Elements are named by reference, index + 1, so 0 is "none" and a zeroed
 * area is an empty map.  They come from the free list, else from the
 * never-used rest of the pool (refs 1..hwm have been used), else (LRU)
 * from the oldest element inserted.  Values never move: a lookup's
 * pointer stays good until its element is deleted or evicted.
 *
 * Insert, delete, lookup, read and next_key run under the map's
 * spinlock, and insert and delete make its sequence count odd while they
 * change it: a reader segment's read and next_key take no lock, and keep
 * a copy only when the count was even and unchanged around it
 * (dmap_seq_read).  for_each takes no lock (an element's in-use flag is stored with
 * release after the element is filled in), so its callback may update
 * or delete.  Every reference is read from the segment once, into a
 * local that is range-checked and then used, and walks are bounded by
 * max_entries, so a corrupt map, or a process rewriting it meanwhile,
 * cannot make a reader fault or loop forever.
 */
#include "dmap_sys.h"
#include "dmap_int.h"

static struct dhash_meta *dhash__meta(struct stp_dmap *m)
{
	return (struct dhash_meta *)m->area;
}

static uint32_t *dhash__bucket(struct stp_dmap *m, uint32_t hash)
{
	return (uint32_t *)(m->area + m->lay.buckets_at) + (hash & (m->lay.nbuckets - 1));
}

/* The element REF, or NULL for 0 and anything out of range. */
static struct dhash_elem *dhash__elem(struct stp_dmap *m, uint32_t ref)
{
	if (ref == 0 || ref > m->def.max_entries)
		return NULL;
	return (struct dhash_elem *)(m->area + m->lay.data_at +
				     (uint64_t)(ref - 1) * m->lay.elem_size);
}

static uint8_t *dhash__value(struct stp_dmap *m, struct dhash_elem *e, int slot)
{
	return e->data + m->lay.kstride + (slot > 0 ? (uint64_t)slot * m->lay.stride : 0);
}

static uint32_t dhash__hash(const void *key, uint32_t len)
{
	const uint8_t *p = key;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len, w;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (len) {
		w = 0;
		memcpy(&w, p, len);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
	}
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return (uint32_t)(h ^ h >> 33);
}

/* --- under the lock --- */

/*
 * The word that refers to the element holding KEY (or to REF when KEY is
 * NULL), or NULL; *AT is the element's ref as read, once, from that word.
 */
static uint32_t *dhash__link(struct stp_dmap *m, uint32_t hash, const void *key, uint32_t ref,
			     uint32_t *at)
{
	uint32_t *link = dhash__bucket(m, hash);

	for (uint32_t n = 0; n < m->def.max_entries; n++) {
		uint32_t r = __atomic_load_n(link, __ATOMIC_RELAXED);
		struct dhash_elem *e = dhash__elem(m, r);

		if (!e)
			return NULL;
		if (key ? e->hash == hash && memcmp(e->data, key, m->def.key_size) == 0
			: r == ref) {
			*at = r;
			return link;
		}
		link = &e->next;
	}
	return NULL;
}

static struct dhash_elem *dhash__find(struct stp_dmap *m, const void *key)
{
	uint32_t ref = 0;

	dhash__link(m, dhash__hash(key, m->def.key_size), key, 0, &ref);
	return dhash__elem(m, ref);
}

static void dhash__order_unlink(struct stp_dmap *m, struct dhash_elem *e)
{
	struct dhash_meta *mt = dhash__meta(m);
	struct dhash_elem *older = dhash__elem(m, e->older), *newer = dhash__elem(m, e->newer);

	if (older)
		older->newer = e->newer;
	else
		mt->oldest = e->newer;
	if (newer)
		newer->older = e->older;
	else
		mt->newest = e->older;
}

static void dhash__order_append(struct stp_dmap *m, struct dhash_elem *e, uint32_t ref)
{
	struct dhash_meta *mt = dhash__meta(m);
	uint32_t last = mt->newest;
	struct dhash_elem *newest = dhash__elem(m, last);

	e->older = newest ? last : 0;
	e->newer = 0;
	if (newest)
		newest->newer = ref;
	else
		mt->oldest = ref;
	mt->newest = ref;
}

/* Take element REF, which *LINK referred to (dhash__link), out of the table. */
static void dhash__unlink(struct stp_dmap *m, uint32_t *link, uint32_t ref)
{
	struct dhash_elem *e = dhash__elem(m, ref);

	*link = e->next;
	dhash__order_unlink(m, e);
	__atomic_store_n(&e->used, 0, __ATOMIC_RELEASE);
	dhash__meta(m)->count--;
}

/* LRU: the oldest element, out of the table; 0 when the order list is broken. */
static uint32_t dhash__evict(struct stp_dmap *m)
{
	uint32_t ref = dhash__meta(m)->oldest, at, *link;
	struct dhash_elem *e = dhash__elem(m, ref);

	if (!e || !(link = dhash__link(m, e->hash, NULL, ref, &at)))
		return 0;
	dhash__unlink(m, link, at);
	return at;
}

/* A free element's ref, or 0 when the map is full (and not LRU). */
static uint32_t dhash__alloc(struct stp_dmap *m)
{
	struct dhash_meta *mt = dhash__meta(m);
	uint32_t ref = mt->free, hwm = mt->hwm;
	struct dhash_elem *e = dhash__elem(m, ref);

	if (e) {
		mt->free = e->next;
		return ref;
	}
	if (hwm < m->def.max_entries) {
		mt->hwm = hwm + 1;
		return hwm + 1;
	}
	return dmap_is_lru(m->def.type) ? dhash__evict(m) : 0;
}

/* Copy VAL into E: SLOT's value, or the whole value when SLOT < 0. */
static void dhash__set(struct stp_dmap *m, struct dhash_elem *e, const void *val, int slot)
{
	if (slot < 0 && m->percpu)
		dmap_slots_in(m, dhash__value(m, e, -1), val);
	else
		memcpy(dhash__value(m, e, slot), val, m->def.value_size);
}

static int dhash__insert(struct stp_dmap *m, const void *key, const void *val, int slot)
{
	uint32_t hash = dhash__hash(key, m->def.key_size), ref = dhash__alloc(m);
	struct dhash_elem *e = dhash__elem(m, ref);
	uint32_t *bucket = dhash__bucket(m, hash);

	if (!e)
		return -E2BIG;
	memset(e->data, 0, m->lay.kstride + m->lay.vsize);
	memcpy(e->data, key, m->def.key_size);
	dhash__set(m, e, val, slot);
	e->hash = hash;
	e->next = *bucket;
	*bucket = ref;
	dhash__order_append(m, e, ref);
	dhash__meta(m)->count++;
	__atomic_store_n(&e->used, 1, __ATOMIC_RELEASE);
	return 0;
}

static int dhash__update(struct stp_dmap *m, const void *key, const void *val,
			 uint64_t flags, int slot)
{
	struct dhash_elem *e = dhash__find(m, key);

	if (e && flags == STP_DMAP_NOEXIST)
		return -EEXIST;
	if (e) {
		dhash__set(m, e, val, slot);
		return 0;
	}
	if (flags == STP_DMAP_EXIST)
		return -ENOENT;
	return dhash__insert(m, key, val, slot);
}

static int dhash__delete(struct stp_dmap *m, const void *key)
{
	struct dhash_meta *mt = dhash__meta(m);
	uint32_t ref, *link = dhash__link(m, dhash__hash(key, m->def.key_size), key, 0, &ref);

	if (!link)
		return -ENOENT;
	dhash__unlink(m, link, ref);
	dhash__elem(m, ref)->next = mt->free;
	mt->free = ref;
	return 0;
}

/* The first element in use after REF (0: from the start), copied to NEXT. */
static int dhash__next_after(struct stp_dmap *m, uint32_t ref, void *next)
{
	uint32_t hwm = __atomic_load_n(&dhash__meta(m)->hwm, __ATOMIC_RELAXED);

	if (hwm > m->def.max_entries)
		hwm = m->def.max_entries;
	while (++ref <= hwm) {
		struct dhash_elem *e = dhash__elem(m, ref);

		if (e && __atomic_load_n(&e->used, __ATOMIC_RELAXED)) {
			memcpy(next, e->data, m->def.key_size);
			return 0;
		}
	}
	return -ENOENT;
}

static int dhash__next_key(struct stp_dmap *m, const void *key, void *next)
{
	uint32_t ref = 0;

	if (key)
		dhash__link(m, dhash__hash(key, m->def.key_size), key, 0, &ref);
	return dhash__next_after(m, ref, next);
}

/* --- the entry points: take the lock, do it --- */

void *dmap_hash_lookup(struct stp_dmap *m, const void *key, int slot)
{
	struct dhash_elem *e;

	if (dmap_lock(&dhash__meta(m)->lock, m->seg) < 0)
		return NULL;
	e = dhash__find(m, key);
	dmap_unlock(&dhash__meta(m)->lock);
	return e ? dhash__value(m, e, slot) : NULL;
}

/* A change, under the lock and between odd and even sequence counts. */
int dmap_hash_update(struct stp_dmap *m, const void *key, const void *val, uint64_t flags,
		     int slot)
{
	struct dhash_meta *mt = dhash__meta(m);
	int err;

	if (flags > STP_DMAP_EXIST)
		return -EINVAL;
	if ((err = dmap_lock(&mt->lock, m->seg)) < 0)
		return err;
	dmap_seq_begin(&mt->seq);
	err = dhash__update(m, key, val, flags, slot);
	dmap_seq_end(&mt->seq);
	dmap_unlock(&mt->lock);
	return err;
}

int dmap_hash_delete(struct stp_dmap *m, const void *key)
{
	struct dhash_meta *mt = dhash__meta(m);
	int err;

	if ((err = dmap_lock(&mt->lock, m->seg)) < 0)
		return err;
	dmap_seq_begin(&mt->seq);
	err = dhash__delete(m, key);
	dmap_seq_end(&mt->seq);
	dmap_unlock(&mt->lock);
	return err;
}

/* What a read or a next_key copies: KEY's value (or the key after it) into OUT. */
struct dhash_copy {
	const void *key;
	void *out;
};

static int dhash__copy_value(struct stp_dmap *m, void *arg)
{
	struct dhash_copy *c = arg;
	struct dhash_elem *e = dhash__find(m, c->key);

	if (e && m->percpu)
		dmap_slots_out(m, c->out, dhash__value(m, e, -1));
	else if (e)
		memcpy(c->out, dhash__value(m, e, -1), m->def.value_size);
	return e ? 0 : -ENOENT;
}

static int dhash__copy_next(struct stp_dmap *m, void *arg)
{
	struct dhash_copy *c = arg;

	return dhash__next_key(m, c->key, c->out);
}

/* FN under the lock, or (a reader segment) as a consistent copy without it. */
static int dhash__reading(struct stp_dmap *m, dmap_copy_fn *fn, struct dhash_copy *c)
{
	struct dhash_meta *mt = dhash__meta(m);
	int err;

	if (m->seg->reader)
		return dmap_seq_read(m, &mt->seq, &mt->lock, fn, c);
	if ((err = dmap_lock(&mt->lock, m->seg)) < 0)
		return err;
	err = fn(m, c);
	dmap_unlock(&mt->lock);
	return err;
}

int dmap_hash_read(struct stp_dmap *m, const void *key, void *val)
{
	return dhash__reading(m, dhash__copy_value, &(struct dhash_copy){ key, val });
}

int dmap_hash_next_key(struct stp_dmap *m, const void *key, void *next)
{
	return dhash__reading(m, dhash__copy_next, &(struct dhash_copy){ key, next });
}

long dmap_hash_for_each(struct stp_dmap *m, stp_dmap_each_fn *cb, void *ctx, int slot)
{
	uint32_t hwm = __atomic_load_n(&dhash__meta(m)->hwm, __ATOMIC_RELAXED);
	long n = 0;

	if (hwm > m->def.max_entries)
		hwm = m->def.max_entries;
	for (uint32_t ref = 1; ref <= hwm; ref++) {
		struct dhash_elem *e = dhash__elem(m, ref);

		if (!e || !__atomic_load_n(&e->used, __ATOMIC_ACQUIRE))
			continue;
		n++;
		if (cb(m, e->data, dhash__value(m, e, slot), ctx))
			break;
	}
	return n;
}
