/*
 * probes_user.h - user-space probe points of pass 2: the ELF files they
 * name, and their functions and statements (probes_user.c).  The SDT
 * markers in those files (probes_sdt.h) and their PLT entries
 * (probes_plt.h) resolve through the same struct uelf.
 */
#ifndef PMSTAP_PROBES_USER_H
#define PMSTAP_PROBES_USER_H

#include <stdbool.h>
#include <stdint.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include "sema_int.h"

/* One ELF file opened for probing, kept open for the whole run. */
struct uelf {
	const char *path;
	int fd;
	Elf *elf;
	Dwarf *dw;		/* NULL: the file has no DWARF (stripped, or built without -g) */
	const char *debug_path;	/* the separate debug file dw comes from, or NULL */
	bool syms_read, funcs_read;
	struct vec syms;	/* struct usym *: functions of .symtab, else .dynsym */
	struct vec funcs;	/* struct ufunc *: functions and inline instances of the DWARF */
	struct vec cu_locs;	/* struct cu_locs *: has_valid_locs() of each CU asked about */
};

struct usym {
	const char *name;
	uint64_t addr;
};

extern bool probes_user_quiet;
#define user_error(loc, sm, ...) (!probes_user_quiet && sema_error(loc, sm, __VA_ARGS__))
struct uelf *probes_user_elf(const char *path, const char **why);
const char *probes_user_dwarf_path(const struct uelf *ue);
bool probes_user_file_offset(struct uelf *ue, uint64_t vaddr, uint64_t *off);
/* ELF's first section of TYPE (SHT_SYMTAB ...), or NULL. */
Elf_Scn *probes_user_section_of_type(Elf *elf, Elf64_Word type);
/* ELF's section called NAME (its header into *SH), or NULL. */
Elf_Scn *probes_user_section(Elf *elf, const char *name, GElf_Shdr *sh);
const char *probes_user_library(struct uelf *exe, const char *lib);
void probes_user_needed(struct uelf *exe, struct vec *out);
struct derived_probe *probes_user_clone(struct sema *sm, struct derived_probe *t);
void probes_user_drop(struct sema *sm, struct derived_probe *t);
/*
 * The executable of -c CMD or -x PID, or NULL (with *WHY set when -c names
 * a command that needs a shell).
 */
const char *probes_user_target_exe(struct sema *sm, const char **why);
char *probes_user_point(struct vec *comps, const char *comp, const char *arg);
int probes_user_resolve(struct sema *sm, struct derived_probe *dp, struct vec *comps,
			bool optional);

#endif
