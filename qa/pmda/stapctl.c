/*
 * stapctl - store a string into a metric and fetch the metric back, in
 * one PMAPI context: how a client registers a script with pmdastap and
 * reads what became of it (the result is kept per client context).
 *
 *	stapctl [-h HOST] METRIC VALUE		VALUE "-": standard input
 *
 * Prints "store: ok" or "store: <error>", then "result: <value>".
 * Exits 0 when the store succeeded, 1 when it failed, 2 on other errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcp/pmapi.h>

static char *read_stdin(void)
{
	size_t len = 0, size = 4096;
	char *buf = malloc(size);
	size_t n;

	while (buf && (n = fread(buf + len, 1, size - len - 1, stdin)) > 0) {
		len += n;
		if (len + 1 == size)
			buf = realloc(buf, size *= 2);
	}
	if (buf)
		buf[len] = '\0';
	return buf;
}

static int fetch_string(pmID pmid, char **out)
{
	pmResult *rp;
	pmAtomValue atom;
	int rc = pmFetch(1, &pmid, &rp);

	if (rc < 0)
		return rc;
	if (rp->vset[0]->numval < 1) {
		pmFreeResult(rp);
		return PM_ERR_VALUE;
	}
	rc = pmExtractValue(rp->vset[0]->valfmt, &rp->vset[0]->vlist[0], PM_TYPE_STRING, &atom,
			    PM_TYPE_STRING);
	pmFreeResult(rp);
	if (rc < 0)
		return rc;
	*out = atom.cp;
	return 0;
}

static int store_string(pmID pmid, const char *value)
{
	size_t len = strlen(value) + 1;
	pmValueBlock *vb = calloc(1, PM_VAL_HDR_SIZE + len + 8);
	pmValueSet vs = { .pmid = pmid, .numval = 1, .valfmt = PM_VAL_DPTR };
	pmResult *rp = calloc(1, sizeof(pmResult));
	int rc;

	if (!vb || !rp)
		return -ENOMEM;
	vb->vtype = PM_TYPE_STRING;
	vb->vlen = PM_VAL_HDR_SIZE + len;
	memcpy(vb->vbuf, value, len);
	vs.vlist[0].inst = PM_IN_NULL;
	vs.vlist[0].value.pval = vb;
	rp->numpmid = 1;
	rp->vset[0] = &vs;
	rc = pmStore(rp);
	free(rp);
	free(vb);
	return rc;
}

int main(int argc, char **argv)
{
	const char *host = "local:";
	char *name, *value, *result = NULL;
	pmID pmid;
	int c, rc;

	while ((c = getopt(argc, argv, "h:")) != -1) {
		if (c != 'h') {
			fprintf(stderr, "usage: stapctl [-h HOST] METRIC VALUE\n");
			return 2;
		}
		host = optarg;
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: stapctl [-h HOST] METRIC VALUE\n");
		return 2;
	}
	name = argv[optind];
	value = strcmp(argv[optind + 1], "-") == 0 ? read_stdin() : argv[optind + 1];
	if ((rc = pmNewContext(PM_CONTEXT_HOST, host)) < 0 ||
	    (rc = pmLookupName(1, (const char **)&name, &pmid)) < 0) {
		fprintf(stderr, "stapctl: %s: %s\n", name, pmErrStr(rc));
		return 2;
	}
	rc = store_string(pmid, value ? value : "");
	printf("store: %s\n", rc < 0 ? pmErrStr(rc) : "ok");
	if (fetch_string(pmid, &result) == 0)
		printf("result: %s\n", result);
	else
		printf("result: (none)\n");
	return rc < 0 ? 1 : 0;
}
