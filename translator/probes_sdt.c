/*
 * probes_sdt.c - SDT markers: process("PATH")[.library(..)][.provider(..)].mark(..)
 *
 * <sys/sdt.h>'s STAP_PROBE(provider, name, args...) leaves a nop at the
 * marker and a note in .note.stapsdt: the nop's address, the link-time
 * address of .stapsdt.base (so a prelinked file can be adjusted), the
 * semaphore's address (0: none), then "provider\0name\0argspecs\0".
 * Each argument spec is SIZE@OPERAND in the assembler's syntax: -4@%eax,
 * 8@-16(%rbp), 8@$5, 8@sym(%rip).  Pass 2 matches the notes and parses
 * the specs; pass 3 (emit_uprobe.c) reads $argN from the probe's
 * registers and the process's memory.  A marker with a semaphore is
 * attached with the semaphore's file offset, so that the kernel raises it
 * while the probe is attached.
 */
#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "diag.h"
#include "probes_sdt.h"
#include "probes_user.h"

#define NT_STAPSDT 3

/* ---- the notes ---- */

/* The marker's note desc: three addresses, then the strings. */
static struct sdt_note *read_note(Elf *elf, const char *desc, size_t n, int64_t base_delta)
{
	bool is64 = gelf_getclass(elf) == ELFCLASS64;
	size_t asz = is64 ? 8 : 4, at = 3 * asz;
	uint64_t addr[3] = { 0 };
	struct sdt_note *sn;
	const char *prov, *name, *args;

	if (n < at + 3)
		return NULL;
	for (int i = 0; i < 3; i++) {
		if (is64) {
			memcpy(&addr[i], desc + i * asz, 8);
		} else {
			uint32_t a;

			memcpy(&a, desc + i * asz, 4);
			addr[i] = a;
		}
	}
	prov = desc + at;
	name = memchr(prov, 0, n - at) ? prov + strlen(prov) + 1 : NULL;
	if (!name || name >= desc + n || !memchr(name, 0, (size_t)(desc + n - name)))
		return NULL;
	args = name + strlen(name) + 1;
	sn = ARENA_NEW(struct sdt_note);
	sn->provider = arena_strdup(prov);
	sn->name = arena_strdup(name);
	sn->args = args < desc + n && memchr(args, 0, (size_t)(desc + n - args))
		   ? arena_strdup(args) : "";
	sn->pc = addr[0] + (uint64_t)base_delta;
	sn->semaphore = addr[2];
	return sn;
}

/* Every marker of UE, in note order. */
static void read_notes(struct uelf *ue, struct vec *out)
{
	GElf_Shdr sh, base_sh;
	Elf_Scn *scn = probes_user_section(ue->elf, ".note.stapsdt", &sh);
	Elf_Scn *base = probes_user_section(ue->elf, ".stapsdt.base", &base_sh);
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	if (!data)
		return;
	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *d = (const char *)data->d_buf;
		struct sdt_note *sn;
		bool is64 = gelf_getclass(ue->elf) == ELFCLASS64;
		uint64_t note_base = 0;

		if (nh.n_type != NT_STAPSDT || strcmp(d + name_off, "stapsdt") != 0)
			continue;
		if (nh.n_descsz >= (is64 ? 16 : 8)) {
			if (is64) {
				memcpy(&note_base, d + desc_off + 8, 8);
			} else {
				uint32_t b;

				memcpy(&b, d + desc_off + 4, 4);
				note_base = b;
			}
		}
		sn = read_note(ue->elf, d + desc_off, nh.n_descsz,
			       base && note_base ? (int64_t)(base_sh.sh_addr - note_base) : 0);
		if (sn)
			vec_push(out, sn);
	}
}

/* ---- argument specs ---- */

/* pt_regs' field for an x86-64 register name (any width), or NULL. */
static const char *reg_field(const char *r)
{
	static const struct {
		const char *field;
		const char *names[4];
	} regs[] = {
		{ "ax", { "rax", "eax", "ax", "al" } }, { "bx", { "rbx", "ebx", "bx", "bl" } },
		{ "cx", { "rcx", "ecx", "cx", "cl" } }, { "dx", { "rdx", "edx", "dx", "dl" } },
		{ "si", { "rsi", "esi", "si", "sil" } }, { "di", { "rdi", "edi", "di", "dil" } },
		{ "bp", { "rbp", "ebp", "bp", "bpl" } }, { "sp", { "rsp", "esp", "sp", "spl" } },
		{ "ip", { "rip", "eip", "ip", NULL } },
	};
	static const char *const rn[] = { "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15" };

	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		for (int j = 0; j < 4; j++)
			if (regs[i].names[j] && strcmp(r, regs[i].names[j]) == 0)
				return regs[i].field;
	for (size_t i = 0; i < sizeof(rn) / sizeof(rn[0]); i++) {
		size_t n = strlen(rn[i]);

		/* r8 and its 32, 16 and 8-bit names r8d, r8w, r8b */
		if (strncmp(r, rn[i], n) == 0 &&
		    (!r[n] || ((r[n] == 'd' || r[n] == 'w' || r[n] == 'b') && !r[n + 1])))
			return rn[i];
	}
	return NULL;
}

/* "%reg" at *P: its pt_regs field; P moves past it. */
static const char *parse_reg(const char **p)
{
	const char *s = *p;
	size_t n;

	if (*s != '%')
		return NULL;
	n = strspn(s + 1, "abcdefghijklmnopqrstuvwxyz0123456789");
	*p = s + 1 + n;
	return reg_field(arena_strndup(s + 1, n));
}

static uint64_t symbol_addr(struct uelf *ue, const char *name, bool *ok);

/* OPERAND of one spec: %reg, $imm, disp(%base[,%index[,scale]]), sym[+-disp](%rip). */
static bool parse_operand(struct uelf *ue, const char *p, struct sdt_arg *a)
{
	char *end;

	if (*p == '%') {
		a->kind = SDT_ARG_REG;
		a->reg = parse_reg(&p);
		return a->reg && !*p;
	}
	if (*p == '$') {
		a->kind = SDT_ARG_IMM;
		a->value = strtoll(p + 1, &end, 0);
		return end != p + 1 && !*end;
	}
	a->kind = SDT_ARG_MEM;
	a->value = strtoll(p, &end, 0);
	if (end == p && *p != '(') {	/* a symbol: sym[+N](%rip) */
		size_t n = strcspn(p, "+-(");
		bool ok;

		a->kind = SDT_ARG_RIP;
		a->value = (int64_t)symbol_addr(ue, arena_strndup(p, n), &ok);
		if (!ok)
			return false;
		p += n;
		a->value += strtoll(p, &end, 0);
	}
	p = end;
	if (*p++ != '(')
		return false;
	a->reg = parse_reg(&p);
	if (a->kind == SDT_ARG_RIP)
		return a->reg && strcmp(a->reg, "ip") == 0 && !strcmp(p, ")");
	if (*p == ',') {
		p++;
		a->index = parse_reg(&p);
		a->scale = 1;
		if (*p == ',')
			a->scale = (int)strtol(p + 1, (char **)&p, 10);
	}
	return a->reg && !strcmp(p, ")");
}

/* "N@OPERAND" (or a bare operand: 8 bytes, as old sdt.h wrote them). */
static struct sdt_arg *parse_arg(struct uelf *ue, const char *spec)
{
	struct sdt_arg *a = ARENA_NEW(struct sdt_arg);
	const char *at = strchr(spec, '@');
	int size = 8;

	/* the size is a number: "8@(%rax,%rcx)" has one, "sym@GOTPCREL(%rip)" not */
	if (at && at > spec && strspn(spec + (*spec == '-'), "0123456789") ==
				   (size_t)(at - spec - (*spec == '-'))) {
		size = atoi(spec);
		spec = at + 1;
	}
	a->is_signed = size < 0;
	a->size = abs(size);
	if (a->size != 1 && a->size != 2 && a->size != 4 && a->size != 8)
		return NULL;
	return parse_operand(ue, spec, a) ? a : NULL;
}

static bool parse_args(struct uelf *ue, struct sdt_note *sn)
{
	const char *p = sn->args;

	sn->specs = (struct vec){ 0 };
	while (*p) {
		size_t n;
		struct sdt_arg *a;

		p += strspn(p, " ");
		n = strcspn(p, " ");
		if (!n)
			break;
		a = parse_arg(ue, arena_strndup(p, n));
		if (!a)
			return false;
		vec_push(&sn->specs, a);
		p += n;
	}
	return true;
}

static uint64_t symbol_addr(struct uelf *ue, const char *name, bool *ok)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	*ok = false;
	while ((scn = elf_nextscn(ue->elf, scn)) != NULL) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			n = elf_strptr(ue->elf, sh.sh_link, sym.st_name);
			if (n && strcmp(n, name) == 0) {
				*ok = true;
				return sym.st_value;
			}
		}
	}
	return 0;
}

/* ---- pass 2: matching marks ---- */

/* stap writes a mark "a-b" for the note's "a__b". */
static bool mark_matches(const char *pat, const char *name)
{
	char *dashed = arena_strdup(name), *p;

	if (fnmatch(pat, name, 0) == 0)
		return true;
	while ((p = strstr(dashed, "__")) != NULL) {
		*p = '-';
		memmove(p + 1, p + 2, strlen(p + 2) + 1);
	}
	return fnmatch(pat, dashed, 0) == 0;
}

static void mark_hint(struct vec *notes, const char *mark)
{
	const char **names = arena_alloc(sizeof(char *) * (size_t)(notes->len + 1));
	const char *near;
	char *list = NULL;

	for (int i = 0; i < notes->len; i++) {
		struct sdt_note *sn = VEC_AT(notes, i);

		names[i] = sn->name;
		if (i < 8)
			list = list ? arena_printf("%s, %s", list, sn->name) : arena_strdup(sn->name);
	}
	near = diag_similar(mark, names, notes->len);
	if (near)
		diag_hint("did you mean '%s'?", near);
	else if (list)
		diag_hint("its marks: %s%s", list, notes->len > 8 ? ", ..." : "");
}

static bool fill_mark(struct sema *sm, struct derived_probe *dp, struct uelf *ue,
		      struct sdt_note *sn, struct vec *comps)
{
	struct probe_comp *mc = NULL;

	for (int i = 0; i < comps->len; i++)
		if (!strcmp(((struct probe_comp *)VEC_AT(comps, i))->name, "mark"))
			mc = VEC_AT(comps, i);
	if (!probes_user_file_offset(ue, sn->pc, &dp->offset))
		return false;
	if (sn->semaphore && !probes_user_file_offset(ue, sn->semaphore, &dp->ref_ctr_offset))
		dp->ref_ctr_offset = 0;
	if (!parse_args(ue, sn) && user_error(mc->arg->loc, sm,
					       "cannot read the arguments of mark '%s' in '%s': '%s'",
					       sn->name, ue->path, sn->args))
		diag_hint("$arg1... are not available in this probe; $$name and $$provider are");
	dp->sdt = sn;
	dp->addr = dp->entry_addr = sn->pc;
	dp->elf_path = ue->path;
	dp->dwarf_path = probes_user_dwarf_path(ue);
	dp->provider = sn->provider;
	dp->mark = sn->name;
	dp->point = probes_user_point(comps, "mark", sn->name);
	return true;
}

int sdt_resolve(struct sema *sm, struct derived_probe *dp, struct uelf *ue, struct vec *comps,
		bool optional)
{
	const char *mark = NULL, *prov = NULL;
	struct probe_comp *mc = NULL;
	struct vec notes = { 0 };
	int made = 0;

	for (int i = 0; i < comps->len; i++) {
		struct probe_comp *c = VEC_AT(comps, i);

		if (!strcmp(c->name, "mark")) {
			mark = c->arg->str;
			mc = c;
		} else if (!strcmp(c->name, "provider")) {
			prov = c->arg->str;
		}
	}
	read_notes(ue, &notes);
	for (int i = 0; i < notes.len; i++) {
		struct sdt_note *sn = VEC_AT(&notes, i);
		struct derived_probe *p;

		if (!mark_matches(mark, sn->name) || (prov && fnmatch(prov, sn->provider, 0)))
			continue;
		p = made ? probes_user_clone(sm, dp) : dp;
		made += fill_mark(sm, p, ue, sn, comps);
	}
	if (made)
		return made;
	if (!notes.len) {
		if (user_error(mc->arg->loc, sm, "'%s' has no SDT markers (.note.stapsdt)", ue->path))
			diag_hint("markers come from <sys/sdt.h>'s STAP_PROBE/DTRACE_PROBE macros");
	} else if (user_error(mc->arg->loc, sm, "no mark '%s'%s%s%s in '%s'", mark,
			      prov ? " of provider '" : "", prov ? prov : "", prov ? "'" : "",
			      ue->path)) {
		mark_hint(&notes, mark);
	}
	return -1;
}

/* ---- pass 2: $vars of a mark ---- */

/* $argN, $$name, $$provider, $$parms: true (and typed) when DP's mark has it. */
bool sdt_target_type(struct sema *sm, struct derived_probe *dp, struct expr *e)
{
	const struct sdt_note *sn = dp->sdt;
	const char *n = e->name + 1;
	char *end;
	long k;

	if (!sn)
		return false;
	if (!strcmp(n, "$name") || !strcmp(n, "$provider") || !strcmp(n, "$parms") ||
	    !strcmp(n, "$vars")) {
		e->type = TYPE_STRING;
		return true;
	}
	if (strncmp(n, "arg", 3) != 0)
		return false;
	k = strtol(n + 3, &end, 10);
	if (*end || k < 1 || k > sn->specs.len || e->comps.len)
		return false;
	e->type = e->pretty ? TYPE_STRING : TYPE_LONG;
	return true;
}
