/*
 * sema_resolve.c - symbols of pass 2: variables, calls, $vars and @defined.
 *
 * Each derived probe has its own copy of its handler (so that a $var can
 * mean a different field in each tracepoint a wildcard matched) and its own
 * locals; a local is made by the first use of a name that is neither a
 * parameter nor a visible global.  Calls resolve by name and arity to an
 * overload chain; names the script lacks come from the tapset library.
 * @defined($x) becomes 1 or 0 where this pass can tell, and the branches
 * of an if, ?: or &&/|| that it rules out are dropped unresolved.
 */
#include <string.h>
#include "diag.h"
#include "probe_kinds.h"
#include "sema_int.h"
#include "sema_write.h"
#include "probes.h"
#include "probes_netfilter.h"
#include "probes_counter.h"
#include "probes_procfs.h"
#include "probes_btf.h"
#include "probes_sdt.h"

/* ---- copies ---- */

static struct vec copy_exprs(const struct vec *v)
{
	struct vec c = { 0 };

	for (int i = 0; i < v->len; i++)
		vec_push(&c, sema_resolve_copy_expr(VEC_AT(v, i)));
	return c;
}

static struct vec copy_comps(const struct vec *v)
{
	struct vec c = { 0 };

	for (int i = 0; i < v->len; i++) {
		struct target_comp *tc = ARENA_NEW(struct target_comp);

		*tc = *(struct target_comp *)VEC_AT(v, i);
		tc->index_expr = sema_resolve_copy_expr(tc->index_expr);
		vec_push(&c, tc);
	}
	return c;
}

struct expr *sema_resolve_copy_expr(const struct expr *e)
{
	struct expr *c;

	if (!e)
		return NULL;
	c = ARENA_NEW(struct expr);
	*c = *e;
	c->left = sema_resolve_copy_expr(e->left);
	c->right = sema_resolve_copy_expr(e->right);
	c->cond = sema_resolve_copy_expr(e->cond);
	c->args = copy_exprs(&e->args);
	c->comps = copy_comps(&e->comps);
	c->decl = NULL;
	c->func = NULL;
	c->builtin = 0;
	return c;
}

struct stmt *sema_resolve_copy_stmt(const struct stmt *s)
{
	struct stmt *c;

	if (!s)
		return NULL;
	c = ARENA_NEW(struct stmt);
	*c = *s;
	c->body = (struct vec){ 0 };
	for (int i = 0; i < s->body.len; i++)
		vec_push(&c->body, sema_resolve_copy_stmt(VEC_AT(&s->body, i)));
	c->expr = sema_resolve_copy_expr(s->expr);
	c->then = sema_resolve_copy_stmt(s->then);
	c->otherwise = sema_resolve_copy_stmt(s->otherwise);
	c->init = sema_resolve_copy_expr(s->init);
	c->incr = sema_resolve_copy_expr(s->incr);
	c->keys = copy_exprs(&s->keys);
	c->value = sema_resolve_copy_expr(s->value);
	c->array = sema_resolve_copy_expr(s->array);
	c->limit = sema_resolve_copy_expr(s->limit);
	c->catch_var = sema_resolve_copy_expr(s->catch_var);
	return c;
}

/* ---- scopes ---- */

struct scope {
	struct sema *sm;
	struct vec *locals;		/* where new locals go */
	struct func *func;		/* in a function */
	struct derived_probe *dp;	/* in a probe handler */
	bool globals_only;		/* a probe point condition */
	int loops;
	int folds;			/* @defined()s turned into constants so far */
	int quiet;			/* inside @defined(): failing is not an error */
	bool failed;
};

/* How a use constrains a name: 0 a scalar, N > 0 an array with N keys, or: */
#define USE_ARRAY (-1)		/* an array, keys not counted here */
#define USE_ANY (-2)		/* either (delete) */

static void rx(struct scope *sc, struct expr **ep);
static void rs(struct scope *sc, struct stmt **sp);

static const char *plural(int n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static struct vardecl *find_local(struct scope *sc, const char *name)
{
	if (sc->func) {
		for (int i = 0; i < sc->func->params.len; i++) {
			struct vardecl *d = VEC_AT(&sc->func->params, i);

			if (strcmp(d->name, name) == 0)
				return d;
		}
	}
	for (int i = 0; i < sc->locals->len; i++) {
		struct vardecl *d = VEC_AT(sc->locals, i);

		if (strcmp(d->name, name) == 0)
			return d;
	}
	return NULL;
}

static void arity_conflict(struct scope *sc, struct expr *e, struct declinfo *di,
			   const char *msg)
{
	if (sema_error(e->loc, sc->sm, "%s at %s:%d:%d", msg, di->arity_from.src->name,
		       di->arity_from.line, di->arity_from.col))
		diag_note(di->arity_from, "'%s' got its shape here", e->name);
}

static void check_global_use(struct scope *sc, struct expr *e, struct vardecl *d, int use)
{
	struct declinfo *di = sema_declinfo(sc->sm, d);
	bool array = d->arity > 0 || di->must_be_array;
	const char *n = e->name;

	if (use == USE_ANY)
		return;
	if (use == 0 && array) {
		arity_conflict(sc, e, di, arena_printf("'%s' is used as a scalar here but as an array", n));
	} else if (use != 0 && d->arity == 0) {
		arity_conflict(sc, e, di, arena_printf("'%s' is used as an array here but as a scalar", n));
	} else if (use > 0 && d->arity > 0 && d->arity != use) {
		arity_conflict(sc, e, di, arena_printf("'%s' is indexed with %d %s here but with %d",
						      n, use, plural(use, "key", "keys"), d->arity));
	} else if (d->arity < 0 && use != USE_ARRAY) {
		d->arity = use;
		if (!di->must_be_array || !di->arity_from.src)
			di->arity_from = e->loc;
	} else if (use == USE_ARRAY && !array && d->arity < 0) {
		di->must_be_array = true;
		di->arity_from = e->loc;
	}
}

static void not_an_array(struct scope *sc, struct expr *e, struct vardecl *d)
{
	const char *what = d ? (d->scope == VAR_PARAM ? "a parameter" : "a local variable") : NULL;

	if (what && sema_error(e->loc, sc->sm, "'%s' is %s, not an array", e->name, what))
		diag_hint("arrays must be declared with 'global %s'", e->name);
	else if (!what && sema_error(e->loc, sc->sm, "unresolved array '%s'", e->name))
		diag_hint("arrays must be declared with 'global %s'", e->name);
}

static struct vardecl *new_local(struct scope *sc, struct expr *e)
{
	struct vardecl *d = ast_vardecl(e->name, e->loc, VAR_LOCAL);

	d->arity = 0;
	d->file = sema_file_of(sc->sm, e->loc);
	vec_push(sc->locals, d);
	sema_declinfo(sc->sm, d)->from_tapset = d->file && d->file->is_tapset;
	return d;
}

/*
 * stap's rule (elaborate.cxx, find_var): a name that a function or probe
 * uses without declaring it is a global if one of that name is visible,
 * the script's included, and only otherwise a new local.  So a tapset's
 * undeclared helper variable binds to a script's global of the same name;
 * stap warns then, in the same words, and its tapsets name such locals
 * with a leading "__", which scripts leave to them.
 */
static void warn_cross_file(struct scope *sc, struct expr *e, struct vardecl *d)
{
	struct stapfile *from = sema_file_of(sc->sm, e->loc);

	if (!from || !from->is_tapset || !d->file || d->file->is_tapset)
		return;
	if (sema_warning(e->loc, sc->sm, "cross-file global variable reference to '%s' from a tapset",
			 e->name))
		diag_note(d->loc, "the script's global '%s' is declared here", d->name);
}

/* Bind symbol E, used as USE says, to a local, parameter or global. */
static void resolve_symbol(struct scope *sc, struct expr *e, int use)
{
	struct vardecl *d = sc->globals_only ? NULL : find_local(sc, e->name);

	if (d && use != 0 && use != USE_ANY) {
		not_an_array(sc, e, d);
		return;
	}
	if (!d)
		d = sema_find_global(sc->sm, sema_file_of(sc->sm, e->loc), e->name);
	if (!d && sc->globals_only) {
		sema_error(e->loc, sc->sm, "'%s' in a probe point condition is not a global",
			   e->name);
		return;
	}
	if (!d && use != 0 && use != USE_ANY) {
		not_an_array(sc, e, NULL);
		return;
	}
	if (!d)
		d = new_local(sc, e);
	e->decl = d;
	if (d->scope == VAR_GLOBAL) {
		warn_cross_file(sc, e, d);
		check_global_use(sc, e, d, use);
	}
}

/* ---- calls ---- */

static const struct {
	const char *name;
	enum sema_builtin id;
	int min_args;
} builtins[] = {
	{ "print", BUILTIN_PRINT, 1 },
	{ "println", BUILTIN_PRINTLN, 0 },
	{ "printf", BUILTIN_PRINTF, 1 },
	{ "printd", BUILTIN_PRINTD, 2 },
	{ "printdln", BUILTIN_PRINTDLN, 2 },
	{ "sprint", BUILTIN_SPRINT, 1 },
	{ "sprintln", BUILTIN_SPRINTLN, 0 },
	{ "sprintf", BUILTIN_SPRINTF, 1 },
	{ "sprintd", BUILTIN_SPRINTD, 2 },
	{ "sprintdln", BUILTIN_SPRINTDLN, 2 },
};
#define N_BUILTINS ((int)(sizeof(builtins) / sizeof(builtins[0])))

static bool is_hist_printer(int b)
{
	return b == BUILTIN_PRINT || b == BUILTIN_PRINTLN || b == BUILTIN_SPRINT ||
	       b == BUILTIN_SPRINTLN;
}

static void rx_hist(struct scope *sc, struct expr *e);

static void resolve_builtin(struct scope *sc, struct expr *e, int i)
{
	int b = builtins[i].id, n = e->args.len;
	bool fmt = b == BUILTIN_PRINTF || b == BUILTIN_SPRINTF;
	struct expr *first = n ? VEC_AT(&e->args, 0) : NULL;

	e->builtin = b;
	if (n < builtins[i].min_args) {
		sema_error(e->loc, sc->sm, "'%s' needs at least %d %s", e->name, builtins[i].min_args,
			   plural(builtins[i].min_args, "argument", "arguments"));
	} else if (builtins[i].min_args == 2 && first->kind != EXPR_STRING) {
		sema_error(first->loc, sc->sm, "the delimiter of '%s' must be a literal string",
			   e->name);
	} else if (fmt && first->kind != EXPR_STRING) {
		sema_error(first->loc, sc->sm, "the format of '%s' must be a literal string", e->name);
	}
	if (n == 1 && first->kind == EXPR_HIST && is_hist_printer(b)) {
		rx_hist(sc, first);
		return;
	}
	for (int k = 0; k < n; k++)
		rx(sc, (struct expr **)&e->args.items[k]);
}

static int effective_priority(const struct func *f)
{
	if (f->priority)
		return (int)f->priority;
	return f->file && f->file->is_tapset ? 1 : 0;
}

static bool func_has_next(struct sema *sm, struct func *f);

static bool stmt_has_next(const struct stmt *s)
{
	if (!s)
		return false;
	if (s->kind == STMT_NEXT)
		return true;
	for (int i = 0; i < s->body.len; i++)
		if (stmt_has_next(VEC_AT(&s->body, i)))
			return true;
	return stmt_has_next(s->then) || stmt_has_next(s->otherwise);
}

static bool func_has_next(struct sema *sm, struct func *f)
{
	if (f->embedded)
		return strstr(f->embedded, "STAP_NEXT") != NULL;
	return stmt_has_next(f->body);
}

/*
 * The functions a call of NAME with NARGS arguments runs, in order: those
 * of that arity visible from FROM, by priority, up to the first one that
 * cannot 'next' on to the others.
 */
static struct vec chain_of(struct sema *sm, struct vec *all, struct stapfile *from, int nargs)
{
	struct vec chain = { 0 };

	for (int i = 0; all && i < all->len; i++) {
		struct func *f = VEC_AT(all, i);
		int j;

		if (f->params.len != nargs || (f->is_private && f->file != from))
			continue;
		vec_push(&chain, f);
		for (j = chain.len - 1; j > 0; j--) {
			struct func *prev = VEC_AT(&chain, j - 1);

			if (effective_priority(prev) <= effective_priority(f))
				break;
			chain.items[j] = prev;
		}
		chain.items[j] = f;
	}
	for (int i = 0; i < chain.len; i++) {
		if (!func_has_next(sm, VEC_AT(&chain, i))) {
			chain.len = i + 1;
			break;
		}
	}
	return chain;
}

static bool chain_complete(struct sema *sm, const struct vec *chain)
{
	return chain->len && !func_has_next(sm, VEC_AT(chain, chain->len - 1));
}

static void unresolved_function(struct scope *sc, struct expr *e)
{
	struct hmap *m = &sc->sm->funcs;
	const char **lib, **names, *near;
	int nlib = sema_library_func_names(sc->sm, &lib), n = 0;

	if (!sema_error(e->loc, sc->sm, "unresolved function '%s'", e->name))
		return;
	names = arena_alloc(sizeof(char *) * (size_t)(m->len + nlib + N_BUILTINS));
	for (int i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			names[n++] = m->slots[i].key;
	for (int i = 0; i < nlib; i++)
		names[n++] = lib[i];
	for (int i = 0; i < N_BUILTINS; i++)
		names[n++] = builtins[i].name;
	near = diag_similar(e->name, names, n);
	if (near)
		diag_hint("did you mean '%s'?", near);
}

static void wrong_arity(struct scope *sc, struct expr *e, struct vec *all, struct stapfile *from)
{
	char *takes = NULL;
	struct func *first = NULL;
	bool seen[64] = { false };

	for (int i = 0; i < all->len; i++) {
		struct func *f = VEC_AT(all, i);
		int n = f->params.len;

		if (f->is_private && f->file != from)
			continue;
		if (!first)
			first = f;
		if (n < 64 && !seen[n]) {
			seen[n] = true;
			takes = takes ? arena_printf("%s or %d", takes, n) : arena_printf("%d", n);
		}
	}
	if (!first) {
		first = VEC_AT(all, 0);
		if (sema_error(e->loc, sc->sm, "function '%s' is private to %s", e->name,
			       first->file->src->name))
			diag_note(first->loc, "'%s' is defined here", e->name);
		return;
	}
	if (sema_error(e->loc, sc->sm, "wrong number of arguments to '%s': %d given, but it takes %s",
		       e->name, e->args.len, takes))
		diag_note(first->loc, "'%s' is defined here", e->name);
}

/*
 * A tapset function whose embedded code says guru (its "guru" comment, as
 * in stap's tapsets) may be called from a script only in guru mode; the
 * tapsets themselves call it freely.
 */
static void refuse_guru_only(struct scope *sc, struct expr *e, struct stapfile *from)
{
	const struct func *f = e->func;

	if (sc->sm->s->guru || !f->embedded || !f->file || !f->file->is_tapset ||
	    !strstr(f->embedded, "/* guru */") || (from && from->is_tapset))
		return;
	if (sema_error(e->loc, sc->sm, "function '%s' may not be used unless -g is specified",
		       e->name))
		diag_hint("it changes the kernel or the probed process: only guru mode calls it");
}

static void resolve_call(struct scope *sc, struct expr *e)
{
	struct sema *sm = sc->sm;
	struct stapfile *from = sema_file_of(sm, e->loc);
	struct vec *all, *chain;

	for (int i = 0; i < N_BUILTINS; i++)
		if (strcmp(e->name, builtins[i].name) == 0) {
			resolve_builtin(sc, e, i);
			return;
		}
	for (int k = 0; k < e->args.len; k++)
		rx(sc, (struct expr **)&e->args.items[k]);
	chain = ARENA_NEW(struct vec);
	all = hmap_get(&sm->funcs, e->name);
	*chain = chain_of(sm, all, from, e->args.len);
	if (!chain_complete(sm, chain)) {
		all = sema_funcs_named(sm, e->name);
		*chain = chain_of(sm, all, from, e->args.len);
	}
	if (!chain->len) {
		if (all && all->len)
			wrong_arity(sc, e, all, from);
		else
			unresolved_function(sc, e);
		return;
	}
	e->func = VEC_AT(chain, 0);
	refuse_guru_only(sc, e, from);
	for (int i = 0; i < chain->len; i++) {
		struct func *f = VEC_AT(chain, i);

		sema_funcinfo(sm, f)->chain = *chain;
		sema_pull_func(sm, f);
	}
}

/* ---- target variables ---- */

/* Can this pass tell which $vars exist at DP? */
static bool targets_checkable(const struct derived_probe *dp)
{
	switch (dp ? probe_targets(dp) : TARGETS_NONE) {
	case TARGETS_KFUNC:
		return kfunc_targets_checkable(dp);
	case TARGETS_DWARF:
		return false;
	default:
		return true;
	}
}

/* Report a target problem, or only note the failure inside @defined(). */
static bool target_fail(struct scope *sc)
{
	if (sc->quiet) {
		sc->failed = true;
		return false;
	}
	return true;
}

static struct tp_field *tp_field_named(struct tracepoint *tp, const char *name)
{
	for (int i = 0; i < tp->fields.len; i++) {
		struct tp_field *f = VEC_AT(&tp->fields, i);

		if (strcmp(f->name, name) == 0)
			return f;
	}
	return NULL;
}

static void no_such_field(struct scope *sc, struct expr *e, struct tracepoint *tp)
{
	const char **names, *near;
	char *list = NULL;
	int n = 0;

	char *once = arena_printf("no field at %p:%d:%d", (const void *)e->loc.src, e->loc.line,
				  e->loc.col);

	/* a wildcard copies the body into many tracepoints: say it for the first one only */
	if (!target_fail(sc) || hmap_get(&sc->sm->seen, once))
		return;
	hmap_put(&sc->sm->seen, once, once);
	if (!sema_error(e->loc, sc->sm, "tracepoint '%s:%s' has no field '%s'", tp->system,
			tp->name, e->name + 1))
		return;
	names = arena_alloc(sizeof(char *) * (size_t)(tp->fields.len + tp->args.len + 1));
	for (int i = 0; i < tp->fields.len; i++) {
		struct tp_field *f = VEC_AT(&tp->fields, i);

		names[n++] = f->name;
		if (!f->is_common)
			list = list ? arena_printf("%s, $%s", list, f->name)
				    : arena_printf("$%s", f->name);
	}
	for (int i = 0; i < tp->args.len; i++) {
		struct tp_arg *a = VEC_AT(&tp->args, i);

		if (tp_field_named(tp, a->name))
			continue;
		names[n++] = a->name;
		list = list ? arena_printf("%s, $%s", list, a->name) : arena_printf("$%s", a->name);
	}
	near = diag_similar(e->name + 1, names, n);
	if (near)
		diag_hint("did you mean '$%s'?", near);
	else
		diag_hint("its fields are %s", list ? list : "none");
	if (strpbrk(probes_point_text(&sc->dp->orig->comps), "*?["))
		diag_hint("'%s' matches several tracepoints; @defined(%s) tells which have it",
			  probes_point_text(&sc->dp->orig->comps), e->name);
}

static void resolve_trace_dollars(struct scope *sc, struct expr *e, struct tracepoint *tp)
{
	const char *n = e->name + 2;

	if (!strcmp(n, "vars") || !strcmp(n, "parms") || !strcmp(n, "locals") ||
	    !strcmp(n, "name") || !strcmp(n, "system")) {
		e->type = TYPE_STRING;
	} else if (target_fail(sc)) {
		sema_error(e->loc, sc->sm, "'%s' is not available in tracepoint '%s:%s'", e->name,
			   tp->system, tp->name);
	}
}

static struct tp_arg *tp_arg_named(struct tracepoint *tp, const char *name)
{
	for (int i = 0; i < tp->args.len; i++) {
		struct tp_arg *a = VEC_AT(&tp->args, i);

		if (strcmp(a->name, name) == 0)
			return a;
	}
	return NULL;
}

static char *chain_text(const struct expr *e, int upto)
{
	char *t = arena_strdup(e->name);

	for (int i = 0; i <= upto && i < e->comps.len; i++) {
		const struct target_comp *c = VEC_AT(&e->comps, i);

		t = c->kind == COMP_MEMBER ? arena_printf("%s->%s", t, c->member)
					   : arena_printf("%s[...]", t);
	}
	return t;
}

/* $arg[->member...] of a raw tracepoint: typed through BTF. */
static void resolve_trace_arg(struct scope *sc, struct expr *e, struct tp_arg *a)
{
	char *why;
	const char *near;
	int at;

	e->type = btf_chain_type(a->btf_id, &e->comps, e->pretty, &why, &near, &at);
	if (e->addr_of)
		e->type = TYPE_LONG;
	if (e->type || !target_fail(sc))
		return;
	if (sema_error(at < e->comps.len ? ((struct target_comp *)VEC_AT(&e->comps, at))->loc : e->loc,
		       sc->sm, "cannot read '%s': %s", chain_text(e, at), why) && near)
		diag_hint("did you mean '->%s'?", near);
}

static void resolve_trace_target(struct scope *sc, struct expr *e, struct tracepoint *tp)
{
	struct tp_field *f;
	struct tp_arg *a;

	if (e->name[1] == '$') {
		resolve_trace_dollars(sc, e, tp);
		return;
	}
	f = tp_field_named(tp, e->name + 1);
	a = tp_arg_named(tp, e->name + 1);
	/* a field, unless members follow: only the argument of that name is typed */
	if (a && (!f || e->comps.len)) {
		resolve_trace_arg(sc, e, a);
		return;
	}
	if (!f) {
		no_such_field(sc, e, tp);
		return;
	}
	e->type = e->pretty ? TYPE_STRING : f->type;
	if (f->type == TYPE_STRING && e->comps.len && target_fail(sc))
		sema_error(e->loc, sc->sm, "'%s' is a string; it has no members or elements",
			   e->name);
	if (e->addr_of && target_fail(sc))
		sema_error(e->loc, sc->sm, "cannot take the address of tracepoint field '%s'",
			   e->name);
}

/* $param..., $return, $$parms of a kernel function, typed through BTF (probes_btf.h). */
static void resolve_kfunc_target(struct scope *sc, struct expr *e)
{
	char *why = NULL;
	const char *near = NULL;

	if (kfunc_target_type(sc->dp, e, &why, &near)) {
		/* at the entry, parameters are in registers, as is $return at the exit */
		if (e->addr_of && !e->comps.len && e->name[1] != '$' && target_fail(sc))
			sema_error(e->loc, sc->sm, "cannot take address of object in register: '%s'",
				   e->name);
		return;
	}
	if (!target_fail(sc))
		return;
	if (sema_error(e->loc, sc->sm, "%s", why) && near)
		diag_hint("did you mean '%s'?", near);
}

/* $argN's N when it is 1 to 6, else 0. */
static int usyscall_argn(const char *name)
{
	const char *n = name + 4;

	if (strncmp(name, "$arg", 4) != 0 || n[0] < '1' || n[0] > '6' || n[1])
		return 0;
	return n[0] - '0';
}

/* Why $var E cannot be read in process.syscall[.return] probe DP, as stap says it; NULL: it can. */
static const char *usyscall_why(const struct derived_probe *dp, const struct expr *e)
{
	bool args = !strncmp(e->name, "$arg", 4) || !strcmp(e->name, "$$parms");

	if (e->addr_of)
		return "cannot take address of utrace variable";
	if (args && dp->is_return)
		return "only \"process(PATH_OR_PID).syscall\" support $argN or $$parms.";
	if (args && strcmp(e->name, "$$parms") && !usyscall_argn(e->name))
		return "invalid syscall argument number (1-6)";
	if (!strcmp(e->name, "$return") && !dp->is_return)
		return "only \"process(PATH_OR_PID).syscall.return\" support $return.";
	if (!args && strcmp(e->name, "$return") && strcmp(e->name, "$syscall"))
		return "invalid target symbol for utrace probe, $syscall, $return, $argN or $$parms "
		       "expected";
	if (e->pretty && strcmp(e->name, "$$parms"))
		return arena_printf("utrace variable '%s' may not be pretty-printed", e->name);
	if (e->comps.len && strcmp(e->name, "$$parms"))
		return arena_printf("utrace variable '%s' may not be used as %s", e->name,
				    ((struct target_comp *)VEC_AT(&e->comps, 0))->kind == COMP_MEMBER
				    ? "a structure" : "array");
	return NULL;
}

/*
 * process.syscall[.return] (stap's utrace probes, tapset-utrace.cxx):
 * $syscall, and $arg1..$arg6 and $$parms at the entry, $return at the exit.
 */
static void resolve_usyscall_target(struct scope *sc, struct expr *e)
{
	const char *why = usyscall_why(sc->dp, e);

	if (!why) {
		e->type = strcmp(e->name, "$$parms") ? TYPE_LONG : TYPE_STRING;
		return;
	}
	if (target_fail(sc))
		sema_error(e->loc, sc->sm, "%s", why);
}

/* $hooknum, $skb, $in, $out, $okfn, $verdict of a netfilter probe: numbers (probes_netfilter.c). */
static void resolve_netfilter_target(struct scope *sc, struct expr *e, bool write)
{
	const char *why = probes_netfilter_target(sc->sm, e, write);

	if (!why)
		e->type = TYPE_LONG;
	else if (target_fail(sc))
		sema_error(e->loc, sc->sm, "%s", why);
}

static void resolve_target(struct scope *sc, struct expr *e)
{
	struct derived_probe *dp = sc->dp;

	for (int i = 0; i < e->comps.len; i++) {
		struct target_comp *tc = VEC_AT(&e->comps, i);

		if (tc->index_expr)
			rx(sc, &tc->index_expr);
	}
	if (!dp) {
		if (target_fail(sc))
			sema_error(e->loc, sc->sm, sc->globals_only
				   ? "target variable '%s' cannot be used in a probe point condition"
				   : "target variable '%s' can only be used in a probe handler",
				   e->name);
		return;
	}
	switch (probe_targets(dp)) {
	case TARGETS_TRACEPOINT:
		resolve_trace_target(sc, e, dp->tp);
		return;
	case TARGETS_SDT:
		if (!sdt_target_type(sc->sm, dp, e) && target_fail(sc))
			sema_error(e->loc, sc->sm, "mark '%s' has no '%s'", dp->mark, e->name);
		return;
	case TARGETS_PLT:
		if (strcmp(e->name, "$$name") == 0 && !e->comps.len) {
			e->type = TYPE_STRING;
			return;
		}
		if (target_fail(sc))
			sema_error(e->loc, sc->sm, "a .plt probe has only $$name (the function "
				   "called), not '%s'", e->name);
		return;
	case TARGETS_USYSCALL:
		resolve_usyscall_target(sc, e);
		return;
	case TARGETS_NETFILTER:
		resolve_netfilter_target(sc, e, false);
		return;
	case TARGETS_PROCFS:	/* only inside @defined(): uses were rewritten */
		if (strcmp(e->name, "$value") == 0 && !e->comps.len) {
			e->type = TYPE_STRING;
			return;
		}
		/* fall through */
	case TARGETS_NONE:
		/* reported by type inference, if elision keeps it (stap's semok/optimize) */
		if (target_fail(sc))
			e->unresolved = arena_printf("target variable '%s' is not available at probe point '%s'",
						     e->name, dp->point);
		return;
	case TARGETS_KFUNC:
		if (kfunc_targets_checkable(dp)) {
			resolve_kfunc_target(sc, e);
			return;
		}
		/* no BTF for it: its debuginfo is read later */
		/* fall through */
	case TARGETS_DWARF:
		/* checked against debuginfo in a later pass */
		e->type = e->pretty || e->name[1] == '$' ? TYPE_STRING : TYPE_LONG;
		return;
	}
}

/* @defined(...) *EP is now known: the constant DEFINED. */
static void fold_defined(struct scope *sc, struct expr **ep, bool defined)
{
	struct expr *num = ast_expr(EXPR_NUMBER, (*ep)->loc);

	num->num = defined;
	num->type = TYPE_LONG;
	sc->folds++;
	*ep = num;
}

/* @defined(X): 1 or 0 where this pass can tell, else left for later. */
static void rx_defined(struct scope *sc, struct expr **ep)
{
	struct expr *e = *ep, *in = e->left;

	if (in->kind == EXPR_PERF) {	/* stap: a counter that is not there is not defined */
		fold_defined(sc, ep, probes_counter_read(sc->sm, sc->dp, in, true));
		return;
	}
	if (in->kind != EXPR_TARGET || !targets_checkable(sc->dp)) {
		rx(sc, &e->left);
		e->type = TYPE_LONG;
		return;
	}
	sc->quiet++;
	sc->failed = false;
	resolve_target(sc, in);
	sc->quiet--;
	fold_defined(sc, ep, !sc->failed);
	sc->failed = false;
}

/*
 * @entry outside a .return probe (or in a function) stays as it is: elision
 * may drop it, and type inference refuses what is left (as stap, whose
 * optimizer runs first: its semok/entry02).
 */
static void rx_entry(struct scope *sc, struct expr *e)
{
	struct derived_probe *dp = sc->dp;

	if (dp && dp->is_return && probe_targets(dp) == TARGETS_NONE)
		sema_error(e->loc, sc->sm, "@entry can only be used in a .return probe");
	rx(sc, &e->left);
}

/* ---- expressions ---- */

static void rx_keys(struct scope *sc, struct expr *e, bool star_ok)
{
	for (int i = 0; i < e->args.len; i++) {
		struct expr **a = (struct expr **)&e->args.items[i];

		if (*a)
			rx(sc, a);
		else if (!star_ok)
			sema_error(e->loc, sc->sm, "'*' can only be used in foreach, delete and 'in'");
	}
}

/* hist: @hist_log(v) | @hist_linear(v, start, stop, interval) */
static void rx_hist(struct scope *sc, struct expr *e)
{
	rx(sc, &e->left);
	for (int i = 0; i < e->args.len; i++) {
		struct expr *a = VEC_AT(&e->args, i);

		if (a->kind != EXPR_NUMBER)
			sema_error(a->loc, sc->sm, "the parameters of @hist_linear must be literal numbers");
	}
	if (e->hist == HIST_LINEAR && e->args.len == 3) {
		struct expr *lo = VEC_AT(&e->args, 0), *hi = VEC_AT(&e->args, 1);
		struct expr *step = VEC_AT(&e->args, 2);

		if (lo->kind == EXPR_NUMBER && hi->kind == EXPR_NUMBER && lo->num >= hi->num)
			sema_error(hi->loc, sc->sm, "@hist_linear's end must be above its start");
		else if (step->kind == EXPR_NUMBER && step->num <= 0)
			sema_error(step->loc, sc->sm, "@hist_linear's interval must be positive");
	}
}

/* An element of an array or a histogram's bucket: left[args] */
static void rx_index(struct scope *sc, struct expr *e, bool star_ok)
{
	if (e->left->kind == EXPR_SYMBOL) {
		resolve_symbol(sc, e->left, e->args.len);
		e->decl = e->left->decl;
	} else if (e->left->kind == EXPR_HIST) {
		rx_hist(sc, e->left);
		if (e->args.len != 1)
			sema_error(e->loc, sc->sm, "a histogram is indexed by one bucket number");
	} else {
		sema_error(e->loc, sc->sm, "only arrays and histograms can be indexed");
		rx(sc, &e->left);
	}
	rx_keys(sc, e, star_ok);
}

/* $verdict = V in a guru netfilter probe; anything else written there is refused. */
static void netfilter_write(struct scope *sc, struct expr *e, const char *op)
{
	const char *why = probes_netfilter_target(sc->sm, e, true);

	if (why)
		sema_error(e->loc, sc->sm, "%s", why);
	else if (strcmp(op, "=") != 0)
		sema_error(e->loc, sc->sm, "only '=' can write to a target variable, not '%s'", op);
}

/* The target of = += ++ -- <<<: a variable, an element, or a $var (guru). */
static void rx_lvalue(struct scope *sc, struct expr *e, const char *op)
{
	if (e->kind == EXPR_SYMBOL) {
		resolve_symbol(sc, e, 0);
	} else if (e->kind == EXPR_INDEX && e->left->kind == EXPR_SYMBOL) {
		rx_index(sc, e, false);
	} else if (e->kind == EXPR_TARGET) {
		resolve_target(sc, e);
		if (sc->dp && probe_targets(sc->dp) == TARGETS_TRACEPOINT)
			sema_error(e->loc, sc->sm, "tracepoint field '%s' is read-only", e->name);
		else if (sc->dp && probe_targets(sc->dp) == TARGETS_USYSCALL)
			sema_error(e->loc, sc->sm, "utrace '%s' variable is read-only", e->name);
		else if (sc->dp && probe_targets(sc->dp) == TARGETS_NETFILTER)
			netfilter_write(sc, e, op);
		else
			sema_target_write(sc->sm, sc->dp, e, op);
	} else if (e->kind == EXPR_ATVAR || e->kind == EXPR_CAST || e->kind == EXPR_AUTOCAST) {
		rx(sc, &e);
		sema_target_write(sc->sm, sc->dp, e, op);
	} else {
		sema_error(e->loc, sc->sm, "'%s' needs a variable or an array element on its left", op);
		rx(sc, &e);
	}
}

static struct expr *number(struct srcloc loc, int64_t v)
{
	struct expr *n = ast_expr(EXPR_NUMBER, loc);

	n->num = v;
	n->type = TYPE_LONG;
	return n;
}

/*
 * A $var.  With --skip-badvars one that cannot be read becomes 0, with
 * stap's warning (its const_folder); inside @defined() it is still asked.
 */
static void rx_target(struct scope *sc, struct expr **ep)
{
	struct expr *e = *ep;
	bool failed = sc->failed;

	if (!sc->sm->s->skip_badvars || sc->quiet) {
		resolve_target(sc, e);
		return;
	}
	sc->quiet++;
	sc->failed = false;
	resolve_target(sc, e);
	sc->quiet--;
	if (sc->failed) {
		sema_warning(e->loc, sc->sm, "bad $context variable being substituted with literal 0");
		*ep = number(e->loc, 0);
	}
	sc->failed = failed;
}

/*
 * "foo" . "bar" is "foobar", as stap's const_folder makes it (its
 * transok/literal_tmp: no temporary).  Bodies keep their escapes, so not
 * when the left one ends in a numeric escape the right one could extend.
 */
static void fold_concat(struct expr **ep)
{
	struct expr *e = *ep, *s;
	const char *l = e->left->str, *bs;

	if (strcmp(e->op, ".") != 0 || e->left->kind != EXPR_STRING || e->right->kind != EXPR_STRING)
		return;
	bs = strrchr(l, '\\');
	if (bs && strlen(bs) <= 4 && (bs[1] == 'x' || (bs[1] >= '0' && bs[1] <= '7')))
		return;
	s = ast_expr(EXPR_STRING, e->loc);
	s->str = arena_printf("%s%s", l, e->right->str);
	*ep = s;
}

/* Resolve the condition *CP; true if @defined made it a constant. */
static bool rx_cond(struct scope *sc, struct expr **cp)
{
	int before = sc->folds;

	rx(sc, cp);
	return sc->folds > before && (*cp)->kind == EXPR_NUMBER;
}

static void rx_ternary(struct scope *sc, struct expr **ep)
{
	struct expr *e = *ep;

	if (rx_cond(sc, &e->cond)) {
		*ep = e->cond->num ? e->left : e->right;
		sc->folds++;
		rx(sc, ep);
		return;
	}
	rx(sc, &e->left);
	rx(sc, &e->right);
}

static void rx_logical(struct scope *sc, struct expr **ep)
{
	struct expr *e = *ep;
	bool and = strcmp(e->op, "&&") == 0;

	if (!rx_cond(sc, &e->left)) {
		rx(sc, &e->right);
		return;
	}
	if ((e->left->num != 0) != and) {	/* the left decides */
		*ep = number(e->loc, !and);
		sc->folds++;
	} else if (rx_cond(sc, &e->right)) {	/* so does the right, then */
		*ep = number(e->loc, e->right->num != 0);
		sc->folds++;
	}
}

static void rx_unary(struct scope *sc, struct expr **ep)
{
	struct expr *e = *ep;
	int64_t v;

	if (!rx_cond(sc, &e->left))
		return;
	v = e->left->num;
	switch (e->op[0]) {
	case '!': v = !v; break;
	case '-': v = (int64_t)(0 - (uint64_t)v); break;
	case '~': v = ~v; break;
	default: break;
	}
	*ep = number(e->loc, v);
	sc->folds++;
}

static void rx_in(struct scope *sc, struct expr *e)
{
	struct expr *arr = e->right;

	rx_keys(sc, e, true);
	if (arr->kind == EXPR_INDEX)
		arr = arr->left;
	if (arr->kind == EXPR_SYMBOL)
		resolve_symbol(sc, arr, e->args.len);
	else
		sema_error(arr->loc, sc->sm, "'in' needs an array on its right");
}

static void rx_stat_operand(struct scope *sc, struct expr **ep)
{
	struct expr *e = *ep;

	if (e->kind == EXPR_INDEX && e->left->kind == EXPR_SYMBOL)
		rx_index(sc, e, false);
	else
		rx(sc, ep);
}

static void rx_comps(struct scope *sc, struct expr *e)
{
	for (int i = 0; i < e->comps.len; i++) {
		struct target_comp *tc = VEC_AT(&e->comps, i);

		if (tc->index_expr)
			rx(sc, &tc->index_expr);
	}
}

static void rx(struct scope *sc, struct expr **ep)
{
	struct expr *e;

	/* procfs probes: $value becomes a call (probes_procfs.h) */
	if (sc->dp && probe_targets(sc->dp) == TARGETS_PROCFS)
		probes_procfs_value(sc->sm, sc->dp, ep);
	e = *ep;
	switch (e->kind) {
	case EXPR_NUMBER:
	case EXPR_STRING:
	case EXPR_REGISTER:
	case EXPR_EMBEDDED:
		break;
	case EXPR_DEREF:
		rx(sc, &e->left);
		break;
	case EXPR_SYMBOL:
		resolve_symbol(sc, e, 0);
		break;
	case EXPR_INDEX:
		rx_index(sc, e, false);
		break;
	case EXPR_CALL:
		resolve_call(sc, e);
		break;
	case EXPR_UNARY:
		rx_unary(sc, ep);
		break;
	case EXPR_PREFIX:
	case EXPR_POSTFIX:
		rx_lvalue(sc, e->left, e->op);
		break;
	case EXPR_LOGICAL:
		rx_logical(sc, ep);
		break;
	case EXPR_BINARY:
		rx(sc, &e->left);
		rx(sc, &e->right);
		fold_concat(ep);
		break;
	case EXPR_COMPARE:
	case EXPR_REGEX:
		rx(sc, &e->left);
		rx(sc, &e->right);
		break;
	case EXPR_TERNARY:
		rx_ternary(sc, ep);
		break;
	case EXPR_ASSIGN:
		rx_lvalue(sc, e->left, e->op);
		rx(sc, &e->right);
		break;
	case EXPR_IN:
		rx_in(sc, e);
		break;
	case EXPR_STAT:
		rx_stat_operand(sc, &e->left);
		if (e->right)
			rx(sc, &e->right);
		break;
	case EXPR_HIST:
		sema_error(e->loc, sc->sm, "a histogram can only be printed, indexed or iterated with foreach");
		rx_hist(sc, e);
		break;
	case EXPR_TARGET:
		rx_target(sc, ep);
		break;
	case EXPR_CAST:
	case EXPR_ATVAR:
	case EXPR_AUTOCAST:
		if (e->left)
			rx(sc, &e->left);
		rx_comps(sc, e);
		break;
	case EXPR_DEFINED:
		rx_defined(sc, ep);
		break;
	case EXPR_PERF:
		probes_counter_read(sc->sm, sc->dp, e, false);
		break;
	case EXPR_ENTRY:
		rx_entry(sc, e);
		break;
	}
}

/* Is E made of reads and operators only, with a $var among them (*TARGET)? */
static bool pure_reads(const struct expr *e, bool *target)
{
	switch (e->kind) {
	case EXPR_NUMBER:
	case EXPR_STRING:
	case EXPR_SYMBOL:
		return true;
	case EXPR_TARGET:
		for (int i = 0; i < e->comps.len; i++)
			if (((struct target_comp *)VEC_AT(&e->comps, i))->index_expr)
				return false;
		*target = true;
		return true;
	case EXPR_UNARY:
		return pure_reads(e->left, target);
	case EXPR_BINARY:
	case EXPR_COMPARE:
	case EXPR_LOGICAL:
		return pure_reads(e->left, target) && pure_reads(e->right, target);
	case EXPR_TERNARY:
		return pure_reads(e->cond, target) && pure_reads(e->left, target) &&
		       pure_reads(e->right, target);
	default:
		return false;
	}
}

/*
 * A statement that only reads, and reads a $var, has no effect: it goes
 * before its $vars are checked, as stap's optimizer drops it first (its
 * semok/optimize.stp, transok/ten.stp), so a $var the point lacks is no
 * error there.  Elision (sema_use.c) drops the other statements with no
 * effect, once everything is resolved.
 */
static bool drop_pure_target_stmt(struct scope *sc, struct stmt **sp)
{
	struct stmt *s = *sp;
	bool target = false;
	struct stapfile *f;

	if (sc->sm->s->unoptimized || !pure_reads(s->expr, &target) || !target)
		return false;
	f = sema_file_of(sc->sm, s->loc);
	if (f && !f->is_tapset)
		diag_warning(s->loc, "statement has no effect");
	*sp = ast_stmt(STMT_NULL, s->loc);
	return true;
}

/* ---- statements ---- */

static void rs_foreach_array(struct scope *sc, struct stmt *s)
{
	struct expr *a = s->array;
	int nkeys = s->keys.len;

	if (a->kind == EXPR_HIST) {
		rx_hist(sc, a);
		if (nkeys != 1)
			sema_error(a->loc, sc->sm, "a histogram has one key (the bucket), not %d", nkeys);
	} else if (a->kind == EXPR_SYMBOL) {
		resolve_symbol(sc, a, nkeys ? nkeys : USE_ARRAY);
	} else if (a->kind == EXPR_INDEX && a->left->kind == EXPR_SYMBOL) {
		resolve_symbol(sc, a->left, a->args.len);
		a->decl = a->left->decl;
		rx_keys(sc, a, true);
		if (nkeys && nkeys != a->args.len)
			sema_error(a->loc, sc->sm, "foreach has %d key %s but the slice has %d",
				   nkeys, plural(nkeys, "variable", "variables"), a->args.len);
	} else {
		sema_error(a->loc, sc->sm, "foreach needs an array or a histogram after 'in'");
	}
}

/* ---- foreach over a histogram's buckets ---- */

/* Are histogram H's parameters literal numbers rx_hist() takes? */
static bool hist_literal(const struct expr *h)
{
	for (int i = 0; i < h->args.len; i++)
		if (((struct expr *)VEC_AT(&h->args, i))->kind != EXPR_NUMBER)
			return false;
	return h->hist == HIST_LOG || (h->args.len == 3 &&
	       ((struct expr *)VEC_AT(&h->args, 2))->num > 0);
}

/* The buckets of histogram H: stap's count, underflow and overflow included. */
static int64_t hist_buckets(const struct expr *h)
{
	const struct expr *lo, *hi, *step;

	if (h->hist == HIST_LOG)
		return 128;	/* stap's HIST_LOG_BUCKETS */
	lo = VEC_AT(&h->args, 0);
	hi = VEC_AT(&h->args, 1);
	step = VEC_AT(&h->args, 2);
	return (hi->num - lo->num) / step->num + 3;
}

/*
 * foreach ([V =] B in @hist_*(S) [limit N]) walks every bucket of the
 * histogram, the empty ones too, in order (a sort is ignored), V its
 * count: stap's loop (translate.cxx), lowered here into one every
 * runtime already has:
 *
 *	{ L = N; K = 0;
 *	  for (B = 0; B < BUCKETS; B++) { if (K++ >= L) break; V = @hist_*(S)[B]; BODY } }
 *
 * L and K are new locals named after the loop's place; without a limit
 * they and the test are left out.  Without V, VALUE is a new local too,
 * whose stores stay (declinfo's keep): the loop reads the histogram, as
 * stap's does, so S is read (not printed at exit) and typed.  The block
 * is then resolved as written.
 */
static void lower_hist_foreach(struct stmt **sp, struct expr *value)
{
	struct stmt *s = *sp, *block = ast_stmt(STMT_BLOCK, s->loc);
	struct stmt *loop = ast_stmt(STMT_FOR, s->loc), *body = ast_stmt(STMT_BLOCK, s->loc);
	struct expr *b = VEC_AT(&s->keys, 0), *h = s->array, *bucket;
	struct srcloc at = s->loc;

	if (s->limit) {
		const char *lim = arena_printf("__hist_limit_%d_%d", at.line, at.col);
		const char *cnt = arena_printf("__hist_count_%d_%d", at.line, at.col);
		struct stmt *stop = ast_stmt(STMT_IF, at);

		vec_push(&block->body, ast_expr_stmt(ast_binary(EXPR_ASSIGN, at, "=",
								ast_symbol(at, lim), s->limit)));
		vec_push(&block->body, ast_expr_stmt(ast_binary(EXPR_ASSIGN, at, "=",
								ast_symbol(at, cnt),
								ast_number(at, 0))));
		stop->expr = ast_binary(EXPR_COMPARE, at, ">=",
					ast_binary(EXPR_POSTFIX, at, "++", ast_symbol(at, cnt), NULL),
					ast_symbol(at, lim));
		stop->then = ast_stmt(STMT_BREAK, at);
		vec_push(&body->body, stop);
	}
	bucket = ast_binary(EXPR_INDEX, at, NULL, h, NULL);
	bucket->foreach_bucket = true;	/* stap reads an empty one's buckets as 0 */
	vec_push(&bucket->args, ast_symbol(b->loc, b->name));
	vec_push(&body->body, ast_expr_stmt(ast_binary(EXPR_ASSIGN, at, "=", value, bucket)));
	vec_push(&body->body, s->then);
	loop->init = ast_binary(EXPR_ASSIGN, at, "=", b, ast_number(b->loc, 0));
	loop->expr = ast_binary(EXPR_COMPARE, at, "<", ast_symbol(b->loc, b->name),
				ast_number(at, hist_buckets(h)));
	loop->incr = ast_binary(EXPR_POSTFIX, at, "++", ast_symbol(b->loc, b->name), NULL);
	loop->then = body;
	vec_push(&block->body, loop);
	block->lowered_from = s;
	*sp = block;
}

static void rs_foreach(struct scope *sc, struct stmt **sp)
{
	struct stmt *s = *sp;

	if (s->array->kind == EXPR_HIST && s->keys.len == 1 && hist_literal(s->array)) {
		struct expr *value = s->value;

		if (!value)
			value = ast_symbol(s->loc, arena_printf("__hist_value_%d_%d", s->loc.line,
								s->loc.col));
		lower_hist_foreach(sp, value);
		rs(sc, sp);
		if (value->decl)
			sema_declinfo(sc->sm, value->decl)->keep = true;
		return;
	}
	rs_foreach_array(sc, s);
	for (int i = 0; i < s->keys.len; i++)
		resolve_symbol(sc, VEC_AT(&s->keys, i), 0);
	if (s->value)
		resolve_symbol(sc, s->value, 0);
	if (s->limit)
		rx(sc, &s->limit);
	sc->loops++;
	rs(sc, &s->then);
	sc->loops--;
}

static void rs_delete(struct scope *sc, struct stmt *s)
{
	struct expr *e = s->expr;

	if (e->kind == EXPR_SYMBOL)
		resolve_symbol(sc, e, USE_ANY);
	else if (e->kind == EXPR_INDEX && e->left->kind == EXPR_SYMBOL)
		rx_index(sc, e, true);
	else
		sema_error(e->loc, sc->sm, "delete needs a variable, an array or an array element");
}

static void rs_if(struct scope *sc, struct stmt **sp)
{
	struct stmt *s = *sp;

	if (rx_cond(sc, &s->expr)) {
		struct stmt *taken = s->expr->num ? s->then : s->otherwise;

		*sp = taken ? taken : ast_stmt(STMT_NULL, s->loc);
		rs(sc, sp);
		return;
	}
	rs(sc, &s->then);
	if (s->otherwise)
		rs(sc, &s->otherwise);
}

/* while/for; one that @defined() rules out leaves its initializer only, the rest unresolved */
static void rs_loop(struct scope *sc, struct stmt **sp)
{
	struct stmt *s = *sp;

	if (s->init)
		rx(sc, &s->init);
	if (s->expr && rx_cond(sc, &s->expr) && !s->expr->num) {
		*sp = ast_stmt(s->init ? STMT_EXPR : STMT_NULL, s->loc);
		(*sp)->expr = s->init;
		return;
	}
	if (s->incr)
		rx(sc, &s->incr);
	sc->loops++;
	rs(sc, &s->then);
	sc->loops--;
}

static void rs(struct scope *sc, struct stmt **sp)
{
	struct stmt *s = *sp;

	switch (s->kind) {
	case STMT_BLOCK:
		for (int i = 0; i < s->body.len; i++)
			rs(sc, (struct stmt **)&s->body.items[i]);
		break;
	case STMT_EXPR:
		if (drop_pure_target_stmt(sc, sp))
			break;
		rx(sc, &s->expr);
		break;
	case STMT_IF:
		rs_if(sc, sp);
		break;
	case STMT_WHILE:
	case STMT_FOR:
		rs_loop(sc, sp);
		break;
	case STMT_FOREACH:
		rs_foreach(sc, sp);
		break;
	case STMT_RETURN:
		if (s->expr) {
			rx(sc, &s->expr);
			if (sc->func)
				sema_funcinfo(sc->sm, sc->func)->returns_value = true;
		}
		break;
	case STMT_BREAK:
	case STMT_CONTINUE:
		s->outside_loop = !sc->loops;
		break;
	case STMT_DELETE:
		rs_delete(sc, s);
		break;
	case STMT_TRY:
		rs(sc, &s->then);
		if (s->catch_var)
			resolve_symbol(sc, s->catch_var, 0);
		if (s->otherwise)
			rs(sc, &s->otherwise);
		break;
	case STMT_NULL:
	case STMT_NEXT:
	case STMT_EMBEDDED:
		break;
	}
}

/* ---- entry points ---- */

/*
 * A probe point condition is tested where the probe is armed: it may read
 * globals, but neither change a variable nor call a function (stap 4.8's
 * rules and texts).
 */
static void check_condition(struct sema *sm, struct expr *e)
{
	if (!e)
		return;
	if (e->kind == EXPR_ASSIGN || e->kind == EXPR_PREFIX || e->kind == EXPR_POSTFIX)
		sema_error(e->loc, sm, "probe condition must not modify any variables");
	else if (e->kind == EXPR_CALL)
		sema_error(e->loc, sm, "probe condition must not call function '%s'", e->name);
	check_condition(sm, e->left);
	check_condition(sm, e->right);
	check_condition(sm, e->cond);
	for (int i = 0; i < e->args.len; i++)
		check_condition(sm, VEC_AT(&e->args, i));
}

void sema_resolve_probe(struct sema *sm, struct derived_probe *dp)
{
	struct scope sc = { .sm = sm, .locals = &dp->locals, .dp = dp };

	rs(&sc, &dp->body);
	if (dp->cond) {
		struct vec none = { 0 };
		struct scope cs = { .sm = sm, .locals = &none, .globals_only = true };

		check_condition(sm, dp->cond);
		rx(&cs, &dp->cond);
	}
}

void sema_resolve_func(struct sema *sm, struct func *f)
{
	struct scope sc = { .sm = sm, .locals = &f->locals, .func = f };

	for (int i = 0; i < f->params.len; i++)
		sema_declinfo(sm, VEC_AT(&f->params, i));
	if (f->body)
		rs(&sc, &f->body);
	if (f->embedded && !f->ret_declared)
		f->ret_type = TYPE_VOID;
	/* as stap: the value may be kept for the rest of the hit only if the call can be dropped */
	if (f->embedded && strstr(f->embedded, "/* stable */") && !strstr(f->embedded, "/* pure */"))
		sema_error(f->embedded_loc, sm, "stable function must also be /* pure */");
	sema_funcinfo(sm, f)->has_next = func_has_next(sm, f);
}
