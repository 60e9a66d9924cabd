/*
 * stapfetch - fetch metrics over and over in one PMAPI context, as a
 * monitoring client does while pmdastap's scripts fail or come and go.
 *
 *	stapfetch [-n N] [-x STOPFILE] [-r READYFILE] [-s SUBTREE] [METRIC...]
 *
 * Fetches the METRICs (and every metric under SUBTREE) N times (default
 * 1000; with STOPFILE, 0), and then until STOPFILE exists.  The SUBTREE's names are traversed at
 * the start and again whenever pmFetch says the namespace changed
 * (PMCD_NAMES_CHANGE): a script that went has no values, one that came is
 * fetched from then on.  READYFILE is created after the first fetch.
 * Prints at the end
 *	fetches N		pmFetch calls that succeeded
 *	failed N		pmFetch calls that failed
 *	without values N	fetches in which some METRIC had no value
 *	names changes N		fetches that said the namespace changed
 * Exits 0 when every fetch succeeded and gave every METRIC a value.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcp/pmapi.h>

static char **names;			/* the METRICs, then the subtree's */
static int nnames, nfixed, size;

static void add_name(const char *name)
{
	if (nnames == size) {
		size = size ? 2 * size : 64;
		names = realloc(names, (size_t)size * sizeof(*names));
		if (!names) {
			perror("stapfetch");
			exit(2);
		}
	}
	names[nnames++] = strdup(name);
}

/* The METRICs' PMIDs and the SUBTREE's now: how many, in pmids. */
static int lookup(const char *subtree, pmID **pmids)
{
	int sts;

	while (nnames > nfixed)
		free(names[--nnames]);
	if (subtree && (sts = pmTraversePMNS(subtree, add_name)) < 0)
		fprintf(stderr, "stapfetch: %s: %s\n", subtree, pmErrStr(sts));
	free(*pmids);
	*pmids = calloc((size_t)nnames + 1, sizeof(**pmids));
	if (!*pmids)
		return -1;
	/* a name gone since the traversal is PM_ID_NULL: fetched, no value */
	sts = pmLookupName(nnames, (const char **)names, *pmids);
	if (sts < 0 && nfixed > 0) {
		fprintf(stderr, "stapfetch: %s: %s\n", names[0], pmErrStr(sts));
		return -1;
	}
	return nnames;
}

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	const char *stop = NULL, *ready = NULL, *subtree = NULL;
	long n = -1, fetches = 0, failed = 0, novalue = 0, changes = 0;
	pmID *pmids = NULL;
	int c, sts, count;

	while ((c = getopt(argc, argv, "n:x:r:s:")) != -1) {
		switch (c) {
		case 'n': n = atol(optarg); break;
		case 'x': stop = optarg; break;
		case 'r': ready = optarg; break;
		case 's': subtree = optarg; break;
		default:
			fprintf(stderr, "usage: stapfetch [-n N] [-x STOPFILE] [-r READYFILE] "
					"[-s SUBTREE] [METRIC...]\n");
			return 2;
		}
	}
	for (int i = optind; i < argc; i++)
		add_name(argv[i]);
	nfixed = nnames;
	if ((sts = pmNewContext(PM_CONTEXT_HOST, "local:")) < 0) {
		fprintf(stderr, "stapfetch: no context: %s\n", pmErrStr(sts));
		return 2;
	}
	if ((count = lookup(subtree, &pmids)) < 0)
		return 2;
	if (n < 0)
		n = stop ? 0 : 1000;
	for (long i = 0; i < n || (stop && access(stop, F_OK) != 0); i++) {
		pmResult *rp;

		sts = pmFetch(count, pmids, &rp);
		if (sts < 0) {
			failed++;
			continue;
		}
		fetches++;
		for (int m = 0; m < nfixed; m++)
			if (rp->vset[m]->numval <= 0) {
				novalue++;
				break;
			}
		pmFreeResult(rp);
		if (fetches == 1 && ready)
			touch(ready);
		if (sts & PMCD_NAMES_CHANGE) {
			changes++;
			if ((count = lookup(subtree, &pmids)) < 0)
				return 2;
		}
	}
	printf("fetches %ld\nfailed %ld\nwithout values %ld\nnames changes %ld\n", fetches, failed,
	       novalue, changes);
	return failed || novalue ? 1 : 0;
}
