/*
 * sema_entry.c - pass 2: @entry(expr) in return probes.
 *
 * A return probe cannot see what its function (or syscall) had at entry,
 * so, as stap does, each @entry(EXPR) becomes a value saved by a companion
 * probe at the entry point and read back at the return:
 *
 *	probe syscall.read.return { printf("%d\n", @entry($count)) }
 *
 * becomes, before its symbols are resolved,
 *
 *	kernel.trace("syscalls:sys_enter_read")	   the companion, through
 *	{ <the syscall.read alias prologue>	   the entry alias when the
 *	  __entry_1[tid(), 1] = $count }	   return came through one
 *	kernel.trace("syscalls:sys_exit_read")
 *	{ __entry_1_v = __entry_1[tid(), 1]; delete __entry_1[tid(), 1]
 *	  <the syscall.read.return alias prologue>
 *	  printf("%d\n", __entry_1_v) }
 *
 * The saved value is keyed by the thread (tid()) and by a number for the
 * return probe, so that one global serves every probe a wildcard derived
 * from the same @entry.  The return probe reads and deletes its values
 * first, whether or not its body then uses them.  As in stap for uprobes
 * and tracepoints, one value is kept per thread and probe: a function that
 * re-enters itself on the same thread before returning (recursion) sees
 * the innermost call's value at the outer return, then nothing (0 or "").
 * Kernel function returns keep a stack per thread instead (a depth count
 * beside the values), as stap's kretprobes do.  A syscall cannot nest.
 *
 * Entry counterparts: syscalls:sys_exit_X -> syscalls:sys_enter_X (through
 * the alias syscall.X when the probe came through syscall.X.return, so
 * that @entry(fd) sees the alias's variables), raw_syscalls:sys_exit ->
 * raw_syscalls:sys_enter, and .return of kernel and process functions ->
 * the same function's entry.  In a .return of a kernel or process
 * function, $param means @entry($param), as in stap: every target
 * variable but $return and $$return is read at entry.
 *
 * A value read under an @defined() choice is saved and fetched under the
 * same choice: in
 *
 *	probe kernel.function("do_filp_open").return
 *	{ println(@defined($pathname) ? $pathname : $filename) }
 *
 * the companion saves $pathname only if @defined($pathname) and $filename
 * only if !@defined($pathname), so that the entry probe never reads a
 * parameter the function lacks (stap never expands one: its @defined
 * folds first).  The guard is what a branch's being taken implies of the
 * enclosing ?:, if, while, for, && and || conditions, kept to the
 * @defined($param) tests that mean the same at the entry as at the
 * return; the return probe fetches under the same guard.
 *
 * The synthesized globals (__entry_N) belong to a file of their own that
 * counts as a tapset: they are not exported as metrics, not printed at
 * exit, and their names avoid every name the script spells.
 */
#include <string.h>
#include "diag.h"
#include "parse.h"
#include "probe_kinds.h"
#include "probes.h"
#include "probes_sys.h"
#include "sema_int.h"

/* What one elaboration's rewrite keeps across probes. */
struct entry_state {
	struct sema *sm;		/* whose state this is */
	unsigned generation;		/* of the arena sm is in (a later sema may reuse its address) */
	struct stapfile *file;		/* the synthesized globals' file */
	const char *prefix;		/* "__entry", or longer if the script uses it */
	struct hmap by_loc;		/* "src:line:col" of an @entry -> its global */
	int globals;			/* how many made */
	int returns;			/* return probes rewritten, numbering their keys */
};

static struct entry_state state;

/* One return probe being rewritten. */
struct ew {
	struct sema *sm;
	struct derived_probe *dp;
	bool implicit;			/* $vars mean @entry($vars) (function returns) */
	bool nested;			/* keep a depth stack per thread (kernel functions) */
	const char *why;		/* set when there is no counterpart: the error */
	int key;			/* this probe's number in the keys */
	struct stmt *saves;		/* the companion's body */
	struct stmt *fetches;		/* what goes before the return body */
	struct vardecl *depth;		/* the depth global, when nested */
	struct stmt *pop;		/* after the fetches, when nested */
	struct expr *guard;		/* what @defined() choices imply here, or NULL */
	int locals;
};

/* ---- small tree builders ---- */

static struct expr *call0(struct srcloc loc, const char *name)
{
	struct expr *e = ast_expr(EXPR_CALL, loc);

	e->name = name;
	return e;
}

/* G[tid(), key] or, nested, G[tid(), key, depth[tid(), key]] */
static struct expr *element(struct ew *w, struct srcloc loc, struct vardecl *g, bool stacked)
{
	struct expr *e = ast_expr(EXPR_INDEX, loc);

	e->left = ast_symbol(loc, g->name);
	vec_push(&e->args, call0(loc, "tid"));
	vec_push(&e->args, ast_number(loc, w->key));
	((struct expr *)VEC_AT(&e->args, 1))->entry_key = true;	/* a table's in merged C */
	if (stacked)
		vec_push(&e->args, element(w, loc, w->depth, false));
	return e;
}

/* ---- guards: the @defined() choices a value is read under ---- */

static bool is_return_var(const struct expr *e);

static struct expr *both(struct expr *a, struct expr *b)
{
	if (!a || !b)
		return a ? a : b;
	return ast_binary(EXPR_LOGICAL, a->loc, "&&", a, b);
}

static struct expr *either(struct expr *a, struct expr *b)
{
	return a && b ? ast_binary(EXPR_LOGICAL, a->loc, "||", a, b) : NULL;
}

/*
 * Does @defined(IN) mean the same in the companion as in the return probe?
 * @defined(@entry($x)) always does (it is @defined($x) there); @defined($x)
 * where $x means @entry($x).
 */
static bool same_at_entry(const struct ew *w, const struct expr *in)
{
	bool entry = in->kind == EXPR_ENTRY;

	if (entry)
		in = in->left;
	return (entry || w->implicit) && in->kind == EXPR_TARGET && !is_return_var(in);
}

/*
 * What COND being TRUE (or false) implies, as a condition made of the
 * @defined() tests in it that the companion can evaluate too; NULL when
 * it implies nothing of them.
 */
static struct expr *implied(const struct ew *w, const struct expr *cond, bool truth)
{
	struct expr *l, *r;

	switch (cond->kind) {
	case EXPR_DEFINED:
		if (!same_at_entry(w, cond->left))
			return NULL;
		l = sema_resolve_copy_expr(cond);
		if (l->left->kind == EXPR_ENTRY)
			l->left = l->left->left;
		if (truth)
			return l;
		r = ast_expr(EXPR_UNARY, cond->loc);
		r->op = "!";
		r->left = l;
		return r;
	case EXPR_UNARY:
		return strcmp(cond->op, "!") ? NULL : implied(w, cond->left, !truth);
	case EXPR_LOGICAL:
		l = implied(w, cond->left, truth);
		r = implied(w, cond->right, truth);
		return (strcmp(cond->op, "&&") == 0) == truth ? both(l, r) : either(l, r);
	default:
		return NULL;
	}
}

/* S under the current guard: "if (guard) S", or S itself when there is none. */
static struct stmt *guarded(struct ew *w, struct stmt *s)
{
	struct stmt *i;

	if (!w->guard)
		return s;
	i = ast_stmt(STMT_IF, s->loc);
	i->expr = sema_resolve_copy_expr(w->guard);
	i->then = s;
	return i;
}

/* ---- names and globals ---- */

static bool script_spells(struct sema *sm, const char *s)
{
	const struct source *src = sm->script->src;

	return src && src->text && strstr(src->text, s);
}

static void state_init(struct sema *sm)
{
	static struct source src = { .name = "<@entry>", .text = "", .is_tapset = true };

	if (state.sm == sm && state.generation == arena_generation())
		return;
	memset(&state, 0, sizeof(state));
	state.sm = sm;
	state.generation = arena_generation();
	state.by_loc.str_keys = true;
	state.file = ARENA_NEW(struct stapfile);
	state.file->src = &src;
	state.file->is_tapset = true;
	state.prefix = "__entry";
	while (script_spells(sm, state.prefix))
		state.prefix = arena_printf("%s_", state.prefix);
}

/* A new global of the rewrite, found by name as any tapset global is. */
static struct vardecl *new_global(struct sema *sm, struct srcloc loc, int arity)
{
	const char *name = arena_printf("%s_%d", state.prefix, ++state.globals);
	struct vardecl *d = ast_vardecl(name, loc, VAR_GLOBAL);
	struct vec *v = hmap_get(&sm->globals, name);

	d->arity = arity;
	d->file = state.file;
	if (!v) {
		v = ARENA_NEW(struct vec);
		hmap_put(&sm->globals, name, v);
	}
	vec_push(v, d);
	vec_push(&sm->script->globals, d);
	sema_declinfo(sm, d)->pulled = true;
	sema_declinfo(sm, d)->arity_from = loc;
	return d;
}

/* The global that saves the @entry at LOC (one per place in the source). */
static struct vardecl *global_for(struct ew *w, struct srcloc loc)
{
	char *k = arena_printf("%p:%d:%d:%d", (const void *)loc.src, loc.line, loc.col, w->nested);
	struct vardecl *g = hmap_get(&state.by_loc, k);

	if (!g) {
		g = new_global(w->sm, loc, w->nested ? 3 : 2);
		hmap_put(&state.by_loc, k, g);
	}
	return g;
}

/* ---- the walk ---- */

static void walk_expr(struct ew *w, struct expr **ep);
static void walk_stmt(struct ew *w, struct stmt *s);

/* @entry inside @entry means nothing more: drop the inner ones. */
static void strip_entries(struct expr **ep)
{
	struct expr *e = *ep;

	if (!e)
		return;
	while (e->kind == EXPR_ENTRY)
		*ep = e = e->left;
	strip_entries(&e->left);
	strip_entries(&e->right);
	strip_entries(&e->cond);
	for (int i = 0; i < e->args.len; i++)
		strip_entries((struct expr **)&e->args.items[i]);
	for (int i = 0; i < e->comps.len; i++)
		strip_entries(&((struct target_comp *)VEC_AT(&e->comps, i))->index_expr);
}

static void no_counterpart(struct ew *w, struct expr **ep)
{
	struct expr *e = *ep;

	if (e->kind == EXPR_ENTRY) {
		if (sema_error(e->loc, w->sm, "%s", w->why) && w->dp->is_return)
			diag_hint("'%s' has no entry probe to save the value in", w->dp->point);
	}
	/* keep going with a harmless value: the pass stops after resolving anyway */
	*ep = ast_number(e->loc, 0);
}

/* Move the value of *EP (an @entry or, implicitly, a $var) to the companion. */
static void save_at_entry(struct ew *w, struct expr **ep)
{
	struct expr *e = *ep, *inner = e->kind == EXPR_ENTRY ? e->left : e, *save;
	struct srcloc loc = e->loc;
	struct stmt *fetch, *del;
	struct vardecl *g;
	const char *local;

	if (w->why) {
		no_counterpart(w, ep);
		return;
	}
	strip_entries(&inner);
	g = global_for(w, loc);
	local = arena_printf("%s_v%d", g->name, ++w->locals);
	save = ast_binary(EXPR_ASSIGN, loc, "=", element(w, loc, g, w->nested), inner);
	vec_push(&w->saves->body, guarded(w, ast_expr_stmt(save)));
	fetch = w->guard ? ast_stmt(STMT_BLOCK, loc) : w->fetches;
	save = ast_binary(EXPR_ASSIGN, loc, "=", ast_symbol(loc, local), element(w, loc, g, w->nested));
	save->right->saved = inner;	/* its C type, for autocasts (sema_autocast.c) */
	vec_push(&fetch->body, ast_expr_stmt(save));
	del = ast_stmt(STMT_DELETE, loc);
	del->expr = element(w, loc, g, w->nested);
	vec_push(&fetch->body, del);
	if (w->guard)
		vec_push(&w->fetches->body, guarded(w, fetch));
	*ep = ast_symbol(loc, local);
}

static bool is_return_var(const struct expr *e)
{
	return !strcmp(e->name, "$return") || !strcmp(e->name, "$$return");
}

static void walk_exprs(struct ew *w, struct vec *v)
{
	for (int i = 0; i < v->len; i++)
		if (VEC_AT(v, i))
			walk_expr(w, (struct expr **)&v->items[i]);
}

/* The target of an assignment stays where it is; only its index expressions move on. */
static void walk_lvalue(struct ew *w, struct expr **ep)
{
	struct expr *e = *ep;

	if (e->kind != EXPR_TARGET) {
		walk_expr(w, ep);
		return;
	}
	for (int i = 0; i < e->comps.len; i++) {
		struct target_comp *tc = VEC_AT(&e->comps, i);

		if (tc->index_expr)
			walk_expr(w, &tc->index_expr);
	}
}

/* Walk *EP, taken only when COND is TRUTH (an @defined() choice, maybe). */
static void walk_expr_when(struct ew *w, struct expr **ep, const struct expr *cond, bool truth)
{
	struct expr *outer = w->guard;

	w->guard = both(outer, implied(w, cond, truth));
	walk_expr(w, ep);
	w->guard = outer;
}

static void walk_stmt_when(struct ew *w, struct stmt *s, const struct expr *cond, bool truth)
{
	struct expr *outer = w->guard;

	w->guard = both(outer, implied(w, cond, truth));
	walk_stmt(w, s);
	w->guard = outer;
}

static void walk_expr(struct ew *w, struct expr **ep)
{
	struct expr *e = *ep;

	if (!e)
		return;
	switch (e->kind) {
	case EXPR_TERNARY:
		walk_expr(w, &e->cond);
		walk_expr_when(w, &e->left, e->cond, true);
		walk_expr_when(w, &e->right, e->cond, false);
		return;
	case EXPR_LOGICAL:	/* the right side runs when the left did not decide */
		walk_expr(w, &e->left);
		walk_expr_when(w, &e->right, e->left, strcmp(e->op, "&&") == 0);
		return;
	case EXPR_ENTRY:
		save_at_entry(w, ep);
		return;
	case EXPR_DEFINED:	/* asks whether a $var exists, not for its value */
		if (w->implicit)	/* where $x is @entry($x) already, so that it folds */
			strip_entries(&e->left);
		return;
	case EXPR_TARGET:
		if (w->implicit && !is_return_var(e)) {
			save_at_entry(w, ep);
			return;
		}
		break;
	case EXPR_ASSIGN:
	case EXPR_PREFIX:
	case EXPR_POSTFIX:
		walk_lvalue(w, &e->left);
		walk_expr(w, &e->right);
		return;
	default:
		break;
	}
	walk_expr(w, &e->left);
	walk_expr(w, &e->right);
	walk_expr(w, &e->cond);
	walk_exprs(w, &e->args);
	for (int i = 0; i < e->comps.len; i++)
		walk_expr(w, &((struct target_comp *)VEC_AT(&e->comps, i))->index_expr);
}

static void walk_stmt(struct ew *w, struct stmt *s)
{
	bool conditional;

	if (!s)
		return;
	conditional = s->expr && (s->kind == STMT_IF || s->kind == STMT_WHILE ||
				  s->kind == STMT_FOR);
	for (int i = 0; i < s->body.len; i++)
		walk_stmt(w, VEC_AT(&s->body, i));
	walk_expr(w, &s->init);
	if (s->kind == STMT_DELETE)
		walk_lvalue(w, &s->expr);
	else
		walk_expr(w, &s->expr);
	if (conditional) {
		walk_stmt_when(w, s->then, s->expr, true);
		walk_stmt_when(w, s->otherwise, s->expr, false);
		walk_expr_when(w, &s->incr, s->expr, true);
	} else {
		walk_stmt(w, s->then);
		walk_stmt(w, s->otherwise);
		walk_expr(w, &s->incr);
	}
	walk_expr(w, &s->array);
	walk_expr(w, &s->limit);
}

/* ---- which probes, and their counterparts ---- */

static bool is_syscall_exit(const struct tracepoint *tp)
{
	return tp && ((!strcmp(tp->system, "syscalls") && !strncmp(tp->name, "sys_exit_", 9)) ||
		      (!strcmp(tp->system, "raw_syscalls") && !strcmp(tp->name, "sys_exit")));
}

/* "sys_exit_read" -> "sys_enter_read", "sys_exit" -> "sys_enter" */
static const char *enter_name(const struct tracepoint *tp)
{
	return arena_printf("sys_enter%s", tp->name + 8);
}

/* The innermost alias of DP's chain that has a NAME.return name, and that name. */
static struct probe_point *return_alias_name(struct derived_probe *dp)
{
	for (int i = dp->aliases.len - 1; i >= 0; i--) {
		struct probe_alias *a = VEC_AT(&dp->aliases, i);

		for (int j = 0; j < a->names.len; j++) {
			struct probe_point *n = VEC_AT(&a->names, j);
			struct probe_comp *last = VEC_AT(&n->comps, n->comps.len - 1);

			if (n->comps.len > 1 && !strcmp(last->name, "return") && !last->arg)
				return n;
		}
	}
	return NULL;
}

static struct probe_point *point_of(struct srcloc loc, struct vec *comps)
{
	struct probe_point *pt = ARENA_NEW(struct probe_point);

	pt->comps = *comps;
	pt->optional = true;
	pt->loc = loc;
	return pt;
}

/* The point NAME without its last component (".return"). */
static struct probe_point *without_return(struct srcloc loc, struct probe_point *name)
{
	struct vec comps = { 0 };

	for (int i = 0; i < name->comps.len - 1; i++)
		vec_push(&comps, VEC_AT(&name->comps, i));
	return point_of(loc, &comps);
}

static struct probe_point *trace_point(struct srcloc loc, const char *sys, const char *name)
{
	struct vec comps = { 0 };
	struct probe_comp *k = ARENA_NEW(struct probe_comp), *t = ARENA_NEW(struct probe_comp);

	k->name = "kernel";
	k->loc = loc;
	t->name = "trace";
	t->loc = loc;
	t->arg = ast_expr(EXPR_STRING, loc);
	t->arg->str = arena_printf("%s:%s", sys, name);
	vec_push(&comps, k);
	vec_push(&comps, t);
	return point_of(loc, &comps);
}

/* Is C (just derived) the entry counterpart of return probe DP? */
static bool counterpart_of(const struct derived_probe *c, const struct derived_probe *dp,
			   const char *enter)
{
	if (c->kind != dp->kind || c->is_return)
		return false;
	switch (probe_class(c)) {
	case PCLASS_TRACEPOINT:
		return !strcmp(c->tp->system, dp->tp->system) && !strcmp(c->tp->name, enter);
	case PCLASS_UPROBE:
		return c->entry_addr == dp->entry_addr && c->elf_path && dp->elf_path &&
		       !strcmp(c->elf_path, dp->elf_path);
	default:
		return c->function && dp->function && !strcmp(c->function, dp->function);
	}
}

/*
 * Derive the companion at PT with the saves for its body; keep only the
 * counterpart of the return probe.  Returns whether there was one.
 */
static bool derive_at(struct ew *w, struct probe_point *pt, const char *enter)
{
	struct program *prog = w->sm->prog;
	struct probe *p = ARENA_NEW(struct probe);
	int before = prog->probes.len, kept = before;

	p->loc = w->dp->probe->loc;
	p->file = w->dp->probe->file;
	p->body = w->saves;
	vec_push(&p->points, pt);
	probes_derive(w->sm, p);
	for (int i = before; i < prog->probes.len; i++) {
		struct derived_probe *c = VEC_AT(&prog->probes, i);

		if (kept == before && counterpart_of(c, w->dp, enter)) {
			c->entry_companion = true;
			prog->probes.items[kept++] = c;
		}
	}
	prog->probes.len = kept;
	return kept > before;
}

static void companion_trace(struct ew *w, struct srcloc loc)
{
	struct tracepoint *tp = w->dp->tp;
	const char *name = enter_name(tp);
	struct probe_point *alias = return_alias_name(w->dp);

	if (alias && derive_at(w, without_return(loc, alias), name))
		return;
	derive_at(w, trace_point(loc, tp->system, name), name);
}

/* The concrete point TEXT, parsed back into a probe point. */
static struct probe_point *parse_point_text(struct sema *sm, struct srcloc loc, const char *text)
{
	struct source *src = ARENA_NEW(struct source);
	struct stapfile *f;
	struct probe_point *pt;
	int errors = diag_error_count();

	src->name = "<@entry>";
	src->text = arena_printf("probe %s {}\n", text);
	src->len = strlen(src->text);
	f = parse_file(sm->s, src);
	if (diag_error_count() != errors || f->probes.len != 1)
		return NULL;
	pt = VEC_AT(&((struct probe *)VEC_AT(&f->probes, 0))->points, 0);
	pt->optional = true;
	pt->loc = loc;
	return pt;
}

/* DP's point without its .return (and .maxactive(N)). */
static const char *entry_point_text(const struct derived_probe *dp)
{
	const char *ret = strstr(dp->point, ".return");

	return ret ? arena_strndup(dp->point, (size_t)(ret - dp->point)) : NULL;
}

/* Function returns: the same function's entry, derived afresh (it probes another address). */
static void companion_function(struct ew *w, struct srcloc loc)
{
	struct derived_probe *dp = w->dp, *c;
	const char *text = entry_point_text(dp);
	struct probe_point *pt = text ? parse_point_text(w->sm, loc, text) : NULL;

	if (pt && derive_at(w, pt, NULL))
		return;
	/* not found again (it should be): the same point and address, with the saves */
	c = ARENA_NEW(struct derived_probe);
	*c = *dp;
	c->id = w->sm->next_probe_id++;
	c->is_return = false;
	c->entry_companion = true;
	c->point = text ? text : dp->point;
	c->aliases = (struct vec){ 0 };
	c->locals = (struct vec){ 0 };
	c->body = w->saves;
	c->cond = sema_resolve_copy_expr(dp->cond);
	vec_push(&w->sm->prog->probes, c);
}

/* Why DP cannot have @entry, or NULL when it can. */
static const char *no_entry_reason(struct sema *sm, struct derived_probe *dp)
{
	if (probe_class(dp) == PCLASS_TRACEPOINT && is_syscall_exit(dp->tp)) {
		if (!sys_tracepoint(sm, dp->tp->system, enter_name(dp->tp)))
			return arena_printf("@entry needs tracepoint '%s:%s', which this kernel lacks",
					    dp->tp->system, enter_name(dp->tp));
		return NULL;
	}
	if (probe_is_function_return(dp))
		return NULL;
	return "@entry can only be used in a .return probe";
}

/* The depth stack of a kernel function return: push at entry, pop at return. */
static void depth_stack(struct ew *w, struct srcloc loc)
{
	struct stmt *pop = ast_stmt(STMT_IF, loc), *del = ast_stmt(STMT_DELETE, loc);
	struct expr *push;

	w->depth = new_global(w->sm, loc, 2);
	push = ast_binary(EXPR_ASSIGN, loc, "+=", element(w, loc, w->depth, false), ast_number(loc, 1));
	vec_push(&w->saves->body, ast_expr_stmt(push));
	pop->expr = ast_binary(EXPR_COMPARE, loc, ">", element(w, loc, w->depth, false), ast_number(loc, 1));
	push = ast_binary(EXPR_ASSIGN, loc, "-=", element(w, loc, w->depth, false), ast_number(loc, 1));
	pop->then = ast_expr_stmt(push);
	del->expr = element(w, loc, w->depth, false);
	pop->otherwise = del;
	w->pop = pop;
}

/* ---- the entry point ---- */

static bool body_has_entry(const struct expr *e, bool implicit);

static bool any_entry(const struct vec *v, bool implicit)
{
	for (int i = 0; i < v->len; i++)
		if (body_has_entry(VEC_AT(v, i), implicit))
			return true;
	return false;
}

static bool body_has_entry(const struct expr *e, bool implicit)
{
	if (!e || e->kind == EXPR_DEFINED)
		return false;
	if (e->kind == EXPR_ENTRY || (implicit && e->kind == EXPR_TARGET && !is_return_var(e)))
		return true;
	return body_has_entry(e->left, implicit) || body_has_entry(e->right, implicit) ||
	       body_has_entry(e->cond, implicit) || any_entry(&e->args, implicit);
}

static bool stmt_has_entry(const struct stmt *s, bool implicit)
{
	if (!s)
		return false;
	for (int i = 0; i < s->body.len; i++)
		if (stmt_has_entry(VEC_AT(&s->body, i), implicit))
			return true;
	return body_has_entry(s->expr, implicit) || stmt_has_entry(s->then, implicit) ||
	       stmt_has_entry(s->otherwise, implicit) || body_has_entry(s->init, implicit) ||
	       body_has_entry(s->incr, implicit) || body_has_entry(s->array, implicit) ||
	       body_has_entry(s->limit, implicit);
}

/* The first statements of DP's new body: the fetches, then (nested) the pop. */
static void prepend_fetches(struct ew *w)
{
	struct stmt *b = ast_stmt(STMT_BLOCK, w->dp->body ? w->dp->body->loc : w->dp->probe->loc);

	vec_push(&b->body, w->fetches);
	if (w->pop)
		vec_push(&b->body, w->pop);
	if (w->dp->body)
		vec_push(&b->body, w->dp->body);
	w->dp->body = b;
}

void sema_entry_rewrite(struct sema *sm, struct derived_probe *dp)
{
	bool implicit = probe_is_function_return(dp);
	struct srcloc loc = dp->body ? dp->body->loc : dp->probe->loc;
	struct ew w = { .sm = sm, .dp = dp, .implicit = implicit };

	if (!stmt_has_entry(dp->body, implicit))
		return;
	state_init(sm);
	w.why = no_entry_reason(sm, dp);
	if (w.why && !dp->is_return)
		return;		/* refused by type inference if elision leaves it */
	w.saves = ast_stmt(STMT_BLOCK, loc);
	w.fetches = ast_stmt(STMT_BLOCK, loc);
	if (!w.why) {
		w.key = ++state.returns;
		w.nested = probe_class(dp) == PCLASS_KPROBE;	/* a kernel function may recurse */
		if (w.nested)
			depth_stack(&w, loc);
	}
	walk_stmt(&w, dp->body);
	if (w.why)
		return;
	prepend_fetches(&w);
	if (probe_class(dp) == PCLASS_TRACEPOINT)
		companion_trace(&w, loc);
	else
		companion_function(&w, loc);
}
