/*
 * probes_counter.c - per-process perf counters (pass 2), as stap 4.8's
 * tapset-perfmon.cxx and dwarf_var_expanding_visitor::visit_perf_op:
 *
 *   probe perf.sw.task_clock.process("PATH").counter("NAME") {}
 *   probe process("PATH").function("f") { t = @perf("NAME") }
 *
 * The first point declares a counter; its handler never runs (stap
 * splices a `next` into it).  .process with no argument is the -c
 * command's (or -x process's) executable; a .counter with no .process
 * takes the process of the first handler that reads it.  @perf reads
 * only in a uprobe handler of the counter's process
 * (process("PATH").function/.statement/.mark/.plt, .return too); anywhere
 * else it stays unresolved and pass 3 refuses it ("cannot translate
 * general @perf expression"), as stap does.  The runner keeps the perf
 * events, one per thread (runtime/user/perfctr.c).
 */
#include <string.h>
#include "diag.h"
#include "probe_kinds.h"
#include "probes.h"
#include "probes_counter.h"
#include "probes_sys.h"
#include "probes_user.h"
#include "sema_int.h"

#define MAX_COUNTERS 32	/* runtime/stp_meta.h's STP_MAX_COUNTERS: a mask's bits */

static struct perf_counter *counter_named(struct program *prog, const char *name)
{
	for (int i = 0; i < prog->counters.len; i++) {
		struct perf_counter *c = VEC_AT(&prog->counters, i);

		if (strcmp(c->name, name) == 0)
			return c;
	}
	return NULL;
}

static void set_point(struct perf_counter *c)
{
	c->point = c->path ? arena_printf("%s.process(\"%s\").counter(\"%s\")", c->event, c->path,
					  c->name)
			   : arena_printf("%s.counter(\"%s\")", c->event, c->name);
}

/* stap's checks of the .counter("NAME") component, in its order. */
static bool counter_name_ok(struct sema *sm, struct probe_comp *cc)
{
	const char *name = cc->arg->str;

	if (strpbrk(name, "*?["))
		return !sema_error(cc->arg->loc, sm,
				   "wildcard not allowed with perf probe counter component");
	if (!*name)
		return !sema_error(cc->arg->loc, sm, "missing perf probe counter component name");
	if (counter_named(sm->prog, name))
		return !sema_error(cc->arg->loc, sm, "duplicate counter name");
	return true;
}

const char *probes_counter_process(struct sema *sm, struct probe_comp *pc)
{
	const char *why = NULL, *path;

	if (!pc->arg) {
		path = probes_user_target_exe(sm, &why);
		if (!path && sema_error(pc->loc, sm, "unspecified process probe is invalid without "
					"a -c COMMAND [man stapprobes]"))
			diag_hint("%s", why ? why : "run the command with -c CMD (or -x PID), or "
				  "name it, as .process(\"/path/to/program\")");
		return path;
	}
	path = sys_find_executable(pc->arg->str);
	if (!path)
		sema_error(pc->arg->loc, sm, strchr(pc->arg->str, '/') ? "no such file: '%s'"
			   : "no executable '%s' in PATH", pc->arg->str);
	return path;
}

int probes_counter_build(struct sema *sm, struct probe_point *orig, struct vec *comps,
			 const char *event, int64_t type, int64_t config)
{
	struct probe_comp *pc = probes_comp_named(comps, "process");
	struct probe_comp *cc = probes_comp_named(comps, "counter");
	struct perf_counter *c;
	const char *path = NULL;

	if (!counter_name_ok(sm, cc))
		return -1;
	if (sm->prog->counters.len >= MAX_COUNTERS)
		return -sema_error(cc->arg->loc, sm, "too many perf counters: at most %d",
				   MAX_COUNTERS);
	if (pc && !(path = probes_counter_process(sm, pc)))
		return -1;
	c = ARENA_NEW(struct perf_counter);
	c->name = cc->arg->str;
	c->orig = orig;
	c->type = type;
	c->config = config;
	c->path = path;
	c->event = event;
	set_point(c);
	vec_push(&sm->prog->counters, c);
	return 1;
}

bool probes_counter_read(struct sema *sm, struct derived_probe *dp, struct expr *e, bool quiet)
{
	struct perf_counter *c;

	if (!dp || probe_class(dp) != PCLASS_UPROBE || !dp->path)
		return false;	/* pass 3 refuses it */
	c = counter_named(sm->prog, e->str);
	if (c && !c->path) {	/* .counter with no .process: this process's */
		c->path = dp->path;
		set_point(c);
	}
	if (!c || strcmp(c->path, dp->path) != 0) {
		if (!quiet)
			sema_error(e->loc, sm, "perf counter '%s' not defined", e->str);
		return false;
	}
	for (int i = 0; i < sm->prog->counters.len; i++)
		if (VEC_AT(&sm->prog->counters, i) == c)
			e->num = i + 1;
	c->used = true;
	return true;
}
