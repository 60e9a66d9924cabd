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
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>
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

static void dwarf_vars(const struct derived_probe *dp, struct vec *out)
{
	const char *why = NULL;
	struct dwarf_file *f = dp->dwarf_path ? dwarf_file_get(dp->dwarf_path, &why) : NULL;
	uint64_t pc = dp->is_return ? dp->entry_addr : dp->addr;
	Dwarf_Die *scopes = NULL;
	int n = !f ? 0 : dwarf_function_scopes(f, pc, dp->function, dp->entry_addr, &scopes);
	bool stmt = dp->kind == PROBE_USTATEMENT;
	struct vec vars = { 0 };
	Dwarf_Die fn;

	bool found = dwarf_point_function(scopes, n, dp->function, dp->entry_addr, stmt, &fn);

	free(scopes);
	if (!found)
		return;
	if (dp->is_return) {
		const char *rt = type_text(&fn);

		if (rt)
			vec_push(out, arena_printf("$return:%s", rt));
	}
	dwarf_point_vars(&fn, stmt ? pc : 0, "vars", &vars);
	for (int i = 0; i < vars.len; i++) {
		Dwarf_Die *v = VEC_AT(&vars, i);
		const char *type = type_text(v);

		if (type && dwarf_var_has_value(v, pc))
			vec_push(out, arena_printf("$%s:%s", dwarf_diename(v), type));
	}
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
