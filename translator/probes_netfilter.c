/*
 * probes_netfilter.c - netfilter probes in pass 2.
 *
 *	netfilter.hook("HOOK").pf("PF")[.priority("PRIO")]
 *	netfilter.pf("PF").hook("HOOK")[.priority("PRIO")]
 *
 * stap's names (tapset-netfilter.cxx): NFPROTO_IPV4 with NF_INET_* or
 * NF_IP_* hooks and NF_IP_PRI_* priorities, NFPROTO_IPV6 with NF_IP6_*,
 * NFPROTO_ARP with NF_ARP_*, NFPROTO_BRIDGE with NF_BR_*; a priority is a
 * name or a 32-bit number ("0" when not given).  Without -g a name stap does
 * not know for its family is refused with stap's words; with -g stap passes
 * the text to the module's C, so here any of these names, or a number,
 * stands for its value whatever the family, and what is neither is
 * refused when code is made (emit_netfilter.c).
 *
 * The handler's context, as stap's: $hooknum, $skb, $in, $out, $okfn (the
 * hook's state, numbers), and $verdict, NF_ACCEPT unless a guru handler
 * writes it.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "diag.h"
#include "probes.h"
#include "probes_netfilter.h"
#include "sema_int.h"

struct nf_name {
	const char *name;
	int64_t value;
};

/* The families stap knows, their hooks and priorities ({ NULL }: none). */
struct nf_family {
	const char *name;
	int64_t pf;
	const struct nf_name *hooks;
	const struct nf_name *priorities;
};

static const struct nf_name ipv4_hooks[] = {
	{ "NF_INET_PRE_ROUTING", 0 }, { "NF_INET_LOCAL_IN", 1 }, { "NF_INET_FORWARD", 2 },
	{ "NF_INET_LOCAL_OUT", 3 }, { "NF_INET_POST_ROUTING", 4 },
	{ "NF_IP_PRE_ROUTING", 0 }, { "NF_IP_LOCAL_IN", 1 }, { "NF_IP_FORWARD", 2 },
	{ "NF_IP_LOCAL_OUT", 3 }, { "NF_IP_POST_ROUTING", 4 }, { NULL, 0 },
};

static const struct nf_name ipv4_priorities[] = {
	{ "NF_IP_PRI_FIRST", INT_MIN }, { "NF_IP_PRI_CONNTRACK_DEFRAG", -400 },
	{ "NF_IP_PRI_RAW", -300 }, { "NF_IP_PRI_SELINUX_FIRST", -225 },
	{ "NF_IP_PRI_CONNTRACK", -200 }, { "NF_IP_PRI_MANGLE", -150 },
	{ "NF_IP_PRI_NAT_DST", -100 }, { "NF_IP_PRI_FILTER", 0 }, { "NF_IP_PRI_SECURITY", 50 },
	{ "NF_IP_PRI_NAT_SRC", 100 }, { "NF_IP_PRI_SELINUX_LAST", 225 },
	{ "NF_IP_PRI_CONNTRACK_CONFIRM", INT_MAX }, { "NF_IP_PRI_LAST", INT_MAX }, { NULL, 0 },
};

static const struct nf_name ipv6_hooks[] = {
	{ "NF_IP6_PRE_ROUTING", 0 }, { "NF_IP6_LOCAL_IN", 1 }, { "NF_IP6_FORWARD", 2 },
	{ "NF_IP6_LOCAL_OUT", 3 }, { "NF_IP6_POST_ROUTING", 4 }, { NULL, 0 },
};

static const struct nf_name ipv6_priorities[] = {
	{ "NF_IP6_PRI_FIRST", INT_MIN }, { "NF_IP6_PRI_CONNTRACK_DEFRAG", -400 },
	{ "NF_IP6_PRI_RAW", -300 }, { "NF_IP6_PRI_SELINUX_FIRST", -225 },
	{ "NF_IP6_PRI_CONNTRACK", -200 }, { "NF_IP6_PRI_MANGLE", -150 },
	{ "NF_IP6_PRI_NAT_DST", -100 }, { "NF_IP6_PRI_FILTER", 0 }, { "NF_IP6_PRI_SECURITY", 50 },
	{ "NF_IP6_PRI_NAT_SRC", 100 }, { "NF_IP6_PRI_SELINUX_LAST", 225 },
	{ "NF_IP6_PRI_LAST", INT_MAX }, { NULL, 0 },
};

static const struct nf_name arp_hooks[] = {
	{ "NF_ARP_IN", 0 }, { "NF_ARP_OUT", 1 }, { "NF_ARP_FORWARD", 2 }, { NULL, 0 },
};

static const struct nf_name bridge_hooks[] = {
	{ "NF_BR_PRE_ROUTING", 0 }, { "NF_BR_LOCAL_IN", 1 }, { "NF_BR_FORWARD", 2 },
	{ "NF_BR_LOCAL_OUT", 3 }, { "NF_BR_POST_ROUTING", 4 }, { NULL, 0 },
};

static const struct nf_name no_names[] = { { NULL, 0 } };

static const struct nf_family families[] = {
	{ "NFPROTO_IPV4", 2, ipv4_hooks, ipv4_priorities },
	{ "NFPROTO_IPV6", 10, ipv6_hooks, ipv6_priorities },
	{ "NFPROTO_ARP", 3, arp_hooks, no_names },
	{ "NFPROTO_BRIDGE", 7, bridge_hooks, no_names },
};

#define NFAMILIES ((int)(sizeof(families) / sizeof(families[0])))

static bool lookup(const struct nf_name *names, const char *name, int64_t *v)
{
	for (; names->name; names++) {
		if (strcmp(names->name, name) == 0) {
			*v = names->value;
			return true;
		}
	}
	return false;
}

/* TEXT as a 32-bit number, as stap's lex_cast<int32_t> reads it. */
static bool int32_text(const char *text, int64_t *v)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(text, &end, 10);
	if (!*text || *end || errno || n < INT_MIN || n > INT_MAX)
		return false;
	*v = n;
	return true;
}

/* -g: NAME as any family's name of that kind, or a number. */
static bool guru_value(const char *name, int kind, int64_t *v)
{
	if (int32_text(name, v))
		return true;
	for (int i = 0; i < NFAMILIES; i++) {
		const struct nf_family *f = &families[i];

		if ((kind == 0 && strcmp(f->name, name) == 0 && (*v = f->pf, true)) ||
		    (kind == 1 && lookup(f->hooks, name, v)) ||
		    (kind == 2 && lookup(f->priorities, name, v)))
			return true;
	}
	return false;
}

static const struct nf_family *family_named(const char *name)
{
	for (int i = 0; i < NFAMILIES; i++)
		if (strcmp(families[i].name, name) == 0)
			return &families[i];
	return NULL;
}

/* Without -g: stap's checks, in its order and words. */
static int strict(struct sema *sm, struct derived_probe *dp, struct probe_comp *pc[3],
		  const char *text[3])
{
	const struct nf_family *f = family_named(text[0]);
	const char *pf = f ? arena_printf("%lld", (long long)f->pf) : text[0];
	bool prio = (f && lookup(f->priorities, text[2], &dp->nf_priority)) ||
		    int32_text(text[2], &dp->nf_priority);

	if (!prio) {
		sema_error(pc[2] ? pc[2]->arg->loc : pc[0]->loc, sm, "unsupported netfilter "
			   "priority \"%s\" for protocol family \"%s\"; need pmstap -g", text[2], pf);
		return -1;
	}
	if (f && !lookup(f->hooks, text[1], &dp->nf_hook)) {
		sema_error(pc[1]->arg->loc, sm, "unsupported netfilter hook \"%s\" for protocol "
			   "family \"%s\"; need pmstap -g", text[1], pf);
		return -1;
	}
	if (!f) {
		sema_error(pc[0]->arg->loc, sm, "unsupported netfilter protocol family \"%s\"; "
			   "need pmstap -g", text[0]);
		return -1;
	}
	dp->nf_pf = f->pf;
	return 1;
}

int probes_netfilter_resolve(struct sema *sm, struct derived_probe *dp, struct vec *comps)
{
	struct probe_comp *pc[3] = { probes_comp_named(comps, "pf"),
				     probes_comp_named(comps, "hook"),
				     probes_comp_named(comps, "priority") };
	const char *text[3];
	int64_t *v[3] = { &dp->nf_pf, &dp->nf_hook, &dp->nf_priority };

	for (int i = 0; i < 3; i++)
		text[i] = pc[i] ? pc[i]->arg->str : "0";
	if (!sm->s->guru)
		return strict(sm, dp, pc, text);
	for (int i = 0; i < 3; i++) {
		const struct nf_family *f = family_named(text[0]);

		if (i == 1 && f && lookup(f->hooks, text[1], v[1]))
			continue;
		if (i == 2 && f && lookup(f->priorities, text[2], v[2]))
			continue;
		if (!guru_value(text[i], i, v[i]) && !dp->nf_unknown)
			dp->nf_unknown = text[i];
	}
	return 1;
}

const char *probes_netfilter_target(struct sema *sm, const struct expr *e, bool write)
{
	static const char *const names[] = { "$hooknum", "$skb", "$in", "$out", "$okfn",
					     "$verdict" };
	bool known = false;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		known |= strcmp(e->name, names[i]) == 0;
	if (e->addr_of)
		return "cannot take address of netfilter hook context variable";
	if (!known)
		return "unsupported context variable";
	if (e->pretty)
		return arena_printf("netfilter context variable '%s' may not be pretty-printed",
				    e->name);
	if (e->comps.len)
		return arena_printf("netfilter context variable '%s' is a number; read through it "
				    "with @cast", e->name);
	if (write && strcmp(e->name, "$verdict") != 0)
		return "write to netfilter parameter not permitted";
	if (write && !sm->s->guru)
		return "write to netfilter verdict requires guru mode; need pmstap -g";
	return NULL;
}
