/* listing.h - pmstap -l / -L: the probe points a pattern stands for. */
#ifndef PMSTAP_LISTING_H
#define PMSTAP_LISTING_H

#include <stdio.h>
#include "session.h"

struct program;

/*
 * The text of the script -l PATTERN elaborates, as stap does:
 * "probe PATTERN {}".
 */
const char *listing_script(const char *pattern);

/*
 * Print, sorted and once each, the points PROG's script probe matched:
 * an alias by its name (syscall.open), anything else as the concrete
 * point (kernel.trace("sched:sched_switch"); a kernel.function pattern
 * gives a line per function BTF knows it to match).  With S->list_vars (-L),
 * each line goes on with the variables every one of its probes has:
 * the alias's locals as name:type, then the target variables as
 * $name:ctype (tracepoints: the record's fields, then the raw
 * tracepoint's arguments that no field hides).  Returns the number of
 * lines printed.
 */
int listing_print(FILE *out, const struct session *s, const struct program *prog);

#endif
