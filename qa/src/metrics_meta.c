/*
 * metrics_meta - the metrics a compiled script exports, for the QA tests
 *
 *	metrics_meta [-v] SCRIPT.so
 *
 * Opens the user-context object of a compiled script (what `pmstap -p4`
 * prints last) and reads its stp_meta, as pmdastap does.  For each
 * exported global it checks the doc comment (metrics/README.md, "Doc
 * comments"): a one-line help of at most 80 characters, one @units and
 * one @semantics tag with known values, no other tag.  It prints the
 * metrics the global becomes (pcp-stap's DESIGN.md section 4), one per
 * line:
 *
 *	NAME UNITS SEMANTICS
 *
 * where NAME is stap.<script>.<global>, with .count, .sum, .min, .max,
 * .avg and (with a histogram) .hist for a statistic.  The count, sum and
 * histogram of a statistic are counters and its min, max and avg are
 * instants, whatever its @semantics says; count and hist are in units of
 * count, the others in the statistic's @units.  -v adds the type, the
 * key types, the capacity and "wrap" for a wrapping array.
 *
 * Problems go to stderr as "metrics_meta: GLOBAL: what is wrong"; exits
 * 0 when there are none, 1 when there are, 2 on a usage or load error.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../runtime/stp_meta.h"

#define ONELINE_MAX 80

static const char *const known_units[] = {
	"none", "count", "bytes", "Kbytes", "Mbytes", "nsec", "usec", "msec", "sec", NULL,
};
static const char *const known_semantics[] = { "counter", "instant", "discrete", NULL };

struct doc {
	char oneline[256];
	size_t oneline_len;		/* before truncation to the buffer */
	char units[32];
	char semantics[32];
	int nunits, nsemantics;
	char bad_tag[32];		/* the first unknown tag, if any */
};

static int problems;
static bool verbose;

static void problem(const char *global, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void problem(const char *global, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "metrics_meta: %s: ", global);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	problems++;
}

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* The doc comment's text with each line's leading blanks and '*' removed. */
static char *doc_text(const char *raw)
{
	char *out = malloc(strlen(raw) + 1), *o = out;
	bool bol = true;

	if (!out) {
		perror("metrics_meta");
		exit(2);
	}
	for (const char *p = raw; *p; p++) {
		if (bol) {
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p == '*' && p[1] != '/')
				p++;
			if (!*p)
				break;
		}
		bol = *p == '\n';
		*o++ = *p;
	}
	*o = '\0';
	return out;
}

/* Copy the word at *pp (up to a blank) into buf, and move *pp past it. */
static void take_word(const char **pp, char *buf, size_t size)
{
	const char *p = *pp;
	size_t n = 0;

	while (*p && !isspace((unsigned char)*p)) {
		if (n + 1 < size)
			buf[n++] = *p;
		p++;
	}
	buf[n] = '\0';
	*pp = p;
}

/*
 * Split a doc comment: the prose before the first tag (a '@' that starts
 * a word), whose first sentence is the one-line help, then the tags.
 */
static void doc_parse(const char *raw, struct doc *d)
{
	char *text = doc_text(raw);
	const char *p = text;
	bool space = false;

	memset(d, 0, sizeof(*d));
	while (isspace((unsigned char)*p))
		p++;
	/* the first sentence: up to a '.' followed by a blank or the end */
	for (; *p && *p != '@'; p++) {
		if (isspace((unsigned char)*p)) {
			space = true;
			continue;
		}
		if (space && d->oneline_len) {
			if (d->oneline_len + 1 < sizeof(d->oneline))
				d->oneline[d->oneline_len] = ' ';
			d->oneline_len++;
		}
		space = false;
		if (d->oneline_len + 1 < sizeof(d->oneline))
			d->oneline[d->oneline_len] = *p;
		d->oneline_len++;
		if (*p == '.' && (!p[1] || isspace((unsigned char)p[1]))) {
			p++;
			break;
		}
	}
	d->oneline[d->oneline_len < sizeof(d->oneline) ? d->oneline_len : sizeof(d->oneline) - 1] = '\0';
	/* the long help, then the tags */
	for (; *p; p++) {
		char tag[32], value[32];

		if (*p != '@' || (p > text && !isspace((unsigned char)p[-1])))
			continue;
		p++;
		take_word(&p, tag, sizeof(tag));
		while (*p == ' ' || *p == '\t')
			p++;
		take_word(&p, value, sizeof(value));
		if (strcmp(tag, "units") == 0) {
			snprintf(d->units, sizeof(d->units), "%s", value);
			d->nunits++;
		} else if (strcmp(tag, "semantics") == 0) {
			snprintf(d->semantics, sizeof(d->semantics), "%s", value);
			d->nsemantics++;
		} else if (!d->bad_tag[0]) {
			snprintf(d->bad_tag, sizeof(d->bad_tag), "%s", tag);
		}
		if (!*p)
			break;
	}
	free(text);
}

static const char *type_name(enum stp_type t)
{
	switch (t) {
	case STP_TYPE_LONG: return "long";
	case STP_TYPE_STRING: return "string";
	case STP_TYPE_STATS: return "stats";
	}
	return "?";
}

static void print_metric(const struct stp_meta *m, const struct stp_meta_global *g,
			 const char *sub, const char *units, const char *semantics)
{
	printf("stap.%s.%s%s%s %s %s", m->script, g->name, sub ? "." : "", sub ? sub : "",
	       units, semantics);
	if (verbose) {
		printf(" %s", type_name(g->type));
		if (g->nkeys) {
			putchar('[');
			for (int k = 0; k < g->nkeys; k++)
				printf("%s%s", k ? "," : "", type_name(g->key_types[k]));
			printf("] max=%u", (unsigned)g->max_entries);
		}
		if (g->wrap)
			printf(" wrap");
		if (g->hist.kind == STP_META_HIST_LOG)
			printf(" hist=log");
		else if (g->hist.kind == STP_META_HIST_LINEAR)
			printf(" hist=linear");
	}
	putchar('\n');
}

static void one_global(const struct stp_meta *m, const struct stp_meta_global *g)
{
	struct doc d;
	const char *u, *s;

	if (!g->doc) {
		problem(g->name, "no doc comment");
		return;
	}
	doc_parse(g->doc, &d);
	if (d.oneline_len == 0)
		problem(g->name, "no one-line help");
	else if (d.oneline_len > ONELINE_MAX)
		problem(g->name, "the one-line help is longer than %d characters: '%s'", ONELINE_MAX,
			d.oneline);
	if (d.nunits != 1)
		problem(g->name, "@units must be given once");
	else if (!in_list(d.units, known_units))
		problem(g->name, "unknown @units '%s'", d.units);
	if (d.nsemantics != 1)
		problem(g->name, "@semantics must be given once");
	else if (!in_list(d.semantics, known_semantics))
		problem(g->name, "unknown @semantics '%s'", d.semantics);
	if (d.bad_tag[0])
		problem(g->name, "unknown tag '@%s'", d.bad_tag);
	u = d.units[0] ? d.units : "?";
	s = d.semantics[0] ? d.semantics : "?";

	if (g->type != STP_TYPE_STATS) {
		print_metric(m, g, NULL, u, s);
		return;
	}
	print_metric(m, g, "count", "count", "counter");
	print_metric(m, g, "sum", u, "counter");
	print_metric(m, g, "min", u, "instant");
	print_metric(m, g, "max", u, "instant");
	print_metric(m, g, "avg", u, "instant");
	if (g->hist.kind != STP_META_HIST_NONE)
		print_metric(m, g, "hist", "count", "counter");
}

int main(int argc, char **argv)
{
	const struct stp_meta *m;
	void *dl;
	int i = 1, nexported = 0;

	if (argc > 1 && strcmp(argv[1], "-v") == 0) {
		verbose = true;
		i++;
	}
	if (argc != i + 1) {
		fprintf(stderr, "usage: metrics_meta [-v] SCRIPT.so\n");
		return 2;
	}
	/* lazy: the runner's functions it calls are not needed to read stp_meta */
	dl = dlopen(argv[i], RTLD_LAZY | RTLD_LOCAL);
	if (!dl) {
		fprintf(stderr, "metrics_meta: %s\n", dlerror());
		return 2;
	}
	m = dlsym(dl, STP_META_SYMBOL);
	if (!m) {
		fprintf(stderr, "metrics_meta: %s: no %s\n", argv[i], STP_META_SYMBOL);
		return 2;
	}
	if (m->version != STP_META_VERSION) {
		fprintf(stderr, "metrics_meta: %s: stp_meta version %d, expected %d\n", argv[i],
			m->version, STP_META_VERSION);
		return 2;
	}
	for (int g = 0; g < m->nglobals; g++) {
		if (!m->globals[g].exported)
			continue;
		nexported++;
		one_global(m, &m->globals[g]);
	}
	if (nexported == 0) {
		fprintf(stderr, "metrics_meta: %s: exports no global\n", m->script);
		problems++;
	}
	return problems ? 1 : 0;
}
