/*
 * emit_print.c - the printf family.
 *
 * Kernel context: print, println, printd, printdln and printf write one
 * STP_REC_PRINTF record per call into the stp_events ring buffer: the
 * index of a format in stp_meta.formats (print's are made up here:
 * "%d%s\n"...), then the arguments; the runner formats them with
 * runtime/user/format.c.  sprintf and sprint go through bpf_snprintf()
 * when every directive has a kernel equivalent, else they are an error.
 * User context: format.c directly, through stp_printf() and friends.
 */
#include <ctype.h>
#include <limits.h>
#include <string.h>
#include "emit_int.h"
#include "emit_symdefer.h"

/* ---- formats ---------------------------------------------------------------- */

/* One directive of a format body: %[flag][width][.precision][l]conv. */
struct directive {
	char conv;		/* 0: literal text */
	char flag;		/* one of "-+ #0", or 0 */
	int width;		/* -1 none, -2 '*' */
	int precision;		/* -1 none, -2 '*' */
	const char *text;	/* the body's text: a literal's, or the directive's */
	size_t len;
};

#define EMIT_PRINT_MAX_ARGS 32

static int number_or_star(const char **p)
{
	int v = 0;

	if (**p == '*') {
		(*p)++;
		return -2;
	}
	if (**p < '0' || **p > '9')
		return -1;
	while (**p >= '0' && **p <= '9') {
		int digit = *(*p)++ - '0';

		/* saturated at INT_MAX, as the runtime's formatter reads it (fuzz_sema) */
		v = v > (INT_MAX - digit) / 10 ? INT_MAX : v * 10 + digit;
	}
	return v;
}

/* The directives of BODY into OUT; their count. */
static int parse_format(const char *body, struct directive *out, int max)
{
	const char *p = body;
	int n = 0;

	while (*p && n < max) {
		struct directive *d = &out[n++];

		memset(d, 0, sizeof(*d));
		if (*p != '%' || p[1] == '%' || !p[1]) {
			d->text = p;
			if (*p == '%')
				p += p[1] == '%' ? 2 : 1;
			while (*p && *p != '%')
				p += *p == '\\' && p[1] ? 2 : 1;
			d->len = (size_t)(p - d->text);
			continue;
		}
		d->text = p++;
		if (strchr("-+ #0", *p) && *p)
			d->flag = *p++;
		d->width = number_or_star(&p);
		d->precision = -1;
		if (*p == '.') {
			p++;
			d->precision = number_or_star(&p);
			if (d->precision == -1)
				d->precision = -1;
		}
		while (*p == 'l' || *p == 'h')
			p++;
		d->conv = *p ? *p++ : 's';
		d->len = (size_t)(p - d->text);
	}
	return n;
}

enum arg_kind { ARG_LONG, ARG_STRING, ARG_MEMORY };

static enum arg_kind conv_kind(char conv)
{
	if (conv == 's')
		return ARG_STRING;
	if (conv == 'm' || conv == 'M')
		return ARG_MEMORY;
	return ARG_LONG;
}

/* The body of a format that prints ARGS one after another (print and friends). */
static const char *synth_format(struct expr **args, int n, const char *delim, bool nl)
{
	const char *body = "", *d = "";

	if (delim) {
		for (const char *p = delim; *p; p++)
			d = arena_printf("%s%s", d, *p == '%' ? "%%" : (char[]){ *p, 0 });
	}
	for (int i = 0; i < n; i++)
		body = arena_printf("%s%s%s", body, i ? d : "",
				    args[i]->type == TYPE_STRING ? "%s" : "%d");
	return nl ? arena_printf("%s\\n", body) : body;
}

/* ---- kernel: records ---------------------------------------------------------------- */

static void rec_size(struct emitter *E, int size)
{
	if (size > E->rec_size)
		E->rec_size = size;
}

/* printf("fmt", args): one record, the arguments as the format wants them. */
static void kernel_printf(struct emitter *E, const char *body, struct srcloc loc,
			  struct expr **args, const char **vals, int n)
{
	struct directive dirs[256];
	int nd = parse_format(body, dirs, 256), a = 0, size = 8;
	int fmt = emit_format(E, body, loc);
	const char *prec = "1";

	emit_line(E, "{");
	E->cf->indent++;
	emit_line(E, "uint32_t n = stp_rec_start(c, STP_REC_PRINTF, %d);", fmt);
	for (int i = 0; i < nd && a < n; i++) {
		struct directive *d = &dirs[i];

		if (!d->conv)
			continue;
		if (d->width == -2 && a < n) {
			emit_line(E, "n = stp_rec_long(c, n, %s);", vals[a++]);
			size += 8;
		}
		if (d->precision == -2 && a < n) {
			prec = vals[a];
			emit_line(E, "n = stp_rec_long(c, n, %s);", vals[a++]);
			size += 8;
		} else if (d->precision >= 0) {
			prec = arena_printf("%d", d->precision);
		} else {
			prec = "1";
		}
		if (a >= n)
			break;
		switch (conv_kind(d->conv)) {
		case ARG_STRING:
			if (emit_symdefer_rec(E, args[a], vals[a], &size)) {
				a++;
				break;
			}
			emit_line(E, "n = stp_rec_str(c, n, %s);", vals[a++]);
			size += 2 + (int)E->maxstringlen;
			break;
		case ARG_MEMORY:
			emit_line(E, "n = stp_rec_mem(c, n, %s, %s, %d);", vals[a++], prec,
				  d->flag == '#');
			size += 2 + (int)E->maxstringlen;
			break;
		default:
			emit_line(E, "n = stp_rec_long(c, n, %s);", vals[a++]);
			size += 8;
		}
	}
	emit_line(E, "stp_rec_send(c, n);");
	E->cf->indent--;
	emit_line(E, "}");
	rec_size(E, size);
	(void)args;
}

/* ---- kernel: bpf_snprintf ------------------------------------------------------------- */

/* The bpf_snprintf directive for a stap one, or NULL when there is none. */
static const char *bpf_directive(const struct directive *d)
{
	const char *flag = d->flag ? (char[]){ d->flag, 0 } : "";
	const char *width = d->width >= 0 ? arena_printf("%d", d->width) : "";
	const char *conv;

	/* '#' (not in bpf_snprintf): stap's "0x"/"0X" prefix, always (0 too) */
	if (d->flag == '#' && (d->conv == 'x' || d->conv == 'X') && d->width == -1 &&
	    d->precision == -1)
		return d->conv == 'x' ? "0x%llx" : "0X%llX";
	if (d->precision != -1 || d->flag == '#' || (d->width == -2 && d->flag == '0'))
		return NULL;
	if (d->width == -2)
		width = "";
	switch (d->conv) {
	case 'd': conv = "lld"; break;
	case 'i': conv = "lli"; break;
	case 'u': conv = "llu"; break;
	case 'x': conv = "llx"; break;
	case 'X': conv = "llX"; break;
	case 'c': conv = "c"; break;
	case 's': conv = "s"; break;
	case 'p':
		if (d->flag || d->width >= 0)
			return NULL;
		return "0x%llx";
	default: return NULL;
	}
	if (d->flag == '0' && (d->conv == 's' || d->conv == 'c'))
		return NULL;
	return arena_printf("%%%s%s%s", flag, width, conv);
}

/*
 * Literal text (escapes as written) as bpf_snprintf format bytes: '%'
 * doubled; in a format's text (FMT) "%%" already stands for one '%'.
 */
static const char *bpf_literal(const char *text, size_t len, bool fmt)
{
	char *body = arena_strndup(text, len), *bytes = arena_alloc(len + 1), *w = body;
	const char *out = "";
	size_t n;

	for (const char *r = body; *r; r++) {
		*w++ = *r;
		if (fmt && r[0] == '%' && r[1] == '%')
			r++;
	}
	*w = '\0';
	n = emit_unescape(bytes, body);

	for (size_t i = 0; i < n; i++)
		out = arena_printf("%s%s", out, bytes[i] == '%' ? "%%" : (char[]){ bytes[i], 0 });
	return out;
}

/*
 * Format PIECES (struct emit_piece *: literal text, a bpf_snprintf
 * directive and its value) into a string temporary, at most 12 values per
 * bpf_snprintf call; the temporary.
 */
/* One piece with a '*' width: padded on the left or right to the width. */
static void star_piece(struct emitter *E, const char *t, struct emit_piece *p)
{
	const char *fmt = emit_c_string(p->conv, strlen(p->conv));
	const char *w = emit_snapshot(E, p->width, TYPE_LONG), *s;

	if (p->lit[0])
		emit_line(E, "off = stp_snprintf_at(%s, off, %s, NULL, 0);", t,
			  emit_c_string(p->lit, strlen(p->lit)));
	emit_line(E, "{");
	emit_line(E, "\tuint64_t a[] = { (uint64_t)%s%s };", p->str ? "(long)" : "", p->val);
	emit_line(E, "\tint64_t start = off;");
	emit_raw(E, "\n");
	if (p->left) {
		emit_line(E, "\toff = stp_snprintf_at(%s, off, %s, a, sizeof(a));", t, fmt);
		emit_line(E, "\toff = stp_pad(%s, start, off, %s);", t, w);
	} else {
		s = emit_str_temp(E);
		emit_line(E, "\tint64_t len = stp_snprintf_at(%s, 0, %s, a, sizeof(a));", s, fmt);
		emit_raw(E, "\n");
		emit_line(E, "\toff = stp_pad(%s, start, off, %s - len);", t, w);
		emit_line(E, "\ta[0] = (uint64_t)(long)%s;", s);
		emit_line(E, "\toff = stp_snprintf_at(%s, off, \"%%s\", a, sizeof(a));", t);
	}
	emit_line(E, "}");
}

/*
 * Format PIECES (struct emit_piece *: literal text, a bpf_snprintf
 * directive and its value) into a string temporary, at most 12 values per
 * bpf_snprintf call; the temporary.
 */
const char *emit_bpf_snprintf(struct emitter *E, struct vec *pieces)
{
	const char *t = emit_str_temp(E);
	int i = 0;

	emit_line(E, "%s[0] = '\\0';", t);
	emit_line(E, "{");
	E->cf->indent++;
	emit_line(E, "int64_t off = 0;");
	emit_raw(E, "\n");
	while (i < pieces->len) {
		const char *fmt = "", *data = "";
		int k = 0;

		if (((struct emit_piece *)VEC_AT(pieces, i))->width) {
			star_piece(E, t, VEC_AT(pieces, i++));
			continue;
		}
		for (; i < pieces->len && k < 12; i++) {
			struct emit_piece *p = VEC_AT(pieces, i);
			size_t n = strlen(fmt);

			if (p->width)
				break;
			/* the kernel refuses a letter or digit right after "%s": a new call */
			if (n && fmt[n - 1] == 's' && k && isalnum((unsigned char)p->lit[0]))
				break;
			fmt = arena_printf("%s%s%s", fmt, p->lit, p->conv ? p->conv : "");
			if (!p->conv)
				continue;
			data = arena_printf("%s%s(uint64_t)%s%s", data, k ? ", " : "",
					    p->str ? "(long)" : "", p->val);
			k++;
		}
		if (!k) {
			emit_line(E, "off = stp_snprintf_at(%s, off, %s, NULL, 0);", t,
				  emit_c_string(fmt, strlen(fmt)));
			continue;
		}
		emit_line(E, "{");
		emit_line(E, "\tuint64_t a[] = { %s };", data);
		emit_raw(E, "\n");
		emit_line(E, "\toff = stp_snprintf_at(%s, off, %s, a, sizeof(a));", t,
			  emit_c_string(fmt, strlen(fmt)));
		emit_line(E, "}");
	}
	E->cf->indent--;
	emit_line(E, "}");
	return t;
}

static const char *kernel_sprintf(struct emitter *E, const char *body, struct srcloc loc,
				  struct expr **args, const char **vals, int n)
{
	struct directive dirs[256];
	int nd = parse_format(body, dirs, 256), a = 0;
	struct vec pieces = { 0 };
	struct emit_piece *p = NULL;

	for (int i = 0; i < nd; i++) {
		struct directive *d = &dirs[i];
		const char *bd;

		if (!p) {
			p = ARENA_NEW(struct emit_piece);
			p->lit = "";
			vec_push(&pieces, p);
		}
		if (!d->conv) {
			p->lit = arena_printf("%s%s", p->lit, bpf_literal(d->text, d->len, true));
			continue;
		}
		if (d->conv == 'o' && d->flag != '0' && d->flag != '+' && d->flag != ' ' &&
		    d->precision == -1 && d->width != -2 && a < n) {
			/* no octal in bpf_snprintf: the digits as a string (stp_octal) */
			const char *t = emit_str_temp(E);

			emit_line(E, "stp_octal(%s, %s, %d);", t, vals[a++], d->flag == '#');
			p->conv = arena_printf("%%%s%ss", d->flag == '-' ? "-" : "",
					       d->width >= 0 ? arena_printf("%d", d->width) : "");
			p->str = true;
			p->val = t;
			p = NULL;
			continue;
		}
		bd = bpf_directive(d);
		if (!bd || a >= n) {
			emit_unsupported(E, loc, arena_printf("sprintf with '%.*s'", (int)d->len,
							      d->text),
					 "the kernel can format %d %i %u %x %X %o %c %s with a flag and "
					 "a width; use printf, or sprintf in user context");
			return "\"\"";
		}
		if (d->width == -2) {
			p->width = vals[a++];
			p->left = d->flag == '-';
			if (a >= n)
				return "\"\"";
		}
		p->conv = bd;
		p->str = args[a]->type == TYPE_STRING;
		p->val = vals[a++];
		p = NULL;
	}
	return emit_bpf_snprintf(E, &pieces);
}

/* sprint(v, ...) and friends in the kernel: a made-up format through bpf_snprintf. */
static const char *kernel_sprint(struct emitter *E, struct expr **args, const char **vals, int n,
				 const char *delim, bool nl)
{
	struct vec pieces = { 0 };

	if (n == 1 && !nl && args[0]->type == TYPE_STRING)
		return emit_snapshot(E, vals[0], TYPE_STRING);
	for (int i = 0; i < n; i++) {
		struct emit_piece *p = ARENA_NEW(struct emit_piece);

		p->lit = i && delim ? bpf_literal(delim, strlen(delim), false) : "";
		p->str = args[i]->type == TYPE_STRING;
		p->conv = p->str ? "%s" : "%lld";
		p->val = vals[i];
		vec_push(&pieces, p);
	}
	if (nl) {
		struct emit_piece *p = ARENA_NEW(struct emit_piece);

		p->lit = "\n";
		vec_push(&pieces, p);
	}
	return emit_bpf_snprintf(E, &pieces);
}

/* ---- user context --------------------------------------------------------------------- */

static const char *values(struct expr **args, const char **vals, int n)
{
	const char *s = "";

	if (!n)
		return "NULL, 0";
	for (int i = 0; i < n; i++)
		s = arena_printf("%s%s%s(%s)", s, i ? ", " : "",
				 args[i]->type == TYPE_STRING ? "STP_S" : "STP_L", vals[i]);
	return arena_printf("(struct stp_value[]){ %s }, %d", s, n);
}

static bool has_memory(const char *body)
{
	struct directive dirs[256];
	int nd = parse_format(body, dirs, 256);

	for (int i = 0; i < nd; i++)
		if (dirs[i].conv == 'm' || dirs[i].conv == 'M')
			return true;
	return false;
}

/* print(@hist_*(s)) and its s- and -ln forms. */
static const char *print_hist(struct emitter *E, struct expr *e, bool str)
{
	struct expr *h = VEC_AT(&e->args, 0);
	struct eglobal *g;
	const char *key, *t = str ? emit_str_temp(E) : "NULL";
	int site;

	if (E->ctx == ECTX_KERNEL && !E->kmod) {
		emit_unsupported(E, h->loc, str ? "a histogram printed to a string" :
				 "printing a histogram",
				 "print it in an end or timer probe, which runs in user context");
		return "\"\"";
	}
	key = emit_stat_key(E, h->left, &g);
	if (!g)
		return "\"\"";
	if (E->ctx == ECTX_KERNEL && str) {
		/* a module prints into the string with user context's printer */
		emit_line(E, "stp_kmod_hist_sprint(c, &g_%s, %s, &cfg_%s, %s);", g->cname, key,
			  g->cname, t);
	} else if (E->ctx == ECTX_KERNEL) {
		/* a module: the merged buckets in a record the runner prints (STP_REC_HIST) */
		rec_size(E, (int)sizeof(struct stp_rec_hdr) + 4 * 8 + 8 * g->buckets);
		emit_line(E, "stp_kmod_hist_print(c, &g_%s, %s, &cfg_%s, %d);", g->cname, key,
			  g->cname, g->index);
		return "0";
	} else {
		site = emit_error_site(E, h->loc, "empty aggregate");
		emit_line(E, "stp_map_stat_print(c, &g_%s, %s, %s, %d);", g->cname, key, t, site);
	}
	return str ? t : "0";
}

/* ---- dispatch --------------------------------------------------------------------------- */

const char *emit_print_call(struct emitter *E, struct expr *e, bool used)
{
	int b = e->builtin, first = 0, n;
	bool str = b >= BUILTIN_SPRINT, fmt = b == BUILTIN_PRINTF || b == BUILTIN_SPRINTF;
	bool delimited = b == BUILTIN_PRINTD || b == BUILTIN_PRINTDLN || b == BUILTIN_SPRINTD ||
			 b == BUILTIN_SPRINTDLN;
	bool nl = b == BUILTIN_PRINTLN || b == BUILTIN_PRINTDLN || b == BUILTIN_SPRINTLN ||
		  b == BUILTIN_SPRINTDLN;
	struct expr *none[1] = { NULL };	/* println() has no arguments, and no array of them */
	struct expr **args = e->args.len ? (struct expr **)e->args.items : none;
	const char *body = NULL, *delim = NULL, **vals, *t;

	/* println and sprintln of a histogram print it alone, as stap 4.8 does */
	if (e->args.len == 1 && args[0]->kind == EXPR_HIST)
		return print_hist(E, e, str);
	if (fmt || delimited) {
		first = 1;
		body = args[0]->str;
		delim = delimited ? body : NULL;
	}
	n = e->args.len - first;
	if (n > EMIT_PRINT_MAX_ARGS) {	/* stap's limit (its PR10750), in every runtime */
		diag_error(e->loc, "'%s' takes at most %d values to print, not %d", e->name,
			   EMIT_PRINT_MAX_ARGS, n);
		E->errors_reported++;
		return "0";
	}
	vals = arena_alloc(sizeof(char *) * (size_t)(n + 1));
	emit_exprs_ordered(E, E->ctx == ECTX_KERNEL && !str ? emit_symdefer_args(args + first, n)
						     : args + first, n, vals);
	E->side_effects += !str;
	for (int i = 0; E->ctx == ECTX_KERNEL && str && i < n; i++) {
		/* bpf_snprintf reads %s from addresses: a literal's must be in a buffer */
		if (args[first + i]->kind == EXPR_STRING) {
			const char *buf = emit_str_temp(E);

			emit_line(E, "stp_strcpy(%s, %s);", buf, vals[i]);
			vals[i] = buf;
		}
	}
	if (E->ctx == ECTX_KERNEL) {
		if (str)
			return fmt ? kernel_sprintf(E, body, e->loc, args + first, vals, n)
				   : kernel_sprint(E, args + first, vals, n, delim, nl);
		kernel_printf(E, fmt ? body : synth_format(args + first, n, delim, nl), e->loc,
			      args + first, vals, n);
		return "0";
	}
	if (fmt && has_memory(body)) {
		emit_unsupported(E, e->loc, "%m in user context", NULL);
		return "0";
	}
	t = str ? emit_str_temp(E) : NULL;
	if (fmt && str)
		emit_line(E, "stp_sprintf(c, %s, %d, %s);", t, emit_format(E, body, e->loc),
			  values(args + first, vals, n));
	else if (fmt)
		emit_line(E, "stp_printf(c, %d, %s);", emit_format(E, body, e->loc),
			  values(args + first, vals, n));
	else if (str)
		emit_line(E, "stp_sprint(c, %s, %s, %s, %s);", t, values(args + first, vals, n),
			  delim ? emit_c_literal(delim) : "NULL", nl ? "true" : "false");
	else
		emit_line(E, "stp_print(c, %s, %s, %s);", values(args + first, vals, n),
			  delim ? emit_c_literal(delim) : "NULL", nl ? "true" : "false");
	(void)used;
	return str ? t : "0";
}

/* ---- pretty-printed texts (emit_int.h) ---- */

void emit_pretty_lit(struct emit_pretty *p, const char *text)
{
	p->lit = arena_printf("%s%s", p->lit, text);
}

void emit_pretty_put(struct emit_pretty *p, const char *conv, const char *val, bool str)
{
	struct emit_piece *ep = ARENA_NEW(struct emit_piece);

	ep->lit = p->lit;
	ep->conv = conv;
	ep->val = val;
	ep->str = str;
	vec_push(&p->pieces, ep);
	p->lit = "";
	p->values++;
}

void emit_pretty_char(struct emit_pretty *p, const char *val)
{
	struct emitter *E = p->E;
	const char *t = emit_str_temp(E), *v = emit_snapshot(E, val, TYPE_LONG);

	emit_line(E, "if (%s >= ' ' && %s <= '~' && %s != '\\'' && %s != '\\\\') {", v, v, v, v);
	emit_line(E, "\t%s[0] = (char)%s;", t, v);
	emit_line(E, "\t%s[1] = '\\0';", t);
	emit_line(E, "} else {");
	emit_line(E, "\t%s[0] = '\\\\';", t);
	emit_line(E, "\t%s[1] = '0' + ((%s >> 6) & 3);", t, v);
	emit_line(E, "\t%s[2] = '0' + ((%s >> 3) & 7);", t, v);
	emit_line(E, "\t%s[3] = '0' + (%s & 7);", t, v);
	emit_line(E, "\t%s[4] = '\\0';", t);
	emit_line(E, "}");
	emit_pretty_put(p, "'%s'", t, true);
}

const char *emit_pretty_text(struct emit_pretty *p)
{
	if (*p->lit)
		emit_pretty_put(p, NULL, NULL, false);
	return emit_bpf_snprintf(p->E, &p->pieces);
}
