/*
 * probes_btf.h - the kernel's BTF (/sys/kernel/btf/vmlinux), read and
 * indexed once per run (probes_btf.c).  Pass 2 checks $var->member chains
 * and kernel function probes against it; pass 3 reads through it
 * (emit_btf.c, emit_kprobe.c).  Kernel functions as probe points
 * (kernel.function, module().function, kprobe.function) are matched by
 * name in probes_sys.h and emitted as fentry/fexit or kprobe/kretprobe
 * programs (emit_kprobe.c).
 */
#ifndef PMSTAP_PROBES_BTF_H
#define PMSTAP_PROBES_BTF_H

#include <stdbool.h>
#include <stdint.h>
#include "hmap.h"
#include "program.h"

/* ---- the readers ---- */

struct btf_type;
bool btf_index_load(void);				/* false when there is no BTF */
const struct btf_type *btf_type_at(uint32_t id);	/* NULL for 0 (void) or out of range */
const char *btf_name_of(uint32_t name_off);		/* "" when out of range */
int btf_kind(uint32_t id);			/* BTF_KIND_*, BTF_KIND_UNKN for void */
uint32_t btf_strip(uint32_t id);		/* past typedefs and qualifiers */
bool btf_is_signed(uint32_t id);		/* a signed integer or enum */
bool btf_is_record(uint32_t id);		/* a struct or union (not stripped) */
int btf_type_count(void);
/*
 * The first type of KIND named NAME (BTF_KIND_STRUCT, _UNION, _ENUM, _INT,
 * _TYPEDEF), or with BTF_KIND_PTR the first pointer to type POINTEE; -1
 * when there is none.
 */
int btf_find(int kind, const char *name, int pointee);
void btf_function_names(struct vec *names, struct hmap *set);
void btf_tracepoint_args(const char *name, struct vec *args);
enum type btf_chain_type(int id, const struct vec *comps, bool pretty, char **why,
			 const char **near, int *failed_at);

/* Member NAME of struct/union ID (anonymous members searched): its type, or 0. */
uint32_t btf_member_type(uint32_t id, const char *name);
/* The same, with its offset in bits in *BITS and its bit field width (0: none) in *WIDTH. */
uint32_t btf_member_at(uint32_t id, const char *name, uint64_t *bits, uint32_t *width);
/* The member names of struct/union ID (const char *), anonymous members' flattened. */
void btf_member_names(uint32_t id, struct vec *out);
/*
 * Module MODULE's BTF (its .ko's, split against vmlinux's) added to the
 * index: its types get the ids after vmlinux's.  One module per
 * translation; false with *WHY when it cannot be read or another module's
 * is there.
 */
bool btf_module_load(const char *module, const char **why);

/* The struct, union or typedef NAME ("struct sock", "sock"): its ID and C name in *C; 0 if none. */
uint32_t btf_find_named(const char *name, const char **c);

/*
 * The same for @cast(p, NAME, MODULE): vmlinux's type, else, MODULE
 * "kernel:M" (or "kernel:M1:M2"), M's (btf_module_load()).
 */
uint32_t btf_find_cast(const char *name, const char *module, const char **c);

/* The module whose BTF type ID is, or NULL for vmlinux's. */
const char *btf_module_of(uint32_t id);

/* ---- kernel functions ---- */

/*
 * The parameters of kernel function NAME (struct tp_arg *) and the BTF
 * type of what it returns (0: void); false when BTF does not describe it.
 * "M:F" is module M's function F, from M's BTF (btf_module_load()).
 */
bool btf_kfunc(const char *name, struct vec **params, int *ret);

/* BTF type ID as C spells it: "struct file *". */
const char *btf_type_c(int id);

/* Whether pass 2 can check DP's $vars (a kernel function, no wildcard left). */
bool kfunc_targets_checkable(const struct derived_probe *dp);

/*
 * Type E ($param..., $return..., $$parms...) at kernel function probe DP;
 * false with *WHY (and maybe *NEAR, a close name) when it has no such thing.
 */
bool kfunc_target_type(const struct derived_probe *dp, struct expr *e, char **why,
		       const char **near);

#endif
