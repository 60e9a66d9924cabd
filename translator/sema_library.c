/*
 * sema_library.c - the tapset library, parsed only where it is used.
 *
 * The first time pass 2 needs anything the script does not define, every
 * *.stp under the tapset path (-I directories first, then the default;
 * subdirectories after files, other architectures' directories skipped)
 * is read and scanned for the names it declares at the top level:
 * functions, globals and probe alias names.  Scanning is a light tokenizer
 * (comments, strings, embedded code and braces), far cheaper than parsing.
 * A file is then parsed only when a name the script needs is declared in
 * it, and at most once.  The scan sees both sides of %( %? %: %) and no
 * macro expansion, so a declaration that only a macro would produce is not
 * found: tapsets must spell their declarations out.
 *
 * The files of the -I directories were parsed in pass 1 already
 * (tapset_path.c): their names come from their trees, a file that had
 * errors is left out, and none is parsed twice.  A file reached through
 * two directories of the path (the same inode) is read once.
 */
#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "diag.h"
#include "lex.h"
#include "parse.h"
#include "sema_int.h"
#include "tapset_path.h"

struct libfile {
	const char *path;
	const struct source *src;
	struct stapfile *parsed;	/* NULL until something needs it */
	struct stapfile *pre;		/* parsed in pass 1 (a -I directory's), or NULL */
	int order;			/* position in the tapset path */
};

struct libalias {
	const char **comps;		/* the alias name's components */
	int n;
	struct libfile *file;
};

/* ---- the scanner ---- */

struct scan {
	const char *p, *end;
	char word[256];
};

static void skip_space(struct scan *sc)
{
	for (;;) {
		const char *p = sc->p;

		while (p < sc->end && isspace((unsigned char)*p))
			p++;
		if (p + 1 < sc->end && p[0] == '/' && p[1] == '*') {
			const char *close = strstr(p + 2, "*/");

			p = close ? close + 2 : sc->end;
		} else if (p < sc->end && (*p == '#' || (p + 1 < sc->end && p[0] == '/' && p[1] == '/'))) {
			while (p < sc->end && *p != '\n')
				p++;
		} else {
			sc->p = p;
			return;
		}
		sc->p = p;
	}
}

static void skip_string(struct scan *sc)
{
	const char *p = sc->p + 1;

	while (p < sc->end && *p != '"' && *p != '\n')
		p += (*p == '\\' && p + 1 < sc->end) ? 2 : 1;
	sc->p = p < sc->end ? p + 1 : p;
}

/*
 * The next token: 'i' an identifier (in sc->word), 's' a string, 'e'
 * embedded code, 'n' a number, 'P' "+=", 'Q' "==", else the character
 * itself; 0 at the end.
 */
static int next_tok(struct scan *sc)
{
	const char *p;

	skip_space(sc);
	p = sc->p;
	if (p >= sc->end)
		return 0;
	if (isalpha((unsigned char)*p) || *p == '_' || *p == '@' || *p == '$') {
		size_t n = 0;

		while (p < sc->end && (isalnum((unsigned char)*p) || *p == '_' || *p == '@' || *p == '$')) {
			if (n < sizeof(sc->word) - 1)
				sc->word[n++] = *p;
			p++;
		}
		sc->word[n] = '\0';
		sc->p = p;
		return 'i';
	}
	if (isdigit((unsigned char)*p)) {
		while (p < sc->end && isalnum((unsigned char)*p))
			p++;
		sc->p = p;
		return 'n';
	}
	if (*p == '"') {
		skip_string(sc);
		return 's';
	}
	if (p + 1 < sc->end && p[0] == '%' && p[1] == '{') {
		const char *close = strstr(p + 2, "%}");

		sc->p = close ? close + 2 : sc->end;
		return 'e';
	}
	if (p + 1 < sc->end && (p[0] == '+' || p[0] == '=') && p[1] == '=') {
		sc->p = p + 2;
		return p[0] == '+' ? 'P' : 'Q';
	}
	sc->p = p + 1;
	return *p;
}

static int peek_tok(struct scan *sc)
{
	const char *save = sc->p;
	int t = next_tok(sc);

	sc->p = save;
	return t;
}

static void index_name(struct hmap *m, const char *name, struct libfile *lf)
{
	struct vec *v = hmap_get(m, name);

	if (!v) {
		v = ARENA_NEW(struct vec);
		name = arena_strdup(name);
		hmap_put(m, name, v);
	}
	if (!v->len || VEC_AT(v, v->len - 1) != lf)
		vec_push(v, lf);
}

/* global NAME [%] [[N]] [= literal] {, ...} */
static void scan_globals(struct sema *sm, struct scan *sc, struct libfile *lf)
{
	while (peek_tok(sc) == 'i') {
		int t;

		next_tok(sc);
		index_name(&sm->lib_globals, sc->word, lf);
		while ((t = peek_tok(sc)) && strchr("%[]n=-s", t))
			next_tok(sc);
		if (t != ',')
			return;
		next_tok(sc);
	}
}

/* probe NAME.NAME[, NAME] (= | +=) ...: the names of an alias. */
static void scan_probe(struct sema *sm, struct scan *sc, struct libfile *lf)
{
	struct vec names = { 0 }, comps = { 0 };
	int t;

	for (;;) {
		t = peek_tok(sc);
		if (t == 'i') {
			next_tok(sc);
			vec_push(&comps, arena_strdup(sc->word));
		} else if (t == '(') {
			while ((t = next_tok(sc)) && t != ')')
				;
		} else if (t == '.' || t == '?' || t == '!') {
			next_tok(sc);
		} else if (t == ',' || t == '=' || t == 'P') {
			next_tok(sc);
			if (comps.len) {
				struct libalias *a = ARENA_NEW(struct libalias);

				a->comps = (const char **)comps.items;
				a->n = comps.len;
				a->file = lf;
				vec_push(&names, a);
			}
			comps = (struct vec){ 0 };
			if (t != ',')
				break;
		} else {
			return;	/* a probe, not an alias */
		}
	}
	for (int i = 0; i < names.len; i++)
		vec_push(&sm->lib_aliases, VEC_AT(&names, i));
}

static void scan_file(struct sema *sm, struct libfile *lf)
{
	struct scan sc = { .p = lf->src->text, .end = lf->src->text + lf->src->len };
	int depth = 0, t;

	while ((t = next_tok(&sc))) {
		if (t == '{')
			depth++;
		else if (t == '}')
			depth -= depth > 0;
		else if (t != 'i' || depth)
			continue;
		else if (!strcmp(sc.word, "function") && next_tok(&sc) == 'i')
			index_name(&sm->lib_funcs, sc.word, lf);
		else if (!strcmp(sc.word, "global"))
			scan_globals(sm, &sc, lf);
		else if (!strcmp(sc.word, "probe"))
			scan_probe(sm, &sc, lf);
	}
}

/* ---- finding the files ---- */

/* A file pass 1 parsed (a -I directory's): its names from the tree. */
static void index_parsed(struct sema *sm, struct libfile *lf, struct stapfile *f)
{
	for (int i = 0; i < f->funcs.len; i++)
		index_name(&sm->lib_funcs, ((struct func *)VEC_AT(&f->funcs, i))->name, lf);
	for (int i = 0; i < f->globals.len; i++)
		index_name(&sm->lib_globals, ((struct vardecl *)VEC_AT(&f->globals, i))->name, lf);
	for (int i = 0; i < f->aliases.len; i++) {
		struct probe_alias *a = VEC_AT(&f->aliases, i);

		for (int j = 0; j < a->names.len; j++) {
			struct probe_point *pt = VEC_AT(&a->names, j);
			struct libalias *la = ARENA_NEW(struct libalias);

			la->comps = arena_alloc(sizeof(char *) * (size_t)pt->comps.len);
			for (int k = 0; k < pt->comps.len; k++)
				la->comps[k] = ((struct probe_comp *)VEC_AT(&pt->comps, k))->name;
			la->n = pt->comps.len;
			la->file = lf;
			vec_push(&sm->lib_aliases, la);
		}
	}
}

static void add_file(struct sema *sm, const char *path)
{
	struct libfile *lf = ARENA_NEW(struct libfile);
	bool known;
	struct stapfile *pre = tapset_path_parsed(sm->s, path, &known);

	if (known && !pre)
		return;		/* pass 1 found errors in it and skipped it */
	path = tapset_path_display(path);
	lf->src = pre ? pre->src : lex_source_read_file(path, true);
	if (!lf->src)
		return;
	lf->path = path;
	lf->pre = pre;
	lf->order = sm->libfiles.len;
	vec_push(&sm->libfiles, lf);
	if (pre)
		index_parsed(sm, lf, pre);
	else
		scan_file(sm, lf);
}

static void scan_dir(struct sema *sm, const char *dir, struct hmap *seen)
{
	struct vec paths = { 0 };

	tapset_path_files(sm->s, dir, &paths, seen);
	for (int i = 0; i < paths.len; i++)
		add_file(sm, VEC_AT(&paths, i));
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void sema_load_library(struct sema *sm)
{
	double t0;
	struct hmap seen = { .str_keys = true };

	if (sm->library_loaded)
		return;
	sm->library_loaded = true;
	sm->lib_funcs.str_keys = true;
	sm->lib_globals.str_keys = true;
	t0 = now_ms();
	for (int i = 0; i < sm->s->tapset_dirs.len; i++)
		scan_dir(sm, VEC_AT(&sm->s->tapset_dirs, i), &seen);
	sm->library_ms += now_ms() - t0;
}

/* ---- parsing on demand ---- */

static void parse_libfile(struct sema *sm, struct libfile *lf)
{
	double t0;

	if (lf->parsed)
		return;
	t0 = now_ms();
	lf->parsed = lf->pre ? lf->pre : parse_file(sm->s, lf->src);
	hmap_put(&sm->file_order, lf->parsed, (void *)(intptr_t)(lf->order + 1));
	vec_push(&sm->library, lf->parsed);
	sema_index_file(sm, lf->parsed);
	sm->library_ms += now_ms() - t0;
}

static void parse_all_in(struct sema *sm, struct vec *files)
{
	for (int i = 0; files && i < files->len; i++)
		parse_libfile(sm, VEC_AT(files, i));
}

void sema_need_function(struct sema *sm, const char *name)
{
	sema_load_library(sm);
	parse_all_in(sm, hmap_get(&sm->lib_funcs, name));
}

void sema_need_global(struct sema *sm, const char *name)
{
	sema_load_library(sm);
	parse_all_in(sm, hmap_get(&sm->lib_globals, name));
}

/* Could alias name A stand for PT, wholly or as a prefix? */
static bool libalias_matches(const struct libalias *a, struct probe_point *pt)
{
	if (a->n > pt->comps.len)
		return false;
	for (int i = 0; i < a->n; i++) {
		struct probe_comp *c = VEC_AT(&pt->comps, i);

		if (c->arg || fnmatch(c->name, a->comps[i], 0) != 0)
			return false;
	}
	return true;
}

/* Parse the files whose aliases PT may name. */
void sema_need_aliases(struct sema *sm, struct probe_point *pt)
{
	sema_load_library(sm);
	for (int i = 0; i < sm->lib_aliases.len; i++) {
		struct libalias *a = VEC_AT(&sm->lib_aliases, i);

		if (!a->file->parsed && libalias_matches(a, pt))
			parse_libfile(sm, a->file);
	}
}

/* All function names of the library (for "did you mean"). */
int sema_library_func_names(struct sema *sm, const char ***names)
{
	struct hmap *m = &sm->lib_funcs;
	int n = 0;

	*names = arena_alloc(sizeof(char *) * (size_t)(m->len + 1));
	for (int i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			(*names)[n++] = m->slots[i].key;
	return n;
}

/* The library's alias names as text, "syscall.open" (for "did you mean"). */
struct vec sema_library_alias_names(struct sema *sm)
{
	struct vec v = { 0 };

	for (int i = 0; i < sm->lib_aliases.len; i++) {
		struct libalias *a = VEC_AT(&sm->lib_aliases, i);
		char *t = arena_strdup(a->comps[0]);

		for (int k = 1; k < a->n; k++)
			t = arena_printf("%s.%s", t, a->comps[k]);
		vec_push(&v, t);
	}
	return v;
}

/* Every file of the library, parsed (the --dump-* options list it all). */
void sema_library_parse_all(struct sema *sm)
{
	sema_load_library(sm);
	for (int i = 0; i < sm->libfiles.len; i++)
		parse_libfile(sm, VEC_AT(&sm->libfiles, i));
}

int sema_library_files(struct sema *sm)
{
	return sm->libfiles.len;
}
