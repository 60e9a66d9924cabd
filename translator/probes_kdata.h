/*
 * probes_kdata.h - kernel.data hardware breakpoint probe points in pass 2
 * (probes_kdata.c): stap's hwbkpt probes, a perf breakpoint event on
 * every CPU.
 */
#ifndef PMSTAP_PROBES_KDATA_H
#define PMSTAP_PROBES_KDATA_H

#include "program.h"

struct sema;

/*
 * Resolve DP (a kernel.data point made from COMPS): its address or
 * symbol, length and access.  1, or -1 after an error.
 */
int probes_kdata_resolve(struct sema *sm, struct derived_probe *dp, struct vec *comps);

#endif
