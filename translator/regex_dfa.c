/*
 * regex_dfa.c - stap's regular expressions -> NFA -> DFA -> minimal DFA, for
 * '=~' and '!~' in kernel context (see regex_dfa.h).
 *
 * The syntax is POSIX's extended one, as glibc's regcomp(REG_EXTENDED)
 * reads it: literals, '\' escapes, '.', bracket expressions with ranges,
 * negation and [:class:], '*' '+' '?' '{m}' '{m,}' '{m,n}' '{,n}', '|',
 * groups, and the anchors '^' and '$' (at the string's start and end
 * only: no REG_NEWLINE).  Back-references and word boundaries have no
 * DFA and are refused.
 *
 * The pattern is parsed into a tree, the tree becomes a Thompson NFA
 * (repetition counts copy their operand), and subset construction gives a
 * DFA searching for the pattern anywhere: every step adds the NFA's start
 * again.  '^' is an epsilon edge taken only before the first byte, '$'
 * one taken only at the end, so a DFA state remembers, besides "matched",
 * whether the end of the string here would complete a match.  Moore's
 * partition refinement then merges equivalent states, and byte classes
 * with equal columns are merged last.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include "regex_dfa.h"

#define RX_DUP_MAX 255		/* the largest repetition count */
#define RX_MAX_NFA 20000	/* NFA states */
#define RX_MAX_RAW 8192		/* DFA states before minimization */

static char rx_msg[200];

/* ---- the tree ------------------------------------------------------------------ */

enum rx_kind { RX_SET, RX_CAT, RX_ALT, RX_REP, RX_BOL, RX_EOL, RX_EMPTY, RX_GROUP };

struct rx_node {
	enum rx_kind kind;
	struct rx_node *a, *b;
	int min, max;		/* RX_REP; max -1: no limit.  RX_GROUP: min is its number */
	uint64_t set[4];	/* RX_SET: the bytes it matches */
	struct rx_node *all;	/* every node, for freeing */
};

struct rx_parser {
	const unsigned char *p;
	struct rx_node *nodes;
	const char *err;
	int depth;
	bool groups;		/* keep the groups (RX_GROUP): captures */
	int ngroups;
};

static struct rx_node *node(struct rx_parser *P, enum rx_kind kind, struct rx_node *a,
			    struct rx_node *b)
{
	struct rx_node *n = calloc(1, sizeof(*n));

	if (!n) {
		P->err = "out of memory";
		return NULL;
	}
	n->kind = kind;
	n->a = a;
	n->b = b;
	n->all = P->nodes;
	P->nodes = n;
	return n;
}

static void set_add(uint64_t *set, int c)
{
	set[(c & 255) >> 6] |= 1ull << (c & 63);
}

static bool set_has(const uint64_t *set, int c)
{
	return set[(c & 255) >> 6] >> (c & 63) & 1;
}

static struct rx_node *fail(struct rx_parser *P, const char *why)
{
	if (!P->err)
		P->err = why;
	return NULL;
}

/* The bytes of [:NAME:]; false for an unknown name. */
static bool class_add(uint64_t *set, const char *name, size_t len)
{
	static const struct {
		const char *name;
		int (*is)(int);
	} classes[] = {
		{ "alpha", isalpha }, { "digit", isdigit }, { "alnum", isalnum },
		{ "upper", isupper }, { "lower", islower }, { "space", isspace },
		{ "blank", isblank }, { "punct", ispunct }, { "print", isprint },
		{ "graph", isgraph }, { "cntrl", iscntrl }, { "xdigit", isxdigit },
	};

	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		if (strlen(classes[i].name) != len || memcmp(classes[i].name, name, len))
			continue;
		for (int c = 1; c < 128; c++)
			if (classes[i].is(c))
				set_add(set, c);
		return true;
	}
	return false;
}

/*
 * One element of a bracket expression at P->p: a byte (returned), or a
 * [:class:] added to SET (returns -2), or -1 on an error.
 */
static int bracket_elem(struct rx_parser *P, uint64_t *set)
{
	const unsigned char *s = P->p, *e;

	if (s[0] == '[' && (s[1] == ':' || s[1] == '=' || s[1] == '.')) {
		char kind = (char)s[1];

		for (e = s + 2; *e && !(e[0] == kind && e[1] == ']'); e++)
			;
		if (!*e)
			return fail(P, "unterminated [: :], [= =] or [. .]"), -1;
		P->p = e + 2;
		if (kind == ':') {
			if (!class_add(set, (const char *)s + 2, (size_t)(e - s - 2)))
				return fail(P, "unknown character class"), -1;
			return -2;
		}
		if (e - s - 2 != 1)
			return fail(P, "only single-byte collating elements are supported"), -1;
		return s[2];
	}
	if (!*s)
		return fail(P, "unterminated bracket expression"), -1;
	P->p++;
	return *s;
}

/* bracket := '[' '^'? ']'? elem* ']' ; elem := byte | byte '-' byte | [:class:] */
static struct rx_node *bracket(struct rx_parser *P)
{
	struct rx_node *n = node(P, RX_SET, NULL, NULL);
	bool neg = false, first = true;
	int lo, hi;

	if (!n)
		return NULL;
	if (*P->p == '^') {
		neg = true;
		P->p++;
	}
	while (first || *P->p != ']') {
		first = false;
		lo = bracket_elem(P, n->set);
		if (lo == -1)
			return NULL;
		if (lo == -2)
			continue;
		if (P->p[0] == '-' && P->p[1] && P->p[1] != ']') {
			P->p++;
			hi = bracket_elem(P, n->set);
			if (hi == -1)
				return NULL;
			if (hi == -2 || hi < lo)
				return fail(P, "invalid range end");
		} else {
			hi = lo;
		}
		for (int c = lo; c <= hi; c++)
			set_add(n->set, c);
	}
	P->p++;
	if (neg)
		for (int i = 0; i < 4; i++)
			n->set[i] = ~n->set[i];
	n->set[0] &= ~1ull;	/* never the NUL that ends the string */
	return n;
}

static struct rx_node *byte_node(struct rx_parser *P, int c)
{
	struct rx_node *n = node(P, RX_SET, NULL, NULL);

	if (n)
		set_add(n->set, c);
	return n;
}

/* '\' C: a literal, or \w \W \s \S as glibc reads them. */
static struct rx_node *escape(struct rx_parser *P)
{
	int c = *P->p++;
	struct rx_node *n;

	if (!c)
		return fail(P, "trailing backslash");
	if (c >= '1' && c <= '9')
		return fail(P, "back-references (\\1 to \\9) are not supported");
	if (strchr("bB<>`'", c))
		return fail(P, "word and buffer anchors (\\b \\B \\< \\> \\` \\') are not supported");
	if (c != 'w' && c != 'W' && c != 's' && c != 'S')
		return byte_node(P, c);
	n = node(P, RX_SET, NULL, NULL);
	if (!n)
		return NULL;
	if (c == 'w' || c == 'W') {
		class_add(n->set, "alnum", 5);
		set_add(n->set, '_');
	} else {
		class_add(n->set, "space", 5);
	}
	if (c == 'W' || c == 'S')
		for (int i = 0; i < 4; i++)
			n->set[i] = ~n->set[i];
	n->set[0] &= ~1ull;
	return n;
}

static struct rx_node *alternation(struct rx_parser *P);

/* atom := '(' alternation ')' | '[' bracket | '.' | '^' | '$' | '\' c | c */
static struct rx_node *atom(struct rx_parser *P)
{
	int c = *P->p++;
	struct rx_node *n;

	switch (c) {
	case '(':
		if (++P->depth > 100)
			return fail(P, "groups nested too deeply");
		c = ++P->ngroups;	/* numbered by their '(', as POSIX does */
		n = alternation(P);
		P->depth--;
		if (!n)
			return NULL;
		if (*P->p != ')')
			return fail(P, "unmatched '('");
		P->p++;
		if (!P->groups)
			return n;
		n = node(P, RX_GROUP, n, NULL);
		if (n)
			n->min = c;
		return n;
	case '[':
		return bracket(P);
	case '.':
		n = node(P, RX_SET, NULL, NULL);
		if (n)
			memset(n->set, 0xff, sizeof(n->set));
		if (n)
			n->set[0] &= ~1ull;
		return n;
	case '^':
		return node(P, RX_BOL, NULL, NULL);
	case '$':
		return node(P, RX_EOL, NULL, NULL);
	case '\\':
		return escape(P);
	case '*':
	case '+':
	case '?':
	case '{':
		return fail(P, "nothing to repeat before a '*', '+', '?' or '{'");
	default:
		return byte_node(P, c);
	}
}

static int number(struct rx_parser *P)
{
	int v = 0;

	if (!isdigit(*P->p))
		return -1;
	while (isdigit(*P->p)) {
		v = v * 10 + (*P->p++ - '0');
		if (v > RX_DUP_MAX)
			return fail(P, "repetition count above 255"), -2;
	}
	return v;
}

/* '{' m? (',' n?)? '}', after the '{' */
static bool bounds(struct rx_parser *P, int *min, int *max)
{
	*min = number(P);
	if (*min == -2)
		return false;
	*max = *min;
	if (*P->p == ',') {
		P->p++;
		*max = number(P);
		if (*max == -2)
			return false;
	} else if (*min < 0) {
		return fail(P, "invalid repetition count"), false;
	}
	if (*min < 0)
		*min = 0;
	if (*P->p != '}')
		return fail(P, "unmatched '{'"), false;
	P->p++;
	if (*max >= 0 && *max < *min)
		return fail(P, "invalid repetition count: the maximum is below the minimum"), false;
	return true;
}

/* repeat := atom ('*' | '+' | '?' | '{' bounds '}')* */
static struct rx_node *repeat(struct rx_parser *P)
{
	struct rx_node *n = atom(P), *r;
	int min, max;

	while (n && strchr("*+?{", *P->p) && *P->p) {
		char op = (char)*P->p++;

		if (op == '{') {
			if (!bounds(P, &min, &max))
				return NULL;
		} else {
			min = op == '+';
			max = op == '?' ? 1 : -1;
		}
		r = node(P, RX_REP, n, NULL);
		if (!r)
			return NULL;
		r->min = min;
		r->max = max;
		n = r;
	}
	return n;
}

/* concatenation := repeat* */
static struct rx_node *concatenation(struct rx_parser *P)
{
	struct rx_node *n = node(P, RX_EMPTY, NULL, NULL), *r;

	while (n && *P->p && *P->p != '|' && !(*P->p == ')' && P->depth)) {
		r = repeat(P);
		if (!r)
			return NULL;
		n = n->kind == RX_EMPTY ? r : node(P, RX_CAT, n, r);
	}
	return n;
}

/* alternation := concatenation ('|' concatenation)* */
static struct rx_node *alternation(struct rx_parser *P)
{
	struct rx_node *n = concatenation(P), *r;

	while (n && *P->p == '|') {
		P->p++;
		r = concatenation(P);
		if (!r)
			return NULL;
		n = node(P, RX_ALT, n, r);
	}
	return n;
}

/* ---- the NFA ------------------------------------------------------------------- */

/* in this order in runtime/kmod/stp_kmod_regex.h too */
enum nfa_kind { NFA_SET, NFA_SPLIT, NFA_BOL, NFA_EOL, NFA_MATCH, NFA_SAVE };

/* SPLIT: out1 is preferred (greedy repetition, the left alternative), as a Pike VM runs it */
struct nfa_state {
	enum nfa_kind kind;
	int out1, out2;		/* -1: none */
	const uint64_t *set;	/* NFA_SET */
	int slot;		/* NFA_SAVE: 2 * group (its start) or 2 * group + 1 (its end) */
};

struct nfa {
	struct nfa_state *st;
	int n, cap;
	bool full;
};

static int nfa_add(struct nfa *N, enum nfa_kind kind, const uint64_t *set)
{
	struct nfa_state *st;

	if (N->n >= RX_MAX_NFA) {
		N->full = true;
		return 0;
	}
	if (N->n == N->cap) {
		N->cap = N->cap ? N->cap * 2 : 64;
		st = realloc(N->st, (size_t)N->cap * sizeof(*st));
		if (!st) {
			N->full = true;
			return 0;
		}
		N->st = st;
	}
	N->st[N->n] = (struct nfa_state){ kind, -1, -1, set, 0 };
	return N->n++;
}

/*
 * A fragment: its entry state and its exit, a state whose out1 is still
 * to be connected (every fragment ends in one SPLIT used as a join).
 */
struct frag {
	int in, out;
};

static struct frag build(struct nfa *N, const struct rx_node *t);

static struct frag frag_empty(struct nfa *N)
{
	int s = nfa_add(N, NFA_SPLIT, NULL);

	return (struct frag){ s, s };
}

static void nfa_link(struct nfa *N, int from, int to)
{
	if (N->full)
		return;
	if (N->st[from].out1 < 0)
		N->st[from].out1 = to;
	else
		N->st[from].out2 = to;
}

static struct frag build_rep(struct nfa *N, const struct rx_node *t)
{
	struct frag f = frag_empty(N), x;
	int i, split;

	for (i = 0; i < t->min && !N->full; i++) {
		x = build(N, t->a);
		nfa_link(N, f.out, x.in);
		f.out = x.out;
	}
	if (t->max < 0) {		/* x*: split -> x -> back to split */
		split = nfa_add(N, NFA_SPLIT, NULL);
		x = build(N, t->a);
		nfa_link(N, f.out, split);
		nfa_link(N, split, x.in);
		nfa_link(N, x.out, split);
		f.out = nfa_add(N, NFA_SPLIT, NULL);
		nfa_link(N, split, f.out);
		return f;
	}
	for (int end = nfa_add(N, NFA_SPLIT, NULL); ; i++) {
		if (i >= t->max || N->full) {
			nfa_link(N, f.out, end);
			f.out = end;
			return f;
		}
		split = nfa_add(N, NFA_SPLIT, NULL);	/* x? */
		nfa_link(N, f.out, split);
		nfa_link(N, split, end);
		x = build(N, t->a);
		nfa_link(N, split, x.in);
		f.out = x.out;
	}
}

static struct frag build(struct nfa *N, const struct rx_node *t)
{
	struct frag f, a, b;
	int s;

	switch (t->kind) {
	case RX_SET:
	case RX_BOL:
	case RX_EOL:
		s = nfa_add(N, t->kind == RX_SET ? NFA_SET : t->kind == RX_BOL ? NFA_BOL : NFA_EOL,
			    t->set);
		f = frag_empty(N);
		nfa_link(N, s, f.in);
		return (struct frag){ s, f.out };
	case RX_CAT:
		a = build(N, t->a);
		b = build(N, t->b);
		nfa_link(N, a.out, b.in);
		return (struct frag){ a.in, b.out };
	case RX_ALT:
		s = nfa_add(N, NFA_SPLIT, NULL);
		a = build(N, t->a);
		b = build(N, t->b);
		f = frag_empty(N);
		nfa_link(N, s, a.in);
		nfa_link(N, s, b.in);
		nfa_link(N, a.out, f.in);
		nfa_link(N, b.out, f.in);
		return (struct frag){ s, f.out };
	case RX_REP:
		return build_rep(N, t);
	case RX_GROUP:
		s = nfa_add(N, NFA_SAVE, NULL);
		a = build(N, t->a);
		f.in = nfa_add(N, NFA_SAVE, NULL);
		if (N->full)
			return a;
		N->st[s].slot = 2 * t->min;
		N->st[f.in].slot = 2 * t->min + 1;
		nfa_link(N, s, a.in);
		nfa_link(N, a.out, f.in);
		b = frag_empty(N);
		nfa_link(N, f.in, b.in);
		return (struct frag){ s, b.out };
	case RX_EMPTY:
	default:
		return frag_empty(N);
	}
}

/* ---- subset construction --------------------------------------------------------- */

struct dfa_build {
	const struct nfa *N;
	int words;		/* uint64_t words of an NFA state set */
	int start;		/* the NFA's start */
	uint64_t *sets;		/* [raw state] -> NFA state set */
	uint8_t *first;		/* [raw state]: the initial state (before any byte) */
	int *next;		/* [raw state * nclasses + class] */
	uint8_t *flags;
	int n, cap, nclasses;
	int *hash;		/* open addressing: raw state + 1, 0 empty */
	uint8_t cls[256];
	int rep[256];		/* a byte of each class */
	int *stack;
};

static uint64_t *set_of(struct dfa_build *B, int i)
{
	return B->sets + (size_t)i * (size_t)B->words;
}

/* Close SET under epsilon edges; '^' edges when AT_START, '$' edges when AT_END. */
static void closure(struct dfa_build *B, uint64_t *set, bool at_start, bool at_end)
{
	const struct nfa *N = B->N;
	int sp = 0;

	for (int i = 0; i < N->n; i++)
		if (set[i >> 6] >> (i & 63) & 1)
			B->stack[sp++] = i;
	while (sp > 0) {
		const struct nfa_state *st = &N->st[B->stack[--sp]];
		int outs[2] = { -1, -1 };

		if (st->kind == NFA_SPLIT) {
			outs[0] = st->out1;
			outs[1] = st->out2;
		} else if ((st->kind == NFA_BOL && at_start) || (st->kind == NFA_EOL && at_end)) {
			outs[0] = st->out1;
		}
		for (int k = 0; k < 2; k++) {
			int o = outs[k];

			if (o < 0 || set[o >> 6] >> (o & 63) & 1)
				continue;
			set[o >> 6] |= 1ull << (o & 63);
			B->stack[sp++] = o;
		}
	}
}

static bool has_match(struct dfa_build *B, const uint64_t *set)
{
	for (int i = 0; i < B->N->n; i++)
		if (B->N->st[i].kind == NFA_MATCH && (set[i >> 6] >> (i & 63) & 1))
			return true;
	return false;
}

#define RX_HASH_SIZE (RX_MAX_RAW * 2)

static unsigned hash_set(const struct dfa_build *B, const uint64_t *set, bool first)
{
	uint64_t h = first ? 0x9e3779b97f4a7c15ull : 0;

	for (int i = 0; i < B->words; i++)
		h = (h ^ set[i]) * 0x100000001b3ull;
	return (unsigned)(h ^ h >> 29) % RX_HASH_SIZE;
}

static bool grow(struct dfa_build *B)
{
	size_t bytes = (size_t)B->words * sizeof(uint64_t);
	void *p;

	B->cap = B->cap ? B->cap * 2 : 32;
	if (!(p = realloc(B->sets, (size_t)B->cap * bytes)))
		return false;
	B->sets = p;
	if (!(p = realloc(B->first, (size_t)B->cap)))
		return false;
	B->first = p;
	if (!(p = realloc(B->flags, (size_t)B->cap)))
		return false;
	B->flags = p;
	if (!(p = realloc(B->next, (size_t)B->cap * (size_t)B->nclasses * sizeof(int))))
		return false;
	B->next = p;
	return true;
}

/* The raw state for SET (closed), made if new; -1 when there are too many. */
static int intern(struct dfa_build *B, const uint64_t *set, bool first)
{
	size_t bytes = (size_t)B->words * sizeof(uint64_t);
	unsigned h = hash_set(B, set, first);
	uint64_t *tmp;
	int i;

	for (; (i = B->hash[h] - 1) >= 0; h = (h + 1) % RX_HASH_SIZE)
		if (B->first[i] == first && !memcmp(set_of(B, i), set, bytes))
			return i;
	if (B->n >= RX_MAX_RAW || (B->n == B->cap && !grow(B)))
		return -1;
	memcpy(set_of(B, B->n), set, bytes);
	B->first[B->n] = first;
	B->hash[h] = B->n + 1;
	tmp = malloc(bytes);
	if (!tmp)
		return -1;
	memcpy(tmp, set, bytes);
	closure(B, tmp, first, true);
	B->flags[B->n] = has_match(B, set) ? REGEX_MATCH | REGEX_MATCH_END
					   : has_match(B, tmp) ? REGEX_MATCH_END : 0;
	free(tmp);
	return B->n++;
}

/* Bytes that no NFA set tells apart share a class. */
static void byte_classes(struct dfa_build *B)
{
	int split[512], n;

	memset(B->cls, 0, sizeof(B->cls));
	B->nclasses = 1;
	for (int i = 0; i < B->N->n; i++) {
		const uint64_t *set = B->N->st[i].set;

		if (B->N->st[i].kind != NFA_SET)
			continue;
		for (int k = 0; k < 512; k++)
			split[k] = -1;
		n = 0;
		for (int c = 0; c < 256; c++) {
			int key = B->cls[c] * 2 + set_has(set, c);

			if (split[key] < 0)
				split[key] = n++;
			B->cls[c] = (uint8_t)split[key];
		}
		B->nclasses = n;
	}
	for (int c = 255; c >= 0; c--)
		B->rep[B->cls[c]] = c;
}

static int subset(struct dfa_build *B)
{
	uint64_t *cur = calloc((size_t)B->words, sizeof(uint64_t));
	uint64_t *start = calloc((size_t)B->words, sizeof(uint64_t));
	int rc = 0;

	if (!cur || !start) {
		free(cur);
		free(start);
		return -1;
	}
	start[B->start >> 6] |= 1ull << (B->start & 63);
	memcpy(cur, start, (size_t)B->words * sizeof(uint64_t));
	closure(B, cur, true, false);
	closure(B, start, false, false);
	if (intern(B, cur, true) < 0)
		rc = -1;
	for (int d = 0; rc == 0 && d < B->n; d++) {
		for (int k = 0; k < B->nclasses; k++) {
			int c = B->rep[k], t;

			if (B->flags[d] & REGEX_MATCH) {	/* matched: stay */
				B->next[d * B->nclasses + k] = d;
				continue;
			}
			memcpy(cur, start, (size_t)B->words * sizeof(uint64_t));
			for (int i = 0; i < B->N->n; i++) {
				const struct nfa_state *st = &B->N->st[i];

				if (st->kind == NFA_SET && (set_of(B, d)[i >> 6] >> (i & 63) & 1) &&
				    set_has(st->set, c))
					cur[st->out1 >> 6] |= 1ull << (st->out1 & 63);
			}
			closure(B, cur, false, false);
			t = intern(B, cur, false);
			if (t < 0) {
				rc = -1;
				break;
			}
			B->next[d * B->nclasses + k] = t;
		}
	}
	free(cur);
	free(start);
	return rc;
}

/* ---- minimization ---------------------------------------------------------------- */

/* Moore: split blocks by flags, then by the blocks their transitions reach. */
static int minimize(struct dfa_build *B, int *block)
{
	int n = B->n, k = B->nclasses, nblocks = 0, prev = -1;
	int *nb = malloc((size_t)n * sizeof(int));

	if (!nb)
		return -1;
	for (int i = 0; i < n; i++)
		block[i] = B->flags[i];
	while (nblocks != prev) {
		prev = nblocks;
		nblocks = 0;
		for (int i = 0; i < n; i++) {
			int j;

			for (j = 0; j < i; j++) {
				if (block[j] != block[i])
					continue;
				int c;

				for (c = 0; c < k; c++)
					if (block[B->next[i * k + c]] != block[B->next[j * k + c]])
						break;
				if (c == k)
					break;
			}
			nb[i] = j < i ? nb[j] : nblocks++;
		}
		memcpy(block, nb, (size_t)n * sizeof(int));
	}
	free(nb);
	return nblocks;
}

/* Merge byte classes whose columns are equal in D. */
static void merge_classes(struct regex_dfa *d)
{
	int map[256], n = 0, k = d->nclasses;
	uint8_t *next;

	for (int c = 0; c < k; c++) {
		int j;

		map[c] = -1;
		for (j = 0; j < c && map[c] < 0; j++) {
			int s;

			for (s = 0; s < d->nstates; s++)
				if (d->next[s * k + c] != d->next[s * k + j])
					break;
			if (s == d->nstates)
				map[c] = map[j];
		}
		if (map[c] < 0) {
			map[c] = n++;
			for (int s = 0; s < d->nstates; s++)
				d->next[s * k + map[c]] = d->next[s * k + c];	/* compact in place */
		}
	}
	next = malloc((size_t)d->nstates * (size_t)n);
	if (!next)
		return;
	for (int s = 0; s < d->nstates; s++)
		for (int c = 0; c < n; c++)
			next[s * n + c] = d->next[s * k + c];
	free(d->next);
	d->next = next;
	d->nclasses = n;
	for (int b = 0; b < 256; b++)
		d->cls[b] = (uint8_t)map[d->cls[b]];
}

/* Flag the states from which no match can be reached: a walk may stop there. */
static void mark_dead(struct regex_dfa *d)
{
	bool changed = true;

	for (int i = 0; i < d->nstates; i++)
		if (!(d->flags[i] & (REGEX_MATCH | REGEX_MATCH_END)))
			d->flags[i] |= REGEX_DEAD;
	while (changed) {
		changed = false;
		for (int i = 0; i < d->nstates; i++) {
			if (!(d->flags[i] & REGEX_DEAD))
				continue;
			for (int c = 0; c < d->nclasses; c++) {
				if (!(d->flags[d->next[i * d->nclasses + c]] & REGEX_DEAD)) {
					d->flags[i] &= (uint8_t)~REGEX_DEAD;
					changed = true;
					break;
				}
			}
		}
	}
}

static int finish(struct dfa_build *B, int max_states, struct regex_dfa *d)
{
	int *block = malloc((size_t)B->n * sizeof(int)), nblocks;

	if (!block)
		return -1;
	nblocks = minimize(B, block);
	if (nblocks > max_states) {
		free(block);
		snprintf(rx_msg, sizeof(rx_msg), "its automaton needs %d states, more than %d",
			 nblocks, max_states);
		return -2;
	}
	d->nstates = nblocks;
	d->nclasses = B->nclasses;
	memcpy(d->cls, B->cls, sizeof(d->cls));
	d->next = malloc((size_t)nblocks * (size_t)B->nclasses);
	d->flags = malloc((size_t)nblocks);
	if (!d->next || !d->flags) {
		free(block);
		return -1;
	}
	/* block 0 holds raw state 0, the start: blocks are numbered in state order */
	for (int i = 0; i < B->n; i++) {
		d->flags[block[i]] = B->flags[i];
		for (int c = 0; c < B->nclasses; c++)
			d->next[block[i] * B->nclasses + c] = (uint8_t)block[B->next[i * B->nclasses + c]];
	}
	free(block);
	merge_classes(d);
	mark_dead(d);
	return 0;
}

/* ---- the entry points ------------------------------------------------------------ */

static void free_tree(struct rx_node *n)
{
	while (n) {
		struct rx_node *all = n->all;

		free(n);
		n = all;
	}
}

static int compile_tree(const struct rx_node *t, int max_states, struct regex_dfa *d,
			const char **err)
{
	struct nfa N = { 0 };
	struct dfa_build B = { .N = &N };
	struct frag f = build(&N, t);
	int rc = -1;

	B.start = f.in;
	nfa_link(&N, f.out, nfa_add(&N, NFA_MATCH, NULL));
	if (N.full) {
		*err = "it is too large (over 20000 automaton states before determinization)";
		free(N.st);
		return -1;
	}
	B.words = (N.n + 63) / 64;
	B.stack = malloc((size_t)N.n * 2 * sizeof(int));
	B.hash = calloc(RX_HASH_SIZE, sizeof(int));
	byte_classes(&B);
	if (B.stack && B.hash && subset(&B) == 0) {
		rc = finish(&B, max_states, d);
		if (rc == -2)
			*err = rx_msg;
		else if (rc)
			*err = "out of memory";
	} else if (B.stack && B.n >= RX_MAX_RAW) {
		snprintf(rx_msg, sizeof(rx_msg), "its automaton needs more than %d states",
			 max_states);
		*err = rx_msg;
	} else {
		*err = "out of memory";
	}
	free(B.sets);
	free(B.first);
	free(B.next);
	free(B.flags);
	free(B.stack);
	free(B.hash);
	free(N.st);
	return rc ? -1 : 0;
}

int regex_compile(const char *re, int max_states, struct regex_dfa *d, const char **err)
{
	struct rx_parser P = { .p = (const unsigned char *)re };
	struct rx_node *t;
	int rc;

	memset(d, 0, sizeof(*d));
	t = alternation(&P);
	if (t && *P.p == ')')
		t = fail(&P, "unmatched ')'");
	if (!t) {
		snprintf(rx_msg, sizeof(rx_msg), "%s at offset %d", P.err ? P.err : "syntax error",
			 (int)(P.p - (const unsigned char *)re));
		*err = rx_msg;
		free_tree(P.nodes);
		return -1;
	}
	rc = compile_tree(t, max_states, d, err);
	free_tree(P.nodes);
	if (rc)
		regex_free(d);
	return rc;
}

void regex_free(struct regex_dfa *d)
{
	free(d->next);
	free(d->flags);
	d->next = d->flags = NULL;
}

int regex_match(const struct regex_dfa *d, const char *s)
{
	int state = 0;

	if (d->flags[0] & REGEX_MATCH)
		return 1;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		state = d->next[state * d->nclasses + d->cls[*p]];
		if (d->flags[state] & (REGEX_MATCH | REGEX_DEAD))
			return (d->flags[state] & REGEX_MATCH) != 0;
	}
	return (d->flags[state] & REGEX_MATCH_END) != 0;
}

/* ---- the tables as C ------------------------------------------------------------- */

static void emit_bytes(FILE *out, const uint8_t *v, int n, const char *indent)
{
	for (int i = 0; i < n; i++)
		fprintf(out, "%s%u,%s", i % 16 ? " " : indent, v[i],
			i % 16 == 15 || i == n - 1 ? "\n" : "");
}

void regex_emit(FILE *out, const char *name, const struct regex_dfa *d, const char *what)
{
	fputs("/* ", out);
	for (const char *p = what; *p; p++) {	/* a pattern may hold the end of a comment */
		fputc(*p, out);
		if (p[0] == '*' && p[1] == '/')
			fputc(' ', out);
	}
	fprintf(out, ": %d states, %d byte classes */\n", d->nstates, d->nclasses);
	fprintf(out, "static const uint8_t %s_class[256] SEC(\".rodata\") = {\n", name);
	emit_bytes(out, d->cls, 256, "\t");
	fprintf(out, "};\nstatic const uint8_t %s_flags[%d] SEC(\".rodata\") = {\n", name,
		d->nstates);
	emit_bytes(out, d->flags, d->nstates, "\t");
	fprintf(out, "};\nstatic const uint8_t %s_next[%d][%d] SEC(\".rodata\") = {\n", name,
		d->nstates, d->nclasses);
	for (int s = 0; s < d->nstates; s++) {
		fprintf(out, "\t{\n");
		emit_bytes(out, d->next + s * d->nclasses, d->nclasses, "\t\t");
		fprintf(out, "\t},\n");
	}
	fprintf(out, "};\nSTP_REGEX_MATCHER(%s, %d, %d)\n\n", name, d->nstates, d->nclasses);
}

/* ---- the NFA as a program, for captures ------------------------------------------ */

/* The SET states' byte sets, once each, as C; their indexes in IDX. */
static void emit_sets(FILE *out, const char *name, const struct nfa *N, int *idx)
{
	int n = 0;

	fprintf(out, "static const uint64_t %s_sets[][4] = {\n", name);
	for (int i = 0; i < N->n; i++) {
		const uint64_t *set = N->st[i].set;

		if (N->st[i].kind != NFA_SET)
			continue;
		idx[i] = n++;
		fprintf(out, "\t{ %#llxull, %#llxull, %#llxull, %#llxull },\n",
			(unsigned long long)set[0], (unsigned long long)set[1],
			(unsigned long long)set[2], (unsigned long long)set[3]);
	}
	if (!n)
		fprintf(out, "\t{ 0, 0, 0, 0 },\n");
	fprintf(out, "};\n");
}

int regex_emit_captures(FILE *out, const char *name, const char *re, int max_states,
			const char **err)
{
	struct rx_parser P = { .p = (const unsigned char *)re, .groups = true };
	struct rx_node *t = alternation(&P);
	struct nfa N = { 0 };
	struct frag f;
	int *idx;

	if (!t || *P.p == ')') {
		*err = "a syntax error";
		free_tree(P.nodes);
		return -1;
	}
	f = build(&N, t);
	nfa_link(&N, f.out, nfa_add(&N, NFA_MATCH, NULL));
	free_tree(P.nodes);
	idx = calloc((size_t)N.n + 1, sizeof(int));
	if (N.full || N.n > max_states || !idx) {
		snprintf(rx_msg, sizeof(rx_msg), "its automaton for matched() needs more than %d "
			 "states", max_states);
		*err = rx_msg;
		free(N.st);
		free(idx);
		return -1;
	}
	emit_sets(out, name, &N, idx);
	fprintf(out, "static const struct stp_kmod_re_insn %s_prog[%d] = {\n", name, N.n);
	for (int i = 0; i < N.n; i++) {
		const struct nfa_state *st = &N.st[i];

		fprintf(out, "\t{ %d, %d, %d, %d },\n", st->kind, st->out1, st->out2,
			st->kind == NFA_SET ? idx[i] : st->slot);
	}
	fprintf(out, "};\nstatic const struct stp_kmod_re %s_re = { %s_prog, %s_sets, %d, %d, %d };"
		"\n\n", name, name, name, N.n, f.in, P.ngroups + 1);
	free(N.st);
	free(idx);
	return N.n;
}
