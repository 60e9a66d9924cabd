/*
 * tapset.bpf.h - the runtime/stp_tapset.h services in kernel context.
 *
 * Included once by a script's generated script.bpf.c, after stp.bpf.h
 * (struct context, stp_raise_msg(), stp_send_warn(), stp_request_exit(),
 * stp_request_abort(), stp_control_get()).  The generated code also
 * defines, before this include, what only it knows:
 *
 *   const char *stp_ctx_pp(struct context *c)
 *		the probe point of the running handler (c->probe), as pp()
 *		spells it: NUL-terminated, anywhere in kernel memory
 *   int64_t stp_ctx_is_return(struct context *c)
 *		1 in a .return probe
 *   const char *stp_ctx_pn(struct context *c)
 *		pn() of the running handler, with STP_HAVE_PN defined: only
 *		a script that calls pn() has it
 *
 * for instance from tables in read-only data (qa/bpf/tapset_verify.bpf.c
 * does this; SEC(".rodata") keeps clang 14 from putting small tables in
 * .rodata.cst4 and the like, which breaks the object's BTF):
 *
 *	static const char stp_points[] SEC(".rodata") =
 *		"begin\0kernel.trace(\"sched:sched_switch\")";
 *	static const uint16_t stp_point_at[STP_NPROBES] SEC(".rodata") = { 0, 6 };
 *	static __always_inline const char *stp_ctx_pp(struct context *c)
 *	{
 *		return c->probe < STP_NPROBES ? stp_points + stp_point_at[c->probe] : "";
 *	}
 *
 * Every service is static __always_inline (STP_SERVICE in stp_tapset.h).
 * Strings follow stp_strings.h: a string argument or OUT points to
 * MAXSTRINGLEN bytes of a map value (a frame buffer of the context, a
 * global, a literal padded to MAXSTRINGLEN in .rodata), so that the
 * verifier can check every index against the buffer.
 *
 * Where kernel context cannot know something, the runner says it in
 * stp_rt (struct stp_rt_info, see stp_tapset.h): the TAI offset for the
 * wall clock, the time zone, the CPU count, HZ and the script's arguments.
 * target() is the control map's.
 */
#ifndef STP_TAPSET_BPF_H
#define STP_TAPSET_BPF_H

#include "../stp_tapset.h"
#include "../stp_strings.h"
#include "stp_regex.bpf.h"	/* =~ and !~: the DFA walk */

#ifndef EFAULT
#define EFAULT 14
#endif

/* The runner's answers; see struct stp_rt_info. */
#if !defined(STP_DYNINST) && !defined(STP_KMOD)
struct stp_rt_info stp_rt SEC(STP_RT_SECTION);
#else
/* in the segment, where pmstap writes them */
STP_MAP(stp_rt_map, BPF_MAP_TYPE_ARRAY, uint32_t, struct stp_rt_info, 1, 0);
#define stp_rt (*(struct stp_rt_info *)stp_dmap__values(stp_rt_map.m, NULL))
#endif

/* process/thread probes: stp__task(c), the task a hit is about, or NULL */
#ifndef STP_DYNINST
#include "stp_proc.bpf.h"
#endif

/* Set once printk() in kernel context has said where its output goes. */
int stp_printk_warned;

/*
 * Raise "FMT" with one 64-bit argument as the error message, formatted in
 * this CPU's loop memory (no loop runs while a service raises an error).
 */
#define STP_MSG_MAX ((int)sizeof(struct stp__vars_mem))
#define stp__raisef(c, fmt, arg)                                                           \
	do {                                                                               \
		char *__msg = stp__vars();                                                 \
		if (__msg) {                                                               \
			BPF_SNPRINTF(__msg, STP_MSG_MAX, fmt, arg);                        \
			stp_raise_msg(c, __msg);                                           \
		} else {                                                                   \
			stp_raise_msg(c, fmt);                                             \
		}                                                                          \
	} while (0)

/* ---- the task ---- */

#ifndef STP_DYNINST
STP_SERVICE int64_t stp_pid(struct context *c)
{
	struct stp_task_s *t = stp__task(c);

	return t ? BPF_CORE_READ(t, tgid) : (int64_t)(bpf_get_current_pid_tgid() >> 32);
}

STP_SERVICE int64_t stp_tid(struct context *c)
{
	struct stp_task_s *t = stp__task(c);

	return t ? BPF_CORE_READ(t, pid) : (int64_t)(__u32)bpf_get_current_pid_tgid();
}

STP_SERVICE int64_t stp_ppid(struct context *c)
{
	struct stp_task_s *t = stp__task(c) ?: stp_current_task();

	return BPF_CORE_READ(t, real_parent, tgid);
}

/* The number of the current task's process group or session, in the initial pid namespace. */
#define stp__task_pidnr(type)                                                              \
	({                                                                                 \
		struct task_struct *__task = bpf_get_current_task_btf();                     \
		struct pid *__pid = BPF_CORE_READ(__task, signal, pids[type]);                \
		__pid ? (int64_t)BPF_CORE_READ(__pid, numbers[0].nr) : 0;                    \
	})

STP_SERVICE int64_t stp_pgrp(struct context *c)
{
	return stp__task_pidnr(PIDTYPE_PGID);
}

STP_SERVICE int64_t stp_sid(struct context *c)
{
	return stp__task_pidnr(PIDTYPE_SID);
}

STP_SERVICE int64_t stp_uid(struct context *c)
{
	return (int64_t)(__u32)bpf_get_current_uid_gid();
}

STP_SERVICE int64_t stp_gid(struct context *c)
{
	return (int64_t)(bpf_get_current_uid_gid() >> 32);
}

STP_SERVICE int64_t stp_euid(struct context *c)
{
	struct task_struct *t = bpf_get_current_task_btf();

	return BPF_CORE_READ(t, cred, euid.val);
}

STP_SERVICE int64_t stp_egid(struct context *c)
{
	struct task_struct *t = bpf_get_current_task_btf();

	return BPF_CORE_READ(t, cred, egid.val);
}

/* A comm is 16 bytes with its NUL; a smaller -D MAXSTRINGLEN cuts it. */
#define STP_COMM_LEN (MAXSTRINGLEN < 16 ? MAXSTRINGLEN : 16)

STP_SERVICE void stp_execname(struct context *c, char *out)
{
	struct stp_task_s *t = stp__task(c);

	if (t ? bpf_probe_read_kernel_str(out, STP_COMM_LEN, &t->comm) < 0 :
		bpf_get_current_comm(out, STP_COMM_LEN) != 0)
		out[0] = '\0';
	out[STP_COMM_LEN - 1] = '\0';
}

STP_SERVICE void stp_pexecname(struct context *c, char *out)
{
	struct stp_task_s *t = stp__task(c) ?: stp_current_task();
	struct stp_task_s *parent = BPF_CORE_READ(t, real_parent);

	out[0] = '\0';
	if (parent && bpf_probe_read_kernel_str(out, STP_COMM_LEN, &parent->comm) < 0)
		out[0] = '\0';
}

STP_SERVICE int64_t stp_cpu(struct context *c)
{
	return bpf_get_smp_processor_id();
}

#else
/* the process itself: runtime/dyninst */
#include "../dyninst/tapset_task.dyn.h"
#endif

STP_SERVICE int64_t stp_target(struct context *c)
{
	struct stp_control *ctl = stp_control_get();

	return ctl ? ctl->target : stp_rt.target;
}

/* ---- the probe ---- */

STP_SERVICE void stp_pp(struct context *c, char *out)
{
	if (bpf_probe_read_kernel_str(out, MAXSTRINGLEN, stp_ctx_pp(c)) < 0)
		out[0] = '\0';
}

#ifdef STP_HAVE_PN
STP_SERVICE void stp_pn(struct context *c, char *out)
{
	if (bpf_probe_read_kernel_str(out, MAXSTRINGLEN, stp_ctx_pn(c)) < 0)
		out[0] = '\0';
}
#endif

#ifndef STP_DYNINST
static __always_inline bool stp__ksym_at(char *out, uint64_t addr, int64_t style);	/* stp_stack.bpf.h */
#endif
#if !defined(STP_DYNINST) || defined(STP_USYMS)
static __always_inline bool stp__probe_usym(struct context *c, char *out);	/* stp_stack.bpf.h */
#endif
#if !defined(STP_KMOD) && !defined(STP_DYNINST)
static __always_inline bool stp__probe_ksym(struct context *c, char *out);	/* stp_umode.bpf.h */
#endif

/*
 * probefunc(): as stap 4.8's symname(addr()), the kernel's name of the
 * function the registers stop in where a kprobe (or a sample) has them:
 * in a .return the caller's (a kretprobe's registers are at the return
 * address), in an inline instance the function it is inlined into; where
 * the probe interrupted user code, its usymname(uaddr()) (in a uprobe's
 * .return, the caller); elsewhere the probe point's function.
 */
STP_SERVICE void stp_probefunc(struct context *c, char *out)
{
#ifdef STP_KMOD
	struct pt_regs *r = stp_kmod_kregs();

	if (r && !user_mode(r) && stp__ksym_at(out, instruction_pointer(r), STP_SYM_NAME))
		return;
#elif !defined(STP_DYNINST)
	if (stp__probe_ksym(c, out))
		return;
#endif
#if !defined(STP_DYNINST) || defined(STP_USYMS)
	if (stp__probe_usym(c, out))
		return;
#endif
	stp_pp(c, out);
	stp__pp_function(out);
}

STP_SERVICE void stp_probemod(struct context *c, char *out)
{
	stp_pp(c, out);
	stp__pp_module(out);
}

STP_SERVICE int64_t stp_is_return(struct context *c)
{
	return stp_ctx_is_return(c) != 0;
}

#ifndef STP_DYNINST
STP_SERVICE uint64_t stp_cmdline_start(struct context *c)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct mm_struct *mm = BPF_CORE_READ(t, mm);

	return mm ? BPF_CORE_READ(mm, arg_start) : 0;
}

STP_SERVICE uint64_t stp_cmdline_end(struct context *c)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct mm_struct *mm = BPF_CORE_READ(t, mm);

	return mm ? BPF_CORE_READ(mm, arg_end) : 0;
}

#else
#endif

STP_SERVICE int64_t stp_script_argc(struct context *c)
{
	return stp_rt.argc;
}

STP_SERVICE void stp_script_arg(struct context *c, int64_t n, char *out)
{
	uint32_t off;

	out[0] = '\0';
	if (n < 1 || n > stp_rt.argc || n > STP_RT_MAXARGS)
		return;
	off = stp_rt.argoff[(n - 1) & (STP_RT_MAXARGS - 1)];
	if (off >= STP_RT_ARGBYTES)
		return;
	if (bpf_probe_read_kernel_str(out, MAXSTRINGLEN, &stp_rt.args[off]) < 0)
		out[0] = '\0';
}

/* ---- time ---- */

STP_SERVICE int64_t stp_gettimeofday_ns(struct context *c)
{
	return (int64_t)bpf_ktime_get_tai_ns() - stp_rt.tai_offset_ns;
}

STP_SERVICE int64_t stp_ktime_get_ns(struct context *c)
{
	return (int64_t)bpf_ktime_get_ns();
}

/* BPF reads no per-CPU sched_clock: the monotonic clock is cheap and as good. */
STP_SERVICE int64_t stp_local_clock_ns(struct context *c)
{
	return (int64_t)bpf_ktime_get_ns();
}

STP_SERVICE int64_t stp_cpu_clock_ns(struct context *c, int64_t cpu)
{
	int64_t ncpus = stp_rt.ncpus;

	if (cpu < 0 || (ncpus > 0 && cpu >= ncpus)) {
		stp__raisef(c, STP_MSG_NO_CPU, cpu);
		return 0;
	}
	return (int64_t)bpf_ktime_get_ns();
}

STP_SERVICE int64_t stp_randint(struct context *c, int64_t n)
{
	if ((uint64_t)n > STP_RANDINT_MAX) {
		stp__raisef(c, STP_MSG_RANDINT, n);
		return 0;
	}
	return n ? (int64_t)(bpf_get_prandom_u32() % (uint32_t)n) : 0;
}

/* No BPF helper reads the cycle counter. */
STP_SERVICE int64_t stp_get_cycles(struct context *c)
{
	return 0;
}

#ifndef STP_DYNINST
STP_SERVICE int64_t stp_jiffies(struct context *c)
{
	return (int64_t)bpf_jiffies64();
}

#else
#endif

/*
 * From the runner, not from a __kconfig extern: libbpf refuses to load an
 * object with one on a system whose kernel config it cannot read.
 */
STP_SERVICE int64_t stp_hz(struct context *c)
{
	return stp_rt.hz;
}

STP_SERVICE int64_t stp_page_size(struct context *c)
{
	return stp_rt.page_size;
}

STP_SERVICE int64_t stp_tz_gmtoff(struct context *c)
{
	return stp_rt.tz_gmtoff;
}

STP_SERVICE void stp_tz_name(struct context *c, char *out)
{
	if (bpf_probe_read_kernel_str(out, STP_RT_TZLEN, stp_rt.tz_name) < 0)
		out[0] = '\0';
}

/* ---- strings ---- */

STP_SERVICE int64_t stp_strlen(struct context *c, const char *s)
{
	return stp__strlen(s);
}

STP_SERVICE void stp_substr(struct context *c, char *out, const char *s, int64_t start, int64_t len)
{
	stp__substr(out, s, start, len);
}

STP_SERVICE int64_t stp_char_at(struct context *c, const char *s, int64_t pos)
{
	int64_t ch = stp__char_at(s, pos);

	if (ch < 0) {
		stp__raisef(c, STP_MSG_POSITION, pos);
		return 0;
	}
	return ch;
}

STP_SERVICE int64_t stp_strpos(struct context *c, const char *s, const char *sub)
{
	return stp__strpos(s, sub);
}

STP_SERVICE int64_t stp_strspn(struct context *c, const char *s, const char *set)
{
	return stp__span(s, set, 1);
}

STP_SERVICE int64_t stp_strcspn(struct context *c, const char *s, const char *set)
{
	return stp__span(s, set, 0);
}

STP_SERVICE int64_t stp_strtol(struct context *c, const char *s, int64_t base)
{
	return stp__strtol(s, base);
}

STP_SERVICE void stp_text_str(struct context *c, char *out, const char *in, int64_t inlen,
			      int64_t outlen, int64_t quoted)
{
	stp__text_str(out, in, inlen, outlen, quoted);
}

/* ---- memory ---- */

/*
 * Read the SIZE-byte integer at ADDR with READ (bpf_probe_read_user or
 * _kernel) and widen it to a long; a fault or a bad size raises the error.
 */
#define stp__read_int(c, read, what, addr, size, is_signed)                                \
	({                                                                                 \
		const void *__p = (const void *)(addr);                                   \
		int64_t __r = 0;                                                           \
		long __err = 0;                                                            \
		__u8 __v1;                                                                 \
		__u16 __v2;                                                                \
		__u32 __v4;                                                                \
		__u64 __v8;                                                                \
		switch (size) {                                                            \
		case 1:                                                                    \
			__err = read(&__v1, 1, __p);                                       \
			__r = (is_signed) ? (int64_t)(__s8)__v1 : (int64_t)__v1;           \
			break;                                                             \
		case 2:                                                                    \
			__err = read(&__v2, 2, __p);                                       \
			__r = (is_signed) ? (int64_t)(__s16)__v2 : (int64_t)__v2;          \
			break;                                                             \
		case 4:                                                                    \
			__err = read(&__v4, 4, __p);                                       \
			__r = (is_signed) ? (int64_t)(__s32)__v4 : (int64_t)__v4;          \
			break;                                                             \
		case 8:                                                                    \
			__err = read(&__v8, 8, __p);                                       \
			__r = (int64_t)__v8;                                               \
			break;                                                             \
		default:                                                                   \
			stp__raisef(c, STP_MSG_READ_SIZE(what),                            \
				    (long long)(size));                                    \
			break;                                                             \
		}                                                                          \
		if (__err) {                                                               \
			stp__raisef(c, STP_MSG_READ_FAULT(what), (addr));                 \
			__r = 0;                                                           \
		}                                                                          \
		__r;                                                                       \
	})

STP_SERVICE int64_t stp_read_user_int(struct context *c, uint64_t addr, int64_t size,
				      int64_t is_signed)
{
	return stp__read_int(c, bpf_probe_read_user, "user", addr, size, is_signed);
}

STP_SERVICE int64_t stp_read_kernel_int(struct context *c, uint64_t addr, int64_t size,
					int64_t is_signed)
{
	return stp__read_int(c, bpf_probe_read_kernel, "kernel", addr, size, is_signed);
}

STP_SERVICE void stp_write_user_int(struct context *c, uint64_t addr, int64_t size, int64_t value)
{
	void *p = (void *)addr;
	long err;

	switch (size) {	/* the helper wants a size the verifier knows */
	case 1: err = bpf_probe_write_user(p, &value, 1); break;
	case 2: err = bpf_probe_write_user(p, &value, 2); break;
	case 4: err = bpf_probe_write_user(p, &value, 4); break;
	default: err = bpf_probe_write_user(p, &value, 8); break;
	}
	if (err)
		stp__raisef(c, "user write fault at 0x%llx", (unsigned long long)addr);
}

#define stp__read_str(c, read, what, out, addr, n)                                         \
	({                                                                                 \
		int64_t __n = (n), __r;                                                    \
		(out)[0] = '\0';                                                           \
		if (__n < 1) {                                                             \
			__r = 0;                                                           \
		} else {                                                                   \
			if (__n > STP_STR_MAX)                                             \
				__n = STP_STR_MAX;                                         \
			__r = read((out), (__u32)__n + 1, (const void *)(addr));           \
			if (__r < 0) {                                                     \
				(out)[0] = '\0';                                           \
				stp__raisef(c, STP_MSG_STRING_FAULT(what), (addr));     \
				__r = -EFAULT;                                             \
			} else {                                                           \
				__r = __r > 0 ? __r - 1 : 0;                               \
			}                                                                  \
		}                                                                          \
		__r;                                                                       \
	})

STP_SERVICE int64_t stp_read_user_string(struct context *c, char *out, uint64_t addr, int64_t n)
{
	return stp__read_str(c, bpf_probe_read_user_str, "user", out, addr, n);
}

STP_SERVICE int64_t stp_read_kernel_string(struct context *c, char *out, uint64_t addr,
					   int64_t n)
{
	return stp__read_str(c, bpf_probe_read_kernel_str, "kernel", out, addr, n);
}

#ifdef STP_KMOD
/* guru mode's set_kernel_*(): stap's messages (its conversions-guru.stp) */
#define STP_MSG_KCOPY_FAULT(what) "kernel " what " copy fault at 0x%016llx [man error::fault]"

STP_SERVICE void stp_write_kernel_int(struct context *c, uint64_t addr, int64_t size, int64_t value)
{
	if (!stp_kmod_write_kernel((void *)(uintptr_t)addr, &value, (size_t)size))
		return;
	switch (size) {
	case 1: stp__raisef(c, STP_MSG_KCOPY_FAULT("char"), addr); break;
	case 2: stp__raisef(c, STP_MSG_KCOPY_FAULT("short"), addr); break;
	case 4: stp__raisef(c, STP_MSG_KCOPY_FAULT("int"), addr); break;
	default: stp__raisef(c, STP_MSG_KCOPY_FAULT("long"), addr); break;
	}
}

STP_SERVICE void stp_write_kernel_pointer(struct context *c, uint64_t addr, int64_t value)
{
	if (stp_kmod_write_kernel((void *)(uintptr_t)addr, &value, 8))
		stp__raisef(c, STP_MSG_KCOPY_FAULT("pointer"), addr);
}

STP_SERVICE void stp_write_kernel_string(struct context *c, uint64_t addr, const char *s,
					 int64_t n)
{
	char *p = (char *)(uintptr_t)addr, nul = '\0';

	if (n < 1)
		return;
	for (; n > 1 && *s; n--, s++, p++)
		if (stp_kmod_write_kernel(p, s, 1))
			goto fault;
	if (!stp_kmod_write_kernel(p, &nul, 1))
		return;
fault:
	stp__raisef(c, STP_MSG_KCOPY_FAULT("string"), addr);
}
#endif

/* ---- control ---- */

STP_SERVICE void stp_error(struct context *c, const char *msg)
{
	stp_raise_msg(c, msg);	/* "" becomes "unknown error" */
}

STP_SERVICE void stp_warn(struct context *c, const char *msg)
{
	stp_send_warn(c, msg);
}

STP_SERVICE void stp_system(struct context *c, const char *cmd)
{
	uint32_t n = stp_rec_start(c, STP_REC_SYSTEM, 0);

	stp_rec_send(c, stp_rec_str(c, n, cmd));
}

STP_SERVICE void stp_switch_file(struct context *c)
{
	stp_rec_send(c, stp_rec_start(c, STP_REC_SWITCH_FILE, 0));
}

STP_SERVICE void stp_exit(struct context *c)
{
	stp_request_exit(c);
}

STP_SERVICE void stp_abort(struct context *c)
{
	stp_request_abort(c);
}

#ifndef STP_DYNINST
STP_SERVICE void stp_printk(struct context *c, int64_t level, const char *msg)
{
	/* two CPUs may both warn: a duplicate is harmless, a lock is not */
	if (!stp_printk_warned) {
		stp_printk_warned = 1;
		stp_send_warn(c, "printk() in kernel context writes to the tracing buffer "
				 "(/sys/kernel/tracing/trace_pipe), not to the kernel log");
	}
	bpf_printk("<%lld>%s", level, msg);
}

/* backtraces: stp_backtrace(), stp_print_stack(), stp_sym_sprint(), stp_uaddr() */
#include "stp_stack.bpf.h"
#include "stp_task.bpf.h"
#include "stp_umode.bpf.h"	/* user_mode(), addr(): stp_user_mode(), stp_regs_note() */

/* ---- registers of uprobes (the generated file defines STP_CTX_UREGS) ---- */

static __always_inline struct pt_regs *stp__uregs(struct context *c)
{
#ifdef STP_KMOD
	struct pt_regs *k = stp_kmod_kregs();	/* a kprobe's: the probed function's */

	if (k)
		return k;
#endif
#ifdef STP_CTX_UREGS
	if (stp_ctx_uregs(c))
		return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
#endif
#ifdef STP_KMOD
	stp_raise_msg(c, "registers are not available here: only in kernel.function, "
			 "kprobe.function and syscall probes");
#else
	stp_raise_msg(c, "registers are not available here: only in process(...) probes");
#endif
	return 0;
}

#else
#endif

/* An argument word past the sixth, at ADDR on the stack of the registers' side. */
static __always_inline void stp__stack_arg(struct context *c, int64_t *v, uint64_t addr)
{
#ifdef STP_KMOD
	if (stp_kmod_kregs_kernel()) {
		if (bpf_probe_read_kernel(v, 8, (void *)addr))
			stp_raise_msg(c, "cannot read the argument from the kernel stack");
		return;
	}
#endif
	if (bpf_probe_read_user(v, 8, (void *)addr))
		stp_raise_msg(c, "cannot read the argument from the user stack");
}

STP_SERVICE int64_t stp_uregister(struct context *c, int64_t reg)
{
	struct pt_regs *r = stp__uregs(c);

	if (!r)
		return 0;
	switch (reg) {
	case STP_REG_AX: return r->ax;
	case STP_REG_BX: return r->bx;
	case STP_REG_CX: return r->cx;
	case STP_REG_DX: return r->dx;
	case STP_REG_SI: return r->si;
	case STP_REG_DI: return r->di;
	case STP_REG_BP: return r->bp;
	case STP_REG_SP: return r->sp;
	case STP_REG_R8: return r->r8;
	case STP_REG_R9: return r->r9;
	case STP_REG_R10: return r->r10;
	case STP_REG_R11: return r->r11;
	case STP_REG_R12: return r->r12;
	case STP_REG_R13: return r->r13;
	case STP_REG_R14: return r->r14;
	case STP_REG_R15: return r->r15;
	case STP_REG_IP: return r->ip;
	case STP_REG_FLAGS: return r->flags;
	default:
		stp_raise_msg(c, "no such register");
		return 0;
	}
}

STP_SERVICE int64_t stp_uarg(struct context *c, int64_t n)
{
	static const int regs[] = { STP_REG_DI, STP_REG_SI, STP_REG_DX, STP_REG_CX,
				    STP_REG_R8, STP_REG_R9 };
	int64_t v = 0;
	uint64_t sp;

#ifdef STP_CTX_UREGS
	static const int sysregs[] = { STP_REG_DI, STP_REG_SI, STP_REG_DX, STP_REG_R10,
				       STP_REG_R8, STP_REG_R9 };

	if (stp_ctx_syscall_regs(c)) {	/* a syscall tracepoint: x86-64's syscall convention */
		if (n >= 1 && n <= 6)
			return stp_uregister(c, sysregs[n - 1]);
		stp_raise_msg(c, "argument number out of range: a syscall has at most 6");
		return 0;
	}
#endif
	if (n >= 1 && n <= 6)
		return stp_uregister(c, regs[n - 1]);
	if (n < 1 || n > 64) {
		stp_raise_msg(c, "argument number out of range");
		return 0;
	}
	/* past the sixth: on the stack, above the return address */
	sp = (uint64_t)stp_uregister(c, STP_REG_SP);
	if (!c->error)
		stp__stack_arg(c, &v, sp + 8 * (uint64_t)(n - 6));
	return v;
}

/* ---- subexpressions of '=~': kept only in user context (and in a module) ---- */

#ifndef STP_KMOD	/* a module's: kmod/stp_kmod_regex.h */
STP_SERVICE void stp_regex_matched(struct context *c, char *out, int64_t n)
{
	out[0] = '\0';
	stp_raise_msg(c, "matched() cannot run in kernel context, where regular expressions keep "
			 "no subexpressions (call it in a begin, end or timer probe)");
}
#endif

STP_SERVICE int64_t stp_regex_ngroups(struct context *c)
{
	stp_raise_msg(c, "ngroups() cannot run in kernel context, where regular expressions keep "
			 "no subexpressions (call it in a begin, end or timer probe)");
	return 0;
}

#endif
