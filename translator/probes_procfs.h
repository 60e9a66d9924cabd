/*
 * probes_procfs.h - procfs("NAME").read/.write (pass 2): the point's
 * parameters and stap's checks on them, and $value, which becomes calls of
 * tapset/procfs.stp's functions (as stap does for its BPF runtime).
 */
#ifndef PMSTAP_PROBES_PROCFS_H
#define PMSTAP_PROBES_PROCFS_H

#include <stdbool.h>
#include "program.h"

struct sema;

/* DP's path, umask and maxsize from COMPS; 1 on success, -1 after an error. */
int probes_procfs_resolve(struct sema *sm, struct derived_probe *dp, struct vec *comps);

/*
 * In procfs probe DP: *EP is $value, or an assignment to it?  Then it is
 * rewritten to a call (or reported) and true is returned: the caller
 * resolves *EP again.
 */
bool probes_procfs_value(struct sema *sm, struct derived_probe *dp, struct expr **ep);

#endif
