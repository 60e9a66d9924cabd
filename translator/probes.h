/*
 * probes.h - pass 2's probe points (probes.c): from what a probe says to
 * the concrete points of the program, and the text of a point.
 */
#ifndef PMSTAP_PROBES_H
#define PMSTAP_PROBES_H

#include "program.h"

struct sema;

/* Derive P's concrete probes into the program. */
void probes_derive(struct sema *sm, struct probe *p);
/* COMPS (struct probe_comp *) as the script writes them: kernel.function("f").return */
char *probes_point_text(struct vec *comps);
/* The component of a probe point called NAME, or NULL. */
struct probe_comp *probes_comp_named(struct vec *comps, const char *name);
/* A copy of the point COMPS with its WHICH("...") argument replaced by NAME. */
struct vec probes_comps_with_arg(struct vec *comps, const char *which, const char *name);
/* The point COMPS without its component NAME (its parts shared). */
struct vec probes_comps_without(struct vec *comps, const char *name);
/* N sites are more than one point may stand for (KFUNC_MAX_EXPANSION) in a run: -l lists all. */
bool probes_over_limit(const struct sema *sm, int n);
/* Kernel function SYM as a kprobe names it: "MODULE:SYM", or SYM (MODULE NULL: vmlinux). */
const char *probes_ksym(const char *module, const char *sym);
/*
 * The symbol a kprobe reaches PC by, where symbol SYM of MODULE (NULL:
 * vmlinux) holds PC at *OFFSET: SYM when the kernel (the module) has it
 * once, else a symbol it has once before PC in PC's section
 * (kdwarf_symbol_anchor()), *OFFSET then PC's offset from it; NULL when
 * none reaches PC.
 */
const char *probes_kernel_site(const char *module, const char *sym, uint64_t pc,
			       uint64_t *offset);

/*
 * The shapes of the builtin probe points, as "process(a).statement(a)":
 * (n) a number, (s) a string, (a) either (--dump-probe-types).
 */
struct vec probes_pattern_texts(void);

#endif
