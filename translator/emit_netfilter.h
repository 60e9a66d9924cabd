/* emit_netfilter.h - pass 3 for netfilter probes on the bpf runtime (emit_netfilter.c). */
#ifndef PMSTAP_EMIT_NETFILTER_H
#define PMSTAP_EMIT_NETFILTER_H

#include "emit_int.h"

/*
 * The program of netfilter probe DP: its section, context type, kind, the
 * prologue that starts the verdict at NF_ACCEPT, and what the program
 * returns.  False after an error (a name that -g let through has no value).
 */
bool emit_netfilter_section(struct emitter *E, struct derived_probe *dp, const char **sec,
			    const char **ctype, enum stp_probe_kind *kind, const char **prologue,
			    const char **ret);

/* $hooknum, $skb, $in, $out, $okfn, $verdict as C. */
const char *emit_netfilter_target(struct emitter *E, struct expr *e);

/* $verdict = V (guru mode): what is stored, as C. */
const char *emit_netfilter_assign(struct emitter *E, struct expr *e);

#endif
