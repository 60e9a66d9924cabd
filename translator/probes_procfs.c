/*
 * probes_procfs.c - procfs probes in pass 2.
 *
 *	procfs[("NAME")][.umask(N)].read[.maxsize(N)]
 *	procfs[("NAME")][.umask(N)].write
 *
 * The file is NAME ("command" when not given) in the run's folder: on the
 * bpf and dyninst runtimes a FIFO the runner serves (runtime/user/procfs.c),
 * on the kernel runtime a file of /proc/systemtap/MODULE that the module
 * serves (runtime/kmod/procfs.c).  stap's rules, with its words: the path
 * is relative and has no empty, "." or ".." component; one .read probe per
 * file; and, as in stap's BPF runtime, whose FIFOs these are, a FIFO is
 * read or written, not both (a module's file may be both, as stap's
 * module's).  Unlike stap with an old kernel, a NAME has no '/': the files
 * are in one folder.
 *
 * $value is the text: a .read handler sets it (= or .=) and the reader
 * gets it; a .write handler reads what was written.  As stap does for BPF,
 * uses become calls: _set_procfs_value(v), _append_procfs_value(v),
 * _get_procfs_value().
 */
#include <string.h>
#include "diag.h"
#include "probe_kinds.h"
#include "probes.h"
#include "probes_procfs.h"
#include "runtimes.h"
#include "sema_int.h"

/* stap's checks on a path; NULL when it is good. */
static const char *path_problem(const char *path)
{
	const char *start = path;

	if (path[0] == '/')
		return "procfs path cannot start with a '/'";
	for (;;) {
		const char *slash = strchr(start, '/');
		size_t len = slash ? (size_t)(slash - start) : strlen(start);

		if (len == 0)
			return slash ? "procfs path component cannot be empty"
				     : "procfs path cannot end with a '/'";
		if ((len == 1 && start[0] == '.') || (len == 2 && !strncmp(start, "..", 2)))
			return "procfs path cannot be relative (and contain '.' or '..')";
		if (!slash)
			return NULL;
		start = slash + 1;
	}
}

/* The other procfs probes of the program on DP's file: stap's limits (FIFOs: read or written). */
static bool same_file_ok(struct sema *sm, struct derived_probe *dp, struct srcloc loc)
{
	for (int i = 0; i < sm->prog->probes.len; i++) {
		struct derived_probe *o = VEC_AT(&sm->prog->probes, i);

		if (o == dp || o->kind != PROBE_PROCFS || strcmp(o->procfs_path, dp->procfs_path))
			continue;
		if (o->procfs_write != dp->procfs_write && runtime_id_of(sm->s) != RUNTIME_KERNEL) {
			sema_error(loc, sm, "both read and write procfs probes cannot exist for the "
				   "same procfs path \"%s\" in the bpf runtime.", dp->procfs_path);
			return false;
		}
		if (!dp->procfs_write && !o->procfs_write) {
			sema_error(loc, sm, "only one read procfs probe can exist for procfs path "
				   "\"%s\"", dp->procfs_path);
			return false;
		}
	}
	return true;
}

int probes_procfs_resolve(struct sema *sm, struct derived_probe *dp, struct vec *comps)
{
	struct probe_comp *pc = probes_comp_named(comps, "procfs");
	struct probe_comp *umask = probes_comp_named(comps, "umask");
	struct probe_comp *maxsize = probes_comp_named(comps, "maxsize");
	struct srcloc loc = pc->arg ? pc->arg->loc : dp->orig->loc;
	const char *why;

	dp->procfs_path = pc->arg ? pc->arg->str : "command";
	dp->procfs_write = probes_comp_named(comps, "write") != NULL;
	dp->procfs_umask = umask ? umask->arg->num : dp->procfs_write ? 0022 : 0044;
	dp->procfs_maxsize = maxsize ? maxsize->arg->num : 0;
	why = path_problem(dp->procfs_path);
	if (why) {
		sema_error(loc, sm, "%s", why);
		return -1;
	}
	if (strchr(dp->procfs_path, '/')) {
		sema_error(loc, sm, "procfs path \"%s\" has a subfolder: pmstap makes its files "
			   "in one folder", dp->procfs_path);
		return -1;
	}
	if (maxsize && maxsize->arg->num <= 0) {
		sema_error(maxsize->arg->loc, sm, "maxsize must be greater than 0");
		return -1;
	}
	if (umask && (umask->arg->num < 0 || umask->arg->num > 0777)) {
		sema_error(umask->arg->loc, sm, "umask must be between 0 and 0777, not %lld",
			   (long long)umask->arg->num);
		return -1;
	}
	return same_file_ok(sm, dp, loc) ? 1 : -1;
}

/* ---- $value ---- */

static struct expr *call(const char *name, struct srcloc loc, struct expr *arg)
{
	struct expr *c = ast_expr(EXPR_CALL, loc);

	c->name = name;
	if (arg)
		vec_push(&c->args, arg);
	return c;
}

/* Report a bad use at LOC; *EP becomes "" so that nothing reports it again. */
static bool refuse(struct sema *sm, struct expr **ep, struct srcloc loc, const char *msg)
{
	sema_error(loc, sm, "%s", msg);
	*ep = ast_expr(EXPR_STRING, (*ep)->loc);
	(*ep)->str = "";
	return true;
}

/* T (a target) as a procfs probe allows it; else a message. */
static const char *target_problem(const struct expr *t)
{
	if (strcmp(t->name, "$value") != 0)
		return "invalid target symbol for procfs probe, $value expected";
	if (t->comps.len || t->pretty)
		return "procfs target variable $value has no members";
	if (t->addr_of)
		return "cannot take address of procfs variable";
	return NULL;
}

static bool lvalue(struct sema *sm, struct derived_probe *dp, struct expr **ep)
{
	struct expr *e = *ep, *t = e->left;
	const char *why = target_problem(t);

	if (why)
		return refuse(sm, ep, t->loc, why);
	if (dp->procfs_write)
		return refuse(sm, ep, t->loc, "procfs $value variable is read-only in a procfs "
			      "write probe");
	if (e->kind == EXPR_ASSIGN && !strcmp(e->op, "="))
		*ep = call("_set_procfs_value", t->loc, e->right);
	else if (e->kind == EXPR_ASSIGN && !strcmp(e->op, ".="))
		*ep = call("_append_procfs_value", t->loc, e->right);
	else
		return refuse(sm, ep, t->loc, "Only the following assign operators are implemented "
			      "on procfs read target variables: '=', '.='");
	return true;
}

bool probes_procfs_value(struct sema *sm, struct derived_probe *dp, struct expr **ep)
{
	struct expr *e = *ep;
	const char *why;

	if ((e->kind == EXPR_ASSIGN || e->kind == EXPR_PREFIX || e->kind == EXPR_POSTFIX) &&
	    e->left && e->left->kind == EXPR_TARGET)
		return lvalue(sm, dp, ep);
	if (e->kind != EXPR_TARGET)
		return false;
	why = target_problem(e);
	if (why)
		return refuse(sm, ep, e->loc, why);
	if (!dp->procfs_write)
		return refuse(sm, ep, e->loc, "procfs $value variable cannot be read in a procfs "
			      "read probe");
	*ep = call("_get_procfs_value", e->loc, NULL);
	return true;
}
