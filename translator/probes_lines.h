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

#endif
