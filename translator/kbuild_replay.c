/*
 * kbuild_replay.c - the kernel runtime's module built without make.
 *
 * Kbuild spends most of a small module's build reading the kernel's
 * Makefiles and asking the compiler which options it takes (about 4 s
 * of 7 on 2 cores), the same for every module.  So kbuild builds a
 * module of the same names once per kernel headers, with a marker for
 * the script's own flags, and what it did is kept: the command of each
 * file it made, as its .NAME.cmd records it.  The next modules run
 * those commands (compile, link, modpost, compile the .mod.c, link the
 * .ko) with the directory and the flags put in: the module kbuild makes
 * (but for the build directory's name in its line tables, which differs
 * between any two builds), in about half its time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "arena.h"
#include "cache.h"
#include "compile.h"
#include "compile_int.h"
#include "kbuild_replay.h"

/* Written in the recording's Kbuild where the script's flags go. */
#define KBUILD_MARK "-DPMSTAP_KBUILD_CCFLAGS"

/*
 * The files kbuild makes, in the order it makes them; each one's command
 * is the first line of its .NAME.cmd.  After the object, fixdep turns its
 * dependencies into its .cmd file as kbuild's rule does: modpost reads it.
 */
static const char *const made[] = {
	"script.kmod.o",		COMPILE_KMOD_NAME ".mod", COMPILE_KMOD_NAME ".o",
	"modules.order",		"Module.symvers",	  COMPILE_KMOD_NAME ".mod.o",
	COMPILE_KMOD_NAME ".ko",
};

/* Can PATH go into a command line as it is (no quoting, no spaces)? */
static bool plain_path(const char *path)
{
	return path[strspn(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				 "0123456789/._-+")] == '\0';
}

/* HEADERS' recording, named after the files and tools that make kbuild what it is. */
static const char *recipe_path(const char *headers, const char *make, const char *cc)
{
	struct cache_sha256 c = { 0 };
	static const char *const files[] = { "Makefile", ".config", "Module.symvers",
					     "include/config/kernel.release" };

	cache_sha256_init(&c);
	cache_sha256_tagged(&c, "headers", headers, strlen(headers));
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		const char *id = cache_file_id(arena_printf("%s/%s", headers, files[i]));

		cache_sha256_tagged(&c, files[i], id, strlen(id));
	}
	cache_sha256_tagged(&c, "make", make, strlen(make));
	cc = cache_file_id(cc);
	cache_sha256_tagged(&c, "cc", cc, strlen(cc));
	return cache_piece_path(arena_printf("kbuild-%.16s.cmds", cache_sha256_hex(&c)));
}

/* The command that made FILE in DIR: its .cmd's first line, make's $$ as $. */
static char *made_by(const char *dir, const char *file)
{
	char *text = arena_read_file(arena_printf("%s/.%s.cmd", dir, file), NULL);
	char *cmd, *nl, *out;
	size_t j = 0;

	if (!text || strncmp(text, "cmd_", 4) != 0 || !(cmd = strstr(text, " := ")))
		return NULL;
	cmd += 4;
	if ((nl = strchr(cmd, '\n')))
		*nl = '\0';
	out = arena_alloc(strlen(cmd) + 1);
	for (size_t i = 0; cmd[i]; i++) {
		out[j++] = cmd[i];
		if (cmd[i] == '$' && cmd[i + 1] == '$')
			i++;
	}
	out[j] = '\0';
	return out;
}

/*
 * The recording: kbuild builds an empty module in a new directory DIR;
 * the commands, one a line, DIR in each, go to PATH.  False if any step
 * fails or a command is not one line.
 */
static bool record(const char *path, const char *headers, const char *make)
{
	char *dir = arena_printf("%s.XXXXXX", path);
	struct tool kb = { .name = "kbuild" };
	char *tmp = arena_printf("%s.tmp%d", path, (int)getpid());
	bool ok = false;
	FILE *f;

	if (access(arena_printf("%s/scripts/basic/fixdep", headers), X_OK) != 0 ||
	    !mkdtemp(dir) || !plain_path(dir))
		return false;	/* no fixdep to run after the compile: kbuild builds each module */
	f = fopen(arena_printf("%s/Kbuild", dir), "w");
	if (f) {
		fprintf(f, "obj-m := %s.o\n%s-y := script.kmod.o\nccflags-y := %s\n",
			COMPILE_KMOD_NAME, COMPILE_KMOD_NAME, KBUILD_MARK);
		ok = fclose(f) == 0;
	}
	f = ok ? fopen(arena_printf("%s/script.kmod.c", dir), "w") : NULL;
	ok = f && fprintf(f, "#include <linux/module.h>\nMODULE_LICENSE(\"GPL\");\n") > 0;
	ok = f && fclose(f) == 0 && ok;
	if (ok) {
		compile_kbuild_command(&kb, make, headers, dir);
		kb.out = kb.err = arena_printf("%s/kbuild.log", dir);
		ok = compile_tool_start(&kb) && compile_tool_finish(&kb);
	}
	f = ok ? fopen(tmp, "w") : NULL;
	ok = f != NULL;
	if (f) {
		fprintf(f, "%s\n", dir);
		for (size_t i = 0; ok && i < sizeof(made) / sizeof(made[0]); i++) {
			char *cmd = made_by(dir, made[i]);

			ok = cmd && (i > 0 || strstr(cmd, KBUILD_MARK));
			if (ok)
				fprintf(f, "%s\n", cmd);
		}
		ok = fclose(f) == 0 && ok && rename(tmp, path) == 0;
	}
	unlink(tmp);
	cache_remove(dir);
	return ok;
}

/* TEXT with each FROM replaced by TO. */
static char *replace(const char *text, const char *from, const char *to)
{
	size_t n = 0, lf = strlen(from), lt = strlen(to);
	char *out, *o;

	for (const char *p = text; (p = strstr(p, from)); p += lf)
		n++;
	o = out = arena_alloc(strlen(text) + n * (lt > lf ? lt - lf : 0) + 1);
	for (const char *p = text, *q; ; p = q + lf) {
		q = strstr(p, from);
		if (!q) {
			strcpy(o, p);
			return out;
		}
		memcpy(o, p, (size_t)(q - p));
		o += q - p;
		memcpy(o, to, lt);
		o += lt;
	}
}

const char *kbuild_replay_script(const char *headers, const char *make, const char *cc,
				 const char *dir, const char *ccflags)
{
	const char *path = recipe_path(headers, make, cc);
	char *text, *nl, *script;
	const char *rec_dir;
	FILE *f;
	const char *force = getenv("PMSTAP_KBUILD_MAKE");

	if (!path || (force && *force) || !plain_path(dir) || !plain_path(headers))
		return NULL;
	text = arena_read_file(path, NULL);
	if (!text) {
		if (!record(path, headers, make))
			return NULL;
		text = arena_read_file(path, NULL);
	}
	if (!text || !(nl = strchr(text, '\n')))
		return NULL;
	*nl = '\0';
	rec_dir = text;
	text = replace(replace(nl + 1, rec_dir, dir), KBUILD_MARK, ccflags);
	script = arena_printf("%s/script.kbuild.sh", dir);
	f = fopen(script, "w");
	if (!f)
		return NULL;
	fprintf(f, "# written by pmstap: kbuild's commands for the module (%s)\nset -e\ncd %s\n",
		path, headers);
	for (char *line = text, *end; *line; line = end + 1) {
		end = strchr(line, '\n');
		if (!end)
			break;
		*end = '\0';
		fprintf(f, "%s\n", line);
		if (line == text)	/* the object: its dependencies as kbuild records them */
			fprintf(f, "scripts/basic/fixdep %s/.script.kmod.o.d %s/script.kmod.o cc "
				">%s/.script.kmod.o.cmd\n", dir, dir, dir);
	}
	return fclose(f) == 0 ? script : NULL;
}
