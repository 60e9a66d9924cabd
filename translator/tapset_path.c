/*
 * tapset_path.c - the files of the tapset path, and pass 1's parse of the
 * -I directories (stap parses its whole tapset path in pass 1; pmstap
 * parses the default library on demand in pass 2, sema_library.c, and
 * only the -I directories here, so that a broken tapset of the user's is
 * reported and skipped as stap does).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "diag.h"
#include "hmap.h"
#include "lex.h"
#include "parse.h"
#include "tapset_path.h"

/* Architecture subdirectories of a tapset tree that are not this machine's. */
static bool foreign_arch_dir(const struct session *s, const char *name)
{
	static const char *const arches[] = {
		"x86_64", "i386", "arm", "arm64", "aarch64", "powerpc", "ppc64",
		"s390", "s390x", "ia64", "mips", "riscv", "loongarch64",
	};

	for (size_t i = 0; i < sizeof(arches) / sizeof(arches[0]); i++)
		if (strcmp(name, arches[i]) == 0)
			return !s->arch || strcmp(name, s->arch) != 0;
	return false;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && strcmp(s + n - k, suffix) == 0;
}

const char *tapset_path_display(const char *path)
{
	static char cwd[4096];
	size_t n;

	if (!cwd[0] && !getcwd(cwd, sizeof(cwd) - 1))
		return path;
	n = strlen(cwd);
	if (strncmp(path, cwd, n) == 0 && path[n] == '/')
		return path + n + 1;
	return path;
}

/* Was PATH (ST) listed already, under this name or another?  As stap, by inode. */
static bool seen_before(struct hmap *seen, const struct stat *st)
{
	char *id;

	if (!seen)
		return false;
	id = arena_printf("%ju:%ju", (uintmax_t)st->st_dev, (uintmax_t)st->st_ino);
	if (hmap_get(seen, id))
		return true;
	hmap_put(seen, id, id);
	return false;
}

static void walk(const struct session *s, const char *dir, int depth, struct vec *paths,
		 struct hmap *seen)
{
	struct dirent **list;
	int n = scandir(dir, &list, NULL, alphasort);
	struct vec subdirs = { 0 };

	if (n < 0)
		return;
	for (int i = 0; i < n; i++) {
		const char *name = list[i]->d_name;
		char *path = arena_printf("%s/%s", dir, name);
		struct stat st;

		if (name[0] != '.' && stat(path, &st) == 0) {
			if (S_ISDIR(st.st_mode) && !foreign_arch_dir(s, name))
				vec_push(&subdirs, path);
			else if (S_ISREG(st.st_mode) && has_suffix(name, ".stp") &&
				 !seen_before(seen, &st))
				vec_push(paths, path);
		}
		free(list[i]);
	}
	free(list);
	for (int i = 0; depth < 8 && i < subdirs.len; i++)
		walk(s, VEC_AT(&subdirs, i), depth + 1, paths, seen);
}

void tapset_path_files(const struct session *s, const char *dir, struct vec *paths,
		       struct hmap *seen)
{
	walk(s, dir, 0, paths, seen);
}

static bool same_file(const char *path, const struct stat *st)
{
	struct stat other;

	return stat(path, &other) == 0 && other.st_dev == st->st_dev && other.st_ino == st->st_ino;
}

static int is_stpm(const struct dirent *d)
{
	return has_suffix(d->d_name, ".stpm");
}

const char *tapset_path_holding(const struct session *s, const char *path)
{
	struct stat st;
	const char *found = NULL;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return NULL;
	for (int i = 0; !found && i < s->tapset_dirs.len; i++) {
		const char *dir = VEC_AT(&s->tapset_dirs, i);
		struct vec paths = { 0 };
		struct dirent **list;
		int n = scandir(dir, &list, is_stpm, alphasort);

		for (int j = 0; j < n; j++) {
			char *p = arena_printf("%s/%s", dir, list[j]->d_name);

			if (!found && same_file(p, &st))
				found = p;
			free(list[j]);
		}
		if (n >= 0)
			free(list);
		tapset_path_files(s, dir, &paths, NULL);
		for (int j = 0; !found && j < paths.len; j++)
			if (same_file(VEC_AT(&paths, j), &st))
				found = VEC_AT(&paths, j);
	}
	return found;
}

/* One file of a -I directory: parsed, or shown with its errors and skipped. */
static bool parse_include(struct session *s, const char *path)
{
	const char *shown = tapset_path_display(path);
	struct source *src = lex_source_read_file(shown, true);
	int errors = diag_error_count();
	struct stapfile *f;

	if (!src)
		return false;
	f = parse_file(s, src);
	if (diag_error_count() == errors) {
		hmap_put(s->include_parsed, path, f);
		return true;
	}
	diag_demote_errors(errors);
	diag_warning((struct srcloc){ 0 }, "tapset \"%s\" has errors, and will be skipped", shown);
	hmap_put(s->include_parsed, path, s);	/* skipped */
	return false;
}

int tapset_path_parse_includes(struct session *s)
{
	struct vec paths = { 0 };
	struct hmap seen = { .str_keys = true };
	int good = 0;

	s->include_parsed = ARENA_NEW(struct hmap);
	s->include_parsed->str_keys = true;
	for (int i = 0; i < s->include_dirs; i++)
		tapset_path_files(s, VEC_AT(&s->tapset_dirs, i), &paths, &seen);
	for (int i = 0; i < paths.len; i++)
		good += parse_include(s, VEC_AT(&paths, i));
	return good;
}

struct stapfile *tapset_path_parsed(const struct session *s, const char *path, bool *known)
{
	void *v = s->include_parsed ? hmap_get(s->include_parsed, path) : NULL;

	*known = v != NULL;
	return v == s ? NULL : v;
}
