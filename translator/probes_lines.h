/*
 * probes_lines.h - the line part of a statement's "FUNC@FILE..." as
 * stap 4.8 reads it (tapsets.cxx, parse_function_spec):
 *
 *	":N"		one line
 *	"+N"		N lines after the function's declaration line
 *	":*"		every line of the function
 *	":N-M,P,..."	lines and ranges of lines, each line probed where it
 *			has code (none: no match)
 */
#ifndef PROBES_LINES_H
#define PROBES_LINES_H

#include <stdbool.h>

enum line_kind {
	LINES_NONE,	/* no line part: the function's entry */
	LINES_ONE,
	LINES_RELATIVE,
	LINES_EVERY,
	LINES_LIST,
};

struct line_spec {
	enum line_kind kind;
	int line;		/* LINES_ONE's line, LINES_RELATIVE's offset */
	const int *lines;	/* LINES_LIST's, ascending, each once */
	int nlines;
};

/*
 * TEXT, what follows FILE (":..." or "+...", or "" for none), into LS;
 * false when it is none of the forms above.
 */
bool probes_line_spec(const char *text, struct line_spec *ls);

/* The line LINES_ONE or LINES_RELATIVE asks of a function declared at DECL_LINE. */
int probes_line_of(const struct line_spec *ls, int decl_line);
/* LINE is one LS asks of a function declared at DECL_LINE (LINES_NONE, LINES_EVERY: any). */
bool probes_line_wanted(const struct line_spec *ls, int decl_line, int line);

/*
 * After a line without code: BELOW and ABOVE are the nearest lines with
 * code a function has before and after it, 5 at most away (0: none).
 *   probes_line_nearest: .nearest's line, the nearer, ABOVE on a tie (stap's
 *	get_nearest_lineno()); 0 when neither;
 *   probes_line_hint_keep: *BELOW and *ABOVE become the nearest seen so far
 *	over the functions;
 *   probes_line_hint: stap's hint, "try :B or :A", or NULL when neither.
 */
int probes_line_nearest(int line, int below, int above);
void probes_line_hint_keep(int *below, int *above, int b, int a);
const char *probes_line_hint(int below, int above);

#endif
