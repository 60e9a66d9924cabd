/*
 * arrays.c - culling the instances of array keys (and histogram
 * buckets) that went away.  See arrays.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pmdastap.h"
#include "arrays.h"

/* ---- culling instances ---- */

static void ring_push(struct stap_prune *pr, int inst)
{
	if (pr->len == pr->cap) {
		int cap = pr->cap ? 2 * pr->cap : 64, *g = malloc((size_t)cap * sizeof(int));

		if (!g)
			return;
		for (int i = 0; i < pr->len; i++)
			g[i] = pr->gone[(pr->head + i) % pr->cap];
		free(pr->gone);
		pr->gone = g;
		pr->cap = cap;
		pr->head = 0;
	}
	pr->gone[(pr->head + pr->len) % pr->cap] = inst;
	pr->len++;
}

static int ring_pop(struct stap_prune *pr)
{
	int inst = pr->gone[pr->head];

	pr->head = (pr->head + 1) % pr->cap;
	pr->len--;
	return inst;
}

static bool inactive(pmInDom indom, int inst)
{
	return pmdaCacheLookup(indom, inst, NULL, NULL) == PMDA_CACHE_INACTIVE;
}

/* The inactive instances nobody saw go (loaded from the saved cache), oldest id first. */
static void seed(struct stap_prune *pr, pmInDom indom)
{
	int size = pmdaCacheOp(indom, PMDA_CACHE_SIZE), found = 0;

	for (int inst = 0; found < size && inst < (1 << 24); inst++) {
		int st = pmdaCacheLookup(indom, inst, NULL, NULL);

		if (st < 0)
			continue;
		found++;
		if (st == PMDA_CACHE_INACTIVE)
			ring_push(pr, inst);
	}
}

static int cull(struct stap_prune *pr, pmInDom indom)
{
	int culled = 0;
	char *name;

	if (pr->len == 0 && pmdaCacheOp(indom, PMDA_CACHE_SIZE_INACTIVE) > pr->keep)
		seed(pr, indom);
	while (pr->len > 0 && pmdaCacheOp(indom, PMDA_CACHE_SIZE_INACTIVE) > pr->keep) {
		int inst = ring_pop(pr);

		if (!inactive(indom, inst) || pmdaCacheLookup(indom, inst, &name, NULL) < 0)
			continue;	/* it came back meanwhile */
		if (pmdaCacheStore(indom, PMDA_CACHE_CULL, name, NULL) >= 0)
			culled++;
	}
	return culled;
}

struct ring_ent {
	int inst, pos;
};

static int by_inst_newest(const void *a, const void *b)
{
	const struct ring_ent *x = a, *y = b;

	return x->inst != y->inst ? (x->inst > y->inst) - (x->inst < y->inst) : y->pos - x->pos;
}

static int by_pos(const void *a, const void *b)
{
	return ((const struct ring_ent *)a)->pos - ((const struct ring_ent *)b)->pos;
}

/*
 * Keys that come and go leave entries of instances active again, or of
 * one instance twice: keep only the latest going of each inactive one.
 */
static void compact(struct stap_prune *pr, pmInDom indom)
{
	struct ring_ent *e = malloc(((size_t)pr->len + 1) * sizeof(*e));
	int n = 0, len = pr->len;

	if (!e)
		return;
	for (int i = 0; i < len; i++)
		e[i] = (struct ring_ent){ ring_pop(pr), i };
	qsort(e, (size_t)len, sizeof(*e), by_inst_newest);
	for (int i = 0; i < len; i++)
		if ((i == 0 || e[i].inst != e[i - 1].inst) && inactive(indom, e[i].inst))
			e[n++] = e[i];
	qsort(e, (size_t)n, sizeof(*e), by_pos);
	pr->head = 0;
	for (int i = 0; i < n; i++)
		ring_push(pr, e[i].inst);
	free(e);
}

void stap_prune_begin(struct stap_prune *pr, pmInDom indom)
{
	pr->ncur = 0;
	pmdaCacheOp(indom, PMDA_CACHE_INACTIVE);
}

void stap_prune_end(struct stap_prune *pr, pmInDom indom, const int *insts, int n)
{
	int *prev;

	for (int i = 0; i < pr->nprev; i++)
		if (inactive(indom, pr->prev[i]))
			ring_push(pr, pr->prev[i]);
	if (pr->len > 2 * pr->keep + 64)
		compact(pr, indom);
	cull(pr, indom);
	prev = realloc(pr->prev, ((size_t)n + 1) * sizeof(int));
	if (prev) {
		memcpy(prev, insts, (size_t)n * sizeof(int));
		pr->prev = prev;
		pr->nprev = n;
	}
	stap_identity_save(indom);
}

void stap_prune_add(struct stap_prune *pr, int inst)
{
	if (inst < 0)
		return;
	if (pr->ncur == pr->curcap) {
		int cap = pr->curcap ? 2 * pr->curcap : 64, *c;

		c = realloc(pr->cur, (size_t)cap * sizeof(int));
		if (!c)
			return;	/* then it is culled late, at worst */
		pr->cur = c;
		pr->curcap = cap;
	}
	pr->cur[pr->ncur++] = inst;
}

void stap_prune_done(struct stap_prune *pr, pmInDom indom)
{
	stap_prune_end(pr, indom, pr->cur, pr->ncur);
	pr->ncur = 0;
}

void stap_prune_free(struct stap_prune *pr)
{
	free(pr->gone);
	free(pr->prev);
	free(pr->cur);
	memset(pr, 0, sizeof(*pr));
}
