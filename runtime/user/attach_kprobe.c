/*
 * attach_kprobe.c - attach kernel function probes: kernel.function,
 * module().function and kprobe.function.
 *
 * A kprobe program (p->kprobe) goes on the function the metadata names
 * ("name", or "module:name" for a module's function), at the offset its
 * section names, as a kretprobe for a .return; an fentry/fexit program on
 * the function its section names,
 * which libbpf resolved against the kernel's BTF when it loaded it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach_kprobe.h"

/*
 * The offset into the function that the program's section ends with
 * ("kprobe/ksys_read+0x1c": an inline instance, a statement), 0 if none.
 */
static size_t section_offset(const struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog), *plus = sec ? strrchr(sec, '+') : NULL;

	return plus ? (size_t)strtoull(plus + 1, NULL, 0) : 0;
}

uint64_t stp_kallsyms_address(const char *name, bool vmlinux_once)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], sym[256];
	unsigned long long addr;
	uint64_t found = 0;
	int n = 0;

	if (!f)
		return 0;
	while ((vmlinux_once ? n < 2 : !n) && fgets(line, sizeof(line), f))
		if ((!vmlinux_once || !strchr(line, '[')) &&
		    sscanf(line, "%llx %*c %255s", &addr, sym) == 2 && strcmp(sym, name) == 0 &&
		    n++ == 0)
			found = addr;
	fclose(f);
	return !vmlinux_once || n == 1 ? found : 0;
}

const char *stp_kprobe_site(const struct stp_meta_probe *p, const struct bpf_program *prog,
			    char *buf, size_t len)
{
	size_t off = prog ? section_offset(prog) : 0;

	if (!p->kprobe || !p->target)
		return "";
	if (off)
		snprintf(buf, len, " (a kprobe at %s+0x%zx)", p->target, off);
	else
		snprintf(buf, len, " (a %s at %s)", p->kprobe_return ? "kretprobe" : "kprobe",
			 p->target);
	return buf;
}

/*
 * By the target, not by libbpf's reading of the section: libbpf 1.1 takes
 * a kprobe section's function name up to the first character not in
 * [a-zA-Z0-9_.], so "kprobe/dummy:dummy_xmit" would probe "dummy"; the
 * kernel finds "M:F" itself.  The kernel refuses a BPF kprobe by a name
 * that a module loaded since the translation has too (EADDRNOTAVAIL:
 * sunrpc's c_show beside crypto's); vmlinux's is then taken by its
 * address, as the kernel runtime's kprobe takes vmlinux's first.
 */
struct bpf_link *stp_attach_kprobe(const struct stp_meta_probe *p, struct bpf_program *prog)
{
	LIBBPF_OPTS(bpf_kprobe_opts, opts, .retprobe = p->kprobe_return,
		    .offset = section_offset(prog));
	struct bpf_link *link;
	uint64_t addr;

	if (!p->kprobe)
		return bpf_program__attach_trace(prog);
	if (!p->target) {
		errno = EINVAL;
		return NULL;
	}
	link = bpf_program__attach_kprobe_opts(prog, p->target, &opts);
	if (link || errno != EADDRNOTAVAIL || strchr(p->target, ':') ||
	    !(addr = stp_kallsyms_address(p->target, true)))
		return link;
	opts.offset += addr;
	link = bpf_program__attach_kprobe_opts(prog, NULL, &opts);
	return link;
}
