/*
 * stapevents - read a script's output events (stap.scripts.output) as
 * fast as fetches go, as pmevent does, and count them instead of
 * printing them.
 *
 *	stapevents -i SCRIPT [-r READYFILE] [-x STOPFILE] [-t SECS]
 *
 * READYFILE is created after the first fetch: from then on every line the
 * script prints is either delivered or counted as missed.  STOPFILE, once
 * it exists, holds the number of lines to wait for: reading stops when the
 * lines got and the lines missed add up to it, or after SECS (default 30)
 * without a new record.  Lines are expected to end in a number that grows
 * ("line 17"); one that does not is counted out of order.  Prints
 *	lines got N
 *	lines missed N		what "missed" records said
 *	missed records N
 *	out of order N
 *	fetches N		and how many failed (it gives up after 100)
 *	failed fetches N
 *	seconds S		from the first record to the last
 *	lines/s R		got / S
 * Exits 0, or 2 when it cannot read the metric.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pcp/pmapi.h>

struct tally {
	long got, missed, missed_records, disorder, fetches, failed;
	long long last;
	double first_at, last_at;
};

static pmID line_pmid;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A line of SIZE bytes (a string parameter need not end in a NUL on the wire). */
static void count_line(struct tally *t, const char *line, size_t size)
{
	const char *end = line + strnlen(line, size), *p = end;
	long long num = 0;

	while (p > line && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p == end)
		num = -1;
	for (; p < end; p++)
		num = num * 10 + (*p - '0');
	if (num <= t->last)
		t->disorder++;
	t->last = num;
	t->got++;
}

/*
 * The records of one fetch's event array, walked in place as
 * pmUnpackEventRecords does (it makes a pmResult of each record, and
 * freeing tens of thousands of them costs a client more than the fetch):
 * a record is its timestamp, flags and parameter count, then its
 * parameters, each its pmid, type/length word and value, padded to 4
 * bytes.  A "missed" record has no parameters: its count is the lines
 * missed.  How many records, or -1 when the array is malformed.
 */
static int count_array(struct tally *t, const pmValueBlock *vb)
{
	const pmEventArray *ea = (const pmEventArray *)vb;
	const char *p = (const char *)&ea->ea_record[0], *end = (const char *)vb + vb->vlen;
	const size_t head = sizeof(pmTimeval) + 2 * sizeof(int);

	for (int r = 0; r < ea->ea_nrecords; r++) {
		const pmEventRecord *er = (const pmEventRecord *)p;

		if (p + head > end)
			return -1;
		p += head;
		if (er->er_flags & PM_EVENT_FLAG_MISSED) {
			t->missed += er->er_nparams;
			t->missed_records++;
			continue;
		}
		for (int i = 0; i < er->er_nparams; i++) {
			const pmEventParameter *ep = (const pmEventParameter *)p;

			if (p + sizeof(*ep) > end || p + sizeof(pmID) + ep->ep_len > end)
				return -1;
			if (ep->ep_pmid == line_pmid && ep->ep_type == PM_TYPE_STRING &&
			    ep->ep_len > PM_VAL_HDR_SIZE)
				count_line(t, (const char *)(ep + 1), ep->ep_len - PM_VAL_HDR_SIZE);
			p += sizeof(pmID) + ((ep->ep_len + 3) & ~3u);
		}
	}
	return ea->ea_nrecords;
}

/* One fetch: how many records it brought. */
static int fetch_once(pmID output, struct tally *t)
{
	pmResult *rp;
	pmValueSet *vs;
	int n = 0;

	t->fetches++;
	if (pmFetch(1, &output, &rp) < 0) {
		t->failed++;
		return -1;
	}
	vs = rp->vset[0];
	if (vs->numval < 0 && ++t->failed == 1)
		fprintf(stderr, "stapevents: %s\n", pmErrStr(vs->numval));
	if (vs->numval > 0 && vs->valfmt != PM_VAL_INSITU && (n = count_array(t, vs->vlist[0].value.pval)) < 0) {
		t->failed++;
		fprintf(stderr, "stapevents: a malformed event array\n");
	}
	pmFreeResult(rp);
	return n;
}

static long stop_target(const char *stop)
{
	FILE *f = stop ? fopen(stop, "r") : NULL;
	long target = -1;

	if (f) {
		if (fscanf(f, "%ld", &target) != 1)
			target = -1;
		fclose(f);
	}
	return target;
}

static int setup(const char *script, pmID *output)
{
	const char *names[2] = { "stap.scripts.output", "stap.scripts.line" };
	pmID pmids[2];
	pmDesc desc;
	int inst, sts;

	if ((sts = pmNewContext(PM_CONTEXT_HOST, "local:")) < 0 ||
	    (sts = pmLookupName(2, names, pmids)) < 0 || (sts = pmLookupDesc(pmids[0], &desc)) < 0 ||
	    (sts = inst = pmLookupInDom(desc.indom, script)) < 0 ||
	    (sts = pmDelProfile(desc.indom, 0, NULL)) < 0 ||
	    (sts = pmAddProfile(desc.indom, 1, &inst)) < 0) {
		fprintf(stderr, "stapevents: %s: %s\n", script, pmErrStr(sts));
		return -1;
	}
	*output = pmids[0];
	line_pmid = pmids[1];
	return 0;
}

int main(int argc, char **argv)
{
	const char *script = NULL, *ready = NULL, *stop = NULL;
	struct tally t = { .last = -1 };
	double quiet = 30, idle_since;
	pmID output;
	int c, n;
	long target;

	while ((c = getopt(argc, argv, "i:r:x:t:")) != -1) {
		switch (c) {
		case 'i': script = optarg; break;
		case 'r': ready = optarg; break;
		case 'x': stop = optarg; break;
		case 't': quiet = atof(optarg); break;
		default: script = NULL; optind = argc + 1; break;
		}
	}
	if (!script || optind > argc) {
		fprintf(stderr, "usage: stapevents -i SCRIPT [-r READYFILE] [-x STOPFILE] [-t SECS]\n");
		return 2;
	}
	if (setup(script, &output) < 0 || fetch_once(output, &t) < 0)
		return 2;
	if (ready)
		close(open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644));
	idle_since = now();
	for (;;) {
		n = fetch_once(output, &t);
		if (n < 0 && t.failed > 100)
			break;
		if (n > 0) {
			idle_since = now();
			if (!t.first_at)
				t.first_at = idle_since;
			t.last_at = idle_since;
		} else if (now() - idle_since > quiet) {
			break;
		} else {
			usleep(1000);	/* nothing queued: do not spin on pmcd */
		}
		target = stop_target(stop);
		if (target >= 0 && t.got + t.missed >= target)
			break;
	}
	printf("lines got %ld\nlines missed %ld\nmissed records %ld\nout of order %ld\n", t.got,
	       t.missed, t.missed_records, t.disorder);
	printf("fetches %ld\nfailed fetches %ld\n", t.fetches, t.failed);
	printf("seconds %.3f\nlines/s %.0f\n", t.last_at - t.first_at,
	       t.last_at > t.first_at ? t.got / (t.last_at - t.first_at) : 0.0);
	return 0;
}
