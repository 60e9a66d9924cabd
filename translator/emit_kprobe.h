/* emit_kprobe.h - pass 3 for kernel function probes (emit_kprobe.c). */
#ifndef PMSTAP_EMIT_KPROBE_H
#define PMSTAP_EMIT_KPROBE_H

#include <stdio.h>
#include "emit_int.h"

/* The 64-bit words of kernel.function DP's arguments, as fentry gives them (0: not known). */
int emit_kprobe_words(const struct derived_probe *dp);

bool emit_kprobe_section(struct emitter *E, struct derived_probe *dp, const char **sec,
			 const char **ctype, enum stp_probe_kind *kind);
const char *emit_kprobe_target(struct emitter *E, struct expr *e);
/* $return = v, $param = v in a module's (--runtime=kernel) kprobe handler. */
const char *emit_kprobe_assign(struct emitter *E, struct expr *e);
void emit_kprobe_meta(const struct emitter *E, FILE *out, struct derived_probe *dp);
/* The C before stp_enter() in kernel function DP's program (context CTYPE): what addr() reads. */
const char *emit_kprobe_prologue(const struct emitter *E, const struct derived_probe *dp,
				 const char *ctype);

#endif
