/*
 * kdwarf.h - the kernel's own debuginfo: a vmlinux with DWARF, and its
 * modules' .ko with DWARF, for what BTF and kallsyms cannot say
 * (kdwarf.c): which source file a kernel function is declared in, as
 * kernel.function("PATTERN@FILE") asks, and the inline instances.
 *
 * MODULE NULL means vmlinux; else a module's name, as module("M") gives
 * it.  Addresses (a function's entry, a pc) are the file's own: vmlinux's
 * link addresses, a module's sections as libdwfl lays them out; DIEs are
 * named across files by an id (uint64_t die).
 */
#ifndef PMSTAP_KDWARF_H
#define PMSTAP_KDWARF_H

#include <stdbool.h>
#include <stdint.h>
#include "vec.h"

/* A kernel function as its DWARF declares it. */
struct kdwarf_func {
	const char *module;	/* NULL: vmlinux's */
	const char *name;
	const char *file;	/* its decl file as the DWARF names it: "kernel/module/main.c" */
	int line;		/* its decl line */
	uint64_t entry;		/* its entry pc in its file (no KASLR offset) */
	bool inlined;		/* an instance of an inline function, entered at ENTRY */
	uint64_t die;		/* its DIE, an inline instance's or the function's (offset) */
	const char *symbol;	/* the kallsyms name it is probed by (set by the caller) */
	uint64_t offset;	/* an inline instance's offset into symbol (set by the caller) */
	const char *label;	/* a .label() probe's site: the label's name (set by the caller) */
};

/*
 * The vmlinux with DWARF of the kernel translated for (the sysroot's, or
 * this one's): PMSTAP_VMLINUX when set, else by the kernel's build-id under
 * /usr/lib/debug/.build-id/, /usr/lib/debug/boot/vmlinux-KVER,
 * /usr/lib/debug/lib/modules/KVER/vmlinux, /lib/modules/KVER/build/vmlinux;
 * a file whose build-id is not the kernel's does not count.  NULL when
 * there is none: *WANT then names the file to install.
 */
const char *kdwarf_vmlinux(const char **want);

/*
 * Module MODULE's .ko with DWARF, of the build installed under
 * /lib/modules/KVER: by its build-id under /usr/lib/debug/.build-id/,
 * else /usr/lib/debug/lib/modules/KVER/PATH (Debian's -dbg package), else
 * the installed .ko itself.  NULL when there is none: *WANT then names
 * the file to install (NULL: the module has no .ko).
 */
const char *kdwarf_module(const char *module, const char **want);

/* Whether MODULE's DWARF (NULL: vmlinux's) is installed: kdwarf_module(), kdwarf_vmlinux(). */
bool kdwarf_installed(const char *module);

/*
 * The kernel functions whose name matches NAME_PAT and whose
 * decl file matches FILE_PAT as stap 4.8 matches it (fnmatch without
 * FNM_PATHNAME, so a '*' spans directories; against the whole path or its
 * end after a '/': "module.c" matches "drivers/base/module.c"), into OUT
 * (struct kdwarf_func *), one per entry pc: out-of-line functions and
 * each instance of an inline function.  FILE_PAT NULL: any file.
 * False when there is no debuginfo (kdwarf_vmlinux()).
 */
bool kdwarf_functions(const char *module, const char *name_pat, const char *file_pat,
		      struct vec *out);

/*
 * The function symbols of vmlinux's .symtab that match NAME_PAT and are
 * neither named as a function of the DWARF nor at the address of a symbol
 * that is, nor where one of DWARF's out-of-line functions (of DWARF, the
 * pattern's functions from kdwarf_functions()) has its DW_AT_low_pc or
 * DW_AT_entry_pc: parts a function was split into ("vfs_get_tree.cold"),
 * clones ("foo.constprop.0") whose DWARF has only address ranges, static
 * call trampolines.  Into OUT (struct kdwarf_func *), once per address,
 * FILE "" and LINE 0.  This is what stap 4.8 adds to a wildcard's DWARF
 * functions (module_info::update_symtab(), query_module_symtab()), named
 * without "@FILE".
 */
void kdwarf_symtab_functions(const char *module, const char *name_pat, const struct vec *dwarf,
			     struct vec *out);

/*
 * What is missing when MODULE's DWARF (NULL: vmlinux's) is: "there is no
 * vmlinux with DWARF for KVER", "there is no M.ko under /lib/modules/KVER",
 * "there is no M.ko with DWARF for KVER".
 */
const char *kdwarf_missing(const char *module);

/* The hint after an error for want of kdwarf_vmlinux() or kdwarf_module(): what to install. */
void kdwarf_hint_install(const char *module);

/*
 * kernel.statement("FUNC@FILE:LINE"): the lowest address in F (its code,
 * or an inline instance's) of a record of line LINE of a file FILE_PAT
 * matches as kdwarf_functions() matches it (NULL: F's decl file), into
 * *PC; false when F has no such line record.  Every record counts, as in
 * stap 4.8's dwflpp.cxx, whether or not it begins a statement.  *BELOW and
 * *ABOVE get the nearest lines before and after LINE, 5 at most away,
 * that F has (0: none): stap's hint.
 */
bool kdwarf_line_pc(const struct kdwarf_func *f, const char *file_pat, int line, uint64_t *pc,
		    int *below, int *above);

/* kdwarf_line_pc() of each of NLINES LINES (ascending) at once: PCS[i], 0 for none. */
void kdwarf_lines_pcs(const struct kdwarf_func *f, const char *file_pat, const int *lines,
		      int nlines, uint64_t *pcs);

/*
 * kernel.statement("FUNC@FILE:*"): F's lines as stap 4.8 walks them
 * (dwarf_lines_all(), from F's decl file and entry).  Into OUT (struct
 * dwarf_line_at *, dwarf_lines.h).
 */
void kdwarf_all_lines(const struct kdwarf_func *f, struct vec *out);

/* One address range of a function's code: [lo, hi). */
struct kdwarf_range {
	uint64_t lo, hi;
};

/* F's code (an inline instance's ranges): struct kdwarf_range, into OUT. */
void kdwarf_func_ranges(const struct kdwarf_func *f, struct vec *out);

/* .label("PAT"): F's labels PAT matches (dwarf_lines_labels()), into OUT (struct dwarf_label *). */
void kdwarf_labels(const struct kdwarf_func *f, const char *pat, struct vec *out);

/* ---- the parameters of an inline instance (or of a function) DIE ---- */

/* The names of the parameters of inline instance DIE: "rq, prev, next, rf". */
const char *kdwarf_param_names(uint64_t die);

/*
 * Its parameters as -L lists them, into V (char *): "$prev:struct
 * task_struct*"; PC non-zero (a statement's): then its local variables in
 * scope at PC.
 */
void kdwarf_param_vars(uint64_t die, uint64_t pc, struct vec *v);
/* Function DIE's $return as -L lists it ("$return:ssize_t"), into V; nothing for a void one. */
void kdwarf_return_var(uint64_t die, struct vec *v);

/*
 * Parameter NAME of inline instance DIE as a BTF type id (probes_btf.h);
 * false with *WHY.  PC non-zero (a statement's): a local variable in scope
 * at PC too.
 */
bool kdwarf_param_btf(uint64_t die, uint64_t pc, const char *name, int *btf_id,
		      const char **why);

/*
 * Parameter NAME's value at PC (the instance's entry; a statement's: a
 * local variable in scope there too) as a C expression
 * over the struct pt_regs pointer REGS: its DWARF location translated
 * (dwarf_read.h), DEREF(ARG, address, size) writing what reads kernel
 * memory; false with *WHY (optimized out, a location the CFI does not
 * describe).  WANT_ADDR: its address instead (a struct's), false when it
 * is not in memory.
 */
bool kdwarf_param_value(uint64_t die, uint64_t pc, const char *name, const char *regs,
			const char *(*deref)(void *arg, const char *addr, int size), void *arg,
			bool want_addr, const char **c, const char **why);

/* A variable of $$vars: its name, its DIE, what it holds. */
struct kdwarf_var {
	const char *name;
	uint64_t off;			/* its DIE's offset */
	char shape;			/* 'v' a value, '{' a struct or union, '[' an array */
	int bytes;			/* a value's size */
	bool is_signed;
};

/*
 * $$vars (WHICH "vars"), $$parms ("parms") or $$locals ("locals") at PC
 * (0: the entry) of function or inline instance DIE, as stap 4.8 lists
 * them, into OUT (struct kdwarf_var *): the variables of the innermost
 * lexical block that holds PC, then of each block around it, then DIE's
 * parameters and variables, each scope's in DWARF's order.  Not the
 * caller's variables of an inline instance, nor those of the instances
 * inlined into DIE.
 */
void kdwarf_context_vars(uint64_t die, uint64_t pc, const char *which, struct vec *out);

/*
 * Whether kdwarf_param_value() can read parameter (or variable) NAME at
 * PC: false with *WHY where its location is not there or cannot be
 * translated (optimized out, a value on entry only), which makes
 * @defined($NAME) false there, as in stap.
 */
bool kdwarf_param_readable(uint64_t die, uint64_t pc, const char *name, const char **why);

/* Variable VAR's (a struct kdwarf_var's off) value at PC: as kdwarf_param_value(). */
bool kdwarf_var_value(uint64_t var, uint64_t pc, const char *regs,
		      const char *(*deref)(void *arg, const char *addr, int size), void *arg,
		      bool want_addr, const char **c, const char **why);
/* The BTF type of variable VAR, -1 when BTF has none (an array). */
int kdwarf_var_btf(uint64_t var);

/*
 * The functions of kernel module file PATH (a .ko), in its .text, into
 * NAMES (char *), from its symbol table; false when it cannot be read.
 */
bool kdwarf_ko_functions(const char *path, struct vec *names);

/* The name of the function symbol at PC (a clone's: "foo.isra.0"), or NULL. */
const char *kdwarf_symbol_at(const char *module, uint64_t pc);
/* The function symbol whose code holds PC, and PC's *OFFSET into it; NULL if none. */
const char *kdwarf_symbol_holding(const char *module, uint64_t pc, uint64_t *offset);
/* Whether MODULE's symbol table has function symbol NAME once. */
bool kdwarf_symbol_unique(const char *module, const char *name);
/*
 * A function symbol MODULE (vmlinux) has once, at or below PC in the
 * section that holds PC, and PC's *OFFSET from it, or NULL: how a kprobe
 * by name reaches PC in a function whose name the file has twice
 * (kprobes find "F", "M:F", as the first F of the symbols, kmodfile.h).
 */
const char *kdwarf_symbol_anchor(const char *module, uint64_t pc, uint64_t *offset);

/*
 * "NAME@FILE:LINE", as stap 4.8 names a probe point on kernel function
 * NAME: the out-of-line function of that name the DWARF has at symbol
 * NAME's address (a module's global NAME, of two), found in the one CU
 * that holds it (cheap, where a wildcard reads every CU), into *F too;
 * NULL when there is none.
 */
const char *kdwarf_function_point(const char *module, const char *name, struct kdwarf_func *f);

/*
 * The other points of F's name (F: kdwarf_function_point()'s), into OUT
 * (struct kdwarf_func *): its inline instances, in any compilation unit,
 * and the other out-of-line functions of that name (a header's static
 * function, compiled in each unit that does not inline it), which stap
 * 4.8 probes beside F for its plain name.
 */
void kdwarf_name_points(const struct kdwarf_func *f, struct vec *out);

/*
 * Whether stap 4.8 refuses to probe F outside guru mode (its kernel
 * blocklist): vmlinux's .init/.exit code (freed after boot, or dropped) or
 * the kprobes' own code (.kprobes.text), a function of NMI, fault or lock
 * paths, a file of such, or the .return of a function that never returns.
 * A module's .init and .exit code is probed while it is there, as stap's.
 */
bool kdwarf_blocklisted(const struct kdwarf_func *f, bool is_return);

/* F's code is in an .init.* or .exit.* section (a module's __init and __exit: notrace). */
bool kdwarf_init_exit(const struct kdwarf_func *f);

#endif
