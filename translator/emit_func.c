/*
 * emit_func.c - functions: the walk over the program, the call graph
 * (which context calls what; no recursion in the kernel), frames, the
 * C functions for script and embedded-C functions, and their calls.
 *
 * A script function becomes
 *	static int64_t fn_NAME(struct context *c, int64_t a_x, const char *a_s)
 * (void for no value; a string function writes into a caller's buffer
 * passed as `char *ret` after c).  Its parameters and locals live in its
 * frame.  An embedded-C function becomes an inline function whose body is
 * the C code, with stp_tapset.h's CONTEXT/STAP_ARG_/STAP_RETVALUE/
 * STAP_RETURN/STAP_ERROR macros defined around it.
 */
#include <string.h>
#include "emit_int.h"
#include "../runtime/kmod/kmod_abi.h"

/* ---- walking --------------------------------------------------------------- */

void emit_walk_expr(struct expr *e, emit_walk_fn fn, void *arg)
{
	if (!e)
		return;
	fn(e, arg);
	emit_walk_expr(e->left, fn, arg);
	emit_walk_expr(e->right, fn, arg);
	emit_walk_expr(e->cond, fn, arg);
	for (int i = 0; i < e->args.len; i++)
		emit_walk_expr(VEC_AT(&e->args, i), fn, arg);
	for (int i = 0; i < e->comps.len; i++)
		emit_walk_expr(((struct target_comp *)VEC_AT(&e->comps, i))->index_expr, fn, arg);
}

void emit_walk_stmt(struct stmt *s, emit_walk_fn fn, void *arg)
{
	if (!s)
		return;
	for (int i = 0; i < s->body.len; i++)
		emit_walk_stmt(VEC_AT(&s->body, i), fn, arg);
	emit_walk_expr(s->expr, fn, arg);
	emit_walk_expr(s->init, fn, arg);
	emit_walk_expr(s->incr, fn, arg);
	for (int i = 0; i < s->keys.len; i++)
		emit_walk_expr(VEC_AT(&s->keys, i), fn, arg);
	emit_walk_expr(s->value, fn, arg);
	emit_walk_expr(s->array, fn, arg);
	emit_walk_expr(s->limit, fn, arg);
	emit_walk_expr(s->catch_var, fn, arg);
	emit_walk_stmt(s->then, fn, arg);
	emit_walk_stmt(s->otherwise, fn, arg);
}

void emit_walk_program(struct emitter *E, emit_walk_fn fn, void *arg)
{
	for (int i = 0; i < E->prog->probes.len; i++) {
		struct derived_probe *dp = VEC_AT(&E->prog->probes, i);

		emit_walk_expr(dp->cond, fn, arg);
		emit_walk_stmt(dp->body, fn, arg);
	}
	for (int i = 0; i < E->prog->funcs.len; i++)
		emit_walk_stmt(((struct func *)VEC_AT(&E->prog->funcs, i))->body, fn, arg);
}

/* ---- the call graph --------------------------------------------------------------- */

struct efunc *emit_efunc(struct emitter *E, const struct func *fn)
{
	return hmap_get(&E->fmap, fn);
}

static const char *func_cname(struct emitter *E, const struct func *fn)
{
	const char *c = arena_printf("fn_%s", fn->name);

	for (int n = 2;; n++) {
		bool taken = false;

		for (int i = 0; i < E->funcs.len && !taken; i++)
			taken = strcmp(((struct efunc *)VEC_AT(&E->funcs, i))->cname, c) == 0;
		if (!taken)
			return c;
		c = arena_printf("fn_%s_%d", fn->name, n);
	}
}

struct callees {
	struct emitter *E;
	struct vec *out;
};

/* The overload chain FN heads (functions of one name and arity), or NULL. */
static struct overload *chain_of(struct emitter *E, const struct func *fn)
{
	for (int i = 0; i < E->prog->overloads.len; i++) {
		struct overload *o = VEC_AT(&E->prog->overloads, i);

		if (o->funcs.len > 1 && VEC_AT(&o->funcs, 0) == fn)
			return o;
	}
	return NULL;
}

static void add_callee(struct callees *cs, struct efunc *ef)
{
	for (int i = 0; ef && i < cs->out->len; i++)
		if (VEC_AT(cs->out, i) == ef)
			return;
	if (ef)
		vec_push(cs->out, ef);
}

static void collect_call(struct expr *e, void *arg)
{
	struct callees *cs = arg;
	struct overload *o;

	if (e->kind != EXPR_CALL || e->builtin || !e->func)
		return;
	o = chain_of(cs->E, e->func);
	if (!o) {
		add_callee(cs, emit_efunc(cs->E, e->func));
		return;
	}
	for (int i = 0; i < o->funcs.len; i++)
		add_callee(cs, emit_efunc(cs->E, VEC_AT(&o->funcs, i)));
}

static void calls_of(struct emitter *E, struct stmt *body, struct expr *cond, struct vec *out)
{
	struct callees cs = { E, out };

	emit_walk_stmt(body, collect_call, &cs);
	emit_walk_expr(cond, collect_call, &cs);
}

/* Mark what a kernel (or user) handler reaches; report kernel recursion. */
static bool reach(struct emitter *E, struct efunc *ef, bool kernel, struct derived_probe *dp)
{
	bool ok = true;

	if (kernel && ef->mark == 1 && E->kmod)
		return true;	/* a module's functions push their frames: recursion runs */
	if (kernel && ef->mark == 1) {
		diag_error(ef->fn->loc, "function '%s' is recursive, which kernel context cannot run "
			   "(probe %s at %s)", ef->fn->name, dp->point,
			   emit_loc_text(dp->probe->loc));
		diag_hint("call it from a begin, end or timer probe (user context), where recursion "
			  "is bounded by MAXNESTING");
		return false;
	}
	if (kernel ? ef->kernel && ef->mark == 2 : ef->user)
		return true;
	if (kernel)
		ef->kernel = true;
	else
		ef->user = true;
	ef->mark = kernel ? 1 : ef->mark;
	for (int i = 0; i < ef->callees.len && ok; i++) {
		struct efunc *callee = VEC_AT(&ef->callees, i);
		bool known = false;

		if (kernel) {
			for (int j = 0; j < callee->callers.len; j++)
				known |= VEC_AT(&callee->callers, j) == ef;
			if (!known)
				vec_push(&callee->callers, ef);
		}
		ok = reach(E, callee, kernel, dp);
	}
	if (kernel)
		ef->mark = 2;
	return ok;
}

/* ---- BPF call frames ---------------------------------------------------------------- */

#define BPF_MAX_FRAMES 8

static int stmt_frames(struct emitter *E, const struct stmt *s);

struct frames_walk {
	struct emitter *E;
	int max;
};

/* Frames below a call of FN: its own when it is a subprogram, and its body's. */
static int call_frames(struct emitter *E, const struct func *fn)
{
	struct efunc *ef = emit_efunc(E, fn);

	if (fn->embedded)
		return 1;
	return (ef && ef->outline) + stmt_frames(E, fn->body);
}

/* Frames below an expression: a called function's, a string comparison's loop. */
static void expr_frames(struct expr *e, void *arg)
{
	struct frames_walk *w = arg;
	int n = 0;

	if (e->kind == EXPR_CALL && !e->builtin && e->func) {
		struct overload *o = chain_of(w->E, e->func);

		n = call_frames(w->E, e->func);
		for (int i = 1; o && i < o->funcs.len; i++)
			if (call_frames(w->E, VEC_AT(&o->funcs, i)) > n)
				n = call_frames(w->E, VEC_AT(&o->funcs, i));
	} else if (e->kind == EXPR_COMPARE && e->left->type == TYPE_STRING) {
		n = 1;
	}
	if (n > w->max)
		w->max = n;
}

/* How many BPF frames S needs below the one it runs in. */
static int stmt_frames(struct emitter *E, const struct stmt *s)
{
	struct frames_walk w = { E, 0 };
	int inner = 0;

	if (!s)
		return 0;
	emit_walk_expr(s->expr, expr_frames, &w);
	emit_walk_expr(s->init, expr_frames, &w);
	emit_walk_expr(s->incr, expr_frames, &w);
	emit_walk_expr(s->limit, expr_frames, &w);
	for (int i = 0; i < s->body.len; i++) {
		int n = stmt_frames(E, VEC_AT(&s->body, i));

		if (n > inner)
			inner = n;
	}
	if (stmt_frames(E, s->then) > inner)
		inner = stmt_frames(E, s->then);
	if (stmt_frames(E, s->otherwise) > inner)
		inner = stmt_frames(E, s->otherwise);
	if (s->kind == STMT_WHILE || s->kind == STMT_FOR || s->kind == STMT_FOREACH)
		inner++;	/* the body is a callback */
	return inner > w.max ? inner : w.max;
}

/* Inline again every function the call sites under S reach. */
static void inline_under(struct emitter *E, struct stmt *s, struct expr *cond)
{
	struct vec seen = { 0 };
	struct callees cs = { E, &seen };

	calls_of(E, s, cond, &seen);
	for (int i = 0; i < seen.len; i++) {
		struct efunc *ef = VEC_AT(&seen, i);

		for (int j = 0; j < ef->callees.len; j++)
			add_callee(&cs, VEC_AT(&ef->callees, j));
		ef->outline = false;
	}
}

/*
 * A kernel handler whose loops and subprograms (in it and the functions
 * it calls) nest too deep for BPF: the functions it reaches are inlined
 * again, and if its loops alone are too deep, an error.
 */
static void check_frames(struct emitter *E, struct derived_probe *dp)
{
	int n = 1 + stmt_frames(E, dp->body);

	if (n > BPF_MAX_FRAMES) {
		inline_under(E, dp->body, dp->cond);
		n = 1 + stmt_frames(E, dp->body);
	}
	if (n <= BPF_MAX_FRAMES)
		return;
	diag_error(dp->probe->loc, "probe %s nests loops and calls %d deep, which kernel context "
		   "cannot run: BPF allows %d call frames", dp->point, n, BPF_MAX_FRAMES);
	diag_hint("each loop body is a frame, counting the loops of the functions it calls");
}

/* ---- BPF subprograms ------------------------------------------------------------ */

static void count_call(struct expr *e, void *arg)
{
	struct emitter *E = arg;
	struct overload *o;

	if (e->kind != EXPR_CALL || e->builtin || !e->func)
		return;
	o = chain_of(E, e->func);
	for (int i = 0; i < (o ? o->funcs.len : 1); i++) {
		struct efunc *ef = emit_efunc(E, o ? VEC_AT(&o->funcs, i) : e->func);

		if (ef)
			ef->kcalls++;
	}
}

/*
 * Which script functions BPF code calls as subprograms: those called from
 * two places or more in kernel context, with at most 5 arguments (BPF's
 * registers; the context and a string result count).  clang then compiles
 * each once, not once per call: strace.stp's tapset functions are called
 * from hundreds of handlers (__int32() 246 times).  A subprogram is a BPF
 * call frame; check_frames() inlines again where a handler would nest
 * more than 8.  PMSTAP_NO_SUBPROGS=1 inlines every one.
 */
static void choose_outlined(struct emitter *E)
{
	for (int i = 0; i < E->prog->probes.len; i++) {
		struct derived_probe *dp = VEC_AT(&E->prog->probes, i);

		if (!E->kernel_probe[i])
			continue;
		emit_walk_expr(dp->cond, count_call, E);
		emit_walk_stmt(dp->body, count_call, E);
	}
	for (int i = 0; i < E->funcs.len; i++) {
		struct efunc *ef = VEC_AT(&E->funcs, i);

		if (ef->kernel)
			emit_walk_stmt(ef->fn->body, count_call, E);
	}
	for (int i = 0; i < E->funcs.len; i++) {
		struct efunc *ef = VEC_AT(&E->funcs, i);
		const struct func *fn = ef->fn;

		ef->outline = ef->kernel && !fn->embedded && ef->kcalls >= 2 &&
			      1 + (fn->ret_type == TYPE_STRING) + fn->params.len <= 5;
	}
}

void emit_funcs_analyze(struct emitter *E)
{
	struct vec seen = { 0 };

	for (int i = 0; i < E->prog->funcs.len; i++) {
		struct func *fn = VEC_AT(&E->prog->funcs, i);
		struct efunc *ef = ARENA_NEW(struct efunc);

		ef->fn = fn;
		ef->cname = func_cname(E, fn);
		vec_push(&E->funcs, ef);
		hmap_put(&E->fmap, fn, ef);
	}
	for (int i = 0; i < E->funcs.len; i++) {
		struct efunc *ef = VEC_AT(&E->funcs, i);

		calls_of(E, ef->fn->body, NULL, &ef->callees);
	}
	for (int i = 0; i < E->prog->probes.len; i++) {
		struct derived_probe *dp = VEC_AT(&E->prog->probes, i);
		bool kernel = E->kernel_probe[i];

		seen.len = 0;
		calls_of(E, dp->body, dp->cond, &seen);
		for (int j = 0; j < seen.len; j++) {
			struct efunc *ef = VEC_AT(&seen, j);

			if (kernel)
				ef->probe_caller = true;
			if (!reach(E, ef, kernel, dp))
				return;
		}
	}
	if (!E->kmod && !E->dyninst && !E->no_subprogs)
		choose_outlined(E);
	for (int i = 0; i < E->prog->probes.len && !E->kmod; i++)
		if (E->kernel_probe[i])
			check_frames(E, VEC_AT(&E->prog->probes, i));
}

/* ---- frames --------------------------------------------------------------------------- */

struct frame *emit_frame_new(struct emitter *E, const char *name)
{
	struct frame *fr = ARENA_NEW(struct frame);

	fr->name = name;
	fr->off = arena_printf("FRAME_%s", name + 6);	/* past "frame_" */
	fr->nkey = arena_alloc(sizeof(int) * (size_t)(E->globals.len + 1));
	fr->maxkey = arena_alloc(sizeof(int) * (size_t)(E->globals.len + 1));
	fr->fields = open_memstream(&fr->fields_buf, &fr->fields_len);
	return fr;
}

void emit_frame_local(struct emitter *E, struct frame *fr, struct vardecl *d)
{
	if (d->type == TYPE_STRING)
		fprintf(fr->fields, "\tchar l_%s[MAXSTRINGLEN];\n", d->name);
	else if (d->type == TYPE_LONG)
		fprintf(fr->fields, "\tint64_t l_%s;\n", d->name);
}

static bool frame_is_empty(struct emitter *E, const struct frame *fr)
{
	if (fr->fields_len || fr->has_ret || fr->maxstr)
		return false;
	for (int i = 0; i < E->globals.len; i++)
		if (fr->maxkey[i])
			return false;
	return true;
}

/*
 * The frame's struct, into the declarations; none for an empty frame of a
 * probe handler (fr->empty: the handler then has no f).  A function's is
 * always declared: the frame offsets are sums of their sizes.
 */
void emit_frame_decl(struct emitter *E, struct frame *fr, bool handler)
{
	fclose(fr->fields);
	fr->empty = handler && frame_is_empty(E, fr);
	if (fr->empty) {
		free(fr->fields_buf);
		return;
	}
	fprintf(E->decls, "struct %s {\n%s", fr->name, fr->fields_buf);
	free(fr->fields_buf);
	if (fr->has_ret)
		fprintf(E->decls, "\tint64_t ret;\n");
	if (fr->maxstr)
		fprintf(E->decls, "\tchar s[%d][MAXSTRINGLEN];\n", fr->maxstr);
	for (int i = 0; i < E->globals.len; i++) {
		struct eglobal *g = VEC_AT(&E->globals, i);

		if (fr->maxkey[i])
			fprintf(E->decls, "\tstruct key_%s k_%s[%d];\n", g->cname, g->cname,
				fr->maxkey[i]);
	}
	fprintf(E->decls, "};\n\n");
}

/* ---- C signatures ------------------------------------------------------------------------ */

static const char *param_ctype(const struct vardecl *d)
{
	return d->type == TYPE_STRING ? "const char *" : "int64_t ";
}

static const char *signature_as(const struct func *fn, const char *name, const char *attr)
{
	const char *ret = fn->ret_type == TYPE_LONG ? "int64_t" : "void";
	char *s = arena_printf("%s%s %s(struct context *c", attr, ret, name);

	if (fn->ret_type == TYPE_STRING)
		s = arena_printf("%s, char *ret", s);
	for (int i = 0; i < fn->params.len; i++) {
		struct vardecl *p = VEC_AT(&fn->params, i);

		s = arena_printf("%s, %sa_%s", s, param_ctype(p), p->name);
	}
	return arena_printf("%s)", s);
}

static const char *signature(struct emitter *E, struct efunc *ef)
{
	const struct func *fn = ef->fn;
	/*
	 * BPF inlines a function unless it is a subprogram of its own
	 * (choose_outlined()): a program has at most 8 call frames, which
	 * loop bodies (bpf_loop callbacks) need too.
	 */
	const char *attr = E->ctx == ECTX_USER ? (fn->embedded ? "static inline " : "static ")
		: E->kmod && !fn->embedded ? "static noinline "
		: ef->outline ? "static __noinline " : "static __always_inline ";

	return signature_as(fn, ef->cname, attr);
}

static void comment(struct emitter *E, FILE *out, struct efunc *ef)
{
	const struct func *fn = ef->fn;

	fprintf(out, "/* function %s:%s (", fn->name, ast_type_name(fn->ret_type));
	for (int i = 0; i < fn->params.len; i++) {
		struct vardecl *p = VEC_AT(&fn->params, i);

		fprintf(out, "%s%s:%s", i ? ", " : "", p->name, ast_type_name(p->type));
	}
	fprintf(out, ") at %s */\n", emit_loc_text(fn->loc));
}

/* ---- embedded-C functions -------------------------------------------------------------------- */

static bool emit_func_is_tapset(const struct func *fn)
{
	return fn->file && fn->file->is_tapset;
}

/* STAP_ARG_NAME for each parameter: TO followed by its name. */
static void arg_macros(FILE *out, const struct func *fn, const char *to)
{
	for (int i = 0; i < fn->params.len; i++) {
		const char *name = ((struct vardecl *)VEC_AT(&fn->params, i))->name;

		fprintf(out, "#define STAP_ARG_%s %s%s\n", name, to, name);
	}
}

/* After the body: the macros gone again. */
static void undef_macros(FILE *out, const struct func *fn)
{
	fprintf(out, "#undef STAP_RETVALUE\n#undef STAP_RETURN\n#undef STAP_ERROR\n#undef STAP_NEXT\n");
	for (int i = 0; i < fn->params.len; i++)
		fprintf(out, "#undef STAP_ARG_%s\n", ((struct vardecl *)VEC_AT(&fn->params, i))->name);
}

/* stap's locals struct, THIS: __retvalue (ret for a string) and l_NAME. */
static void this_locals(FILE *out, const struct func *fn)
{
	enum type rt = fn->ret_type;

	fprintf(out, "\tstruct {\n");
	if (rt == TYPE_LONG)
		fprintf(out, "\t\tint64_t __retvalue;\n");
	else if (rt == TYPE_STRING)
		fprintf(out, "\t\tchar *__retvalue;\n");
	for (int i = 0; i < fn->params.len; i++) {
		struct vardecl *p = VEC_AT(&fn->params, i);

		fprintf(out, "\t\t%sl_%s;\n", p->type == TYPE_STRING ? "const char *" : "int64_t ",
			p->name);
	}
	fprintf(out, "\t\tchar stp_unused_;\n\t} stp_this_ = {%s", rt == TYPE_STRING ? " ret," :
		rt == TYPE_LONG ? " 0," : "");
	for (int i = 0; i < fn->params.len; i++)
		fprintf(out, " a_%s,", ((struct vardecl *)VEC_AT(&fn->params, i))->name);
	fprintf(out, " 0 }, *THIS __attribute__((unused)) = &stp_this_;\n\n");
}

/*
 * In a module, as stap 4.8 writes them: the locals in *THIS (__retvalue,
 * l_NAME), STAP_ERROR printf-style, and every exit through out: (after
 * deref_fault:, where kread() and the rest of runtime/kmod/stp_guru.h go
 * on a fault).
 */
static void embedded_function_kmod(struct emitter *E, struct efunc *ef, FILE *out)
{
	const struct func *fn = ef->fn;
	enum type rt = fn->ret_type;

	comment(E, out, ef);
	fprintf(out, "%s\n{\n", signature(E, ef));
	this_locals(out, fn);
	if (rt == TYPE_STRING)
		fprintf(out, "\tret[0] = '\\0';\n");
	arg_macros(out, fn, "THIS->l_");
	fprintf(out, "#define STAP_RETVALUE THIS->__retvalue\n");
	if (rt == TYPE_LONG)
		fprintf(out, "#define STAP_RETURN(v) do { THIS->__retvalue = (v); goto out; } while (0)\n");
	else if (rt == TYPE_STRING)
		fprintf(out, "#define STAP_RETURN(v) do { stp_strcpy(ret, (v)); goto out; } while (0)\n");
	else
		fprintf(out, "#define STAP_RETURN(...) goto out\n");
	fprintf(out, "#define STAP_ERROR(...) do { stp_guru_raise(CONTEXT, __VA_ARGS__); goto out; } "
		"while (0)\n");
	fprintf(out, "#define STAP_NEXT do { c->error = STP_ERR_NEXT; goto out; } while (0)\n");
	fprintf(out, "%s\n", fn->embedded);
	undef_macros(out, fn);
	if (!strstr(fn->embedded, "CATCH_DEREF_FAULT"))
		fprintf(out, "deref_fault: __attribute__((unused));\n");
	fprintf(out, "out: __attribute__((unused));\n");
	if (rt == TYPE_LONG)
		fprintf(out, "\treturn THIS->__retvalue;\n");
	else
		fprintf(out, "\treturn;\n");
	fprintf(out, "}\n\n");
}

static void embedded_function(struct emitter *E, struct efunc *ef, FILE *out)
{
	const struct func *fn = ef->fn;
	enum type rt = fn->ret_type;
	const char *rv = rt == TYPE_LONG ? " 0" : "";

	if (E->kmod && E->ctx == ECTX_KERNEL && E->s->guru && !emit_func_is_tapset(fn))
		return embedded_function_kmod(E, ef, out);
	comment(E, out, ef);
	fprintf(out, "%s\n{\n", signature(E, ef));
	if (rt == TYPE_LONG)
		fprintf(out, "\tint64_t ret = 0;\n\n");
	else if (rt == TYPE_STRING)
		fprintf(out, "\tret[0] = '\\0';\n");
	arg_macros(out, fn, "a_");
	fprintf(out, "#define STAP_RETVALUE ret\n");
	if (rt == TYPE_LONG)
		fprintf(out, "#define STAP_RETURN(v) return (v)\n");
	else if (rt == TYPE_STRING)
		fprintf(out, "#define STAP_RETURN(v) do { stp_strcpy(ret, (v)); return; } while (0)\n");
	else
		fprintf(out, "#define STAP_RETURN(...) return\n");
	fprintf(out, "#define STAP_ERROR(msg) do { stp_error(CONTEXT, (msg)); return%s; } while (0)\n",
		rv);
	fprintf(out, "#define STAP_NEXT do { c->error = STP_ERR_NEXT; return%s; } while (0)\n", rv);
	fprintf(out, "%s\n", fn->embedded);
	undef_macros(out, fn);
	if (rt == TYPE_LONG)
		fprintf(out, "\treturn ret;\n");
	fprintf(out, "}\n\n");
}

/* ---- script functions ------------------------------------------------------------------------- */

/* The declarations at the top of a C function, from what its body used. */
void emit_cfunc_decls(struct emitter *E, struct cfunc *cf, FILE *out, const char *fail_ret)
{
	if (E->ctx == ECTX_KERNEL && !cf->is_callback && E->frame->pushed)
		fprintf(out, "\tstruct %s *f = stp_kmod_push(c, sizeof(struct %s), %d);\n",
			E->frame->name, E->frame->name, E->frame->push_site);
	else if (E->ctx == ECTX_KERNEL && !cf->is_callback)
		fprintf(out, "\tstruct %s *f __attribute__((unused)) = stp_frame(c, %s);\n",
			E->frame->name, E->frame->off);
	if (cf->uses_g)
		fprintf(out, "\tstruct stp_globals *g = STP_GLOBALS(c);\n");
	if (cf->uses_env)
		fprintf(out, "\tstruct stp_env env = { c, NULL, %s, %s };\n",
			cf->has_ret_ptr ? "ret" : "NULL", E->frame->pushed ? "f" : "NULL");
	for (int i = 1; i <= cf->ntemps; i++)
		fprintf(out, "%s%s", i == 1 ? "\tint64_t " : ", ", arena_printf("t%d", i));
	if (cf->ntemps)
		fprintf(out, ";\n");
	fprintf(out, "\n");
	if (E->ctx == ECTX_KERNEL && !cf->is_callback && E->frame->pushed)
		fprintf(out, "\tif (!f)\n\t\treturn%s;\n", fail_ret);
	if (cf->uses_g && E->frame->pushed && !cf->is_callback)
		fprintf(out, "\tif (!g)\n\t\tgoto out;\n");	/* out: pops the frame */
	else if (cf->uses_g)
		fprintf(out, "\tif (!g)\n\t\treturn%s;\n", fail_ret);
}

static void params_in(struct emitter *E, const struct func *fn)
{
	for (int i = 0; i < fn->params.len; i++) {
		struct vardecl *p = VEC_AT(&fn->params, i);

		emit_frame_local(E, E->frame, p);
		if (p->type == TYPE_STRING)
			emit_line(E, "stp_strcpy(f->l_%s, a_%s);", p->name, p->name);
		else
			emit_line(E, "f->l_%s = a_%s;", p->name, p->name);
	}
}

static void script_function(struct emitter *E, struct efunc *ef, FILE *out)
{
	const struct func *fn = ef->fn;
	struct cfunc *cf;
	char *body;
	int site = 0;
	const char *rv = fn->ret_type == TYPE_LONG ? " 0" : "";

	E->fn = ef;
	E->frame = emit_frame_new(E, arena_printf("frame_%s", ef->cname));
	E->frame->has_ret = true;
	E->frame->pushed = E->ctx == ECTX_KERNEL && E->kmod;
	if (E->frame->pushed)
		E->frame->push_site = emit_error_site(E, fn->loc, "MAXNESTING exceeded");
	cf = emit_cfunc_begin(E);
	cf->has_ret_ptr = fn->ret_type == TYPE_STRING;
	if (E->ctx == ECTX_USER) {
		site = emit_error_site(E, fn->loc, "MAXNESTING exceeded");
		emit_line(E, "if (stp_nest(c, %d))", site);
		emit_line(E, "\treturn%s;", rv);
	}
	emit_line(E, fn->ret_type == TYPE_STRING ? "ret[0] = '\\0';" : "f->ret = 0;");
	params_in(E, fn);
	emit_locals_init(E, (struct vec *)&fn->locals);
	emit_stmt(E, fn->body);
	emit_cfunc_end(E, cf, &body);
	emit_frame_decl(E, E->frame, false);
	comment(E, out, ef);
	fprintf(out, "%s\n{\n", signature(E, ef));
	if (E->ctx == ECTX_USER)
		fprintf(out, "\tstruct %s fr, *f __attribute__((unused)) = &fr;\n", E->frame->name);
	emit_cfunc_decls(E, cf, out, rv);
	fputs(body, out);
	free(body);
	fprintf(out, "out: __attribute__((unused));\n");
	if (E->ctx == ECTX_USER)
		fprintf(out, "\tstp_unnest(c);\n");
	else if (E->frame->pushed)
		fprintf(out, "\tstp_kmod_pop(c, sizeof(struct %s));\n", E->frame->name);
	if (fn->ret_type == TYPE_LONG)
		fprintf(out, "\treturn f->ret;\n");
	fprintf(out, "}\n\n");
	E->fn = NULL;
}

/*
 * An overloaded function: each of the chain in turn, until one does not
 * `next` on to the others.
 */
static void dispatcher(struct emitter *E, struct overload *o, FILE *out)
{
	struct efunc *head = emit_efunc(E, VEC_AT(&o->funcs, 0));
	const struct func *fn = head->fn;
	const char *attr = E->ctx == ECTX_USER ? "static " : "static __always_inline ";
	const char *args = "c", *rv = fn->ret_type == TYPE_LONG ? "r" : "";

	if (fn->ret_type == TYPE_STRING)
		args = "c, ret";
	for (int i = 0; i < fn->params.len; i++)
		args = arena_printf("%s, a_%s", args, ((struct vardecl *)VEC_AT(&fn->params, i))->name);
	fprintf(out, "/* %s: %d overloads, by priority */\n", fn->name, o->funcs.len);
	fprintf(out, "%s\n{\n", signature_as(fn, arena_printf("fnd_%s", head->cname + 3), attr));
	if (*rv)
		fprintf(out, "\tint64_t r = 0;\n\n");
	for (int i = 0; i < o->funcs.len; i++) {
		struct efunc *ef = emit_efunc(E, VEC_AT(&o->funcs, i));

		fprintf(out, "\t%s%s(%s);\n", *rv ? "r = " : "", ef->cname, args);
		if (i < o->funcs.len - 1)
			fprintf(out, "\tif (c->error != STP_ERR_NEXT)\n\t\treturn%s%s;\n"
				"\tc->error = STP_ERR_NONE;\n", *rv ? " " : "", rv);
	}
	if (*rv)
		fprintf(out, "\treturn r;\n");
	fprintf(out, "}\n\n");
}

/*
 * In user context with --runtime=kernel, a script's embedded-C function
 * runs in the module (emit_guru.c): a stub with its signature asks the
 * module to, with its number in the module's table, and raises the
 * error the function raised there as this call's.
 */
static void ucall_stub(struct emitter *E, struct efunc *ef, FILE *out)
{
	const struct func *fn = ef->fn;

	fprintf(out, "/* function %s at %s: runs in the module, its function %d */\n", fn->name,
		emit_loc_text(fn->loc), emit_guru_ucall(E, ef));
	fprintf(out, "%s\n{\n", signature(E, ef));
	fprintf(out, "\tstruct stp_kmod_call k = { .func = %d };\n\tchar err[MAXSTRINGLEN];\n\n",
		emit_guru_ucall(E, ef));
	for (int i = 0; i < fn->params.len; i++) {
		struct vardecl *p = VEC_AT(&fn->params, i);

		if (p->type == TYPE_STRING)
			fprintf(out, "\tk.strs[%d] = (uintptr_t)a_%s;\n", i, p->name);
		else
			fprintf(out, "\tk.nums[%d] = a_%s;\n", i, p->name);
	}
	if (fn->ret_type == TYPE_STRING)
		fprintf(out, "\tret[0] = '\\0';\n\tk.ret_str = (uintptr_t)ret;\n");
	fprintf(out, "\tstp_kmod_ucall(c, &k, err);\n");
	if (fn->ret_type == TYPE_LONG)
		fprintf(out, "\treturn k.ret;\n");
	fprintf(out, "}\n\n");
}

/* Does the current context emit EF: it calls it, or (the module) runs it for user context? */
static bool in_context(const struct emitter *E, const struct efunc *ef)
{
	if (E->ctx == ECTX_KERNEL)
		return ef->kernel || emit_guru_ucall(E, ef) >= 0;
	return ef->user;
}

/* Every function the current context calls, callees first. */
void emit_functions(struct emitter *E)
{
	int n = 0;

	for (int i = 0; i < E->funcs.len; i++) {
		struct efunc *ef = VEC_AT(&E->funcs, i);

		if (!in_context(E, ef))
			continue;
		fprintf(E->protos, "%s;\n", signature(E, ef));
		n++;
	}
	if (n)
		fprintf(E->protos, "\n");
	for (int i = 0; i < E->funcs.len; i++) {
		struct efunc *ef = VEC_AT(&E->funcs, i);

		if (!in_context(E, ef))
			continue;
		if (E->ctx == ECTX_USER && emit_guru_ucall(E, ef) >= 0)
			ucall_stub(E, ef, E->defs);
		else if (ef->fn->embedded)
			embedded_function(E, ef, E->defs);
		else
			script_function(E, ef, E->defs);
	}
	for (int i = 0; i < E->prog->overloads.len; i++) {
		struct overload *o = VEC_AT(&E->prog->overloads, i);
		struct efunc *head = o->funcs.len > 1 ? emit_efunc(E, VEC_AT(&o->funcs, 0)) : NULL;

		if (head && (E->ctx == ECTX_KERNEL ? head->kernel : head->user))
			dispatcher(E, o, E->defs);
	}
}

/* ---- calls ---------------------------------------------------------------------------------- */

const char *emit_call(struct emitter *E, struct expr *e, bool used)
{
	struct efunc *ef = emit_efunc(E, e->func);
	const struct func *fn = e->func;
	const char **vals = arena_alloc(sizeof(char *) * (size_t)(e->args.len + 1));
	const char *args = "", *t = NULL, *cname = ef ? ef->cname : NULL;

	if (!ef)
		return "0";
	/* a tapset body marked user-context has no kernel implementation (a module's: kmod) */
	if (fn->embedded && E->ctx == ECTX_KERNEL && strstr(fn->embedded, "/* user-context */") &&
	    !(E->kmod && strstr(fn->embedded, "/* kmod */"))) {
		emit_unsupported(E, e->loc, arena_printf("%s()", fn->name),
				 "call it in a begin, end or timer probe");
		return fn->ret_type == TYPE_STRING ? "\"\"" : "0";
	}
	/* a tapset body only a module runs (set_kernel_*()): in its kernel probes */
	if (fn->embedded && strstr(fn->embedded, "/* kmod-only") &&
	    !(E->kmod && E->ctx == ECTX_KERNEL)) {
		emit_guru_module_only(E, e->loc, fn->name, fn->embedded);
		return fn->ret_type == TYPE_STRING ? "\"\"" : "0";
	}
	if (E->ctx == ECTX_USER && emit_guru_ucall(E, ef) >= 0 &&
	    fn->params.len > STP_KMOD_CALL_MAXARGS) {
		emit_unsupported(E, e->loc, arena_printf("a call of %s() with %d arguments from a "
							 "begin, end, error or timer probe",
							 fn->name, fn->params.len),
				 arena_printf("the module runs an embedded-C function for those "
					      "with at most %d arguments", STP_KMOD_CALL_MAXARGS));
		return fn->ret_type == TYPE_STRING ? "\"\"" : "0";
	}
	if (chain_of(E, fn))
		cname = arena_printf("fnd_%s", ef->cname + 3);
	emit_exprs_ordered(E, (struct expr **)e->args.items, e->args.len, vals);
	for (int i = 0; i < e->args.len; i++) {
		struct expr *a = VEC_AT(&e->args, i);

		if (fn->embedded && E->ctx == ECTX_KERNEL && a->kind == EXPR_STRING) {
			const char *b = emit_str_temp(E);

			emit_line(E, "stp_strcpy(%s, %s);", b, vals[i]);
			vals[i] = b;
		}
		args = arena_printf("%s, %s", args, vals[i]);
	}
	E->side_effects++;
	if (fn->ret_type == TYPE_STRING) {
		t = emit_str_temp(E);
		emit_line(E, "%s(c, %s%s);", cname, t, args);
	} else if (fn->ret_type == TYPE_LONG && used) {
		t = emit_long_temp(E);
		emit_line(E, "%s = %s(c%s);", t, cname, args);
	} else {
		emit_line(E, "%s(c%s);", cname, args);
	}
	/* error(): the message is all stap prints; other services' errors name the call */
	if (fn->embedded && E->kmod && E->s->guru && !emit_func_is_tapset(fn))
		/* a module's STAP_ERROR(): stap names the function, not the call */
		emit_check(E, emit_error_site(E, fn->loc, arena_printf("error in '%s'", fn->name)));
	else if (fn->embedded && !strstr(fn->embedded, "stp_error("))
		emit_check(E, emit_error_site(E, e->loc, arena_printf("error in '%s'", fn->name)));
	else
		emit_check(E, -1);
	return t ? t : "0";
}

/* ---- kernel frame offsets ------------------------------------------------------------------ */

static bool has_frame(const struct emitter *E, const struct efunc *ef)
{
	return ef->kernel && !ef->fn->embedded && !E->kmod;
}

/* FRAME_fn_x = past the frames of every caller (callers are placed first). */
static void func_offset(const struct emitter *E, struct efunc *ef, FILE *out)
{
	const char *prev = ef->probe_caller ? "STP_PROBE_FRAMES" : "0";
	int k = 0;

	for (int i = 0; i < ef->callers.len; i++) {
		struct efunc *caller = VEC_AT(&ef->callers, i);

		if (!has_frame(E, caller))
			continue;
		fprintf(out, "\tFRAME_%s_%d = STP_MAX(%s, FRAME_%s + sizeof(struct frame_%s)),\n",
			ef->cname, k, prev, caller->cname, caller->cname);
		prev = arena_printf("FRAME_%s_%d", ef->cname, k++);
	}
	fprintf(out, "\tFRAME_%s = %s,\n", ef->cname, prev);
}

/*
 * A module's functions push their frames past the handlers' (stp_kmod_push,
 * MAXNESTING deep at most, as stap nests them): room for MAXNESTING of
 * the largest.
 */
static const char *kmod_frames(struct emitter *E, FILE *out)
{
	const char *max = "0";

	for (int i = 0; i < E->funcs.len; i++) {
		struct efunc *ef = VEC_AT(&E->funcs, i);

		if (!ef->kernel || ef->fn->embedded)
			continue;
		fprintf(out, "\tSTP_FUNC_FRAME_%s = STP_MAX(%s, STP_KMOD_FRAME(struct frame_%s)),\n",
			ef->cname, max, ef->cname);
		max = arena_printf("STP_FUNC_FRAME_%s", ef->cname);
	}
	return arena_printf("STP_PROBE_FRAMES + MAXNESTING * %s", max);
}

/* The enumerators FRAME_fn_x and STP_FRAMES_END (after STP_PROBE_FRAMES). */
void emit_func_offsets(struct emitter *E, FILE *out)
{
	struct hmap placed = { 0 };
	const char *end = "STP_PROBE_FRAMES";
	bool progress = true;

	while (progress) {
		progress = false;
		for (int i = 0; i < E->funcs.len; i++) {
			struct efunc *ef = VEC_AT(&E->funcs, i);
			bool ready = has_frame(E, ef) && !hmap_get(&placed, ef);

			for (int j = 0; ready && j < ef->callers.len; j++) {
				struct efunc *caller = VEC_AT(&ef->callers, j);

				ready = !has_frame(E, caller) || hmap_get(&placed, caller);
			}
			if (!ready)
				continue;
			func_offset(E, ef, out);
			fprintf(out, "\tSTP_FRAMES_END_%s = STP_MAX(%s, FRAME_%s + sizeof(struct frame_%s)),\n",
				ef->cname, end, ef->cname, ef->cname);
			end = arena_printf("STP_FRAMES_END_%s", ef->cname);
			hmap_put(&placed, ef, ef);
			progress = true;
		}
	}
	if (E->kmod)
		end = kmod_frames(E, out);
	fprintf(out, "\tSTP_FRAMES_END = %s,\n", end);
}
