/* preproc.c - pass 1b: @define macros and %( %? %: %) conditionals. */
#define _GNU_SOURCE	/* strverscmp */
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lex.h"
#include "manifest.h"
#include "preproc.h"
#include "sysroot.h"

#define PP_MAX_DEPTH 200	/* expansions inside expansions */
#define PP_MAX_TOKENS 1000000	/* tokens that one file's macros may produce */

/*
 * As in stap, two layers.  The first reads tokens from the file or from
 * the innermost expansion, records @define and expands @NAME uses; the
 * second evaluates conditionals over its output, so a conditional in a
 * macro body is evaluated where the macro is used.  A branch not taken
 * is skipped without expanding anything in it, and lexical errors in it
 * (such as a missing script argument) are never reported.
 */
struct pp_macro {
	const char *name;
	const struct token *def;	/* the name at its @define */
	struct vec params;		/* const char * */
	struct vec body;		/* struct token * */
	bool library;			/* from a tapset .stpm file */
};

struct pp_act;

/* An argument of a macro use, expanded in the text it was written in. */
struct pp_binding {
	const char *name;
	struct vec toks;
	struct pp_act *scope;
};

/* One expansion in progress: a macro's body, or one argument of a use. */
struct pp_act {
	struct pp_act *below;		/* the expansion stack */
	struct pp_act *scope;		/* the text the use was written in */
	const struct pp_macro *macro;	/* NULL for an argument */
	const struct vec *body;
	int cursor;
	const struct token *use;
	struct pp_binding *bindings;	/* what @param means in this text */
	int nbindings;
	bool library;
	int depth;
};

/* Order does not matter. */
enum pp_branch { PP_KEEP_THEN, PP_SKIP_THEN, PP_KEEP_ELSE, PP_SKIP_ELSE };

struct pp_cond {
	const struct token *open;
	enum pp_branch branch;
	bool bad_cond;		/* its condition had a syntax error: its %? is still to come */
};

struct pp {
	struct session *s;
	struct lexer *lx;
	struct vec macros;		/* struct pp_macro *: this file's */
	struct pp_act *act;		/* the innermost expansion */
	struct vec conds;		/* struct pp_cond *: open conditionals */
	struct vec pushed;		/* struct token *: to read again first */
	long expanded;			/* tokens produced by expansions */
	bool too_big;			/* ... too many: expand nothing more */
	bool dropped;			/* the expansion stack was abandoned */
	const char *doc;		/* of a dropped %(, for the next token */
	int systemtap_v_seen;		/* conditionals on systemtap_v evaluated */
};

struct pp_shared {
	struct vec library;		/* struct pp_macro *: from *.stpm */
	bool kconfig_read;
	struct vec kconfig;		/* char *: "CONFIG_FOO=value", sorted */
};

/* stap's built-in @operators: a macro may hide one, with a warning. */
static const char *const atwords[] = {
	"cast", "defined", "probewrite", "entry", "perf", "var", "avg",
	"count", "sum", "min", "max", "hist_linear", "hist_log", "const",
	"variance", "kregister", "uregister", "kderef", "uderef",
};

static struct pp_shared *shared(struct session *s)
{
	if (!s->pp)
		s->pp = ARENA_NEW(struct pp_shared);
	return s->pp;
}

static void push_back(struct pp *pp, struct token *t)
{
	vec_push(&pp->pushed, t);
}

static struct token *pop_pushed(struct pp *pp)
{
	if (!pp->pushed.len)
		return NULL;
	return VEC_AT(&pp->pushed, --pp->pushed.len);
}

/* Report a lexical error kept in T, once. */
static void report_lex_error(struct token *t)
{
	diag_error(t->loc, "%s", t->error);
	t->error = NULL;
}

/* ---- layer 1: macros ---- */

/* After an error in an expansion: abandon all of it. */
static void drop_expansions(struct pp *pp)
{
	pp->act = NULL;
	pp->dropped = true;
}

/* Leave the innermost expansion, which has ended. */
static void pop_act(struct pp *pp)
{
	if (pp->act)
		pp->act = pp->act->below;
}

static struct token *expansion_copy(struct pp *pp, struct pp_act *a)
{
	struct token *t;

	if (++pp->expanded > PP_MAX_TOKENS) {
		struct pp_act *outer = a;

		while (outer->below)
			outer = outer->below;
		if (!pp->too_big)
			diag_error(outer->use->loc,
				   "macro expansion is too large (more than %d tokens in one file)",
				   PP_MAX_TOKENS);
		pp->too_big = true;
		drop_expansions(pp);
		return NULL;
	}
	t = ARENA_NEW(struct token);
	*t = *(struct token *)VEC_AT(a->body, a->cursor);
	t->expanded_from = a->use;
	if (a->cursor == 0)
		t->space_before = a->use->space_before;
	a->cursor++;
	return t;
}

/*
 * The next token of the innermost expansion, or of the file; NULL at the
 * end of an expansion (the caller decides whether to leave it).
 */
static struct token *raw_next(struct pp *pp)
{
	struct token *t = pop_pushed(pp);
	struct pp_act *a = pp->act;

	if (t)
		return t;
	if (!a)
		return lex_next(pp->lx);
	if (a->cursor >= a->body->len)
		return NULL;
	return expansion_copy(pp, a);
}

static struct pp_macro *find_macro(const struct vec *v, const char *name)
{
	int i;

	for (i = 0; i < v->len; i++) {
		struct pp_macro *m = VEC_AT(v, i);

		if (!strcmp(m->name, name))
			return m;
	}
	return NULL;
}

static bool is_name(const struct token *t)
{
	return t && t->type == TOK_IDENT && t->text[0] != '@' &&
	       t->text[0] != '$' && !t->error;
}

/* After an error in a @define: drop up to its body, or stop before T. */
static void define_recover(struct pp *pp, struct token *t)
{
	int depth = 0;

	while (t && !lex_tok_is_op(t, "%(")) {
		if (t->type == TOK_EOF || t->type == TOK_KEYWORD ||
		    t->type == TOK_EMBEDDED) {
			push_back(pp, t);
			return;
		}
		t = raw_next(pp);
	}
	while (t && t->type != TOK_EOF) {
		if (lex_tok_is_op(t, "%("))
			depth++;
		else if (lex_tok_is_op(t, "%)") && --depth == 0)
			return;
		t = raw_next(pp);
	}
	if (t)
		push_back(pp, t);
}

/* ( NAME { , NAME } ): the parameters of M; T is the '('.  NULL on error. */
static struct token *define_params(struct pp *pp, struct pp_macro *m)
{
	struct token *t;
	int i;

	do {
		t = raw_next(pp);
		if (!is_name(t)) {
			diag_error(t->loc, "expected a parameter name for macro '@%s', saw %s",
				   m->name, lex_tok_describe(t));
			define_recover(pp, t);
			return NULL;
		}
		for (i = 0; i < m->params.len; i++)
			if (!strcmp(VEC_AT(&m->params, i), t->text))
				diag_error(t->loc, "duplicate parameter '%s' of macro '@%s'",
					   t->text, m->name);
		vec_push(&m->params, (void *)t->text);
		t = raw_next(pp);
	} while (lex_tok_is_op(t, ","));
	if (!lex_tok_is_op(t, ")")) {
		diag_error(t->loc, "expected ',' or ')' in the parameters of macro '@%s', saw %s",
			   m->name, lex_tok_describe(t));
		define_recover(pp, t);
		return NULL;
	}
	return raw_next(pp);
}

/* The body up to the %) that closes it; false at the end of input. */
static bool define_body(struct pp *pp, struct pp_macro *m)
{
	int depth = 0;

	for (;;) {
		struct token *t = raw_next(pp);

		if (t->type == TOK_EOF) {
			push_back(pp, t);
			return false;
		}
		if (lex_tok_is_op(t, "%("))
			depth++;
		else if (lex_tok_is_op(t, "%)") && depth-- == 0)
			return true;
		vec_push(&m->body, t);
	}
}

static void define_register(struct pp *pp, struct pp_macro *m)
{
	struct pp_macro *old = find_macro(&pp->macros, m->name);
	size_t i;

	if (!strcmp(m->name, "define")) {
		diag_error(m->def->loc, "'@define' cannot be redefined");
		return;
	}
	if (old) {
		diag_error(m->def->loc, "macro '@%s' is already defined in this file",
			   m->name);
		diag_note(old->def->loc, "macro '@%s' was first defined here", m->name);
		return;
	}
	for (i = 0; i < sizeof(atwords) / sizeof(atwords[0]); i++)
		if (!strcmp(m->name, atwords[i]))
			diag_warning(m->def->loc, "macro '@%s' hides the built-in operator '@%s'",
				     m->name, m->name);
	vec_push(&pp->macros, m);
}

/* @define NAME [ ( PARAM, ... ) ] %( BODY %) */
static void define(struct pp *pp, struct token *at)
{
	struct pp_macro *m;
	struct token *t;

	if (pp->act) {
		diag_error(at->loc, "'@define' is not allowed inside a macro body");
		define_recover(pp, raw_next(pp));
		return;
	}
	t = raw_next(pp);
	if (!is_name(t)) {
		diag_error(t->loc, "expected a macro name after '@define', saw %s",
			   lex_tok_describe(t));
		define_recover(pp, t);
		return;
	}
	m = ARENA_NEW(struct pp_macro);
	m->name = t->text;
	m->def = t;
	t = raw_next(pp);
	if (lex_tok_is_op(t, "(") && !(t = define_params(pp, m)))
		return;
	if (!lex_tok_is_op(t, "%(")) {
		diag_error(t->loc, "expected '%%(' to start the body of macro '@%s', saw %s",
			   m->name, lex_tok_describe(t));
		define_recover(pp, t);
		return;
	}
	if (!define_body(pp, m)) {
		diag_error(m->def->loc, "macro '@%s' has no '%%)' to end its body",
			   m->name);
		return;
	}
	define_register(pp, m);
}

static struct pp_binding *find_binding(const struct pp_act *a, const char *name)
{
	int i;

	for (i = 0; a && i < a->nbindings; i++)
		if (!strcmp(a->bindings[i].name, name))
			return &a->bindings[i];
	return NULL;
}

static void arity_error(const struct token *use, const struct pp_macro *m,
			const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void arity_error(const struct token *use, const struct pp_macro *m,
			const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = arena_vprintf(fmt, ap);
	va_end(ap);
	diag_error(use->loc, "%s", msg);
	diag_note(m->def->loc, "macro '@%s' is defined here", m->name);
}

static const char *plural(int n, const char *what)
{
	return arena_printf("%d %s%s", n, what, n == 1 ? "" : "s");
}

/* ( ARG, ... ) after a use of M: split on commas outside brackets. */
static bool collect_args(struct pp *pp, const struct token *use,
			 const struct pp_macro *m, struct vec *args)
{
	struct token *t;
	struct vec *cur;
	int depth = 0;

	pp->dropped = false;
	t = raw_next(pp);
	if (!t && pp->dropped)
		return false;
	if (!lex_tok_is_op(t, "(")) {
		arity_error(use, m, "macro '@%s' takes %s: expected '(' after it, saw %s",
			    m->name, plural(m->params.len, "argument"),
			    t ? lex_tok_describe(t) : "the end of the macro body");
		if (t)
			push_back(pp, t);
		return false;
	}
	vec_push(args, cur = ARENA_NEW(struct vec));
	for (;;) {
		t = raw_next(pp);
		if (!t && pp->dropped)
			return false;
		if (!t || t->type == TOK_EOF) {
			arity_error(use, m, "missing ')' after the arguments of macro '@%s'",
				    m->name);
			if (t)
				push_back(pp, t);
			return false;
		}
		if (t->type == TOK_OP && strchr("([{", t->text[0]) && !t->text[1])
			depth++;
		else if (depth && t->type == TOK_OP &&
			 strchr(")]}", t->text[0]) && !t->text[1])
			depth--;
		else if (!depth && lex_tok_is_op(t, ","))
			vec_push(args, cur = ARENA_NEW(struct vec));
		else if (!depth && lex_tok_is_op(t, ")"))
			return true;
		if (!lex_tok_is_op(t, ",") || depth)
			vec_push(cur, t);
	}
}

static void push_act(struct pp *pp, struct pp_act *a)
{
	a->below = pp->act;
	a->depth = pp->act ? pp->act->depth + 1 : 1;
	if (a->depth > PP_MAX_DEPTH) {
		diag_error(a->use->loc, "macros nest too deeply (more than %d expansions)",
			   PP_MAX_DEPTH);
		drop_expansions(pp);
		return;
	}
	pp->act = a;
}

/* Is M being expanded in the text that USE-at-A was written in? */
static bool recursive(const struct pp_act *a, const struct pp_macro *m)
{
	for (; a; a = a->scope)
		if (a->macro == m)
			return true;
	return false;
}

static void expand_macro(struct pp *pp, const struct token *use,
			 const struct pp_macro *m)
{
	struct pp_act *a;
	struct vec args = { 0 };
	int i;

	if (m->params.len && !collect_args(pp, use, m, &args))
		return;
	if (args.len != m->params.len) {
		arity_error(use, m, "macro '@%s' takes %s, %s given", m->name,
			    plural(m->params.len, "argument"),
			    args.len == 1 ? "1 was" : arena_printf("%d were", args.len));
		return;
	}
	if (recursive(pp->act, m)) {
		diag_error(use->loc, "macro '@%s' is used inside its own expansion",
			   m->name);
		diag_note(m->def->loc, "macro '@%s' is defined here", m->name);
		return;
	}
	a = ARENA_NEW(struct pp_act);
	a->scope = pp->act;
	a->macro = m;
	a->body = &m->body;
	a->use = use;
	a->library = m->library;
	a->nbindings = args.len;
	a->bindings = arena_alloc(sizeof(*a->bindings) * (size_t)(args.len + 1));
	for (i = 0; i < args.len; i++) {
		a->bindings[i].name = VEC_AT(&m->params, i);
		a->bindings[i].toks = *(struct vec *)VEC_AT(&args, i);
		a->bindings[i].scope = pp->act;
	}
	push_act(pp, a);
}

/* @NAME: a parameter, a macro of this file or a tapset macro; else false. */
static bool expand(struct pp *pp, const struct token *use)
{
	const char *name = use->text + 1;
	struct pp_binding *b = find_binding(pp->act, name);
	struct pp_macro *m = NULL;
	struct pp_act *a;

	if (b) {
		a = ARENA_NEW(struct pp_act);
		a->scope = b->scope;
		a->body = &b->toks;
		a->use = use;
		if (b->scope) {
			a->bindings = b->scope->bindings;
			a->nbindings = b->scope->nbindings;
			a->library = b->scope->library;
		}
		push_act(pp, a);
		return true;
	}
	if (!(pp->act && pp->act->library))
		m = find_macro(&pp->macros, name);
	if (!m)
		m = find_macro(&shared(pp->s)->library, name);
	if (!m)
		return false;
	expand_macro(pp, use, m);
	return true;
}

/* The next token with @define recorded and macros expanded. */
static struct token *pp1_next(struct pp *pp)
{
	for (;;) {
		struct token *t = pop_pushed(pp);

		if (t)
			return t;
		t = raw_next(pp);
		if (!t) {
			pop_act(pp);
			continue;
		}
		if (t->type == TOK_IDENT && t->text[0] == '@' && !t->error) {
			if (!strcmp(t->text, "@define")) {
				define(pp, t);
				continue;
			}
			if (expand(pp, t))
				continue;
		}
		return t;
	}
}

/* ---- the kernel configuration, for CONFIG_ conditions ---- */

static FILE *open_config(const char *path, bool *piped)
{
	size_t n = strlen(path);

	*piped = n > 3 && !strcmp(path + n - 3, ".gz");
	if (*piped) {
		char *cmd;

		if (access(path, R_OK) != 0)
			return NULL;
		cmd = arena_printf("zcat '%s' 2>/dev/null",
				   strchr(path, '\'') ? "/dev/null" : path);
		return popen(cmd, "r");
	}
	return fopen(path, "r");
}

static int kconfig_order(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t nx = strcspn(x, "="), ny = strcspn(y, "=");
	int c = strncmp(x, y, nx < ny ? nx : ny);

	return c ? c : (nx > ny) - (nx < ny);
}

/* Keep "CONFIG_FOO=value" lines, with the quotes of a string value removed. */
static void read_config(struct pp_shared *sh, FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	while ((n = getline(&line, &cap, f)) > 0) {
		char *eq = strchr(line, '=');

		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (strncmp(line, "CONFIG_", 7) || !eq)
			continue;
		if (eq[1] == '"' && n >= 2 && line[n - 1] == '"' && line + n - 1 > eq + 1) {
			memmove(eq + 1, eq + 2, (size_t)(line + n - eq - 3));
			line[n - 2] = '\0';
		}
		vec_push(&sh->kconfig, arena_strdup(line));
	}
	free(line);
	if (sh->kconfig.len)
		qsort(sh->kconfig.items, (size_t)sh->kconfig.len, sizeof(void *),
		      kconfig_order);
}

static void load_kconfig(struct session *s, const struct token *at)
{
	struct pp_shared *sh = shared(s);
	const char *rel = s->kernel_release ? s->kernel_release : "";
	const char *tries[] = {
		s->kconfig_path,
		s->kconfig_path ? NULL : sysroot_path("/proc/config.gz"),
		arena_printf("/boot/config-%s", rel),
		arena_printf("/lib/modules/%s/build/.config", rel),
	};
	size_t i, n = s->kconfig_path ? 1 : 4;
	bool piped = false;
	FILE *f = NULL;

	sh->kconfig_read = true;
	for (i = 0; i < n && !f; i++) {
		if (!tries[i])
			continue;
		/* each place looked, missing too (/proc/config.gz: the kernel's own) */
		if (strncmp(tries[i], "/proc/", 6) != 0)
			manifest_file(tries[i]);
		f = open_config(tries[i], &piped);
	}
	if (!f) {
		if (s->kconfig_path)
			diag_warning(at->loc, "cannot read the kernel configuration '%s': %s; every CONFIG_ option counts as unset",
				     s->kconfig_path, strerror(errno));
		else
			diag_warning(at->loc, "cannot find the configuration of kernel %s (tried /proc/config.gz, %s, %s); every CONFIG_ option counts as unset",
				     rel, tries[2], tries[3]);
		return;
	}
	read_config(sh, f);
	if (piped)
		pclose(f);
	else
		fclose(f);
}

/* The value of CONFIG_FOO, "" when it is not set. */
static const char *kconfig_value(struct session *s, const struct token *name)
{
	struct pp_shared *sh = shared(s);
	const char *key = name->text;
	char **hit;

	if (!sh->kconfig_read)
		load_kconfig(s, name);
	if (!sh->kconfig.len)
		return "";
	hit = bsearch(&key, sh->kconfig.items, (size_t)sh->kconfig.len,
		      sizeof(void *), kconfig_order);
	return hit ? strchr(*hit, '=') + 1 : "";
}

/* ---- layer 2: conditionals ---- */

/*
 * A condition, read from layer 1 (so macros and script arguments are in
 * it), evaluated as it is parsed.  After the first error nothing more is
 * reported and the condition counts as false.
 */
struct cond {
	struct pp *pp;
	const struct token *open;
	bool failed;			/* an error was reported */
	const struct token *stop;	/* a syntax error stopped the parse here */
};

static void cond_error(struct cond *c, const struct token *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void cond_error(struct cond *c, const struct token *at, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	if (c->failed)
		return;
	c->failed = true;
	va_start(ap, fmt);
	msg = arena_vprintf(fmt, ap);
	va_end(ap);
	diag_error(at->loc, "%s", msg);
}

/* A syntax error at T: stop, and leave T to be read again. */
static bool cond_syntax(struct cond *c, struct token *t, const char *what)
{
	cond_error(c, t, "expected %s, saw %s", what, lex_tok_describe(t));
	c->stop = t;
	push_back(c->pp, t);
	return false;
}

static struct token *cond_next(struct cond *c)
{
	for (;;) {
		struct token *t = pp1_next(c->pp);

		if (!t->error)
			return t;
		if (!c->failed)
			report_lex_error(t);
		c->failed = true;
		t->error = NULL;
		if (t->type != TOK_OP)
			return t;
	}
}

static bool is_operand(const struct token *t)
{
	return (t->type == TOK_IDENT && t->text[0] != '@') ||
	       t->type == TOK_NUMBER || t->type == TOK_STRING;
}

static bool is_comparison(const struct token *t)
{
	static const char *const ops[] = { "==", "!=", "<", "<=", ">", ">=" };
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (lex_tok_is_op(t, ops[i]))
			return true;
	return false;
}

/* Does the sign of a comparison satisfy OP? */
static bool compare(int sign, const struct token *op)
{
	const char *o = op->text;

	if (!strcmp(o, "=="))
		return sign == 0;
	if (!strcmp(o, "!="))
		return sign != 0;
	if (!strcmp(o, "<"))
		return sign < 0;
	if (!strcmp(o, "<="))
		return sign <= 0;
	if (!strcmp(o, ">"))
		return sign > 0;
	return sign >= 0;
}

static int sign_of(long long a, long long b)
{
	return (a > b) - (a < b);
}

static bool want_equality(struct cond *c, const struct token *l,
			  const struct token *op)
{
	if (lex_tok_is_op(op, "==") || lex_tok_is_op(op, "!="))
		return true;
	cond_error(c, op, "'%s' can only be compared with '==' or '!='", l->text);
	return false;
}

static bool want_type(struct cond *c, const struct token *l,
		      const struct token *r, enum tok_type type)
{
	if (r->type == type)
		return true;
	cond_error(c, r, "'%s' is compared with a %s, saw %s", l->text,
		   type == TOK_STRING ? "string" : "number", lex_tok_describe(r));
	return false;
}

/* == and != match a glob; the order operators compare as versions. */
static bool cmp_version(struct cond *c, const struct token *l,
			const struct token *op, const struct token *r,
			const char *have)
{
	bool eq = lex_tok_is_op(op, "==") || lex_tok_is_op(op, "!=");

	if (!want_type(c, l, r, TOK_STRING))
		return false;
	if (strpbrk(r->text, "*?[")) {
		if (!eq) {
			cond_error(c, op, "wildcards are only allowed with '==' and '!='");
			return false;
		}
		return (fnmatch(r->text, have, FNM_NOESCAPE) == 0) ==
		       lex_tok_is_op(op, "==");
	}
	return compare(strverscmp(have, r->text), op);
}

static bool cmp_glob(struct cond *c, const struct token *l,
		     const struct token *op, const struct token *r,
		     const char *have)
{
	if (!want_type(c, l, r, TOK_STRING) || !want_equality(c, l, op))
		return false;
	return (fnmatch(r->text, have, FNM_NOESCAPE) == 0) == lex_tok_is_op(op, "==");
}

static bool config_number(const char *v, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(v, &end, 0);
	return !errno && !*end;
}

/* CONFIG_FOO against a string (glob), a number or another CONFIG_BAR. */
static bool cmp_config(struct cond *c, const struct token *l,
		       const struct token *op, const struct token *r)
{
	const char *have = kconfig_value(c->pp->s, l);
	long long a, b;

	if (r->type == TOK_STRING)
		return cmp_glob(c, l, op, r, have);
	if (r->type == TOK_NUMBER) {
		if (!config_number(have, &a)) {
			cond_error(c, l, "%s is '%s', not a number", l->text, have);
			return false;
		}
		return compare(sign_of(a, r->value), op);
	}
	if (r->type == TOK_IDENT && !strncmp(r->text, "CONFIG_", 7)) {
		const char *other = kconfig_value(c->pp->s, r);

		if (config_number(have, &a) && config_number(other, &b))
			return compare(sign_of(a, b), op);
		return compare(strcmp(have, other), op);
	}
	cond_error(c, r, "%s is compared with a string, a number or another CONFIG_ option, saw %s",
		   l->text, lex_tok_describe(r));
	return false;
}

static bool cmp_name(struct cond *c, const struct token *l,
		     const struct token *op, const struct token *r)
{
	struct session *s = c->pp->s;
	const char *n = l->text, *rel = s->kernel_release ? s->kernel_release : "";

	if (!strcmp(n, "kernel_vr"))
		return cmp_version(c, l, op, r, rel);
	if (!strcmp(n, "kernel_v"))
		return cmp_version(c, l, op, r,
				   arena_strndup(rel, strcspn(rel, "-")));
	if (!strcmp(n, "systemtap_v")) {
		c->pp->systemtap_v_seen++;
		return cmp_version(c, l, op, r, s->compatible ? s->compatible : PMSTAP_STAP_COMPAT);
	}
	if (!strcmp(n, "arch"))
		return cmp_glob(c, l, op, r, s->arch ? s->arch : "");
	if (!strcmp(n, "runtime"))
		return cmp_glob(c, l, op, r, s->runtime ? s->runtime : "bpf");
	if (!strcmp(n, "systemtap_privilege")) {
		if (!want_type(c, l, r, TOK_STRING) || !want_equality(c, l, op))
			return false;
		return !strcmp(s->privilege ? s->privilege : "stapusr", r->text) ==
		       lex_tok_is_op(op, "==");
	}
	if (!strcmp(n, "guru_mode")) {
		if (!want_type(c, l, r, TOK_NUMBER) || !want_equality(c, l, op))
			return false;
		if (r->value != 0 && r->value != 1) {
			cond_error(c, r, "guru_mode is compared with 0 or 1, saw %s",
				   lex_tok_describe(r));
			return false;
		}
		return compare(sign_of(s->guru, r->value), op);
	}
	if (!strncmp(n, "CONFIG_", 7))
		return cmp_config(c, l, op, r);
	cond_error(c, l, "unknown name '%s' in a condition: expected kernel_v, kernel_vr, systemtap_v, arch, runtime, systemtap_privilege, guru_mode or CONFIG_...",
		   n);
	return false;
}

static bool cmp_literals(struct cond *c, const struct token *l,
			 const struct token *op, const struct token *r)
{
	if (r->type != l->type) {
		cond_error(c, r, "a %s can only be compared with a %s, saw %s",
			   l->type == TOK_STRING ? "string" : "number",
			   l->type == TOK_STRING ? "string" : "number",
			   lex_tok_describe(r));
		return false;
	}
	if (l->type == TOK_STRING)
		return compare(strcmp(l->text, r->text), op);
	return compare(sign_of(l->value, r->value), op);
}

static bool cond_or(struct cond *c);

/* primary := '(' or ')' | operand ('==' | '!=' | '<' | '<=' | '>' | '>=') operand */
static bool cond_primary(struct cond *c)
{
	struct token *l, *op, *r;
	bool v;

	if (c->stop)
		return false;
	l = cond_next(c);
	if (lex_tok_is_op(l, "(")) {
		v = cond_or(c);
		if (c->stop)
			return false;
		r = cond_next(c);
		if (!lex_tok_is_op(r, ")"))
			return cond_syntax(c, r, "')' in the condition");
		return v;
	}
	if (!is_operand(l))
		return cond_syntax(c, l, "a condition such as 'kernel_v >= \"5.4\"'");
	op = cond_next(c);
	if (!is_comparison(op))
		return cond_syntax(c, op, "a comparison operator (== != < <= > >=)");
	r = cond_next(c);
	if (!is_operand(r))
		return cond_syntax(c, r, "a name, number or string to compare with");
	if (l->type == TOK_IDENT)
		return cmp_name(c, l, op, r);
	return cmp_literals(c, l, op, r);
}

/* and := primary { '&&' primary } */
static bool cond_and(struct cond *c)
{
	bool v = cond_primary(c);

	while (!c->stop) {
		struct token *t = cond_next(c);

		if (!lex_tok_is_op(t, "&&")) {
			push_back(c->pp, t);
			break;
		}
		v = cond_primary(c) && v;
	}
	return v;
}

/* or := and { '||' and } */
static bool cond_or(struct cond *c)
{
	bool v = cond_and(c);

	while (!c->stop) {
		struct token *t = cond_next(c);

		if (!lex_tok_is_op(t, "||")) {
			push_back(c->pp, t);
			break;
		}
		v = cond_and(c) || v;
	}
	return v;
}

static struct pp_cond *cond_top(const struct pp *pp)
{
	return pp->conds.len ? VEC_AT(&pp->conds, pp->conds.len - 1) : NULL;
}

static void cond_push(struct pp *pp, const struct token *open,
		      enum pp_branch branch, bool bad_cond)
{
	struct pp_cond *pc = ARENA_NEW(struct pp_cond);

	pc->open = open;
	pc->branch = branch;
	pc->bad_cond = bad_cond;
	vec_push(&pp->conds, pc);
}

/* %( CONDITION %? ...: choose the branch. */
static void open_cond(struct pp *pp, const struct token *open)
{
	struct cond c = { pp, open, false, NULL };
	bool v = cond_or(&c);

	if (!c.stop) {
		struct token *t = cond_next(&c);

		if (lex_tok_is_op(t, "%?")) {
			cond_push(pp, open, v && !c.failed ? PP_KEEP_THEN : PP_SKIP_THEN,
				  false);
			return;
		}
		if (!c.failed) {
			cond_syntax(&c, t, "'%?' after the condition");
			diag_note(open->loc, "the conditional starts here");
		} else {
			cond_syntax(&c, t, "");
		}
	}
	/* After a syntax error: skip to the %? (or %: or %)) and take the else. */
	if (c.stop->type != TOK_EOF)
		cond_push(pp, open, PP_SKIP_THEN, true);
}

/* In a branch not taken: drop tokens up to its %? %: %) or the end. */
static struct token *skip_branch(struct pp *pp)
{
	int depth = 0;

	for (;;) {
		struct token *t = raw_next(pp);

		if (!t) {
			pop_act(pp);
			continue;
		}
		if (t->type == TOK_EOF)
			return t;
		if (lex_tok_is_op(t, "%("))
			depth++;
		else if (depth && lex_tok_is_op(t, "%)"))
			depth--;
		else if (!depth && (lex_tok_is_op(t, "%?") || lex_tok_is_op(t, "%:") ||
				    lex_tok_is_op(t, "%)")))
			return t;
	}
}

static void stray_marker(const struct token *t)
{
	diag_error(t->loc, "'%s' without a matching '%%('", t->text);
}

/* %? %: %) where layer 2 stands. */
static void marker(struct pp *pp, struct token *t)
{
	struct pp_cond *c = cond_top(pp);

	if (!c) {
		stray_marker(t);
	} else if (lex_tok_is_op(t, "%)")) {
		pp->conds.len--;
		pp->doc = NULL;
	} else if (lex_tok_is_op(t, "%?")) {
		if (c->bad_cond && c->branch == PP_SKIP_THEN) {
			c->bad_cond = false;
			return;
		}
		diag_error(t->loc, "unexpected '%%?': this conditional already has one");
		diag_note(c->open->loc, "the conditional starts here");
	} else if (c->branch == PP_KEEP_ELSE || c->branch == PP_SKIP_ELSE) {
		diag_error(t->loc, "a second '%%:' in one conditional");
		diag_note(c->open->loc, "the conditional starts here");
		c->branch = PP_SKIP_ELSE;
	} else {
		c->branch = c->branch == PP_KEEP_THEN ? PP_SKIP_ELSE : PP_KEEP_ELSE;
		c->bad_cond = false;
	}
}

static struct token *at_eof(struct pp *pp, struct token *t)
{
	struct pp_cond *c = cond_top(pp);

	if (c) {
		diag_error(t->loc, "missing '%%)': the input ends inside a conditional");
		diag_note(c->open->loc, "the conditional starts here");
		pp->conds.len = 0;
	}
	pp->doc = NULL;
	return t;
}

static bool is_marker(const struct token *t)
{
	return lex_tok_is_op(t, "%?") || lex_tok_is_op(t, "%:") || lex_tok_is_op(t, "%)");
}

struct token *preproc_next(struct pp *pp)
{
	for (;;) {
		struct pp_cond *c = cond_top(pp);
		bool skip = c && (c->branch == PP_SKIP_THEN ||
				  c->branch == PP_SKIP_ELSE);
		struct token *t = skip ? skip_branch(pp) : pp1_next(pp);

		if (t->type == TOK_EOF)
			return at_eof(pp, t);
		if (t->error) {
			report_lex_error(t);
			if (t->type == TOK_OP)
				continue;
		}
		if (is_marker(t)) {
			marker(pp, t);
			continue;
		}
		if (lex_tok_is_op(t, "%(")) {
			pp->doc = t->doc;
			open_cond(pp, t);
			continue;
		}
		if (pp->doc && !t->doc)
			t->doc = pp->doc;
		pp->doc = NULL;
		return t;
	}
}

struct pp *preproc_open(struct session *s, const struct source *src)
{
	struct pp *pp = ARENA_NEW(struct pp);

	pp->s = s;
	pp->lx = lex_open(s, src);
	lex_keep_errors(pp->lx);
	shared(s);
	return pp;
}

/* A tapset .stpm file: its @defines become visible to every file. */
void preproc_load_library(struct session *s, const struct source *stpm)
{
	struct pp *pp = preproc_open(s, stpm);
	struct pp_shared *sh = shared(s);
	int errors = diag_error_count(), i;
	struct token *t;

	for (t = preproc_next(pp); t->type != TOK_EOF; t = preproc_next(pp))
		if (diag_error_count() == errors)
			diag_error(t->loc, "a macro library may only contain @define and conditionals, saw %s",
				   lex_tok_describe(t));
	if (diag_error_count() > errors)
		return;
	for (i = 0; i < pp->macros.len; i++) {
		struct pp_macro *m = VEC_AT(&pp->macros, i);
		struct pp_macro *old = find_macro(&sh->library, m->name);

		if (old) {
			diag_error(m->def->loc, "macro '@%s' is already defined by another tapset",
				   m->name);
			diag_note(old->def->loc, "macro '@%s' was first defined here",
				  m->name);
			return;
		}
	}
	for (i = 0; i < pp->macros.len; i++) {
		struct pp_macro *m = VEC_AT(&pp->macros, i);

		m->library = true;
		vec_push(&sh->library, m);
	}
}

/* How many %( systemtap_v ... %) conditions the file has evaluated so far (--check-version). */
int preproc_systemtap_v_seen(const struct pp *pp)
{
	return pp->systemtap_v_seen;
}
