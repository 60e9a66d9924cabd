/*
 * test_dyn_dmap.c - runtime/dyninst/dmap*.c: BPF-like maps in a shared
 * segment.  Every map type through two mappings of one segment (create,
 * then attach by fd: another address), thread slots (per thread, across
 * thread exit and fork, taken back from the dead), concurrency (threads
 * hammering a hash map, a ring buffer wrapping around under a consumer
 * thread), segments a reader must refuse or survive, and a reader that
 * trusts nothing (stp_dseg__attach_reader): random bytes where the maps
 * keep their state, a thread rewriting them as it reads, lock words
 * naming live threads that never let go.
 *
 * Threads record what they saw and the main thread asserts (CUnit is not
 * thread-safe); they wait for each other with semaphores and barriers,
 * never with sleeps.  Children of fork() report through the segment or
 * their exit status and leave with _exit().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "../../runtime/dyninst/dmap.h"
#include "../../runtime/dyninst/dmap_int.h"

static char err[256];

static struct stp_dseg *seg_new(const struct stp_dmap_def *defs, int n, int nslots)
{
	struct stp_dseg *s = stp_dseg__create(defs, n, nslots, err, sizeof(err));

	if (!s)
		fprintf(stderr, "stp_dseg__create: %s\n", err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	return s;
}

/* A second mapping of S, through its fd. */
static struct stp_dseg *seg_attach(struct stp_dseg *s)
{
	struct stp_dseg *a = stp_dseg__attach(stp_dseg__fd(s), err, sizeof(err));

	if (!a)
		fprintf(stderr, "stp_dseg__attach: %s\n", err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT(a->base != s->base);
	return a;
}

static struct stp_dmap *map_of(struct stp_dseg *s, const char *name)
{
	struct stp_dmap *m = stp_dseg__map(s, name);

	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	return m;
}

static pid_t child_wait(pid_t pid)
{
	int status = -1;

	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return pid;
}

/* A pid that existed and is gone (reaped). */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	CU_ASSERT_FATAL(pid > 0);
	return child_wait(pid);
}

/* --- arrays --- */

static const struct stp_dmap_def arr_defs[] = {
	{ "arr", BPF_MAP_TYPE_ARRAY, 4, 12, 8, BPF_F_MMAPABLE },
};

static void test_array(void)
{
	struct stp_dseg *s = seg_new(arr_defs, 1, 4), *a = seg_attach(s);
	struct stp_dmap *m = map_of(s, "arr"), *m2 = map_of(a, "arr");
	char v[12] = "hello world", out[12];
	uint32_t k = 3, n, prev;
	size_t len;
	uint8_t *vals;
	void *p1, *p2;

	CU_ASSERT_PTR_NULL(stp_dseg__map(s, "nope"));
	CU_ASSERT_STRING_EQUAL(stp_dmap__def(m2)->name, "arr");
	CU_ASSERT_EQUAL(stp_dmap__def(m2)->value_size, 12);
	CU_ASSERT_EQUAL(stp_dseg__fd(a), -1);
	CU_ASSERT_EQUAL(stp_dmap__update(m, &k, v, BPF_ANY), 0);
	p1 = stp_dmap__lookup(m, &k);
	p2 = stp_dmap__lookup(m2, &k);
	CU_ASSERT(p1 && p2 && p1 != p2);
	CU_ASSERT(p2 && memcmp(p2, v, 12) == 0);
	CU_ASSERT_EQUAL(stp_dmap__read(m2, &k, out), 0);
	CU_ASSERT_EQUAL(memcmp(out, v, 12), 0);
	CU_ASSERT_EQUAL(stp_dmap__update(m, &k, v, BPF_NOEXIST), -EEXIST);
	CU_ASSERT_EQUAL(stp_dmap__update(m, &k, v, 4), -EINVAL);
	CU_ASSERT_EQUAL(stp_dmap__delete(m, &k), -EINVAL);
	CU_ASSERT_PTR_NULL(stp_dmap__lookup_slot(m, &k, 0));
	k = 8;
	CU_ASSERT_EQUAL(stp_dmap__update(m, &k, v, BPF_ANY), -E2BIG);
	CU_ASSERT_PTR_NULL(stp_dmap__lookup(m, &k));
	CU_ASSERT_EQUAL(stp_dmap__read(m, &k, out), -ENOENT);

	vals = stp_dmap__values(m2, &len);
	CU_ASSERT_EQUAL(len, 8 * 16);
	vals[5 * 16] = 'x';
	k = 5;
	CU_ASSERT(stp_dmap__read(m, &k, out) == 0 && out[0] == 'x');

	CU_ASSERT_EQUAL(stp_dmap__next_key(m, NULL, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	for (prev = n; stp_dmap__next_key(m, &prev, &n) == 0; prev = n)
		CU_ASSERT_EQUAL(n, prev + 1);
	CU_ASSERT_EQUAL(prev, 7);

	CU_ASSERT_EQUAL(stp_dmap__push(m, v, 0), -EINVAL);
	CU_ASSERT_EQUAL(stp_dmap__pop(m, out), -EINVAL);
	CU_ASSERT_PTR_NULL(stp_dmap__reserve(m, 8));
	stp_dseg__free(a);
	stp_dseg__free(s);
}

/* --- hash maps --- */

static const struct stp_dmap_def hash_defs[] = {
	{ "h", BPF_MAP_TYPE_HASH, 8, 8, 4, 0 },
};

static int hupdate(struct stp_dmap *m, uint64_t k, uint64_t v, uint64_t flags)
{
	return stp_dmap__update(m, &k, &v, flags);
}

static uint64_t *hlookup(struct stp_dmap *m, uint64_t k)
{
	return stp_dmap__lookup(m, &k);
}

static void test_hash_flags(void)
{
	struct stp_dseg *s = seg_new(hash_defs, 1, 4), *a = seg_attach(s);
	struct stp_dmap *m = map_of(s, "h"), *m2 = map_of(a, "h");
	uint64_t k = 2, v = 0, *p3;

	for (uint64_t i = 1; i <= 4; i++)
		CU_ASSERT_EQUAL(hupdate(m, i, i * 10, BPF_NOEXIST), 0);
	CU_ASSERT_EQUAL(hupdate(m, 1, 99, BPF_NOEXIST), -EEXIST);
	CU_ASSERT_EQUAL(*hlookup(m, 1), 10);
	CU_ASSERT_EQUAL(hupdate(m, 9, 99, BPF_EXIST), -ENOENT);
	CU_ASSERT_EQUAL(hupdate(m2, 2, 20, BPF_EXIST), 0);
	CU_ASSERT(stp_dmap__read(m, &k, &v) == 0 && v == 20);
	CU_ASSERT_EQUAL(hupdate(m, 5, 50, BPF_ANY), -E2BIG);
	CU_ASSERT_EQUAL(hupdate(m, 2, 50, 4), -EINVAL);

	p3 = hlookup(m, 3);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p3);
	CU_ASSERT_EQUAL(*hlookup(m2, 3), 30);
	CU_ASSERT_EQUAL(stp_dmap__delete(m2, &(uint64_t){ 3 }), 0);
	CU_ASSERT_EQUAL(stp_dmap__delete(m, &(uint64_t){ 3 }), -ENOENT);
	CU_ASSERT_PTR_NULL(hlookup(m, 3));
	CU_ASSERT_EQUAL(stp_dmap__read(m, &(uint64_t){ 3 }, &v), -ENOENT);
	CU_ASSERT_EQUAL(hupdate(m, 5, 50, BPF_NOEXIST), 0);
	CU_ASSERT_PTR_EQUAL(hlookup(m, 5), p3);
	CU_ASSERT_EQUAL(*p3, 50);
	CU_ASSERT_EQUAL(hupdate(m, 6, 60, BPF_ANY), -E2BIG);
	CU_ASSERT_PTR_NULL(stp_dmap__lookup_slot(m, &k, 0));
	CU_ASSERT_EQUAL(stp_dmap__push(m, &v, 0), -EINVAL);
	stp_dseg__free(a);
	stp_dseg__free(s);
}

/* A key of 20 bytes: not a multiple of 8, longer than one hash word. */
struct skey {
	uint32_t n;
	char s[16];
};

static const struct stp_dmap_def skey_defs[] = {
	{ "sk", BPF_MAP_TYPE_HASH, sizeof(struct skey), 4, 128, BPF_F_NO_PREALLOC },
};

static struct skey skey(uint32_t n)
{
	struct skey k;

	memset(&k, 0, sizeof(k));
	k.n = n;
	snprintf(k.s, sizeof(k.s), "key-%u", n);
	return k;
}

static void test_hash_next_key(void)
{
	struct stp_dseg *s = seg_new(skey_defs, 1, 2), *a = seg_attach(s);
	struct stp_dmap *m = map_of(s, "sk"), *m2 = map_of(a, "sk");
	int seen[100] = { 0 }, walked = 0, twice = 0, wrong = 0;
	struct skey k, next, first, absent = skey(5000);
	uint32_t v;

	for (uint32_t i = 0; i < 100; i++) {
		k = skey(i);
		CU_ASSERT_EQUAL(stp_dmap__update(m, &k, &i, BPF_NOEXIST), 0);
	}
	for (uint32_t i = 0; i < 100; i += 5) {
		k = skey(i);
		CU_ASSERT_EQUAL(stp_dmap__delete(m, &k), 0);
	}
	for (int r = stp_dmap__next_key(m2, NULL, &next); r == 0;
	     r = stp_dmap__next_key(m2, &k, &next)) {
		struct skey want = skey(next.n);

		k = next;
		walked++;
		if (k.n >= 100 || k.n % 5 == 0 || memcmp(&k, &want, sizeof(k)) != 0 ||
		    stp_dmap__read(m2, &k, &v) != 0 || v != k.n) {
			wrong++;
			continue;
		}
		twice += seen[k.n]++ > 0;
	}
	CU_ASSERT_EQUAL(walked, 80);
	CU_ASSERT_EQUAL(wrong, 0);
	CU_ASSERT_EQUAL(twice, 0);
	CU_ASSERT_EQUAL(stp_dmap__next_key(m, NULL, &first), 0);
	CU_ASSERT_EQUAL(stp_dmap__next_key(m, &absent, &next), 0);
	CU_ASSERT_EQUAL(memcmp(&first, &next, sizeof(next)), 0);
	stp_dseg__free(a);
	stp_dseg__free(s);
}

static long count_cb(struct stp_dmap *m, void *key, void *value, void *ctx)
{
	(*(long *)ctx)++;
	return 0;
}

static long stop_cb(struct stp_dmap *m, void *key, void *value, void *ctx)
{
	return 1;
}

static long delete_cb(struct stp_dmap *m, void *key, void *value, void *ctx)
{
	*(long *)ctx += *(uint64_t *)value;
	return stp_dmap__delete(m, key) != 0;
}

static void test_hash_for_each(void)
{
	struct stp_dseg *s = seg_new(hash_defs, 1, 4);
	struct stp_dmap *m = map_of(s, "h");
	long n = 0, sum = 0;
	uint64_t k;

	for (uint64_t i = 1; i <= 3; i++)
		CU_ASSERT_EQUAL(hupdate(m, i, i, BPF_ANY), 0);
	CU_ASSERT_EQUAL(stp_dmap__for_each(m, count_cb, &n), 3);
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT_EQUAL(stp_dmap__for_each(m, stop_cb, NULL), 1);
	CU_ASSERT_EQUAL(stp_dmap__for_each(m, delete_cb, &sum), 3);
	CU_ASSERT_EQUAL(sum, 6);
	CU_ASSERT_EQUAL(stp_dmap__next_key(m, NULL, &k), -ENOENT);
	CU_ASSERT_EQUAL(stp_dmap__for_each(m, count_cb, &n), 0);
	stp_dseg__free(s);
}

static const struct stp_dmap_def lru_defs[] = {
	{ "lru", BPF_MAP_TYPE_LRU_HASH, 8, 8, 4, 0 },
	{ "plru", BPF_MAP_TYPE_LRU_PERCPU_HASH, 8, 8, 2, 0 },
};

static void test_lru(void)
{
	struct stp_dseg *s = seg_new(lru_defs, 2, 4), *a = seg_attach(s);
	struct stp_dmap *m = map_of(s, "lru"), *p = map_of(s, "plru"), *p2 = map_of(a, "plru");
	uint64_t k, next, vals[4];
	int n = 0, slot = stp_dseg__slot(s);

	for (uint64_t i = 1; i <= 10; i++)
		CU_ASSERT_EQUAL(hupdate(m, i, i * 100, BPF_NOEXIST), 0);
	for (uint64_t i = 1; i <= 6; i++)
		CU_ASSERT_PTR_NULL(hlookup(m, i));
	for (uint64_t i = 7; i <= 10; i++)
		CU_ASSERT(hlookup(m, i) && *hlookup(m, i) == i * 100);
	for (int r = stp_dmap__next_key(m, NULL, &next); r == 0;
	     r = stp_dmap__next_key(m, &k, &next)) {
		k = next;
		n++;
	}
	CU_ASSERT_EQUAL(n, 4);
	CU_ASSERT_EQUAL(stp_dmap__delete(m, &(uint64_t){ 8 }), 0);
	CU_ASSERT_EQUAL(hupdate(m, 11, 1100, BPF_NOEXIST), 0);
	CU_ASSERT(hlookup(m, 7) && hlookup(m, 9) && hlookup(m, 10) && hlookup(m, 11));

	CU_ASSERT_FATAL(slot >= 0);
	for (uint64_t i = 1; i <= 3; i++)
		CU_ASSERT_EQUAL(hupdate(p, i, i, BPF_ANY), 0);
	CU_ASSERT_PTR_NULL(hlookup(p, 1));
	CU_ASSERT_EQUAL(stp_dmap__read(p2, &(uint64_t){ 3 }, vals), 0);
	CU_ASSERT_EQUAL(vals[slot], 3);
	CU_ASSERT_EQUAL(vals[(slot + 1) % 4], 0);
	CU_ASSERT_EQUAL(stp_dmap__read(p2, &(uint64_t){ 1 }, vals), -ENOENT);
	stp_dseg__free(a);
	stp_dseg__free(s);
}

/* --- per-CPU maps: two threads, their own slots --- */

static const struct stp_dmap_def pcpu_defs[] = {
	{ "pa", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 2, 0 },
	{ "ph", BPF_MAP_TYPE_PERCPU_HASH, 8, 12, 4, 0 },
};

struct pcpu_thread {
	struct stp_dseg *s;
	pthread_barrier_t *barrier;
	int t;
	int slot;
	int insert_rc, update_rc, zeroed;
};

static void *pcpu_run(void *arg)
{
	struct pcpu_thread *p = arg;
	struct stp_dmap *pa = stp_dseg__map(p->s, "pa"), *ph = stp_dseg__map(p->s, "ph");
	uint64_t key = 7;
	uint32_t v[3] = { 100u + p->t, 200u + p->t, 300u + p->t }, *mine;

	p->slot = stp_dseg__slot(p->s);
	pthread_barrier_wait(p->barrier);
	if (p->t == 0)
		p->insert_rc = stp_dmap__update(ph, &key, v, BPF_NOEXIST);
	pthread_barrier_wait(p->barrier);
	if (p->t == 1) {
		mine = stp_dmap__lookup(ph, &key);
		p->zeroed = mine && mine[0] == 0 && mine[1] == 0 && mine[2] == 0;
		p->update_rc = stp_dmap__update(ph, &key, v, BPF_EXIST);
	}
	for (int i = 0; i < 1000; i++) {
		uint64_t *c = stp_dmap__lookup(pa, &(uint32_t){ 1 });

		if (c)
			*c += p->t + 1;
	}
	pthread_barrier_wait(p->barrier);
	return NULL;
}

static void test_percpu_threads(void)
{
	struct stp_dseg *s = seg_new(pcpu_defs, 2, 4), *a = seg_attach(s);
	struct stp_dmap *pa = map_of(a, "pa"), *ph = map_of(a, "ph");
	struct pcpu_thread th[2];
	pthread_barrier_t barrier;
	pthread_t tid[2];
	uint64_t sums[4], sum = 0, key = 7;
	uint32_t hv[4][4];

	/* the threads' element will be this one, reused: every slot was set */
	memset(hv, 0xff, sizeof(hv));
	CU_ASSERT_EQUAL(stp_dmap__write(ph, &(uint64_t){ 8 }, hv, BPF_ANY), 0);
	CU_ASSERT_EQUAL(stp_dmap__delete(ph, &(uint64_t){ 8 }), 0);
	pthread_barrier_init(&barrier, NULL, 2);
	for (int t = 0; t < 2; t++) {
		th[t] = (struct pcpu_thread){ .s = s, .barrier = &barrier, .t = t, .slot = -1 };
		pthread_create(&tid[t], NULL, pcpu_run, &th[t]);
	}
	for (int t = 0; t < 2; t++)
		pthread_join(tid[t], NULL);
	pthread_barrier_destroy(&barrier);
	CU_ASSERT_FATAL(th[0].slot >= 0 && th[1].slot >= 0 && th[0].slot < 4 && th[1].slot < 4);
	CU_ASSERT_NOT_EQUAL(th[0].slot, th[1].slot);

	CU_ASSERT_EQUAL(stp_dmap__read(pa, &(uint32_t){ 1 }, sums), 0);
	CU_ASSERT_EQUAL(sums[th[0].slot], 1000);
	CU_ASSERT_EQUAL(sums[th[1].slot], 2000);
	for (int i = 0; i < 4; i++)
		sum += sums[i];
	CU_ASSERT_EQUAL(sum, 3000);
	CU_ASSERT_EQUAL(*(uint64_t *)stp_dmap__lookup_slot(pa, &(uint32_t){ 1 }, th[1].slot), 2000);
	CU_ASSERT_PTR_NULL(stp_dmap__lookup_slot(pa, &(uint32_t){ 1 }, 4));

	CU_ASSERT_EQUAL(th[0].insert_rc, 0);
	CU_ASSERT_EQUAL(th[1].update_rc, 0);
	CU_ASSERT(th[1].zeroed);
	CU_ASSERT_EQUAL(stp_dmap__read(ph, &key, hv), 0);
	for (int t = 0; t < 2; t++) {
		CU_ASSERT_EQUAL(hv[th[t].slot][0], 100u + t);
		CU_ASSERT_EQUAL(hv[th[t].slot][2], 300u + t);
		CU_ASSERT_EQUAL(hv[th[t].slot][3], 0);	/* the rounding to 8 */
	}
	for (int i = 0; i < 4; i++)
		if (i != th[0].slot && i != th[1].slot)
			CU_ASSERT(hv[i][0] == 0 && hv[i][3] == 0);
	stp_dseg__free(a);
	stp_dseg__free(s);
}

/* --- slots: exhaustion, release at thread exit, fork, dead owners --- */

static const struct stp_dmap_def slot_defs[] = {
	{ "pc", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 1, 0 },
	{ "info", BPF_MAP_TYPE_ARRAY, 4, 8, 2, 0 },
	{ "h", BPF_MAP_TYPE_HASH, 8, 8, 16, 0 },
};

struct slot_thread {
	struct stp_dseg *s;
	sem_t ready, go;
	int hold;		/* wait for go before exiting */
	int slot, update_rc;
	void *lookup;
};

static void *slot_run(void *arg)
{
	struct slot_thread *t = arg;
	struct stp_dmap *pc = stp_dseg__map(t->s, "pc");
	uint64_t v = 1;

	t->slot = stp_dseg__slot(t->s);
	t->update_rc = stp_dmap__update(pc, &(uint32_t){ 0 }, &v, BPF_ANY);
	t->lookup = stp_dmap__lookup(pc, &(uint32_t){ 0 });
	if (t->hold) {
		sem_post(&t->ready);
		sem_wait(&t->go);
	}
	return NULL;
}

static void slot_start(struct slot_thread *t, struct stp_dseg *s, int hold, pthread_t *tid)
{
	memset(t, 0, sizeof(*t));
	t->s = s;
	t->hold = hold;
	sem_init(&t->ready, 0, 0);
	sem_init(&t->go, 0, 0);
	pthread_create(tid, NULL, slot_run, t);
	if (hold)
		sem_wait(&t->ready);
}

static void slot_finish(struct slot_thread *t, pthread_t tid)
{
	if (t->hold)
		sem_post(&t->go);
	pthread_join(tid, NULL);
	sem_destroy(&t->ready);
	sem_destroy(&t->go);
}

static void test_slot_exhaustion(void)
{
	struct stp_dseg *s = seg_new(slot_defs, 3, 2), *a = seg_attach(s);
	struct slot_thread t1, t2, t3;
	pthread_t id1, id2, id3;
	int mine = stp_dseg__slot(s);

	CU_ASSERT(mine >= 0 && mine < 2);
	CU_ASSERT_EQUAL(stp_dseg__slot(s), mine);
	CU_ASSERT_EQUAL(stp_dseg__slot(a), mine);	/* one slot per segment, not per mapping */
	slot_start(&t1, s, 1, &id1);
	CU_ASSERT(t1.slot >= 0 && t1.slot != mine);
	CU_ASSERT_EQUAL(t1.update_rc, 0);
	slot_start(&t2, s, 0, &id2);
	slot_finish(&t2, id2);
	CU_ASSERT_EQUAL(t2.slot, -1);
	CU_ASSERT_EQUAL(t2.update_rc, -EBUSY);
	CU_ASSERT_PTR_NULL(t2.lookup);
	slot_finish(&t1, id1);
	CU_ASSERT_EQUAL(s->owners[t1.slot], 0);	/* released at thread exit */
	slot_start(&t3, s, 0, &id3);
	slot_finish(&t3, id3);
	CU_ASSERT_EQUAL(t3.slot, t1.slot);
	CU_ASSERT_EQUAL(t3.update_rc, 0);

	stp_dseg__slot_release(s);
	CU_ASSERT_EQUAL(s->owners[mine], 0);
	CU_ASSERT_EQUAL(stp_dseg__slot(s), mine);
	stp_dseg__free(a);
	stp_dseg__free(s);
}

/* A child holds the only slot; it is taken back once the child is gone. */
static void test_slot_dead_owner(void)
{
	struct stp_dseg *s = seg_new(slot_defs, 3, 1);
	struct slot_thread t;
	int to_child[2], from_child[2];
	pthread_t id;
	char c = 0;
	pid_t pid;

	CU_ASSERT_FATAL(pipe(to_child) == 0 && pipe(from_child) == 0);
	pid = fork();
	if (pid == 0) {
		c = (char)stp_dseg__slot(s);
		if (write(from_child[1], &c, 1) != 1 || read(to_child[0], &c, 1) != 1)
			_exit(2);
		_exit(0);	/* no release */
	}
	CU_ASSERT_FATAL(pid > 0);
	CU_ASSERT(read(from_child[0], &c, 1) == 1 && c == 0);
	slot_start(&t, s, 0, &id);
	slot_finish(&t, id);
	CU_ASSERT_EQUAL(t.slot, -1);	/* the child lives */
	CU_ASSERT(write(to_child[1], &c, 1) == 1);
	child_wait(pid);
	CU_ASSERT_EQUAL(s->owners[0], (uint32_t)pid);
	slot_start(&t, s, 0, &id);
	slot_finish(&t, id);
	CU_ASSERT_EQUAL(t.slot, 0);
	close(to_child[0]);
	close(to_child[1]);
	close(from_child[0]);
	close(from_child[1]);
	stp_dseg__free(s);
}

/* A forked child claims a slot of its own; the parent sees its updates. */
static void test_slot_fork(void)
{
	struct stp_dseg *s = seg_new(slot_defs, 3, 4);
	struct stp_dmap *pc = map_of(s, "pc"), *info = map_of(s, "info"), *h = map_of(s, "h");
	int mine = stp_dseg__slot(s);
	uint64_t *v = stp_dmap__lookup(pc, &(uint32_t){ 0 }), child = 99, vals[4];
	pid_t pid;

	CU_ASSERT_FATAL(mine >= 0 && v);
	*v = 111;
	pid = fork();
	if (pid == 0) {
		uint64_t c = (uint64_t)stp_dseg__slot(s);
		uint64_t *cv = stp_dmap__lookup(pc, &(uint32_t){ 0 });

		if (!cv || stp_dmap__update(info, &(uint32_t){ 0 }, &c, BPF_ANY) ||
		    hupdate(h, 42, 4242, BPF_NOEXIST))
			_exit(1);
		*cv = 222;
		_exit(0);
	}
	CU_ASSERT_FATAL(pid > 0);
	child_wait(pid);
	CU_ASSERT_EQUAL(stp_dmap__read(info, &(uint32_t){ 0 }, &child), 0);
	CU_ASSERT_FATAL(child < 4);
	CU_ASSERT_NOT_EQUAL(child, (uint64_t)mine);
	CU_ASSERT_EQUAL(stp_dmap__read(pc, &(uint32_t){ 0 }, vals), 0);
	CU_ASSERT_EQUAL(vals[mine], 111);
	CU_ASSERT_EQUAL(vals[child], 222);
	CU_ASSERT(hlookup(h, 42) && *hlookup(h, 42) == 4242);
	CU_ASSERT_EQUAL(stp_dseg__slot(s), mine);
	stp_dseg__free(s);
}

/* --- queues --- */

static const struct stp_dmap_def queue_defs[] = {
	{ "q", BPF_MAP_TYPE_QUEUE, 0, 4, 3, 0 },
};

static void test_queue(void)
{
	struct stp_dseg *s = seg_new(queue_defs, 1, 2), *a = seg_attach(s);
	struct stp_dmap *q = map_of(s, "q"), *q2 = map_of(a, "q");
	uint32_t v;

	CU_ASSERT_EQUAL(stp_dmap__pop(q, &v), -ENOENT);
	for (uint32_t i = 1; i <= 3; i++)
		CU_ASSERT_EQUAL(stp_dmap__push(q, &i, BPF_ANY), 0);
	CU_ASSERT_EQUAL(stp_dmap__push(q, &(uint32_t){ 4 }, BPF_ANY), -E2BIG);
	CU_ASSERT_EQUAL(stp_dmap__push(q, &(uint32_t){ 4 }, BPF_NOEXIST), -EINVAL);
	CU_ASSERT(stp_dmap__read(q2, NULL, &v) == 0 && v == 1);	/* peek */
	CU_ASSERT(stp_dmap__pop(q2, &v) == 0 && v == 1);
	CU_ASSERT_EQUAL(stp_dmap__push(q, &(uint32_t){ 4 }, BPF_ANY), 0);
	for (uint32_t i = 2; i <= 4; i++)
		CU_ASSERT(stp_dmap__pop(q, &v) == 0 && v == i);
	CU_ASSERT_EQUAL(stp_dmap__pop(q, &v), -ENOENT);
	CU_ASSERT_EQUAL(stp_dmap__read(q, NULL, &v), -ENOENT);

	for (uint32_t i = 1; i <= 3; i++)
		CU_ASSERT_EQUAL(stp_dmap__write(q2, NULL, &i, BPF_ANY), 0);
	CU_ASSERT_EQUAL(stp_dmap__push(q, &(uint32_t){ 4 }, BPF_EXIST), 0);	/* drops 1 */
	for (uint32_t i = 2; i <= 4; i++)
		CU_ASSERT(stp_dmap__pop(q, &v) == 0 && v == i);
	CU_ASSERT_EQUAL(stp_dmap__update(q, NULL, &v, BPF_ANY), -EINVAL);
	CU_ASSERT_PTR_NULL(stp_dmap__lookup(q, NULL));
	stp_dseg__free(a);
	stp_dseg__free(s);
}

/* --- ring buffers --- */

static const struct stp_dmap_def ring_defs[] = {
	{ "rb", BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0 },
};

struct got {
	int n;
	size_t size[64];
	char first[64];		/* each record's first byte */
	int bad;		/* a record whose bytes are not all its first */
	const uint8_t *lo, *hi;	/* a mapping of the segment ... */
	int inside;		/* ... and records handed out from inside it */
};

static int got_cb(void *ctx, void *data, size_t size)
{
	struct got *g = ctx;
	const char *p = data;

	if (g->n < 64) {
		g->size[g->n] = size;
		g->first[g->n] = p[0];
	}
	for (size_t i = 0; i < size; i++)
		g->bad += p[i] != p[0];
	g->inside += (const uint8_t *)data >= g->lo && (const uint8_t *)data < g->hi;
	g->n++;
	return 0;
}

static int out(struct stp_dmap *m, char c, uint32_t size)
{
	char buf[2048];

	memset(buf, c, size);
	return stp_dmap__output(m, buf, size);
}

static void test_ring_order(void)
{
	struct stp_dseg *s = seg_new(ring_defs, 1, 2), *a = seg_attach(s);
	struct stp_dmap *r = map_of(s, "rb"), *r2 = map_of(a, "rb");
	struct got g = { 0 };
	char *p, *q;

	CU_ASSERT_EQUAL(out(r, 'a', 1), 0);
	CU_ASSERT_EQUAL(out(r, 'b', 13), 0);
	CU_ASSERT_EQUAL(out(r, 'c', 100), 0);
	CU_ASSERT_EQUAL(stp_dmap__consume(r2, got_cb, &g), 3);
	CU_ASSERT(g.size[0] == 1 && g.size[1] == 13 && g.size[2] == 100);
	CU_ASSERT(g.first[0] == 'a' && g.first[1] == 'b' && g.first[2] == 'c');
	CU_ASSERT_EQUAL(g.bad, 0);

	memset(&g, 0, sizeof(g));
	p = stp_dmap__reserve(r, 10);
	q = stp_dmap__reserve(r, 20);
	CU_ASSERT_FATAL(p && q);
	CU_ASSERT_EQUAL((uintptr_t)p % 8, 0);
	memset(p, 'p', 10);
	memset(q, 'q', 20);
	stp_dmap__discard(r, p);
	stp_dmap__submit(r, q);
	CU_ASSERT_EQUAL(stp_dmap__consume(r2, got_cb, &g), 1);
	CU_ASSERT(g.size[0] == 20 && g.first[0] == 'q');

	memset(&g, 0, sizeof(g));
	p = stp_dmap__reserve(r, 30);
	CU_ASSERT_FATAL(p != NULL);
	memset(p, 'x', 30);
	CU_ASSERT_EQUAL(out(r, 'y', 40), 0);
	CU_ASSERT_EQUAL(stp_dmap__consume(r2, got_cb, &g), 0);	/* x is busy */
	stp_dmap__submit(r, p);
	CU_ASSERT_EQUAL(stp_dmap__consume(r2, got_cb, &g), 2);
	CU_ASSERT(g.first[0] == 'x' && g.size[0] == 30 && g.first[1] == 'y' && g.size[1] == 40);

	CU_ASSERT_PTR_NULL(stp_dmap__reserve(r, 0));
	CU_ASSERT_PTR_NULL(stp_dmap__reserve(r, 2041));	/* more than half the ring */
	CU_ASSERT_EQUAL(out(r, 'z', 2041), -E2BIG);
	p = stp_dmap__reserve(r, 2040);
	CU_ASSERT_PTR_NOT_NULL(p);
	stp_dmap__discard(r, p);
	CU_ASSERT_EQUAL(stp_dmap__consume(r2, got_cb, &g), 0);
	stp_dseg__free(a);
	stp_dseg__free(s);
}

static void test_ring_full(void)
{
	struct stp_dseg *s = seg_new(ring_defs, 1, 2);
	struct stp_dmap *r = map_of(s, "rb");
	struct got g = { 0 };
	char *recs[64];
	int n = 0;

	for (; n < 64 && (recs[n] = stp_dmap__reserve(r, 100)); n++)
		memset(recs[n], 'a' + n % 26, 100);
	CU_ASSERT_EQUAL(n, 4096 / 112);	/* 100 bytes + header, rounded to 8 */
	CU_ASSERT_EQUAL(out(r, 'z', 100), -EAGAIN);
	for (int i = n - 1; i > 0; i--)	/* the last first: the first blocks them */
		stp_dmap__submit(r, recs[i]);
	CU_ASSERT_EQUAL(stp_dmap__consume(r, got_cb, &g), 0);
	stp_dmap__submit(r, recs[0]);
	CU_ASSERT_EQUAL(stp_dmap__consume(r, got_cb, &g), n);
	CU_ASSERT_EQUAL(g.bad, 0);
	for (int i = 0; i < n; i++)
		CU_ASSERT_EQUAL(g.first[i], 'a' + i % 26);

	/* the next record wraps: a padding record, then it at offset 0 */
	memset(&g, 0, sizeof(g));
	CU_ASSERT_EQUAL(out(r, 'w', 100), 0);
	CU_ASSERT_EQUAL(out(r, 'v', 100), 0);
	CU_ASSERT_EQUAL(stp_dmap__consume(r, got_cb, &g), 2);
	CU_ASSERT(g.first[0] == 'w' && g.first[1] == 'v' && g.bad == 0);
	stp_dseg__free(s);
}

/* A process killed between reserve and submit does not block the ring. */
static void test_ring_dead_reserver(void)
{
	struct stp_dseg *s = seg_new(ring_defs, 1, 2);
	struct stp_dmap *r = map_of(s, "rb");
	struct got g = { 0 };
	pid_t pid = fork();

	if (pid == 0) {
		char *p = stp_dmap__reserve(r, 16);

		if (p)
			memset(p, 'd', 16);
		_exit(p ? 0 : 1);	/* no submit */
	}
	CU_ASSERT_FATAL(pid > 0);
	child_wait(pid);
	CU_ASSERT_EQUAL(out(r, 'b', 24), 0);
	CU_ASSERT_EQUAL(stp_dmap__consume(r, got_cb, &g), 1);
	CU_ASSERT(g.first[0] == 'b' && g.size[0] == 24);
	CU_ASSERT_EQUAL(stp_dmap__consume(r, got_cb, &g), 0);
	stp_dseg__free(s);
}

/* Two producers, one consumer thread, 4 KiB of ring. */
#define RING_RECS 100000

struct ring_run {
	struct stp_dmap *r, *pr;	/* the consumer's mapping, the producers' */
	int producers_done;
	uint32_t expect[2];	/* each producer's next sequence number */
	long got, lost, bad;
};

struct ring_rec {
	uint32_t producer;
	uint32_t seq;
};

static uint32_t ring_size(uint32_t seq)
{
	return sizeof(struct ring_rec) + (seq * 37) % 300;
}

static int ring_cb(void *ctx, void *data, size_t size)
{
	struct ring_run *run = ctx;
	struct ring_rec rec;
	const uint8_t *p = data;

	memcpy(&rec, data, sizeof(rec));
	run->got++;
	if (rec.producer > 1 || size != ring_size(rec.seq)) {
		run->bad++;
		return 0;
	}
	run->lost += rec.seq != run->expect[rec.producer];
	run->expect[rec.producer] = rec.seq + 1;
	for (size_t i = sizeof(rec); i < size; i++)
		run->bad += p[i] != (uint8_t)(rec.seq + i);
	return 0;
}

static void *ring_consumer(void *arg)
{
	struct ring_run *run = arg;

	while (run->got < 2 * RING_RECS) {
		int done = __atomic_load_n(&run->producers_done, __ATOMIC_ACQUIRE);
		int n = stp_dmap__consume(run->r, ring_cb, run);

		if (n < 0 || (n == 0 && done == 2))
			break;
		if (n == 0)
			sched_yield();
	}
	return NULL;
}

struct ring_producer {
	struct ring_run *run;
	uint32_t id;
};

static void *ring_producer(void *arg)
{
	struct ring_producer *p = arg;

	for (uint32_t seq = 0; seq < RING_RECS; seq++) {
		uint32_t size = ring_size(seq);
		struct ring_rec rec = { p->id, seq };
		uint8_t *d;

		while (!(d = stp_dmap__reserve(p->run->pr, size)))
			sched_yield();
		memcpy(d, &rec, sizeof(rec));
		for (uint32_t i = sizeof(rec); i < size; i++)
			d[i] = (uint8_t)(seq + i);
		stp_dmap__submit(p->run->pr, d);
	}
	__atomic_fetch_add(&p->run->producers_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_ring_threads(void)
{
	struct stp_dseg *s = seg_new(ring_defs, 1, 2), *a = seg_attach(s);
	struct ring_run run = { .r = map_of(a, "rb"), .pr = map_of(s, "rb") };
	struct ring_producer prod[2] = { { &run, 0 }, { &run, 1 } };
	pthread_t c, p[2];

	pthread_create(&c, NULL, ring_consumer, &run);
	for (int i = 0; i < 2; i++)
		pthread_create(&p[i], NULL, ring_producer, &prod[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(p[i], NULL);
	pthread_join(c, NULL);
	CU_ASSERT_EQUAL(run.got, 2 * RING_RECS);
	CU_ASSERT_EQUAL(run.lost, 0);
	CU_ASSERT_EQUAL(run.bad, 0);
	CU_ASSERT(run.expect[0] == RING_RECS && run.expect[1] == RING_RECS);
	stp_dseg__free(a);
	stp_dseg__free(s);
}

/* --- a hash map under four threads --- */

#define HT_THREADS 4
#define HT_N 100000
#define HT_COUNTERS 64

static const struct stp_dmap_def ht_defs[] = {
	{ "ht", BPF_MAP_TYPE_HASH, 8, 8, HT_THREADS * HT_N + HT_COUNTERS, 0 },
};

struct ht_thread {
	struct stp_dmap *m;
	uint64_t t;
	long failed;
};

static void *ht_run(void *arg)
{
	struct ht_thread *h = arg;

	for (uint64_t i = 0; i < HT_N; i++) {
		uint64_t *v, ck = 1ull << 63 | i % HT_COUNTERS;

		h->failed += hupdate(h->m, (h->t + 1) << 32 | i, i, BPF_NOEXIST) != 0;
		if (!(v = hlookup(h->m, ck))) {
			hupdate(h->m, ck, 0, BPF_NOEXIST);	/* another may win */
			v = hlookup(h->m, ck);
		}
		if (v)
			__atomic_fetch_add(v, 1, __ATOMIC_RELAXED);
		else
			h->failed++;
	}
	return NULL;
}

/* Increments of counter C: each thread's i < HT_N with i % HT_COUNTERS == C. */
static uint64_t ht_expect(uint64_t c)
{
	return HT_THREADS * (HT_N / HT_COUNTERS + (c < HT_N % HT_COUNTERS));
}

static void test_hash_threads(void)
{
	struct stp_dseg *s = seg_new(ht_defs, 1, 8), *a = seg_attach(s);
	struct ht_thread th[HT_THREADS];
	pthread_t id[HT_THREADS];
	long failed = 0, keys = 0, wrong = 0;
	uint64_t k, next, v, total = 0;

	for (int t = 0; t < HT_THREADS; t++) {
		th[t].m = map_of(t % 2 ? a : s, "ht");	/* half through each mapping */
		th[t].t = (uint64_t)t;
		th[t].failed = 0;
		pthread_create(&id[t], NULL, ht_run, &th[t]);
	}
	for (int t = 0; t < HT_THREADS; t++) {
		pthread_join(id[t], NULL);
		failed += th[t].failed;
	}
	CU_ASSERT_EQUAL(failed, 0);
	for (int r = stp_dmap__next_key(th[0].m, NULL, &next); r == 0;
	     r = stp_dmap__next_key(th[0].m, &k, &next)) {
		k = next;
		keys++;
		if (stp_dmap__read(th[0].m, &k, &v) != 0)
			wrong++;
		else if (k >> 63)
			wrong += v != ht_expect(k & 0xffffffff);
		else
			wrong += v != (k & 0xffffffff) || (k >> 32) < 1 || (k >> 32) > HT_THREADS;
		total += k >> 63 ? v : 0;
	}
	CU_ASSERT_EQUAL(keys, HT_THREADS * HT_N + HT_COUNTERS);
	CU_ASSERT_EQUAL(wrong, 0);
	CU_ASSERT_EQUAL(total, HT_THREADS * HT_N);
	stp_dseg__free(a);
	stp_dseg__free(s);
}

/* --- locks whose holder is gone, or is us --- */

static void test_lock_owner(void)
{
	struct stp_dseg *s = seg_new(hash_defs, 1, 2);
	struct stp_dmap *m = map_of(s, "h");
	uint32_t *lock = (uint32_t *)m->area;
	pid_t gone = dead_pid();

	*lock = (uint32_t)syscall(SYS_gettid);	/* as if re-entered from a signal handler */
	CU_ASSERT_EQUAL(hupdate(m, 1, 1, BPF_ANY), -EBUSY);
	CU_ASSERT_PTR_NULL(hlookup(m, 1));
	*lock = (uint32_t)gone;			/* died holding it */
	CU_ASSERT_EQUAL(hupdate(m, 1, 1, BPF_ANY), 0);
	CU_ASSERT_EQUAL(*lock, 0);
	CU_ASSERT(hlookup(m, 1) && *hlookup(m, 1) == 1);
	stp_dseg__free(s);
}

/* --- what create and attach refuse --- */

/* S (from create or attach of FD) must be NULL, refused for WHY; FD is closed. */
static void refused(struct stp_dseg *s, int fd, const char *why)
{
	CU_ASSERT_PTR_NULL(s);
	if (s)
		stp_dseg__free(s);
	else if (!strstr(err, why))
		fprintf(stderr, "\nerror \"%s\", expected \"%s\"\n", err, why);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, why));
	if (fd >= 0)
		close(fd);
}

static void create_fails(const struct stp_dmap_def *d, int nslots, const char *why)
{
	refused(stp_dseg__create(d, 1, nslots, err, sizeof(err)), -1, why);
}

static void test_create_refuses(void)
{
	struct stp_dmap_def dup[2] = { { "x", BPF_MAP_TYPE_HASH, 8, 8, 4, 0 },
				       { "x", BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0 } };
	char name[STP_DMAP_NAME_MAX + 1];
	struct stp_dseg *s;

	memset(name, 'n', STP_DMAP_NAME_MAX);
	name[STP_DMAP_NAME_MAX] = '\0';
	create_fails(&(struct stp_dmap_def){ name, BPF_MAP_TYPE_HASH, 8, 8, 4, 0 }, 2,
		     "name must be 1 to 63 bytes");
	name[STP_DMAP_NAME_MAX - 1] = '\0';	/* 63 bytes: fine */
	s = stp_dseg__create(&(struct stp_dmap_def){ name, BPF_MAP_TYPE_HASH, 8, 8, 4, 0 }, 1, 2,
			     err, sizeof(err));
	CU_ASSERT(s && stp_dseg__map(s, name));
	stp_dseg__free(s);
	create_fails(&(struct stp_dmap_def){ "r", BPF_MAP_TYPE_RINGBUF, 0, 0, 5000, 0 }, 2,
		     "power of two");
	create_fails(&(struct stp_dmap_def){ "a", BPF_MAP_TYPE_ARRAY, 8, 8, 4, 0 }, 2,
		     "array key must be 4 bytes");
	create_fails(&(struct stp_dmap_def){ "h", BPF_MAP_TYPE_HASH, 0, 8, 4, 0 }, 2,
		     "hash key must be 1 to 512 bytes");
	create_fails(&(struct stp_dmap_def){ "h", 3, 8, 8, 4, 0 }, 2, "unknown map type");
	create_fails(&(struct stp_dmap_def){ "h", BPF_MAP_TYPE_HASH, 8, 8, 4, 0x10 }, 2,
		     "unsupported map flags");
	create_fails(&(struct stp_dmap_def){ "h", BPF_MAP_TYPE_HASH, 8, 8, 0, 0 }, 2,
		     "max_entries");
	create_fails(&(struct stp_dmap_def){ "p", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 40000, 1, 0 }, 2,
		     "per-cpu value");
	create_fails(&(struct stp_dmap_def){ "h", BPF_MAP_TYPE_HASH, 8, 8, 4, 0 }, 0, "0 slots");
	s = stp_dseg__create(dup, 2, 2, err, sizeof(err));
	CU_ASSERT(!s && strstr(err, "map x: defined twice"));
	s = stp_dseg__create(NULL, 0, 2, err, sizeof(err));
	CU_ASSERT(s && stp_dseg__nmaps(s) == 0 && stp_dseg__nslots(s) == 2);
	stp_dseg__free(s);
}

static const struct stp_dmap_def all_defs[] = {
	{ "h", BPF_MAP_TYPE_HASH, 8, 8, 16, 0 },
	{ "a", BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0 },
	{ "q", BPF_MAP_TYPE_QUEUE, 0, 8, 4, 0 },
	{ "rb", BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0 },
	{ "ph", BPF_MAP_TYPE_PERCPU_HASH, 8, 12, 8, 0 },
	{ "lru", BPF_MAP_TYPE_LRU_HASH, 8, 8, 8, 0 },
	{ "pa", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 4, 0 },
};
#define ALL_NMAPS ((int)(sizeof(all_defs) / sizeof(all_defs[0])))

/* What create seals a segment with, and attach requires. */
#define SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

/* A memfd holding the first SIZE bytes of S, EDIT applied at OFF, with SEALS added. */
static int seg_copy(struct stp_dseg *s, size_t size, size_t off, const void *edit,
		    size_t editlen, int seals)
{
	int fd = memfd_create("test-dmap", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	uint8_t *copy = malloc(size);

	CU_ASSERT_FATAL(fd >= 0 && copy);
	memcpy(copy, s->base, size);
	if (edit)
		memcpy(copy + off, edit, editlen);
	CU_ASSERT_FATAL(write(fd, copy, size) == (ssize_t)size);
	free(copy);
	if (seals)
		CU_ASSERT_FATAL(fcntl(fd, F_ADD_SEALS, seals) == 0);
	return fd;
}

static void attach_fails(int fd, const char *why)
{
	refused(stp_dseg__attach(fd, err, sizeof(err)), fd, why);
}

static void test_attach_refuses(void)
{
	struct stp_dseg *s = seg_new(all_defs, ALL_NMAPS, 4), *a;
	struct dseg_hdr *h = (struct dseg_hdr *)s->base;
	size_t d0 = h->descs_off, d1 = d0 + sizeof(struct dmap_desc);
	uint32_t big = 100000, type = 99, ver = DMAP_VERSION + 1;
	uint64_t off = ((struct dmap_desc *)(s->base + d1))->off + 64;
	char name[STP_DMAP_NAME_MAX];
	int fds[2];

	CU_ASSERT_EQUAL(ftruncate(stp_dseg__fd(s), 100), -1);	/* sealed */
	a = stp_dseg__attach(seg_copy(s, s->size, 0, NULL, 0, SEALS), err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL(a);	/* the copy itself is fine */
	stp_dseg__free(a);
	attach_fails(seg_copy(s, s->size / 2, 0, NULL, 0, SEALS), "truncated");
	attach_fails(seg_copy(s, 16, 0, NULL, 0, SEALS), "not a map segment: 16 bytes");
	attach_fails(seg_copy(s, s->size, 0, NULL, 0, 0), "not a memfd sealed");
	attach_fails(seg_copy(s, s->size, 0, NULL, 0, F_SEAL_SHRINK), "not a memfd sealed");
	attach_fails(seg_copy(s, s->size, 0, "garbage!", 8, SEALS), "bad magic");
	attach_fails(seg_copy(s, s->size, 8, &ver, 4, SEALS), "another version");
	attach_fails(seg_copy(s, s->size, offsetof(struct dseg_hdr, nmaps), &big, 4, SEALS),
		     "out of range");
	attach_fails(seg_copy(s, s->size, d1 + offsetof(struct dmap_desc, off), &off, 8, SEALS),
		     "map 1: corrupt map segment: a map's offset or size");
	attach_fails(seg_copy(s, s->size, d0 + offsetof(struct dmap_desc, max_entries), &big, 4,
			      SEALS), "map 0: corrupt map segment: a map's offset or size");
	attach_fails(seg_copy(s, s->size, d1 + offsetof(struct dmap_desc, type), &type, 4, SEALS),
		     "map 1: unknown map type");
	memset(name, 'n', sizeof(name));
	attach_fails(seg_copy(s, s->size, d0, name, sizeof(name), SEALS), "a map name");
	CU_ASSERT_FATAL(pipe(fds) == 0);
	close(fds[1]);
	attach_fails(fds[0], "not a memfd sealed");
	stp_dseg__free(s);
}

/* Garbage in a map's mutable state: readers neither fault nor hang. */
static void test_corrupt_state(void)
{
	struct stp_dseg *s = seg_new(all_defs, ALL_NMAPS, 4), *a = seg_attach(s);
	struct stp_dmap *h = map_of(a, "h"), *q = map_of(a, "q"), *rb = map_of(a, "rb");
	struct dhash_meta *hm = (struct dhash_meta *)h->area;
	uint32_t *buckets = (uint32_t *)(h->area + h->lay.buckets_at);
	struct dring_meta *rm = (struct dring_meta *)rb->area;
	uint64_t k = 1, v;

	for (uint64_t i = 1; i <= 3; i++)
		CU_ASSERT_EQUAL(hupdate(map_of(s, "h"), i, i, BPF_ANY), 0);
	for (uint32_t b = 0; b < h->lay.nbuckets; b++)
		buckets[b] = 1;
	((struct dhash_elem *)(h->area + h->lay.data_at))->next = 1;	/* a cycle */
	CU_ASSERT_PTR_NULL(hlookup(h, 99));
	CU_ASSERT_EQUAL(stp_dmap__read(h, &(uint64_t){ 99 }, &v), -ENOENT);
	hm->hwm = 0xffffffff;
	hm->free = 0xfffffff0;
	hm->oldest = 12345678;
	for (int n = 0, r = stp_dmap__next_key(h, NULL, &v); r == 0 && n < 100;
	     r = stp_dmap__next_key(h, &k, &v), n++)
		k = v;
	CU_ASSERT_EQUAL(hupdate(h, 99, 1, BPF_ANY), -E2BIG);
	CU_ASSERT_EQUAL(stp_dmap__delete(h, &(uint64_t){ 99 }), -ENOENT);

	((struct dqueue_meta *)q->area)->head = 1000000;
	CU_ASSERT_EQUAL(stp_dmap__pop(q, &v), -EINVAL);
	CU_ASSERT_EQUAL(stp_dmap__push(q, &v, BPF_ANY), -EINVAL);

	rm->producer = rm->consumer + 1000000;
	CU_ASSERT_EQUAL(stp_dmap__consume(rb, got_cb, &(struct got){ 0 }), -EINVAL);
	CU_ASSERT_PTR_NULL(stp_dmap__reserve(rb, 8));
	rm->producer = rm->consumer + 64;
	/* a record longer than what was published */
	((struct dring_hdr *)(rb->area + rb->lay.data_at))->len = 3000;
	CU_ASSERT_EQUAL(stp_dmap__consume(rb, got_cb, &(struct got){ 0 }), -EINVAL);
	stp_dseg__free(a);
	stp_dseg__free(s);
}

/* --- a reader that trusts nothing (stp_dseg__attach_reader) --- */

#define PATIENCE_US 20000

static struct stp_dseg *reader_of(struct stp_dseg *s, unsigned int patience_us)
{
	struct stp_dseg *r = stp_dseg__attach_reader(stp_dseg__fd(s), patience_us, err,
						     sizeof(err));

	if (!r)
		fprintf(stderr, "stp_dseg__attach_reader: %s\n", err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	return r;
}

static void reader_fails(int fd, const char *why)
{
	refused(stp_dseg__attach_reader(fd, PATIENCE_US, err, sizeof(err)), fd, why);
}

static void test_reader_refuses(void)
{
	struct stp_dseg *s = seg_new(all_defs, ALL_NMAPS, 4), *r;
	int fd = seg_copy(s, s->size, 0, NULL, 0, SEALS), fds[2];

	r = stp_dseg__attach_reader(fd, PATIENCE_US, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);	/* sealed as create seals: fine */
	close(fd);				/* the reader keeps its own */
	CU_ASSERT(stp_dseg__fd(r) >= 0 && fcntl(stp_dseg__fd(r), F_GETFD) == FD_CLOEXEC);
	stp_dseg__free(r);
	reader_fails(seg_copy(s, s->size, 0, NULL, 0, 0), "not a memfd sealed");
	reader_fails(seg_copy(s, s->size, 0, NULL, 0, F_SEAL_GROW | F_SEAL_SEAL),
		     "not a memfd sealed");	/* may shrink: a reader would fault */
	reader_fails(seg_copy(s, s->size, 0, NULL, 0, F_SEAL_SHRINK | F_SEAL_SEAL),
		     "not a memfd sealed");
	reader_fails(seg_copy(s, s->size, 0, NULL, 0, F_SEAL_SHRINK | F_SEAL_GROW),
		     "not a memfd sealed");	/* seals may still be added */
	reader_fails(seg_copy(s, s->size / 2, 0, NULL, 0, SEALS), "truncated");
	reader_fails(seg_copy(s, s->size, 0, "garbage!", 8, SEALS), "bad magic");
	CU_ASSERT_FATAL(pipe(fds) == 0);
	close(fds[1]);
	reader_fails(fds[0], "not a memfd sealed");
	stp_dseg__free(s);
}

/* Every map of all_defs with a few values, written through S (its slot). */
static void rd_fill(struct stp_dseg *s)
{
	for (uint64_t i = 1; i <= 5; i++) {
		uint64_t v12[2] = { i, i };
		uint32_t ai = (uint32_t)i % 4;

		CU_ASSERT_EQUAL(hupdate(map_of(s, "h"), i, i * 10, BPF_ANY), 0);
		CU_ASSERT_EQUAL(stp_dmap__update(map_of(s, "ph"), &i, v12, BPF_ANY), 0);
		CU_ASSERT_EQUAL(hupdate(map_of(s, "lru"), i, i, BPF_ANY), 0);
		CU_ASSERT_EQUAL(stp_dmap__update(map_of(s, "a"), &ai, &i, BPF_ANY), 0);
		CU_ASSERT_EQUAL(stp_dmap__update(map_of(s, "pa"), &ai, &i, BPF_ANY), 0);
		if (i <= 3)
			CU_ASSERT_EQUAL(stp_dmap__push(map_of(s, "q"), &i, BPF_ANY), 0);
		CU_ASSERT_EQUAL(out(map_of(s, "rb"), (char)('a' + i), (uint32_t)i * 7), 0);
	}
}

/* A write through R's mapping faults: it is read-only. */
static void write_faults(struct stp_dseg *r)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);	/* not a sanitizer's report */
		*(volatile uint32_t *)r->maps[0].area = 0;
		_exit(0);
	}
	CU_ASSERT_FATAL(pid > 0);
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
}

/* The reader reads and owns no slot; writes, locks and consuming are refused. */
static void test_reader_no_slot(void)
{
	struct stp_dseg *s = seg_new(all_defs, ALL_NMAPS, 4), *r;
	uint32_t owners[4], zero = 0;
	uint64_t k = 2, v = 0, pv[4 * 2];
	struct got g = { 0 };

	rd_fill(s);
	memcpy(owners, s->owners, sizeof(owners));
	r = reader_of(s, PATIENCE_US);
	CU_ASSERT_EQUAL(stp_dseg__slot(r), -1);
	CU_ASSERT(stp_dmap__read(map_of(r, "h"), &k, &v) == 0 && v == 20);
	CU_ASSERT_EQUAL(stp_dmap__read(map_of(r, "ph"), &k, pv), 0);
	CU_ASSERT_EQUAL(pv[2 * stp_dseg__slot(s)], 2);
	CU_ASSERT_EQUAL(stp_dmap__read(map_of(r, "pa"), &zero, pv), 0);
	CU_ASSERT_EQUAL(pv[stp_dseg__slot(s)], 4);
	CU_ASSERT(stp_dmap__read(map_of(r, "q"), NULL, &v) == 0 && v == 1);
	CU_ASSERT_PTR_NULL(stp_dmap__lookup(map_of(r, "pa"), &zero));
	CU_ASSERT_PTR_NULL(stp_dmap__lookup(map_of(r, "h"), &k));	/* it takes no lock */
	CU_ASSERT_EQUAL(stp_dmap__update(map_of(r, "ph"), &k, pv, BPF_ANY), -EPERM);
	CU_ASSERT_EQUAL(stp_dmap__update(map_of(r, "a"), &zero, &v, BPF_ANY), -EPERM);
	CU_ASSERT_EQUAL(memcmp(owners, s->owners, sizeof(owners)), 0);

	CU_ASSERT_EQUAL(stp_dmap__write(map_of(r, "h"), &k, &v, BPF_ANY), -EPERM);
	CU_ASSERT_EQUAL(stp_dmap__delete(map_of(r, "h"), &k), -EPERM);
	CU_ASSERT_EQUAL(stp_dmap__push(map_of(r, "q"), &v, BPF_ANY), -EPERM);
	CU_ASSERT_EQUAL(stp_dmap__pop(map_of(r, "q"), &v), -EPERM);
	CU_ASSERT_EQUAL(stp_dmap__consume(map_of(r, "rb"), got_cb, &g), -EPERM);
	CU_ASSERT_PTR_NULL(stp_dmap__reserve(map_of(r, "rb"), 8));
	write_faults(r);
	stp_dseg__free(r);
	CU_ASSERT_EQUAL(memcmp(owners, s->owners, sizeof(owners)), 0);
	CU_ASSERT_EQUAL(stp_dmap__consume(map_of(s, "rb"), got_cb, &g), 5);	/* all still there */
	CU_ASSERT(g.size[4] == 35 && g.first[4] == 'f' && g.bad == 0);
	stp_dseg__free(s);
}

/* Reads of a hash map and a queue whose sequence counts stay odd: -EBUSY, not a hang. */
static void reads_busy(struct stp_dseg *r)
{
	uint64_t k = 2, v, busy0, busy, retries;
	int rh, rn, rq;

	stp_dseg__reader_stats(r, &retries, &busy0);
	rh = stp_dmap__read(map_of(r, "h"), &k, &v);
	rn = stp_dmap__next_key(map_of(r, "h"), NULL, &v);
	rq = stp_dmap__read(map_of(r, "q"), NULL, &v);
	CU_ASSERT(rh == -EBUSY && rn == -EBUSY && rq == -EBUSY);
	stp_dseg__reader_stats(r, &retries, &busy);
	CU_ASSERT(busy == busy0 + 3 && retries >= busy);	/* each give-up counted */
}

/* A writer of the hash map and the queue at work (SEQ odd) as TID, or done (SEQ even). */
static void set_writer(struct stp_dseg *s, uint32_t tid, uint32_t seq)
{
	struct dhash_meta *h = (struct dhash_meta *)map_of(s, "h")->area;
	struct dqueue_meta *q = (struct dqueue_meta *)map_of(s, "q")->area;

	h->lock = q->lock = tid;
	h->seq = q->seq = seq;
}

static void test_reader_patience(void)
{
	struct stp_dseg *s = seg_new(all_defs, ALL_NMAPS, 4), *r, *r0;
	uint64_t k = 2, v = 0;
	pid_t sleeper;

	rd_fill(s);
	r = reader_of(s, PATIENCE_US);
	sleeper = fork();
	if (sleeper == 0) {
		pause();
		_exit(0);
	}
	CU_ASSERT_FATAL(sleeper > 0);
	set_writer(s, (uint32_t)sleeper, 7);
	reads_busy(r);
	set_writer(s, (uint32_t)syscall(SYS_gettid), 7);	/* the reader's own */
	reads_busy(r);
	set_writer(s, (uint32_t)getppid(), 7);		/* any live process */
	reads_busy(r);
	set_writer(s, 0, 7);				/* odd with no holder: scribbled */
	reads_busy(r);
	r0 = reader_of(s, 0);
	set_writer(s, (uint32_t)sleeper, 7);
	reads_busy(r0);
	stp_dseg__free(r0);
	set_writer(s, (uint32_t)sleeper, 8);		/* a lock held, the count even: read */
	CU_ASSERT(stp_dmap__read(map_of(r, "h"), &k, &v) == 0 && v == 20);

	/* the sleeper dies in the middle of a change: read as a taker-over finds it */
	set_writer(s, (uint32_t)sleeper, 7);
	kill(sleeper, SIGKILL);
	CU_ASSERT_EQUAL(waitpid(sleeper, NULL, 0), sleeper);
	CU_ASSERT(stp_dmap__read(map_of(r, "h"), &k, &v) == 0 && v == 20);
	CU_ASSERT(stp_dmap__read(map_of(r, "q"), NULL, &v) == 0 && v == 1);
	set_writer(s, (uint32_t)dead_pid(), 9);
	CU_ASSERT_EQUAL(stp_dmap__next_key(map_of(r, "h"), NULL, &v), 0);
	set_writer(s, 0x80000001u, 9);	/* no pid at all */
	CU_ASSERT_EQUAL(stp_dmap__next_key(map_of(r, "h"), NULL, &v), 0);
	CU_ASSERT_EQUAL(*(uint32_t *)map_of(s, "h")->area, 0x80000001u);	/* untouched */
	stp_dseg__free(r);
	/* the owner takes the dead holder's lock over, and its change makes the count even */
	CU_ASSERT_EQUAL(hupdate(map_of(s, "h"), 3, 33, BPF_ANY), 0);
	CU_ASSERT_EQUAL(((struct dhash_meta *)map_of(s, "h")->area)->seq, 10);
	stp_dseg__free(s);
}

/*
 * A segment someone else laid out and the caller mapped read-only (a
 * kernel module's, which pmdastap maps from the module's device), read
 * as a reader: values read, writes refused, no slot, a CPU's change (a
 * probe handler's mark in the lock) waited for PATIENCE_US, never read
 * through.
 */
static void test_reader_mem(void)
{
	struct stp_dseg *s = seg_new(all_defs, ALL_NMAPS, 4), *r;
	uint64_t k = 2, v = 0;
	void *base;

	rd_fill(s);
	base = mmap(NULL, s->size, PROT_READ, MAP_SHARED, stp_dseg__fd(s), 0);
	CU_ASSERT_FATAL(base != MAP_FAILED);
	r = stp_dseg__attach_mem_reader(base, s->size, stp_dseg__fd(s), PATIENCE_US, err,
					sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT(stp_dseg__fd(r) >= 0 && stp_dseg__fd(r) != stp_dseg__fd(s));
	CU_ASSERT_EQUAL(stp_dseg__slot(r), -1);
	CU_ASSERT(stp_dmap__read(map_of(r, "h"), &k, &v) == 0 && v == 20);
	CU_ASSERT(stp_dmap__next_key(map_of(r, "h"), NULL, &v) == 0);
	CU_ASSERT_EQUAL(stp_dmap__write(map_of(r, "h"), &k, &v, BPF_ANY), -EPERM);
	set_writer(s, DMAP_KERNEL_TID + 1, 7);
	reads_busy(r);
	set_writer(s, 0, 8);
	CU_ASSERT(stp_dmap__read(map_of(r, "h"), &k, &v) == 0 && v == 20);
	write_faults(r);
	stp_dseg__free(r);	/* unmaps BASE */
	CU_ASSERT(stp_dmap__read(map_of(s, "h"), &k, &v) == 0 && v == 20);
	CU_ASSERT_PTR_NULL(stp_dseg__attach_mem_reader(base, 8, stp_dseg__fd(s), PATIENCE_US,
						       err, sizeof(err)));
	stp_dseg__free(s);
}

/*
 * A writer changing a hash map as fast as it can (key 1's value: the
 * count of changes in every word, so a copy made in the middle of one is
 * seen; other keys inserted and deleted around it, relinking its bucket
 * chain) while a reader reads: every read the reader keeps is whole, the
 * count never goes back, the key is always found and the last read is
 * the writer's last value.
 */
#define PAIR_WORDS 256
#define PAIR_CHANGES 100000	/* the reader reads until the writer made as many */

static const struct stp_dmap_def pair_defs[] = {
	{ "pair", BPF_MAP_TYPE_HASH, 8, PAIR_WORDS * 8, 8, 0 },
};

struct pair_writer {
	struct stp_dseg *s;
	uint64_t done;		/* changes made so far */
	int stop;
};

static void *pair_writer_run(void *arg)
{
	struct pair_writer *w = arg;
	struct stp_dmap *m = map_of(w->s, "pair");
	uint64_t v[PAIR_WORDS];

	for (uint64_t n = 1; !__atomic_load_n(&w->stop, __ATOMIC_RELAXED); n++) {
		uint64_t k = 1, other = 2 + n % 6, gone = 2 + (n + 3) % 6;

		for (int i = 0; i < PAIR_WORDS; i++)
			v[i] = n;
		stp_dmap__update(m, &k, v, BPF_ANY);
		stp_dmap__update(m, &other, v, BPF_ANY);
		stp_dmap__delete(m, &gone);
		__atomic_store_n(&w->done, n, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* Is V one change's value, not before PREV? */
static int pair_whole(const uint64_t *v, uint64_t prev)
{
	for (int i = 1; i < PAIR_WORDS; i++)
		if (v[i] != v[0])
			return 0;
	return v[0] >= prev;
}

static void test_reader_consistent(void)
{
	struct stp_dseg *s = seg_new(pair_defs, 1, 2), *r;
	struct pair_writer w = { s, 0, 0 };
	uint64_t k = 1, v[PAIR_WORDS] = { 0 }, prev = 0, retries, busy;
	long kept = 0, torn = 0, lost = 0;
	pthread_t id;

	r = reader_of(s, 200000);
	CU_ASSERT_EQUAL(stp_dmap__update(map_of(s, "pair"), &k, v, BPF_ANY), 0);
	pthread_create(&id, NULL, pair_writer_run, &w);
	while (__atomic_load_n(&w.done, __ATOMIC_ACQUIRE) < PAIR_CHANGES) {
		int rc = stp_dmap__read(map_of(r, "pair"), &k, v);

		if (rc == -EBUSY)
			continue;
		lost += rc != 0;
		torn += rc == 0 && !pair_whole(v, prev);
		kept += rc == 0;
		prev = rc == 0 ? v[0] : prev;
	}
	__atomic_store_n(&w.stop, 1, __ATOMIC_RELAXED);
	pthread_join(id, NULL);
	CU_ASSERT(stp_dmap__read(map_of(r, "pair"), &k, v) == 0 && v[0] == w.done &&
		  pair_whole(v, 0));
	stp_dseg__reader_stats(r, &retries, &busy);
	if (torn || lost)
		fprintf(stderr, "\n%ld torn, %ld lost of %ld kept\n", torn, lost, kept);
	CU_ASSERT(torn == 0 && lost == 0 && kept > 0);
	stp_dseg__free(r);
	stp_dseg__free(s);
}

/* Busy records whose reservers are gone: a pass takes back a bounded number. */
static void test_ring_abandoned_pass(void)
{
	struct stp_dseg *s = seg_new(ring_defs, 1, 2);
	struct stp_dmap *rb = map_of(s, "rb");
	struct dring_meta *rm = (struct dring_meta *)rb->area;
	uint32_t gone = (uint32_t)dead_pid();
	struct got g = { 0 };

	for (int i = 0; i < 100; i++) {
		struct dring_hdr *h = (struct dring_hdr *)(rb->area + rb->lay.data_at + i * 16);

		h->len = 8 | STP_DMAP_RB_BUSY;
		h->tid = gone;
	}
	rm->producer = 100 * 16;
	CU_ASSERT_EQUAL(out(rb, 'z', 8), 0);
	CU_ASSERT_EQUAL(stp_dmap__consume(rb, got_cb, &g), 0);	/* 64 taken back */
	CU_ASSERT_EQUAL(rm->consumer, 64 * 16);
	CU_ASSERT_EQUAL(stp_dmap__consume(rb, got_cb, &g), 1);
	CU_ASSERT(g.first[0] == 'z' && g.size[0] == 8);
	stp_dseg__free(s);
}

/* --- a hostile segment: random bytes where the maps keep their state --- */

static uint64_t rng(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

struct tally {
	long ok, failed, bad, no_attach;
	uint8_t sum;		/* of the bytes read in place */
};

/* Count R (one of the codes in OKS, 0 first) as data, an error, or a wrong answer. */
static void tally(struct tally *t, int r, int e1, int e2, int e3)
{
	if (r == 0)
		t->ok++;
	else if (r == e1 || r == e2 || r == e3)
		t->failed++;
	else
		t->bad++;
}

#define CANARY 64

/*
 * A read into a buffer of exactly LEN bytes (then a canary): it writes no
 * further.  LEN comes from the definition the reader validated, which a
 * scribbled descriptor may have changed: never from what was created.
 */
static int read_exact(struct stp_dmap *m, const void *key, size_t len, struct tally *t)
{
	uint8_t *buf = malloc(len + CANARY);
	int r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	memset(buf, 0xa5, len + CANARY);
	r = stp_dmap__read(m, key, buf);
	for (size_t i = len; i < len + CANARY; i++)
		t->bad += buf[i] != 0xa5;
	free(buf);
	return r;
}

static void exercise_hash(struct stp_dmap *m, size_t vlen, struct tally *t, uint64_t *x)
{
	const struct stp_dmap_def *d = stp_dmap__def(m);
	uint64_t k = 0, next;
	int r = stp_dmap__next_key(m, NULL, &next);

	for (uint32_t n = 0; r == 0 && n < 2 * d->max_entries + 8; n++) {
		k = next;
		tally(t, read_exact(m, &k, vlen, t), -ENOENT, -EBUSY, -EBUSY);
		r = stp_dmap__next_key(m, &k, &next);
	}
	tally(t, r, -ENOENT, -EBUSY, -EBUSY);
	for (int i = 0; i < 8; i++) {
		k = rng(x) % 24;
		tally(t, read_exact(m, &k, vlen, t), -ENOENT, -EBUSY, -EBUSY);
	}
}

static void exercise_array(struct stp_dmap *m, size_t vlen, struct tally *t)
{
	size_t len = 0;
	const uint8_t *vals = stp_dmap__values(m, &len);
	uint32_t k, next;

	for (k = 0; k <= stp_dmap__def(m)->max_entries; k++)
		tally(t, read_exact(m, &k, vlen, t), -ENOENT, -ENOENT, -ENOENT);
	for (size_t i = 0; vals && i < len; i++)
		t->sum += vals[i];
	t->bad += !vals || !len;
	k = 1;
	tally(t, stp_dmap__next_key(m, &k, &next), -ENOENT, -ENOENT, -ENOENT);
}

/* Every reader call on every map of R: data or an error, nothing else. */
static void exercise(struct stp_dseg *r, struct tally *t, uint64_t *x)
{
	for (int i = 0; i < stp_dseg__nmaps(r); i++) {
		struct stp_dmap *m = stp_dseg__map_at(r, i);
		const struct stp_dmap_def *d = stp_dmap__def(m);
		size_t vlen = (d->value_size + 7) / 8 * 8;

		if (d->type == BPF_MAP_TYPE_PERCPU_HASH || d->type == BPF_MAP_TYPE_PERCPU_ARRAY ||
		    d->type == BPF_MAP_TYPE_LRU_PERCPU_HASH)
			vlen *= (size_t)stp_dseg__nslots(r);
		if (d->type == BPF_MAP_TYPE_ARRAY || d->type == BPF_MAP_TYPE_PERCPU_ARRAY)
			exercise_array(m, vlen, t);
		else if (d->type == BPF_MAP_TYPE_QUEUE)
			tally(t, read_exact(m, NULL, vlen, t), -ENOENT, -EINVAL, -EBUSY);
		else if (d->type == BPF_MAP_TYPE_RINGBUF)	/* a reader consumes nothing */
			t->bad += stp_dmap__consume(m, got_cb, NULL) != -EPERM;
		else
			exercise_hash(m, vlen, t, x);
	}
}

/* Overwrite LEN bytes at P: all of them at random, or a few words with likely indices. */
static void scribble(uint8_t *p, size_t len, uint64_t *x)
{
	if (rng(x) % 2) {
		for (size_t i = 0; i < len; i++)
			p[i] = (uint8_t)rng(x);
		return;
	}
	for (int n = 1 + (int)(rng(x) % 16); n > 0 && len >= 4; n--) {
		uint32_t w = (uint32_t)rng(x), *at = (uint32_t *)p + rng(x) % (len / 4);

		*at = rng(x) % 3 ? w % 20 : w;
	}
}

/* One of the parts of S that a hostile owner would aim at. */
static void target(struct stp_dseg *s, uint64_t *x, uint8_t **p, size_t *len)
{
	static const char *const hashes[] = { "h", "ph", "lru" };
	struct stp_dmap *h = map_of(s, hashes[rng(x) % 3]);
	struct dseg_hdr *hdr = (struct dseg_hdr *)s->base;

	switch (rng(x) % 6) {
	case 0: *p = h->area, *len = h->lay.len; break;
	case 1: *p = h->area + h->lay.buckets_at, *len = h->lay.nbuckets * 4u; break;
	case 2: *p = map_of(s, "q")->area, *len = DMAP_META; break;
	case 3: *p = s->base + hdr->descs_off, *len = s->nmaps * sizeof(struct dmap_desc); break;
	case 4: *p = map_of(s, "rb")->area, *len = map_of(s, "rb")->lay.len; break;
	default: *p = h->area, *len = s->base + s->size - h->area; break;
	}
}

#define FUZZ_SEEDS 2000

static void test_reader_random_bytes(void)
{
	struct stp_dseg *s = seg_new(all_defs, ALL_NMAPS, 4), *r;
	uint8_t *pristine = malloc(s->size), *p;
	struct tally t = { 0 };
	size_t len;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pristine);
	rd_fill(s);
	memcpy(pristine, s->base, s->size);
	for (uint64_t seed = 1; seed <= FUZZ_SEEDS; seed++) {
		uint64_t x = seed * 0x9e3779b97f4a7c15ull;

		memcpy(s->base, pristine, s->size);
		target(s, &x, &p, &len);
		scribble(p, len, &x);
		if (!(r = stp_dseg__attach_reader(stp_dseg__fd(s), 1000, err, sizeof(err)))) {
			t.no_attach++;	/* garbled descriptors: refused, and said why */
			t.bad += !strstr(err, "map ");
			continue;
		}
		exercise(r, &t, &x);
		target(s, &x, &p, &len);	/* and while attached */
		scribble(p, len, &x);
		exercise(r, &t, &x);
		stp_dseg__free(r);
	}
	if (t.bad)
		fprintf(stderr, "\n%ld wrong answers\n", t.bad);
	CU_ASSERT_EQUAL(t.bad, 0);
	CU_ASSERT(t.ok > 0 && t.failed > 0 && t.no_attach > 0 && t.no_attach < FUZZ_SEEDS / 2);
	free(pristine);
	stp_dseg__free(s);
}

/* A thread rewriting words of the whole segment while a reader reads it. */
struct scribbler {
	struct stp_dseg *s;
	int stop;
};

static void *scribbler_run(void *arg)
{
	struct scribbler *sc = arg;
	uint64_t x = 0x2545f4914f6cdd1dull;

	while (!__atomic_load_n(&sc->stop, __ATOMIC_RELAXED)) {
		uint32_t w = (uint32_t)rng(&x);
		uint32_t *at = (uint32_t *)sc->s->base + rng(&x) % (sc->s->size / 4);

		if (w % 4 == 0)	/* a lock word, flipping under the reader's CAS */
			at = (uint32_t *)sc->s->maps[(w >> 8) % (uint32_t)sc->s->nmaps].area;
		__atomic_store_n(at, rng(&x) % 3 ? w % 20 : w, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_reader_concurrent_scribbler(void)
{
	struct stp_dseg *s = seg_new(all_defs, ALL_NMAPS, 4), *r;
	struct scribbler sc = { s, 0 };
	struct tally t = { 0 };
	uint64_t x = 7;
	pthread_t id;

	rd_fill(s);
	r = reader_of(s, 200);
	pthread_create(&id, NULL, scribbler_run, &sc);
	for (int round = 0; round < 1000; round++)
		exercise(r, &t, &x);
	__atomic_store_n(&sc.stop, 1, __ATOMIC_RELAXED);
	pthread_join(id, NULL);
	CU_ASSERT_EQUAL(t.bad, 0);
	CU_ASSERT(t.ok > 0 && t.failed > 0);
	stp_dseg__free(r);
	stp_dseg__free(s);
}

void unit_register(void)
{
	static const struct unit_case maps[] = {
		{ "array through two mappings", test_array },
		{ "hash update flags, full, reuse", test_hash_flags },
		{ "hash next_key walks each key once", test_hash_next_key },
		{ "hash for_each, deleting as it goes", test_hash_for_each },
		{ "lru evicts the oldest", test_lru },
		{ "queue order, full, empty", test_queue },
		{ "ring order, discard, busy, limits", test_ring_order },
		{ "ring full refuses, then wraps", test_ring_full },
		{ NULL, NULL },
	};
	static const struct unit_case threads[] = {
		{ "per-cpu maps: a slot per thread", test_percpu_threads },
		{ "slots run out, come back at thread exit", test_slot_exhaustion },
		{ "slot of a dead process taken back", test_slot_dead_owner },
		{ "forked child has its own slot", test_slot_fork },
		{ "ring: a dead reserver does not block", test_ring_dead_reserver },
		{ "ring: 2 x 100k records through 4 KiB", test_ring_threads },
		{ "hash: 4 threads x 100k, exact totals", test_hash_threads },
		{ "lock held by the dead or by us", test_lock_owner },
		{ NULL, NULL },
	};
	static const struct unit_case segments[] = {
		{ "create refuses bad definitions", test_create_refuses },
		{ "attach refuses foreign or garbled", test_attach_refuses },
		{ "corrupt map state: no crash, no hang", test_corrupt_state },
		{ NULL, NULL },
	};
	static const struct unit_case reader[] = {
		{ "attach_reader refuses unsealed, resizable", test_reader_refuses },
		{ "reader claims no slot, writes nothing, copies", test_reader_no_slot },
		{ "live lock holder: -EBUSY after patience", test_reader_patience },
		{ "a mapped segment read as a reader (a module's)", test_reader_mem },
		{ "reads stay whole while a writer races", test_reader_consistent },
		{ "ring: the dead's busy records, 64 a pass", test_ring_abandoned_pass },
		{ "random bytes in maps and descriptors", test_reader_random_bytes },
		{ "a thread rewriting the segment meanwhile", test_reader_concurrent_scribbler },
		{ NULL, NULL },
	};

	unit_add_suite("dmap", maps);
	unit_add_suite("dmap threads", threads);
	unit_add_suite("dmap segments", segments);
	unit_add_suite("dmap untrusting reader", reader);
}
