/*
 * listing_user.c - pmstap -L for user-space probe points: the target
 * variables a process(..).function/.statement/.mark probe can read.
 *
 * As stap lists them: for a function, $return:TYPE first when it is a
 * .return probe of a function that returns a value, then the parameters
 * and the variables of the function's own scope that have a value at the
 * probe's address (a location covering it, or a constant); a statement
 * adds the variables of the blocks around it.  Types are the C types of
 * the DWARF as written ("char const*", "size_t").  A mark has
 * $arg1:long .. $argN:long, one per argument of its note.
 */
#include <string.h>
#include <dwarf.h>
#include "arena.h"
#include "dwarf_read.h"
#include "listing_user.h"
#include "probes_sdt.h"

static const char *type_text(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Die type;

	if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, &type))
		return NULL;
	return dwarf_type_listed(&type);
}

/* Whether VAR has a value at PC: a location that covers it, or a constant. */
static bool has_value(Dwarf_Die *var, uint64_t pc)
{
	Dwarf_Op *ops;
	size_t n;
	int64_t k;
	const char *why;
	int rc = dwarf_var_ops(var, pc, &ops, &n, &k, &why);

	return rc == 1 || rc == 2;
}

static void scope_vars(Dwarf_Die *scope, uint64_t pc, struct vec *out)
{
	Dwarf_Die child;

	if (dwarf_child(scope, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		const char *name, *type;

		if (tag != DW_TAG_formal_parameter && tag != DW_TAG_variable)
			continue;
		name = dwarf_diename(&child);
		type = type_text(&child);
		if (name && type && has_value(&child, pc))
			vec_push(out, arena_printf("$%s:%s", name, type));
	} while (dwarf_siblingof(&child, &child) == 0);
}

static void dwarf_vars(const struct derived_probe *dp, struct vec *out)
{
	const char *why = NULL;
	struct dwarf_file *f = dp->dwarf_path ? dwarf_file_get(dp->dwarf_path, &why) : NULL;
	uint64_t pc = dp->is_return ? dp->entry_addr : dp->addr;
	Dwarf_Die *scopes = NULL;
	int n = !f ? 0 : dwarf_function_scopes(f, pc, dp->function, dp->entry_addr, &scopes);
	bool stmt = dp->kind == PROBE_USTATEMENT;
	Dwarf_Die fn, chain[32];

	if (!dwarf_point_function(scopes, n, dp->function, dp->entry_addr, stmt, &fn))
		return;
	if (dp->is_return) {
		const char *rt = type_text(&fn);

		if (rt)
			vec_push(out, arena_printf("$return:%s", rt));
	}
	n = dwarf_point_chain(&fn, stmt ? pc : 0, chain, 32);
	for (int i = 0; i < n; i++)	/* as stap: the innermost block's first */
		scope_vars(&chain[i], pc, out);
}

void listing_user_vars(const struct derived_probe *dp, struct vec *out)
{
	switch (dp->kind) {
	case PROBE_UMARK:
		for (int i = 0; dp->sdt && i < dp->sdt->specs.len; i++)
			vec_push(out, arena_printf("$arg%d:long", i + 1));
		break;
	case PROBE_UFUNC:
	case PROBE_USTATEMENT:
		dwarf_vars(dp, out);
		break;
	default:
		break;
	}
}
