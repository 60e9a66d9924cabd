/*
 * sema_autocast.c - pass 2: the C types that autocasts read through.
 *
 * An autocast is '->member' or '[i]' on a value that is not a $var:
 *
 *	sun = & @cast(p, "sockaddr_un", "<sys/un.h>")
 *	println(sun->sun_family)
 *
 * As in stap (elaborate.cxx, typeresolution_info: "type details"), a
 * value carries the C type of the $var, @cast or autocast it came from
 * when that is a pointer (or taken with '&'), through '=', a local or
 * global, '?:' with the same type on both sides, and a function's return
 * value when every return agrees; never through an array element, a key,
 * a parameter or arithmetic.  Two different types meeting (the same
 * struct from two @cast modules is two types) leave no type at all.  An
 * autocast on a value with no type is refused ("unknown type in
 * dereference"), and one whose member is missing is refused with the
 * members it has, as stap's pass 2 does.
 *
 * Types come from the kernel's BTF (kernel function parameters, raw
 * tracepoint arguments, @cast to "kernel" types) and from the DWARF of
 * the headers a "<header.h>" module names, compiled here with cc -g as
 * stap's typequery does.  What this pass cannot type (a program's DWARF,
 * a type it cannot find) is left for pass 3, never refused here.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dwarf.h>
#include <linux/btf.h>
#include "diag.h"
#include "dwarf_read.h"
#include "probe_kinds.h"
#include "probes.h"
#include "probes_btf.h"
#include "sema_int.h"

/* A value's C type: the one it points to, or (not is_pointer) the one it is. */
enum ct_kind {
	CT_NULL,		/* types met that differ: none */
	CT_LATER,		/* not known in this pass: pass 3 checks */
	CT_BTF,
	CT_DWARF,
};

struct ctype {
	enum ct_kind kind;
	uint32_t btf;
	struct dwarf_file *f;
	Dwarf_Die die;
	bool is_pointer;
};

static const struct ctype ct_null = { .kind = CT_NULL }, ct_later = { .kind = CT_LATER };

struct ac {
	struct sema *sm;
	struct derived_probe *dp;	/* the probe walked, or NULL in a function */
	struct func *func;
	bool report;			/* the last walk: refuse what does not fit */
	bool changed;
	struct hmap vars;		/* struct vardecl * -> const struct ctype * */
	struct hmap rets;		/* struct func * -> const struct ctype * */
	struct hmap casts;		/* "type\nmodule\nin a process" -> const struct ctype * */
};

static bool same(const struct ctype *a, const struct ctype *b)
{
	if (a->kind != b->kind || a->is_pointer != b->is_pointer)
		return false;
	if (a->kind == CT_BTF)
		return a->btf == b->btf;
	if (a->kind == CT_DWARF)
		return a->f == b->f && a->die.addr == b->die.addr;
	return true;
}

/* Slot KEY of MAP meets type T: the first one stays, a different one makes it none. */
static void merge(struct ac *a, struct hmap *map, const void *key, const struct ctype *t)
{
	const struct ctype *cur = hmap_get(map, key);

	if (!t || (cur && (cur->kind == CT_NULL || cur->kind == CT_LATER)))
		return;
	if (!cur || t->kind == CT_LATER || !same(cur, t)) {
		hmap_put(map, key, (void *)(!cur || t->kind == CT_LATER ? t : &ct_null));
		a->changed = true;
	}
}

/* ---- one step through a type: BTF or DWARF alike ---- */

enum shape { SHAPE_OTHER, SHAPE_RECORD, SHAPE_POINTER, SHAPE_ARRAY };

static struct ctype *ct_new(const struct ctype *like)
{
	struct ctype *t = ARENA_NEW(struct ctype);

	*t = *like;
	return t;
}

/* T past typedefs and qualifiers; false for void. */
static bool strip(struct ctype *t)
{
	if (t->kind == CT_BTF) {
		t->btf = btf_strip(t->btf);
		return t->btf != 0;
	}
	return dwarf_type_strip(&t->die);
}

static enum shape shape_of(const struct ctype *t)
{
	int k;

	if (t->kind == CT_BTF) {
		k = btf_kind(t->btf);
		return k == BTF_KIND_STRUCT || k == BTF_KIND_UNION ? SHAPE_RECORD
		       : k == BTF_KIND_PTR ? SHAPE_POINTER
		       : k == BTF_KIND_ARRAY ? SHAPE_ARRAY : SHAPE_OTHER;
	}
	k = dwarf_tag((Dwarf_Die *)&t->die);
	return k == DW_TAG_structure_type || k == DW_TAG_union_type || k == DW_TAG_class_type
	       ? SHAPE_RECORD
	       : k == DW_TAG_pointer_type || k == DW_TAG_reference_type ? SHAPE_POINTER
	       : k == DW_TAG_array_type ? SHAPE_ARRAY : SHAPE_OTHER;
}

/* What pointer or array T holds, in place; false for void. */
static bool inner(struct ctype *t)
{
	Dwarf_Die in;

	if (t->kind == CT_BTF) {
		const struct btf_type *bt = btf_type_at(t->btf);

		t->btf = btf_kind(t->btf) == BTF_KIND_ARRAY ? ((const struct btf_array *)(bt + 1))->type
							   : bt->type;
		return t->btf != 0;
	}
	if (!dwarf_type_of(&t->die, &in))
		return false;
	t->die = in;
	return true;
}

static const char *text(const struct ctype *t)
{
	return t->kind == CT_BTF ? btf_type_c((int)t->btf)
				 : dwarf_type_text((Dwarf_Die *)&t->die);
}

/* Member NAME of record T: T becomes its type; false (T as it was) when there is none. */
static bool member(struct ctype *t, const char *name)
{
	Dwarf_Die m, mt;
	int64_t off;
	uint32_t id;

	if (t->kind == CT_BTF) {
		if (!(id = btf_member_type(t->btf, name)))
			return false;
		t->btf = id;
		return true;
	}
	if (!dwarf_member(&t->die, name, &m, &off))
		return false;
	if (dwarf_type_of(&m, &mt))
		t->die = mt;
	return true;
}

static void dwarf_names(Dwarf_Die *type, struct vec *out, int depth)
{
	Dwarf_Die c, sub;

	if (depth > 8 || dwarf_child(type, &c) != 0)
		return;
	do {
		const char *n = dwarf_diename(&c);

		if (dwarf_tag(&c) != DW_TAG_member)
			continue;
		if (n)
			vec_push(out, (void *)n);
		else if (dwarf_type_of(&c, &sub))
			dwarf_names(&sub, out, depth + 1);
	} while (dwarf_siblingof(&c, &c) == 0);
}

/*
 * stap's edit distance (util.cxx levenshtein): a substitution costs 2 (1
 * between the cases of a letter), an insertion or deletion 2, but the
 * first row and column count 1 a character.
 */
static unsigned stap_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned *d = arena_alloc((la + 1) * (lb + 1) * sizeof(unsigned));

#define D(i, j) d[(i) * (lb + 1) + (j)]
	for (size_t i = 0; i <= la; i++)
		D(i, 0) = (unsigned)i;
	for (size_t j = 0; j <= lb; j++)
		D(0, j) = (unsigned)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			unsigned sub = tolower((unsigned char)a[i - 1]) ==
				       tolower((unsigned char)b[j - 1]) ? 1 : 2, best;

			if (a[i - 1] == b[j - 1]) {
				D(i, j) = D(i - 1, j - 1);
				continue;
			}
			best = D(i - 1, j - 1) + sub;
			if (D(i - 1, j) + 2 < best)
				best = D(i - 1, j) + 2;
			if (D(i, j - 1) + 2 < best)
				best = D(i, j - 1) + 2;
			D(i, j) = best;
		}
	return D(la, lb);
#undef D
}

struct scored {
	unsigned score;
	const char *name;
};

static int by_score(const void *x, const void *y)
{
	const struct scored *a = x, *b = y;

	if (a->score != b->score)
		return a->score < b->score ? -1 : 1;
	return strcmp(a->name, b->name);
}

/*
 * The members of T closest to NAME first, as stap lists them
 * (levenshtein_suggest: by that distance, then by name), NULL if none.
 */
static const char *alternatives(const struct ctype *t, const char *name)
{
	struct vec names = { 0 };
	struct scored *s;
	char *list = NULL;

	if (t->kind == CT_BTF)
		btf_member_names(t->btf, &names);
	else
		dwarf_names((Dwarf_Die *)&t->die, &names, 0);
	s = arena_alloc(sizeof(*s) * (size_t)(names.len + 1));
	for (int i = 0; i < names.len; i++)
		s[i] = (struct scored){ stap_distance(name, VEC_AT(&names, i)), VEC_AT(&names, i) };
	qsort(s, (size_t)names.len, sizeof(*s), by_score);
	for (int i = 0; i < names.len; i++)
		if (*s[i].name && (i == 0 || strcmp(s[i].name, s[i - 1].name) != 0))
			list = list ? arena_printf("%s, %s", list, s[i].name) : arena_strdup(s[i].name);
	return list;
}

/* ---- walking a chain ---- */

static const char *comp_text(const struct target_comp *c)
{
	return c->kind == COMP_MEMBER ? arena_printf("->%s", c->member)
	       : c->kind == COMP_INDEX ? arena_printf("[%lld]", (long long)c->index) : "[...]";
}

/* Refuse C on T (stap's dwflpp translate_components wording), when reporting. */
static bool step_fail(struct ac *a, const struct target_comp *c, const struct ctype *t)
{
	if (!a->report)
		return false;
	if (c->kind == COMP_MEMBER && shape_of(t) == SHAPE_RECORD) {
		const char *alt = alternatives(t, c->member);

		sema_error(c->loc, a->sm, "unable to find member '%s' for %s%s", c->member,
			   text(t), alt ? arena_printf(" (alternatives: %s)", alt) : "");
	} else if (shape_of(t) == SHAPE_RECORD) {
		sema_error(c->loc, a->sm, "invalid access '%s' for %s", comp_text(c), text(t));
	} else {
		sema_error(c->loc, a->sm, "invalid access '%s' vs. %s", comp_text(c), text(t));
	}
	return false;
}

/*
 * T through C, in place.  FIRST: T is what a pointer points to, and C
 * goes through that pointer ('->m' reads a member of T, '[i]' an element
 * that is a T).
 */
static bool step(struct ac *a, struct ctype *t, const struct target_comp *c, bool first)
{
	enum shape sh;

	if (!strip(t))
		return step_fail(a, c, t);
	sh = shape_of(t);
	if (c->kind != COMP_MEMBER)
		return first || ((sh == SHAPE_POINTER || sh == SHAPE_ARRAY) && inner(t)) ||
		       step_fail(a, c, t);
	if (!first && sh == SHAPE_POINTER && (!inner(t) || !strip(t)))
		return step_fail(a, c, t);
	if (shape_of(t) != SHAPE_RECORD || !member(t, c->member))
		return step_fail(a, c, t);
	return true;
}

/* What a chain ending in type T gives: a pointer to T (&), a pointer's target, or T. */
static const struct ctype *ending(struct ctype *t, const struct expr *e)
{
	if (e->pretty || !strip(t))
		return NULL;
	if (e->addr_of) {
		t->is_pointer = true;
		return t;
	}
	if (shape_of(t) == SHAPE_POINTER || shape_of(t) == SHAPE_ARRAY) {
		if (!inner(t))
			return NULL;	/* void *: nothing to read through */
		t->is_pointer = true;
	}
	return t;
}

/* T through E's components; the type E gives, or NULL. */
static const struct ctype *chain(struct ac *a, struct ctype *t, const struct expr *e, bool first)
{
	for (int i = 0; i < e->comps.len; i++)
		if (!step(a, t, VEC_AT(&e->comps, i), first && i == 0))
			return NULL;
	return ending(t, e);
}

/* ---- where types start: $vars, @cast ---- */

/* The type NAME in MODULE, for a @cast in DP; &ct_later when this pass cannot tell. */
static const struct ctype *find_cast_type(struct ac *a, const char *name, const char *module)
{
	struct ctype t = { .kind = CT_BTF };
	const char *cname, *why;

	if (!module || !strncmp(module, "kernel", 6)) {
		if (!module && a->dp && probe_targets(a->dp) == TARGETS_DWARF)
			return &ct_later;	/* a process's own types */
		if (!(t.btf = btf_find_cast(name, module, &cname)))
			return &ct_later;
		return ct_new(&t);
	}
	if (module[0] != '<')
		return &ct_later;
	t.kind = CT_DWARF;
	if (!(t.f = dwarf_header_file(module, &why)) || !dwarf_find_type(t.f, name, &t.die))
		return &ct_later;
	return ct_new(&t);
}

/* The same, looked up once per name and module (BTF is searched by name). */
static const struct ctype *cast_type(struct ac *a, const char *name, const char *module)
{
	const char *key = arena_printf("%s\n%s\n%d", name, module ? module : "",
				       a->dp && probe_targets(a->dp) == TARGETS_DWARF);
	const struct ctype *t = hmap_get(&a->casts, key);

	if (!t) {
		t = find_cast_type(a, name, module);
		hmap_put(&a->casts, key, (void *)t);
	}
	return t;
}

/* The BTF type of $NAME in DP (a kernel function's parameter or $return, a raw tracepoint's argument). */
static uint32_t target_btf(struct derived_probe *dp, const char *name, bool saved)
{
	struct vec *params = NULL;
	int ret = 0;

	if (probe_targets(dp) == TARGETS_TRACEPOINT && !saved) {
		for (int i = 0; i < dp->tp->args.len; i++) {
			struct tp_arg *arg = VEC_AT(&dp->tp->args, i);

			if (!strcmp(arg->name, name + 1))
				return (uint32_t)arg->btf_id;
		}
		return 0;
	}
	if (probe_targets(dp) != TARGETS_KFUNC || !kfunc_targets_checkable(dp) ||
	    dp->kfunc_kprobe || !btf_kfunc(dp->kfunc, &params, &ret))
		return 0;
	if (!strcmp(name, "$return"))
		return (uint32_t)ret;
	for (int i = 0; i < params->len; i++) {
		struct tp_arg *arg = VEC_AT(params, i);

		if (!strcmp(arg->name, name + 1))
			return (uint32_t)arg->btf_id;
	}
	return 0;
}

/*
 * The type a $var, @var or @cast chain E gives (SAVED: read at the entry).
 * A chain that does not fit is refused where it is resolved, not here.
 */
static const struct ctype *leaf(struct ac *a, const struct expr *e, bool saved)
{
	struct ctype t = { .kind = CT_BTF };
	const struct ctype *start, *end;
	bool report = a->report;

	if (e->kind == EXPR_CAST) {
		if (!e->comps.len && !e->addr_of)
			return NULL;	/* stap: the struct is read, not a member */
		start = cast_type(a, e->str, e->module);
		if (start->kind == CT_LATER)
			return start;
		t = *start;
	} else if (e->pretty || (e->kind == EXPR_TARGET && e->name[1] == '$')) {
		return NULL;	/* a string */
	} else if (e->kind != EXPR_TARGET || !a->dp ||
		   !(t.btf = target_btf(a->dp, e->name, saved))) {
		return &ct_later;
	}
	a->report = false;
	end = chain(a, &t, e, false);
	a->report = report;
	return end ? ct_new(end) : &ct_later;
}

/* ---- the walk ---- */

static const struct ctype *cx(struct ac *a, struct expr *e);

static void cx_all(struct ac *a, struct vec *v)
{
	for (int i = 0; i < v->len; i++)
		if (VEC_AT(v, i))
			cx(a, VEC_AT(v, i));
}

static void cx_comps(struct ac *a, struct expr *e)
{
	for (int i = 0; i < e->comps.len; i++) {
		struct target_comp *c = VEC_AT(&e->comps, i);

		if (c->index_expr)
			cx(a, c->index_expr);
	}
}

/* E's autocast: through the type of its operand, or refused. */
static const struct ctype *cx_autocast(struct ac *a, struct expr *e)
{
	const struct ctype *op = cx(a, e->left);
	const struct target_comp *c = e->comps.len ? VEC_AT(&e->comps, 0) : NULL;
	struct ctype t;

	cx_comps(a, e);
	if (op && op->kind == CT_LATER)
		return op;
	if (!op || op->kind == CT_NULL) {
		if (a->report)
			sema_error(c ? c->loc : e->loc, a->sm, "unknown type in dereference");
		return NULL;
	}
	if (!c)		/* x$ or &x: no member to check */
		return NULL;
	t = *op;
	if (!op->is_pointer) {
		if (a->report)
			sema_error(c->loc, a->sm, "autocast variable '' may not be used as %s",
				   c->kind == COMP_MEMBER ? "a structure" : "array");
		return NULL;
	}
	t.is_pointer = false;
	if (!chain(a, &t, e, true))
		return NULL;
	if (op->kind == CT_BTF)		/* pass 3 reads it as a @cast to that type */
		e->autocast_btf = op->btf;
	return ct_new(&t);
}

static const struct ctype *cx_assign(struct ac *a, struct expr *e)
{
	const struct ctype *r = cx(a, e->right);

	if (e->left->kind == EXPR_SYMBOL && e->left->decl) {
		if (strcmp(e->op, "=") == 0)
			merge(a, &a->vars, e->left->decl, r);
	} else {
		cx(a, e->left);
	}
	return strcmp(e->op, "=") == 0 ? r : NULL;
}

static const struct ctype *cx_ternary(struct ac *a, struct expr *e)
{
	const struct ctype *l, *r;

	cx(a, e->cond);
	l = cx(a, e->left);
	r = cx(a, e->right);
	if (l && l->kind == CT_LATER)
		return l;
	if (r && r->kind == CT_LATER)
		return r;
	return l && r && same(l, r) ? l : NULL;
}

static const struct ctype *cx(struct ac *a, struct expr *e)
{
	switch (e->kind) {
	case EXPR_SYMBOL:
		return e->decl ? hmap_get(&a->vars, e->decl) : NULL;
	case EXPR_ASSIGN:
		return cx_assign(a, e);
	case EXPR_TERNARY:
		return cx_ternary(a, e);
	case EXPR_CALL:
		cx_all(a, &e->args);
		return e->func && !e->builtin ? hmap_get(&a->rets, e->func) : NULL;
	case EXPR_INDEX:
		cx_all(a, &e->args);
		return e->saved ? leaf(a, e->saved, true) : NULL;
	case EXPR_TARGET:
	case EXPR_CAST:
	case EXPR_ATVAR:
		cx_comps(a, e);
		if (e->left)
			cx(a, e->left);
		return leaf(a, e, false);
	case EXPR_AUTOCAST:
		return cx_autocast(a, e);
	case EXPR_DEFINED:	/* asks, and an answer of no is no error */
		return NULL;
	default:
		if (e->left)
			cx(a, e->left);
		if (e->right)
			cx(a, e->right);
		if (e->cond)
			cx(a, e->cond);
		cx_all(a, &e->args);
		return NULL;
	}
}

static void cs(struct ac *a, struct stmt *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->body.len; i++)
		cs(a, VEC_AT(&s->body, i));
	if (s->expr) {
		const struct ctype *t = cx(a, s->expr);

		if (s->kind == STMT_RETURN && a->func)
			merge(a, &a->rets, a->func, t);
	}
	if (s->init)
		cx(a, s->init);
	if (s->incr)
		cx(a, s->incr);
	if (s->array)
		cx(a, s->array);
	if (s->limit)
		cx(a, s->limit);
	cs(a, s->then);
	cs(a, s->otherwise);
}

static void walk_all(struct ac *a)
{
	struct program *prog = a->sm->prog;

	a->dp = NULL;
	for (int i = 0; i < prog->funcs.len; i++) {
		a->func = VEC_AT(&prog->funcs, i);
		cs(a, a->func->body);
	}
	a->func = NULL;
	for (int i = 0; i < prog->probes.len; i++) {
		a->dp = VEC_AT(&prog->probes, i);
		cs(a, a->dp->body);
	}
}

/* Any autocast left after elision? (Most scripts have none: skip them.) */
static bool has_autocast(const struct expr *e)
{
	if (!e)
		return false;
	if (e->kind == EXPR_AUTOCAST)
		return true;
	if (has_autocast(e->left) || has_autocast(e->right) || has_autocast(e->cond))
		return true;
	for (int i = 0; i < e->args.len; i++)
		if (has_autocast(VEC_AT(&e->args, i)))
			return true;
	for (int i = 0; i < e->comps.len; i++)
		if (has_autocast(((struct target_comp *)VEC_AT(&e->comps, i))->index_expr))
			return true;
	return false;
}

static bool stmt_has_autocast(const struct stmt *s)
{
	if (!s)
		return false;
	for (int i = 0; i < s->body.len; i++)
		if (stmt_has_autocast(VEC_AT(&s->body, i)))
			return true;
	return has_autocast(s->expr) || has_autocast(s->init) || has_autocast(s->incr) ||
	       has_autocast(s->array) || has_autocast(s->limit) ||
	       stmt_has_autocast(s->then) || stmt_has_autocast(s->otherwise);
}

static bool program_has_autocast(const struct program *prog)
{
	for (int i = 0; i < prog->funcs.len; i++)
		if (stmt_has_autocast(((struct func *)VEC_AT(&prog->funcs, i))->body))
			return true;
	for (int i = 0; i < prog->probes.len; i++)
		if (stmt_has_autocast(((struct derived_probe *)VEC_AT(&prog->probes, i))->body))
			return true;
	return false;
}

void sema_autocast_check(struct sema *sm)
{
	struct ac a = { .sm = sm, .casts = { .str_keys = true } };

	if (!program_has_autocast(sm->prog))
		return;
	for (int round = 0; round < 64; round++) {
		a.changed = false;
		walk_all(&a);
		if (!a.changed)
			break;
	}
	a.report = true;
	walk_all(&a);
}
