/*
 * compile.c - pass 4: clang for the kernel side, cc for the user side,
 * both at once; and vmlinux.h, dumped from the kernel's BTF.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include "arena.h"
#include "compile.h"
#include "diag.h"
#include "sema_int.h"	/* sys_find_executable */

#define KERNEL_BTF "/sys/kernel/btf/vmlinux"

/* ---- running a tool ---- */

struct tool {
	const char *name;	/* for messages: "clang" */
	struct vec argv;	/* char *, NULL-terminated once started */
	const char *out;	/* where its stdout goes */
	const char *err;	/* and its stderr (may be the same file) */
	pid_t pid;
};

static void arg(struct tool *t, const char *a)
{
	vec_push(&t->argv, (void *)a);
}

/* The program a tool runs: $ENV if set, else NAME, found in PATH (or /usr/sbin, /sbin). */
static const char *find_tool(const char *env, const char *name)
{
	const char *want = env ? getenv(env) : NULL;
	const char *path;

	if (!want || !*want)
		want = name;
	path = sys_find_executable(want);
	if (!path && !strchr(want, '/'))
		path = sys_find_executable(arena_printf("/usr/sbin/%s", want));
	if (!path && !strchr(want, '/'))
		path = sys_find_executable(arena_printf("/sbin/%s", want));
	if (!path) {
		diag_error((struct srcloc){ 0 }, "cannot compile the script: %s is not installed",
			   want);
		if (env)
			diag_hint("install it (Debian: apt-get install %s), or set %s",
				  strcmp(name, "cc") == 0 ? "gcc" : name, env);
		else
			diag_hint("install it (Debian: apt-get install %s)", name);
	}
	return path;
}

static int open_log(const char *path, int flags)
{
	return open(path, O_WRONLY | O_CREAT | flags | O_CLOEXEC, 0600);
}

static bool start(struct tool *t)
{
	vec_push(&t->argv, NULL);
	t->pid = fork();
	if (t->pid < 0) {
		diag_error((struct srcloc){ 0 }, "cannot run %s: %s", t->name, strerror(errno));
		return false;
	}
	if (t->pid == 0) {
		int out = open_log(t->out, O_TRUNC);
		int err = strcmp(t->out, t->err) == 0 ? out : open_log(t->err, O_TRUNC);

		if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(126);
		execv(VEC_AT(&t->argv, 0), (char **)t->argv.items);
		dprintf(2, "cannot run %s: %s\n", (char *)VEC_AT(&t->argv, 0), strerror(errno));
		_exit(127);
	}
	return true;
}

/* Wait for T; true when it exited with status 0. */
static bool finish(struct tool *t)
{
	int status;

	while (waitpid(t->pid, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void show_file(const char *path)
{
	size_t len = 0;
	char *text = arena_read_file(path, &len);

	if (text && len) {
		fflush(stdout);
		fwrite(text, 1, len, stderr);
		if (text[len - 1] != '\n')
			fputc('\n', stderr);
	}
}

static bool empty_file(const char *path)
{
	struct stat st;

	return stat(path, &st) != 0 || st.st_size == 0;
}

/* ---- vmlinux.h ---- */

static const char *kernel_release(void)
{
	static struct utsname u;

	if (!u.release[0])
		uname(&u);
	return u.release;
}

static bool dump_btf(const char *bpftool, const char *tmp, const char *errlog)
{
	struct tool t = { .name = "bpftool", .out = tmp, .err = errlog };

	arg(&t, bpftool);
	arg(&t, "btf");
	arg(&t, "dump");
	arg(&t, "file");
	arg(&t, KERNEL_BTF);
	arg(&t, "format");
	arg(&t, "c");
	if (!start(&t))
		return false;
	if (finish(&t) && !empty_file(tmp))
		return true;
	diag_error((struct srcloc){ 0 }, "cannot write the kernel's types as C: bpftool failed");
	show_file(errlog);
	return false;
}

/*
 * Written under a temporary name and renamed: another pmstap never sees
 * half a file, and if two make it at once, both copies are whole.
 */
const char *compile_vmlinux_h(const char *root)
{
	const char *path = arena_printf("%s/vmlinux-%s.h", root, kernel_release());
	char *tmp = arena_printf("%s/.vmlinux-%s.h.XXXXXX", root, kernel_release());
	const char *bpftool, *errlog;
	int fd;
	bool ok;

	if (!empty_file(path))
		return path;
	if (access(KERNEL_BTF, R_OK) != 0) {
		diag_error((struct srcloc){ 0 }, "cannot read the kernel's types from %s: %s",
			   KERNEL_BTF, strerror(errno));
		diag_hint("pmstap needs a kernel built with CONFIG_DEBUG_INFO_BTF=y");
		return NULL;
	}
	if (!(bpftool = find_tool(NULL, "bpftool")))
		return NULL;
	if ((fd = mkstemp(tmp)) < 0) {
		diag_error((struct srcloc){ 0 }, "cannot create %s: %s", tmp, strerror(errno));
		return NULL;
	}
	close(fd);
	errlog = arena_printf("%s.err", tmp);
	ok = dump_btf(bpftool, tmp, errlog);
	if (ok && rename(tmp, path) != 0) {
		diag_error((struct srcloc){ 0 }, "cannot create %s: %s", path, strerror(errno));
		ok = false;
	}
	unlink(errlog);
	if (!ok)
		unlink(tmp);
	return ok ? path : NULL;
}

/* ---- the two compilers ---- */

/* What <bpf/bpf_tracing.h> calls this machine: __TARGET_ARCH_<name>. */
static const char *target_arch(const char *machine)
{
	static const struct { const char *uname, *bpf; } arches[] = {
		{ "x86_64", "x86" }, { "i686", "x86" }, { "i386", "x86" },
		{ "aarch64", "arm64" }, { "arm64", "arm64" }, { "armv7l", "arm" },
		{ "s390x", "s390" }, { "ppc64le", "powerpc" }, { "ppc64", "powerpc" },
		{ "riscv64", "riscv" }, { "loongarch64", "loongarch" }, { "mips64", "mips" },
		{ "sparc64", "sparc" },
	};

	for (size_t i = 0; i < sizeof(arches) / sizeof(arches[0]); i++)
		if (strcmp(machine, arches[i].uname) == 0)
			return arches[i].bpf;
	return machine;
}

static void add_defines(struct tool *t, struct session *s)
{
	for (int i = 0; i < s->defines.len; i++)
		arg(t, arena_printf("-D%s", (char *)VEC_AT(&s->defines, i)));
}

/*
 * -target bpf has no system headers of its own: the host's per-architecture
 * directory (Debian's /usr/include/x86_64-linux-gnu) lets <asm/...> of the
 * uapi headers resolve, as in libbpf-tools' builds; searched last.  (libc's
 * headers still do not work for BPF: generated code does without them.)
 */
static void add_multiarch(struct tool *t, const char *machine)
{
	const char *dir = arena_printf("/usr/include/%s-linux-gnu", machine);
	struct stat st;

	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
		arg(t, "-idirafter");
		arg(t, dir);
	}
}

static void bpf_command(struct tool *t, struct session *s, const char *dir, const char *root)
{
	struct utsname u;

	uname(&u);
	arg(t, "-O2");
	arg(t, "-g");
	arg(t, "-target");
	arg(t, "bpf");
	arg(t, "-mcpu=v3");	/* atomics that return the old value */
	arg(t, "-fwrapv");	/* stap's arithmetic wraps */
	arg(t, arena_printf("-D__TARGET_ARCH_%s", target_arch(u.machine)));
	add_defines(t, s);
	arg(t, arena_printf("-I%s", dir));	/* vmlinux.h, for the runtime's headers too */
	arg(t, arena_printf("-I%s", root));
	arg(t, arena_printf("-I%s", s->runtime_dir));
	add_multiarch(t, u.machine);
	arg(t, "-c");
	arg(t, arena_printf("%s/%s", dir, COMPILE_BPF_SOURCE));
	arg(t, "-o");
	arg(t, arena_printf("%s/%s", dir, COMPILE_BPF_OBJECT));
}

static void user_command(struct tool *t, struct session *s, const char *dir)
{
	arg(t, "-O2");
	arg(t, "-g");
	arg(t, "-shared");
	arg(t, "-fPIC");
	arg(t, "-fwrapv");
	add_defines(t, s);
	arg(t, arena_printf("-I%s", s->runtime_dir));
	arg(t, "-o");
	arg(t, arena_printf("%s/%s", dir, COMPILE_USER_OBJECT));
	arg(t, arena_printf("%s/%s", dir, COMPILE_USER_SOURCE));
}

/* DIR/vmlinux.h -> ../vmlinux-<release>.h: what #include "vmlinux.h" finds (-I DIR). */
static bool link_vmlinux_h(const char *dir, const char *vmlinux)
{
	const char *link = arena_printf("%s/vmlinux.h", dir);
	const char *base = strrchr(vmlinux, '/') + 1;

	unlink(link);
	if (symlink(arena_printf("../%s", base), link) == 0)
		return true;
	diag_error((struct srcloc){ 0 }, "cannot create %s: %s", link, strerror(errno));
	return false;
}

static bool check_runtime(struct session *s)
{
	struct stat st;

	if (s->runtime_dir && stat(s->runtime_dir, &st) == 0 && S_ISDIR(st.st_mode))
		return true;
	diag_error((struct srcloc){ 0 }, "cannot compile the script: no runtime headers in %s",
		   s->runtime_dir ? s->runtime_dir : "(none)");
	diag_hint("set PMSTAP_RUNTIME_DIR to pcp-stap's runtime directory");
	return false;
}

/*
 * With -g the script's own embedded C goes into the generated code, and
 * C written for stap's kernel-module runtime does not compile for BPF:
 * then the script, not pmstap, is the likely cause.
 */
static void report_failure(struct session *s, struct tool *failed[], int n, const char *dir)
{
	if (s->guru)
		diag_error((struct srcloc){ 0 },
			   "the generated code did not compile; the script's embedded C (-g) is the likely cause");
	else
		diag_error((struct srcloc){ 0 }, "internal error: generated code did not compile");
	for (int i = 0; i < n; i++) {
		fprintf(stderr, "%s said:\n", failed[i]->name);
		show_file(failed[i]->err);
	}
	diag_note((struct srcloc){ 0 }, "the generated code is kept in %s", dir);
	if (s->guru)
		diag_hint("embedded C runs in BPF programs or user space here, not in a kernel module");
	else
		diag_hint("this is a bug in pmstap: please report it with the script and that directory");
}

/* Keep a compiler's messages only when it had any (warnings); -vv shows them. */
static void tidy_log(struct session *s, struct tool *t)
{
	if (empty_file(t->err)) {
		unlink(t->err);
	} else if (s->verbose >= 2) {
		fprintf(stderr, "Pass 4: %s warned:\n", t->name);
		show_file(t->err);
	}
}

int compile_program(struct session *s, const char *dir, const char *root)
{
	struct tool bpf = { .name = "clang" }, user = { .name = "cc" };
	const char *vmlinux, *clang, *cc;
	struct tool *failed[2];
	int nfailed = 0;

	if (!check_runtime(s) || !(clang = find_tool("PMSTAP_CLANG", "clang")) ||
	    !(cc = find_tool("PMSTAP_CC", "cc")) || !(vmlinux = compile_vmlinux_h(root)) ||
	    !link_vmlinux_h(dir, vmlinux))
		return -1;
	arg(&bpf, clang);
	bpf_command(&bpf, s, dir, root);
	bpf.out = bpf.err = arena_printf("%s/%s.log", dir, COMPILE_BPF_OBJECT);
	arg(&user, cc);
	user_command(&user, s, dir);
	user.out = user.err = arena_printf("%s/%s.log", dir, COMPILE_USER_OBJECT);
	if (!start(&bpf))
		return -1;
	if (!start(&user)) {
		finish(&bpf);
		return -1;
	}
	if (!finish(&bpf))
		failed[nfailed++] = &bpf;
	if (!finish(&user))
		failed[nfailed++] = &user;
	if (nfailed) {
		report_failure(s, failed, nfailed, dir);
		return -1;
	}
	tidy_log(s, &bpf);
	tidy_log(s, &user);
	return 0;
}
