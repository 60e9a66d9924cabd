/*
 * emit_symdefer.c - symbol names printed from kernel context.
 *
 * symname(), symdata(), usymname(), usymdata(), symfileline(),
 * usymfileline(), modname(), umodname(), sprint_backtrace() and
 * sprint_ubacktrace() give names that only user space knows.  As an
 * argument of printf, print, println, printd or printdln in a
 * kernel-context probe the call is not made: the record carries the
 * address (or the stack, taken there and then) and how to name it
 * (STP_REC_SYMS of runtime/stp_meta.h), and the runner names it while it
 * formats the record (runtime/user/stack_print.c).  Anywhere else in
 * kernel context, where the string itself is needed, the call is made
 * there and names what the kernel knows (runtime/bpf/stp_stack.bpf.h).
 */
#include <string.h>
#include "emit_symdefer.h"

struct symdefer {
	const char *name;
	const char *style;	/* STP_SYM_* of stp_tapset.h */
	bool user;		/* user addresses (STP_STACK_USER) */
	bool stack;		/* the current stack, else the call's one argument */
};

static const struct symdefer *symdefer_of(const struct expr *e)
{
	static const struct symdefer all[] = {
		{ "symname", "STP_SYM_NAME", false, false },
		{ "symdata", "STP_SYM_DATA", false, false },
		{ "usymname", "STP_SYM_NAME", true, false },
		{ "usymdata", "STP_SYM_DATA", true, false },
		{ "symfileline", "STP_SYM_FILELINE", false, false },
		{ "usymfileline", "STP_SYM_FILELINE", true, false },
		{ "modname", "STP_SYM_MODULE", false, false },
		{ "umodname", "STP_SYM_MODULE", true, false },
		{ "sprint_backtrace", "STP_SYM_LINES", false, true },
		{ "sprint_ubacktrace", "STP_SYM_LINES", true, true },
	};

	if (e->kind != EXPR_CALL || !e->func || !e->func->file || !e->func->file->is_tapset)
		return NULL;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(e->name, all[i].name) == 0 && e->args.len == (all[i].stack ? 0 : 1))
			return &all[i];
	return NULL;
}

struct expr **emit_symdefer_args(struct expr **args, int n)
{
	struct expr **out = NULL;

	for (int i = 0; i < n; i++) {
		const struct symdefer *d = symdefer_of(args[i]);
		struct expr *zero;

		if (!d)
			continue;
		if (!out) {
			out = arena_alloc(sizeof(*out) * (size_t)n);
			memcpy(out, args, sizeof(*out) * (size_t)n);
		}
		if (!d->stack) {
			out[i] = VEC_AT(&args[i]->args, 0);
			continue;
		}
		zero = ARENA_NEW(struct expr);
		memset(zero, 0, sizeof(*zero));
		zero->kind = EXPR_NUMBER;
		zero->loc = args[i]->loc;
		zero->type = TYPE_LONG;
		out[i] = zero;
	}
	return out ? out : args;
}

bool emit_symdefer_rec(struct emitter *E, const struct expr *e, const char *val, int *size)
{
	const struct symdefer *d = symdefer_of(e);

	if (!d)
		return false;
	emit_line(E, "n = stp_rec_syms(c, n, %s, %s, %s, %s);", d->stack ? "0" : val, d->style,
		  d->user ? "STP_STACK_USER" : "0", d->stack ? "true" : "false");
	if (E->dyninst && d->stack && !d->user)	/* the process has no kernel stack: refused */
		emit_check(E, emit_error_site(E, e->loc, arena_printf("error in '%s'", d->name)));
	*size += 2 + 10 + (d->stack ? 8 * 64 /* STP_STACK_MAX */ : 8);
	return true;
}
