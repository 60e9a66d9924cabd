/*
 * emit_bpf.c - kernel context: script.bpf.c.  Each derived probe that runs
 * in the kernel becomes a BPF program probe_N: a tracepoint program for
 * kernel.trace (reading the record at the offsets of its format), a raw
 * tracepoint program when the handler reads the tracepoint's arguments
 * ($prev...), a perf_event program for timer.profile and perf.*.  Loops
 * become bpf_loop() callbacks and unsorted foreach bpf_for_each_map_elem()
 * callbacks, so that the verifier sees them bounded.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/btf.h>
#include "emit_int.h"
#include "emit_kprobe.h"
#include "emit_netfilter.h"
#include "emit_proc.h"
#include "emit_uprobe.h"
#include "emit_dwarf.h"
#include "probe_kinds.h"
#include "probes_btf.h"
#include "probes_sys.h"
#include "sysroot.h"

bool emit_probe_in_kernel(const struct derived_probe *dp)
{
	return probe_context(dp, RUNTIME_BPF) == PCTX_KERNEL;
}

/* ---- tracepoints: fields or arguments ---------------------------------------- */

static struct tp_field *tp_field(const struct tracepoint *tp, const char *name)
{
	for (int i = 0; i < tp->fields.len; i++) {
		struct tp_field *f = VEC_AT(&tp->fields, i);

		if (strcmp(f->name, name) == 0)
			return f;
	}
	return NULL;
}

int emit_tp_arg_index(const struct tracepoint *tp, const char *name)
{
	for (int i = 0; i < tp->args.len; i++)
		if (strcmp(((struct tp_arg *)VEC_AT(&tp->args, i))->name, name) == 0)
			return i;
	return -1;
}

/* "$prev, $next" */
static const char *tp_arg_names(const struct tracepoint *tp)
{
	const char *list = "";

	for (int i = 0; i < tp->args.len; i++)
		list = arena_printf("%s%s$%s", list, i ? ", " : "",
				    ((struct tp_arg *)VEC_AT(&tp->args, i))->name);
	return tp->args.len ? list : "none";
}

struct tp_uses {
	const struct tracepoint *tp;
	struct expr *field;	/* a record field that is not also an argument, or $$vars */
	struct expr *arg;	/* an argument that is not also a field */
	bool any;		/* a $var of any kind */
};

static void find_tp_uses(struct expr *e, void *arg)
{
	struct tp_uses *u = arg;
	bool field, targ;

	if (e->kind != EXPR_TARGET)
		return;
	u->any = true;
	field = e->name[1] == '$' || tp_field(u->tp, e->name + 1);
	targ = e->name[1] != '$' && emit_tp_arg_index(u->tp, e->name + 1) >= 0;
	if (field && !targ && !u->field)
		u->field = e;
	if (targ && !field && !u->arg)
		u->arg = e;
	/* both, with members: only the argument is typed ($timer->function) */
	if (targ && field && e->comps.len && !u->arg)
		u->arg = e;
}

/*
 * Whether a kernel.trace handler reads the raw tracepoint's arguments
 * (a raw_tp program: a field with an argument's name then reads the
 * argument) or the record (a tp program); *NONE: it reads neither.
 */
static bool uses_raw_args(struct emitter *E, struct derived_probe *dp, bool *none)
{
	struct tp_uses u = { dp->tp, NULL, NULL, false };

	emit_walk_stmt(dp->body, find_tp_uses, &u);
	emit_walk_expr(dp->cond, find_tp_uses, &u);
	*none = !u.any;
	if (E->kmod && emit_kmod_syscall_tp(dp))
		return false;	/* the module builds a syscall's record (emit_kmod.c) */
	if (E->kmod && u.field) {	/* a module's tracepoint probe has the arguments only */
		diag_error(u.field->loc, "'%s' is a field of the tracepoint's record: on the kernel "
			   "runtime, a kernel.trace probe reads the tracepoint's arguments (as "
			   "stap's module runtime does)", u.field->name);
		diag_hint("the arguments of '%s': %s", dp->tp->name, tp_arg_names(dp->tp));
	} else if (u.field && u.arg) {
		diag_error(u.arg->loc, "'%s' is an argument of the raw tracepoint, but '%s' is a field "
			   "of its record: one probe can read only one of them", u.arg->name,
			   u.field->name);
		diag_hint("split the probe in two, or read '%s' through the arguments", u.field->name);
	}
	return E->kmod || u.arg != NULL;
}

/* Is RELEASE ("6.10.3-amd64") MAJOR.MINOR or later? */
static bool release_at_least(const char *release, int major, int minor)
{
	int ma = 0, mi = 0;

	if (sscanf(release, "%d.%d", &ma, &mi) < 1)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

/*
 * Does the kernel this compiles for give a raw tracepoint program its
 * attachment's cookie (Linux 6.10: raw_tracepoint.cookie in union
 * bpf_attr, and bpf_get_attach_cookie() in raw_tp programs)?  Asked once,
 * of its BTF (this kernel's or PMSTAP_SYSROOT's) and of the release -r
 * names.  PMSTAP_NO_RAWTP set: no, so probes that read no record keep
 * their perf-event tracepoints (a control for tests and the benchmark).
 */
static bool rawtp_cookies(struct emitter *E)
{
	int attr;
	uint32_t rt;

	if (E->rawtp_cookies >= 0)
		return E->rawtp_cookies;
	E->rawtp_cookies = 0;
	if (E->kmod || E->dyninst || getenv("PMSTAP_NO_RAWTP") ||
	    !release_at_least(E->s->kernel_release, 6, 10))
		return false;
	attr = btf_find(BTF_KIND_UNION, "bpf_attr", 0);
	rt = attr > 0 ? btf_member_type((uint32_t)attr, "raw_tracepoint") : 0;
	E->rawtp_cookies = rt && btf_member_type(btf_strip(rt), "cookie") != 0;
	return E->rawtp_cookies;
}

/*
 * A handler that reads nothing of its tracepoint is a raw_tp program
 * where the kernel has raw tracepoint cookies: handlers of the same C on
 * many tracepoints are then one program (emit_merge.c), and a raw
 * tracepoint link detaches in well under a millisecond, where a perf
 * event waits for RCU under the kernel's event_mutex (about 75 ms each:
 * README.md, "Scripts on every syscall").  The syscall tracepoints have
 * no raw tracepoint (their records stay, and their dispatch,
 * runtime/bpf/stp_syscall.bpf.h); nor has a tracepoint whose BTF says no
 * arguments.
 */
static bool raw_without_args(struct emitter *E, struct derived_probe *dp, bool none)
{
	return none && dp->tp->args.len > 0 && strcmp(dp->tp->system, "syscalls") != 0 &&
	       rawtp_cookies(E);
}

/* ---- $vars -------------------------------------------------------------------------- */

static const char *int_ctype(int size, bool is_signed)
{
	switch (size) {
	case 1: return is_signed ? "int8_t" : "uint8_t";
	case 2: return is_signed ? "int16_t" : "uint16_t";
	case 4: return is_signed ? "int32_t" : "uint32_t";
	default: return "int64_t";
	}
}

/* A number of SIZE bytes at OFF of the record: field NAME (its byte offset said by name). */
static const char *record_long(int off, int size, bool is_signed, const char *name)
{
	bool direct = off >= 8 && (size == 1 || size == 2 || size == 4 || size == 8) &&
		      off % size == 0;

	if (direct && size == 8)	/* a long as it is: nothing to extend */
		return arena_printf("(int64_t)stp_ctx_load(ctx, %d /* %s */, 64)", off, name);
	if (direct)
		return arena_printf("(int64_t)(%s)stp_ctx_load(ctx, %d /* %s */, %d)",
				    int_ctype(size, is_signed), off, name, size * 8);
	return arena_printf("stp_tp_read(ctx, %d /* %s */, %d, %d)", off, name, size, is_signed);
}

static const char *field_elem(struct emitter *E, struct expr *e, struct tp_field *f)
{
	struct target_comp *tc = VEC_AT(&e->comps, 0);
	int n = f->array_len > 0 ? f->array_len : 1, es = f->size / n;
	const char *i, *t;
	int site;

	if (tc->kind == COMP_INDEX) {
		if (tc->index < 0 || tc->index >= n) {
			diag_error(tc->loc, "index %lld is outside '%s', which has %d elements",
				   (long long)tc->index, e->name, n);
			return "0";
		}
		return record_long(f->offset + (int)tc->index * es, es, f->is_signed,
				   arena_printf("%s[%lld]", f->name, (long long)tc->index));
	}
	if (tc->kind != COMP_INDEX_EXPR) {
		diag_error(tc->loc, "'%s' is a number; it has no members", e->name);
		return "0";
	}
	i = emit_snapshot(E, emit_expr(E, tc->index_expr), TYPE_LONG);
	site = emit_error_site(E, tc->loc, "array index out of range");
	emit_line(E, "if (%s < 0 || %s >= %d) {", i, i, n);
	emit_line(E, "\tstp_raise(c, %d, \"array index out of range\");", site);
	emit_fail(E);
	emit_line(E, "}");
	t = emit_long_temp(E);
	emit_line(E, "%s = stp_tp_read(ctx, %d + %s * %d, %d, %d);", t, f->offset, i, es, es,
		  f->is_signed);
	return t;
}

static const char *field_string(struct emitter *E, struct tp_field *f)
{
	const char *t = emit_str_temp(E);

	if (f->array_len < 0)
		emit_line(E, "stp_tp_dstr(ctx, %d, %s);", f->offset, t);
	else
		emit_line(E, "stp_tp_str(ctx, %d, %d, %s);", f->offset, f->array_len, t);
	return t;
}

/*
 * The size and signedness the field's C type gives it: syscall records
 * keep every argument in 8 bytes ("int dfd; size:8; signed:0"), but the
 * value is the C type's.
 */
static void field_ctype(const struct tp_field *f, int *size, bool *is_signed)
{
	static const struct {
		const char *name;
		int size;
		bool is_signed;
	} types[] = {
		{ "int", 4, true }, { "unsigned int", 4, false }, { "unsigned", 4, false },
		{ "pid_t", 4, true }, { "uid_t", 4, false }, { "gid_t", 4, false },
		{ "qid_t", 4, false }, { "key_serial_t", 4, true }, { "clockid_t", 4, true },
		{ "mqd_t", 4, true }, { "timer_t", 4, true }, { "u32", 4, false },
		{ "s32", 4, true }, { "__u32", 4, false }, { "__s32", 4, true },
		{ "umode_t", 2, false }, { "short", 2, true }, { "unsigned short", 2, false },
		{ "u16", 2, false }, { "s16", 2, true }, { "u8", 1, false }, { "s8", 1, true },
	};

	*size = f->size;
	*is_signed = f->is_signed;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (strcmp(f->ctype, types[i].name) == 0 && types[i].size < f->size) {
			*size = types[i].size;
			*is_signed = types[i].is_signed;
		}
	}
}

static const char *field_read(struct emitter *E, struct expr *e, struct tp_field *f)
{
	int size;
	bool is_signed;

	if (f->type == TYPE_STRING)
		return field_string(E, f);
	if (e->comps.len)
		return field_elem(E, e, f);
	if (f->array_len > 0) {
		diag_error(e->loc, "'%s' is an array of %d numbers: index it, as %s[0]", e->name,
			   f->array_len, e->name);
		return "0";
	}
	field_ctype(f, &size, &is_signed);
	return record_long(f->offset, size, is_signed, f->name);
}

/* "name=value" for every field that is not common: $$parms and $$vars. */
static const char *field_list(struct emitter *E, const struct tracepoint *tp, bool pretty)
{
	struct vec pieces = { 0 };

	for (int i = 0; i < tp->fields.len; i++) {
		struct tp_field *f = VEC_AT(&tp->fields, i);
		struct emit_piece *p;

		if (f->is_common || (f->type != TYPE_STRING && f->array_len > 0))
			continue;
		p = ARENA_NEW(struct emit_piece);
		p->lit = arena_printf("%s%s=", pieces.len ? " " : "", f->name);
		p->str = f->type == TYPE_STRING;
		p->conv = p->str ? (pretty ? "\"%s\"" : "%s") : "0x%llx";
		p->val = p->str ? field_string(E, f) : record_long(f->offset, f->size, f->is_signed, f->name);
		vec_push(&pieces, p);
	}
	return emit_bpf_snprintf(E, &pieces);
}

const char *emit_string_const(struct emitter *E, const char *s)
{
	const char *t = emit_str_temp(E);

	emit_line(E, "stp_strcpy(%s, %s);", t, emit_c_string(s, strlen(s)));
	return t;
}

static const char *dollars(struct emitter *E, struct expr *e, const struct tracepoint *tp)
{
	const char *n = e->name + 2;

	if (strcmp(n, "name") == 0)
		return emit_string_const(E, tp->name);
	if (strcmp(n, "system") == 0)
		return emit_string_const(E, tp->system);
	if (strcmp(n, "locals") == 0)
		return emit_string_const(E, "");
	return field_list(E, tp, e->pretty > 0);
}

static const char *pretty_field(struct emitter *E, struct expr *e, struct tp_field *f)
{
	struct vec pieces = { 0 };
	struct emit_piece *p = ARENA_NEW(struct emit_piece);

	p->lit = "";
	p->str = f->type == TYPE_STRING;
	p->conv = p->str ? "\"%s\"" : "%lld";
	p->val = p->str ? field_string(E, f) : record_long(f->offset, f->size, f->is_signed, f->name);
	vec_push(&pieces, p);
	return emit_bpf_snprintf(E, &pieces);
}

static const char *raw_arg(struct emitter *E, struct expr *e, int i)
{
	return emit_btf_chain(E, e, VEC_AT(&E->dp->tp->args, i), i);
}

/* $name in a kernel.trace probe: a field of the record, or an argument of the raw tracepoint. */
static const char *tp_target(struct emitter *E, struct expr *e, const struct tracepoint *tp)
{
	struct tp_field *f;
	int a;

	E->cf->uses_ctx = true;
	if (e->name[1] == '$')
		return dollars(E, e, tp);
	a = emit_tp_arg_index(tp, e->name + 1);
	if (E->raw_args && a >= 0)
		return raw_arg(E, e, a);
	f = tp_field(tp, e->name + 1);
	if (f)
		return e->pretty ? pretty_field(E, e, f) : field_read(E, e, f);
	return a >= 0 ? raw_arg(E, e, a) : "0";
}

const char *emit_target(struct emitter *E, struct expr *e)
{
	struct derived_probe *dp = E->dp;

	if (E->ctx != ECTX_KERNEL || !dp || E->fn) {
		emit_unsupported(E, e->loc, arena_printf("target variable '%s' here", e->name), NULL);
		return e->type == TYPE_STRING ? "\"\"" : "0";
	}
	switch (probe_targets(dp)) {
	case TARGETS_KFUNC:
		if (!dp->kfunc)
			break;
		return emit_kprobe_target(E, e);
	case TARGETS_SDT:
	case TARGETS_PLT:
		return emit_uprobe_target(E, e);
	case TARGETS_DWARF:
		if (probe_class(dp) != PCLASS_UPROBE)
			break;
		return emit_dwarf_target(E, e);
	case TARGETS_TRACEPOINT:
		return tp_target(E, e, dp->tp);
	case TARGETS_USYSCALL:
		return emit_proc_target(E, e);
	case TARGETS_NETFILTER:
		return emit_netfilter_target(E, e);
	case TARGETS_NONE:
	case TARGETS_PROCFS:	/* rewritten in pass 2 */
		break;
	}
	emit_unsupported(E, e->loc, arena_printf("target variable '%s' in a %s probe", e->name,
						 dp->point), NULL);
	return e->type == TYPE_STRING ? "\"\"" : "0";
}


/* ---- loops ---------------------------------------------------------------------------- */

/* The environment a loop body gets: the handler's, or the enclosing body's. */
static const char *env_ref(struct emitter *E)
{
	if (E->cf->is_callback)
		return "e";
	E->cf->uses_env = true;
	return "&env";
}

/* Write a finished loop body callback named NAME with SIG's parameters. */
static void callback_out(struct emitter *E, struct cfunc *cf, const char *sig, const char *head,
			 char *body)
{
	FILE *out = emit_callback_out(E);

	fprintf(out, "%s\n{\n", sig);
	fprintf(out, "%s", head);
	fprintf(out, "\tstruct context *c = e->c;\n");
	if (E->frame->pushed)
		fprintf(out, "\tstruct %s *f __attribute__((unused)) = e->frame;\n", E->frame->name);
	else
		fprintf(out, "\tstruct %s *f __attribute__((unused)) = stp_frame(c, %s);\n",
			E->frame->name, E->frame->off);
	if (cf->uses_ctx)
		fprintf(out, "\t%sctx = e->ctx;\n", E->ctx_ctype);
	if (cf->has_ret_ptr)
		fprintf(out, "\tchar *ret __attribute__((unused)) = e->ret;\n");
	emit_cfunc_decls(E, cf, out, " 1");
	fputs(body, out);
	free(body);
	fprintf(out, "}\n\n");
}

static struct cfunc *callback_begin(struct emitter *E)
{
	struct cfunc *parent = E->cf, *cf = emit_cfunc_begin(E);

	cf->is_callback = true;
	cf->has_ret_ptr = parent->has_ret_ptr;
	return cf;
}

/* After the helper that ran a loop body: a return inside it, or its error. */
static void after_loop(struct emitter *E)
{
	if (E->fn && !E->cf->is_callback) {
		emit_line(E, "if (c->error == STP_ERR_RETURN) {");
		emit_line(E, "\tc->error = STP_ERR_NONE;");
		emit_line(E, "\tgoto out;");
		emit_line(E, "}");
	}
	emit_check(E, -1);
}

static void loop_body(struct emitter *E, struct stmt *s)
{
	int site = emit_error_site(E, s->loc, "MAXACTION exceeded"), mark, *keys;
	const char *c;

	emit_line(E, "if (stp_action(c, %d, %d))", emit_count_stmts(s->then) + 1, site);
	emit_line(E, "\treturn 1;");
	if (s->expr) {
		emit_temps_mark(E, &mark, &keys);
		c = emit_cond(E, s->expr);
		emit_line(E, "if (!%s)", c);
		emit_line(E, "\treturn 1;");
		emit_temps_release(E, mark, keys);
	}
	E->cf->cont_label = s->incr ? "next_iteration" : NULL;
	emit_stmt(E, s->then);
	if (s->incr) {
		E->cf->indent--;
		emit_line(E, "next_iteration: __attribute__((unused));");
		E->cf->indent++;
		emit_temps_mark(E, &mark, &keys);
		emit_expr_void(E, s->incr);
		emit_temps_release(E, mark, keys);
	}
	emit_line(E, "return 0;");
}

/*
 *	while (cond) body	for (init; cond; incr) body
 * as bpf_loop(MAXACTION + 1, loop_N, env): each run of loop_N counts
 * against MAXACTION, so the budget ends the loop before bpf_loop does.
 */
void emit_bpf_loop(struct emitter *E, struct stmt *s)
{
	const char *name = emit_callback_name(E, "loop", emit_seq(E));
	int mark, *keys;
	struct cfunc *cf;
	char *body;

	if (s->init) {
		emit_temps_mark(E, &mark, &keys);
		emit_expr_void(E, s->init);
		emit_temps_release(E, mark, keys);
	}
	cf = callback_begin(E);
	loop_body(E, s);
	emit_cfunc_end(E, cf, &body);
	fprintf(emit_callback_out(E), "/* %s at %s */\n", s->kind == STMT_FOR ? "for" : "while",
		emit_loc_text(s->loc));
	callback_out(E, cf, arena_printf("static long %s(uint64_t i, void *data)", name),
		     "\tstruct stp_env *e = data;\n", body);
	emit_line(E, "bpf_loop(%lld, %s, %s, 0);", (long long)E->maxaction + 1, name,
		  env_ref(E));
	after_loop(E);
}

/* ---- foreach ------------------------------------------------------------------------------- */

static void foreach_vars(struct emitter *E, struct stmt *s, struct eglobal *g)
{
	for (int i = 0; i < s->keys.len; i++) {
		struct expr *k = VEC_AT(&s->keys, i);
		const char *ref = emit_var_ref(E, k->decl);

		if (g->d->key_types[i] == TYPE_STRING)
			emit_line(E, "stp_strlcpy(%s, key->k%d, sizeof(key->k%d));", ref, i + 1, i + 1);
		else
			emit_line(E, "%s = key->k%d;", ref, i + 1);
	}
	if (s->value) {
		const char *ref = emit_var_ref(E, s->value->decl);

		if (emit_slotted(g) && g->d->type == TYPE_STRING)
			emit_line(E, "stp_strcpy(%s, stp_slot_str(&gv_%s, *val));", ref, g->cname);
		else if (emit_slotted(g))
			emit_line(E, "%s = stp_slot_long(&gv_%s, *val);", ref, g->cname);
		else if (g->d->type == TYPE_STRING)
			emit_line(E, "stp_strcpy(%s, *val);", ref);
		else
			emit_line(E, "%s = *val;", ref);
	}
}

static bool foreach_ok(struct emitter *E, struct stmt *s)
{
	const char *hint = "sort and limit in an end or timer probe, which runs in user context";

	if (s->array->kind != EXPR_SYMBOL && (!E->kmod || s->array->kind != EXPR_INDEX))
		return emit_unsupported(E, s->array->loc, "foreach over a slice or a histogram",
					hint);
	if ((s->sort_dir || s->limit) && !E->kmod)
		return emit_unsupported(E, s->loc, "foreach with sorting or a limit", hint);
	if (s->array->decl->type == TYPE_STATS && !E->kmod)
		return emit_unsupported(E, s->loc, "foreach over statistics",
					"statistics are per CPU in the kernel; " "read them in an "
					"end or timer probe");
	if (s->array->decl->type == TYPE_STATS && s->value)
		return emit_unsupported(E, s->value->loc,
					"a value variable in foreach over statistics", NULL);
	if (s->sort_by_stat && s->sort_stat == STAT_VARIANCE && !E->kmod)
		return emit_unsupported(E, s->loc, "sorting on @variance", hint);
	return true;
}

/*
 *	foreach ([k...] in a) body
 * as bpf_for_each_map_elem(&g_a, foreach_N, env): unsorted, as the map holds them.
 */
void emit_bpf_foreach(struct emitter *E, struct stmt *s)
{
	int n = emit_seq(E), site;
	const char *name = emit_callback_name(E, "foreach", n);
	struct eglobal *g;
	struct cfunc *cf;
	char *body;
	const char *vt, *want = NULL;

	if (!foreach_ok(E, s))
		return;
	g = emit_global(E, s->array->decl);
	if (s->array->kind == EXPR_INDEX)	/* a slice (a module's): its keys, before the loop */
		want = emit_key(E, g, &s->array->args);
	cf = callback_begin(E);
	site = emit_error_site(E, s->loc, "MAXACTION exceeded");
	emit_line(E, "if (stp_action(c, %d, %d))", emit_count_stmts(s->then) + 1, site);
	emit_line(E, "\treturn 1;");
	foreach_vars(E, s, g);
	emit_stmt(E, s->then);
	emit_line(E, "return 0;");
	emit_cfunc_end(E, cf, &body);
	vt = g->d->type == TYPE_STRING ? "char (*val)[MAXSTRINGLEN]" : "int64_t *val";
	if (emit_slotted(g))
		vt = "uint32_t *val";	/* the slot of the value */
	if (g->stats)
		vt = "void *val";	/* this CPU's partial: read through @count(a[k])... */
	fprintf(emit_callback_out(E), "/* foreach at %s */\n", emit_loc_text(s->loc));
	callback_out(E, cf, arena_printf("static long %s(void *map, const struct key_%s *key, "
					 "%s, struct stp_env *e)", name, g->cname, vt), "", body);
	if (s->sort_dir || s->limit || want || g->stats)
		emit_kmod_foreach(E, s, g, n, env_ref(E), want);
	else
		emit_line(E, "bpf_for_each_map_elem(&g_%s, %s, %s, 0);", g->cname, name,
			  env_ref(E));
	after_loop(E);
}

/* ---- probes ------------------------------------------------------------------------------------ */

struct section {
	const char *sec;
	const char *ctype;	/* the program's context parameter */
	enum stp_probe_kind kind;
	const char *prologue;	/* C before stp_enter(), or NULL */
	const char *ret;	/* what the program returns (netfilter: the verdict), or NULL: 0 */
};

static bool probe_section(struct emitter *E, struct derived_probe *dp, struct section *sec)
{
	bool none;

	if (E->kmod && !emit_kmod_supports(E, dp))
		return false;
	switch (probe_class(dp)) {
	case PCLASS_TRACEPOINT:
		E->raw_args = uses_raw_args(E, dp, &none);
		if (E->raw_args || raw_without_args(E, dp, none)) {
			sec->sec = arena_printf("raw_tp/%s", dp->tp->name);
			sec->ctype = "struct bpf_raw_tracepoint_args *";
			sec->kind = STP_PROBE_RAW_TRACEPOINT;
		} else {
			sec->sec = arena_printf("tp/%s/%s", dp->tp->system, dp->tp->name);
			sec->ctype = "void *";
			sec->kind = STP_PROBE_TRACEPOINT;
		}
		return true;
	case PCLASS_SAMPLE:
		sec->sec = "perf_event";
		sec->ctype = "struct bpf_perf_event_data *";
		sec->kind = dp->kind == PROBE_PROFILE ? STP_PROBE_PROFILE : STP_PROBE_PERF;
		/* user_mode(), addr(): the sample's registers (runtime/bpf/stp_umode.bpf.h) */
		sec->prologue = arena_printf("\tstp_regs_note((const struct pt_regs *)&ctx->regs, "
					     "%d);\n", dp->id);
		return true;
	case PCLASS_UPROBE:
		return emit_uprobe_section(E, dp, &sec->sec, &sec->ctype, &sec->kind,
					   &sec->prologue);
	case PCLASS_PROC:
		return emit_proc_section(E, dp, &sec->sec, &sec->ctype, &sec->kind, &sec->prologue);
	case PCLASS_NETFILTER:	/* the kernel runtime refused it in pass 2 */
		return emit_netfilter_section(E, dp, &sec->sec, &sec->ctype, &sec->kind,
					      &sec->prologue, &sec->ret);
	case PCLASS_KPROBE:
		if (access(sysroot_path("/sys/kernel/tracing/kprobe_events"), F_OK) != 0) {
			diag_error(dp->orig->loc, "probe point '%s' is not available on this kernel: "
				   "it has no kprobes", dp->point);
			diag_hint("a tracepoint may fire at the same place: pmstap -l "
				  "'kernel.trace(\"*\")' lists them");
			return false;
		}
		if (!E->kmod && (dp->kfunc_inline || dp->kind == PROBE_KSTATEMENT) && dp->kfunc &&
		    !sys_kernel_function_traceable(dp->kfunc)) {
			/* trace_kprobe.c's within_notrace_func(): EINVAL at attach */
			diag_error(dp->orig->loc, "probe point '%s' is %s in '%s', which ftrace "
				   "cannot trace (notrace): the kernel refuses a BPF kprobe there",
				   dp->point, dp->kfunc_inline ? "an inline instance" : "a statement",
				   dp->kfunc);
			diag_hint("--runtime=kernel probes it: a module's kprobe may be there");
			return false;
		}
		if (dp->kfunc) {	/* a statement: a kprobe at its symbol + offset */
			if (!emit_kprobe_section(E, dp, &sec->sec, &sec->ctype, &sec->kind))
				return false;
			sec->prologue = emit_kprobe_prologue(E, dp, sec->ctype);
			return true;
		}
		/* fall through */
	case PCLASS_PROCFS:	/* the kernel runtime's: a module's file, no context */
		if (E->kmod && probe_class(dp) == PCLASS_PROCFS) {
			sec->sec = "procfs";
			sec->ctype = "void *";
			sec->kind = STP_PROBE_PROCFS;
			return true;
		}
		/* fall through */
	default:
		diag_error(dp->orig->loc, "probe point '%s' is not supported by the bpf runtime yet",
			   dp->point);
		return false;
	}
}

static void probe_body(struct emitter *E, struct derived_probe *dp)
{
	const char *c;

	emit_locals_init(E, &dp->locals);
	if (dp->cond) {
		c = emit_cond(E, dp->cond);
		emit_line(E, "if (!%s)", c);
		emit_line(E, "\tgoto out;");
	}
	emit_stmt(E, dp->body);
}

/*
 * A program that any other probe of the same C can run (emit_merge.c): a
 * tracepoint's, a raw tracepoint's where the kernel gives it its cookie,
 * or a uprobe's (whose prologue, -c/-x's, is the same for every probe);
 * the cookie says which probe fired.
 */
static bool mergeable(struct emitter *E, struct derived_probe *dp, const struct section *sec)
{
	if (E->kmod || E->dyninst || E->no_merge || emit_proc_existing(E, dp))
		return false;
	if (sec->kind == STP_PROBE_RAW_TRACEPOINT)
		return probe_class(dp) == PCLASS_TRACEPOINT && !sec->prologue && rawtp_cookies(E);
	return (sec->kind == STP_PROBE_TRACEPOINT && !sec->prologue) ||
	       sec->kind == STP_PROBE_UPROBE;
}

/* Which programs a mergeable one can be one with (NULL: none). */
static const char *merge_family(struct emitter *E, struct derived_probe *dp,
				const struct section *sec)
{
	if (!mergeable(E, dp, sec))
		return NULL;
	if (sec->kind == STP_PROBE_RAW_TRACEPOINT)
		return "raw_tp";
	return sec->kind == STP_PROBE_UPROBE ? sec->sec : "tp";
}

/* A tracepoint program whose body can be a program of its own (emit_body.c). */
static bool splittable(struct emitter *E, struct derived_probe *dp, const struct section *sec)
{
	return mergeable(E, dp, sec) && sec->kind == STP_PROBE_TRACEPOINT;
}

/* FR's struct, declared; its text too (NULL: the frame is empty). */
static const char *frame_decl(struct emitter *E, struct frame *fr)
{
	size_t at;

	fflush(E->decls);
	at = E->decls_len;
	emit_frame_decl(E, fr, true);
	fflush(E->decls);
	return E->decls_len > at ? arena_strndup(E->decls_buf + at, E->decls_len - at) : NULL;
}

/* A program's declarations and entry: C, whose first line gets the context (stp_enter...). */
static void program_head(struct emitter *E, FILE *out, struct cfunc *cf, const char *enter,
			 const char *ret)
{
	fprintf(out, "\tstruct context *c = %s;\n", enter);
	if (!E->frame->empty)
		fprintf(out, "\tstruct %s *f;\n", E->frame->name);
	if (cf->uses_g)
		fprintf(out, "\tstruct stp_globals *g;\n");
	if (cf->uses_env)
		fprintf(out, "\tstruct stp_env env = { c, ctx, NULL };\n");
	for (int i = 1; i <= cf->ntemps; i++)
		fprintf(out, "%st%d", i == 1 ? "\tint64_t " : ", ", i);
	fprintf(out, "%s\n\tif (!c)\n\t\treturn %s;\n", cf->ntemps ? ";\n" : "", ret ? ret : "0");
	if (!E->frame->empty)
		fprintf(out, "\tf = stp_frame(c, %s);\n", E->frame->off);
	if (cf->uses_g)
		fprintf(out, "\tg = STP_GLOBALS(c);\n\tif (!g)\n\t\tgoto out;\n");
}

static void program_tail(FILE *out, const char *ret)
{
	fprintf(out, "out: __attribute__((unused));\n\tstp_leave(c);\n\treturn %s;\n}\n\n",
		ret ? ret : "0");
}

/* The prologue of a split handler: its locals (INNER's first), then all but INNER. */
static int split_prologue(struct emitter *E, struct derived_probe *dp, struct stmt *inner,
			  struct vec *prologue, struct vec *ordered)
{
	int shared = emit_body_locals(dp, inner, ordered);

	emit_locals_init(E, ordered);
	if (dp->cond) {
		emit_line(E, "if (!%s)", emit_cond(E, dp->cond));
		emit_line(E, "\tgoto out;");
	}
	for (int i = 0; i < prologue->len; i++)
		emit_stmt(E, VEC_AT(prologue, i));
	return shared;
}

/*
 * Collect the loop callbacks of the code written until callbacks_end():
 * they go with their program, which emit_merge.c may write for others too
 * or drop.  Only for BPF programs, which alone are merged.
 */
static void callbacks_begin(struct emitter *E, int index, char **buf, size_t *len)
{
	if (E->kmod || E->dyninst)
		return;
	E->hprobe = index;
	E->hdefs = open_memstream(buf, len);
}

/* The callbacks collected (NULL: none); BUF and LEN are callbacks_begin()'s. */
static const char *callbacks_end(struct emitter *E, char **buf, size_t *len)
{
	const char *cbs;

	if (!E->hdefs)
		return NULL;
	fclose(E->hdefs);
	E->hdefs = NULL;
	cbs = *len ? arena_strndup(*buf, *len) : NULL;
	free(*buf);
	return cbs;
}

/* INNER as probe INDEX's body program, over the first SHARED locals of ORDERED. */
static void body_program(struct emitter *E, struct derived_probe *dp, int index,
			 struct stmt *inner, struct vec *ordered, int shared)
{
	struct cfunc *cf;
	const char *decl, *cbs;
	char *body, *text, *cbuf = NULL;
	size_t len, clen = 0;
	FILE *out;

	callbacks_begin(E, index, &cbuf, &clen);
	E->frame = emit_frame_new(E, arena_printf("frame_probe_%d_body", index));
	for (int i = 0; i < shared; i++)
		emit_frame_local(E, E->frame, VEC_AT(ordered, i));
	cf = emit_cfunc_begin(E);
	emit_stmt(E, inner);
	emit_cfunc_end(E, cf, &body);
	cbs = callbacks_end(E, &cbuf, &clen);
	emit_drop_final_jump(body);
	decl = frame_decl(E, E->frame);
	out = open_memstream(&text, &len);
	fprintf(out, "/* the body of the probe at %s, jumped to by the handlers of its points */\n"
		"SEC(\"tp\")\nint probe_%d_body(void *ctx)\n{\n", emit_loc_text(dp->probe->loc),
		index);
	program_head(E, out, cf, "stp_resume()", NULL);
	fputs(body, out);
	program_tail(out, NULL);
	fclose(out);
	free(body);
	emit_body_add(E, index, arena_strndup(text, len), cbs, decl);
	free(text);
}

static void bpf_probe(struct emitter *E, struct derived_probe *dp, int index)
{
	struct section sec = { 0 };
	struct vec ordered = { 0 }, prologue = { 0 };
	struct stmt *inner;
	struct cfunc *cf;
	const char *decl, *cbs;
	char *body, *text, *cbuf = NULL;
	size_t len, clen = 0;
	int shared = 0;
	FILE *out;

	if (!probe_section(E, dp, &sec))
		return;
	E->dp = dp;
	E->hseq = 0;
	callbacks_begin(E, index, &cbuf, &clen);
	E->ctx_ctype = sec.ctype;
	E->probe_kinds[index] = sec.kind;
	if (splittable(E, dp, &sec) && strcmp(dp->tp->system, "syscalls") == 0)
		E->sc_probes[strncmp(dp->tp->name, "sys_exit_", 9) == 0]++;
	inner = splittable(E, dp, &sec) ? emit_body_inner(E, dp, index, &prologue) : NULL;
	E->frame = emit_frame_new(E, arena_printf("frame_probe_%d", index));
	cf = emit_cfunc_begin(E);
	if (inner)
		shared = split_prologue(E, dp, inner, &prologue, &ordered);
	else
		probe_body(E, dp);
	emit_cfunc_end(E, cf, &body);
	cbs = callbacks_end(E, &cbuf, &clen);
	if (!inner)
		emit_drop_final_jump(body);
	decl = frame_decl(E, E->frame);
	out = open_memstream(&text, &len);
	fprintf(out, "/* probe %s at %s */\n", dp->point, emit_loc_text(dp->probe->loc));
	if (emit_proc_existing(E, dp))
		fprintf(out, "static __always_inline int probe_%d_run(%sctx)\n{\n", index, sec.ctype);
	else
		fprintf(out, "SEC(\"%s\")\nint probe_%d(%sctx)\n{\n", sec.sec, index, sec.ctype);
	if (sec.prologue)
		fputs(sec.prologue, out);
	E->frame_empty[index] = E->frame->empty;
	program_head(E, out, cf, arena_printf("stp_enter(%d)", index), sec.ret);
	fputs(body, out);
	free(body);
	if (inner)
		fputs("\tstp_tail_body(ctx, c);\n", out);
	program_tail(out, sec.ret);
	if (emit_proc_existing(E, dp))
		emit_proc_programs(out, sec.sec, index);
	fclose(out);
	emit_merge_add(E, index, arena_strndup(text, len), cbs, decl, merge_family(E, dp, &sec));
	free(text);
	if (inner)
		body_program(E, dp, index, inner, &ordered, shared);
	E->dp = NULL;
	E->hprobe = -1;
}

/* ---- the file ------------------------------------------------------------------------------------ */

/* Frame offsets: handlers at 0, a function past the frames of everything that calls it. */
/* The frame of probe_ID at 0, and the largest so far. */
static const char *frame_max(FILE *out, const char *prev, const char *id)
{
	fprintf(out, "\tFRAME_probe_%s = 0,\n", id);
	fprintf(out, "\tSTP_PROBE_FRAMES_%s = STP_MAX(%s, sizeof(struct frame_probe_%s)),\n", id,
		prev, id);
	return arena_printf("STP_PROBE_FRAMES_%s", id);
}

static void frame_offsets(struct emitter *E, FILE *out)
{
	const char *prev = "0";

	fprintf(out, "enum {\n");
	for (int i = 0; i < E->prog->probes.len; i++) {
		if (!E->kernel_probe[i])
			continue;
		if (!E->frame_empty[i])
			prev = frame_max(out, prev, arena_printf("%d", i));
		if (emit_body_has_frame(E, i))	/* a split handler's body (emit_body.c) */
			prev = frame_max(out, prev, arena_printf("%d_body", i));
	}
	fprintf(out, "\tSTP_PROBE_FRAMES = %s,\n", prev);
	emit_func_offsets(E, out);
	fprintf(out, "};\n\n");
}

static void defines(struct emitter *E, FILE *out)
{
	fprintf(out, "#define MAXSTRINGLEN %lld\n", (long long)E->maxstringlen);
	fprintf(out, "#define MAXACTION %lld\n", (long long)E->maxaction);
	fprintf(out, "#define MAXMAPENTRIES %lld\n", (long long)E->maxmapentries);
	fprintf(out, "#define MAXERRORS %lld\n", (long long)E->maxerrors);
	if (E->kmod)
		fprintf(out, "#define MAXNESTING %lld\n#define STP_KMOD_ITEMS %lld\n"
			"#define STP_KMOD_RE_STATES %d\n", (long long)E->maxnesting,
			(long long)(E->kmod_items ? E->kmod_items : 1),
			E->kmod_re_states ? E->kmod_re_states : 1);
	if (E->s->suppress_handler_errors)
		fprintf(out, "#define STP_SUPPRESS_ERRORS 1\n");
	fprintf(out, "#define STP_NPROBES %d\n", E->prog->probes.len ? E->prog->probes.len : 1);
	fprintf(out, "#define STP_NCPUS %d\n", E->ncpus);
	fprintf(out, "#define STP_REC_SIZE %d\n", E->rec_size);
	fprintf(out, "#define STP_ZERO_SIZE %d\n", E->zero_size);
	fprintf(out, "#define STP_RINGBUF_BYTES %lld\n", (long long)E->ringbuf);
	emit_extra_defines(E, out);
}

const struct func *emit_called(const struct emitter *E, const char *name)
{
	for (int i = 0; i < E->prog->funcs.len; i++) {
		const struct func *f = VEC_AT(&E->prog->funcs, i);

		if (!strcmp(f->name, name))
			return f;
	}
	return NULL;
}

bool emit_uses_pn(const struct emitter *E)
{
	return emit_called(E, "pn") != NULL;
}

/* A string per probe in read-only data, and FN(c) giving the running handler's. */
static void point_table(struct emitter *E, FILE *out, const char *table, const char *at_name,
			const char *fn, bool pn)
{
	int n = E->prog->probes.len;
	uint32_t at = 0;

	fprintf(out, "static const char %s[] SEC(\".rodata\") =", table);
	for (int i = 0; i < n; i++) {
		struct derived_probe *dp = VEC_AT(&E->prog->probes, i);
		const char *s = pn ? dp->pn : dp->point;

		fprintf(out, "\n\t%s \"\\0\"", emit_c_string(s, strlen(s)));
	}
	fprintf(out, "%s;\n", n ? "" : " \"\"");
	fprintf(out, "static const uint32_t %s[STP_NPROBES] SEC(\".rodata\") = {", at_name);
	for (int i = 0; i < n; i++) {
		struct derived_probe *dp = VEC_AT(&E->prog->probes, i);

		fprintf(out, "%s%u", i ? ", " : " ", at);
		at += (uint32_t)strlen(pn ? dp->pn : dp->point) + 1;
	}
	fprintf(out, " };\n\n");
	fprintf(out, "static __always_inline const char *%s(struct context *c)\n{\n", fn);
	fprintf(out, "\treturn c->probe < STP_NPROBES ? %s + %s[c->probe] : \"\";\n}\n\n",
		table, at_name);
}

/* pp() (and pn() when called) of the running handler, for tapset.bpf.h. */
static void probe_points(struct emitter *E, FILE *out)
{
	fprintf(out, "/* the probe points, as pp() spells them */\n");
	point_table(E, out, "stp_points", "stp_point_at", "stp_ctx_pp", false);
	if (emit_uses_pn(E)) {
		fprintf(out, "/* and as pn() does: before alias resolution */\n#define STP_HAVE_PN 1\n");
		point_table(E, out, "stp_names", "stp_name_at", "stp_ctx_pn", true);
	}
	emit_uprobe_flags(E, out);
	emit_usym_tables(E, out);
}

/* Perf events kept per thread of a process: counters, then perf.*.process probes. */
static int process_perf(struct emitter *E)
{
	int n = E->prog->counters.len;

	for (int i = 0; i < E->prog->probes.len; i++) {
		struct derived_probe *dp = VEC_AT(&E->prog->probes, i);

		n += dp->kind == PROBE_PERF && dp->path;
	}
	return n;
}

int emit_bpf_file(struct emitter *E, FILE *out)
{
	int errors = diag_error_count();

	E->ctx = ECTX_KERNEL;
	E->decls = open_memstream(&E->decls_buf, &E->decls_len);
	E->protos = open_memstream(&E->protos_buf, &E->protos_len);
	E->defs = open_memstream(&E->defs_buf, &E->defs_len);
	emit_functions(E);
	for (int i = 0; i < E->prog->probes.len; i++)
		if (E->kernel_probe[i])
			bpf_probe(E, VEC_AT(&E->prog->probes, i), i);
	/* enough probes on syscall tracepoints: runtime/bpf/stp_syscall.bpf.h */
	E->sc_dispatch = E->sc_probes[0] >= STP_SC_MIN_PROBES || E->sc_probes[1] >= STP_SC_MIN_PROBES;
	emit_merge_flush(E, E->defs);
	emit_body_programs(E, E->defs);
	fclose(E->decls);
	fclose(E->protos);
	fclose(E->defs);

	if (E->dyninst)
		fprintf(out, "/* script.dyn.c: the handlers of %s that run in the probed process "
			"(generated by pmstap) */\n#define STP_DYNINST 1\n", emit_script_name(E));
	else if (E->kmod)
		fprintf(out, "/* script.kmod.c: the module of %s: its kernel-context handlers "
			"(generated by pmstap) */\n#define STP_KMOD 1\n", emit_script_name(E));
	else
		fprintf(out, "/* script.bpf.c: the kernel-context handlers of %s (generated by "
			"pmstap) */\n", emit_script_name(E));
	defines(E, out);
	fprintf(out, "\n#include \"bpf/stp.bpf.h\"\n\n");
	emit_data_decls(E, out);
	fputs(E->decls_buf, out);
	frame_offsets(E, out);
	fprintf(out, "#define STP_FRAMES_SIZE STP_FRAMES_END\n\n");
	fprintf(out, "#include \"bpf/stp_context.bpf.h\"\n\n");
	probe_points(E, out);
	fprintf(out, "#include \"bpf/tapset.bpf.h\"\n\n");
	if (E->sc_dispatch)
		fprintf(out, "#include \"bpf/stp_syscall.bpf.h\"\n\n");
	if (process_perf(E) && !E->kmod && !E->dyninst)
		fprintf(out, "#define STP_NCOUNTERS %d\n#define STP_NPERF %d\n"
			"#define STP_PERF_THREADS %lld\n#include \"bpf/stp_perf.bpf.h\"\n\n",
			E->prog->counters.len, process_perf(E), (long long)E->maxmapentries);
	if (E->kmod)
		emit_guru_prelude(E, out);
	emit_flavour_defs(E, out);
	fputs(E->protos_buf, out);
	emit_body_decls(E, out);
	fputs(E->defs_buf, out);
	if (E->dyninst)
		emit_dyninst_sites(E, out);
	if (E->kmod)
		emit_kmod_sites(E, out);
	free(E->decls_buf);
	free(E->protos_buf);
	free(E->defs_buf);
	return diag_error_count() > errors ? -1 : 0;
}
