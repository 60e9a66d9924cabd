/*
 * sema_write.h - pass 2: the checks on writes to target variables
 * ($var = v, $p->x = v, @var("g") = v, @cast(p, "t")->x = v).
 */
#ifndef PMSTAP_SEMA_WRITE_H
#define PMSTAP_SEMA_WRITE_H

#include "sema_int.h"

/* E, the left side of OP in probe DP (NULL in a function), may be written: else an error. */
void sema_target_write(struct sema *sm, const struct derived_probe *dp, struct expr *e,
		       const char *op);

#endif
