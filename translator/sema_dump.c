/*
 * sema_dump.c - stap's --dump-functions, --dump-probe-aliases and
 * --dump-probe-types: what the library and the translator know, one line
 * each, in stap 4.8's form, so that tools written for stap's lists read
 * pmstap's.
 *
 *   --dump-functions      NAME:TYPE (ARG:TYPE, ...) [TAGS]
 *	every function of the tapset library, its types inferred over the
 *	whole library ("unknown" where nothing decides one, and for a
 *	function that returns nothing); TAGS are the markers "bpf", "guru",
 *	"unprivileged" and "myproc-unprivileged" of its embedded C, each
 *	printed as a C comment (with -v also "pure", "stable", "unmangled"
 *	and "unmodified-fnargs"), sorted.  Sorted by name.
 *   --dump-probe-aliases  NAME [= NAME] (= | +=) POINT[, POINT...]
 *	every alias of the library, as its declaration reads; sorted and
 *	unique as text.
 *   --dump-probe-types    kernel.function(string).return
 *	every shape of builtin probe point, an argument as (number) or
 *	(string), in the preorder of stap's tree of point components (a
 *	component without an argument before the same name with one,
 *	(number) before (string)).  Aliases are not probe types.
 *
 * Names starting with '_' (the library's internals) are listed only with
 * -v, and private functions never (stap lists only the functions of its
 * global namespace).  A syntax error in the library shows and fails the
 * run; errors met while typing the library's functions are not the
 * user's: they show only with -vv, and they do not change the exit
 * status, which is 0 unless there was nothing to list.
 */
#define _GNU_SOURCE	/* open_memstream */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "diag.h"
#include "lex.h"
#include "probes.h"
#include "sema.h"
#include "sema_int.h"

/* Lines to print, sorted; KEY orders them, TEXT is printed. */
struct line {
	const char *key;
	const char *text;
};

static int line_cmp(const void *a, const void *b)
{
	const struct line *x = *(const struct line *const *)a, *y = *(const struct line *const *)b;
	int c = strcmp(x->key, y->key);

	return c ? c : strcmp(x->text, y->text);
}

static void add_line(struct vec *lines, const char *key, const char *text)
{
	struct line *l = ARENA_NEW(struct line);

	l->key = key;
	l->text = text;
	vec_push(lines, l);
}

/* Sort, drop repeated texts, print.  Returns how many were printed. */
static int print_lines(FILE *out, struct vec *lines)
{
	const char *last = NULL;
	int n = 0;

	if (lines->len)
		qsort(lines->items, (size_t)lines->len, sizeof(void *), line_cmp);
	for (int i = 0; i < lines->len; i++) {
		struct line *l = VEC_AT(lines, i);

		if (last && !strcmp(last, l->text))
			continue;
		fprintf(out, "%s\n", l->text);
		last = l->text;
		n++;
	}
	return n;
}

static struct sema *library_sema(struct session *s)
{
	struct stapfile *none = ARENA_NEW(struct stapfile);

	none->src = lex_source_from_string("<dump>", "");
	return sema_new(s, none);
}

/* ---- --dump-probe-aliases ---- */

/* A probe point as stap prints one: numbers in decimal, strings as written. */
static void print_point(FILE *f, const struct probe_point *pp)
{
	for (int i = 0; i < pp->comps.len; i++) {
		const struct probe_comp *c = VEC_AT(&pp->comps, i);

		fprintf(f, "%s%s", i ? "." : "", c->name);
		if (c->arg && c->arg->kind == EXPR_NUMBER)
			fprintf(f, "(%" PRId64 ")", c->arg->num);
		else if (c->arg)
			fprintf(f, "(\"%s\")", c->arg->str);
	}
	if (pp->sufficient)
		fputc('!', f);
	else if (pp->optional)
		fputc('?', f);
	if (pp->cond) {
		fputs(" if (", f);
		ast_print_expr(f, pp->cond);
		fputc(')', f);
	}
}

static char *alias_text(const struct probe_alias *a)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	for (int i = 0; i < a->names.len; i++) {
		fputs(i ? " = " : "", f);
		print_point(f, VEC_AT(&a->names, i));
	}
	fputs(a->epilogue ? " += " : " = ", f);
	for (int i = 0; i < a->points.len; i++) {
		fputs(i ? ", " : "", f);
		print_point(f, VEC_AT(&a->points, i));
	}
	fclose(f);
	return text;
}

static int dump_aliases(FILE *out, struct sema *sm)
{
	struct vec lines = { 0 };

	sema_library_parse_all(sm);
	for (int i = 0; i < sm->library.len; i++) {
		struct stapfile *f = VEC_AT(&sm->library, i);

		for (int j = 0; j < f->aliases.len; j++) {
			char *text = alias_text(VEC_AT(&f->aliases, j)), *kept;

			kept = arena_strdup(text);
			free(text);
			if (kept[0] != '_' || sm->s->verbose)
				add_line(&lines, kept, kept);
		}
	}
	return print_lines(out, &lines) ? 0 : 1;
}

/* ---- --dump-functions ---- */

static const char *const tags[] = {	/* in stap's (sorted) order */
	"/* bpf */", "/* guru */", "/* myproc-unprivileged */", "/* pure */",
	"/* stable */", "/* unmangled */", "/* unmodified-fnargs */", "/* unprivileged */",
};

/* Tags only -v lists. */
static bool verbose_tag(const char *tag)
{
	return !strcmp(tag, "/* pure */") || !strcmp(tag, "/* stable */") ||
	       !strcmp(tag, "/* unmangled */") || !strcmp(tag, "/* unmodified-fnargs */");
}

static void embedded_in_stmt(const struct stmt *s, struct vec *code);

static void embedded_in_expr(const struct expr *e, struct vec *code)
{
	if (!e)
		return;
	if (e->kind == EXPR_EMBEDDED)
		vec_push(code, (void *)e->str);
	embedded_in_expr(e->left, code);
	embedded_in_expr(e->right, code);
	embedded_in_expr(e->cond, code);
	for (int i = 0; i < e->args.len; i++)
		embedded_in_expr(VEC_AT(&e->args, i), code);
}

/* The embedded C of a body: %{ %} statements and expressions. */
static void embedded_in_stmt(const struct stmt *s, struct vec *code)
{
	if (!s)
		return;
	if (s->kind == STMT_EMBEDDED)
		vec_push(code, (void *)s->code);
	for (int i = 0; i < s->body.len; i++)
		embedded_in_stmt(VEC_AT(&s->body, i), code);
	embedded_in_expr(s->expr, code);
	embedded_in_expr(s->init, code);
	embedded_in_expr(s->incr, code);
	embedded_in_stmt(s->then, code);
	embedded_in_stmt(s->otherwise, code);
}

static void print_tags(FILE *f, const struct func *fn, bool all)
{
	struct vec code = { 0 };

	if (fn->embedded)
		vec_push(&code, (void *)fn->embedded);
	embedded_in_stmt(fn->body, &code);
	for (size_t t = 0; t < sizeof(tags) / sizeof(tags[0]); t++) {
		if (!all && verbose_tag(tags[t]))
			continue;
		for (int i = 0; i < code.len; i++) {
			if (strstr(VEC_AT(&code, i), tags[t])) {
				fprintf(f, " %s", tags[t]);
				break;
			}
		}
	}
}

/* stap's names: a function that returns nothing, or whose type is undecided, is "unknown". */
static const char *type_text(enum type t)
{
	return t == TYPE_LONG ? "long" : t == TYPE_STRING ? "string" :
	       t == TYPE_STATS ? "stats" : "unknown";
}

static char *func_text(const struct func *fn, bool all_tags)
{
	char *text = NULL, *kept;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	fprintf(f, "%s:%s (", fn->name, type_text(fn->ret_type));
	for (int i = 0; i < fn->params.len; i++) {
		const struct vardecl *d = VEC_AT(&fn->params, i);

		fprintf(f, "%s%s:%s", i ? ", " : "", d->name, type_text(d->type));
	}
	fputc(')', f);
	print_tags(f, fn, all_tags);
	fclose(f);
	kept = arena_strdup(text);
	free(text);
	return kept;
}

/*
 * Resolve every function of the library (as stap does in this mode),
 * then infer types over those that resolved cleanly.  The probes the
 * tapset files hold themselves are not walked.
 */
static void type_library(struct sema *sm)
{
	struct program *prog = sm->prog;

	sema_library_parse_all(sm);
	for (int i = 0; i < sm->library.len; i++) {
		struct stapfile *f = VEC_AT(&sm->library, i);

		for (int j = 0; j < f->funcs.len; j++)
			sema_pull_func(sm, VEC_AT(&f->funcs, j));
	}
	for (int i = 0; i < sm->pending.len; i++) {
		struct func *fn = VEC_AT(&sm->pending, i);
		int errors = diag_error_count();

		sema_resolve_func(sm, fn);
		if (diag_error_count() == errors)
			vec_push(&prog->funcs, fn);
	}
	prog->probes.len = 0;
	for (int i = 0; i < sm->library.len; i++) {
		struct stapfile *f = VEC_AT(&sm->library, i);

		for (int j = 0; j < f->globals.len; j++)
			vec_push(&prog->globals, VEC_AT(&f->globals, j));
	}
	sema_types_infer(sm);
}

static int dump_functions(FILE *out, struct sema *sm)
{
	struct vec lines = { 0 };
	int verbose = sm->s->verbose;

	type_library(sm);
	for (int i = 0; i < sm->pending.len; i++) {
		struct func *fn = VEC_AT(&sm->pending, i);

		if (!fn->is_private && (fn->name[0] != '_' || verbose))
			add_line(&lines, fn->name, func_text(fn, verbose > 0));
	}
	return print_lines(out, &lines) ? 0 : 1;
}

/* ---- --dump-probe-types ---- */

/*
 * A shape's sort key: each component's name, then \1, then \1 (no
 * argument), \2 (number) or \3 (string).  strcmp on keys is the
 * preorder of stap's tree: a name before its longer names and before
 * itself with an argument.
 */
static void expand_shape(struct vec *lines, char **comps, int n, int at, const char *key,
			 const char *text)
{
	char *name, *paren, arg;

	if (at == n) {
		add_line(lines, key, text);
		return;
	}
	name = arena_strdup(comps[at]);
	paren = strchr(name, '(');
	arg = paren ? paren[1] : 0;
	if (paren)
		*paren = '\0';
	text = at ? arena_printf("%s.%s", text, name) : name;
	key = arena_printf("%s%s\1", key, name);
	if (!arg)
		expand_shape(lines, comps, n, at + 1, arena_printf("%s\1", key), text);
	if (arg == 'n' || arg == 'a')
		expand_shape(lines, comps, n, at + 1, arena_printf("%s\2", key),
			     arena_printf("%s(number)", text));
	if (arg == 's' || arg == 'a')
		expand_shape(lines, comps, n, at + 1, arena_printf("%s\3", key),
			     arena_printf("%s(string)", text));
}

static int dump_probe_types(FILE *out)
{
	struct vec texts = probes_pattern_texts(), lines = { 0 };

	for (int i = 0; i < texts.len; i++) {
		char *copy = arena_strdup(VEC_AT(&texts, i)), *save = NULL, *comps[16];
		int n = 0;

		for (char *c = strtok_r(copy, ".", &save); c && n < 16; c = strtok_r(NULL, ".", &save))
			comps[n++] = c;
		expand_shape(&lines, comps, n, 0, "", "");
	}
	return print_lines(out, &lines) ? 0 : 1;
}

/* ---- the entry point ---- */

int sema_dump(FILE *out, struct session *s)
{
	FILE *quiet;
	int errors, rc = 1;
	struct sema *sm;

	if (s->dump == DUMP_PROBE_TYPES)
		return dump_probe_types(out);
	/* the library's syntax errors are errors: they show, and fail the run */
	sm = library_sema(s);
	sema_library_parse_all(sm);
	if (diag_error_count())
		return 1;
	errors = diag_error_count();
	quiet = s->verbose >= 2 ? NULL : fopen("/dev/null", "w");
	if (quiet)
		diag_set_stream(quiet);
	if (s->dump == DUMP_FUNCTIONS)
		rc = dump_functions(out, sm);
	else if (s->dump == DUMP_PROBE_ALIASES)
		rc = dump_aliases(out, sm);
	diag_set_stream(NULL);
	if (quiet)
		fclose(quiet);
	diag_demote_errors(errors);
	return rc;
}
