/* emit_uprobe.h - pass 3 for user-space probes (emit_uprobe.c). */
#ifndef PMSTAP_EMIT_UPROBE_H
#define PMSTAP_EMIT_UPROBE_H

#include <stdio.h>
#include "emit_int.h"

bool emit_uprobe_section(struct emitter *E, struct derived_probe *dp, const char **sec,
			 const char **ctype, enum stp_probe_kind *kind, const char **prologue);
const char *emit_uprobe_target(struct emitter *E, struct expr *e);
void emit_uprobe_meta(FILE *out, const struct derived_probe *dp);
void emit_uprobe_flags(struct emitter *E, FILE *out);
void emit_usym_tables(struct emitter *E, FILE *out);	/* emit_usyms.c */

#endif
