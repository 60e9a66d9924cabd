/*
 * sema.c - pass 2: elaborate a parsed script into a program.
 *
 * The order of work:
 *   1. derive the script's probes: expand aliases and wildcards, check
 *      every concrete point against this system (probes.c);
 *   2. resolve every symbol of every probe and script function; calls and
 *      globals that the script does not define come from the tapset
 *      library, which is parsed on first need and only once (sema_resolve.c);
 *   3. drop dead code: assignments to locals nobody reads, statements with
 *      no effect, functions nobody calls, globals nobody uses (sema_use.c);
 *   4. infer and check types over what is left (sema_types.c).
 * Errors are collected and reported at each step; the first step that had
 * any ends the pass.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "diag.h"
#include "lex.h"
#include "parse.h"
#include "probes.h"
#include "sema.h"
#include "sema_int.h"

/* ---- facts kept beside the tree ---- */

struct declinfo *sema_declinfo(struct sema *sm, struct vardecl *d)
{
	struct declinfo *di = hmap_get(&sm->declinfo, d);

	if (!di) {
		di = ARENA_NEW(struct declinfo);
		if (d->type != TYPE_UNKNOWN)
			di->type_from = d->loc;
		if (d->arity >= 0)
			di->arity_from = d->loc;
		if (d->maxsize || d->wrap) {
			di->must_be_array = true;
			di->arity_from = d->loc;
		}
		di->from_tapset = d->file && d->file->is_tapset;
		hmap_put(&sm->declinfo, d, di);
	}
	return di;
}

struct funcinfo *sema_funcinfo(struct sema *sm, struct func *f)
{
	struct funcinfo *fi = hmap_get(&sm->funcinfo, f);

	if (!fi) {
		fi = ARENA_NEW(struct funcinfo);
		if (f->ret_declared)
			fi->ret_from = f->loc;
		hmap_put(&sm->funcinfo, f, fi);
	}
	return fi;
}

struct stapfile *sema_file_of(struct sema *sm, struct srcloc loc)
{
	return loc.src ? hmap_get(&sm->files, loc.src) : NULL;
}

/*
 * Report an error once: the same message at the same place (a body copied
 * into many derived probes) prints only the first time.  Returns whether it
 * printed, so that callers add their notes only then.
 */
static bool first_time(struct sema *sm, struct srcloc loc, const char *msg)
{
	char *key = arena_printf("%p:%d:%d:%s", (const void *)loc.src, loc.line, loc.col, msg);

	if (hmap_get(&sm->seen, key))
		return false;
	hmap_put(&sm->seen, key, key);
	return true;
}

bool sema_error(struct srcloc loc, struct sema *sm, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = arena_vprintf(fmt, ap);
	va_end(ap);
	if (!first_time(sm, loc, msg))
		return false;
	diag_error(loc, "%s", msg);
	return true;
}

/* A warning, once per place, as sema_error (-w hides it and its notes). */
bool sema_warning(struct srcloc loc, struct sema *sm, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = arena_vprintf(fmt, ap);
	va_end(ap);
	if (!first_time(sm, loc, arena_printf("warning:%s", msg)))
		return false;
	diag_warning(loc, "%s", msg);
	return true;
}

/* ---- indexes of what is parsed ---- */

static int file_order(struct sema *sm, const void *item, bool is_func)
{
	struct stapfile *f = is_func ? ((const struct func *)item)->file
				     : ((const struct vardecl *)item)->file;

	return (int)(intptr_t)hmap_get(&sm->file_order, f);
}

/* Keep each name's list in tapset-path order, the script first. */
static void index_push(struct sema *sm, struct hmap *m, const char *name, void *item,
		       bool is_func)
{
	struct vec *v = hmap_get(m, name);
	int order = file_order(sm, item, is_func), j;

	if (!v) {
		v = ARENA_NEW(struct vec);
		hmap_put(m, name, v);
	}
	vec_push(v, item);
	for (j = v->len - 1; j > 0 && file_order(sm, VEC_AT(v, j - 1), is_func) > order; j--)
		v->items[j] = v->items[j - 1];
	v->items[j] = item;
}

void sema_index_file(struct sema *sm, struct stapfile *f)
{
	hmap_put(&sm->files, f->src, f);
	for (int i = 0; i < f->funcs.len; i++) {
		struct func *fn = VEC_AT(&f->funcs, i);

		index_push(sm, &sm->funcs, fn->name, fn, true);
	}
	for (int i = 0; i < f->globals.len; i++) {
		struct vardecl *d = VEC_AT(&f->globals, i);

		index_push(sm, &sm->globals, d->name, d, false);
	}
	for (int i = 0; i < f->aliases.len; i++) {
		struct probe_alias *a = VEC_AT(&f->aliases, i);

		vec_push(&sm->aliases, a);
		for (int j = 0; j < a->names.len; j++) {
			struct alias_name *an = ARENA_NEW(struct alias_name);
			struct probe_point *pt = VEC_AT(&a->names, j);
			struct vec *v;

			an->alias = a;
			an->name = pt;
			vec_push(&sm->alias_names, an);
			v = hmap_get(&sm->alias_roots, ((struct probe_comp *)VEC_AT(&pt->comps, 0))->name);
			if (!v) {
				v = ARENA_NEW(struct vec);
				hmap_put(&sm->alias_roots, ((struct probe_comp *)VEC_AT(&pt->comps, 0))->name, v);
			}
			vec_push(v, an);
		}
	}
}

/* All functions called NAME: the script's, then the library's (loaded now if need be). */
struct vec *sema_funcs_named(struct sema *sm, const char *name)
{
	sema_need_function(sm, name);
	return hmap_get(&sm->funcs, name);
}

static bool visible_from(struct stapfile *from, struct stapfile *owner, bool is_private)
{
	return !is_private || from == owner;
}

static struct vardecl *first_visible_global(struct vec *v, struct stapfile *from,
					    bool tapsets)
{
	for (int i = 0; v && i < v->len; i++) {
		struct vardecl *d = VEC_AT(v, i);
		bool in_tapset = d->file && d->file->is_tapset;

		if (in_tapset == tapsets && visible_from(from, d->file, d->is_private))
			return d;
	}
	return NULL;
}

void sema_pull_file(struct sema *sm, struct stapfile *f)
{
	if (!f || !f->is_tapset || hmap_get(&sm->pulled_files, f))
		return;
	hmap_put(&sm->pulled_files, f, f);
	vec_push(&sm->prog->tapset_files, f);
	for (int i = 0; i < f->embeds.len; i++)
		vec_push(&sm->prog->embeds, VEC_AT(&f->embeds, i));
	/* a tapset's own probes come along with it, as stap includes whole files */
	for (int i = 0; i < f->probes.len; i++)
		probes_derive(sm, VEC_AT(&f->probes, i));
}

/*
 * The global NAME as code in FROM sees it: FROM's own globals (private
 * ones too), then the script's, then the library's.
 */
struct vardecl *sema_find_global(struct sema *sm, struct stapfile *from, const char *name)
{
	struct vec *v = hmap_get(&sm->globals, name);
	struct vardecl *d = NULL;

	for (int i = 0; v && i < v->len && !d; i++) {
		struct vardecl *g = VEC_AT(v, i);

		if (g->file == from)
			d = g;
	}
	if (!d)
		d = first_visible_global(v, from, false);
	if (!d) {
		sema_need_global(sm, name);
		v = hmap_get(&sm->globals, name);
	}
	if (!d)
		d = first_visible_global(v, from, true);
	if (d && d->file && d->file->is_tapset) {
		struct declinfo *di = sema_declinfo(sm, d);

		if (!di->pulled) {
			di->pulled = true;
			sema_pull_file(sm, d->file);
		}
	}
	return d;
}

void sema_pull_func(struct sema *sm, struct func *f)
{
	struct funcinfo *fi = sema_funcinfo(sm, f);

	if (fi->resolved)
		return;
	fi->resolved = true;
	vec_push(&sm->pending, f);
	sema_pull_file(sm, f->file);
}

/* ---- the pass ---- */

struct sema *sema_new(struct session *s, struct stapfile *script)
{
	struct sema *sm = ARENA_NEW(struct sema);

	sm->s = s;
	sm->script = script;
	sm->prog = ARENA_NEW(struct program);
	sm->prog->script = script;
	sm->funcs.str_keys = true;
	sm->alias_roots.str_keys = true;
	sm->globals.str_keys = true;
	sm->seen.str_keys = true;
	for (int i = 0; i < script->embeds.len; i++)
		vec_push(&sm->prog->embeds, VEC_AT(&script->embeds, i));
	sm->file_order.str_keys = false;
	sema_index_file(sm, script);
	return sm;
}

/* Resolve every body: probes (their number grows as tapset files come in) and functions. */
static void resolve_all(struct sema *sm)
{
	int probes = 0, funcs = 0;

	for (int i = 0; i < sm->script->funcs.len; i++)
		sema_pull_func(sm, VEC_AT(&sm->script->funcs, i));
	for (;;) {
		if (probes < sm->prog->probes.len) {
			sema_entry_rewrite(sm, VEC_AT(&sm->prog->probes, probes));
			sema_resolve_probe(sm, VEC_AT(&sm->prog->probes, probes++));
		} else if (funcs < sm->pending.len) {
			struct func *f = VEC_AT(&sm->pending, funcs++);

			vec_push(&sm->all_funcs, f);
			sema_resolve_func(sm, f);
		} else {
			break;
		}
	}
}

static void verbose_report(struct sema *sm)
{
	if (sm->s->verbose < 2)
		return;
	if (sm->library_loaded)
		fprintf(stderr, "Pass 2: scanned %d tapset file%s, parsed %d, used %d, in %.1f ms.\n",
			sema_library_files(sm), sema_library_files(sm) == 1 ? "" : "s",
			sm->library.len, sm->prog->tapset_files.len, sm->library_ms);
	else
		fprintf(stderr, "Pass 2: the script needed no tapsets.\n");
}

/* --check-version: warn once per declaration. */
static void warn_version(struct hmap *done, const void *decl, struct srcloc loc, const char *what)
{
	if (hmap_get(done, decl))
		return;
	hmap_put(done, decl, (void *)decl);
	diag_warning(loc, "this %s uses tapset constructs that are dependent on systemtap version",
		     what);
}

/*
 * --check-version: what the program uses whose declaration depended on
 * %( systemtap_v %), as stap says it (globals, functions, then each
 * probe and the aliases it came through).
 */
static void check_version(struct sema *sm)
{
	struct program *prog = sm->prog;
	struct hmap done = { 0 };

	for (int i = 0; i < prog->globals.len; i++) {
		struct vardecl *d = VEC_AT(&prog->globals, i);

		if (d->systemtap_v)
			warn_version(&done, d, d->loc, "global");
	}
	for (int i = 0; i < prog->funcs.len; i++) {
		struct func *f = VEC_AT(&prog->funcs, i);

		if (f->systemtap_v)
			warn_version(&done, f, f->loc, "function");
	}
	for (int i = 0; i < prog->probes.len; i++) {
		struct derived_probe *dp = VEC_AT(&prog->probes, i);

		if (dp->probe->systemtap_v)
			warn_version(&done, dp->probe, dp->probe->loc, "probe");
		for (int j = 0; j < dp->aliases.len; j++) {
			struct probe_alias *a = VEC_AT(&dp->aliases, j);

			if (a->systemtap_v)
				warn_version(&done, a, a->loc, "alias");
		}
	}
}

struct program *sema_elaborate(struct session *s, struct stapfile *script)
{
	struct sema *sm = sema_new(s, script);
	int errors = diag_error_count();

	for (int i = 0; i < script->probes.len; i++)
		probes_derive(sm, VEC_AT(&script->probes, i));
	if (!sm->prog->probes.len && diag_error_count() == errors)
		diag_error((struct srcloc){ 0 }, sm->elided_points ? "no probes found"
			   : script->probes.len
			   ? "no probes left: every probe point was optional and matched nothing"
			   : "the script has no probes");
	resolve_all(sm);
	verbose_report(sm);
	if (diag_error_count() > errors)
		return NULL;
	sema_foreach_check(sm);
	if (diag_error_count() > errors)
		return NULL;
	sema_use_elide_and_collect(sm);
	if (diag_error_count() > errors)
		return NULL;
	sema_types_infer(sm);
	if (diag_error_count() > errors)
		return NULL;
	sema_autocast_check(sm);
	if (diag_error_count() > errors)
		return NULL;
	sema_use_finish(sm);
	if (s->check_version)
		check_version(sm);
	return sm->prog;
}

void sema_counts(const struct program *prog, int *probes, int *funcs, int *globals)
{
	*probes = prog->probes.len;
	*funcs = prog->funcs.len;
	*globals = prog->globals.len;
}
