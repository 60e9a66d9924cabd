/*
 * test_types.c - pass 2: type inference, conflicts, symbols, probes.
 *
 * Each case parses a small script from a string and elaborates it against
 * a tapset directory this suite writes under /tmp, then checks the types
 * pass 2 inferred or the exact diagnostics it printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "unit.h"
#include "../../translator/diag.h"
#include "../../translator/lex.h"
#include "../../translator/parse.h"
#include "../../translator/program.h"
#include "../../translator/sema.h"
#include "../../translator/sema_int.h"
#include <dirent.h>

static struct session sess;
static char tapdir[64];
static char *diag_text;
static size_t diag_len;
static FILE *diag_f;

static const char tapset_ctx[] =
	"function execname:string () %{ /* pure */ STAP_RETURN(\"x\"); %}\n"
	"function tap_add:long (a:long, b:long) { return a + b }\n"
	"function tap_echo(v) { return v }\n"
	"function tap_broken() { return no_such_function_anywhere() }\n"
	"private function tap_secret:long () { return 42 }\n"
	"function tap_public:long () { return tap_secret() }\n"
	"global tap_counter\n"
	"function tap_bump:long () { tap_counter++; return tap_counter }\n";

static const char tapset_alias[] =
	"probe myset.one = begin { name = \"one\"; n = 1 }\n"
	"probe myset.two = end { name = \"two\"; n = 2 }\n"
	"probe other.after += begin { tail = 1 }\n"
	"probe myset.maybe = kernel.trace(\"no_such_system:no_such_event\") ? { name = \"maybe\" }\n";

static void write_file(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tapdir, name);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

static void setup_session(void)
{
	strcpy(tapdir, "/tmp/pmstap-test-types-XXXXXX");
	if (!mkdtemp(tapdir)) {
		perror("mkdtemp");
		exit(2);
	}
	write_file("ctx.stp", tapset_ctx);
	write_file("alias.stp", tapset_alias);
	memset(&sess, 0, sizeof(sess));
	sess.last_pass = 2;
	sess.kernel_release = "6.1.0";
	sess.arch = "x86_64";
	sess.runtime = "bpf";
	sess.privilege = "stapdev";
	if (access("/sys/kernel/tracing/events", F_OK) == 0)
		sess.tracefs = "/sys/kernel/tracing";
	vec_push(&sess.tapset_dirs, tapdir);
}

static void cleanup_session(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tapdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tapdir);
}

/* Parse and elaborate TEXT as script "t.stp"; diagnostics land in diag_text. */
static struct program *elab(const char *text)
{
	struct source *src = lex_source_from_string("t.stp", text);
	struct stapfile *file;
	struct program *prog;

	free(diag_text);
	diag_text = NULL;
	diag_f = open_memstream(&diag_text, &diag_len);
	diag_set_stream(diag_f);
	diag_reset();
	diag_suppress_warnings(false);
	file = parse_file(&sess, src);
	if (diag_error_count()) {
		fclose(diag_f);
		diag_set_stream(NULL);
		fprintf(stderr, "unexpected parse error:\n%s", diag_text);
		CU_FAIL_FATAL("the test script does not parse");
	}
	prog = sema_elaborate(&sess, file);
	fclose(diag_f);
	diag_set_stream(NULL);
	return prog;
}

/* The first line of the diagnostics. */
static const char *first_line(void)
{
	static char line[512];
	size_t n = strcspn(diag_text ? diag_text : "", "\n");

	snprintf(line, sizeof(line), "%.*s", (int)n, diag_text ? diag_text : "");
	return line;
}

static struct vardecl *global_named(struct program *p, const char *name)
{
	for (int i = 0; p && i < p->globals.len; i++) {
		struct vardecl *d = VEC_AT(&p->globals, i);

		if (!strcmp(d->name, name))
			return d;
	}
	return NULL;
}

static struct vardecl *local_named(struct vec *locals, const char *name)
{
	for (int i = 0; i < locals->len; i++) {
		struct vardecl *d = VEC_AT(locals, i);

		if (!strcmp(d->name, name))
			return d;
	}
	return NULL;
}

static struct vardecl *probe_local(struct program *p, int probe, const char *name)
{
	if (!p || probe >= p->probes.len)
		return NULL;
	return local_named(&((struct derived_probe *)VEC_AT(&p->probes, probe))->locals, name);
}

static struct func *func_named(struct program *p, const char *name)
{
	for (int i = 0; p && i < p->funcs.len; i++) {
		struct func *f = VEC_AT(&p->funcs, i);

		if (!strcmp(f->name, name))
			return f;
	}
	return NULL;
}

#define ASSERT_TYPE(d, t) do { \
	CU_ASSERT_PTR_NOT_NULL_FATAL(d); \
	CU_ASSERT_EQUAL((d)->type, (t)); \
} while (0)

#define ASSERT_DIAG(text) do { \
	CU_ASSERT_STRING_EQUAL(diag_text ? diag_text : "", text); \
	if (strcmp(diag_text ? diag_text : "", text)) \
		fprintf(stderr, "\n--- got:\n%s--- want:\n%s", diag_text, text); \
} while (0)

/* ---- inference ---- */

static void test_literal_long(void)
{
	struct program *p = elab("probe begin { x = 5; println(x) }");

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	ASSERT_TYPE(probe_local(p, 0, "x"), TYPE_LONG);
}

static void test_concat_string(void)
{
	struct program *p = elab("probe begin { s = \"a\" . \"b\"; t = s; println(t) }");

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	ASSERT_TYPE(probe_local(p, 0, "s"), TYPE_STRING);
	ASSERT_TYPE(probe_local(p, 0, "t"), TYPE_STRING);
}

static void test_array_keys(void)
{
	struct program *p = elab("global a\nprobe begin { a[\"k\", 3] = \"v\" }\n"
				 "probe end { println(a[\"k\", 3]) }");
	struct vardecl *a = global_named(p, "a");

	ASSERT_TYPE(a, TYPE_STRING);
	CU_ASSERT_EQUAL(a->arity, 2);
	CU_ASSERT_EQUAL(a->key_types[0], TYPE_STRING);
	CU_ASSERT_EQUAL(a->key_types[1], TYPE_LONG);
}

static void test_stats(void)
{
	struct program *p = elab("global s, t\nprobe begin { s <<< 1; t[\"x\"] <<< 2 }\n"
				 "probe end { println(@count(s) + @sum(t[\"x\"])) }");
	struct vardecl *t = global_named(p, "t");

	ASSERT_TYPE(global_named(p, "s"), TYPE_STATS);
	ASSERT_TYPE(t, TYPE_STATS);
	CU_ASSERT_EQUAL(t->key_types[0], TYPE_STRING);
}

static void test_foreach_keys(void)
{
	struct program *p = elab("global a\nprobe begin { a[\"x\", 1] = 2 }\n"
				 "probe end { foreach ([k, n] in a) printf(\"%s %d\\n\", k, n) }");

	ASSERT_TYPE(probe_local(p, 1, "k"), TYPE_STRING);
	ASSERT_TYPE(probe_local(p, 1, "n"), TYPE_LONG);
}

static void test_function_signature(void)
{
	struct program *p = elab("function f(a, b) { return a . b }\n"
				 "probe begin { println(f(\"x\", \"y\")) }");
	struct func *f = func_named(p, "f");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(f->ret_type, TYPE_STRING);
	ASSERT_TYPE((struct vardecl *)VEC_AT(&f->params, 0), TYPE_STRING);
}

/* The return type flows back into a parameter through a second call. */
static void test_backward_inference(void)
{
	struct program *p = elab("function id(v) { return v }\n"
				 "probe begin { x = id(y); y = 1; println(x + 0) }");
	struct func *f = func_named(p, "id");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(f->ret_type, TYPE_LONG);
	ASSERT_TYPE(probe_local(p, 0, "y"), TYPE_LONG);
}

/* Only printf's %d says what g holds. */
static void test_printf_drives_type(void)
{
	struct program *p = elab("global g\nprobe begin { printf(\"%d\\n\", g[1]) }\n"
				 "probe end { g[2] = g[3] }");

	ASSERT_TYPE(global_named(p, "g"), TYPE_LONG);
}

static void test_void_function(void)
{
	struct program *p = elab("function f() { println(1) }\nprobe begin { f() }");
	struct func *f = func_named(p, "f");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(f->ret_type, TYPE_VOID);
}

static void test_in_keys(void)
{
	struct program *p = elab("global a\nprobe begin { a[1] = 1 }\n"
				 "probe end { k = 5; if (k in a) println(k) }");

	ASSERT_TYPE(probe_local(p, 1, "k"), TYPE_LONG);
	CU_ASSERT_EQUAL(global_named(p, "a")->key_types[0], TYPE_LONG);
}

static void test_tapset_pull(void)
{
	struct program *p = elab("probe begin { println(tap_add(1, 2) + tap_bump()) }");

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_PTR_NOT_NULL(func_named(p, "tap_add"));
	CU_ASSERT_PTR_NOT_NULL(func_named(p, "tap_bump"));
	CU_ASSERT_PTR_NULL(func_named(p, "tap_echo"));
	ASSERT_TYPE(global_named(p, "tap_counter"), TYPE_LONG);
	CU_ASSERT_EQUAL(diag_error_count(), 0);
}

static void test_tapset_param_inferred(void)
{
	struct program *p = elab("probe begin { println(tap_echo(\"s\")) }");
	struct func *f = func_named(p, "tap_echo");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(f->ret_type, TYPE_STRING);
}

static void test_tracepoint_fields(void)
{
	struct program *p;

	if (!sess.tracefs)
		return;
	p = elab("probe kernel.trace(\"sched:sched_switch\") { c = $prev_comm; n = $next_pid; println(c . sprint(n)) }");
	ASSERT_TYPE(probe_local(p, 0, "c"), TYPE_STRING);
	ASSERT_TYPE(probe_local(p, 0, "n"), TYPE_LONG);
	CU_ASSERT_PTR_NOT_NULL(((struct derived_probe *)VEC_AT(&p->probes, 0))->tp);
}

/* @defined($nope) folds to 0, so the other branch is all that remains. */
static void test_defined_folds(void)
{
	struct program *p;
	struct derived_probe *dp;

	if (!sess.tracefs)
		return;
	p = elab("probe kernel.trace(\"sched:sched_switch\") { x = @defined($nope) ? $nope : $prev_pid; println(x) }");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	dp = VEC_AT(&p->probes, 0);
	ASSERT_TYPE(probe_local(p, 0, "x"), TYPE_LONG);
	CU_ASSERT_EQUAL(((struct stmt *)VEC_AT(&dp->body->body, 0))->expr->right->kind, EXPR_TARGET);
}

/* ---- probes ---- */

static void test_alias_wildcard(void)
{
	struct program *p = elab("probe myset.* { println(name, n) }");

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(p->probes.len, 2);	/* one and two; maybe stands for an optional point that is missing */
	ASSERT_TYPE(probe_local(p, 0, "name"), TYPE_STRING);
	ASSERT_TYPE(probe_local(p, 1, "n"), TYPE_LONG);
}

static void test_alias_epilogue_order(void)
{
	struct program *p = elab("probe other.after { tail = 5; println(tail) }\nprobe end { }");
	struct derived_probe *dp;
	struct stmt *first;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	dp = VEC_AT(&p->probes, 0);
	CU_ASSERT_STRING_EQUAL(dp->point, "begin");
	first = VEC_AT(&dp->body->body, 0);	/* the probe's own body comes first */
	CU_ASSERT_EQUAL_FATAL(first->kind, STMT_BLOCK);
	CU_ASSERT_EQUAL(((struct stmt *)VEC_AT(&first->body, 0))->expr->right->num, 5);
	CU_ASSERT_EQUAL(dp->aliases.len, 1);
}

static void test_optional_dropped(void)
{
	struct program *p = elab("probe myset.maybe ?, begin { println(1) }");

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(p->probes.len, 1);
	CU_ASSERT_STRING_EQUAL(((struct derived_probe *)VEC_AT(&p->probes, 0))->point, "begin");
}

static void test_timer_interval(void)
{
	struct program *p = elab("probe timer.ms(250) { println(1) } probe timer.hz(100) { println(2) }");
	struct derived_probe *a, *b;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	a = VEC_AT(&p->probes, 0);
	b = VEC_AT(&p->probes, 1);
	CU_ASSERT_EQUAL(a->kind, PROBE_TIMER);
	CU_ASSERT_EQUAL(a->interval_ns, 250000000);
	CU_ASSERT_EQUAL(b->interval_ns, 10000000);
}

static void test_overload_chain(void)
{
	struct program *p = elab("function f(x) { if (x) next; return 1 }\n"
				 "function f(x) :2 { return 2 }\n"
				 "probe begin { println(f(0)) }");
	struct overload *o;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL_FATAL(p->overloads.len, 1);
	o = VEC_AT(&p->overloads, 0);
	CU_ASSERT_EQUAL(o->funcs.len, 2);
	CU_ASSERT_EQUAL(((struct func *)VEC_AT(&o->funcs, 1))->priority, 2);
}

/* ---- diagnostics ---- */

static void test_conflict_note(void)
{
	struct program *p = elab("probe begin {\n  x = 1\n  x = \"s\"\n  println(x)\n}");

	CU_ASSERT_PTR_NULL(p);
	ASSERT_DIAG("t.stp:3:3: error: type mismatch: 'x' is a string here but a long at t.stp:2:3\n"
		    "  x = \"s\"\n"
		    "  ^\n"
		    "t.stp:2:3: note: 'x' became a long here\n"
		    "  x = 1\n"
		    "  ^\n");
}

static void test_operand_conflict(void)
{
	struct program *p = elab("probe begin { println(\"a\" + 1) }");

	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_STRING_EQUAL(first_line(),
		"t.stp:1:23: error: type mismatch: the operand of '+' is a string but must be a long");
}

static void test_compare_conflict(void)
{
	struct program *p = elab("probe begin { if (1 < \"a\") println(1) }");

	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_STRING_EQUAL(first_line(),
		"t.stp:1:21: error: type mismatch: comparing a long and a string");
}

static void test_ternary_conflict(void)
{
	struct program *p = elab("probe begin { println(1 ? 2 : \"x\") }");

	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_STRING_EQUAL(first_line(),
		"t.stp:1:25: error: type mismatch: the branches of '?:' are a long and a string");
}

static void test_cannot_infer(void)
{
	struct program *p = elab("global g\nprobe begin { delete g }");

	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_STRING_EQUAL(first_line(), "t.stp:1:8: error: cannot infer the type of 'g'");
}

static void test_arity_conflict(void)
{
	struct program *p = elab("global a\nprobe begin { a[1] = 1; a[1, 2] = 2 }");

	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_STRING_EQUAL(first_line(),
		"t.stp:2:25: error: 'a' is indexed with 2 keys here but with 1 at t.stp:2:15");
}

static void test_unresolved_hint(void)
{
	struct program *p = elab("probe begin { println(tap_ad(1, 2)) }");

	CU_ASSERT_PTR_NULL(p);
	ASSERT_DIAG("t.stp:1:23: error: unresolved function 'tap_ad'\n"
		    "probe begin { println(tap_ad(1, 2)) }\n"
		    "                      ^\n"
		    "hint: did you mean 'tap_add'?\n");
}

static void test_private_invisible(void)
{
	struct program *p = elab("probe begin { println(tap_secret()) }");

	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_EQUAL(strncmp(first_line(), "t.stp:1:23: error: function 'tap_secret' is private to /tmp/", 60), 0);
}

static void test_private_visible_in_file(void)
{
	struct program *p = elab("probe begin { println(tap_public()) }");

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_PTR_NOT_NULL(func_named(p, "tap_secret"));
}

static void test_unresolved_array(void)
{
	struct program *p = elab("probe begin { x[1] = 2 }");

	CU_ASSERT_PTR_NULL(p);
	ASSERT_DIAG("t.stp:1:15: error: unresolved array 'x'\n"
		    "probe begin { x[1] = 2 }\n"
		    "              ^\n"
		    "hint: arrays must be declared with 'global x'\n");
}

static void test_format_mismatch(void)
{
	struct program *p = elab("probe begin { printf(\"%s=%d\\n\", \"a\", \"b\") }");

	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_STRING_EQUAL(first_line(),
		"t.stp:1:38: error: type mismatch: '%d' in the format needs a long, but argument 3 is a string");
}

static void test_format_count(void)
{
	struct program *p = elab("probe begin { printf(\"%d %d\\n\", 1) }");

	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_STRING_EQUAL(first_line(),
		"t.stp:1:15: error: too few arguments for the format: it needs 2, 1 given");
}

static void test_bad_regex(void)
{
	struct program *p = elab("probe begin { if (\"a\" =~ \"[z\") println(1) }");

	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_PTR_NOT_NULL(strstr(first_line(),
		"t.stp:1:26: error: invalid regular expression \"[z\": "));
}

static void test_stats_as_value(void)
{
	struct program *p = elab("global s\nprobe begin { s <<< 1; println(s) }");

	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_STRING_EQUAL(first_line(),
		"t.stp:2:32: error: statistics have no value of their own; use @count, @sum, @min, @max, @avg or @variance");
}

static void test_void_as_value(void)
{
	struct program *p = elab("function f() { println(1) }\nprobe begin { x = f(); println(x) }");

	CU_ASSERT_PTR_NULL(p);
	ASSERT_DIAG("t.stp:2:19: error: 'f' returns no value\n"
		    "probe begin { x = f(); println(x) }\n"
		    "                  ^\n");
}

static void test_unused_tapset_errors_silent(void)
{
	/* tap_broken calls a function nobody defines, but nobody calls tap_broken */
	struct program *p = elab("probe begin { println(tap_add(1, 1)) }");

	CU_ASSERT_PTR_NOT_NULL(p);
	ASSERT_DIAG("");
}

static void test_no_match_hint(void)
{
	struct program *p = elab("probe timer.ms { }");

	CU_ASSERT_PTR_NULL(p);
	ASSERT_DIAG("t.stp:1:7: error: no match for probe point 'timer.ms'\n"
		    "probe timer.ms { }\n"
		    "      ^\n"
		    "hint: did you mean 'timer.ms(N)'?\n");
}

static void test_unused_warnings(void)
{
	struct program *p = elab("global g\nprobe begin { x = 1; println(1) }");

	CU_ASSERT_PTR_NOT_NULL(p);
	CU_ASSERT_EQUAL(diag_warning_count(), 2);
	CU_ASSERT_PTR_NULL(probe_local(p, 0, "x"));	/* elided with its assignment */
	CU_ASSERT_PTR_NULL(global_named(p, "g"));
}

static void test_warnings_suppressed(void)
{
	struct source *src = lex_source_from_string("t.stp", "global g\nprobe begin { x = 1; println(1) }");
	struct stapfile *file;

	free(diag_text);
	diag_text = NULL;
	diag_f = open_memstream(&diag_text, &diag_len);
	diag_set_stream(diag_f);
	diag_reset();
	diag_suppress_warnings(true);
	file = parse_file(&sess, src);
	CU_ASSERT_PTR_NOT_NULL(sema_elaborate(&sess, file));
	fclose(diag_f);
	diag_set_stream(NULL);
	diag_suppress_warnings(false);
	CU_ASSERT_EQUAL(diag_warning_count(), 0);
	ASSERT_DIAG("");
}

static void test_key_conflict(void)
{
	struct program *p = elab("global a\nprobe begin { a[\"k\"] = 1 }\nprobe end { println(a[2]) }");

	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_STRING_EQUAL(first_line(),
		"t.stp:3:23: error: type mismatch: key 1 of 'a' is a long here but a string at t.stp:2:17");
}

static void test_tracefs_missing(void)
{
	const char *saved = sess.tracefs;
	struct program *p;

	sess.tracefs = NULL;
	p = elab("probe kernel.trace(\"sched:sched_switch\") { println(1) }");
	sess.tracefs = saved;
	CU_ASSERT_PTR_NULL(p);
	ASSERT_DIAG("t.stp:1:14: error: kernel.trace probes need tracefs, which is not mounted at /sys/kernel/tracing\n"
		    "probe kernel.trace(\"sched:sched_switch\") { println(1) }\n"
		    "             ^\n"
		    "hint: mount it: mount -t tracefs nodev /sys/kernel/tracing\n");
}

static void test_verbose_dropped_note(void)
{
	struct program *p;

	sess.verbose = 1;
	p = elab("probe kernel.function(\"no_such_function_xyz\") ?, begin { println(1) }");
	sess.verbose = 0;
	CU_ASSERT_PTR_NOT_NULL(p);
	CU_ASSERT_STRING_EQUAL(first_line(),
		"t.stp:1:7: note: optional probe point 'kernel.function(\"no_such_function_xyz\")' matched nothing; dropped");
}

/* Every name the parser sees in the project's tapsets, the quick scan finds too. */
static void scan_compare(struct sema *sm, struct stapfile *f, struct vec *aliases)
{
	for (int i = 0; i < f->funcs.len; i++) {
		const char *n = ((struct func *)VEC_AT(&f->funcs, i))->name;

		CU_ASSERT_PTR_NOT_NULL(hmap_get(&sm->lib_funcs, n));
		if (!hmap_get(&sm->lib_funcs, n))
			fprintf(stderr, "\nthe scan missed function %s in %s\n", n, f->src->name);
	}
	for (int i = 0; i < f->globals.len; i++) {
		const char *n = ((struct vardecl *)VEC_AT(&f->globals, i))->name;

		CU_ASSERT_PTR_NOT_NULL(hmap_get(&sm->lib_globals, n));
		if (!hmap_get(&sm->lib_globals, n))
			fprintf(stderr, "\nthe scan missed global %s in %s\n", n, f->src->name);
	}
	for (int i = 0; i < f->aliases.len; i++) {
		struct probe_alias *a = VEC_AT(&f->aliases, i);

		for (int j = 0; j < a->names.len; j++) {
			struct probe_point *pt = VEC_AT(&a->names, j);
			char *text = NULL;
			bool found = false;

			for (int k = 0; k < pt->comps.len; k++) {
				const char *c = ((struct probe_comp *)VEC_AT(&pt->comps, k))->name;

				text = text ? arena_printf("%s.%s", text, c) : arena_strdup(c);
			}
			for (int k = 0; k < aliases->len && !found; k++)
				found = !strcmp(VEC_AT(aliases, k), text);
			CU_ASSERT(found);
			if (!found)
				fprintf(stderr, "\nthe scan missed alias %s in %s\n", text, f->src->name);
		}
	}
}

static void test_library_scan_complete(void)
{
	struct session s2 = sess;
	struct sema sm = { .s = &s2 };
	struct dirent **list;
	struct vec aliases;
	int n, files = 0;

	s2.tapset_dirs = (struct vec){ 0 };
	vec_push(&s2.tapset_dirs, "tapset");
	n = scandir("tapset", &list, NULL, alphasort);
	if (n < 0)
		return;	/* not run from the repository */
	sema_load_library(&sm);
	aliases = sema_library_alias_names(&sm);
	diag_reset();
	for (int i = 0; i < n; i++) {
		size_t len = strlen(list[i]->d_name);

		if (len > 4 && !strcmp(list[i]->d_name + len - 4, ".stp")) {
			struct source *src = lex_source_read_file(arena_printf("tapset/%s", list[i]->d_name), true);

			if (src) {
				scan_compare(&sm, parse_file(&s2, src), &aliases);
				files++;
			}
		}
		free(list[i]);
	}
	free(list);
	CU_ASSERT(files > 0);
	CU_ASSERT(sema_library_files(&sm) >= files);	/* subdirectories count too */
}

static const struct unit_case cases[] = {
	{ "literal makes a long", test_literal_long },
	{ "concatenation makes a string", test_concat_string },
	{ "array keys and value", test_array_keys },
	{ "<<< makes statistics", test_stats },
	{ "foreach keys take key types", test_foreach_keys },
	{ "function signature from a call", test_function_signature },
	{ "types flow back through returns", test_backward_inference },
	{ "printf conversions give types", test_printf_drives_type },
	{ "function without return is void", test_void_function },
	{ "in gives key types", test_in_keys },
	{ "tapset functions and globals pulled in", test_tapset_pull },
	{ "tapset parameter inferred", test_tapset_param_inferred },
	{ "tracepoint field types", test_tracepoint_fields },
	{ "@defined folds a ternary", test_defined_folds },
	{ "alias wildcard", test_alias_wildcard },
	{ "alias epilogue runs after", test_alias_epilogue_order },
	{ "optional point dropped", test_optional_dropped },
	{ "timer intervals", test_timer_interval },
	{ "overload chain with next", test_overload_chain },
	{ "conflict with a note", test_conflict_note },
	{ "operand conflict", test_operand_conflict },
	{ "comparison conflict", test_compare_conflict },
	{ "ternary branches conflict", test_ternary_conflict },
	{ "cannot infer", test_cannot_infer },
	{ "array arity conflict", test_arity_conflict },
	{ "unresolved function hint", test_unresolved_hint },
	{ "private tapset function hidden", test_private_invisible },
	{ "private function visible in its file", test_private_visible_in_file },
	{ "unresolved array", test_unresolved_array },
	{ "printf argument type", test_format_mismatch },
	{ "printf argument count", test_format_count },
	{ "invalid regex", test_bad_regex },
	{ "statistics used as a value", test_stats_as_value },
	{ "void function used as a value", test_void_as_value },
	{ "unused tapset code is not checked", test_unused_tapset_errors_silent },
	{ "no match hint", test_no_match_hint },
	{ "unused variable warnings", test_unused_warnings },
	{ "warnings suppressed", test_warnings_suppressed },
	{ "array key conflict", test_key_conflict },
	{ "kernel.trace without tracefs", test_tracefs_missing },
	{ "-v notes a dropped optional point", test_verbose_dropped_note },
	{ "the tapset scan finds every declaration", test_library_scan_complete },
	{ NULL, NULL },
};

void unit_register(void)
{
	setup_session();
	atexit(cleanup_session);
	unit_add_suite("types", cases);
}
