/*
 * stp_kmod_regex.h - matched() in a module's handlers: after '=~' found a
 * match (the DFA of runtime/bpf/stp_regex.bpf.h), the expression's NFA
 * (translator/regex_dfa.c, regex_emit_captures) runs as a Pike VM over
 * the string to find where its subexpressions matched.
 *
 * The match is POSIX's leftmost-longest: the earliest start, then the
 * longest end; its subexpressions are those of the preferred path to it
 * (greedy repetitions, left alternatives first), which is what regexec()
 * reports for all but ambiguous expressions.  Threads, marks and the
 * explicit stack live in the CPU's context (no recursion on the kernel's
 * stack, nothing allocated); the string is copied there for matched().
 *
 * Included by stp_context.bpf.h (STP_KMOD): uses struct context.
 */
#ifndef STP_KMOD_REGEX_H
#define STP_KMOD_REGEX_H

/* translator/regex_dfa.c's enum nfa_kind */
enum { STP_RE_SET, STP_RE_SPLIT, STP_RE_BOL, STP_RE_EOL, STP_RE_MATCH, STP_RE_SAVE };

#define STP_RE_NONE ((int16_t)-1)

/* Follow the epsilon edges from PC at POS into LIST, in priority order (no recursion). */
static __always_inline void stp__re_add(struct stp_kmod_re_vm *vm, const struct stp_kmod_re *re,
					struct stp_kmod_re_thread *list, uint32_t *n, int pc,
					int16_t *caps, int pos, int len)
{
	struct stp__re_entry *stack = vm->stack;
	uint32_t sp = 0;

	stack[sp++] = (struct stp__re_entry){ (int16_t)pc, 0, 0 };
	while (sp > 0) {
		struct stp__re_entry e = stack[--sp];
		const struct stp_kmod_re_insn *in;

		if (e.pc == STP_RE_NONE) {
			caps[e.slot] = e.val;
			continue;
		}
		if (e.pc < 0 || e.pc >= re->n || vm->mark[e.pc] == vm->gen)
			continue;
		vm->mark[e.pc] = vm->gen;
		in = &re->prog[e.pc];
		if (sp + 3 > STP_KMOD_RE_STACK)
			break;
		switch (in->kind) {
		case STP_RE_SPLIT:
			if (in->out2 >= 0)
				stack[sp++] = (struct stp__re_entry){ in->out2, 0, 0 };
			stack[sp++] = (struct stp__re_entry){ in->out1, 0, 0 };
			break;
		case STP_RE_SAVE:
			if (in->arg < 2 * STP_KMOD_RE_GROUPS) {
				stack[sp++] = (struct stp__re_entry){ STP_RE_NONE, in->arg,
								      caps[in->arg] };
				caps[in->arg] = (int16_t)pos;
			}
			stack[sp++] = (struct stp__re_entry){ in->out1, 0, 0 };
			break;
		case STP_RE_BOL:
			if (pos == 0)
				stack[sp++] = (struct stp__re_entry){ in->out1, 0, 0 };
			break;
		case STP_RE_EOL:
			if (pos == len)
				stack[sp++] = (struct stp__re_entry){ in->out1, 0, 0 };
			break;
		default:	/* SET, MATCH: a thread */
			if (*n >= STP_KMOD_RE_STATES)
				break;
			list[*n].pc = e.pc;
			memcpy(list[*n].caps, caps, sizeof(list[*n].caps));
			(*n)++;
		}
	}
}

/* Is thread T's match (ending at POS) better than the best so far? */
static __always_inline bool stp__re_better(const struct context *c, const int16_t *caps, int pos)
{
	return c->re_state != 2 || caps[0] < c->re_caps[0] ||
	       (caps[0] == c->re_caps[0] && pos > c->re_caps[1]);
}

/* Where RE's subexpressions matched in c->re_text (LEN bytes): c->re_caps. */
static __always_inline void stp__re_run(struct context *c, const struct stp_kmod_re *re, int len)
{
	struct stp_kmod_re_vm *vm = &c->re_vm;
	struct stp_kmod_re_thread *cur = vm->threads[0], *next = vm->threads[1], *t;
	uint32_t ncur = 0, nnext;
	int16_t caps[2 * STP_KMOD_RE_GROUPS];

	vm->gen++;	/* cur (empty) is built under gen; next under the one after */
	for (int pos = 0; pos <= len; pos++) {
		if (c->re_state != 2) {		/* no match yet: a thread starts here, last */
			memset(caps, 0xff, sizeof(caps));
			caps[0] = (int16_t)pos;
			stp__re_add(vm, re, cur, &ncur, re->start, caps, pos, len);
		}
		if (ncur == 0)
			break;
		nnext = 0;
		vm->gen++;
		for (uint32_t i = 0; i < ncur; i++) {
			const struct stp_kmod_re_insn *in = &re->prog[cur[i].pc];
			uint8_t ch = pos < len ? (uint8_t)c->re_text[pos] : 0;

			if (in->kind == STP_RE_MATCH) {
				if (stp__re_better(c, cur[i].caps, pos)) {
					memcpy(c->re_caps, cur[i].caps, sizeof(c->re_caps));
					c->re_caps[1] = (int16_t)pos;
					c->re_state = 2;
				}
				continue;
			}
			if (pos < len && (re->sets[in->arg][ch >> 6] >> (ch & 63) & 1)) {
				memcpy(caps, cur[i].caps, sizeof(caps));
				stp__re_add(vm, re, next, &nnext, in->out1, caps, pos + 1, len);
			}
		}
		t = cur;
		cur = next;
		next = t;
		ncur = nnext;
	}
}

/*
 * s =~ re, whose DFA said MATCHED: keep the string and, on a match, where
 * its subexpressions are, for matched().  Returns MATCHED.
 */
static __always_inline int64_t stp_kmod_re_run(struct context *c, const char *s, int64_t matched,
					       const struct stp_kmod_re *re)
{
	long len;

	c->re_state = 1;
	c->re_ngroups = re->ngroups;
	if (!matched)
		return 0;
	len = bpf_probe_read_kernel_str(c->re_text, MAXSTRINGLEN, s);
	len = len > 0 ? len - 1 : 0;
	stp__re_run(c, re, (int)len);
	if (c->re_state != 2)	/* the two automata disagree: no subexpressions known */
		memset(c->re_caps, 0xff, sizeof(c->re_caps));
	c->re_state = 2;
	return 1;
}

/* False, with NAME's error raised, when the last match of this handler did not succeed. */
static __always_inline bool stp__re_have(struct context *c, const char *name)
{
	char msg[128];

	if (c->re_state == 2)
		return true;
	snprintf(msg, sizeof(msg), "%s: %s", name,
		 c->re_state ? "the last regular expression match ('=~') failed"
			     : "no regular expression match ('=~') has run yet");
	stp_raise_msg(c, msg);
	return false;
}

/* matched(n), as user context answers it (runtime/user/uctx.c). */
static __always_inline void stp_regex_matched(struct context *c, char *out, int64_t n)
{
	char name[40], msg[128];
	int16_t so, eo;

	out[0] = '\0';
	snprintf(name, sizeof(name), "matched(%lld)", (long long)n);
	if (!stp__re_have(c, name))
		return;
	if (n < 0 || n >= c->re_ngroups) {
		if (c->re_ngroups == 1)
			snprintf(msg, sizeof(msg), "%s: no such subexpression: the last "
				 "match has only 0, the whole match", name);
		else
			snprintf(msg, sizeof(msg), "%s: no such subexpression: the last "
				 "match has 0 to %d", name, c->re_ngroups - 1);
		stp_raise_msg(c, msg);
		return;
	}
	if (n >= STP_KMOD_RE_GROUPS) {
		snprintf(msg, sizeof(msg), "%s: only subexpressions 0 to %d are kept in "
			 "kernel context", name, STP_KMOD_RE_GROUPS - 1);
		stp_raise_msg(c, msg);
		return;
	}
	so = c->re_caps[2 * n];
	eo = c->re_caps[2 * n + 1];
	if (so < 0 || eo < so || eo >= MAXSTRINGLEN)
		return;		/* a group that took no part in the match: "" as in stap */
	memcpy(out, c->re_text + so, eo - so);
	out[eo - so] = '\0';
}

#endif
