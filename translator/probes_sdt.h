/*
 * probes_sdt.h - SDT markers (probes_sdt.c): process(..).mark(..) probe
 * points found in a file's .note.stapsdt, and their arguments as the
 * notes spell them, which pass 3 reads (emit_uprobe.c).
 */
#ifndef PMSTAP_PROBES_SDT_H
#define PMSTAP_PROBES_SDT_H

#include <stdbool.h>
#include <stdint.h>
#include "program.h"

struct sema;
struct uelf;

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

/*
 * Resolve DP (a .mark probe made from COMPS) against the markers of UE: the
 * number of probes it became, or -1 after an error.
 */
int sdt_resolve(struct sema *sm, struct derived_probe *dp, struct uelf *ue, struct vec *comps,
		bool optional);
/* $argN, $$name, $$provider, $$parms: true (and typed) when DP's mark has it. */
bool sdt_target_type(struct sema *sm, struct derived_probe *dp, struct expr *e);

#endif
