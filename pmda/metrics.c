/*
 * metrics.c - metric tables and names, built from what scripts say about
 * themselves (struct stp_meta), never written by hand.
 *
 * Static metrics (stap.control, stap.info, stap.scripts, stap.probes) are
 * in the table below.  For each script, each exported global becomes
 *
 *	stap.<script>.<global>			long or string, scalar or per key
 *	stap.<script>.<global>.{count,sum,min,max,avg}	statistics
 *	stap.<script>.<global>.hist		histogram buckets as instances
 *
 * with help, units and semantics from the global's doc comment:
 *	/ ** Bytes read, by process name.  More text.
 *	  * @units bytes @semantics counter * /
 * The first sentence is the one-line help, the whole text the long help.
 * @units: bytes kbytes mbytes gbytes tbytes nsec usec msec sec min hour
 * count none, optionally "/<time unit>" (bytes/sec).  @semantics: counter
 * instant discrete; it applies to longs and strings.  Defaults: @count,
 * @sum and buckets are counters, the rest instant; no units.
 *
 * The whole stap.* tree is dynamic (pmns: "stap STAP:*:*"): names are
 * answered from a pmdaNameSpace rebuilt whenever scripts come, go or are
 * recompiled, and pmcd is told with PMDA_EXT_NAMES_CHANGE.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmdastap.h"

#define ONELINE_MAX 200

static pmdaNameSpace *tree;
static pmdaMetric *table;
static pmdaExt *pmda_ext;

#define UNITS_NONE PMDA_PMUNITS(0, 0, 0, 0, 0, 0)
#define UNITS_COUNT PMDA_PMUNITS(0, 0, 1, 0, 0, PM_COUNT_ONE)
#define UNITS_BYTES PMDA_PMUNITS(1, 0, 0, PM_SPACE_BYTE, 0, 0)
#define UNITS_SEC PMDA_PMUNITS(0, 1, 0, 0, PM_TIME_SEC, 0)
#define UNITS_NSEC PMDA_PMUNITS(0, 1, 0, 0, PM_TIME_NSEC, 0)

struct static_metric {
	const char *name;
	int cluster, item, type, indom, sem;
	pmUnits units;
};

#define NO_INDOM (-1)

static const struct static_metric static_metrics[] = {
	{ "stap.control.register", STAP_CLUSTER_CONTROL, STAP_CONTROL_REGISTER, PM_TYPE_STRING,
	  NO_INDOM, PM_SEM_DISCRETE, UNITS_NONE },
	{ "stap.control.deregister", STAP_CLUSTER_CONTROL, STAP_CONTROL_DEREGISTER, PM_TYPE_STRING,
	  NO_INDOM, PM_SEM_DISCRETE, UNITS_NONE },
	{ "stap.info.version", STAP_CLUSTER_INFO, STAP_INFO_VERSION, PM_TYPE_STRING,
	  NO_INDOM, PM_SEM_DISCRETE, UNITS_NONE },
	{ "stap.info.registration", STAP_CLUSTER_INFO, STAP_INFO_REGISTRATION, PM_TYPE_U32,
	  NO_INDOM, PM_SEM_DISCRETE, UNITS_NONE },
	{ "stap.info.autostart_dir", STAP_CLUSTER_INFO, STAP_INFO_AUTOSTART_DIR, PM_TYPE_STRING,
	  NO_INDOM, PM_SEM_DISCRETE, UNITS_NONE },
	{ "stap.scripts.status", STAP_CLUSTER_SCRIPTS, STAP_SCRIPTS_STATUS, PM_TYPE_STRING,
	  STAP_INDOM_SCRIPTS, PM_SEM_INSTANT, UNITS_NONE },
	{ "stap.scripts.error", STAP_CLUSTER_SCRIPTS, STAP_SCRIPTS_ERROR, PM_TYPE_STRING,
	  STAP_INDOM_SCRIPTS, PM_SEM_INSTANT, UNITS_NONE },
	{ "stap.scripts.source", STAP_CLUSTER_SCRIPTS, STAP_SCRIPTS_SOURCE, PM_TYPE_STRING,
	  STAP_INDOM_SCRIPTS, PM_SEM_DISCRETE, UNITS_NONE },
	{ "stap.scripts.uptime", STAP_CLUSTER_SCRIPTS, STAP_SCRIPTS_UPTIME, PM_TYPE_U64,
	  STAP_INDOM_SCRIPTS, PM_SEM_INSTANT, UNITS_SEC },
	{ "stap.scripts.errors", STAP_CLUSTER_SCRIPTS, STAP_SCRIPTS_ERRORS, PM_TYPE_U64,
	  STAP_INDOM_SCRIPTS, PM_SEM_COUNTER, UNITS_COUNT },
	{ "stap.scripts.skipped", STAP_CLUSTER_SCRIPTS, STAP_SCRIPTS_SKIPPED, PM_TYPE_U64,
	  STAP_INDOM_SCRIPTS, PM_SEM_COUNTER, UNITS_COUNT },
	{ "stap.scripts.dropped", STAP_CLUSTER_SCRIPTS, STAP_SCRIPTS_DROPPED, PM_TYPE_U64,
	  STAP_INDOM_SCRIPTS, PM_SEM_COUNTER, UNITS_COUNT },
	{ "stap.scripts.map_full", STAP_CLUSTER_SCRIPTS, STAP_SCRIPTS_MAP_FULL, PM_TYPE_U64,
	  STAP_INDOM_SCRIPTS, PM_SEM_COUNTER, UNITS_COUNT },
	{ "stap.scripts.keys_cut", STAP_CLUSTER_SCRIPTS, STAP_SCRIPTS_KEYS_CUT, PM_TYPE_U64,
	  STAP_INDOM_SCRIPTS, PM_SEM_COUNTER, UNITS_COUNT },
	{ "stap.scripts.output", STAP_CLUSTER_SCRIPTS, STAP_SCRIPTS_OUTPUT, PM_TYPE_EVENT,
	  STAP_INDOM_SCRIPTS, PM_SEM_INSTANT, UNITS_NONE },
	{ "stap.scripts.output_lines", STAP_CLUSTER_SCRIPTS, STAP_SCRIPTS_OUTPUT_LINES, PM_TYPE_U64,
	  STAP_INDOM_SCRIPTS, PM_SEM_COUNTER, UNITS_COUNT },
	{ "stap.scripts.output_bytes", STAP_CLUSTER_SCRIPTS, STAP_SCRIPTS_OUTPUT_BYTES, PM_TYPE_U64,
	  STAP_INDOM_SCRIPTS, PM_SEM_COUNTER, UNITS_BYTES },
	{ "stap.scripts.last_output", STAP_CLUSTER_SCRIPTS, STAP_SCRIPTS_LAST_OUTPUT, PM_TYPE_STRING,
	  STAP_INDOM_SCRIPTS, PM_SEM_INSTANT, UNITS_NONE },
	{ "stap.scripts.output_text", STAP_CLUSTER_SCRIPTS, STAP_SCRIPTS_OUTPUT_TEXT, PM_TYPE_STRING,
	  STAP_INDOM_SCRIPTS, PM_SEM_INSTANT, UNITS_NONE },
	{ "stap.scripts.output_missed", STAP_CLUSTER_SCRIPTS, STAP_SCRIPTS_OUTPUT_MISSED, PM_TYPE_U64,
	  STAP_INDOM_SCRIPTS, PM_SEM_COUNTER, UNITS_COUNT },
	{ "stap.scripts.line", STAP_CLUSTER_SCRIPTS, STAP_SCRIPTS_LINE, PM_TYPE_STRING,
	  NO_INDOM, PM_SEM_INSTANT, UNITS_NONE },
	{ "stap.scripts.restarts", STAP_CLUSTER_SCRIPTS, STAP_SCRIPTS_RESTARTS, PM_TYPE_U32,
	  STAP_INDOM_SCRIPTS, PM_SEM_COUNTER, UNITS_COUNT },
	{ "stap.scripts.pid", STAP_CLUSTER_SCRIPTS, STAP_SCRIPTS_PID, PM_TYPE_U32,
	  STAP_INDOM_SCRIPTS, PM_SEM_INSTANT, UNITS_NONE },
	{ "stap.probes.hits", STAP_CLUSTER_PROBES, STAP_PROBES_HITS, PM_TYPE_U64,
	  STAP_INDOM_PROBES, PM_SEM_COUNTER, UNITS_COUNT },
	{ "stap.probes.run_time", STAP_CLUSTER_PROBES, STAP_PROBES_RUN_TIME, PM_TYPE_U64,
	  STAP_INDOM_PROBES, PM_SEM_COUNTER, UNITS_NSEC },
	{ "stap.probes.attached", STAP_CLUSTER_PROBES, STAP_PROBES_ATTACHED, PM_TYPE_U32,
	  STAP_INDOM_PROBES, PM_SEM_INSTANT, UNITS_NONE },
	{ "stap.probes.skipped", STAP_CLUSTER_PROBES, STAP_PROBES_SKIPPED, PM_TYPE_U64,
	  STAP_INDOM_PROBES, PM_SEM_COUNTER, UNITS_COUNT },
};

#define NSTATIC ((int)(sizeof(static_metrics) / sizeof(static_metrics[0])))

pmID stap_line_pmid(void)
{
	return pmID_build((unsigned int)stap_domain, STAP_CLUSTER_SCRIPTS, STAP_SCRIPTS_LINE);
}

/* ---- doc comments ---- */

struct doc {
	char *text;			/* cleaned, tags removed */
	pmUnits units;
	int sem;			/* -1: not given */
};

static const struct {
	const char *word;
	pmUnits units;
} unit_words[] = {
	{ "byte", PMDA_PMUNITS(1, 0, 0, PM_SPACE_BYTE, 0, 0) },
	{ "kbyte", PMDA_PMUNITS(1, 0, 0, PM_SPACE_KBYTE, 0, 0) },
	{ "mbyte", PMDA_PMUNITS(1, 0, 0, PM_SPACE_MBYTE, 0, 0) },
	{ "gbyte", PMDA_PMUNITS(1, 0, 0, PM_SPACE_GBYTE, 0, 0) },
	{ "tbyte", PMDA_PMUNITS(1, 0, 0, PM_SPACE_TBYTE, 0, 0) },
	{ "nsec", PMDA_PMUNITS(0, 1, 0, 0, PM_TIME_NSEC, 0) },
	{ "usec", PMDA_PMUNITS(0, 1, 0, 0, PM_TIME_USEC, 0) },
	{ "msec", PMDA_PMUNITS(0, 1, 0, 0, PM_TIME_MSEC, 0) },
	{ "sec", PMDA_PMUNITS(0, 1, 0, 0, PM_TIME_SEC, 0) },
	{ "min", PMDA_PMUNITS(0, 1, 0, 0, PM_TIME_MIN, 0) },
	{ "hour", PMDA_PMUNITS(0, 1, 0, 0, PM_TIME_HOUR, 0) },
	{ "count", PMDA_PMUNITS(0, 0, 1, 0, 0, PM_COUNT_ONE) },
	{ "none", PMDA_PMUNITS(0, 0, 0, 0, 0, 0) },
};

/* One unit word ("bytes" is "byte"); false when unknown. */
static bool unit_word(const char *w, size_t n, pmUnits *u)
{
	if (n > 1 && w[n - 1] == 's' && strncmp(w, "nsec", n) && strncmp(w, "usec", n) &&
	    strncmp(w, "msec", n) && strncmp(w, "sec", n))
		n--;
	for (size_t i = 0; i < sizeof(unit_words) / sizeof(unit_words[0]); i++)
		if (strlen(unit_words[i].word) == n && strncmp(unit_words[i].word, w, n) == 0) {
			*u = unit_words[i].units;
			return true;
		}
	return false;
}

/* "bytes", "count", "bytes/sec": false when not understood. */
static bool parse_units(const char *v, pmUnits *u)
{
	const char *slash = strchr(v, '/');
	pmUnits per;

	if (!slash)
		return unit_word(v, strlen(v), u);
	if (!unit_word(v, (size_t)(slash - v), u) || !unit_word(slash + 1, strlen(slash + 1), &per))
		return false;
	if (per.dimTime != 1 || u->dimTime != 0)
		return false;
	u->dimTime = -1;
	u->scaleTime = per.scaleTime;
	return true;
}

static int parse_sem(const char *v)
{
	if (!strcmp(v, "counter"))
		return PM_SEM_COUNTER;
	if (!strcmp(v, "instant"))
		return PM_SEM_INSTANT;
	if (!strcmp(v, "discrete"))
		return PM_SEM_DISCRETE;
	return -1;
}

/* The comment's lines without their leading " * ", blank lines at either end dropped. */
static char *clean_lines(const char *raw)
{
	char *out = malloc(strlen(raw) + 1), *o = out;
	const char *p = raw;

	if (!out)
		return NULL;
	while (*p) {
		const char *end = strchr(p, '\n'), *q = p;
		size_t n;

		if (!end)
			end = p + strlen(p);
		while (q < end && isspace((unsigned char)*q))
			q++;
		while (q < end && *q == '*')
			q++;
		if (q < end && *q == ' ')
			q++;
		n = (size_t)(end - q);
		while (n && isspace((unsigned char)q[n - 1]))
			n--;
		if (n || o > out) {
			memcpy(o, q, n);
			o += n;
			*o++ = '\n';
		}
		p = *end ? end + 1 : end;
	}
	while (o > out && isspace((unsigned char)o[-1]))
		o--;
	*o = '\0';
	return out;
}

static void tag(struct doc *d, const char *tagname, const char *value, const struct stp_meta_global *g,
		const char *script)
{
	pmUnits u;
	int sem;

	if (!strcmp(tagname, "units")) {
		if (parse_units(value, &u))
			d->units = u;
		else
			pmNotifyErr(LOG_WARNING, "script %s: global %s: unknown @units '%s': ignored",
				    script, g->name, value);
	} else if (!strcmp(tagname, "semantics")) {
		if ((sem = parse_sem(value)) >= 0)
			d->sem = sem;
		else
			pmNotifyErr(LOG_WARNING, "script %s: global %s: unknown @semantics '%s' "
				    "(counter, instant or discrete): ignored", script, g->name, value);
	}
}

static size_t word_len(const char *p)
{
	size_t n = 0;

	while (p[n] && !isspace((unsigned char)p[n]))
		n++;
	return n;
}

/* Take @units and @semantics out of the text, applying them. */
static void parse_doc(struct doc *d, const struct stp_meta_global *g, const char *script)
{
	char *text = g->doc ? clean_lines(g->doc) : NULL, *o;
	const char *p;

	memset(d, 0, sizeof(*d));
	d->sem = -1;
	if (!text)
		return;
	for (p = text, o = text; *p;) {
		size_t n = word_len(p + 1), m;
		char name[32], value[64];

		if (*p != '@' || (p > text && !isspace((unsigned char)p[-1])) ||
		    (strncmp(p + 1, "units", n) && strncmp(p + 1, "semantics", n)) || n == 0) {
			*o++ = *p++;
			continue;
		}
		snprintf(name, sizeof(name), "%.*s", (int)n, p + 1);
		p += 1 + n;
		while (*p == ' ' || *p == '\t')
			p++;
		m = word_len(p);
		snprintf(value, sizeof(value), "%.*s", (int)m, p);
		p += m;
		tag(d, name, value, g, script);
	}
	*o = '\0';
	d->text = clean_lines(text);
	free(text);
}

/* The first sentence, on one line. */
static char *first_sentence(const char *text)
{
	char buf[ONELINE_MAX + 1];
	size_t n = 0;

	for (const char *p = text; *p && n < ONELINE_MAX; p++) {
		char c = isspace((unsigned char)*p) ? ' ' : *p;

		if (c == ' ' && (n == 0 || buf[n - 1] == ' '))
			continue;
		buf[n++] = c;
		if (c == '.' && (!p[1] || isspace((unsigned char)p[1])))
			break;
		if (*p == '\n' && p[1] == '\n')
			break;
	}
	while (n && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
	return strdup(buf);
}

/* ---- a script's metrics ---- */

static const char *const sub_names[] = { "", "count", "sum", "min", "max", "avg", "hist" };
static const char *const sub_words[] = {
	"", "number of values", "sum of values", "smallest value", "largest value",
	"average value", "histogram buckets",
};

static void type_words(const struct stp_meta_global *g, char *buf, size_t size)
{
	static const char *const t[] = { "?", "long", "string", "statistics" };
	size_t n = (size_t)snprintf(buf, size, "%s", t[g->type <= STP_TYPE_STATS ? g->type : 0]);

	for (int k = 0; k < g->nkeys && n < size; k++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", k ? ", " : " [",
				      t[g->key_types[k] <= STP_TYPE_STATS ? g->key_types[k] : 0]);
	if (g->nkeys && n < size)
		snprintf(buf + n, size - n, "]");
}

static char *base_oneline(const char *first, const struct stp_meta_global *g, const char *script,
			  bool strip_period)
{
	char *base;
	size_t n;

	if (!first) {
		if (asprintf(&base, "global %s of script %s", g->name, script) < 0)
			return NULL;
		return base;
	}
	base = strdup(first);
	n = base ? strlen(base) : 0;
	if (strip_period && n && base[n - 1] == '.')
		base[n - 1] = '\0';
	return base;
}

static void set_texts(struct stap_metric *m, const struct doc *d, const struct stp_meta_global *g)
{
	const char *script = m->script->name, *file = g->loc.file ? g->loc.file : "?";
	bool has_text = d->text && *d->text;
	char *first = has_text ? first_sentence(d->text) : NULL;
	char *base = base_oneline(first, g, script, m->kind != STAP_M_VALUE);
	char type[128];

	type_words(g, type, sizeof(type));
	if (m->kind == STAP_M_VALUE || !base)
		m->oneline = base ? base : NULL;
	else if (asprintf(&m->oneline, "%s (%s)", base, sub_words[m->kind]) < 0)
		m->oneline = NULL;
	if (m->kind != STAP_M_VALUE)
		free(base);
	if (asprintf(&m->help, "%s%sGlobal '%s' of script %s (%s), declared at %s:%d:%d.",
		     has_text ? d->text : "", has_text ? "\n\n" : "", g->name, script, type, file,
		     g->loc.line, g->loc.col) < 0)
		m->help = NULL;
	free(first);
}

static int default_sem(enum stap_mkind kind)
{
	return kind == STAP_M_COUNT || kind == STAP_M_SUM || kind == STAP_M_HIST ? PM_SEM_COUNTER :
										   PM_SEM_INSTANT;
}

static void set_desc(struct stap_metric *m, const struct doc *d, const struct stp_meta_global *g,
		     int item, pmInDom indom)
{
	pmDesc *desc = &m->desc;

	desc->pmid = pmID_build((unsigned int)stap_domain, (unsigned int)m->script->cluster,
				(unsigned int)item);
	desc->indom = indom;
	desc->type = g->type == STP_TYPE_STRING ? PM_TYPE_STRING : PM_TYPE_64;
	desc->sem = default_sem(m->kind);
	if (m->kind == STAP_M_VALUE && d->sem >= 0)
		desc->sem = d->sem;
	memset(&desc->units, 0, sizeof(desc->units));
	if (m->kind == STAP_M_COUNT || m->kind == STAP_M_HIST)
		desc->units = (pmUnits)UNITS_COUNT;
	else
		desc->units = d->units;
}

static pmInDom key_indom(const struct stap_script *sc, int item)
{
	return stap_indom((unsigned int)sc->cluster << 10 | (unsigned int)item);
}

static int add_metric(struct stap_script *sc, int g, enum stap_mkind kind, const struct doc *d,
		      int anchor)
{
	const struct stp_meta_global *gl = &sc->meta->globals[g];
	struct stap_metric *m = &sc->metrics[sc->nmetrics];
	char rel[160];
	int item;
	pmInDom indom = PM_INDOM_NULL;

	snprintf(rel, sizeof(rel), "%s%s%s", gl->name, kind ? "." : "", sub_names[kind]);
	item = kind == STAP_M_VALUE ? anchor : stap_identity_item(sc->cluster, rel);
	if (item < 0)
		return -1;
	if (kind == STAP_M_HIST)
		indom = key_indom(sc, item);
	else if (gl->nkeys)
		indom = key_indom(sc, anchor);
	memset(m, 0, sizeof(*m));
	m->script = sc;
	m->global = g;
	m->kind = kind;
	if (asprintf(&m->name, "stap.%s.%s", sc->name, rel) < 0)
		return -1;
	set_desc(m, d, gl, item, indom);
	set_texts(m, d, gl);
	if (indom != PM_INDOM_NULL)
		stap_identity_load(indom);
	sc->nmetrics++;
	return 0;
}

static void global_metrics(struct stap_script *sc, int g)
{
	const struct stp_meta_global *gl = &sc->meta->globals[g];
	struct doc d;
	int anchor = stap_identity_item(sc->cluster, gl->name);

	if (anchor < 0)
		return;
	parse_doc(&d, gl, sc->name);
	if (gl->type != STP_TYPE_STATS) {
		add_metric(sc, g, STAP_M_VALUE, &d, anchor);
	} else {
		for (int k = STAP_M_COUNT; k <= STAP_M_AVG; k++)
			add_metric(sc, g, (enum stap_mkind)k, &d, anchor);
		if (gl->hist.kind != STP_META_HIST_NONE)
			add_metric(sc, g, STAP_M_HIST, &d, anchor);
	}
	free(d.text);
}

/*
 * stap.SCRIPT.procfs.NAME: each procfs file of a script pmdastap runs, a
 * string whose fetch runs its .read handler (as a reader of the file
 * does), or that pmstore writes to its .write handlers.  NAME must be a
 * PMNS name (letters, digits, _; probe prometheus's __prometheus is
 * "prometheus"); a global named procfs keeps the name, and a handed-over
 * run's folder is its user's: those files are left out, and logged.
 */
static bool pmns_word(const char *w)
{
	if (!((*w >= 'a' && *w <= 'z') || (*w >= 'A' && *w <= 'Z')))
		return false;
	for (; *w; w++)
		if (!((*w >= 'a' && *w <= 'z') || (*w >= 'A' && *w <= 'Z') ||
		      (*w >= '0' && *w <= '9') || *w == '_'))
			return false;
	return true;
}

/* "declared at FILE:LINE:COL" of P */
static void loc_text(const struct stp_meta_probe *p, char *out, size_t size)
{
	snprintf(out, size, "declared at %s:%d:%d", p->loc.file ? p->loc.file : "?", p->loc.line,
		 p->loc.col);
}

/*
 * The help of file NAME's metric: what a fetch gives (its .read handler's
 * answer), what a pmstore does (gives its .write handlers the value), or
 * both, for a module's file with both probes.
 */
static void procfs_help(const struct stap_script *sc, const char *name, struct stap_metric *m)
{
	const struct stp_meta_probe *rd = stap_procfs_probe(sc->meta, name, false);
	const struct stp_meta_probe *wr = stap_procfs_probe(sc->meta, name, true);
	char rloc[512] = "", wloc[512] = "";

	if (rd)
		loc_text(rd, rloc, sizeof(rloc));
	if (wr)
		loc_text(wr, wloc, sizeof(wloc));
	if (asprintf(&m->oneline, "procfs file %s of script %s: %s%s%s", name, sc->name,
		     rd ? "its .read handler's answer" : "", rd && wr ? "; " : "",
		     wr ? "pmstore writes to it" : "") < 0)
		m->oneline = NULL;
	if (rd && wr) {
		if (asprintf(&m->help, "Each fetch runs %s's procfs(\"%s\").read handler (%s), as a "
			     "reader of its file does, and gives what it put in $value. What pmstore "
			     "stores here, its .write handlers (%s) get in $value, as from a writer "
			     "of its file. Stores are allowed as registrations are ([registration] "
			     "of pmdastap.conf).", sc->name, name, rloc, wloc) < 0)
			m->help = NULL;
	} else if (wr) {
		if (asprintf(&m->help, "What pmstore stores here, %s's procfs(\"%s\").write "
			     "handlers get in $value, as from a writer of its file (%s); no value "
			     "to fetch. Stores are allowed as registrations are ([registration] of "
			     "pmdastap.conf).", sc->name, name, wloc) < 0)
			m->help = NULL;
	} else if (asprintf(&m->help, "Each fetch runs %s's procfs(\"%s\").read handler (%s), as "
			    "a reader of its file does, and gives what it put in $value.", sc->name,
			    name, rloc) < 0)
		m->help = NULL;
}

static void procfs_metric(struct stap_script *sc, int i)
{
	const struct stp_meta_probe *p = &sc->meta->probes[i];
	const char *name = strcmp(p->procfs_path, "__prometheus") ? p->procfs_path : "prometheus";
	struct stap_metric *m = &sc->metrics[sc->nmetrics];
	char rel[160];
	int item;

	if (!pmns_word(name) || strlen(name) > 100) {
		pmNotifyErr(LOG_INFO, "script %s: procfs file \"%s\" has no metric: not a PMNS name",
			    sc->name, p->procfs_path);
		return;
	}
	snprintf(rel, sizeof(rel), "procfs.%s", name);
	if ((item = stap_identity_item(sc->cluster, rel)) < 0)
		return;
	memset(m, 0, sizeof(*m));
	m->script = sc;
	m->global = -1;
	m->probe = i;
	m->kind = STAP_M_PROCFS;
	if (asprintf(&m->name, "stap.%s.%s", sc->name, rel) < 0)
		return;
	m->desc = (pmDesc){ .pmid = pmID_build((unsigned int)stap_domain, (unsigned int)sc->cluster,
					       (unsigned int)item),
			    .type = PM_TYPE_STRING, .indom = PM_INDOM_NULL, .sem = PM_SEM_INSTANT };
	procfs_help(sc, p->procfs_path, m);
	sc->nmetrics++;
}

static void procfs_metrics(struct stap_script *sc)
{
	const struct stp_meta *meta = sc->meta;

	for (int g = 0; g < meta->nglobals; g++)
		if (meta->globals[g].exported && !strcmp(meta->globals[g].name, "procfs")) {
			pmNotifyErr(LOG_INFO, "script %s: its global 'procfs' keeps the name: "
				    "no metrics for its procfs files", sc->name);
			return;
		}
	for (int i = 0; i < meta->nprobes; i++) {
		const struct stp_meta_probe *p = &meta->probes[i];
		bool again = false;

		if (p->kind != STP_PROBE_PROCFS)
			continue;
		for (int j = 0; j < i && !again; j++)
			again = meta->probes[j].kind == STP_PROBE_PROCFS &&
				!strcmp(meta->probes[j].procfs_path, p->procfs_path);
		if (again)
			continue;
		if (sc->peer_pid) {
			pmNotifyErr(LOG_INFO, "script %s: procfs file %s has no metric: the run "
				    "handed over serves it in its user's folder", sc->name,
				    p->procfs_path);
			continue;
		}
		procfs_metric(sc, i);
	}
}

/* "script::point", "#2" and on for a point that occurs again. */
/* Probe I's instance name: "script::point", "#N" after the Nth probe of the same point. */
static char *probe_inst_name(const struct stap_script *sc, int i, int seen)
{
	const struct stp_meta *m = sc->meta;
	int rc;
	char *name;

	if (seen > 1)
		rc = asprintf(&name, "%s::%s#%d", sc->name, m->probes[i].point, seen);
	else
		rc = asprintf(&name, "%s::%s", sc->name, m->probes[i].point);
	if (rc < 0)
		return NULL;
	for (char *p = name; *p; p++)
		if (*p == ' ')
			*p = '_';
	return name;
}

static const struct stp_meta *sort_meta;	/* qsort has no argument for it */

static int by_point(const void *a, const void *b)
{
	int i = *(const int *)a, j = *(const int *)b;
	int c = strcmp(sort_meta->probes[i].point, sort_meta->probes[j].point);

	return c ? c : (i > j) - (i < j);
}

/*
 * For each probe, how many probes up to it have its point (1 for the
 * first): sorted, not compared pairwise, since a handed-over script may
 * have 65536 probes.  NULL when out of memory.
 */
static int *probe_seen(const struct stp_meta *m)
{
	int n = m->nprobes, *order = malloc(((size_t)n + 1) * sizeof(int));
	int *seen = calloc((size_t)n + 1, sizeof(int));

	if (!order || !seen) {
		free(order);
		free(seen);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		order[i] = i;
	sort_meta = m;
	qsort(order, (size_t)n, sizeof(int), by_point);
	for (int k = 0; k < n; k++)
		seen[order[k]] = k > 0 && strcmp(m->probes[order[k - 1]].point,
						  m->probes[order[k]].point) == 0 ?
				 seen[order[k - 1]] + 1 : 1;
	free(order);
	return seen;
}

static void probe_instances(struct stap_script *sc)
{
	pmInDom indom = stap_indom(STAP_INDOM_PROBES);
	int n = sc->meta->nprobes, *seen = probe_seen(sc->meta);

	sc->probe_refs = seen ? calloc((size_t)n + 1, sizeof(*sc->probe_refs)) : NULL;
	if (!sc->probe_refs) {
		free(seen);
		return;
	}
	for (int i = 0; i < n; i++) {
		char *name = probe_inst_name(sc, i, seen[i]);
		struct stap_probe_ref *r = &sc->probe_refs[i];

		r->script = sc;
		r->probe = i;
		r->inst = name ? pmdaCacheStore(indom, PMDA_CACHE_ADD, name, r) : -1;
		free(name);
	}
	free(seen);
	stap_identity_save(indom);
}

int stap_metrics_build(struct stap_script *sc)
{
	const struct stp_meta *m = sc->meta;
	int most = 0;

	stap_metrics_free(sc);
	for (int g = 0; g < m->nglobals; g++)
		most += m->globals[g].exported ? 7 : 0;
	for (int i = 0; i < m->nprobes; i++)
		most += m->probes[i].kind == STP_PROBE_PROCFS;
	sc->metrics = calloc((size_t)most + 1, sizeof(*sc->metrics));
	if (!sc->metrics)
		return -1;
	for (int g = 0; g < m->nglobals; g++)
		if (m->globals[g].exported)
			global_metrics(sc, g);
	procfs_metrics(sc);
	stap_identity_save(stap_indom((unsigned int)sc->cluster << 10 | STAP_ITEM_CACHE));
	probe_instances(sc);
	return 0;
}

void stap_metrics_free(struct stap_script *sc)
{
	pmInDom probes = stap_indom(STAP_INDOM_PROBES);
	char *name;

	for (int i = 0; i < sc->nmetrics; i++) {
		free(sc->metrics[i].name);
		free(sc->metrics[i].oneline);
		free(sc->metrics[i].help);
	}
	free(sc->metrics);
	sc->metrics = NULL;
	sc->nmetrics = 0;
	for (int i = 0; sc->probe_refs && sc->meta && i < sc->meta->nprobes; i++)
		if (sc->probe_refs[i].inst >= 0 &&
		    pmdaCacheLookup(probes, sc->probe_refs[i].inst, &name, NULL) >= 0)
			pmdaCacheStore(probes, PMDA_CACHE_HIDE, name, NULL);
	free(sc->probe_refs);
	sc->probe_refs = NULL;
}

/* ---- the table and the names ---- */

static void static_entry(pmdaMetric *pm, const struct static_metric *s)
{
	memset(pm, 0, sizeof(*pm));
	pm->m_desc.pmid = pmID_build((unsigned int)stap_domain, (unsigned int)s->cluster,
				     (unsigned int)s->item);
	pm->m_desc.type = s->type;
	pm->m_desc.indom = s->indom == NO_INDOM ? PM_INDOM_NULL : stap_indom((unsigned int)s->indom);
	pm->m_desc.sem = s->sem;
	pm->m_desc.units = s->units;
}

static int count_metrics(void)
{
	int n = NSTATIC;

	for (int i = 0; i < stap_nscripts; i++)
		if (!stap_scripts[i]->removed)
			n += stap_scripts[i]->nmetrics;
	return n;
}

static pmdaMetric *make_table(int *n)
{
	pmdaMetric *t = calloc((size_t)count_metrics() + 1, sizeof(*t));
	int k = 0;

	if (!t)
		return NULL;
	for (int i = 0; i < NSTATIC; i++)
		static_entry(&t[k++], &static_metrics[i]);
	for (int i = 0; i < stap_nscripts; i++) {
		struct stap_script *sc = stap_scripts[i];

		for (int j = 0; !sc->removed && j < sc->nmetrics; j++) {
			t[k].m_user = &sc->metrics[j];
			t[k++].m_desc = sc->metrics[j].desc;
		}
	}
	*n = k;
	return t;
}

/* Names go in last first: a tree lists children newest first, so clients see declaration order. */
static pmdaNameSpace *make_tree(void)
{
	pmdaNameSpace *t;

	if (pmdaTreeCreate(&t) < 0)
		return NULL;
	for (int i = stap_nscripts - 1; i >= 0; i--) {
		struct stap_script *sc = stap_scripts[i];

		for (int j = sc->nmetrics - 1; !sc->removed && j >= 0; j--)
			pmdaTreeInsert(t, sc->metrics[j].desc.pmid, sc->metrics[j].name);
	}
	for (int i = NSTATIC - 1; i >= 0; i--)
		pmdaTreeInsert(t, pmID_build((unsigned int)stap_domain,
					     (unsigned int)static_metrics[i].cluster,
					     (unsigned int)static_metrics[i].item),
			       static_metrics[i].name);
	pmdaTreeRebuildHash(t, count_metrics());
	return t;
}

void stap_metrics_rebuild(void)
{
	pmdaMetric *old = table;
	pmdaNameSpace *t = make_tree();
	int n = 0;

	table = make_table(&n);
	if (!table || !t) {
		pmNotifyErr(LOG_ERR, "out of memory for the metric table");
		return;
	}
	if (pmda_ext)
		pmdaRehash(pmda_ext, table, n);
	free(old);
	if (tree)
		pmdaTreeRelease(tree);
	tree = t;
	stap_names_changed();
}

void stap_metrics_init(pmdaInterface *dispatch)
{
	int n = 0;

	tree = make_tree();
	table = make_table(&n);
	pmdaInit(dispatch, NULL, 0, table, n);
	pmda_ext = dispatch->version.any.ext;
}

/* ---- callbacks ---- */

int stap_pmid(const char *name, pmID *pmid, pmdaExt *pmda)
{
	pmdaEventNewClient(pmda->e_context);
	return tree ? pmdaTreePMID(tree, name, pmid) : PM_ERR_NAME;
}

int stap_name(pmID pmid, char ***names, pmdaExt *pmda)
{
	pmdaEventNewClient(pmda->e_context);
	return tree ? pmdaTreeName(tree, pmid, names) : PM_ERR_PMID;
}

int stap_children(const char *name, int traverse, char ***kids, int **sts, pmdaExt *pmda)
{
	pmdaEventNewClient(pmda->e_context);
	return tree ? pmdaTreeChildren(tree, name, traverse, kids, sts) : PM_ERR_NAME;
}

struct stap_metric *stap_metric_by_pmid(pmID pmid)
{
	struct stap_script *sc = stap_script_by_cluster((int)pmID_cluster(pmid));

	for (int i = 0; sc && i < sc->nmetrics; i++)
		if (sc->metrics[i].desc.pmid == pmid)
			return &sc->metrics[i];
	return NULL;
}

struct stap_metric *stap_metric_by_indom(pmInDom indom)
{
	unsigned int serial = pmInDom_serial(indom);
	struct stap_script *sc = stap_script_by_cluster((int)(serial >> 10));

	for (int i = 0; sc && i < sc->nmetrics; i++)
		if (sc->metrics[i].desc.indom == indom)
			return &sc->metrics[i];
	return NULL;
}

static int indom_text(pmInDom indom, int type, char **buf)
{
	static char text[512];
	struct stap_metric *m = stap_metric_by_indom(indom);
	const struct stp_meta_global *g;

	if (!m)
		return PM_ERR_TEXT;
	g = &m->script->meta->globals[m->global];
	if (m->kind == STAP_M_HIST)
		snprintf(text, sizeof(text), "Buckets of the histogram of '%s' in script %s%s",
			 g->name, m->script->name, g->nkeys ? ", per key (key::lo-hi)" : " (lo-hi)");
	else
		snprintf(text, sizeof(text), "Keys of array '%s' in script %s%s", g->name,
			 m->script->name, g->nkeys > 1 ? " (k1::k2...)" : "");
	*buf = text;
	return 0;
}

int stap_text(int ident, int type, char **buf, pmdaExt *pmda)
{
	struct stap_metric *m;

	pmdaEventNewClient(pmda->e_context);
	if ((type & PM_TEXT_INDOM) && pmInDom_serial((pmInDom)ident) >= STAP_CLUSTER_FIRST_SCRIPT << 10)
		return indom_text((pmInDom)ident, type, buf);
	if ((type & PM_TEXT_PMID) && pmID_cluster((pmID)ident) >= STAP_CLUSTER_FIRST_SCRIPT) {
		m = stap_metric_by_pmid((pmID)ident);
		if (!m)
			return PM_ERR_PMID;
		*buf = (type & PM_TEXT_ONELINE) ? m->oneline : m->help;
		return *buf ? 0 : PM_ERR_TEXT;
	}
	return pmdaText(ident, type, buf, pmda);
}
