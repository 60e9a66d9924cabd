/*
 * sema_write.c - pass 2: writes to target variables, as stap allows them:
 * only in guru mode (-g), only with '=', not in .return probes (where $var
 * is its value saved on entry), never to a pretty-printed text, a $$vars
 * list or an address.  Pass 3 (emit_dwarf.c) then refuses what a uprobe
 * cannot change: values held in registers.
 */
#include <string.h>
#include "sema_write.h"

static const char *what_of(const struct expr *e)
{
	if (e->kind == EXPR_ATVAR)
		return "@var variable";
	if (e->kind == EXPR_CAST)
		return "@cast context variable";
	if (e->kind == EXPR_AUTOCAST)
		return "a value's '->' member";
	return arena_printf("target variable '%s'", e->name);
}

void sema_target_write(struct sema *sm, const struct derived_probe *dp, struct expr *e,
		       const char *op)
{
	if (e->unresolved)	/* a write is never elided: say so now */
		sema_error(e->loc, sm, "%s", e->unresolved);
	if (!sm->s->guru) {
		sema_error(e->loc, sm, "write to %s not permitted; need pmstap -g", what_of(e));
		return;
	}
	if (strcmp(op, "=") != 0)
		sema_error(e->loc, sm, "only '=' can write to a target variable, not '%s'", op);
	else if (e->pretty)
		sema_error(e->loc, sm, "cannot write to pretty-printed variable");
	else if (e->addr_of)
		sema_error(e->loc, sm, "cannot write to an address (&)");
	else if (e->kind == EXPR_TARGET && e->name[1] == '$')
		sema_error(e->loc, sm, "cannot write to context variable '%s'", e->name);
	else if (e->kind == EXPR_TARGET && dp && dp->is_return && strcmp(e->name, "$return") != 0)
		sema_error(e->loc, sm, "write to target variable not permitted in .return probes");
}
