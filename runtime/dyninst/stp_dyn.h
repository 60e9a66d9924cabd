/*
 * stp_dyn.h - what a script's script.dyn.so and libstapdyn.so (the
 * dyninst runtime in the probed process) know of each other.
 *
 * script.dyn.so gives, through dlsym():
 *   stp_dyn_sites		its probe sites, ended by a NULL fn
 *   stp_dyn_maps(&n)	its maps (struct stp_dmap_ref *), N of them, for
 *			the loader to find in the segment by name
 *   stp_rt			struct stp_rt_info, the runner's answers
 * libstapdyn.so (and pmstap, which dlopens script.dyn.so to read its
 * maps) gives the functions below.
 */
#ifndef STP_DYN_H
#define STP_DYN_H

#include <stdbool.h>
#include <stdint.h>
#include "dmap.h"

/* The probed thread's registers: the kernel's x86-64 struct pt_regs (patch.h fills it). */
struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

/* A map of the script: its shape, and where the loader found it in the segment. */
struct stp_dmap_ref {
	struct stp_dmap_def def;
	struct stp_dmap *m;
	uint8_t *base;			/* an array's values (stp_dmap__array), or NULL */
	uint64_t vsize, stride;
};

/* A probe of the script that patches code: one uprobe-class probe point. */
struct stp_dyn_site {
	int probe;			/* index in stp_meta.probes */
	int (*fn)(struct pt_regs *regs);	/* its handler */
	const char *path;		/* the ELF file */
	uint64_t offset;		/* file offset of the probed instruction */
	uint64_t func_lo, func_hi;	/* file offsets of its function's code [lo, hi); 0: not known */
	bool ret;			/* .return */
	uint64_t ref_ctr_offset;	/* SDT semaphore's file offset; 0: none */
};

typedef struct stp_dmap_ref **(*stp_dyn_maps_fn)(int *n);

/* Thread slots of a segment: "CPUs" of its per-CPU maps (threads past them are skipped). */
#define STP_DYN_SLOTS 64

/* How pmstap starts a command with the script loaded (loader.c). */
#define STP_DYN_LIB "libstapdyn.so"
#define STP_DYN_ENV_SEG "STAPDYN_SEGMENT_FD"	/* the segment's descriptor, inherited */
#define STP_DYN_ENV_SO "STAPDYN_SCRIPT"		/* the path of script.dyn.so */
#define STP_DYN_ENV_REPORT "STAPDYN_REPORT_FD"	/* "ok N\n" or "error: WHY\n" goes there */

/* libstapdyn.so */
uint32_t stp_dyn_slot(void);		/* the calling thread's slot, claimed at first use */
uint64_t stp_dyn_pid_tgid(void);
void stp_dyn_comm(char *out, uint32_t n);
struct pt_regs *stp_dyn_regs(void);	/* the registers of the hit being handled */
long stp_dyn_snprintf(char *out, uint32_t size, const char *fmt, const uint64_t *data,
		      uint32_t len);

#endif
