/* emit_proc.h - pass 3 for process.begin/end and thread.begin/end (emit_proc.c). */
#ifndef PMSTAP_EMIT_PROC_H
#define PMSTAP_EMIT_PROC_H

#include "emit_int.h"

/*
 * The program of process/thread probe DP: its section (which names the
 * sched tracepoints the runner attaches it to), context type, kind, and
 * the prologue that filters the hits and notes their task, put before
 * the handler's stp_enter().
 */
bool emit_proc_section(struct emitter *E, struct derived_probe *dp, const char **sec,
		       const char **ctype, enum stp_probe_kind *kind, const char **prologue);

/*
 * Whether DP's handler also runs for the tasks that exist at start
 * (process.begin, thread.begin): then it is emitted as an inline
 * probe_N_run(), and emit_proc_programs() writes its two programs.
 */
bool emit_proc_existing(const struct emitter *E, const struct derived_probe *dp);
void emit_proc_programs(FILE *out, const char *sec, int index);

/* $var E of a process.syscall[.return] probe, as C. */
const char *emit_proc_target(struct emitter *E, struct expr *e);

#endif
