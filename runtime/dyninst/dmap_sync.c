/*
 * dmap_sync.c - who is who in a segment: thread ids, the maps' spinlocks
 * and the thread slots, and the list of this process's mappings.
 *
 * A lock word and a slot's owner word hold the owner's tid (0: free), so
 * that a waiter can tell a holder that died (kill(tid, 0) fails, or it is
 * a zombie) and take over: a probed process killed inside a handler must
 * not hang the others.  Taking over restores progress, not whatever the
 * dead holder left half-done.  Tids are compared in the pid namespace of
 * the caller: every process sharing a segment is assumed to be in one.
 *
 * A reader segment (stp_dseg__attach_reader) writes nothing: it takes no
 * lock and claims no slot.  It copies a hash map's or a queue's data and
 * keeps the copy when the map's sequence count was even and unchanged
 * around it (dmap_seq_read); a count that stays odd (a writer busy, or
 * someone who writes anything into the segment) makes it give up after
 * its patience with -EBUSY, counted; a count left odd by a holder that
 * died is read through, as a writer taking the lock over would find it.
 *
 * A thread's slots are remembered in thread-local storage (a few, for the
 * few segments a process may map) and released by a pthread key's
 * destructor when the thread exits.  The key and the fork handler (a child
 * forgets the slots and tid it inherited) are set up on first use.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dmap_int.h"

#define DLOCK_PATIENCE	10000000u	/* spins before asking whether the holder lives */
#define DLOCK_YIELD	128		/* spins between sched_yield()s and reader clock reads */
#define DSLOT_TLS_MAX	8		/* segments a thread holds slots in */
#define DSLOT_RECLAIM	256		/* failed claims between looks for dead owners */

struct dslot_tls {
	uint64_t id;
	int slot;
};

static pthread_once_t dsync_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t dsync_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t dsync_key;
static int dsync_have_key;
static struct stp_dseg *dsync_live;	/* under dsync_mutex */

static __thread uint32_t dsync_tid;
static __thread struct dslot_tls dslot_tls[DSLOT_TLS_MAX];
static __thread int dslot_ntls;
static __thread uint32_t dslot_fails;

/* --- fork and thread exit --- */

static void dsync__prepare(void)
{
	pthread_mutex_lock(&dsync_mutex);
}

static void dsync__parent(void)
{
	pthread_mutex_unlock(&dsync_mutex);
}

/* The child's one thread has a new tid and no slot yet. */
static void dsync__child(void)
{
	pthread_mutex_unlock(&dsync_mutex);
	dsync_tid = 0;
	dslot_ntls = 0;
	dslot_fails = 0;
}

static struct stp_dseg *dsync__live_by_id(uint64_t id)
{
	struct stp_dseg *s;

	for (s = dsync_live; s; s = s->next)
		if (s->id == id)
			return s;
	return NULL;
}

static void dslot__drop(struct stp_dseg *s, int slot, uint32_t tid)
{
	uint32_t cur = tid;

	if (slot >= 0 && slot < s->nslots)
		__atomic_compare_exchange_n(&s->owners[slot], &cur, 0, 0, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED);
}

static void dsync__thread_exit(void *unused)
{
	pthread_mutex_lock(&dsync_mutex);
	for (int i = 0; i < dslot_ntls; i++) {
		struct stp_dseg *s = dsync__live_by_id(dslot_tls[i].id);

		if (s)
			dslot__drop(s, dslot_tls[i].slot, dsync_tid);
	}
	dslot_ntls = 0;
	pthread_mutex_unlock(&dsync_mutex);
}

static void dsync__init(void)
{
	pthread_atfork(dsync__prepare, dsync__parent, dsync__child);
	dsync_have_key = pthread_key_create(&dsync_key, dsync__thread_exit) == 0;
}

uint32_t dmap_tid(void)
{
	if (!dsync_tid) {
		int saved = errno;

		pthread_once(&dsync_once, dsync__init);
		dsync_tid = (uint32_t)syscall(SYS_gettid);
		errno = saved;
	}
	return dsync_tid;
}

/* --- is a tid alive --- */

/* State Z (zombie) or X (dead) in /proc/TID/stat; 0 when unreadable. */
static int dsync__zombie(uint32_t tid)
{
	char path[40], buf[512], *p;
	int fd, saved = errno;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/stat", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	errno = saved;
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/*
 * Is there no thread TID?  0, or a tid negative as a pid_t (kill() would
 * take it for a process group), names none.  errno is left alone.
 */
int dmap_tid_gone(uint32_t tid)
{
	int saved = errno, gone;

	if (tid == 0 || tid > INT_MAX)
		return 1;
	if (tid - DMAP_KERNEL_TID < STP_DMAP_MAX_SLOTS)
		return 0;	/* a CPU in a kernel-runtime handler: it never dies holding */
	gone = kill((pid_t)tid, 0) != 0 && errno == ESRCH;
	errno = saved;
	return gone;
}

/* Is there no thread TID, or only its zombie? */
static int dsync__dead(uint32_t tid)
{
	return dmap_tid_gone(tid) || dsync__zombie(tid);
}

/* --- spinlocks --- */

static void dlock__relax(uint32_t spins)
{
	if (spins % DLOCK_YIELD == 0) {
		sched_yield();
		return;
	}
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static int dlock__wait(uint32_t *lock, uint32_t me)
{
	for (uint32_t spins = 1;; spins++) {
		uint32_t cur = __atomic_load_n(lock, __ATOMIC_RELAXED);

		if (cur == me)
			return -EBUSY;
		if (cur == 0 || (spins % DLOCK_PATIENCE == 0 && dsync__dead(cur))) {
			if (__atomic_compare_exchange_n(lock, &cur, me, 0, __ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED))
				return 0;
			continue;
		}
		dlock__relax(spins);
	}
}

static uint64_t dlock__now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * 0 with the lock held, or -EBUSY: this thread holds it already
 * (re-entered).  A reader segment never takes one (-EPERM): it writes
 * nothing, and reads through dmap_seq_read.
 */
int dmap_lock(uint32_t *lock, const struct stp_dseg *s)
{
	uint32_t me = dmap_tid(), cur = 0;

	if (s->reader)
		return -EPERM;
	if (__atomic_compare_exchange_n(lock, &cur, me, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	return dlock__wait(lock, me);
}

/* --- a reader's copies --- */

/*
 * One try: FN's result (0 or a negative errno) when the copy is
 * consistent, else 1.  ASKED says whether the holder of the odd count
 * was asked after already: once per count, since asking reads /proc.
 */
static int dseq__try(struct stp_dmap *m, const uint32_t *seq, const uint32_t *lock,
		     dmap_copy_fn *fn, void *arg, int *asked)
{
	uint32_t s1 = __atomic_load_n(seq, __ATOMIC_ACQUIRE), holder = 0;
	int err;

	if (s1 & 1) {	/* a change under way, or abandoned by a writer that died */
		holder = __atomic_load_n(lock, __ATOMIC_RELAXED);
		if (*asked || !holder || !dsync__dead(holder)) {
			*asked = 1;
			return 1;
		}
	}
	err = fn(m, arg);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(seq, __ATOMIC_RELAXED) != s1 ||
	    (holder && __atomic_load_n(lock, __ATOMIC_RELAXED) != holder))
		return 1;
	return err;
}

int dmap_seq_read(struct stp_dmap *m, const uint32_t *seq, const uint32_t *lock,
		  dmap_copy_fn *fn, void *arg)
{
	struct stp_dseg *s = m->seg;
	uint64_t deadline = 0;
	uint32_t last = 0;
	int asked = 0, err;

	for (uint32_t tries = 1;; tries++) {
		uint32_t now_seq = __atomic_load_n(seq, __ATOMIC_RELAXED);

		if (now_seq != last)	/* a new count: its holder is asked after anew */
			asked = 0;
		last = now_seq;
		if ((err = dseq__try(m, seq, lock, fn, arg, &asked)) != 1)
			return err;
		s->seq_retries++;
		if (!deadline)
			deadline = dlock__now_us() + s->patience_us;
		else if (dlock__now_us() >= deadline) {
			s->seq_busy++;
			return -EBUSY;
		}
		dlock__relax(tries);
	}
}

void dmap_unlock(uint32_t *lock)
{
	__atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}

/* --- this process's mappings --- */

void dmap_seg_register(struct stp_dseg *s)
{
	pthread_once(&dsync_once, dsync__init);
	pthread_mutex_lock(&dsync_mutex);
	s->next = dsync_live;
	dsync_live = s;
	pthread_mutex_unlock(&dsync_mutex);
}

/* Off the list; the calling thread's slot goes back if S was the last mapping. */
void dmap_seg_unregister(struct stp_dseg *s)
{
	struct stp_dseg **p;
	int last;

	pthread_mutex_lock(&dsync_mutex);
	for (p = &dsync_live; *p && *p != s; p = &(*p)->next)
		;
	if (*p)
		*p = s->next;
	last = !dsync__live_by_id(s->id);
	pthread_mutex_unlock(&dsync_mutex);
	if (last)
		stp_dseg__slot_release(s);
}

/* --- thread slots --- */

/* Forget slots in segments no longer mapped here; is there room now? */
static int dslot__purge(void)
{
	int n = 0;

	pthread_mutex_lock(&dsync_mutex);
	for (int i = 0; i < dslot_ntls; i++)
		if (dsync__live_by_id(dslot_tls[i].id))
			dslot_tls[n++] = dslot_tls[i];
	dslot_ntls = n;
	pthread_mutex_unlock(&dsync_mutex);
	return n < DSLOT_TLS_MAX;
}

/* A free slot (or one already ours: a tid that came back). */
static int dslot__take(struct stp_dseg *s, uint32_t me)
{
	for (int i = 0; i < s->nslots; i++) {
		uint32_t cur = 0;

		if (__atomic_compare_exchange_n(&s->owners[i], &cur, me, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED) ||
		    cur == me)
			return i;
	}
	return -1;
}

/* A slot whose owner died without releasing it. */
static int dslot__reclaim(struct stp_dseg *s, uint32_t me)
{
	for (int i = 0; i < s->nslots; i++) {
		uint32_t cur = __atomic_load_n(&s->owners[i], __ATOMIC_RELAXED);

		if (cur && cur != me && dsync__dead(cur) &&
		    __atomic_compare_exchange_n(&s->owners[i], &cur, me, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return i;
	}
	return -1;
}

static int dslot__claim(struct stp_dseg *s)
{
	uint32_t me = dmap_tid();
	int slot;

	if (s->reader)	/* reads every slot's values, owns none */
		return -1;
	if (dslot_ntls == DSLOT_TLS_MAX && !dslot__purge())
		return -1;
	slot = dslot__take(s, me);
	if (slot < 0 && dslot_fails++ % DSLOT_RECLAIM == 0)
		slot = dslot__reclaim(s, me);
	if (slot < 0)
		return -1;
	dslot_tls[dslot_ntls].id = s->id;
	dslot_tls[dslot_ntls++].slot = slot;
	if (dsync_have_key)
		pthread_setspecific(dsync_key, dslot_tls);
	return slot;
}

int stp_dseg__slot(struct stp_dseg *s)
{
	for (int i = 0; i < dslot_ntls; i++)
		if (dslot_tls[i].id == s->id)
			return dslot_tls[i].slot;
	return dslot__claim(s);
}

void stp_dseg__slot_release(struct stp_dseg *s)
{
	for (int i = 0; i < dslot_ntls; i++) {
		if (dslot_tls[i].id != s->id)
			continue;
		dslot__drop(s, dslot_tls[i].slot, dmap_tid());
		dslot_tls[i] = dslot_tls[--dslot_ntls];
		return;
	}
}
