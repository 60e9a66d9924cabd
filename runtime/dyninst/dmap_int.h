/*
 * dmap_int.h - what dmap.c, dmap_sync.c, dmap_hash.c and dmap_ring.c share:
 * the segment's layout and this process's view of it.
 *
 * The segment, every part aligned to 64 bytes (DMAP_ALIGN):
 *
 *	struct dseg_hdr			magic, version, size, id, nslots, nmaps
 *	uint32_t owners[nslots]		the tid owning each thread slot, 0: free
 *	struct dmap_desc descs[nmaps]	each map's definition and area
 *	map areas, one after the other, each:
 *		DMAP_META bytes		the map's mutable header (its lock first)
 *		hash: uint32_t buckets[nbuckets], then max_entries elements
 *		array, queue: max_entries values
 *		ring buffer: max_entries data bytes
 *
 * Every offset is derived from the definitions (dmap_layout), so attach
 * recomputes them and compares: a segment whose descriptors disagree is
 * refused, and the maps are used through this process's copy of the
 * layout, never through the descriptors again.  Positions inside maps
 * (hash element references, queue head and count, ring positions)
 * change at run time, and another process may write anything there at
 * any moment: each is read once into a local, checked, and only the
 * local is used; every walk is bounded by the map's size.
 *
 * Hash maps and queues also keep a sequence count (seq) beside their
 * lock: a writer, holding the lock, makes it odd before it changes the
 * map and even again after (dmap_seq_begin, dmap_seq_end), so a reader
 * segment reads them without writing a byte (dmap_seq_read): it copies,
 * and keeps the copy only when seq was even and unchanged around it.
 */
#ifndef STP_DMAP_INT_H
#define STP_DMAP_INT_H

#include "dmap.h"

/* Internal symbols stay inside the shared object that is preloaded into programs. */
#define DMAP_HIDDEN __attribute__((visibility("hidden")))

/*
 * Lock and record owners are thread ids; a CPU in the kernel (the kernel
 * runtime's handlers) writes DMAP_KERNEL_TID + its number, above every
 * tid (PID_MAX_LIMIT is 2^22), and is never taken for a holder that died.
 */
#define DMAP_KERNEL_TID 0x40000000u

#define DMAP_MAGIC	0x50414d44505453ull	/* "STPDMAP" */
#define DMAP_VERSION	2	/* 2: hash maps and queues have a sequence count */
#define DMAP_ALIGN	64
#define DMAP_META	128	/* two cache lines: a ring's producer, its consumer */
#define DMAP_MAX_SIZE	(1ull << 40)

struct dseg_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t hdr_size;	/* sizeof(struct dseg_hdr) */
	uint64_t size;		/* the whole segment */
	uint64_t id;		/* random: a thread's slot is per segment, not per mapping */
	uint32_t nslots;
	uint32_t nmaps;
	uint32_t desc_size;	/* sizeof(struct dmap_desc) */
	uint32_t reserved;
	uint64_t owners_off;
	uint64_t descs_off;
};

struct dmap_desc {
	char name[STP_DMAP_NAME_MAX];
	uint32_t type, key_size, value_size, max_entries, flags, reserved;
	uint64_t off;		/* the map's area */
	uint64_t len;
};

/* Where things are in a map's area, from its definition and nslots. */
struct dmap_layout {
	uint64_t len;		/* the area, a multiple of DMAP_ALIGN */
	uint64_t buckets_at;	/* hash: nbuckets uint32_t */
	uint64_t data_at;	/* elements, values or ring bytes */
	uint64_t data_len;
	uint32_t stride;	/* a value rounded up to 8; per-cpu: to 64, a line a slot */
	uint32_t vsize;		/* value bytes per element: stride, or nslots * stride */
	uint32_t kstride;	/* a key rounded up to 8 */
	uint32_t elem_size;	/* hash: an element; others: vsize */
	uint32_t nbuckets;	/* hash: a power of two >= max_entries */
};

struct stp_dmap {
	struct stp_dseg *seg;
	struct stp_dmap_def def;	/* def.name is name */
	char name[STP_DMAP_NAME_MAX];
	struct dmap_layout lay;
	uint8_t *area;		/* the map's area in this mapping */
	uint32_t nslots;
	int percpu;
};

struct stp_dseg {
	uint8_t *base;
	size_t size;
	int fd;			/* created or reader: ours to close; attached: -1 */
	int nslots;
	int nmaps;
	int reader;		/* stp_dseg__attach_reader: distrust the bytes, map them read-only */
	int borrowed;		/* stp_dseg__create_at: the memory is the caller's */
	unsigned int patience_us;	/* reader: the longest wait for a consistent copy */
	uint64_t seq_retries;	/* reader: copies taken again (a writer was busy) */
	uint64_t seq_busy;	/* reader: reads given up after the patience (-EBUSY) */
	uint64_t id;		/* the header's; 0 in a reader segment (no slots) */
	uint32_t *owners;
	struct stp_dseg *next;	/* this process's mappings (dmap_sync.c) */
	struct stp_dmap maps[];
};

/* The mutable headers of the maps (dmap_hash.c, dmap_ring.c); each begins with its lock. */
struct dhash_meta {
	uint32_t lock;
	uint32_t count;		/* elements in the table */
	uint32_t hwm;		/* refs 1..hwm have left the pool */
	uint32_t free;		/* the free list, through next */
	uint32_t oldest;	/* insertion order: oldest to newest, through newer */
	uint32_t newest;
	uint32_t seq;		/* odd while a writer changes the map */
};

struct dhash_elem {
	uint32_t next;		/* the bucket's chain, or the free list */
	uint32_t hash;
	uint32_t older;
	uint32_t newer;
	uint32_t used;		/* in the table (atomic: for_each reads it unlocked) */
	uint32_t pad;
	uint8_t data[];		/* key (kstride bytes), value (vsize bytes) */
};

struct dqueue_meta {
	uint32_t lock;
	uint32_t head;		/* the oldest value's index */
	uint32_t count;
	uint32_t seq;		/* odd while a writer changes the queue */
};

struct dring_meta {
	uint32_t lock;
	uint32_t pad;
	uint64_t producer;	/* under the lock; published with release */
	uint8_t line[48];	/* the consumer's position on its own cache line */
	uint64_t consumer;
};

struct dring_hdr {
	uint32_t len;		/* data bytes | STP_DMAP_RB_BUSY | STP_DMAP_RB_DISCARD */
	uint32_t tid;		/* who reserved it (0: padding), for when it dies */
};

#define DRING_LEN_MASK	(~(STP_DMAP_RB_BUSY | STP_DMAP_RB_DISCARD))

/* dmap.c */
DMAP_HIDDEN int dmap_is_hash(uint32_t type);
DMAP_HIDDEN int dmap_is_percpu(uint32_t type);
DMAP_HIDDEN int dmap_is_lru(uint32_t type);

/* dmap_sync.c: thread ids, spinlocks, slots, this process's mappings */
DMAP_HIDDEN uint32_t dmap_tid(void);
DMAP_HIDDEN int dmap_tid_gone(uint32_t tid);
DMAP_HIDDEN int dmap_lock(uint32_t *lock, const struct stp_dseg *s);
DMAP_HIDDEN void dmap_unlock(uint32_t *lock);
DMAP_HIDDEN void dmap_seg_register(struct stp_dseg *s);

/*
 * A reader segment's consistent copy: FN(M, ARG) copies out of the map,
 * and is run again until *SEQ was even and unchanged around it (or odd,
 * with *LOCK naming a holder that died: its half-done change is what
 * anybody taking the lock over would find), at most the segment's
 * patience; then -EBUSY, counted.  Otherwise FN's result.
 */
typedef int dmap_copy_fn(struct stp_dmap *m, void *arg);
DMAP_HIDDEN int dmap_seq_read(struct stp_dmap *m, const uint32_t *seq, const uint32_t *lock,
			      dmap_copy_fn *fn, void *arg);

/* A writer, holding the map's lock, around its change (a dead writer's odd count stays odd). */
static inline void dmap_seq_begin(uint32_t *seq)
{
	__atomic_store_n(seq, __atomic_load_n(seq, __ATOMIC_RELAXED) | 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void dmap_seq_end(uint32_t *seq)
{
	__atomic_store_n(seq, (__atomic_load_n(seq, __ATOMIC_RELAXED) | 1) + 1, __ATOMIC_RELEASE);
}
DMAP_HIDDEN void dmap_seg_unregister(struct stp_dseg *s);

/* dmap_hash.c: SLOT < 0 means the whole value (every slot's, per-CPU) */
DMAP_HIDDEN void *dmap_hash_lookup(struct stp_dmap *m, const void *key, int slot);
DMAP_HIDDEN int dmap_hash_update(struct stp_dmap *m, const void *key, const void *val,
				 uint64_t flags, int slot);
DMAP_HIDDEN int dmap_hash_delete(struct stp_dmap *m, const void *key);
DMAP_HIDDEN int dmap_hash_read(struct stp_dmap *m, const void *key, void *val);
DMAP_HIDDEN int dmap_hash_next_key(struct stp_dmap *m, const void *key, void *next);
DMAP_HIDDEN long dmap_hash_for_each(struct stp_dmap *m, stp_dmap_each_fn *cb, void *ctx,
				    int slot);

/* dmap_ring.c: queues and ring buffers */
DMAP_HIDDEN int dmap_queue_push(struct stp_dmap *m, const void *val, uint64_t flags);
DMAP_HIDDEN int dmap_queue_pop(struct stp_dmap *m, void *val, int remove);
DMAP_HIDDEN void *dmap_ring_reserve(struct stp_dmap *m, uint32_t size);
DMAP_HIDDEN void dmap_ring_commit(struct stp_dmap *m, void *rec, uint32_t discard);
DMAP_HIDDEN int dmap_ring_consume(struct stp_dmap *m, int (*cb)(void *, void *, size_t),
				  void *ctx);

/*
 * Every slot's value of a per-cpu element between the map (IN or OUT:
 * lay.stride apart) and a reader's buffer (values 8-aligned, one after
 * the other, as bpf(2) gives per-CPU values).
 */
void dmap_slots_out(const struct stp_dmap *m, void *out, const uint8_t *in);
void dmap_slots_in(const struct stp_dmap *m, uint8_t *out, const void *in);

#endif
