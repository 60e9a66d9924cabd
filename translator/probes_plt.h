/*
 * probes_plt.h - process("PATH").plt probe points (probes_plt.c): a
 * uprobe at each PLT entry of the file.
 */
#ifndef PMSTAP_PROBES_PLT_H
#define PMSTAP_PROBES_PLT_H

#include "program.h"

struct sema;
struct uelf;

/*
 * Resolve DP (a .plt probe made from COMPS) against the PLT entries of UE:
 * the number of probes it became, or -1 after an error.
 */
int plt_resolve(struct sema *sm, struct derived_probe *dp, struct uelf *ue, struct vec *comps);

#endif
