/*
 * emit_kmod_data.c - the language that BPF cannot run in kernel context
 * but a module can (--runtime=kernel): foreach with sorting or a limit,
 * over all of an array or a slice of it.
 *
 * A sorted foreach collects its array's elements (pointers: elements
 * never move, runtime/dyninst/dmap_hash.c) into the context's item
 * stack, sorts them with the kernel's sort() by a comparator written for
 * the statement (the order user context sorts in: the column asked for,
 * then every key column ascending), and runs the loop body's callback on
 * each, up to the limit (stp_kmod_foreach, runtime/bpf/stp_context.bpf.h).
 * Foreach over a slice collects only its elements (slice_match_a,
 * emit_data.c).  Statistics sort on
 * their aggregate over the CPUs (@count unless the loop names one,
 * @variance as user context merges it).
 */
#include "emit_int.h"

/* "(x > y) - (x < y)" of key column I (1-based) of A and B, or of the values (I = 0). */
static const char *compare(struct eglobal *g, int i, int stat, const char *a, const char *b)
{
	bool str = i ? g->d->key_types[i - 1] == TYPE_STRING : g->d->type == TYPE_STRING;
	const char *x, *y;

	if (!i && g->stats) {
		x = arena_printf("stp_kmod_stat(&g_%s, %s->key, %d, &cfg_%s)", g->cname, a, stat,
				 g->cname);
		y = arena_printf("stp_kmod_stat(&g_%s, %s->key, %d, &cfg_%s)", g->cname, b, stat,
				 g->cname);
		str = false;
	} else if (i) {
		x = arena_printf("((const struct key_%s *)%s->key)->k%d", g->cname, a, i);
		y = arena_printf("((const struct key_%s *)%s->key)->k%d", g->cname, b, i);
	} else if (emit_slotted(g)) {
		x = arena_printf("stp_slot_%s(&gv_%s, *(const uint32_t *)%s->val)",
				 str ? "str" : "long", g->cname, a);
		y = arena_printf("stp_slot_%s(&gv_%s, *(const uint32_t *)%s->val)",
				 str ? "str" : "long", g->cname, b);
	} else {
		x = arena_printf(str ? "(const char *)%s->val" : "*(const int64_t *)%s->val", a);
		y = arena_printf(str ? "(const char *)%s->val" : "*(const int64_t *)%s->val", b);
	}
	if (str)
		return arena_printf("stp_kmod_sign(stp_strcmp(%s, %s))", x, y);
	return arena_printf("stp_kmod_sign((%s > %s) - (%s < %s))", x, y, x, y);
}

/* The order of foreach S over G: sortcmp_N, a sort() comparator. */
static const char *comparator(struct emitter *E, struct stmt *s, struct eglobal *g, int n)
{
	FILE *out = E->defs;
	int stat = s->sort_by_stat ? (int)s->sort_stat : 0;	/* @count by default */

	if (!s->sort_dir)
		return "NULL";
	fprintf(out, "/* the order of foreach at %s */\n", emit_loc_text(s->loc));
	fprintf(out, "static int sortcmp_%d(const void *x, const void *y)\n{\n", n);
	fprintf(out, "\tconst struct stp_kmod_item *a = x, *b = y;\n");

	fprintf(out, "\tint r = %s%s;\n\n", s->sort_dir < 0 ? "-" : "",
		compare(g, s->sort_col, stat, "a", "b"));
	for (int i = 1; i <= g->d->arity; i++)
		fprintf(out, "\tif (!r)\n\t\tr = %s;\n", compare(g, i, 0, "a", "b"));
	fprintf(out, "\treturn r;\n}\n\n");
	return arena_printf("sortcmp_%d", n);
}

/*
 * foreach S (sorted or limited) over G, whose body is the callback
 * foreach_N: the elements collected, sorted, and run up to the limit.
 */
void emit_kmod_foreach(struct emitter *E, struct stmt *s, struct eglobal *g, int n,
		       const char *env, const char *want)
{
	const char *cmp = comparator(E, s, g, n);
	const char *lim = s->limit ? emit_expr(E, s->limit) : "INT64_MAX";

	E->kmod_items += g->max_entries;
	if (!want) {
		emit_line(E, "stp_kmod_foreach(c, &g_%s, (void *)foreach_%d, %s, %s, %s, NULL, NULL);",
			  g->cname, n, env, cmp, lim);
		return;
	}
	emit_slice_functions(E, g);
	emit_line(E, "{");
	emit_line(E, "\tstruct stp_slice s = { %s, %#x, 0 };", want,
		  emit_slice_mask(&s->array->args));
	emit_raw(E, "\n");
	emit_line(E, "\tstp_kmod_foreach(c, &g_%s, (void *)foreach_%d, %s, %s, %s, (void *)"
		  "slice_match_%s, &s);", g->cname, n, env, cmp, lim, g->cname);
	emit_line(E, "}");
}
