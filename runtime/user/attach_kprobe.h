/* attach_kprobe.h - attach kernel function probes (attach_kprobe.c). */
#ifndef STP_ATTACH_KPROBE_H
#define STP_ATTACH_KPROBE_H

#include <bpf/libbpf.h>
#include "../stp_meta.h"

struct bpf_link *stp_attach_kprobe(const struct stp_meta_probe *p, struct bpf_program *prog);

#endif
