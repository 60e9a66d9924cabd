/*
 * tapset_stack_user.c - the backtrace services of runtime/stp_tapset.h in
 * user context (begin, end, error and timer probes): #included at the end
 * of tapset_user.c, whose MAXSTRINGLEN it uses.
 *
 * There is no probed task here: stp_backtrace() gives "" and
 * stp_print_stack() of "" prints nothing.  Given addresses (kept by a
 * kernel-context probe, say), the symbolizer of the runner
 * (symbolize.h) names them: kernel ones, and user ones of the process the
 * script watches, target(), or else of the runner itself, the current
 * task in user context.  The runner's symbols are weak here, so that
 * tapset_user.c also links alone (its unit tests); without them
 * addresses stay hex.
 */
#include "symbolize.h"

#pragma weak stp_sym_default
#pragma weak stp_sym__format_stack
#pragma weak stp_output

static int stack_pid(int64_t flags)
{
	if (!(flags & STP_STACK_USER))
		return 0;
	return rt()->target > 0 ? (int)rt()->target : (int)getpid();
}

/* STK in STYLE into BUF; hex as given when the runner's symbolizer is not there. */
static size_t stack_format(const char *stk, int style, int64_t flags, char *buf, size_t len)
{
	if (stp_sym_default && stp_sym__format_stack)
		return stp_sym__format_stack(stp_sym_default(), stack_pid(flags), stk, style, buf,
					     len);
	snprintf(buf, len, "%s", stk);
	return strlen(buf);
}

void stp_backtrace(struct context *c, char *out, int64_t user)
{
	(void)c;
	(void)user;
	out[0] = '\0';
}

void stp_print_stack(struct context *c, const char *stk, int64_t flags)
{
	size_t len = (strlen(stk) / 3 + 1) * 1024;
	char *buf;

	if (!stk[0] || !stp_output)
		return;
	buf = malloc(len);
	if (!buf)
		return;
	len = stack_format(stk, STP_SYM_FULL, flags, buf, len);
	stp_output(c, buf, len);
	free(buf);
}

/* sprint_syms(): whole " 0xADDR : ..." lines only, as many as fit OUT. */
static void sprint_full(const char *stk, int64_t flags, char *out)
{
	size_t len = (strlen(stk) / 3 + 1) * 1024, n;
	char *buf = malloc(len), *cut;

	if (!buf)
		return;
	n = stack_format(stk, STP_SYM_FULL, flags, buf, len);
	if (n > (size_t)STP_STR_MAX) {
		buf[STP_STR_MAX] = '\0';
		cut = strrchr(buf, '\n');
		n = cut ? (size_t)(cut - buf) + 1 : 0;
	}
	memcpy(out, buf, n);
	out[n] = '\0';
	free(buf);
}

void stp_sym_sprint(struct context *c, char *out, const char *stk, int64_t style, int64_t flags)
{
	(void)c;
	if (style == STP_SYM_FULL)
		sprint_full(stk, flags, out);
	else
		stack_format(stk, (int)style, flags, out, (size_t)STP_STR_MAX + 1);
}

uint64_t stp_uaddr(struct context *c)
{
	(void)c;
	return 0;
}
