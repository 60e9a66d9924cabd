/*
 * result.c - a fetch's pmResult.  pmdaFetch calls the fetch callback once
 * per instance and gives every 64-bit value and string its own malloc'd
 * block; for an array of 10,000 keys that is most of a fetch's time.  So
 * the value sets of arrays are made in one go (fetch.c: one value set and
 * one allocation holding all the value blocks), pmdaFetch makes the rest,
 * and the two are put in the order pmcd asked for.  The result callback
 * frees each kind its own way.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "pmdastap.h"
#include "result.h"

/* ---- value sets ---- */

int stap_vset_init(struct stap_vset *v, pmID pmid, int n, size_t size)
{
	memset(v, 0, sizeof(*v));
	v->vs = malloc(sizeof(pmValueSet) + (size_t)(n > 1 ? n - 1 : 0) * sizeof(pmValue));
	v->blocks = malloc(size);
	if (!v->vs || !v->blocks) {
		free(v->vs);
		free(v->blocks);
		return -1;
	}
	v->size = size;
	v->cap = n;
	v->vs->pmid = pmid;
	v->vs->numval = 0;
	v->vs->valfmt = PM_VAL_INSITU;
	return 0;
}

static pmValueBlock *next_block(struct stap_vset *v, int inst, int type, size_t vlen,
				size_t room)
{
	pmValueBlock *vb;
	pmValue *pv;

	if (v->vs->numval >= v->cap || v->used + room > v->size)
		return NULL;
	vb = (pmValueBlock *)(void *)(v->blocks + v->used);
	v->used += room;
	vb->vtype = (unsigned int)type;
	vb->vlen = (unsigned int)vlen;
	pv = &v->vs->vlist[v->vs->numval++];
	pv->inst = inst;
	pv->value.pval = vb;
	v->vs->valfmt = PM_VAL_DPTR;
	return vb;
}

void stap_vset_64(struct stap_vset *v, int inst, int64_t val)
{
	pmValueBlock *vb = next_block(v, inst, PM_TYPE_64, PM_VAL_HDR_SIZE + sizeof(val),
				      STAP_BLOCK64_SIZE);

	if (vb)
		memcpy(vb->vbuf, &val, sizeof(val));
}

size_t stap_block_size(size_t len)
{
	return (PM_VAL_HDR_SIZE + len + 1 + 7) & ~(size_t)7;
}

void stap_vset_string(struct stap_vset *v, int inst, const char *s, size_t len)
{
	pmValueBlock *vb = next_block(v, inst, PM_TYPE_STRING, PM_VAL_HDR_SIZE + len + 1,
				      stap_block_size(len));

	if (vb) {
		memcpy(vb->vbuf, s, len);
		vb->vbuf[len] = '\0';
	}
}

/* ---- the client's instance profile (as __pmInProfile reads it) ---- */

static const pmInDomProfile *indom_profile(const pmProfile *prof, pmInDom indom)
{
	for (int i = 0; i < prof->profile_len; i++)
		if (prof->profile[i].indom == indom)
			return &prof->profile[i];
	return NULL;
}

bool stap_profile_all(const pmProfile *prof, pmInDom indom)
{
	const pmInDomProfile *ip;

	if (!prof)
		return true;
	if (!(ip = indom_profile(prof, indom)))
		return prof->state == PM_PROFILE_INCLUDE;
	return ip->state == PM_PROFILE_INCLUDE && ip->instances_len == 0;
}

bool stap_in_profile(const pmProfile *prof, pmInDom indom, int inst)
{
	const pmInDomProfile *ip;
	bool listed = false;

	if (!prof)
		return true;
	if (!(ip = indom_profile(prof, indom)))
		return prof->state == PM_PROFILE_INCLUDE;
	for (int i = 0; i < ip->instances_len && !listed; i++)
		listed = ip->instances[i] == inst;
	return ip->state == PM_PROFILE_INCLUDE ? !listed : listed;
}

/* ---- the pmResult ---- */

static pmResult *res;			/* what the last fetch answered, when made here */
static char **res_blocks;		/* per value set: its blocks, or NULL (pmdaFetch's) */
static pmID *rest;			/* the pmids left to pmdaFetch */
static int res_cap;

static int grow(int n)
{
	pmResult *r;
	char **b;
	pmID *p;

	if (n <= res_cap)
		return 0;
	r = realloc(res, sizeof(pmResult) + (size_t)n * sizeof(pmValueSet *));
	if (r)
		res = r;
	b = realloc(res_blocks, (size_t)n * sizeof(char *));
	if (b)
		res_blocks = b;
	p = realloc(rest, (size_t)n * sizeof(pmID));
	if (p)
		rest = p;
	if (!r || !b || !p)
		return -ENOMEM;
	res_cap = n;
	return 0;
}

/* A value set pmdaFetch made, freed as __pmFreeResultValues would. */
static void free_pmda_vset(pmValueSet *vs)
{
	if (vs->numval > 0 && vs->valfmt == PM_VAL_DPTR)
		for (int j = 0; j < vs->numval; j++)
			free(vs->vlist[j].value.pval);
	free(vs);
}

static void free_vsets(pmResult *r, int n)
{
	for (int i = 0; i < n; i++) {
		if (r == res && res_blocks[i]) {
			free(r->vset[i]);
			free(res_blocks[i]);
			res_blocks[i] = NULL;
		} else if (r->vset[i]) {
			free_pmda_vset(r->vset[i]);
		}
		r->vset[i] = NULL;
	}
}

static void result_free(pmResult *r)
{
	if (r)
		free_vsets(r, r->numpmid);
}

/*
 * A fetch of 10,000 values allocates a few hundred KB (value blocks, the
 * PDU) and frees them again: by default glibc maps such blocks anew, or
 * trims them off the heap, each time, and a fetch then spends more time
 * in page faults than in making its values.  Heap memory, kept.
 */
void stap_result_init(pmdaInterface *dispatch)
{
	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	mallopt(M_TRIM_THRESHOLD, 8 << 20);
	pmdaSetResultCallBack(dispatch, result_free);
}

int stap_result_fetch(int n, pmID *pmids, pmResult **resp, pmdaExt *pmda)
{
	pmResult *pr;
	int nrest = 0, sts = 0, i, k;

	if (grow(n) < 0)
		return pmdaFetch(n, pmids, resp, pmda);
	for (i = 0; i < n && sts >= 0; i++) {
		res->vset[i] = NULL;
		res_blocks[i] = NULL;
		sts = stap_fetch_values(pmids[i], pmda->e_prof, &res->vset[i], &res_blocks[i]);
		if (sts == 0)
			rest[nrest++] = pmids[i];
	}
	if (sts >= 0 && nrest == n)
		return pmdaFetch(n, pmids, resp, pmda);	/* no array among them */
	if (sts >= 0 && nrest > 0 && (sts = pmdaFetch(nrest, rest, &pr, pmda)) >= 0) {
		for (i = 0, k = 0; i < n; i++)
			if (!res_blocks[i])
				res->vset[i] = pr->vset[k++];
	}
	if (sts < 0) {
		free_vsets(res, i < n ? i : n);
		return sts;
	}
	res->numpmid = n;
	res->timestamp.tv_sec = 0;
	res->timestamp.tv_usec = 0;
	*resp = res;
	return 0;
}
