/*
 * format.c - compile SystemTap printf formats once, print records with them.
 *
 * Compiling follows stap's own steps on a string literal: the lexer keeps
 * the escapes C knows (\n, \\, \ooo, \xhh ...) and drops the backslash of
 * any other (so "\%d" is a directive); the directives are then parsed; last
 * the literal pieces between them are unescaped as C would, each ending at
 * its first NUL byte.  Printing never allocates.  See format.h for the rules.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "../stp_escape.h"

/* ---- output ---------------------------------------------------------- */

static void out_putc(struct stp_out *out, char c)
{
	if (out->len < out->size)
		out->buf[out->len++] = c;
	else
		out->truncated = true;
}

/* stap clamps widths and precisions to the space left in its buffer. */
static int out_limit(const struct stp_out *out)
{
	size_t room = out->size - out->len;

	return room >= INT_MAX ? INT_MAX : (int)room + 1;
}

/* ---- escapes ---------------------------------------------------------- */

size_t stp_unescape(char *dst, const char *body, size_t len)
{
	return stp_unescape_bytes(dst, body, len);
}

/* Escapes the lexer passes on to C; the backslash of any other is dropped. */
static int kept_escape(char c)
{
	return stp_control_escape(c) || stp_is_octal(c) || c == '\\' || c == 'x';
}

/*
 * The lexer's step: drop the backslash of unknown escapes.  t gets the text
 * (at most len bytes), map the body offset of each byte of t and, at
 * map[n], len.  Returns n.
 */
static size_t lex_normalize(const char *body, size_t len, char *t, size_t *map)
{
	size_t i = 0, n = 0;

	while (i < len) {
		if (body[i] == '\\' && i + 1 < len && !kept_escape(body[i + 1])) {
			map[n] = i;
			t[n++] = body[i + 1];
			i += 2;
			continue;
		}
		if (body[i] == '\\' && i + 1 < len) {
			map[n] = i;
			t[n++] = body[i++];
		}
		map[n] = i;
		t[n++] = body[i++];
	}
	map[n] = len;
	return n;
}

/* ---- compiling ---------------------------------------------------------- */

struct fmt_parser {
	const char *t;			/* lexer-normalized text */
	const size_t *map;		/* body offset of each byte of t */
	size_t n, i;
	struct stp_format *fmt;
	char *lit;			/* the pending literal piece, in the pool */
	size_t lit_len, lit_offset;
	struct stp_format_error *err;
};

static void fmt_error(struct fmt_parser *p, size_t start, const char *what, const char *why)
{
	char shown[40];
	size_t i, k = 0;

	if (!p->err)
		return;
	for (i = start; i <= p->i && i < p->n && k + 5 < sizeof(shown); i++) {
		unsigned char c = (unsigned char)p->t[i];

		if (c >= 0x20 && c < 0x7f)
			shown[k++] = (char)c;
		else
			k += (size_t)snprintf(shown + k, sizeof(shown) - k, "\\%03o", c);
	}
	shown[k] = 0;
	p->err->offset = p->map[start];
	snprintf(p->err->msg, sizeof(p->err->msg), "%s '%s'%s", what, shown, why);
}

static void add_literal_byte(struct fmt_parser *p, char c, size_t at)
{
	if (p->lit_len == 0)
		p->lit_offset = p->map[at];
	p->lit[p->lit_len++] = c;
}

/* Close the pending literal piece: unescape it, cut it at its first NUL. */
static void flush_literal(struct fmt_parser *p)
{
	struct stp_directive *d;
	size_t n = stp_unescape(p->lit, p->lit, p->lit_len);
	char *nul = memchr(p->lit, 0, n);

	if (nul)
		n = (size_t)(nul - p->lit);
	p->lit_len = 0;
	if (n == 0)
		return;
	d = &p->fmt->dirs[p->fmt->ndirs++];
	memset(d, 0, sizeof(*d));
	d->text = p->lit;
	d->text_len = n;
	d->offset = p->lit_offset;
	p->lit += n;
}

/* flag: '0' | '+' | '-' | ' ' | '#'   (at most one, as stap parses it) */
static unsigned parse_flag(struct fmt_parser *p)
{
	static const char flags[] = "0+- #";
	static const unsigned bits[] = {
		STP_FMT_ZEROPAD, STP_FMT_PLUS, STP_FMT_LEFT, STP_FMT_SPACE, STP_FMT_SPECIAL,
	};
	const char *f = p->i < p->n ? memchr(flags, p->t[p->i], 5) : NULL;

	if (!f)
		return 0;
	p->i++;
	return bits[f - flags];
}

/* digits | '*' | nothing: a width or precision. */
static int parse_count(struct fmt_parser *p)
{
	long v = 0;

	if (p->i < p->n && p->t[p->i] == '*') {
		p->i++;
		return STP_FMT_STAR;
	}
	if (p->i >= p->n || p->t[p->i] < '0' || p->t[p->i] > '9')
		return STP_FMT_NONE;
	while (p->i < p->n && p->t[p->i] >= '0' && p->t[p->i] <= '9') {
		v = v * 10 + (p->t[p->i++] - '0');
		if (v > INT_MAX)
			v = INT_MAX;
	}
	return (int)v;
}

static unsigned conv_flags(char c)
{
	switch (c) {
	case 'd': case 'i': return STP_FMT_SIGN;
	case 'X': return STP_FMT_LARGE;
	case 'p': return STP_FMT_SPECIAL;
	default: return 0;
	}
}

static enum stp_arg_kind conv_arg(char c)
{
	switch (c) {
	case 's': return STP_ARG_STRING;
	case 'm': case 'M': return STP_ARG_MEMORY;
	default: return STP_ARG_LONG;
	}
}

static void add_args(struct stp_format *fmt, const struct stp_directive *d)
{
	if (d->width == STP_FMT_STAR)
		fmt->args[fmt->nargs++] = STP_ARG_WIDTH;
	if (d->precision == STP_FMT_STAR)
		fmt->args[fmt->nargs++] = STP_ARG_PRECISION;
	fmt->args[fmt->nargs++] = conv_arg(d->conv);
}

/* conversion: 'd' | 'i' | 'u' | 'x' | 'X' | 'o' | 'p' | 'c' | 's' | 'm' | 'M' | 'b' */
static int parse_conv(struct fmt_parser *p, struct stp_directive *d, size_t start)
{
	char c = p->i < p->n ? p->t[p->i] : 0;

	if (p->i >= p->n) {
		p->i = p->n - 1;
		fmt_error(p, start, "incomplete format conversion", " at the end of the string");
		return -1;
	}
	if (!c || !strchr("diuxXopcsmMb", c)) {
		if (d->flags && p->i == start + 2 && c && strchr("-+ #", c))
			fmt_error(p, start, "invalid format conversion",
				  ": only one of the flags - + space # 0 may be given");
		else
			fmt_error(p, start, "unknown format conversion",
				  ": expected d, i, u, x, X, o, p, c, s, m, M or b");
		return -1;
	}
	p->i++;
	d->conv = c;
	d->flags |= conv_flags(c);
	return 0;
}

/* '%' [flag] [width] ['.' [precision]] ['l'] conversion */
static int parse_directive(struct fmt_parser *p)
{
	size_t start = p->i++;
	struct stp_directive d = { .width = STP_FMT_NONE, .precision = STP_FMT_NONE };

	d.offset = p->map[start];
	d.flags = parse_flag(p);
	d.width = parse_count(p);
	if (p->i < p->n && p->t[p->i] == '.') {
		p->i++;
		d.precision = parse_count(p);
	}
	if (p->i < p->n && p->t[p->i] == 'l')
		p->i++;
	if (parse_conv(p, &d, start) < 0)
		return -1;
	p->fmt->dirs[p->fmt->ndirs++] = d;
	add_args(p->fmt, &d);
	return 0;
}

/* format: (text | "%%" | directive)* */
static int parse_format(struct fmt_parser *p)
{
	while (p->i < p->n) {
		if (p->t[p->i] != '%') {
			add_literal_byte(p, p->t[p->i], p->i);
			p->i++;
		} else if (p->i + 1 == p->n || p->t[p->i + 1] == '%') {
			add_literal_byte(p, '%', p->i);	/* "%%", or a '%' ending the string */
			p->i += 2;
		} else {
			flush_literal(p);
			if (parse_directive(p) < 0)
				return -1;
		}
	}
	flush_literal(p);
	return 0;
}

/*
 * One block holds the format, its directives, argument kinds and literal
 * bytes; n bytes of text give at most n + 1 of each.
 */
static struct stp_format *format_alloc(size_t n)
{
	size_t dirs = (n + 1) * sizeof(struct stp_directive);
	size_t args = (n + 1) * sizeof(enum stp_arg_kind);
	struct stp_format *fmt = calloc(1, sizeof(*fmt) + dirs + args + n + 1);

	if (!fmt)
		return NULL;
	fmt->dirs = (struct stp_directive *)(fmt + 1);
	fmt->args = (enum stp_arg_kind *)((char *)fmt->dirs + dirs);
	return fmt;
}

static void set_oom(struct stp_format_error *err)
{
	if (!err)
		return;
	err->offset = 0;
	snprintf(err->msg, sizeof(err->msg), "cannot compile the format: out of memory");
}

struct stp_format *stp_format__new(const char *body, size_t len, struct stp_format_error *err)
{
	struct fmt_parser p = { .err = err };
	char *t = malloc(len + 1);
	size_t *map = malloc((len + 1) * sizeof(*map));

	if (!t || !map || !(p.fmt = format_alloc(len))) {
		free(t);
		free(map);
		set_oom(err);
		return NULL;
	}
	p.n = lex_normalize(body, len, t, map);
	p.t = t;
	p.map = map;
	p.lit = (char *)(p.fmt->args + len + 1);
	if (parse_format(&p) < 0) {
		free(p.fmt);
		p.fmt = NULL;
	}
	free(t);
	free(map);
	return p.fmt;
}

void stp_format__free(struct stp_format *fmt)
{
	free(fmt);
}

enum stp_value_type stp_arg_value_type(enum stp_arg_kind kind)
{
	return kind == STP_ARG_STRING || kind == STP_ARG_MEMORY ? STP_VALUE_STRING : STP_VALUE_LONG;
}

/* ---- printing ------------------------------------------------------------ */

/* The digits of num end at end; returns how many.  Base 10, 8 or 16. */
static int to_digits(char *end, uint64_t num, int base, const char *digits)
{
	char *p = end;
	int shift = base == 16 ? 4 : 3;

	if (base == 10) {
		do {
			*--p = (char)('0' + num % 10);
			num /= 10;
		} while (num);
	} else {
		do {
			*--p = digits[num & (unsigned)(base - 1)];
			num >>= shift;
		} while (num);
	}
	return (int)(end - p);
}

/* A number as stap's runtime number() lays it out; size is the width. */
static void put_number(struct stp_out *out, uint64_t num, int base, int size, int precision,
		       unsigned flags)
{
	const char *digits = flags & STP_FMT_LARGE ? "0123456789ABCDEFX" : "0123456789abcdefx";
	char tmp[24], sign = 0;
	int i;

	/* one flag per directive: LEFT never comes with ZEROPAD here */
	if ((flags & STP_FMT_SIGN) && (int64_t)num < 0) {
		sign = '-';
		num = -num;
	} else if (flags & STP_FMT_SIGN) {
		sign = flags & STP_FMT_PLUS ? '+' : flags & STP_FMT_SPACE ? ' ' : 0;
	}
	size -= sign != 0;
	if (flags & STP_FMT_SPECIAL)
		size -= base == 16 ? 2 : base == 8;
	i = to_digits(tmp + sizeof(tmp), num, base, digits);
	if (precision < i)
		precision = i;
	size -= precision;
	if (!(flags & (STP_FMT_ZEROPAD | STP_FMT_LEFT))) {
		stp_out_fill(out, ' ', size);
		size = 0;
	}
	if (sign)
		out_putc(out, sign);
	if ((flags & STP_FMT_SPECIAL) && (base == 8 || base == 16))
		out_putc(out, '0');
	if ((flags & STP_FMT_SPECIAL) && base == 16)
		out_putc(out, digits[16]);
	if (!(flags & STP_FMT_LEFT)) {
		stp_out_fill(out, '0', size);
		size = 0;
	}
	stp_out_fill(out, '0', precision - i);
	stp_out_write(out, tmp + sizeof(tmp) - i, (size_t)i);
	stp_out_fill(out, ' ', size);
}

/* %#c: the escape C would write for c, or 0 when c prints as itself. */
static char char_escape(unsigned char c)
{
	static const char from[] = "\a\b\f\n\r\t\v'\\", to[] = "abfnrtv'\\";
	const char *f = c ? memchr(from, c, sizeof(from) - 1) : NULL;

	if (f)
		return to[f - from];
	return c >= 0x20 && c < 0x7f ? 0 : 'o';
}

static void put_char(struct stp_out *out, unsigned char c, int width, unsigned flags)
{
	char buf[4] = { (char)c };
	int size = 1;
	char esc = flags & STP_FMT_SPECIAL ? char_escape(c) : 0;

	if (esc == 'o') {
		buf[0] = '\\';
		buf[1] = (char)('0' + (c >> 6));
		buf[2] = (char)('0' + ((c >> 3) & 7));
		buf[3] = (char)('0' + (c & 7));
		size = 4;
	} else if (esc) {
		buf[0] = '\\';
		buf[1] = esc;
		size = 2;
	}
	if (!(flags & STP_FMT_LEFT))
		stp_out_fill(out, ' ', (long)width - size);
	stp_out_write(out, buf, (size_t)size);
	if (flags & STP_FMT_LEFT)
		stp_out_fill(out, ' ', (long)width - size);
}

static void put_hex_bytes(struct stp_out *out, const char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out_putc(out, hex[(unsigned char)p[i] >> 4]);
		out_putc(out, hex[(unsigned char)p[i] & 15]);
	}
}

/* %s, %m, %M: stap's _stp_vsprint_memory. */
static void put_memory(struct stp_out *out, const struct stp_value *v, int width,
		       int precision, char conv, unsigned flags)
{
	size_t len = v->str.len;
	long shown;

	if (conv == 's') {
		const char *nul = memchr(v->str.ptr, 0, len);

		if (nul)
			len = (size_t)(nul - v->str.ptr);
		if (precision >= 0 && (size_t)precision < len)
			len = (size_t)precision;
	} else if ((size_t)(precision > 0 ? precision : 1) < len) {
		len = (size_t)(precision > 0 ? precision : 1);
	}
	shown = (long)(conv == 'M' ? 2 * len : len);
	if (!(flags & STP_FMT_LEFT))
		stp_out_fill(out, ' ', width - shown);
	if (conv == 'M')
		put_hex_bytes(out, v->str.ptr, len);
	else
		stp_out_write(out, v->str.ptr, len);
	if (flags & STP_FMT_LEFT)
		stp_out_fill(out, ' ', width - shown);
	if (flags & STP_FMT_ZEROPAD)
		out_putc(out, 0);
}

static int binary_size(int n)
{
	return n == 1 || n == 2 || n == 4 || n == 8 ? n : -1;
}

/* %b: the long's low `precision` bytes in host order, NUL-padded to width. */
static void put_binary(struct stp_out *out, int64_t num, int width, int precision,
		       unsigned flags)
{
	union { int8_t b; int16_t h; int32_t w; int64_t q; char bytes[8]; } u;

	precision = binary_size(precision);
	if (width < 0)
		width = precision < 0 ? 8 : precision;
	if (precision < 0)
		precision = binary_size(width) < 0 ? 8 : width;
	if (!(flags & STP_FMT_LEFT))
		stp_out_fill(out, 0, (long)width - precision);
	switch (precision) {
	case 1: u.b = (int8_t)num; break;
	case 2: u.h = (int16_t)num; break;
	case 4: u.w = (int32_t)num; break;
	default: u.q = num; break;
	}
	if (out->size - out->len >= (size_t)precision)
		stp_out_write(out, u.bytes, (size_t)precision);
	else
		out->truncated = true;	/* stap writes all the bytes or none */
	if (flags & STP_FMT_LEFT)
		stp_out_fill(out, 0, (long)width - precision);
}

static int clamp_int(int64_t v, int limit)
{
	int i = (int)(int32_t)(uint32_t)v;	/* stap: clamp_t(int, arg, ...) */

	return i < 0 ? 0 : i > limit ? limit : i;
}

/* A width or precision: none (-1), from the format, or from an argument. */
static int resolve_count(int spec, const struct stp_value **arg, int limit)
{
	if (spec == STP_FMT_NONE)
		return -1;
	if (spec == STP_FMT_STAR)
		return clamp_int((*arg)++->num, limit);
	return clamp_int(spec, limit);
}

static void print_directive(struct stp_out *out, const struct stp_directive *d,
			    const struct stp_value **arg)
{
	int width = resolve_count(d->width, arg, out_limit(out));
	int precision = resolve_count(d->precision, arg, out_limit(out));
	const struct stp_value *v = (*arg)++;
	int base = d->conv == 'o' ? 8 : strchr("xXp", d->conv) ? 16 : 10;

	switch (d->conv) {
	case 'c':
		put_char(out, (unsigned char)v->num, width, d->flags);
		break;
	case 's': case 'm': case 'M':
		put_memory(out, v, width, precision, d->conv, d->flags);
		break;
	case 'b':
		put_binary(out, v->num, width, precision, d->flags);
		break;
	default:
		put_number(out, (uint64_t)v->num, base, width, precision, d->flags);
		break;
	}
}

static int check_args(const struct stp_format *fmt, const struct stp_value *args, int nargs)
{
	int i;

	if (nargs != fmt->nargs)
		return -EINVAL;
	for (i = 0; i < nargs; i++)
		if (args[i].type != stp_arg_value_type(fmt->args[i]))
			return -EINVAL;
	return 0;
}

int stp_format_print(struct stp_out *out, const struct stp_format *fmt,
		     const struct stp_value *args, int nargs)
{
	const struct stp_value *arg = args;
	int i;

	if (check_args(fmt, args, nargs) < 0)
		return -EINVAL;
	for (i = 0; i < fmt->ndirs; i++) {
		const struct stp_directive *d = &fmt->dirs[i];

		if (d->conv)
			print_directive(out, d, &arg);
		else
			stp_out_write(out, d->text, d->text_len);
	}
	return out->truncated ? STP_OUT_TRUNCATED : 0;
}

int stp_print_values(struct stp_out *out, const struct stp_value *args, int nargs,
		     const char *delim, size_t delim_len, bool newline)
{
	int i;

	for (i = 0; i < nargs; i++) {
		if (i > 0 && delim)
			stp_out_write(out, delim, delim_len);
		if (args[i].type == STP_VALUE_LONG)
			put_number(out, (uint64_t)args[i].num, 10, -1, -1, STP_FMT_SIGN);
		else
			put_memory(out, &args[i], -1, -1, 's', 0);
	}
	if (newline)
		out_putc(out, '\n');
	return out->truncated ? STP_OUT_TRUNCATED : 0;
}
