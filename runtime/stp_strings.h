/*
 * stp_strings.h - the string services' algorithms, one copy for both runtimes.
 *
 * runtime/bpf/tapset.bpf.h and runtime/user/tapset_user.c both include
 * this file, so a script's string functions give the same results in
 * kernel and in user context, and the user-side unit tests
 * (qa/unit/test_rt_tapset.c) exercise the code that the BPF verifier
 * loads.  The code is written for the verifier:
 *
 *  - every loop is a step function driven by stp__loop(): bpf_loop() in
 *    BPF, a plain for loop in user space;
 *  - the verifier checks a step again for each new state it can start
 *    from, so a step indexes with its iteration number (which the verifier
 *    does not know) rather than with a counter on the stack (which it
 *    knows exactly, one state per value: 512 checks of the step); counters
 *    that move by varying amounts live in STP_VARS memory, a per-CPU map
 *    value in BPF, whose contents the verifier does not follow;
 *  - every index into a string is compared with MAXSTRINGLEN right before
 *    the access, even where the logic already bounds it;
 *  - no recursion, no variable offsets into the stack.
 *
 * A string argument points to MAXSTRINGLEN readable bytes (in kernel
 * context, inside a map value: a scratch slot, a global, a literal padded
 * to MAXSTRINGLEN), NUL-terminated within them.  An OUT buffer has
 * MAXSTRINGLEN writable bytes and may be the same buffer as an input where
 * a function says so.  In kernel context the functions that use STP_VARS
 * must not run on a CPU where another is already running: the runtime
 * skips a handler that finds its CPU busy.
 *
 * The including file supplies int64_t and friends, MAXSTRINGLEN (from
 * stp_tapset.h) and, in BPF, the libbpf helper declarations.
 */
#ifndef STP_STRINGS_H
#define STP_STRINGS_H

#ifdef __bpf__
#define STP_STR_FN static __always_inline
#define STP_STR_STEP static __attribute__((unused)) long
#define stp__loop(n, step, state) bpf_loop((n), (step), (state), 0)

/* This CPU's memory for the counters of a loop (see above). */
struct stp__vars_mem {
	uint64_t words[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, uint32_t);
	__type(value, struct stp__vars_mem);
} stp_tapset_vars SEC(".maps");

static __always_inline void *stp__vars(void)
{
	uint32_t zero = 0;
	struct stp__vars_mem *m = bpf_map_lookup_elem(&stp_tapset_vars, &zero);

	if (m)
		__builtin_memset(m, 0, sizeof(*m));
	return m;
}

#define STP_VARS(type, name)                                                               \
	_Static_assert(sizeof(type) <= sizeof(struct stp__vars_mem), "STP_VARS too small");  \
	type *name = (type *)stp__vars()
#else
#define STP_STR_FN static inline
#define STP_STR_STEP static __attribute__((unused)) long

typedef long (*stp__step_fn)(uint64_t i, void *state);

static inline void stp__loop(uint64_t n, stp__step_fn step, void *state)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		if (step(i, state))
			break;
}

#define STP_VARS(type, name) type name##_mem = { 0 }, *name = &name##_mem
#endif

/*
 * The services' error messages, the same in both runtimes (printf formats
 * with one long argument, as bpf_snprintf() takes them).  WHAT is "user"
 * or "kernel".
 */
#define STP_MSG_READ_FAULT(what) what " read fault at 0x%llx"
#define STP_MSG_STRING_FAULT(what) what " string read fault at 0x%llx"
#define STP_MSG_READ_SIZE(what) what " read of %lld bytes: the size must be 1, 2, 4 or 8"
#define STP_MSG_POSITION "position %lld is outside the string"
#define STP_MSG_NO_CPU "cpu_clock_ns: cpu %lld does not exist"
#define STP_MSG_RANDINT "range too wide: randint(%lld) takes at most 1048576"
#define STP_MSG_UNKNOWN "unknown error"

/* The longest string: the last byte of a buffer is its NUL. */
#define STP_STR_MAX ((int64_t)MAXSTRINGLEN - 1)

/* I may index a string's bytes (before its NUL slot). */
#define STP_IN_STR(i) ((uint64_t)(i) < (uint64_t)STP_STR_MAX)

/*
 * Copy LEN bytes (1 to STP_STR_MAX) of SRC to OUT and end OUT there.
 * SRC may be inside OUT's buffer at or after OUT (substr of itself).
 */
STP_STR_FN void stp__copy(char *out, const char *src, int64_t len)
{
	if (len < 1 || len > STP_STR_MAX) {
		out[0] = '\0';
		return;
	}
#ifdef __bpf__
	{
		uint32_t n = (uint32_t)len;

		/*
		 * The bound checked again on the register used: clang may
		 * test a copy of LEN, and 6.1's verifier then sees an
		 * unbounded size or index ("unbounded memory access").
		 */
		__asm__ __volatile__("" : "+r"(n));
		if (n > (uint32_t)STP_STR_MAX)
			n = (uint32_t)STP_STR_MAX;
		bpf_probe_read_kernel(out, n, src);
		out[n] = '\0';
	}
#else
	__builtin_memmove(out, src, (size_t)len);
	out[len] = '\0';
#endif
}

/* strlen: the index of the NUL, at most STP_STR_MAX. */
struct stp__len_state {
	const char *s;
	int64_t n;
};

STP_STR_STEP stp__len_step(uint64_t i, void *state)
{
	struct stp__len_state *st = state;

	if (!STP_IN_STR(i) || st->s[i] == '\0') {
		st->n = (int64_t)i;
		return 1;
	}
	return 0;
}

STP_STR_FN int64_t stp__strlen(const char *s)
{
	struct stp__len_state st = { s, STP_STR_MAX };

	stp__loop(MAXSTRINGLEN, stp__len_step, &st);
	if (st.n < 0 || st.n > STP_STR_MAX)
		return STP_STR_MAX;
	return st.n;
}

/* substr: OUT may be S itself. */
STP_STR_FN void stp__substr(char *out, const char *s, int64_t start, int64_t len)
{
	int64_t n = stp__strlen(s);

	if (start < 0 || start >= n || len <= 0) {
		out[0] = '\0';
		return;
	}
	if (len > n - start)
		len = n - start;
	{
		uint32_t at = (uint32_t)start;

		__asm__ __volatile__("" : "+r"(at));	/* as in stp__copy */
		if (!STP_IN_STR(at)) {
			out[0] = '\0';
			return;
		}
		stp__copy(out, s + at, len);
	}
}

/* The byte at POS as 0..255, or -1 when POS is not inside S. */
STP_STR_FN int64_t stp__char_at(const char *s, int64_t pos)
{
	if (pos < 0 || pos >= stp__strlen(s) || !STP_IN_STR(pos))
		return -1;
	return (unsigned char)s[pos];
}

/*
 * strpos: one loop over (candidate start p, matched length j); a mismatch
 * moves p on, a match moves j on, so at most len(s) * (len(sub) + 1) steps.
 */
struct stp__pos_vars {
	int64_t p, j, found;
};

struct stp__pos_state {
	const char *s, *sub;
	struct stp__pos_vars *v;
};

STP_STR_STEP stp__pos_step(uint64_t i, void *state)
{
	struct stp__pos_state *st = state;
	struct stp__pos_vars *v = st->v;
	int64_t p = v->p, j = v->j, k = p + j;
	char want, have;

	if (!STP_IN_STR(j))
		return 1;
	want = st->sub[j];
	if (want == '\0') {
		v->found = p;
		return 1;
	}
	if (!STP_IN_STR(k))
		return 1;
	have = st->s[k];
	if (have == '\0')
		return 1;	/* what is left of S is shorter than SUB */
	if (have == want) {
		v->j = j + 1;
	} else {
		v->p = p + 1;
		v->j = 0;
	}
	return 0;
}

/* The loops of a quadratic search; bpf_loop() allows at most 1 << 23. */
#define STP_POS_STEPS                                                                        \
	((uint64_t)MAXSTRINGLEN * MAXSTRINGLEN > (1u << 23) ? (1u << 23)                    \
							    : (uint64_t)MAXSTRINGLEN * MAXSTRINGLEN)

STP_STR_FN int64_t stp__strpos(const char *s, const char *sub)
{
	STP_VARS(struct stp__pos_vars, v);
	struct stp__pos_state st = { s, sub, v };

	if (sub[0] == '\0')
		return 0;
	if (!v)
		return -1;
	v->found = -1;
	stp__loop(STP_POS_STEPS, stp__pos_step, &st);
	return v->found;
}

/* strspn and strcspn: a 256-bit set of SET's bytes, then one pass over S. */
struct stp__span_state {
	const char *s;
	uint64_t w0, w1, w2, w3;
	int64_t n;
	int in;		/* count bytes in the set (strspn) or not in it (strcspn) */
};

STP_STR_FN void stp__set_add(struct stp__span_state *st, unsigned char c)
{
	uint64_t bit = 1ull << (c & 63);

	switch (c >> 6) {
	case 0: st->w0 |= bit; break;
	case 1: st->w1 |= bit; break;
	case 2: st->w2 |= bit; break;
	default: st->w3 |= bit; break;
	}
}

STP_STR_FN int stp__set_has(const struct stp__span_state *st, unsigned char c)
{
	uint64_t w;

	switch (c >> 6) {
	case 0: w = st->w0; break;
	case 1: w = st->w1; break;
	case 2: w = st->w2; break;
	default: w = st->w3; break;
	}
	return (w >> (c & 63)) & 1;
}

STP_STR_STEP stp__set_step(uint64_t i, void *state)
{
	struct stp__span_state *st = state;
	unsigned char c;

	if (!STP_IN_STR(i))
		return 1;
	c = (unsigned char)st->s[i];
	if (c == '\0')
		return 1;
	stp__set_add(st, c);
	return 0;
}

STP_STR_STEP stp__span_step(uint64_t i, void *state)
{
	struct stp__span_state *st = state;
	unsigned char c;

	if (!STP_IN_STR(i))
		return 1;
	c = (unsigned char)st->s[i];
	if (c == '\0' || stp__set_has(st, c) != st->in)
		return 1;
	st->n = (int64_t)i + 1;
	return 0;
}

STP_STR_FN int64_t stp__span(const char *s, const char *set, int in)
{
	struct stp__span_state st = { set, 0, 0, 0, 0, 0, in };

	stp__loop(MAXSTRINGLEN, stp__set_step, &st);
	st.s = s;
	stp__loop(MAXSTRINGLEN, stp__span_step, &st);
	return st.n;
}

/*
 * strtol, as the kernel's simple_strtol() reads a number, except that
 * letters up to 'z' are digits where BASE allows them (the kernel stops at
 * 'f' whatever the base).  Overflow wraps, as it does there.
 */
struct stp__num_state {
	const char *s;
	int64_t start;		/* the first digit */
	uint64_t v;
	uint64_t base;
};

STP_STR_FN int stp__digit(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A' + 10;
	return 99;
}

STP_STR_STEP stp__num_step(uint64_t i, void *state)
{
	struct stp__num_state *st = state;
	int64_t k = st->start + (int64_t)i;
	int d;

	if (!STP_IN_STR(k))
		return 1;
	d = stp__digit(st->s[k]);
	if ((uint64_t)d >= st->base)
		return 1;
	st->v = st->v * st->base + (uint64_t)d;
	return 0;
}

STP_STR_FN char stp__at(const char *s, int64_t i)
{
	return STP_IN_STR(i) ? s[i] : '\0';
}

STP_STR_FN int stp__is_xdigit(char ch)
{
	return stp__digit(ch) < 16;
}

STP_STR_FN int64_t stp__strtol(const char *s, int64_t base)
{
	struct stp__num_state st = { s, 0, 0, 0 };
	int neg = s[0] == '-';
	char c0, c1;

	if (neg)
		st.start = 1;
	c0 = stp__at(s, st.start);
	c1 = c0 == '0' ? stp__at(s, st.start + 1) : '\0';
	if (base == 0) {
		if (c0 != '0')
			base = 10;
		else if ((c1 == 'x' || c1 == 'X') && stp__is_xdigit(stp__at(s, st.start + 2)))
			base = 16;
		else
			base = 8;
	}
	if (base == 16 && c0 == '0' && (c1 == 'x' || c1 == 'X'))
		st.start += 2;
	if (base < 2 || base > 36)
		return 0;
	st.base = (uint64_t)base;
	stp__loop(MAXSTRINGLEN, stp__num_step, &st);
	return neg ? (int64_t)(0 - st.v) : (int64_t)st.v;
}

/*
 * text_str: stap's _stp_text_str() on a string in memory.  One step reads
 * one character (a valid UTF-8 sequence of 2 to 4 bytes, or one byte) and
 * writes its escape when it fits in what is left of OUTLEN.
 */
struct stp__text_vars {
	int64_t i;		/* next byte of IN */
	int64_t inlen;		/* bytes of IN left to read */
	int64_t o;		/* next byte of OUT */
	int64_t outlen;		/* bytes of OUT left to write */
	int64_t esc;		/* the escape the end may cut into, or -1 */
	int64_t esc_len;
	int64_t c;		/* the last character read */
};

struct stp__text_state {
	const char *in;
	char *out;
	struct stp__text_vars *v;
};

STP_STR_FN void stp__put(struct stp__text_state *st, char ch)
{
	int64_t o = st->v->o;

	if (o >= 0 && o < STP_STR_MAX) {
		st->out[o] = ch;
		st->v->o = o + 1;
	}
}

STP_STR_FN unsigned char stp__in(const struct stp__text_state *st, int64_t k)
{
	int64_t i = st->v->i + k;

	return STP_IN_STR(i) ? (unsigned char)st->in[i] : 0;
}

/* Decode the character at IN[i]: its length in bytes, the code in *C. */
STP_STR_FN int stp__utf8(const struct stp__text_state *st, uint32_t *c)
{
	unsigned char b = stp__in(st, 0), b2;
	int n, k;
	uint32_t v;

	if ((b & 0xE0) == 0xC0 && st->v->inlen >= 2) {
		n = 2;
		v = b & 0x1F;
	} else if ((b & 0xF0) == 0xE0 && st->v->inlen >= 3) {
		n = 3;
		v = b & 0x0F;
	} else if ((b & 0xF8) == 0xF0 && st->v->inlen >= 4) {
		n = 4;
		v = b & 0x07;
	} else {
		*c = b;
		return 1;
	}
	for (k = 1; k < 4; k++) {
		if (k >= n)
			break;
		b2 = stp__in(st, k);
		if ((b2 & 0xC0) != 0x80) {
			*c = b;
			return 1;
		}
		v = (v << 6) | (b2 & 0x3F);
	}
	/* surrogates, beyond U+10FFFF, and overlong forms stay bytes */
	if ((v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF || v < 0x80 ||
	    (n == 3 && v < 0x800) || (n == 4 && v < 0x10000)) {
		*c = b;
		return 1;
	}
	*c = v;
	return n;
}

/* The letter of a short escape (\n), or 0 when C takes an octal one. */
STP_STR_FN char stp__esc_letter(uint32_t c)
{
	switch (c) {
	case '\a': return 'a';
	case '\b': return 'b';
	case '\f': return 'f';
	case '\n': return 'n';
	case '\r': return 'r';
	case '\t': return 't';
	case '\v': return 'v';
	case '"': return '"';
	case '\\': return '\\';
	default: return 0;
	}
}

STP_STR_FN char stp__hex_digit(uint32_t d)
{
	return (char)(d < 10 ? '0' + d : 'A' + d - 10);
}

STP_STR_FN void stp__put_escape(struct stp__text_state *st, uint32_t c, int n, int num)
{
	int k;

	if (num == 1) {
		stp__put(st, (char)c);
		return;
	}
	stp__put(st, '\\');
	if (n > 1) {
		stp__put(st, num == 6 ? 'u' : 'U');
		for (k = 7; k >= 0; k--)
			if (k < num - 2)
				stp__put(st, stp__hex_digit((c >> (k * 4)) & 0xF));
	} else if (num == 2) {
		stp__put(st, stp__esc_letter(c));
	} else {
		stp__put(st, (char)('0' + ((c >> 6) & 3)));
		stp__put(st, (char)('0' + ((c >> 3) & 7)));
		stp__put(st, (char)('0' + (c & 7)));
	}
}

STP_STR_STEP stp__text_step(uint64_t unused, void *state)
{
	struct stp__text_state *st = state;
	uint32_t c = 0;
	int n, num;

	if (st->v->inlen <= 0)
		return 1;
	n = stp__utf8(st, &c);
	st->v->c = c;
	if (c == 0 || st->v->outlen <= 0)
		return 1;
	st->v->i += n;
	st->v->inlen -= n;
	if (n > 1)
		num = c <= 0xFFFF ? 6 : 10;
	else if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\')
		num = 1;
	else
		num = stp__esc_letter(c) ? 2 : 4;
	if (num > 1 && st->v->esc < 0 && st->v->outlen - 3 < num) {
		st->v->esc = st->v->o;
		st->v->esc_len = num;
	}
	if (st->v->outlen < num)
		return 1;
	stp__put_escape(st, c, n, num);
	st->v->outlen -= num;
	return 0;
}

/* Close a quoted result: '"', and '"...' in place of its end when IN did not fit. */
STP_STR_FN void stp__text_close(struct stp__text_state *st)
{
	int64_t cut;

	if (st->v->c && st->v->inlen > 0) {
		cut = st->v->o - 3 + st->v->outlen;
		if (st->v->esc >= 0 && st->v->esc < cut && cut < st->v->esc + st->v->esc_len)
			cut = st->v->esc;
		if (cut >= 0 && cut < st->v->o)
			st->v->o = cut;
		stp__put(st, '"');
		stp__put(st, '.');
		stp__put(st, '.');
		stp__put(st, '.');
	} else {
		stp__put(st, '"');
	}
}

/* IN and OUT are different buffers. */
STP_STR_FN void stp__text_str(char *out, const char *in, int64_t inlen, int64_t outlen,
			      int64_t quoted)
{
	STP_VARS(struct stp__text_vars, v);
	struct stp__text_state st = { in, out, v };

	out[0] = '\0';
	if (!v)
		return;
	if (inlen <= 0 || inlen > STP_STR_MAX)
		inlen = STP_STR_MAX;
	if (outlen <= 0 || outlen > STP_STR_MAX)
		outlen = STP_STR_MAX;
	v->inlen = inlen;
	v->outlen = outlen;
	v->esc = -1;
	if (quoted) {
		v->outlen = (outlen < 5 ? 5 : outlen) - 2;
		stp__put(&st, '"');
	}
	stp__loop(MAXSTRINGLEN, stp__text_step, &st);
	if (quoted)
		stp__text_close(&st);
	if (v->o >= 0 && v->o < MAXSTRINGLEN)
		out[v->o] = '\0';
	else
		out[0] = '\0';
}

/*
 * The parts of a probe point that probefunc() and probemod() return,
 * taken from the point in OUT, in place.
 */
struct stp__pp_state {
	const char *s;
	int64_t start;		/* where the scan starts */
	int64_t at;		/* what it found, or -1 */
};

/* Whether S has function(" at I. */
STP_STR_FN int stp__function_at(const char *s, int64_t i)
{
	if (!STP_IN_STR(i) || !STP_IN_STR(i + 9))
		return 0;
	return s[i] == 'f' && s[i + 1] == 'u' && s[i + 2] == 'n' && s[i + 3] == 'c' &&
	       s[i + 4] == 't' && s[i + 5] == 'i' && s[i + 6] == 'o' && s[i + 7] == 'n' &&
	       s[i + 8] == '(' && s[i + 9] == '"';
}

STP_STR_STEP stp__function_step(uint64_t i, void *state)
{
	struct stp__pp_state *st = state;

	if (!STP_IN_STR(i) || !STP_IN_STR(i + 9) || st->s[i] == '\0')
		return 1;
	if (!stp__function_at(st->s, (int64_t)i))
		return 0;
	st->at = (int64_t)i + 10;
	return 1;
}

/* The index of the first C1 or C2, or of the NUL, at or after START of S. */
struct stp__upto_state {
	const char *s;
	int64_t start;
	int64_t at;		/* what it found, or STP_STR_MAX */
	char c1, c2;
};

STP_STR_STEP stp__upto_step(uint64_t i, void *state)
{
	struct stp__upto_state *st = state;
	int64_t k = st->start + (int64_t)i;
	char ch;

	if (!STP_IN_STR(k))
		return 1;
	ch = st->s[k];
	if (ch != '\0' && ch != st->c1 && ch != st->c2)
		return 0;
	st->at = k;
	return 1;
}

STP_STR_FN int64_t stp__upto(const char *s, int64_t start, char c1, char c2)
{
	struct stp__upto_state st = { s, start, STP_STR_MAX, c1, c2 };

	stp__loop(MAXSTRINGLEN, stp__upto_step, &st);
	return st.at;
}

/* Keep the name that starts at START of OUT: OUT becomes just that name. */
STP_STR_FN void stp__keep_name(char *out, int64_t start)
{
	/* a name in a probe point ends at its closing quote, or at '@' (function@file) */
	int64_t end = stp__upto(out, start, '"', '@');

	if (!STP_IN_STR(start) || end <= start || end >= STP_STR_MAX) {
		out[0] = '\0';
		return;
	}
	stp__copy(out, out + start, end - start);
}

/* kernel.function("vfs_read@fs/read_write.c:1").return -> vfs_read; "" when no function("). */
STP_STR_FN void stp__pp_function(char *out)
{
	struct stp__pp_state st = { out, 0, -1 };

	stp__loop(MAXSTRINGLEN, stp__function_step, &st);
	if (st.at < 0) {
		out[0] = '\0';
		return;
	}
	stp__keep_name(out, st.at);
}

/* kernel.* and kprobe.* -> kernel; module("ext4").* -> ext4; anything else -> "". */
STP_STR_FN void stp__pp_module(char *out)
{
	if (MAXSTRINGLEN < 16) {
		out[0] = '\0';
	} else if (out[0] == 'k' && out[1] == 'e' && out[2] == 'r' && out[3] == 'n' &&
		   out[4] == 'e' && out[5] == 'l' && out[6] == '.') {
		out[6] = '\0';
	} else if (out[0] == 'k' && out[1] == 'p' && out[2] == 'r' && out[3] == 'o' &&
		   out[4] == 'b' && out[5] == 'e' && out[6] == '.') {
		out[0] = 'k', out[1] = 'e', out[2] = 'r', out[3] = 'n', out[4] = 'e', out[5] = 'l';
		out[6] = '\0';
	} else if (out[0] == 'm' && out[1] == 'o' && out[2] == 'd' && out[3] == 'u' &&
		   out[4] == 'l' && out[5] == 'e' && out[6] == '(' && out[7] == '"') {
		stp__keep_name(out, 8);
	} else {
		out[0] = '\0';
	}
}

#endif
