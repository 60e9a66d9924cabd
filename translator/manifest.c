/*
 * manifest.c - the cache's direct lookup (manifest.h).
 *
 * A manifest is text, one entry a line:
 *
 *	pmstap manifest 1
 *	key HEX			the build the inputs below led to
 *	tree ID-HASH DIR	a tapset or runtime directory: every entry, by identity
 *	file ID PATH		the script, an ELF file passes 1-2 read
 *	exe ID QUERY		what sys_find_executable(QUERY) found (ID "none": nothing)
 *	said LEN		then LEN bytes: what passes 1-2 printed
 *
 * A file's identity is its size, modification and change times, inode,
 * device and mode; ctime cannot be set back, so a file rewritten with its
 * old size and mtime still differs.
 */
#define _GNU_SOURCE		/* fopencookie() */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "arena.h"
#include "cache.h"
#include "diag.h"
#include "filedeps.h"
#include "manifest.h"
#include "probes_sys.h"
#include "sysroot.h"

extern char **environ;

#define MANIFEST_HEAD "pmstap manifest 1\n"
/* A file changed this recently may have changed again within one tick of its clock. */
#define RACY_NS 1000000000LL

static struct {
	const char *prekey;	/* the manifest's name; NULL: no manifest this run */
	const char *unsure;	/* why this run writes none */
	struct timespec start;	/* before pass 1 read anything */
	long long newest_ns;	/* the latest mtime or ctime of an entry written */
	struct vec exes;	/* char *: "QUERY\0ANSWER" pairs, as found */
	struct vec files;	/* char *: other files passes 1-2 read (manifest_file()) */
	FILE *tee;		/* diag's stream while passes 1-2 run */
	char *said;		/* what went through it */
	size_t said_len;
	unsigned generation;
} m;

/* ---- identities ---- */

static long long ns_of(struct timespec t)
{
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static const char *id_of(const char *path)
{
	struct stat st;
	long long mt, ct;

	if (!path || stat(path, &st) != 0)
		return "none";
	mt = ns_of(st.st_mtim);
	ct = ns_of(st.st_ctim);
	if (mt > m.newest_ns)
		m.newest_ns = mt;
	if (ct > m.newest_ns)
		m.newest_ns = ct;
	return arena_printf("%lld:%lld:%lld:%llu:%llu:%o", (long long)st.st_size, mt, ct,
			    (unsigned long long)st.st_ino, (unsigned long long)st.st_dev,
			    (unsigned)st.st_mode);
}

static void add(struct cache_sha256 *c, const char *tag, const char *v)
{
	cache_sha256_tagged(c, tag, v ? v : "", v ? strlen(v) : 0);
}

/* Every entry under DIR, by name and identity, in name order. */
static void add_tree(struct cache_sha256 *c, const char *dir, int depth)
{
	struct dirent **list;
	int n = scandir(dir, &list, NULL, alphasort);

	add(c, "dir", n < 0 ? strerror(errno) : "");
	for (int i = 0; i < n; i++) {
		const char *name = list[i]->d_name;
		char *path = arena_printf("%s/%s", dir, name);
		struct stat st;

		if (strcmp(name, ".") && strcmp(name, "..")) {
			add(c, "name", name);
			add(c, "id", id_of(path));
			if (depth < 8 && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
				add_tree(c, path, depth + 1);
		}
		free(list[i]);
	}
	if (n >= 0)
		free(list);
}

static const char *tree_id(const char *dir)
{
	struct cache_sha256 c;

	cache_sha256_init(&c);
	add_tree(&c, dir, 0);
	return cache_sha256_hex(&c);
}

static const char *exe_id(const char *query)
{
	return id_of(sys_find_executable(query));
}

/* ---- the manifest's name: what decides passes 1-2 before they run ---- */

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool read_by_pmstap(const char *var)
{
	static const char *const prefixes[] = {
		"PMSTAP_", "SYSTEMTAP_", "DEBUGINFOD_", "LIBBPF_", "PATH=", "LD_LIBRARY_PATH=",
		"HOME=", "TMPDIR=", "LANG=", "LC_ALL=", "LC_CTYPE=", "LC_MESSAGES=",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(var, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

static void add_environment(struct cache_sha256 *c)
{
	struct vec vars = { 0 };

	for (char **e = environ; *e; e++)
		if (read_by_pmstap(*e))
			vec_push(&vars, *e);
	if (vars.len)
		qsort(vars.items, (size_t)vars.len, sizeof(void *), by_name);
	for (int i = 0; i < vars.len; i++)
		add(c, "env", VEC_AT(&vars, i));
}

/* /proc/modules, less the columns that move while nothing is loaded (users, state). */
static void add_modules(struct cache_sha256 *c)
{
	FILE *f = fopen("/proc/modules", "r");
	char line[512], name[128], addr[64];
	unsigned long size;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %lu %*s %*s %*s %63s", name, &size, addr) == 3)
			add(c, "module", arena_printf("%s %lu %s", name, size, addr));
	if (f)
		fclose(f);
	else
		add(c, "modules", "none");
}

static void add_text_file(struct cache_sha256 *c, const char *tag, const char *path)
{
	char *text = path ? arena_read_file(path, NULL) : NULL;

	add(c, tag, text ? text : "none");
}

static const char *prekey(struct session *s, int argc, char **argv)
{
	struct cache_sha256 c;
	char cwd[4096];

	cache_sha256_init(&c);
	c.trace = "manifest name";	/* why a manifest was not found */
	add(&c, "manifest", MANIFEST_HEAD PMSTAP_VERSION);
	add(&c, "exe", id_of("/proc/self/exe"));
	for (int i = 1; i < argc; i++)
		add(&c, "arg", argv[i]);
	add(&c, "cwd", getcwd(cwd, sizeof(cwd)) ? cwd : "none");
	add_environment(&c);
	add(&c, "ids", arena_printf("%d %d %d %d", (int)getuid(), (int)geteuid(), (int)getgid(),
				   (int)getegid()));
	add(&c, "release", sysroot_kernel_release());
	add(&c, "build", sysroot_kernel_version());
	add(&c, "build-id", sysroot_kernel_build_id());
	add_text_file(&c, "boot", "/proc/sys/kernel/random/boot_id");	/* kallsyms, KASLR */
	add_modules(&c);	/* tracepoints, BTF and functions of modules */
	add_text_file(&c, "dynamic-events",	/* kprobe, uprobe and synthetic events */
		      s->tracefs ? arena_printf("%s/dynamic_events", s->tracefs) : NULL);
	return cache_sha256_hex(&c);
}

/* ---- what passes 1-2 print, kept ---- */

static ssize_t tee_write(void *cookie, const char *buf, size_t n)
{
	char *more = realloc(m.said, m.said_len + n);

	(void)cookie;
	if (more) {
		memcpy(more + m.said_len, buf, n);
		m.said = more;
		m.said_len += n;
	} else {
		manifest_unsure("out of memory");
	}
	return (ssize_t)fwrite(buf, 1, n, stderr);
}

static void keep_what_is_said(void)
{
	m.tee = fopencookie(NULL, "w", (cookie_io_functions_t){ .write = tee_write });
	if (!m.tee) {
		manifest_unsure("cannot keep diagnostics");
		return;
	}
	setvbuf(m.tee, NULL, _IONBF, 0);	/* in order with stderr's -v lines */
	diag_set_stream(m.tee);
}

void manifest_passes_done(void)
{
	if (!m.tee)
		return;
	diag_set_stream(NULL);
	fclose(m.tee);
	m.tee = NULL;
}

/* ---- lookup ---- */

static void fresh(void)
{
	if (m.generation != arena_generation()) {
		free(m.said);
		memset(&m, 0, sizeof(m));
		m.generation = arena_generation();
	}
}

/* PMSTAP_DEBUG_KEY: why a manifest was not used, or not written */
static void debug(const char *what, const char *why)
{
	if (getenv("PMSTAP_DEBUG_KEY"))
		fprintf(stderr, "manifest: %s: %s\n", what, why);
}

static bool entry_holds(const char *kind, const char *id, const char *arg)
{
	const char *now = strcmp(kind, "tree") == 0   ? tree_id(arg)
			: strcmp(kind, "file") == 0 ? id_of(arg)
			: strcmp(kind, "exe") == 0  ? exe_id(arg)
						    : NULL;

	if (now && strcmp(now, id) == 0)
		return true;
	debug(arena_printf("%s %s", kind, arg), arena_printf("was %s, is %s", id, now ? now : "?"));
	return false;
}

/*
 * The key TEXT (a manifest) names, when each of its entries holds; what
 * passes 1-2 said goes to *SAID.
 */
static const char *check(char *text, const char **said, size_t *said_len)
{
	const char *key = NULL;
	char *line, *next;

	if (strncmp(text, MANIFEST_HEAD, strlen(MANIFEST_HEAD)) != 0)
		return NULL;
	for (line = text + strlen(MANIFEST_HEAD); *line; line = next) {
		char *end = strchr(line, '\n'), *kind = line, *id, *arg;

		if (!end)
			return NULL;
		*end = '\0';
		next = end + 1;
		if (strncmp(line, "said ", 5) == 0) {
			*said_len = strtoul(line + 5, NULL, 10);
			*said = next;
			return strlen(next) == *said_len ? key : NULL;
		}
		if (!(id = strchr(kind, ' ')))
			return NULL;
		*id++ = '\0';
		if (strcmp(kind, "key") == 0) {
			key = id;
			continue;
		}
		if (!(arg = strchr(id, ' ')))
			return NULL;
		*arg++ = '\0';
		if (!entry_holds(kind, id, arg))
			return NULL;
	}
	return NULL;
}

static const char *manifest_path(const char *root)
{
	return arena_printf("%s/manifest-%s", root, m.prekey);
}

/* Why this run can have no manifest, before pass 1; NULL when it can. */
static const char *unsuitable(struct session *s)
{
	const char *env;

	if (s->dump || s->list_pattern || s->last_pass < 3)
		return "it stops before pass 3";
	if ((env = getenv("PMSTAP_NO_MANIFEST")) && *env)	/* passes 1-2 always (bench) */
		return "PMSTAP_NO_MANIFEST is set";
	if (s->script_path && strcmp(s->script_path, "-") == 0)
		return "the script comes from stdin";
	if (((env = getenv("PMSTAP_SYSROOT")) && *env) || ((env = getenv("PMSTAP_VMLINUX")) && *env))
		return "the kernel is another machine's";
	if (strcmp(s->kernel_release, sysroot_kernel_release()) != 0)
		return "-r names another kernel";
	if (strcmp(s->runtime, "kernel") == 0)
		return "the kernel runtime reads its release's build tree";
	return NULL;
}

const char *manifest_lookup(struct session *s, int argc, char **argv)
{
	const char *root, *key, *said = NULL, *stale, *dir;
	size_t said_len = 0;
	char *text;

	fresh();
	clock_gettime(CLOCK_REALTIME, &m.start);
	if ((m.unsure = unsuitable(s))) {
		debug("none", m.unsure);
		return NULL;
	}
	if (!(root = cache_root_quiet()))
		return NULL;	/* build_program() says why */
	m.prekey = prekey(s, argc, argv);
	text = arena_read_file(manifest_path(root), NULL);
	if (!text)
		debug(manifest_path(root), strerror(errno));
	if (text && (key = check(text, &said, &said_len)) &&
	    (dir = cache_lookup(root, key, &stale))) {
		fwrite(said, 1, said_len, stderr);
		return dir;
	}
	keep_what_is_said();
	return NULL;
}

void manifest_unsure(const char *why)
{
	fresh();
	if (!m.unsure)
		m.unsure = why;
}

void manifest_file(const char *path)
{
	fresh();
	for (int i = 0; i < m.files.len; i++)
		if (strcmp(VEC_AT(&m.files, i), path) == 0)
			return;
	vec_push(&m.files, arena_strdup(path));
}

void manifest_exe(const char *query, const char *answer)
{
	char *pair;

	fresh();
	for (int i = 0; i < m.exes.len; i++)
		if (strcmp(VEC_AT(&m.exes, i), query) == 0)
			return;
	pair = arena_alloc(strlen(query) + strlen(answer ? answer : "") + 2);
	strcpy(pair, query);
	strcpy(pair + strlen(query) + 1, answer ? answer : "");
	vec_push(&m.exes, pair);
}

/* ---- writing ---- */

static bool one_line(const char *s)
{
	return !strchr(s, '\n');
}

static void put_tree(FILE *f, const char *dir)
{
	if (!one_line(dir))
		manifest_unsure("a directory's name has a newline");
	fprintf(f, "tree %s %s\n", tree_id(dir), dir);
}

static void put_file(FILE *f, const char *path)
{
	if (!one_line(path))
		manifest_unsure("a file's name has a newline");
	fprintf(f, "file %s %s\n", id_of(path), path);
}

/* The manifest's text: whether it holds is decided by m.unsure once it is made. */
static char *manifest_text(struct session *s, const char *key, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		return NULL;
	fprintf(f, MANIFEST_HEAD "key %s\n", key);
	for (int i = 0; i < s->tapset_dirs.len; i++)
		put_tree(f, VEC_AT(&s->tapset_dirs, i));
	if (s->runtime_dir)
		put_tree(f, s->runtime_dir);
	if (s->script_path)
		put_file(f, s->script_path);
	for (int i = 0; i < filedeps_count(); i++)
		put_file(f, filedeps_at(i)->path);
	for (int i = 0; i < m.files.len; i++)
		put_file(f, VEC_AT(&m.files, i));
	for (int i = 0; i < m.exes.len; i++) {
		const char *query = VEC_AT(&m.exes, i), *answer = query + strlen(query) + 1;

		if (!one_line(query))
			manifest_unsure("a program's name has a newline");
		fprintf(f, "exe %s %s\n", id_of(*answer ? answer : NULL), query);
	}
	fprintf(f, "said %zu\n", m.said_len);
	if (m.said_len)
		fwrite(m.said, 1, m.said_len, f);
	fclose(f);
	return text;
}

void manifest_write(struct session *s, const char *root, const char *key)
{
	char *text, *tmp;
	size_t len = 0;
	int fd;

	fresh();
	if (!m.prekey || m.unsure || !key || diag_duplicates_left_out())
		return;
	if (!(text = manifest_text(s, key, &len)))
		return;
	if (m.newest_ns >= ns_of(m.start) - RACY_NS)
		manifest_unsure("a file it read changed in the last second");
	if (m.unsure)
		debug("not written", m.unsure);
	tmp = arena_printf("%s/.manifest-%s-XXXXXX", root, m.prekey);
	if (!m.unsure && (fd = mkstemp(tmp)) >= 0) {
		bool ok = write(fd, text, len) == (ssize_t)len;

		if (close(fd) != 0 || !ok || rename(tmp, manifest_path(root)) != 0)
			unlink(tmp);
	}
	free(text);
}
