/*
 * native.h - libstapdyn.so's own state, shared by loader.c and native.c.
 */
#ifndef STP_DYN_NATIVE_H
#define STP_DYN_NATIVE_H

#include "stp_dyn.h"

/* the script's segment, mapped in this process (NULL: not loaded) */
extern struct stp_dseg *stp_dyn_seg;
/* the registers of the hit this thread handles, for stp_dyn_regs() */
extern __thread struct pt_regs *stp_dyn_cur_regs;

/* Once, before any handler runs: a forked child forgets the parent thread's ids and slot. */
void stp_dyn_native_init(void);

/* events.c: run process.begin now, and the other events' handlers when they happen. */
void stp_dyn_events_start(const struct stp_dyn_site *sites);
void stp_dyn_events_stop(void);		/* -x detach: no handler runs any more */

#endif
