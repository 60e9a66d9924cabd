/*
 * emit_user.c - user context: script.c.  begin, end, error, never and
 * timer probes become `static int probe_N(struct stp_uctx *u)`, run by the
 * runner; loops are C loops, and foreach (sorted, limited, over slices)
 * walks the keys runtime/user/uctx.c collects.  The file ends with the
 * initial values of the globals and the struct stp_meta.
 */
#include <string.h>
#include "emit_int.h"

/* ---- loops ------------------------------------------------------------------ */

static void action_check(struct emitter *E, struct stmt *s)
{
	int site = emit_error_site(E, s->loc, "MAXACTION exceeded");

	emit_line(E, "if (stp_action(c, %d, %d))", emit_count_stmts(s->then) + 1, site);
	emit_fail(E);
}

/*
 *	while (cond) body	for (init; cond; incr) body
 * as for (;;) { MAXACTION; if (!cond) break; body; incr }
 */
void emit_user_loop(struct emitter *E, struct stmt *s)
{
	int n = ++E->seq, mark, *keys;
	const char *c, *saved = E->cf->cont_label;

	emit_line(E, "/* %s at %s */", s->kind == STMT_FOR ? "for" : "while",
		  emit_loc_text(s->loc));
	if (s->init) {
		emit_temps_mark(E, &mark, &keys);
		emit_expr_void(E, s->init);
		emit_temps_release(E, mark, keys);
	}
	emit_line(E, "for (;;) {");
	E->cf->indent++;
	action_check(E, s);
	if (s->expr) {
		emit_temps_mark(E, &mark, &keys);
		c = emit_cond(E, s->expr);
		emit_line(E, "if (!%s)", c);
		emit_line(E, "\tbreak;");
		emit_temps_release(E, mark, keys);
	}
	E->cf->cont_label = s->incr ? arena_printf("cont_%d", n) : NULL;
	emit_stmt(E, s->then);
	E->cf->cont_label = saved;
	if (s->incr) {
		E->cf->indent--;
		emit_line(E, "cont_%d: __attribute__((unused));", n);
		E->cf->indent++;
		emit_temps_mark(E, &mark, &keys);
		emit_expr_void(E, s->incr);
		emit_temps_release(E, mark, keys);
	}
	E->cf->indent--;
	emit_line(E, "}");
}

/* ---- foreach ------------------------------------------------------------------------ */

/* Skip the keys a slice (a[*, v]) leaves out. */
static void slice_filter(struct emitter *E, struct stmt *s, struct eglobal *g, int n)
{
	struct expr *a = s->array;
	const char **vals;

	if (a->kind != EXPR_INDEX)
		return;
	vals = arena_alloc(sizeof(char *) * (size_t)(a->args.len + 1));
	for (int i = 0; i < a->args.len; i++)
		vals[i] = VEC_AT(&a->args, i) ? emit_snapshot(E, emit_expr(E, VEC_AT(&a->args, i)),
							      g->d->key_types[i]) : NULL;
	E->slice_vals = vals;
	(void)n;
}

static void slice_test(struct emitter *E, struct stmt *s, struct eglobal *g, int n)
{
	struct expr *a = s->array;

	if (a->kind != EXPR_INDEX)
		return;
	for (int i = 0; i < a->args.len; i++) {
		if (!E->slice_vals[i])
			continue;
		if (g->d->key_types[i] == TYPE_STRING)
			emit_line(E, "if (stp_strcmp(k_%d->k%d, %s))", n, i + 1, E->slice_vals[i]);
		else
			emit_line(E, "if (k_%d->k%d != %s)", n, i + 1, E->slice_vals[i]);
		emit_line(E, "\tcontinue;");
	}
}

static void foreach_vars(struct emitter *E, struct stmt *s, struct eglobal *g, int n)
{
	for (int i = 0; i < s->keys.len; i++) {
		struct expr *k = VEC_AT(&s->keys, i);
		const char *ref = emit_var_ref(E, k->decl);

		if (g->d->key_types[i] == TYPE_STRING)
			emit_line(E, "stp_strlcpy(%s, k_%d->k%d, sizeof(k_%d->k%d));", ref, n, i + 1, n,
				  i + 1);
		else
			emit_line(E, "%s = k_%d->k%d;", ref, n, i + 1);
	}
	if (!s->value)
		return;
	if (g->d->type == TYPE_STRING)
		emit_line(E, "stp_map_get_str(c, &g_%s, k_%d, %s);", g->cname, n,
			  emit_var_ref(E, s->value->decl));
	else
		emit_line(E, "%s = stp_map_get_long(c, &g_%s, k_%d);", emit_var_ref(E, s->value->decl),
			  g->cname, n);
}

static struct eglobal *foreach_global(struct emitter *E, struct stmt *s)
{
	struct expr *a = s->array;

	if (a->kind == EXPR_HIST) {
		emit_unsupported(E, a->loc, "foreach over histogram buckets", NULL);
		return NULL;
	}
	if (s->value && a->decl->type == TYPE_STATS) {
		emit_unsupported(E, s->value->loc, "a value variable in foreach over statistics",
				 NULL);
		return NULL;
	}
	return emit_global(E, a->decl);
}

static void foreach_loop(struct emitter *E, struct stmt *s, struct eglobal *g, int n)
{
	const char *outer = E->cf->err_label, *saved = E->cf->cont_label;

	emit_line(E, "while ((k_%d = stp_foreach_next(&it_%d))) {", n, n);
	E->cf->indent++;
	slice_test(E, s, g, n);
	if (s->limit) {
		emit_line(E, "if (n_%d++ >= lim_%d)", n, n);
		emit_line(E, "\tbreak;");
	}
	E->cf->err_label = arena_printf("foreach_fail_%d", n);
	E->cf->cont_label = NULL;
	action_check(E, s);
	foreach_vars(E, s, g, n);
	E->foreach_its[E->foreach_depth++] = arena_printf("it_%d", n);
	emit_stmt(E, s->then);
	E->foreach_depth--;
	E->cf->err_label = outer;
	E->cf->cont_label = saved;
	E->cf->indent--;
	emit_line(E, "}");
}

/*
 *	foreach ([k...] in a[slice] sort limit N) body
 * over the keys stp_foreach_start() collected (and sorted); the iterator
 * is closed on every way out.
 */
void emit_user_foreach(struct emitter *E, struct stmt *s)
{
	struct eglobal *g = foreach_global(E, s);
	int n = ++E->seq, stat = s->sort_by_stat ? (int)s->sort_stat : 0;
	const char *lim = NULL;

	if (!g || E->foreach_depth >= 16)
		return;
	emit_line(E, "/* foreach at %s */", emit_loc_text(s->loc));
	if (s->limit)
		lim = emit_snapshot(E, emit_expr(E, s->limit), TYPE_LONG);
	slice_filter(E, s, g, n);
	emit_line(E, "{");
	E->cf->indent++;
	emit_line(E, "struct stp_iter it_%d;", n);
	emit_line(E, "const struct key_%s *k_%d;", g->cname, n);
	if (lim)
		emit_line(E, "int64_t n_%d = 0, lim_%d = %s;", n, n, lim);
	emit_raw(E, "\n");
	emit_line(E, "if (stp_foreach_start(c, &g_%s, &it_%d, %d, %d, %d))", g->cname, n,
		  s->sort_col, s->sort_dir, stat);
	emit_fail(E);
	foreach_loop(E, s, g, n);
	emit_line(E, "stp_foreach_end(&it_%d);", n);
	emit_line(E, "goto foreach_done_%d;", n);
	E->cf->indent--;
	emit_line(E, "foreach_fail_%d:", n);
	E->cf->indent++;
	emit_line(E, "stp_foreach_end(&it_%d);", n);
	emit_line(E, "goto %s;", E->cf->err_label ? E->cf->err_label : "out");
	E->cf->indent--;
	emit_line(E, "foreach_done_%d:;", n);
	emit_line(E, "}");
}

/* ---- probes ------------------------------------------------------------------------------- */

static void user_probe(struct emitter *E, struct derived_probe *dp, int index)
{
	struct cfunc *cf;
	char *body;
	FILE *out = E->defs;
	const char *c;

	E->dp = dp;
	E->frame = emit_frame_new(E, arena_printf("frame_probe_%d", index));
	cf = emit_cfunc_begin(E);
	emit_locals_init(E, &dp->locals);
	if (dp->cond) {
		c = emit_cond(E, dp->cond);
		emit_line(E, "if (!%s)", c);
		emit_line(E, "\tgoto out;");
	}
	emit_stmt(E, dp->body);
	emit_cfunc_end(E, cf, &body);
	emit_drop_final_jump(body);
	emit_frame_decl(E, E->frame, true);
	fprintf(out, "/* probe %s at %s */\n", dp->point, emit_loc_text(dp->probe->loc));
	fprintf(out, "static int probe_%d(struct stp_uctx *u)\n{\n", index);
	fprintf(out, "\tstruct context *c = stp_enter(u, %d);\n", index);
	if (!E->frame->empty)
		fprintf(out, "\tstruct %s fr, *f = &fr;\n", E->frame->name);
	emit_cfunc_decls(E, cf, out, " stp_leave(c)");
	fputs(body, out);
	free(body);
	fprintf(out, "out: __attribute__((unused));\n\treturn stp_leave(c);\n}\n\n");
	E->dp = NULL;
}

/* int stp_globals_init(struct stp_uctx *u): the globals' initial values. */
static void globals_init(struct emitter *E, FILE *out)
{
	fprintf(out, "/* the initial values of the globals: the runner calls this once */\n");
	fprintf(out, "int stp_globals_init(struct stp_uctx *u);\n\n");
	fprintf(out, "int stp_globals_init(struct stp_uctx *u)\n{\n");
	if (E->has_scalars) {
		fprintf(out, "\tstruct stp_globals *g = u->globals;\n\n\tif (!g)\n\t\treturn -1;\n");
		for (int i = 0; i < E->globals.len; i++) {
			struct eglobal *g = VEC_AT(&E->globals, i);
			struct expr *init = g->d->init;

			if (g->array || g->stats || !init)
				continue;
			if (init->kind == EXPR_STRING)
				fprintf(out, "\tsnprintf(g->v_%s, MAXSTRINGLEN, \"%%s\", %s);\n", g->cname,
					emit_c_literal(init->str));
			else if (init->kind == EXPR_NUMBER)
				fprintf(out, "\tg->v_%s = %s;\n", g->cname, emit_number(init->num));
		}
	}
	fprintf(out, "\treturn 0;\n}\n\n");
}

int emit_user_file(struct emitter *E, FILE *out)
{
	int errors = diag_error_count();

	E->ctx = ECTX_USER;
	E->decls = open_memstream(&E->decls_buf, &E->decls_len);
	E->protos = open_memstream(&E->protos_buf, &E->protos_len);
	E->defs = open_memstream(&E->defs_buf, &E->defs_len);
	emit_functions(E);
	for (int i = 0; i < E->prog->probes.len; i++)
		if (!E->kernel_probe[i])
			user_probe(E, VEC_AT(&E->prog->probes, i), i);
	fclose(E->decls);
	fclose(E->protos);
	fclose(E->defs);

	fprintf(out, "/* script.c: the user-context handlers of %s and its stp_meta "
		"(generated by pmstap) */\n", emit_script_name(E));
	fprintf(out, "#define MAXSTRINGLEN %lld\n", (long long)E->maxstringlen);
	fprintf(out, "#define MAXACTION %lld\n", (long long)E->maxaction);
	fprintf(out, "#define MAXNESTING %lld\n", (long long)E->maxnesting);
	emit_extra_defines(E, out);
	fprintf(out, "\n#include <stddef.h>\n#include \"user/stp_user.h\"\n\n");
	if (emit_guru_ucalls(E))
		fprintf(out, "/* embedded-C functions the module runs (ioctl STP_KMOD_IOC_CALL) */\n"
			"#include \"kmod/kmod_abi.h\"\n#include \"user/tapset_user.h\"\n\n");
	emit_data_decls(E, out);
	fputs(E->decls_buf, out);
	fputs(E->protos_buf, out);
	fputs(E->defs_buf, out);
	free(E->decls_buf);
	free(E->protos_buf);
	free(E->defs_buf);
	globals_init(E, out);
	emit_meta(E, out);
	return diag_error_count() > errors ? -1 : 0;
}
