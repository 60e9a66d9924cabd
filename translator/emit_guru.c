/*
 * emit_guru.c - a script's own embedded C (guru mode, -g) in a module
 * (--runtime=kernel): the C written for stap's module runtime.
 *
 * script.kmod.c gets runtime/kmod/stp_guru.h (kread() and the rest)
 * and the script's top-level %{ %} blocks after the runtime's services,
 * before any function: their definitions are the module's, and the
 * script's embedded-C functions (emit_func.c) and %{ %} expressions and
 * statements in kernel probes use them.  begin, end, error and timer
 * probes run in pmstap here, not in the module: C written for the
 * module has no place there, and pass 3 says so.  The tapsets' embedded
 * C is pcp-stap's own (runtime/stp_tapset.h services) and runs on
 * either side as with the other runtimes.
 */
#include "emit_int.h"

/* The guru header and the top-level blocks, in the script's order. */
void emit_guru_prelude(struct emitter *E, FILE *out)
{
	if (!E->s->guru)
		return;
	fprintf(out, "#include \"kmod/stp_guru.h\"\n\n");
	for (int i = 0; i < E->prog->embeds.len; i++) {
		const struct embed *em = VEC_AT(&E->prog->embeds, i);

		fprintf(out, "/* embedded C at %s */\n%s\n\n", emit_loc_text(em->loc), em->code);
	}
}

/* WHAT, which only the module runs, in a probe that pmstap runs: refused. */
static void module_user(struct emitter *E, struct srcloc loc, const char *what)
{
	const char *key = arena_printf("%p:%d:%d:guru", (const void *)loc.src, loc.line, loc.col);

	E->errors_reported++;
	if (hmap_get(&E->reported, key))
		return;
	hmap_put(&E->reported, key, (void *)key);
	diag_error(loc, "%s runs in the module, not in a begin, end, error or timer probe: pmstap "
		   "runs those with --runtime=kernel", what);
	diag_hint("call it from a probe in the kernel (kernel.trace, kernel.function, kprobe, "
		  "perf, timer.profile)");
}

/* WHAT, the script's embedded C, in a probe that pmstap runs: refused. */
void emit_guru_user(struct emitter *E, struct srcloc loc, const char *what)
{
	module_user(E, loc, arena_printf("embedded C (%s)", what));
}

/*
 * A call of NAME, a tapset function that writes kernel memory (kmod-only:
 * set_kernel_*()), where that cannot run: in a probe pmstap runs, or on a
 * runtime other than the kernel's.
 */
void emit_guru_module_only(struct emitter *E, struct srcloc loc, const char *name)
{
	if (E->kmod) {
		module_user(E, loc, arena_printf("%s()", name));
		return;
	}
	emit_unsupported(E, loc, arena_printf("%s()", name),
			 "it writes kernel memory, which only the kernel runtime's module can "
			 "(--runtime=kernel, in a probe in the kernel)");
}

/*
 * %{ CODE %} as an expression in a kernel probe: a long, or with
 * the pragma string a char * whose string is copied.
 */
const char *emit_guru_expr(struct emitter *E, struct expr *e)
{
	const char *t;

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
