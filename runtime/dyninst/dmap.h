/*
 * dmap.h - BPF-like maps in one shared-memory segment (--runtime=dyninst).
 *
 * A script's data lives in ONE owner-only memfd that pmstap creates and
 * hands to the probed processes (and the PMDA); each of them maps it at
 * its own address, so everything inside the segment is an offset.  The
 * handlers are the C we compile for BPF, so the maps behave as BPF's:
 * hash, array, their per-CPU and LRU variants, a queue and a ring buffer,
 * with the kernel's type and flag numbers.
 *
 * "Per-CPU" means per thread slot.  The segment has nslots slots; a
 * thread that runs a handler claims a free one (stp_dseg__slot), keeps
 * it until it exits, and so is the only writer of that slot's values,
 * which is the guarantee BPF's per-CPU maps give.  A forked child claims
 * its own.  A slot whose thread died without releasing it (a killed
 * process) is taken back when none is free.
 *
 * Two sides, as in BPF:
 *   the probe side (bpf_map_* helpers): lookup returns a pointer into
 *	the segment, per-CPU types act on the calling thread's slot;
 *   the reader side (the bpf(2) commands, for pmstap and the PMDA):
 *	read/write/next_key copy, per-CPU values come as every slot's
 *	value, each rounded up to 8 bytes, slot after slot.
 *
 * Arrays are lock-free (values addressed directly).  Hash maps, queues
 * and ring-buffer reservations take a per-map spinlock in the segment
 * for a few dozen instructions; a lock whose holder died is stolen.
 * Changes to hash maps and queues also make the map's sequence count odd
 * while they last, so that a reader segment, which writes nothing,
 * reads them consistently without the lock.
 * Nothing on the probe side allocates, and nothing here runs before
 * main(): no constructors, libc and pthreads only.
 *
 * Errors are negative errno values, as BPF's: -EEXIST, -ENOENT, -E2BIG
 * (full), -EINVAL (not for this map type, bad flags, or a map's state
 * is impossible), -EBUSY (no slot for a per-CPU map, or the lock is held
 * by this very thread, i.e. a handler re-entered from a signal handler,
 * or a reader segment's patience ran out), -EAGAIN (ring full), -EPERM
 * (a write, a lock or a ring's consumer through a reader segment).
 *
 * Include <linux/bpf.h> (or vmlinux.h) before this header if you need
 * it: the BPF_* names are defined here only when it was not.
 */
#ifndef STP_DMAP_H
#define STP_DMAP_H

#ifdef __KERNEL__	/* compiled into a module too (--runtime=kernel, runtime/kmod) */
#include <linux/types.h>
#else
#include <stddef.h>
#include <stdint.h>
#endif

/* The kernel's enum bpf_map_type numbers, for the types we have. */
enum stp_dmap_type {
	STP_DMAP_HASH = 1,
	STP_DMAP_ARRAY = 2,
	STP_DMAP_PERCPU_HASH = 5,
	STP_DMAP_PERCPU_ARRAY = 6,
	STP_DMAP_LRU_HASH = 9,
	STP_DMAP_LRU_PERCPU_HASH = 10,
	STP_DMAP_QUEUE = 22,
	STP_DMAP_RINGBUF = 27,
};

/* Update flags, the kernel's BPF_ANY, BPF_NOEXIST, BPF_EXIST. */
enum stp_dmap_update {
	STP_DMAP_ANY = 0,
	STP_DMAP_NOEXIST = 1,
	STP_DMAP_EXIST = 2,
};

/* Map flags, the kernel's BPF_F_*: accepted, and change nothing here. */
enum stp_dmap_flag {
	STP_DMAP_F_NO_PREALLOC = 1,	/* everything is preallocated */
	STP_DMAP_F_MMAPABLE = 1024,	/* every array is addressable */
};

#if !defined(__LINUX_BPF_H__) && !defined(_UAPI__LINUX_BPF_H__) && !defined(__VMLINUX_H__)
#define BPF_MAP_TYPE_HASH		STP_DMAP_HASH
#define BPF_MAP_TYPE_ARRAY		STP_DMAP_ARRAY
#define BPF_MAP_TYPE_PERCPU_HASH	STP_DMAP_PERCPU_HASH
#define BPF_MAP_TYPE_PERCPU_ARRAY	STP_DMAP_PERCPU_ARRAY
#define BPF_MAP_TYPE_LRU_HASH		STP_DMAP_LRU_HASH
#define BPF_MAP_TYPE_LRU_PERCPU_HASH	STP_DMAP_LRU_PERCPU_HASH
#define BPF_MAP_TYPE_QUEUE		STP_DMAP_QUEUE
#define BPF_MAP_TYPE_RINGBUF		STP_DMAP_RINGBUF
#define BPF_ANY				STP_DMAP_ANY
#define BPF_NOEXIST			STP_DMAP_NOEXIST
#define BPF_EXIST			STP_DMAP_EXIST
#define BPF_F_NO_PREALLOC		STP_DMAP_F_NO_PREALLOC
#define BPF_F_MMAPABLE			STP_DMAP_F_MMAPABLE
#endif

#define STP_DMAP_NAME_MAX	64	/* a name is at most 63 bytes */
#define STP_DMAP_MAX_SLOTS	1024
#define STP_DMAP_MAX_MAPS	4096
#define STP_DMAP_MAX_KEY	512	/* hash keys: 1 to 512 bytes (BPF's limit) */
#define STP_DMAP_MAX_VALUE	(1u << 20)	/* a value: 1 byte to 1 MiB */
#define STP_DMAP_MAX_PERCPU	32768	/* a per-CPU value, as BPF's limit */
#define STP_DMAP_MAX_ENTRIES	(1u << 26)	/* arrays, hashes and queues */
#define STP_DMAP_MIN_RING	4096	/* ring bytes: a power of two in 4 KiB..1 GiB */
#define STP_DMAP_MAX_RING	(1u << 30)

/* Ring-buffer record header bits, as the kernel's BPF_RINGBUF_*_BIT. */
#define STP_DMAP_RB_BUSY	(1u << 31)
#define STP_DMAP_RB_DISCARD	(1u << 30)
#define STP_DMAP_RB_HDR		8

/*
 * A map, as declared.  Arrays have 4-byte keys (the index); queues and
 * ring buffers have no key (0); a ring buffer has no value size (0) and
 * max_entries is its data bytes.
 */
struct stp_dmap_def {
	const char *name;	/* at most 63 bytes, unique in the segment */
	uint32_t type;		/* enum stp_dmap_type */
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t flags;		/* 0, BPF_F_NO_PREALLOC, BPF_F_MMAPABLE */
};

struct stp_dseg;	/* one mapping of a segment, in this process */
struct stp_dmap;	/* one map in a segment (valid as long as its stp_dseg) */

/*
 * A map as compiled handlers name it (runtime/stp_bpf_native.h): its
 * definition, and where the loader found it in the segment.
 */
struct stp_dmap_ref {
	struct stp_dmap_def def;
	struct stp_dmap *m;
	uint8_t *base;			/* an array's values (stp_dmap__array), or NULL */
	uint64_t vsize, stride;
};

/* --- segments --- */

/*
 * Create a segment holding NDEFS maps and NSLOTS thread slots (1 to
 * STP_DMAP_MAX_SLOTS): a close-on-exec memfd, mode 0600, sealed against
 * shrinking and growing, laid out, every map empty.  NULL with the reason
 * in ERR (ERRLEN bytes) when a definition is refused or a call fails.
 * The segment owns its fd (stp_dseg__fd) and closes it when freed; the
 * caller dup2()s it into the processes it starts.
 */
struct stp_dseg *stp_dseg__create(const struct stp_dmap_def *defs, int ndefs, int nslots,
				  char *err, size_t errlen);

/*
 * The same layout in memory the caller provides (the kernel runtime: a
 * module's vmalloc_user() area, which its runner maps): stp_dseg__size
 * gives the bytes the definitions need (0 when they are refused, the
 * reason in ERR), stp_dseg__create_at lays them out in MEM, SIZE zeroed
 * bytes that stay the caller's (stp_dseg__free does not release them).
 */
uint64_t stp_dseg__size(const struct stp_dmap_def *defs, int ndefs, int nslots, char *err,
			size_t errlen);
struct stp_dseg *stp_dseg__create_at(void *mem, uint64_t size, const struct stp_dmap_def *defs,
				     int ndefs, int nslots, char *err, size_t errlen);

#ifndef __KERNEL__
/*
 * A segment that someone else laid out (a module of the kernel runtime,
 * mapped from its device FD), validated as stp_dseg__attach validates one:
 * BASE, SIZE bytes, mapped by the caller, unmapped by stp_dseg__free,
 * which also closes the duplicate of FD the segment keeps (stp_dseg__fd).
 * Its slots belong to the CPUs: the caller claims none (it reads and
 * writes through the reader-side calls), and a lock word holding a
 * CPU's mark (DMAP_KERNEL_TID and up) is never taken for a dead holder's.
 */
struct stp_dseg *stp_dseg__attach_mem(void *base, size_t size, int fd, char *err,
				      size_t errlen);
/*
 * The same, read by a daemon as stp_dseg__attach_reader reads (pmdastap
 * reading a module's segment while the script's pmstap runs it), which
 * the caller maps read-only (PROT_READ): nothing written, no lock taken,
 * every wait for a consistent copy bounded by PATIENCE_US, no slot.
 */
struct stp_dseg *stp_dseg__attach_mem_reader(void *base, size_t size, int fd,
					     unsigned int patience_us, char *err, size_t errlen);
#endif

/*
 * Map the segment of FD and validate it: a memfd sealed as create seals
 * it, the magic and version, its size, every map's definition, offsets
 * and sizes inside the segment.  A foreign, truncated or garbled segment
 * is refused (NULL, the reason in ERR).  FD stays the caller's: it may
 * close it afterwards.
 */
struct stp_dseg *stp_dseg__attach(int fd, char *err, size_t errlen);

/*
 * Attach as a reader that trusts nothing in the segment and writes
 * nothing to it: for a daemon (root, say) reading the segment of another
 * user's process, who may write any byte of it at any moment.  It maps
 * the segment read-only (PROT_READ).  FD must be a memfd sealed as
 * create seals it (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), so its
 * size is fixed for good; it is validated as stp_dseg__attach does, and
 * the segment keeps its own close-on-exec duplicate of FD (stp_dseg__fd).
 * Through it:
 *   - the reader side (stp_dmap__read, __next_key, __values)
 *	works, and never reads outside the mapping, never loops longer
 *	than the map's size, whatever the bytes say: an impossible state
 *	gives an error (-EINVAL, -ENOENT), never a fault;
 *   - no lock is taken: a hash map's or queue's data is copied, and the
 *	copy kept when the map's sequence count was even and unchanged
 *	around it; a count that stays odd (a writer at work, or a word
 *	that someone scribbled) is waited for at most PATIENCE_US
 *	microseconds, then the call gives -EBUSY, and both the retries
 *	and the give-ups are counted (stp_dseg__reader_stats); a count
 *	left odd by a lock holder that died is read through;
 *   - a thread slot is never claimed (stp_dseg__slot gives -1);
 *   - stp_dmap__write, __update, __delete, __push, __pop and __consume
 *	give -EPERM, and the other probe-side calls are not meant for it;
 *   - what __values points to is the owner's to rewrite at any time:
 *	copy a value before trusting what it says.
 * The cost of a call stays proportional to the map's size, so a daemon
 * that wants to bound it checks the size of FD (fstat) before attaching.
 */
struct stp_dseg *stp_dseg__attach_reader(int fd, unsigned int patience_us, char *err,
					 size_t errlen);

/* Unmap; close the fd if the segment was created or reader-attached here;
 * the calling thread gives its slot back when this was the last mapping here. */
void stp_dseg__free(struct stp_dseg *s);

/* A reader segment's counts: copies taken again, reads given up (-EBUSY). */
void stp_dseg__reader_stats(const struct stp_dseg *s, uint64_t *retries, uint64_t *busy);

/* The fd of a created or reader segment; -1 for an attached one. */
int stp_dseg__fd(const struct stp_dseg *s);
int stp_dseg__nslots(const struct stp_dseg *s);
int stp_dseg__nmaps(const struct stp_dseg *s);

/* The map called NAME, or the map at INDEX (in definition order); NULL when none. */
struct stp_dmap *stp_dseg__map(struct stp_dseg *s, const char *name);
struct stp_dmap *stp_dseg__map_at(struct stp_dseg *s, int index);

/*
 * The calling thread's slot in S: claimed on the first call (from the
 * free ones, else from threads that died holding one), the same number
 * afterwards.  -1 when every slot is taken: skip the handler and count
 * it.  The slot is released when the thread exits; a child after fork()
 * claims its own.  stp_dseg__slot_release gives it back earlier.
 */
int stp_dseg__slot(struct stp_dseg *s);
void stp_dseg__slot_release(struct stp_dseg *s);

/* The definition (name and all) as this mapping validated it. */
const struct stp_dmap_def *stp_dmap__def(const struct stp_dmap *m);

/* --- the probe side (BPF helper semantics) --- */

/* bpf_map_lookup_elem: the value in the segment (per-CPU: this slot's),
 * or NULL.  The pointer stays valid until the element is deleted or
 * evicted (values never move); queues and ring buffers: NULL. */
void *stp_dmap__lookup(struct stp_dmap *m, const void *key);
/*
 * An array's values, for handlers that address them directly: index I's
 * value at SLOT is at BASE + I * VSIZE + SLOT * STRIDE (a plain array:
 * SLOT 0).  BASE, or NULL for any other map.
 */
uint8_t *stp_dmap__array(struct stp_dmap *m, uint64_t *vsize, uint64_t *stride);

/* bpf_map_lookup_percpu_elem: SLOT's value of a per-CPU map, else NULL. */
void *stp_dmap__lookup_slot(struct stp_dmap *m, const void *key, int slot);

/*
 * bpf_map_update_elem: 0, -EEXIST (BPF_NOEXIST, present; always for
 * arrays), -ENOENT (BPF_EXIST, absent), -E2BIG (full, or an index past
 * the end), -EINVAL.  LRU maps evict their oldest element instead of
 * being full.  Per-CPU: sets this slot's value only; a new element has
 * its other slots zeroed.
 */
int stp_dmap__update(struct stp_dmap *m, const void *key, const void *val, uint64_t flags);

/* bpf_map_delete_elem: 0 or -ENOENT; arrays and the rest: -EINVAL. */
int stp_dmap__delete(struct stp_dmap *m, const void *key);

/* Queues: push (-E2BIG when full; BPF_EXIST drops the oldest instead)
 * and pop (-ENOENT when empty). */
int stp_dmap__push(struct stp_dmap *m, const void *val, uint64_t flags);
int stp_dmap__pop(struct stp_dmap *m, void *val);

/*
 * bpf_for_each_map_elem over a hash or an array: CB gets the key and the
 * value (per-CPU: this slot's) and returns 0 to go on, 1 to stop.  No
 * lock is held while CB runs, so it may update or delete (elements it
 * adds may or may not be visited).  The number visited, or -EINVAL.
 */
typedef long stp_dmap_each_fn(struct stp_dmap *m, void *key, void *value, void *ctx);
long stp_dmap__for_each(struct stp_dmap *m, stp_dmap_each_fn *cb, void *ctx);

/*
 * Ring buffers.  reserve: SIZE bytes (8-aligned) to fill then submit or
 * discard; NULL when there is no room now or ever (a record with its
 * 8-byte header, rounded up to 8, may take at most half the ring).
 * output: reserve, copy, submit; 0 or -EAGAIN (or -E2BIG: too large).
 */
void *stp_dmap__reserve(struct stp_dmap *m, uint32_t size);
void stp_dmap__submit(struct stp_dmap *m, void *rec);
void stp_dmap__discard(struct stp_dmap *m, void *rec);
int stp_dmap__output(struct stp_dmap *m, const void *data, uint32_t size);

/* --- the reader side (bpf(2) semantics: copies) --- */

/*
 * BPF_MAP_LOOKUP_ELEM: copy the value to VAL; per-CPU types: every
 * slot's value, each rounded up to 8 bytes, slot after slot (nslots *
 * round8(value_size) bytes).  A queue: its oldest value (peek; KEY is
 * ignored).  0 or -ENOENT.
 */
int stp_dmap__read(struct stp_dmap *m, const void *key, void *val);

/* BPF_MAP_UPDATE_ELEM: as stp_dmap__update, but per-CPU VAL holds every
 * slot's value (as read gives them); a queue: push. */
int stp_dmap__write(struct stp_dmap *m, const void *key, const void *val, uint64_t flags);

/* BPF_MAP_GET_NEXT_KEY: KEY NULL (or no longer present) gives the first;
 * -ENOENT after the last.  Hashes walk their elements in pool order. */
int stp_dmap__next_key(struct stp_dmap *m, const void *key, void *next);

/* An array's value memory (what mmap of a BPF_F_MMAPABLE array gives):
 * index after index; per-CPU arrays: each index holds every slot's value
 * as read gives them.  NULL for other types. */
void *stp_dmap__values(struct stp_dmap *m, size_t *len);

/*
 * The ring-buffer consumer (one at a time per ring): CB for each submitted
 * record in order, discarded ones skipped, up to the first still reserved.
 * A negative return from CB stops there (that record counts as consumed)
 * and is returned.  Otherwise the number of records given to CB; -EINVAL
 * when the ring's positions or headers are corrupt (-EPERM: a reader
 * segment, which writes no consumer position).  A pass takes back a bounded
 * number of records left busy by reservers that died; later passes take
 * the rest.
 */
int stp_dmap__consume(struct stp_dmap *m, int (*cb)(void *ctx, void *data, size_t size),
		      void *ctx);

#endif
