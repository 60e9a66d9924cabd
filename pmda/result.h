/*
 * result.h - a fetch's pmResult put together by pmdastap (result.c): the
 * value sets of arrays made in one go by fetch.c, the rest by pmdaFetch.
 */
#ifndef STAP_RESULT_H
#define STAP_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pcp/pmapi.h>
#include <pcp/pmda.h>

/* A 64-bit value's block, header and value, kept 8-byte aligned. */
#define STAP_BLOCK64_SIZE	16

/* One value set being made: vs->vlist[] point into blocks. */
struct stap_vset {
	pmValueSet *vs;
	char *blocks;
	size_t used, size;
	int cap;
};

/* Room for N values and SIZE bytes of value blocks; -1 when out of memory. */
int stap_vset_init(struct stap_vset *v, pmID pmid, int n, size_t size);
void stap_vset_64(struct stap_vset *v, int inst, int64_t val);
void stap_vset_string(struct stap_vset *v, int inst, const char *s, size_t len);
/* The block bytes of a string of LEN bytes. */
size_t stap_block_size(size_t len);

/* Does PROF (the client's instance profile) take every instance of INDOM? */
bool stap_profile_all(const pmProfile *prof, pmInDom indom);
bool stap_in_profile(const pmProfile *prof, pmInDom indom, int inst);

/*
 * PMID's value set made in one go (an array's keys, fetch.c): 1 with *VSP
 * and *BLOCKS (the value blocks it points into, both malloc'd) set, 0 when
 * pmdaFetch is to make it, or -errno.
 */
int stap_fetch_values(pmID pmid, const pmProfile *prof, pmValueSet **vsp, char **blocks);

/* The result callback, and malloc set to keep a fetch's big buffers for the next. */
void stap_result_init(pmdaInterface *dispatch);
/* The dispatch's fetch after stap_fetch_prepare. */
int stap_result_fetch(int n, pmID *pmids, pmResult **resp, pmdaExt *pmda);

#endif
