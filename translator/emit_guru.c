/*
 * emit_guru.c - a script's own embedded C (guru mode, -g) in a module
 * (--runtime=kernel): the C written for stap's module runtime.
 *
 * script.kmod.c gets runtime/kmod/stp_guru.h (kread() and the rest)
 * and the script's top-level %{ %} blocks after the runtime's services,
 * before any function: their definitions are the module's, and the
 * script's embedded-C functions (emit_func.c) and %{ %} expressions and
 * statements in kernel probes use them.  begin, end, error and timer
 * probes run in pmstap here, not in the module, so an embedded-C
 * function they call runs in the module on their behalf, as stap's
 * would: script.so's stub for it (emit_func.c) asks the module with an
 * ioctl on its device (runtime/kmod/kmod_abi.h), whose dispatcher here
 * runs it on this CPU's context with preemption off, as a kernel probe
 * does.  A %{ %} written straight into such a probe is refused: it has
 * no function to be called as.  The tapsets' embedded C is pcp-stap's
 * own (runtime/stp_tapset.h services) and runs on either side as with
 * the other runtimes.
 */
#include "emit_int.h"

/* The guru header and the top-level blocks, in the script's order. */
void emit_guru_prelude(struct emitter *E, FILE *out)
{
	const char *v = E->s->compatible ? E->s->compatible : PMSTAP_STAP_COMPAT;
	int major = 0, minor = 0;

	if (!E->s->guru)
		return;
	fprintf(out, "#include \"kmod/stp_guru.h\"\n");
	sscanf(v, "%d.%d", &major, &minor);	/* --compatible, as stap's STAP_COMPAT_VERSION */
	fprintf(out, "#define STAP_COMPAT_VERSION STAP_VERSION(%d, %d)\n\n", major, minor);
	for (int i = 0; i < E->prog->embeds.len; i++) {
		const struct embed *em = VEC_AT(&E->prog->embeds, i);

		fprintf(out, "/* embedded C at %s */\n%s\n\n", emit_loc_text(em->loc), em->code);
	}
}

/* WHAT, which only the module runs, in a probe that pmstap runs: refused, with HINT. */
static void module_user(struct emitter *E, struct srcloc loc, const char *what, const char *hint)
{
	const char *key = arena_printf("%p:%d:%d:guru", (const void *)loc.src, loc.line, loc.col);

	E->errors_reported++;
	if (hmap_get(&E->reported, key))
		return;
	hmap_put(&E->reported, key, (void *)key);
	diag_error(loc, "%s runs in the module, not in a begin, end, error or timer probe: pmstap "
		   "runs those with --runtime=kernel", what);
	diag_hint("%s", hint);
}

/* WHAT, the script's embedded C, in a probe that pmstap runs: refused. */
void emit_guru_user(struct emitter *E, struct srcloc loc, const char *what)
{
	module_user(E, loc, arena_printf("embedded C (%s)", what),
		    "make it an embedded-C function (function f:long () %{ ... %}): the module "
		    "runs those for a begin, end, error or timer probe");
}

/*
 * A call of NAME, a tapset function that writes kernel memory (kmod-only:
 * set_kernel_*()), where that cannot run: in a probe pmstap runs, or on a
 * runtime other than the kernel's.
 */
void emit_guru_module_only(struct emitter *E, struct srcloc loc, const char *name,
			   const char *body)
{
	const char *why = strstr(body, "/* kmod-only: "), *end;

	if (E->kmod) {
		module_user(E, loc, arena_printf("%s()", name),
			    "call it from a probe in the kernel (kernel.trace, kernel.function, "
			    "kprobe, perf, timer.profile)");
		return;
	}
	/* a body marked "kmod-only: WHY" says why BPF cannot; else the writers' reason */
	why = why && (end = strstr(why, " */")) ?
	      arena_printf("%.*s; the kernel runtime's module runs it", (int)(end - why - 14),
			   why + 14) :
	      "it writes kernel memory, which only the kernel runtime's module can";
	emit_unsupported(E, loc, arena_printf("%s()", name),
			 arena_printf("%s (--runtime=kernel, in a probe in the kernel)", why));
}

/*
 * %{ CODE %} as an expression in a kernel probe: a long, or with
 * the pragma string a char * whose string is copied.
 */
const char *emit_guru_expr(struct emitter *E, struct expr *e)
{
	const char *t;

	if (E->ctx == ECTX_USER && hmap_get(&E->ublock_of, e)) {
		t = e->type == TYPE_STRING ? emit_str_temp(E) : emit_long_temp(E);
		if (e->type == TYPE_STRING)
			emit_line(E, "%s[0] = '\\0';", t);
		emit_guru_ublock(E, e, t);
		return t;
	}
	if (E->ctx != ECTX_KERNEL) {
		emit_guru_user(E, e->loc, "an expression");
		return e->type == TYPE_STRING ? "\"\"" : "0";
	}
	emit_line(E, "/* embedded C at %s */", emit_loc_text(e->loc));
	if (e->type == TYPE_STRING) {
		t = emit_str_temp(E);
		emit_line(E, "stp_strcpy(%s, (%s));", t, e->str);
	} else {
		t = emit_long_temp(E);
		emit_line(E, "%s = (int64_t)(%s);", t, e->str);
	}
	E->side_effects++;
	return t;
}

/* ---- the module's embedded-C functions, called from user context ---- */

/*
 * A script's embedded-C function (guru mode), or a tapset's marked
 * "kmod-ucall": the task functions, since in a module a task is its
 * task_struct's address in every context, as stap's (user context's own
 * take thread ids), so that task_current() in a begin probe, a task kept
 * by a kernel probe and a guru function's task_struct pointer all agree.
 */
static bool is_ucall(const struct emitter *E, const struct efunc *ef)
{
	const struct func *fn = ef->fn;

	if (!E->kmod || !ef->user || !fn->embedded)
		return false;
	if (fn->file && fn->file->is_tapset)
		return strstr(fn->embedded, "/* kmod-ucall */") != NULL;
	return E->s->guru;
}

/*
 * EF's number in the module's table of the embedded-C functions that
 * user context calls (ioctl STP_KMOD_IOC_CALL), or -1 when it is not one.
 */
int emit_guru_ucall(const struct emitter *E, const struct efunc *ef)
{
	int n = 0;

	for (int i = 0; i < E->funcs.len; i++) {
		const struct efunc *o = VEC_AT(&E->funcs, i);

		if (!is_ucall(E, o))
			continue;
		if (o == ef)
			return n;
		n++;
	}
	return -1;
}

/* Does user context call any? */
bool emit_guru_ucalls(const struct emitter *E)
{
	if (E->ublocks.len)
		return true;
	for (int i = 0; i < E->funcs.len; i++)
		if (is_ucall(E, VEC_AT(&E->funcs, i)))
			return true;
	return false;
}

/*
 * A %{ %} in user context (a begin, end, error or timer probe, or a
 * script function one calls): the module runs it as a function of no
 * arguments, numbered after the embedded-C functions in its table: a
 * long, a string (the string pragma), or a statement.
 */
struct ublock {
	struct srcloc loc;
	const char *code;
	enum type type;
	bool stmt;
};

static void add_ublock(struct emitter *E, const void *node, struct srcloc loc, const char *code,
		       enum type type, bool stmt)
{
	struct ublock *b;

	if (hmap_get(&E->ublock_of, node))
		return;
	b = ARENA_NEW(struct ublock);
	b->loc = loc;
	b->code = code;
	b->type = type;
	b->stmt = stmt;
	vec_push(&E->ublocks, b);
	hmap_put(&E->ublock_of, node, b);
}

static void ublock_expr(struct expr *e, void *arg)
{
	if (e->kind == EXPR_EMBEDDED)
		add_ublock(arg, e, e->loc, e->str, e->type, false);
}

/* The %{ %} statements in S, which may be one. */
static void ublock_stmts(struct emitter *E, struct stmt *s)
{
	if (!s)
		return;
	if (s->kind == STMT_EMBEDDED)
		add_ublock(E, s, s->loc, s->code, TYPE_LONG, true);
	for (int i = 0; i < s->body.len; i++)
		ublock_stmts(E, VEC_AT(&s->body, i));
	ublock_stmts(E, s->then);
	ublock_stmts(E, s->otherwise);
}

static void ublocks_of(struct emitter *E, struct stmt *body, struct expr *cond)
{
	emit_walk_stmt(body, ublock_expr, E);
	emit_walk_expr(cond, ublock_expr, E);
	ublock_stmts(E, body);
}

/* The %{ %} that user context has, before either side is written. */
void emit_guru_analyze(struct emitter *E)
{
	if (!E->kmod || !E->s->guru)
		return;
	for (int i = 0; i < E->prog->probes.len; i++) {
		struct derived_probe *dp = VEC_AT(&E->prog->probes, i);

		if (!E->kernel_probe[i])
			ublocks_of(E, dp->body, dp->cond);
	}
	for (int i = 0; i < E->funcs.len; i++) {
		struct efunc *ef = VEC_AT(&E->funcs, i);

		if (ef->user && !ef->fn->embedded)
			ublocks_of(E, ef->fn->body, NULL);
	}
}

/* Block I's number in the module's table: after the functions'. */
static int ublock_num(const struct emitter *E, int i)
{
	int n = 0;

	for (int j = 0; j < E->funcs.len; j++)
		n += is_ucall(E, VEC_AT(&E->funcs, j));
	return n + i;
}

/*
 * In user context: the %{ %} NODE, run by the module, its value into T
 * (a long temporary, a string buffer, or NULL for a statement).
 */
void emit_guru_ublock(struct emitter *E, const void *node, const char *t)
{
	const struct ublock *b = hmap_get(&E->ublock_of, node);
	int i = 0;

	while (VEC_AT(&E->ublocks, i) != b)
		i++;
	emit_line(E, "{ /* embedded C at %s: the module runs it */", emit_loc_text(b->loc));
	emit_line(E, "\tstruct stp_kmod_call k = { .func = %d };", ublock_num(E, i));
	emit_line(E, "\tchar err[MAXSTRINGLEN];");
	if (t && b->type == TYPE_STRING)
		emit_line(E, "\tk.ret_str = (uintptr_t)%s;", t);
	emit_line(E, "\tstp_kmod_ucall(c, &k, err);");
	if (t && b->type != TYPE_STRING)
		emit_line(E, "\t%s = k.ret;", t);
	emit_line(E, "}");
	E->side_effects++;
	emit_check(E, -1);
}

/* Block B, number N, as the module's function stp_ublock_N. */
static void ublock_function(FILE *out, const struct ublock *b, int n)
{
	fprintf(out, "/* embedded C at %s, in a probe pmstap runs */\n", emit_loc_text(b->loc));
	if (b->stmt)
		fprintf(out, "static void stp_ublock_%d(struct context *c)\n{\n%s\n;\n}\n\n", n, b->code);
	else if (b->type == TYPE_STRING)
		fprintf(out, "static void stp_ublock_%d(struct context *c, char *ret)\n{\n"
			"\tstp_strcpy(ret, (%s));\n}\n\n", n, b->code);
	else
		fprintf(out, "static int64_t stp_ublock_%d(struct context *c)\n{\n"
			"\treturn (int64_t)(%s);\n}\n\n", n, b->code);
}

/* Its case in the table. */
static void ublock_case(FILE *out, const struct ublock *b, int n)
{
	fprintf(out, "\tcase %d:\t/* embedded C at %s */\n\t\t%sstp_ublock_%d(c%s);\n"
		"\t\treturn 0;\n", n, emit_loc_text(b->loc),
		!b->stmt && b->type != TYPE_STRING ? "k->ret = " : "", n,
		!b->stmt && b->type == TYPE_STRING ? ", ret" : "");
}

/* Function EF's call from the table: its arguments from K and S, its string result into ret. */
static void dispatch_case(FILE *out, const struct efunc *ef, int n)
{
	const struct func *fn = ef->fn;

	fprintf(out, "\tcase %d:\t/* %s() */\n\t\t%s%s(c%s", n, fn->name,
		fn->ret_type == TYPE_LONG ? "k->ret = " : "", ef->cname,
		fn->ret_type == TYPE_STRING ? ", ret" : "");
	for (int i = 0; i < fn->params.len; i++) {
		const struct vardecl *p = VEC_AT(&fn->params, i);

		fprintf(out, p->type == TYPE_STRING ? ", s[%d]" : ", k->nums[%d]", i);
	}
	fprintf(out, ");\n\t\treturn 0;\n");
}

/*
 * stp_kmod_ucall(), which runtime/kmod/stp_kmod_main.h's ioctl calls on
 * a CPU's context: the embedded-C functions user context calls, by number.
 */
void emit_guru_dispatch(struct emitter *E, FILE *out)
{
	int n = 0;

	for (int i = 0; i < E->ublocks.len; i++)
		ublock_function(out, VEC_AT(&E->ublocks, i), ublock_num(E, i));
	fprintf(out, "/* the embedded-C functions pmstap's begin, end, error and timer probes call "
		"(ioctl STP_KMOD_IOC_CALL) */\n#include \"kmod/kmod_abi.h\"\n\n");
	fprintf(out, "static long stp_kmod_ucall(struct context *c, struct stp_kmod_call *k, "
		"char (*s)[MAXSTRINGLEN], char *ret)\n{\n\tswitch (k->func) {\n");
	for (int i = 0; i < E->funcs.len; i++) {
		const struct efunc *ef = VEC_AT(&E->funcs, i);

		if (is_ucall(E, ef))
			dispatch_case(out, ef, n++);
	}
	for (int i = 0; i < E->ublocks.len; i++)
		ublock_case(out, VEC_AT(&E->ublocks, i), n++);
	fprintf(out, "\tdefault:\n\t\treturn -EINVAL;\n\t}\n}\n\n");
}
