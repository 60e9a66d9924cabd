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

struct expr *ast_symbol(struct srcloc loc, const char *name)
{
	struct expr *e = ast_expr(EXPR_SYMBOL, loc);

	e->name = name;
	return e;
}

struct expr *ast_number(struct srcloc loc, int64_t v)
{
	struct expr *e = ast_expr(EXPR_NUMBER, loc);

	e->num = v;
	return e;
}

struct expr *ast_binary(enum expr_kind kind, struct srcloc loc, const char *op, struct expr *l,
			struct expr *r)
{
	struct expr *e = ast_expr(kind, loc);

	e->op = op;
	e->left = l;
	e->right = r;
	return e;
}

struct stmt *ast_expr_stmt(struct expr *e)
{
	struct stmt *s = ast_stmt(STMT_EXPR, e->loc);

	s->expr = e;
	return s;
}
