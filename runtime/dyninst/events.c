/*
 * events.c - process.begin/end and thread.begin/end in the probed process
 * (the dyninst runtime's STP_DYN_PROCESS_* and STP_DYN_THREAD_* sites).
 *
 * The process sees its own events:
 *   process.begin	when libstapdyn.so has loaded the script into a new
 *			image (the -c command, and each program it execs),
 *			and in the child of each fork(); vfork() runs as
 *			fork() in a probed program, and a posix_spawn()
 *			child has only its new image's
 *   process.end	at exit() and _exit(), and before an exec replaces
 *			the image (the exec functions of libc are wrapped:
 *			an exec that then fails has had its .end); a
 *			process a signal kills, or that makes the system
 *			call itself, runs none
 *   thread.begin	in each thread pthread_create() starts, first thing
 *   thread.end		when such a thread returns or calls pthread_exit()
 * pthread_create(), _exit() and the exec functions are wrapped here (this
 * library comes first in the program's symbol look-up; attached by -x, the
 * program's bindings are pointed here: got.c); a script without those
 * probes passes straight through.
 *
 * So is the start of a C++ throw (and of a forced unwind: thread
 * cancellation): the unwinder cannot walk through a frame whose return
 * address is the patcher's return trampoline, so the thread's hooked
 * returns get their real addresses back first (those returns run no
 * .return handler, as a uretprobe's do not either).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unwind.h>

#include "native.h"
#include "patch.h"

static const struct stp_dyn_site *sites;
static bool wanted[STP_DYN_THREAD_END + 1];
static pthread_key_t thread_end_key;

/* Is this process's program the file PATH? */
static bool exe_is(const char *path)
{
	struct stat a, b;

	return stat(path, &a) == 0 && stat("/proc/self/exe", &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

static void run(enum stp_dyn_event ev)
{
	struct pt_regs *prev = stp_dyn_cur_regs;

	if (!sites || !wanted[ev])
		return;
	stp_dyn_cur_regs = NULL;	/* no registers: registers() raises an error */
	for (const struct stp_dyn_site *s = sites; s->fn; s++) {
		if (s->event != ev || (s->pid > 0 && s->pid != getpid()) ||
		    (s->path && !exe_is(s->path)))
			continue;
		s->fn(NULL);
	}
	stp_dyn_cur_regs = prev;
}

static void on_exit_called(void);

static void on_fork_child(void)
{
	run(STP_DYN_PROCESS_BEGIN);
}

static void on_thread_exit(void *unused)
{
	(void)unused;
	run(STP_DYN_THREAD_END);
}

/* Registered once whatever the script: a second -x attach starts the events again. */
static void events_init_once(void)
{
	atexit(on_exit_called);
	pthread_key_create(&thread_end_key, on_thread_exit);
	pthread_atfork(NULL, NULL, on_fork_child);
}

void stp_dyn_events_start(const struct stp_dyn_site *table, bool begin_now)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	memset(wanted, 0, sizeof(wanted));
	for (const struct stp_dyn_site *s = table; s->fn; s++)
		wanted[s->event] = true;
	pthread_once(&once, events_init_once);
	sites = table;
	if (begin_now)
		run(STP_DYN_PROCESS_BEGIN);
}

void stp_dyn_events_begin(void)
{
	run(STP_DYN_PROCESS_BEGIN);
}

void stp_dyn_events_stop(void)
{
	sites = NULL;
}

/* ---- threads ---- */

struct start {
	void *(*fn)(void *);
	void *arg;
};

static void *thread_start(void *p)
{
	struct start st = *(struct start *)p;

	free(p);
	if (wanted[STP_DYN_THREAD_END])
		pthread_setspecific(thread_end_key, (void *)1);	/* its destructor: thread.end */
	run(STP_DYN_THREAD_BEGIN);
	return st.fn(st.arg);
}

/*
 * The function a wrapper (SELF) stands for, looked up once into *CACHE.
 * Preloaded, it is the next one in the look-up.  Loaded by -x, this
 * library may have none after it among its own dependencies (libgcc_s's
 * unwinder is not one), and RTLD_DEFAULT would search them first: then the
 * program's global scope, where this library, loaded last, comes last.
 */
static void *real_fn(void **cache, const char *name, void *self)
{
	void *p = __atomic_load_n(cache, __ATOMIC_RELAXED), *global;

	if (p)
		return p;
	p = dlsym(RTLD_NEXT, name);
	if ((!p || p == self) && (global = dlopen(NULL, RTLD_LAZY))) {
		p = dlsym(global, name);
		dlclose(global);
	}
	if (p == self)
		return NULL;
	__atomic_store_n(cache, p, __ATOMIC_RELAXED);
	return p;
}

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static void *cache;
	create_fn real = (create_fn)real_fn(&cache, "pthread_create", (void *)pthread_create);
	struct start *st;
	int r;

	if (!real)
		return EAGAIN;
	if (!wanted[STP_DYN_THREAD_BEGIN] && !wanted[STP_DYN_THREAD_END])
		return real(t, attr, fn, arg);
	st = malloc(sizeof(*st));
	if (!st)
		return EAGAIN;
	*st = (struct start){ fn, arg };
	r = real(t, attr, thread_start, st);
	if (r)
		free(st);
	return r;
}

/* ---- the start of a process: vfork() ---- */

/*
 * vfork() cannot be wrapped (its child would return through the wrapper's
 * frame, which the parent still needs): it runs as fork(), whose child
 * runs its process.begin probes (on_fork_child).
 */
pid_t vfork(void)
{
	return fork();
}

/* ---- the end of an image: _exit() and exec ---- */


/* process.end once per image: exit() may call _exit() after its atexit handlers */
static void image_ends(void)
{
	static pid_t ended;

	if (ended == getpid())
		return;
	ended = getpid();
	run(STP_DYN_PROCESS_END);
}

static void on_exit_called(void)
{
	image_ends();
}

void _exit(int status)
{
	static void *cache;
	void (*real)(int) = (void (*)(int))real_fn(&cache, "_exit", (void *)_exit);

	image_ends();
	if (real)
		real(status);
	abort();
}

void _Exit(int status)
{
	_exit(status);
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);

int execve(const char *path, char *const argv[], char *const envp[])
{
	static void *cache;
	execve_fn real = (execve_fn)real_fn(&cache, "execve", (void *)execve);

	image_ends();
	return real ? real(path, argv, envp) : -1;
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
	static void *cache;
	execvpe_fn real = (execvpe_fn)real_fn(&cache, "execvpe", (void *)execvpe);

	image_ends();
	return real ? real(file, argv, envp) : -1;
}

int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* The arguments of execl(), execlp(), execle() after ARG0, NULL-ended, into a new array. */
static char **list_args(const char *arg0, va_list ap, char ***envp)
{
	va_list count;
	size_t n = 1;
	char **argv;

	va_copy(count, ap);
	while (va_arg(count, char *))
		n++;
	va_end(count);
	argv = malloc((n + 1) * sizeof(*argv));
	if (!argv)
		return NULL;
	argv[0] = (char *)arg0;
	for (size_t i = 1; i <= n; i++)
		argv[i] = va_arg(ap, char *);	/* the last one read: the NULL */
	if (envp)
		*envp = va_arg(ap, char **);
	return argv;
}

/* An execl()-family call: its list into an array, then execve() (WITH_ENV) or execvpe(). */
static int exec_list(const char *file, const char *arg, va_list ap, bool search, bool with_env)
{
	char **envp = environ, **argv = list_args(arg, ap, with_env ? &envp : NULL);
	int r;

	if (!argv)
		return -1;
	r = search ? execvpe(file, argv, envp) : execve(file, argv, envp);
	free(argv);
	return r;
}

int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = exec_list(path, arg, ap, false, false);
	va_end(ap);
	return r;
}

int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = exec_list(file, arg, ap, true, false);
	va_end(ap);
	return r;
}

int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = exec_list(path, arg, ap, false, true);
	va_end(ap);
	return r;
}

/* ---- unwinding: C++ exceptions, thread cancellation ---- */

typedef _Unwind_Reason_Code (*raise_fn)(struct _Unwind_Exception *);
typedef _Unwind_Reason_Code (*forced_fn)(struct _Unwind_Exception *, _Unwind_Stop_Fn, void *);

_Unwind_Reason_Code _Unwind_RaiseException(struct _Unwind_Exception *e)
{
	static void *cache;
	raise_fn real = (raise_fn)real_fn(&cache, "_Unwind_RaiseException",
					  (void *)_Unwind_RaiseException);

	stp_patch_unhook_returns();
	return real ? real(e) : _URC_FATAL_PHASE1_ERROR;
}

_Unwind_Reason_Code _Unwind_ForcedUnwind(struct _Unwind_Exception *e, _Unwind_Stop_Fn stop,
					 void *arg)
{
	static void *cache;
	forced_fn real = (forced_fn)real_fn(&cache, "_Unwind_ForcedUnwind",
					    (void *)_Unwind_ForcedUnwind);

	stp_patch_unhook_returns();
	return real ? real(e, stop, arg) : _URC_FATAL_PHASE1_ERROR;
}
