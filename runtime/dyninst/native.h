/*
 * native.h - libstapdyn.so's own state, shared by loader.c and native.c.
 */
#ifndef STP_DYN_NATIVE_H
#define STP_DYN_NATIVE_H

#include "stp_dyn.h"

/* the script's segment, mapped in this process (NULL: not loaded) */
extern struct stp_dseg *stp_dyn_seg;
/* Bumped when stp_dyn_seg changes (a second -x attach): slots are per segment. */
extern uint32_t stp_dyn_seg_gen;
/* the registers of the hit this thread handles, for stp_dyn_regs() */
extern __thread struct pt_regs *stp_dyn_cur_regs;
/* the probed address of that hit (a .return's: its function's entry) */
extern __thread uintptr_t stp_dyn_cur_func;

/* Once, before any handler runs: a forked child forgets the parent thread's ids and slot. */
void stp_dyn_native_init(void);

/*
 * events.c: run the events' handlers when they happen, and process.begin
 * now when BEGIN_NOW (-x: later, stp_dyn_events_begin(), once pmstap has
 * run its begin probes).
 */
void stp_dyn_events_start(const struct stp_dyn_site *sites, bool begin_now);
void stp_dyn_events_begin(void);
void stp_dyn_events_stop(void);		/* -x detach: no handler runs any more */

/* got.c, -x: the program's calls bound to events.c's wrappers, and back (detach). */
void stp_dyn_got_hook(void);
void stp_dyn_got_unhook(void);

#endif
