/* emit.h - pass 3: the elaborated program as C for the BPF runtime. */
#ifndef PMSTAP_EMIT_H
#define PMSTAP_EMIT_H

#include "session.h"
#include "../runtime/dyninst/stp_dyn.h"	/* STP_DYN_SLOTS */

struct program;

/*
 * Write DIR/script.bpf.c (the kernel-context handlers as BPF programs,
 * with every map and the per-CPU context) and DIR/script.c (the
 * user-context handlers as C functions, and `const struct stp_meta
 * stp_meta` describing the whole script, see runtime/stp_meta.h).
 * Constructs that cannot run where their handler runs are reported with
 * their location.  Returns 0, or -1 after reporting why.
 *
 * Compile script.bpf.c with clang -O2 -g -target bpf -mcpu=v3 -fwrapv
 * -I<runtime dir> -I<dir of vmlinux.h>, and script.c with cc -O2 -shared
 * -fPIC -fwrapv -I<runtime dir>, where <runtime dir> is the source tree's
 * runtime/ (it holds stp_meta.h, bpf/ and user/).  -fwrapv gives stap's
 * wrapping 64-bit arithmetic; -mcpu=v3 is optional (atomics with fetch).
 */
int emit_program(struct session *s, struct program *prog, const char *dir);

/*
 * The same for the dyninst runtime: DIR/script.dyn.c is the kernel-context
 * code to compile natively (cc -O2 -shared -fPIC -fwrapv -I<runtime dir>)
 * into script.dyn.so, which libstapdyn.so loads into the probed process;
 * its "per CPU" data is per thread slot, STP_DYN_SLOTS of them.
 */
int emit_program_dyninst(struct session *s, struct program *prog, const char *dir);
int emit_program_kmod(struct session *s, struct program *prog, const char *dir);

#endif
