/* attach_kprobe.h - attach kernel function probes (attach_kprobe.c). */
#ifndef STP_ATTACH_KPROBE_H
#define STP_ATTACH_KPROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <bpf/libbpf.h>
#include "../stp_meta.h"

struct bpf_link *stp_attach_kprobe(const struct stp_meta_probe *p, struct bpf_program *prog);

/* " (a kprobe at TARGET+0xOFF)", where P is a kprobe, for a message; "" otherwise. */
const char *stp_kprobe_site(const struct stp_meta_probe *p, const struct bpf_program *prog,
			    char *buf, size_t len);

/*
 * NAME's address in /proc/kallsyms: the first line's; VMLINUX_ONCE, only
 * where vmlinux has NAME once (modules' lines not counted).  0 when it is
 * not there, or hidden (not root).
 */
uint64_t stp_kallsyms_address(const char *name, bool vmlinux_once);

#endif
