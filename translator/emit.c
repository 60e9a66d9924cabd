/*
 * emit.c - pass 3's driver: limits, the two output files, and the small
 * services every emit*.c file uses (lines, C literals, error sites,
 * formats, diagnostics for constructs a context cannot run).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "emit_int.h"
#include "lex.h"
#include "probe_kinds.h"
#include "../runtime/stp_escape.h"
#include "sysroot.h"

/* ---- writing -------------------------------------------------------------- */

void emit_raw(struct emitter *E, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(E->cf->f, fmt, ap);
	va_end(ap);
}

/* One line of the current C function, indented. */
void emit_line(struct emitter *E, const char *fmt, ...)
{
	va_list ap;

	for (int i = 0; i < E->cf->indent; i++)
		fputc('\t', E->cf->f);
	va_start(ap, fmt);
	vfprintf(E->cf->f, fmt, ap);
	va_end(ap);
	fputc('\n', E->cf->f);
}

struct cfunc *emit_cfunc_begin(struct emitter *E)
{
	struct cfunc *cf = ARENA_NEW(struct cfunc);

	cf->f = open_memstream(&cf->buf, &cf->len);
	cf->indent = 1;
	cf->parent = E->cf;
	E->cf = cf;
	return cf;
}

/* Finish CF (the current one); its body text (malloc'd) into *TEXT. */
void emit_cfunc_end(struct emitter *E, struct cfunc *cf, char **text)
{
	fclose(cf->f);
	*text = cf->buf;
	E->cf = cf->parent;
}

bool emit_is_kernel(const struct emitter *E)
{
	return E->ctx == ECTX_KERNEL;
}

/*
 * A number for a label or a loop callback: in a kernel handler, counted
 * within it, so that handlers alike come out as the same C but for their
 * index (emit_merge.c); elsewhere counted in the file.
 */
int emit_seq(struct emitter *E)
{
	return E->hprobe >= 0 ? ++E->hseq : ++E->seq;
}

/* Callback KIND number N (emit_seq's): probe_I_KIND_N in handler I, unique in the file. */
const char *emit_callback_name(const struct emitter *E, const char *kind, int n)
{
	if (E->hprobe >= 0)
		return arena_printf("probe_%d_%s_%d", E->hprobe, kind, n);
	return arena_printf("%s_%d", kind, n);
}

/* Where a callback's definition goes: with its handler's program, or the file's definitions. */
FILE *emit_callback_out(const struct emitter *E)
{
	return E->hdefs ? E->hdefs : E->defs;
}

/* ---- C text ---------------------------------------------------------------- */

/* A string literal's body (escapes as written) as its bytes; their count. */
size_t emit_unescape(char *dst, const char *body)
{
	size_t n = stp_unescape_bytes(dst, body, strlen(body));

	dst[n] = '\0';
	return n;
}

/* BYTES as a C string literal. */
const char *emit_c_string(const char *bytes, size_t len)
{
	char *out = arena_alloc(len * 4 + 3), *p = out;

	*p++ = '"';
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)bytes[i];

		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
		} else if (c == '\n') {
			*p++ = '\\';
			*p++ = 'n';
		} else if (c == '\t') {
			*p++ = '\\';
			*p++ = 't';
		} else if (c >= 32 && c < 127) {
			*p++ = (char)c;
		} else {
			p += sprintf(p, "\\%03o", c);
		}
	}
	*p++ = '"';
	*p = '\0';
	return out;
}

/* The script's string literal BODY as a C literal of the bytes it means. */
const char *emit_c_literal(const char *body)
{
	char *bytes = arena_alloc(strlen(body) + 1);
	size_t n = emit_unescape(bytes, body);

	return emit_c_string(bytes, n);
}

const char *emit_loc_text(struct srcloc loc)
{
	const char *name = loc.src ? loc.src->name : "<input>";
	const char *slash = strrchr(name, '/');

	if (loc.src && loc.src->is_tapset && slash)
		name = slash + 1;
	return arena_printf("%s:%d:%d", name, loc.line, loc.col);
}

const char *emit_probe_text(const struct derived_probe *dp)
{
	return dp->point;
}

/* ---- the resource tables ------------------------------------------------------ */

static bool same_loc(struct srcloc a, struct srcloc b)
{
	return a.src == b.src && a.line == b.line && a.col == b.col;
}

/* The index of the error site WHAT at LOC in stp_meta.errors. */
/* The token at LOC in its source, as stap's "near ..." names it; NULL when there is none. */
static const char *token_near(struct emitter *E, struct srcloc loc)
{
	const char *p = loc.src ? loc.src->text : NULL;
	struct source rest;
	struct lexer *lx;

	for (int line = 1; p && line < loc.line; line++) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	if (!p || loc.col < 1 || strnlen(p, (size_t)loc.col) < (size_t)loc.col)
		return NULL;
	rest = *loc.src;
	rest.text = p + loc.col - 1;
	rest.len = strlen(rest.text);
	lx = lex_open(E->s, &rest);
	lex_keep_errors(lx);
	return lex_tok_stap_text(lex_next(lx));
}

int emit_error_site(struct emitter *E, struct srcloc loc, const char *what)
{
	struct eerror *er;

	for (int i = 0; i < E->errors.len; i++) {
		er = VEC_AT(&E->errors, i);
		if (same_loc(er->loc, loc) && strcmp(er->what, what) == 0)
			return i;
	}
	er = ARENA_NEW(struct eerror);
	er->what = arena_strdup(what);
	er->loc = loc;
	er->near = token_near(E, loc);
	vec_push(&E->errors, er);
	return E->errors.len - 1;
}

/* The index of a printf format (a body as the script writes it) in stp_meta.formats. */
int emit_format(struct emitter *E, const char *body, struct srcloc loc)
{
	struct eformat *ef;

	for (int i = 0; i < E->formats.len; i++) {
		ef = VEC_AT(&E->formats, i);
		if (same_loc(ef->loc, loc) && strcmp(ef->body, body) == 0)
			return i;
	}
	ef = ARENA_NEW(struct eformat);
	ef->body = body;
	ef->loc = loc;
	vec_push(&E->formats, ef);
	return E->formats.len - 1;
}

/*
 * WHAT (at LOC) cannot run in the kernel context the current handler runs
 * in: an error naming the probe, once per construct.  Returns false so
 * callers can `return emit_unsupported(...)`-style bail out.
 */
bool emit_unsupported(struct emitter *E, struct srcloc loc, const char *what, const char *hint)
{
	const char *key = arena_printf("%p:%d:%d:%s", (const void *)loc.src, loc.line, loc.col,
				       what);

	E->errors_reported++;
	if (hmap_get(&E->reported, key))
		return false;
	hmap_put(&E->reported, key, (void *)key);
	if (E->ctx == ECTX_KERNEL && E->dp)
		diag_error(loc, "%s cannot run in kernel context (probe %s at %s)", what,
			   E->dp->point, emit_loc_text(E->dp->probe->loc));
	else
		diag_error(loc, "%s is not supported by the %s runtime", what, E->s->runtime);
	if (hint)
		diag_hint("%s", hint);
	return false;
}

/* ---- limits ---------------------------------------------------------------------- */

static int possible_cpus(void)
{
	size_t len;
	char *text = arena_read_file(sysroot_path("/sys/devices/system/cpu/possible"), &len);
	const char *p = text;
	long hi = 0;

	while (p && *p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		if (v > hi)
			hi = v;
		p = end + (*end == ',' || *end == '-');
	}
	return text ? (int)hi + 1 : (int)sysconf(_SC_NPROCESSORS_CONF);
}

static void setup_limits(struct emitter *E)
{
	struct session *s = E->s;

	E->maxstringlen = session_define(s, "MAXSTRINGLEN", STAP_MAXSTRINGLEN);
	E->maxaction = session_define(s, "MAXACTION", 1000);
	E->maxmapentries = session_define(s, "MAXMAPENTRIES", 2048);
	E->maxerrors = session_define(s, "MAXERRORS", 0);
	E->maxnesting = session_define(s, "MAXNESTING", 10);
	E->ringbuf = session_define(s, "STP_RINGBUF_BYTES", 1 << 20);
	if (E->maxstringlen < 16 || E->maxstringlen > 65536) {
		diag_error((struct srcloc){ 0 }, "MAXSTRINGLEN must be between 16 and 65536");
		E->maxstringlen = STAP_MAXSTRINGLEN;
	}
	if (E->maxaction < 1 || E->maxaction > 838860) {
		diag_error((struct srcloc){ 0 }, "MAXACTION must be between 1 and 838860");
		E->maxaction = 1000;
	}
	/*
	 * stap 4.8's runtime is INTERRUPTIBLE (runtime_defines.h): a handler
	 * runs MAXACTION_INTERRUPTIBLE statements, ten times MAXACTION unless
	 * -D sets it; E->maxaction is that budget from here on.
	 */
	E->maxaction = session_define(s, "MAXACTION_INTERRUPTIBLE", E->maxaction * 10);
	if (E->maxaction < 1 || E->maxaction >= (1 << 23)) {	/* bpf_loop()'s bound */
		diag_error((struct srcloc){ 0 }, "MAXACTION_INTERRUPTIBLE must be between 1 and "
			   "8388607");
		E->maxaction = 10000;
	}
	E->ncpus = E->dyninst ? STP_DYN_SLOTS : possible_cpus();
	if (E->ncpus < 1)
		E->ncpus = 1;
	E->rec_size = 64;
	E->zero_size = 8;
}

/* The script's name: its file's, without directory and .stp ("input" for -e). */
const char *emit_script_name(const struct emitter *E)
{
	const char *path = E->s->script_path, *base, *dot;
	char *name;

	if (!path || strcmp(path, "-") == 0)
		return "input";
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	dot = strrchr(base, '.');
	name = arena_strndup(base, dot && dot != base ? (size_t)(dot - base) : strlen(base));
	for (char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			*p = '_';
	return name;
}

static const char *const known_defines[] = {
	"MAXSTRINGLEN", "MAXACTION", "MAXMAPENTRIES", "MAXERRORS", "MAXNESTING",
	"STP_RINGBUF_BYTES",
};

/* -D NAME[=VALUE] other than the limits: macros for the generated code, as stap. */
void emit_extra_defines(struct emitter *E, FILE *out)
{
	for (int i = 0; i < E->s->defines.len; i++) {
		const char *d = VEC_AT(&E->s->defines, i), *eq = strchr(d, '=');
		size_t n = eq ? (size_t)(eq - d) : strlen(d);
		bool known = false;

		for (size_t k = 0; k < sizeof(known_defines) / sizeof(known_defines[0]); k++)
			known |= strlen(known_defines[k]) == n && strncmp(d, known_defines[k], n) == 0;
		if (!known)
			fprintf(out, "#define %.*s %s\n", (int)n, d, eq ? eq + 1 : "1");
	}
}

/* ---- files ------------------------------------------------------------------------ */

typedef int (*writer_fn)(struct emitter *E, FILE *out);

/* Write DIR/NAME through WRITE, atomically (a temporary file renamed). */
static int write_file(struct emitter *E, const char *dir, const char *name, writer_fn write)
{
	const char *path = arena_printf("%s/%s", dir, name);
	const char *tmp = arena_printf("%s/.%s.%d", dir, name, (int)getpid());
	FILE *out = fopen(tmp, "w");
	int r;

	if (!out) {
		diag_error((struct srcloc){ 0 }, "cannot write '%s': %s", tmp, strerror(errno));
		return -1;
	}
	r = write(E, out);
	if (fclose(out) != 0 && r == 0) {
		diag_error((struct srcloc){ 0 }, "cannot write '%s': %s", tmp, strerror(errno));
		r = -1;
	}
	if (r == 0 && rename(tmp, path) != 0) {
		diag_error((struct srcloc){ 0 }, "cannot rename '%s': %s", tmp, strerror(errno));
		r = -1;
	}
	if (r != 0)
		unlink(tmp);
	return r;
}

/*
 * BODY (a handler's, just before its out: label) without the error check
 * that would end it: "if (c->error) { goto out; }" jumps to the next line.
 */
void emit_drop_final_jump(char *body)
{
	static const char jump[] = "\tif (c->error) {\n\t\tgoto out;\n\t}\n";
	size_t n = strlen(body), m = sizeof(jump) - 1;

	if (n >= m && strcmp(body + n - m, jump) == 0)
		body[n - m] = '\0';
}

static int emit_files(struct session *s, struct program *prog, const char *dir,
		      enum runtime_id rt)
{
	struct emitter E = { .s = s, .prog = prog, .dyninst = rt == RUNTIME_DYNINST,
			     .kmod = rt == RUNTIME_KERNEL, .hprobe = -1 };
	const char *kernel_side = E.dyninst ? "script.dyn.c" : E.kmod ? "script.kmod.c" :
							  "script.bpf.c";
	int errors = diag_error_count();

	setup_limits(&E);
	E.kernel_probe = arena_alloc(sizeof(bool) * (size_t)(prog->probes.len + 1));
	E.probe_kinds = arena_alloc(sizeof(int) * (size_t)(prog->probes.len + 1));
	E.frame_empty = arena_alloc(sizeof(bool) * (size_t)(prog->probes.len + 1));
	E.prog_of = arena_alloc(sizeof(int) * (size_t)(prog->probes.len + 1));
	E.member_of = arena_alloc(sizeof(int) * (size_t)(prog->probes.len + 1));
	E.no_merge = getenv("PMSTAP_NO_MERGE") != NULL;	/* a control for tests (qa/077) */
	E.no_subprogs = getenv("PMSTAP_NO_SUBPROGS") != NULL;	/* emit_func.c, qa/195 */
	E.rawtp_cookies = -1;
	for (int i = 0; i < prog->probes.len; i++) {
		struct derived_probe *dp = VEC_AT(&prog->probes, i);

		E.kernel_probe[i] = E.kmod ? emit_kmod_in_module(dp) : emit_probe_in_kernel(dp);
		E.prog_of[i] = i;
		E.member_of[i] = 0;
	}
	emit_data_setup(&E);
	emit_funcs_analyze(&E);
	emit_guru_analyze(&E);
	if (diag_error_count() > errors)
		return -1;
	if (write_file(&E, dir, kernel_side, emit_bpf_file) != 0 ||
	    write_file(&E, dir, "script.c", emit_user_file) != 0)
		return -1;
	return diag_error_count() > errors ? -1 : 0;
}

int emit_program(struct session *s, struct program *prog, const char *dir)
{
	return emit_files(s, prog, dir, RUNTIME_BPF);
}

int emit_program_dyninst(struct session *s, struct program *prog, const char *dir)
{
	return emit_files(s, prog, dir, RUNTIME_DYNINST);
}

int emit_program_kmod(struct session *s, struct program *prog, const char *dir)
{
	return emit_files(s, prog, dir, RUNTIME_KERNEL);
}
