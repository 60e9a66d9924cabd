/*
 * stp_regex.bpf.h - '=~' and '!~' in kernel context: walk a DFA that pass 3
 * built from the regular expression (translator/regex_dfa.c) over a string.
 *
 * For each regular expression the generated script.bpf.c writes three
 * tables into .rodata and instantiates a matcher for them:
 *
 *	static const uint8_t stp_re1_class[256] SEC(".rodata") = { ... };
 *	static const uint8_t stp_re1_flags[4] SEC(".rodata") = { ... };
 *	static const uint8_t stp_re1_next[4][3] SEC(".rodata") = { ... };
 *	STP_REGEX_MATCHER(stp_re1, 4, 3)
 *
 * which defines int64_t stp_re1_match(const char *s): 1 when the
 * expression matches anywhere in S, as regexec(REG_EXTENDED|REG_NOSUB)
 * answers.  CLASS maps a byte to its class, NEXT[state][class] is the
 * next state, FLAGS[state] has STP_REGEX_MATCH (a match was found: stop),
 * STP_REGEX_MATCH_END (a match if the string ends here) and STP_REGEX_DEAD
 * (no match can follow: stop, as an anchored pattern that failed).  State
 * 0 is the start.
 *
 * The walk is one bpf_loop() over at most MAXSTRINGLEN bytes (stp__loop
 * of stp_strings.h, which the including tapset.bpf.h has included), with
 * the string indexed by the iteration number and every table index
 * compared with the table's constant size right before the access, as
 * the verifier wants.  S points to MAXSTRINGLEN readable bytes.
 */
#ifndef STP_REGEX_BPF_H
#define STP_REGEX_BPF_H

#define STP_REGEX_MATCH 1
#define STP_REGEX_MATCH_END 2
#define STP_REGEX_DEAD 4

struct stp_regex_walk {
	const char *s;
	uint32_t state;
	int64_t matched;
};

#define STP_REGEX_MATCHER(name, nstates, nclasses)                                       \
STP_STR_STEP name##_step(uint64_t i, void *arg)                                         \
{                                                                                       \
	struct stp_regex_walk *w = arg;                                                 \
	uint32_t state = w->state, k;                                                   \
	uint8_t c = 0;                                                                  \
                                                                                        \
	if (state >= (nstates))                                                         \
		return 1;                                                               \
	if (STP_IN_STR(i))                                                              \
		c = (uint8_t)w->s[i];                                                   \
	if (c == 0) {                                                                   \
		w->matched = (name##_flags[state] & STP_REGEX_MATCH_END) != 0;          \
		return 1;                                                               \
	}                                                                               \
	k = name##_class[c];                                                            \
	if (k >= (nclasses))                                                            \
		return 1;                                                               \
	state = name##_next[state][k];                                                  \
	if (state >= (nstates))                                                         \
		return 1;                                                               \
	w->state = state;                                                               \
	if (name##_flags[state] & (STP_REGEX_MATCH | STP_REGEX_DEAD)) {                 \
		w->matched = (name##_flags[state] & STP_REGEX_MATCH) != 0;              \
		return 1;                                                               \
	}                                                                               \
	return 0;                                                                       \
}                                                                                       \
                                                                                        \
static __always_inline int64_t name##_match(const char *s)                              \
{                                                                                       \
	struct stp_regex_walk w = { s, 0, 0 };                                          \
                                                                                        \
	if (name##_flags[0] & STP_REGEX_MATCH)                                          \
		return 1;                                                               \
	stp__loop(MAXSTRINGLEN, name##_step, &w);                                       \
	return w.matched;                                                               \
}

#endif
