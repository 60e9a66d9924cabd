/*
 * probes_sys.h - what this system offers to probe (probes_sys.c):
 * tracepoints (tracefs), kernel functions (BTF, then /proc/kallsyms) and
 * executables (PATH), each read at most once per run.
 */
#ifndef PMSTAP_PROBES_SYS_H
#define PMSTAP_PROBES_SYS_H

#include "program.h"

struct sema;

/* A wildcard may stand for at most this many functions. */
#define KFUNC_MAX_EXPANSION 1000

/* SYSTEM:NAME from tracefs, read once; NULL if this kernel has no such event. */
struct tracepoint *sys_tracepoint(struct sema *sm, const char *system, const char *name);
struct vec *sys_tracepoint_names(struct sema *sm, const char *system);	/* char * */
struct vec *sys_tracepoint_systems(struct sema *sm);			/* char * */

/*
 * How many kernel functions PATTERN (a name or a wildcard) matches: BTF
 * first, /proc/kallsyms when BTF has none.  *SIMILAR gets a close name
 * when there is no match.
 */
int sys_kernel_function_matches(const char *pattern, const char **similar);

/*
 * Whether ftrace can trace function NAME (available_filter_functions; true
 * when that cannot be read), or "M:F" (true when module M was not loaded).
 * A kprobe of the tracing layer (a BPF program's) is refused in a function
 * it cannot (a notrace one).
 */
bool sys_kernel_function_traceable(const char *name);

/*
 * Whether /proc/kallsyms has one text symbol NAME (not none, not two
 * static functions of that name), so that a probe by name is on it.
 */
bool sys_kernel_function_unique(const char *name);

/*
 * The functions PATTERN matches, into NAMES (char *): the names BTF knows,
 * else those of /proc/kallsyms; MODULE non-NULL: that module's functions
 * (kallsyms).  A wildcard keeps only the functions the kernel can trace
 * (available_filter_functions), when it can tell; a kernel function of
 * the init text is never kept.  *SIMILAR gets a close name when nothing
 * matches.
 */
/*
 * Is NAME a kernel function of the init text (.init.text: between
 * _sinittext and _einittext in /proc/kallsyms)?  The kernel frees it once
 * booted, so no probe can be put there (stap skips such functions too).
 */
bool sys_kernel_function_is_init(const char *name);

int sys_kernel_functions(const char *module, const char *pattern, struct vec *names,
			 const char **similar);

/* PATH as process("PATH") means it: absolute, or looked up in $PATH; NULL if missing. */
const char *sys_find_executable(const char *path);

#endif
