/*
 * probes_btf.h - kernel functions as probe points: kernel.function,
 * module().function and kprobe.function, resolved against this kernel's
 * BTF and /proc/kallsyms (probes_sys.c, probes_btf.c) and emitted as
 * fentry/fexit or kprobe/kretprobe programs (emit_kprobe.c).
 */
#ifndef PMSTAP_PROBES_BTF_H
#define PMSTAP_PROBES_BTF_H

#include <stdbool.h>
#include "program.h"

/* A wildcard may stand for at most this many functions. */
#define KFUNC_MAX_EXPANSION 1000

/*
 * The functions PATTERN matches, into NAMES (char *): the names BTF knows,
 * else those of /proc/kallsyms; MODULE non-NULL: that module's functions
 * (kallsyms).  A wildcard keeps only the functions the kernel can trace
 * (available_filter_functions), when it can tell.  *SIMILAR gets a close
 * name when nothing matches.
 */
int sys_kernel_functions(const char *module, const char *pattern, struct vec *names,
			 const char **similar);

/*
 * The parameters of kernel function NAME (struct tp_arg *) and the BTF
 * type of what it returns (0: void); false when BTF does not describe it.
 */
bool btf_kfunc(const char *name, struct vec **params, int *ret);

/* BTF type ID as C spells it: "struct file *". */
const char *btf_type_c(int id);

/* Whether pass 2 can check DP's $vars (a kernel function, no wildcard left). */
bool kfunc_targets_checkable(const struct derived_probe *dp);

/*
 * Type E ($param..., $return..., $$parms...) at kernel function probe DP;
 * false with *WHY (and maybe *NEAR, a close name) when it has no such thing.
 */
bool kfunc_target_type(const struct derived_probe *dp, struct expr *e, char **why,
		       const char **near);

#endif
