/*
 * dwarf_lines.h - a function's line records and labels, as stap 4.8
 * reads them (dwflpp.cxx): the line of a statement probe, every line of
 * one, its labels.
 * For the kernel's DWARF (kdwarf.c) and programs' (probes_user.c) alike.
 */
#ifndef PMSTAP_DWARF_LINES_H
#define PMSTAP_DWARF_LINES_H

#include <stdbool.h>
#include <stdint.h>
#include <elfutils/libdw.h>
#include "vec.h"

/* Whether source file SRC of a line record is the one asked for (ARG). */
typedef bool dwarf_lines_file_fn(const char *src, const void *arg);

/*
 * The lowest address inside function (or inline instance) FN of a record
 * of line LINE in a file MATCH takes, into *PC (stap's
 * collect_lines_for_single_lineno(): every record counts, whether or not
 * it begins a statement); false when there is none.  *BELOW and *ABOVE
 * get the nearest lines FN has 5 at most before and after LINE (0: none),
 * stap's hint.
 */
bool dwarf_lines_pc(Dwarf_Die *fn, int line, dwarf_lines_file_fn *match, const void *arg,
		    uint64_t *pc, int *below, int *above);

/*
 * dwarf_lines_pc() of each of the NWANT lines WANT (ascending, each once)
 * in one read of the unit's records: the lowest address of each into
 * PCS[i], 0 where FN has no record of that line.
 */
void dwarf_lines_pcs(Dwarf_Die *fn, const int *want, int nwant, dwarf_lines_file_fn *match,
		     const void *arg, uint64_t *pcs);

/* A line and the address a statement probe on it takes. */
struct dwarf_line_at {
	int line;
	uint64_t pc;
};

/*
 * FUNC@FILE:*: FN's lines as stap 4.8 walks them (collect_all_lines()):
 * the records of DECL_FILE in FN's unit, by line number; from the line at
 * ENTRY (FN's entry), each next line with a record inside FN, at its
 * lowest such address; the walk ends at the first line with none inside.
 * Into OUT (struct dwarf_line_at *).
 */
void dwarf_lines_all(Dwarf_Die *fn, const char *decl_file, uint64_t entry, struct vec *out);

/* A label of a function (DW_TAG_label) with an address. */
struct dwarf_label {
	const char *name;
	const char *file;	/* its decl file, "" when DWARF does not say */
	int line;		/* its decl line */
	uint64_t pc;
};

/*
 * .label("PAT"): FN's labels that PAT (fnmatch) matches and that have an
 * address, as stap 4.8 walks them (dwflpp.cxx, iterate_over_labels()):
 * in FN's blocks, not in functions or inline instances nested in it.
 * Into OUT (struct dwarf_label *).
 */
void dwarf_lines_labels(Dwarf_Die *fn, const char *pat, struct vec *out);

#endif
