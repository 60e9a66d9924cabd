/*
 * sema_print.c - pmstap -p2: the elaborated program with its types.
 *
 *	# globals
 *	count:long
 *	names:string [long, string]
 *	# functions
 *	function add:long (a:long, b:long)
 *	{
 *		return (a + b)
 *	}
 *	# probes
 *	kernel.trace("sched:sched_switch") /\* <- kernel.trace("sched:*") *\/
 *	{
 *		/\* locals: prev:long *\/
 *		...
 *	}
 *
 * Bodies print through ast_print_stmt(); each lists its locals first.
 */
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include "sema.h"
#include "sema_int.h"

static const char *tname(enum type t)
{
	return ast_type_name(t);
}

static void print_var(FILE *out, const struct vardecl *d)
{
	fprintf(out, "%s:%s", d->name, tname(d->type));
	if (d->scope != VAR_GLOBAL || d->arity <= 0)
		return;
	fputs(" [", out);
	for (int i = 0; i < d->arity && i < AST_MAX_KEYS; i++)
		fprintf(out, "%s%s", i ? ", " : "", tname(d->key_types[i]));
	fputc(']', out);
}

static void print_global(FILE *out, const struct vardecl *d)
{
	print_var(out, d);
	if (d->init) {
		fputs(" = ", out);
		ast_print_expr(out, d->init);
	}
	if (d->maxsize || d->wrap) {
		fputs(" /*", out);
		if (d->maxsize)
			fprintf(out, " at most %" PRId64 " entries", d->maxsize);
		if (d->wrap)
			fputs(d->maxsize ? ", wraps" : " wraps", out);
		fputs(" */", out);
	}
	fputc('\n', out);
}

static void print_locals(FILE *out, const struct vec *locals)
{
	if (!locals->len)
		return;
	fputs("\t/* locals: ", out);
	for (int i = 0; i < locals->len; i++) {
		if (i)
			fputs(", ", out);
		print_var(out, VEC_AT(locals, i));
	}
	fputs(" */\n", out);
}

/* A body: its locals, then its statements (a block's own, to save a level). */
static void print_body(FILE *out, const struct stmt *body, const struct vec *locals)
{
	fputs("{\n", out);
	print_locals(out, locals);
	if (body && body->kind == STMT_BLOCK) {
		for (int i = 0; i < body->body.len; i++)
			ast_print_stmt(out, VEC_AT(&body->body, i), 1);
	} else if (body) {
		ast_print_stmt(out, body, 1);
	}
	fputs("}\n", out);
}

static void print_func(FILE *out, const struct func *f)
{
	fprintf(out, "function %s", f->name);
	if (f->ret_type != TYPE_VOID)
		fprintf(out, ":%s", tname(f->ret_type));
	fputs(" (", out);
	for (int i = 0; i < f->params.len; i++) {
		if (i)
			fputs(", ", out);
		print_var(out, VEC_AT(&f->params, i));
	}
	fputc(')', out);
	if (f->priority)
		fprintf(out, " :%" PRId64, f->priority);
	if (f->file && f->file->is_tapset)
		fprintf(out, " /* %s */", f->file->src->name);
	fputc('\n', out);
	if (f->embedded)
		fprintf(out, "%%{%s%%}\n", f->embedded);
	else
		print_body(out, f->body, &f->locals);
}

static void print_fields(FILE *out, const struct tracepoint *tp)
{
	const char *sep = "";

	fputs("\t/* fields:", out);
	for (int i = 0; i < tp->fields.len; i++) {
		const struct tp_field *f = VEC_AT(&tp->fields, i);

		if (f->is_common)
			continue;
		fprintf(out, "%s $%s:%s", sep, f->name, tname(f->type));
		sep = ",";
	}
	fputs(" */\n", out);
	if (!tp->args.len)
		return;
	fputs("\t/* args:", out);
	for (int i = 0; i < tp->args.len; i++) {
		const struct tp_arg *a = VEC_AT(&tp->args, i);

		fprintf(out, "%s $%s:%s", i ? "," : "", a->name, a->ctype);
	}
	fputs(" */\n", out);
}

/* stap's section of a user probe's address: ".dynamic" in a PIE or library, else ".absolute". */
static const char *user_section(const char *path)
{
	Elf64_Ehdr eh;
	FILE *f = path ? fopen(path, "rb") : NULL;
	bool dyn = f && fread(&eh, sizeof(eh), 1, f) == 1 && eh.e_type == ET_DYN;

	if (f)
		fclose(f);
	return dyn ? ".dynamic" : ".absolute";
}

static void print_probe(FILE *out, const struct derived_probe *dp)
{
	fputs(dp->point, out);
	/* as stap, the address of a function or statement probe (tells inline instances apart) */
	if ((dp->kind == PROBE_UFUNC || dp->kind == PROBE_USTATEMENT) && dp->addr)
		fprintf(out, " /* pc=%s+0x%" PRIx64 " */", user_section(dp->elf_path), dp->addr);
	fputs(" /* <- ", out);
	ast_print_probe_point(out, dp->orig);
	fputs(" */", out);
	if (dp->cond && dp->aliases.len) {	/* else the comment shows it */
		fputs(" if (", out);
		ast_print_expr(out, dp->cond);
		fputc(')', out);
	}
	fputc('\n', out);
	if (dp->tp && dp->kind == PROBE_TRACE)
		print_fields(out, dp->tp);
	if (dp->function_matches > 1)
		fprintf(out, "\t/* matches %d kernel functions */\n", dp->function_matches);
	print_body(out, dp->body, &dp->locals);
}

/* A perf counter: a probe whose handler never runs. */
static void print_counter(FILE *out, const struct perf_counter *c)
{
	fputs(c->point, out);
	fputs(" /* <- ", out);
	ast_print_probe_point(out, c->orig);
	fputs(" */\n{\n}\n", out);
}

void sema_print_program(FILE *out, const struct program *prog)
{
	if (prog->embeds.len) {
		fputs("# embedded code\n", out);
		for (int i = 0; i < prog->embeds.len; i++)
			fprintf(out, "%%{%s%%}\n", ((const struct embed *)VEC_AT(&prog->embeds, i))->code);
	}
	if (prog->globals.len) {
		fputs("# globals\n", out);
		for (int i = 0; i < prog->globals.len; i++)
			print_global(out, VEC_AT(&prog->globals, i));
	}
	if (prog->funcs.len) {
		fputs("# functions\n", out);
		for (int i = 0; i < prog->funcs.len; i++)
			print_func(out, VEC_AT(&prog->funcs, i));
	}
	fputs("# probes\n", out);
	for (int i = 0; i < prog->probes.len; i++)
		print_probe(out, VEC_AT(&prog->probes, i));
	for (int i = 0; i < prog->counters.len; i++)
		print_counter(out, VEC_AT(&prog->counters, i));
}
