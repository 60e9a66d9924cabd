/*
 * emit_btf.c - $arg->member chains on raw tracepoint arguments, from the
 * kernel's BTF (/sys/kernel/btf/vmlinux).
 *
 * $prev->mm->owner->pid reads through two pointers: each pointer on the
 * way is read into a temporary with bpf_probe_read_kernel(), then the
 * last member is read the same way, as C member accesses the compiler
 * turns into CO-RE relocations (__builtin_preserve_access_index).  BTF
 * tells which members are pointers (read them), embedded structs and
 * arrays (go on with '.' and '[i]').  Pass 2 has checked the chain.
 */
#include <string.h>
#include <linux/btf.h>
#include "emit_int.h"
#include "probes_btf.h"

static const struct btf_type *type_at(uint32_t id)
{
	return btf_type_at(id);
}


/*
 * Where the walk is: a pointer value (a C expression of type CTYPE whose
 * pointee has BTF type TYPE), or a C lvalue of BTF type TYPE whose address
 * is a kernel address.
 */
struct walk {
	const char *val;
	const char *ctype;
	const char *lv;
	uint32_t type;		/* stripped */
	bool bits;		/* val is a bit field's value, read */
	bool fl;		/* the C types are CO-RE flavours (emit_flavour.c) */
};

static bool is_char(uint32_t id)
{
	const struct btf_type *t = type_at(id);

	return btf_kind(id) == BTF_KIND_INT && (t->size == 1);
}

/* Read W's lvalue (a number or a pointer) into a new temporary. */
static const char *read_lvalue(struct emitter *E, const struct walk *w)
{
	const char *t = emit_long_temp(E);

	emit_line(E, "%s = stp_kread_int(__builtin_preserve_access_index(&%s), sizeof(%s), %d);", t,
		  w->lv, w->lv, btf_is_signed(w->type));
	return t;
}

/* The lvalue is a pointer: read it; W becomes that value. */
static void read_pointer(struct emitter *E, struct walk *w)
{
	const char *t = read_lvalue(E, w);

	w->ctype = arena_printf("typeof(%s)", w->lv);
	w->type = btf_strip(type_at(w->type)->type);
	w->val = t;
	w->lv = NULL;
}

/*
 * Bit field M of the struct W is at (its BITS from the struct's start,
 * WIDTH of them): the smallest read that covers it, then its bits, as
 * emit_dwarf.c reads one.  The offsets are the target kernel's, whose BTF
 * pass 2 read; W becomes the value.
 */
static bool read_bits(struct emitter *E, struct walk *w, const struct target_comp *tc, uint32_t m,
		      uint64_t bits, uint32_t width)
{
	const char *base = w->lv ? arena_printf("(const char *)__builtin_preserve_access_index(&%s)",
						 w->lv)
				 : arena_printf("(const char *)%s", w->val);
	int shift = (int)(bits % 8), n = emit_bytes_for(shift + (int)width);
	const char *t = emit_long_temp(E);

	if (!n) {
		diag_error(tc->loc, "cannot read '%s': its bit field spans more than 8 bytes",
			   tc->member);
		return false;
	}
	emit_line(E, "%s = stp_kread_int(%s + %llu, %d, 0);", t, base,
		  (unsigned long long)(bits / 8), n);
	w->val = emit_bits_of(t, shift, (int)width, btf_is_signed(btf_strip(m)));
	w->lv = NULL;
	w->type = btf_strip(m);
	w->bits = true;
	return true;
}

static bool step_member(struct emitter *E, struct walk *w, const struct target_comp *tc)
{
	uint64_t bits = 0;
	uint32_t width = 0, m = btf_is_record(w->type) ? btf_member_at(w->type, tc->member, &bits, &width)
						   : 0;

	if (!m) {
		diag_error(tc->loc, "cannot read '->%s': the type has no such member", tc->member);
		return false;
	}
	if (width)
		return read_bits(E, w, tc, m, bits, width);
	if (w->fl)
		emit_flavour_member(E, w->type, tc->member, m);
	w->lv = w->lv ? arena_printf("%s.%s", w->lv, tc->member)
		      : arena_printf("((%s)%s)->%s", w->ctype, w->val, tc->member);
	w->type = btf_strip(m);
	return true;
}

static void step_index(struct emitter *E, struct walk *w, const struct target_comp *tc)
{
	const char *i = tc->kind == COMP_INDEX ? emit_number(tc->index)
		: emit_snapshot(E, emit_expr(E, tc->index_expr), TYPE_LONG);

	if (!w->lv) {
		w->lv = arena_printf("((%s)%s)[%s]", w->ctype, w->val, i);
		return;
	}
	w->lv = arena_printf("%s[%s]", w->lv, i);
	if (btf_kind(w->type) == BTF_KIND_ARRAY)
		w->type = btf_strip(((const struct btf_array *)(type_at(w->type) + 1))->type);
}

/*
 * $x$ of a char * (value PTR), as stap's kernel_string_quoted(): the
 * string quoted, its unprintable bytes escaped; the address (0x...) when
 * it is NULL or cannot be read.
 */
static const char *pretty_chars(struct emitter *E, const char *ptr)
{
	struct vec pieces = { 0 };
	struct emit_piece *p = ARENA_NEW(struct emit_piece);
	const char *s = emit_str_temp(E), *out;

	p->lit = "";
	p->conv = "0x%llx";
	p->val = ptr;
	vec_push(&pieces, p);
	out = emit_bpf_snprintf(E, &pieces);
	emit_line(E, "if (%s && bpf_probe_read_kernel_str(%s, MAXSTRINGLEN, (const void *)%s) > 0)",
		  ptr, s, ptr);
	emit_line(E, "\tstp__text_str(%s, %s, 0, 0, 1);", out, s);
	return out;
}

static bool is_char_pointer(uint32_t id)
{
	return btf_kind(id) == BTF_KIND_PTR && is_char(btf_strip(type_at(id)->type));
}

/* VAL's text, signed or not. */
static const char *pretty_number(struct emitter *E, const char *val, bool sgn)
{
	struct vec pieces = { 0 };
	struct emit_piece *p = ARENA_NEW(struct emit_piece);

	p->lit = "";
	p->conv = sgn ? "%lld" : "%llu";
	p->val = val;
	vec_push(&pieces, p);
	return emit_bpf_snprintf(E, &pieces);
}

/*
 * ---- $x$ and $x$$ of a struct or union ----
 * As emit_dwarf.c prints DWARF's (stap's words): "{.a=1, .b=0x..., .s={...}}",
 * nested structs and arrays in full with $$, at most PRETTY_MAX_VALUES values.
 */
static void bpp_value(struct emit_pretty *p, const struct walk *w, bool top);

/* Struct or union W's members (an anonymous one's in its place, as C reaches them). */
/* OWNER: the record whose flavour W's lvalue has (an anonymous member's are its own) */
static void bpp_members(struct emit_pretty *p, const struct walk *w, uint32_t owner, int *n)
{
	const struct btf_type *t = type_at(w->type);
	const struct btf_member *m = (const struct btf_member *)(t + 1);
	bool kflag = BTF_INFO_KFLAG(t->info);

	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++) {
		const char *name = btf_name_of(m[i].name_off);
		uint32_t mt = btf_strip(m[i].type);
		uint32_t width = kflag ? BTF_MEMBER_BITFIELD_SIZE(m[i].offset) : 0;
		uint64_t bits = kflag ? BTF_MEMBER_BIT_OFFSET(m[i].offset) : m[i].offset;
		struct walk mw = { .lv = w->lv, .type = mt, .fl = w->fl };

		emit_pretty_lit(p, (*n)++ ? ", " : "");
		if (p->values >= PRETTY_MAX_VALUES) {
			emit_pretty_lit(p, "...");
			return;
		}
		if (!*name && btf_is_record(mt)) {	/* an anonymous struct or union */
			int k = 0;

			emit_pretty_lit(p, "={");
			if (p->full)
				bpp_members(p, &mw, owner, &k);
			else
				emit_pretty_lit(p, "...");
			emit_pretty_lit(p, "}");
			continue;
		}
		emit_pretty_lit(p, arena_printf(".%s=", name));
		if (w->fl && !width)	/* a bit field is read from its offset */
			emit_flavour_member(p->E, owner, name, m[i].type);
		if (width) {	/* a number, as stap prints a bit field */
			const char *raw = emit_long_temp(p->E);
			int shift = (int)(bits % 8), nb = emit_bytes_for(shift + (int)width);

			if (!nb || (btf_kind(mt) != BTF_KIND_INT && btf_kind(mt) != BTF_KIND_ENUM)) {
				emit_pretty_lit(p, "?");
				continue;
			}
			emit_line(p->E, "%s = stp_kread_int((const char *)__builtin_preserve_access_index"
				  "(&%s) + %llu, %d, 0);", raw, w->lv, (unsigned long long)(bits / 8), nb);
			emit_pretty_put(p, btf_is_signed(mt) ? "%lld" : "%llu",
				emit_bits_of(raw, shift, (int)width, btf_is_signed(mt)), false);
			continue;
		}
		mw.lv = arena_printf("%s.%s", w->lv, name);
		bpp_value(p, &mw, false);
	}
}

static void bpp_value(struct emit_pretty *p, const struct walk *w, bool top)
{
	int k = btf_kind(w->type);

	if (k == BTF_KIND_INT || k == BTF_KIND_ENUM || k == BTF_KIND_ENUM64) {
		if (is_char(w->type))
			emit_pretty_char(p, read_lvalue(p->E, w));
		else
			emit_pretty_put(p, btf_is_signed(w->type) ? "%lld" : "%llu", read_lvalue(p->E, w), false);
	} else if (k == BTF_KIND_PTR) {
		uint32_t to = btf_strip(type_at(w->type)->type);
		const char *ptr = read_lvalue(p->E, w);

		if (is_char(to)) {
			emit_pretty_put(p, "%s", pretty_chars(p->E, ptr), true);
		} else if (top && btf_is_record(to)) {
			struct walk tw = { .lv = arena_printf("(*(typeof(%s))%s)", w->lv, ptr),
					   .type = to, .fl = w->fl };

			bpp_value(p, &tw, true);
		} else {
			emit_pretty_put(p, "0x%016llx", ptr, false);
		}
	} else if (k == BTF_KIND_ARRAY) {
		uint32_t el = btf_strip(((const struct btf_array *)(type_at(w->type) + 1))->type);
		struct walk ew = { .lv = arena_printf("%s[0]", w->lv), .type = el, .fl = w->fl };

		if (!top && !p->full) {
			emit_pretty_lit(p, "[...]");
		} else if (is_char(el)) {
			const char *t = emit_str_temp(p->E);

			emit_line(p->E, "stp_kread_str(__builtin_preserve_access_index(&%s), %s);",
				  w->lv, t);
			emit_pretty_put(p, "\"%s\"", t, true);
		} else {
			emit_pretty_lit(p, "[");
			bpp_value(p, &ew, false);
			emit_pretty_lit(p, ", ...]");
		}
	} else if (btf_is_record(w->type)) {
		int n = 0;

		emit_pretty_lit(p, "{");
		if (top || p->full)
			bpp_members(p, w, w->type, &n);
		else
			emit_pretty_lit(p, "...");
		emit_pretty_lit(p, "}");
	} else {
		emit_pretty_lit(p, "?");
	}
}

/* $x$ or $x$$ (FULL) of the struct, union or pointer to one at W. */
static const char *pretty_record(struct emitter *E, const struct walk *w, bool full)
{
	struct emit_pretty p = { E, { 0 }, "", full, 0 };

	bpp_value(&p, w, true);
	return emit_pretty_text(&p);
}

/* A string for $x$ of a number, a pointer or a char array, as stap prints them. */
static const char *pretty(struct emitter *E, struct expr *e, const struct walk *w)
{
	struct vec pieces = { 0 };
	struct emit_piece *p = ARENA_NEW(struct emit_piece);
	int k = btf_kind(w->type);

	p->lit = "";
	if (is_char_pointer(w->type))
		return pretty_chars(E, read_lvalue(E, w));
	if (is_char(w->type))	/* 'c', as stap prints a char */
		return pretty_record(E, w, e->pretty == 2);
	if (k == BTF_KIND_PTR && btf_is_record(btf_strip(type_at(w->type)->type)))
		return pretty_record(E, w, e->pretty == 2);	/* the struct it points to */
	if (k == BTF_KIND_ARRAY && is_char(btf_strip(((const struct btf_array *)(type_at(w->type) + 1))->type))) {
		const char *t = emit_str_temp(E);

		emit_line(E, "stp_kread_str(__builtin_preserve_access_index(&%s), %s);", w->lv, t);
		p->conv = "\"%s\"";
		p->str = true;
		p->val = t;
	} else if (k == BTF_KIND_INT || k == BTF_KIND_ENUM || k == BTF_KIND_ENUM64 || k == BTF_KIND_PTR) {
		p->conv = k == BTF_KIND_PTR ? "0x%llx" : btf_is_signed(w->type) ? "%lld" : "%llu";
		p->val = read_lvalue(E, w);
	} else {
		return pretty_record(E, w, e->pretty == 2);
	}
	vec_push(&pieces, p);
	return emit_bpf_snprintf(E, &pieces);
}

static const char *offset_chain(struct emitter *E, struct expr *e, const char *addr,
				uint32_t cur);

/* Follow E's ->member and [i] from W; the value, its address (&), or its text ($). */
static const char *walk_chain(struct emitter *E, struct expr *e, struct walk *w)
{
	const char *flavour = w->lv ? NULL : emit_flavour_ptr(E, w->type);

	if (E->kmod && !e->pretty && !w->lv)	/* a module: offsets, not its headers' types */
		return offset_chain(E, e, arena_printf("(int64_t)(%s)", w->val), w->type);
	if (flavour) {
		w->ctype = flavour;
		w->fl = true;
	}
	for (int i = 0; i < e->comps.len; i++) {
		const struct target_comp *tc = VEC_AT(&e->comps, i);

		if (w->lv && btf_kind(w->type) == BTF_KIND_PTR)
			read_pointer(E, w);
		if (tc->kind == COMP_MEMBER) {
			if (!step_member(E, w, tc))
				return "0";
		} else {
			step_index(E, w, tc);
		}
	}
	if (w->bits) {	/* a number, as stap prints a bit field */
		if (e->addr_of)
			emit_unsupported(E, e->loc, "'&' on a bit field", NULL);
		if (e->pretty)
			return pretty_number(E, w->val, btf_is_signed(w->type));
		return w->val;
	}
	if (!w->lv) {
		if (e->addr_of)
			emit_unsupported(E, e->loc, "'&' on a value that is not in memory", NULL);
		if (e->pretty && btf_is_record(w->type)) {	/* the struct a pointer value points to */
			struct walk tw = { .lv = arena_printf("(*(%s)%s)", w->ctype, w->val),
					   .type = w->type, .fl = w->fl };

			return pretty_record(E, &tw, e->pretty == 2);
		}
		if (e->pretty)
			emit_unsupported(E, e->loc, arena_printf("pretty printing '%s', a pointer to a "
								 "%s", e->name ? e->name : "@cast",
								 "type pmstap cannot print"), NULL);
		return arena_printf("(int64_t)%s", w->val);
	}
	if (e->addr_of || (btf_kind(w->type) == BTF_KIND_ARRAY && !e->pretty))
		return arena_printf("(int64_t)(long)__builtin_preserve_access_index(&%s)", w->lv);
	if (e->pretty)
		return pretty(E, e, w);
	return read_lvalue(E, w);
}

/* $arg[->member|[i]]... of raw tracepoint argument INDEX (BTF type A->btf_id). */
const char *emit_btf_chain(struct emitter *E, struct expr *e, const struct tp_arg *a, int index)
{
	return emit_btf_chain_at(E, e, a, arena_printf("ctx->args[%d]", index));
}

const char *emit_btf_chain_at(struct emitter *E, struct expr *e, const struct tp_arg *a,
			      const char *word)
{
	struct walk w = { .val = word, .ctype = a->ctype };
	uint32_t t;

	if (!btf_index_load()) {
		emit_unsupported(E, e->loc, "member chains without the kernel's BTF", NULL);
		return "0";
	}
	t = btf_strip((uint32_t)a->btf_id);
	if (!e->comps.len && !e->addr_of && !e->pretty)
		return arena_printf("(int64_t)%s", w.val);
	if (!e->comps.len && e->pretty && is_char_pointer(t))
		return pretty_chars(E, arena_printf("(int64_t)%s", w.val));
	if (!e->comps.len && e->pretty && btf_kind(t) != BTF_KIND_PTR) {
		struct vec pieces = { 0 };
		struct emit_piece *p = ARENA_NEW(struct emit_piece);

		p->lit = "";
		p->conv = btf_is_signed(t) ? "%lld" : "%llu";
		p->val = arena_printf("(int64_t)%s", w.val);
		vec_push(&pieces, p);
		return emit_bpf_snprintf(E, &pieces);
	}
	if (btf_kind(t) != BTF_KIND_PTR) {
		emit_unsupported(E, e->loc, arena_printf("'%s' with members: it is not a pointer",
							 e->name), NULL);
		return "0";
	}
	w.type = btf_strip(type_at(t)->type);
	return walk_chain(E, e, &w);
}

const char *emit_btf_record_at(struct emitter *E, struct expr *e, const struct tp_arg *a,
			       const char *addr)
{
	struct walk w = { .val = addr, .type = btf_strip((uint32_t)a->btf_id) };

	if (!btf_index_load()) {
		emit_unsupported(E, e->loc, "member chains without the kernel's BTF", NULL);
		return "0";
	}
	if (!e->comps.len && !e->addr_of && !e->pretty) {
		emit_unsupported(E, e->loc, arena_printf("'%s' as a number: it is a %s (name a "
							 "member, or print it with '%s$')", e->name,
							 btf_type_c((int)w.type), e->name), NULL);
		return "0";
	}
	if (!(E->kmod && !e->pretty)) {	/* BPF, or printing: the object as a C lvalue */
		w.ctype = arena_printf("%s *", btf_type_c((int)w.type));
		w.lv = arena_printf("(*(%s)(long)(%s))", w.ctype, addr);
	}
	return walk_chain(E, e, &w);
}

const char *emit_btf_pretty_var(struct emitter *E, struct expr *e, int id, const char *val)
{
	uint32_t t = btf_strip((uint32_t)id), to;
	struct tp_arg a = { e->name + 1, id, btf_type_c(id) };

	if (btf_is_record(t))
		return emit_btf_record_at(E, e, &a, val);
	if (btf_kind(t) != BTF_KIND_PTR)
		return pretty_number(E, arena_printf("(int64_t)(%s)(%s)", btf_type_c(id), val),
				     btf_is_signed(t));
	if (is_char_pointer(t))
		return pretty_chars(E, arena_printf("(int64_t)(%s)", val));
	to = btf_strip(type_at(t)->type);
	if (!to || btf_kind(to) == BTF_KIND_FUNC_PROTO || btf_kind(to) == BTF_KIND_PTR) {
		struct emit_pretty p = { .E = E, .lit = "" };

		emit_pretty_put(&p, "0x%016llx", arena_printf("(int64_t)(%s)", val), false);
		return emit_pretty_text(&p);
	}
	a.btf_id = (int)to;	/* what it points to, as stap prints a pointer */
	a.ctype = btf_type_c((int)to);
	return emit_btf_record_at(E, e, &a, val);
}

/* The bytes of BTF type ID, 0 when it has no size. */
static uint64_t type_size(uint32_t id, int depth)
{
	const struct btf_type *t;

	id = btf_strip(id);
	t = type_at(id);
	switch (btf_kind(id)) {
	case BTF_KIND_PTR:
		return 8;
	case BTF_KIND_ARRAY: {
		const struct btf_array *a = (const struct btf_array *)(t + 1);

		return depth > 8 ? 0 : a->nelems * type_size(a->type, depth + 1);
	}
	case BTF_KIND_INT: case BTF_KIND_ENUM: case BTF_KIND_ENUM64:
	case BTF_KIND_STRUCT: case BTF_KIND_UNION:
		return t->size;
	default:
		return 0;
	}
}

/*
 * The integer of SIZE bytes at kernel address ADDR: in user context
 * through the kernel-memory reader (an error if it faults), in a module
 * through its fault-safe copy (0 if it faults, as a BPF program's read).
 */
static const char *chain_read(struct emitter *E, struct expr *e, const char *addr, uint64_t size,
			      bool sgn)
{
	const char *t = emit_long_temp(E);

	if (E->ctx == ECTX_KERNEL) {
		emit_line(E, "%s = stp_kread_int((const void *)(long)(%s), %llu, %d);", t, addr,
			  (unsigned long long)size, sgn);
		return t;
	}
	emit_line(E, "%s = stp_read_kernel_int(c, %s, %llu, %d);", t, addr,
		  (unsigned long long)size, sgn);
	emit_check(E, emit_error_site(E, e->loc, "kernel memory read fault"));
	return t;
}

/*
 * E's chain from ADDR, the address of a CUR (a @cast's pointer, a
 * tracepoint argument's pointee), with the offsets BTF gives now: each
 * pointer on the way and the value read at its address.  User context
 * (begin, end, timers) reads kernel memory so, and a module so reaches
 * what its kernel's headers do not declare (struct audit_buffer is
 * kernel/audit.c's own).  What is an array or a struct gives its address.
 */
static const char *offset_chain(struct emitter *E, struct expr *e, const char *addr, uint32_t cur)
{
	bool lv = false;

	for (int i = 0; i < e->comps.len; i++) {
		const struct target_comp *tc = VEC_AT(&e->comps, i);
		bool through = lv && btf_kind(cur) == BTF_KIND_PTR;

		if (through) {
			addr = chain_read(E, e, addr, 8, false);
			cur = btf_strip(type_at(cur)->type);
		}
		if (tc->kind == COMP_MEMBER) {
			uint64_t bits;
			uint32_t width, m = btf_is_record(cur) ? btf_member_at(cur, tc->member, &bits,
									     &width) : 0;
			int shift = (int)(bits % 8);

			if (!m) {
				diag_error(tc->loc, "cannot read '->%s': the type has no such member",
					   tc->member);
				return "0";
			}
			cur = btf_strip(m);
			if (width && (i + 1 < e->comps.len || e->addr_of || e->pretty)) {
				emit_unsupported(E, tc->loc, "a bit field's members or address", NULL);
				return "0";
			}
			if (width)
				return emit_bits_of(chain_read(E, e, arena_printf("%s + %llu", addr,
										  (unsigned long long)(bits / 8)),
							       (uint64_t)emit_bytes_for(shift + (int)width), false),
						    shift, (int)width, btf_is_signed(cur));
			addr = arena_printf("(%s + %llu)", addr, (unsigned long long)(bits / 8));
		} else {
			const char *n = tc->kind == COMP_INDEX ? emit_number(tc->index)
				: emit_snapshot(E, emit_expr(E, tc->index_expr), TYPE_LONG);

			if (lv && !through && btf_kind(cur) == BTF_KIND_ARRAY)
				cur = btf_strip(((const struct btf_array *)(type_at(cur) + 1))->type);
			else if (lv && !through) {
				diag_error(tc->loc, "cannot index: the value is not an array or a pointer");
				return "0";
			}
			addr = arena_printf("(%s + %s * %llu)", addr, n,
					    (unsigned long long)type_size(cur, 0));
		}
		lv = true;
	}
	if (e->pretty) {
		emit_unsupported(E, e->loc, "pretty printing a @cast in user context", NULL);
		return "\"\"";
	}
	if (e->addr_of || !lv || btf_kind(cur) == BTF_KIND_ARRAY || btf_is_record(cur))
		return arena_printf("(int64_t)%s", addr);
	return chain_read(E, e, addr, type_size(cur, 0), btf_is_signed(cur));
}

/*
 * @cast(addr, "type"[, "module"])->member..., or an autocast that pass 2
 * typed (e->autocast_btf): in kernel context, or read from user context.
 */
const char *emit_btf_cast(struct emitter *E, struct expr *e)
{
	struct walk w = { 0 };
	const char *cname;
	uint32_t t = e->autocast_btf;

	if (t)
		cname = btf_type_c((int)t);
	else if (!btf_index_load() || !(t = btf_find_cast(e->str, e->module, &cname))) {
		diag_error(e->loc, "@cast: no type '%s' in the kernel's BTF", e->str);
		return "0";
	}
	if (E->ctx == ECTX_KERNEL && !E->kmod && btf_module_of(t)) {
		diag_error(e->loc, "'%s' is module %s's type, which a BPF program cannot name "
			   "(vmlinux's types only)", cname, btf_module_of(t));
		diag_hint("--runtime=kernel reads it; in user context (begin, end, timers) the "
			  "bpf runtime reads it by its offsets");
		return "0";
	}
	if (E->ctx != ECTX_KERNEL)	/* &...->m that reads nothing is ADDR plus offsets */
		return offset_chain(E, e, emit_snapshot(E, emit_expr(E, e->left), TYPE_LONG),
				    btf_strip(t));
	w.val = emit_snapshot(E, emit_expr(E, e->left), TYPE_LONG);
	w.ctype = arena_printf("%s *", cname);
	w.type = btf_strip(t);
	if (!e->comps.len && !e->pretty)	/* & @cast(p, "T") is p, as in stap */
		return w.val;
	return walk_chain(E, e, &w);
}

/*
 * Where E's chain starts in BTF: a @cast's type, or a tracepoint
 * argument's pointee (*LV false: the first member is read through the
 * pointer) or the argument itself; 0: no such type; -1: not E's kind.
 */
static int64_t chain_start(const struct emitter *E, const struct expr *e, bool *lv)
{
	const char *cname;
	uint32_t t;
	int i;

	*lv = false;
	if (e->kind == EXPR_CAST) {
		t = btf_find_cast(e->str, e->module, &cname);
		return t ? btf_strip(t) : 0;
	}
	if (e->kind != EXPR_TARGET || e->name[1] == '$' || !E->dp || !E->dp->tp ||
	    (i = emit_tp_arg_index(E->dp->tp, e->name + 1)) < 0 || !E->dp->tp->args.len)
		return -1;
	t = btf_strip(((const struct tp_arg *)VEC_AT(&E->dp->tp->args, i))->btf_id);
	if (btf_kind(t) == BTF_KIND_PTR)
		return btf_strip(type_at(t)->type);
	*lv = true;
	return t;
}

/*
 * @defined(E) where pass 2 could not tell (a @cast chain, a tracepoint
 * argument's members): 1 or 0 from the kernel's BTF, -1 when this cannot
 * tell either.
 */
int emit_btf_defined(struct emitter *E, struct expr *e)
{
	int64_t start;
	uint32_t cur;
	bool lv;

	if ((e->kind != EXPR_CAST && e->kind != EXPR_TARGET) || !btf_index_load() ||
	    (start = chain_start(E, e, &lv)) < 0)
		return -1;
	if (!start)
		return 0;
	cur = (uint32_t)start;
	for (int i = 0; i < e->comps.len; i++) {
		const struct target_comp *tc = VEC_AT(&e->comps, i);

		if (lv && btf_kind(cur) == BTF_KIND_PTR)
			cur = btf_strip(type_at(cur)->type);
		if (tc->kind == COMP_MEMBER) {
			uint64_t bits;
			uint32_t width, m = btf_is_record(cur) ? btf_member_at(cur, tc->member, &bits,
									     &width) : 0;

			if (!m || (width && i + 1 < e->comps.len))	/* a bit field ends it */
				return 0;
			cur = btf_strip(m);
		} else if (lv) {
			if (btf_kind(cur) != BTF_KIND_ARRAY)
				return 0;
			cur = btf_strip(((const struct btf_array *)(type_at(cur) + 1))->type);
		}
		lv = true;
	}
	return 1;
}
