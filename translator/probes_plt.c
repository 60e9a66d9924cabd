/*
 * probes_plt.c - process("PATH")[.library("LIB")].plt[("PATTERN")][.return]:
 * a uprobe at each PLT entry of the file whose imported function matches
 * PATTERN (every entry without one), as stap 4.8 places them.  A call of
 * an imported function from the file goes through its entry, so the probe
 * sees every call the file makes to it; $$name is the function's name.
 * The point reads as stap's: process("PATH").statement(0xADDR), and -l
 * lists it as process("PATH").plt("NAME").
 *
 * x86-64 only, as stap: the entries follow .rela.plt's relocations in
 * order, 16 bytes each, in .plt.sec where the linker made one (indirect
 * branch tracking), else in .plt after its first entry (the lazy
 * resolver's).
 */
#include <fnmatch.h>
#include <string.h>
#include "diag.h"
#include "probes.h"
#include "probes_plt.h"
#include "probes_user.h"

#define PLT_ENTRY_SIZE 16

/* The address of the first PLT entry (.rela.plt's first), or 0 without a PLT. */
static uint64_t first_entry(Elf *elf)
{
	GElf_Shdr sh;

	if (probes_user_section(elf, ".plt.sec", &sh))
		return sh.sh_addr;
	if (probes_user_section(elf, ".plt", &sh))
		return sh.sh_addr + PLT_ENTRY_SIZE;	/* past the lazy resolver's */
	return 0;
}

struct plt_entry {
	const char *name;
	uint64_t addr;
};

/* The PLT entries of UE: its .rela.plt's relocations, with their symbols' names. */
static void read_entries(struct uelf *ue, struct vec *out)
{
	GElf_Shdr sh;
	Elf_Scn *scn = probes_user_section(ue->elf, ".rela.plt", &sh);
	Elf_Scn *symscn = scn ? elf_getscn(ue->elf, sh.sh_link) : NULL;
	Elf_Data *rela = scn ? elf_getdata(scn, NULL) : NULL;
	Elf_Data *syms = symscn ? elf_getdata(symscn, NULL) : NULL;
	uint64_t first = first_entry(ue->elf);
	GElf_Shdr symsh;

	if (!rela || !syms || !first || !gelf_getshdr(symscn, &symsh))
		return;
	for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
		struct plt_entry *e;
		GElf_Rela r;
		GElf_Sym sym;
		const char *name;

		if (!gelf_getrela(rela, (int)i, &r) ||
		    !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym) ||
		    !(name = elf_strptr(ue->elf, symsh.sh_link, sym.st_name)) || !*name)
			continue;
		e = ARENA_NEW(struct plt_entry);
		e->name = arena_strdup(name);
		e->addr = first + i * PLT_ENTRY_SIZE;
		vec_push(out, e);
	}
}

static void fill(struct derived_probe *dp, struct uelf *ue, const struct plt_entry *e,
		 struct vec *comps)
{
	dp->function = e->name;
	dp->addr = dp->entry_addr = e->addr;
	dp->elf_path = ue->path;
	dp->dwarf_path = probes_user_dwarf_path(ue);
	dp->point = arena_printf("process(\"%s\").statement(0x%llx)%s", ue->path,
				 (unsigned long long)e->addr, dp->is_return ? ".return" : "");
	dp->list_point = probes_user_point(comps, "plt", e->name);
}

int plt_resolve(struct sema *sm, struct derived_probe *dp, struct uelf *ue, struct vec *comps)
{
	struct probe_comp *pc = probes_comp_named(comps, "plt");
	const char *pattern = pc->arg ? pc->arg->str : "*";
	struct vec entries = { 0 };
	int made = 0;

	read_entries(ue, &entries);
	for (int i = 0; i < entries.len; i++) {
		const struct plt_entry *e = VEC_AT(&entries, i);
		struct derived_probe *p;
		uint64_t off;

		if (fnmatch(pattern, e->name, 0) != 0 || !probes_user_file_offset(ue, e->addr, &off))
			continue;
		p = made ? probes_user_clone(sm, dp) : dp;
		p->offset = off;
		fill(p, ue, e, comps);
		made++;
	}
	if (made)
		return made;
	if (!entries.len)
		(void)user_error(pc->loc, sm, "'%s' has no PLT entries (it imports no function "
				 "through its .plt)", ue->path);
	else if (user_error(pc->arg ? pc->arg->loc : pc->loc, sm, "no PLT entry '%s' in '%s'",
			    pattern, ue->path))
		diag_hint("pmstap -l 'process(\"%s\").plt' lists them", ue->path);
	return -1;
}
