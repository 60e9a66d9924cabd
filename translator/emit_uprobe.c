/*
 * emit_uprobe.c - kernel context: user-space probes.  process(..).function,
 * .statement and .mark become uprobe programs (a .return probe a
 * uretprobe) whose context is the task's struct pt_regs; the runner
 * attaches them at the file offset the metadata carries.  In .mark probes
 * $argN reads the marker's argument as its note spells it (probes_sdt.c
 * parsed it): a register, a constant, or memory at a register plus a
 * displacement, read from the process with stp_read_user_int().
 */
#include <string.h>
#include "emit_int.h"
#include "emit_uprobe.h"
#include "filedeps.h"
#include "probe_kinds.h"
#include "probes_sdt.h"

/*
 * With -c or -x, stap restricts process probes to the target's process
 * hierarchy: target() and its descendants.  A uprobe attached to one
 * process does not follow its children (each has its own memory), so
 * the runner attaches such a probe to every process that runs the file
 * and the prologue keeps the hits of target()'s tree.  process(PID)
 * stays that process's alone (the kernel runtime's uprobe is on the
 * file: its prologue keeps PID's hits).
 */
static bool in_target_tree(struct emitter *E, const struct derived_probe *dp)
{
	return (E->s->target_cmd || E->s->target_pid > 0) && dp->pid <= 0;
}

bool emit_uprobe_section(struct emitter *E, struct derived_probe *dp, const char **sec,
			 const char **ctype, enum stp_probe_kind *kind, const char **prologue)
{
	if (!dp->elf_path) {	/* pass 2 resolves every uprobe-class point to a file */
		diag_error(dp->orig ? dp->orig->loc : dp->probe->loc,
			   "internal error: probe point '%s' was not resolved to a file", dp->point);
		return false;
	}
	*sec = dp->is_return ? "uretprobe" : "uprobe";
	*ctype = "struct pt_regs *";
	*kind = STP_PROBE_UPROBE;
	/* dyninst: the probes are in the target's tree only, by construction */
	if (in_target_tree(E, dp) && !E->dyninst)	/* target() itself first: no walk up the parents */
		*prologue = "\t/* -c/-x: target()'s process and its descendants only */\n"
			    "\tif ((int64_t)(bpf_get_current_pid_tgid() >> 32) != stp_target(NULL) &&\n"
			    "\t    !stp_proc_in_tree(bpf_get_current_task_btf(), stp_target(NULL)))\n"
			    "\t\treturn 0;\n";
	/* the kernel runtime's uprobe is on every process of the file: keep PID's */
	if (E->kmod && dp->pid > 0)
		*prologue = arena_printf("\tif ((int64_t)(bpf_get_current_pid_tgid() >> 32) != "
					 "%lld)\n\t\treturn 0;\n", (long long)dp->pid);
	/*
	 * a library's uprobe is on every process that maps it: keep PATH's
	 * (the probe's index is the cookie, the same text for a merged group;
	 * the kernel runtime merges nothing and has no cookies)
	 */
	if (dp->library && dp->pid <= 0 && !E->dyninst)
		*prologue = arena_printf("%s\t/* process(PATH).library(): PATH's processes only */\n"
					 "\tif (!stp_proc_library_hit(%s))\n\t\treturn 0;\n",
					 *prologue ? *prologue : "",
					 E->kmod ? arena_printf("%d", dp->id)
						 : "(uint32_t)bpf_get_attach_cookie(ctx)");
	return true;
}

/* ---- $vars of a mark ---- */

static const char *int_cast(int size, bool is_signed)
{
	switch (size) {
	case 1: return is_signed ? "(int8_t)" : "(uint8_t)";
	case 2: return is_signed ? "(int16_t)" : "(uint16_t)";
	case 4: return is_signed ? "(int32_t)" : "(uint32_t)";
	default: return "";
	}
}

/* The address a memory operand names, as C over ctx. */
static const char *mem_address(const struct sdt_note *sn, const struct sdt_arg *a)
{
	const char *addr;

	if (a->kind == SDT_ARG_RIP)	/* the file address, moved to where the file is loaded */
		return arena_printf("ctx->ip - 0x%llxULL + 0x%llxULL", (unsigned long long)sn->pc,
				    (unsigned long long)a->value);
	addr = arena_printf("ctx->%s + %lldLL", a->reg, (long long)a->value);
	if (a->index)
		addr = arena_printf("%s + ctx->%s * %d", addr, a->index, a->scale);
	return addr;
}

static const char *arg_value(struct emitter *E, struct expr *e, const struct sdt_note *sn,
			     const struct sdt_arg *a)
{
	const char *t;
	int site;

	switch (a->kind) {
	case SDT_ARG_REG:
		return arena_printf("((int64_t)%sctx->%s)", int_cast(a->size, a->is_signed), a->reg);
	case SDT_ARG_IMM:
		return emit_number(a->value);
	default:
		break;
	}
	t = emit_long_temp(E);
	site = emit_error_site(E, e->loc, arena_printf("cannot read %s", e->name));
	emit_line(E, "%s = stp_read_user_int(c, %s, %d, %d);", t, mem_address(sn, a), a->size,
		  a->is_signed);
	emit_check(E, site);
	return t;
}

/* "arg1=0x.. arg2=0x..": $$parms and $$vars. */
static const char *arg_list(struct emitter *E, struct expr *e, const struct sdt_note *sn)
{
	struct vec pieces = { 0 };

	if (!sn->specs.len)
		return emit_string_const(E, "");
	for (int i = 0; i < sn->specs.len; i++) {
		struct emit_piece *p = ARENA_NEW(struct emit_piece);

		p->lit = arena_printf("%sarg%d=", i ? " " : "", i + 1);
		p->conv = "0x%llx";
		p->val = arg_value(E, e, sn, VEC_AT(&sn->specs, i));
		vec_push(&pieces, p);
	}
	return emit_bpf_snprintf(E, &pieces);
}

static const char *pretty(struct emitter *E, const char *val)
{
	struct vec pieces = { 0 };
	struct emit_piece *p = ARENA_NEW(struct emit_piece);

	p->lit = "";
	p->conv = "%lld";
	p->val = val;
	vec_push(&pieces, p);
	return emit_bpf_snprintf(E, &pieces);
}

/* $argN, $$name, $$provider, $$parms in a .mark probe; $$name in a .plt probe. */
const char *emit_uprobe_target(struct emitter *E, struct expr *e)
{
	const struct sdt_note *sn = E->dp->sdt;
	const char *n = e->name + 1, *v;
	int k;

	if (probe_targets(E->dp) == TARGETS_PLT)	/* pass 2 let only $$name through */
		return emit_string_const(E, E->dp->function);
	E->cf->uses_ctx = true;
	if (!strcmp(n, "$name"))
		return emit_string_const(E, sn->name);
	if (!strcmp(n, "$provider"))
		return emit_string_const(E, sn->provider);
	if (!strcmp(n, "$parms") || !strcmp(n, "$vars"))
		return arg_list(E, e, sn);
	k = strncmp(n, "arg", 3) == 0 ? atoi(n + 3) : 0;
	if (k < 1 || k > sn->specs.len) {
		diag_error(e->loc, "mark '%s' has no '%s'", sn->name, e->name);
		return e->type == TYPE_STRING ? "\"\"" : "0";
	}
	v = arg_value(E, e, sn, VEC_AT(&sn->specs, k - 1));
	return e->pretty ? pretty(E, v) : v;
}

/* ---- metadata ---- */

static bool is_uprobe(const struct derived_probe *dp)
{
	return probe_class(dp) == PCLASS_UPROBE;
}

/* What the runner attaches with (stp_meta_probe's uprobe_* fields). */
void emit_uprobe_meta(FILE *out, const struct derived_probe *dp)
{
	if (!is_uprobe(dp) || !dp->elf_path)
		return;
	fprintf(out, "\t\t.uprobe_path = %s,\n", emit_c_string(dp->elf_path, strlen(dp->elf_path)));
	fprintf(out, "\t\t.uprobe_offset = 0x%llx,\n", (unsigned long long)dp->offset);
	fprintf(out, "\t\t.uprobe_file = %d,\n", filedeps_index(dp->elf_path));
	if (dp->is_return)
		fprintf(out, "\t\t.uprobe_return = true,\n");
	if (dp->ref_ctr_offset)
		fprintf(out, "\t\t.uprobe_ref_ctr_offset = 0x%llx,\n",
			(unsigned long long)dp->ref_ctr_offset);
	if (dp->pid)	/* else every process of the file: -c/-x filter in the program */
		fprintf(out, "\t\t.uprobe_pid = %lld,\n", (long long)dp->pid);
}

/*
 * A syscall tracepoint (syscalls:sys_enter_*, sys_exit_*, raw_syscalls:*)
 * or process.syscall[.return]: the task's user registers hold the
 * syscall's arguments there.
 */
static bool is_syscall_tp(const struct derived_probe *dp)
{
	const struct tracepoint *tp = dp->tp;

	if (dp->kind == PROBE_PROCESS_SYSCALL)
		return true;
	if (dp->kind != PROBE_TRACE || !tp || !tp->system)
		return false;
	return !strcmp(tp->system, "raw_syscalls") ||
	       (!strcmp(tp->system, "syscalls") && tp->name &&
		(!strncmp(tp->name, "sys_enter_", 10) || !strncmp(tp->name, "sys_exit_", 9)));
}

/*
 * Per probe, for tapset.bpf.h: bit 0 a .return probe (is_return()), bit 1
 * the user registers are the probe's (register(), int_arg()...), bit 2
 * they are a syscall's, whose arguments follow the syscall convention,
 * bit 3 its handler runs in interrupt context (timer.profile, perf.*).
 */
void emit_uprobe_flags(struct emitter *E, FILE *out)
{
	int n = E->prog->probes.len;

	fprintf(out, "/* what each probe's context holds */\n");
	fprintf(out, "enum {\n\tSTP_PF_RETURN = 1,\t/* a .return */\n"
		"\tSTP_PF_UREGS = 2,\t/* the user's registers: a uprobe, or a syscall's */\n"
		"\tSTP_PF_SYSCALL = 4,\t/* a syscall's registers */\n"
		"\tSTP_PF_IRQ = 8,\t/* run in interrupt context */\n};\n\n");
	fprintf(out, "static const uint8_t stp_point_flags[STP_NPROBES] SEC(\".rodata\") = {");
	for (int i = 0; i < n; i++) {
		struct derived_probe *dp = VEC_AT(&E->prog->probes, i);
		const char *flags[4];
		int k = 0;

		if (dp->is_return)
			flags[k++] = "STP_PF_RETURN";
		if (is_uprobe(dp) || is_syscall_tp(dp))
			flags[k++] = "STP_PF_UREGS";
		if (is_syscall_tp(dp))
			flags[k++] = "STP_PF_SYSCALL";
		if (dp->kind == PROBE_PROFILE || dp->kind == PROBE_PERF)
			flags[k++] = "STP_PF_IRQ";
		fprintf(out, "%s", i ? ", " : " ");
		for (int j = 0; j < k; j++)
			fprintf(out, "%s%s", j ? " | " : "", flags[j]);
		if (!k)
			fprintf(out, "0");
	}
	fprintf(out, "%s };\n\n", n ? "" : " 0");
	fprintf(out, "static __always_inline int64_t stp_ctx_is_return(struct context *c)\n{\n");
	fprintf(out, "\treturn c->probe < STP_NPROBES ? stp_point_flags[c->probe] & STP_PF_RETURN : "
		"0;\n}\n\n");
	fprintf(out, "#define STP_CTX_UREGS 1\n");
	fprintf(out, "static __always_inline int64_t stp_ctx_uregs(struct context *c)\n{\n");
	fprintf(out, "\treturn c->probe < STP_NPROBES ? stp_point_flags[c->probe] & STP_PF_UREGS : "
		"0;\n}\n\n");
	fprintf(out, "static __always_inline int64_t stp_ctx_syscall_regs(struct context *c)\n{\n");
	fprintf(out, "\treturn c->probe < STP_NPROBES ? stp_point_flags[c->probe] & STP_PF_SYSCALL : "
		"0;\n}\n\n");
	fprintf(out, "static __always_inline int64_t stp_ctx_in_irq(struct context *c)\n{\n");
	fprintf(out, "\treturn c->probe < STP_NPROBES ? stp_point_flags[c->probe] & STP_PF_IRQ : "
		"0;\n}\n\n");
}
