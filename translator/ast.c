/* ast.c - syntax tree constructors. */
#include "ast.h"

struct expr *ast_expr(enum expr_kind kind, struct srcloc loc)
{
	struct expr *e = ARENA_NEW(struct expr);

	e->kind = kind;
	e->loc = loc;
	return e;
}

struct stmt *ast_stmt(enum stmt_kind kind, struct srcloc loc)
{
	struct stmt *s = ARENA_NEW(struct stmt);

	s->kind = kind;
	s->loc = loc;
	return s;
}

struct vardecl *ast_vardecl(const char *name, struct srcloc loc,
			    enum var_scope scope)
{
	struct vardecl *d = ARENA_NEW(struct vardecl);

	d->name = name;
	d->loc = loc;
	d->scope = scope;
	d->arity = -1;
	return d;
}

const char *ast_type_name(enum type t)
{
	switch (t) {
	case TYPE_UNKNOWN: return "unknown";
	case TYPE_LONG: return "long";
	case TYPE_STRING: return "string";
	case TYPE_STATS: return "stats";
	case TYPE_VOID: return "void";
	}
	return "unknown";
}
