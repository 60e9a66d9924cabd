/*
 * emit_dyninst.c - what script.dyn.c adds to the kernel-context code for
 * the dyninst runtime: the table of its probe sites (runtime/dyninst/
 * stp_dyn.h), read by libstapdyn.so in the probed process.
 */
#include <string.h>
#include "emit_int.h"

/* A probe that patches code: every uprobe-class point (pass 2 resolved it to a file). */
static bool is_site(struct emitter *E, int i)
{
	struct derived_probe *dp = VEC_AT(&E->prog->probes, i);

	return E->kernel_probe[i] && dp->elf_path;
}

void emit_dyninst_sites(struct emitter *E, FILE *out)
{
	fprintf(out, "/* the probe sites, for libstapdyn.so */\n");
	fprintf(out, "__attribute__((visibility(\"default\")))\n");
	fprintf(out, "const struct stp_dyn_site stp_dyn_sites[] = {\n");
	for (int i = 0; i < E->prog->probes.len; i++) {
		struct derived_probe *dp = VEC_AT(&E->prog->probes, i);
		uint64_t lo = 0, hi = 0;

		if (!is_site(E, i))
			continue;
		if (dp->func_lo && dp->func_lo <= dp->addr && dp->addr < dp->func_hi) {
			lo = dp->offset - (dp->addr - dp->func_lo);
			hi = dp->offset + (dp->func_hi - dp->addr);
		}
		fprintf(out, "\t{ %d, probe_%d, %s, 0x%llx, 0x%llx, 0x%llx, %s, 0x%llx },\n", i, i,
			emit_c_string(dp->elf_path, strlen(dp->elf_path)),
			(unsigned long long)dp->offset, (unsigned long long)lo,
			(unsigned long long)hi, dp->is_return ? "true" : "false",
			(unsigned long long)dp->ref_ctr_offset);
	}
	fprintf(out, "\t{ 0 }\n};\n");
}
