/* sema.h - pass 2: resolve, expand, infer types, check against this system. */
#ifndef PMSTAP_SEMA_H
#define PMSTAP_SEMA_H

#include "ast.h"
#include "session.h"

struct program;

/*
 * Elaborate SCRIPT: pull in the tapset functions and probe aliases it uses
 * from the session's tapset path, expand aliases and wildcards, resolve
 * every symbol, infer every type, and check probe points against this
 * system.  All errors are reported before it returns; the result is NULL
 * when there were any.
 */
struct program *sema_elaborate(struct session *s, struct stapfile *script);

/* Print the elaborated program with its types (pmstap -p2, sema_print.c). */
void sema_print_program(FILE *out, const struct program *prog);

/*
 * --dump-functions, --dump-probe-aliases, --dump-probe-types (the
 * session's dump): list what the library and the translator know, in
 * stap's form, on OUT.  Returns the exit status (sema_dump.c).
 */
int sema_dump(FILE *out, struct session *s);

/* Counts for -v: "3 probes, 2 functions, 1 global". */
void sema_counts(const struct program *prog, int *probes, int *funcs, int *globals);

#endif
