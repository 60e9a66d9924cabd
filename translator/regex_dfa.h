/*
 * regex_dfa.h - stap's regular expressions (POSIX extended syntax) compiled
 * to a minimal DFA whose tables kernel context walks (runtime/bpf/stp_regex.bpf.h).
 *
 * The DFA answers regexec()'s question for REG_EXTENDED | REG_NOSUB: does
 * the expression match anywhere in the string?  State 0 is the start; a
 * state flagged REGEX_MATCH means a match has been found (stop there), one
 * flagged REGEX_MATCH_END means a match if the string ends here (a
 * pattern ending in '$'), one flagged REGEX_DEAD cannot lead to a
 * match (an anchored pattern that failed).  Bytes are mapped to classes (bytes no part of
 * the expression tells apart share one), so the transition table is
 * nstates * nclasses bytes.
 */
#ifndef PMSTAP_REGEX_DFA_H
#define PMSTAP_REGEX_DFA_H

#include <stdint.h>
#include <stdio.h>

#define REGEX_MATCH 1
#define REGEX_MATCH_END 2
#define REGEX_DEAD 4		/* no match can follow: stop */

/* The most states a DFA may have: a state is one byte in the tables. */
#define REGEX_MAX_STATES 256

struct regex_dfa {
	int nstates;
	int nclasses;
	uint8_t cls[256];	/* byte -> class */
	uint8_t *next;		/* [state * nclasses + class] -> state */
	uint8_t *flags;		/* [state]: REGEX_MATCH, REGEX_MATCH_END */
};

/*
 * Compile RE (the pattern's bytes, escapes of the script's string literal
 * already undone) into D, with at most MAX_STATES states.  Returns 0, or
 * -1 with *ERR set to why (a static or malloc'd message that lives until
 * the next call).  Free D with regex_free().
 */
int regex_compile(const char *re, int max_states, struct regex_dfa *d, const char **err);
void regex_free(struct regex_dfa *d);

/* Walk D over S as the kernel matcher does; 1 on a match. */
int regex_match(const struct regex_dfa *d, const char *s);

/*
 * Write D to OUT as the tables and matcher instance of
 * runtime/bpf/stp_regex.bpf.h: NAME_class, NAME_flags, NAME_next and
 * STP_REGEX_MATCHER(NAME, ...), which defines NAME_match(s).  WHAT heads
 * them as a comment.
 */
void regex_emit(FILE *out, const char *name, const struct regex_dfa *d, const char *what);

/*
 * Write RE's NFA to OUT as the program runtime/kmod/stp_kmod_regex.h runs
 * for matched() (a Pike VM with captures): NAME_sets, NAME_prog and
 * NAME_re.  Returns its number of states, or -1 with *ERR set when RE
 * does not parse or needs more than MAX_STATES.
 */
int regex_emit_captures(FILE *out, const char *name, const char *re, int max_states,
			const char **err);

#endif
