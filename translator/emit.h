/* emit.h - pass 3: the elaborated program as C for the BPF runtime. */
#ifndef PMSTAP_EMIT_H
#define PMSTAP_EMIT_H

#include "session.h"

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

#endif
