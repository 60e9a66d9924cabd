/*
 * tapset_user.h - the runtime/stp_tapset.h services in user context.
 *
 * Begin, end, error and timer probes run in the runner's process, so
 * there "the current task" is the runner: pid() is its pid, user_string()
 * reads its memory (safely, with process_vm_readv), cmdline_str() is its
 * command line.  Kernel memory cannot be read from here: kernel_long() and
 * the like raise "kernel read fault at 0xADDR".  The string services run
 * the same code as kernel context (runtime/stp_strings.h).
 *
 * tapset_user.c is libstaprt's, compiled once with pcp-stap: the script.so
 * that pmstap loads calls it (pmstap exports it, -rdynamic), so no script
 * compiles it again.  It works on the generated code's string buffers,
 * MAXSTRINGLEN bytes: the runner gives it the script's value before any
 * handler runs (stp_tapset_user_set_maxstringlen()), with the run's
 * stp_rt_info.  The hooks it calls are stp_user.h's.
 */
#ifndef STP_TAPSET_USER_H
#define STP_TAPSET_USER_H

#include <stdint.h>

#include "../stp_tapset.h"

/*
 * Fill RT for a run: the clocks' offsets, the time zone, HZ, the CPU
 * count (from the system), TARGET and the script's arguments ARGV[0] to
 * ARGV[ARGC - 1] (@1 is ARGV[0]).  Arguments past STP_RT_MAXARGS or
 * STP_RT_ARGBYTES are counted but read as "".  The runner does this into
 * the BPF object's STP_RT_SECTION map and gives the same memory to
 * stp_tapset_user_init().
 */
void stp_rt_info_init(struct stp_rt_info *rt, int64_t target, int argc, const char *const *argv);

/* Where the user-context services find the run's stp_rt_info (NULL: none yet, all zero). */
void stp_tapset_user_init(const struct stp_rt_info *rt);

/*
 * --runtime=kernel: the module's device FD (the runner's), where
 * stp_kmod_ucall() has the module run one of the script's embedded-C
 * functions for user context.
 */
void stp_tapset_user_kmod(int fd);

struct stp_kmod_call;

/*
 * Have the module run the function K names (runtime/kmod/kmod_abi.h):
 * its results in K; an error it raised (its message in ERR, MAXSTRINGLEN
 * bytes) is raised on C, and its `next` passed on.
 */
void stp_kmod_ucall(struct context *c, struct stp_kmod_call *k, char *err);

/* The script's MAXSTRINGLEN (a build of tapset_user.c with one defined ignores it). */
void stp_tapset_user_set_maxstringlen(int64_t maxstringlen);

/* The kernel's HZ: CONFIG_HZ from its config, else measured; 0 when unknown. */
int64_t stp_kernel_hz(void);

#endif
