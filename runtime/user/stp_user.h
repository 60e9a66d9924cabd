/*
 * stp_user.h - user context: what the generated script.c (begin, end,
 * error, never and timer probes, compiled into script.so) calls, and how
 * the runner sets it up.
 *
 * The runner creates one struct stp_uctx per loaded script, after the BPF
 * object is loaded (the maps must have fds):
 *
 *	u = stp_uctx__new(maps, meta, stdout);
 *	stp_uctx__set_ops(u, &ops);		route output, errors, warnings
 *						and exit through the runner
 *	stp_uctx__set_target(u, pid);		target() (-x, -c)
 *	stp_uctx__set_args(u, argc, argv);	@1.. for the tapset's argv
 *	init = dlsym(so, STP_GLOBALS_INIT_SYMBOL);
 *	init(u);				initial values of globals,
 *						before -G and before attaching
 *	...
 *	status = meta->probes[i].handler(u);	run one user-context probe
 *	...
 *	stp_uctx__free(u);
 *
 * A handler returns 0, or 1 after an error it did not catch; the error
 * has then been passed to ops.error: the index into meta->errors of where
 * it happened (-1 for error()'s, whose message says it all) and the full
 * message, never empty.  Handlers run one at a time on the runner's
 * thread.  The stp_tapset.h services script.c calls are libstaprt's
 * (tapset_user.c), told the script's MAXSTRINGLEN when it is loaded.
 *
 * The generated code shares its statements with the kernel side: the
 * helpers here have the names and meanings of runtime/bpf/stp.bpf.h's.
 * Strings are NUL-terminated buffers of MAXSTRINGLEN bytes (the generated
 * file's value; code compiled into the runtime uses meta->limits).
 * Globals: scalars in the mmapped value of the stp_globals map (struct
 * stp_globals of the generated code); arrays and statistics in their BPF
 * maps, read and written with the bpf syscalls.  Updates from user context
 * are not atomic against kernel handlers running at the same time on
 * other CPUs, except ++/+= on scalar longs.
 */
#ifndef STP_USER_H
#define STP_USER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../stp_meta.h"
#include "../stp_tapset.h"
#include "../bpf/stp_control.bpf.h"
#include "format.h"
#include "stats.h"

#ifndef MAXACTION
#define MAXACTION 1000
#endif
#ifndef MAXNESTING
#define MAXNESTING 10
#endif

struct bpf_object;
struct stp_uctx;

/* Where the runner wants what user-context code produces; NULL: the defaults. */
struct stp_uctx_ops {
	void (*output)(void *arg, const char *buf, size_t len);	/* default: fwrite to out */
	/* an uncaught error at meta->errors[index] with its message; default: stderr */
	void (*error)(void *arg, int index, const char *msg, size_t len);
	void (*warn)(void *arg, const char *msg, size_t len);	/* default: "WARNING: msg" */
	void (*exit)(void *arg);				/* exit() was called */
	void (*system)(void *arg, const char *cmd, size_t len);	/* default: not run, a warning */
	void (*switch_file)(void *arg);				/* default: nothing to switch */
	void *arg;
};

struct stp_maps;
struct stp_uctx *stp_uctx__new(const struct stp_maps *maps, const struct stp_meta *meta,
			       FILE *out);
void stp_uctx__set_ops(struct stp_uctx *u, const struct stp_uctx_ops *ops);
void stp_uctx__set_target(struct stp_uctx *u, int64_t pid);
void stp_uctx__set_args(struct stp_uctx *u, int argc, const char *const *argv);
bool stp_uctx__exiting(const struct stp_uctx *u);	/* exit() or abort() was called */
void stp_uctx__free(struct stp_uctx *u);

/* script.so's int stp_globals_init(struct stp_uctx *): initial values of globals. */
#define STP_GLOBALS_INIT_SYMBOL "stp_globals_init"

/* One probe hit in user context (CONTEXT in tapset C bodies). */
struct context {
	struct stp_uctx *u;
	const struct stp_meta_probe *probe;
	int probe_index;		/* in meta->probes */
	int error;			/* enum stp_err */
	int err_site;			/* meta->errors index, -1: not known yet */
	int64_t actions;		/* statements run, against MAXACTION */
	int nesting;			/* function calls in progress, against MAXNESTING */
	char *errmsg;			/* the error's message: meta->limits.maxstringlen bytes */
};

#define STP_KEY0 NULL		/* the key of a scalar statistic */

/* A user-context code's handle for a global array or statistic. */
struct stp_map {
	int global;			/* index in meta->globals */
	const struct stp_stat_cfg *cfg;	/* statistics: the generated code's (with its shift) */
};

/* What the runtime keeps per global (stp_uctx.maps[global]). */
struct stp_umap {
	int fd;				/* -1: not a map */
	uint32_t key_size, value_size;
	bool percpu;
	struct stp_stat_cfg cfg;	/* statistics */
	/* slotted arrays (stp_meta_global.values_map): fd maps key -> slot */
	char *vals;			/* the values map, mapped here; NULL: not slotted */
	size_t vals_len;
	int vals_fd;
	uint32_t nelems, stride;	/* its elements (head ones too) and their size */
	int free_fd;			/* the queue of freed slots */
};

struct stp_uctx {
	const struct stp_meta *meta;
	const struct stp_maps *maps_of;	/* the script's maps by name (maps.h) */
	FILE *out;
	struct stp_uctx_ops ops;
	int ncpus;			/* possible CPUs: per-CPU values in a lookup */
	void *globals;			/* the stp_globals value, mapped here; NULL: none */
	size_t globals_len;
	int globals_fd;
	int control_fd;			/* stp_control, -1 if absent */
	struct stp_umap *maps;		/* per meta->globals */
	struct stp_format **formats;	/* meta->formats, compiled on first use */
	char *valbuf;			/* a per-CPU value of the largest map */
	size_t valbuf_len;
	int64_t target;
	int argc;
	const char *const *argv;
	bool exiting;
	struct context ctx;		/* the handler running */
};

/* ---- handlers ----------------------------------------------------------- */

#define CONTEXT c
#define STP_GLOBALS(c) ((struct stp_globals *)(c)->u->globals)

struct context *stp_enter(struct stp_uctx *u, int probe);
int stp_leave(struct context *c);

/* ---- errors, exit ------------------------------------------------------- */

void stp_raise(struct context *c, int site, const char *msg);
void stp_raise_msg(struct context *c, const char *msg);	/* for stp_error() */
void stp_send_warn(struct context *c, const char *msg);
void stp_send_system(struct context *c, const char *cmd);
void stp_send_switch_file(struct context *c);
void stp_request_exit(struct context *c);
void stp_request_abort(struct context *c);

static inline void stp_error_at(struct context *c, int site)
{
	if (c->err_site < 0)
		c->err_site = site;
}

static inline int stp_action(struct context *c, int n, int site)
{
	c->actions += n;
	if (c->actions <= (int64_t)MAXACTION * 10)	/* stap's MAXACTION_INTERRUPTIBLE */
		return 0;
	stp_raise(c, site, "MAXACTION exceeded");
	c->error = STP_ERR_FATAL;	/* as stap: try/catch does not catch it */
	return 1;
}

/* A function call: false, or true with the error raised past MAXNESTING. */
static inline int stp_nest(struct context *c, int site)
{
	if (++c->nesting <= MAXNESTING)
		return 0;
	c->nesting--;
	stp_raise(c, site, "MAXNESTING exceeded");
	return 1;
}

#define stp_unnest(c) ((c)->nesting--)

/* ---- arithmetic: ../stp_arith.h (through stats.h) ----------------------- */

#define stp_atomic_add(p, d) __atomic_add_fetch((p), (d), __ATOMIC_SEQ_CST)

/* ---- strings (MAXSTRINGLEN: the generated file's) ------------------------ */

static inline int64_t stp_strcpy(char *dst, const char *src)
{
	size_t n = strnlen(src, MAXSTRINGLEN - 1);

	memmove(dst, src, n);
	dst[n] = '\0';
	return (int64_t)n;
}

/* Zero key temporary K before its columns go in (kernel context: stp.bpf.h's). */
#define stp_key_zero(k) memset((k), 0, sizeof(*(k)))

/* A key's string cut to its column, counted with kernel context's (stp_counters.keys_cut). */
void stp_key_cut(void);

/* At most N - 1 bytes of SRC into DST (N bytes), NUL-terminated (a key column). */
static inline void stp_strlcpy(char *dst, const char *src, int n)
{
	size_t m = strnlen(src, (size_t)n - 1);

	if (n < MAXSTRINGLEN && m == (size_t)n - 1 && src[m] != '\0')
		stp_key_cut();
	memmove(dst, src, m);
	dst[m] = '\0';
}

static inline void stp_concat(char *dst, const char *a, const char *b)
{
	int64_t n = stp_strcpy(dst, a);
	size_t m = strnlen(b, MAXSTRINGLEN - 1 - n);

	memmove(dst + n, b, m);
	dst[n + m] = '\0';
}

static inline int64_t stp_strcmp(const char *a, const char *b)
{
	int r = strcmp(a, b);

	return r < 0 ? -1 : r > 0;
}

#define stp_strcmp_lit(a, lit) stp_strcmp((a), (lit))

/* ---- arrays and statistics --------------------------------------------------- */

int64_t stp_map_get_long(struct context *c, struct stp_map *m, const void *key);
char *stp_map_get_str(struct context *c, struct stp_map *m, const void *key, char *buf);
int stp_map_exists(struct context *c, struct stp_map *m, const void *key);
void stp_map_set_long(struct context *c, struct stp_map *m, const void *key, int64_t v,
		      int site, const char *full);
void stp_map_set_str(struct context *c, struct stp_map *m, const void *key, const char *v,
		     int site, const char *full);
int64_t stp_map_add_long(struct context *c, struct stp_map *m, const void *key, int64_t d,
			 int site, const char *full);
void stp_map_delete(struct context *c, struct stp_map *m, const void *key);
void stp_map_clear(struct context *c, struct stp_map *m);
/* [k, *] in m, delete m[k, *]: the columns whose bit is set in MASK are fixed (KEY's). */
int stp_map_exists_slice(struct context *c, struct stp_map *m, const void *key, unsigned mask);
void stp_map_delete_slice(struct context *c, struct stp_map *m, const void *key, unsigned mask);

/* s[key] <<< val (this process's partial is CPU 0's). */
void stp_map_stat_add(struct context *c, struct stp_map *m, const void *key,
		  const struct stp_stat_cfg *cfg, int64_t val, int site, const char *full);
/* @count(s[key]) ...: the merged value; an empty aggregate raises the error at SITE. */
int64_t stp_map_stat_get(struct context *c, struct stp_map *m, const void *key,
			 enum stp_stat_op op, int site);
/* @hist_*(s[key])[index]; EMPTY_SITE < 0: an empty aggregate's buckets are 0 (a foreach's) */
int64_t stp_map_stat_bucket(struct context *c, struct stp_map *m, const void *key,
			    int64_t index, int site, int empty_site);
/* print(@hist_*(s[key])) into the output, or into BUF (a string) when BUF is not NULL. */
void stp_map_stat_print(struct context *c, struct stp_map *m, const void *key, char *buf,
			int site);

/*
 * foreach: the keys of M (in the map's order, or sorted), then one at a
 * time.  SORT_COL 0 sorts by the value (by SORT_STAT of each value for
 * statistics), 1..N by that key column; SORT_DIR +1 ascending, -1
 * descending, 0 unsorted.  Ties are broken by the keys, ascending.
 */
struct stp_iter {
	char *keys;			/* n keys of key_size bytes, in order */
	size_t key_size;
	size_t n, i;
};

int stp_foreach_start(struct context *c, struct stp_map *m, struct stp_iter *it, int sort_col,
		      int sort_dir, enum stp_stat_op sort_stat);
const void *stp_foreach_next(struct stp_iter *it);
void stp_foreach_end(struct stp_iter *it);

/* ---- output ----------------------------------------------------------------- */

#define STP_L(v) stp_value_long(v)
#define STP_S(s) stp_value_string((s), strlen(s))

void stp_output(struct context *c, const char *buf, size_t len);
/* printf with meta->formats[fmt]; sprintf into BUF (MAXSTRINGLEN bytes), which it returns */
void stp_printf(struct context *c, int fmt, const struct stp_value *args, int nargs);
char *stp_sprintf(struct context *c, char *buf, int fmt, const struct stp_value *args,
		  int nargs);
/* print, println, printd, printdln and their s- forms (DELIM may be NULL) */
void stp_print(struct context *c, const struct stp_value *args, int nargs, const char *delim,
	       bool newline);
char *stp_sprint(struct context *c, char *buf, const struct stp_value *args, int nargs,
		 const char *delim, bool newline);

/* =~ and !~: 1 when S matches the extended regular expression RE. */
int64_t stp_regex_match(struct context *c, const char *s, const char *re, int site);

#endif
