/*
 * emit_dwarf.h - pass 3: target variables of user-space probes from DWARF
 * (emit_dwarf.c).
 */
#ifndef PMSTAP_EMIT_DWARF_H
#define PMSTAP_EMIT_DWARF_H

#include "emit_int.h"

/* $var, $var->member[i]..., $var$, $$parms..., $return in a process probe. */
const char *emit_dwarf_target(struct emitter *E, struct expr *e);
/* @cast(p, "type", "PATH") reads through PATH's DWARF (or the probe's). */
bool emit_dwarf_is_cast(struct emitter *E, struct expr *e);
const char *emit_dwarf_cast(struct emitter *E, struct expr *e);
/* @var("name[@file.c]"[, "PATH"]) */
const char *emit_dwarf_atvar(struct emitter *E, struct expr *e);
/* LEFT = RIGHT where LEFT is a $var, @var or @cast (guru mode): bpf_probe_write_user. */
const char *emit_dwarf_assign(struct emitter *E, struct expr *e, bool used);
/* @defined(E): 1 or 0 when E reads DWARF, -1 when it is not for DWARF to say. */
int emit_dwarf_defined(struct emitter *E, struct expr *e);

#endif
