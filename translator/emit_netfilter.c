/*
 * emit_netfilter.c - netfilter probes on the bpf runtime.
 *
 * Each probe is a BPF_PROG_TYPE_NETFILTER program (section "netfilter");
 * the runner links it to its family, hook and priority (Linux 6.4's
 * BPF_NETFILTER links, runtime/user/attach_netfilter.c).  The context is
 * struct bpf_nf_ctx { state, skb } (runtime/bpf/stp_netfilter.bpf.h has
 * its layout), and the program's return value is the verdict.
 *
 * $verdict is a local of the program, NF_ACCEPT at the start; a guru
 * handler may set it.  The kernel lets a netfilter program return only
 * NF_DROP or NF_ACCEPT, so any verdict but NF_DROP (0) accepts the packet.
 */
#include <string.h>
#include "diag.h"
#include "emit_netfilter.h"

bool emit_netfilter_section(struct emitter *E, struct derived_probe *dp, const char **sec,
			    const char **ctype, enum stp_probe_kind *kind, const char **prologue,
			    const char **ret)
{
	(void)E;
	if (dp->nf_unknown) {
		diag_error(dp->orig->loc, "netfilter name '%s' in probe point '%s' has no value "
			   "pmstap knows", dp->nf_unknown, dp->point);
		diag_hint("give its number, as netfilter.hook(\"1\").pf(\"2\")");
		return false;
	}
	*sec = "netfilter";
	*ctype = "struct stp_nf_ctx *";
	*kind = STP_PROBE_NETFILTER;
	*prologue = "\tint nf_verdict = STP_NF_ACCEPT;\n";
	*ret = "nf_verdict == STP_NF_DROP ? STP_NF_DROP : STP_NF_ACCEPT";
	return true;
}

/* A member of the hook's state, read as a number. */
static const char *state_member(struct emitter *E, const char *member, bool is_signed)
{
	const char *t = emit_long_temp(E);
	const char *st;

	/* the context's own struct is not the kernel's BTF: relocate only from the state on */
	emit_line(E, "%s = (int64_t)(long)ctx->state;", t);
	st = arena_printf("((const struct nf_hook_state *)%s)", t);
	emit_line(E, "%s = stp_kread_int(__builtin_preserve_access_index(&%s->%s), "
		  "sizeof(%s->%s), %d);", t, st, member, st, member, is_signed);
	return t;
}

const char *emit_netfilter_target(struct emitter *E, struct expr *e)
{
	const char *n = e->name + 1;

	E->cf->uses_ctx = true;
	if (strcmp(n, "skb") == 0)
		return "(int64_t)(long)ctx->skb";
	if (strcmp(n, "verdict") == 0)
		return "(int64_t)nf_verdict";
	if (strcmp(n, "hooknum") == 0)
		return state_member(E, "hook", false);
	return state_member(E, n, false);	/* in, out, okfn: pass 2 let only these through */
}

const char *emit_netfilter_assign(struct emitter *E, struct expr *e)
{
	const char *val = emit_snapshot(E, emit_expr(E, e->right), TYPE_LONG);

	E->side_effects++;
	emit_line(E, "nf_verdict = (int)%s;", val);
	return val;
}
