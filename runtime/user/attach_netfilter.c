/*
 * attach_netfilter.c - netfilter probes: BPF_PROG_TYPE_NETFILTER programs
 * linked to a hook with BPF_LINK_CREATE (attach type BPF_NETFILTER, with
 * the family, hook and priority), which Linux 6.4 brought.  libbpf 1.1
 * (Debian 12's) knows neither, so the numbers are spelled here and the
 * link is made with the bpf() system call; the link's descriptor is kept
 * per probe and closing it unhooks the program.
 *
 * Netfilter takes one BPF program per priority of a hook (EBUSY for a
 * second), where stap's module hooks may share one: a probe whose
 * priority is taken (by another probe of the script, an alias on the same
 * hook, or another tool's program) gets the next free one above it, so
 * that it still runs after the hooks of lower priorities.  The first and
 * the last priority (NF_IP_PRI_FIRST, NF_IP_PRI_LAST) are the kernel's
 * own, refused to BPF: a probe there gets the one next to it.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <linux/bpf.h>

#include "attach_netfilter.h"
#include "script_int.h"

#define STP_PROG_TYPE_NETFILTER 32	/* enum bpf_prog_type, Linux 6.4 */
#define STP_ATTACH_NETFILTER 45		/* enum bpf_attach_type: BPF_NETFILTER */
#define NF_PRIORITY_TRIES 64		/* priorities tried above a probe's own */

/* union bpf_attr's link_create as Linux 6.4 has it for BPF_NETFILTER. */
struct nf_link_attr {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint32_t pf;
	uint32_t hooknum;
	int32_t priority;
	uint32_t nf_flags;
};

/* Whether this kernel has BPF netfilter programs: its BTF has their context, struct bpf_nf_ctx. */
static bool nf_available(void)
{
	static int known;	/* 0: not asked yet, 1: yes, -1: no */
	struct btf *btf;

	if (known)
		return known > 0;
	btf = btf__load_vmlinux_btf();
	known = btf && btf__find_by_name_kind(btf, "bpf_nf_ctx", BTF_KIND_STRUCT) > 0 ? 1 : -1;
	btf__free(btf);
	return known > 0;
}

int stp_nf_prepare(struct stp_script *s, int i, struct bpf_program *prog)
{
	const struct stp_meta_probe *p = &s->meta->probes[i];
	static const char why[] = "this kernel has no BPF netfilter programs (they need Linux "
				  "6.4's BPF netfilter links)";
	char where[256];

	bpf_program__set_type(prog, (enum bpf_prog_type)STP_PROG_TYPE_NETFILTER);
	bpf_program__set_expected_attach_type(prog, (enum bpf_attach_type)STP_ATTACH_NETFILTER);
	if (nf_available())
		return 0;
	if (p->optional) {
		if (s->opts.verbose)
			stp_msg(s, "note", "skipping optional probe %s: %s", p->point, why);
		return 1;
	}
	stp_msg(s, "error", "%s: cannot attach probe %s: %s",
		stp_loc_str(&p->loc, where, sizeof(where)), p->point, why);
	return -EOPNOTSUPP;
}

int stp_nf_attach(struct stp_script *s, int i, struct bpf_program *prog)
{
	const struct stp_meta_probe *p = &s->meta->probes[i];
	struct nf_link_attr attr = {
		.prog_fd = (uint32_t)bpf_program__fd(prog),
		.attach_type = STP_ATTACH_NETFILTER,
		.pf = (uint32_t)p->nf_pf,
		.hooknum = (uint32_t)p->nf_hook,
		.priority = p->nf_priority,
	};
	/* NF_IP_PRI_FIRST and _LAST are the kernel's own: the nearest ones instead */
	int32_t base = p->nf_priority == INT_MIN ? INT_MIN + 1 :
		       p->nf_priority == INT_MAX ? INT_MAX - 1 : p->nf_priority;
	int fd = -1;

	/* one BPF program per priority of a hook: the next free one above (see the top) */
	for (int k = 0; k < NF_PRIORITY_TRIES; k++) {
		attr.priority = base > INT_MAX - NF_PRIORITY_TRIES ? base - k : base + k;
		fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
		if (fd >= 0 || errno != EBUSY)
			break;
	}
	return fd < 0 ? -errno : stp_keep_link_fd(s, i, fd);
}

const char *stp_nf_reason(int err)
{
	switch (err) {
	case -EAFNOSUPPORT:
		return "BPF netfilter links take only the NFPROTO_IPV4 and NFPROTO_IPV6 families";
	case -EPROTO:
		return "BPF netfilter links take only the NF_INET_* hooks of their family";
	case -EINVAL:
		return nf_available() ? NULL : "this kernel has no BPF netfilter links (Linux 6.4)";
	default:
		return NULL;
	}
}
