/* attach_netfilter.h - netfilter probes as BPF netfilter links (attach_netfilter.c). */
#ifndef STP_ATTACH_NETFILTER_H
#define STP_ATTACH_NETFILTER_H

#include <bpf/libbpf.h>

struct stp_script;

/*
 * Before the load: probe I's program becomes a netfilter program.  Returns
 * 0, 1 when it was skipped (optional, and the kernel has no BPF netfilter
 * programs), or a negative errno after saying why.
 */
int stp_nf_prepare(struct stp_script *s, int i, struct bpf_program *prog);

/* Link probe I's program to its hook; 0 or a negative errno (stp_nf_reason() says why). */
int stp_nf_attach(struct stp_script *s, int i, struct bpf_program *prog);
const char *stp_nf_reason(int err);

#endif
