/*
 * probes.c - probe points: from what a probe says to concrete points.
 *
 * A point is matched, component by component (wildcards allowed), first
 * against probe alias names, then against the builtin families below, then
 * against alias names as a prefix (the rest of the point is appended to
 * what the alias stands for).  An alias puts its body before the probe's
 * (=) or after it (+=) and expands its own points in turn.  Every concrete
 * point is checked against this system (probes_sys.c).  '?' makes a point
 * optional, '!' stops the list after a point that matched, and if (...)
 * conditions are joined with &&.
 */
#include <fnmatch.h>
#include <glob.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "diag.h"
#include "kdwarf.h"
#include "kmodfile.h"
#include "manifest.h"
#include "runtimes.h"
#include "probe_kinds.h"
#include "sema_int.h"
#include "probes.h"
#include "probes_btf.h"
#include "probes_netfilter.h"
#include "probes_counter.h"
#include "probes_kdata.h"
#include "probes_kstmt.h"
#include "probes_procfs.h"
#include "probes_sys.h"
#include "probes_user.h"
#include "sysroot.h"

/* ---- the builtin families ---- */

struct pat_comp {
	const char *name;
	char arg;		/* 0 none, 'n' number, 's' string, 'a' either */
};

#define PAT_MAX 6

struct pattern {
	const char *text;
	enum probe_kind kind;
	int n;
	struct pat_comp comps[PAT_MAX];
};

static const struct {
	const char *text;
	enum probe_kind kind;
} fixed_patterns[] = {
	{ "begin", PROBE_BEGIN }, { "begin(n)", PROBE_BEGIN },
	{ "end", PROBE_END }, { "end(n)", PROBE_END },
	{ "error", PROBE_ERROR }, { "error(n)", PROBE_ERROR },
	{ "never", PROBE_NEVER },
	{ "timer.profile", PROBE_PROFILE }, { "timer.profile.tick", PROBE_PROFILE },
	{ "perf.type(n).config(n)", PROBE_PERF },
	{ "perf.type(n).config(n).sample(n)", PROBE_PERF },
	{ "perf.type(n).config(n).process", PROBE_PERF },
	{ "perf.type(n).config(n).process(s)", PROBE_PERF },
	{ "perf.type(n).config(n).counter(s)", PROBE_PERF },
	{ "perf.type(n).config(n).process(s).counter(s)", PROBE_PERF },
	{ "kernel.trace(s)", PROBE_TRACE },
	{ "kernel.function(s)", PROBE_KFUNC },
	{ "kernel.function(s).call", PROBE_KFUNC },
	{ "kernel.function(s).inline", PROBE_KFUNC },
	{ "kernel.function(s).return", PROBE_KFUNC },
	{ "kernel.function(s).exported", PROBE_KFUNC },
	{ "kernel.function(s).return.maxactive(n)", PROBE_KFUNC },
	{ "kernel.function(s).label(s)", PROBE_KSTATEMENT },
	{ "kernel.statement(a)", PROBE_KSTATEMENT },
	{ "kernel.statement(n).absolute", PROBE_KSTATEMENT },
	{ "kernel.statement(s).nearest", PROBE_KSTATEMENT },
	{ "module(s).function(s)", PROBE_KFUNC },
	{ "module(s).function(s).call", PROBE_KFUNC },
	{ "module(s).function(s).inline", PROBE_KFUNC },
	{ "module(s).function(s).return", PROBE_KFUNC },
	{ "module(s).function(s).return.maxactive(n)", PROBE_KFUNC },
	{ "module(s).function(s).label(s)", PROBE_KSTATEMENT },
	{ "module(s).statement(a)", PROBE_KSTATEMENT },
	{ "module(s).statement(s).nearest", PROBE_KSTATEMENT },
	{ "kprobe.function(s)", PROBE_KFUNC },
	{ "kprobe.function(s).call", PROBE_KFUNC },
	{ "kprobe.function(s).return", PROBE_KFUNC },
	{ "kprobe.module(s).function(s)", PROBE_KFUNC },
	{ "kprobe.module(s).function(s).return", PROBE_KFUNC },
	{ "kprobe.statement(n).absolute", PROBE_KSTATEMENT },
	{ "process.begin", PROBE_PROCESS_BEGIN }, { "process(a).begin", PROBE_PROCESS_BEGIN },
	{ "process.end", PROBE_PROCESS_END }, { "process(a).end", PROBE_PROCESS_END },
	{ "process.thread.begin", PROBE_THREAD_BEGIN },
	{ "process(a).thread.begin", PROBE_THREAD_BEGIN },
	{ "process.thread.end", PROBE_THREAD_END },
	{ "process(a).thread.end", PROBE_THREAD_END },
	{ "thread.begin", PROBE_THREAD_BEGIN }, { "thread.end", PROBE_THREAD_END },
	{ "process.syscall", PROBE_PROCESS_SYSCALL },
	{ "process.syscall.return", PROBE_PROCESS_SYSCALL },
	{ "process(a).syscall", PROBE_PROCESS_SYSCALL },
	{ "process(a).syscall.return", PROBE_PROCESS_SYSCALL },
	{ "process(a).function(s)", PROBE_UFUNC },
	{ "process(a).function(s).call", PROBE_UFUNC },
	{ "process(a).function(s).return", PROBE_UFUNC },
	{ "process(a).function(s).inline", PROBE_UFUNC },
	{ "process(a).function(s).label(s)", PROBE_USTATEMENT },
	{ "process(a).library(s).function(s)", PROBE_UFUNC },
	{ "process(a).library(s).function(s).call", PROBE_UFUNC },
	{ "process(a).library(s).function(s).return", PROBE_UFUNC },
	{ "process(a).library(s).function(s).label(s)", PROBE_USTATEMENT },
	{ "process(a).statement(a)", PROBE_USTATEMENT },
	{ "process(a).statement(a).nearest", PROBE_USTATEMENT },
	{ "process(a).statement(n).absolute", PROBE_USTATEMENT },
	{ "process.function(s)", PROBE_UFUNC },
	{ "process.function(s).call", PROBE_UFUNC },
	{ "process.function(s).return", PROBE_UFUNC },
	{ "process.function(s).inline", PROBE_UFUNC },
	{ "process.function(s).label(s)", PROBE_USTATEMENT },
	{ "process.library(s).function(s)", PROBE_UFUNC },
	{ "process.library(s).function(s).return", PROBE_UFUNC },
	{ "process.statement(a)", PROBE_USTATEMENT },
	{ "process.statement(s).nearest", PROBE_USTATEMENT },
	{ "process.mark(s)", PROBE_UMARK },
	{ "process.provider(s).mark(s)", PROBE_UMARK },
	{ "process(a).mark(s)", PROBE_UMARK },
	{ "process(a).provider(s).mark(s)", PROBE_UMARK },
	{ "process(a).library(s).mark(s)", PROBE_UMARK },
	{ "process(a).library(s).provider(s).mark(s)", PROBE_UMARK },
	{ "process(a).plt", PROBE_UPLT }, { "process(a).plt.return", PROBE_UPLT },
	{ "process(a).plt(s)", PROBE_UPLT }, { "process(a).plt(s).return", PROBE_UPLT },
	{ "process(a).library(s).plt", PROBE_UPLT },
	{ "process(a).library(s).plt.return", PROBE_UPLT },
	{ "process(a).library(s).plt(s)", PROBE_UPLT },
	{ "process(a).library(s).plt(s).return", PROBE_UPLT },
	{ "process.plt", PROBE_UPLT }, { "process.plt.return", PROBE_UPLT },
	{ "process.plt(s)", PROBE_UPLT }, { "process.plt(s).return", PROBE_UPLT },
	{ "process.library(s).plt", PROBE_UPLT },
	{ "process.library(s).plt.return", PROBE_UPLT },
	{ "process.library(s).plt(s)", PROBE_UPLT },
	{ "process.library(s).plt(s).return", PROBE_UPLT },
	{ "procfs.read", PROBE_PROCFS }, { "procfs.umask(n).read", PROBE_PROCFS },
	{ "procfs.read.maxsize(n)", PROBE_PROCFS },
	{ "procfs.umask(n).read.maxsize(n)", PROBE_PROCFS },
	{ "procfs(s).read", PROBE_PROCFS }, { "procfs(s).umask(n).read", PROBE_PROCFS },
	{ "procfs(s).read.maxsize(n)", PROBE_PROCFS },
	{ "procfs(s).umask(n).read.maxsize(n)", PROBE_PROCFS },
	{ "procfs.write", PROBE_PROCFS }, { "procfs.umask(n).write", PROBE_PROCFS },
	{ "procfs(s).write", PROBE_PROCFS }, { "procfs(s).umask(n).write", PROBE_PROCFS },
	{ "kernel.data(a).write", PROBE_KDATA }, { "kernel.data(a).rw", PROBE_KDATA },
	{ "kernel.data(n).length(n).write", PROBE_KDATA },
	{ "kernel.data(n).length(n).rw", PROBE_KDATA },
	{ "netfilter.hook(s).pf(s)", PROBE_NETFILTER },
	{ "netfilter.pf(s).hook(s)", PROBE_NETFILTER },
	{ "netfilter.hook(s).pf(s).priority(s)", PROBE_NETFILTER },
	{ "netfilter.pf(s).hook(s).priority(s)", PROBE_NETFILTER },
};

static const char *const timer_units[] = {
	"s", "sec", "ms", "msec", "us", "usec", "ns", "nsec", "hz", "jiffies",
};

/* perf.sw.NAME and perf.hw.NAME: the index is the perf_event config. */
static const char *const perf_sw[] = {
	"cpu_clock", "task_clock", "page_faults", "context_switches", "cpu_migrations",
	"page_faults_min", "page_faults_maj", "alignment_faults", "emulation_faults",
};
static const char *const perf_hw[] = {
	"cpu_cycles", "instructions", "cache_references", "cache_misses",
	"branch_instructions", "branch_misses", "bus_cycles", "stalled_cycles_frontend",
	"stalled_cycles_backend", "ref_cpu_cycles",
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static struct vec patterns;	/* struct pattern * */

static void add_pattern(const char *text, enum probe_kind kind)
{
	struct pattern *p = ARENA_NEW(struct pattern);
	char *s = arena_strdup(text), *save = NULL;

	p->text = text;
	p->kind = kind;
	for (char *c = strtok_r(s, ".", &save); c && p->n < PAT_MAX; c = strtok_r(NULL, ".", &save)) {
		char *paren = strchr(c, '(');

		if (paren) {
			p->comps[p->n].arg = paren[1];
			*paren = '\0';
		}
		p->comps[p->n++].name = c;
	}
	vec_push(&patterns, p);
}

/* A perf event's points: sampling, and (stap's binds) counting in one process. */
static void add_perf_patterns(const char *event)
{
	static const char *const tails[] = {
		"", ".sample(n)", ".process", ".process(s)", ".counter(s)", ".process(s).counter(s)",
	};

	for (int i = 0; i < COUNT(tails); i++)
		add_pattern(arena_printf("%s%s", event, tails[i]), PROBE_PERF);
}

static void init_patterns(void)
{
	static unsigned generation;

	if (generation == arena_generation())
		return;
	generation = arena_generation();
	patterns = (struct vec){ 0 };
	for (int i = 0; i < COUNT(fixed_patterns); i++)
		add_pattern(fixed_patterns[i].text, fixed_patterns[i].kind);
	for (int i = 0; i < COUNT(timer_units); i++) {
		add_pattern(arena_printf("timer.%s(n)", timer_units[i]), PROBE_TIMER);
		if (strcmp(timer_units[i], "hz") != 0)	/* stap 4.8 has no timer.hz().randomize */
			add_pattern(arena_printf("timer.%s(n).randomize(n)", timer_units[i]),
				    PROBE_TIMER);
	}
	for (int i = 0; i < COUNT(perf_sw); i++)
		add_perf_patterns(arena_printf("perf.sw.%s", perf_sw[i]));
	for (int i = 0; i < COUNT(perf_hw); i++)
		add_perf_patterns(arena_printf("perf.hw.%s", perf_hw[i]));
}

struct vec probes_pattern_texts(void)
{
	struct vec v = { 0 };

	init_patterns();
	for (int i = 0; i < patterns.len; i++)
		vec_push(&v, (void *)((struct pattern *)VEC_AT(&patterns, i))->text);
	return v;
}

/* ---- point text ---- */

static char *arg_text(const struct expr *a)
{
	if (a->kind == EXPR_STRING)
		return arena_printf("\"%s\"", a->str);
	if (a->text)
		return arena_strdup(a->text);
	return arena_printf("%" PRId64, a->num);
}

char *probes_point_text(struct vec *comps)
{
	char *t = NULL;

	for (int i = 0; i < comps->len; i++) {
		struct probe_comp *c = VEC_AT(comps, i);
		char *one = c->arg ? arena_printf("%s(%s)", c->name, arg_text(c->arg))
				   : arena_strdup(c->name);

		t = t ? arena_printf("%s.%s", t, one) : one;
	}
	return t ? t : arena_strdup("");
}

/* ---- expansion state ---- */

struct expand {
	struct sema *sm;
	struct probe *probe;		/* the probe being derived */
	struct probe_point *orig;	/* its point being expanded */
	struct vec aliases;		/* struct probe_alias *: the chain so far */
	const char *pn;			/* the outermost alias's name as matched, or NULL */
	struct stmt *body;		/* alias bodies around the probe's, not yet copied */
	struct expr *cond;		/* conditions so far, not yet copied */
	bool optional;
	bool reported;			/* an error about the current point was printed */
	const char *missing;		/* the first optional point's missing module, or NULL */
};

static int expand_point(struct expand *x, struct probe_point *pt);

static struct expr *and_cond(struct expr *a, struct expr *b)
{
	struct expr *e;

	if (!a || !b)
		return a ? a : b;
	e = ast_expr(EXPR_LOGICAL, b->loc);
	e->op = "&&";
	e->left = a;
	e->right = b;
	return e;
}

static struct derived_probe *make_probe(struct expand *x, struct vec *comps, enum probe_kind k)
{
	struct derived_probe *dp = ARENA_NEW(struct derived_probe);

	dp->id = x->sm->next_probe_id++;
	dp->point = probes_point_text(comps);
	dp->pn = x->pn ? x->pn : dp->point;
	dp->kind = k;
	dp->probe = x->probe;
	dp->orig = x->orig;
	for (int i = 0; i < x->aliases.len; i++)
		vec_push(&dp->aliases, VEC_AT(&x->aliases, i));
	dp->body = sema_resolve_copy_stmt(x->body);
	dp->cond = sema_resolve_copy_expr(x->cond);
	vec_push(&x->sm->prog->probes, dp);
	return dp;
}

/* The component of a probe point called NAME, or NULL. */
struct probe_comp *probes_comp_named(struct vec *comps, const char *name)
{
	for (int i = 0; i < comps->len; i++) {
		struct probe_comp *c = VEC_AT(comps, i);

		if (strcmp(c->name, name) == 0)
			return c;
	}
	return NULL;
}

static const char *str_arg(struct vec *comps, const char *name)
{
	struct probe_comp *c = probes_comp_named(comps, name);

	return c && c->arg && c->arg->kind == EXPR_STRING ? c->arg->str : NULL;
}

static int64_t num_arg(struct vec *comps, const char *name)
{
	struct probe_comp *c = probes_comp_named(comps, name);

	return c && c->arg && c->arg->kind == EXPR_NUMBER ? c->arg->num : 0;
}

/* ---- builtin families, one builder each ---- */

static int build_timer(struct expand *x, struct vec *comps)
{
	struct probe_comp *unit = VEC_AT(comps, 1);
	struct probe_comp *rnd = probes_comp_named(comps, "randomize");
	static const struct { const char *name, *canon; int64_t ns; } units[] = {
		{ "s", "s", 1000000000 }, { "sec", "s", 1000000000 },
		{ "ms", "ms", 1000000 }, { "msec", "ms", 1000000 },
		{ "us", "us", 1000 }, { "usec", "us", 1000 },
		{ "ns", "ns", 1 }, { "nsec", "ns", 1 },
		{ "hz", "hz", 0 }, { "jiffies", "jiffies", 0 },
	};
	struct derived_probe *dp;
	int64_t v = unit->arg->num;

	if (v <= 0) {
		sema_error(unit->arg->loc, x->sm, "the timer interval must be positive, not %" PRId64, v);
		return -1;
	}
	if (rnd && (rnd->arg->num < 0 || rnd->arg->num >= v)) {
		sema_error(rnd->arg->loc, x->sm, "randomize(%" PRId64 ") must be at least 0 and less than the interval (%" PRId64 ")",
			   rnd->arg->num, v);
		return -1;
	}
	dp = make_probe(x, comps, PROBE_TIMER);
	dp->timer_value = v;
	dp->timer_randomize = rnd ? rnd->arg->num : 0;
	for (int i = 0; i < COUNT(units); i++) {
		if (strcmp(unit->name, units[i].name) != 0)
			continue;
		dp->timer_unit = units[i].canon;
		if (units[i].ns)
			dp->interval_ns = v * units[i].ns;
		else if (units[i].name[0] == 'h')
			dp->interval_ns = 1000000000 / v;
	}
	return 1;
}

static int name_index(const char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

/* The event of a perf point: its type and config, and its name for messages. */
static const char *perf_event(struct vec *comps, int64_t *type, int64_t *config)
{
	struct probe_comp *kind = VEC_AT(comps, 1), *event = VEC_AT(comps, 2);

	if (strcmp(kind->name, "type") == 0) {
		*type = num_arg(comps, "type");
		*config = num_arg(comps, "config");
		return arena_printf("perf.type(%lld).config(%lld)", (long long)*type,
				    (long long)*config);
	}
	*type = kind->name[0] == 'h' ? 0 : 1;	/* PERF_TYPE_HARDWARE, _SOFTWARE */
	if (kind->name[0] == 'h')
		*config = name_index(perf_hw, COUNT(perf_hw), event->name);
	else
		*config = name_index(perf_sw, COUNT(perf_sw), event->name);
	return arena_printf("perf.%s.%s", kind->name, event->name);
}

static int build_perf(struct expand *x, struct vec *comps)
{
	struct probe_comp *kind = VEC_AT(comps, 1);
	struct probe_comp *sample = probes_comp_named(comps, "sample");
	struct probe_comp *pc = probes_comp_named(comps, "process");
	struct derived_probe *dp;
	int64_t type, config;
	const char *event = perf_event(comps, &type, &config), *path = NULL;

	if (probes_comp_named(comps, "counter"))
		return probes_counter_build(x->sm, x->orig, comps, event, type, config);
	if (pc && !(path = probes_counter_process(x->sm, pc)))
		return -1;	/* sampling the threads of one process */
	if (sample && sample->arg->num <= 0) {
		sema_error(sample->arg->loc, x->sm, "the sample period must be positive");
		return -1;
	}
	dp = make_probe(x, comps, PROBE_PERF);
	if (path) {
		dp->path = path;
		dp->point = arena_printf("%s.process(\"%s\")", event, path);
	}
	dp->perf_sample = sample ? sample->arg->num : 0;
	dp->perf_type = type;
	dp->perf_config = config;
	if (strcmp(kind->name, "type") != 0)
		dp->perf_event = event + strlen("perf.");
	return 1;
}

static bool has_wildcard(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static struct vec trace_comps(struct vec *comps, const char *sys, const char *name)
{
	struct vec c = { 0 };
	struct probe_comp *k = ARENA_NEW(struct probe_comp), *t = ARENA_NEW(struct probe_comp);
	struct probe_comp *orig = VEC_AT(comps, 1);

	*k = *(struct probe_comp *)VEC_AT(comps, 0);
	*t = *orig;
	t->arg = ast_expr(EXPR_STRING, orig->arg->loc);
	t->arg->str = arena_printf("%s:%s", sys, name);
	vec_push(&c, k);
	vec_push(&c, t);
	return c;
}

static int trace_one(struct expand *x, struct vec *comps, const char *sys, const char *name)
{
	struct tracepoint *tp = sys_tracepoint(x->sm, sys, name);
	struct vec c;

	if (!tp)
		return 0;
	c = trace_comps(comps, sys, name);
	make_probe(x, &c, PROBE_TRACE)->tp = tp;
	return 1;
}

static void trace_hint(struct expand *x, const char *sys, const char *name)
{
	struct vec *systems = sys_tracepoint_systems(x->sm), cands = { 0 };
	const char *near;

	for (int i = 0; i < systems->len; i++) {
		const char *s = VEC_AT(systems, i);
		struct vec *names;

		if (sys && strcmp(s, sys) != 0 && !has_wildcard(sys))
			continue;
		names = sys_tracepoint_names(x->sm, s);
		for (int j = 0; j < names->len; j++)
			vec_push(&cands, sys ? arena_printf("%s:%s", s, (char *)VEC_AT(names, j))
					     : VEC_AT(names, j));
	}
	near = diag_similar(sys ? arena_printf("%s:%s", sys, name) : name,
			    (const char *const *)cands.items, cands.len);
	if (near)
		diag_hint("did you mean '%s'?", near);
	else if (sys && !has_wildcard(sys) && !cands.len)
		diag_hint("this kernel has no tracepoint system '%s'", sys);
}

/* Every tracepoint SYS:NAME matches (SYS NULL: any system). */
static int trace_search(struct expand *x, struct vec *comps, const char *sys, const char *name)
{
	struct vec *systems = sys_tracepoint_systems(x->sm);
	int n = 0;

	for (int i = 0; i < systems->len; i++) {
		const char *s = VEC_AT(systems, i);
		struct vec *names;

		if (sys && fnmatch(sys, s, 0) != 0)
			continue;
		if (!has_wildcard(name)) {
			n += trace_one(x, comps, s, name);
			continue;
		}
		names = sys_tracepoint_names(x->sm, s);
		for (int j = 0; j < names->len; j++)
			if (fnmatch(name, VEC_AT(names, j), 0) == 0)
				n += trace_one(x, comps, s, VEC_AT(names, j));
	}
	return n;
}

/* kernel.trace("[SYSTEM:]NAME"), wildcards in both: one probe per tracepoint. */
static int build_trace(struct expand *x, struct vec *comps)
{
	struct probe_comp *tc = VEC_AT(comps, 1);
	const char *spec = tc->arg->str, *colon = strchr(spec, ':');
	const char *sys = colon ? arena_strndup(spec, (size_t)(colon - spec)) : NULL;
	const char *name = colon ? colon + 1 : spec;
	int n;

	if (!x->sm->s->tracefs) {
		if (!x->optional &&
		    sema_error(tc->loc, x->sm, "kernel.trace probes need tracefs, which is not mounted at /sys/kernel/tracing"))
			diag_hint("mount it: mount -t tracefs nodev /sys/kernel/tracing");
		return x->optional ? 0 : -1;
	}
	if (sys && !has_wildcard(sys) && !has_wildcard(name))
		n = trace_one(x, comps, sys, name);
	else
		n = trace_search(x, comps, sys, name);
	if (!n && !x->optional) {
		char *text = probes_point_text(comps);

		if (sema_error(tc->loc, x->sm, "no match for probe point '%s'", text))
			trace_hint(x, sys, name);
		return -1;
	}
	return n;
}

/* The function part of "NAME[@FILE][:LINE]". */
static const char *function_name_part(const char *spec)
{
	return arena_strndup(spec, strcspn(spec, "@:"));
}

static struct vec copy_comps(struct vec *comps)
{
	struct vec c = { 0 };

	for (int i = 0; i < comps->len; i++) {
		struct probe_comp *pc = ARENA_NEW(struct probe_comp);

		*pc = *(struct probe_comp *)VEC_AT(comps, i);
		vec_push(&c, pc);
	}
	return c;
}

struct vec probes_comps_with_arg(struct vec *comps, const char *which, const char *name)
{
	struct vec c = copy_comps(comps);
	struct probe_comp *fc = probes_comp_named(&c, which);
	struct expr *arg = ast_expr(EXPR_STRING, fc->arg ? fc->arg->loc : fc->loc);	/* plt: none */

	arg->str = name;
	fc->arg = arg;
	return c;
}

struct vec probes_comps_without(struct vec *comps, const char *name)
{
	struct vec c = { 0 };

	for (int i = 0; i < comps->len; i++)
		if (strcmp(((struct probe_comp *)VEC_AT(comps, i))->name, name) != 0)
			vec_push(&c, VEC_AT(comps, i));
	return c;
}

/* Where module MOD's function NAME is reached by name: the global one of two (kmodfile.h). */
static void module_site(struct derived_probe *dp, const char *mod, const char *name)
{
	const char *path = kmodfile_path(mod), *anchor;
	uint64_t off;

	if (path && kmodfile_site(path, name, &anchor, &off) && strcmp(anchor, name) != 0) {
		dp->ksite = arena_printf("%s:%s", mod, anchor);
		dp->ksite_offset = off;
	}
}

/* kprobe.function(...): by name, never by DWARF, as stap's. */
static bool kprobe_family(struct vec *comps)
{
	return strcmp(((struct probe_comp *)VEC_AT(comps, 0))->name, "kprobe") == 0;
}

/* A probe on kernel function NAME; SPELLED (or NULL) replaces function("...")'s argument. */
static struct derived_probe *kfunc_probe(struct expand *x, struct vec *comps, const char *name,
					 const char *spelled)
{
	struct vec c = spelled ? probes_comps_with_arg(comps, "function", spelled) : *comps;
	const char *mod = str_arg(comps, "module");
	struct derived_probe *dp = make_probe(x, &c, PROBE_KFUNC);
	struct vec *params;
	int ret;

	dp->function = spelled ? name : str_arg(comps, "function");
	dp->function_matches = 1;
	dp->module = mod;
	dp->is_return = probes_comp_named(comps, "return") != NULL;
	/* .maxactive(N), within [0,32767] (kprobe_comps_ok()); 0 without it: the kernel's default */
	dp->kret_maxactive = (int32_t)num_arg(comps, "maxactive");
	dp->kfunc = probes_ksym(mod, name);
	if (mod && runtime_id_of(x->sm->s) != RUNTIME_KERNEL)
		dp->kfunc_untyped = arena_printf("the %s runtime's programs know vmlinux's types "
						 "only; --runtime=kernel reads module %s's BTF",
						 x->sm->s->runtime, mod);
	dp->kfunc_kprobe = kprobe_family(comps) || dp->kfunc_untyped ||
			   !btf_kfunc(dp->kfunc, &params, &ret);
	if (mod)
		module_site(dp, mod, name);
	return dp;
}

/* Where "@FILE" starts in the function("...") argument FC. */
static struct srcloc file_part_loc(struct probe_comp *fc)
{
	struct srcloc loc = fc->arg->loc;

	loc.col += 1 + (int)strcspn(fc->arg->str, "@");
	return loc;
}

bool probes_over_limit(const struct sema *sm, int n)
{
	return n > KFUNC_MAX_EXPANSION && !sm->s->list_pattern;
}

/* Too many functions for one point: say so, and how to see them. */
static int too_many(struct expand *x, struct vec *comps, const char *what, const char *things)
{
	struct probe_comp *fc = probes_comp_named(comps, "function");

	if (sema_error(fc->arg->loc, x->sm, "'%s' matches more than the %d %s one probe point "
		       "may stand for", what, KFUNC_MAX_EXPANSION, things))
		diag_hint("narrow the pattern; pmstap -l '%s' lists what it matches",
			  probes_point_text(comps));
	return -1;
}

static int no_kernel_debuginfo(struct expand *x, struct vec *comps)
{
	struct probe_comp *fc = probes_comp_named(comps, "function");
	const char *mod = str_arg(comps, "module");

	if (x->optional)
		return 0;
	if (sema_error(file_part_loc(fc), x->sm, "a function's source file is known only from "
		       "the %s debuginfo, and %s", mod ? "module's" : "kernel's",
		       kdwarf_missing(mod)))
		kdwarf_hint_install(mod);
	return -1;
}

/* Sites left out because the name they would be probed by is the kernel's twice. */
struct twice {
	int n;
	struct hmap syms;	/* those names */
	char *names;		/* the first four, quoted */
};

/* Whether the kernel has function symbol SYM once (MODULE: the module). */
static bool kernel_unique(const char *module, const char *sym)
{
	return module ? kdwarf_symbol_unique(module, sym) : sys_kernel_function_unique(sym);
}

const char *probes_kernel_site(const char *module, const char *sym, uint64_t pc,
			       uint64_t *offset)
{
	const char *anchor;
	uint64_t off;

	if (kernel_unique(module, sym))
		return sym;
	if (!(anchor = kdwarf_symbol_anchor(module, pc, &off)) || !kernel_unique(module, anchor))
		return NULL;
	*offset = off;
	return anchor;
}

const char *probes_ksym(const char *module, const char *sym)
{
	return module ? arena_printf("%s:%s", module, sym) : sym;
}

/*
 * The symbol F is probed by (its own, or the one whose code holds an
 * inline instance, and the offset there): false when there is none (a
 * weak definition the linker replaced), or kallsyms has it
 * twice and no symbol it has once is before it in its section: a symbol
 * the kernel (the module) has twice is reached from one it has once
 * (kdwarf_symbol_anchor()).
 */
static bool symbol_usable(struct kdwarf_func *f, struct twice *tw)
{
	const char *site;

	f->symbol = f->inlined ? kdwarf_symbol_holding(f->module, f->entry, &f->offset)
			       : kdwarf_symbol_at(f->module, f->entry);
	if (!f->symbol)
		return false;
	if ((site = probes_kernel_site(f->module, f->symbol, f->entry, &f->offset))) {
		f->symbol = site;
		return true;
	}
	if (f->module || sys_kernel_function_matches(f->symbol, NULL)) {
		tw->n++;
		if (!hmap_get(&tw->syms, f->symbol)) {
			hmap_put(&tw->syms, f->symbol, (void *)1);
			if (tw->syms.len <= 4)
				tw->names = arena_printf("%s%s'%s'", tw->names, *tw->names ? ", " : "",
							 f->symbol);
		}
	}
	return false;
}

/*
 * Of the functions DWARF found, those a probe can be put on: not in stap's
 * blocklist (unless in guru mode); an out-of-line function by its symbol
 * at its entry (a clone's "foo.isra.0"; none: a weak definition another
 * replaced, whose code is left unnamed); an inline instance by the symbol
 * whose code holds it and its offset there, not for a .return, which stap
 * refuses too (with its warning), nor a .call or .exported (out-of-line
 * functions only, as in stap).  The symbol must be in kallsyms once
 * (two static functions of one name: a probe by name could be on the
 * other, so it is left out; one warning says how many).  ALONE: FUNCS are
 * all the probe point has, so the inline functions left out for a .return
 * are named where none is kept, as stap names them.
 */
static void keep_kernel_functions(struct expand *x, struct vec *comps, struct vec *funcs,
				  struct vec *keep, bool alone)
{
	struct srcloc loc = probes_comp_named(comps, "function")->arg->loc;
	bool ret = probes_comp_named(comps, "return") != NULL;
	bool out_of_line = probes_comp_named(comps, "call") || probes_comp_named(comps, "exported");
	bool inline_only = probes_comp_named(comps, "inline") != NULL;
	struct hmap no_return = { .str_keys = true };
	struct twice twice = { .syms = { .str_keys = true }, .names = "" };
	bool bpf = runtime_id_of(x->sm->s) != RUNTIME_KERNEL;
	char *names = "";
	int init_exit = 0;

	for (int i = 0; i < funcs->len; i++) {
		struct kdwarf_func *f = VEC_AT(funcs, i);

		if ((!x->sm->s->guru && kdwarf_blocklisted(f, ret)) || (f->inlined && out_of_line) ||
		    (!f->inlined && inline_only))
			continue;
		if (bpf && f->module && kdwarf_init_exit(f)) {
			init_exit++;
			continue;
		}
		if (f->inlined && ret) {
			if (!hmap_get(&no_return, f->name)) {
				hmap_put(&no_return, f->name, (void *)1);
				names = arena_printf("%s %s", names, f->name);
			}
			continue;
		}
		if (symbol_usable(f, &twice))
			vec_push(keep, f);
	}
	if (no_return.len && alone && !keep->len)
		diag_warning(loc, "cannot probe .return of %d inlined functions %s", no_return.len,
			     names);
	if (twice.n)
		diag_warning(loc, "%d of the functions and inline instances are not probed: each "
			     "would be probed by a name the kernel has more than once (%s%s)",
			     twice.n, twice.names, twice.syms.len > 4 ? ", ..." : "");
	if (init_exit)
		diag_warning(loc, "%d of the functions and inline instances are not probed: they "
			     "are a module's init or exit code, which ftrace cannot trace (notrace), "
			     "and the kernel refuses a BPF kprobe there; --runtime=kernel probes "
			     "them", init_exit);
}

/* A probe on each function or inline instance of KEEP (struct kdwarf_func *), named NAME@FILE:LINE. */
static void dwarf_probes(struct expand *x, struct vec *comps, struct vec *keep)
{
	for (int i = 0; i < keep->len; i++) {
		struct kdwarf_func *f = VEC_AT(keep, i);
		struct derived_probe *dp = kfunc_probe(x, comps, f->symbol, *f->file ? arena_printf(
			"%s@%s:%d", f->name, f->file, f->line) : f->name);

		dp->function = f->name;
		dp->kfunc_inline = f->inlined;
		dp->kfunc_kprobe |= f->inlined || f->offset;	/* not the symbol's own types */
		dp->kfunc_offset = f->offset;
		/* $params from DWARF where BTF has not the symbol (a clone's, an inline's) */
		dp->kfunc_die = dp->kfunc_kprobe && !dp->is_return ? f->die : 0;
		dp->kfunc_dwarf = f->die;
		dp->addr = f->entry;
	}
}

/* A line in kernel.function("NAME@FILE:LINE") that no function is declared at. */
static int elide_line(struct expand *x)
{
	diag_warning(x->orig->loc, "For probing a particular line, use a .statement() probe, "
		     "not .function()");
	x->sm->elided_points++;
	return 0;
}

/*
 * kernel.function("PATTERN@FILE"): the functions declared in FILE (as
 * stap matches it, kdwarf.h), out-of-line and inline instances: one probe
 * each, its point "NAME@FILE:LINE" as stap lists it.  FILE NULL: any file,
 * for a PATTERN that BTF and kallsyms do not know (inline functions), and
 * for a wildcard also the symbols DWARF has no function for, by name only
 * (kdwarf_symtab_functions()), as stap adds them.
 */
static int build_kfunc_file(struct expand *x, struct vec *comps, const char *name,
			    const char *file, int line)
{
	bool any_file = !file;	/* a name BTF and kallsyms do not have: 0 when DWARF has none */
	const char *mod = str_arg(comps, "module");
	struct probe_comp *fc = probes_comp_named(comps, "function");
	struct vec funcs = { 0 }, keep = { 0 };

	if (!kdwarf_functions(mod, name, file, &funcs))
		return no_kernel_debuginfo(x, comps);
	if (!file && has_wildcard(name) && !probes_comp_named(comps, "inline")) {
		struct vec syms = { 0 };

		kdwarf_symtab_functions(mod, name, &funcs, &syms);
		for (int i = 0; i < syms.len; i++)
			vec_push(&funcs, VEC_AT(&syms, i));
	}
	keep_kernel_functions(x, comps, &funcs, &keep, true);
	if (line) {	/* the functions declared at LINE */
		int j = 0;

		for (int i = 0; i < keep.len; i++)
			if (((struct kdwarf_func *)VEC_AT(&keep, i))->line == line)
				VEC_AT(&keep, j++) = VEC_AT(&keep, i);
		keep.len = j;
		if (!j)
			return elide_line(x);
	}
	if (probes_over_limit(x->sm, keep.len))
		return too_many(x, comps, str_arg(comps, "function"),
				"kernel functions and inline instances");
	dwarf_probes(x, comps, &keep);
	if (!keep.len && !x->optional && !any_file) {
		sema_error(fc->arg->loc, x->sm, "no match for probe point '%s'",
			   probes_point_text(comps));
		return -1;
	}
	return keep.len;
}

/*
 * The other points of F's plain name: its inline instances and the other
 * out-of-line functions of that name, anywhere (a header's static
 * function), probed beside it as stap 4.8 probes them (for .return and
 * .call, the out-of-line ones); with BPF, those in a function ftrace
 * cannot trace are left out, saying how many (with F itself where
 * F_NOTRACE), though -l lists them.  How many are probed.
 */
static int plain_others(struct expand *x, struct vec *comps, const struct kdwarf_func *f,
			bool f_notrace)
{
	struct vec others = { 0 }, keep = { 0 }, usable = { 0 };
	bool bpf = runtime_id_of(x->sm->s) != RUNTIME_KERNEL && !x->sm->s->list_pattern;
	int notrace = f_notrace;

	kdwarf_name_points(f, &others);
	keep_kernel_functions(x, comps, &others, &keep, false);
	for (int i = 0; i < keep.len; i++) {
		struct kdwarf_func *k = VEC_AT(&keep, i);
		uint64_t off;
		const char *holder = kdwarf_symbol_holding(k->module, k->entry, &off);

		/* the kernel asks of the function holding the address, not of the anchor */
		if (bpf && !sys_kernel_function_traceable(probes_ksym(k->module,
								     holder ? holder : k->symbol)))
			notrace++;
		else
			vec_push(&usable, k);
	}
	if (notrace && usable.len)
		diag_warning(probes_comp_named(comps, "function")->arg->loc, "%d of the points of "
			     "'%s' are not probed: each is in a function ftrace cannot trace "
			     "(notrace), and the kernel refuses a BPF probe there; --runtime=kernel "
			     "probes them", notrace, f->name);
	dwarf_probes(x, comps, &usable);
	return usable.len;
}

/*
 * With BPF, plain name SYM whose function ftrace cannot trace (notrace:
 * the kernel refuses a BPF probe there, fentry's with EBUSY): its other
 * points (F: its DWARF's, or NULL) where it has some, saying it is left
 * out; else an error saying why.  How many probes, or -1.
 */
static int notrace_plain(struct expand *x, struct vec *comps, const char *sym,
			 const struct kdwarf_func *f)
{
	struct srcloc loc = probes_comp_named(comps, "function")->arg->loc;
	int n = f ? plain_others(x, comps, f, true) : 0;

	if (n || x->optional)
		return n;
	if (sema_error(loc, x->sm, "probe point '%s': '%s' is a function ftrace cannot trace "
		       "(notrace), and the kernel refuses a BPF probe there",
		       probes_point_text(comps), sym))
		diag_hint("--runtime=kernel probes it: a module's kprobe may be there");
	return -1;
}

/*
 * A probe on plain kernel function name SYM, its point as stap names it:
 * "NAME@FILE:LINE" where the kernel's (or the module's) DWARF is
 * installed (kdwarf_function_point()), else the name as written; not for
 * kprobe.function, which stap names without a file.  Its $params come
 * from that DWARF where BTF does not type them (a module's, with BPF).
 * Where that DWARF names it, stap's blocklist applies as to a wildcard's
 * functions, out of guru mode: 0, with stap's warning, for one it leaves
 * out; else 1, or -1 (reported) for a notrace function with BPF.
 */
static int plain_probe(struct expand *x, struct vec *comps, const char *sym)
{
	const char *mod = str_arg(comps, "module"), *point = NULL;
	struct kdwarf_func f = { 0 };
	struct derived_probe *dp;

	if (!kprobe_family(comps) && kdwarf_installed(mod))
		point = kdwarf_function_point(mod, sym, &f);
	if (point && !x->sm->s->guru && kdwarf_blocklisted(&f, probes_comp_named(comps, "return"))) {
		diag_warning(probes_comp_named(comps, "function")->arg->loc,
			     "function %s is blocklisted", sym);
		return 0;
	}
	if (runtime_id_of(x->sm->s) != RUNTIME_KERNEL && !x->sm->s->list_pattern &&
	    !sys_kernel_function_traceable(probes_ksym(mod, sym)))
		return notrace_plain(x, comps, sym, point ? &f : NULL);
	dp = kfunc_probe(x, comps, sym, point);
	dp->kfunc_dwarf = f.die;
	if (point && dp->kfunc_kprobe && !dp->is_return) {
		dp->kfunc_die = f.die;
		dp->addr = f.entry;
	}
	if (point)
		plain_others(x, comps, &f, false);
	return 1;
}

/* .inline where the pattern has no inline instance, or no DWARF says. */
static int no_inline(struct expand *x, struct vec *comps)
{
	struct srcloc loc = probes_comp_named(comps, "function")->arg->loc;
	const char *mod = str_arg(comps, "module");

	if (x->optional)
		return 0;
	if (kdwarf_installed(mod))
		sema_error(loc, x->sm, "no match for probe point '%s': the %s DWARF has no "
			   "inline instance of '%s'", probes_point_text(comps),
			   mod ? "module's" : "kernel's", str_arg(comps, "function"));
	else if (sema_error(loc, x->sm, "inline instances are known only from the %s "
			    "debuginfo, and %s", mod ? "module's" : "kernel's", kdwarf_missing(mod)))
		kdwarf_hint_install(mod);
	return -1;
}

/*
 * kernel.function("NAME"), module("M").function("NAME"), kprobe.function:
 * one probe per function a wildcard matches (probes_sys.h).
 */
static int build_kfunc(struct expand *x, struct vec *comps)
{
	const char *fn = str_arg(comps, "function"), *mod = str_arg(comps, "module");
	struct probe_comp *fc = probes_comp_named(comps, "function");
	const char *name = function_name_part(fn), *similar = NULL;
	struct vec names = { 0 };
	bool dwarf_first;
	int n;

	if (fn[strlen(name)] == '@') {
		const char *file = fn + strlen(name) + 1;
		size_t len = strcspn(file, ":+");
		const char *at = file + len;
		char *end;
		long line = *at == ':' ? strtol(at + 1, &end, 10) : 0;

		/*
		 * ":N" where N is a function's declaration line (as -l and pp()
		 * name it) is that function; any other line (":N", ":N-M", ":*",
		 * "+N") probes nothing, as in stap 4.8, which -l ignores.
		 */
		if (*at && !x->sm->s->list_pattern && (line <= 0 || *end))
			return elide_line(x);
		return build_kfunc_file(x, comps, name, arena_strndup(file, len),
					x->sm->s->list_pattern ? 0 : (int)line);
	}
	/*
	 * A wildcard or .inline where the kernel's (the module's) DWARF is
	 * installed: as stap resolves it, "NAME@FILE:LINE" points and inline
	 * instances too; BTF and kallsyms alone for names DWARF has not
	 * (assembly).  A plain name goes to BTF and kallsyms first: reading
	 * the DWARF's functions costs 0.8 s a compile here, ten times that in
	 * the emulated qa guest, and the name is probed the same.
	 */
	dwarf_first = *name && !kprobe_family(comps) &&
		      (has_wildcard(name) || probes_comp_named(comps, "inline"));
	if (dwarf_first && kdwarf_installed(mod) && (n = build_kfunc_file(x, comps, name, NULL, 0)) != 0)
		return n;
	if (probes_comp_named(comps, "inline"))
		return no_inline(x, comps);
	n = *name ? sys_kernel_functions(mod, name, &names, &similar) : 0;
	if (!n && *name && !dwarf_first && kdwarf_installed(mod) &&
	    (n = build_kfunc_file(x, comps, name, NULL, 0)) != 0)
		return n;	/* inline instances, which only DWARF knows */

	if (!n) {
		if (x->optional && mod && !x->missing && !kmodfile_path(mod))
			x->missing = mod;
		if (x->optional)
			return 0;
		if (sema_error(fc->arg->loc, x->sm, "no match for probe point '%s'",
			       probes_point_text(comps))) {
			if (!mod && !has_wildcard(name) && sys_kernel_function_is_init(name))
				diag_hint("'%s' is in the kernel's init text, freed after boot", name);
			else if (similar)
				diag_hint("did you mean '%s'?", similar);
			else if (mod)
				diag_hint("pmstap looks for module %s's functions in /proc/kallsyms "
					  "(while it is loaded), then in its .ko under /lib/modules/%s",
					  mod, sysroot_kernel_release());
		}
		return -1;
	}
	if (probes_over_limit(x->sm, n))
		return too_many(x, comps, name, "kernel functions");
	for (int i = 0; i < n; i++) {
		const char *sym = VEC_AT(&names, i);
		int made = 1;

		if (has_wildcard(name))
			kfunc_probe(x, comps, sym, sym);
		else if ((made = plain_probe(x, comps, sym)) < 0)
			return -1;
		else if (!made)
			n--;
	}
	if (!n && !x->optional) {
		if (sema_error(fc->arg->loc, x->sm, "no match for probe point '%s'",
			       probes_point_text(comps)))
			diag_hint("guru mode (-g) probes a function stap's blocklist leaves out");
		return -1;
	}
	return n;
}

/*
 * The one line "FUNC@FILE:N" asks for, else 0: -l lists a .nearest point
 * at the line asked, as stap 4.8 lists it, a list's at the lines found.
 */
static int asked_line(const char *spec)
{
	const char *colon = spec ? strrchr(spec, ':') : NULL;

	return colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)
	       ? atoi(colon + 1) : 0;
}

/*
 * kernel.statement, module().statement, kprobe.statement: a kprobe at
 * each site (probes_kstmt.h), by its symbol and offset; a site DWARF
 * found spelled "NAME@FILE:LINE" (the statement's line, or the
 * function's), as stap 4.8 spells it in -p2, -l and pp().
 */
static int build_kstatement(struct expand *x, struct vec *comps)
{
	const char *spec = str_arg(comps, "statement");
	struct vec sites = { 0 };
	int n = probes_kstatement_sites(x->sm, comps, x->optional, &sites);
	bool listed_nearest = x->sm->s->list_pattern && probes_comp_named(comps, "nearest");
	int line = listed_nearest ? asked_line(spec) : 0;

	for (int i = 0; i < n; i++) {
		struct kdwarf_func *f = VEC_AT(&sites, i);
		const char *at = f->file ? arena_printf("%s@%s:%d", f->name, f->file,
							line ? line : f->line) : NULL;
		struct vec c = spec && at ? probes_comps_with_arg(comps, "statement", at) : *comps;
		struct derived_probe *dp;

		if (!listed_nearest && probes_comp_named(&c, "nearest"))
			c = probes_comps_without(&c, "nearest");	/* stap's -p2 leaves it out */
		if (f->label) {	/* .function("NAME@FILE:LINE").label("L"), L's line */
			c = at ? probes_comps_with_arg(comps, "function", at) : copy_comps(comps);
			c = probes_comps_with_arg(&c, "label", f->label);
		}
		dp = make_probe(x, &c, PROBE_KSTATEMENT);
		dp->module = str_arg(comps, "module");
		dp->statement = spec;
		dp->function = spec || f->label ? f->name : NULL;	/* an address: no $vars */
		dp->kfunc = f->symbol;
		dp->kfunc_offset = f->offset;
		dp->kfunc_kprobe = true;
		dp->kfunc_inline = f->inlined;
		dp->kfunc_die = f->die;
		dp->addr = f->entry;
	}
	return n;
}

/*
 * One process probe; PATH (the file it names, when it names one) replaces
 * the argument.  User-space points resolve against the file
 * (probes_user.c): returns how many probes were made, -1 after an error.
 */
static int process_probe(struct expand *x, struct vec *comps, enum probe_kind k, const char *path)
{
	struct vec c = copy_comps(comps);
	struct probe_comp *pc = probes_comp_named(&c, "process");
	struct derived_probe *dp;

	if (path) {
		struct expr *arg = ast_expr(EXPR_STRING, pc->arg->loc);

		arg->str = path;
		pc->arg = arg;
	}
	dp = make_probe(x, &c, k);
	dp->path = path;
	dp->pid = pc && pc->arg && pc->arg->kind == EXPR_NUMBER ? pc->arg->num : 0;
	dp->function = str_arg(&c, "function");
	dp->library = str_arg(&c, "library");
	dp->provider = str_arg(&c, "provider");
	dp->mark = str_arg(&c, "mark");
	dp->statement = str_arg(&c, "statement");
	dp->is_return = probes_comp_named(&c, "return") != NULL;
	if (k == PROBE_PROCESS_SYSCALL)	/* the module's typed probe needs its arguments */
		dp->tp = sys_tracepoint(x->sm, "raw_syscalls", dp->is_return ? "sys_exit" : "sys_enter");
	if (probe_kind_info(k)->class == PCLASS_UPROBE)
		return probes_user_resolve(x->sm, dp, &c, x->optional);
	return 1;
}

/* process("/lib*" "/libc.so.6"): one probe per file the pattern matches. */
static int process_glob(struct expand *x, struct vec *comps, enum probe_kind k,
			struct probe_comp *pc)
{
	glob_t g;
	int n = 0;

	manifest_unsure("a process path is a pattern");	/* files may come and go */
	if (glob(pc->arg->str, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			struct stat st;

			if (stat(g.gl_pathv[i], &st) == 0 && S_ISREG(st.st_mode))
				n += process_probe(x, comps, k, arena_strdup(g.gl_pathv[i])) > 0;
		}
		globfree(&g);
	}
	if (!n && !x->optional) {
		sema_error(pc->arg->loc, x->sm, "no file matches '%s'", pc->arg->str);
		return -1;
	}
	return n;
}

/* process, process("PATH") or process(PID), then what the family needs. */
static int build_process(struct expand *x, struct vec *comps, enum probe_kind k)
{
	struct probe_comp *pc = probes_comp_named(comps, "process");
	const char *path;

	if (pc && pc->arg && pc->arg->kind == EXPR_NUMBER && pc->arg->num <= 0) {
		sema_error(pc->arg->loc, x->sm, "a process id must be positive");
		return -1;
	}
	if (!pc || !pc->arg || pc->arg->kind != EXPR_STRING)
		return process_probe(x, comps, k, NULL);
	if (has_wildcard(pc->arg->str))
		return process_glob(x, comps, k, pc);
	path = sys_find_executable(pc->arg->str);
	if (!path) {
		if (x->optional)
			return 0;
		sema_error(pc->arg->loc, x->sm, strchr(pc->arg->str, '/')
			   ? "no such file: '%s'" : "no executable '%s' in PATH", pc->arg->str);
		return -1;
	}
	return process_probe(x, comps, k, path);
}

/*
 * stap 4.8's limits on kprobe-class points: .maxactive(N) within
 * [0,32767]; .absolute (an address) only in guru mode or a tapset.
 */
static bool kprobe_comps_ok(struct expand *x, struct vec *comps)
{
	struct probe_comp *max = probes_comp_named(comps, "maxactive");
	struct probe_comp *abs = probes_comp_named(comps, "absolute");

	if (max && (max->arg->num < 0 || max->arg->num > 32767)) {
		sema_error(max->arg->loc, x->sm, "maxactive value out of range [0,32767]");
		return false;
	}
	if (abs && !x->sm->s->guru && !(abs->loc.src && abs->loc.src->is_tapset)) {
		if (sema_error(abs->loc, x->sm, "absolute statement probe in unprivileged script; "
			       "need pmstap -g"))
			diag_hint("an address may be anywhere in the kernel: only guru mode probes it");
		return false;
	}
	return true;
}

static int build(struct expand *x, const struct pattern *p, struct vec *comps)
{
	struct derived_probe *dp;

	switch (probe_kind_info(p->kind)->class) {
	case PCLASS_TIMER:
		return build_timer(x, comps);
	case PCLASS_SAMPLE:
		if (p->kind == PROBE_KDATA) {
			if (!probes_kdata_symbol_ok(x->sm, comps, x->optional))
				return x->optional ? 0 : -1;
			probes_kdata_resolve(make_probe(x, comps, p->kind), comps);
			return 1;
		}
		if (p->kind != PROBE_PERF)
			break;	/* timer.profile: nothing to resolve */
		return build_perf(x, comps);
	case PCLASS_TRACEPOINT:
		return build_trace(x, comps);
	case PCLASS_KPROBE:
		if (!kprobe_comps_ok(x, comps))
			return -1;
		if (p->kind == PROBE_KFUNC)
			return build_kfunc(x, comps);
		return build_kstatement(x, comps);
	case PCLASS_PROC:
	case PCLASS_UPROBE:
		return build_process(x, comps, p->kind);
	case PCLASS_PROCFS:
		return probes_procfs_resolve(x->sm, make_probe(x, comps, p->kind), comps);
	case PCLASS_NETFILTER:
		return probes_netfilter_resolve(x->sm, make_probe(x, comps, p->kind), comps);
	case PCLASS_LIFECYCLE:
		break;
	}
	/* begin(N) and the like: the point is the probe */
	dp = make_probe(x, comps, p->kind);
	dp->priority = ((struct probe_comp *)VEC_AT(comps, 0))->arg
		       ? ((struct probe_comp *)VEC_AT(comps, 0))->arg->num : 0;
	return 1;
}

static bool arg_fits(char want, const struct expr *arg)
{
	if (!want || !arg)
		return !want && !arg;
	if (want == 'a')
		return true;
	return want == (arg->kind == EXPR_NUMBER ? 'n' : 's');
}

static bool pattern_matches(const struct pattern *p, struct vec *comps)
{
	if (p->n != comps->len)
		return false;
	for (int i = 0; i < p->n; i++) {
		struct probe_comp *c = VEC_AT(comps, i);

		if (fnmatch(c->name, p->comps[i].name, 0) != 0 || !arg_fits(p->comps[i].arg, c->arg))
			return false;
	}
	return true;
}

/* The point's components renamed to what pattern P calls them (wildcards resolved). */
static struct vec concrete_comps(const struct pattern *p, struct vec *comps)
{
	struct vec c = { 0 };

	for (int i = 0; i < comps->len; i++) {
		struct probe_comp *pc = ARENA_NEW(struct probe_comp);

		*pc = *(struct probe_comp *)VEC_AT(comps, i);
		pc->name = p->comps[i].name;
		vec_push(&c, pc);
	}
	return c;
}

static bool names_have_wildcards(struct vec *comps)
{
	for (int i = 0; i < comps->len; i++)
		if (has_wildcard(((struct probe_comp *)VEC_AT(comps, i))->name))
			return true;
	return false;
}

/*
 * -1: no family has this shape; else how many probes it made.  A family
 * that a wildcard in the point's names chose (process.* choosing
 * process.plt, which needs a program) is dropped quietly where it cannot
 * resolve, as stap does.
 */
static int expand_builtin(struct expand *x, struct probe_point *pt)
{
	bool optional = x->optional, wild = names_have_wildcards(&pt->comps);
	int total = -1;

	init_patterns();
	for (int i = 0; i < patterns.len; i++) {
		const struct pattern *p = VEC_AT(&patterns, i);
		struct vec comps;
		int n;

		if (!pattern_matches(p, &pt->comps))
			continue;
		comps = concrete_comps(p, &pt->comps);
		x->optional = optional || wild;
		n = build(x, p, &comps);
		x->optional = optional;
		total = total < 0 ? (n < 0 ? 0 : n) : total + (n < 0 ? 0 : n);
		if (n < 0)
			x->reported = true;
	}
	return total;
}

/* ---- aliases ---- */

/* Does alias name NAME match the first comps of PT: all of them (FULL), or a prefix? */
static bool alias_name_matches(struct probe_point *name, struct probe_point *pt, bool full)
{
	int n = name->comps.len;

	if (full ? n != pt->comps.len : n >= pt->comps.len)
		return false;
	for (int i = 0; i < n; i++) {
		struct probe_comp *a = VEC_AT(&name->comps, i), *u = VEC_AT(&pt->comps, i);

		if (u->arg || a->arg || fnmatch(u->name, a->name, 0) != 0)
			return false;
	}
	return true;
}

/* TARGET with the components of PT past the first SKIP appended. */
static struct probe_point *with_suffix(struct probe_point *target, struct probe_point *pt, int skip)
{
	struct probe_point *np = ARENA_NEW(struct probe_point);

	*np = *target;
	np->comps = (struct vec){ 0 };
	for (int i = 0; i < target->comps.len; i++)
		vec_push(&np->comps, VEC_AT(&target->comps, i));
	for (int i = skip; i < pt->comps.len; i++)
		vec_push(&np->comps, VEC_AT(&pt->comps, i));
	return np;
}

static bool block_is_empty(const struct stmt *s)
{
	return !s || (s->kind == STMT_BLOCK && !s->body.len);
}

/*
 * The body of a probe through alias A: the prologue ("=" block), the
 * probe's own body, then the epilogue ("+=" block, or the second block of
 * "= POINTS { prologue }, { epilogue }").
 */
static struct stmt *wrap_body(struct probe_alias *a, struct stmt *inner)
{
	struct stmt *before = a->epilogue ? NULL : a->body;
	struct stmt *after = a->epilogue ? a->body : a->body2;
	struct stmt *b;

	if (block_is_empty(before) && block_is_empty(after))
		return inner;
	b = ast_stmt(STMT_BLOCK, inner ? inner->loc : a->loc);
	if (!block_is_empty(before))
		vec_push(&b->body, before);
	if (inner)
		vec_push(&b->body, inner);
	if (!block_is_empty(after))
		vec_push(&b->body, after);
	return b;
}

static bool in_chain(struct expand *x, struct probe_alias *a)
{
	for (int i = 0; i < x->aliases.len; i++)
		if (VEC_AT(&x->aliases, i) == a)
			return true;
	return false;
}

/* pn() of the probes an outermost alias makes: its NAME and what of PT follows it. */
static const char *alias_pn(struct probe_point *name, struct probe_point *pt, int skip)
{
	struct vec comps = { 0 };

	for (int i = 0; i < name->comps.len; i++)
		vec_push(&comps, VEC_AT(&name->comps, i));
	for (int i = skip; skip && i < pt->comps.len; i++)
		vec_push(&comps, VEC_AT(&pt->comps, i));
	return probes_point_text(&comps);
}

static int expand_one_alias(struct expand *x, struct probe_alias *a, struct probe_point *pt,
			    int skip, struct probe_point *name)
{
	struct stmt *body = x->body;
	const char *pn = x->pn;
	int total = 0;

	if (in_chain(x, a)) {
		if (sema_error(pt->loc, x->sm, "probe alias '%s' refers to itself",
			       probes_point_text(&((struct probe_point *)VEC_AT(&a->names, 0))->comps)))
			diag_note(a->loc, "the alias is defined here");
		x->reported = true;
		return 0;
	}
	sema_pull_file(x->sm, a->file);
	if (!x->aliases.len)
		x->pn = alias_pn(name, pt, skip);
	vec_push(&x->aliases, a);
	x->body = wrap_body(a, body);
	for (int i = 0; i < a->points.len; i++) {
		struct probe_point *t = VEC_AT(&a->points, i);
		int n = expand_point(x, skip ? with_suffix(t, pt, skip) : t);

		total += n;
		if (n > 0 && t->sufficient)
			break;
	}
	x->body = body;
	x->pn = pn;
	x->aliases.len--;
	return total;
}

/* -1: no alias name matches; else how many probes the matching aliases made. */
static int expand_aliases(struct expand *x, struct probe_point *pt, bool full)
{
	const char *root = ((struct probe_comp *)VEC_AT(&pt->comps, 0))->name;
	struct vec *names = has_wildcard(root) ? &x->sm->alias_names
					       : hmap_get(&x->sm->alias_roots, root);
	int total = -1;

	for (int i = 0; names && i < names->len; i++) {
		struct alias_name *an = VEC_AT(names, i);

		if (!alias_name_matches(an->name, pt, full))
			continue;
		if (total < 0)
			total = 0;
		total += expand_one_alias(x, an->alias, pt, full ? 0 : an->name->comps.len,
					  an->name);
	}
	return total;
}

/* ---- no match: say what was meant ---- */

static const char *arg_shape(char arg)
{
	return arg == 'n' ? "(N)" : arg == 's' ? "(\"...\")" : arg == 'a' ? "(\"...\")" : "";
}

static char *pattern_shape(const struct pattern *p)
{
	char *t = NULL;

	for (int i = 0; i < p->n; i++) {
		char *one = arena_printf("%s%s", p->comps[i].name, arg_shape(p->comps[i].arg));

		t = t ? arena_printf("%s.%s", t, one) : one;
	}
	return t;
}

static char *point_shape(struct vec *comps)
{
	char *t = NULL;

	for (int i = 0; i < comps->len; i++) {
		struct probe_comp *c = VEC_AT(comps, i);
		char *one = arena_printf("%s%s", c->name,
					 !c->arg ? "" : c->arg->kind == EXPR_NUMBER ? "(N)" : "(\"...\")");

		t = t ? arena_printf("%s.%s", t, one) : one;
	}
	return t ? t : arena_strdup("");
}

static bool same_names(const struct pattern *p, struct vec *comps)
{
	if (p->n != comps->len)
		return false;
	for (int i = 0; i < p->n; i++)
		if (fnmatch(((struct probe_comp *)VEC_AT(comps, i))->name, p->comps[i].name, 0))
			return false;
	return true;
}

/* The family or alias most like PT, as a shape like kernel.function("..."). */
static const char *closest_shape(struct sema *sm, struct probe_point *pt)
{
	char *mine = point_shape(&pt->comps);
	int limit = (int)strlen(mine) / 4 + 1, best_d = limit + 1;
	const char *best = NULL;
	struct vec names = sema_library_alias_names(sm);

	for (int i = 0; i < patterns.len; i++) {
		const struct pattern *p = VEC_AT(&patterns, i);
		char *shape = pattern_shape(p);
		int d = same_names(p, &pt->comps) ? 0 : diag_distance(mine, shape);

		if (d < best_d) {
			best_d = d;
			best = shape;
		}
	}
	for (int i = 0; i < sm->aliases.len; i++) {
		struct probe_alias *a = VEC_AT(&sm->aliases, i);

		for (int j = 0; j < a->names.len; j++)
			vec_push(&names, point_shape(&((struct probe_point *)VEC_AT(&a->names, j))->comps));
	}
	for (int i = 0; i < names.len; i++) {
		int d = diag_distance(mine, VEC_AT(&names, i));

		if (d > 0 && d < best_d) {
			best_d = d;
			best = VEC_AT(&names, i);
		}
	}
	return best;
}

/* "what can follow 'kernel'": names at the first level PT matches nothing. */
static void continuation_hint(struct probe_point *pt)
{
	int depth = 0;
	char *list = NULL, *prefix = NULL;

	for (int i = 0; i < patterns.len; i++) {
		const struct pattern *p = VEC_AT(&patterns, i);
		int k = 0;

		while (k < p->n && k < pt->comps.len &&
		       !fnmatch(((struct probe_comp *)VEC_AT(&pt->comps, k))->name, p->comps[k].name, 0))
			k++;
		if (k > depth)
			depth = k;
	}
	for (int i = 0; i < patterns.len; i++) {
		const struct pattern *p = VEC_AT(&patterns, i);
		int k = 0;

		while (k < depth && k < p->n &&
		       !fnmatch(((struct probe_comp *)VEC_AT(&pt->comps, k))->name, p->comps[k].name, 0))
			k++;
		if (k < depth || k >= p->n)
			continue;
		if (!list || !strstr(arena_printf(", %s,", list), arena_printf(", %s,", p->comps[k].name)))
			list = list ? arena_printf("%s, %s", list, p->comps[k].name)
				    : arena_strdup(p->comps[k].name);
	}
	for (int k = 0; k < depth; k++)
		prefix = prefix ? arena_printf("%s.%s", prefix,
					       ((struct probe_comp *)VEC_AT(&pt->comps, k))->name)
				: arena_strdup(((struct probe_comp *)VEC_AT(&pt->comps, k))->name);
	if (!depth)
		diag_hint("probe point families: %s, or an alias from the tapsets", list);
	else if (list)
		diag_hint("'%s' can be followed by: %s", prefix, list);
}

/* "no match for probe point", and where an alias led to it; false when not reported. */
static bool no_match_error(struct expand *x, struct probe_point *pt)
{
	if (!sema_error(pt->loc, x->sm, "no match for probe point '%s'",
			probes_point_text(&pt->comps)))
		return false;
	if (x->aliases.len)
		diag_note(x->orig->loc, "while expanding probe point '%s'",
			  probes_point_text(&x->orig->comps));
	return true;
}

static void no_match(struct expand *x, struct probe_point *pt)
{
	const char *near;

	if (!no_match_error(x, pt))
		return;
	near = closest_shape(x->sm, pt);
	if (near)
		diag_hint("did you mean '%s'?", near);
	else
		continuation_hint(pt);
}

/* ---- expansion ---- */

static bool is_builtin_root(const char *name)
{
	init_patterns();
	for (int i = 0; i < patterns.len; i++)
		if (strcmp(((struct pattern *)VEC_AT(&patterns, i))->comps[0].name, name) == 0)
			return true;
	return false;
}

static int match_point(struct expand *x, struct probe_point *pt)
{
	struct sema *sm = x->sm;
	const char *root = ((struct probe_comp *)VEC_AT(&pt->comps, 0))->name;
	int n;

	if (!is_builtin_root(root))
		sema_need_aliases(sm, pt);
	n = expand_aliases(x, pt, true);
	if (n < 0)
		n = expand_builtin(x, pt);
	if (n < 0 && is_builtin_root(root)) {
		sema_need_aliases(sm, pt);
		n = expand_aliases(x, pt, true);
	}
	if (n < 0)
		n = expand_aliases(x, pt, false);
	return n;
}

static void empty_expansion(struct expand *x, struct probe_point *pt)
{
	if (!no_match_error(x, pt))
		return;
	if (x->missing)
		diag_hint("every point it stands for is optional ('?') and matched nothing here: "
			  "module %s is not loaded (/proc/kallsyms) and there is no %s.ko under "
			  "/lib/modules/%s", x->missing, x->missing, sysroot_kernel_release());
	else
		diag_hint("every point it stands for is optional ('?') and matched nothing here");
}

static void dropped_note(struct expand *x, struct probe_point *pt)
{
	if (x->sm->s->verbose)
		diag_note(pt->loc, "optional probe point '%s' matched nothing; dropped",
			  probes_point_text(&pt->comps));
}

/* Expand PT (the probe's own point, or what an alias stands for); returns the count made. */
static int expand_point(struct expand *x, struct probe_point *pt)
{
	bool saved_opt = x->optional, saved_reported = x->reported;
	struct expr *saved_cond = x->cond;
	int n, elided;

	x->optional = saved_opt || pt->optional;
	x->reported = false;
	x->cond = and_cond(saved_cond, pt->cond);
	elided = x->sm->elided_points;
	n = match_point(x, pt);
	if (x->reported || (n == 0 && x->sm->elided_points > elided))
		;	/* said already */
	else if (n < 0 && !x->optional)
		no_match(x, pt);
	else if (n == 0 && !x->optional)
		empty_expansion(x, pt);
	else if (n <= 0 && x->optional && !saved_opt)
		dropped_note(x, pt);
	x->reported = saved_reported || x->reported || (n <= 0 && !x->optional);
	x->optional = saved_opt;
	x->cond = saved_cond;
	return n < 0 ? 0 : n;
}

/* Derive P's concrete probes into the program. */
void probes_derive(struct sema *sm, struct probe *p)
{
	struct expand x = { .sm = sm, .probe = p, .body = p->body };

	for (int i = 0; i < p->points.len; i++) {
		struct probe_point *pt = VEC_AT(&p->points, i);
		int n;

		x.orig = pt;
		n = expand_point(&x, pt);
		if (n > 0 && pt->sufficient)
			break;
	}
}
