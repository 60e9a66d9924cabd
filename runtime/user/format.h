/*
 * format.h - SystemTap printf semantics for the user-space runtime.
 *
 * printf/sprintf in kernel context write {format id, args} records; the
 * runner formats them here.  A format is compiled once, at load, from the
 * string literal's body as the lexer keeps it (escapes still written out),
 * and printed many times with no allocation.
 *
 * The rules are stap 4.x's (staptree.cxx print_format::string_to_components,
 * translate.cxx compiled printfs, runtime/vsprintf.c), quirks included:
 *   - a directive is %[flag][width][.precision][l]conv with at most ONE of
 *     the flags - + space # 0; "%+05d" is '+' with width 5, not zero padded;
 *   - conversions: d i u x X o p c s m M b and %%; a lone '%' at the very
 *     end is a literal '%';
 *   - numbers are 64-bit; u x X o print a negative long as unsigned;
 *     %p is %#x (0x prefix, no padding unless a width is given);
 *     '#' gives 0x/0X for x/X/p and a leading 0 for o, even for 0 ("0x0", "00");
 *     the 0 flag pads after the sign/prefix and is not dropped by a
 *     precision; a precision of 0 still prints "0" for 0;
 *   - '*' takes the width or precision from the next argument, truncated to
 *     int and clamped to [0, space left]: a negative '*' width does not
 *     left-justify, a negative '*' precision is 0;
 *   - %s stops at a NUL byte; %.Ns prints at most N bytes; "%.s" (no digits)
 *     is no precision at all; the 0 flag on s, m and M appends a NUL byte;
 *   - %c prints the low byte; %#c escapes it as C does (\n, \', \\, \ooo);
 *   - %m prints the raw bytes of its value, %M them as lower-case hex; the
 *     byte count is the precision (default 1); '#' selects user memory on
 *     the kernel side and changes nothing here;
 *   - %b writes the long's bytes in host order: width/precision 1, 2, 4 or
 *     8 select the size (default 8), a larger width pads with NUL bytes.
 * Widths and precisions are clamped to the space left in the output plus
 * one, as stap clamps to the space left in its buffer: an output of size
 * MAXSTRINGLEN - 1 formats exactly as stap's sprintf.
 */
#ifndef STP_FORMAT_H
#define STP_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* An output buffer owned by the caller.  Nothing is written past size. */
struct stp_out {
	char *buf;
	size_t size;		/* capacity in bytes */
	size_t len;		/* bytes written so far */
	bool truncated;		/* some output did not fit (sticky) */
};

static inline void stp_out_init(struct stp_out *out, char *buf, size_t size)
{
	out->buf = buf;
	out->size = size;
	out->len = 0;
	out->truncated = false;
}

/* Append n bytes, or n copies of c (nothing when n <= 0), up to out->size
   (inline: the kernel runtime's modules print histograms with them too). */
static inline void stp_out_write(struct stp_out *out, const char *p, size_t n)
{
	size_t room = out->size - out->len;

	if (n > room) {
		n = room;
		out->truncated = true;
	}
	memcpy(out->buf + out->len, p, n);
	out->len += n;
}

static inline void stp_out_fill(struct stp_out *out, char c, long n)
{
	size_t room = out->size - out->len;

	if (n <= 0)
		return;
	if ((size_t)n > room) {
		n = (long)room;
		out->truncated = true;
	}
	memset(out->buf + out->len, c, (size_t)n);
	out->len += (size_t)n;
}

/* Returned by the print functions when out->truncated is set. */
#define STP_OUT_TRUNCATED 1

/* A value of a record: a long, or the bytes of a string. */
enum stp_value_type {
	STP_VALUE_LONG,
	STP_VALUE_STRING,
};

struct stp_value {
	enum stp_value_type type;
	union {
		int64_t num;
		struct {
			const char *ptr;	/* need not be NUL-terminated */
			size_t len;
		} str;
	};
};

static inline struct stp_value stp_value_long(int64_t num)
{
	struct stp_value v = { .type = STP_VALUE_LONG, .num = num };

	return v;
}

static inline struct stp_value stp_value_string(const char *ptr, size_t len)
{
	struct stp_value v = { .type = STP_VALUE_STRING, .str = { ptr, len } };

	return v;
}

/* Flags of a directive, as stap's runtime numbers them. */
enum {
	STP_FMT_ZEROPAD = 1,	/* 0 */
	STP_FMT_SIGN = 2,	/* d and i: signed conversion */
	STP_FMT_PLUS = 4,	/* + */
	STP_FMT_SPACE = 8,	/* space */
	STP_FMT_LEFT = 16,	/* - */
	STP_FMT_SPECIAL = 32,	/* # (and always for p) */
	STP_FMT_LARGE = 64,	/* X: upper-case digits */
};

/* Width or precision of a directive. */
#define STP_FMT_NONE (-1)	/* not given */
#define STP_FMT_STAR (-2)	/* '*': taken from the next argument */

/* One piece of a compiled format: literal text or a conversion. */
struct stp_directive {
	char conv;		/* 0 for literal text, else d i u x X o p c s m M b */
	unsigned flags;		/* STP_FMT_* */
	int width;		/* >= 0, STP_FMT_NONE or STP_FMT_STAR */
	int precision;		/* >= 0, STP_FMT_NONE or STP_FMT_STAR */
	const char *text;	/* literal: the bytes, escapes resolved */
	size_t text_len;
	size_t offset;		/* where it starts in the format body */
};

/* What a script must pass for each argument of a format, in order. */
enum stp_arg_kind {
	STP_ARG_LONG,		/* d i u x X o p c b */
	STP_ARG_STRING,		/* s */
	STP_ARG_MEMORY,		/* m M: a long address in the script; the record
				   holds the bytes read from it (a string value) */
	STP_ARG_WIDTH,		/* a long, for a '*' width */
	STP_ARG_PRECISION,	/* a long, for a '*' precision */
};

struct stp_format {
	int ndirs;
	struct stp_directive *dirs;
	int nargs;
	enum stp_arg_kind *args;
};

/* Why a format was refused: message and the offset of the bad directive. */
struct stp_format_error {
	size_t offset;
	char msg[128];
};

/*
 * Compile the body of a format string literal (len bytes, escapes as
 * written in the script).  Returns NULL and fills err (when not NULL) on a
 * bad directive or when out of memory.
 */
struct stp_format *stp_format__new(const char *body, size_t len, struct stp_format_error *err);
void stp_format__free(struct stp_format *fmt);

/* The value type a record must carry for an argument kind. */
enum stp_value_type stp_arg_value_type(enum stp_arg_kind kind);

/*
 * Append the formatted args to out.  Returns 0, STP_OUT_TRUNCATED when
 * output was cut, or -EINVAL (nothing written) when nargs or an argument's
 * type does not match the format.
 */
int stp_format_print(struct stp_out *out, const struct stp_format *fmt,
		     const struct stp_value *args, int nargs);

/*
 * print, println, printd, printdln, sprint...: the values one after another
 * (a long in decimal, a string up to its first NUL), delim (raw bytes, may
 * be NULL) between them, a newline at the end when asked.  Returns 0 or
 * STP_OUT_TRUNCATED.
 */
int stp_print_values(struct stp_out *out, const struct stp_value *args, int nargs,
		     const char *delim, size_t delim_len, bool newline);

/*
 * Resolve the escapes of a string literal body as the script means them:
 * \a \b \f \n \r \t \v \\, octal \o \oo \ooo, hex \xh \xhh; any other
 * escaped character stands for itself (stap drops the backslash).  dst needs
 * len bytes (the result is never longer).  Returns the result's length;
 * it may contain NUL bytes.
 */
size_t stp_unescape(char *dst, const char *body, size_t len);

#endif
