/*
 * dwarf_read.h - debuginfo of user-space programs, through elfutils' libdw:
 * the scopes at a probe's address, variables and their types, and their
 * DWARF location expressions translated into C for the BPF handler.
 */
#ifndef PMSTAP_DWARF_READ_H
#define PMSTAP_DWARF_READ_H

#include <stdbool.h>
#include <stdint.h>
#include <elfutils/libdw.h>
#include "vec.h"

/* One ELF file's DWARF and call frame information, opened once per run. */
struct dwarf_file;

/* PATH's DWARF, or NULL when it has none (*why says why). */
struct dwarf_file *dwarf_file_get(const char *path, const char **why);
/*
 * The types of the headers MODULE names ("<stdio.h>", "<a.h><b/c.h>"),
 * compiled once per translation with cc -g; NULL with *why when not.
 */
struct dwarf_file *dwarf_header_file(const char *module, const char **why);
/* Whether the file loads at a bias (ET_DYN: PIE or a library). */
bool dwarf_file_is_dyn(const struct dwarf_file *f);

/*
 * The scopes containing PC, innermost first (blocks, inlined instances,
 * the function, the compile unit); how many, 0 when none.
 */
int dwarf_scopes_at(struct dwarf_file *f, uint64_t pc, Dwarf_Die **scopes);
/*
 * The same for a probe on function NAME entered at ENTRY (out of line or
 * an inline instance): its own scopes even where an inline instance of
 * another function starts at PC.
 */
int dwarf_function_scopes(struct dwarf_file *f, uint64_t pc, const char *name, uint64_t entry,
			  Dwarf_Die **scopes);
/*
 * The function of a probe among SCOPES (innermost first), into *FN: the
 * function or inline instance NAME entered at ENTRY, or for a STATEMENT
 * the real function around it.
 */
bool dwarf_point_function(Dwarf_Die *scopes, int n, const char *name, uint64_t entry,
			  bool statement, Dwarf_Die *fn);
/*
 * The variables stap 4.8's $$vars (WHICH "vars"), $$parms ("parms") or
 * $$locals ("locals") and -L list at PC in function or inline instance FN
 * (its inner_die_containing_pc() and getscopes()), into OUT (Dwarf_Die *):
 * the named ones of FN's lexical blocks that hold PC, the innermost
 * block's first, not entering the instances inlined into FN, then FN's
 * own, each scope's in DWARF's order.  PC 0 (a function probe): FN's alone.
 */
void dwarf_point_vars(Dwarf_Die *fn, uint64_t pc, const char *which, struct vec *out);
/* Whether VAR has a value at PC: a location that covers it, or a constant. */
bool dwarf_var_has_value(Dwarf_Die *var, uint64_t pc);
/* The innermost real function among SCOPES (for its frame base), or NULL. */
Dwarf_Die *dwarf_scopes_function(Dwarf_Die *scopes, int n);
/* Variable or parameter NAME visible in SCOPES (the CU's globals too). */
bool dwarf_find_var(Dwarf_Die *scopes, int n, const char *name, Dwarf_Die *var);
/* A global variable NAME of F, in the compile unit whose file ends in CU_FILE (or any). */
bool dwarf_find_global(struct dwarf_file *f, const char *name, const char *cu_file,
		       Dwarf_Die *var);
/* A type NAME of F: "struct foo", "union u", "enum e", or a typedef or base type name. */
bool dwarf_find_type(struct dwarf_file *f, const char *name, Dwarf_Die *type);

/* ---- types ---- */

/* DIE's DW_AT_type past typedefs and qualifiers, into *MEM; NULL for void. */
Dwarf_Die *dwarf_type_of(Dwarf_Die *die, Dwarf_Die *mem);
/* TYPE past typedefs and qualifiers (in place); false for void. */
bool dwarf_type_strip(Dwarf_Die *type);
int dwarf_type_bytes(Dwarf_Die *type);
bool dwarf_type_is_signed(Dwarf_Die *type);
/* A base type of one byte (char, signed char, unsigned char). */
bool dwarf_type_is_char(Dwarf_Die *type);
/* TYPE as stap writes it in listings: "int", "struct node*", "char const*". */
const char *dwarf_type_text(Dwarf_Die *type);
/* The same as -L lists it, as stap 4.8's dwarf_type_name(): arrays without a count ("int[]"). */
const char *dwarf_type_listed(Dwarf_Die *type);
/* Member NAME of struct/union TYPE (anonymous members searched): its DIE and byte offset. */
bool dwarf_member(Dwarf_Die *type, const char *name, Dwarf_Die *member, int64_t *offset);
bool dwarf_member_is_bitfield(Dwarf_Die *member);
/*
 * A bit field MEMBER's first bit, counted from the least significant bit of
 * the byte at its DW_AT_data_member_location (0 when it has none), and its
 * width; false when MEMBER is not a bit field.
 */
bool dwarf_member_bits(Dwarf_Die *member, int64_t *bit_pos, int *bit_size);
/* Elements of array TYPE's first dimension, -1 when unknown. */
int64_t dwarf_array_count(Dwarf_Die *type);

/* ---- locations ---- */

/*
 * VAR's location expression at PC.  1: *OPS and *N set; 0: VAR has a location
 * list that does not cover PC (*WHY lists the ranges it covers); -1: VAR
 * has no location (optimized out; *WHY says so).  A DW_AT_const_value
 * gives 2 and its value in *CONST_VALUE.
 */
int dwarf_var_ops(Dwarf_Die *var, uint64_t pc, Dwarf_Op **ops, size_t *n,
		  int64_t *const_value, const char **why);
/* FUNC's DW_AT_frame_base at PC; false when it has none there. */
bool dwarf_frame_base_ops(Dwarf_Die *func, uint64_t pc, Dwarf_Op **ops, size_t *n);
/* The canonical frame address at PC from the first of CFIS that describes it. */
bool dwarf_cfi_cfa_ops(Dwarf_CFI *const *cfis, int ncfis, uint64_t pc, Dwarf_Op **ops,
		       size_t *n);
/* The same from F's .eh_frame, then its .debug_frame. */
bool dwarf_cfa_ops(struct dwarf_file *f, uint64_t pc, Dwarf_Op **ops, size_t *n);

/* What a translated location needs from its surroundings. */
struct dwarf_loc_env {
	const char *regs;		/* C expression of the struct pt_regs pointer */
	const Dwarf_Op *fb;		/* the function's frame base at the pc, or NULL */
	size_t nfb;
	const Dwarf_Op *cfa;		/* the canonical frame address at the pc, or NULL */
	size_t ncfa;
	const char *bias;		/* C expression of the load bias; NULL: not known here */
	/* Write C that reads SIZE bytes at ADDR; return the C expression of the value. */
	const char *(*deref)(void *arg, const char *addr, int size);
	void *arg;
};

/* A translated location: the address of the object, or its value. */
struct dwarf_loc {
	bool is_value;			/* c is the value (a register, or DW_OP_stack_value) */
	bool in_reg;			/* the value is a whole register */
	const char *c;			/* C expression (int64_t) */
	const char *reg;		/* in_reg: that register as an lvalue ("regs->di") */
	uint8_t avail;			/* bytes known (bit i: byte i); 0xff unless in pieces */
	char err[160];			/* why it could not be translated */
};

/* OPS[0..N) into C; false with LOC->err set for what it cannot translate. */
bool dwarf_loc_translate(const Dwarf_Op *ops, size_t n, const struct dwarf_loc_env *env,
			 struct dwarf_loc *loc);
/* x86-64 DWARF register number REG as a struct pt_regs field ("di"), or NULL. */
const char *dwarf_reg_field(unsigned reg);
/* "DW_OP_fbreg" for OP, or "DW_OP_0x%x". */
const char *dwarf_op_name(unsigned op);

#endif
