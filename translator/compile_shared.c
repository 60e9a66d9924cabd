/*
 * compile_shared.c - pass 4's piece made once and shared by every build
 * in the cache: the kernel side's headers precompiled (vmlinux.h and
 * libbpf's, most of clang's time).  See compile_int.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "arena.h"
#include "cache.h"
#include "compile.h"
#include "compile_int.h"
#include "sysroot.h"

/* ---- helpers ---- */

/* 16 hex digits of the SHA-256 of the NUL-separated ITEMS. */
static const char *short_hash(const char *const *items, int n)
{
	struct cache_sha256 c;
	unsigned char d[32];
	char *out = arena_alloc(17);

	cache_sha256_init(&c);
	for (int i = 0; i < n; i++)
		cache_sha256_update(&c, items[i], strlen(items[i]) + 1);
	cache_sha256_final(&c, d);
	for (int i = 0; i < 8; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
	return out;
}

/* The tool's argv so far, one string: part of what names its output. */
static const char *argv_text(const struct tool *t)
{
	const char *text = "";

	for (int i = 0; i < t->argv.len; i++)
		text = arena_printf("%s%s ", text, (const char *)VEC_AT(&t->argv, i));
	return text;
}

/* Does PATH start with the LEN bytes MAGIC (and so is not empty or cut short)? */
static bool starts_with(const char *path, const char *magic, size_t len)
{
	char buf[8];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok = fd >= 0 && read(fd, buf, len) == (ssize_t)len && memcmp(buf, magic, len) == 0;

	if (fd >= 0)
		close(fd);
	return ok;
}

/* Write TEXT to PATH unless it is there: under a temporary name, renamed. */
static bool write_once(const char *path, const char *text)
{
	char *tmp;
	int fd;
	size_t len = strlen(text);
	bool ok;

	if (access(path, F_OK) == 0)
		return true;
	tmp = arena_printf("%s.XXXXXX", path);
	if ((fd = mkstemp(tmp)) < 0)
		return false;
	ok = write(fd, text, len) == (ssize_t)len;
	ok = close(fd) == 0 && ok && rename(tmp, path) == 0;
	if (!ok)
		unlink(tmp);
	return ok;
}

/* A temporary name beside PATH for a job's output; NULL after an error. */
static const char *temp_beside(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *tmp = arena_printf("%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1);
	int fd = mkstemp(tmp);

	if (fd < 0)
		return NULL;
	close(fd);
	return tmp;
}

/* A job's end: its output renamed to PATH when it succeeded, else removed. */
static bool job_done(struct tool *job, const char *tmp, const char *path, const char *magic)
{
	bool ok = compile_tool_finish(job) && starts_with(tmp, magic, 4) && rename(tmp, path) == 0;

	if (!ok)
		unlink(tmp);
	unlink(job->err);
	return ok;
}

int compile_piece_lock(const char *path)
{
	int fd = open(arena_printf("%s.lock", path), O_RDWR | O_CREAT | O_CLOEXEC, 0644);

	while (fd >= 0 && flock(fd, LOCK_EX) != 0)
		if (errno != EINTR) {
			close(fd);
			fd = -1;
		}
	return fd;
}

void compile_piece_unlock(int *lock)
{
	if (*lock >= 0)
		close(*lock);
	*lock = -1;
}

static const char *kernel_release(void)
{
	return sysroot_kernel_release();	/* PMSTAP_SYSROOT's, if set */
}

/* ---- the kernel side's prefix ---- */

/*
 * What stp.bpf.h includes first and the generated file cannot change:
 * the same lines, so that its own #include finds them done (include guards).
 */
static const char *prefix_text(const char *vmlinux)
{
	return arena_printf("/* the fixed headers of every script.bpf.c, precompiled once (pmstap) */\n"
			    "#define context stp_vmlinux_context\n"
			    "#include \"%s\"\n"
			    "#undef context\n"
			    "#include <bpf/bpf_helpers.h>\n"
			    "#include <bpf/bpf_tracing.h>\n"
			    "#include <bpf/bpf_core_read.h>\n",
			    strrchr(vmlinux, '/') + 1);
}

/*
 * -D options are seen by vmlinux.h and libbpf's headers without a PCH, not
 * with one: only stap's limits (MAX..., STP_...), which those headers never
 * test, keep the PCH; so does no guru code (it could come first).
 */
static bool pch_usable(struct session *s)
{
	if (s->guru || getenv("PMSTAP_NO_PCH"))
		return false;
	for (int i = 0; i < s->defines.len; i++) {
		const char *d = VEC_AT(&s->defines, i);

		if (strncmp(d, "MAX", 3) != 0 && strncmp(d, "STP_", 4) != 0)
			return false;
	}
	return true;
}

static void pch_command(struct tool *t, struct session *s, const char *root, const char *clang)
{
	t->name = "clang (PCH)";
	compile_tool_arg(t, clang);
	compile_bpf_flags(t);
	compile_bpf_search(t, s, root);
	compile_tool_arg(t, "-x");
	compile_tool_arg(t, "c-header");
}

bool compile_pch_prepare(struct session *s, const char *root, const char *vmlinux,
			 const char *clang, struct compile_pch *p)
{
	const char *text = prefix_text(vmlinux), *items[4], *base, *header;
	struct tool *t = &p->job;

	*p = (struct compile_pch){ .lock = -1 };
	if (!pch_usable(s))
		return false;
	pch_command(t, s, root, clang);
	items[0] = argv_text(t);
	items[1] = cache_file_id(clang);
	items[2] = cache_file_id(vmlinux);
	items[3] = text;
	base = arena_printf("%s/bpf-%s-%s", root, kernel_release(), short_hash(items, 4));
	header = arena_printf("%s.h", base);
	p->path = arena_printf("%s.pch", base);
	if (!starts_with(p->path, "CPCH", 4))
		p->lock = compile_piece_lock(p->path);
	if (starts_with(p->path, "CPCH", 4)) {	/* there, or made while this build waited */
		compile_piece_unlock(&p->lock);
		if (s->verbose >= 2)
			fprintf(stderr, "Pass 4: using the precompiled kernel headers %s\n", p->path);
		p->ready = true;
		utimensat(AT_FDCWD, p->path, NULL, 0);	/* used: kept by the cleanup */
		return true;
	}
	if (!write_once(header, text) || !(p->tmp = temp_beside(p->path))) {
		compile_piece_unlock(&p->lock);
		return false;
	}
	compile_tool_arg(t, header);
	compile_tool_arg(t, "-o");
	compile_tool_arg(t, p->tmp);
	t->out = t->err = arena_printf("%s.log", p->tmp);
	if (s->verbose >= 2)
		fprintf(stderr, "Pass 4: precompiling the kernel headers into %s\n", p->path);
	p->building = compile_tool_start(t);
	if (!p->building) {
		unlink(p->tmp);
		compile_piece_unlock(&p->lock);
	}
	return p->building;
}

void compile_pch_finish(struct compile_pch *p)
{
	if (p->building) {
		p->ready = job_done(&p->job, p->tmp, p->path, "CPCH");
		compile_piece_unlock(&p->lock);
	}
	p->building = false;
}
