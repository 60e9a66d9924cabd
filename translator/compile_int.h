/*
 * compile_int.h - inside pass 4: running a compiler (compile.c), and the
 * pieces made once and shared by every build in the cache
 * (compile_shared.c):
 *
 *	<root>/bpf-<release>-<hash>.h	the kernel side's fixed prefix:
 *					vmlinux.h and libbpf's headers
 *	<root>/bpf-<release>-<hash>.pch	that prefix, precompiled by clang
 *
 * Each is named by a hash of what it is made from (the compiler, its
 * flags, vmlinux.h) and written under a temporary name then renamed, like
 * vmlinux.h.  Builds that run at once (pmdastap starts all its scripts
 * together) make each piece once: the one that takes <piece>.lock first
 * makes it, the others wait for that lock and use what it made
 * (compile_piece_lock).  Clang checks a PCH's inputs (size and time of
 * every header) when it is used; a PCH that is missing, not a PCH, or
 * refused by clang is rebuilt, never used.  The user side has no such
 * piece: its tapset services (runtime/user/tapset_user.c) are libstaprt's,
 * compiled with pcp-stap, and script.so calls them in the program that
 * loads it.
 */
#ifndef PMSTAP_COMPILE_INT_H
#define PMSTAP_COMPILE_INT_H

#include <stdbool.h>
#include <sys/types.h>
#include "arena.h"
#include "vec.h"
#include "session.h"

/* A compiler (or bpftool) run as a child process. */
struct tool {
	const char *name;	/* for messages: "clang" */
	struct vec argv;	/* char *, NULL-terminated once started */
	const char *out;	/* where its stdout goes */
	const char *err;	/* and its stderr (may be the same file) */
	pid_t pid;
	double cpu_ms;		/* its CPU time, user and system, for -vv */
};

void compile_tool_arg(struct tool *t, const char *a);
bool compile_tool_start(struct tool *t);
bool compile_tool_finish(struct tool *t);	/* true when it exited with status 0 */
bool compile_tool_log_has(const struct tool *t, const char *text);
/* T's arguments for kbuild: MAKE -s -C HEADERS M=DIR modules. */
void compile_kbuild_command(struct tool *t, const char *make, const char *headers, const char *dir);

bool compile_empty_file(const char *path);
void compile_show_file(const char *path);

/*
 * Take PATH.lock before making the shared piece PATH: held until PATH is
 * in place or its making failed (the kernel lets go if the build dies), so
 * that a build running at the same time waits here, then finds PATH made
 * and uses it.  The lock's fd, or -1 when it cannot be had (a cache this
 * user cannot write): then every build makes its own, as without it.
 */
int compile_piece_lock(const char *path);
void compile_piece_unlock(int *lock);	/* and *lock = -1 */

/* The flags both the PCH and the script's clang run use, before -D/-I. */
void compile_bpf_flags(struct tool *t);

/* -I ROOT -I <runtime> and the multiarch directory: after the build's own -I. */
void compile_bpf_search(struct tool *t, struct session *s, const char *root);

/* The kernel-side prefix: its PCH, or a job making it. */
struct compile_pch {
	const char *path;	/* the .pch */
	bool ready;		/* path exists and looks whole: use it */
	bool building;		/* job below makes it (not to be used this time) */
	struct tool job;
	const char *tmp;	/* the job's output, renamed to path when done */
	int lock;		/* path's lock while building, else -1 */
};

/*
 * Find or start making the PCH of vmlinux.h (VMLINUX, in ROOT) and libbpf's
 * headers; false when this build cannot use one (another -D than stap's
 * limits) or the prefix could not be written.
 */
bool compile_pch_prepare(struct session *s, const char *root, const char *vmlinux,
			 const char *clang, struct compile_pch *p);

/* Wait for a PCH job started by compile_pch_prepare() and put it in place. */
void compile_pch_finish(struct compile_pch *p);

#endif
