/*
 * emit_body.c - kernel context: the body of a probe on many points,
 * compiled once and jumped to.
 *
 * `probe syscall.* { BODY }` derives one probe per syscall, each handler
 * the syscall's alias prologue (its name, argstr, ...) then BODY.  The
 * prologues differ; BODY does not.  So the handler of each such point is
 * split: its program runs the prologue and tail-calls (bpf_tail_call) a
 * program that runs BODY, probe_N_body, one for all the points whose BODY
 * came out as the same C.
 *
 * Why a tail call and not a bpf-to-bpf call: a called function is part of
 * every program that calls it, and the verifier walks it again in each
 * (and a global function's arguments may not point into the context map
 * value as BODY's frame does); a tail-called program is loaded and
 * verified once, and the per-CPU context (its frame, MAXACTION's count,
 * the error state) carries over because it lives in a map.  The cost is
 * one tail call per hit.
 *
 * The locals that BODY uses lead both frames, in the same order and types
 * (probe_N's frame holds its prologue's other locals after them), so BODY
 * finds them where the prologue left them; BODY's temporaries follow in its
 * own frame, over the prologue's, which are dead by then.  The body
 * programs sit in the prog array stp_bodies, which the runner fills from
 * meta.bodies; stp_body_of[probe] is the slot of each split probe's body.
 */
#include <stdlib.h>
#include <string.h>
#include "arena.h"
#include "emit_int.h"

/* A body program, and the probes that jump to it. */
struct ebody {
	int lead;		/* the probe whose probe_N_body it is */
	const char *text;
	int slot;		/* in stp_bodies */
};

struct body_state {
	struct hmap by_text;	/* canonical text -> struct ebody * */
	struct vec bodies;	/* struct ebody *, by slot */
	int *slot_of;		/* per probe: its body's slot, -1: not split */
	bool *has_frame;	/* per probe: its frame_probe_N_body is declared */
	int *points;		/* per probe: how many tracepoint probes its script probe has */
};

static struct body_state *body_state(struct emitter *E)
{
	int n = E->prog->probes.len;

	if (E->bodies)
		return E->bodies;
	E->bodies = arena_alloc(sizeof(struct body_state));
	memset(E->bodies, 0, sizeof(struct body_state));
	E->bodies->by_text.str_keys = true;
	E->bodies->slot_of = arena_alloc(sizeof(int) * (size_t)(n + 1));
	E->bodies->points = arena_alloc(sizeof(int) * (size_t)(n + 1));
	E->bodies->has_frame = arena_alloc(sizeof(bool) * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		struct derived_probe *dp = VEC_AT(&E->prog->probes, i);

		E->bodies->slot_of[i] = -1;
		E->bodies->has_frame[i] = false;
		E->bodies->points[i] = 0;
		for (int j = 0; j < n && E->kernel_probe[i] && dp->tp; j++) {
			struct derived_probe *o = VEC_AT(&E->prog->probes, j);

			E->bodies->points[i] += E->kernel_probe[j] && o->tp && o->probe == dp->probe;
		}
	}
	return E->bodies;
}

static bool same_loc(struct srcloc a, struct srcloc b)
{
	return a.src == b.src && a.line == b.line && a.col == b.col;
}

/*
 * The script probe's own body in DP's handler, and the statements before
 * it into PROLOGUE.  An alias wraps the body it is given in a block that
 * has the body's place, prologue first (probes.c, wrap_body()), so the body
 * is found by following last statements down while they have its place.
 * NULL when there is no prologue, or something (an epilogue) after the body.
 */
struct stmt *emit_body_inner(struct emitter *E, struct derived_probe *dp, int index,
			     struct vec *prologue)
{
	struct stmt *s = dp->body, *last;

	if (E->kmod || E->dyninst || !s || !dp->probe->body || body_state(E)->points[index] < 2)
		return NULL;
	while (s->kind == STMT_BLOCK && s->body.len >= 1) {
		last = VEC_AT(&s->body, s->body.len - 1);
		if (last->kind != STMT_BLOCK || !same_loc(last->loc, dp->probe->body->loc))
			return NULL;
		for (int i = 0; i < s->body.len - 1; i++)
			vec_push(prologue, VEC_AT(&s->body, i));
		s = last;
		last = s->body.len ? VEC_AT(&s->body, s->body.len - 1) : NULL;
		if (!last || last->kind != STMT_BLOCK || !same_loc(last->loc, s->loc))
			break;
	}
	return s != dp->body && prologue->len ? s : NULL;
}

struct uses {
	struct vec *locals;
	bool *used;
};

static void note_use(struct expr *e, void *arg)
{
	struct uses *u = arg;

	if (e->kind != EXPR_SYMBOL || !e->decl)
		return;
	for (int i = 0; i < u->locals->len; i++)
		if (VEC_AT(u->locals, i) == e->decl)
			u->used[i] = true;
}

static int by_name(const void *a, const void *b)
{
	const struct vardecl *x = *(struct vardecl *const *)a, *y = *(struct vardecl *const *)b;

	return strcmp(x->name, y->name);
}

/*
 * DP's locals with those that INNER uses first (by name), into ORDERED;
 * how many INNER uses.
 */
int emit_body_locals(struct derived_probe *dp, struct stmt *inner, struct vec *ordered)
{
	bool *used = arena_alloc(sizeof(bool) * (size_t)(dp->locals.len + 1));
	struct uses u = { &dp->locals, used };
	int n = 0;

	memset(used, 0, sizeof(bool) * (size_t)(dp->locals.len + 1));
	emit_walk_stmt(inner, note_use, &u);
	for (int i = 0; i < dp->locals.len; i++)
		if (used[i])
			vec_push(ordered, VEC_AT(&dp->locals, i));
	n = ordered->len;
	if (n > 1)	/* items is NULL when nothing was pushed */
		qsort(ordered->items, (size_t)n, sizeof(void *), by_name);
	for (int i = 0; i < dp->locals.len; i++)
		if (!used[i])
			vec_push(ordered, VEC_AT(&dp->locals, i));
	return n;
}

/*
 * Probe INDEX's body program TEXT, its loop callbacks CBS (NULL: none) and
 * its frame's declaration DECL (NULL: none); bodies whose C is the same are
 * one program, with the callbacks of the first.
 */
void emit_body_add(struct emitter *E, int index, const char *text, const char *cbs,
		   const char *decl)
{
	struct body_state *st = body_state(E);
	struct vec lits = { 0 };
	char *key = emit_merge_canonical(text, index, &lits);
	struct ebody *b;

	key = arena_printf("%s\n%s", key, emit_merge_callbacks(cbs, index, &lits));
	for (int i = 0; i < lits.len; i++)
		key = arena_printf("%s\n%s", key, (const char *)VEC_AT(&lits, i));
	if (decl)
		key = arena_printf("%s\n%s", key, emit_merge_canonical(decl, index, &lits));
	b = hmap_get(&st->by_text, key);
	if (!b) {
		b = arena_alloc(sizeof(*b));
		b->lead = index;
		b->text = cbs ? arena_printf("%s%s", cbs, text) : text;
		b->slot = st->bodies.len;
		vec_push(&st->bodies, b);
		hmap_put(&st->by_text, key, b);
	}
	st->slot_of[index] = b->slot;
	st->has_frame[index] = decl != NULL;
}

/* What the split handlers need before them: the prog array and each probe's slot. */
void emit_body_decls(struct emitter *E, FILE *out)
{
	struct body_state *st = body_state(E);
	int n = E->prog->probes.len;

	if (!st->bodies.len)
		return;
	fprintf(out, "\n/* the bodies that split handlers jump to (emit_body.c) */\n"
		"struct {\n\t__uint(type, BPF_MAP_TYPE_PROG_ARRAY);\n"
		"\t__uint(max_entries, %d);\n\t__type(key, uint32_t);\n"
		"\t__array(values, int (void *));\n} " STP_BODIES_MAP " SEC(\".maps\");\n", st->bodies.len);
	fprintf(out, "\n/* each split probe's slot in " STP_BODIES_MAP " */\n"
		"static const uint16_t stp_body_of[STP_NPROBES] SEC(\".rodata\") = {");
	for (int i = 0; i < n; i++)
		fprintf(out, "%s%s%d", i ? "," : "", i % 24 ? " " : "\n\t",
			st->slot_of[i] < 0 ? 0 : st->slot_of[i]);
	fprintf(out, "\n};\n\n"
		"/* run the probe's body: no return unless the jump fails (no program there) */\n"
		"static __always_inline void stp_tail_body(void *ctx, struct context *c)\n{\n"
		"\tuint32_t p = c->probe;\n\n"
		"\tif (p >= STP_NPROBES)\n\t\treturn;\n"
		"\tc->jumping = 1;\t/* stp_resume() finds it */\n"
		"\tbpf_tail_call(ctx, &" STP_BODIES_MAP ", stp_body_of[p]);\n"
		"\tc->jumping = 0;\n}\n\n");
}

/*
 * The body programs by slot, for the runner to put in stp_bodies once it
 * has loaded them: it may load them in other objects than the one that
 * made the map (runtime/user/load_split.c), where libbpf's own filling of
 * a prog array (.values) cannot reach.
 */
void emit_body_meta(struct emitter *E, FILE *out)
{
	struct body_state *st = body_state(E);

	if (!st->bodies.len)
		return;
	fprintf(out, "static const char *const stp_meta_bodies[] = {");
	for (int i = 0; i < st->bodies.len; i++)
		fprintf(out, "%s\n\t\"probe_%d_body\"", i ? "," : "",
			((struct ebody *)VEC_AT(&st->bodies, i))->lead);
	fprintf(out, "\n};\n\n");
}

void emit_body_meta_fields(struct emitter *E, FILE *out)
{
	struct body_state *st = body_state(E);

	if (st->bodies.len)
		fprintf(out, "\t.bodies = stp_meta_bodies,\n\t.nbodies = %d,\n", st->bodies.len);
}

/* The body programs, one per slot. */
void emit_body_programs(struct emitter *E, FILE *out)
{
	struct body_state *st = body_state(E);

	for (int i = 0; i < st->bodies.len; i++)
		fputs(((struct ebody *)VEC_AT(&st->bodies, i))->text, out);
}

/* Is struct frame_probe_INDEX_body declared? */
bool emit_body_has_frame(struct emitter *E, int index)
{
	return body_state(E)->has_frame[index];
}
