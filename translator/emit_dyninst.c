/*
 * emit_dyninst.c - what script.dyn.c adds to the kernel-context code for
 * the dyninst runtime: the table of its probe sites (runtime/dyninst/
 * stp_dyn.h), read by libstapdyn.so in the probed process: the places in
 * code to patch, and the process and thread events to run handlers at.
 */
#include <string.h>
#include "emit_int.h"

/* The event a probe of the process is about (stp_dyn.h), or -1: no site. */
static int site_event(struct emitter *E, int i)
{
	struct derived_probe *dp = VEC_AT(&E->prog->probes, i);

	if (!E->kernel_probe[i])
		return -1;
	switch (dp->kind) {
	case PROBE_PROCESS_BEGIN: return STP_DYN_PROCESS_BEGIN;
	case PROBE_PROCESS_END: return STP_DYN_PROCESS_END;
	case PROBE_THREAD_BEGIN: return STP_DYN_THREAD_BEGIN;
	case PROBE_THREAD_END: return STP_DYN_THREAD_END;
	default: return dp->elf_path ? STP_DYN_CODE : -1;
	}
}

static const char *event_name(int ev)
{
	static const char *const names[] = { "STP_DYN_CODE", "STP_DYN_PROCESS_BEGIN",
					     "STP_DYN_PROCESS_END", "STP_DYN_THREAD_BEGIN",
					     "STP_DYN_THREAD_END" };

	return names[ev];
}

void emit_dyninst_sites(struct emitter *E, FILE *out)
{
	fprintf(out, "/* the probe sites, for libstapdyn.so */\n");
	fprintf(out, "__attribute__((visibility(\"default\")))\n");
	fprintf(out, "const struct stp_dyn_site stp_dyn_sites[] = {\n");
	for (int i = 0; i < E->prog->probes.len; i++) {
		struct derived_probe *dp = VEC_AT(&E->prog->probes, i);
		int ev = site_event(E, i);
		const char *path = ev == STP_DYN_CODE ? dp->elf_path : dp->path;
		uint64_t lo = 0, hi = 0;

		if (ev < 0)
			continue;
		if (dp->func_lo && dp->func_lo <= dp->addr && dp->addr < dp->func_hi) {
			lo = dp->offset - (dp->addr - dp->func_lo);
			hi = dp->offset + (dp->func_hi - dp->addr);
		}
		fprintf(out, "\t{ %d, probe_%d, %s, %lld, %s, 0x%llx, 0x%llx, 0x%llx, %s, 0x%llx },\n",
			i, i, event_name(ev), (long long)(dp->pid > 0 ? dp->pid : 0),
			path ? emit_c_string(path, strlen(path)) : "NULL",
			(unsigned long long)dp->offset, (unsigned long long)lo,
			(unsigned long long)hi, dp->is_return ? "true" : "false",
			(unsigned long long)dp->ref_ctr_offset);
	}
	fprintf(out, "\t{ 0 }\n};\n");
}
