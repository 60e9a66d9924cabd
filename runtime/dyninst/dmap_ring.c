/*
 * dmap_ring.c - queues and ring buffers in a shared segment.
 *
 * A queue is a ring of max_entries values with a head (the oldest) and a
 * count, under the map's spinlock; push and pop make its sequence count
 * odd while they change it, so a reader segment peeks without the lock.
 *
 * A ring buffer is the kernel's BPF ring buffer without the double
 * mapping: max_entries data bytes (a power of two), a producer and a
 * consumer position that only grow (their low bits are the offset), and
 * records of an 8-byte header (32-bit length with the BUSY and DISCARD
 * bits, then the reserver's tid where the kernel has a page offset)
 * followed by the data rounded up to 8.
 * Producers reserve under the map's spinlock: write the BUSY header, then
 * publish the producer position with release.  Submit and discard clear
 * BUSY with a release store, in any order, from the thread that reserved
 * (as a BPF program does).  The single
 * consumer reads in order from its position, stops at a BUSY record, and
 * publishes its position with release when done with the records before
 * it; a producer never goes past the consumer position plus the ring size,
 * so a full ring refuses a reservation and never overwrites.
 *
 * A process killed between reserve and submit would block the consumer
 * for ever: the header keeps the reserver's tid, and a busy record whose
 * reserver no longer exists is discarded by the consumer.
 *
 * The consumer trusts neither position nor header: each is read once,
 * the positions must be within one ring of each other, a record must lie
 * inside what was published and inside the data, so a scribbled ring
 * gives -EINVAL, never a read outside it; a pass handles at most a ring's
 * worth of records.
 *
 * A record never wraps: when it would cross the end of the data, reserve
 * first fills the rest with a padding record (DISCARD set, so the
 * consumer skips it) and puts the record at offset 0.  Every record and
 * the free space are multiples of 8, so a padding header always fits.
 * For a record to always fit eventually, it may take at most half the
 * ring (header and rounding included).
 */
#include "dmap_sys.h"
#include "dmap_int.h"

#define DRING_ASK	64	/* busy records' reservers asked after in one pass */

/* --- queues --- */

static struct dqueue_meta *dqueue__meta(struct stp_dmap *m)
{
	return (struct dqueue_meta *)m->area;
}

static uint8_t *dqueue__value(struct stp_dmap *m, uint32_t i)
{
	return m->area + m->lay.data_at + (uint64_t)(i % m->def.max_entries) * m->lay.stride;
}

/*
 * The queue's head and count, each read once (another process may
 * scribble on them): 0, or -EINVAL when they are impossible.
 */
static int dqueue__state(struct stp_dmap *m, uint32_t *head, uint32_t *count)
{
	struct dqueue_meta *q = dqueue__meta(m);

	*head = __atomic_load_n(&q->head, __ATOMIC_RELAXED);
	*count = __atomic_load_n(&q->count, __ATOMIC_RELAXED);
	return *head < m->def.max_entries && *count <= m->def.max_entries ? 0 : -EINVAL;
}

static int dqueue__push(struct stp_dmap *m, const void *val, uint64_t flags)
{
	struct dqueue_meta *q = dqueue__meta(m);
	uint32_t head, count;

	if (dqueue__state(m, &head, &count) < 0)
		return -EINVAL;
	if (count == m->def.max_entries) {
		if (flags != STP_DMAP_EXIST)
			return -E2BIG;
		head = (head + 1) % m->def.max_entries;
		count--;
	}
	memcpy(dqueue__value(m, head + count), val, m->def.value_size);
	q->head = head;
	q->count = count + 1;
	return 0;
}

static int dqueue__pop(struct stp_dmap *m, void *val, int remove)
{
	struct dqueue_meta *q = dqueue__meta(m);
	uint32_t head, count;

	if (dqueue__state(m, &head, &count) < 0)
		return -EINVAL;
	if (count == 0)
		return -ENOENT;
	memcpy(val, dqueue__value(m, head), m->def.value_size);
	if (remove) {
		q->head = (head + 1) % m->def.max_entries;
		q->count = count - 1;
	}
	return 0;
}

/* BPF_ANY: -E2BIG when full; BPF_EXIST: the oldest value makes room. */
int dmap_queue_push(struct stp_dmap *m, const void *val, uint64_t flags)
{
	struct dqueue_meta *q = dqueue__meta(m);
	int err;

	if (flags != STP_DMAP_ANY && flags != STP_DMAP_EXIST)
		return -EINVAL;
	if ((err = dmap_lock(&q->lock, m->seg)) < 0)
		return err;
	dmap_seq_begin(&q->seq);
	err = dqueue__push(m, val, flags);
	dmap_seq_end(&q->seq);
	dmap_unlock(&q->lock);
	return err;
}

static int dqueue__peek(struct stp_dmap *m, void *val)
{
	return dqueue__pop(m, val, 0);
}

/* The oldest value into VAL, taken off the queue when REMOVE (else peek). */
int dmap_queue_pop(struct stp_dmap *m, void *val, int remove)
{
	struct dqueue_meta *q = dqueue__meta(m);
	int err;

	if (m->seg->reader && !remove)	/* a consistent copy, without the lock */
		return dmap_seq_read(m, &q->seq, &q->lock, dqueue__peek, val);
	if ((err = dmap_lock(&q->lock, m->seg)) < 0)
		return err;
	if (remove)
		dmap_seq_begin(&q->seq);
	err = dqueue__pop(m, val, remove);
	if (remove)
		dmap_seq_end(&q->seq);
	dmap_unlock(&q->lock);
	return err;
}

/* --- ring buffers --- */

static struct dring_meta *dring__meta(struct stp_dmap *m)
{
	return (struct dring_meta *)m->area;
}

static struct dring_hdr *dring__hdr(struct stp_dmap *m, uint64_t pos)
{
	return (struct dring_hdr *)(m->area + m->lay.data_at + (pos & (m->def.max_entries - 1)));
}

static uint64_t dring__total(uint32_t len)
{
	return ((uint64_t)(len & DRING_LEN_MASK) + STP_DMAP_RB_HDR + 7) & ~7ull;
}

static void dring__put_hdr(struct dring_hdr *h, uint32_t len, uint32_t tid)
{
	h->tid = tid;
	__atomic_store_n(&h->len, len, __ATOMIC_RELAXED);
}

/* Under the lock: the record's position, or UINT64_MAX when it does not fit now. */
static uint64_t dring__place(struct stp_dmap *m, uint32_t size)
{
	struct dring_meta *r = dring__meta(m);
	uint32_t rsize = m->def.max_entries;
	uint64_t cons = __atomic_load_n(&r->consumer, __ATOMIC_ACQUIRE), prod = r->producer;
	uint64_t total = dring__total(size), off = prod & (rsize - 1), pad = 0;

	if (off + total > rsize)
		pad = rsize - off;
	if (prod - cons > rsize || prod + pad + total - cons > rsize)
		return UINT64_MAX;
	if (pad)
		dring__put_hdr(dring__hdr(m, prod),
			       (uint32_t)(pad - STP_DMAP_RB_HDR) | STP_DMAP_RB_DISCARD, 0);
	dring__put_hdr(dring__hdr(m, prod + pad), size | STP_DMAP_RB_BUSY, dmap_tid());
	__atomic_store_n(&r->producer, prod + pad + total, __ATOMIC_RELEASE);
	return prod + pad;
}

void *dmap_ring_reserve(struct stp_dmap *m, uint32_t size)
{
	uint32_t *lock = &dring__meta(m)->lock;
	uint64_t pos;

	if (size == 0 || dring__total(size) > m->def.max_entries / 2 || size > DRING_LEN_MASK)
		return NULL;
	if (dmap_lock(lock, m->seg) < 0)
		return NULL;
	pos = dring__place(m, size);
	dmap_unlock(lock);
	if (pos == UINT64_MAX)
		return NULL;
	return (uint8_t *)dring__hdr(m, pos) + STP_DMAP_RB_HDR;
}

/* Submit (DISCARD 0) or discard (STP_DMAP_RB_DISCARD) a reserved record. */
void dmap_ring_commit(struct stp_dmap *m, void *rec, uint32_t discard)
{
	uint8_t *data = m->area + m->lay.data_at, *p = rec;
	struct dring_hdr *h;
	uint32_t len;

	if (!p || p < data + STP_DMAP_RB_HDR || p >= data + m->def.max_entries ||
	    (p - data) % 8)
		return;
	h = (struct dring_hdr *)(p - STP_DMAP_RB_HDR);
	len = __atomic_load_n(&h->len, __ATOMIC_RELAXED);
	if (len & STP_DMAP_RB_BUSY)
		__atomic_store_n(&h->len, (len & ~STP_DMAP_RB_BUSY) | discard, __ATOMIC_RELEASE);
}

/* Is the record at CONS, of LEN, whole and inside what is published? */
static int dring__sane(struct stp_dmap *m, uint64_t cons, uint64_t prod, uint32_t len)
{
	uint64_t total = dring__total(len);

	return total <= prod - cons &&
	       (cons & (m->def.max_entries - 1)) + total <= m->def.max_entries;
}

/*
 * The header's length, read once; a record still busy whose reserver is
 * gone is discarded.  Asking costs a system call, so a pass asks at most
 * DRING_ASK times (*ASKED counts): a ring full of busy records naming the
 * dead is taken back a little at each pass, never in one long one.
 */
static uint32_t dring__len(struct dring_hdr *h, uint32_t *asked)
{
	uint32_t len = __atomic_load_n(&h->len, __ATOMIC_ACQUIRE);
	uint32_t tid = __atomic_load_n(&h->tid, __ATOMIC_RELAXED);
	uint32_t abandoned = (len & ~STP_DMAP_RB_BUSY) | STP_DMAP_RB_DISCARD;

	if (!(len & STP_DMAP_RB_BUSY) || !tid || (*asked)++ >= DRING_ASK || !dmap_tid_gone(tid))
		return len;
	if (__atomic_compare_exchange_n(&h->len, &len, abandoned, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return abandoned;
	return len;
}

/* The records from the consumer position up to the first busy one (one pass). */
int dmap_ring_consume(struct stp_dmap *m, int (*cb)(void *, void *, size_t), void *ctx)
{
	struct dring_meta *r = dring__meta(m);
	uint64_t cons = __atomic_load_n(&r->consumer, __ATOMIC_RELAXED);
	uint64_t prod = __atomic_load_n(&r->producer, __ATOMIC_ACQUIRE);
	uint32_t asked = 0;
	int n = 0, err = 0;

	if (prod - cons > m->def.max_entries || (cons & 7))
		return -EINVAL;
	while (cons < prod && err >= 0) {
		struct dring_hdr *h = dring__hdr(m, cons);
		uint32_t len = dring__len(h, &asked), size = len & DRING_LEN_MASK;

		if (len & STP_DMAP_RB_BUSY)
			break;
		if (!dring__sane(m, cons, prod, len))
			return -EINVAL;
		if (!(len & STP_DMAP_RB_DISCARD)) {
			err = cb(ctx, h + 1, size);
			n++;
		}
		cons += dring__total(len);
		__atomic_store_n(&r->consumer, cons, __ATOMIC_RELEASE);
	}
	return err < 0 ? err : n;
}
