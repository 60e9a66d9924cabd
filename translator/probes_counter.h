/*
 * probes_counter.h - per-process perf counters (pass 2):
 * perf.*.process("PATH").counter("NAME") {} declares one, @perf("NAME")
 * in a process("PATH") uprobe handler reads it (probes_counter.c).
 */
#ifndef PMSTAP_PROBES_COUNTER_H
#define PMSTAP_PROBES_COUNTER_H

#include <stdbool.h>
#include "program.h"

struct sema;

/*
 * A perf point with .counter: the event TYPE/CONFIG, named EVENT in the
 * point's text ("perf.sw.page_faults"), written as ORIG.  1 when it
 * declared a counter (it makes no derived probe), -1 after an error.
 */
int probes_counter_build(struct sema *sm, struct probe_point *orig, struct vec *comps,
			 const char *event, int64_t type, int64_t config);

/*
 * The executable of a perf point's .process("PATH"), or of .process: the
 * -c command's (or -x process's), as stap's; NULL after an error.
 */
const char *probes_counter_process(struct sema *sm, struct probe_comp *pc);

/*
 * @perf("NAME") E in probe DP (NULL: in a function): in a uprobe handler
 * of the counter's process it is resolved (E->num); otherwise it is left
 * for pass 3 to refuse, as stap does.  A counter that does not exist is an
 * error unless QUIET (inside @defined()).  Whether it was resolved.
 */
bool probes_counter_read(struct sema *sm, struct derived_probe *dp, struct expr *e, bool quiet);

#endif
