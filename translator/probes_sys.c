/*
 * probes_sys.c - what this system offers to probe: tracepoints (tracefs),
 * kernel functions (BTF via probes_btf.c, then /proc/kallsyms) and
 * executables (PATH).
 * Each source is read at most once per run, and only when a probe point
 * asks for it.
 */
#include <ctype.h>
#include <dirent.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "diag.h"
#include "kdwarf.h"
#include "kmodfile.h"
#include "manifest.h"
#include "sema_int.h"
#include "probes_btf.h"
#include "probes_sys.h"
#include "sysroot.h"

/* ---- tracefs ---- */


/*
 * One "field:TYPE NAME[N];\toffset:O;\tsize:S;\tsigned:X;" line.  TYPE may
 * be several words ("unsigned long", "__data_loc char[]", "const char *").
 */
static struct tp_field *parse_field(char *decl, const char *rest)
{
	struct tp_field *f = ARENA_NEW(struct tp_field);
	char *end = decl + strlen(decl), *name, *bracket;
	int is_signed = 0;

	while (end > decl && isspace((unsigned char)end[-1]))
		*--end = '\0';
	bracket = end > decl && end[-1] == ']' ? strrchr(decl, '[') : NULL;
	if (bracket && bracket > decl && !isspace((unsigned char)bracket[-1]) &&
	    strncmp(decl, "__data_loc", 10) != 0) {
		f->array_len = atoi(bracket + 1);
		*bracket = '\0';
		end = bracket;
	}
	name = end;
	while (name > decl && (isalnum((unsigned char)name[-1]) || name[-1] == '_'))
		name--;
	f->name = arena_strdup(name);
	while (name > decl && isspace((unsigned char)name[-1]))
		name--;
	f->ctype = arena_strndup(decl, (size_t)(name - decl));
	if (strncmp(f->ctype, "__data_loc", 10) == 0)
		f->array_len = -1;
	sscanf(rest, " offset:%d; size:%d; signed:%d;", &f->offset, &f->size, &is_signed);
	f->is_signed = is_signed;
	f->is_common = strncmp(f->name, "common_", 7) == 0;
	f->type = (f->array_len != 0 && strstr(f->ctype, "char")) ? TYPE_STRING : TYPE_LONG;
	return f;
}

static void parse_format(struct tracepoint *tp, char *text)
{
	char *line, *save = NULL;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *field = strstr(line, "field:"), *semi;

		if (strncmp(line, "ID:", 3) == 0)
			tp->id = atoi(line + 3);
		if (field != line + strspn(line, " \t") || !(semi = strchr(field, ';')))
			continue;
		*semi = '\0';
		vec_push(&tp->fields, parse_field(field + 6, semi + 1));
	}
}

/* SYSTEM:NAME from tracefs, read once; NULL if this kernel has no such event. */
struct tracepoint *sys_tracepoint(struct sema *sm, const char *system, const char *name)
{
	static struct hmap cache;
	static unsigned generation;
	char *key = arena_printf("%s:%s", system, name);
	struct tracepoint *tp;
	char *text;

	if (generation != arena_generation()) {
		cache = (struct hmap){ .str_keys = true };
		generation = arena_generation();
	}
	tp = hmap_get(&cache, key);
	if (tp || hmap_get(&cache, arena_printf("!%s", key)) || !sm->s->tracefs)
		return tp;
	text = arena_read_file(arena_printf("%s/events/%s/%s/format", sm->s->tracefs,
					    system, name), NULL);
	if (!text) {
		hmap_put(&cache, arena_printf("!%s", key), key);
		return NULL;
	}
	tp = ARENA_NEW(struct tracepoint);
	tp->system = arena_strdup(system);
	tp->name = arena_strdup(name);
	tp->id = -1;
	parse_format(tp, text);
	btf_tracepoint_args(name, &tp->args);
	hmap_put(&cache, key, tp);
	return tp;
}

static struct vec *list_subdirs(const char *dir)
{
	struct vec *v = ARENA_NEW(struct vec);
	struct dirent **list;
	int n = scandir(dir, &list, NULL, alphasort);

	for (int i = 0; i < n; i++) {
		if (list[i]->d_name[0] != '.' &&
		    (list[i]->d_type == DT_DIR || list[i]->d_type == DT_UNKNOWN))
			vec_push(v, arena_strdup(list[i]->d_name));
		free(list[i]);
	}
	if (n >= 0)
		free(list);
	return v;
}

struct vec *sys_tracepoint_systems(struct sema *sm)
{
	static struct vec *systems;
	static unsigned generation;

	if (generation != arena_generation()) {
		systems = NULL;
		generation = arena_generation();
	}
	if (!systems)
		systems = sm->s->tracefs ? list_subdirs(arena_printf("%s/events", sm->s->tracefs))
					 : ARENA_NEW(struct vec);
	return systems;
}

struct vec *sys_tracepoint_names(struct sema *sm, const char *system)
{
	static struct hmap cache;
	static unsigned generation;
	struct vec *v;

	if (generation != arena_generation()) {
		cache = (struct hmap){ .str_keys = true };
		generation = arena_generation();
	}
	v = hmap_get(&cache, system);
	if (!v) {
		v = sm->s->tracefs ? list_subdirs(arena_printf("%s/events/%s", sm->s->tracefs, system))
				   : ARENA_NEW(struct vec);
		hmap_put(&cache, arena_strdup(system), v);
	}
	return v;
}

/* ---- kernel functions ---- */

struct symset {
	bool loaded;
	struct vec names;	/* char * */
	struct hmap set;	/* name -> name */
	struct hmap twice;	/* names added more than once (str_keys: set's) */
	bool from_ko;		/* a module's, from its .ko: ftrace does not list them */
};

static void symset_add(struct symset *ss, const char *name)
{
	if (!hmap_get(&ss->set, name)) {
		hmap_put(&ss->set, name, (void *)name);
		vec_push(&ss->names, (void *)name);
	} else {
		ss->twice.str_keys = true;
		hmap_put(&ss->twice, name, (void *)1);
	}
}

/*
 * A kallsyms LINE's address, type and name (cut at its end, or before a
 * module's " [M]", which *MODULE then says); false if it is not one.
 * sscanf() took a fifth of a one-liner's pass 2 on kallsyms' lines.
 */
static bool kallsyms_line(char *line, unsigned long long *addr, char *type, char **name,
			  bool *module)
{
	char *p;

	*addr = strtoull(line, &p, 16);
	if (p == line || p[0] != ' ' || !p[1] || p[2] != ' ')
		return false;
	*type = p[1];
	*name = p + 3;
	p = *name + strcspn(*name, " \t\n");
	*module = *p == ' ' || *p == '\t';
	*p = '\0';
	return **name != '\0';
}

static void load_kallsyms(struct symset *ss)
{
	FILE *f = sysroot_kallsyms();
	unsigned long long addr;
	char line[512], type, *name;
	bool module;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		/* W: a weak function; "[M]" ends a loaded module's, which kernel.function is not */
		if (kallsyms_line(line, &addr, &type, &name, &module) && strchr("tTwW", type) &&
		    !module)
			symset_add(ss, arena_strdup(name));
	}
	fclose(f);
}

static int count_matches(struct symset *ss, const char *pattern)
{
	int n = 0;

	if (!strpbrk(pattern, "*?["))
		return hmap_get(&ss->set, pattern) ? 1 : 0;
	for (int i = 0; i < ss->names.len; i++)
		if (fnmatch(pattern, VEC_AT(&ss->names, i), 0) == 0)
			n++;
	return n;
}

/* A name close to PATTERN, looking only at names of a similar start and length. */
static const char *similar_name(struct symset *ss, const char *pattern)
{
	struct vec near = { 0 };
	size_t len = strlen(pattern);

	for (int i = 0; i < ss->names.len; i++) {
		const char *s = VEC_AT(&ss->names, i);
		size_t l = strlen(s);

		if (s[0] == pattern[0] && l + 3 >= len && l <= len + 3)
			vec_push(&near, (void *)s);
	}
	return diag_similar(pattern, (const char *const *)near.items, near.len);
}

static struct symset btf_funcs, ksyms;

/* The function names of BTF and of /proc/kallsyms, each read when first needed. */
static struct symset *function_set(bool want_ksyms)
{
	static unsigned generation;

	if (generation != arena_generation()) {
		btf_funcs = (struct symset){ .set = { .str_keys = true } };
		ksyms = btf_funcs;
		generation = arena_generation();
	}
	if (!btf_funcs.loaded) {
		btf_funcs.loaded = true;
		btf_function_names(&btf_funcs.names, &btf_funcs.set);
	}
	if (want_ksyms && !ksyms.loaded) {
		ksyms.loaded = true;
		load_kallsyms(&ksyms);
	}
	return want_ksyms ? &ksyms : &btf_funcs;
}

/*
 * How many kernel functions PATTERN (a name or a wildcard) matches: BTF
 * first, /proc/kallsyms when BTF has none.  *SIMILAR gets a close name
 * when there is no match.
 */
int sys_kernel_function_matches(const char *pattern, const char **similar)
{
	struct symset *btf = function_set(false), *ks;
	int n = count_matches(btf, pattern);

	if (n)
		return n;
	ks = function_set(true);
	n = count_matches(ks, pattern);
	if (!n && similar)
		*similar = strpbrk(pattern, "*?[") ? NULL
			   : similar_name(btf->names.len ? btf : ks, pattern);
	return n;
}

bool sys_kernel_function_unique(const char *name)
{
	struct symset *ks = function_set(true);

	return hmap_get(&ks->set, name) && !hmap_get(&ks->twice, name);
}

/*
 * The functions ftrace can trace (so fentry and kprobes at a function's
 * entry): tracefs' available_filter_functions, "name" or "name [module]"
 * a line.  NULL when it cannot be read (tracefs not mounted, not root).
 */
static struct hmap *traceable_functions(void)
{
	static struct hmap set;
	static unsigned generation;
	static bool tried, ok;
	FILE *f;
	char line[512], name[256], mod[128];

	if (generation != arena_generation()) {
		set = (struct hmap){ .str_keys = true };
		tried = ok = false;
		generation = arena_generation();
	}
	if (tried)
		return ok ? &set : NULL;
	tried = true;
	f = fopen(sysroot_path("/sys/kernel/tracing/available_filter_functions"), "r");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		int n = sscanf(line, "%255s [%127[^]]]", name, mod);

		if (n >= 1)
			hmap_put(&set, arena_strdup(name), (void *)1);
		if (n == 2) {	/* a loaded module's: "M:F", and "[M]" */
			hmap_put(&set, arena_printf("%s:%s", mod, name), (void *)1);
			hmap_put(&set, arena_printf("[%s]", mod), (void *)1);
		}
	}
	fclose(f);
	ok = set.len > 0;
	return ok ? &set : NULL;
}

bool sys_kernel_function_traceable(const char *name)
{
	struct hmap *ok = traceable_functions();
	const char *colon = strchr(name, ':');

	if (ok && colon && !hmap_get(ok, arena_printf("[%.*s]", (int)(colon - name), name)))
		return true;	/* a module not loaded then: the kernel will say */
	return !ok || hmap_get(ok, name);
}

/*
 * The functions of MODULE from its .ko when kallsyms has none (it was not
 * loaded when the snapshot was taken): its function symbols in .text
 * sections, not .init.text (freed once it is loaded) nor .exit.text.
 */
static void ko_functions(const char *module, struct symset *ss)
{
	const char *path = kmodfile_path(module);
	struct vec names = { 0 };

	if (path && kdwarf_ko_functions(path, &names))
		for (int i = 0; i < names.len; i++)
			symset_add(ss, VEC_AT(&names, i));
}

/*
 * The functions of MODULE, from /proc/kallsyms ("addr t name [module]"),
 * else its .ko; read once per module (a tapset probes many of one module).
 */
static struct symset *module_functions(const char *module)
{
	static struct hmap mods;
	static unsigned generation;
	struct symset *ss;
	FILE *f;
	char line[512], type, name[256], mod[128];

	if (generation != arena_generation()) {
		mods = (struct hmap){ .str_keys = true };
		generation = arena_generation();
	}
	if ((ss = hmap_get(&mods, module)))
		return ss;
	ss = ARENA_NEW(struct symset);
	ss->set.str_keys = true;
	hmap_put(&mods, arena_strdup(module), ss);
	f = sysroot_kallsyms();

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%*s %c %255s [%127[^]]]", &type, name, mod) == 3 &&
			    (type == 't' || type == 'T') && strcmp(mod, module) == 0)
				symset_add(ss, arena_strdup(name));
		fclose(f);
	}
	if (!ss->names.len) {
		ko_functions(module, ss);
		ss->from_ko = true;
	}
	return ss;
}

/* The names of kallsyms' text symbols in [_sinittext, _einittext): two reads of the file. */
static void load_init_functions(struct hmap *set)
{
	FILE *f = sysroot_kallsyms();
	unsigned long long addr, lo = 0, hi = 0;
	char line[512], type, *name;
	bool module;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && !(lo && hi))
		if (kallsyms_line(line, &addr, &type, &name, &module)) {
			if (strcmp(name, "_sinittext") == 0)
				lo = addr;
			else if (strcmp(name, "_einittext") == 0)
				hi = addr;
		}
	rewind(f);
	while (lo < hi && fgets(line, sizeof(line), f))
		if (kallsyms_line(line, &addr, &type, &name, &module) && addr >= lo && addr < hi &&
		    (type == 't' || type == 'T') && !module)
			hmap_put(set, arena_strdup(name), (void *)1);
	fclose(f);
}

bool sys_kernel_function_is_init(const char *name)
{
	static struct hmap set;
	static unsigned generation;
	static bool loaded;

	if (generation != arena_generation()) {
		set = (struct hmap){ .str_keys = true };
		loaded = false;
		generation = arena_generation();
	}
	if (!loaded) {
		loaded = true;
		load_init_functions(&set);
	}
	return hmap_get(&set, name) != NULL;
}

int sys_kernel_functions(const char *module, const char *pattern, struct vec *names,
			 const char **similar)
{
	struct symset *ss;
	struct hmap *ok = strpbrk(pattern, "*?[") ? traceable_functions() : NULL;
	int before = names->len;

	if (module) {
		ss = module_functions(module);
		if (ss->from_ko)
			ok = NULL;
	} else {
		ss = function_set(false);
		if (!count_matches(ss, pattern))
			ss = function_set(true);
	}
	if (!strpbrk(pattern, "*?[")) {
		if (hmap_get(&ss->set, pattern) && (module || !sys_kernel_function_is_init(pattern)))
			vec_push(names, (void *)pattern);
	} else {
		for (int i = 0; i < ss->names.len; i++) {
			const char *n = VEC_AT(&ss->names, i);

			if (fnmatch(pattern, n, 0) == 0 && (!ok || hmap_get(ok, n)))
				vec_push(names, (void *)n);
		}
	}
	if (names->len == before && similar)
		*similar = strpbrk(pattern, "*?[") || !ss->names.len ? NULL
			   : similar_name(ss, pattern);
	return names->len - before;
}

/* ---- executables ---- */

static bool usable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static const char *find_executable(const char *path);

/* PATH as process("PATH") means it: absolute, or looked up in $PATH; NULL if missing. */
const char *sys_find_executable(const char *path)
{
	const char *found = find_executable(path);

	manifest_exe(path, found);	/* a later run looks again */
	return found;
}

static const char *find_executable(const char *path)
{
	const char *dirs = getenv("PATH");
	char resolved[PATH_MAX];

	if (strchr(path, '/')) {
		if (!usable_file(path))
			return NULL;
		if (path[0] == '/' || !realpath(path, resolved))
			return path;
		return arena_strdup(resolved);
	}
	if (!dirs || !*dirs)
		dirs = "/usr/local/bin:/usr/bin:/bin";
	while (*dirs) {
		size_t n = strcspn(dirs, ":");
		char *cand = arena_printf("%.*s/%s", (int)n, dirs, path);

		if (n && usable_file(cand) && access(cand, X_OK) == 0)
			return cand;
		dirs += n + (dirs[n] == ':');
	}
	return NULL;
}
