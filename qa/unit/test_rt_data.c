/*
 * test_rt_data.c - the data interface (runtime/user/data.h) over real BPF
 * maps made here, laid out as stp_meta describes them: a hash array of
 * longs, a slotted array read in place (with its generation), the scalar
 * globals, a per-CPU scalar statistic, the health counters summed over
 * CPUs, and what adopt refuses.  Needs root (BPF maps); skipped otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "unit.h"
#include "../../runtime/dyninst/dmap.h"
#include "../../runtime/dyninst/dmap_int.h"
#include "../../runtime/user/data.h"
#include "../../runtime/user/stats.h"

/* globals: 0 a[long] long (hash), 1 s[long] long (slotted), 2 n (scalar), 3 st (scalar stats) */
static const struct stp_meta_global globals[] = {
	{ .name = "a", .type = STP_TYPE_LONG, .nkeys = 1, .key_types = { STP_TYPE_LONG },
	  .map = "g_a", .key_size = 8, .value_size = 8, .max_entries = 16, .exported = true },
	{ .name = "s", .type = STP_TYPE_LONG, .nkeys = 1, .key_types = { STP_TYPE_LONG },
	  .map = "g_s", .key_size = 8, .value_size = 8, .max_entries = 4, .exported = true,
	  .values_map = "gv_s" },
	{ .name = "n", .type = STP_TYPE_LONG, .map = "stp_globals", .offset = 8, .key_size = 4,
	  .value_size = 8, .max_entries = 1, .exported = true },
	{ .name = "st", .type = STP_TYPE_STATS, .map = "g_st", .key_size = 4,
	  .value_size = sizeof(struct stp_stat_partial), .max_entries = 1, .percpu = true,
	  .exported = true },
};
static const struct stp_meta meta = {
	.version = STP_META_VERSION, .script = "t", .globals = globals, .nglobals = 4,
};

static bool root;

static int make_map(enum bpf_map_type type, size_t ksize, size_t vsize, uint32_t max,
		    uint32_t flags)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = flags);

	return bpf_map_create(type, NULL, (uint32_t)ksize, (uint32_t)vsize, max, &opts);
}

static void skip_unless_root(void)
{
	if (!root)
		fprintf(stderr, "test_rt_data: not root: the BPF map cases are skipped\n");
}

/* A hash array of longs: every key, its value. */
static void test_hash_array(void)
{
	struct stp_data *d = stp_data__new(&meta, 2);
	struct stp_data_elems e;
	int64_t sum = 0;
	int fd;

	if (!root)
		return skip_unless_root();
	fd = make_map(BPF_MAP_TYPE_HASH, 8, 8, 16, 0);
	CU_ASSERT_FATAL(fd >= 0);
	for (int64_t k = 1; k <= 10; k++) {
		int64_t v = k * 100;

		CU_ASSERT(bpf_map_update_elem(fd, &k, &v, BPF_ANY) == 0);
	}
	CU_ASSERT_TRUE(stp_data__adopt(d, "g_a", fd));
	CU_ASSERT_TRUE(stp_data__has(d, 0));
	CU_ASSERT_FALSE(stp_data__in_place(d, 0));
	CU_ASSERT_EQUAL(stp_data__read(d, 0, &e), 10);
	for (int i = 0; i < e.n; i++) {
		int64_t k, v;

		memcpy(&k, e.keys + (size_t)i * 8, 8);
		memcpy(&v, e.vals + (size_t)i * e.vstride, 8);
		CU_ASSERT_EQUAL(v, k * 100);
		sum += v;
	}
	CU_ASSERT_EQUAL(sum, 5500);
	free(e.keys);
	free(e.vals);
	stp_data__free(d);
}

/* A slotted array: keys to slots, the values in place, the generation. */
static void test_slotted_array(void)
{
	struct stp_data *d = stp_data__new(&meta, 2);
	struct stp_data_elems e;
	int kfd, vfd;
	int64_t gen = 7, v;
	uint32_t slot;

	if (!root)
		return skip_unless_root();
	kfd = make_map(BPF_MAP_TYPE_HASH, 8, sizeof(uint32_t), 4, 0);
	vfd = make_map(BPF_MAP_TYPE_ARRAY, sizeof(uint32_t), 8, 4 + STP_SLOT_FIRST, BPF_F_MMAPABLE);
	CU_ASSERT_FATAL(kfd >= 0 && vfd >= 0);
	slot = STP_SLOT_GEN;
	CU_ASSERT(bpf_map_update_elem(vfd, &slot, &gen, BPF_ANY) == 0);
	for (int64_t k = 1; k <= 3; k++) {
		slot = STP_SLOT_FIRST + (uint32_t)k;
		v = k * 11;
		CU_ASSERT(bpf_map_update_elem(kfd, &k, &slot, BPF_ANY) == 0);
		CU_ASSERT(bpf_map_update_elem(vfd, &slot, &v, BPF_ANY) == 0);
	}
	CU_ASSERT_TRUE(stp_data__adopt(d, "g_s", kfd));
	CU_ASSERT_TRUE(stp_data__adopt(d, "gv_s", dup(vfd)));	/* the data owns what it adopts */
	CU_ASSERT_TRUE(stp_data__in_place(d, 1));
	CU_ASSERT_EQUAL(stp_data__generation(d, 1), 7);
	memcpy(&v, stp_data__slot_value(d, 1, STP_SLOT_FIRST + 2), 8);
	CU_ASSERT_EQUAL(v, 22);
	/* a write through the map shows in place */
	slot = STP_SLOT_FIRST + 2;
	v = 99;
	CU_ASSERT(bpf_map_update_elem(vfd, &slot, &v, BPF_ANY) == 0);
	memcpy(&v, stp_data__slot_value(d, 1, STP_SLOT_FIRST + 2), 8);
	CU_ASSERT_EQUAL(v, 99);
	CU_ASSERT_EQUAL(stp_data__read_slots(d, 1, &e), 3);
	free(e.keys);
	free(e.vals);
	/* read() follows the slots: values, not slots */
	CU_ASSERT_EQUAL(stp_data__read(d, 1, &e), 3);
	for (int i = 0; i < e.n; i++) {
		int64_t k;

		memcpy(&k, e.keys + (size_t)i * 8, 8);
		memcpy(&v, e.vals + (size_t)i * e.vstride, 8);
		CU_ASSERT_EQUAL(v, k == 2 ? 99 : k * 11);
	}
	free(e.keys);
	free(e.vals);
	close(vfd);
	stp_data__free(d);
}

/* The scalars, a per-CPU statistic merged, the counters summed over CPUs. */
static void test_scalars_and_counters(void)
{
	int ncpus = libbpf_num_possible_cpus();
	struct stp_data *d = stp_data__new(&meta, ncpus);
	struct stp_counters c, *percpu = calloc((size_t)ncpus, sizeof(c));
	size_t stride = (sizeof(struct stp_stat_partial) + 7) & ~(size_t)7;
	char *parts = calloc((size_t)ncpus, stride);
	int64_t scal[2] = { 0, 42 }, got[2];
	struct stp_data_elems e;
	uint32_t zero = 0;
	int gfd, sfd, cfd;

	if (!root) {
		free(percpu);
		free(parts);
		stp_data__free(d);
		return skip_unless_root();
	}
	gfd = make_map(BPF_MAP_TYPE_ARRAY, 4, sizeof(scal), 1, 0);
	sfd = make_map(BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(struct stp_stat_partial), 1, 0);
	cfd = make_map(BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(struct stp_counters), 1, 0);
	CU_ASSERT_FATAL(gfd >= 0 && sfd >= 0 && cfd >= 0);
	CU_ASSERT(bpf_map_update_elem(gfd, &zero, scal, BPF_ANY) == 0);
	for (int i = 0; i < ncpus; i++) {
		struct stp_stat_partial *p = (void *)(parts + (size_t)i * stride);

		p->count = 1;
		p->sum = p->min = p->max = i + 1;
		percpu[i].errors = 2;
		percpu[i].dropped = (uint64_t)i;
	}
	CU_ASSERT(bpf_map_update_elem(sfd, &zero, parts, BPF_ANY) == 0);
	CU_ASSERT(bpf_map_update_elem(cfd, &zero, percpu, BPF_ANY) == 0);
	CU_ASSERT_TRUE(stp_data__adopt(d, "stp_globals", gfd));
	CU_ASSERT_TRUE(stp_data__adopt(d, "g_st", sfd));
	CU_ASSERT_TRUE(stp_data__adopt(d, STP_COUNTERS_MAP, cfd));
	CU_ASSERT_EQUAL(stp_data__scalars_size(d), sizeof(scal));
	CU_ASSERT_EQUAL(stp_data__read_scalars(d, got), 0);
	CU_ASSERT_EQUAL(got[1], 42);
	CU_ASSERT_TRUE(stp_data__has(d, 2));
	CU_ASSERT_EQUAL(stp_data__read(d, 3, &e), 1);
	if (e.n == 1) {
		struct stp_stat_cfg cfg;
		struct stp_stat_agg agg = { 0 };

		stp_stat_cfg_init(&cfg, STP_HIST_NONE, 0, 0, 0, 0);
		stp_stat_merge(&agg, &cfg, e.vals, stride, ncpus);
		CU_ASSERT_EQUAL(agg.count, ncpus);
		CU_ASSERT_EQUAL(agg.max, ncpus);
	}
	free(e.keys);
	free(e.vals);
	CU_ASSERT_EQUAL(stp_data__counters(d, &c), 0);
	CU_ASSERT_EQUAL(c.errors, 2 * (uint64_t)ncpus);
	CU_ASSERT_EQUAL(c.dropped, (uint64_t)ncpus * (ncpus - 1) / 2);
	free(percpu);
	free(parts);
	stp_data__free(d);
}

static void quiet(void *arg, const char *msg)
{
	(*(int *)arg)++;
	(void)msg;
}

/* A map whose sizes are not the metadata's is refused, and said; unknown names too. */
static void test_refusals(void)
{
	struct stp_data *d = stp_data__new(&meta, 2);
	int said = 0, fd;

	stp_data__set_log(d, quiet, &said);
	if (!root) {
		stp_data__free(d);
		return skip_unless_root();
	}
	fd = make_map(BPF_MAP_TYPE_HASH, 4, 8, 16, 0);	/* g_a's keys are 8 bytes */
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FALSE(stp_data__adopt(d, "g_a", fd));
	CU_ASSERT_EQUAL(said, 1);
	CU_ASSERT_FALSE(stp_data__adopt(d, "nothing_of_ours", fd));
	CU_ASSERT_FALSE(stp_data__has(d, 0));
	close(fd);
	stp_data__free(d);
}

/*
 * A module's map read in place as pmdastap reads it (a reader segment):
 * while a writer keeps its sequence count odd past the reader's
 * patience, a read gives up whole (-1, EBUSY, nothing), never a part of
 * the map that a caller would take for all of it; then it reads again.
 */
static void test_reader_gives_up(void)
{
	static const struct stp_dmap_def defs[] = { { "g_a", BPF_MAP_TYPE_HASH, 8, 8, 16, 0 } };
	char err[256];
	struct stp_dseg *w = stp_dseg__create(defs, 1, 1, err, sizeof(err)), *r;
	struct stp_data *d = stp_data__new(&meta, 1);
	struct stp_data_elems e;
	struct dhash_meta *h;

	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	for (uint64_t k = 1; k <= 3; k++)
		CU_ASSERT_EQUAL(stp_dmap__write(stp_dseg__map(w, "g_a"), &k, &k, 0), 0);
	r = stp_dseg__attach_reader(stp_dseg__fd(w), 1000, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	stp_data__adopt_dseg(d, r, stp_dseg__fd(r));
	CU_ASSERT_EQUAL(stp_data__read(d, 0, &e), 3);
	free(e.keys);
	free(e.vals);

	h = (struct dhash_meta *)stp_dseg__map(w, "g_a")->area;
	h->lock = (uint32_t)getppid();	/* a live writer, in the middle of a change */
	h->seq |= 1;
	errno = 0;
	CU_ASSERT_EQUAL(stp_data__read(d, 0, &e), -1);
	CU_ASSERT(errno == EBUSY && e.keys == NULL && e.vals == NULL);
	h->seq++;			/* its change done */
	h->lock = 0;
	CU_ASSERT_EQUAL(stp_data__read(d, 0, &e), 3);
	free(e.keys);
	free(e.vals);
	stp_data__free(d);
	stp_dseg__free(r);
	stp_dseg__free(w);
}

static const struct unit_case cases[] = {
	{ "a hash array: every key and value", test_hash_array },
	{ "a slotted array: in place, its generation, values through slots", test_slotted_array },
	{ "scalars, a per-CPU statistic, counters summed", test_scalars_and_counters },
	{ "refusals: sizes unlike the metadata's, names not ours", test_refusals },
	{ "a reader segment's read that gives up gives nothing", test_reader_gives_up },
	{ NULL, NULL },
};

void unit_register(void)
{
	root = geteuid() == 0;
	unit_add_suite("data", cases);
}
