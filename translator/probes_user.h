/*
 * probes_user.h - user-space probe points of pass 2: the ELF files they
 * name (probes_user.c), the SDT markers in them (probes_sdt.c) and their PLT
 * entries (probes_plt.c).
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
};

struct usym {
	const char *name;
	uint64_t addr;
};

/* An SDT marker: one entry of .note.stapsdt (sys/sdt.h's STAP_PROBE). */
struct sdt_note {
	const char *provider;
	const char *name;
	uint64_t pc;		/* the marker's address, adjusted by .stapsdt.base */
	uint64_t semaphore;	/* the semaphore's address, or 0 */
	const char *args;	/* the argument specs: "-4@%eax 8@-16(%rbp)" */
	struct vec specs;	/* struct sdt_arg *, parsed from args */
};

/* How $argN reads one SDT argument. */
enum sdt_arg_kind {
	SDT_ARG_REG,		/* %reg */
	SDT_ARG_IMM,		/* $imm */
	SDT_ARG_MEM,		/* disp(%base[,%index,scale]) */
	SDT_ARG_RIP,		/* sym+disp(%rip): an address in the file */
};

struct sdt_arg {
	enum sdt_arg_kind kind;
	int size;		/* bytes: 1, 2, 4, 8 */
	bool is_signed;
	const char *reg;	/* struct pt_regs field: "di", "ax", "r8" */
	const char *index;	/* SDT_ARG_MEM: the index register, or NULL */
	int scale;
	int64_t value;		/* the immediate, the displacement, or the file address */
};

/* probes_user.c */
extern bool probes_user_quiet;
#define user_error(loc, sm, ...) (!probes_user_quiet && sema_error(loc, sm, __VA_ARGS__))
struct uelf *probes_user_elf(const char *path, const char **why);
const char *probes_user_dwarf_path(const struct uelf *ue);
bool probes_user_file_offset(struct uelf *ue, uint64_t vaddr, uint64_t *off);
/* ELF's section called NAME (its header into *SH), or NULL. */
Elf_Scn *probes_user_section(Elf *elf, const char *name, GElf_Shdr *sh);
const char *probes_user_library(struct uelf *exe, const char *lib);
struct derived_probe *probes_user_clone(struct sema *sm, struct derived_probe *t);
void probes_user_drop(struct sema *sm, struct derived_probe *t);
char *probes_user_point(struct vec *comps, const char *comp, const char *arg);
int probes_user_resolve(struct sema *sm, struct derived_probe *dp, struct vec *comps,
			bool optional);

/* probes_plt.c */
int plt_resolve(struct sema *sm, struct derived_probe *dp, struct uelf *ue, struct vec *comps);

/* probes_sdt.c */
int sdt_resolve(struct sema *sm, struct derived_probe *dp, struct uelf *ue, struct vec *comps,
		bool optional);
bool sdt_target_type(struct sema *sm, struct derived_probe *dp, struct expr *e);

#endif
