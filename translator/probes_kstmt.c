/*
 * probes_kstmt.c - kernel.statement("FUNC@FILE:LINE"), ("FUNC"),
 * (ADDR) and (ADDR).absolute, module("M").statement("FUNC") and
 * kprobe.statement(ADDR).absolute: where each puts its kprobe.
 *
 * A line is found as stap 4.8 finds it: in the line table of the
 * function's CU (the kernel's DWARF, kdwarf.h), the records of that line
 * and file inside the function (or inline instance) that begin a
 * statement; the lowest address of them is the probe's.  The kprobe is
 * put by the name of the symbol holding it and the offset there, so KASLR
 * does not matter; an .absolute address is the running kernel's.
 *
 *	statement-spec = FUNC [ "@" FILE [ ":" LINE | "+" N | ":*" | ":" LIST ] ]
 *
 * (probes_lines.h): "+N" is N lines after the function's declaration
 * line, a LIST (N-M,P...) each line of it where the function has code.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "arena.h"
#include "diag.h"
#include "dwarf_lines.h"
#include "kdwarf.h"
#include "probes.h"
#include "probes_kstmt.h"
#include "probes_lines.h"
#include "probes_sys.h"
#include "sema_int.h"
#include "sysroot.h"

struct spec {
	const char *func, *file;	/* FILE NULL: none */
	struct line_spec lines;		/* LINES_NONE: the functions' entries */
	bool nearest;			/* .nearest: a line without code takes the nearest's */
	const char *module;		/* module("M"): M; NULL: vmlinux */
};

/* "FUNC[@FILE[:LINES|+N]]" into S; false (reported) for what it is not. */
static bool parse_spec(struct sema *sm, struct probe_comp *sc, struct spec *s)
{
	const char *t = sc->arg->str, *at = strchr(t, '@');
	size_t flen = at ? strcspn(at + 1, ":+") : 0;

	*s = (struct spec){ .func = arena_strndup(t, strcspn(t, "@:+")) };
	if (at)
		s->file = arena_strndup(at + 1, flen);
	if (!at ? strpbrk(t, ":+") != NULL : !probes_line_spec(at + 1 + flen, &s->lines)) {
		if (sema_error(sc->arg->loc, sm, "'%s': a statement is \"FUNC@FILE:LINE\", "
			       "\"FUNC@FILE+N\" (N lines after FUNC's), \"FUNC@FILE:*\" or "
			       "\"FUNC@FILE:N-M,P\"", t))
			diag_hint("kernel.statement(\"FUNC\") probes FUNC's entry");
		return false;
	}
	return true;
}

static struct kdwarf_func *site(const char *name, const char *symbol, uint64_t offset)
{
	struct kdwarf_func *f = ARENA_NEW(struct kdwarf_func);

	f->name = name;
	f->symbol = symbol;
	f->offset = offset;
	return f;
}

/* ADDR.absolute: the running kernel's address; ADDR: vmlinux's, by its symbol. */
static int address_site(struct sema *sm, struct vec *comps, bool optional, struct vec *out)
{
	struct probe_comp *sc = probes_comp_named(comps, "statement");
	uint64_t addr = (uint64_t)sc->arg->num, off = 0;
	const char *want, *sym;
	bool have;

	if (probes_comp_named(comps, "absolute")) {
		vec_push(out, site(NULL, "", addr));
		return 1;
	}
	have = kdwarf_vmlinux(&want) != NULL;
	sym = have ? kdwarf_symbol_holding(NULL, addr, &off) : NULL;
	if (!sym || !sys_kernel_function_unique(sym)) {
		if (!optional && sema_error(sc->arg->loc, sm, "no kernel function holds address "
					    "%#llx%s", (unsigned long long)addr, !have
					    ? arena_printf(" that pmstap can tell without %s", want)
					    : sym ? arena_printf(" but '%s', which kallsyms has more "
								 "than once", sym) : ""))
			diag_hint("kernel.statement(ADDR).absolute (pmstap -g) takes an address of "
				  "the running kernel");
		return optional ? 0 : -1;
	}
	vec_push(out, site(NULL, sym, off));
	((struct kdwarf_func *)VEC_AT(out, out->len - 1))->entry = addr;
	return 1;
}

/* Without debuginfo (or for a module): FUNC's entries by name, from kallsyms or M.ko. */
static int symbol_sites(struct sema *sm, struct vec *comps, const struct spec *s, bool optional,
			struct vec *out)
{
	const char *mod = NULL, *similar = NULL;
	struct probe_comp *mc = probes_comp_named(comps, "module");
	struct vec names = { 0 };
	int n;

	if (mc && mc->arg && mc->arg->kind == EXPR_STRING)
		mod = mc->arg->str;
	n = sys_kernel_functions(mod, s->func, &names, &similar);
	for (int i = 0; i < n; i++) {
		const char *name = VEC_AT(&names, i);

		vec_push(out, site(name, probes_ksym(mod, name), 0));
	}
	if (!n && !optional) {
		struct probe_comp *sc = probes_comp_named(comps, "statement");

		if (sema_error(sc->arg->loc, sm, "no match for probe point '%s'",
			       probes_point_text(comps))) {
			if (similar)
				diag_hint("did you mean '%s'?", similar);
			else if (mod)
				diag_hint("no function '%s' in module '%s' (loaded, or its .ko under "
					  "/lib/modules/%s)", s->func, mod, sysroot_kernel_release());
		}
	}
	return n ? n : optional ? 0 : -1;
}

/* No vmlinux with DWARF, which a FILE or LINE needs: say which file to install. */
static int no_debuginfo(struct sema *sm, struct probe_comp *sc, const char *mod, bool optional)
{
	if (optional)
		return 0;
	if (sema_error(sc->arg->loc, sm, "a statement's file and line are known only from the "
		       "%s debuginfo, and %s", mod ? "module's" : "kernel's", kdwarf_missing(mod)))
		kdwarf_hint_install(mod);
	return -1;
}

/*
 * G's kprobe at PC: the symbol whose code holds PC and the offset there, or
 * the one probes_kernel_site() reaches it from; a module's as "M:SYMBOL".
 * False when none reaches PC.
 */
static bool site_at(struct kdwarf_func *g, uint64_t pc)
{
	const char *sym = kdwarf_symbol_holding(g->module, pc, &g->offset);

	if (sym)
		sym = probes_kernel_site(g->module, sym, pc, &g->offset);
	g->entry = pc;
	g->symbol = sym ? probes_ksym(g->module, sym) : NULL;
	return sym != NULL;
}

/*
 * F's record of LINE into FOUND (struct dwarf_line_at *), or with
 * .nearest the nearest line's that F has, 5 at most away, the later one
 * on a tie (stap's get_nearest_lineno()); none: *BELOW and *ABOVE keep
 * the lines around it, for the hint.
 */
static void find_line(struct kdwarf_func *f, const char *file, int line, bool nearest,
		      int *below, int *above, struct vec *found)
{
	struct dwarf_line_at *l;
	uint64_t pc;
	int b, a, near;

	if (!kdwarf_line_pc(f, file, line, &pc, &b, &a)) {
		probes_line_hint_keep(below, above, b, a);
		near = nearest ? probes_line_nearest(line, b, a) : 0;
		if (!near || !kdwarf_line_pc(f, file, near, &pc, &b, &a))
			return;
		line = near;
	}
	l = ARENA_NEW(struct dwarf_line_at);
	l->line = line;
	l->pc = pc;
	vec_push(found, l);
}

/*
 * The records of the lines S asks for in FUNCS, into FOUND, in stap's
 * order (an address is put at its first line found): a list's line by
 * line, each in every function; every line (":*") function by function.
 */
static void lines_of(struct vec *funcs, const struct spec *s, int *below, int *above,
		     struct vec *found)
{
	if (s->lines.kind == LINES_LIST) {
		int nl = s->lines.nlines;
		uint64_t *pcs = arena_alloc((size_t)(funcs->len * nl + 1) * sizeof(*pcs));

		for (int j = 0; j < funcs->len; j++)
			kdwarf_lines_pcs(VEC_AT(funcs, j), s->file, s->lines.lines, nl, pcs + j * nl);
		for (int i = 0; i < nl; i++)
			for (int j = 0; j < funcs->len; j++)
				if (pcs[j * nl + i]) {
					struct dwarf_line_at *l = ARENA_NEW(struct dwarf_line_at);

					l->line = s->lines.lines[i];
					l->pc = pcs[j * nl + i];
					vec_push(found, l);
				}
		return;
	}
	for (int j = 0; j < funcs->len; j++) {
		struct kdwarf_func *f = VEC_AT(funcs, j);

		if (s->lines.kind == LINES_EVERY)
			kdwarf_all_lines(f, found);
		else
			find_line(f, s->file, probes_line_of(&s->lines, f->line), s->nearest, below,
				  above, found);
	}
}

/*
 * A site of F's once, by address, function and line: into OUT; 1 if new.
 */
static int add_site(struct kdwarf_func *f, struct hmap *seen, struct vec *out)
{
	const char *key = arena_printf("%" PRIx64 " %s %d", f->entry, f->name, f->line);

	if (hmap_get(seen, key))
		return 0;
	hmap_put(seen, key, (void *)1);
	vec_push(out, f);
	return 1;
}

/* A range of a function's code: FUNC, its index in line_sites()' FUNCS. */
struct func_span {
	uint64_t lo, hi;
	int func;
};

/* The functions whose code holds PC: N indexes into FUNCS, ascending. */
struct pc_holders {
	uint64_t pc;
	int n;
	int *funcs;
};

static int span_by_lo(const void *a, const void *b)
{
	const struct func_span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int holders_by_pc(const void *a, const void *b)
{
	const struct pc_holders *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static int int_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* The ranges of FUNCS' code, ascending by start: N of them. */
static struct func_span *spans_of(struct vec *funcs, int *n)
{
	struct func_span *spans = NULL;
	int cap = 0;

	*n = 0;
	for (int j = 0; j < funcs->len; j++) {
		struct vec ranges = { 0 };

		kdwarf_func_ranges(VEC_AT(funcs, j), &ranges);
		for (int k = 0; k < ranges.len; k++) {
			const struct kdwarf_range *r = VEC_AT(&ranges, k);

			if (*n == cap) {
				struct func_span *old = spans;

				cap = cap ? 2 * cap : 64;
				spans = arena_alloc((size_t)cap * sizeof(*spans));
				if (old)
					memcpy(spans, old, (size_t)*n * sizeof(*spans));
			}
			spans[(*n)++] = (struct func_span){ r->lo, r->hi, j };
		}
	}
	if (*n)
		qsort(spans, (size_t)*n, sizeof(*spans), span_by_lo);
	return spans;
}

/*
 * For each distinct pc of FOUND, the functions of FUNCS whose code holds
 * it (stap's dwarf_haspc() of each): one sweep over their ranges and the
 * pcs, both by address, keeping the ranges that hold the pc at hand (a
 * function and the instances inlined in it, a handful).  Asked of every
 * pair instead, a wildcard over a module (xfs: tens of thousands of
 * functions and instances, hundreds of thousands of line records) took
 * minutes.  Ascending by pc; *NPCS of them.
 */
static struct pc_holders *holders_of(struct vec *funcs, struct vec *found, int *npcs)
{
	struct hmap distinct = { 0 };
	struct pc_holders *pcs = arena_alloc((size_t)(found->len + 1) * sizeof(*pcs));
	int nspans, next = 0, nactive = 0, *active;
	struct func_span *spans = spans_of(funcs, &nspans);

	*npcs = 0;
	for (int i = 0; i < found->len; i++) {
		const struct dwarf_line_at *l = VEC_AT(found, i);

		if (!hmap_get(&distinct, (void *)(uintptr_t)l->pc)) {
			hmap_put(&distinct, (void *)(uintptr_t)l->pc, (void *)1);
			pcs[(*npcs)++].pc = l->pc;
		}
	}
	qsort(pcs, (size_t)*npcs, sizeof(*pcs), holders_by_pc);
	active = arena_alloc((size_t)(nspans + 1) * sizeof(*active));
	for (int p = 0; p < *npcs; p++) {
		uint64_t pc = pcs[p].pc;
		int kept = 0;

		while (next < nspans && spans[next].lo <= pc)
			active[nactive++] = next++;
		for (int a = 0; a < nactive; a++)	/* a range that ends at or before pc: done */
			if (spans[active[a]].hi > pc)
				active[kept++] = active[a];
		nactive = kept;
		pcs[p].funcs = arena_alloc((size_t)(nactive + 1) * sizeof(int));
		pcs[p].n = 0;
		for (int a = 0; a < nactive; a++)
			pcs[p].funcs[pcs[p].n++] = spans[active[a]].func;
		qsort(pcs[p].funcs, (size_t)pcs[p].n, sizeof(int), int_cmp);
	}
	return pcs;
}

/*
 * The sites of the records FOUND: one in each function of FUNCS whose code
 * holds the record's pc, named by that function, as stap 4.8's
 * query_srcfile_line() makes them, so that a line of an inline instance
 * is a statement of the function it is inlined into too (-p2: two probes
 * at one address), and a line of that function found inside the
 * instance one of the instance's.  How many, into OUT.
 */
static int line_sites(struct vec *funcs, struct vec *found, struct hmap *seen, struct vec *out)
{
	struct hmap done = { 0 };
	int npcs, n = 0;
	struct pc_holders *pcs = holders_of(funcs, found, &npcs);

	for (int i = 0; i < found->len; i++) {
		const struct dwarf_line_at *l = VEC_AT(found, i);
		struct pc_holders key = { .pc = l->pc }, *h;

		if (hmap_get(&done, (void *)(uintptr_t)l->pc))
			continue;	/* an address once: its first line found */
		hmap_put(&done, (void *)(uintptr_t)l->pc, (void *)1);
		h = bsearch(&key, pcs, (size_t)npcs, sizeof(*pcs), holders_by_pc);
		for (int k = 0; h && k < h->n; k++) {
			struct kdwarf_func *g = ARENA_NEW(struct kdwarf_func);

			if (k && h->funcs[k] == h->funcs[k - 1])
				continue;	/* two of its ranges */
			*g = *(struct kdwarf_func *)VEC_AT(funcs, h->funcs[k]);
			g->line = l->line;
			if (site_at(g, l->pc))
				n += add_site(g, seen, out);
		}
	}
	return n;
}

/*
 * With .nearest, LINE where one of FUNCS has code at it, else the nearest
 * line one has (5 at most away, the later on a tie), 0 for none: as stap
 * looks it up among the file's line records, not the function's, so
 * that the lines between two functions go to the nearer one.
 */
static int nearest_in(struct vec *funcs, const char *file, int line)
{
	int below = 0, above = 0, b, a;
	uint64_t pc;

	for (int i = 0; i < funcs->len; i++) {
		if (kdwarf_line_pc(VEC_AT(funcs, i), file, line, &pc, &b, &a))
			return line;
		probes_line_hint_keep(&below, &above, b, a);
	}
	return probes_line_nearest(line, below, above);
}

/* S with .nearest's lines (one, or a list) those FUNCS have code at (nearest_in()). */
static struct spec resolve_nearest(const struct spec *s, struct vec *funcs)
{
	struct spec t = *s;
	int *lines, n = 0;

	if (!s->nearest || !s->file || (s->lines.kind != LINES_ONE && s->lines.kind != LINES_LIST))
		return t;
	t.nearest = false;
	if (s->lines.kind == LINES_ONE) {
		t.lines.line = nearest_in(funcs, s->file, s->lines.line);
		if (!t.lines.line)	/* none near: "no line records", with the hint */
			t.lines.line = s->lines.line;
		return t;
	}
	lines = arena_alloc((size_t)s->lines.nlines * sizeof(*lines));
	for (int i = 0; i < s->lines.nlines; i++) {
		int near = nearest_in(funcs, s->file, s->lines.lines[i]);

		if (near && (!n || near > lines[n - 1]))	/* ascending, each once */
			lines[n++] = near;
	}
	t.lines.lines = lines;
	t.lines.nlines = n;
	return t;
}

/* The functions DWARF finds, at their entries or at LINE: stap's blocklist outside guru mode. */
static int dwarf_sites(struct sema *sm, struct vec *comps, const struct spec *asked, bool optional,
		       struct vec *out)
{
	struct probe_comp *sc = probes_comp_named(comps, "statement");
	struct vec funcs = { 0 }, keep = { 0 }, found = { 0 };
	struct hmap seen = { .str_keys = true };
	int below = 0, above = 0, n = 0;
	struct spec resolved;
	const struct spec *s = &resolved;

	kdwarf_functions(asked->module, asked->func, asked->file, &funcs);
	resolved = resolve_nearest(asked, &funcs);
	for (int i = 0; i < funcs.len; i++) {
		struct kdwarf_func *f = VEC_AT(&funcs, i);

		if (sm->s->guru || !kdwarf_blocklisted(f, false))
			vec_push(&keep, f);
	}
	for (int i = 0; s->lines.kind == LINES_NONE && i < keep.len; i++) {
		struct kdwarf_func *f = VEC_AT(&keep, i);

		if (site_at(f, f->entry))	/* the function's entry, at its decl line */
			n += add_site(f, &seen, out);
	}
	if (s->lines.kind != LINES_NONE) {
		lines_of(&keep, s, &below, &above, &found);
		n += line_sites(&keep, &found, &seen, out);
	}
	if (!funcs.len && !s->file)	/* not in DWARF (assembly): by its symbol */
		return symbol_sites(sm, comps, s, optional, out);
	if (n || optional)
		return n;
	if ((s->lines.kind != LINES_ONE && s->lines.kind != LINES_RELATIVE) || !funcs.len) {
		sema_error(sc->arg->loc, sm, "no match for probe point '%s'", probes_point_text(comps));
		return -1;
	}
	/* stap 4.8's words (a relative line: from the first function's), and its hint */
	if (sema_error(sc->arg->loc, sm, "no line records for %s:%d", s->file,
		       probes_line_of(&s->lines, ((struct kdwarf_func *)VEC_AT(&funcs, 0))->line)) &&
	    probes_line_hint(below, above))
		diag_hint("%s", probes_line_hint(below, above));
	return -1;
}

/*
 * kernel.function("FUNC[@FILE[:LINES]]").label("PAT"), as stap 4.8: the
 * labels PAT matches in each function (or inline instance) FUNC names,
 * declared on the lines asked for; a site each, an address once.
 */
static int label_sites(struct sema *sm, struct vec *comps, const struct spec *s, bool optional,
		       struct vec *out)
{
	struct probe_comp *lc = probes_comp_named(comps, "label");
	struct vec funcs = { 0 };
	struct hmap seen = { .str_keys = true };	/* "PC LABEL": two labels at one pc are two */
	int n = 0;

	kdwarf_functions(s->module, s->func, s->file, &funcs);
	for (int i = 0; i < funcs.len; i++) {
		struct kdwarf_func *f = VEC_AT(&funcs, i);
		struct vec labels = { 0 };

		if (!sm->s->guru && kdwarf_blocklisted(f, false))
			continue;
		kdwarf_labels(f, lc->arg->str, &labels);
		for (int k = 0; k < labels.len; k++) {
			const struct dwarf_label *l = VEC_AT(&labels, k);
			struct kdwarf_func *g;
			const char *key;

			if (!probes_line_wanted(&s->lines, f->line, l->line))
				continue;
			g = ARENA_NEW(struct kdwarf_func);
			*g = *f;
			g->line = l->line;
			if (*l->file)
				g->file = l->file;
			g->label = l->name;
			if (site_at(g, l->pc) && !hmap_get(&seen, (key = arena_printf(
				"%" PRIx64 " %s", l->pc, l->name)))) {
				hmap_put(&seen, key, (void *)1);
				vec_push(out, g);
				n++;
			}
		}
	}
	if (n || optional)
		return n;
	sema_error(lc->arg->loc, sm, "no match for probe point '%s'", probes_point_text(comps));
	return -1;
}

/* N sites, or -1 (reported) when a pattern stands for too many. */
static int not_too_many(struct sema *sm, struct vec *comps, int n)
{
	struct probe_comp *sc = probes_comp_named(comps, "statement");

	if (!probes_over_limit(sm, n))
		return n;
	if (sema_error(sc->arg->loc, sm, "'%s' matches more than the %d statements one probe "
		       "point may stand for", sc->arg->str, KFUNC_MAX_EXPANSION))
		diag_hint("narrow the pattern; pmstap -l '%s' lists what it matches",
			  probes_point_text(comps));
	return -1;
}

int probes_kstatement_sites(struct sema *sm, struct vec *comps, bool optional, struct vec *out)
{
	struct probe_comp *sc = probes_comp_named(comps, "statement");
	bool label = probes_comp_named(comps, "label") != NULL;
	struct probe_comp *mc;
	struct spec s;

	if (label)	/* FUNC[@FILE[:LINES]] is the function's */
		sc = probes_comp_named(comps, "function");
	if (sc->arg->kind == EXPR_NUMBER)
		return address_site(sm, comps, optional, out);
	if (!parse_spec(sm, sc, &s))
		return -1;
	s.nearest = probes_comp_named(comps, "nearest") != NULL;
	if ((mc = probes_comp_named(comps, "module")) && mc->arg && mc->arg->kind == EXPR_STRING)
		s.module = mc->arg->str;
	if (label)
		return kdwarf_installed(s.module) ? not_too_many(sm, comps, label_sites(sm, comps, &s,
											 optional, out))
						 : no_debuginfo(sm, sc, s.module, optional);
	if (!kdwarf_installed(s.module) || (s.module && !s.file))	/* a module's FUNC: by name */
		return s.file ? no_debuginfo(sm, sc, s.module, optional)
			      : not_too_many(sm, comps, symbol_sites(sm, comps, &s, optional, out));
	return not_too_many(sm, comps, dwarf_sites(sm, comps, &s, optional, out));
}
