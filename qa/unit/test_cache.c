/*
 * test_cache.c - the cache of compiled scripts: SHA-256, what the key
 * depends on (and what it does not), atomic publication and cleanup.
 *
 * Everything happens under a directory this suite makes in /tmp, with
 * PMSTAP_CACHE pointing into it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "unit.h"
#include "../../translator/cache.h"
#include "../../translator/diag.h"
#include "../../translator/filedeps.h"
#include "../../translator/lex.h"
#include "../../translator/parse.h"
#include "../../translator/program.h"
#include "../../translator/sema.h"

static struct session sess;
static const char *stale_file;	/* cache_lookup's word on a build it removed */
static char top[64];
static char *diag_text;
static size_t diag_len;
static FILE *diag_f;

static const char *path_in(const char *name)
{
	return arena_printf("%s/%s", top, name);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	strcpy(top, "/tmp/pmstap-test-cache-XXXXXX");
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		exit(2);
	}
	mkdir(path_in("tapset"), 0755);
	mkdir(path_in("runtime"), 0755);
	write_file(path_in("tapset/used.stp"), "function used_f:long () { return 1 }\n");
	write_file(path_in("tapset/other.stp"), "function other_f:long () { return 2 }\n");
	write_file(path_in("runtime/stp_x.h"), "#define STP_X 1\n");
	memset(&sess, 0, sizeof(sess));
	sess.kernel_release = "6.1.0";
	sess.arch = "x86_64";
	sess.runtime = "bpf";
	sess.privilege = "stapdev";
	sess.runtime_dir = arena_strdup(path_in("runtime"));
	vec_push(&sess.tapset_dirs, arena_strdup(path_in("tapset")));
	setenv("PMSTAP_CACHE", path_in("cache"), 1);
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", top);
}

/* Diagnostics into diag_text until loud_diags(). */
static void quiet_diags(void)
{
	free(diag_text);
	diag_text = NULL;
	diag_f = open_memstream(&diag_text, &diag_len);
	diag_set_stream(diag_f);
	diag_reset();
}

static void loud_diags(void)
{
	fclose(diag_f);
	diag_set_stream(NULL);
}

static const struct program *elab(const char *text)
{
	struct stapfile *file;
	const struct program *prog;

	quiet_diags();
	file = parse_file(&sess, lex_source_from_string("t.stp", text));
	prog = file ? sema_elaborate(&sess, file) : NULL;
	loud_diags();
	if (!prog) {
		fprintf(stderr, "%s", diag_text ? diag_text : "");
		CU_FAIL_FATAL("the test script does not elaborate");
	}
	return prog;
}

static const char script[] = "probe begin { println(used_f()) }\n";

static const char *key_of(const char *text)
{
	return cache_key(&sess, elab(text));
}

/* ---- SHA-256 ---- */

/* The digest with the portable rounds, checked to be the CPU's (where it has them). */
static const char *sha_hex(const void *data, size_t n, size_t chunk)
{
	unsigned char d[2][32];
	char *out = arena_alloc(65);

	for (int portable = 0; portable < 2; portable++) {
		struct cache_sha256 c;

		cache_sha256_init(&c);
		c.portable = portable;
		for (size_t off = 0; off < n; off += chunk)
			cache_sha256_update(&c, (const char *)data + off, n - off < chunk ? n - off : chunk);
		cache_sha256_final(&c, d[portable]);
	}
	CU_ASSERT(memcmp(d[0], d[1], 32) == 0);
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", d[1][i]);
	return out;
}

static void test_sha256_vectors(void)
{
	static const char two_blocks[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

	CU_ASSERT_STRING_EQUAL(sha_hex("", 0, 1),
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	CU_ASSERT_STRING_EQUAL(sha_hex("abc", 3, 3),
		"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	CU_ASSERT_STRING_EQUAL(sha_hex(two_blocks, strlen(two_blocks), 64),
		"248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_sha256_million(void)
{
	char *a = malloc(1000000);

	memset(a, 'a', 1000000);
	/* in one piece, and in pieces that straddle blocks */
	CU_ASSERT_STRING_EQUAL(sha_hex(a, 1000000, 1000000),
		"cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	CU_ASSERT_STRING_EQUAL(sha_hex(a, 1000000, 37),
		"cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
}

/* Every length from 0 to 300 bytes of varied data: both rounds agree. */
static void test_sha256_lengths(void)
{
	unsigned char data[300];

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 167 + 13);
	for (size_t n = 0; n <= sizeof(data); n++)
		sha_hex(data, n, n % 7 + 1);
}

/* ---- the key ---- */

static void test_key_stable(void)
{
	const char *k1 = key_of(script), *k2 = key_of(script);

	CU_ASSERT_EQUAL(strlen(k1), 64);
	CU_ASSERT_EQUAL(strspn(k1, "0123456789abcdef"), 64);
	CU_ASSERT_STRING_EQUAL(k1, k2);
}

static void test_key_script(void)
{
	CU_ASSERT_STRING_NOT_EQUAL(key_of(script), key_of("probe begin { println(used_f() + 1) }\n"));
}

static void test_key_define(void)
{
	const char *before = key_of(script), *after;

	vec_push(&sess.defines, "MAXACTION=5");
	after = key_of(script);
	sess.defines.len--;
	CU_ASSERT_STRING_NOT_EQUAL(before, after);
	CU_ASSERT_STRING_EQUAL(before, key_of(script));
}

static void test_key_args(void)
{
	static const char *args[] = { "1" };
	const char *before = key_of(script), *after;

	sess.args = args;
	sess.nargs = 1;
	after = key_of(script);
	sess.nargs = 0;
	CU_ASSERT_STRING_NOT_EQUAL(before, after);
}

static void test_key_release_and_options(void)
{
	const char *before = key_of(script);

	sess.kernel_release = "6.2.0";
	CU_ASSERT_STRING_NOT_EQUAL(before, key_of(script));
	sess.kernel_release = "6.1.0";
	sess.guru = true;
	CU_ASSERT_STRING_NOT_EQUAL(before, key_of(script));
	sess.guru = false;
	/* -G is set at run time: the same build serves every value */
	vec_push(&sess.global_sets, "x=1");
	CU_ASSERT_STRING_EQUAL(before, key_of(script));
	sess.global_sets.len--;
	CU_ASSERT_STRING_EQUAL(before, key_of(script));
}

/* A tapset the program uses counts; one it does not use does not. */
static void test_key_tapsets(void)
{
	const char *before = key_of(script);

	/* each elaboration reads the library again, as a new pmstap would */
	write_file(path_in("tapset/other.stp"), "function other_f:long () { return 3 }\n");
	CU_ASSERT_STRING_EQUAL(before, key_of(script));
	write_file(path_in("tapset/used.stp"), "function used_f:long () { return 4 }\n");
	CU_ASSERT_STRING_NOT_EQUAL(before, key_of(script));
}

static void test_key_macros_and_runtime(void)
{
	const char *before = key_of(script);

	write_file(path_in("tapset/m.stpm"), "@define unit_m %( 1 %)\n");
	CU_ASSERT_STRING_NOT_EQUAL(before, key_of(script));
	before = key_of(script);
	write_file(path_in("runtime/stp_x.h"), "#define STP_X 2\n");
	CU_ASSERT_STRING_NOT_EQUAL(before, key_of(script));
}

/* ---- the directory ---- */

static const char *make_build(const char *root, const char *key, size_t bytes)
{
	const char *dir = cache_begin(root, key);
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
	f = fopen(arena_printf("%s/script.bpf.o", dir), "w");
	for (size_t i = 0; i < bytes; i++)
		fputc('x', f);
	fclose(f);
	write_file(arena_printf("%s/script.so", dir), "so");
	return dir;
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static void test_root_made_private(void)
{
	const char *root = cache_root(&sess);
	struct stat st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	CU_ASSERT_STRING_EQUAL(root, path_in("cache"));
	CU_ASSERT_EQUAL(stat(root, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 077, 0);
}

static void test_root_refused_when_shared(void)
{
	const char *root;

	setenv("PMSTAP_CACHE", path_in("shared"), 1);
	mkdir(path_in("shared"), 0700);
	chmod(path_in("shared"), 0777);
	quiet_diags();
	root = cache_root(&sess);
	loud_diags();
	setenv("PMSTAP_CACHE", path_in("cache"), 1);
	CU_ASSERT_PTR_NULL(root);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag_text, "is writable by other users"));
}

static void test_publish_and_lookup(void)
{
	const char *root = cache_root(&sess), *key = key_of(script);
	const char *build = make_build(root, key, 10), *dir;

	CU_ASSERT_PTR_NULL(cache_lookup(root, key, &stale_file));	/* not before it is published */
	CU_ASSERT_PTR_NOT_NULL(strstr(build, "/tmp-"));
	dir = cache_publish(root, build, key);
	CU_ASSERT_STRING_EQUAL(dir, arena_printf("%s/%s", root, key));
	CU_ASSERT_FALSE(exists(build));
	CU_ASSERT_STRING_EQUAL(cache_lookup(root, key, &stale_file), dir);
}

/* Two runs built the same script: the second build goes, the first stays. */
static void test_publish_twice(void)
{
	const char *root = cache_root(&sess), *key = key_of(script);
	const char *first = cache_publish(root, make_build(root, key, 10), key);
	const char *build = make_build(root, key, 20);

	CU_ASSERT_STRING_EQUAL(cache_publish(root, build, key), first);
	CU_ASSERT_FALSE(exists(build));
	CU_ASSERT_TRUE(exists(arena_printf("%s/script.so", first)));
}

static void age(const char *dir, time_t seconds_ago)
{
	struct timespec t[2];

	t[0].tv_sec = t[1].tv_sec = time(NULL) - seconds_ago;
	t[0].tv_nsec = t[1].tv_nsec = 0;
	utimensat(AT_FDCWD, dir, t, 0);
}

/*
 * Over the limit (1 MB: four entries of 300 KB), the least recently used
 * entries go until it fits; a lookup counts as a use.
 */
static void test_prune_lru(void)
{
	const char *root = cache_root(&sess), *k[4], *d[4];
	static const char *keys[4] = {
		"1111111111111111111111111111111111111111111111111111111111111111",
		"2222222222222222222222222222222222222222222222222222222222222222",
		"3333333333333333333333333333333333333333333333333333333333333333",
		"4444444444444444444444444444444444444444444444444444444444444444",
	};

	setenv("PMSTAP_CACHE_MB", "100000", 1);
	for (int i = 0; i < 3; i++) {
		k[i] = keys[i];
		d[i] = cache_publish(root, make_build(root, k[i], 300 * 1024), k[i]);
		age(d[i], 1000 - i);	/* 0 oldest */
	}
	cache_lookup(root, k[0], &stale_file);	/* 0 used now: 1 is the oldest */
	setenv("PMSTAP_CACHE_MB", "1", 1);
	k[3] = keys[3];
	d[3] = cache_publish(root, make_build(root, k[3], 300 * 1024), k[3]);
	unsetenv("PMSTAP_CACHE_MB");
	CU_ASSERT_TRUE(exists(d[0]));
	CU_ASSERT_FALSE(exists(d[1]));
	CU_ASSERT_TRUE(exists(d[2]));
	CU_ASSERT_TRUE(exists(d[3]));
}

/* A failed build is kept a day for its bug report, then goes. */
static void test_stale_builds_go(void)
{
	const char *root = cache_root(&sess), *key = key_of(script);
	const char *fresh = cache_begin(root, key), *stale = cache_begin(root, key);

	age(stale, 2 * 24 * 3600);
	cache_publish(root, make_build(root, key, 1), key);
	CU_ASSERT_TRUE(exists(fresh));
	CU_ASSERT_FALSE(exists(stale));
}

/* ---- the files a build was made from (these run last: files stay recorded) ---- */

/* PATH with TEXT in it, recorded as read for this build. */
static void depend_on(const char *path, const char *text)
{
	int fd;

	write_file(path, text);
	fd = open(path, O_RDONLY);
	CU_ASSERT_FATAL(fd >= 0);
	filedeps_add(path, fd);
	close(fd);
}

static void test_key_files(void)
{
	const char *before = key_of(script);

	depend_on(path_in("prog-a"), "a program\n");
	CU_ASSERT_STRING_NOT_EQUAL(before, key_of(script));
	CU_ASSERT_EQUAL(filedeps_index(path_in("prog-a")), filedeps_count() - 1);
}

/* A build whose file changed after it was made is not used, and goes. */
static void test_lookup_checks_files(void)
{
	const char *root = cache_root(&sess), *key, *dir;

	depend_on(path_in("prog-b"), "version 1\n");
	key = key_of(script);
	dir = cache_publish(root, make_build(root, key, 10), key);
	CU_ASSERT_STRING_EQUAL(cache_lookup(root, key, &stale_file), dir);
	CU_ASSERT_PTR_NULL(stale_file);
	write_file(path_in("prog-b"), "version 2, longer\n");
	CU_ASSERT_PTR_NULL(cache_lookup(root, key, &stale_file));
	CU_ASSERT_STRING_EQUAL(stale_file ? stale_file : "", path_in("prog-b"));
	CU_ASSERT_FALSE(exists(dir));
}

static const struct unit_case cases[] = {
	{ "sha256 test vectors", test_sha256_vectors },
	{ "sha256 of a million a, in pieces", test_sha256_million },
	{ "sha256: the CPU's rounds and the portable ones agree", test_sha256_lengths },
	{ "key: 64 hex digits, the same twice", test_key_stable },
	{ "key: the script's text", test_key_script },
	{ "key: -D", test_key_define },
	{ "key: script arguments", test_key_args },
	{ "key: kernel release, -g; not -G", test_key_release_and_options },
	{ "key: used tapsets only", test_key_tapsets },
	{ "key: library macros and runtime headers", test_key_macros_and_runtime },
	{ "root: made mode 0700", test_root_made_private },
	{ "root: refused when others can write it", test_root_refused_when_shared },
	{ "publish, then lookup", test_publish_and_lookup },
	{ "publish twice: the first stays", test_publish_twice },
	{ "prune: least recently used first", test_prune_lru },
	{ "prune: failed builds after a day", test_stale_builds_go },
	{ "key: the files pass 2 read", test_key_files },
	{ "lookup: a file changed since the build", test_lookup_checks_files },
	{ NULL, NULL },
};

void unit_register(void)
{
	setup();
	atexit(cleanup);
	unit_add_suite("cache", cases);
}
