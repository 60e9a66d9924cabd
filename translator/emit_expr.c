/*
 * emit_expr.c - expressions, the same text for both contexts.
 *
 * emit_expr() returns a C expression that has no side effects and cannot
 * fail: a long (int64_t) or a string (a pointer to a NUL-terminated
 * buffer, or a C string literal).  Whatever must happen first (calls,
 * stores, error checks, string building) it writes as statements before
 * it, into the current C function, in the script's left-to-right order.
 * When a later operand's statements have side effects, earlier operands
 * that read variables are copied into temporaries first.
 */
#include <ctype.h>
#include <string.h>
#include "emit_int.h"
#include "emit_dwarf.h"
#include "regex_dfa.h"

/* ---- temporaries -------------------------------------------------------------- */

const char *emit_long_temp(struct emitter *E)
{
	return arena_printf("t%d", ++E->cf->ntemps);
}

const char *emit_str_temp(struct emitter *E)
{
	struct frame *fr = E->frame;

	if (++fr->nstr > fr->maxstr)
		fr->maxstr = fr->nstr;
	return arena_printf("f->s[%d]", fr->nstr - 1);
}

void emit_temps_mark(struct emitter *E, int *mark, int **keys)
{
	int n = E->globals.len;

	*mark = E->frame->nstr;
	*keys = arena_alloc(sizeof(int) * (size_t)(n + 1));
	memcpy(*keys, E->frame->nkey, sizeof(int) * (size_t)n);
}

void emit_temps_release(struct emitter *E, int mark, int *keys)
{
	E->frame->nstr = mark;
	memcpy(E->frame->nkey, keys, sizeof(int) * (size_t)E->globals.len);
}

/* Numbers, string literals and temporaries: nothing later can change them. */
bool emit_is_stable(const char *t)
{
	if (isdigit((unsigned char)t[0]) || t[0] == '"')
		return true;
	if (t[0] == '(' && t[1] == '-' && isdigit((unsigned char)t[2]))
		return true;
	if (t[0] == 't' && isdigit((unsigned char)t[1]))
		return strspn(t + 1, "0123456789") == strlen(t + 1);
	return strncmp(t, "f->s[", 5) == 0;
}

const char *emit_snapshot(struct emitter *E, const char *text, enum type t)
{
	const char *tmp;

	if (emit_is_stable(text))
		return text;
	if (t == TYPE_STRING) {
		tmp = emit_str_temp(E);
		emit_line(E, "stp_strcpy(%s, %s);", tmp, text);
	} else {
		tmp = emit_long_temp(E);
		emit_line(E, "%s = %s;", tmp, text);
	}
	return tmp;
}

const char *emit_number(int64_t v)
{
	if (v == INT64_MIN)
		return "(-9223372036854775807LL - 1)";
	if (v < 0)
		return arena_printf("(%lldLL)", (long long)v);
	return arena_printf("%lldLL", (long long)v);
}

unsigned long long emit_low_bits(int n)
{
	return n >= 64 ? ~0ULL : (1ULL << n) - 1;
}

/* WIDTH bits of RAW from bit SHIFT up, sign-extended when SGN: a bit field's value. */
const char *emit_bits_of(const char *raw, int shift, int width, bool sgn)
{
	if (sgn && width < 64)
		return arena_printf("((int64_t)((uint64_t)%s << %d) >> %d)", raw, 64 - shift - width,
				    64 - width);
	if (!shift && width >= 64)
		return raw;
	return arena_printf("(int64_t)(((uint64_t)%s >> %d) & 0x%llxULL)", raw, shift,
			    emit_low_bits(width));
}

/* The bytes (1, 2, 4 or 8) a read of BITS bits needs; 0 for more than 64. */
int emit_bytes_for(int bits)
{
	return bits <= 8 ? 1 : bits <= 16 ? 2 : bits <= 32 ? 4 : bits <= 64 ? 8 : 0;
}

/* ---- errors -------------------------------------------------------------------- */

/* Jump to where errors go: the innermost catch, or out of the C function. */
void emit_fail(struct emitter *E)
{
	struct cfunc *cf = E->cf;

	if (cf->err_label)
		emit_line(E, "\tgoto %s;", cf->err_label);
	else if (cf->is_callback)
		emit_line(E, "\treturn 1;");
	else
		emit_line(E, "\tgoto out;");
}

/* After a call: unwind when it failed; SITE >= 0 names the call as the error's place. */
void emit_check(struct emitter *E, int site)
{
	emit_line(E, "if (c->error) {");
	if (site >= 0)
		emit_line(E, "\tstp_error_at(c, %d);", site);
	emit_fail(E);
	emit_line(E, "}");
}

/* ---- ordering --------------------------------------------------------------------- */

void emit_capture_begin(struct emitter *E, struct capture *cap)
{
	cap->saved = E->cf->f;
	cap->buf = NULL;
	cap->f = open_memstream(&cap->buf, &cap->len);
	E->cf->f = cap->f;
}

/* Stop capturing; the captured text stays in CAP until capture_put. */
void emit_capture_end(struct emitter *E, struct capture *cap)
{
	fclose(cap->f);
	E->cf->f = cap->saved;
}

void emit_capture_put(struct emitter *E, struct capture *cap)
{
	fwrite(cap->buf, 1, cap->len, E->cf->f);
	free(cap->buf);
}

/*
 * ES in order into OUT: when one has side effects, the texts of the
 * earlier ones that could change are copied into temporaries first.
 */
void emit_exprs_ordered(struct emitter *E, struct expr **es, int n, const char **out)
{
	for (int i = 0; i < n; i++) {
		struct capture cap;
		int se = E->side_effects;

		out[i] = NULL;
		if (!es[i])
			continue;
		emit_capture_begin(E, &cap);
		out[i] = emit_expr(E, es[i]);
		emit_capture_end(E, &cap);
		for (int j = 0; j < i && E->side_effects != se; j++)
			if (out[j])
				out[j] = emit_snapshot(E, out[j], es[j]->type);
		emit_capture_put(E, &cap);
	}
}

static void two(struct emitter *E, struct expr *a, struct expr *b, const char **ta,
		const char **tb)
{
	struct expr *es[2] = { a, b };
	const char *out[2];

	emit_exprs_ordered(E, es, 2, out);
	*ta = out[0];
	*tb = out[1];
}

/* ---- arithmetic ------------------------------------------------------------------- */

static bool nonzero_number(const char *t)
{
	return emit_is_stable(t) && t[0] != '"' && t[0] != 't' && strncmp(t, "0LL", 3) != 0 &&
	       strncmp(t, "f->", 3) != 0;
}

/* L OP R for longs: / and % check for zero, shifts go through uint64_t. */
const char *emit_arith(struct emitter *E, const char *op, const char *l, const char *r,
		       struct srcloc loc)
{
	if (strcmp(op, "/") == 0 || strcmp(op, "%") == 0) {
		if (!nonzero_number(r)) {
			int site = emit_error_site(E, loc, "division by 0");	/* stap's words */

			r = emit_snapshot(E, r, TYPE_LONG);
			emit_line(E, "if (%s == 0) {", r);
			emit_line(E, "\tstp_raise(c, %d, \"division by 0\");", site);
			emit_fail(E);
			emit_line(E, "}");
		}
		return arena_printf("stp_%s(%s, %s)", op[0] == '/' ? "div" : "mod", l, r);
	}
	if (strcmp(op, "<<") == 0)
		return arena_printf("stp_shl(%s, %s)", l, r);
	if (strcmp(op, ">>") == 0)
		return arena_printf("stp_shr(%s, %s)", l, r);
	if (strcmp(op, ">>>") == 0)
		return arena_printf("stp_ushr(%s, %s)", l, r);
	return arena_printf("(%s %s %s)", l, op, r);
}

static const char *binary(struct emitter *E, struct expr *e)
{
	const char *l, *r, *t;

	two(E, e->left, e->right, &l, &r);
	if (strcmp(e->op, ".") != 0)
		return emit_arith(E, e->op, l, r, e->loc);
	t = emit_str_temp(E);
	emit_line(E, "stp_concat(%s, %s, %s);", t, l, r);
	return t;
}

static const char *unary(struct emitter *E, struct expr *e)
{
	const char *v = emit_expr(E, e->left);

	switch (e->op[0]) {
	case '-': return arena_printf("(-%s)", v);
	case '!': return arena_printf("(!%s)", v);
	case '~': return arena_printf("(~%s)", v);
	default: return v;
	}
}

/* ---- conditions -------------------------------------------------------------------- */

/* T without the parentheses around all of it, for if (...). */
static const char *unparen(const char *t)
{
	size_t n = strlen(t);
	int depth = 0;

	if (n < 2 || t[0] != '(' || t[n - 1] != ')')
		return t;
	for (size_t i = 0; i < n - 1; i++) {
		if (t[i] == '"' || t[i] == '\'') {	/* a literal's parentheses are not */
			char q = t[i];

			while (++i < n - 1 && t[i] != q)
				i += t[i] == '\\';
			continue;
		}
		depth += t[i] == '(' ? 1 : t[i] == ')' ? -1 : 0;
		if (depth == 0)
			return t;	/* (a) + (b) */
	}
	return arena_strndup(t + 1, n - 2);
}

/* E as a truth value, safe inside any C expression. */
const char *emit_cond(struct emitter *E, struct expr *e)
{
	return emit_expr(E, e);
}

/* E as the whole condition of an if (...): no outer parentheses. */
const char *emit_cond_bare(struct emitter *E, struct expr *e)
{
	return unparen(emit_expr(E, e));
}

/* A && B, A || B: B's statements run only when they must. */
static const char *logical(struct emitter *E, struct expr *e)
{
	bool and = strcmp(e->op, "&&") == 0;
	const char *l = emit_cond(E, e->left), *r, *t;
	struct capture cap;

	emit_capture_begin(E, &cap);
	E->cf->indent++;
	r = emit_cond(E, e->right);
	E->cf->indent--;
	emit_capture_end(E, &cap);
	if (!cap.len) {
		free(cap.buf);
		return arena_printf("(%s %s %s)", l, e->op, r);
	}
	t = emit_long_temp(E);
	emit_line(E, "%s = %s != 0;", t, l);
	emit_line(E, and ? "if (%s) {" : "if (!%s) {", t);
	emit_capture_put(E, &cap);
	emit_line(E, "\t%s = %s != 0;", t, r);
	emit_line(E, "}");
	return t;
}

static int fold_strcmp(struct expr *a, struct expr *b)
{
	char *x = arena_alloc(strlen(a->str) + 1), *y = arena_alloc(strlen(b->str) + 1);

	emit_unescape(x, a->str);
	emit_unescape(y, b->str);
	return strcmp(x, y);
}

static const char *compare(struct emitter *E, struct expr *e)
{
	const char *l, *r;
	bool llit = e->left->kind == EXPR_STRING, rlit = e->right->kind == EXPR_STRING;
	int v;

	if (e->left->type != TYPE_STRING) {
		two(E, e->left, e->right, &l, &r);
		return arena_printf("(%s %s %s)", l, e->op, r);
	}
	if (llit && rlit) {
		v = fold_strcmp(e->left, e->right);
		return arena_printf("(%d %s 0)", v < 0 ? -1 : v > 0, e->op);
	}
	two(E, e->left, e->right, &l, &r);
	if (rlit)
		return arena_printf("(stp_strcmp_lit(%s, %s) %s 0)", l, r, e->op);
	if (llit)
		return arena_printf("(0 %s stp_strcmp_lit(%s, %s))", e->op, r, l);
	return arena_printf("(stp_strcmp(%s, %s) %s 0)", l, r, e->op);
}

/*
 * In a module, a match also finds its subexpressions for matched(): the
 * pattern's NFA runs after the DFA said yes (runtime/kmod/stp_kmod_regex.h).
 */
static const char *regex_kmod(struct emitter *E, struct expr *e, const char *name,
			      const char *pat, const char *s)
{
	const char *err;
	int n = regex_emit_captures(E->protos, name, pat, 1024, &err);

	if (n < 0) {
		E->errors_reported++;
		diag_error(e->right->loc, "regular expression \"%s\" cannot run in kernel context: %s",
			   e->right->str, err);
		return "0";
	}
	if (n > E->kmod_re_states)
		E->kmod_re_states = n;
	return arena_printf("(%s({ const char *stp_s_ = %s; stp_kmod_re_run(c, stp_s_, "
			    "%s_match(stp_s_), &%s_re); }))", e->op[0] == '!' ? "!" : "", s, name,
			    name);
}

/*
 * Kernel context: the pattern becomes a DFA (translator/regex_dfa.c) whose
 * tables and matcher (runtime/bpf/stp_regex.bpf.h) go before the code.
 */
static const char *regex_kernel(struct emitter *E, struct expr *e)
{
	char *pat = arena_alloc(strlen(e->right->str) + 1);
	const char *s, *err, *name, *what;
	struct regex_dfa d;

	emit_unescape(pat, e->right->str);
	if (regex_compile(pat, REGEX_MAX_STATES, &d, &err)) {
		E->errors_reported++;
		diag_error(e->right->loc, "regular expression \"%s\" cannot run in kernel context: %s",
			   e->right->str, err);
		diag_hint("match it in an end or timer probe (user context), or simplify it");
		return "0";
	}
	name = arena_printf("stp_re%d", ++E->seq);
	what = arena_printf("%s %s at %s", e->op, emit_c_literal(e->right->str),
			    emit_loc_text(e->right->loc));
	regex_emit(E->protos, name, &d, what);
	regex_free(&d);
	s = emit_expr(E, e->left);
	if (E->kmod)
		return regex_kmod(E, e, name, pat, s);
	return arena_printf("(%s%s_match(%s))", e->op[0] == '!' ? "!" : "", name, s);
}

static const char *regex(struct emitter *E, struct expr *e)
{
	const char *s;
	int site;

	if (E->ctx == ECTX_KERNEL)
		return regex_kernel(E, e);
	s = emit_expr(E, e->left);
	site = emit_error_site(E, e->right->loc, "invalid regular expression");
	return arena_printf("(%sstp_regex_match(c, %s, %s, %d))", e->op[0] == '!' ? "!" : "", s,
			    emit_c_literal(e->right->str), site);
}

static bool is_str_ternary(const struct expr *e)
{
	return e->kind == EXPR_TERNARY && e->type == TYPE_STRING;
}

/*
 * C ? A : B; a string result is copied into a temporary on either branch,
 * the one of the ternary around it for a ternary arm: a chain a ? "x" :
 * b ? "y" : "z" writes its one temporary, never copies from one to the
 * next (the copies left the BPF verifier states that differed by the
 * buffer copied from, which it could not prune).
 */
static const char *ternary(struct emitter *E, struct expr *e)
{
	const char *into = E->str_into;
	int known = e->cond->kind == EXPR_DEFINED ? emit_dwarf_defined(E, e->cond->left) : -1;

	E->str_into = NULL;
	if (known < 0 && e->cond->kind == EXPR_DEFINED)
		known = emit_btf_defined(E, e->cond->left);
	if (known >= 0)		/* @defined(@cast(...)->member) ? ... : ... */
		return emit_expr(E, known ? e->left : e->right);
	const char *c, *a, *b, *t = NULL;
	struct capture ca, cb;
	bool str = e->type == TYPE_STRING;

	c = emit_cond(E, e->cond);
	if (str)
		t = into ? into : emit_str_temp(E);
	E->cf->indent++;
	emit_capture_begin(E, &ca);
	E->str_into = str && is_str_ternary(e->left) ? t : NULL;
	a = emit_expr(E, e->left);
	emit_capture_end(E, &ca);
	emit_capture_begin(E, &cb);
	E->str_into = str && is_str_ternary(e->right) ? t : NULL;
	b = emit_expr(E, e->right);
	E->str_into = NULL;
	emit_capture_end(E, &cb);
	E->cf->indent--;
	if (!str && !ca.len && !cb.len) {
		free(ca.buf);
		free(cb.buf);
		return arena_printf("(%s ? %s : %s)", c, a, b);
	}
	if (!str)
		t = emit_long_temp(E);
	emit_line(E, "if (%s) {", unparen(c));
	emit_capture_put(E, &ca);
	if (!str || strcmp(a, t))
		emit_line(E, str ? "\tstp_strcpy(%s, %s);" : "\t%s = %s;", t, a);
	emit_line(E, "} else {");
	emit_capture_put(E, &cb);
	if (!str || strcmp(b, t))
		emit_line(E, str ? "\tstp_strcpy(%s, %s);" : "\t%s = %s;", t, b);
	emit_line(E, "}");
	return t;
}

/*
 * @perf("NAME"): pass 2 resolved it in a uprobe handler of its counter's
 * process (probes_counter.c); anywhere else stap refuses it here.
 */
static const char *perf_read(struct emitter *E, const struct expr *e)
{
	if (e->num > 0 && E->ctx == ECTX_KERNEL && !E->kmod && !E->dyninst)
		return arena_printf("stp_perf_read(%lld)", (long long)(e->num - 1));
	E->errors_reported++;
	diag_error(e->loc, "cannot translate general @perf expression");
	return "0";
}

/* ---- dispatch ------------------------------------------------------------------------ */

static const char *expr(struct emitter *E, struct expr *e, bool used)
{
	switch (e->kind) {
	case EXPR_NUMBER:	/* an @entry key is one of the literals emit_merge.c tabulates */
		return e->entry_key && E->ctx == ECTX_KERNEL && !E->kmod && !E->dyninst ?
		       arena_printf("STP_EKEY(%lld)", (long long)e->num) : emit_number(e->num);
	case EXPR_STRING: return emit_c_literal(e->str);
	case EXPR_SYMBOL: return emit_var_ref(E, e->decl);
	case EXPR_INDEX: return emit_index_read(E, e);
	case EXPR_CALL:
		return e->builtin ? emit_print_call(E, e, used) : emit_call(E, e, used);
	case EXPR_UNARY: return unary(E, e);
	case EXPR_PREFIX:
	case EXPR_POSTFIX: return emit_incdec(E, e, used);
	case EXPR_BINARY: return binary(E, e);
	case EXPR_LOGICAL: return logical(E, e);
	case EXPR_COMPARE: return compare(E, e);
	case EXPR_REGEX: return regex(E, e);
	case EXPR_TERNARY: return ternary(E, e);
	case EXPR_ASSIGN: return emit_assign(E, e, used);
	case EXPR_IN: return emit_in(E, e);
	case EXPR_STAT: return emit_stat(E, e);
	case EXPR_TARGET: return emit_target(E, e);
	case EXPR_HIST:
		emit_unsupported(E, e->loc, "a histogram outside print", NULL);
		return "0";
	case EXPR_CAST:
		return emit_dwarf_is_cast(E, e) ? emit_dwarf_cast(E, e) : emit_btf_cast(E, e);
	case EXPR_ATVAR: return emit_dwarf_atvar(E, e);
	case EXPR_DEFINED:
		if (emit_dwarf_defined(E, e->left) >= 0)
			return emit_dwarf_defined(E, e->left) ? "1LL" : "0LL";
		if (emit_btf_defined(E, e->left) >= 0)
			return emit_btf_defined(E, e->left) ? "1LL" : "0LL";
		emit_unsupported(E, e->loc, "@defined on debuginfo", NULL);
		break;
	case EXPR_ENTRY: emit_unsupported(E, e->loc, "@entry", NULL); break;
	case EXPR_PERF: return perf_read(E, e);
	case EXPR_DEREF:
	case EXPR_REGISTER: emit_unsupported(E, e->loc, e->name, NULL); break;
	case EXPR_AUTOCAST:
		if (e->autocast_btf)
			return emit_btf_cast(E, e);
		emit_unsupported(E, e->loc, "'->' on a value", NULL);
		break;
	case EXPR_EMBEDDED:
		if (E->kmod && E->s->guru)
			return emit_guru_expr(E, e);
		emit_unsupported(E, e->loc, "embedded C in an expression", NULL);
		break;
	}
	return e->type == TYPE_STRING ? "\"\"" : "0";
}

const char *emit_expr(struct emitter *E, struct expr *e)
{
	return expr(E, e, true);
}

/* E for its effects only (an expression statement). */
const char *emit_expr_void(struct emitter *E, struct expr *e)
{
	return expr(E, e, false);
}

/* E as a string in a buffer: in kernel context a literal is copied into a temporary. */
const char *emit_strbuf(struct emitter *E, struct expr *e)
{
	const char *t = emit_expr(E, e), *b;

	if (E->ctx != ECTX_KERNEL || e->kind != EXPR_STRING)
		return t;
	b = emit_str_temp(E);
	emit_line(E, "stp_strcpy(%s, %s);", b, t);
	return b;
}
