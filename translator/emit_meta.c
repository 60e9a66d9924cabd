/*
 * emit_meta.c - `const struct stp_meta stp_meta` at the end of script.c:
 * the script's globals (map, layout, export and doc comment), probes,
 * printf formats, error sites, limits and source, as runtime/stp_meta.h
 * describes them.  Layouts are offsetof()/sizeof() of the structs the
 * same file declares, so they cannot drift from the code.
 */
#include <string.h>
#include "emit_int.h"
#include "filedeps.h"
#include "probe_kinds.h"
#include "emit_uprobe.h"
#include "emit_kprobe.h"

static const char *str_or_null(const char *s)
{
	return s ? emit_c_string(s, strlen(s)) : "NULL";
}

static const char *loc_init(struct srcloc loc)
{
	const char *name = loc.src ? loc.src->name : "<input>";
	const char *slash = strrchr(name, '/');

	if (loc.src && loc.src->is_tapset && slash)
		name = slash + 1;
	return arena_printf("{ %s, %d, %d }", emit_c_string(name, strlen(name)), loc.line, loc.col);
}

static const char *stp_type(enum type t)
{
	switch (t) {
	case TYPE_STRING: return "STP_TYPE_STRING";
	case TYPE_STATS: return "STP_TYPE_STATS";
	default: return "STP_TYPE_LONG";
	}
}

static void global_keys(FILE *out, struct eglobal *g)
{
	struct vardecl *d = g->d;

	fprintf(out, "\t\t.nkeys = %d,\n", d->arity);
	if (!g->array)
		return;
	fprintf(out, "\t\t.key_types = {");
	for (int i = 0; i < d->arity; i++)
		fprintf(out, "%s %s", i ? "," : "", stp_type(d->key_types[i]));
	fprintf(out, " },\n\t\t.key_offsets = {");
	for (int i = 0; i < d->arity; i++)
		fprintf(out, "%s offsetof(struct key_%s, k%d)", i ? "," : "", g->cname, i + 1);
	fprintf(out, " },\n");
}

static void global_layout(FILE *out, struct eglobal *g)
{
	const char *vt = g->d->type == TYPE_STRING ? "char[MAXSTRINGLEN]" : "int64_t";

	if (!g->array && !g->stats) {
		fprintf(out, "\t\t.map = \"stp_globals\",\n");
		fprintf(out, "\t\t.offset = offsetof(struct stp_globals, v_%s),\n", g->cname);
		fprintf(out, "\t\t.value_size = sizeof(%s),\n\t\t.max_entries = 1,\n", vt);
		return;
	}
	fprintf(out, "\t\t.map = \"g_%s\",\n", g->cname);
	fprintf(out, "\t\t.key_size = %s,\n", g->array ? arena_printf("sizeof(struct key_%s)",
								    g->cname) : "sizeof(uint32_t)");
	if (g->stats)
		fprintf(out, "\t\t.value_size = sizeof(struct stat_%s),\n", g->cname);
	else
		fprintf(out, "\t\t.value_size = sizeof(%s),\n", vt);
	fprintf(out, "\t\t.max_entries = %lld,\n", g->array ? (long long)g->max_entries : 1LL);
	if (emit_slotted(g))
		fprintf(out, "\t\t.values_map = \"gv_%s\",\n\t\t.free_map = \"gf_%s\",\n", g->cname,
			g->cname);
	if (g->d->wrap)
		fprintf(out, "\t\t.wrap = true,\n");
	if (g->stats)
		fprintf(out, "\t\t.percpu = true,\n");
	if (g->hist)
		fprintf(out, "\t\t.hist = { (enum stp_meta_hist_kind)%d, %lld, %lld, %lld, %d },\n",
			g->hist, (long long)g->start, (long long)g->stop, (long long)g->interval,
			g->buckets);
}

static void globals(struct emitter *E, FILE *out)
{
	fprintf(out, "static const struct stp_meta_global stp_meta_globals[] = {\n");
	for (int i = 0; i < E->globals.len; i++) {
		struct eglobal *g = VEC_AT(&E->globals, i);

		fprintf(out, "\t{\n\t\t.name = \"%s\",\n", g->d->name);
		fprintf(out, "\t\t.type = %s,\n", g->stats ? "STP_TYPE_STATS" : stp_type(g->d->type));
		global_keys(out, g);
		global_layout(out, g);
		if (g->exported)
			fprintf(out, "\t\t.exported = true,\n");
		if (g->d->doc)
			fprintf(out, "\t\t.doc = %s,\n", str_or_null(g->d->doc));
		fprintf(out, "\t\t.loc = %s,\n\t},\n", loc_init(g->d->loc));
	}
	fprintf(out, "\t{ 0 }\n};\n\n");
}

static const char *probe_kind(struct emitter *E, struct derived_probe *dp, int i)
{
	static const char *const user[] = {
		[PROBE_BEGIN] = "STP_PROBE_BEGIN", [PROBE_END] = "STP_PROBE_END",
		[PROBE_ERROR] = "STP_PROBE_ERROR", [PROBE_NEVER] = "STP_PROBE_NEVER",
		[PROBE_TIMER] = "STP_PROBE_TIMER", [PROBE_PROCFS] = "STP_PROBE_PROCFS",
	};

	if (!E->kernel_probe[i])
		return user[dp->kind];
	switch (E->probe_kinds[i]) {
	case STP_PROBE_RAW_TRACEPOINT: return "STP_PROBE_RAW_TRACEPOINT";
	case STP_PROBE_PROFILE: return "STP_PROBE_PROFILE";
	case STP_PROBE_PERF: return "STP_PROBE_PERF";
	case STP_PROBE_UPROBE: return "STP_PROBE_UPROBE";
	case STP_PROBE_PROCFS: return "STP_PROBE_PROCFS";	/* a module's file */
	case STP_PROBE_NETFILTER: return "STP_PROBE_NETFILTER";
	case STP_PROBE_KFUNC: return "STP_PROBE_KFUNC";	/* attached by its target, not its section */
	default: return "STP_PROBE_TRACEPOINT";
	}
}

static void procfs_params(struct emitter *E, FILE *out, struct derived_probe *dp)
{
	int64_t maxsize = dp->procfs_maxsize ? dp->procfs_maxsize : E->maxstringlen;

	fprintf(out, "\t\t.procfs_path = %s,\n", str_or_null(dp->procfs_path));
	if (dp->procfs_write)
		fprintf(out, "\t\t.procfs_write = true,\n");
	fprintf(out, "\t\t.procfs_mode = 0%o,\n\t\t.procfs_maxsize = %lld,\n",
		(unsigned)((dp->procfs_write ? 0222 : 0444) & ~dp->procfs_umask),
		(long long)maxsize);
}

static void probe_params(struct emitter *E, FILE *out, struct derived_probe *dp)
{
	if (dp->priority)
		fprintf(out, "\t\t.priority = %lld,\n", (long long)dp->priority);
	if (probe_class(dp) == PCLASS_TIMER) {
		int64_t unit = dp->timer_value ? dp->interval_ns / dp->timer_value : 0;

		fprintf(out, "\t\t.interval_ns = %lld,\n", (long long)dp->interval_ns);
		if (dp->timer_randomize)
			fprintf(out, "\t\t.randomize_ns = %lld,\n",
				(long long)(dp->timer_randomize * unit));
	}
	if (dp->kind == PROBE_PROFILE)
		fprintf(out, "\t\t.perf_type = 1,\n\t\t.perf_config = 0,\n");
	if (dp->kind == PROBE_PERF || dp->kind == PROBE_KDATA) {
		fprintf(out, "\t\t.perf_type = %lld,\n\t\t.perf_config = %lld,\n",
			(long long)dp->perf_type, (long long)dp->perf_config);
		if (dp->perf_sample)
			fprintf(out, "\t\t.perf_sample = %lld,\n", (long long)dp->perf_sample);
		if (dp->path)
			fprintf(out, "\t\t.perf_path = %s,\n", str_or_null(dp->path));
	}
	if (dp->kind == PROBE_KDATA)
		fprintf(out, "\t\t.bp_addr = %#llx,\n\t\t.bp_symbol = %s,\n\t\t.bp_type = %d,\n"
			"\t\t.bp_len = %d,\n", (unsigned long long)dp->bp_addr,
			str_or_null(dp->bp_symbol), dp->bp_type, dp->bp_len);
	emit_uprobe_meta(out, dp);
	emit_kprobe_meta(E, out, dp);
	if (dp->kind == PROBE_PROCFS)
		procfs_params(E, out, dp);
	if (dp->kind == PROBE_NETFILTER)
		fprintf(out, "\t\t.nf_pf = %lld,\n\t\t.nf_hook = %lld,\n\t\t.nf_priority = %lld,\n",
			(long long)dp->nf_pf, (long long)dp->nf_hook, (long long)dp->nf_priority);
	if (probe_class(dp) == PCLASS_TRACEPOINT)
		fprintf(out, "\t\t.tp_system = \"%s\",\n\t\t.tp_name = \"%s\",\n", dp->tp->system,
			dp->tp->name);
}

static void probes(struct emitter *E, FILE *out)
{
	bool pn = emit_uses_pn(E);

	fprintf(out, "static const struct stp_meta_probe stp_meta_probes[] = {\n");
	for (int i = 0; i < E->prog->probes.len; i++) {
		struct derived_probe *dp = VEC_AT(&E->prog->probes, i);

		fprintf(out, "\t{\n\t\t.point = %s,\n", str_or_null(dp->point));
		if (pn && strcmp(dp->pn, dp->point))
			fprintf(out, "\t\t.name = %s,\n", str_or_null(dp->pn));
		fprintf(out, "\t\t.loc = %s,\n", loc_init(dp->probe->loc));
		fprintf(out, "\t\t.kind = %s,\n", probe_kind(E, dp, i));
		if (E->kernel_probe[i])
			fprintf(out, "\t\t.context = STP_CTX_KERNEL,\n\t\t.prog = \"probe_%d\",\n",
				E->prog_of[i]);
		else
			fprintf(out, "\t\t.context = STP_CTX_USER,\n\t\t.handler = probe_%d,\n", i);
		probe_params(E, out, dp);
		if (dp->orig && dp->orig->optional)
			fprintf(out, "\t\t.optional = true,\n");
		fprintf(out, "\t},\n");
	}
	fprintf(out, "\t{ 0 }\n};\n\n");
}

static void tables(struct emitter *E, FILE *out)
{
	fprintf(out, "static const struct stp_meta_format stp_meta_formats[] = {\n");
	for (int i = 0; i < E->formats.len; i++) {
		struct eformat *f = VEC_AT(&E->formats, i);

		fprintf(out, "\t{ %s, %s },\n", str_or_null(f->body), loc_init(f->loc));
	}
	fprintf(out, "\t{ 0 }\n};\n\n");
	fprintf(out, "static const struct stp_meta_error stp_meta_errors[] = {\n");
	for (int i = 0; i < E->errors.len; i++) {
		struct eerror *er = VEC_AT(&E->errors, i);

		fprintf(out, "\t{ %s, %s, %s },\n", str_or_null(er->what), loc_init(er->loc),
			str_or_null(er->near));
	}
	fprintf(out, "\t{ 0 }\n};\n\n");
	fprintf(out, "static const int stp_meta_autoprint[] = {");
	for (int i = 0; i < E->prog->autoprint.len; i++) {
		struct eglobal *g = emit_global(E, VEC_AT(&E->prog->autoprint, i));

		fprintf(out, " %d,", g ? g->index : 0);
	}
	fprintf(out, " -1 };\n\n");
}

/* The per-process perf counters (probes_counter.c). */
static void counters(struct emitter *E, FILE *out)
{
	if (!E->prog->counters.len)
		return;
	fprintf(out, "static const struct stp_meta_counter stp_meta_counters[] = {\n");
	for (int i = 0; i < E->prog->counters.len; i++) {
		struct perf_counter *c = VEC_AT(&E->prog->counters, i);

		fprintf(out, "\t{ %s, %s, %s, %lld, %lldULL, %s },\n", str_or_null(c->name),
			str_or_null(c->point), loc_init(c->orig->loc), (long long)c->type,
			(long long)c->config, str_or_null(c->used ? c->path : NULL));
	}
	fprintf(out, "\t{ 0 }\n};\n\n");
}

/* The files the build was made from, as they were read (filedeps.h). */
static void files(FILE *out)
{
	fprintf(out, "static const struct stp_meta_file stp_meta_files[] = {\n");
	for (int i = 0; i < filedeps_count(); i++) {
		const struct filedep *d = filedeps_at(i);

		fprintf(out, "\t{ %s, \"%s\", %lld, %lld },\n", str_or_null(d->path),
			d->id.build_id, (long long)d->id.size, (long long)d->id.mtime_ns);
	}
	fprintf(out, "\t{ 0 }\n};\n\n");
}

/* The script's text, a line per string literal. */
static void source(struct emitter *E, FILE *out)
{
	const struct source *src = E->prog->script->src;
	const char *p = src ? src->text : "";

	fprintf(out, "static const char stp_meta_source[] =");
	if (!*p)
		fprintf(out, " \"\"");
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);

		fprintf(out, "\n\t%s", emit_c_string(p, n));
		p += n;
	}
	fprintf(out, ";\n\n");
}

void emit_meta(struct emitter *E, FILE *out)
{
	globals(E, out);
	probes(E, out);
	tables(E, out);
	counters(E, out);
	files(out);
	source(E, out);
	emit_body_meta(E, out);
	fprintf(out, "const struct stp_meta stp_meta = {\n");
	fprintf(out, "\t.version = STP_META_VERSION,\n");
	fprintf(out, "\t.script = \"%s\",\n", emit_script_name(E));
	fprintf(out, "\t.source = stp_meta_source,\n");
	fprintf(out, "\t.globals = stp_meta_globals,\n\t.nglobals = %d,\n", E->globals.len);
	fprintf(out, "\t.probes = stp_meta_probes,\n\t.nprobes = %d,\n", E->prog->probes.len);
	fprintf(out, "\t.formats = stp_meta_formats,\n\t.nformats = %d,\n", E->formats.len);
	fprintf(out, "\t.errors = stp_meta_errors,\n\t.nerrors = %d,\n", E->errors.len);
	fprintf(out, "\t.files = stp_meta_files,\n\t.nfiles = %d,\n", filedeps_count());
	fprintf(out, "\t.limits = {\n\t\t.maxstringlen = %lld,\n\t\t.maxmapentries = %lld,\n",
		(long long)E->maxstringlen, (long long)E->maxmapentries);
	fprintf(out, "\t\t.maxaction = %lld,\n\t\t.maxerrors = %lld,\n", (long long)E->maxaction,
		(long long)E->maxerrors);
	fprintf(out, "\t\t.maxnesting = %lld,\n\t\t.ringbuf_bytes = %lld,\n\t},\n",
		(long long)E->maxnesting, (long long)E->ringbuf);
	fprintf(out, "\t.autoprint = stp_meta_autoprint,\n\t.nautoprint = %d,\n",
		E->prog->autoprint.len);
	if (E->prog->counters.len)
		fprintf(out, "\t.counters = stp_meta_counters,\n\t.ncounters = %d,\n",
			E->prog->counters.len);
	emit_body_meta_fields(E, out);
	fprintf(out, "};\n");
}
