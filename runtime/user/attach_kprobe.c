/*
 * attach_kprobe.c - attach kernel function probes: kernel.function,
 * module().function and kprobe.function.
 *
 * A kprobe program (p->kprobe) goes on the function the metadata names
 * ("name", or "module:name" for a module's function), as a kretprobe for
 * a .return; an fentry/fexit program on the function its section names,
 * which libbpf resolved against the kernel's BTF when it loaded it.
 */
#include <errno.h>
#include <stddef.h>

#include "attach_kprobe.h"

struct bpf_link *stp_attach_kprobe(const struct stp_meta_probe *p, struct bpf_program *prog)
{
	LIBBPF_OPTS(bpf_kprobe_opts, opts, .retprobe = p->kprobe_return);

	if (!p->kprobe)
		return bpf_program__attach_trace(prog);
	if (!p->target) {
		errno = EINVAL;
		return NULL;
	}
	return bpf_program__attach_kprobe_opts(prog, p->target, &opts);
}
