/*
 * dwarf_lines.c - a function's line records and labels, as stap 4.8
 * reads them (dwarf_lines.h).
 */
#include <dwarf.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include "arena.h"
#include "dwarf_lines.h"

bool dwarf_lines_pc(Dwarf_Die *fn, int line, dwarf_lines_file_fn *match, const void *arg,
		    uint64_t *pc, int *below, int *above)
{
	Dwarf_Die cu;
	Dwarf_Lines *lines;
	size_t n;
	bool found = false;

	*below = *above = 0;
	if (!dwarf_diecu(fn, &cu, NULL, NULL) || dwarf_getsrclines(&cu, &lines, &n) != 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		const char *src;
		Dwarf_Addr a;
		int ln;

		if (!l || dwarf_lineno(l, &ln) != 0 || ln < line - 5 || ln > line + 5 ||
		    dwarf_lineaddr(l, &a) != 0 || dwarf_haspc(fn, a) <= 0 ||
		    !(src = dwarf_linesrc(l, NULL, NULL)) || !match(src, arg))
			continue;
		if (ln < line && ln > *below)
			*below = ln;
		if (ln > line && (!*above || ln < *above))
			*above = ln;
		if (ln == line && (!found || a < *pc)) {
			*pc = a;
			found = true;
		}
	}
	return found;
}

static int by_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

void dwarf_lines_pcs(Dwarf_Die *fn, const int *want, int nwant, dwarf_lines_file_fn *match,
		     const void *arg, uint64_t *pcs)
{
	Dwarf_Die cu;
	Dwarf_Lines *lines;
	size_t n;

	memset(pcs, 0, (size_t)nwant * sizeof(*pcs));
	if (!dwarf_diecu(fn, &cu, NULL, NULL) || dwarf_getsrclines(&cu, &lines, &n) != 0)
		return;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		const int *at;
		const char *src;
		Dwarf_Addr a;
		int ln;

		if (!l || dwarf_lineno(l, &ln) != 0 ||
		    !(at = bsearch(&ln, want, (size_t)nwant, sizeof(*want), by_int)) ||
		    dwarf_lineaddr(l, &a) != 0 || (pcs[at - want] && pcs[at - want] <= a) ||
		    dwarf_haspc(fn, a) <= 0 || !(src = dwarf_linesrc(l, NULL, NULL)) ||
		    !match(src, arg))
			continue;
		pcs[at - want] = a;
	}
}

/* Line records by line number, then address: the order stap's walk reads them in. */
static int by_line_addr(const void *a, const void *b)
{
	Dwarf_Line *x = *(Dwarf_Line *const *)a, *y = *(Dwarf_Line *const *)b;
	Dwarf_Addr ax = 0, ay = 0;
	int lx = 0, ly = 0;

	dwarf_lineno(x, &lx);
	dwarf_lineno(y, &ly);
	if (lx != ly)
		return (lx > ly) - (lx < ly);
	dwarf_lineaddr(x, &ax);
	dwarf_lineaddr(y, &ay);
	return (ax > ay) - (ax < ay);
}

static int line_no(Dwarf_Line *l)
{
	int n = 0;

	dwarf_lineno(l, &n);
	return n;
}

static Dwarf_Addr line_addr(Dwarf_Line *l)
{
	Dwarf_Addr a = 0;

	dwarf_lineaddr(l, &a);
	return a;
}

/* The line FN starts at: the record at its entry, else the unit's first inside FN. */
static Dwarf_Line *first_line(Dwarf_Die *cu, Dwarf_Die *fn, Dwarf_Lines *lines, size_t n,
			      uint64_t entry)
{
	Dwarf_Line *l = dwarf_getsrc_die(cu, entry);

	if (l && line_addr(l) == entry)
		return l;
	for (size_t i = 0; i < n; i++) {
		l = dwarf_onesrcline(lines, i);
		if (l && dwarf_haspc(fn, line_addr(l)) > 0)
			return l;
	}
	return NULL;
}

void dwarf_lines_all(Dwarf_Die *fn, const char *decl_file, uint64_t entry, struct vec *out)
{
	Dwarf_Die cu;
	Dwarf_Lines *lines;
	Dwarf_Line *start;
	struct vec file = { 0 };
	size_t n;
	int i = 0, lineno;

	if (!dwarf_diecu(fn, &cu, NULL, NULL) || dwarf_getsrclines(&cu, &lines, &n) != 0)
		return;
	for (size_t k = 0; k < n; k++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, k);
		const char *src = l ? dwarf_linesrc(l, NULL, NULL) : NULL;

		if (src && strcmp(src, decl_file) == 0)
			vec_push(&file, l);
	}
	qsort(file.items, (size_t)file.len, sizeof(void *), by_line_addr);
	start = first_line(&cu, fn, lines, n, entry);
	if (!start)
		return;
	lineno = line_no(start);
	while (i < file.len && line_no(VEC_AT(&file, i)) < lineno)
		i++;
	for (;;) {
		struct dwarf_line_at *found = NULL;

		/* the records of LINENO (from I), the first inside FN kept */
		for (; i < file.len && line_no(VEC_AT(&file, i)) == lineno; i++) {
			Dwarf_Addr a = line_addr(VEC_AT(&file, i));

			if (!found && dwarf_haspc(fn, a) > 0) {
				found = ARENA_NEW(struct dwarf_line_at);
				found->line = lineno;
				found->pc = a;
			}
		}
		if (!found)
			break;
		vec_push(out, found);
		if (i >= file.len)
			break;
		lineno = line_no(VEC_AT(&file, i));
	}
}

static void labels_in(Dwarf_Die *parent, const char *pat, struct vec *out, int depth)
{
	Dwarf_Die die, import;
	Dwarf_Attribute attr;

	if (depth > 64 || dwarf_child(parent, &die) != 0)
		return;
	do {
		const char *name;
		Dwarf_Addr pc;

		switch (dwarf_tag(&die)) {
		case DW_TAG_label:
			name = dwarf_diename(&die);
			if (name && fnmatch(pat, name, 0) == 0 && dwarf_lowpc(&die, &pc) == 0) {
				struct dwarf_label *l = ARENA_NEW(struct dwarf_label);
				const char *file = dwarf_decl_file(&die);

				l->name = arena_strdup(name);
				l->file = file ? arena_strdup(file) : "";
				dwarf_decl_line(&die, &l->line);
				l->pc = pc;
				vec_push(out, l);
			}
			break;
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
			break;	/* another function's */
		case DW_TAG_imported_unit:
			if (dwarf_formref_die(dwarf_attr(&die, DW_AT_import, &attr), &import))
				labels_in(&import, pat, out, depth + 1);
			break;
		default:
			if (dwarf_haschildren(&die))
				labels_in(&die, pat, out, depth + 1);
			break;
		}
	} while (dwarf_siblingof(&die, &die) == 0);
}

void dwarf_lines_labels(Dwarf_Die *fn, const char *pat, struct vec *out)
{
	labels_in(fn, pat, out, 0);
}
