/* diag.h - diagnostics with file:line:col, the source line and a caret. */
#ifndef PMSTAP_DIAG_H
#define PMSTAP_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* One script or tapset file, or the text of -e (named "<input>"). */
struct source {
	const char *name;
	const char *text;	/* NUL-terminated */
	size_t len;
	bool is_tapset;		/* from the tapset path: embedded code allowed */
};

/* A position in a source: line and column count from 1; tabs count 1. */
struct srcloc {
	const struct source *src;
	int line;
	int col;
};

/*
 * Every diagnostic goes to one stream (stderr unless diag_set_stream says
 * otherwise) in the form
 *
 *	foo.stp:3:15: error: unresolved function 'exename'
 *	probe begin { exename() }
 *	              ^
 *	hint: did you mean 'execname'?
 *
 * A location with no source prints as "pmstap: error: ...".  Messages are
 * lower case and carry no trailing period.  diag_note() and diag_hint()
 * belong to the error or warning printed just before them.
 */
void diag_error(struct srcloc loc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void diag_warning(struct srcloc loc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void diag_note(struct srcloc loc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void diag_hint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int diag_error_count(void);	/* raised, shown or not */
int diag_errors_shown(void);	/* less the copies of one message left out */
/*
 * A message given again (the same kind, place and text: a probe body
 * copied into many probes) is left out and counted, as stap does, unless
 * ON (pmstap -v); diag_report_duplicates() says how many, in stap's words.
 */
void diag_keep_duplicates(bool on);
void diag_report_duplicates(void);
int diag_warning_count(void);
int diag_duplicates_left_out(void);	/* errors and warnings, not shown again */
void diag_set_stream(FILE *f);
void diag_suppress_warnings(bool on);	/* pmstap -w */
void diag_warnings_are_errors(bool on);	/* pmstap -W: warnings print and count as errors */
/*
 * The errors reported since the error count was SINCE do not stop the
 * run (a tapset file that is skipped): count them as warnings.
 */
void diag_demote_errors(int since);
void diag_reset(void);			/* for tests: zero the counts */

/* Edit (Levenshtein) distance; 999 for strings over 128 characters. */
int diag_distance(const char *a, const char *b);

/* The closest of CANDIDATES to NAME by edit distance, or NULL if none is near. */
const char *diag_similar(const char *name, const char *const *candidates, int n);

#endif
