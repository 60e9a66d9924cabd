/*
 * emit_kprobe.c - kernel function probes: kernel.function("NAME"),
 * module("M").function("NAME") and kprobe.function("NAME"), each with an
 * optional .return.
 *
 * A kernel.function whose function the kernel's BTF describes becomes an
 * fentry (or fexit) program: the trampoline hands it the arguments as an
 * array of u64 (struct bpf_raw_tracepoint_args has that shape, so the BTF
 * member chains of emit_btf.c read them as they read a raw tracepoint's),
 * and an fexit program the return value after them.  That gives $param,
 * $param->member..., $$parms, and $return with the types BTF gives.
 * kprobe.function, module functions and functions BTF does not know
 * become kprobe (kretprobe) programs on struct pt_regs: $return is the
 * x86-64 return register (ax); arguments are read with the register
 * functions of the tapset (int_arg() ...), as stap reads them without
 * debuginfo.  Pass 2 has checked every $var against BTF (probes_btf.c).
 */
#include <string.h>
#include <linux/btf.h>
#include "kdwarf.h"
#include "emit_kprobe.h"
#include "probes_btf.h"

/* ---- BTF types ---- */

/* Bytes of a value of type ID passed by value (8 for pointers). */
static int type_size(uint32_t id)
{
	const struct btf_type *t = btf_type_at(btf_strip(id));

	switch (btf_kind(btf_strip(id))) {
	case BTF_KIND_PTR:
		return 8;
	case BTF_KIND_INT:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_FLOAT:
		return (int)t->size;
	default:
		return 8;
	}
}

/* The u64 slot of the trampoline's array where parameter INDEX starts. */
static int param_slot(const struct vec *params, int index)
{
	int slot = 0;

	for (int i = 0; i < index; i++)
		slot += (type_size((uint32_t)((struct tp_arg *)VEC_AT(params, i))->btf_id) + 7) / 8;
	return slot;
}

/* The x86-64 argument registers, by trampoline slot. */
static const char *const arg_regs[] = { "di", "si", "dx", "cx", "r8", "r9" };

/* ---- the registers' address in a .return ---- */

struct ip_reads {
	const struct program *prog;
	struct hmap seen;	/* struct func * -> itself */
	bool found;
};

static void find_ip_reads(struct expr *e, void *arg);

/* Does F, or a function it calls, read the probe's address? */
static void func_ip_reads(struct ip_reads *r, struct func *f)
{
	if (!f || r->found || hmap_get(&r->seen, f))
		return;
	hmap_put(&r->seen, f, f);
	if (f->embedded) {	/* addr() and probefunc() of the tapset, or guru C calling them */
		r->found = strstr(f->embedded, "stp_perf_addr(") || strstr(f->embedded, "stp_probefunc(");
		return;
	}
	emit_walk_stmt(f->body, find_ip_reads, r);
	for (int i = 0; i < r->prog->overloads.len; i++) {	/* the chain F heads, if any */
		struct overload *o = VEC_AT(&r->prog->overloads, i);

		if (VEC_AT(&o->funcs, 0) == f)
			for (int j = 1; j < o->funcs.len; j++)
				func_ip_reads(r, VEC_AT(&o->funcs, j));
	}
}

static void find_ip_reads(struct expr *e, void *arg)
{
	if (e->kind == EXPR_CALL)
		func_ip_reads(arg, e->func);
}

/*
 * Does the handler of the .return DP read its registers' address, with
 * addr() or probefunc() (stap's symname(addr()))?  There that is the
 * return address, in the caller: a kretprobe's registers have it (the
 * kernel sets their ip to it before the handlers run); an fexit
 * program's trampoline gives no way to it.
 */
static bool ret_ip_read(const struct emitter *E, struct derived_probe *dp)
{
	struct ip_reads r = { E->prog, { 0 }, false };

	if (!dp->is_return)
		return false;
	if (!dp->kfunc_ret_ip) {
		emit_walk_expr(dp->cond, find_ip_reads, &r);
		emit_walk_stmt(dp->body, find_ip_reads, &r);
		dp->kfunc_ret_ip = r.found ? 1 : -1;
	}
	return dp->kfunc_ret_ip > 0;
}

/*
 * Does the kernel.function get a kprobe though BTF describes it?  An
 * x86-64 BPF trampoline takes 6 words of arguments (Linux before 6.6
 * refuses fentry/fexit past that: ENOTSUPP, as 6.1 does for
 * __inet_lookup_established()), so a function whose arguments take more
 * gets a kprobe (kretprobe), its parameters still typed by BTF: the
 * words of the argument registers, then of the stack at the entry.  (A
 * module's kprobes hand it every word already: emit_kmod.c.)  So does a
 * .return whose handler asks where it returns to (ret_ip_read()).
 */
static bool btf_kprobe(const struct emitter *E, struct derived_probe *dp)
{
	struct vec *params;
	int ret;

	return strcmp(E->s->runtime, "bpf") == 0 && !dp->kfunc_kprobe && !dp->kfunc_offset &&
	       btf_kfunc(dp->kfunc, &params, &ret) &&
	       (param_slot(params, params->len) > 6 || ret_ip_read(E, dp));
}

/*
 * The prologue of a kernel function's program (its context CTYPE),
 * before stp_enter(): what addr() and user_mode() read
 * (runtime/bpf/stp_umode.bpf.h).  An fentry program notes where the
 * function was hit, a kprobe where it was hit (at an offset too); a
 * kretprobe the return address its registers stop at; an fexit program
 * nothing, as it has nothing to give (btf_kprobe() made a kretprobe of a
 * .return that asks).  A module's wrappers know the address in every
 * case (the kernel runtime's bpf_get_func_ip(): runtime/kmod/stp_kmod.h).
 */
const char *emit_kprobe_prologue(const struct emitter *E, const struct derived_probe *dp,
				 const char *ctype)
{
	bool regs = strcmp(ctype, "struct pt_regs *") == 0;

	if (E->kmod)
		return arena_printf("\tstp_func_note(ctx, %d);\n", dp->id);
	if (!dp->is_return)
		return arena_printf("\t%s(ctx, %d);\n", regs ? "stp_kprobe_note" : "stp_func_note",
				    dp->id);
	return regs ? arena_printf("\tstp_ret_note(ctx, %d);\n", dp->id) : NULL;
}

/* The u64 argument word SLOT: the trampoline's array, or btf_kprobe()'s registers and stack. */
static const char *slot_word(struct emitter *E, int slot)
{
	const char *t;

	if (!btf_kprobe(E, E->dp))
		return arena_printf("ctx->args[%d]", slot);
	if (slot < 6)
		return arena_printf("ctx->%s", arg_regs[slot]);
	t = emit_long_temp(E);	/* past the return address */
	emit_line(E, "%s = 0;", t);
	emit_line(E, "bpf_probe_read_kernel(&%s, 8, (const void *)(ctx->sp + %d));", t,
		  8 * (slot - 5));
	return t;
}

/* The 64-bit WORD as a long of BTF type ID: narrower ints truncated, then extended. */
/* WORD's low SIZE bytes as a long, sign-extended when SIGNED_VAL. */
static const char *sized_word(const char *word, int size, bool signed_val)
{
	static const char *const s[] = { "", "int8_t", "int16_t", "", "int32_t" };
	static const char *const u[] = { "", "uint8_t", "uint16_t", "", "uint32_t" };

	if (size == 1 || size == 2 || size == 4)
		return arena_printf("(int64_t)(%s)(%s)", signed_val ? s[size] : u[size], word);
	return arena_printf("(int64_t)(%s)", word);
}

static const char *word_value(const char *word, uint32_t id)
{
	int k = btf_kind(btf_strip(id));

	if (k == BTF_KIND_INT || k == BTF_KIND_ENUM)
		return sized_word(word, type_size(id), btf_is_signed(btf_strip(id)));
	return arena_printf("(int64_t)(%s)", word);
}

/* The value in SLOT as a long of BTF type ID. */
static const char *slot_value(struct emitter *E, int slot, uint32_t id)
{
	return word_value(slot_word(E, slot), id);
}

/* ---- the section ---- */

int emit_kprobe_words(const struct derived_probe *dp)
{
	struct vec *params;
	int ret;

	if (dp->kfunc_kprobe || !btf_kfunc(dp->kfunc, &params, &ret))
		return 0;
	return param_slot(params, params->len);
}

bool emit_kprobe_section(struct emitter *E, struct derived_probe *dp, const char **sec,
			 const char **ctype, enum stp_probe_kind *kind)
{
	(void)E;
	*kind = STP_PROBE_KFUNC;
	if (dp->kfunc_offset) {		/* an inline instance: libbpf attaches at "func+off" */
		*sec = arena_printf("kprobe/%s+%#llx", dp->kfunc, (unsigned long long)dp->kfunc_offset);
		*ctype = "struct pt_regs *";
	} else if (dp->kfunc_kprobe || btf_kprobe(E, dp)) {
		*sec = arena_printf("%s/%s", dp->is_return ? "kretprobe" : "kprobe", dp->kfunc);
		*ctype = "struct pt_regs *";
		if (dp->kret_maxactive && !E->kmod && dp->orig && !hmap_get(&E->reported, dp->orig)) {
			/* the perf kprobe a BPF program attaches through takes none */
			hmap_put(&E->reported, dp->orig, dp->orig);
			diag_warning(dp->orig->loc, "the bpf runtime cannot set a kretprobe's "
				     "maxactive: '%s' has the kernel's default, max(10, 2 x CPUs) "
				     "returns at once", dp->point);
			diag_hint("--runtime=kernel sets it, and counts the returns missed as "
				  "skipped probes");
		}
	} else {
		*sec = arena_printf("%s/%s", dp->is_return ? "fexit" : "fentry", dp->kfunc);
		*ctype = "struct bpf_raw_tracepoint_args *";	/* the trampoline's u64 array */
	}
	return true;
}

void emit_kprobe_meta(const struct emitter *E, FILE *out, struct derived_probe *dp)
{
	if ((dp->kind != PROBE_KFUNC && dp->kind != PROBE_KSTATEMENT) || !dp->kfunc)
		return;
	fprintf(out, "\t\t.target = \"%s\",\n", dp->kfunc);
	if (dp->kind == PROBE_KSTATEMENT || dp->kfunc_kprobe || btf_kprobe(E, dp))
		fprintf(out, "\t\t.kprobe = true,\n");
	if (dp->is_return)
		fprintf(out, "\t\t.kprobe_return = true,\n");

}

/* ---- target variables ---- */

static const char *snprintf_pieces(struct emitter *E, struct vec *pieces)
{
	if (!pieces->len) {
		const char *t = emit_str_temp(E);

		emit_line(E, "%s[0] = 0;", t);
		return t;
	}
	return emit_bpf_snprintf(E, pieces);
}

static void add_hex(struct vec *pieces, const char *name, const char *val)
{
	struct emit_piece *p = ARENA_NEW(struct emit_piece);

	p->lit = arena_printf("%s%s=", pieces->len ? " " : "", name);
	p->conv = "0x%llx";
	p->val = val;
	vec_push(pieces, p);
}

/* $NAME as a bare variable of expression E's kind: no members, no '&'. */
static struct expr bare_var(const struct expr *e, const char *name)
{
	struct expr ve = *e;

	ve.name = arena_printf("$%s", name);
	ve.comps = (struct vec){ 0 };
	ve.addr_of = false;
	return ve;
}

/*
 * $$parms$ and $$parms$$ (and $$vars$): each parameter as its $name$
 * prints it (emit_btf_pretty_var()); a struct passed by value is left
 * out, as from $$parms.
 */
static const char *pretty_parms(struct emitter *E, struct expr *e, const struct vec *params)
{
	struct emit_pretty p = { .E = E, .lit = "" };
	int n = 0;

	for (int i = 0; i < params->len; i++) {
		struct tp_arg *a = VEC_AT(params, i);
		struct expr ve = bare_var(e, a->name);

		if (btf_is_record(btf_strip((uint32_t)a->btf_id)))
			continue;
		emit_pretty_lit(&p, arena_printf("%s%s=", n++ ? " " : "", a->name));
		emit_pretty_put(&p, "%s", emit_btf_pretty_var(E, &ve, a->btf_id,
				slot_value(E, param_slot(params, i), (uint32_t)a->btf_id)), true);
	}
	return emit_pretty_text(&p);
}

/* $$parms and $$vars: "name=0x..." for each parameter, as stap prints them. */
static const char *parms(struct emitter *E, struct expr *e, const struct vec *params)
{
	struct vec pieces = { 0 };

	if (e->pretty)
		return pretty_parms(E, e, params);
	for (int i = 0; i < params->len; i++) {
		struct tp_arg *a = VEC_AT(params, i);

		if (!btf_is_record(btf_strip((uint32_t)a->btf_id)))
			add_hex(&pieces, a->name,
				slot_value(E, param_slot(params, i), (uint32_t)a->btf_id));
	}
	return snprintf_pieces(E, &pieces);
}

static const char *return_value(struct emitter *E, const struct vec *params, int ret)
{
	if (E->dp->kfunc_kprobe)
		return "(int64_t)ctx->ax";
	if (btf_kprobe(E, E->dp))
		return word_value("ctx->ax", (uint32_t)ret);
	return slot_value(E, param_slot(params, params->len), (uint32_t)ret);
}

static const char *pretty_long(struct emitter *E, const char *val, bool is_signed_val)
{
	struct vec pieces = { 0 };
	struct emit_piece *p = ARENA_NEW(struct emit_piece);

	p->lit = "";
	p->conv = is_signed_val ? "%lld" : "%llu";
	p->val = val;
	vec_push(&pieces, p);
	return emit_bpf_snprintf(E, &pieces);
}

/* $NAME... of BTF type ID in the 64-bit WORD (a C expression). */
static const char *typed_word(struct emitter *E, struct expr *e, const char *name, int id,
			      const char *word)
{
	uint32_t t = btf_strip((uint32_t)id);
	struct tp_arg a = { name, id, btf_type_c(id) };

	if (btf_is_record(btf_strip(t))) {
		emit_unsupported(E, e->loc, arena_printf("'%s', a struct passed by value", e->name),
				 NULL);
		return "0";
	}
	if (!e->comps.len && !e->addr_of && btf_kind(t) != BTF_KIND_PTR)
		return e->pretty ? pretty_long(E, word_value(word, t), btf_is_signed(t))
				 : word_value(word, t);
	return emit_btf_chain_at(E, e, &a, word);
}

/* $NAME... of BTF type ID in trampoline slot SLOT. */
static const char *typed_value(struct emitter *E, struct expr *e, const char *name, int id,
			       int slot)
{
	return typed_word(E, e, name, id, slot_word(E, slot));
}

/* DWARF's location of a parameter read a word of kernel memory: 0 if it faults. */
static const char *kernel_word(void *arg, const char *addr, int size)
{
	struct emitter *E = arg;
	const char *t = emit_long_temp(E);

	emit_line(E, "%s = 0;", t);
	emit_line(E, "bpf_probe_read_kernel(&%s, %d, (const void *)(%s));", t, size, addr);
	return t;
}

/*
 * $param... at an inline instance: the word its DWARF location gives at
 * the instance's entry, over the kprobe's registers (kdwarf.h), then as a
 * BTF-typed value like any other.
 */
static void add_lit(struct vec *pieces, const char *name, const char *text)
{
	struct emit_piece *p = ARENA_NEW(struct emit_piece);

	p->lit = arena_printf("%s%s=%s", pieces->len ? " " : "", name, text);
	vec_push(pieces, p);
}

/*
 * $$vars$ and $$vars$$ there: each variable as its $name$ prints it, typed
 * with BTF; "name=?" where the point has no location for it, or BTF no
 * type (an array).
 */
static const char *pretty_context_vars(struct emitter *E, struct expr *e, struct vec *vars)
{
	struct emit_pretty p = { .E = E, .lit = "" };

	for (int i = 0; i < vars->len; i++) {
		struct kdwarf_var *v = VEC_AT(vars, i);
		struct expr ve = bare_var(e, v->name);
		int id = kdwarf_var_btf(v->off);
		const char *val, *why;

		emit_pretty_lit(&p, arena_printf("%s%s=", i ? " " : "", v->name));
		if (id < 0 || !kdwarf_var_value(v->off, E->dp->addr, "ctx", kernel_word, E,
						btf_is_record(btf_strip((uint32_t)id)), &val, &why))
			emit_pretty_lit(&p, "?");
		else
			emit_pretty_put(&p, "%s", emit_btf_pretty_var(E, &ve, id, val), true);
	}
	return emit_pretty_text(&p);
}

/*
 * $$vars, $$parms, $$locals at an inline instance or a statement that
 * DWARF describes, as stap 4.8 writes them: "name=0x..." for a value,
 * "name={...}" for a struct, "name=[...]" for an array, "name=?" for a
 * variable whose location this point does not have (kdwarf.h).
 */
static const char *inline_context_vars(struct emitter *E, struct expr *e)
{
	struct derived_probe *dp = E->dp;
	struct vec vars = { 0 }, pieces = { 0 };
	uint64_t pc = dp->kind == PROBE_KSTATEMENT ? dp->addr : 0;

	kdwarf_context_vars(dp->kfunc_die, pc, e->name + 2, &vars);
	if (e->pretty)
		return pretty_context_vars(E, e, &vars);
	for (int i = 0; i < vars.len; i++) {
		struct kdwarf_var *v = VEC_AT(&vars, i);
		const char *word, *why;

		if (v->shape != 'v')
			add_lit(&pieces, v->name, v->shape == '{' ? "{...}" : "[...]");
		else if (!kdwarf_var_value(v->off, dp->addr, "ctx", kernel_word, E, false, &word,
					   &why))
			add_lit(&pieces, v->name, "?");
		else
			add_hex(&pieces, v->name, sized_word(word, v->bytes, v->is_signed));
	}
	return snprintf_pieces(E, &pieces);
}

static const char *inline_target(struct emitter *E, struct expr *e)
{
	struct derived_probe *dp = E->dp;
	const char *word, *why = "";
	bool record = false;
	int id;

	if (e->name[1] == '$')
		return inline_context_vars(E, e);

	if (!kdwarf_param_btf(dp->kfunc_die, dp->kind == PROBE_KSTATEMENT ? dp->addr : 0,
			      e->name + 1, &id, &why) ||
	    !kdwarf_param_value(dp->kfunc_die, dp->addr, e->name + 1, "ctx", kernel_word, E,
				(record = btf_is_record(btf_strip((uint32_t)id))), &word, &why)) {
		emit_unsupported(E, e->loc, arena_printf("'%s' at %s (%s)", e->name, dp->point, why),
				 NULL);
		return e->type == TYPE_STRING ? "\"\"" : "0";
	}
	if (record) {
		struct tp_arg a = { e->name + 1, id, btf_type_c(id) };

		return emit_btf_record_at(E, e, &a, word);
	}
	return typed_word(E, e, e->name + 1, id, word);
}

const char *emit_kprobe_target(struct emitter *E, struct expr *e)
{
	struct derived_probe *dp = E->dp;
	struct vec *params = NULL, none = { 0 };
	int ret = 0;

	E->cf->uses_ctx = true;
	if (dp->kfunc_die)
		return inline_target(E, e);
	if (dp->kfunc_kprobe || !btf_kfunc(dp->kfunc, &params, &ret))
		params = &none;
	if (!strcmp(e->name, "$$return")) {
		struct vec pieces = { 0 };

		if (dp->kfunc_kprobe || ret)
			add_hex(&pieces, "return", return_value(E, params, ret));
		return snprintf_pieces(E, &pieces);
	}
	if (e->name[1] == '$')
		return strcmp(e->name, "$$locals") == 0 ? snprintf_pieces(E, &none) : parms(E, e, params);
	if (!strcmp(e->name, "$return")) {
		if (dp->kfunc_kprobe)
			return e->pretty ? pretty_long(E, "(int64_t)ctx->ax", true) : "(int64_t)ctx->ax";
		if (btf_kprobe(E, dp))
			return typed_word(E, e, "return", ret, "ctx->ax");
		return typed_value(E, e, "return", ret, param_slot(params, params->len));
	}
	for (int i = 0; i < params->len; i++) {
		struct tp_arg *a = VEC_AT(params, i);

		if (!strcmp(a->name, e->name + 1))
			return typed_value(E, e, a->name, a->btf_id, param_slot(params, i));
	}
	emit_unsupported(E, e->loc, arena_printf("target variable '%s' in %s", e->name, dp->point),
			 NULL);
	return e->type == TYPE_STRING ? "\"\"" : "0";
}

/* ---- writes (guru mode, the kernel runtime: pass 2 checked the rest) ---- */

/* Whether a value of BTF type ID sits in one register: an integer, an enum or a pointer. */
static bool scalar(uint32_t id)
{
	int k = btf_kind(btf_strip(id));

	return k == BTF_KIND_INT || k == BTF_KIND_ENUM || k == BTF_KIND_ENUM64 || k == BTF_KIND_PTR;
}

/*
 * REG (a pt_regs field) of the kprobe's registers, and trampoline SLOT of
 * the handler's copy when >= 0, become VAL: a kretprobe's ax is what the
 * function returns, an entry kprobe's argument registers what it runs on.
 */
static const char *set_reg(struct emitter *E, const char *reg, int slot, struct expr *val)
{
	const char *v = emit_snapshot(E, emit_expr(E, val), TYPE_LONG);

	E->cf->uses_ctx = true;
	E->side_effects++;
	if (E->dp->kfunc_kprobe) {
		emit_line(E, "ctx->%s = (unsigned long)%s;", reg, v);
		return v;
	}
	emit_line(E, "ctx->args[%d] = (uint64_t)%s;", slot, v);
	emit_line(E, "stp_kmod_kregs()->%s = (unsigned long)%s;", reg, v);
	return v;
}

/*
 * $return = v in a kernel.function(...).return or kprobe.function(...).return
 * handler, $param = v in a kernel.function(...) one (a parameter passed in
 * a register), as stap's module writes them: in a module only (BPF cannot
 * change a function's registers).
 */
const char *emit_kprobe_assign(struct emitter *E, struct expr *e)
{
	struct expr *l = e->left;
	struct derived_probe *dp = E->dp;
	struct vec *params = NULL, none = { 0 };
	int ret = 0;

	if (dp->kfunc_kprobe || !btf_kfunc(dp->kfunc, &params, &ret))
		params = &none;
	if (!l->comps.len && !strcmp(l->name, "$return") && (dp->kfunc_kprobe || scalar(ret)))
		return set_reg(E, "ax", param_slot(params, params->len), e->right);
	for (int i = 0; i < params->len && !dp->is_return && !l->comps.len; i++) {
		struct tp_arg *a = VEC_AT(params, i);
		int slot = param_slot(params, i);

		if (!strcmp(a->name, l->name + 1) && scalar((uint32_t)a->btf_id) && slot < 6)
			return set_reg(E, arg_regs[slot], slot, e->right);
	}
	emit_unsupported(E, l->loc, arena_printf("writing '%s%s' in %s", l->name,
						 l->comps.len ? "->..." : "", dp->point),
			 "a module writes $return in a .return probe, and a parameter held in a "
			 "register at the entry, when it is an integer or a pointer");
	return "0";
}
