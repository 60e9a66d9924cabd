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
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "arena.h"
#include "compile.h"
#include "compile_int.h"
#include "diag.h"
#include "kbuild_replay.h"
#include "probes_sys.h"
#include "sysroot.h"

#define KERNEL_BTF "/sys/kernel/btf/vmlinux"

/* ---- running a tool ---- */

void compile_tool_arg(struct tool *t, const char *a)
{
	vec_push(&t->argv, (void *)a);
}


/* Did T say TEXT (in its log)? */
bool compile_tool_log_has(const struct tool *t, const char *text)
{
	char *log = arena_read_file(t->err, NULL);

	return log && strstr(log, text);
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

bool compile_tool_start(struct tool *t)
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
bool compile_tool_finish(struct tool *t)
{
	struct rusage ru;
	int status;

	while (wait4(t->pid, &status, 0, &ru) < 0)
		if (errno != EINTR)
			return false;
	t->cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void compile_show_file(const char *path)
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

bool compile_empty_file(const char *path)
{
	struct stat st;

	return stat(path, &st) != 0 || st.st_size == 0;
}

/* ---- vmlinux.h ---- */

static const char *kernel_release(void)
{
	return sysroot_kernel_release();	/* PMSTAP_SYSROOT's, if set */
}

static bool dump_btf(const char *bpftool, const char *tmp, const char *errlog)
{
	struct tool t = { .name = "bpftool", .out = tmp, .err = errlog };

	compile_tool_arg(&t, bpftool);
	compile_tool_arg(&t, "btf");
	compile_tool_arg(&t, "dump");
	compile_tool_arg(&t, "file");
	compile_tool_arg(&t, sysroot_path(KERNEL_BTF));
	compile_tool_arg(&t, "format");
	compile_tool_arg(&t, "c");
	if (!compile_tool_start(&t))
		return false;
	if (compile_tool_finish(&t) && !compile_empty_file(tmp))
		return true;
	diag_error((struct srcloc){ 0 }, "cannot write the kernel's types as C: bpftool failed");
	compile_show_file(errlog);
	return false;
}

/*
 * Written under a temporary name and renamed: another pmstap never sees
 * half a file.  Made under its lock, so that builds started together
 * (pmdastap's scripts) make it once: one made anew would be a new file,
 * and a new PCH for every build that saw it.
 */
static bool make_vmlinux_h(const char *path, char *tmp)
{
	const char *bpftool, *errlog;
	int fd;
	bool ok;

	if (!compile_empty_file(path))	/* made while this build waited */
		return true;
	if (access(sysroot_path(KERNEL_BTF), R_OK) != 0) {
		diag_error((struct srcloc){ 0 }, "cannot read the kernel's types from %s: %s",
			   sysroot_path(KERNEL_BTF), strerror(errno));
		diag_hint("pmstap needs a kernel built with CONFIG_DEBUG_INFO_BTF=y");
		return false;
	}
	if (!(bpftool = find_tool(NULL, "bpftool")))
		return false;
	if ((fd = mkstemp(tmp)) < 0) {
		diag_error((struct srcloc){ 0 }, "cannot create %s: %s", tmp, strerror(errno));
		return false;
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
	return ok;
}

const char *compile_vmlinux_h(const char *root)
{
	const char *path = arena_printf("%s/vmlinux-%s.h", root, kernel_release());
	int lock;
	bool ok;

	if (!compile_empty_file(path))
		return path;
	lock = compile_piece_lock(path);
	ok = make_vmlinux_h(path, arena_printf("%s/.vmlinux-%s.h.XXXXXX", root, kernel_release()));
	compile_piece_unlock(&lock);
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
		compile_tool_arg(t, arena_printf("-D%s", (char *)VEC_AT(&s->defines, i)));
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
		compile_tool_arg(t, "-idirafter");
		compile_tool_arg(t, dir);
	}
}

/* -O2 -g -target bpf ...: the kernel side's flags, the same for its PCH. */
void compile_bpf_flags(struct tool *t)
{
	struct utsname u;

	uname(&u);
	compile_tool_arg(t, "-O2");
	compile_tool_arg(t, "-g");
	compile_tool_arg(t, "-target");
	compile_tool_arg(t, "bpf");
	compile_tool_arg(t, "-mcpu=v3");	/* atomics that return the old value */
	compile_tool_arg(t, "-fwrapv");	/* stap's arithmetic wraps */
	compile_tool_arg(t, arena_printf("-D__TARGET_ARCH_%s", target_arch(u.machine)));
}

/* Where the kernel side's headers are found after the build's own directory. */
void compile_bpf_search(struct tool *t, struct session *s, const char *root)
{
	struct utsname u;

	uname(&u);
	compile_tool_arg(t, arena_printf("-I%s", root));
	compile_tool_arg(t, arena_printf("-I%s", s->runtime_dir));
	add_multiarch(t, u.machine);
}

/* PCH: the precompiled vmlinux.h and libbpf headers, or NULL. */
static void bpf_command(struct tool *t, struct session *s, const char *dir, const char *root,
			const char *pch)
{
	compile_bpf_flags(t);
	add_defines(t, s);
	if (pch) {
		compile_tool_arg(t, "-include-pch");
		compile_tool_arg(t, pch);
	}
	/* vmlinux.h, for the runtime's headers too */
	compile_tool_arg(t, arena_printf("-I%s", dir));
	compile_bpf_search(t, s, root);
	compile_tool_arg(t, "-c");
	compile_tool_arg(t, arena_printf("%s/%s", dir, COMPILE_BPF_SOURCE));
	compile_tool_arg(t, "-o");
	compile_tool_arg(t, arena_printf("%s/%s", dir, COMPILE_BPF_OBJECT));
}

/* script.so: its tapset services are libstaprt's, in the program that loads it */
static void user_command(struct tool *t, struct session *s, const char *dir)
{
	compile_tool_arg(t, "-O2");
	compile_tool_arg(t, "-g");
	compile_tool_arg(t, "-shared");
	compile_tool_arg(t, "-fPIC");
	compile_tool_arg(t, "-fwrapv");
	add_defines(t, s);
	compile_tool_arg(t, arena_printf("-I%s", s->runtime_dir));
	compile_tool_arg(t, "-o");
	compile_tool_arg(t, arena_printf("%s/%s", dir, COMPILE_USER_OBJECT));
	compile_tool_arg(t, arena_printf("%s/%s", dir, COMPILE_USER_SOURCE));
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
 * C written for stap's kernel-module runtime does not compile for BPF
 * (it does for --runtime=kernel): then the script, not pmstap, is the
 * likely cause.
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
		compile_show_file(failed[i]->err);
	}
	diag_note((struct srcloc){ 0 }, "the generated code is kept in %s", dir);
	if (s->guru && strcmp(s->runtime, "kernel") == 0)
		diag_hint("each function's C is headed by its script location in %s/script.kmod.c", dir);
	else if (s->guru)
		diag_hint("embedded C runs in BPF programs or user space here, not in a kernel module");
	else
		diag_hint("this is a bug in pmstap: please report it with the script and that directory");
}

/* Keep a compiler's messages only when it had any (warnings); -vv shows them. */
static void tidy_log(struct session *s, struct tool *t)
{
	if (compile_empty_file(t->err)) {
		unlink(t->err);
	} else if (s->verbose >= 2) {
		fprintf(stderr, "Pass 4: %s warned:\n", t->name);
		compile_show_file(t->err);
	}
}

static void show_time(struct session *s, const struct tool *t, const char *what)
{
	if (s->verbose >= 2)
		fprintf(stderr, "Pass 4: %s %s in %.0f ms of CPU.\n", t->name, what, t->cpu_ms);
}

static bool bpf_start(struct session *s, const char *dir, const char *root, const char *clang,
		      const char *pch, struct tool *t)
{
	*t = (struct tool){ .name = "clang" };
	compile_tool_arg(t, clang);
	bpf_command(t, s, dir, root, pch);
	t->out = t->err = arena_printf("%s/%s.log", dir, COMPILE_BPF_OBJECT);
	return compile_tool_start(t);
}

static bool user_start(struct session *s, const char *dir, const char *cc, struct tool *t)
{
	*t = (struct tool){ .name = "cc" };
	compile_tool_arg(t, cc);
	user_command(t, s, dir);
	t->out = t->err = arena_printf("%s/%s.log", dir, COMPILE_USER_OBJECT);
	return compile_tool_start(t);
}

/*
 * The kernel side's end.  Should clang fail with the PCH, the PCH goes if
 * clang named it (stale or damaged: made anew next time), and the file
 * compiles again without: the result and its messages never depend on it.
 * *DROPPED says the PCH went.
 */
static bool bpf_finish(struct session *s, const char *dir, const char *root, const char *clang,
		       const char *pch, struct tool *t, bool *dropped)
{
	if (compile_tool_finish(t)) {
		show_time(s, t, pch ? "compiled script.bpf.c with the PCH" : "compiled script.bpf.c");
		return true;
	}
	if (!pch)
		return false;
	if (compile_tool_log_has(t, pch)) {
		unlink(pch);
		*dropped = true;
	}
	return bpf_start(s, dir, root, clang, NULL, t) &&
	       bpf_finish(s, dir, root, clang, NULL, t, dropped);
}

/*
 * Both sides at once.  The user side starts first: it needs neither
 * vmlinux.h nor the PCH, which another build may be making while this one
 * waits (pmdastap starts its scripts together, on a cold cache).  The
 * build that makes the PCH waits for it too and compiles with it: on 2
 * CPUs busy with the others' builds, its own clang without the PCH took
 * twice the CPU of one with it (9 default scripts at once: 2.34 s ->
 * 2.22 s, 5 runs each; alone on a cold cache it ends 0.15 s later).
 */
int compile_program(struct session *s, const char *dir, const char *root)
{
	const char *vmlinux, *clang, *cc, *pch;
	struct compile_pch p = { 0 };
	struct tool bpf, user, *failed[2];
	int nfailed = 0;
	bool dropped = false;

	if (!check_runtime(s) || !(clang = find_tool("PMSTAP_CLANG", "clang")) ||
	    !(cc = find_tool("PMSTAP_CC", "cc")) || !user_start(s, dir, cc, &user))
		return -1;
	if (!(vmlinux = compile_vmlinux_h(root)) || !link_vmlinux_h(dir, vmlinux)) {
		compile_tool_finish(&user);
		return -1;
	}
	compile_pch_prepare(s, root, vmlinux, clang, &p);
	if (p.building)
		compile_pch_finish(&p);
	pch = p.ready ? p.path : NULL;
	if (!bpf_start(s, dir, root, clang, pch, &bpf)) {
		compile_tool_finish(&user);
		return -1;
	}
	if (!bpf_finish(s, dir, root, clang, pch, &bpf, &dropped))
		failed[nfailed++] = &bpf;
	if (dropped)	/* made anew now, for the next build */
		compile_pch_prepare(s, root, vmlinux, clang, &p);
	if (compile_tool_finish(&user))
		show_time(s, &user, "compiled script.c");
	else
		failed[nfailed++] = &user;
	if (p.building)
		compile_pch_finish(&p);
	if (nfailed) {
		report_failure(s, failed, nfailed, dir);
		return -1;
	}
	tidy_log(s, &bpf);
	tidy_log(s, &user);
	return 0;
}

/* The dyninst runtime: script.dyn.c into script.dyn.so beside script.so, both with cc. */
static void dyn_command(struct tool *t, struct session *s, const char *dir)
{
	compile_tool_arg(t, "-O2");
	compile_tool_arg(t, "-g");
	compile_tool_arg(t, "-shared");
	compile_tool_arg(t, "-fPIC");
	compile_tool_arg(t, "-fwrapv");
	/* loaded into any program: its symbols interpose on nothing */
	compile_tool_arg(t, "-fvisibility=hidden");
	compile_tool_arg(t, "-Wl,-Bsymbolic");
	add_defines(t, s);
	compile_tool_arg(t, arena_printf("-I%s", s->runtime_dir));
	compile_tool_arg(t, arena_printf("-I%s/dyninst", s->runtime_dir));
	compile_tool_arg(t, "-o");
	compile_tool_arg(t, arena_printf("%s/%s", dir, COMPILE_DYN_OBJECT));
	compile_tool_arg(t, arena_printf("%s/%s", dir, COMPILE_DYN_SOURCE));
}

/*
 * A runtime's other side SIDE (its command and log set) and script.c at
 * once; then, when FROM is given, what SIDE made there becomes TO.  WHAT
 * says what SIDE did, for -vv.
 */
static int side_and_user(struct session *s, const char *dir, const char *cc, struct tool *side,
			 const char *what, const char *from, const char *to)
{
	struct tool user, *failed[2];
	int nfailed = 0;

	if (!compile_tool_start(side))
		return -1;
	if (!user_start(s, dir, cc, &user)) {
		compile_tool_finish(side);
		return -1;
	}
	if (compile_tool_finish(side) && (!from || rename(from, to) == 0))
		show_time(s, side, what);
	else
		failed[nfailed++] = side;
	if (!compile_tool_finish(&user))
		failed[nfailed++] = &user;
	if (nfailed) {
		report_failure(s, failed, nfailed, dir);
		return -1;
	}
	tidy_log(s, side);
	tidy_log(s, &user);
	return 0;
}

int compile_program_dyninst(struct session *s, const char *dir, const char *root)
{
	struct tool dyn = { .name = "cc" };
	const char *cc;

	(void)root;
	if (!check_runtime(s) || !(cc = find_tool("PMSTAP_CC", "cc")))
		return -1;
	compile_tool_arg(&dyn, cc);
	dyn_command(&dyn, s, dir);
	dyn.out = dyn.err = arena_printf("%s/%s.log", dir, COMPILE_DYN_OBJECT);
	return side_and_user(s, dir, cc, &dyn, "compiled script.dyn.c", NULL, NULL);
}

/*
 * The kernel runtime: script.kmod.c into script.ko with kbuild, against
 * the headers of the session's kernel release (-r, or the sysroot's, or
 * this machine's), and script.c into script.so.  The module is called
 * COMPILE_KMOD_NAME: pmstap renames its copy when it loads it.
 */
static const char *kmod_headers(struct session *s)
{
	const char *dirs[] = { arena_printf("/lib/modules/%s/build", s->kernel_release),
			       arena_printf("/usr/src/linux-headers-%s", s->kernel_release) };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (access(arena_printf("%s/Makefile", dirs[i]), R_OK) == 0)
			return dirs[i];
	diag_error((struct srcloc){ 0 }, "no kernel headers for release %s: the kernel runtime "
		   "builds its module with them", s->kernel_release);
	diag_hint("install them (on Debian: apt install linux-headers-%s), or give another "
		  "release with -r", s->kernel_release);
	return NULL;
}

void compile_kbuild_command(struct tool *t, const char *make, const char *headers, const char *dir)
{
	compile_tool_arg(t, make);
	compile_tool_arg(t, "-s");
	compile_tool_arg(t, "-C");
	compile_tool_arg(t, headers);
	compile_tool_arg(t, arena_printf("M=%s", dir));
	compile_tool_arg(t, "modules");
}

/* The module's own compiler flags: Kbuild's ccflags-y. */
static const char *kmod_ccflags(struct session *s)
{
	/* -g0: a kernel built with debug info would give the module 30 MB of it, unused */
	const char *flags = arena_printf("-I%s -I%s/kmod/libc -fwrapv -g0 -Wno-unused-function "
					 "-Wno-declaration-after-statement",
					 s->runtime_dir, s->runtime_dir);

	for (int i = 0; i < s->defines.len; i++)
		flags = arena_printf("%s -D%s", flags, (char *)VEC_AT(&s->defines, i));
	return flags;
}

static bool kmod_kbuild_file(const char *dir, const char *ccflags)
{
	FILE *f = fopen(arena_printf("%s/Kbuild", dir), "w");

	if (!f)
		return false;
	fprintf(f, "# written by pmstap: the script's module\n");
	fprintf(f, "obj-m := %s.o\n%s-y := script.kmod.o\n", COMPILE_KMOD_NAME, COMPILE_KMOD_NAME);
	fprintf(f, "ccflags-y := %s\n", ccflags);
	return fclose(f) == 0;
}

/* Kbuild's intermediate files and their .NAME.cmd records: the cache keeps the module only. */
static void kmod_tidy(const char *dir)
{
	static const char *const made[] = { COMPILE_KMOD_NAME ".o",	COMPILE_KMOD_NAME ".mod",
					     COMPILE_KMOD_NAME ".mod.c", COMPILE_KMOD_NAME ".mod.o",
					     COMPILE_KMOD_NAME ".ko",	"script.kmod.o",
					     "Module.symvers",		"modules.order",
					     "script.kbuild.sh",	".script.kmod.o.d" };

	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
		unlink(arena_printf("%s/%s", dir, made[i]));
		unlink(arena_printf("%s/.%s.cmd", dir, made[i]));
	}
}

int compile_program_kmod(struct session *s, const char *dir, const char *root)
{
	struct tool kb = { .name = "kbuild" };
	const char *cc, *make, *headers, *replay, *ccflags;

	(void)root;
	if (!check_runtime(s) || !(cc = find_tool("PMSTAP_CC", "cc")) ||
	    !(make = find_tool("PMSTAP_MAKE", "make")) || !(headers = kmod_headers(s)))
		return -1;
	ccflags = kmod_ccflags(s);
	if (!kmod_kbuild_file(dir, ccflags)) {
		diag_error((struct srcloc){ 0 }, "cannot write %s/Kbuild: %s", dir, strerror(errno));
		return -1;
	}
	replay = kbuild_replay_script(headers, make, cc, dir, ccflags);
	if (replay) {
		compile_tool_arg(&kb, "/bin/sh");
		compile_tool_arg(&kb, replay);
	} else {
		compile_kbuild_command(&kb, make, headers, dir);
	}
	kb.out = kb.err = arena_printf("%s/%s.log", dir, COMPILE_KMOD_OBJECT);
	if (side_and_user(s, dir, cc, &kb, "built the module from script.kmod.c",
			  arena_printf("%s/%s.ko", dir, COMPILE_KMOD_NAME),
			  arena_printf("%s/%s", dir, COMPILE_KMOD_OBJECT)) != 0)
		return -1;
	kmod_tidy(dir);
	return 0;
}
