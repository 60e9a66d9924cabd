/*
 * stp_context.bpf.h - the second half of the kernel-side runtime: the
 * per-CPU context and what uses it (records, errors, handler entry and
 * exit, arrays and statistics).  A generated script.bpf.c includes
 * stp.bpf.h, declares its globals, frames and STP_FRAMES_SIZE (the frames'
 * sizes are sizeof() of its own structs), then includes this header, then
 * tapset.bpf.h.
 */
#ifndef STP_CONTEXT_BPF_H
#define STP_CONTEXT_BPF_H

#include "stp.bpf.h"

#ifndef STP_FRAMES_SIZE
#define STP_FRAMES_SIZE 0
#endif

struct context {
	uint32_t busy;			/* a handler holds this context */
	uint32_t probe;			/* its index in stp_meta.probes */
	uint32_t level;			/* which of its CPU's STP_CTX_LEVELS this is */
	uint32_t jumping;		/* its handler is tail-calling its body (stp_tail_body) */
	int32_t error;			/* enum stp_err */
	int32_t err_site;		/* stp_meta.errors index of the error, -1: not known yet */
	int64_t actions;		/* statements run in this hit, against MAXACTION */
	uint64_t start_ns;		/* when the hit started, if it is timed; else 0 */
#ifdef STP_KMOD
	int32_t nesting;		/* function calls in progress, against MAXNESTING */
	uint32_t frame_top;		/* where the next function's frame goes (stp_kmod_push) */
	uint32_t items_top;		/* the sorted foreach loops running use items[0..top) */
	struct stp_kmod_item items[STP_KMOD_ITEMS];
	int32_t re_state;		/* the last '=~': 0 none yet, 1 failed, 2 matched */
	int32_t re_ngroups;
	int16_t re_caps[2 * STP_KMOD_RE_GROUPS];	/* where its subexpressions are */
	char re_text[MAXSTRINGLEN];	/* the string it matched */
	struct stp_kmod_re_vm re_vm;
	int64_t hist[STP_HIST_MAX_BUCKETS];	/* sprint(@hist_*): the CPUs' buckets merged */
#endif
	char errmsg[MAXSTRINGLEN];	/* the error's message */
	char rec[STP_REC_SIZE] __attribute__((aligned(8)));	/* the record being built */
	/* frames, then MAXSTRINGLEN bytes of slack so that string copies at a
	   variable offset into the last buffer stay inside the value */
	char frames[STP_FRAMES_SIZE + MAXSTRINGLEN] __attribute__((aligned(8)));
};

#define CONTEXT c
#define stp_frame(c, off) ((void *)((c)->frames + (off)))

STP_MAP(stp_ctx, BPF_MAP_TYPE_ARRAY, uint32_t, struct context, STP_NCPUS * STP_CTX_LEVELS, 0);

/* Context LEVEL of CPU. */
static __always_inline struct context *stp_ctx_at(uint32_t cpu, uint32_t level)
{
	uint32_t key = cpu * STP_CTX_LEVELS + level;

	return bpf_map_lookup_elem(&stp_ctx, &key);
}

/*
 * The level the next handler on CPU gets: its first context not held, or
 * STP_CTX_LEVELS when all are.  A handler that interrupts another returns
 * before the one it interrupted goes on, so the levels in use stack up.
 */
static __always_inline uint32_t stp_ctx_free_level(uint32_t cpu)
{
	uint32_t l;

#pragma unroll
	for (l = 0; l < STP_CTX_LEVELS; l++) {
		struct context *c = stp_ctx_at(cpu, l);

		if (c && !c->busy)
			break;
	}
	return l;
}

/*
 * Hold a context of CPU for a handler: the first free level, or NULL.
 * Taken with an exchange: a uprobe_multi program runs with migration, not
 * preemption, disabled, so another task may take a context on this CPU
 * between the test and the store.  A dyninst thread slot is its own.
 */
static __always_inline struct context *stp_ctx_hold(uint32_t cpu)
{
#pragma unroll
	for (uint32_t l = 0; l < STP_CTX_LEVELS; l++) {
		struct context *c = stp_ctx_at(cpu, l);

		if (!c || c->busy)
			continue;
#ifdef STP_DYNINST
		c->busy = 1;
#else
		if (__sync_lock_test_and_set(&c->busy, 1))
			continue;
#endif
		c->level = l;
		return c;
	}
	return NULL;
}

/* Let go of C, held by stp_ctx_hold(): every store to it comes before. */
static __always_inline void stp_ctx_release(struct context *c)
{
	c->jumping = 0;
	__asm__ __volatile__("" ::: "memory");
	c->busy = 0;
}

/* ---- records ------------------------------------------------------------ */

static __always_inline uint32_t stp_rec_start(struct context *c, uint16_t kind, uint16_t id)
{
	struct stp_rec_hdr *h = (void *)c->rec;

	h->kind = kind;
	h->id = id;
	h->size = 0;
	return sizeof(*h);
}

static __always_inline uint32_t stp_rec_long(struct context *c, uint32_t off, int64_t v)
{
	if (off > STP_REC_SIZE - 8)
		return off;
	__builtin_memcpy(c->rec + off, &v, 8);
	return off + 8;
}

static __always_inline uint32_t stp_rec_lenat(struct context *c, uint32_t off, long n)
{
	if (n < 0)
		n = 0;
	/* the callers' bound on OFF can reach here as another register's sum, unbounded for 6.1 */
	asm volatile("" : "+r"(off));
	if (off > STP_REC_SIZE - 2)
		return off;
	c->rec[off] = n & 0xff;
	c->rec[off + 1] = (n >> 8) & 0xff;
	return off + 2 + (uint32_t)n;
}

/* A string argument: u16 length, the bytes without the NUL. */
static __always_inline uint32_t stp_rec_str(struct context *c, uint32_t off, const char *s)
{
	long n;

	if (off > STP_REC_SIZE - 2 - MAXSTRINGLEN)
		return off;
	n = bpf_probe_read_kernel_str(c->rec + off + 2, MAXSTRINGLEN, s);
	return stp_rec_lenat(c, off, n - 1);
}

/* %m/%M: LEN bytes at ADDR (user memory when USER), as a string argument. */
static __always_inline uint32_t stp_rec_mem(struct context *c, uint32_t off, int64_t addr,
					    int64_t len, int user)
{
	long r;

	if (off > STP_REC_SIZE - 2 - MAXSTRINGLEN)
		return off;
	if (len < 0)
		len = 0;
	if (len > MAXSTRINGLEN)
		len = MAXSTRINGLEN;
	if (user)
		r = bpf_probe_read_user(c->rec + off + 2, len, (const void *)addr);
	else
		r = bpf_probe_read_kernel(c->rec + off + 2, len, (const void *)addr);
	return stp_rec_lenat(c, off, r ? 0 : len);
}

static __always_inline void stp_rec_send(struct context *c, uint32_t off)
{
	struct stp_rec_hdr *h = (void *)c->rec;

	if (off > STP_REC_SIZE)
		off = STP_REC_SIZE;
	h->size = off;
	if (bpf_ringbuf_output(&stp_events, c->rec, off, 0))
		stp_count(dropped);
}

/* ---- errors, exit ------------------------------------------------------- */

/* A soft error at meta.errors[SITE] with message MSG (any kernel string). */
static __always_inline void stp_raise(struct context *c, int site, const char *msg)
{
	c->error = STP_ERR_RAISED;
	c->err_site = site;
	stp_strcpy(c->errmsg, msg);
}

/* A soft error whose site the calling script code fills in (stp_error()). */
static __always_inline void stp_raise_msg(struct context *c, const char *msg)
{
	c->error = STP_ERR_RAISED;
	c->err_site = -1;
	stp_strcpy(c->errmsg, msg);
	if (!c->errmsg[0])
		stp_strcpy(c->errmsg, "unknown error");
}

/* After a call that failed: the call is where the error happened, unless known. */
static __always_inline void stp_error_at(struct context *c, int site)
{
	if (c->err_site < 0)
		c->err_site = site;
}

static __always_inline void stp_send_warn(struct context *c, const char *msg)
{
	uint32_t n = stp_rec_start(c, STP_REC_WARN, 0);

	stp_rec_send(c, stp_rec_str(c, n, msg));
}

/* exit(): no new handlers start; the runner runs the end probes. */
static __always_inline void stp_request_exit(struct context *c)
{
	struct stp_control *ctl = stp_control_get();

	if (ctl)
		ctl->state = STP_RUN_STOPPING;
	stp_rec_send(c, stp_rec_start(c, STP_REC_EXIT, 0));
}

/* abort(): as exit(), and this handler unwinds at once. */
static __always_inline void stp_request_abort(struct context *c)
{
	stp_request_exit(c);
	c->error = STP_ERR_ABORT;
}

/* MAXACTION: count N statements; true (and the error raised) past the limit. */
static __always_inline int stp_action(struct context *c, int n, int site)
{
	c->actions += n;
	if (c->actions <= MAXACTION)
		return 0;
	stp_count(maxaction);
	stp_raise(c, site, "MAXACTION exceeded");
	c->error = STP_ERR_FATAL;	/* as stap: try/catch does not catch it */
	return 1;
}

#ifdef STP_KMOD
/*
 * A module's script functions are C functions that may recurse: each call
 * pushes its frame on the context's (past the handlers'), MAXNESTING calls
 * deep at most, as stap nests them; NULL (the error raised) past that.
 */
static __always_inline void *stp_kmod_push(struct context *c, uint32_t size, int site)
{
	void *f = c->frames + c->frame_top;

	size = (size + 7) & ~7u;
	if (c->nesting >= MAXNESTING || c->frame_top + size > STP_FRAMES_SIZE) {
		stp_raise(c, site, "MAXNESTING exceeded");
		return NULL;
	}
	c->nesting++;
	c->frame_top += size;
	return f;
}

static __always_inline void stp_kmod_pop(struct context *c, uint32_t size)
{
	c->nesting--;
	c->frame_top -= (size + 7) & ~7u;
}

struct stp__collect {
	struct stp_kmod_item *items;
	uint32_t n, room;
	int (*match)(const void *key, const struct stp_slice *s);	/* a slice's */
	const struct stp_slice *slice;
};

static long stp__collect_one(struct stp_dmap *m, void *key, void *val, void *arg)
{
	struct stp__collect *col = arg;

	(void)m;
	if (col->match && !col->match(key, col->slice))
		return 0;
	if (col->n >= col->room)
		return 1;
	col->items[col->n].key = key;
	col->items[col->n].val = val;
	col->n++;
	return 0;
}

/*
 * foreach with sorting, a limit or a slice: MAP's elements (those MATCH
 * accepts for SLICE, if given) collected on the context's item stack,
 * sorted by CMP (NULL: as the map holds them), the loop body BODY run on
 * the first LIMIT, until it returns non-zero.
 */
static __always_inline void stp_kmod_foreach(struct context *c, void *map, void *body,
					     struct stp_env *env,
					     int (*cmp)(const void *, const void *), int64_t limit,
					     void *match, const struct stp_slice *slice)
{
	long (*fn)(void *, const void *, void *, struct stp_env *) = body;
	struct stp__collect col = { c->items + c->items_top, 0, STP_KMOD_ITEMS - c->items_top,
				    match, slice };
	uint32_t i;

	stp_dmap__for_each(stp__dmap(map), stp__collect_one, &col);
	if (cmp)
		sort(col.items, col.n, sizeof(*col.items), cmp, NULL);
	c->items_top += col.n;
	for (i = 0; i < col.n && (int64_t)i < limit; i++)
		if (fn(map, col.items[i].key, col.items[i].val, env))
			break;
	c->items_top -= col.n;
}
#endif

/* ---- handler entry and exit --------------------------------------------- */

/*
 * Timing a hit costs two clock reads, as much as a small handler: the
 * first STP_TIMED_HITS hits of a probe on a CPU are timed, then one in
 * STP_TIME_EVERY, counted STP_TIME_EVERY times.  stp_probe_stats.run_ns
 * is exact for rare probes and an unbiased estimate for busy ones.
 */
#define STP_TIMED_HITS 64
#define STP_TIME_EVERY 16

/* A context about to run a handler: no error yet, no actions, empty stacks. */
static __always_inline void stp_ctx_reset(struct context *c)
{
	c->error = STP_ERR_NONE;
	c->err_site = -1;
	c->actions = 0;
	c->errmsg[0] = '\0';
#ifdef STP_KMOD
	c->nesting = 0;
	c->frame_top = STP_PROBE_FRAMES;
	c->items_top = 0;
	c->re_state = 0;
#endif
}

static __always_inline struct context *stp_enter(uint32_t probe)
{
	struct stp_control *ctl = stp_control_get();
	uint32_t cpu = bpf_get_smp_processor_id();
	struct stp_probe_stats *ps;
	struct context *c;

	if (!ctl || ctl->state != STP_RUN_RUNNING)
		return NULL;
	c = stp_ctx_hold(cpu);
	if (!c) {
		stp_count(skipped);
		return NULL;
	}
	c->probe = probe;
	stp_ctx_reset(c);
	ps = bpf_map_lookup_elem(&stp_probe_stats, &probe);
	c->start_ns = 0;
	if (ps && (ps->hits < STP_TIMED_HITS || ps->hits % STP_TIME_EVERY == 0))
		c->start_ns = bpf_ktime_get_ns();
	return c;
}

/*
 * The context of the handler that jumped here (a split handler's body), or
 * NULL: the innermost one jumping.  Only tracepoint programs jump, and they
 * run with preemption disabled, so a handler that interrupted the jump
 * has returned by now; a uprobe handler preempted on this CPU may hold a
 * level above, but it is not jumping.
 */
static __always_inline struct context *stp_resume(void)
{
	uint32_t cpu = bpf_get_smp_processor_id();

#pragma unroll
	for (int l = STP_CTX_LEVELS - 1; l >= 0; l--) {
		struct context *c = stp_ctx_at(cpu, (uint32_t)l);

		if (c && c->busy && c->jumping) {
			c->jumping = 0;
			return c;
		}
	}
	return NULL;
}

#ifndef MAXERRORS
#define MAXERRORS 0
#endif

#ifndef STP_SUPPRESS_ERRORS
#define STP_SUPPRESS_ERRORS 0	/* --suppress-handler-errors */
#endif

/*
 * An error ends the handler: past MAXERRORS no handler starts any more, as
 * in stap, unless errors are suppressed (pmstap --suppress-handler-errors
 * compiles STP_SUPPRESS_ERRORS in; a runner can also set the flag).
 */
static __always_inline void stp_count_error(void)
{
	struct stp_control *ctl = stp_control_get();

	stp_count(errors);
	if (ctl && !STP_SUPPRESS_ERRORS && stp_atomic_add(&ctl->errors, 1) > MAXERRORS &&
	    !(ctl->flags & STP_CTL_SUPPRESS_ERRORS) && ctl->state == STP_RUN_RUNNING)
		ctl->state = STP_RUN_ERROR;
}

static __always_inline void stp_leave(struct context *c)
{
	uint32_t probe = c->probe, n;
	struct stp_probe_stats *ps = bpf_map_lookup_elem(&stp_probe_stats, &probe);

	if (c->error == STP_ERR_RAISED || c->error == STP_ERR_FATAL) {
		stp_count_error();
		/* a site of -1 (error(): the message says it all) is no index */
		n = stp_rec_start(c, STP_REC_ERROR, (uint16_t)(c->err_site < 0 ? 0xffff : c->err_site));
		stp_rec_send(c, stp_rec_str(c, n, c->errmsg));
	}
	if (ps) {
		if (c->start_ns)
			ps->run_ns += (bpf_ktime_get_ns() - c->start_ns) *
				      (ps->hits < STP_TIMED_HITS ? 1 : STP_TIME_EVERY);
		ps->hits++;
	}
	stp_ctx_release(c);
}

/* ---- arrays: hash maps of key structs ----------------------------------- */

static __always_inline int64_t stp_map_get_long(struct context *c, void *map, const void *key)
{
	int64_t *v = bpf_map_lookup_elem(map, key);

	return v ? *v : 0;
}

/* The string at KEY copied into BUF ("" when there is none); BUF. */
static __always_inline char *stp_map_get_str(struct context *c, void *map, const void *key,
					     char *buf)
{
	const char *v = bpf_map_lookup_elem(map, key);

	if (v)
		stp_strcpy(buf, v);
	else
		buf[0] = '\0';
	return buf;
}

static __always_inline int stp_map_exists(struct context *c, void *map, const void *key)
{
	return bpf_map_lookup_elem(map, key) != NULL;
}

#ifndef E2BIG
#define E2BIG 7
#endif
#ifndef EBUSY
#define EBUSY 16
#endif

/*
 * An insert failed with ERR: -E2BIG is a full map (counted, and FULL is
 * the message); -EBUSY a map another handler or the runner held too long
 * (a BPF bucket lock taken on this CPU, a module's map that pmstap was
 * reading): the handler leaves, counted as skipped, as stap skips a
 * probe whose locks are contended; anything else (no memory) says so.
 */
static __always_inline void stp_map_full(struct context *c, int site, const char *full, long err)
{
	if (err == -EBUSY) {
		stp_count(skipped);
		c->error = STP_ERR_SKIP;
		return;
	}
	if (err != -E2BIG) {
		stp_raise(c, site, "the kernel refused an array update (out of memory)");
		return;
	}
	stp_count(map_full);
	stp_raise(c, site, full);
}

static __always_inline void stp_map_set_long(struct context *c, void *map, const void *key,
					     int64_t v, int site, const char *full)
{
	long err = bpf_map_update_elem(map, key, &v, BPF_ANY);

	if (err)
		stp_map_full(c, site, full, err);
}

/* VAL is a MAXSTRINGLEN buffer in map memory. */
static __always_inline void stp_map_set_str(struct context *c, void *map, const void *key,
					    const char *val, int site, const char *full)
{
	long err = bpf_map_update_elem(map, key, val, BPF_ANY);

	if (err)
		stp_map_full(c, site, full, err);
}

/* map[key] += D, atomically when the element exists; the new value. */
static __always_inline int64_t stp_map_add_long(struct context *c, void *map, const void *key,
						int64_t d, int site, const char *full)
{
	int64_t *v = bpf_map_lookup_elem(map, key);
	long err;

	if (v)
		return stp_atomic_add(v, d);
	err = bpf_map_update_elem(map, key, &d, BPF_NOEXIST);
	if (!err)
		return d;
	v = bpf_map_lookup_elem(map, key);	/* another CPU inserted it meanwhile */
	if (v)
		return stp_atomic_add(v, d);
	stp_map_full(c, site, full, err);
	return 0;
}

static __always_inline void stp_map_delete(struct context *c, void *map, const void *key)
{
	bpf_map_delete_elem(map, key);
}

static long stp_map_clear_step(void *map, const void *key, void *value, void *data)
{
	bpf_map_delete_elem(map, key);
	return 0;
}

/* delete a: every element. */
static __always_inline void stp_map_clear(struct context *c, void *map)
{
	bpf_for_each_map_elem(map, stp_map_clear_step, NULL, 0);
}

/* s[key] <<< val: the partial of this CPU, created when new. */
static __always_inline void stp_map_stat_add(struct context *c, void *map, const void *key,
					 const struct stp_stat_cfg *cfg, int64_t val, int site,
					 const char *full)
{
	struct stp_stat_partial *p = bpf_map_lookup_elem(map, key);
	long err;

	if (!p) {
		err = bpf_map_update_elem(map, key, stp_zero_value, BPF_NOEXIST);
		p = bpf_map_lookup_elem(map, key);
		if (!p) {
			stp_map_full(c, site, full, err ? err : -E2BIG);
			return;
		}
	}
	stp_stat_add(p, cfg, val);
}

#include "stp_slots.bpf.h"	/* arrays whose values live in an mmapable array */
#include "stp_statread.bpf.h"	/* @count(s)... in kernel context */
#ifdef STP_KMOD
#include "../kmod/stp_kmod_regex.h"	/* matched() in a module */
#include "../kmod/stp_kmod_procfs.h"	/* $value of a module's procfs files */
#endif

#endif
