/*
 * listing.c - pmstap -l / -L PATTERN.
 *
 * The driver elaborates "probe PATTERN {}" (passes 1 and 2, so aliases,
 * wildcards and this system's tracepoints resolve exactly as in a
 * script); this file prints what that probe became.  Probes that came
 * along with a tapset file (its own begin probes), and the entry probes
 * that save an alias's @entry values, are not the pattern's and are left
 * out, as stap leaves them.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include "kdwarf.h"
#include "arena.h"
#include "hmap.h"
#include "listing.h"
#include "listing_user.h"
#include "probes.h"
#include "probes_btf.h"
#include "program.h"

struct listed {
	const char *name;		/* what the line starts with */
	const struct derived_probe *dp;
};

const char *listing_script(const char *pattern)
{
	return arena_printf("probe %s {}", pattern);
}

/* ---- names ---- */

static bool name_matches(const struct probe_point *name, const struct probe_point *pt)
{
	if (name->comps.len > pt->comps.len)
		return false;
	for (int i = 0; i < name->comps.len; i++) {
		const struct probe_comp *a = VEC_AT(&name->comps, i), *u = VEC_AT(&pt->comps, i);

		if (fnmatch(u->name, a->name, 0) != 0)
			return false;
	}
	return true;
}

/*
 * An alias's line: the name of it that the pattern matched, and the rest
 * of the pattern when it matched only a prefix (lt.tick + .ms(100)), if
 * that rest has no wildcards.
 */
static const char *alias_name(const struct probe_alias *a, const struct probe_point *pt)
{
	const struct probe_point *name = VEC_AT(&a->names, 0);
	struct vec rest = { 0 };

	for (int i = 0; i < a->names.len; i++) {
		if (name_matches(VEC_AT(&a->names, i), pt)) {
			name = VEC_AT(&a->names, i);
			break;
		}
	}
	for (int i = name->comps.len; i < pt->comps.len; i++) {
		const struct probe_comp *c = VEC_AT(&pt->comps, i);

		if (strpbrk(c->name, "*?["))
			return probes_point_text((struct vec *)&name->comps);
		vec_push(&rest, (void *)c);
	}
	if (!rest.len)
		return probes_point_text((struct vec *)&name->comps);
	return arena_printf("%s.%s", probes_point_text((struct vec *)&name->comps),
			    probes_point_text(&rest));
}

static const char *line_name(const struct derived_probe *dp)
{
	if (dp->aliases.len)
		return alias_name(VEC_AT(&dp->aliases, 0), dp->orig);
	return dp->list_point ? dp->list_point : dp->point;
}

/* ---- variables ---- */

/* "struct task_struct *" as stap writes C types: "struct task_struct*". */
static const char *c_type(const char *t)
{
	char *out = arena_strdup(t), *w = out;

	for (const char *r = t; *r; r++) {
		if (r[0] == ' ' && r[1] == '*')
			continue;
		*w++ = *r;
	}
	*w = '\0';
	return out;
}

static const char *field_type(const struct tp_field *f)
{
	if (f->array_len > 0)
		return arena_printf("%s[%d]", c_type(f->ctype), f->array_len);
	if (f->array_len < 0 && strncmp(f->ctype, "__data_loc ", 11) == 0)
		return c_type(f->ctype + 11);
	return c_type(f->ctype);
}

static bool has_field(const struct tracepoint *tp, const char *name)
{
	for (int i = 0; i < tp->fields.len; i++)
		if (strcmp(((struct tp_field *)VEC_AT(&tp->fields, i))->name, name) == 0)
			return true;
	return false;
}

static void tracepoint_vars(const struct tracepoint *tp, struct vec *out)
{
	for (int i = 0; i < tp->fields.len; i++) {
		const struct tp_field *f = VEC_AT(&tp->fields, i);

		if (!f->is_common)
			vec_push(out, arena_printf("$%s:%s", f->name, field_type(f)));
	}
	for (int i = 0; i < tp->args.len; i++) {
		const struct tp_arg *a = VEC_AT(&tp->args, i);

		if (!has_field(tp, a->name))
			vec_push(out, arena_printf("$%s:%s", a->name, c_type(a->ctype)));
	}
}

/* DP's variables as -L shows them: locals, then target variables. */
static struct vec probe_vars(const struct derived_probe *dp)
{
	struct vec v = { 0 };

	for (int i = 0; i < dp->locals.len; i++) {
		const struct vardecl *d = VEC_AT(&dp->locals, i);

		vec_push(&v, arena_printf("%s:%s", d->name, ast_type_name(d->type)));
	}
	if (dp->kind == PROBE_TRACE && dp->tp)
		tracepoint_vars(dp->tp, &v);
	else if (dp->kind == PROBE_PROCESS_SYSCALL)	/* stap's list, .return's too */
		for (int i = 0; i <= 6; i++)
			vec_push(&v, i ? arena_printf("$arg%d:long", i) : "$syscall:long");
	else if (dp->kfunc_die || dp->kfunc_dwarf) {	/* as stap's: $return first */
		if (dp->kind == PROBE_KFUNC && dp->is_return)
			kdwarf_return_var(dp->kfunc_dwarf, &v);
		kdwarf_param_vars(dp->kfunc_die ? dp->kfunc_die : dp->kfunc_dwarf,
				  dp->kind == PROBE_KSTATEMENT ? dp->addr : 0, &v);
	}
	else
		listing_user_vars(dp, &v);
	return v;
}

static bool contains(const struct vec *v, const char *s)
{
	for (int i = 0; i < v->len; i++)
		if (strcmp(VEC_AT(v, i), s) == 0)
			return true;
	return false;
}

/* What every probe of ITEMS[0..N) has, in the first one's order (as stap: the intersection). */
static void print_vars(FILE *out, struct listed **items, int n)
{
	struct vec first = probe_vars(items[0]->dp), *others = arena_alloc(sizeof(struct vec) * (size_t)n);
	struct vec shown = { 0 };

	for (int j = 1; j < n; j++)
		others[j] = probe_vars(items[j]->dp);
	for (int i = 0; i < first.len; i++) {
		const char *var = VEC_AT(&first, i);
		bool everywhere = !contains(&shown, var);

		for (int j = 1; j < n && everywhere; j++)
			everywhere = contains(&others[j], var);
		if (everywhere) {
			fprintf(out, " %s", var);
			vec_push(&shown, (void *)var);
		}
	}
}

/* ---- the listing ---- */

static int by_name(const void *a, const void *b)
{
	const struct listed *x = *(struct listed *const *)a, *y = *(struct listed *const *)b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->dp->id - y->dp->id;
}

static void add_line(struct vec *v, const char *name, const struct derived_probe *dp)
{
	struct listed *l = ARENA_NEW(struct listed);

	l->name = name;
	l->dp = dp;
	vec_push(v, l);
}

/*
 * kernel.function("vfs_*") is one probe on every function it matches:
 * a line for each, by the names BTF knows.  False when there are none
 * (a pattern of kallsyms only, or with @file or :line).
 */
static bool add_functions(struct vec *v, const struct derived_probe *dp)
{
	static struct vec names;
	static struct hmap set;
	static unsigned generation;
	const char *quoted, *at;
	int before = v->len;

	if (dp->kind != PROBE_KFUNC || dp->module || !dp->function ||
	    !strpbrk(dp->function, "*?[") || strpbrk(dp->function, "@:"))
		return false;
	quoted = arena_printf("\"%s\"", dp->function);
	if (!(at = strstr(dp->point, quoted)))
		return false;
	if (generation != arena_generation() || !names.len) {
		names = (struct vec){ 0 };
		set = (struct hmap){ .str_keys = true };
		generation = arena_generation();
		btf_function_names(&names, &set);
	}
	for (int i = 0; i < names.len; i++)
		if (fnmatch(dp->function, VEC_AT(&names, i), 0) == 0)
			add_line(v, arena_printf("%.*s\"%s\"%s", (int)(at - dp->point), dp->point,
						 (char *)VEC_AT(&names, i), at + strlen(quoted)), dp);
	return v->len > before;
}

static struct vec collect(const struct program *prog)
{
	struct vec v = { 0 };

	for (int i = 0; i < prog->probes.len; i++) {
		const struct derived_probe *dp = VEC_AT(&prog->probes, i);

		if (!dp->probe || dp->probe->file != prog->script || dp->entry_companion)
			continue;
		if (dp->aliases.len || !add_functions(&v, dp))
			add_line(&v, line_name(dp), dp);
	}
	qsort(v.items, (size_t)v.len, sizeof(void *), by_name);
	return v;
}

int listing_print(FILE *out, const struct session *s, const struct program *prog)
{
	struct vec v = collect(prog);
	struct listed **items = (struct listed **)v.items;
	int lines = 0;

	for (int i = 0, next; i < v.len; i = next) {
		for (next = i + 1; next < v.len && !strcmp(items[next]->name, items[i]->name); next++)
			;
		fputs(items[i]->name, out);
		if (s->list_vars)
			print_vars(out, items + i, next - i);
		fputc('\n', out);
		lines++;
	}
	return lines;
}
