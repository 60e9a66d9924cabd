/*
 * cache.c - the cache of compiled scripts: its directory, the key that
 * names a build (SHA-256 of every input of passes 3 and 4), atomic
 * publication of a build, and least-recently-used cleanup.
 */
#define _GNU_SOURCE		/* nftw() and its FTW_DEPTH, FTW_PHYS */
#include <dirent.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "arena.h"
#include "ast.h"
#include "cache.h"
#include "diag.h"
#include "filedeps.h"
#include "probes_sys.h"
#include "program.h"
#include "sysroot.h"

/* ---- SHA-256 (FIPS 180-4) ---- */

static const uint32_t sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static void sha256_block(uint32_t h[8], const unsigned char *p)
{
	uint32_t w[64], v[8];

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	memcpy(v, h, sizeof(v));
	for (int i = 0; i < 64; i++) {
		uint32_t s1 = ror(v[4], 6) ^ ror(v[4], 11) ^ ror(v[4], 25);
		uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
		uint32_t t1 = v[7] + s1 + ch + sha256_k[i] + w[i];
		uint32_t s0 = ror(v[0], 2) ^ ror(v[0], 13) ^ ror(v[0], 22);
		uint32_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);

		memmove(v + 1, v, 7 * sizeof(v[0]));
		v[4] += t1;
		v[0] = t1 + s0 + maj;
	}
	for (int i = 0; i < 8; i++)
		h[i] += v[i];
}

#if defined(__x86_64__)
/*
 * The same rounds with the CPU's SHA extensions (Intel's published
 * scheme: the state kept as ABEF/CDGH, four rounds per message group),
 * about ten times faster: the key reads the runtime's 1 MB of sources on
 * every run, which took a quarter of a cached start's instructions.
 */
__attribute__((target("sha,sse4.1")))
static void sha256_blocks_ni(uint32_t h[8], const unsigned char *p, size_t blocks)
{
	const __m128i order = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
	__m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]), 0xb1);
	__m128i efgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]), 0x1b);
	__m128i abef = _mm_alignr_epi8(dcba, efgh, 8);
	__m128i cdgh = _mm_blend_epi16(efgh, dcba, 0xf0);

	for (; blocks; blocks--, p += 64) {
		__m128i m[4], save_abef = abef, save_cdgh = cdgh;

		for (int g = 0; g < 16; g++) {
			__m128i w;

			if (g < 4) {
				m[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), order);
			} else {
				/* W[t..t+3] from W[t-16..t-1]: m[(g-4)&3] .. m[(g-1)&3] */
				w = _mm_sha256msg1_epu32(m[g & 3], m[(g + 1) & 3]);
				w = _mm_add_epi32(w, _mm_alignr_epi8(m[(g + 3) & 3], m[(g + 2) & 3], 4));
				m[g & 3] = _mm_sha256msg2_epu32(w, m[(g + 3) & 3]);
			}
			w = _mm_add_epi32(m[g & 3], _mm_loadu_si128((const __m128i *)&sha256_k[4 * g]));
			cdgh = _mm_sha256rnds2_epu32(cdgh, abef, w);
			abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(w, 0x0e));
		}
		abef = _mm_add_epi32(abef, save_abef);
		cdgh = _mm_add_epi32(cdgh, save_cdgh);
	}
	efgh = _mm_shuffle_epi32(abef, 0x1b);		/* FEBA */
	cdgh = _mm_shuffle_epi32(cdgh, 0xb1);		/* DCHG */
	_mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(efgh, cdgh, 0xf0));	/* DCBA */
	_mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(cdgh, efgh, 8));	/* HGFE */
}

static bool cpu_has_sha(void)
{
	static int has = -1;
	unsigned a, b, c, d;

	if (has < 0)
		has = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSSE3) && (c & bit_SSE4_1) &&
		      __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29));	/* SHA */
	return has;
}
#endif

static void sha256_blocks(struct cache_sha256 *c, const unsigned char *p, size_t blocks)
{
#if defined(__x86_64__)
	if (!c->portable && cpu_has_sha()) {
		sha256_blocks_ni(c->h, p, blocks);
		return;
	}
#endif
	for (; blocks; blocks--, p += 64)
		sha256_block(c->h, p);
}

void cache_sha256_init(struct cache_sha256 *c)
{
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memset(c, 0, sizeof(*c));
	memcpy(c->h, iv, sizeof(iv));
}

void cache_sha256_update(struct cache_sha256 *c, const void *data, size_t n)
{
	const unsigned char *p = data;

	c->bytes += n;
	if (c->fill) {
		size_t take = 64 - c->fill < n ? 64 - c->fill : n;

		memcpy(c->buf + c->fill, p, take);
		c->fill += take;
		p += take;
		n -= take;
		if (c->fill < 64)
			return;
		sha256_blocks(c, c->buf, 1);
		c->fill = 0;
	}
	sha256_blocks(c, p, n / 64);
	p += n / 64 * 64;
	c->fill = n % 64;
	memcpy(c->buf, p, c->fill);
}

void cache_sha256_final(struct cache_sha256 *c, unsigned char digest[32])
{
	uint64_t bits = c->bytes * 8;
	unsigned char len[8];

	for (int i = 0; i < 8; i++)
		len[i] = (unsigned char)(bits >> (56 - 8 * i));
	cache_sha256_update(c, "\x80", 1);
	while (c->fill != 56)
		cache_sha256_update(c, "", 1);
	cache_sha256_update(c, len, 8);
	for (int i = 0; i < 8; i++) {
		digest[4 * i] = (unsigned char)(c->h[i] >> 24);
		digest[4 * i + 1] = (unsigned char)(c->h[i] >> 16);
		digest[4 * i + 2] = (unsigned char)(c->h[i] >> 8);
		digest[4 * i + 3] = (unsigned char)c->h[i];
	}
}

/* ---- the directory ---- */

static bool make_dirs(const char *path)
{
	char *p = arena_strdup(path);

	for (char *slash = strchr(p + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST)
			return false;
		*slash = '/';
	}
	return mkdir(p, 0700) == 0 || errno == EEXIST;
}

static const char *default_root(void)
{
	const char *env = getenv("PMSTAP_CACHE"), *home = getenv("HOME");
	struct passwd *pw;

	if (env && *env)
		return env;
	if ((!home || !*home) && (pw = getpwuid(geteuid())))
		home = pw->pw_dir;
	return home && *home ? arena_printf("%s/.cache/pmstap", home) : NULL;
}

/* ROOT, made if need be: a directory of this user's that nobody else can write. */
enum root_state { ROOT_OK, ROOT_NOT_MADE, ROOT_NOT_OWN, ROOT_OPEN };

static enum root_state check_root(const char *root)
{
	struct stat st;

	if (!make_dirs(root) || stat(root, &st) != 0 || !S_ISDIR(st.st_mode))
		return ROOT_NOT_MADE;
	if (st.st_uid != geteuid())
		return ROOT_NOT_OWN;
	return st.st_mode & 022 ? ROOT_OPEN : ROOT_OK;
}

const char *cache_root(struct session *s)
{
	const char *root = default_root();
	enum root_state state;

	(void)s;
	if (!root) {
		diag_error((struct srcloc){ 0 }, "no cache directory: HOME is not set");
		diag_hint("set PMSTAP_CACHE to a directory for compiled scripts");
		return NULL;
	}
	if ((state = check_root(root)) == ROOT_NOT_MADE) {
		diag_error((struct srcloc){ 0 }, "cannot create the cache directory %s: %s",
			   root, strerror(errno ? errno : ENOTDIR));
		diag_hint("set PMSTAP_CACHE to a directory for compiled scripts");
		return NULL;
	}
	/* code from here is loaded into the kernel: nobody else may write it */
	if (state != ROOT_OK) {
		diag_error((struct srcloc){ 0 }, "the cache directory %s is %s", root,
			   state == ROOT_NOT_OWN ? "owned by another user" : "writable by other users");
		diag_hint("use a directory of your own: set PMSTAP_CACHE");
		return NULL;
	}
	return root;
}

const char *cache_root_quiet(void)
{
	const char *root = default_root();

	return root && check_root(root) == ROOT_OK ? root : NULL;
}

const char *cache_piece_path(const char *name)
{
	const char *root = cache_root_quiet();

	return root ? arena_printf("%s/%s", root, name) : NULL;
}

/* ---- the key ---- */

void cache_sha256_tagged(struct cache_sha256 *c, const char *tag, const void *data, size_t len)
{
	char head[64];
	int n = snprintf(head, sizeof(head), "%s:%zu:", tag, len);

	cache_sha256_update(c, head, (size_t)n);
	cache_sha256_update(c, data, len);
	if (c->trace && getenv("PMSTAP_DEBUG_KEY"))	/* why a build was not found */
		fprintf(stderr, "%s: %s%.*s\n", c->trace, head, len > 160 ? 0 : (int)len,
			(const char *)data);
}

const char *cache_sha256_hex(struct cache_sha256 *c)
{
	unsigned char d[32];
	char *out = arena_alloc(sizeof(d) * 2 + 1);

	cache_sha256_final(c, d);
	for (size_t i = 0; i < sizeof(d); i++)
		sprintf(out + 2 * i, "%02x", d[i]);
	return out;
}

/* The key's hashes: cache_sha256_init(), traced as "cache key". */
static void key_init(struct cache_sha256 *c)
{
	cache_sha256_init(c);
	c->trace = "cache key";
}

static const char *runtime_digest(struct session *s);

static void add_str(struct cache_sha256 *c, const char *tag, const char *s)
{
	cache_sha256_tagged(c, tag, s ? s : "", s ? strlen(s) : 0);
}

/* A file by content: its name (where it is matters: messages cite it) and text. */
static void add_file(struct cache_sha256 *c, const char *tag, const char *path)
{
	size_t len = 0;
	char *text = arena_read_file(path, &len);

	add_str(c, tag, path);
	if (text)
		cache_sha256_tagged(c, "text", text, len);
	else
		add_str(c, "missing", strerror(errno));
}

const char *cache_file_id(const char *path)
{
	struct stat st;

	if (!path || stat(path, &st) != 0)
		return "none";
	/*
	 * No inode number: the qa guest sees this tree over 9p, which numbers
	 * inodes its own way, and must find the builds made for it here.
	 */
	return arena_printf("%s %lld %lld.%09ld", path, (long long)st.st_size,
			    (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

/* A program by identity (path, size, time in ns): cheaper than its content. */
static void add_program(struct cache_sha256 *c, const char *tag, const char *path)
{
	add_str(c, tag, cache_file_id(path));
}

static bool has_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name), m = strlen(suffix);

	return n > m && strcmp(name + n - m, suffix) == 0;
}

/* Every .h and .c under DIR, in name order. */
static void add_tree(struct cache_sha256 *c, const char *dir, int depth)
{
	struct dirent **list;
	int n = scandir(dir, &list, NULL, alphasort);

	for (int i = 0; i < n; i++) {
		const char *name = list[i]->d_name;
		char *path = arena_printf("%s/%s", dir, name);
		struct stat st;

		if (name[0] != '.' && stat(path, &st) == 0) {
			if (S_ISDIR(st.st_mode) && depth < 4)
				add_tree(c, path, depth + 1);
			else if (S_ISREG(st.st_mode) && (has_suffix(name, ".h") || has_suffix(name, ".c")))
				add_file(c, "runtime", path);
		}
		free(list[i]);
	}
	if (n >= 0)
		free(list);
}

/* The library macros (*.stpm of the tapset path): every script sees them. */
static void add_macros(struct cache_sha256 *c, struct session *s)
{
	for (int i = 0; i < s->tapset_dirs.len; i++) {
		const char *dir = VEC_AT(&s->tapset_dirs, i);
		struct dirent **list;
		int n = scandir(dir, &list, NULL, alphasort);

		for (int j = 0; j < n; j++) {
			if (has_suffix(list[j]->d_name, ".stpm"))
				add_file(c, "stpm", arena_printf("%s/%s", dir, list[j]->d_name));
			free(list[j]);
		}
		if (n >= 0)
			free(list);
	}
}

static void add_sources(struct cache_sha256 *c, struct session *s, const struct program *prog)
{
	const struct source *src = prog->script->src;

	add_str(c, "script", src->name);
	cache_sha256_tagged(c, "text", src->text, src->len);
	for (int i = 0; i < s->nargs; i++)
		add_str(c, "arg", s->args[i]);
	for (int i = 0; i < prog->tapset_files.len; i++) {
		const struct stapfile *f = VEC_AT(&prog->tapset_files, i);

		add_str(c, "tapset", f->src->name);
		cache_sha256_tagged(c, "text", f->src->text, f->src->len);
	}
	add_macros(c, s);
	add_str(c, "runtime", runtime_digest(s));
}

/* A digest of every runtime header and source, read now. */
static const char *runtime_digest(struct session *s)
{
	struct cache_sha256 c;

	key_init(&c);
	add_str(&c, "dir", s->runtime_dir);
	if (s->runtime_dir)
		add_tree(&c, s->runtime_dir, 0);
	return cache_sha256_hex(&c);
}

static void add_options(struct cache_sha256 *c, struct session *s)
{
	for (int i = 0; i < s->defines.len; i++)
		add_str(c, "define", VEC_AT(&s->defines, i));
	add_str(c, "guru", s->guru ? "1" : "0");
	add_str(c, "suppress", s->suppress_handler_errors ? "1" : "0");
	add_str(c, "prologue", (const char *[]){ "auto", "always", "never" }[s->prologue]);
	add_str(c, "privilege", s->privilege);
	for (int i = 0; i < s->sym_files.len; i++)
		add_str(c, "symbols", VEC_AT(&s->sym_files, i));	/* -d */
	add_str(c, "ldd", s->ldd ? "1" : "0");
	add_str(c, "runtime", s->runtime);
	add_str(c, "release", s->kernel_release);
	add_str(c, "arch", s->arch);
	/* the kernel the build is for: this one, or PMSTAP_SYSROOT's */
	add_str(c, "running", sysroot_kernel_release());
	add_str(c, "build", sysroot_kernel_version());	/* a rebuilt kernel keeps its release */
	add_str(c, "build-id", sysroot_kernel_build_id());	/* and maybe its version string */
}

/* The ELF files passes 2 and 3 read so far: each by its identity. */
static void add_filedeps(struct cache_sha256 *c)
{
	char id[256];

	for (int i = 0; i < filedeps_count(); i++) {
		const struct filedep *d = filedeps_at(i);

		add_str(c, "file", d->path);
		add_str(c, "id", stp_fileid_str(&d->id, id, sizeof(id)));
	}
}

const char *cache_key(struct session *s, const struct program *prog)
{
	struct cache_sha256 c;
	const char *clang = getenv("PMSTAP_CLANG"), *cc = getenv("PMSTAP_CC");

	key_init(&c);
	add_str(&c, "pmstap", PMSTAP_VERSION);
	add_program(&c, "exe", "/proc/self/exe");	/* a rebuilt pmstap emits other code */
	add_sources(&c, s, prog);
	add_options(&c, s);
	add_str(&c, "no-merge", getenv("PMSTAP_NO_MERGE") ? "1" : "0");	/* emit_merge.c */
	add_str(&c, "no-rawtp", getenv("PMSTAP_NO_RAWTP") ? "1" : "0");	/* emit_bpf.c */
	add_str(&c, "no-flavours", getenv("PMSTAP_NO_FLAVOURS") ? "1" : "0");	/* emit_flavour.c */
	add_str(&c, "no-subprogs", getenv("PMSTAP_NO_SUBPROGS") ? "1" : "0");	/* emit_func.c */
	add_filedeps(&c);
	add_program(&c, "clang", sys_find_executable(clang && *clang ? clang : "clang"));
	add_program(&c, "cc", sys_find_executable(cc && *cc ? cc : "cc"));
	return cache_sha256_hex(&c);
}

/* ---- entries ---- */

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool complete(const char *dir)
{
	return (is_file(arena_printf("%s/script.bpf.o", dir)) ||
		is_file(arena_printf("%s/script.dyn.so", dir)) ||
		is_file(arena_printf("%s/script.ko", dir))) &&
	       is_file(arena_printf("%s/script.so", dir));
}

/*
 * DIR/files: every file the build was made from (filedeps.h), a line each,
 * "IDENTITY<tab>PATH".  The key names the files pass 2 read; pass 3 may
 * read more (a @cast's module), which only this list names.
 */
#define FILES_LIST "files"

static bool write_files_list(const char *dir)
{
	FILE *f = fopen(arena_printf("%s/" FILES_LIST, dir), "w");
	char id[256];

	if (!f)
		return false;
	for (int i = 0; i < filedeps_count(); i++) {
		const struct filedep *d = filedeps_at(i);

		fprintf(f, "%s\t%s\n", stp_fileid_str(&d->id, id, sizeof(id)), d->path);
	}
	return fclose(f) == 0;
}

/* The first file of DIR's list that is not what the build was made from, or NULL. */
static const char *changed_file(const char *dir)
{
	char *text = arena_read_file(arena_printf("%s/" FILES_LIST, dir), NULL);
	char id[256];

	for (char *line = text, *nl; line && *line; line = nl + 1) {
		char *tab = strchr(line, '\t');
		struct stp_fileid now;
		int fd;
		bool same;

		if (!(nl = strchr(line, '\n')) || !tab || tab > nl)
			return "(a damaged list of files)";
		*tab = *nl = '\0';
		fd = open(tab + 1, O_RDONLY | O_CLOEXEC);
		same = fd >= 0 && stp_fileid_of_fd(fd, &now) &&
		       strcmp(stp_fileid_str(&now, id, sizeof(id)), line) == 0;
		if (fd >= 0)
			close(fd);
		if (!same)
			return arena_strdup(tab + 1);
	}
	return NULL;
}

const char *cache_lookup(const char *root, const char *key, const char **stale)
{
	const char *dir = arena_printf("%s/%s", root, key);

	*stale = NULL;
	if (!complete(dir))
		return NULL;
	if ((*stale = changed_file(dir))) {
		cache_remove(dir);	/* made from another version of *stale */
		return NULL;
	}
	utimensat(AT_FDCWD, dir, NULL, 0);	/* used now: the last to go */
	return dir;
}

const char *cache_begin(const char *root, const char *key)
{
	char *dir = arena_printf("%s/tmp-%.16s-XXXXXX", root, key);

	if (!mkdtemp(dir)) {
		diag_error((struct srcloc){ 0 }, "cannot create a build directory in %s: %s",
			   root, strerror(errno));
		return NULL;
	}
	return dir;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
}

void cache_remove(const char *dir)
{
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- cleanup ---- */

struct entry {
	char *path;
	off_t bytes;
	time_t used;
};

static off_t dir_bytes(const char *dir)
{
	struct dirent **list;
	int n = scandir(dir, &list, NULL, NULL);
	off_t total = 0;

	for (int i = 0; i < n; i++) {
		struct stat st;

		if (lstat(arena_printf("%s/%s", dir, list[i]->d_name), &st) == 0 && S_ISREG(st.st_mode))
			total += st.st_size;
		free(list[i]);
	}
	if (n >= 0)
		free(list);
	return total;
}

static bool is_key(const char *name)
{
	return strlen(name) == 64 && strspn(name, "0123456789abcdef") == 64;
}

static int older_first(const void *a, const void *b)
{
	const struct entry *x = *(struct entry *const *)a, *y = *(struct entry *const *)b;

	return (x->used > y->used) - (x->used < y->used);
}

/*
 * The pieces builds share (compile_int.h: bpf-*.h, bpf-*.pch, tapset-*.c,
 * tapset-*.o; kdwarf_index.h: kdwarf-*.idx) are touched when used: unused
 * for a week, they go, as do their temporaries (.bpf-*, .tapset-*,
 * .kdwarf-*) left for a day by a killed run,
 * and a day after its piece, the piece's lock (PIECE.lock).
 */
static void prune_shared(const char *root, const char *name, const struct stat *st)
{
	time_t now = time(NULL);
	size_t n = strlen(name);

	if (!S_ISREG(st->st_mode))
		return;
	/* a PCH's header goes with it: touching the header would make clang refuse the PCH */
	if (strncmp(name, "bpf-", 4) == 0 && has_suffix(name, ".pch") &&
	    st->st_mtime < now - 7 * 24 * 3600) {
		unlink(arena_printf("%s/%s", root, name));
		unlink(arena_printf("%s/%.*s.h", root, (int)(n - 4), name));
	} else if (strncmp(name, "tapset-", 7) == 0 && has_suffix(name, ".o") &&
		   st->st_mtime < now - 7 * 24 * 3600) {
		unlink(arena_printf("%s/%s", root, name));
		unlink(arena_printf("%s/%.*s.c", root, (int)(n - 2), name));
	} else if (((strncmp(name, "kdwarf-", 7) == 0 && has_suffix(name, ".idx")) ||
		    strncmp(name, "manifest-", 9) == 0) &&	/* a week after it was written */
		   st->st_mtime < now - 7 * 24 * 3600) {
		unlink(arena_printf("%s/%s", root, name));
	} else if ((strncmp(name, ".bpf-", 5) == 0 || strncmp(name, ".tapset-", 8) == 0 ||
		    strncmp(name, ".kdwarf-", 8) == 0 || strncmp(name, ".manifest-", 10) == 0) &&
		 st->st_mtime < now - 24 * 3600) {
		unlink(arena_printf("%s/%s", root, name));
	} else if (has_suffix(name, ".lock") && st->st_mtime < now - 24 * 3600 &&
		   access(arena_printf("%s/%.*s", root, (int)(n - 5), name), F_OK) != 0) {
		unlink(arena_printf("%s/%s", root, name));
	}
}

/* Entries of ROOT but KEEP; failed or abandoned builds over a day old go now. */
static struct vec list_entries(const char *root, const char *keep, off_t *total)
{
	struct vec v = { 0 };
	DIR *d = opendir(root);
	struct dirent *de;
	time_t day_ago = time(NULL) - 24 * 3600;

	while (d && (de = readdir(d))) {
		char *path = arena_printf("%s/%s", root, de->d_name);
		struct stat st;

		if (lstat(path, &st) != 0)
			continue;
		if (!S_ISDIR(st.st_mode)) {
			prune_shared(root, de->d_name, &st);
			continue;
		}
		if (strncmp(de->d_name, "tmp-", 4) == 0 && st.st_mtime < day_ago) {
			cache_remove(path);
		} else if (is_key(de->d_name)) {
			struct entry *e = ARENA_NEW(struct entry);

			e->path = path;
			e->bytes = dir_bytes(path);
			e->used = st.st_mtime;
			*total += e->bytes;
			if (strcmp(de->d_name, keep) != 0)
				vec_push(&v, e);
		}
	}
	if (d)
		closedir(d);
	return v;
}

/* Remove the least recently used entries while the cache is over its limit. */
static void prune(const char *root, const char *keep)
{
	const char *env = getenv("PMSTAP_CACHE_MB");
	long long limit = (env && *env ? atoll(env) : 256) * 1024 * 1024;
	off_t total = 0;
	struct vec v = list_entries(root, keep, &total);

	if (limit <= 0)
		return;
	qsort(v.items, (size_t)v.len, sizeof(void *), older_first);
	for (int i = 0; i < v.len && total > limit; i++) {
		struct entry *e = VEC_AT(&v, i);

		cache_remove(e->path);
		total -= e->bytes;
	}
}

/* BUILD could not become DIR: if another pmstap built the same script meanwhile, use its. */
static bool take_existing(const char *build, const char *dir)
{
	if (errno == EEXIST || errno == ENOTEMPTY) {
		if (complete(dir)) {
			cache_remove(build);
			return true;
		}
		cache_remove(dir);	/* not a whole build: not made by pmstap */
		if (rename(build, dir) == 0)
			return true;
	}
	diag_error((struct srcloc){ 0 }, "cannot move %s to %s: %s", build, dir, strerror(errno));
	return false;
}

const char *cache_publish(const char *root, const char *build, const char *key)
{
	const char *dir = arena_printf("%s/%s", root, key);

	if (!write_files_list(build)) {
		diag_error((struct srcloc){ 0 }, "cannot write %s/%s: %s", build, FILES_LIST,
			   strerror(errno));
		return NULL;
	}
	if (rename(build, dir) != 0 && !take_existing(build, dir))
		return NULL;
	utimensat(AT_FDCWD, dir, NULL, 0);
	prune(root, key);
	return dir;
}
