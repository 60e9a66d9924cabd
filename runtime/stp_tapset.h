/*
 * stp_tapset.h - the runtime services that tapset functions call.
 *
 * Tapset functions written in C ("function f:long () %{ ... %}" in the
 * tapset/NAME.stp files) are compiled into a script's generated code, in kernel context by the BPF
 * runtime (runtime/bpf) and in user context by the runner (runtime/user, for
 * begin, end, error and timer probes).  Their bodies reach the running system
 * only through the stp_* functions declared here.  Each runtime defines every
 * one of them with the meaning written beside it; a service a runtime cannot
 * give in some context (say, the parent's name in a timer probe) returns the
 * stated "none" value, or raises an error where the comment says so.
 *
 * Inside an embedded-C function body the generated code provides, as stap
 * does:
 *
 *   CONTEXT          struct context *: the probe hit being handled
 *   STAP_ARG_name    the value of parameter NAME: int64_t for a long;
 *                    const char * for a string (NUL-terminated, shorter than
 *                    MAXSTRINGLEN)
 *   STAP_RETVALUE    the result: an int64_t lvalue in a long function; in a
 *                    string function a char * to MAXSTRINGLEN bytes holding ""
 *                    on entry
 *   STAP_RETURN(v)   set the result to V and return from the body (a string
 *                    V is copied, truncated to MAXSTRINGLEN - 1 bytes);
 *                    STAP_RETURN() in a function with no result
 *   STAP_ERROR(msg)  stp_error(CONTEXT, msg), then return
 *
 * Comments in a body that the translator reads, as in stap: pure (no side
 * effects: the call may be dropped when its value is unused), stable (the
 * same value throughout one probe hit), unprivileged, myproc-unprivileged
 * (allowed to unprivileged users on their own processes), guru (needs -g),
 * user-context (no kernel-context implementation: pass 3 refuses a call
 * in a kernel-context probe, naming the function), kmod (with user-context:
 * a module's kernel-context handlers have one), kmod-only (only a module's
 * kernel-context handlers have one: pass 3 refuses a call anywhere else).
 *
 * Conventions:
 *  - Every service takes the context first, even where it does not use it,
 *    so that any of them may use per-CPU scratch space or record an error.
 *  - Script values: a long is int64_t; an address is a uint64_t.
 *  - A string result goes into OUT, a caller's buffer of MAXSTRINGLEN bytes
 *    (a per-CPU scratch slot in kernel context), always NUL-terminated and
 *    truncated to MAXSTRINGLEN - 1 bytes.  Lengths and positions count bytes.
 *  - Errors: a service that fails raises a soft error the way stp_error()
 *    does, with a message naming what failed (a fault names the address),
 *    and returns 0, "" or a negative value as its comment says.  The
 *    generated code checks the context after every call of a function, so
 *    the probe handler unwinds to the nearest try/catch or, uncaught, ends,
 *    runs "probe error" and counts against MAXERRORS.
 *  - No service allocates, sleeps or takes a lock that a probe could hold.
 */
#ifndef STP_TAPSET_H
#define STP_TAPSET_H

#ifndef __bpf__
#include <stdint.h>	/* runtime/bpf's prelude supplies these types */
#endif

/*
 * How a runtime defines the services: the BPF runtime (runtime/bpf/tapset.bpf.h)
 * as static always-inline functions, since a BPF object has no library to
 * link with; the user-context runtime (runtime/user/tapset_user.c) as
 * ordinary functions.
 */
#ifndef STP_SERVICE
#ifdef __bpf__
#define STP_SERVICE static __always_inline
#else
#define STP_SERVICE
#endif
#endif

/* The longest string plus its NUL, as stap's default on 64-bit hosts; -D overrides. */
#ifndef MAXSTRINGLEN
#define MAXSTRINGLEN 512
#endif

struct context;		/* one probe hit: defined by each runtime */

/*
 * What the runner tells the services about the run, where kernel context
 * cannot find it out.  The BPF runtime keeps it in the global variable
 * stp_rt, alone in the data section STP_RT_SECTION, which libbpf makes the
 * mmapable map of that name: the runner fills it (stp_rt_info_init() in
 * runtime/user/tapset_user.h) once the object is loaded and before probes
 * are attached, and sets target when -c has started its command.  User
 * context reads the same memory through the pointer given to
 * stp_tapset_user_init().  The layout does not depend on MAXSTRINGLEN.
 */
#define STP_RT_SECTION ".data.stp_rt"
#define STP_RT_MAXARGS 32	/* script arguments kept; stp_script_argc() counts them all */
#define STP_RT_ARGBYTES 4096	/* their text, NUL-terminated one after the other */
#define STP_RT_TZLEN 16

struct stp_rt_info {
	int64_t target;			/* target(): -x PID, -c CMD's pid, or 0 */
	int64_t tai_offset_ns;		/* CLOCK_TAI - CLOCK_REALTIME, whole seconds */
	int64_t tz_gmtoff;		/* seconds west of UTC when the script started */
	int64_t hz;			/* the kernel's HZ */
	int64_t ncpus;			/* possible CPUs: cpu() is below this */
	int64_t page_size;		/* the kernel's PAGE_SIZE: mem_page_size() */
	int64_t argc;			/* script arguments */
	char tz_name[STP_RT_TZLEN];	/* the time zone's abbreviation, e.g. "CET" */
	uint16_t argoff[STP_RT_MAXARGS];	/* argument N starts at args[argoff[N - 1]] */
	char args[STP_RT_ARGBYTES];
};

/*
 * Context: the task and probe that the current hit belongs to.  In kernel
 * context "the current task" is the task the probe fired in; in user
 * context (begin, end, timers) it is the runner's own process.
 */

STP_SERVICE int64_t stp_pid(struct context *c);	/* process id (the kernel's tgid) */
STP_SERVICE int64_t stp_tid(struct context *c);	/* thread id (the kernel's pid) */
STP_SERVICE int64_t stp_ppid(struct context *c);	/* the parent process's id, 0 if none */
STP_SERVICE int64_t stp_pgrp(struct context *c);	/* process group id, in the initial pid namespace */
STP_SERVICE int64_t stp_sid(struct context *c);	/* session id, in the initial pid namespace */
STP_SERVICE int64_t stp_uid(struct context *c);	/* real user id */
STP_SERVICE int64_t stp_gid(struct context *c);	/* real group id */
STP_SERVICE int64_t stp_euid(struct context *c);	/* effective user id */
STP_SERVICE int64_t stp_egid(struct context *c);	/* effective group id */

/* The current task's name (the kernel's comm, at most 15 bytes) into OUT. */
STP_SERVICE void stp_execname(struct context *c, char *out);

/* The parent's name into OUT; "" when there is no parent. */
STP_SERVICE void stp_pexecname(struct context *c, char *out);

/* The CPU the probe runs on, from 0. */
STP_SERVICE int64_t stp_cpu(struct context *c);

/* The process id given by -x PID or started by -c CMD; 0 when neither was. */
STP_SERVICE int64_t stp_target(struct context *c);

/*
 * The probe point of the running handler into OUT, spelled as stap's pp()
 * spells it: after alias and wildcard expansion, e.g.
 * kernel.trace("sched:sched_switch") or process("/bin/ls").function("main").
 */
STP_SERVICE void stp_pp(struct context *c, char *out);

/*
 * The probe point of the running handler into OUT as pn() gives it: after
 * wildcard expansion, before alias resolution (syscall.read of a probe
 * on syscall.*).  Kernel context has it when the script calls pn()
 * (STP_HAVE_PN).
 */
STP_SERVICE void stp_pn(struct context *c, char *out);

/*
 * The name of the function the probe is in into OUT: the probed function
 * for function probes, else the symbol at the probe's address where the
 * runtime can resolve it; "" when it cannot.
 */
STP_SERVICE void stp_probefunc(struct context *c, char *out);

/* The kernel module the probe is in into OUT ("kernel" for vmlinux); "" if unknown. */
STP_SERVICE void stp_probemod(struct context *c, char *out);

/* 1 in a .return probe, else 0. */
STP_SERVICE int64_t stp_is_return(struct context *c);

/*
 * 1 when the probe point was reached in user mode, as stap's user_mode():
 * in a process(...) uprobe, or a timer.profile or perf.* sample that
 * interrupted user code; else 0 (tracepoints, kernel samples, and user
 * context: begin, end and timer probes, where stap gives 0 too).
 */
STP_SERVICE int64_t stp_user_mode(struct context *c);

/* In a timer.profile or perf.* probe, where the sample interrupted the CPU (its IP); else 0. */
STP_SERVICE uint64_t stp_perf_addr(struct context *c);

/*
 * The user addresses where the current task's argument strings start and
 * end (the kernel's mm->arg_start and mm->arg_end): NUL-separated strings,
 * read with stp_read_user_string().  Both 0 for a task with no user memory
 * (a kernel thread).
 */
STP_SERVICE uint64_t stp_cmdline_start(struct context *c);
STP_SERVICE uint64_t stp_cmdline_end(struct context *c);

/* The number of script arguments (pmstap's $#). */
STP_SERVICE int64_t stp_script_argc(struct context *c);

/* Script argument N (1 to stp_script_argc(): @N) into OUT; "" for another N. */
STP_SERVICE void stp_script_arg(struct context *c, int64_t n, char *out);

/*
 * Time.  Clocks in nanoseconds; the tapset divides for us, ms and s.
 */

/* The wall clock: nanoseconds since the UNIX epoch. */
STP_SERVICE int64_t stp_gettimeofday_ns(struct context *c);

/* The kernel's monotonic clock (ktime): nanoseconds since boot, the same on every CPU. */
STP_SERVICE int64_t stp_ktime_get_ns(struct context *c);

/* This CPU's clock: cheap, monotonic on one CPU, not synchronized across CPUs. */
STP_SERVICE int64_t stp_local_clock_ns(struct context *c);

/* CPU's clock as stp_local_clock_ns() reads it there; an error for a CPU that does not exist. */
STP_SERVICE int64_t stp_cpu_clock_ns(struct context *c, int64_t cpu);

STP_SERVICE int64_t stp_get_cycles(struct context *c);	/* the cycle counter, 0 where there is none */
STP_SERVICE int64_t stp_jiffies(struct context *c);		/* the kernel's jiffies (64-bit) */
STP_SERVICE int64_t stp_hz(struct context *c);		/* the kernel's HZ: jiffies per second */

/*
 * A pseudo-random number in [0, N), 0 for N = 0; an error (STP_MSG_RANDINT)
 * for N above STP_RANDINT_MAX or below 0, as stap's randint().  Not for keys.
 */
#define STP_RANDINT_MAX (1024 * 1024)
STP_SERVICE int64_t stp_randint(struct context *c, int64_t n);

/* The local time zone when the script started: seconds west of UTC, and its name into OUT. */
STP_SERVICE int64_t stp_tz_gmtoff(struct context *c);
STP_SERVICE int64_t stp_page_size(struct context *c);
STP_SERVICE void stp_tz_name(struct context *c, char *out);

/*
 * Strings.  S, SET and the like are NUL-terminated strings shorter than
 * MAXSTRINGLEN; positions count bytes from 0.
 */

STP_SERVICE int64_t stp_strlen(struct context *c, const char *s);

/*
 * Copy at most LEN bytes of S starting at byte START into OUT; "" when
 * START is negative or not inside S, or LEN is not positive.
 */
STP_SERVICE void stp_substr(struct context *c, char *out, const char *s, int64_t start, int64_t len);

/* The byte at POS of S as 0..255; raises an error when POS is outside S. */
STP_SERVICE int64_t stp_char_at(struct context *c, const char *s, int64_t pos);

/* The position of the first SUB in S, -1 when there is none; 0 for an empty SUB. */
STP_SERVICE int64_t stp_strpos(struct context *c, const char *s, const char *sub);

/* The length of the leading run of S's bytes that are in SET (strspn) or not in it (strcspn). */
STP_SERVICE int64_t stp_strspn(struct context *c, const char *s, const char *set);
STP_SERVICE int64_t stp_strcspn(struct context *c, const char *s, const char *set);

/*
 * S as a number in BASE, as the kernel's simple_strtol(): an optional '-',
 * then digits up to the first byte that is not one; BASE 0 takes 0x... as
 * hex, 0... as octal, else decimal, and BASE 16 allows a 0x prefix.  No
 * digits gives 0.  BASE is 0 or 2..36 (the tapset checks it).
 */
STP_SERVICE int64_t stp_strtol(struct context *c, const char *s, int64_t base);

/*
 * IN with every byte that is not printable ASCII escaped, into OUT, as
 * stap's text_str(): \a \b \f \n \r \t \v \" \\ by name, a valid UTF-8
 * sequence as \uXXXX or \UXXXXXXXX, any other byte as \ooo (octal).  At
 * most INLEN bytes of IN are read and OUTLEN bytes written (0 or out of
 * range: MAXSTRINGLEN - 1); an escape that would not fit whole is left out.
 * QUOTED puts double quotes around the result, and when IN did not fit
 * ends it with "..." after the closing quote.
 */
STP_SERVICE void stp_text_str(struct context *c, char *out, const char *in,
			      int64_t inlen, int64_t outlen, int64_t quoted);

/*
 * Memory.  Reads that fault (an unmapped or swapped-out page, a kernel
 * address where a user one is expected) raise the error
 * "TYPE read fault at 0xADDR" and return 0 or -EFAULT.  User reads are of
 * the current task's memory.
 */

/*
 * The integer of SIZE bytes (1, 2, 4 or 8) at ADDR in user memory
 * (stp_read_user_int) or kernel memory (stp_read_kernel_int), in the
 * host's byte order, sign-extended when IS_SIGNED, else zero-extended.
 */
STP_SERVICE int64_t stp_read_user_int(struct context *c, uint64_t addr, int64_t size, int64_t is_signed);
STP_SERVICE int64_t stp_read_kernel_int(struct context *c, uint64_t addr, int64_t size, int64_t is_signed);
/*
 * Guru mode, BPF only: the SIZE (1, 2, 4 or 8) low bytes of VALUE to ADDR
 * in the current task's user memory (bpf_probe_write_user; the kernel logs
 * a warning when a program that can write is loaded).  A fault raises
 * "user write fault at 0xADDR".
 */
STP_SERVICE void stp_write_user_int(struct context *c, uint64_t addr, int64_t size, int64_t value);
/*
 * Guru mode, kernel runtime only (kmod-only: a module's kernel-context
 * handlers): stap's set_kernel_*() of conversions-guru.stp.  The SIZE (1,
 * 2, 4 or 8) low bytes of VALUE to kernel address ADDR; a fault raises
 * stap's "kernel long copy fault at 0xADDR [man error::fault]" (int,
 * short, char by SIZE; "pointer" for stp_write_kernel_pointer(), which
 * writes 8 bytes).  ADDR is printed with 16 hex digits, as the kernel's
 * %p that stap uses prints a NULL pointer (others it hashes).
 */
STP_SERVICE void stp_write_kernel_int(struct context *c, uint64_t addr, int64_t size, int64_t value);
STP_SERVICE void stp_write_kernel_pointer(struct context *c, uint64_t addr, int64_t value);
/*
 * At most N - 1 bytes of S, then a NUL, to kernel address ADDR, a byte at
 * a time (stap's store_kderef_string(): the bytes before a fault stay
 * written); N < 1 writes nothing.  A fault raises "kernel string copy
 * fault at 0xADDR [man error::fault]".
 */
STP_SERVICE void stp_write_kernel_string(struct context *c, uint64_t addr, const char *s, int64_t n);

/*
 * The NUL-terminated string at ADDR, at most N bytes of it (and at most
 * MAXSTRINGLEN - 1), into OUT.  Returns its length, or -EFAULT after
 * raising the error, with OUT "".  N < 1 reads nothing and gives "".
 */
STP_SERVICE int64_t stp_read_user_string(struct context *c, char *out, uint64_t addr, int64_t n);
STP_SERVICE int64_t stp_read_kernel_string(struct context *c, char *out, uint64_t addr, int64_t n);

/*
 * Control and logging.
 */

/*
 * Raise a soft error with MSG (the script's error()); "unknown error" when
 * MSG is "".  try/catch can catch it.
 */
STP_SERVICE void stp_error(struct context *c, const char *msg);

/* Print "WARNING: MSG" on the warnings stream; the probe handler goes on. */
STP_SERVICE void stp_warn(struct context *c, const char *msg);
/* system(): the runner starts CMD with /bin/sh -c once the handler is done. */
STP_SERVICE void stp_system(struct context *c, const char *cmd);
/* switch_file(): what is printed after this call goes to -o's next file. */
STP_SERVICE void stp_switch_file(struct context *c);

/*
 * Ask the script to stop: no new probe hits start, the end probes run,
 * then the runner exits.  The current handler goes on to its end.
 */
STP_SERVICE void stp_exit(struct context *c);

/*
 * Stop at once: as stp_exit(), and the current handler unwinds without
 * running catch blocks (it is not a catchable error).
 */
STP_SERVICE void stp_abort(struct context *c);

/*
 * Log MSG at kernel log LEVEL (0 KERN_EMERG .. 7 KERN_DEBUG), a newline
 * added.  The user-context runtime writes to /dev/kmsg; kernel context
 * can only reach the tracing buffer (the BPF runtime's bpf_trace_printk),
 * and says so once with a warning.
 */
STP_SERVICE void stp_printk(struct context *c, int64_t level, const char *msg);

/*
 * Backtraces (tapset/backtrace.stp).  Kernel context captures addresses;
 * names come from user space (runtime/user/symbolize.c: /proc/kallsyms
 * for the kernel, libdwfl for a process), which formats the records
 * stp_print_stack() sends.  In user context (begin, end, timer) there is
 * no probed task: stp_backtrace() gives "" and stp_print_stack() of an
 * empty stack prints nothing.
 */

/* Flags of stp_print_stack() and stp_sym_sprint() (enum order is the record's). */
#define STP_STACK_USER 1	/* user addresses (of the current task), else kernel */
#define STP_STACK_UNNOTED 2	/* stp_backtrace(): the files of a user stack not noted for
				   naming after the process (kernel context's stp_umaps) */

/* The styles stp_sym_sprint() writes, as stap's _STP_SYM_* do. */
#define STP_SYM_NAME 0		/* "sym", or "0xADDR" when unknown: symname() */
#define STP_SYM_DATA 1		/* "sym+0xOFF/0xSIZE [module]": symdata() */
#define STP_SYM_LINES 2		/* "sym+0xOFF/0xSIZE [module]" a line each: sprint_stack() */
#define STP_SYM_FULL 3		/* " 0xADDR : sym+0xOFF/0xSIZE [module]\n" each: sprint_syms() */
#define STP_SYM_FILELINE 4	/* "/path/file.c:LINE", or "0xADDR" when unknown: symfileline() */
#define STP_SYM_MODULE 5	/* "kernel", a module's name, a file's path; "" unknown: modname() */

/*
 * The probed files' symbols, where the script names their addresses in
 * kernel context (translator/emit_usyms.c): per file, its symbols sorted
 * by offset in the file; names and paths in one blob of strings.
 */
struct stp_usym {
	uint64_t off;		/* in the file */
	uint32_t name;		/* in stp_usym_names */
};

struct stp_usym_file {
	uint32_t path;		/* in stp_usym_names */
	uint32_t leaf;		/* its last component's offset in the path */
	int32_t first, count;	/* its symbols in stp_usyms */
	uint64_t size;		/* the file's, when built */
	unsigned char build_id[20];	/* its GNU build id, zero-padded; none: zeros */
	/* the kernel's runtimes: its filesystem (MKDEV()) and inode where the script runs, filled
	 * in as it loads (stp_usym_identify(), stp__usym_identify()); 0: not found */
	uint64_t dev, ino;
};

/*
 * The current task's stack as hex addresses, innermost first, separated
 * by single spaces ("0xffffffff81234567 0x..."), as many as fit OUT;
 * user addresses when USER.  "" where there is none.
 */
STP_SERVICE void stp_backtrace(struct context *c, char *out, int64_t user);

/*
 * Print STK (addresses as stp_backtrace() writes them) symbolized, one
 * line per address: " 0xADDR : sym+0xOFF/0xSIZE [module]".  FLAGS:
 * STP_STACK_USER.  An empty STK prints the current stack.
 */
STP_SERVICE void stp_print_stack(struct context *c, const char *stk, int64_t flags);

/*
 * STK (one address or several, as above) symbolized in STYLE into OUT.
 * Only user space knows symbols: kernel context raises an error.
 */
STP_SERVICE void stp_sym_sprint(struct context *c, char *out, const char *stk, int64_t style,
				int64_t flags);

/* The user-space address the current task was at (its saved user IP), or 0. */
STP_SERVICE uint64_t stp_uaddr(struct context *c);

/*
 * Tasks (tapset/task.stp).  A task is a number: in kernel context the
 * address of its struct task_struct (as in stap), in user context its
 * thread id, since user space cannot follow kernel pointers and reads
 * /proc/ID/ instead.  A task taken in one context means nothing in the
 * other.  A task that cannot be read raises "kernel read fault at 0xADDR"
 * (kernel) or "no task ID" (user) and gives 0.
 */
enum stp_task_field {
	STP_TASK_PID,		/* its process id (tgid) */
	STP_TASK_TID,		/* its thread id */
	STP_TASK_PARENT,	/* its parent, a task */
	STP_TASK_STATE,		/* its state bits: 0 running, 1 sleeping, 2 disk sleep, 4 stopped, ... */
	STP_TASK_UID, STP_TASK_EUID, STP_TASK_GID, STP_TASK_EGID,
	STP_TASK_PRIO,		/* priority: prio - 100, 0..39 for normal tasks (20 + nice) */
	STP_TASK_NICE,		/* nice: -20..19 */
	STP_TASK_CPU,		/* the CPU it last ran on */
	STP_TASK_OPEN_FILES,	/* open file descriptors */
	STP_TASK_MAX_FILES,	/* the size of its descriptor table */
	STP_TASK_START_TIME,	/* when it started: ns of the monotonic clock since boot */
	STP_TASK_UTIME,		/* CPU time in user mode, ns (the kernel's utime) */
	STP_TASK_STIME,		/* CPU time in the kernel, ns (the kernel's stime) */
	STP_TASK_RLIMIT_NOFILE,	/* its soft RLIMIT_NOFILE; -1 when unlimited */
	/* Its process's memory, in pages (0 for a task with none, a kernel thread): */
	STP_TASK_MEM_SIZE,	/* the whole address space (total_vm; statm's size) */
	STP_TASK_MEM_RSS,	/* resident: file, anonymous and shared-memory pages */
	STP_TASK_MEM_SHR,	/* resident file pages (MM_FILEPAGES; status's RssFile) */
	STP_TASK_MEM_TXT,	/* the pages of its code, start_code to end_code */
	STP_TASK_MEM_DATA,	/* data and stack (data_vm + stack_vm; statm's data) */
};
STP_SERVICE int64_t stp_task_current(struct context *c);
STP_SERVICE int64_t stp_task_field(struct context *c, int64_t task, int64_t field);
STP_SERVICE void stp_task_execname(struct context *c, char *out, int64_t task);
/* The task of process PID: in kernel context only the current task or one of its ancestors. */
STP_SERVICE int64_t stp_pid2task(struct context *c, int64_t pid);

/*
 * Registers of a user-space probe (process(..).function, .statement,
 * .mark; tapset/registers.stp): the task's user registers where the probe
 * hit, on x86-64.  Other probes raise an error ("registers are not
 * available ...") and get 0.
 */
enum stp_reg {
	STP_REG_AX, STP_REG_BX, STP_REG_CX, STP_REG_DX, STP_REG_SI, STP_REG_DI,
	STP_REG_BP, STP_REG_SP, STP_REG_R8, STP_REG_R9, STP_REG_R10, STP_REG_R11,
	STP_REG_R12, STP_REG_R13, STP_REG_R14, STP_REG_R15, STP_REG_IP, STP_REG_FLAGS,
	STP_REG_COUNT
};

/* Register REG (enum stp_reg), all 64 bits. */
STP_SERVICE int64_t stp_uregister(struct context *c, int64_t reg);
/* Argument N (from 1) by the x86-64 calling convention: rdi, rsi, rdx, rcx, r8, r9, then the stack. */
STP_SERVICE int64_t stp_uarg(struct context *c, int64_t n);

/*
 * Subexpressions of the last successful '=~' (tapset/regex.stp).  User
 * context keeps the string and the places where regexec() matched each
 * parenthesized group of the last match the script ran there.  Kernel
 * context matches with a DFA (translator/regex_dfa.c) that keeps no groups:
 * both services raise an error there, naming the function.
 */

/*
 * Group N of the last match into OUT: 0 the whole match, "" for a group
 * that took no part in it.  Raises an error (OUT "") when the last match
 * failed or none has run, or when the expression has no group N.
 */
STP_SERVICE void stp_regex_matched(struct context *c, char *out, int64_t n);

/* The last match's groups, the whole match included (1 + its '(' groups); errors as above. */
STP_SERVICE int64_t stp_regex_ngroups(struct context *c);

/*
 * $value of procfs probes (tapset/procfs.stp), user context only
 * (runtime/user/procfs.c).  In a .read handler: the answer becomes V, or
 * V is appended to it, cut at .maxsize(N) - 1 bytes with stap's error
 * "buffer size exceeded, consider .maxsize(N)."; in a .write handler: OUT
 * gets the piece written.
 */
STP_SERVICE void stp_procfs_value_set(struct context *c, const char *v);
STP_SERVICE void stp_procfs_value_append(struct context *c, const char *v);
STP_SERVICE void stp_procfs_value_get(struct context *c, char *out);

#endif
