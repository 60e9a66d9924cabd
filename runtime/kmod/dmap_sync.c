/*
 * dmap_sync.c - who is who in a segment, in a module of the kernel
 * runtime: dyninst/dmap_sync.c's calls for handlers that run on a CPU
 * with preemption off.
 *
 * A CPU's mark in a lock word is DMAP_KERNEL_TID + its number: pmstap,
 * which shares the segment, never takes such a lock for a dead holder's.
 * Slots are CPUs: the module lays the segment out with one slot a
 * possible CPU and nobody claims them.  A handler waits for a lock held
 * by pmstap a bounded number of spins only (pmstap may be preempted in
 * the middle of a read); past the bound the call gives -EBUSY and the
 * handler counts a failed update, as a BPF map whose bucket lock is busy
 * does; so it does at once when the holder is this very CPU (a handler
 * interrupted inside a handler).  Another CPU's handler runs with
 * preemption off and is waited for as a BPF map's bucket lock waits, up
 * to DLOCK_CPU_NS as a guard: a timer.profile hrtimer fires on every CPU
 * at once, so its handlers meet at the same keys at every tick, and a
 * vCPU under emulation can stall for milliseconds in the middle of one.
 */
#include <linux/sched/clock.h>

#include "../dyninst/dmap_sys.h"
#include "../dyninst/dmap_int.h"

#define DLOCK_SPINS 4096	/* a handler's patience with pmstap, in cpu_relax()es */
#define DLOCK_CPU_NS (100 * NSEC_PER_MSEC)	/* and with another CPU's handler */

uint32_t dmap_tid(void)
{
	return DMAP_KERNEL_TID + raw_smp_processor_id();
}

int dmap_tid_gone(uint32_t tid)
{
	return tid == 0;
}

int dmap_lock(uint32_t *lock, const struct stp_dseg *s)
{
	uint32_t me = dmap_tid();
	uint64_t since = 0;

	for (int spins = 0; spins < DLOCK_SPINS; spins++) {
		uint32_t cur = 0;

		if (__atomic_compare_exchange_n(lock, &cur, me, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return 0;
		if (cur == me)
			return -EBUSY;	/* this CPU holds it: a handler interrupted a handler */
		if (cur >= DMAP_KERNEL_TID) {	/* another CPU's handler: it will be quick */
			if (!since)
				since = local_clock();
			else if (local_clock() - since > DLOCK_CPU_NS)
				return -EBUSY;
			spins = 0;
		}
		cpu_relax();
	}
	return -EBUSY;
}

/* A module lays its segment out and writes it: it has no reader segment. */
int dmap_seq_read(struct stp_dmap *m, const uint32_t *seq, const uint32_t *lock,
		  dmap_copy_fn *fn, void *arg)
{
	return -EINVAL;
}

void dmap_unlock(uint32_t *lock)
{
	__atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}

void dmap_seg_register(struct stp_dseg *s)
{
}

void dmap_seg_unregister(struct stp_dseg *s)
{
}

int stp_dseg__slot(struct stp_dseg *s)
{
	int cpu = raw_smp_processor_id();

	return cpu < s->nslots ? cpu : -1;
}

void stp_dseg__slot_release(struct stp_dseg *s)
{
}
