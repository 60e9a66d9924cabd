/*
 * emit_kmod_data.c - the language that BPF cannot run in kernel context
 * but a module can (--runtime=kernel): foreach with sorting or a limit,
 * and array slices with `in` and `delete`.
 *
 * A sorted foreach collects its array's elements (pointers: elements
 * never move, runtime/dyninst/dmap_hash.c) into the context's item
 * stack, sorts them with the kernel's sort() by a comparator written for
 * the statement (the order user context sorts in: the column asked for,
 * then every key column ascending), and runs the loop body's callback on
 * each, up to the limit (stp_kmod_foreach, runtime/bpf/stp_context.bpf.h).
 * A slice walks the array with a callback that compares the keys given;
 * foreach over a slice collects only its elements.  Statistics sort on
 * their aggregate over the CPUs (@count unless the loop names one).
 */
#include "emit_int.h"

static void slice_functions(struct emitter *E, struct eglobal *g);

/* "(x > y) - (x < y)" of key column I (1-based) of A and B, or of the values (I = 0). */
static const char *compare(struct eglobal *g, int i, int stat, const char *a, const char *b)
{
	bool str = i ? g->d->key_types[i - 1] == TYPE_STRING : g->d->type == TYPE_STRING;
	const char *x, *y;

	if (!i && g->stats) {
		x = arena_printf("stp_kmod_stat(&g_%s, %s->key, %d)", g->cname, a, stat);
		y = arena_printf("stp_kmod_stat(&g_%s, %s->key, %d)", g->cname, b, stat);
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
	slice_functions(E, g);
	emit_line(E, "{");
	emit_line(E, "\tstruct stp_kmod_slice s = { %s, %#x, 0 };", want,
		  emit_slice_mask(&s->array->args));
	emit_raw(E, "\n");
	emit_line(E, "\tstp_kmod_foreach(c, &g_%s, (void *)foreach_%d, %s, %s, %s, (void *)"
		  "slice_match_%s, &s);", g->cname, n, env, cmp, lim, g->cname);
	emit_line(E, "}");
}

/* ---- slices ---------------------------------------------------------------------------- */

/* slice_match_a, slice_in_a and slice_delete_a: once for each array. */
static void slice_functions(struct emitter *E, struct eglobal *g)
{
	FILE *out = E->defs;

	if (g->kmod_slices)
		return;
	g->kmod_slices = true;
	fprintf(out, "/* the elements of %s that slices name */\n", g->d->name);
	fprintf(out, "static __always_inline int slice_match_%s(const struct key_%s *k, "
		"const struct stp_kmod_slice *s)\n{\n\tconst struct key_%s *w = s->want;\n\n",
		g->cname, g->cname, g->cname);
	for (int i = 1; i <= g->d->arity; i++) {
		const char *ne = g->d->key_types[i - 1] == TYPE_STRING ?
			arena_printf("stp_strcmp(k->k%d, w->k%d)", i, i) :
			arena_printf("k->k%d != w->k%d", i, i);

		fprintf(out, "\tif ((s->mask & %#x) && %s)\n\t\treturn 0;\n", 1u << (i - 1), ne);
	}
	fprintf(out, "\treturn 1;\n}\n\n");
	fprintf(out, "static long slice_in_%s(void *map, const struct key_%s *k, void *val, "
		"struct stp_kmod_slice *s)\n{\n\ts->found = slice_match_%s(k, s);\n"
		"\treturn s->found;\n}\n\n", g->cname, g->cname, g->cname);
	fprintf(out, "static long slice_delete_%s(void *map, const struct key_%s *k, void *val, "
		"struct stp_kmod_slice *s)\n{\n\tif (slice_match_%s(k, s))\n", g->cname, g->cname,
		g->cname);
	if (emit_slotted(g))
		fprintf(out, "\t\tstp_slot_remove(&g_%s, &gv_%s, &gf_%s, k, *(uint32_t *)val);\n",
			g->cname, g->cname, g->cname);
	else
		fprintf(out, "\t\tbpf_map_delete_elem(map, k);\n");
	fprintf(out, "\treturn 0;\n}\n\n");
}

/* [k, *] in a: 1 when an element's keys are those given (KEY, MASK their columns). */
const char *emit_kmod_slice_in(struct emitter *E, struct eglobal *g, const char *key,
			       unsigned mask)
{
	const char *t = emit_long_temp(E);

	slice_functions(E, g);
	emit_line(E, "{");
	emit_line(E, "\tstruct stp_kmod_slice s = { %s, %#x, 0 };", key, mask);
	emit_raw(E, "\n");
	emit_line(E, "\tbpf_for_each_map_elem(&g_%s, slice_in_%s, &s, 0);", g->cname, g->cname);
	emit_line(E, "\t%s = s.found;", t);
	emit_line(E, "}");
	return t;
}

/* delete a[k, *]: every element whose keys are those given. */
void emit_kmod_slice_delete(struct emitter *E, struct eglobal *g, const char *key, unsigned mask)
{
	slice_functions(E, g);
	emit_line(E, "{");
	emit_line(E, "\tstruct stp_kmod_slice s = { %s, %#x, 0 };", key, mask);
	emit_raw(E, "\n");
	emit_line(E, "\tbpf_for_each_map_elem(&g_%s, slice_delete_%s, &s, 0);", g->cname,
		  g->cname);
	emit_line(E, "}");
}
