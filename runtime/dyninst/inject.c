/*
 * inject.c - stp_inject__call(): a shared object loaded into a process that
 * already runs, and a function of it called there.
 *
 *   1. inject_attach.c: every thread of the process is seized and
 *      interrupted, threads that appear meanwhile too, until a scan of
 *      /proc/PID/task finds none that is not held.
 *   2. inject_sym.c: dlopen, dlsym and dlerror are found in the dynamic
 *      symbol table of the process's libc file, and placed with its maps.
 *   3. inject_call.c: one thread (the leader when it can) calls
 *      dlopen(LIB, RTLD_NOW | RTLD_GLOBAL), dlsym(handle, FN), then FN(ARG),
 *      each returning to address 0, whose fault stops it again; when dlopen
 *      or dlsym fails, dlerror() in the process tells why.
 *   4. inject_moves.c, when asked (stp_inject__set_pc_moves): the threads
 *      whose pc is in the table FN left are moved where it says.
 *   5. That thread gets back its registers, its FPU state and the stack
 *      bytes written below its stack pointer, and every thread is detached
 *      with the signal it is owed: on every path, errors included.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject_int.h"

static unsigned int timeout_ms = STP_INJECT_TIMEOUT_MS;
static const char *moves_sym;

int inj__fail(struct inject *in, const char *fmt, ...)
{
	va_list ap;

	if (!in->failed && in->errlen) {
		va_start(ap, fmt);
		vsnprintf(in->err, in->errlen, fmt, ap);
		va_end(ap);
	}
	in->failed = true;	/* the first reason is the one told */
	return -1;
}

/* ---- time ---- */

void inj__deadline(struct timespec *t, unsigned int ms)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += ms / 1000 + (t->tv_nsec + (ms % 1000) * 1000000l) / 1000000000l;
	t->tv_nsec = (t->tv_nsec + (ms % 1000) * 1000000l) % 1000000000l;
}

bool inj__past(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

/* ---- /proc/PID/status ---- */

/* The value of FIELD in /proc/PID/status (of thread TID, when not 0), in BUF; -1 when none. */
int inj__status(pid_t pid, pid_t tid, const char *field, char *buf, size_t len)
{
	char path[64], line[256];
	size_t flen = strlen(field);
	int r = -1;
	FILE *f;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (r < 0 && fgets(line, sizeof(line), f)) {
		if (strncmp(line, field, flen) != 0 || line[flen] != ':')
			continue;
		snprintf(buf, len, "%s", line + flen + 1 + strspn(line + flen + 1, " \t"));
		buf[strcspn(buf, "\n")] = 0;
		r = 0;
	}
	fclose(f);
	return r;
}

long inj__status_long(pid_t pid, pid_t tid, const char *field, int base)
{
	char v[64];

	return inj__status(pid, tid, field, v, sizeof(v)) == 0 ? strtol(v, NULL, base) : -1;
}

/* ---- the calls ---- */

/* Fail with WHAT, and why, as dlerror() in the process tells. */
static int dl_failed(struct inject *in, const char *what)
{
	char why[512] = "dlerror() gave no reason";
	unsigned long s = 0;

	if (!in->dlerror)
		return inj__fail(in, "%s (this libc has no dlerror() to tell why)", what);
	if (inj_call__run(in, "dlerror", in->dlerror, 0, 0, &s) != 0)
		return -1;
	if (s && inj_mem__string(in, s, why, sizeof(why)) != 0)
		snprintf(why, sizeof(why), "dlerror()'s message cannot be read");
	return inj__fail(in, "%s: %s", what, why);
}

/* dlsym(H, NAME) in the process, NAME's copy at AT there: 0 with *ADDR, or -1. */
static int lookup(struct inject *in, unsigned long h, const char *lib, const char *name,
		  uintptr_t at, unsigned long *addr)
{
	char what[512];

	if (inj_call__run(in, "dlsym", in->dlsym, h, at, addr) != 0)
		return -1;
	snprintf(what, sizeof(what), "cannot find %s in %s in process %d", name, lib, in->pid);
	return *addr ? 0 : dl_failed(in, what);
}

static int run(struct inject *in, const char *lib, const char *fn, const char *arg, long *ret)
{
	const char *strs[4] = { lib, fn, arg, in->moves_sym };
	unsigned long h, f, r, moves = 0;
	uintptr_t at[4];
	char what[512];

	if (inj_attach__all(in) != 0 || inj_sym__find(in) != 0 ||
	    inj_call__begin(in, strs, in->moves_sym ? 4 : 3, at) != 0)
		return -1;
	if (inj_call__run(in, "dlopen", in->dlopen, at[0], in->dlopen_flags, &h) != 0)
		return -1;
	snprintf(what, sizeof(what), "cannot load %s in process %d", lib, in->pid);
	if (!h)
		return dl_failed(in, what);
	if (lookup(in, h, lib, fn, at[1], &f) != 0 ||
	    (in->moves_sym && lookup(in, h, lib, in->moves_sym, at[3], &moves) != 0))
		return -1;
	if (inj_call__run(in, fn, f, at[2], 0, &r) != 0)
		return -1;
	*ret = (long)r;
	return moves ? inj_moves__apply(in, moves) : 0;
}

int stp_inject__call(pid_t pid, const char *lib, const char *fn, const char *arg, long *ret,
		     char *err, size_t errlen)
{
	struct inject in = {
		.pid = pid,
		.timeout_ms = timeout_ms,
		.err = err,
		.errlen = errlen,
		.dlopen_flags = RTLD_NOW | RTLD_GLOBAL,
		.moves_sym = moves_sym,
		.call = -1,
	};

	if (errlen)
		err[0] = 0;
	run(&in, lib, fn, arg, ret);
	inj_call__end(&in);
	inj_attach__release(&in);
	return in.failed ? -1 : 0;
}

void stp_inject__set_timeout(unsigned int ms)
{
	timeout_ms = ms ? ms : STP_INJECT_TIMEOUT_MS;
}

void stp_inject__set_pc_moves(const char *symbol)
{
	moves_sym = symbol;
}
