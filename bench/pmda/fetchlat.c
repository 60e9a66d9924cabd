/*
 * fetchlat - pmFetch round-trip latency and register-to-first-value time
 * through pmcd (bench/run-pmda.sh).
 *
 *	fetchlat [-n N] METRIC...
 *		for each metric: N fetches of it alone, one line
 *		"METRIC instances median_us p99_us"; a METRIC written
 *		pmid:D.C.I is that PMID, for an agent without names
 *	fetchlat -r FILE [-t SECS] METRIC
 *		store FILE's text into stap.control.register, then look up and
 *		fetch METRIC (a long) until it is not 0: "METRIC first_value_ms"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pcp/pmapi.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int lookup(const char *name, pmID *pmid)
{
	char *names[1] = { (char *)name };
	unsigned int d, c, i;

	if (sscanf(name, "pmid:%u.%u.%u", &d, &c, &i) == 3) {
		*pmid = pmID_build(d, c, i);
		return 1;
	}
	return pmLookupName(1, (const char **)names, pmid);
}

static int bench_metric(const char *name, int n)
{
	double *t = calloc((size_t)n, sizeof(*t));
	pmResult *res;
	pmID pmid;
	int sts, ninst = 0;

	if (!t)
		return 1;
	if ((sts = lookup(name, &pmid)) < 0) {
		fprintf(stderr, "fetchlat: %s: %s\n", name, pmErrStr(sts));
		free(t);
		return 1;
	}
	for (int i = -n / 10; i < n; i++) {	/* the first tenth warms up */
		double t0 = now_us();

		if ((sts = pmFetch(1, &pmid, &res)) < 0) {
			fprintf(stderr, "fetchlat: fetch %s: %s\n", name, pmErrStr(sts));
			free(t);
			return 1;
		}
		if (i >= 0)
			t[i] = now_us() - t0;
		ninst = res->vset[0]->numval;
		pmFreeResult(res);
	}
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	printf("%s %d %.1f %.1f\n", name, ninst, t[n / 2], t[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1]);
	free(t);
	return ninst > 0 ? 0 : 1;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static int store_string(const char *metric, const char *text)
{
	size_t len = strlen(text) + 1;
	pmValueBlock *vb = calloc(1, PM_VAL_HDR_SIZE + len);
	pmValueSet vs = { .numval = 1, .valfmt = PM_VAL_DPTR };
	pmResult *res = calloc(1, sizeof(pmResult));
	int sts = -ENOMEM;

	if (vb && res && (sts = lookup(metric, &vs.pmid)) >= 0) {
		vb->vtype = PM_TYPE_STRING;
		vb->vlen = PM_VAL_HDR_SIZE + len;
		memcpy(vb->vbuf, text, len);
		vs.vlist[0].inst = PM_IN_NULL;
		vs.vlist[0].value.pval = vb;
		res->numpmid = 1;
		res->vset[0] = &vs;
		sts = pmStore(res);
	}
	free(vb);
	free(res);
	return sts;
}

static int first_value(const char *file, const char *metric, double secs)
{
	char *text = slurp(file);
	double t0, deadline;
	pmResult *res;
	pmID pmid;
	int sts;

	if (!text) {
		perror(file);
		return 1;
	}
	t0 = now_us();
	deadline = t0 + secs * 1e6;
	if ((sts = store_string("stap.control.register", text)) < 0) {
		fprintf(stderr, "fetchlat: register: %s\n", pmErrStr(sts));
		return 1;
	}
	while (now_us() < deadline) {
		if (lookup(metric, &pmid) >= 0 && pmFetch(1, &pmid, &res) >= 0) {
			pmValueSet *vs = res->vset[0];
			pmAtomValue av = { .ll = 0 };
			int got = vs->numval > 0 &&
				  pmExtractValue(vs->valfmt, &vs->vlist[0], PM_TYPE_64, &av,
						 PM_TYPE_64) >= 0 && av.ll != 0;

			pmFreeResult(res);
			if (got) {
				printf("%s %.1f\n", metric, (now_us() - t0) / 1e3);
				free(text);
				return 0;
			}
		}
		usleep(1000);
	}
	fprintf(stderr, "fetchlat: %s had no value after %.0f s\n", metric, secs);
	free(text);
	return 1;
}

int main(int argc, char **argv)
{
	const char *reg = NULL;
	double secs = 120;
	int n = 2000, c, sts, rc = 0;

	while ((c = getopt(argc, argv, "n:r:t:")) != -1) {
		switch (c) {
		case 'n': n = atoi(optarg); break;
		case 'r': reg = optarg; break;
		case 't': secs = atof(optarg); break;
		default:
			fprintf(stderr, "usage: fetchlat [-n N] METRIC... | fetchlat -r FILE [-t SECS] METRIC\n");
			return 2;
		}
	}
	if (optind >= argc || n < 1)
		return 2;
	if ((sts = pmNewContext(PM_CONTEXT_HOST, "local:")) < 0) {
		fprintf(stderr, "fetchlat: pmNewContext: %s\n", pmErrStr(sts));
		return 1;
	}
	if (reg)
		return first_value(reg, argv[optind], secs);
	for (int i = optind; i < argc; i++)
		rc |= bench_metric(argv[i], n);
	return rc;
}
