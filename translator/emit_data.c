/*
 * emit_data.c - globals in generated code: the stp_globals struct of the
 * scalars, key and statistics structs, the BPF maps (kernel) or map
 * handles (user), and the expressions that read and write them.
 */
#include <string.h>
#include "emit_dwarf.h"
#include "emit_netfilter.h"
#include "probe_kinds.h"
#include "emit_int.h"
#include "emit_kprobe.h"
#include "probe_kinds.h"

/* ---- setup ------------------------------------------------------------------ */

static const char *const c_keywords[] = {
	"auto", "break", "case", "char", "const", "continue", "default", "do", "double",
	"else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long",
	"register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
	"switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool",
	"true", "false", "asm", "typeof",
};

static bool c_keyword(const char *name)
{
	for (size_t i = 0; i < sizeof(c_keywords) / sizeof(c_keywords[0]); i++)
		if (strcmp(name, c_keywords[i]) == 0)
			return true;
	return false;
}

static const char *unique_cname(struct emitter *E, const char *name)
{
	const char *c = c_keyword(name) ? arena_printf("%s_", name) : name;

	for (int n = 2;; n++) {
		bool taken = false;

		for (int i = 0; i < E->globals.len && !taken; i++)
			taken = strcmp(((struct eglobal *)VEC_AT(&E->globals, i))->cname, c) == 0;
		if (!taken)
			return c;
		c = arena_printf("%s_%d", name, n);
	}
}

/*
 * Bytes of each string key column.  A hash map's key is at most 512
 * bytes (BPF keys were once built on the stack), so the string columns
 * share what the long columns leave, in multiples of 8, up to MAXSTRINGLEN.
 */
static int key_string_size(struct emitter *E, const struct vardecl *d)
{
	int nstr = 0, nlong = 0, room;

	for (int i = 0; i < d->arity; i++) {
		if (d->key_types[i] == TYPE_STRING)
			nstr++;
		else
			nlong++;
	}
	if (!nstr)
		return 0;
	room = ((512 - 8 * nlong) / nstr) & ~7;
	return room < E->maxstringlen ? room : (int)E->maxstringlen;
}

static bool script_has_export(struct emitter *E)
{
	for (int i = 0; i < E->prog->globals.len; i++) {
		struct vardecl *d = VEC_AT(&E->prog->globals, i);

		if (d->file == E->prog->script && d->is_export)
			return true;
	}
	return false;
}

static void add_global(struct emitter *E, struct vardecl *d, bool any_export)
{
	struct eglobal *g = ARENA_NEW(struct eglobal);

	g->d = d;
	g->index = E->globals.len;
	g->cname = unique_cname(E, d->name);
	g->array = d->arity > 0;
	g->stats = d->type == TYPE_STATS;
	g->max_entries = d->maxsize > 0 ? d->maxsize : E->maxmapentries;
	g->keystr = key_string_size(E, d);
	g->exported = d->file == E->prog->script && (!any_export || d->is_export);
	if (!g->array && !g->stats)
		E->has_scalars = true;
	vec_push(&E->globals, g);
	hmap_put(&E->gmap, d, g);
}

struct eglobal *emit_global(struct emitter *E, const struct vardecl *d)
{
	return hmap_get(&E->gmap, d);
}

/*
 * Arrays of longs and strings keep their values in slots of an mmapable
 * array (runtime/bpf/stp_slots.bpf.h), so that readers take them in
 * place.  Not a% (an LRU map drops keys without telling, and their slots
 * would leak) and not statistics (per CPU).
 */
bool emit_slotted(const struct eglobal *g)
{
	return g->array && !g->stats && !g->d->wrap;
}

/* "stp_map_OP(c, &g_a" or, for a slotted array in the kernel, "stp_slot_OP(c, <a's maps>". */
static const char *map_call(struct emitter *E, struct eglobal *g, const char *op)
{
	if (E->ctx == ECTX_KERNEL && emit_slotted(g))
		return arena_printf("stp_slot_%s(c, &g_%s, &gv_%s, &gf_%s", op, g->cname, g->cname,
				    g->cname);
	return arena_printf("stp_map_%s(c, &g_%s", op, g->cname);
}

/* @hist_* of global G at LOC: the same histogram everywhere. */
static void hist_use(struct emitter *E, struct eglobal *g, struct expr *h)
{
	int kind = h->hist == HIST_LOG ? STP_HIST_LOG_KIND : STP_HIST_LINEAR_KIND;
	int64_t p[3] = { 0, 0, 0 };

	for (int i = 0; i < h->args.len && i < 3; i++)
		p[i] = ((struct expr *)VEC_AT(&h->args, i))->num;
	if (!g->hist) {
		g->hist = kind;
		g->start = p[0];
		g->stop = p[1];
		g->interval = p[2];
		g->buckets = kind == STP_HIST_LOG_KIND ? 128 : (int)((p[1] - p[0]) / p[2]) + 3;
		g->hist_loc = h->loc;
		if (kind == STP_HIST_LINEAR_KIND && g->buckets > 128) {
			diag_error(h->loc, "@hist_linear of '%s' has %d buckets; at most 128 fit",
				   g->d->name, g->buckets);
			g->buckets = 128;
		}
		return;
	}
	if (g->hist != kind || g->start != p[0] || g->stop != p[1] || g->interval != p[2]) {
		diag_error(h->loc, "'%s' is used with two different histograms", g->d->name);
		diag_note(g->hist_loc, "the other one is here");
	}
}

/* @variance(s, N): the bit shift of s, the same everywhere. */
static void variance_use(struct emitter *E, struct expr *e)
{
	struct expr *v = e->left->kind == EXPR_INDEX ? e->left->left : e->left;
	struct eglobal *g = v->kind == EXPR_SYMBOL && v->decl ? emit_global(E, v->decl) : NULL;
	int64_t n = e->right->kind == EXPR_NUMBER ? e->right->num : -1;

	if (!g)
		return;
	if (n < 0 || n > 62) {
		diag_error(e->right->loc, "the @variance bit shift must be a number from 0 to 62");
		return;
	}
	if (g->shift_set && g->shift != n) {
		diag_error(e->right->loc, "'%s' is used with two different @variance bit shifts",
			   g->d->name);
		return;
	}
	g->shift = (int)n;
	g->shift_set = true;
}

static void find_hists(struct expr *e, void *arg)
{
	struct emitter *E = arg;
	struct expr *v;
	struct eglobal *g;

	if (e->kind == EXPR_STAT && e->stat == STAT_VARIANCE) {
		struct expr *sym = e->left->kind == EXPR_INDEX ? e->left->left : e->left;

		g = sym->kind == EXPR_SYMBOL && sym->decl ? emit_global(E, sym->decl) : NULL;
		if (g)
			g->variance = true;
		if (e->right)
			variance_use(E, e);
	}
	if (e->kind != EXPR_HIST)
		return;
	v = e->left;
	if (v->kind == EXPR_INDEX)
		v = v->left;
	if (v->kind != EXPR_SYMBOL || !v->decl || v->decl->scope != VAR_GLOBAL)
		return;
	g = emit_global(E, v->decl);
	if (g)
		hist_use(E, g, e);
}

/* foreach (... in s @variance+): s keeps the terms of @variance. */
static void sort_variance(struct emitter *E, struct stmt *s)
{
	if (!s)
		return;
	if (s->kind == STMT_FOREACH && s->sort_by_stat && s->sort_stat == STAT_VARIANCE &&
	    s->array->decl && emit_global(E, s->array->decl))
		emit_global(E, s->array->decl)->variance = true;
	for (int i = 0; i < s->body.len; i++)
		sort_variance(E, VEC_AT(&s->body, i));
	sort_variance(E, s->then);
	sort_variance(E, s->otherwise);
}

void emit_data_setup(struct emitter *E)
{
	bool any_export = script_has_export(E);

	for (int i = 0; i < E->prog->globals.len; i++)
		add_global(E, VEC_AT(&E->prog->globals, i), any_export);
	emit_walk_program(E, find_hists, E);
	for (int i = 0; i < E->prog->probes.len; i++)
		sort_variance(E, ((struct derived_probe *)VEC_AT(&E->prog->probes, i))->body);
	for (int i = 0; i < E->prog->funcs.len; i++)
		sort_variance(E, ((struct func *)VEC_AT(&E->prog->funcs, i))->body);
	for (int i = 0; i < E->globals.len; i++) {
		struct eglobal *g = VEC_AT(&E->globals, i);
		int size = 56 + 8 * g->buckets;

		if (g->stats && size > E->zero_size)
			E->zero_size = size;
	}
}

/* ---- declarations -------------------------------------------------------------- */

static const char *ctype_of(enum type t)
{
	return t == TYPE_STRING ? "char" : "int64_t";
}

static void decl_key(struct emitter *E, FILE *out, struct eglobal *g)
{
	struct vardecl *d = g->d;

	fprintf(out, "struct key_%s {\n", g->cname);
	for (int i = 0; i < d->arity; i++) {
		if (d->key_types[i] == TYPE_STRING)
			if (g->keystr == E->maxstringlen)
				fprintf(out, "\tchar k%d[MAXSTRINGLEN];\n", i + 1);
			else	/* what the long columns leave of a 512-byte key */
				fprintf(out, "\tchar k%d[%d];\t/* of the key's 512 bytes */\n",
					i + 1, g->keystr);
		else
			fprintf(out, "\tint64_t k%d;\n", i + 1);
	}
	fprintf(out, "};\n\n");
}

static void decl_stat(struct emitter *E, FILE *out, struct eglobal *g)
{
	fprintf(out, "struct stat_%s {\n", g->cname);
	fprintf(out, "\tint64_t count, sum, min, max, avg_s, m2, variance_s;\n");
	if (g->buckets)
		fprintf(out, "\tint64_t hist[%d];\n", g->buckets);
	fprintf(out, "};\n\n");
	fprintf(out, "static const struct stp_stat_cfg cfg_%s __attribute__((unused)) = {\n",
		g->cname);
	if (g->hist == STP_HIST_LOG_KIND)
		fprintf(out, "\t.type = STP_HIST_LOG,\n");
	else if (g->hist == STP_HIST_LINEAR_KIND)
		fprintf(out, "\t.type = STP_HIST_LINEAR,\n\t.start = %lld,\n\t.stop = %lld,\n"
			"\t.interval = %lld,\n", (long long)g->start, (long long)g->stop,
			(long long)g->interval);
	else
		fprintf(out, "\t.type = STP_HIST_NONE,\n");
	fprintf(out, "\t.buckets = %d,\n", g->buckets);
	if (g->shift)
		fprintf(out, "\t.shift = %d,\n", g->shift);
	if (g->variance)	/* @variance is read: keep its terms */
		fprintf(out, "\t.variance = 1,\n");
	if (g->array)
		fprintf(out, "\t.keyed = 1,\n");
	fprintf(out, "};\n\n");
}

static const char *describe(struct eglobal *g)
{
	const char *t = g->stats ? "statistics" : ast_type_name(g->d->type);

	if (!g->array)
		return t;
	{
		const char *keys = "";

		for (int i = 0; i < g->d->arity; i++)
			keys = arena_printf("%s%s%s", keys, i ? ", " : "",
					    ast_type_name(g->d->key_types[i]));
		return arena_printf("%s [%s]", t, keys);
	}
}

static void decl_scalars(struct emitter *E, FILE *out)
{
	/* v_NAME: a script name may be a macro of the kernel's headers (ATTR_MODE, current) */
	fprintf(out, "/* the scalar globals: the value of map stp_globals */\n");
	fprintf(out, "struct stp_globals {\n");
	for (int i = 0; i < E->globals.len; i++) {
		struct eglobal *g = VEC_AT(&E->globals, i);

		if (g->array || g->stats)
			continue;
		fprintf(out, "\t%s v_%s%s;\n", ctype_of(g->d->type), g->cname,
			g->d->type == TYPE_STRING ? "[MAXSTRINGLEN]" : "");
	}
	fprintf(out, "};\n\n");
}

static const char *map_type(struct eglobal *g)
{
	if (g->stats && !g->array)
		return "BPF_MAP_TYPE_PERCPU_ARRAY";
	if (g->stats)
		return g->d->wrap ? "BPF_MAP_TYPE_LRU_PERCPU_HASH" : "BPF_MAP_TYPE_PERCPU_HASH";
	return g->d->wrap ? "BPF_MAP_TYPE_LRU_HASH" : "BPF_MAP_TYPE_HASH";
}

/* A slotted array's values and its free slots (its key map's value is a slot). */
static void decl_slots(struct emitter *E, FILE *out, struct eglobal *g)
{
	const char *vt = g->d->type == TYPE_STRING ? "char[MAXSTRINGLEN]" : "int64_t";

	fprintf(out, "STP_MAP(gv_%s, BPF_MAP_TYPE_ARRAY, uint32_t, %s, STP_SLOT_FIRST + %lld, "
		"BPF_F_MMAPABLE);\n", g->cname, vt, (long long)g->max_entries);
	fprintf(out, "STP_QUEUE(gf_%s, uint32_t, %lld);\n\n", g->cname, (long long)g->max_entries);
	vec_push(&E->kmaps, arena_printf("gv_%s", g->cname));
	vec_push(&E->kmaps, arena_printf("gf_%s", g->cname));
}

static void decl_map(struct emitter *E, FILE *out, struct eglobal *g)
{
	char key[64], value[64];

	if (E->ctx == ECTX_USER && g->stats) {
		fprintf(out, "static struct stp_map g_%s __attribute__((unused)) = { %d, &cfg_%s };\n\n",
			g->cname, g->index, g->cname);
		return;
	}
	if (E->ctx == ECTX_USER) {
		fprintf(out, "static struct stp_map g_%s __attribute__((unused)) = { %d, NULL };\n\n",
			g->cname, g->index);
		return;
	}
	if (g->array)
		snprintf(key, sizeof(key), "struct key_%s", g->cname);
	else
		snprintf(key, sizeof(key), "uint32_t");
	if (emit_slotted(g))
		snprintf(value, sizeof(value), "uint32_t");
	else if (g->stats)
		snprintf(value, sizeof(value), "struct stat_%s", g->cname);
	else
		snprintf(value, sizeof(value), "%s%s", ctype_of(g->d->type),
			 g->d->type == TYPE_STRING ? "[MAXSTRINGLEN]" : "");
	fprintf(out, "STP_MAP(g_%s, %s, %s, %s, %lld, 0);\n", g->cname, map_type(g), key, value,
		g->array ? (long long)g->max_entries : 1LL);
	vec_push(&E->kmaps, arena_printf("g_%s", g->cname));
	if (emit_slotted(g))
		decl_slots(E, out, g);
	else
		fprintf(out, "\n");
}

static void decl_globals_map(struct emitter *E, FILE *out)
{
	vec_push(&E->kmaps, "stp_globals");
	fprintf(out, "STP_MAP(stp_globals, BPF_MAP_TYPE_ARRAY, uint32_t, struct stp_globals, 1, "
		"BPF_F_MMAPABLE);\n\n");
	fprintf(out, "static __always_inline struct stp_globals *stp_globals_get(void)\n{\n");
	fprintf(out, "\tuint32_t zero = 0;\n\n\treturn bpf_map_lookup_elem(&stp_globals, &zero);\n");
	fprintf(out, "}\n\n#define STP_GLOBALS(c) stp_globals_get()\n\n");
}

/* The structs of the globals (both files) and their maps or handles. */
void emit_data_decls(struct emitter *E, FILE *out)
{
	if (E->has_scalars)
		decl_scalars(E, out);
	if (E->has_scalars && E->ctx == ECTX_KERNEL)
		decl_globals_map(E, out);
	for (int i = 0; i < E->globals.len; i++) {
		struct eglobal *g = VEC_AT(&E->globals, i);

		if (!g->array && !g->stats)
			continue;
		fprintf(out, "/* global %s: %s */\n", g->d->name, describe(g));
		if (g->array)
			decl_key(E, out, g);
		if (g->stats)
			decl_stat(E, out, g);
		decl_map(E, out, g);
	}
}

/* ---- references ----------------------------------------------------------------- */

const char *emit_var_ref(struct emitter *E, struct vardecl *d)
{
	struct eglobal *g;

	if (d->scope != VAR_GLOBAL)
		return arena_printf("f->l_%s", d->name);
	g = emit_global(E, d);
	E->cf->uses_g = true;
	return arena_printf("g->v_%s", g->cname);
}

/* What stap 4.8 says when an array is full (translate.cxx's words). */
static const char *full_text(struct eglobal *g)
{
	if (g->d->maxsize > 0)
		return arena_printf("Array overflow, check size limit (%lld)", (long long)g->d->maxsize);
	return "Array overflow, check MAXMAPENTRIES";
}

/* The same, as a C string literal for the runtime's calls. */
static const char *full_msg(struct eglobal *g)
{
	const char *msg = full_text(g);

	return emit_c_string(msg, strlen(msg));
}

/* The key of G for ARGS, built in a key temporary of the frame; "&f->k_x[i]". */
const char *emit_key(struct emitter *E, struct eglobal *g, const struct vec *args)
{
	const char **vals = arena_alloc(sizeof(char *) * (size_t)(args->len + 1));
	struct vardecl *d = g->d;
	const char *k;
	bool strings = false;
	int n;

	if (!g->array)
		return "STP_KEY0";
	emit_exprs_ordered(E, (struct expr **)args->items, args->len, vals);
	n = E->frame->nkey[g->index]++;
	if (E->frame->nkey[g->index] > E->frame->maxkey[g->index])
		E->frame->maxkey[g->index] = E->frame->nkey[g->index];
	k = arena_printf("f->k_%s[%d]", g->cname, n);
	for (int i = 0; i < d->arity; i++)
		strings |= d->key_types[i] == TYPE_STRING || (i < args->len && !vals[i]);
	if (strings)
		emit_line(E, "stp_key_zero(&%s);", k);
	for (int i = 0; i < args->len && i < d->arity; i++) {
		if (!vals[i])
			continue;	/* '*' of a slice */
		if (d->key_types[i] == TYPE_STRING)
			emit_line(E, "stp_strlcpy(%s.k%d, %s, sizeof(%s.k%d));", k, i + 1, vals[i], k,
				  i + 1);
		else
			emit_line(E, "%s.k%d = %s;", k, i + 1, vals[i]);
	}
	return arena_printf("&%s", k);
}

/* ---- assignment ------------------------------------------------------------------- */

/* The C operator of a compound assignment's arithmetic, or NULL. */
static const char *arith_of(const char *op)
{
	static const char *const ops[][2] = {
		{ "+=", "+" }, { "-=", "-" }, { "*=", "*" }, { "/=", "/" }, { "%=", "%" },
		{ "<<=", "<<" }, { ">>=", ">>" }, { ">>>=", ">>>" }, { "&=", "&" },
		{ "|=", "|" }, { "^=", "^" },
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(op, ops[i][0]) == 0)
			return ops[i][1];
	return NULL;
}

/* OLD op V as a long expression (division checked). */
static const char *combine(struct emitter *E, const char *op, const char *old, const char *v,
			   struct srcloc loc)
{
	return emit_arith(E, op, old, v, loc);
}

static const char *stats_add(struct emitter *E, struct expr *e)
{
	struct eglobal *g;
	const char *key = emit_stat_key(E, e->left, &g), *v;
	int site;

	if (!g)
		return "0";
	v = emit_expr(E, e->right);
	site = emit_error_site(E, e->left->kind == EXPR_INDEX ? e->left->left->loc : e->left->loc,
			       full_text(g));
	emit_line(E, "stp_map_stat_add(c, &g_%s, %s, &cfg_%s, %s, %d, %s);", g->cname, key,
		  g->cname, v, site, full_msg(g));
	E->side_effects++;
	emit_check(E, -1);
	return v;
}

static const char *assign_scalar_long(struct emitter *E, struct expr *e, bool used)
{
	const char *ref = emit_var_ref(E, e->left->decl), *v, *t;
	bool global = e->left->decl->scope == VAR_GLOBAL;

	v = emit_expr(E, e->right);
	E->side_effects++;
	if (strcmp(e->op, "=") == 0) {
		emit_line(E, "%s = %s;", ref, v);
		return used && global ? emit_snapshot(E, ref, TYPE_LONG) : ref;
	}
	if (global && (strcmp(e->op, "+=") == 0 || strcmp(e->op, "-=") == 0)) {
		const char *d = e->op[0] == '+' ? v : arena_printf("-(%s)", v);

		if (!used) {
			emit_line(E, "stp_atomic_add(&%s, %s);", ref, d);
			return "0";
		}
		t = emit_long_temp(E);
		emit_line(E, "%s = stp_atomic_add(&%s, %s);", t, ref, d);
		return t;
	}
	if (!global && strcmp(e->op, "+=") == 0) {
		emit_line(E, "%s += %s;", ref, v);
		return ref;
	}
	t = combine(E, arith_of(e->op), ref, v, e->loc);
	emit_line(E, "%s = %s;", ref, t);
	return used && global ? emit_snapshot(E, ref, TYPE_LONG) : ref;
}

static const char *assign_scalar_str(struct emitter *E, struct expr *e)
{
	const char *ref = emit_var_ref(E, e->left->decl), *v, *t;

	v = emit_expr(E, e->right);
	E->side_effects++;
	if (strcmp(e->op, ".=") == 0) {
		t = emit_str_temp(E);
		emit_line(E, "stp_concat(%s, %s, %s);", t, ref, v);
		v = t;
	}
	emit_line(E, "stp_strcpy(%s, %s);", ref, v);
	return ref;
}

static const char *assign_elem_long(struct emitter *E, struct expr *e, struct eglobal *g,
				    const char *key, bool used)
{
	int site = emit_error_site(E, e->left->left->loc, full_text(g));
	const char *v = emit_expr(E, e->right), *t, *old;

	E->side_effects++;
	if (strcmp(e->op, "+=") == 0 || strcmp(e->op, "-=") == 0) {
		const char *d = e->op[0] == '+' ? v : arena_printf("-(%s)", v);

		t = used ? emit_long_temp(E) : NULL;
		emit_line(E, "%s%s%s, %s, %s, %d, %s);", t ? t : "", t ? " = " : "",
			  map_call(E, g, "add_long"), key, d, site, full_msg(g));
		emit_check(E, -1);
		return t ? t : "0";
	}
	if (strcmp(e->op, "=") != 0) {
		old = emit_snapshot(E, arena_printf("%s, %s)", map_call(E, g, "get_long"), key),
				    TYPE_LONG);
		v = combine(E, arith_of(e->op), old, v, e->loc);
	}
	if (used)
		v = emit_snapshot(E, v, TYPE_LONG);
	emit_line(E, "%s, %s, %s, %d, %s);", map_call(E, g, "set_long"), key, v, site,
		  full_msg(g));
	emit_check(E, -1);
	return v;
}

static const char *assign_elem_str(struct emitter *E, struct expr *e, struct eglobal *g,
				   const char *key)
{
	int site = emit_error_site(E, e->left->left->loc, full_text(g));
	const char *v = emit_strbuf(E, e->right), *t;

	E->side_effects++;
	if (strcmp(e->op, ".=") == 0) {
		const char *old = emit_str_temp(E);

		emit_line(E, "%s, %s, %s);", map_call(E, g, "get_str"), key, old);
		t = emit_str_temp(E);
		emit_line(E, "stp_concat(%s, %s, %s);", t, old, v);
		v = t;
	}
	emit_line(E, "%s, %s, %s, %d, %s);", map_call(E, g, "set_str"), key, v, site,
		  full_msg(g));
	emit_check(E, -1);
	return v;
}

const char *emit_assign(struct emitter *E, struct expr *e, bool used)
{
	struct expr *l = e->left;
	struct eglobal *g;
	const char *key;

	if (strcmp(e->op, "<<<") == 0)
		return stats_add(E, e);
	if (l->kind == EXPR_SYMBOL)
		return l->decl->type == TYPE_STRING ? assign_scalar_str(E, e)
						    : assign_scalar_long(E, e, used);
	if (l->kind == EXPR_TARGET && E->kmod && E->ctx == ECTX_KERNEL && !E->fn && E->dp &&
	    probe_targets(E->dp) == TARGETS_KFUNC && E->dp->kfunc)
		return emit_kprobe_assign(E, e);
	if (l->kind == EXPR_TARGET && E->dp && probe_targets(E->dp) == TARGETS_NETFILTER)
		return emit_netfilter_assign(E, e);
	if (l->kind == EXPR_TARGET || l->kind == EXPR_ATVAR || l->kind == EXPR_CAST)
		return emit_dwarf_assign(E, e, used);
	if (l->kind != EXPR_INDEX || !l->decl) {
		emit_unsupported(E, l->loc, "assigning to a target variable", NULL);
		return "0";
	}
	g = emit_global(E, l->decl);
	key = emit_key(E, g, &l->args);
	if (l->decl->type == TYPE_STRING)
		return assign_elem_str(E, e, g, key);
	return assign_elem_long(E, e, g, key, used);
}

/* ++x x++ --x x-- */
const char *emit_incdec(struct emitter *E, struct expr *e, bool used)
{
	struct expr *l = e->left;
	int d = e->op[0] == '+' ? 1 : -1;
	bool post = e->kind == EXPR_POSTFIX;
	const char *t = used ? emit_long_temp(E) : NULL, *ref;

	E->side_effects++;
	if (l->kind == EXPR_INDEX && l->decl) {
		struct eglobal *g = emit_global(E, l->decl);
		const char *key = emit_key(E, g, &l->args);
		int site = emit_error_site(E, l->left->loc, full_text(g));

		emit_line(E, "%s%s%s, %s, %d, %d, %s);", t ? t : "", t ? " = " : "",
			  map_call(E, g, "add_long"), key, d, site, full_msg(g));
		emit_check(E, -1);
	} else if (l->kind == EXPR_SYMBOL && l->decl->scope == VAR_GLOBAL) {
		ref = emit_var_ref(E, l->decl);
		emit_line(E, "%s%sstp_atomic_add(&%s, %d);", t ? t : "", t ? " = " : "", ref, d);
	} else if (l->kind == EXPR_SYMBOL) {
		ref = emit_var_ref(E, l->decl);
		if (t)
			emit_line(E, "%s = %s%s;", t, d > 0 ? "++" : "--", ref);
		else
			emit_line(E, "%s%s;", ref, d > 0 ? "++" : "--");
	} else {
		emit_unsupported(E, l->loc, "changing a target variable", NULL);
		return "0";
	}
	if (!t)
		return "0";
	return post ? arena_printf("(%s %s 1)", t, d > 0 ? "-" : "+") : t;
}

/* ---- reads -------------------------------------------------------------------------- */

/* ARRAY[keys] as a value, or @hist_*(s)[bucket]. */
const char *emit_index_read(struct emitter *E, struct expr *e)
{
	struct eglobal *g;
	const char *key, *t;

	if (e->left->kind == EXPR_HIST)
		return emit_hist_index(E, e);
	g = emit_global(E, e->decl);
	key = emit_key(E, g, &e->args);
	if (g->d->type == TYPE_STRING) {
		t = emit_str_temp(E);
		emit_line(E, "%s, %s, %s);", map_call(E, g, "get_str"), key, t);
		return t;
	}
	return arena_printf("%s, %s)", map_call(E, g, "get_long"), key);
}

/* ---- slices ---------------------------------------------------------------------------- */

/* slice_match_a, slice_in_a and slice_delete_a: once for each array. */
void emit_slice_functions(struct emitter *E, struct eglobal *g)
{
	FILE *out = E->defs;

	if (g->slice_fns)
		return;
	g->slice_fns = true;
	fprintf(out, "/* the elements of %s that slices name */\n", g->d->name);
	/*
	 * A string column is compared within its own bytes, which a key's
	 * last column has fewer of than MAXSTRINGLEN (the verifier holds a
	 * read to the key's size): a step function bounded by the column.
	 */
	for (int i = 1; i <= g->d->arity; i++)
		if (g->d->key_types[i - 1] == TYPE_STRING)
			fprintf(out, "static long slice_cmp_%s_%d(uint64_t i, void *data)\n{\n"
				"\tstruct stp_cmp *c = data;\n\n"
				"\tif (i >= sizeof(((const struct key_%s *)0)->k%d))\n\t\treturn 1;\n"
				"\tif (c->a[i] != c->b[i]) {\n\t\tc->result = 1;\n\t\treturn 1;\n\t}\n"
				"\treturn c->a[i] == 0;\n}\n\n", g->cname, i, g->cname, i);
	fprintf(out, "static __always_inline int slice_match_%s(const struct key_%s *k, "
		"const struct stp_slice *s)\n{\n\tconst struct key_%s *w = s->want;\n\n",
		g->cname, g->cname, g->cname);
	for (int i = 1; i <= g->d->arity; i++) {
		unsigned bit = 1u << (i - 1);

		if (g->d->key_types[i - 1] != TYPE_STRING) {
			fprintf(out, "\tif ((s->mask & %#x) && k->k%d != w->k%d)\n\t\treturn 0;\n",
				bit, i, i);
			continue;
		}
		fprintf(out, "\tif (s->mask & %#x) {\n\t\tstruct stp_cmp c = { k->k%d, w->k%d, 0 };\n\n"
			"\t\tbpf_loop(sizeof(k->k%d), slice_cmp_%s_%d, &c, 0);\n"
			"\t\tif (c.result)\n\t\t\treturn 0;\n\t}\n", bit, i, i, i, g->cname, i);
	}
	fprintf(out, "\treturn 1;\n}\n\n");
	fprintf(out, "static long slice_in_%s(void *map, const struct key_%s *k, void *val, "
		"struct stp_slice *s)\n{\n\ts->found = slice_match_%s(k, s);\n"
		"\treturn s->found;\n}\n\n", g->cname, g->cname, g->cname);
	fprintf(out, "static long slice_delete_%s(void *map, const struct key_%s *k, void *val, "
		"struct stp_slice *s)\n{\n\tif (slice_match_%s(k, s))\n", g->cname, g->cname,
		g->cname);
	if (emit_slotted(g))
		fprintf(out, "\t\tstp_slot_remove(&g_%s, &gv_%s, &gf_%s, k, *(uint32_t *)val);\n",
			g->cname, g->cname, g->cname);
	else
		fprintf(out, "\t\tbpf_map_delete_elem(map, k);\n");
	fprintf(out, "\treturn 0;\n}\n\n");
}

/* [k, *] in a: 1 when an element's keys are those given (KEY, MASK their columns). */
const char *emit_slice_in_kernel(struct emitter *E, struct eglobal *g, const char *key,
			       unsigned mask)
{
	const char *t = emit_long_temp(E);

	emit_slice_functions(E, g);
	emit_line(E, "{");
	emit_line(E, "\tstruct stp_slice s = { %s, %#x, 0 };", key, mask);
	emit_raw(E, "\n");
	emit_line(E, "\tbpf_for_each_map_elem(&g_%s, slice_in_%s, &s, 0);", g->cname, g->cname);
	emit_line(E, "\t%s = s.found;", t);
	emit_line(E, "}");
	return t;
}

/* delete a[k, *]: every element whose keys are those given. */
void emit_slice_delete_in_kernel(struct emitter *E, struct eglobal *g, const char *key, unsigned mask)
{
	emit_slice_functions(E, g);
	emit_line(E, "{");
	emit_line(E, "\tstruct stp_slice s = { %s, %#x, 0 };", key, mask);
	emit_raw(E, "\n");
	emit_line(E, "\tbpf_for_each_map_elem(&g_%s, slice_delete_%s, &s, 0);", g->cname,
		  g->cname);
	emit_line(E, "}");
}

/*
 * The columns a slice fixes (not '*'), as a bit mask, with bit 31 set so
 * that [*, *] is not 0; 0 when there is no '*'.
 */
unsigned emit_slice_mask(const struct vec *args)
{
	unsigned mask = 0;
	bool star = false;

	for (int i = 0; i < args->len; i++) {
		if (VEC_AT(args, i))
			mask |= 1u << i;
		else
			star = true;
	}
	return star ? mask | 1u << 31 : 0;
}

/* [keys] in ARRAY, or with '*' keys (a slice). */
const char *emit_in(struct emitter *E, struct expr *e)
{
	struct expr *a = e->right;
	struct eglobal *g;
	unsigned mask = emit_slice_mask(&e->args);

	if (a->kind != EXPR_SYMBOL || !a->decl) {
		emit_unsupported(E, e->loc, "'in' on an array slice", NULL);
		return "0";
	}
	g = emit_global(E, a->decl);
	if (!mask)
		return arena_printf("%s, %s)", map_call(E, g, "exists"), emit_key(E, g, &e->args));
	if (E->ctx == ECTX_KERNEL)
		return emit_slice_in_kernel(E, g, emit_key(E, g, &e->args), mask);
	return arena_printf("stp_map_exists_slice(c, &g_%s, %s, %#x)", g->cname,
			    emit_key(E, g, &e->args), mask);
}

/* The statistic TARGET (s or s[keys]): its key; its global in *GP (NULL on error). */
const char *emit_stat_key(struct emitter *E, struct expr *target, struct eglobal **gp)
{
	struct expr *sym = target->kind == EXPR_INDEX ? target->left : target;

	*gp = NULL;
	if (sym->kind != EXPR_SYMBOL || !sym->decl || sym->decl->scope != VAR_GLOBAL) {
		emit_unsupported(E, target->loc, "statistics in a local variable", NULL);
		return "STP_KEY0";
	}
	*gp = emit_global(E, sym->decl);
	return target->kind == EXPR_INDEX ? emit_key(E, *gp, &target->args) : "STP_KEY0";
}

static const char *const stat_ops[] = {
	"STP_STAT_COUNT", "STP_STAT_SUM", "STP_STAT_MIN", "STP_STAT_MAX", "STP_STAT_AVG",
	"STP_STAT_VARIANCE",
};

/* the same in kernel context (runtime/bpf/stp_statread.bpf.h) */
static const char *const stat_read_ops[] = {
	"STP_STAT_READ_COUNT", "STP_STAT_READ_SUM", "STP_STAT_READ_MIN", "STP_STAT_READ_MAX",
	"STP_STAT_READ_AVG", "STP_STAT_READ_VARIANCE",
};

/*
 * @count(s) ... : in user context from the merged map; in kernel context
 * by merging the CPUs' partials there (runtime/bpf/stp_statread.bpf.h).
 */
const char *emit_stat(struct emitter *E, struct expr *e)
{
	struct eglobal *g;
	const char *key, *t;
	int site;

	key = emit_stat_key(E, e->left, &g);
	if (!g)
		return "0";
	site = emit_error_site(E, e->loc, "empty aggregate");
	t = emit_long_temp(E);
	if (E->ctx == ECTX_KERNEL)
		emit_line(E, "%s = stp_map_stat_read(c, &g_%s, %s, &cfg_%s, %s, %d);", t,
			  g->cname, key, g->cname, stat_read_ops[e->stat], site);
	else
		emit_line(E, "%s = stp_map_stat_get(c, &g_%s, %s, %s, %d);", t, g->cname, key,
			  stat_ops[e->stat], site);
	emit_check(E, -1);
	return t;
}

/* @hist_*(s)[i]: in kernel context from the CPUs' partials, as emit_stat() reads them. */
const char *emit_hist_index(struct emitter *E, struct expr *e)
{
	struct eglobal *g;
	const char *key, *i, *t;
	int site, empty;

	key = emit_stat_key(E, e->left->left, &g);
	if (!g)
		return "0";
	i = emit_expr(E, VEC_AT(&e->args, 0));
	site = emit_error_site(E, e->loc, "histogram index out of range");
	/* a foreach walks an empty histogram's buckets as 0s, as stap's does */
	empty = e->foreach_bucket ? -1 : emit_error_site(E, e->left->loc, "empty aggregate");
	t = emit_long_temp(E);
	if (E->ctx == ECTX_KERNEL)	/* the CPUs' buckets summed there (stp_statread.bpf.h) */
		emit_line(E, "%s = stp_map_stat_bucket_read(c, &g_%s, %s, &cfg_%s, %s, %d, %d);",
			  t, g->cname, key, g->cname, i, site, empty);
	else
		emit_line(E, "%s = stp_map_stat_bucket(c, &g_%s, %s, %s, %d, %d);", t, g->cname,
			  key, i, site, empty);
	emit_check(E, -1);
	return t;
}

/* ---- delete ------------------------------------------------------------------------------ */

/* delete a, a slotted array in the kernel: a callback frees each key's slot. */
static void clear_slots(struct emitter *E, struct eglobal *g)
{
	const char *name = emit_callback_name(E, "clear", emit_seq(E));

	fprintf(emit_callback_out(E), "STP_SLOT_CLEARER(%s, %s)\n\n", name, g->cname);
	emit_line(E, "bpf_for_each_map_elem(&g_%s, %s, NULL, 0);", g->cname, name);
}

static void delete_scalar(struct emitter *E, struct vardecl *d)
{
	const char *ref;
	struct eglobal *g = d->scope == VAR_GLOBAL ? emit_global(E, d) : NULL;

	if (g && (g->array || g->stats)) {
		if (E->ctx == ECTX_KERNEL && g->stats && !g->array && E->kmod) {
			/* a module reaches every CPU's partial */
			emit_line(E, "stp_kmod_stat_clear(&g_%s, STP_KEY0, sizeof(struct stat_%s));",
				  g->cname, g->cname);
			return;
		}
		if (E->ctx == ECTX_KERNEL && g->stats && !g->array) {
			emit_unsupported(E, d->loc, "deleting scalar statistics",
					 "delete them in an end or timer probe");
			return;
		}
		if (E->ctx == ECTX_KERNEL && emit_slotted(g))
			clear_slots(E, g);
		else
			emit_line(E, "stp_map_clear(c, &g_%s);", g->cname);
		return;
	}
	ref = emit_var_ref(E, d);
	if (d->type == TYPE_STRING)
		emit_line(E, "%s[0] = '\\0';", ref);
	else
		emit_line(E, "%s = 0;", ref);
}

void emit_delete(struct emitter *E, struct stmt *s)
{
	struct expr *e = s->expr;
	struct eglobal *g;

	E->side_effects++;
	if (e->kind == EXPR_SYMBOL) {
		delete_scalar(E, e->decl);
		return;
	}
	if (e->kind != EXPR_INDEX || !e->decl) {
		emit_unsupported(E, e->loc, "deleting a target variable", NULL);
		return;
	}
	g = emit_global(E, e->decl);
	if (!emit_slice_mask(&e->args)) {
		emit_line(E, "%s, %s);", map_call(E, g, "delete"), emit_key(E, g, &e->args));
		return;
	}
	if (E->ctx == ECTX_KERNEL) {
		emit_slice_delete_in_kernel(E, g, emit_key(E, g, &e->args), emit_slice_mask(&e->args));
		return;
	}
	emit_line(E, "stp_map_delete_slice(c, &g_%s, %s, %#x);", g->cname, emit_key(E, g, &e->args),
		  emit_slice_mask(&e->args));
}
