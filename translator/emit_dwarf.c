/*
 * emit_dwarf.c - pass 3: target variables of process(...).function and
 * .statement probes, read through the program's DWARF (dwarf_read.c).
 *
 *	$param, $local			the variable's location at the probe's
 *					address, translated into C over the
 *					uprobe's registers and user memory
 *	$p->a->b, $arr[i]		members at their DWARF offsets, pointers
 *					read on the way, elements by type size;
 *					bit fields; members of a struct held in
 *					registers (DW_OP_piece), as bits of its value
 *	$p$, $p$$, $$parms...		text, in stap's format ({.a=1, .b=0x...});
 *					"ERROR" for a text whose reads fault
 *	$p->x = v, @var("g") = v	(-g) writes with bpf_probe_write_user; in a
 *					module (--runtime=kernel) also to a value
 *					that is a whole register, $return too:
 *					the uprobe's pt_regs, which the task
 *					resumes with
 *	$return				rax in .return probes, sized by the type
 *	@cast(p, "struct t", "PATH")	p as a pointer to PATH's type
 *	@var("name@file.c", "PATH")	a global, at its address plus the load bias
 *	@defined(...)			whether all of that resolves
 *
 * Every read of user memory is stp_read_user_int(), which raises a soft
 * error at the expression's location when the address faults.  A PIE or
 * library loads at a bias: the probe's actual address (regs->ip, which
 * uprobes set to the probed instruction) minus its address in the file;
 * in a .return probe, bpf_get_func_ip() (the address the uretprobe was
 * placed at, the function's entry) minus that address in the file.
 */
#include <dwarf.h>
#include <stdarg.h>
#include <string.h>
#include "debuginfo.h"
#include "dwarf_read.h"
#include "emit_dwarf.h"
#include "probe_kinds.h"

/* A resolved object: its address in the process, or its value. */
struct dval {
	bool in_mem;		/* c is its address; else c is its value */
	const char *c;
	const char *reg;	/* a value that is a whole register: it as an lvalue, or NULL */
	Dwarf_Die type;		/* past typedefs and qualifiers */
	bool has_type;		/* false: void */
	/*
	 * In memory: a bit field's first bit from the byte at c (bit_size > 0).
	 * A value: the object is the bits of c from bit_pos up (a member of a
	 * struct held in registers), bit_size of them for a bit field.
	 */
	int bit_pos, bit_size;
	uint8_t avail;		/* a value in pieces: its bytes known; 0: all */
};

/* One resolution: where and how to read. */
struct dctx {
	struct emitter *E;
	struct expr *e;		/* for the error site */
	const char *what;	/* "'$p'" for messages */
	struct derived_probe *dp;
	struct dwarf_file *f;
	uint64_t pc;
	Dwarf_Die *scopes;
	int nscopes;
	struct dwarf_loc_env env;
	bool quiet;		/* failures are not reported ($$vars, @defined) */
	bool dry;		/* nothing is written (@defined) */
	bool failed;
	const char *fault;	/* pretty printing: a read that faults sets this C flag */
};

static bool derr(struct dctx *d, struct srcloc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool derr(struct dctx *d, struct srcloc loc, const char *fmt, ...)
{
	va_list ap;

	d->failed = true;
	if (d->quiet)
		return false;
	va_start(ap, fmt);
	diag_error(loc, "%s", arena_vprintf(fmt, ap));
	va_end(ap);
	return false;
}

static bool is_user_probe(const struct derived_probe *dp)
{
	return dp && probe_class(dp) == PCLASS_UPROBE;
}

/* A probe whose $vars are read through the probed file's DWARF. */
static bool has_dwarf_targets(const struct derived_probe *dp)
{
	return is_user_probe(dp) && probe_targets(dp) == TARGETS_DWARF;
}

static const char *regs_of(struct emitter *E)
{
	E->cf->uses_ctx = true;
	if (E->ctx_ctype && strcmp(E->ctx_ctype, "struct pt_regs *") == 0)
		return "ctx";
	return "((struct pt_regs *)ctx)";
}

/* ---- reading ---- */

static const char *plus(const char *a, const char *k)
{
	return strcmp(k, "0") == 0 ? a : arena_printf("(%s + %s)", a, k);
}

/* A register's (or computed) value cut to SIZE bytes. */
static const char *cut(const char *v, int size, bool is_signed)
{
	/* indexed by SIZE - 1 */
	static const char *const s[] = { "int8_t", "int16_t", NULL, "int32_t" };
	static const char *const u[] = { "uint8_t", "uint16_t", NULL, "uint32_t" };

	if (size != 1 && size != 2 && size != 4)
		return v;
	return arena_printf("(int64_t)(%s)%s", (is_signed ? s : u)[size - 1], v);
}

/*
 * Only a probe in kernel context reads a process's memory; in user
 * context (begin, end, timers) what reads none, such as the address of a
 * member or a type's size, is still a constant.  Said once per resolution.
 */
static bool reads_allowed(struct dctx *d)
{
	if (d->E->ctx == ECTX_KERNEL)
		return true;
	if (!d->failed)
		derr(d, d->e->loc, "%s reads a process's memory, which only probes in kernel "
		     "context can", d->what);
	return false;
}

static const char *read_mem(struct dctx *d, const char *addr, int size, bool is_signed)
{
	struct emitter *E = d->E;
	const char *t;

	if (d->dry || !reads_allowed(d))
		return "0";
	t = emit_long_temp(E);
	if (d->fault) {
		/* inside $p$: a fault makes the text "ERROR", as stap's try/catch does */
		emit_line(E, "%s = 0;", t);
		emit_line(E, "if (bpf_probe_read_user(&%s, %d, (const void *)(%s)))", t, size, addr);
		emit_line(E, "	%s = 1;", d->fault);
		return cut(t, size, is_signed);
	}
	emit_line(E, "%s = stp_read_user_int(c, %s, %d, %d);", t, addr, size, is_signed);
	emit_check(E, emit_error_site(E, d->e->loc, "user memory read fault"));
	return t;
}

static const char *deref_cb(void *arg, const char *addr, int size)
{
	return read_mem(arg, addr, size, false);
}

static int tag_of(struct dval *v)
{
	return v->has_type ? dwarf_tag(&v->type) : 0;
}

/* A bit field in memory: the smallest read that covers it, then its bits. */
static const char *load_bits(struct dctx *d, struct dval *v, bool sgn)
{
	int shift = v->bit_pos % 8, n = emit_bytes_for(shift + v->bit_size);

	if (!n)
		return derr(d, d->e->loc, "cannot read %s: its bit field spans more than 8 bytes",
			    d->what), "0";
	return emit_bits_of(read_mem(d, plus(v->c, emit_number(v->bit_pos / 8)), n, false), shift,
		       v->bit_size, sgn);
}

/* The value of a number, enum or pointer. */
static const char *load(struct dctx *d, struct dval *v)
{
	int size = v->has_type ? dwarf_type_bytes(&v->type) : 8;
	bool sgn = v->has_type && dwarf_type_is_signed(&v->type);

	if (v->in_mem)
		return v->bit_size ? load_bits(d, v, sgn) : read_mem(d, v->c, size, sgn);
	if (v->bit_size)
		return emit_bits_of(v->c, v->bit_pos, v->bit_size, sgn);
	if (v->bit_pos)
		return emit_bits_of(v->c, v->bit_pos, size >= 8 ? 64 : size * 8, sgn);
	return cut(v->c, size, sgn);
}

static bool is_record(int tag)
{
	return tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_class_type;
}

/* ---- setup ---- */

static const char *func_name(struct dctx *d)
{
	Dwarf_Die *fn = dwarf_scopes_function(d->scopes, d->nscopes);
	const char *n = fn ? dwarf_diename(fn) : NULL;

	return n ? n : "?";
}

static void no_debuginfo_hint(void)
{
	if (debuginfo_servers_named())
		diag_hint("rebuild it with -g, or install its debuginfo (its .debug file): the "
			  "DEBUGINFOD_URLS servers did not give it");
	else
		diag_hint("rebuild it with -g, install its debuginfo (its .debug file), or name a "
			  "debuginfod server that has it in DEBUGINFOD_URLS");
}

static bool open_file(struct dctx *d, const char *path, struct srcloc loc)
{
	const char *why = "";

	if (!path)
		return derr(d, loc, "cannot read %s: '%s' has no debuginfo", d->what,
			    d->dp && d->dp->elf_path ? d->dp->elf_path : "the program") ||
		       (d->quiet ? false : (no_debuginfo_hint(), false));
	d->f = dwarf_file_get(path, &why);
	return d->f ? true : derr(d, loc, "cannot read %s: %s", d->what, why);
}

static void setup_env(struct dctx *d)
{
	Dwarf_Die *fn = dwarf_scopes_function(d->scopes, d->nscopes);
	Dwarf_Op *ops;
	size_t n;

	d->env.regs = regs_of(d->E);
	d->env.deref = deref_cb;
	d->env.arg = d;
	if (fn && dwarf_frame_base_ops(fn, d->pc, &ops, &n)) {
		d->env.fb = ops;
		d->env.nfb = n;
	}
	if (dwarf_cfa_ops(d->f, d->pc, &ops, &n)) {
		d->env.cfa = ops;
		d->env.ncfa = n;
	}
	if (!dwarf_file_is_dyn(d->f))
		d->env.bias = "0";
	else if (d->dp && is_user_probe(d->dp) && !d->dp->is_return)
		d->env.bias = arena_printf("(%s->ip - 0x%llxLL)", d->env.regs,
					   (unsigned long long)d->dp->addr);
	else if (d->dp && is_user_probe(d->dp))	/* ip is the caller's by now */
		d->env.bias = arena_printf("((int64_t)bpf_get_func_ip(%s) - 0x%llxLL)",
					   d->env.regs, (unsigned long long)d->dp->addr);
}

/* D for expression E in the probe being written; false when it cannot read DWARF. */
static bool probe_setup(struct dctx *d, struct emitter *E, struct expr *e, const char *what)
{
	struct derived_probe *dp = E->dp;

	d->E = E;
	d->e = e;
	d->what = what;
	d->dp = dp;
	d->pc = dp->is_return ? dp->entry_addr : dp->addr;
	if (!open_file(d, dp->dwarf_path, e->loc))
		return false;
	d->nscopes = dp->kind == PROBE_UFUNC
		? dwarf_function_scopes(d->f, d->pc, dp->function, dp->entry_addr, &d->scopes)
		: dwarf_scopes_at(d->f, d->pc, &d->scopes);
	if (!d->nscopes)
		return derr(d, e->loc, "cannot read %s: no debuginfo covers address 0x%llx of '%s'",
			    what, (unsigned long long)d->pc, dp->elf_path);
	setup_env(d);
	return true;
}

/* ---- variables ---- */

static bool var_value(struct dctx *d, Dwarf_Die *var, struct srcloc loc, struct dval *v)
{
	struct dwarf_loc l;
	Dwarf_Op *ops;
	size_t n;
	int64_t k;
	const char *why = "";
	int r = dwarf_var_ops(var, d->pc, &ops, &n, &k, &why);

	v->has_type = dwarf_type_of(var, &v->type) != NULL;
	if (r == 2) {
		v->in_mem = false;
		v->c = arena_printf("%lldLL", (long long)k);
		return true;
	}
	if (r <= 0)
		return derr(d, loc, "%s is not available at this point (0x%llx in %s): %s", d->what,
			    (unsigned long long)d->pc, func_name(d), why);
	if (ops[0].atom == DW_OP_entry_value || ops[0].atom == DW_OP_GNU_entry_value)
		return derr(d, loc, "%s is not available at this point (0x%llx in %s): only its value "
			    "on entry to the function is described (DW_OP_entry_value), and that is "
			    "gone by then", d->what, (unsigned long long)d->pc, func_name(d));
	if (!dwarf_loc_translate(ops, n, &d->env, &l))
		return derr(d, loc, "cannot read %s: %s", d->what, l.err);
	v->in_mem = !l.is_value;
	v->c = l.c;
	v->reg = l.reg;
	v->avail = l.avail == 0xff ? 0 : l.avail;
	return true;
}

static bool find_var(struct dctx *d, const char *name, struct srcloc loc, struct dval *v)
{
	Dwarf_Die var;

	if (!dwarf_find_var(d->scopes, d->nscopes, name, &var))
		return derr(d, loc, "%s is not a variable or parameter visible in %s at 0x%llx",
			    d->what, func_name(d), (unsigned long long)d->pc);
	return var_value(d, &var, loc, v);
}

static bool return_value(struct dctx *d, struct srcloc loc, struct dval *v)
{
	Dwarf_Die *fn = dwarf_scopes_function(d->scopes, d->nscopes);

	if (!d->dp->is_return)
		return derr(d, loc, "'$return' is only available in .return probes");
	if (!fn || !dwarf_type_of(fn, &v->type))
		return derr(d, loc, "'$return' is not available: %s returns nothing", func_name(d));
	v->has_type = true;
	v->in_mem = false;
	v->bit_pos = v->bit_size = 0;	/* the whole register */
	v->c = arena_printf("%s->ax", d->env.regs);
	v->reg = v->c;
	return true;
}

/* ---- chains ---- */

/* V is a pointer: V becomes the object it points at. */
static bool through_pointer(struct dctx *d, struct dval *v, struct srcloc loc)
{
	Dwarf_Die t = v->type;
	const char *p = load(d, v);

	if (!dwarf_type_of(&t, &v->type))
		return derr(d, loc, "cannot dereference %s: it is a void pointer", d->what);
	v->in_mem = true;
	v->c = p;
	return true;
}

/* Whether the bytes of a value in pieces from bit FROM, BITS of them, are all known. */
static bool bits_known(const struct dval *v, int from, int bits)
{
	for (int b = from / 8; b <= (from + bits - 1) / 8; b++)
		if (b >= 8 || (v->avail && !(v->avail & (1u << b))))
			return false;
	return true;
}

/* V becomes its member M at byte OFF: a place in memory, or bits of its value. */
static bool member_at(struct dctx *d, struct dval *v, Dwarf_Die *m, int64_t off,
		      const struct target_comp *tc)
{
	int64_t bit = 0;
	int width = 0;
	bool bf = dwarf_member_bits(m, &bit, &width);

	v->has_type = dwarf_type_of(m, &v->type) != NULL;
	v->reg = NULL;	/* a member is never a whole register to write */
	if (v->in_mem) {
		v->c = plus(v->c, emit_number(off));
		v->bit_pos = bf ? (int)bit : 0;
		v->bit_size = bf ? width : 0;
		return true;
	}
	bit += off * 8 + v->bit_pos;
	if (!bf)
		width = v->has_type ? dwarf_type_bytes(&v->type) * 8 : 64;
	if (!bits_known(v, (int)bit, width))
		return derr(d, tc ? tc->loc : d->e->loc, "cannot read '->%s': that part of %s is "
			    "optimized out (it is held in registers, in pieces)",
			    tc ? tc->member : dwarf_diename(m), d->what);
	v->bit_pos = (int)bit;
	v->bit_size = bf ? width : 0;
	return true;
}

static bool step_member(struct dctx *d, struct dval *v, const struct target_comp *tc)
{
	Dwarf_Die m;
	int64_t off;

	if (tag_of(v) == DW_TAG_pointer_type && !through_pointer(d, v, tc->loc))
		return false;
	if (!is_record(tag_of(v)))
		return derr(d, tc->loc, "cannot read '->%s': %s is not a struct or a pointer to one "
			    "(it is '%s')", tc->member, d->what,
			    v->has_type ? dwarf_type_text(&v->type) : "void");
	if (!dwarf_member(&v->type, tc->member, &m, &off))
		return derr(d, tc->loc, "cannot read '->%s': '%s' has no such member", tc->member,
			    dwarf_type_text(&v->type));
	return member_at(d, v, &m, off, tc);
}

/* [i]'s index, a C value. */
static const char *index_of(struct dctx *d, const struct target_comp *tc)
{
	if (tc->kind == COMP_INDEX)
		return emit_number(tc->index);
	return d->dry ? "0" : emit_snapshot(d->E, emit_expr(d->E, tc->index_expr), TYPE_LONG);
}

static bool step_index(struct dctx *d, struct dval *v, const struct target_comp *tc)
{
	Dwarf_Die elem;
	const char *i;
	int tag = tag_of(v);

	if (tag != DW_TAG_array_type && tag != DW_TAG_pointer_type)
		return derr(d, tc->loc, "cannot index %s: it is not an array or a pointer", d->what);
	if (!dwarf_type_of(&v->type, &elem))
		return derr(d, tc->loc, "cannot index %s: its elements are void", d->what);
	if (tag == DW_TAG_pointer_type && !through_pointer(d, v, tc->loc))
		return false;
	if (!v->in_mem)
		return derr(d, tc->loc, "cannot index %s: the array is held in registers", d->what);
	i = index_of(d, tc);
	v->c = plus(v->c, arena_printf("%s * %d", i, dwarf_type_bytes(&elem)));
	v->type = elem;
	v->has_type = true;
	return true;
}

/* COMPS from the FIRST on. */
static bool walk_from(struct dctx *d, struct dval *v, const struct vec *comps, int first)
{
	for (int i = first; i < comps->len; i++) {
		const struct target_comp *tc = VEC_AT(comps, i);
		bool ok = tc->kind == COMP_MEMBER ? step_member(d, v, tc) : step_index(d, v, tc);

		if (!ok)
			return false;
	}
	return true;
}

static bool walk(struct dctx *d, struct dval *v, const struct vec *comps)
{
	return walk_from(d, v, comps, 0);
}

static const char *pretty(struct dctx *d, struct dval *v, bool full);

/* What a chain's end reads as: a number, an address (arrays, &), or its text. */
static const char *finish(struct dctx *d, struct dval *v, struct expr *e)
{
	int tag = tag_of(v);

	if (e->pretty)
		return d->dry ? "\"\"" : pretty(d, v, e->pretty == 2);
	if (e->addr_of && v->bit_size)
		return derr(d, e->loc, "cannot take the address of a bit field (%s)", d->what), "0";
	if (e->addr_of)
		return v->in_mem ? v->c : (derr(d, e->loc, "cannot take the address of %s: it is "
					      "not in memory", d->what), "0");
	if (tag == DW_TAG_array_type && v->in_mem)
		return v->c;
	if (is_record(tag)) {
		derr(d, e->loc, "%s is a struct or union, not a number", d->what);
		if (!d->quiet)
			diag_hint("read one of its members (->member), or print it with a '$' suffix");
		return "0";
	}
	if (!v->has_type)
		return derr(d, e->loc, "%s is void", d->what), "0";
	if (tag == DW_TAG_base_type && dwarf_type_bytes(&v->type) > 8)
		return derr(d, e->loc, "%s is wider than 8 bytes", d->what), "0";
	return load(d, v);
}

/* ---- pretty printing: $var$ and $var$$ ---- */

struct pp {
	struct emit_pretty t;	/* the text */
	struct dctx *d;
};

/* The string at ADDR (a C value), or "<unknown>" when it cannot be read. */
static void pp_string(struct pp *p, const char *addr)
{
	struct emitter *E = p->d->E;
	const char *t = emit_str_temp(E);

	if (!reads_allowed(p->d))
		return;
	emit_line(E, "if (bpf_probe_read_user_str(%s, MAXSTRINGLEN, (const void *)%s) < 0)", t,
		  addr);
	emit_line(E, "\tstp_strcpy(%s, \"<unknown>\");", t);
	emit_pretty_put(&p->t, "\"%s\"", t, true);
}

static void pp_value(struct pp *p, struct dval *v, bool top);

static void pp_base(struct pp *p, struct dval *v)
{
	Dwarf_Attribute a;
	Dwarf_Word enc = 0;

	if (dwarf_tag(&v->type) == DW_TAG_base_type &&
	    dwarf_formudata(dwarf_attr_integrate(&v->type, DW_AT_encoding, &a), &enc) == 0 &&
	    (enc == DW_ATE_float || enc == DW_ATE_complex_float)) {
		emit_pretty_lit(&p->t, "?");
		return;
	}
	if (dwarf_type_is_char(&v->type))
		emit_pretty_char(&p->t, load(p->d, v));
	else
		emit_pretty_put(&p->t, dwarf_type_is_signed(&v->type) ? "%lld" : "%llu", load(p->d, v), false);
}

static void pp_pointer(struct pp *p, struct dval *v, bool top)
{
	struct dval to = { .in_mem = true };
	const char *ptr = load(p->d, v);

	to.has_type = dwarf_type_of(&v->type, &to.type) != NULL;
	if (to.has_type && dwarf_type_is_char(&to.type)) {
		pp_string(p, ptr);
	} else if (to.has_type && top) {
		to.c = ptr;
		pp_value(p, &to, top);
	} else {
		emit_pretty_put(&p->t, "0x%016llx", ptr, false);
	}
}

static void pp_array(struct pp *p, struct dval *v, bool top)
{
	struct dval el = { .in_mem = true, .c = v->c };

	if (!top && !p->t.full) {
		emit_pretty_lit(&p->t, "[...]");
		return;
	}
	el.has_type = dwarf_type_of(&v->type, &el.type) != NULL;
	if (el.has_type && dwarf_type_is_char(&el.type)) {
		pp_string(p, v->c);
		return;
	}
	emit_pretty_lit(&p->t, "[");
	if (el.has_type)
		pp_value(p, &el, false);
	emit_pretty_lit(&p->t, ", ...]");
}

/* A bit field: always a number, as stap prints them (a char one too). */
static void pp_bitfield(struct pp *p, struct dval *v)
{
	int tag = dwarf_tag(&v->type);
	Dwarf_Attribute a;
	Dwarf_Word enc = 0;

	dwarf_formudata(dwarf_attr_integrate(&v->type, DW_AT_encoding, &a), &enc);
	if ((tag != DW_TAG_base_type && tag != DW_TAG_enumeration_type) ||
	    enc == DW_ATE_float || enc == DW_ATE_complex_float)
		emit_pretty_lit(&p->t, "?");
	else
		emit_pretty_put(&p->t, dwarf_type_is_signed(&v->type) ? "%lld" : "%llu", load(p->d, v), false);
}

static void pp_members(struct pp *p, struct dval *v)
{
	Dwarf_Die m;
	int n = 0;
	bool quiet = p->d->quiet;

	if (dwarf_child(&v->type, &m) != 0)
		return;
	do {
		const char *name = dwarf_diename(&m);
		Dwarf_Attribute a;
		Dwarf_Word off = 0;
		struct dval mv;

		if (dwarf_tag(&m) != DW_TAG_member || dwarf_hasattr(&m, DW_AT_declaration))
			continue;
		emit_pretty_lit(&p->t, n++ ? ", " : "");
		if (p->t.values >= PRETTY_MAX_VALUES) {
			emit_pretty_lit(&p->t, "...");
			return;
		}
		emit_pretty_lit(&p->t, name ? arena_printf(".%s=", name) : "=");
		if (dwarf_attr_integrate(&m, DW_AT_data_member_location, &a))
			dwarf_formudata(&a, &off);
		mv = *v;
		p->d->quiet = true;
		if (!member_at(p->d, &mv, &m, (int64_t)off, NULL) || !mv.has_type)
			emit_pretty_lit(&p->t, "?");
		else if (mv.bit_size)
			pp_bitfield(p, &mv);
		else
			pp_value(p, &mv, false);
		p->d->quiet = quiet;
	} while (dwarf_siblingof(&m, &m) == 0);
}

static void pp_value(struct pp *p, struct dval *v, bool top)
{
	int tag = tag_of(v);

	if (!v->in_mem && tag != DW_TAG_base_type && tag != DW_TAG_enumeration_type &&
	    tag != DW_TAG_pointer_type && !is_record(tag)) {
		emit_pretty_lit(&p->t, "?");		/* an array in registers */
		return;
	}
	switch (tag) {
	case DW_TAG_base_type:
	case DW_TAG_enumeration_type:
		pp_base(p, v);
		break;
	case DW_TAG_pointer_type:
		pp_pointer(p, v, top);
		break;
	case DW_TAG_array_type:
		pp_array(p, v, top);
		break;
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_class_type:
		emit_pretty_lit(&p->t, "{");
		if (top || p->t.full)
			pp_members(p, v);
		else
			emit_pretty_lit(&p->t, "...");
		emit_pretty_lit(&p->t, "}");
		break;
	default:
		emit_pretty_lit(&p->t, "?");
	}
}

/*
 * stap runs a pretty-printing in a try block whose catch gives "ERROR":
 * from here on reads that fault set a flag instead of raising the error.
 */
static void fault_begin(struct dctx *d)
{
	if (d->dry || d->fault)
		return;
	d->fault = emit_long_temp(d->E);
	emit_line(d->E, "%s = 0;", d->fault);
}

static const char *fault_end(struct dctx *d, const char *text)
{
	if (d->fault) {
		emit_line(d->E, "if (%s)", d->fault);
		emit_line(d->E, "\tstp_strcpy(%s, \"ERROR\");", text);
	}
	d->fault = NULL;
	return text;
}

static const char *pretty(struct dctx *d, struct dval *v, bool full)
{
	struct pp p = { { d->E, { 0 }, "", full, 0 }, d };

	fault_begin(d);
	pp_value(&p, v, true);
	return fault_end(d, emit_pretty_text(&p.t));
}

/* ---- $$vars, $$parms, $$locals, $$return ---- */

static void context_var(struct pp *p, struct dctx *d, Dwarf_Die *var, const char *name,
			int pretty_level)
{
	struct dval v = { .in_mem = false };
	int tag;

	d->failed = false;
	d->what = arena_printf("'$%s'", name);
	emit_pretty_lit(&p->t, arena_printf("%s=", name));
	if (pretty_level)
		fault_begin(d);
	if (!var_value(d, var, d->e->loc, &v)) {
		d->fault = NULL;
		emit_pretty_lit(&p->t, "?");
		return;
	}
	tag = tag_of(&v);
	if (pretty_level) {
		/* each its own text, "ERROR" alone when its reads fault */
		struct pp sub = { { d->E, { 0 }, "", pretty_level == 2, 0 }, d };

		pp_value(&sub, &v, true);
		emit_pretty_put(&p->t, "%s", fault_end(d, emit_pretty_text(&sub.t)), true);
	} else if (is_record(tag)) {
		emit_pretty_lit(&p->t, "{...}");
	} else if (tag == DW_TAG_array_type) {
		emit_pretty_lit(&p->t, "[...]");
	} else {
		emit_pretty_put(&p->t, "0x%llx", load(d, &v), false);
	}
}

static const char *context_vars(struct dctx *d, struct expr *e)
{
	const char *which = e->name + 2;
	struct pp p = { { d->E, { 0 }, "", false, 0 }, d };
	struct derived_probe *dp = d->dp;
	bool stmt = dp->kind == PROBE_USTATEMENT;
	Dwarf_Die *scopes = NULL, fn;
	struct vec vars = { 0 };
	int ns = dwarf_function_scopes(d->f, d->pc, dp->function, dp->entry_addr, &scopes);

	if (dwarf_point_function(scopes, ns, dp->function, dp->entry_addr, true, &fn))
		dwarf_point_vars(&fn, stmt ? d->pc : 0, which, &vars);
	free(scopes);
	d->quiet = true;
	for (int i = 0; i < vars.len; i++) {
		Dwarf_Die *v = VEC_AT(&vars, i);

		emit_pretty_lit(&p.t, i ? " " : "");
		context_var(&p, d, v, dwarf_diename(v), e->pretty);
	}
	return emit_pretty_text(&p.t);
}

static const char *return_text(struct dctx *d, struct expr *e)
{
	struct pp p = { { d->E, { 0 }, "return=", e->pretty == 2, 0 }, d };
	struct dval v;

	if (!return_value(d, e->loc, &v))
		return "\"\"";
	if (e->pretty)
		pp_value(&p, &v, true);
	else
		emit_pretty_put(&p.t, "0x%llx", load(d, &v), false);
	return emit_pretty_text(&p.t);
}

/* ---- @defined: dead branches out before anything is written ---- */

static struct derived_probe *folded;
static unsigned folded_gen;

static bool fold_cond(struct emitter *E, struct expr **cp, bool *value)
{
	struct expr *c = *cp, *in = c;
	bool neg = false;
	int k;

	if (in->kind == EXPR_UNARY && strcmp(in->op, "!") == 0) {
		neg = true;
		in = in->left;
	}
	if (in->kind != EXPR_DEFINED || (k = emit_dwarf_defined(E, in->left)) < 0)
		return false;
	*value = neg ? !k : k;
	*cp = ast_expr(EXPR_NUMBER, c->loc);
	(*cp)->num = *value;
	(*cp)->type = TYPE_LONG;
	return true;
}

static struct stmt *null_stmt(struct srcloc loc)
{
	return ast_stmt(STMT_NULL, loc);
}

static void fold_stmt(struct emitter *E, struct stmt *s)
{
	bool v;

	if (!s)
		return;
	if (s->kind == STMT_BLOCK)
		for (int i = 0; i < s->body.len; i++)
			fold_stmt(E, VEC_AT(&s->body, i));
	if (s->kind == STMT_IF && fold_cond(E, &s->expr, &v)) {
		if (v)
			s->otherwise = NULL;
		else
			s->then = null_stmt(s->loc);
	}
	fold_stmt(E, s->then);
	fold_stmt(E, s->otherwise);
}

/*
 * Before the first DWARF read of a handler: if (@defined(X)) with X of
 * the DWARF folds to its branch, so that what the other branch reads
 * is never translated (stap's idiom: if (@defined($x)) ... $x ...).
 */
static void fold_once(struct emitter *E)
{
	if (!E->dp || (folded == E->dp && folded_gen == arena_generation()))
		return;
	folded = E->dp;
	folded_gen = arena_generation();
	fold_stmt(E, E->dp->body);
}

/* ---- entry points ---- */

const char *emit_dwarf_target(struct emitter *E, struct expr *e)
{
	struct dctx d = { 0 };
	struct dval v = { 0 };
	const char *dflt = e->type == TYPE_STRING ? "\"\"" : "0";

	fold_once(E);
	if (!probe_setup(&d, E, e, arena_printf("'%s'", e->name)))
		return dflt;
	if (e->pretty && e->name[1] != '$')
		fault_begin(&d);
	if (e->name[1] == '$')
		return strcmp(e->name, "$$return") == 0 ? return_text(&d, e) : context_vars(&d, e);
	if (strcmp(e->name, "$return") == 0) {
		if (!return_value(&d, e->loc, &v))
			return dflt;
	} else if (!find_var(&d, e->name + 1, e->loc, &v)) {
		return dflt;
	}
	if (!walk(&d, &v, &e->comps))
		return dflt;
	return finish(&d, &v, e);
}

/*
 * A @cast module that names the kernel, whose types come from BTF:
 * "kernel", or stap's "kernel<linux/sched.h>" and "kernel:<...>" (the
 * kernel first, the header only where the kernel lacks the type).
 */
static bool cast_module_is_kernel(const char *m)
{
	return strncmp(m, "kernel", 6) == 0 && (!m[6] || m[6] == '<' || m[6] == ':');
}

static const char *cast_path(struct emitter *E, struct expr *e)
{
	if (e->module && !cast_module_is_kernel(e->module))
		return e->module;
	return !e->module && is_user_probe(E->dp) ? E->dp->dwarf_path : NULL;
}

bool emit_dwarf_is_cast(struct emitter *E, struct expr *e)
{
	if (e->module)
		return !cast_module_is_kernel(e->module);
	return is_user_probe(E->dp);
}

/* D for @cast/@var of PATH: the probe's scopes when in one, else none. */
static bool module_setup(struct dctx *d, struct emitter *E, struct expr *e, const char *path,
			 const char *what)
{
	d->E = E;
	d->e = e;
	d->what = what;
	d->dp = is_user_probe(E->dp) ? E->dp : NULL;
	if (path && path[0] == '<') {	/* "<stdio.h>": the headers' types */
		const char *why;

		if (!(d->f = dwarf_header_file(path, &why)))
			return derr(d, e->loc, "%s: the types of \"%s\": %s", what, path, why);
	} else if (!open_file(d, path, e->loc)) {
		return false;
	}
	d->pc = d->dp ? d->dp->addr : 0;
	if (d->dp && d->dp->dwarf_path && strcmp(d->dp->dwarf_path, path) == 0)
		d->nscopes = dwarf_scopes_at(d->f, d->pc, &d->scopes);
	if (E->dp && !E->fn)
		setup_env(d);
	else
		d->env = (struct dwarf_loc_env){ "((struct pt_regs *)0)", NULL, 0, NULL, 0,
						 dwarf_file_is_dyn(d->f) ? NULL : "0", deref_cb, d };
	return true;
}

/* @cast(p, "type"[, "PATH"]) with its members into *V. */
static bool cast_resolve(struct dctx *d, struct emitter *E, struct expr *e, struct dval *v)
{
	if (!module_setup(d, E, e, cast_path(E, e), arena_printf("@cast to '%s'", e->str)))
		return false;
	if (!dwarf_find_type(d->f, e->str, &v->type))
		return derr(d, e->loc, cast_path(E, e)[0] == '<'
			    ? "@cast: no type '%s' in the headers \"%s\""
			    : "@cast: no type '%s' in the debuginfo of '%s'", e->str, cast_path(E, e));
	v->in_mem = true;
	v->has_type = dwarf_type_strip(&v->type);
	v->c = d->dry ? "0" : emit_snapshot(E, emit_expr(E, e->left), TYPE_LONG);
	if (!e->comps.len && !e->pretty && !e->addr_of)
		return true;
	if (e->pretty)
		fault_begin(d);
	if (e->comps.len && ((const struct target_comp *)VEC_AT(&e->comps, 0))->kind != COMP_MEMBER) {
		/* @cast(p, "T")[i]: the i-th T from p, as stap indexes a cast */
		const char *i = index_of(d, VEC_AT(&e->comps, 0));

		v->c = plus(v->c, arena_printf("%s * %d", i, dwarf_type_bytes(&v->type)));
		return walk_from(d, v, &e->comps, 1);
	}
	return walk(d, v, &e->comps);
}

const char *emit_dwarf_cast(struct emitter *E, struct expr *e)
{
	struct dctx d = { 0 };
	struct dval v = { 0 };

	fold_once(E);
	if (!cast_resolve(&d, E, e, &v))
		return e->pretty ? "\"\"" : "0";
	if (!e->comps.len && !e->pretty && !e->addr_of)
		return v.c;
	return finish(&d, &v, e);
}

/* @var("name[@file.c]"[, "PATH"]) with its members into *V. */
static bool atvar_resolve(struct dctx *d, struct emitter *E, struct expr *e, struct dval *v)
{
	const char *at = strchr(e->name, '@');
	const char *name = at ? arena_strndup(e->name, (size_t)(at - e->name)) : e->name;
	const char *path = e->module ? e->module : is_user_probe(E->dp) ? E->dp->dwarf_path : NULL;
	Dwarf_Die var;

	if (!is_user_probe(E->dp) || E->fn) {
		emit_unsupported(E, e->loc, "@var outside a process probe's handler",
				 "read it in a process(\"/path/to/program\").function(\"...\") probe");
		return false;
	}
	if (!module_setup(d, E, e, path, arena_printf("'@var(\"%s\")'", e->name)))
		return false;
	if (!dwarf_find_var(d->scopes, d->nscopes, name, &var) &&
	    !dwarf_find_global(d->f, name, at ? at + 1 : NULL, &var))
		return derr(d, e->loc, "@var: no variable '%s' in the debuginfo of '%s'", e->name,
			    path);
	if (e->pretty)
		fault_begin(d);
	return var_value(d, &var, e->loc, v) && walk(d, v, &e->comps);
}

const char *emit_dwarf_atvar(struct emitter *E, struct expr *e)
{
	struct dctx d = { 0 };
	struct dval v = { 0 };

	fold_once(E);
	if (!atvar_resolve(&d, E, e, &v))
		return e->pretty ? "\"\"" : "0";
	return finish(&d, &v, e);
}

/* ---- writes (guru mode; pass 2 checked the rest) ---- */

/* Whether V, resolved for D, can be written by a uprobe: else the error. */
static bool writable(struct dctx *d, struct dval *v, struct srcloc loc)
{
	Dwarf_Attribute a;
	Dwarf_Word enc = 0;
	int tag = tag_of(v);

	if (!v->has_type)
		return derr(d, loc, "cannot write to %s: it is void", d->what);
	if (is_record(tag) || tag == DW_TAG_array_type)
		return derr(d, loc, "cannot write to %s: it is %s, not a number; write one of its "
			    "%s", d->what, tag == DW_TAG_array_type ? "an array" : "a struct or union",
			    tag == DW_TAG_array_type ? "elements" : "members");
	dwarf_formudata(dwarf_attr_integrate(&v->type, DW_AT_encoding, &a), &enc);
	if (enc == DW_ATE_float || enc == DW_ATE_complex_float || dwarf_type_bytes(&v->type) > 8)
		return derr(d, loc, "cannot write to %s: it is a floating-point or wide number",
			    d->what);
	if (!v->in_mem && d->E->kmod && !v->reg)
		return derr(d, loc, "cannot write to %s: at this point it is computed, not held in "
			    "memory or in one register", d->what);
	if (!v->in_mem && !d->E->kmod)
		return derr(d, loc, "cannot write to %s: at this point it lives in a register (or is "
			    "computed), and a uprobe cannot change the probed program's registers",
			    d->what) ||
		       (d->quiet ? false : (diag_hint("write it where it is in memory (a -O0 build, "
						      "or a pointer's target), or use the kernel "
						      "runtime's uprobes (--runtime=kernel)"), false));
	return true;
}

/* VAL (a C value) into V in memory: a whole number, or a bit field's bits. */
static void store(struct dctx *d, struct dval *v, const char *val, struct srcloc loc)
{
	struct emitter *E = d->E;
	int site, shift = v->bit_pos % 8, n = emit_bytes_for(shift + v->bit_size);
	const char *addr = v->c, *old;
	unsigned long long m = emit_low_bits(v->bit_size) << shift;

	if (!reads_allowed(d))
		return;
	if (!v->in_mem) {	/* a module's uprobe: the register in the task's pt_regs */
		emit_line(E, "%s = (unsigned long)%s;", v->reg, val);
		return;
	}
	site = emit_error_site(E, loc, "user memory write fault");
	if (!v->bit_size) {
		emit_line(E, "stp_write_user_int(c, %s, %d, %s);", addr, dwarf_type_bytes(&v->type),
			  val);
		emit_check(E, site);
		return;
	}
	if (!n) {
		derr(d, loc, "cannot write to %s: its bit field spans more than 8 bytes", d->what);
		return;
	}
	addr = plus(addr, emit_number(v->bit_pos / 8));
	old = read_mem(d, addr, n, false);
	emit_line(E, "stp_write_user_int(c, %s, %d, (int64_t)(((uint64_t)%s & ~0x%llxULL) | "
		  "(((uint64_t)%s << %d) & 0x%llxULL)));", addr, n, old, m, val, shift, m);
	emit_check(E, site);
}

/* "'$p->a[2]'": a chain as the script wrote it, for messages. */
static const char *chain_text(const char *head, const struct vec *comps)
{
	const char *s = head;

	for (int i = 0; i < comps->len; i++) {
		const struct target_comp *tc = VEC_AT(comps, i);

		if (tc->kind == COMP_MEMBER)
			s = arena_printf("%s->%s", s, tc->member);
		else if (tc->kind == COMP_INDEX)
			s = arena_printf("%s[%lld]", s, (long long)tc->index);
		else
			s = arena_printf("%s[...]", s);
	}
	return arena_printf("'%s'", s);
}

/* $var = v, $p->x = v, @var("g") = v, @cast(p, "t")->x = v in guru mode. */
const char *emit_dwarf_assign(struct emitter *E, struct expr *e, bool used)
{
	struct expr *l = e->left;
	struct dctx d = { 0 };
	struct dval v = { 0 };
	bool ok = false;
	const char *val;

	(void)used;
	fold_once(E);
	if (l->kind == EXPR_TARGET && has_dwarf_targets(E->dp) &&
	    E->ctx == ECTX_KERNEL && !E->fn) {
		ok = probe_setup(&d, E, l, arena_printf("'%s'", l->name)) &&
		     (strcmp(l->name, "$return") == 0 ? return_value(&d, l->loc, &v)
						      : find_var(&d, l->name + 1, l->loc, &v)) &&
		     walk(&d, &v, &l->comps);
	} else if (l->kind == EXPR_ATVAR) {
		ok = atvar_resolve(&d, E, l, &v);
	} else if (l->kind == EXPR_CAST && emit_dwarf_is_cast(E, l)) {
		ok = cast_resolve(&d, E, l, &v);
	} else {
		emit_unsupported(E, l->loc, "assigning to a target variable", NULL);
		return "0";
	}
	d.what = chain_text(l->kind == EXPR_TARGET ? l->name : l->kind == EXPR_ATVAR ?
			    arena_printf("@var(\"%s\")", l->name) : "@cast(...)", &l->comps);
	if (!ok || !writable(&d, &v, l->loc))
		return "0";
	val = emit_snapshot(E, emit_expr(E, e->right), TYPE_LONG);
	E->side_effects++;
	store(&d, &v, val, l->loc);
	return val;
}

/* Resolve E with nothing written and nothing reported: whether it resolved. */
int emit_dwarf_defined(struct emitter *E, struct expr *e)
{
	struct dctx d = { 0 };
	struct dval v = { 0 };

	fold_once(E);
	d.quiet = d.dry = true;
	switch (e->kind) {
	case EXPR_TARGET:
		if (!has_dwarf_targets(E->dp))
			return -1;
		if (!probe_setup(&d, E, e, e->name))
			return 0;
		if (e->name[1] == '$')
			return strcmp(e->name, "$$return") != 0 || E->dp->is_return;
		if (strcmp(e->name, "$return") == 0 ? !return_value(&d, e->loc, &v)
						     : !find_var(&d, e->name + 1, e->loc, &v))
			return 0;
		if (!walk(&d, &v, &e->comps))
			return 0;
		finish(&d, &v, e);
		return !d.failed;
	case EXPR_CAST:
		if (!emit_dwarf_is_cast(E, e))
			return -1;
		break;
	case EXPR_ATVAR:
		break;
	default:
		return -1;
	}
	if (!module_setup(&d, E, e, e->kind == EXPR_CAST ? cast_path(E, e)
				   : e->module ? e->module : E->dp ? E->dp->dwarf_path : NULL, ""))
		return 0;
	if (e->kind == EXPR_CAST) {
		if (!dwarf_find_type(d.f, e->str, &v.type))
			return 0;
		v.has_type = dwarf_type_strip(&v.type);
		v.in_mem = true;
		v.c = "0";
	} else {
		const char *at = strchr(e->name, '@');
		const char *name = at ? arena_strndup(e->name, (size_t)(at - e->name)) : e->name;
		Dwarf_Die var;

		if (!dwarf_find_global(d.f, name, at ? at + 1 : NULL, &var) ||
		    !var_value(&d, &var, e->loc, &v))
			return 0;
	}
	if (!walk(&d, &v, &e->comps))
		return 0;
	finish(&d, &v, e);
	return !d.failed;
}
