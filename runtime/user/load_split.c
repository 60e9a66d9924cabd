/*
 * load_split.c - a script's BPF programs loaded on several CPUs at once.
 *
 * The kernel verifies a program in the thread that loads it, and libbpf
 * loads an object's programs one after another: strace.stp's 221 programs
 * kept one CPU in the verifier for 0.6 s while the other idled.  So a
 * script with much to verify is loaded by parts:
 *
 *   - the script's object (s->obj) is loaded first with no program: it
 *     makes the maps, fills the global data and freezes .rodata, as it
 *     always does, and every map reader keeps using it;
 *   - the file is opened again once per part; each copy reuses s->obj's
 *     maps and loads its share of the programs, balanced by instruction
 *     count, in a thread of its own (the calling thread loads the first).
 *
 * The parts stay open while the script runs: their programs are the ones
 * attached (stp_script__prog()).  A part that fails to load leaves the
 * script unloaded: the caller loads it again the usual way, one object,
 * whose errors name the probe at fault (script.c, load_retrying()).
 * PMSTAP_LOAD_THREADS=N sets the parts (1: no split).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "script_int.h"

/* Below this many instructions to load, a second copy of the object costs more than it saves. */
#define SPLIT_MIN_INSNS 20000

struct part_load {
	struct bpf_object *obj;
	int err;
};

/* How many parts: one per CPU online, at most STP_LOAD_PARTS; 1 for a small script. */
static int parts_wanted(size_t insns, int nprogs)
{
	const char *env = getenv("PMSTAP_LOAD_THREADS");
	long n = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);

	if (!env && insns < SPLIT_MIN_INSNS)
		return 1;
	if (n > STP_LOAD_PARTS)
		n = STP_LOAD_PARTS;
	if (n > nprogs)
		n = nprogs;
	return n < 2 ? 1 : (int)n;
}

/*
 * The programs s->obj would load, by index (*N of them in the object), and
 * how many and how many instructions they are.
 */
static bool *programs_to_load(const struct stp_script *s, int *n, int *nprogs, size_t *insns)
{
	struct bpf_program *prog;
	bool *load;

	*n = 0;
	bpf_object__for_each_program(prog, s->obj)
		++*n;
	load = calloc((size_t)*n + 1, sizeof(bool));
	if (!load)
		return NULL;
	*nprogs = *insns = 0;
	*n = 0;
	bpf_object__for_each_program(prog, s->obj) {
		load[*n] = bpf_program__autoload(prog);
		if (load[*n]) {
			++*nprogs;
			*insns += bpf_program__insn_cnt(prog);
		}
		++*n;
	}
	return load;
}

struct sized {
	int index;	/* in s->obj */
	size_t insns;
};

static int larger_first(const void *a, const void *b)
{
	const struct sized *x = a, *y = b;

	return x->insns < y->insns ? 1 : x->insns > y->insns ? -1 : x->index - y->index;
}

/*
 * Each program's part (-1: not loaded): the largest first, each to the
 * part with the fewest instructions so far.  The instruction count stands
 * for the verifier's work, which grows with it.
 */
static int *assign_parts(const struct stp_script *s, const bool *load, int n, int nparts)
{
	struct bpf_program *prog;
	size_t sum[STP_LOAD_PARTS] = { 0 };
	struct sized *order;
	int i = 0, m = 0, *part;

	part = malloc(sizeof(int) * ((size_t)n + 1));
	order = malloc(sizeof(struct sized) * ((size_t)n + 1));
	if (!part || !order) {
		free(order);
		free(part);
		return NULL;
	}
	bpf_object__for_each_program(prog, s->obj) {
		part[i] = -1;
		if (load[i])
			order[m++] = (struct sized){ i, bpf_program__insn_cnt(prog) };
		i++;
	}
	qsort(order, (size_t)m, sizeof(*order), larger_first);
	for (int k = 0; k < m; k++) {
		int least = 0;

		for (int p = 1; p < nparts; p++)
			if (sum[p] < sum[least])
				least = p;
		part[order[k].index] = least;
		sum[least] += order[k].insns;
	}
	free(order);
	return part;
}

/* A copy of the script's object that reuses its maps and loads the programs of part P. */
static struct bpf_object *open_part(struct stp_script *s, const int *part, int p)
{
	struct bpf_object *obj = bpf_object__open_file(s->bpf_path, NULL);
	struct bpf_program *prog, *mine;
	struct bpf_map *map;
	int i = 0;

	if (libbpf_get_error(obj))
		return NULL;
	bpf_object__for_each_map(map, obj) {
		struct bpf_map *made = bpf_object__find_map_by_name(s->obj, bpf_map__name(map));

		if (!made || bpf_map__reuse_fd(map, bpf_map__fd(made)) != 0)
			goto fail;
	}
	mine = bpf_object__next_program(obj, NULL);
	bpf_object__for_each_program(prog, s->obj) {
		if (!mine || strcmp(bpf_program__name(mine), bpf_program__name(prog)) != 0)
			goto fail;	/* not the same file */
		/* what s->obj's probes set before loading (netfilter, uprobe_multi) */
		if (bpf_program__type(mine) != bpf_program__type(prog))
			bpf_program__set_type(mine, bpf_program__type(prog));
		if (bpf_program__expected_attach_type(mine) !=
		    bpf_program__expected_attach_type(prog))
			bpf_program__set_expected_attach_type(mine,
							      bpf_program__expected_attach_type(prog));
		bpf_program__set_autoload(mine, part[i++] == p);
		mine = bpf_object__next_program(obj, mine);
	}
	stp_vstats_want(s, obj);
	return obj;
fail:
	bpf_object__close(obj);
	return NULL;
}

static void *load_part(void *arg)
{
	struct part_load *pl = arg;

	pl->err = bpf_object__load(pl->obj);
	return NULL;
}

/* Load the parts: part 0 here, the others in threads. */
static int load_parts(struct stp_script *s)
{
	struct part_load pl[STP_LOAD_PARTS];
	pthread_t tid[STP_LOAD_PARTS];
	bool started[STP_LOAD_PARTS] = { false };
	int err = 0;

	for (int p = 0; p < s->nparts; p++)
		pl[p] = (struct part_load){ .obj = s->parts[p] };
	for (int p = 1; p < s->nparts; p++)
		started[p] = pthread_create(&tid[p], NULL, load_part, &pl[p]) == 0;
	for (int p = 0; p < s->nparts; p++)
		if (p == 0 || !started[p])
			load_part(&pl[p]);
	for (int p = 1; p < s->nparts; p++)
		if (started[p])
			pthread_join(tid[p], NULL);
	for (int p = 0; p < s->nparts && !err; p++)
		err = pl[p].err;
	return err;
}

void stp_load_split_close(struct stp_script *s)
{
	for (int p = 0; p < s->nparts; p++)
		bpf_object__close(s->parts[p]);
	s->nparts = 0;
}

/*
 * Load the script by parts where that is worth it.  1: loaded; 0: not
 * split (load s->obj as usual); < 0: a part failed: s->obj is spent, open
 * it again and load it as usual, for the errors' sake.
 */
int stp_load_split(struct stp_script *s)
{
	struct bpf_program *prog;
	int n, nprogs, nparts, *part = NULL, err;
	size_t insns;
	bool *load = programs_to_load(s, &n, &nprogs, &insns);

	nparts = load ? parts_wanted(insns, nprogs) : 1;
	if (nparts < 2 || !(part = assign_parts(s, load, n, nparts))) {
		free(load);
		return 0;
	}
	bpf_object__for_each_program(prog, s->obj)
		bpf_program__set_autoload(prog, false);
	err = bpf_object__load(s->obj);	/* the maps */
	for (int p = 0; !err && p < nparts; p++) {
		s->parts[p] = open_part(s, part, p);
		s->nparts += s->parts[p] != NULL;
		err = s->parts[p] ? 0 : -EINVAL;
	}
	if (!err)
		err = load_parts(s);
	free(load);
	free(part);
	if (!err)
		return 1;
	stp_load_split_close(s);
	return err < 0 ? err : -EINVAL;
}

/* Program NAME, loaded: from the part that loaded it, else s->obj's. */
struct bpf_program *stp_script__prog(const struct stp_script *s, const char *name)
{
	struct bpf_program *prog = s->obj ? bpf_object__find_program_by_name(s->obj, name) : NULL;

	for (int p = 0; prog && bpf_program__fd(prog) < 0 && p < s->nparts; p++) {
		struct bpf_program *there = bpf_object__find_program_by_name(s->parts[p], name);

		if (there && bpf_program__fd(there) >= 0)
			return there;
	}
	return prog;
}

/* The loaded program that is s->obj's PROG. */
struct bpf_program *stp_script__loaded(const struct stp_script *s, struct bpf_program *prog)
{
	return bpf_program__fd(prog) >= 0 || !s->nparts ? prog :
	       stp_script__prog(s, bpf_program__name(prog));
}
