/*
 * probes_netfilter.h - netfilter.hook("H").pf("P")[.priority("N")] in
 * pass 2: the point's names as numbers, stap's checks on them, and the
 * hook's context variables.
 */
#ifndef PMSTAP_PROBES_NETFILTER_H
#define PMSTAP_PROBES_NETFILTER_H

#include <stdbool.h>
#include "program.h"

struct sema;

/* DP's protocol family, hook and priority from COMPS; 1 on success, -1 after an error. */
int probes_netfilter_resolve(struct sema *sm, struct derived_probe *dp, struct vec *comps);

/*
 * Why $var E cannot be used in a netfilter probe (WRITE: as an
 * assignment's target), in stap's words; NULL when it can.
 */
const char *probes_netfilter_target(struct sema *sm, const struct expr *e, bool write);

#endif
