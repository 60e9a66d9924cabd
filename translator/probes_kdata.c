/*
 * probes_kdata.c - kernel.data probes in pass 2: stap's hardware
 * breakpoints (watchpoints).
 *
 *	kernel.data(ADDRESS)[.length(LEN)].write
 *	kernel.data(ADDRESS)[.length(LEN)].rw
 *	kernel.data("SYMBOL").write
 *	kernel.data("SYMBOL").rw
 *
 * As stap 4.8 builds them: LEN defaults to 1 and is rounded up to what
 * the debug registers watch (1, 2, 4 or 8 bytes; 0 and more than 8: 8); .write fires on a
 * write, .rw on a read or a write (x86 has no read-only watchpoint).  The
 * point names its length: kernel.data(0xADDR).length(1).rw.  A SYMBOL is
 * looked up when the probe is registered (the module's kallsyms lookup,
 * the runner's /proc/kallsyms), as stap's module does; pass 2 checks that
 * kallsyms has it, and says why where it cannot: a kernel built without
 * CONFIG_KALLSYMS_ALL lists no data symbols.  Each probe takes one debug
 * register on every CPU (x86 has 4); registering one more fails at run
 * time, with that reason.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include "diag.h"
#include "probes.h"
#include "probes_kdata.h"
#include "sema_int.h"
#include "sysroot.h"

/* What kallsyms says of NAME: 1 listed, 0 not, -1 not (it lists no data symbols), -2 unreadable. */
static int kallsyms_has(const char *name)
{
	FILE *f = sysroot_kallsyms();
	char line[512], type, sym[256], mod[2];
	bool data = false;
	int found = 0;

	if (!f)
		return -2;
	while (!found && fgets(line, sizeof(line), f)) {
		int n = sscanf(line, "%*s %c %255s %1s", &type, sym, mod);

		if (n < 2)
			continue;
		if (strcmp(sym, name) == 0)
			found = 1;
		/* vmlinux's data: its section markers (__start_rodata) are there without KALLSYMS_ALL */
		else if (n == 2 && strchr("dDbB", type) && strncmp(sym, "__", 2) != 0)
			data = true;
	}
	fclose(f);
	return found ? 1 : data ? 0 : -1;
}

/* Whether kallsyms has a kernel.data("SYMBOL")'s name (any address is there). */
bool probes_kdata_symbol_ok(struct sema *sm, struct vec *comps, bool quiet)
{
	struct probe_comp *c = probes_comp_named(comps, "data");
	const char *name;
	int has;

	if (c->arg->kind != EXPR_STRING)
		return true;
	name = c->arg->str;
	has = kallsyms_has(name);
	if (has == 1 || quiet)
		return has == 1;
	if (has == -1) {
		if (sema_error(c->arg->loc, sm, "kernel.data(\"%s\") has no address on this "
			       "kernel: its /proc/kallsyms lists no data symbols (the kernel was "
			       "built without CONFIG_KALLSYMS_ALL)", name))
			diag_hint("kernel.data(ADDRESS) watches an address");
	} else if (has == -2) {
		sema_error(c->arg->loc, sm, "kernel.data(\"%s\"): cannot read /proc/kallsyms to "
			   "find the symbol", name);
	} else {
		sema_error(c->arg->loc, sm, "kernel.data(\"%s\"): no such symbol in /proc/kallsyms",
			   name);
	}
	return false;
}

/* stap's conversion of a length to a breakpoint's: 1, 2, 4 (3 and 4), else (0 too) 8. */
static int bp_len(int64_t len)
{
	if (len == 1 || len == 2)
		return len == 1 ? HW_BREAKPOINT_LEN_1 : HW_BREAKPOINT_LEN_2;
	return len == 3 || len == 4 ? HW_BREAKPOINT_LEN_4 : HW_BREAKPOINT_LEN_8;
}

void probes_kdata_resolve(struct derived_probe *dp, struct vec *comps)
{
	struct probe_comp *data = probes_comp_named(comps, "data");
	struct probe_comp *length = probes_comp_named(comps, "length");
	bool write = probes_comp_named(comps, "write") != NULL;
	int64_t len = length ? length->arg->num : 1;
	bool own_pn = dp->pn == dp->point;	/* not an alias's name */
	const char *at;

	if (data->arg->kind == EXPR_STRING) {
		dp->bp_symbol = data->arg->str;
		at = arena_printf("\"%s\"", data->arg->str);
	} else {
		dp->bp_addr = (uint64_t)data->arg->num;
		at = arena_printf("0x%" PRIx64, dp->bp_addr);
	}
	dp->bp_type = write ? HW_BREAKPOINT_W : HW_BREAKPOINT_RW;
	dp->bp_len = bp_len(len);
	dp->perf_type = PERF_TYPE_BREAKPOINT;
	dp->perf_sample = 1;
	/* stap's point: no .length for 0, which watches 8 bytes */
	dp->point = arena_printf("kernel.data(%s)%s.%s", at,
				 len ? arena_printf(".length(%" PRId64 ")", len) : "",
				 write ? "write" : "rw");
	if (own_pn)
		dp->pn = dp->point;
}
