/*
 * profile_fetch - fetch metrics from the local pmcd with an instance
 * profile, and print what the result holds (for qa/111: pmdastap must
 * answer only the instances the profile asks for).
 *
 *	profile_fetch [-x] METRIC NAME... [-- METRIC...]
 *
 * The profile of METRIC's instance domain takes only the instances NAME...
 * (with -x: all but them); the metrics after "--" are fetched in the same
 * pmFetch with no profile of their own.  Per metric it prints "METRIC:
 * numval N", then "METRIC[NAME] VALUE" for each value (with -x, for
 * METRIC, only whether each NAME is there, and the sum of its values
 * when they are 64-bit integers), and says so when the values
 * are not in ascending instance order, as pmdaFetch would give them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcp/pmapi.h>

#define MAX_METRICS 16

static void die(const char *what, int sts)
{
	fprintf(stderr, "profile_fetch: %s: %s\n", what, pmErrStr(sts));
	exit(1);
}

static void print_value(const pmDesc *d, const pmValueSet *vs, int j)
{
	pmAtomValue a;
	int sts = pmExtractValue(vs->valfmt, &vs->vlist[j], d->type, &a, d->type);

	if (sts < 0)
		printf("?%s", pmErrStr(sts));
	else if (d->type == PM_TYPE_STRING)
		printf("\"%s\"", a.cp);
	else if (d->type == PM_TYPE_64)
		printf("%" PRId64, a.ll);
	else if (d->type == PM_TYPE_U64)
		printf("%" PRIu64, a.ull);
	else if (d->type == PM_TYPE_U32)
		printf("%u", a.ul);
	else
		printf("%d", a.l);
	if (d->type == PM_TYPE_STRING)
		free(a.cp);
}

static const char *inst_name(pmInDom indom, int inst, char **buf)
{
	free(*buf);
	*buf = NULL;
	if (indom == PM_INDOM_NULL || pmNameInDom(indom, inst, buf) < 0)
		return "(none)";
	return *buf;
}

static void check_order(const char *name, const pmValueSet *vs)
{
	for (int j = 1; j < vs->numval; j++)
		if (vs->vlist[j].inst <= vs->vlist[j - 1].inst) {
			printf("%s: instances out of order\n", name);
			return;
		}
}

static void print_set(const char *name, const pmDesc *d, const pmValueSet *vs)
{
	char *buf = NULL;

	printf("%s: numval %d\n", name, vs->numval);
	for (int j = 0; j < vs->numval; j++) {
		printf("%s[%s] ", name, inst_name(d->indom, vs->vlist[j].inst, &buf));
		print_value(d, vs, j);
		printf("\n");
	}
	free(buf);
}

static void print_excluded(const char *name, const pmDesc *d, const pmValueSet *vs,
			   const int *ids, char **names, int n)
{
	int64_t sum = 0;
	pmAtomValue a;

	printf("%s: numval %d\n", name, vs->numval);
	for (int j = 0; d->type == PM_TYPE_64 && j < vs->numval; j++)
		if (pmExtractValue(vs->valfmt, &vs->vlist[j], d->type, &a, d->type) >= 0)
			sum += a.ll;
	if (d->type == PM_TYPE_64)
		printf("%s: sum %" PRId64 "\n", name, sum);
	for (int i = 0; i < n; i++) {
		int there = 0;

		for (int j = 0; j < vs->numval; j++)
			there |= vs->vlist[j].inst == ids[i];
		printf("%s[%s] %s\n", name, names[i], there ? "present" : "absent");
	}
}

int main(int argc, char **argv)
{
	char *names[MAX_METRICS];
	pmID pmids[MAX_METRICS];
	pmDesc descs[MAX_METRICS];
	int exclude = 0, a = 1, n = 0, nmetrics = 1, sts, *ids;
	char **inames;
	pmResult *res;

	if (a < argc && !strcmp(argv[a], "-x"))
		exclude = 1, a++;
	if (a >= argc) {
		fprintf(stderr, "usage: profile_fetch [-x] METRIC NAME... [-- METRIC...]\n");
		return 2;
	}
	names[0] = argv[a++];
	inames = &argv[a];
	while (a < argc && strcmp(argv[a], "--"))
		a++, n++;
	for (a++; a < argc && nmetrics < MAX_METRICS; a++)
		names[nmetrics++] = argv[a];
	if ((sts = pmNewContext(PM_CONTEXT_HOST, "local:")) < 0)
		die("pmNewContext", sts);
	if ((sts = pmLookupName(nmetrics, (const char **)names, pmids)) < 0)
		die("pmLookupName", sts);
	for (int i = 0; i < nmetrics; i++)
		if ((sts = pmLookupDesc(pmids[i], &descs[i])) < 0)
			die(names[i], sts);
	if (descs[0].indom == PM_INDOM_NULL)
		die(names[0], PM_ERR_INDOM);
	ids = calloc((size_t)n + 1, sizeof(int));
	for (int i = 0; i < n; i++)
		if ((ids[i] = pmLookupInDom(descs[0].indom, inames[i])) < 0)
			die(inames[i], ids[i]);
	if (exclude && (sts = pmAddProfile(descs[0].indom, 0, NULL)) >= 0)
		sts = pmDelProfile(descs[0].indom, n, ids);
	else if ((sts = pmDelProfile(descs[0].indom, 0, NULL)) >= 0)
		sts = pmAddProfile(descs[0].indom, n, ids);
	if (sts < 0)
		die("the profile", sts);
	if ((sts = pmFetch(nmetrics, pmids, &res)) < 0)
		die("pmFetch", sts);
	for (int i = 0; i < res->numpmid; i++) {
		check_order(names[i], res->vset[i]);
		if (res->vset[i]->numval < 0)
			printf("%s: %s\n", names[i], pmErrStr(res->vset[i]->numval));
		else if (i == 0 && exclude)
			print_excluded(names[0], &descs[0], res->vset[0], ids, inames, n);
		else
			print_set(names[i], &descs[i], res->vset[i]);
	}
	pmFreeResult(res);
	free(ids);
	pmDestroyContext(pmWhichContext());
	return 0;
}
