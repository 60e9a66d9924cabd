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

/* What a site is: a place in the code, or an event of the process (enum order: the table's). */
enum stp_dyn_event {
	STP_DYN_CODE,			/* a probed instruction: path and offset */
	STP_DYN_PROCESS_BEGIN,		/* the process starts: its image is loaded, or it forked */
	STP_DYN_PROCESS_END,		/* it calls exit() (not _exit(), not a fatal signal) */
	STP_DYN_THREAD_BEGIN,		/* a thread that pthread_create() made starts */
	STP_DYN_THREAD_END,		/* such a thread returns or calls pthread_exit() */
};

/* A probe of the script: one uprobe-class probe point, or a process or thread event. */
struct stp_dyn_site {
	int probe;			/* index in stp_meta.probes */
	int (*fn)(struct pt_regs *regs);	/* its handler */
	enum stp_dyn_event event;
	int64_t pid;			/* events of process(PID) only; 0: any */
	const char *path;		/* the ELF file; an event: process("PATH")'s program, or NULL */
	uint64_t offset;		/* file offset of the probed instruction */
	uint64_t func_lo, func_hi;	/* file offsets of its function's code [lo, hi); 0: not known */
	bool ret;			/* .return */
	uint64_t ref_ctr_offset;	/* SDT semaphore's file offset; 0: none */
};

typedef struct stp_dmap_ref **(*stp_dyn_maps_fn)(int *n);

/* Thread slots of a segment: "CPUs" of its per-CPU maps (threads past them are skipped). */
#define STP_DYN_SLOTS 64

/* -x: pmstap calls these in the process (libstapdyn-attach.so, loader.c). */
#define STP_DYN_ATTACH_LIB "libstapdyn-attach.so"
long stp_dyn_attach(const char *arg);
long stp_dyn_begin(const char *arg);
long stp_dyn_detach(const char *arg);

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
uint64_t stp_dyn_func_ip(void);		/* its probed address: a .return's function entry */

#endif
