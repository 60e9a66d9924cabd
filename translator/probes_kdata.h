/*
 * probes_kdata.h - kernel.data hardware breakpoint probe points in pass 2
 * (probes_kdata.c): stap's hwbkpt probes, a perf breakpoint event on
 * every CPU.
 */
#ifndef PMSTAP_PROBES_KDATA_H
#define PMSTAP_PROBES_KDATA_H

#include <stdbool.h>
#include "program.h"

struct sema;

/*
 * Whether the symbol of a kernel.data("SYMBOL") point made of COMPS is in
 * kallsyms (an address: true); false after an error, or quietly when QUIET
 * (an optional point).
 */
bool probes_kdata_symbol_ok(struct sema *sm, struct vec *comps, bool quiet);

/* Resolve DP (a kernel.data point made from COMPS): its address or symbol, length, access. */
void probes_kdata_resolve(struct derived_probe *dp, struct vec *comps);

#endif
