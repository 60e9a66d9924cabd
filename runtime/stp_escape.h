/*
 * stp_escape.h - backslash escapes of string literals, one copy for the
 * translator and the runtime.
 *
 * The translator turns a literal's body (escapes as written) into the bytes
 * it emits into generated C; the runtime's printf formatter unescapes the
 * literal pieces of a format.  Both must agree byte for byte, so both use
 * these functions.  The escapes are C's: \a \b \f \n \r \t \v, up to three
 * octal digits, \x and up to two hex digits; any other escaped character
 * (\\, \", \') stands for itself.
 */
#ifndef STP_ESCAPE_H
#define STP_ESCAPE_H

#include <stddef.h>

static inline int stp_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static inline int stp_is_octal(char c)
{
	return c >= '0' && c <= '7';
}

/* The byte a control escape (the letter after the backslash) stands for; 0: not one. */
static inline char stp_control_escape(char c)
{
	switch (c) {
	case 'a': return '\a';
	case 'b': return '\b';
	case 'f': return '\f';
	case 'n': return '\n';
	case 'r': return '\r';
	case 't': return '\t';
	case 'v': return '\v';
	default: return 0;
	}
}

/* The escape at s[*i] (just past the backslash): its byte; advances *i. */
static inline char stp_unescape_one(const char *s, size_t len, size_t *i)
{
	char c = s[(*i)++];
	unsigned v;
	int n;

	if (stp_control_escape(c))
		return stp_control_escape(c);
	if (stp_is_octal(c)) {
		v = (unsigned)(c - '0');
		for (n = 1; n < 3 && *i < len && stp_is_octal(s[*i]); n++)
			v = v * 8 + (unsigned)(s[(*i)++] - '0');
		return (char)(v & 0xff);
	}
	if (c == 'x' && *i < len && stp_hex_digit(s[*i]) >= 0) {
		v = (unsigned)stp_hex_digit(s[(*i)++]);
		if (*i < len && stp_hex_digit(s[*i]) >= 0)
			v = v * 16 + (unsigned)stp_hex_digit(s[(*i)++]);
		return (char)v;
	}
	return c;
}

/* The LEN bytes of BODY with their escapes decoded into DST (which may be BODY); the count. */
static inline size_t stp_unescape_bytes(char *dst, const char *body, size_t len)
{
	size_t i = 0, n = 0;

	while (i < len) {
		char c = body[i++];

		if (c == '\\' && i < len)
			c = stp_unescape_one(body, len, &i);
		dst[n++] = c;
	}
	return n;
}

#endif /* STP_ESCAPE_H */
