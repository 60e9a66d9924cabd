/*
 * inject_int.h - what the parts of the injector share (inject.h has the API).
 *
 *   inject.c		the pipeline: attach, find the loader, three calls, release
 *   inject_attach.c	every thread seized and stopped, waited for, let go with
 *			the signals it is owed
 *   inject_call.c	one function call on a stopped thread, and its traces undone
 *   inject_sym.c	where dlopen, dlsym and dlerror are in the process
 *   inject_moves.c	the held threads' pcs moved as the called function asks
 */
#ifndef STP_INJECT_INT_H
#define STP_INJECT_INT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>
#include <sys/user.h>

#include "inject.h"

#define INJ_GRACE_MS	1000	/* to stop a thread again before letting it go */
#define INJ_RESEND_MAX	32

/*
 * How a thread is held.  The order matters: it is the preference for the
 * thread that runs the calls, best first.
 */
enum inj_state {
	INJ_INTERRUPTED,	/* in the stop PTRACE_INTERRUPT asked for */
	INJ_GROUP_STOPPED,	/* in a group-stop (SIGSTOP, SIGTSTP, ...) */
	INJ_SIGNALLED,		/* in a signal-delivery-stop */
	INJ_RUNNING,		/* seized and not stopped yet, or running a call */
	INJ_GONE,		/* exited, or never seized */
};

struct inj_thread {
	pid_t tid;
	enum inj_state state;
	int sig;		/* the signal it is owed when let go; 0: none */
	siginfo_t si;		/* that signal's siginfo */
};

/* A signal owed to a thread that already owed one: sent again once it runs. */
struct inj_resend {
	pid_t tid;
	siginfo_t si;
};

struct inject {
	pid_t pid;
	unsigned int timeout_ms;
	char *err;
	size_t errlen;
	bool failed;
	struct inj_thread *thr;
	int n, cap;
	struct inj_resend resend[INJ_RESEND_MAX];
	int nresend;
	/* where the loader's functions are (dlerror: 0 when the libc has none) */
	uintptr_t dlopen, dlsym, dlerror;
	int dlopen_flags;
	const char *moves_sym;	/* stp_inject__set_pc_moves, or NULL */
	/* the thread that runs the calls (-1: none yet), and what it gets back */
	int call;
	bool regs_saved;
	struct user_regs_struct regs;
	void *fpu;		/* NT_X86_XSTATE, or struct user_fpregs_struct */
	size_t fpulen;
	bool xstate;
	unsigned char *stack;	/* the bytes at [stack_lo, stack_lo + stack_len) before */
	uintptr_t stack_lo;	/* the stack pointer at a call's entry */
	size_t stack_len;
};

/* inject.c */
int inj__fail(struct inject *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void inj__deadline(struct timespec *t, unsigned int ms);
bool inj__past(const struct timespec *t);
int inj__status(pid_t pid, pid_t tid, const char *field, char *buf, size_t len);
long inj__status_long(pid_t pid, pid_t tid, const char *field, int base);

/* inject_attach.c */
int inj_attach__all(struct inject *in);
int inj_attach__wait(struct inject *in, int *status, const struct timespec *end);
void inj_attach__note(struct inject *in, struct inj_thread *t, int status);
void inj_attach__owe(struct inject *in, struct inj_thread *t, const siginfo_t *si);
void inj_attach__release(struct inject *in);

/* inject_call.c */
int inj_call__begin(struct inject *in, const char *const *strs, int n, uintptr_t *at);
int inj_call__run(struct inject *in, const char *name, uintptr_t fn, uintptr_t a0, uintptr_t a1,
		  unsigned long *ret);
void inj_call__end(struct inject *in);
int inj_mem__read(const struct inject *in, uintptr_t addr, void *buf, size_t len);
int inj_mem__string(const struct inject *in, uintptr_t addr, char *buf, size_t len);

/* inject_sym.c */
int inj_sym__find(struct inject *in);

/* inject_moves.c */
int inj_moves__apply(struct inject *in, uintptr_t var);

#endif
