/*
 * tapset_verify.bpf.c - every kernel-context tapset service, through the verifier.
 *
 * A tracepoint program (and the same code as a raw tracepoint and a
 * perf_event program) built as a script's script.bpf.c is: on
 * runtime/bpf/stp.bpf.h and stp_context.bpf.h, entering and leaving the handler with
 * stp_enter()/stp_leave(), calling each service of runtime/bpf/tapset.bpf.h.
 * The loader (tapset_verify.c) loads it, so the verifier checks every
 * service, then runs one case per getppid() call: it writes the case into
 * the map `input`, makes the call, and reads what the service gave from
 * this CPU's entry of `results` and the records in stp_events.
 */
/* as the generated code does: limits, the runtime, (no globals), the context */
#ifndef MAXSTRINGLEN
#define MAXSTRINGLEN 512
#endif
#define STP_REC_SIZE (8 + 2 + MAXSTRINGLEN)	/* a warning or an error record */
#define STP_NPROBES 2
#include "../../runtime/bpf/stp.bpf.h"
#include "../../runtime/bpf/stp_context.bpf.h"
#include "tapset_verify.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tv_result);
} results SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tv_input);
} input SEC(".maps");

/*
 * What the generated code defines for tapset.bpf.h: its probe points (this
 * program is probe 0).  SEC(".rodata"): clang 14 would put the small tables
 * into .rodata.cst4 and .rodata.cst2 while their BTF says .rodata, and the
 * kernel refuses such BTF (then libbpf loads without it, and no program
 * with a bpf_loop() callback loads: "missing btf func_info").
 */
static const char stp_points[] SEC(".rodata") = "kernel.function(\"vfs_read@fs/read_write.c:450\").return\0"
				 "kernel.trace(\"syscalls:sys_enter_getppid\")";
static const uint16_t stp_point_at[STP_NPROBES] SEC(".rodata") = { 0, 55 };
static const uint8_t stp_point_return[STP_NPROBES] SEC(".rodata") = { 1, 0 };

static __always_inline const char *stp_ctx_pp(struct context *c)
{
	return c->probe < STP_NPROBES ? stp_points + stp_point_at[c->probe] : "";
}

static __always_inline int64_t stp_ctx_is_return(struct context *c)
{
	return c->probe < STP_NPROBES ? stp_point_return[c->probe] : 0;
}

#include "../../runtime/bpf/tapset.bpf.h"

/* The context services: one case gives all of them. */
static __always_inline void run_context(struct context *c, struct tv_result *r)
{
	r->v[TV_PID] = stp_pid(c);
	r->v[TV_TID] = stp_tid(c);
	r->v[TV_PPID] = stp_ppid(c);
	r->v[TV_PGRP] = stp_pgrp(c);
	r->v[TV_SID] = stp_sid(c);
	r->v[TV_UID] = stp_uid(c);
	r->v[TV_GID] = stp_gid(c);
	r->v[TV_EUID] = stp_euid(c);
	r->v[TV_EGID] = stp_egid(c);
	r->v[TV_CPU] = stp_cpu(c);
	r->v[TV_TARGET] = stp_target(c);
	r->v[TV_IS_RETURN] = stp_is_return(c);
	r->v[TV_CMDLINE_START] = (int64_t)stp_cmdline_start(c);
	r->v[TV_CMDLINE_END] = (int64_t)stp_cmdline_end(c);
	r->v[TV_ARGC] = stp_script_argc(c);
	r->v[TV_TIMEOFDAY] = stp_gettimeofday_ns(c);
	r->v[TV_KTIME] = stp_ktime_get_ns(c);
	r->v[TV_LOCAL_CLOCK] = stp_local_clock_ns(c);
	r->v[TV_CYCLES] = stp_get_cycles(c);
	r->v[TV_JIFFIES] = stp_jiffies(c);
	r->v[TV_HZ] = stp_hz(c);
	r->v[TV_TZ_GMTOFF] = stp_tz_gmtoff(c);
	r->v[TV_COMM_ADDR] = (int64_t)(bpf_get_current_task() +
				       bpf_core_field_offset(struct task_struct, comm));
	stp_execname(c, r->s[TV_S_EXECNAME]);
	stp_pexecname(c, r->s[TV_S_PEXECNAME]);
	stp_pp(c, r->s[TV_S_PP]);
	stp_probefunc(c, r->s[TV_S_PROBEFUNC]);
	stp_probemod(c, r->s[TV_S_PROBEMOD]);
	stp_tz_name(c, r->s[TV_S_TZ_NAME]);
}

static __always_inline void run_case(struct context *c, struct tv_result *r, struct tv_input *in)
{
	char *out = r->s[0];

	switch (in->op) {
	case TV_OP_CONTEXT: run_context(c, r); break;
	case TV_OP_STRLEN: r->r = stp_strlen(c, in->s1); break;
	case TV_OP_SUBSTR: stp_substr(c, out, in->s1, in->a, in->b); break;
	case TV_OP_CHAR_AT: r->r = stp_char_at(c, in->s1, in->a); break;
	case TV_OP_STRPOS: r->r = stp_strpos(c, in->s1, in->s2); break;
	case TV_OP_STRSPN: r->r = stp_strspn(c, in->s1, in->s2); break;
	case TV_OP_STRCSPN: r->r = stp_strcspn(c, in->s1, in->s2); break;
	case TV_OP_STRTOL: r->r = stp_strtol(c, in->s1, in->a); break;
	case TV_OP_TEXT_STR: stp_text_str(c, out, in->s1, in->a, in->b, in->c); break;
	case TV_OP_SCRIPT_ARG: stp_script_arg(c, in->a, out); break;
	case TV_OP_CPU_CLOCK: r->r = stp_cpu_clock_ns(c, in->a); break;
	case TV_OP_READ_USER_INT: r->r = stp_read_user_int(c, in->addr, in->a, in->b); break;
	case TV_OP_READ_KERNEL_INT: r->r = stp_read_kernel_int(c, in->addr, in->a, in->b); break;
	case TV_OP_READ_USER_STRING: r->r = stp_read_user_string(c, out, in->addr, in->a); break;
	case TV_OP_READ_KERNEL_STRING: r->r = stp_read_kernel_string(c, out, in->addr, in->a); break;
	case TV_OP_ERROR: stp_error(c, in->s1); break;
	case TV_OP_WARN: stp_warn(c, in->s1); break;
	case TV_OP_EXIT: stp_exit(c); break;
	case TV_OP_ABORT: stp_abort(c); break;
	case TV_OP_PRINTK: stp_printk(c, in->a, in->s1); break;
	case TV_OP_SYSTEM: stp_system(c, in->s1); break;
	case TV_OP_SWITCH_FILE: stp_switch_file(c); break;
	case TV_OP_SUBSTR_SELF:
		stp_substr(c, r->s[1], in->s1, 0, MAXSTRINGLEN);
		stp_substr(c, r->s[1], r->s[1], in->a, in->b);
		break;
	}
}

static __always_inline int run(void)
{
	__u32 zero = 0;
	struct tv_result *r;
	struct tv_input *in;
	struct context *c;

	if ((int64_t)(bpf_get_current_pid_tgid() >> 32) != stp_rt.target)
		return 0;
	r = bpf_map_lookup_elem(&results, &zero);
	in = bpf_map_lookup_elem(&input, &zero);
	if (!r || !in)
		return 0;
	c = stp_enter(0);
	if (!c)
		return 0;
	r->err[0] = '\0';
	r->s[0][0] = '\0';
	r->r = 0;
	r->runs++;
	run_case(c, r, in);
	r->error = c->error;
	stp_strcpy(r->err, c->errmsg);
	stp_leave(c);
	return 0;
}

SEC("tp/syscalls/sys_enter_getppid")
int tv_tracepoint(void *ctx)
{
	return run();
}

SEC("raw_tp/sys_enter")
int tv_raw_tracepoint(void *ctx)
{
	return run();
}

SEC("perf_event")
int tv_perf_event(void *ctx)
{
	return run();
}
