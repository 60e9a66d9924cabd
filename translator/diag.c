/* diag.c - print diagnostics; count errors and warnings. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "diag.h"

static FILE *diag_stream;
static int n_errors, n_warnings;
static bool warnings_off;
static bool warnings_fatal;	/* -W: a warning is an error */
static bool last_suppressed;	/* a suppressed message also hides its notes */
static bool keep_duplicates;	/* -v: every copy of a message printed */
static int dup_errors, dup_warnings;	/* the copies not printed */

static FILE *stream(void)
{
	return diag_stream ? diag_stream : stderr;
}

/* Print the LINEth line of SRC and a caret under column COL. */
static void show_line(const struct source *src, int line, int col)
{
	const char *p = src->text, *end;
	int i;

	for (i = 1; i < line && p; i++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p || !*p)
		return;
	end = strchr(p, '\n');
	if (!end)
		end = p + strlen(p);
	fprintf(stream(), "%.*s\n", (int)(end - p), p);
	for (i = 1; i < col && p + i - 1 < end; i++)
		fputc(p[i - 1] == '\t' ? '\t' : ' ', stream());
	fputs("^\n", stream());
}

static void report(const char *kind, struct srcloc loc, const char *fmt,
		   va_list ap)
{
	FILE *f = stream();

	if (loc.src)
		fprintf(f, "%s:%d:%d: %s: ", loc.src->name, loc.line, loc.col,
			kind);
	else
		fprintf(f, "pmstap: %s: ", kind);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	if (loc.src)
		show_line(loc.src, loc.line, loc.col);
}

/*
 * Has this message (kind, place and text) been given already?  A probe
 * body that an alias or a wildcard copies into many probes is checked once
 * per copy; stap, as here, says each error and warning once, and at the
 * end how many copies it left out (diag_report_duplicates()).
 */
static uint64_t *seen;		/* the messages given: hashes of kind, place and text */
static size_t n_seen, cap_seen;

static bool seen_before(const char *kind, struct srcloc loc, const char *fmt, va_list ap)
{
	char text[512];
	uint64_t h = 1469598103934665603ULL;

	vsnprintf(text, sizeof(text), fmt, ap);
	for (const char *p = kind; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	for (const char *p = loc.src ? loc.src->name : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	h = (h ^ (uint64_t)loc.line * 65599 ^ (uint64_t)loc.col) * 1099511628211ULL;
	for (const char *p = text; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	for (size_t i = 0; i < n_seen; i++)
		if (seen[i] == h)
			return true;
	if (n_seen == cap_seen) {
		uint64_t *more = realloc(seen, (cap_seen ? cap_seen * 2 : 64) * sizeof(*seen));

		if (!more)
			return false;
		seen = more;
		cap_seen = cap_seen ? cap_seen * 2 : 64;
	}
	seen[n_seen++] = h;
	return false;
}

/* An error counts (callers compare counts to see whether a step failed) even when not shown. */
void diag_error(struct srcloc loc, const char *fmt, ...)
{
	va_list ap;
	bool again;

	n_errors++;
	va_start(ap, fmt);
	again = !keep_duplicates && seen_before("error", loc, fmt, ap);
	va_end(ap);
	last_suppressed = again;
	if (again) {
		dup_errors++;
		return;
	}
	va_start(ap, fmt);
	report("error", loc, fmt, ap);
	va_end(ap);
}

void diag_warning(struct srcloc loc, const char *fmt, ...)
{
	va_list ap;
	bool again;

	last_suppressed = warnings_off;
	if (warnings_off)
		return;
	va_start(ap, fmt);
	again = !keep_duplicates && seen_before("warning", loc, fmt, ap);
	va_end(ap);
	last_suppressed = again;
	if (again) {
		dup_warnings++;
		return;
	}
	if (warnings_fatal)
		n_errors++;
	else
		n_warnings++;
	va_start(ap, fmt);
	report(warnings_fatal ? "error" : "warning", loc, fmt, ap);
	va_end(ap);
}

void diag_note(struct srcloc loc, const char *fmt, ...)
{
	va_list ap;

	if (last_suppressed)
		return;
	va_start(ap, fmt);
	report("note", loc, fmt, ap);
	va_end(ap);
}

void diag_hint(const char *fmt, ...)
{
	va_list ap;

	if (last_suppressed)
		return;
	fputs("hint: ", stream());
	va_start(ap, fmt);
	vfprintf(stream(), fmt, ap);
	va_end(ap);
	fputc('\n', stream());
}

int diag_error_count(void)
{
	return n_errors;
}

int diag_errors_shown(void)
{
	return n_errors - dup_errors;
}

void diag_keep_duplicates(bool on)
{
	keep_duplicates = on;
}

void diag_report_duplicates(void)
{
	if (dup_errors)
		fprintf(stream(), "Number of similar error messages suppressed: %d.\n", dup_errors);
	if (dup_warnings)
		fprintf(stream(), "Number of similar warning messages suppressed: %d.\n",
			dup_warnings);
	if (dup_errors || dup_warnings)
		fprintf(stream(), "Rerun with -v to see them.\n");
}

int diag_duplicates_left_out(void)
{
	return dup_errors + dup_warnings;
}

int diag_warning_count(void)
{
	return n_warnings;
}

void diag_set_stream(FILE *f)
{
	diag_stream = f;
}

void diag_suppress_warnings(bool on)
{
	warnings_off = on;
}

void diag_warnings_are_errors(bool on)
{
	warnings_fatal = on;
}

void diag_demote_errors(int since)
{
	if (n_errors > since) {
		n_warnings += n_errors - since;
		n_errors = since;
		dup_errors = dup_errors < n_errors ? dup_errors : n_errors;
	}
}

void diag_reset(void)
{
	n_errors = n_warnings = dup_errors = dup_warnings = 0;
	n_seen = 0;
	last_suppressed = false;
}

int diag_distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b), row[130];

	if (la > 128 || lb > 128)
		return 999;
	for (int j = 0; j <= lb; j++)
		row[j] = j;
	for (int i = 1; i <= la; i++) {
		int diag = row[0];

		row[0] = i;
		for (int j = 1; j <= lb; j++) {
			int up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *diag_similar(const char *name, const char *const *candidates, int n)
{
	int len = (int)strlen(name);
	int limit = len < 4 ? 1 : len < 8 ? 2 : 3;
	const char *best = NULL;
	int i, best_d = limit + 1;

	for (i = 0; i < n; i++) {
		int d = diag_distance(name, candidates[i]);

		if (d > 0 && d < best_d) {
			best_d = d;
			best = candidates[i];
		}
	}
	return best;
}
