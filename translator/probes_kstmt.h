/*
 * probes_kstmt.h - where kernel.statement, module("M").statement and
 * kprobe.statement probe (pass 2, probes_kstmt.c): a kprobe at a symbol
 * and an offset, as stap 4.8 places it.
 */
#ifndef PMSTAP_PROBES_KSTMT_H
#define PMSTAP_PROBES_KSTMT_H

#include <stdbool.h>
#include "vec.h"

struct sema;

/*
 * The sites of a statement point COMPS, into OUT (struct kdwarf_func *,
 * kdwarf.h): each with its symbol and offset (symbol "" for an .absolute
 * address: offset is the address), its entry the address in vmlinux,
 * its DIE for $vars (0: none) and LINE the statement's line (a
 * function's entry: its decl line; FILE NULL when DWARF did not find it).
 *   "FUNC@FILE:LINE"  the lowest address of each function and inline
 *                     instance FUNC (a wildcard) of FILE that begins a
 *                     statement of LINE (the kernel's DWARF);
 *   "FUNC[@FILE]"     their entries; without debuginfo, FUNC's in kallsyms;
 *   ADDR              the function holding vmlinux address ADDR, at its offset;
 *   ADDR.absolute     the address in the running kernel (guru mode);
 *   module("M").statement("FUNC"): M's function's entry, by "M:FUNC".
 * Returns how many, or -1 after an error (none if OPTIONAL).
 */
int probes_kstatement_sites(struct sema *sm, struct vec *comps, bool optional, struct vec *out);

#endif
