/*
 * floor64 - the floor for fetching many 64-bit values through pmcd: a PMDA
 * that does no work at all (bench/run-pmda.sh).
 *
 *	floor64 -d DOMAIN [-n N]
 *
 * Answers every fetch with the same pmResult, made once: one value set of
 * N (default 10,000) PM_TYPE_64 values.  What a fetch of it costs is what
 * pmcd, libpcp and the pipe cost for N 64-bit values, the part of a
 * pmdastap array fetch that no PMDA can take away.  PCP's sample PMDA has
 * no such metric (sample.many.int is 32-bit, so its values travel in
 * place, 8 bytes each in the PDU against 20 for a 64-bit value).
 *
 * No names and no descriptors: the bench fetches it by PMID (DOMAIN.0.0)
 * through fetchlat's "pmid:" form.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcp/pmapi.h>
#include <pcp/pmda.h>

static pmResult *res;

static pmResult *make_result(int n)
{
	pmResult *r = calloc(1, sizeof(*r));
	pmValueSet *vs = calloc(1, sizeof(*vs) + (size_t)n * sizeof(pmValue));
	pmValueBlock *vb = calloc((size_t)n, sizeof(pmValueBlock) + sizeof(int64_t));

	if (!r || !vs || !vb)
		return NULL;
	r->numpmid = 1;
	r->vset[0] = vs;
	vs->numval = n;
	vs->valfmt = PM_VAL_DPTR;
	for (int i = 0; i < n; i++) {
		pmValueBlock *b = (pmValueBlock *)(void *)((char *)vb +
							   (size_t)i * (sizeof(pmValueBlock) + sizeof(int64_t)));
		int64_t v = 1000 + i;

		b->vtype = PM_TYPE_64;
		b->vlen = PM_VAL_HDR_SIZE + sizeof(v);
		memcpy(b->vbuf, &v, sizeof(v));
		vs->vlist[i].inst = i;
		vs->vlist[i].value.pval = b;
	}
	return r;
}

static int floor_fetch(int numpmid, pmID *pmidlist, pmResult **resp, pmdaExt *pmda)
{
	(void)pmda;
	if (numpmid != 1)
		return PM_ERR_TOOBIG;
	res->vset[0]->pmid = pmidlist[0];
	*resp = res;
	return 0;
}

static void keep_result(pmResult *r)
{
	(void)r;	/* made once, sent every time */
}

static pmLongOptions longopts[] = {
	PMDA_OPTIONS_HEADER("Options"),
	PMOPT_DEBUG,
	PMDAOPT_DOMAIN,
	PMDAOPT_LOGFILE,
	{ "values", 1, 'n', "N", "values per fetch (default 10000)" },
	PMOPT_HELP,
	PMDA_OPTIONS_END
};

static pmdaOptions opts = {
	.short_options = "D:d:l:n:?",
	.long_options = longopts,
};

int main(int argc, char **argv)
{
	pmdaInterface dispatch;
	int c, n = 10000;

	pmSetProgname(argv[0]);
	pmdaDaemon(&dispatch, PMDA_INTERFACE_2, pmGetProgname(), 510, "floor64.log", NULL);
	while ((c = pmdaGetOptions(argc, argv, &opts, &dispatch)) != EOF)
		if (c == 'n')
			n = atoi(opts.optarg);
		else
			opts.errors++;
	if (opts.errors || n < 1) {
		pmdaUsageMessage(&opts);
		return 1;
	}
	pmdaOpenLog(&dispatch);
	if (!(res = make_result(n))) {
		pmNotifyErr(LOG_ERR, "out of memory for %d values", n);
		return 1;
	}
	dispatch.version.two.fetch = floor_fetch;
	pmdaSetResultCallBack(&dispatch, keep_result);
	pmdaInit(&dispatch, NULL, 0, NULL, 0);
	pmdaConnect(&dispatch);
	pmdaMain(&dispatch);
	return 0;
}
