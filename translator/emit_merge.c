/*
 * emit_merge.c - kernel context: handlers that differ only in names become
 * one program.
 *
 * `probe syscall.*` expands to one derived probe per syscall, and most of
 * their handlers come out of emit_bpf.c as the same C but for the probe's
 * index and a few string constants ("close", "read").  Each tracepoint
 * handler's text is held here instead of being written at once; handlers
 * whose text is the same once the index, the comments and the string
 * constants given to a copy (stp_strcpy, stp_strlcpy) are taken out are one
 * group, written as one program that every probe of the group attaches.
 * Locals count by their place in the frame, not their names.
 *
 * The program learns which probe fired from its BPF cookie: the runtime
 * attaches probe I with cookie I (runtime/user/attach.c), or, for the syscall
 * tracepoints, from the slot the dispatcher that jumped to it filled
 * (stp_probe_cookie(), runtime/bpf/stp_syscall.bpf.h).  The cookie is
 * a helper call where a table by syscall number would need the number's
 * place in each record and a map that user space fills; it serves every
 * tracepoint, not only syscalls.  stp_member[I] is the probe's row in the
 * group's string tables, stp_mstr_G_K[row] the K-th string that differs.
 * Strings that are the same in every member stay constants, so the
 * verifier sees what it saw before; numbers are never parameterised (a
 * constant lets the verifier prune the branches it decides).
 *
 * A handler's loops are callbacks (bpf_loop, bpf_for_each_map_elem) that
 * come with its text, named by its index (probe_I_loop_K): they are part
 * of its key, the group's program calls the lead's, and the others' are
 * not written.  A callback learns the probe from the context (c->probe,
 * which stp_enter() set from the cookie) where it reads a table.
 */
#include <string.h>
#include "arena.h"
#include "emit_int.h"

/* One handler, as emit_bpf.c wrote it. */
struct mhandler {
	int index;
	const char *text;	/* the C function */
	const char *cbs;	/* its loop callbacks' C (NULL: none), which come before it */
	struct vec lits;	/* the parameterisable literals, in order (const char *): the
				   function's, then its callbacks' */
	int text_lits;		/* how many are the function's */
};

/* Handlers whose text is the same but for those literals. */
struct mgroup {
	struct vec members;	/* struct mhandler *, by index */
	struct hmap points;	/* where the members attach (place_of) -> the group */
};

struct merge {
	struct vec order;	/* struct mgroup * and solitary struct mhandler *, in order */
	struct vec solos;	/* true when order[i] is a solitary handler */
	struct hmap groups;	/* canonical text -> struct mgroup * */
};

static const char *const copy_calls[] = { "stp_strcpy(", "stp_strlcpy(" };
#define EKEY "STP_EKEY("	/* a number that may differ too: @entry's key (emit_expr.c) */

/* Is the literal at P (its opening quote) the source of a string copy in TEXT? */
static bool copy_source(const char *text, const char *p)
{
	const char *line = p;

	while (line > text && line[-1] != '\n')
		line--;
	line += strspn(line, "\t");
	if (p[-1] != ' ' || p[-2] != ',')
		return false;
	for (size_t i = 0; i < sizeof(copy_calls) / sizeof(copy_calls[0]); i++)
		if (strncmp(line, copy_calls[i], strlen(copy_calls[i])) == 0)
			return memchr(line, '"', (size_t)(p - line)) == NULL;
	return false;
}

/* The end of the C string literal at P (past its closing quote). */
static const char *literal_end(const char *p)
{
	for (p++; *p && *p != '"'; p++)
		if (*p == '\\' && p[1])
			p++;
	return *p ? p + 1 : p;
}

/* Does "probe_N" end at Q (N is INDEX, not a prefix of a longer number)? */
static size_t index_at(const char *q, const char *num)
{
	size_t n = strlen(num);

	if (strncmp(q, num, n) != 0 || (q[n] >= '0' && q[n] <= '9'))
		return 0;
	return n;
}

/*
 * TEXT from P on without its comments, its index (after "probe_" and in
 * "stp_enter(") and the literals that copy_source() accepts, which go to
 * LITS.
 */
static char *canonical_from(const char *text, const char *p, int index, struct vec *lits)
{
	char num[16], *out, *o;

	snprintf(num, sizeof(num), "%d", index);
	o = out = arena_alloc(strlen(p) + 1);
	while (*p) {
		size_t n;

		if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");

			p = e ? e + 2 : p + strlen(p);
		} else if (strncmp(p, EKEY, sizeof(EKEY) - 1) == 0) {
			const char *e = strchr(p, ')') + 1;

			vec_push(lits, arena_strndup(p, (size_t)(e - p)));
			*o++ = '\001';
			p = e;
		} else if (*p == '"') {
			const char *e = literal_end(p);

			if (copy_source(text, p)) {
				vec_push(lits, arena_strndup(p, (size_t)(e - p)));
				*o++ = '\001';
			} else {
				memcpy(o, p, (size_t)(e - p));
				o += e - p;
			}
			p = e;
		} else if ((strncmp(p, "probe_", 6) == 0 && (n = index_at(p + 6, num))) ||
			   (strncmp(p, "stp_enter(", 10) == 0 && (n = index_at(p + 10, num)))) {
			size_t head = p[0] == 'p' ? 6 : 10;

			memcpy(o, p, head);
			o += head;
			*o++ = '#';
			p += head + n;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	return out;
}

/* TEXT without its first two lines (the comment and SEC), canonical: the key of its group. */
char *emit_merge_canonical(const char *text, int index, struct vec *lits)
{
	const char *p = strchr(text, '\n');

	p = p ? strchr(p + 1, '\n') : NULL;
	return canonical_from(text, p ? p + 1 : text, index, lits);
}

/* Loop callbacks CBS (NULL: none), canonical as their handler is (their literals follow its). */
char *emit_merge_callbacks(const char *cbs, int index, struct vec *lits)
{
	return cbs ? canonical_from(cbs, cbs, index, lits) : "";
}

static bool ident_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_';
}

/* The locals of a frame's declaration DECL (its "l_NAME" fields), in order. */
static void frame_locals(const char *decl, struct vec *names)
{
	for (const char *p = decl; (p = strstr(p, " l_")); p++) {
		size_t n = 3;

		while (ident_char(p[n]))
			n++;
		vec_push(names, arena_strndup(p + 1, n - 1));
	}
}

/*
 * TEXT with each local of NAMES spelled by its place ("l_#2"): handlers
 * that compute the same into locals of other names (fd, pid) are alike.
 * Their frames then have the same layout, so the lead's names serve all.
 */
static char *rename_locals(const char *text, const struct vec *names)
{
	char *out = arena_alloc(strlen(text) * 2 + 1), *o = out;

	for (const char *p = text; *p; ) {
		size_t n = 2;
		int k = -1;

		if (*p == '"') {	/* a literal stays as it is */
			const char *e = literal_end(p);

			memcpy(o, p, (size_t)(e - p));
			o += e - p;
			p = e;
			continue;
		}
		if (p[0] == 'l' && p[1] == '_' && p > text && !ident_char(p[-1])) {
			while (ident_char(p[n]))
				n++;
			for (int i = 0; i < names->len && k < 0; i++)
				if (strlen(VEC_AT(names, i)) == n && strncmp(VEC_AT(names, i), p, n) == 0)
					k = i;
		}
		if (k < 0) {
			*o++ = *p++;
			continue;
		}
		o += sprintf(o, "l_#%d", k);
		p += n;
	}
	*o = '\0';
	return out;
}

static struct merge *merge_state(struct emitter *E)
{
	if (!E->merge) {
		E->merge = arena_alloc(sizeof(struct merge));
		memset(E->merge, 0, sizeof(struct merge));
		E->merge->groups.str_keys = true;
	}
	return E->merge;
}

/*
 * Where probe INDEX attaches, as a key: a uprobe's file and offset (static
 * functions of one name in several files are one point text at many
 * addresses), a tracepoint's point.
 */
static const char *place_of(const struct emitter *E, int index)
{
	const struct derived_probe *dp = VEC_AT(&E->prog->probes, index);

	if (dp->elf_path)
		return arena_printf("%s\n%#llx\n%d", dp->elf_path, (unsigned long long)dp->offset,
				    dp->is_return);
	return dp->point;
}

/*
 * Does a member of G attach where probe INDEX does?  A map, not a scan of
 * the members: a group of N handlers (2,000 uprobes of one wildcard) cost
 * N squared string compares (issue 15).
 */
static bool attaches_there(const struct emitter *E, const struct mgroup *g, int index)
{
	return hmap_get(&g->points, place_of(E, index)) != NULL;
}

/*
 * Handler INDEX's program TEXT, its loop callbacks CBS (NULL: none; named
 * probe_INDEX_..., emit_callback_name()) and its frame's declaration DECL
 * (NULL: it has none).  FAMILY: the section of a program that a cookie can
 * tell apart (a uprobe's and a uretprobe's C can be the same, but their
 * programs attach differently); NULL: a program of its own.  A group's
 * program calls its lead's callbacks; the others' are dropped.
 */
void emit_merge_add(struct emitter *E, int index, const char *text, const char *cbs,
		    const char *decl, const char *family)
{
	struct merge *m = merge_state(E);
	struct mhandler *h = arena_alloc(sizeof(*h));
	struct mgroup *g;
	char *key;

	memset(h, 0, sizeof(*h));
	h->index = index;
	h->text = text;
	h->cbs = cbs;
	if (!family) {
		vec_push(&m->order, h);
		vec_push(&m->solos, (void *)1);
		return;
	}
	key = emit_merge_canonical(text, index, &h->lits);
	h->text_lits = h->lits.len;
	key = arena_printf("%s\n%s", key, emit_merge_callbacks(cbs, index, &h->lits));
	if (decl) {
		struct vec names = { 0 };

		frame_locals(decl, &names);
		key = arena_printf("%s\n%s", rename_locals(key, &names),
				   rename_locals(emit_merge_canonical(decl, index, &(struct vec){ 0 }),
						 &names));
	}
	key = arena_printf("%s\n%s", family, key);
	/* a program attaches a point once (the kernel refuses it again: EEXIST) */
	for (int n = 2; (g = hmap_get(&m->groups, key)) && attaches_there(E, g, index); n++)
		key = arena_printf("%s\n/* %d */", key, n);
	if (!g) {
		g = arena_alloc(sizeof(*g));
		memset(g, 0, sizeof(*g));
		g->points.str_keys = true;
		hmap_put(&m->groups, key, g);
		vec_push(&m->order, g);
		vec_push(&m->solos, NULL);
	}
	vec_push(&g->members, h);
	hmap_put(&g->points, place_of(E, index), g);
}

/* Does the K-th literal differ between the group's members? */
static bool literal_varies(const struct mgroup *g, int k)
{
	const struct mhandler *first = VEC_AT(&g->members, 0);

	for (int i = 1; i < g->members.len; i++) {
		const struct mhandler *h = VEC_AT(&g->members, i);

		if (strcmp(VEC_AT(&h->lits, k), VEC_AT(&first->lits, k)) != 0)
			return true;
	}
	return false;
}

/* The K-th literal's table, of STP_EKEY numbers: one per member. */
static void key_table(FILE *out, const struct mgroup *g, int lead, int k)
{
	fprintf(out, "static const int64_t stp_mkey_%d_%d[%d] SEC(\".rodata\") = {", lead, k,
		g->members.len);
	for (int i = 0; i < g->members.len; i++) {
		const struct mhandler *h = VEC_AT(&g->members, i);
		const char *lit = VEC_AT(&h->lits, k);

		fprintf(out, "%s%s%.*s", i ? "," : "", i % 8 ? " " : "\n\t",
			(int)(strlen(lit) - sizeof(EKEY)), lit + sizeof(EKEY) - 1);
	}
	fprintf(out, "\n};\n\n");
}

/* The K-th literal's table: one row per member, as wide as the longest. */
static void literal_table(FILE *out, const struct mgroup *g, int lead, int k)
{
	size_t width = 1;

	/* the escaped text is never shorter than the bytes it stands for */
	for (int i = 0; i < g->members.len; i++) {
		const struct mhandler *h = VEC_AT(&g->members, i);
		size_t n = strlen(VEC_AT(&h->lits, k)) - 1;

		width = n > width ? n : width;
	}
	fprintf(out, "static const char stp_mstr_%d_%d[%d][%zu] SEC(\".rodata\") = {", lead, k,
		g->members.len, width);
	for (int i = 0; i < g->members.len; i++) {
		const struct mhandler *h = VEC_AT(&g->members, i);

		fprintf(out, "%s%s%s", i ? "," : "", i % 8 ? " " : "\n\t",
			(const char *)VEC_AT(&h->lits, k));
	}
	fprintf(out, "\n};\n\n");
}

/*
 * The lead's C from P on (in SRC, its text or its callbacks), its K-th
 * literal on: its index from the cookie (the handler) or the context (a
 * callback), the literals that vary from the tables by the probe's row
 * (TABLES: some do in this C).  Returns the number of the next literal.
 */
static int merged_code(struct emitter *E, FILE *out, const struct mgroup *g, const bool *varies,
		       bool tables, const char *src, const char *p, int k)
{
	const struct mhandler *lead = VEC_AT(&g->members, 0);
	static const char check[] = "\tif (!c)\n\t\treturn 0;\n";
	static const char callback[] = "\tstruct context *c = e->c;\n";
	char enter[32];

	snprintf(enter, sizeof(enter), "stp_enter(%d)", lead->index);
	while (*p) {
		if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");

			e = e ? e + 2 : p + strlen(p);
			fwrite(p, 1, (size_t)(e - p), out);
			p = e;
		} else if (strncmp(p, enter, strlen(enter)) == 0) {
			fputs("stp_enter(stp_p)", out);
			p += strlen(enter);
		} else if (strncmp(p, EKEY, sizeof(EKEY) - 1) == 0) {
			const char *e = strchr(p, ')') + 1;

			if (varies[k])
				fprintf(out, "stp_mkey(stp_mkey_%d_%d, stp_m, %d)", lead->index, k,
					g->members.len);
			else
				fwrite(p, 1, (size_t)(e - p), out);
			k++;
			p = e;
		} else if (*p == '"') {
			const char *e = literal_end(p);

			if (copy_source(src, p) && varies[k])
				fprintf(out, "stp_mstr_%d_%d[stp_m]", lead->index, k);
			else
				fwrite(p, 1, (size_t)(e - p), out);
			k += copy_source(src, p);
			p = e;
		} else if (tables && strncmp(p, check, sizeof(check) - 1) == 0) {
			fprintf(out, "%s\tstp_m = stp_p < STP_NPROBES ? stp_member[stp_p] : %d;\n"
				"\tif (stp_m >= %d)\n\t\tgoto out;\n", check, g->members.len,
				g->members.len);
			p += sizeof(check) - 1;
		} else if (tables && strncmp(p, callback, sizeof(callback) - 1) == 0) {
			/* a callback's probe is its context's, which stp_enter(stp_p) set */
			fprintf(out, "%s\tuint32_t stp_m = c->probe < STP_NPROBES ? "
				"stp_member[c->probe] : %d;\n\n\tif (stp_m >= %d)\n\t\treturn 1;\n",
				callback, g->members.len, g->members.len);
			p += sizeof(callback) - 1;
		} else {
			fputc(*p++, out);
		}
	}
	return k;
}

/* The lead's callbacks, then its text, with the cookie read where its body starts. */
static void merged_text(struct emitter *E, FILE *out, const struct mgroup *g, const bool *varies,
			bool tables)
{
	const struct mhandler *lead = VEC_AT(&g->members, 0);
	const char *p = lead->text, *body = strstr(p, "{\n");
	bool cb_tables = false;	/* a callback reads a table too */

	for (int k = lead->text_lits; k < lead->lits.len; k++)
		cb_tables |= varies[k];
	if (lead->cbs)
		merged_code(E, out, g, varies, cb_tables, lead->cbs, lead->cbs, lead->text_lits);
	fwrite(p, 1, (size_t)(body + 2 - p), out);
	fprintf(out, "\tuint32_t stp_p = %s%s;\n", E->sc_dispatch ? "stp_probe_cookie(ctx)" :
		"(uint32_t)bpf_get_attach_cookie(ctx)", tables ? ", stp_m" : "");
	merged_code(E, out, g, varies, tables, lead->text, body + 2, 0);
}

/* A handler's program as it was written: its callbacks, then it. */
static void handler_text(FILE *out, const struct mhandler *h)
{
	if (h->cbs)
		fputs(h->cbs, out);
	fputs(h->text, out);
}

/* Group G's program; returns whether it stands for more than one probe. */
static bool write_group(struct emitter *E, FILE *out, struct mgroup *g)
{
	const struct mhandler *lead = VEC_AT(&g->members, 0);
	bool *varies, tables = false;

	if (g->members.len == 1) {
		handler_text(out, lead);
		return false;
	}
	varies = arena_alloc(sizeof(bool) * (size_t)(lead->lits.len + 1));
	for (int k = 0; k < lead->lits.len; k++) {
		varies[k] = literal_varies(g, k);
		if (varies[k] && !strncmp(VEC_AT(&lead->lits, k), EKEY, sizeof(EKEY) - 1))
			key_table(out, g, lead->index, k);
		else if (varies[k])
			literal_table(out, g, lead->index, k);
		tables |= varies[k];
	}
	for (int i = 1; i < g->members.len; i++) {
		const struct mhandler *h = VEC_AT(&g->members, i);

		E->prog_of[h->index] = lead->index;
		E->member_of[h->index] = i;
	}
	if (tables)
		fprintf(out, "/* one program for probe %d and %d more whose C differs only in "
			"stp_mstr_%d_*: the cookie names the probe */\n", lead->index,
			g->members.len - 1, lead->index);
	else
		fprintf(out, "/* one program for probe %d and %d more whose C is the same: the "
			"cookie names the probe */\n", lead->index, g->members.len - 1);
	merged_text(E, out, g, varies, tables);
	return true;
}

/*
 * Write every handler held, groups as one program each, in the order of
 * their first handler; then stp_member[], which the merged programs read.
 */
void emit_merge_flush(struct emitter *E, FILE *out)
{
	struct merge *m = merge_state(E);
	FILE *defs;
	char *buf;
	size_t len;
	int n = E->prog->probes.len, merged = 0;

	defs = open_memstream(&buf, &len);
	for (int i = 0; i < m->order.len; i++) {
		if (VEC_AT(&m->solos, i))
			handler_text(defs, VEC_AT(&m->order, i));
		else
			merged += write_group(E, defs, VEC_AT(&m->order, i));
	}
	fclose(defs);
	if (!merged)
		goto done;
	fprintf(out, "/* a merged program's probe: its row in the program's string tables */\n");
	fprintf(out, "static const uint16_t stp_member[STP_NPROBES] SEC(\".rodata\") = {");
	for (int i = 0; i < n; i++)
		fprintf(out, "%s%s%d", i ? "," : "", i % 24 ? " " : "\n\t", E->member_of[i]);
	fprintf(out, "\n};\n\n");
done:
	fputs(buf, out);
	free(buf);
}
