/* emit_symdefer.h - symbol names printed from kernel context (emit_symdefer.c). */
#ifndef PMSTAP_EMIT_SYMDEFER_H
#define PMSTAP_EMIT_SYMDEFER_H

#include "emit_int.h"

/*
 * ARGS (N print arguments) with each call whose naming can wait for user
 * space replaced by what the record needs of it (the address); ARGS
 * itself when there is none.
 */
struct expr **emit_symdefer_args(struct expr **args, int n);

/*
 * If E is such a call, emit the record's deferred string argument for
 * it (VAL: what emit_symdefer_args() put in its place), add its bytes to
 * *SIZE, and return true.
 */
bool emit_symdefer_rec(struct emitter *E, const struct expr *e, const char *val, int *size);

#endif
