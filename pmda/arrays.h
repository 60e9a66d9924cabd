/*
 * arrays.h - what fetch.c takes from arrays.c: culling the instances of
 * keys that went away.
 */
#ifndef STAP_ARRAYS_H
#define STAP_ARRAYS_H

#include <stddef.h>
#include <stdint.h>

#include <pcp/pmapi.h>

/*
 * The instances of an array's keys: those of keys gone from the map are
 * made inactive, never forgotten at once, so a key that comes back gets
 * its old id (and pmlogger archives stay consistent).  At most `keep`
 * inactive instances are kept (and saved); beyond that the ones that went
 * away first are culled.
 */
struct stap_prune {
	int *gone;			/* a ring of instance ids, in the order they went away */
	int head, len, cap;
	int *prev;			/* the instances active after the last indexing */
	int nprev;
	int keep;
	int *cur;			/* stap_prune_add's: the instances active now */
	int ncur, curcap;
};

/* Indexing starts: instances not added again become inactive. */
void stap_prune_begin(struct stap_prune *pr, pmInDom indom);
/* After indexing: INSTS (N) are active now; cull beyond the bound; save when changed. */
void stap_prune_end(struct stap_prune *pr, pmInDom indom, const int *insts, int n);
void stap_prune_free(struct stap_prune *pr);
/* The same with the active instances told one at a time (a histogram's buckets). */
void stap_prune_add(struct stap_prune *pr, int inst);
void stap_prune_done(struct stap_prune *pr, pmInDom indom);

#endif
