/*
 * control.c - stap.control.register and stap.control.deregister.
 *
 *	pmstore stap.control.register "<script text>"
 *	pmstore stap.control.deregister "<name>"
 *
 * Both need [registration] enabled = true in pmdastap.conf and a client
 * whose user is in allowed_users: pmcd passes each client's credentials
 * (PMDA_FLAG_AUTHORIZE; the uid of a local client, the user of a SASL
 * one).  The script's name is a "# name: NAME" or "// name: NAME" line in
 * its text, else script1, script2, ...  Registration checks the script
 * with pmstap -p2 before accepting it; compiling and starting it goes on
 * in its child.  What happened is kept per client context: fetching the
 * same metric from the same context gives the registered name, or the
 * diagnostics (name.stp:LINE:COL: error: ...), or why the store was refused.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmdastap.h"

struct ctx_state {
	int ctx;
	char *user;
	char *result[2];		/* STAP_CONTROL_REGISTER, _DEREGISTER */
};

static struct ctx_state *ctxs;
static int nctxs;

static struct ctx_state *ctx_get(int ctx, bool create)
{
	struct ctx_state *more;

	for (int i = 0; i < nctxs; i++)
		if (ctxs[i].ctx == ctx)
			return &ctxs[i];
	if (!create || !(more = realloc(ctxs, (size_t)(nctxs + 1) * sizeof(*ctxs))))
		return NULL;
	ctxs = more;
	memset(&ctxs[nctxs], 0, sizeof(*ctxs));
	ctxs[nctxs].ctx = ctx;
	return &ctxs[nctxs++];
}

void stap_end_context(int ctx)
{
	pmdaEventEndClient(ctx);
	stap_output_end_context(ctx);
	for (int i = 0; i < nctxs; i++) {
		if (ctxs[i].ctx != ctx)
			continue;
		free(ctxs[i].user);
		free(ctxs[i].result[0]);
		free(ctxs[i].result[1]);
		ctxs[i] = ctxs[--nctxs];
		return;
	}
}

static void set_user(int ctx, const char *user)
{
	struct ctx_state *cs = ctx_get(ctx, true);

	if (!cs)
		return;
	free(cs->user);
	cs->user = strdup(user);
	if (pmDebugOptions.appl0)
		pmNotifyErr(LOG_DEBUG, "context %d: user %s", ctx, user);
}

int stap_attribute(int ctx, int attr, const char *value, int len, pmdaExt *pmda)
{
	char name[256], buf[4096];
	struct passwd pw, *found = NULL;

	if (attr == PMDA_ATTR_USERNAME && len > 0) {
		snprintf(name, sizeof(name), "%.*s", len, value);
		set_user(ctx, name);
	} else if (attr == PMDA_ATTR_USERID && len > 0) {
		snprintf(name, sizeof(name), "%.*s", len, value);
		if (getpwuid_r((uid_t)strtoul(name, NULL, 10), &pw, buf, sizeof(buf), &found) == 0 &&
		    found)
			set_user(ctx, found->pw_name);
	}
	return pmdaAttribute(ctx, attr, value, len, pmda);
}

static void set_result(int ctx, int item, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void set_result(int ctx, int item, const char *fmt, ...)
{
	struct ctx_state *cs = ctx_get(ctx, true);
	va_list ap;
	char *text;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	if (!cs) {
		free(text);
		return;
	}
	free(cs->result[item]);
	cs->result[item] = text;
}

int stap_control_fetch(int item, pmAtomValue *atom)
{
	struct ctx_state *cs = ctx_get(pmdaGetContext(), false);

	if (item != STAP_CONTROL_REGISTER && item != STAP_CONTROL_DEREGISTER)
		return PM_ERR_PMID;
	atom->cp = cs && cs->result[item] ? cs->result[item] : "";
	return PMDA_FETCH_STATIC;
}

/* ---- register ---- */

const char *stap_header_line(const char *text, const char *key, size_t *len)
{
	size_t klen = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *q = p;
		size_t n = 0;

		while (*q == ' ' || *q == '\t')
			q++;
		if (*q == '#')
			q++;
		else if (q[0] == '/' && q[1] == '/')
			q += 2;
		else
			continue;
		while (*q == ' ' || *q == '\t')
			q++;
		if (strncmp(q, key, klen) != 0 || q[klen] != ':')
			continue;
		q += klen + 1;
		while (*q == ' ' || *q == '\t')
			q++;
		while (q[n] && !isspace((unsigned char)q[n]))
			n++;
		*len = n;
		return q;
	}
	return NULL;
}

/* The NAME of a "# name: NAME" or "// name: NAME" line, else NULL. */
static char *name_line(const char *text)
{
	size_t n;
	const char *name = stap_header_line(text, "name", &n);

	return name ? strndup(name, n) : NULL;
}

static char *next_free_name(void)
{
	char name[32];

	for (int i = 1;; i++) {
		snprintf(name, sizeof(name), "script%d", i);
		if (!stap_script_find(name))
			return strdup(name);
	}
}

static int do_register(int ctx, const char *text, size_t len)
{
	char *name, *why = NULL;
	const char *problem;
	int rc = PM_ERR_BADSTORE;

	if (len > stap_config.max_script_bytes) {
		set_result(ctx, STAP_CONTROL_REGISTER, "the script is larger than max_script_bytes (%zu)",
			   stap_config.max_script_bytes);
		return PM_ERR_BADSTORE;
	}
	name = name_line(text);
	if (!name)
		name = next_free_name();
	if (!name)
		return -ENOMEM;
	if ((problem = stap_script_name_problem(name)))
		set_result(ctx, STAP_CONTROL_REGISTER, "cannot register '%s': %s", name, problem);
	else if (stap_script_find(name))
		set_result(ctx, STAP_CONTROL_REGISTER, "cannot register '%s': a script of that name "
			   "is registered already", name);
	else if (!stap_script_register(name, text, &why))
		set_result(ctx, STAP_CONTROL_REGISTER, "%s", why ? why : "cannot register the script");
	else {
		set_result(ctx, STAP_CONTROL_REGISTER, "%s", name);
		rc = 0;
	}
	if (rc < 0)
		pmNotifyErr(LOG_INFO, "registration of '%s' refused", name);
	free(why);
	free(name);
	return rc;
}

static int do_deregister(int ctx, const char *text)
{
	char *name = strdup(text), *end;
	struct stap_script *sc;
	int rc = PM_ERR_BADSTORE;

	if (!name)
		return -ENOMEM;
	end = name + strlen(name);
	while (end > name && isspace((unsigned char)end[-1]))
		*--end = '\0';
	sc = stap_script_find(name);
	if (!sc)
		set_result(ctx, STAP_CONTROL_DEREGISTER, "no script named '%s' is registered", name);
	else if (sc->origin == STAP_ORIGIN_AUTOSTART)
		set_result(ctx, STAP_CONTROL_DEREGISTER, "'%s' is an autostart script: remove its "
			   "file from %s instead", name, stap_config.autostart_dir);
	else {
		stap_script_deregister(sc);
		set_result(ctx, STAP_CONTROL_DEREGISTER, "%s", name);
		rc = 0;
	}
	free(name);
	return rc;
}

/* May this context register scripts?  0, or the error after saying why. */
static int authorize(int ctx, int item)
{
	struct ctx_state *cs = ctx_get(ctx, false);
	const char *user = cs ? cs->user : NULL;

	if (!stap_config.registration) {
		set_result(ctx, item, "registration is disabled: set enabled = true in section "
			   "[registration] of %s", stap_config.path ? stap_config.path : "pmdastap.conf");
		pmNotifyErr(LOG_INFO, "store refused: registration is disabled");
		return PM_ERR_PERMISSION;
	}
	if (!stap_config_user_in(&stap_config.allowed_users, user)) {
		set_result(ctx, item, "user '%s' may not register scripts: see allowed_users in "
			   "section [registration] of %s", user ? user : "(unknown)",
			   stap_config.path ? stap_config.path : "pmdastap.conf");
		pmNotifyErr(LOG_INFO, "store refused: user %s is not in allowed_users",
			    user ? user : "(unknown)");
		return PM_ERR_PERMISSION;
	}
	return 0;
}

static int store_one(int ctx, pmValueSet *vs)
{
	int item = (int)pmID_item(vs->pmid), rc;
	struct stap_metric *m = NULL;
	const pmValueBlock *vb;
	char *text;

	if (pmID_cluster(vs->pmid) >= STAP_CLUSTER_FIRST_SCRIPT)
		m = stap_metric_by_pmid(vs->pmid);
	if (m ? m->kind != STAP_M_PROCFS :
		pmID_cluster(vs->pmid) != STAP_CLUSTER_CONTROL ||
		(item != STAP_CONTROL_REGISTER && item != STAP_CONTROL_DEREGISTER))
		return PM_ERR_PERMISSION;
	if (vs->numval != 1 || (vs->valfmt != PM_VAL_SPTR && vs->valfmt != PM_VAL_DPTR))
		return PM_ERR_BADSTORE;
	vb = vs->vlist[0].value.pval;
	if (vb->vtype != PM_TYPE_STRING || vb->vlen < PM_VAL_HDR_SIZE)
		return PM_ERR_BADSTORE;
	/* a procfs file's writers: whom registration allows (its result item says why not) */
	if ((rc = authorize(ctx, m ? STAP_CONTROL_REGISTER : item)) < 0)
		return rc;
	if (m)
		return stap_procfs_store(m, vb->vbuf, strnlen(vb->vbuf, vb->vlen - PM_VAL_HDR_SIZE));
	text = strndup(vb->vbuf, vb->vlen - PM_VAL_HDR_SIZE);
	if (!text)
		return -ENOMEM;
	rc = item == STAP_CONTROL_REGISTER ? do_register(ctx, text, strlen(text)) :
					     do_deregister(ctx, text);
	free(text);
	return rc;
}

int stap_store(pmResult *result, pmdaExt *pmda)
{
	int rc;

	pmdaEventNewClient(pmda->e_context);
	for (int i = 0; i < result->numpmid; i++)
		if ((rc = store_one(pmda->e_context, result->vset[i])) < 0)
			return rc;
	return 0;
}
