/*
 * compile.h - pass 4: the C that pass 3 wrote, compiled.
 *
 * DIR holds script.bpf.c (kernel context) and script.c (user context and
 * struct stp_meta).  compile_program() makes there
 *
 *	script.bpf.o	clang -O2 -g -target bpf -mcpu=v3 -fwrapv
 *			      -D__TARGET_ARCH_<arch> -I<dir> -I<cache root> -I<runtime dir>
 *	script.so	cc -O2 -g -shared -fPIC -fwrapv -I<runtime dir>
 *
 * both with the run's -D options.  The kernel side includes "vmlinux.h": a
 * link in DIR to <cache root>/vmlinux-<release>.h (hence -I<dir>), which
 * is dumped from the kernel's BTF by bpftool the first time a release
 * needs it.  That header and libbpf's are precompiled once (a PCH): see
 * compile_int.h.  script.so's tapset services (runtime/user/tapset_user.c)
 * are libstaprt's, in pmstap and pmdastap, which load it.  The compilers
 * are clang and cc, or $PMSTAP_CLANG and $PMSTAP_CC.
 */
#ifndef PMSTAP_COMPILE_H
#define PMSTAP_COMPILE_H

#include "session.h"
#include "../runtime/kmod/kmod_abi.h"

/* The object files a build leaves in its directory. */
#define COMPILE_BPF_SOURCE "script.bpf.c"
#define COMPILE_USER_SOURCE "script.c"
#define COMPILE_BPF_OBJECT "script.bpf.o"
#define COMPILE_USER_OBJECT "script.so"
#define COMPILE_DYN_SOURCE "script.dyn.c"
#define COMPILE_DYN_OBJECT "script.dyn.so"
#define COMPILE_KMOD_SOURCE "script.kmod.c"
#define COMPILE_KMOD_OBJECT "script.ko"
/* the module's name as built: pmstap renames its copy (runtime/kmod/kmod_abi.h) */
#define COMPILE_KMOD_NAME STP_KMOD_BUILD_NAME

/*
 * Compile DIR's sources; ROOT is the cache directory (for vmlinux.h).
 * 0 on success; else -1 after an error that shows the compiler's output
 * (generated code that does not compile is pmstap's bug) and leaves DIR
 * in place to look at.
 */
int compile_program(struct session *s, const char *dir, const char *root);
/* The same for the dyninst runtime: script.dyn.c into script.dyn.so, script.c into script.so. */
int compile_program_dyninst(struct session *s, const char *dir, const char *root);
/* The kernel runtime: script.kmod.c into script.ko with kbuild (the release's headers). */
int compile_program_kmod(struct session *s, const char *dir, const char *root);

/* The kernel's types as C, made once per kernel release; NULL after an error. */
const char *compile_vmlinux_h(const char *root);

#endif
