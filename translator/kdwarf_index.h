/*
 * kdwarf_index.h - which compilation units of a kernel's (a module's)
 * DWARF define each function name (kdwarf_index.c), so that a plain name
 * or a wildcard reads only the units that have it, not all of them.
 *
 * Made once per build of the file, by a walk of every unit's functions
 * (0.4 s for Debian's vmlinux on a 2-core VM, ten times that in the
 * emulated qa guest), and kept in the cache as kdwarf-BUILDID.idx, a
 * table that is mapped and searched in place; a file without build-id
 * gets its table in memory, for the process.
 */
#ifndef PMSTAP_KDWARF_INDEX_H
#define PMSTAP_KDWARF_INDEX_H

#include <stdbool.h>
#include <elfutils/libdw.h>
#include "vec.h"

struct kindex;

/*
 * DW's index: from the cache when BUILD_ID ("" or NULL: none) has one that
 * is whole, else made now and stored there.  NULL only when DW has no unit.
 */
struct kindex *kindex_open(Dwarf *dw, const char *build_id);

/* Whether a unit defines a function NAME (no wildcard). */
bool kindex_has(const struct kindex *ix, const char *name);

/*
 * The units that define a function NAME_PAT matches (fnmatch, as
 * dwarf_diename() names it), as the offsets of their DIEs (uintptr_t in
 * OUT), in ascending order, each once.
 */
void kindex_units(const struct kindex *ix, const char *name_pat, struct vec *out);

#endif
