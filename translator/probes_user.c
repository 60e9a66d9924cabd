/*
 * probes_user.c - process(..).function / .statement / .library probe
 * points: from names to addresses in an ELF file.
 *
 * With DWARF, a function is a DW_TAG_subprogram with code (a .call probe
 * fires after its prologue, where the line table says the body starts, in
 * unoptimized code, and at its entry in optimized code, as stap 4.8 decides
 * it: see function_probe_addr; a .return probe is a uretprobe at its entry) or an inline
 * instance of it (.inline: the instance's entry pc).  Without DWARF the
 * ELF symbols (.symtab, else .dynsym) give function entries, and points
 * that need source lines (@file:LINE, .statement) are refused.  Each
 * matching function becomes a derived probe of its own, with the concrete
 * point as stap writes it: process("/path").function("foo@file.c:12").
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wordexp.h>
#include <dwarf.h>
#include "debuginfo.h"
#include "diag.h"
#include "filedeps.h"
#include "dwarf_lines.h"
#include "hmap.h"
#include "manifest.h"
#include "probes.h"
#include "probes_lines.h"
#include "probes_plt.h"
#include "probes_sdt.h"
#include "probes_sys.h"
#include "probes_user.h"
#include "session.h"

/* A function of the DWARF: out of line, or one inline instance. */
struct ufunc {
	const char *name;
	const char *file;	/* where it is declared, as the line table names it */
	int line;
	uint64_t lowpc, highpc;	/* inline instance: lowpc is its entry pc */
	bool inlined;
	Dwarf_Off cu;		/* its compile unit's DIE offset: for the line table */
	Dwarf_Off die;		/* its own DIE's */
};

/* What a .function("...") or .statement("...") argument asks for. */
struct uspec {
	const char *name;	/* pattern */
	const char *file;	/* pattern, or NULL */
	int line;		/* 0: any */
	bool has_line;
};

/* Errors are not said for an optional ('?') point: it is dropped instead. */
bool probes_user_quiet;

/* ---- ELF files ---- */

/*
 * The descriptors and libelf/libdw handles one translation's files hold:
 * open for the whole translation (its structs are in the arena), closed
 * when the next one starts, so a process that translates many scripts
 * (the fuzzer, the unit tests) does not keep them all.
 */
struct held {
	int fd;
	Elf *elf;
	Dwarf *dw;
};

static struct held *held;
static int nheld, capheld;

static void hold(int fd, Elf *elf, Dwarf *dw)
{
	if (nheld == capheld) {
		int cap = capheld ? 2 * capheld : 16;
		struct held *more = realloc(held, (size_t)cap * sizeof(*held));

		if (!more)
			return;	/* left open: only the next translation's memory is at stake */
		held = more;
		capheld = cap;
	}
	held[nheld++] = (struct held){ fd, elf, dw };
}

static void release_held(void)
{
	for (int i = 0; i < nheld; i++) {
		if (held[i].dw)
			dwarf_end(held[i].dw);
		if (held[i].elf)
			elf_end(held[i].elf);
		close(held[i].fd);
	}
	nheld = 0;
}

/* UE has no DWARF of its own: read its separate debug file's, if it has one. */
static void separate_dwarf(struct uelf *ue)
{
	const char *path = debuginfo_find(ue->elf, ue->path);
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	Elf *elf;

	if (fd < 0)
		return;
	filedeps_add(path, fd);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ue->dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	if (!ue->dw) {
		if (elf)
			elf_end(elf);
		close(fd);
		return;
	}
	hold(fd, elf, ue->dw);
	ue->debug_path = path;	/* kept open for the translation, as UE is */
}

static struct vec open_files;	/* struct uelf * */
static unsigned open_generation;

struct uelf *probes_user_elf(const char *path, const char **why)
{
	struct uelf *ue;
	int fd;
	Elf *elf;

	if (open_generation != arena_generation()) {
		release_held();
		open_files = (struct vec){ 0 };
		open_generation = arena_generation();
	}
	for (int i = 0; i < open_files.len; i++)
		if (strcmp(((struct uelf *)VEC_AT(&open_files, i))->path, path) == 0)
			return VEC_AT(&open_files, i);
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*why = strerror(errno);
		return NULL;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		*why = "not an ELF file";
		if (elf)
			elf_end(elf);
		close(fd);
		return NULL;
	}
	filedeps_add(path, fd);
	ue = ARENA_NEW(struct uelf);
	ue->path = arena_strdup(path);
	ue->fd = fd;
	ue->elf = elf;
	ue->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	hold(fd, elf, ue->dw);
	if (!ue->dw)
		separate_dwarf(ue);
	vec_push(&open_files, ue);
	return ue;
}

/* The file with UE's DWARF: UE's own, its separate debug file, or NULL. */
const char *probes_user_dwarf_path(const struct uelf *ue)
{
	if (!ue->dw)
		return NULL;
	return ue->debug_path ? ue->debug_path : ue->path;
}

/* The file offset that virtual address VADDR is loaded from. */
bool probes_user_file_offset(struct uelf *ue, uint64_t vaddr, uint64_t *off)
{
	size_t n = 0;

	if (elf_getphdrnum(ue->elf, &n) != 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(ue->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

Elf_Scn *probes_user_section_of_type(Elf *elf, Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return scn;
	return NULL;
}

Elf_Scn *probes_user_section(Elf *elf, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *name;

		if (!gelf_getshdr(scn, sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name && strcmp(name, want) == 0)
			return scn;
	}
	return NULL;
}

static void read_symbols(struct uelf *ue)
{
	Elf_Scn *scn = probes_user_section_of_type(ue->elf, SHT_SYMTAB);
	Elf_Data *data;
	GElf_Shdr sh;

	ue->syms_read = true;
	if (!scn)
		scn = probes_user_section_of_type(ue->elf, SHT_DYNSYM);
	if (!scn || !gelf_getshdr(scn, &sh) || !(data = elf_getdata(scn, NULL)))
		return;
	for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym sym;
		struct usym *us;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
		    GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
			continue;
		name = elf_strptr(ue->elf, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		us = ARENA_NEW(struct usym);
		us->name = arena_strdup(name);
		us->addr = sym.st_value;
		vec_push(&ue->syms, us);
	}
}

/* ---- DWARF functions ---- */

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, DW_AT_name, &a) ? dwarf_formstring(&a) : NULL;
}

/*
 * The end of the address range of DIE that holds LO: a function the
 * compiler split in parts (DW_AT_ranges: a hot part with the entry and a
 * ".cold" one) has no DW_AT_high_pc; LO + 1 when no range says.
 */
static Dwarf_Addr range_end(Dwarf_Die *die, Dwarf_Addr lo)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0)
		if (start <= lo && lo < end)
			return end;
	return lo + 1;
}

/* A split function's entry: DW_AT_entry_pc, else its first range (GCC lists the hot part first). */
static int split_entry(Dwarf_Die *die, Dwarf_Addr *lo)
{
	Dwarf_Addr base, end;

	if (dwarf_entrypc(die, lo) == 0)
		return 0;
	return dwarf_ranges(die, 0, &base, lo, &end) > 0 ? 0 : -1;
}

static void add_func(struct uelf *ue, Dwarf_Die *die, Dwarf_Off cu, bool inlined)
{
	const char *name = die_name(die), *file;
	Dwarf_Addr lo = 0, hi = 0;
	struct ufunc *f;
	int line = 0;

	if (!name)
		return;
	if (inlined || dwarf_lowpc(die, &lo) != 0) {	/* an inline instance, or split in parts */
		if ((inlined ? dwarf_entrypc(die, &lo) : split_entry(die, &lo)) != 0)
			return;
		hi = range_end(die, lo);
	} else if (dwarf_highpc(die, &hi) != 0) {
		hi = lo + 1;
	}
	file = dwarf_decl_file(die);
	dwarf_decl_line(die, &line);
	f = ARENA_NEW(struct ufunc);
	f->name = arena_strdup(name);
	f->file = file ? arena_strdup(file) : "";
	f->line = line;
	f->lowpc = lo;
	f->highpc = hi;
	f->inlined = inlined;
	f->cu = cu;
	f->die = dwarf_dieoffset(die);
	vec_push(&ue->funcs, f);
}

static void walk_dies(struct uelf *ue, Dwarf_Die *parent, Dwarf_Off cu, int depth)
{
	Dwarf_Die child;

	if (depth > 32 || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_subprogram)
			add_func(ue, &child, cu, false);
		else if (tag == DW_TAG_inlined_subroutine)
			add_func(ue, &child, cu, true);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
		    tag == DW_TAG_lexical_block || tag == DW_TAG_namespace)
			walk_dies(ue, &child, cu, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

static void read_funcs(struct uelf *ue)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	ue->funcs_read = true;
	if (!ue->dw)
		return;
	while (dwarf_nextcu(ue->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(ue->dw, off + hsize, &cu))
			walk_dies(ue, &cu, off + hsize, 0);
		off = next;
	}
}

static struct vec *funcs_of(struct uelf *ue)
{
	if (!ue->funcs_read)
		read_funcs(ue);
	return &ue->funcs;
}

static struct vec *syms_of(struct uelf *ue)
{
	if (!ue->syms_read)
		read_symbols(ue);
	return &ue->syms;
}

/* Does a file name as DWARF gives it match PAT ("file.c", "src/file.c", "*.c")? */
static bool file_matches(const char *pat, const char *file)
{
	const char *base = strrchr(file, '/');
	size_t n = strlen(pat), m = strlen(file);

	if (fnmatch(pat, file, 0) == 0 || (base && fnmatch(pat, base + 1, 0) == 0))
		return true;
	return m > n && file[m - n - 1] == '/' && strcmp(file + m - n, pat) == 0;
}

/* ---- the line table ---- */

static int lines_of(struct uelf *ue, Dwarf_Off cu_off, Dwarf_Lines **lines, size_t *n)
{
	Dwarf_Die cu;

	if (!dwarf_offdie(ue->dw, cu_off, &cu))
		return -1;
	return dwarf_getsrclines(&cu, lines, n);
}

/* Was compile unit CU made by a GCC older than MAJOR.MINOR (stap's is_gcc_producer)? */
static bool gcc_older_than(struct uelf *ue, Dwarf_Off cu_off, int major, int minor)
{
	Dwarf_Attribute at;
	Dwarf_Die cu;
	const char *prod, *v;
	int ma = 0, mi = 0;

	if (!dwarf_offdie(ue->dw, cu_off, &cu))
		return false;
	prod = dwarf_formstring(dwarf_attr(&cu, DW_AT_producer, &at));
	if (!prod || strncmp(prod, "GNU ", 4) != 0)
		return false;
	for (v = prod + 4; *v && !(*v >= '0' && *v <= '9' && v[-1] == ' '); v++)
		;
	return sscanf(v, "%d.%d", &ma, &mi) == 2 && (ma < major || (ma == major && mi < minor));
}

/*
 * The first of the N records of LINES at ADDR or after (N: none), by
 * bisection: libdw sorts a unit's records by address, and a scan from
 * the first record for each function of a unit made a wildcard over a
 * unit's N functions cost N squared (issue 15).
 */
static size_t first_line_at(Dwarf_Lines *lines, size_t n, Dwarf_Addr addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		Dwarf_Addr a = 0;

		if (dwarf_lineaddr(dwarf_onesrcline(lines, mid), &a) == 0 && a < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Where F's body starts, found as stap 4.8 finds it
 * (dwflpp::resolve_prologue_endings): from the line record at F's entry,
 * the next record, unless the entry's own record is marked prologue_end,
 * is of another file than F's declaration, or (GCC before 4.4) of
 * another line than it; a next record outside F gives the entry back.
 * The entry when no record is at the entry.
 */
static uint64_t after_prologue(struct uelf *ue, const struct ufunc *f)
{
	Dwarf_Lines *lines;
	Dwarf_Addr a = 0;
	size_t n, e, i;

	if (lines_of(ue, f->cu, &lines, &n) != 0)
		return f->lowpc;
	e = first_line_at(lines, n, f->lowpc);
	if (e == n || dwarf_lineaddr(dwarf_onesrcline(lines, e), &a) != 0 || a != f->lowpc)
		return f->lowpc;
	for (i = e; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		const char *src = dwarf_linesrc(l, NULL, NULL);
		bool marked = false;
		int no = 0;

		dwarf_lineaddr(l, &a);
		dwarf_lineprologueend(l, &marked);
		dwarf_lineno(l, &no);
		if (a < f->lowpc || a >= f->highpc || marked || !src || strcmp(src, f->file) != 0 ||
		    i != e)
			break;
		if (gcc_older_than(ue, f->cu, 4, 4) && no != f->line)
			break;
	}
	if (i == n)
		i--;
	dwarf_lineaddr(dwarf_onesrcline(lines, i), &a);
	if (a < f->lowpc || a >= f->highpc)	/* past F: the record before */
		dwarf_lineaddr(dwarf_onesrcline(lines, i - 1), &a);
	return a;
}

/*
 * Prologue searching, as stap 4.8 decides it (--prologue-searching=auto,
 * the default): a process function's probe goes after its prologue unless
 * its compile unit "has valid locations": made by GCC 4.5 or later (or
 * another compiler), with at least one variable or parameter whose
 * location is a location list (DW_FORM_sec_offset), i.e. optimized code,
 * whose debug information is right from the entry on.  -P or =always
 * searches everywhere, =never nowhere.
 */
struct cu_locs {
	Dwarf_Off cu;
	bool valid;
};

static bool die_has_loclist(Dwarf_Die *parent)
{
	Dwarf_Die die;
	Dwarf_Attribute loc;

	if (dwarf_child(parent, &die) != 0)
		return false;
	do {
		int tag = dwarf_tag(&die);

		if (tag == DW_TAG_formal_parameter || tag == DW_TAG_variable) {
			if (dwarf_attr_integrate(&die, DW_AT_location, &loc) &&
			    dwarf_whatform(&loc) == DW_FORM_sec_offset)
				return true;
		} else if (dwarf_haschildren(&die) && die_has_loclist(&die)) {
			return true;
		}
	} while (dwarf_siblingof(&die, &die) == 0);
	return false;
}


static bool cu_has_valid_locs(struct uelf *ue, Dwarf_Off off)
{
	struct cu_locs *cl;
	Dwarf_Die cu;

	for (int i = 0; i < ue->cu_locs.len; i++) {
		cl = VEC_AT(&ue->cu_locs, i);
		if (cl->cu == off)
			return cl->valid;
	}
	cl = ARENA_NEW(struct cu_locs);
	cl->cu = off;
	cl->valid = dwarf_offdie(ue->dw, off, &cu) && !gcc_older_than(ue, off, 4, 5) &&
		    die_has_loclist(&cu);
	vec_push(&ue->cu_locs, cl);
	return cl->valid;
}

/* ---- specs and point text ---- */

static bool parse_spec(const char *text, struct uspec *sp)
{
	const char *at = strchr(text, '@'), *colon;

	memset(sp, 0, sizeof(*sp));
	colon = strrchr(at ? at : text, ':');
	sp->name = arena_strndup(text, strcspn(text, "@:"));
	if (at)
		sp->file = arena_strndup(at + 1, colon ? (size_t)(colon - at - 1) : strlen(at + 1));
	if (colon) {
		char *end;

		sp->line = (int)strtol(colon + 1, &end, 10);
		sp->has_line = true;
		if (*end || sp->line <= 0)
			return false;
	}
	if (!*sp->name)
		sp->name = "*";
	return true;
}

/* Point text: COMPS with component COMP's argument replaced by ARG. */
char *probes_user_point(struct vec *comps, const char *comp, const char *arg)
{
	struct vec c;

	if (!arg)
		return probes_point_text(comps);
	c = probes_comps_with_arg(comps, comp, arg);
	return probes_point_text(&c);
}

/* ---- derived probes ---- */

struct derived_probe *probes_user_clone(struct sema *sm, struct derived_probe *t)
{
	struct derived_probe *dp = ARENA_NEW(struct derived_probe);

	*dp = *t;
	dp->id = sm->next_probe_id++;
	dp->body = sema_resolve_copy_stmt(t->body);
	dp->cond = sema_resolve_copy_expr(t->cond);
	vec_push(&sm->prog->probes, dp);
	return dp;
}

/* Take back T, the last probe made, which matched nothing. */
void probes_user_drop(struct sema *sm, struct derived_probe *t)
{
	struct vec *v = &sm->prog->probes;

	if (v->len && VEC_AT(v, v->len - 1) == t) {
		v->len--;
		sm->next_probe_id--;
	}
}

struct resolver {
	struct sema *sm;
	struct derived_probe *t;	/* the template: the first match fills it */
	struct vec *comps;
	struct uelf *ue;
	struct probe_comp *at;		/* the function/statement component */
	const char *comp;		/* "function" or "statement" */
	struct uspec spec;
	struct line_spec lines;		/* a statement's */
	bool nearest;			/* .nearest, which the probes' points leave out */
	int made;
};

static struct derived_probe *next_probe(struct resolver *r)
{
	return r->made++ ? probes_user_clone(r->sm, r->t) : r->t;
}

static struct derived_probe *add_probe(struct resolver *r, const char *name, const char *text,
				       uint64_t addr, uint64_t entry)
{
	struct derived_probe *dp;
	uint64_t off;

	if (!probes_user_file_offset(r->ue, addr, &off))
		return NULL;
	dp = next_probe(r);
	dp->function = name;
	dp->point = probes_user_point(r->comps, r->comp, text);
	dp->addr = addr;
	dp->entry_addr = entry;
	dp->offset = off;
	dp->elf_path = r->ue->path;
	dp->dwarf_path = probes_user_dwarf_path(r->ue);
	dp->func_lo = dp->func_hi = 0;
	return dp;
}

static bool kind_wanted(struct resolver *r, const struct ufunc *f)
{
	bool call = probes_comp_named(r->comps, "call"), inl = probes_comp_named(r->comps, "inline");

	if (f->inlined)
		return !call && !r->t->is_return;
	return !inl;
}

/* "name@file:line" as stap writes a function; less where DWARF does not say. */
static const char *func_text(const struct ufunc *f)
{
	if (!*f->file)
		return f->name;
	if (!f->line)
		return arena_printf("%s@%s", f->name, f->file);
	return arena_printf("%s@%s:%d", f->name, f->file, f->line);
}

/* Where a probe on F's entry goes: after the prologue, or at the entry (see above). */
static uint64_t function_probe_addr(struct resolver *r, const struct ufunc *f)
{
	int mode = r->sm->s->prologue;

	if (f->inlined || r->t->is_return || mode == PROLOGUE_NEVER ||
	    (mode == PROLOGUE_AUTO && cu_has_valid_locs(r->ue, f->cu)))
		return f->lowpc;
	return after_prologue(r->ue, f);
}

static int dwarf_functions(struct resolver *r)
{
	struct vec *funcs = funcs_of(r->ue);
	struct derived_probe *dp;

	for (int i = 0; i < funcs->len; i++) {
		struct ufunc *f = VEC_AT(funcs, i);
		uint64_t addr;

		if (fnmatch(r->spec.name, f->name, 0) != 0 || !kind_wanted(r, f))
			continue;
		if (r->spec.file && !file_matches(r->spec.file, f->file))
			continue;
		if (r->spec.has_line && f->line != r->spec.line)
			continue;
		addr = function_probe_addr(r, f);
		dp = add_probe(r, f->name, func_text(f), addr, f->lowpc);
		if (dp && !f->inlined) {	/* the dyninst patcher looks for branches into its jump */
			dp->func_lo = f->lowpc;
			dp->func_hi = f->highpc;
		}
	}
	return r->made;
}

static int symbol_functions(struct resolver *r)
{
	struct vec *syms = syms_of(r->ue);

	for (int i = 0; i < syms->len; i++) {
		struct usym *s = VEC_AT(syms, i);

		if (fnmatch(r->spec.name, s->name, 0) == 0)
			add_probe(r, s->name, s->name, s->addr, s->addr);
	}
	return r->made;
}

static bool has_wildcard(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* "did you mean" from the function names the file has. */
static void function_hint(struct resolver *r)
{
	struct vec names = { 0 };
	struct vec *funcs = funcs_of(r->ue), *syms = syms_of(r->ue);
	const char *near;

	for (int i = 0; i < funcs->len; i++)
		vec_push(&names, (void *)((struct ufunc *)VEC_AT(funcs, i))->name);
	for (int i = 0; i < syms->len; i++)
		vec_push(&names, (void *)((struct usym *)VEC_AT(syms, i))->name);
	near = has_wildcard(r->spec.name) ? NULL
		: diag_similar(r->spec.name, (const char *const *)names.items, names.len);
	if (near)
		diag_hint("did you mean '%s'?", near);
}

/* Whether the spec's name matches inline instances only (so .return found none). */
static bool only_inlined(struct resolver *r)
{
	struct vec *funcs = funcs_of(r->ue);
	bool inl = false;

	for (int i = 0; i < funcs->len; i++) {
		struct ufunc *f = VEC_AT(funcs, i);

		if (fnmatch(r->spec.name, f->name, 0) == 0) {
			if (!f->inlined)
				return false;
			inl = true;
		}
	}
	return inl;
}

static int no_debuginfo(struct resolver *r, const char *what)
{
	if (user_error(r->at->arg->loc, r->sm, "%s needs debuginfo, and '%s' has none", what,
		       r->ue->path))
		diag_hint("build the program with -g (it was built without -g or stripped)");
	return -1;
}

static int resolve_function(struct resolver *r)
{
	bool needs_lines = r->spec.file || r->spec.has_line;

	/* stap 4.8 blocklists it: _start calls exit, it never returns */
	if (r->t->is_return && strcmp(r->spec.name, "_start") == 0) {
		if (user_error(r->at->arg->loc, r->sm, "function _start return probe is blocklisted"))
			diag_hint("_start never returns: it ends the process with exit()");
		return -1;
	}
	if (!r->ue->dw && (needs_lines || probes_comp_named(r->comps, "inline")))
		return no_debuginfo(r, arena_printf("probe point '%s'", r->t->point));
	if (r->ue->dw)
		dwarf_functions(r);
	if (!r->made && !needs_lines)
		symbol_functions(r);
	if (r->made)
		return r->made;
	if (!user_error(r->at->arg->loc, r->sm, "no function '%s' in '%s'", r->at->arg->str,
			r->ue->path))
		return -1;
	if (r->t->is_return && only_inlined(r))
		diag_hint("'%s' has only inline instances there, and an inline instance has no "
			  "return to probe", r->spec.name);
	else
		function_hint(r);
	return -1;
}

/* ---- .statement("NAME@FILE:LINE"), ("NAME@FILE+N"), ("NAME@FILE:*"), (":N-M,P") ---- */

/* "NAME@FILE" and the line part (probes_lines.h) of a statement; false if neither. */
static bool statement_spec(const char *text, struct uspec *sp, struct line_spec *ls)
{
	const char *at = strchr(text, '@');
	size_t flen;

	memset(sp, 0, sizeof(*sp));
	sp->name = arena_strndup(text, strcspn(text, "@:+"));
	if (!*sp->name)
		sp->name = "*";
	if (!at) {
		*ls = (struct line_spec){ .kind = LINES_NONE };
		return !strpbrk(text, ":+");
	}
	flen = strcspn(at + 1, ":+");
	sp->file = arena_strndup(at + 1, flen);
	return probes_line_spec(at + 1 + flen, ls);
}

static bool line_file_matches(const char *src, const void *pat)
{
	return file_matches(pat, src);
}

/* A probe of F's at line LINE's address PC, once an address. */
static void line_probe(struct resolver *r, const struct ufunc *f, int line, uint64_t pc,
		       struct hmap *seen)
{
	if (hmap_get(seen, (void *)(uintptr_t)pc))
		return;
	hmap_put(seen, (void *)(uintptr_t)pc, (void *)1);
	add_probe(r, f->name, arena_printf("%s@%s:%d", f->name, f->file, line), pc, f->lowpc);
}

/*
 * *LINE's address in function DIE into *PC, or with .nearest the nearest
 * line's (5 at most away, the later one on a tie, as stap's
 * get_nearest_lineno()), *LINE then that line; *BELOW, *ABOVE for a hint.
 */
static bool line_near(struct resolver *r, Dwarf_Die *die, int *line, uint64_t *pc, int *below,
		      int *above)
{
	int b, a;

	if (dwarf_lines_pc(die, *line, line_file_matches, r->spec.file, pc, &b, &a))
		return true;
	probes_line_hint_keep(below, above, b, a);
	if (!r->nearest || !(*line = probes_line_nearest(*line, b, a)))
		return false;
	return dwarf_lines_pc(die, *line, line_file_matches, r->spec.file, pc, &b, &a);
}

/* Function F's probes: the line(s) R asks for that F has code at; *BELOW, *ABOVE for a hint. */
static void function_lines(struct resolver *r, const struct ufunc *f, struct hmap *seen,
			   int *below, int *above)
{
	const struct line_spec *ls = &r->lines;
	Dwarf_Die die;
	uint64_t pc;
	int b = 0, a = 0, line;

	if (!dwarf_offdie(r->ue->dw, f->die, &die))
		return;
	if (ls->kind == LINES_EVERY) {
		struct vec lines = { 0 };

		dwarf_lines_all(&die, f->file, f->lowpc, &lines);
		for (int i = 0; i < lines.len; i++) {
			const struct dwarf_line_at *l = VEC_AT(&lines, i);

			line_probe(r, f, l->line, l->pc, seen);
		}
		return;
	}
	if (ls->kind == LINES_LIST) {
		for (int i = 0; i < ls->nlines; i++) {
			line = ls->lines[i];
			if (line_near(r, &die, &line, &pc, &b, &a))
				line_probe(r, f, line, pc, seen);
		}
		return;
	}
	line = probes_line_of(ls, f->line);
	if (!line_near(r, &die, &line, &pc, below, above))
		return;
	line_probe(r, f, line, pc, seen);
}

/*
 * .function("NAME[@FILE[:LINES]]").label("PAT"): as stap 4.8, the labels
 * PAT matches in each function (and inline instance) named NAME, those
 * declared on the lines asked for; each probe spelled with its function
 * at the label's line, and the label's name.
 */
static int resolve_labels(struct resolver *r)
{
	struct probe_comp *lc = probes_comp_named(r->comps, "label");
	struct vec *funcs;
	struct hmap seen = { 0 };

	if (!r->ue->dw)
		return no_debuginfo(r, "a .label probe");
	funcs = funcs_of(r->ue);
	for (int i = 0; i < funcs->len; i++) {
		const struct ufunc *f = VEC_AT(funcs, i);
		struct vec labels = { 0 };
		Dwarf_Die die;

		if (fnmatch(r->spec.name, f->name, 0) != 0 ||
		    (r->spec.file && !file_matches(r->spec.file, f->file)) ||
		    !dwarf_offdie(r->ue->dw, f->die, &die))
			continue;
		dwarf_lines_labels(&die, lc->arg->str, &labels);
		for (int k = 0; k < labels.len; k++) {
			const struct dwarf_label *l = VEC_AT(&labels, k);
			struct vec c;
			struct derived_probe *dp;

			if (!probes_line_wanted(&r->lines, f->line, l->line) ||
			    hmap_get(&seen, (void *)(uintptr_t)l->pc))
				continue;
			hmap_put(&seen, (void *)(uintptr_t)l->pc, (void *)1);
			c = probes_comps_with_arg(r->comps, "function",
						  arena_printf("%s@%s:%d", f->name, l->file, l->line));
			dp = add_probe(r, f->name, NULL, l->pc, f->lowpc);
			if (dp)
				dp->point = probes_user_point(&c, "label", l->name);
		}
	}
	if (r->made)
		return r->made;
	(void)user_error(lc->arg->loc, r->sm, "no match for probe point '%s'", r->t->point);
	return -1;
}

/*
 * As stap 4.8: in each function and inline instance named NAME and
 * declared in a file FILE matches, the line, the lines, or every line,
 * each at the lowest address it has there (qa/197).
 */
static int resolve_statement(struct resolver *r)
{
	struct vec *funcs;
	struct hmap seen = { 0 };
	const struct ufunc *first = NULL;
	int below = 0, above = 0, line;

	if (!r->spec.file || r->lines.kind == LINES_NONE) {
		(void)user_error(r->at->arg->loc, r->sm, "statement(\"%s\") needs a place: "
				 "NAME@FILE:LINE (or +N, :*, :N-M)", r->at->arg->str);
		return -1;
	}
	if (!r->ue->dw)
		return no_debuginfo(r, "a .statement probe");
	funcs = funcs_of(r->ue);
	for (int i = 0; i < funcs->len; i++) {
		const struct ufunc *f = VEC_AT(funcs, i);

		if (fnmatch(r->spec.name, f->name, 0) != 0 || !file_matches(r->spec.file, f->file))
			continue;
		if (!first)
			first = f;
		function_lines(r, f, &seen, &below, &above);
	}
	if (r->made)
		return r->made;
	if (!first || (r->lines.kind != LINES_ONE && r->lines.kind != LINES_RELATIVE)) {
		(void)user_error(r->at->arg->loc, r->sm, "no match for probe point '%s'",
				 r->t->point);
		return -1;
	}
	/* stap 4.8's words (a relative line: from the first function's), and its hint */
	line = probes_line_of(&r->lines, first->line);
	if (user_error(r->at->arg->loc, r->sm, "no line records for %s:%d", first->file, line))
		diag_hint("%s", probes_line_hint(below, above) ?: "the line may hold no statement, "
			  "or the compiler merged it with another; try a nearby line");
	return -1;
}

/* ---- which file: process path, -c, -x, PID, .library ---- */

static const char *pid_exe(int64_t pid)
{
	char link[64], buf[PATH_MAX];
	ssize_t n;

	manifest_unsure("a probe names a process by its pid");
	snprintf(link, sizeof(link), "/proc/%lld/exe", (long long)pid);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return arena_strdup(buf);
}

/*
 * The executable of -c CMD or -x PID.  As stap: CMD's first word, split
 * as the runner splits it (wordexp, no command substitution); a command
 * that needs a shell (| ; & < > ( ) { }) names no executable of its own
 * (*WHY says so), since the shell is the process that -c starts.
 */
const char *probes_user_target_exe(struct sema *sm, const char **why)
{
	const char *cmd = sm->s->target_cmd, *exe = NULL;
	wordexp_t w;
	int rc;

	if (!cmd)
		return sm->s->target_pid > 0 ? pid_exe(sm->s->target_pid) : NULL;
	if (strpbrk(cmd, "$~*?["))	/* the environment, files: expanded as the shell does */
		manifest_unsure("the -c command has shell expansions");
	rc = wordexp(cmd, &w, WRDE_NOCMD | WRDE_UNDEF);
	if (rc != 0) {
		*why = rc == WRDE_BADCHAR ? "it needs a shell (it has one of | & ; < > ( ) { })"
		     : rc == WRDE_CMDSUB ? "it has a command substitution"
		     : rc == WRDE_BADVAL ? "it uses an undefined shell variable"
		     : "it cannot be split into words";
		return NULL;
	}
	if (w.we_wordc > 0)
		exe = sys_find_executable(arena_strdup(w.we_wordv[0]));
	wordfree(&w);
	return exe;
}

static const char *process_file(struct sema *sm, struct derived_probe *dp,
				struct probe_comp *pc)
{
	const char *exe, *why = NULL;

	if (dp->path)
		return dp->path;
	if (dp->pid) {
		exe = pid_exe(dp->pid);
		if (!exe)
			(void)user_error(pc->arg->loc, sm, "no process %lld", (long long)dp->pid);
		return exe;
	}
	exe = probes_user_target_exe(sm, &why);
	if (!exe && why) {
		if (user_error(pc->loc, sm, "'%s' names no executable, and -c '%s' gives none: %s",
			       dp->point, sm->s->target_cmd, why))
			diag_hint("name the program, as process(\"/path/to/program\")");
		return NULL;
	}
	if (!exe) {
		if (user_error(pc->loc, sm, "'%s' names no executable", dp->point))
			diag_hint("give one, as process(\"/path/to/program\"), or run the command "
				  "with -c CMD or -x PID");
		return NULL;
	}
	return exe;
}

static const char *library_dirs(void)
{
	return "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib:"
	       "/usr/local/lib";
}

static const char *search_dirs(const char *dirs, const char *origin, const char *name)
{
	while (dirs && *dirs) {
		size_t n = strcspn(dirs, ":");
		char *dir = arena_strndup(dirs, n), *cand;

		if (strncmp(dir, "$ORIGIN", 7) == 0)
			dir = arena_printf("%s%s", origin, dir + 7);
		cand = arena_printf("%s/%s", dir, name);
		if (n)
			manifest_file(cand);	/* missing now, it may come: looked at again */
		if (n && access(cand, R_OK) == 0)
			return cand;
		dirs += n + (dirs[n] == ':');
	}
	return NULL;
}

/* DT_NEEDED names, DT_RUNPATH/DT_RPATH of EXE. */
static void dynamic_info(struct uelf *exe, struct vec *needed, const char **runpath)
{
	Elf_Scn *scn = probes_user_section_of_type(exe->elf, SHT_DYNAMIC);
	Elf_Data *data;
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || !(data = elf_getdata(scn, NULL)))
		return;
	for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Dyn d;
		const char *s;

		if (!gelf_getdyn(data, (int)i, &d))
			continue;
		if (d.d_tag != DT_NEEDED && d.d_tag != DT_RUNPATH && d.d_tag != DT_RPATH)
			continue;
		s = elf_strptr(exe->elf, sh.sh_link, d.d_un.d_val);
		if (!s)
			continue;
		if (d.d_tag == DT_NEEDED)
			vec_push(needed, arena_strdup(s));
		else
			*runpath = arena_strdup(s);
	}
}

/* Library NAME (a DT_NEEDED entry of EXE) where ld.so finds it, or NULL. */
static const char *find_needed(struct uelf *exe, const char *runpath, const char *name)
{
	const char *slash = strrchr(exe->path, '/'), *found;
	const char *origin = slash ? arena_strndup(exe->path, (size_t)(slash - exe->path)) : ".";

	found = search_dirs(runpath, origin, name);
	if (!found)
		found = search_dirs(getenv("LD_LIBRARY_PATH"), origin, name);
	if (!found)
		found = search_dirs(library_dirs(), origin, name);
	return found;
}

/*
 * .library("LIB"): a path, or a name that one of the executable's DT_NEEDED
 * libraries matches ("libc.so.6", "libc*", "libc"), found as ld.so would:
 * its run path, LD_LIBRARY_PATH, the system directories.
 */
const char *probes_user_library(struct uelf *exe, const char *lib)
{
	struct vec needed = { 0 };
	const char *runpath = NULL;

	if (strchr(lib, '/'))
		return sys_find_executable(lib) ? lib : NULL;
	dynamic_info(exe, &needed, &runpath);
	for (int i = 0; i < needed.len; i++) {
		const char *n = VEC_AT(&needed, i), *found;

		if (fnmatch(lib, n, 0) != 0 && strncmp(n, arena_printf("%s.so", lib), strlen(lib) + 3))
			continue;
		found = find_needed(exe, runpath, n);
		if (found)
			return found;
	}
	return NULL;
}

/* The libraries EXE needs (DT_NEEDED) that ld.so would find, pushed on OUT (char *). */
void probes_user_needed(struct uelf *exe, struct vec *out)
{
	struct vec needed = { 0 };
	const char *runpath = NULL;

	dynamic_info(exe, &needed, &runpath);
	for (int i = 0; i < needed.len; i++) {
		const char *found = find_needed(exe, runpath, VEC_AT(&needed, i));

		if (found)
			vec_push(out, (void *)found);
	}
}

static struct uelf *open_or_say(struct sema *sm, struct srcloc loc, const char *path)
{
	const char *why = NULL;
	struct uelf *ue = probes_user_elf(path, &why);

	if (!ue)
		(void)user_error(loc, sm, "cannot read '%s': %s", path, why);
	return ue;
}

/* The ELF file a probe point names: the process's, or its .library(). */
static struct uelf *probe_file(struct sema *sm, struct derived_probe *dp, struct vec *comps)
{
	struct probe_comp *pc = probes_comp_named(comps, "process");
	struct probe_comp *lc = probes_comp_named(comps, "library");
	const char *exe = process_file(sm, dp, pc), *lib;
	struct uelf *ue;

	if (!exe || !(ue = open_or_say(sm, pc->loc, exe)))
		return NULL;
	dp->path = exe;
	if (!lc)
		return ue;
	lib = probes_user_library(ue, lc->arg->str);
	if (!lib) {
		if (user_error(lc->arg->loc, sm, "'%s' does not load a library '%s'", exe,
			       lc->arg->str))
			diag_hint("name a file (\"/lib/x86_64-linux-gnu/libc.so.6\") or one of "
				  "the libraries 'ldd %s' lists", exe);
		return NULL;
	}
	return open_or_say(sm, lc->arg->loc, lib);
}

/* process(..) with its path filled in, for the point text. */
static void concrete_process(struct vec *comps, struct derived_probe *dp)
{
	struct probe_comp *pc = probes_comp_named(comps, "process");

	if (pc->arg)
		return;
	pc->arg = ast_expr(EXPR_STRING, pc->loc);
	pc->arg->str = dp->path;
}

/*
 * Resolve DP (a process probe just made from COMPS) against its file.
 * Returns the number of probes it became, 0 when an optional point matched
 * nothing, -1 after an error; DP is taken back unless it matched.
 */
int probes_user_resolve(struct sema *sm, struct derived_probe *dp, struct vec *comps,
			bool optional)
{
	struct resolver r = { .sm = sm, .t = dp, .comps = comps };
	int n;

	probes_user_quiet = optional;
	if (probes_comp_named(comps, "nearest")) {	/* stap's points leave it out */
		*comps = probes_comps_without(comps, "nearest");
		r.nearest = true;
	}
	r.ue = probe_file(sm, dp, comps);
	concrete_process(comps, dp);
	dp->point = probes_point_text(comps);
	if (!r.ue)
		n = -1;
	else if (dp->kind == PROBE_UMARK)
		n = sdt_resolve(sm, dp, r.ue, comps, optional);
	else if (dp->kind == PROBE_UPLT)
		n = plt_resolve(sm, dp, r.ue, comps);
	else {
		bool label = probes_comp_named(comps, "label") != NULL;
		bool stmt = dp->kind != PROBE_UFUNC;

		r.comp = stmt && !label ? "statement" : "function";
		r.at = probes_comp_named(comps, r.comp);
		if (r.at->arg->kind != EXPR_STRING ||
		    !(stmt ? statement_spec(r.at->arg->str, &r.spec, &r.lines)
			   : parse_spec(r.at->arg->str, &r.spec))) {
			(void)user_error(r.at->arg->loc, sm, "cannot read '%s' as %s",
					 r.at->arg->kind == EXPR_STRING ? r.at->arg->str : "a number",
					 stmt ? "NAME@FILE:LINE, NAME@FILE+N, NAME@FILE:* or "
					 "NAME@FILE:N-M,P" : "NAME[@FILE[:LINE]]");
			n = -1;
		} else {
			n = dp->kind == PROBE_UFUNC ? resolve_function(&r)
			    : label ? resolve_labels(&r) : resolve_statement(&r);
		}
	}
	probes_user_quiet = false;
	if (n <= 0)
		probes_user_drop(sm, dp);
	return n < 0 && optional ? 0 : n;
}
