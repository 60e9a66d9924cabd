/*
 * patch.c - the patcher: probe sites, jump or trap, and writing the code.
 *
 * add()	reads the site's bytes and decides how to patch it: a jump when
 *		the instructions covering its first 5 bytes can all run from a
 *		copy and nothing else jumps between them (known only when the
 *		function's bounds are given: it is decoded whole), else an
 *		int3 (the first instruction alone must then run from a copy)
 * install()	builds each site's record and stub (patch_tramp.c), lists the
 *		sites for the SIGTRAP handler, then writes every site in three
 *		passes with a core sync after each: int3 at each site, the rest
 *		of each jump (its rel32, int3 padding), each jump's first byte
 * remove()	writes the original bytes back the same way
 * moves()	where a thread stopped between two displaced instructions goes on
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/membarrier.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "patch_int.h"

#define PATCH_PAGE 4096ul

struct patch_site {
	uintptr_t addr, func_lo, func_hi;
	struct patch_probe *probes;
	int nprobes;
	bool has_ret;
	enum stp_patch_kind kind;
	struct patch_code code;		/* what the site displaces */
	uint8_t orig[PATCH_MAX_LEN];	/* the code's bytes, code.len of them */
	uint8_t patch[PATCH_MAX_LEN];	/* what install writes */
	char why[96];			/* a trap: why no jump */
	struct patch_rec *rec;		/* built by install */
	uintptr_t copy[PATCH_MAX_INSNS];	/* where each displaced instruction's copy runs */
};

struct stp_patcher {
	struct patch_site *sites;
	int n, cap;
	int *slots;		/* sites by address, open addressing: index + 1, 0 when free */
	int nslots;		/* a power of two, at least twice n */
	bool built, installed;
	struct patch_maps maps;
};

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

struct stp_patcher *stp_patcher__new(void)
{
	return calloc(1, sizeof(struct stp_patcher));
}

static unsigned addr__hash(uintptr_t addr, int nslots)
{
	return (unsigned)((addr * 0x9e3779b97f4a7c15ull) >> 32) & (unsigned)(nslots - 1);
}

static struct patch_site *patcher__find(const struct stp_patcher *p, uintptr_t addr)
{
	if (!p->nslots)
		return NULL;
	for (unsigned h = addr__hash(addr, p->nslots); p->slots[h]; h = (h + 1) & (p->nslots - 1))
		if (p->sites[p->slots[h] - 1].addr == addr)
			return &p->sites[p->slots[h] - 1];
	return NULL;
}

static void patcher__slot(struct stp_patcher *p, int k)
{
	unsigned h = addr__hash(p->sites[k].addr, p->nslots);

	while (p->slots[h])
		h = (h + 1) & (p->nslots - 1);
	p->slots[h] = k + 1;
}

/* Index the last site added (or, when ALL or when they would crowd, all of them).  0, or -1. */
static int patcher__index(struct stp_patcher *p, bool all)
{
	int n = p->nslots;

	if (!all && 2 * p->n <= n) {
		patcher__slot(p, p->n - 1);
		return 0;
	}
	while (n < 2 * p->n)
		n = n ? 2 * n : 64;
	if (n != p->nslots) {
		int *v = realloc(p->slots, n * sizeof(*v));

		if (!v)
			return -1;
		p->slots = v;
		p->nslots = n;
	}
	memset(p->slots, 0, n * sizeof(*p->slots));
	for (int k = 0; k < p->n; k++)
		patcher__slot(p, k);
	return 0;
}

/* ---- deciding: jump or trap ---- */

/* Can S be a jump?  0 with S->code covering at least 5 bytes, or -1 with S->why. */
static int site__try_jump(struct stp_patcher *p, struct patch_site *s, size_t avail)
{
	bool known = s->func_hi != 0, aligned;
	uintptr_t from, end;

	if (patch_code__decode(&s->code, (const uint8_t *)s->addr, avail, s->addr,
			       known ? PATCH_JMP_LEN : 1, s->why, sizeof(s->why)) != 0)
		return -1;
	end = s->addr + s->code.len;
	if (!known && s->code.len < PATCH_JMP_LEN)
		return fail(s->why, sizeof(s->why),
			    "a %d-byte instruction in a function of unknown bounds", s->code.len);
	if (!known)
		return 0;
	if (end > s->func_hi)
		return fail(s->why, sizeof(s->why), "only %d bytes are left in its function",
			    (int)(s->func_hi - s->addr));
	if (patch_maps__readable(&p->maps, s->func_lo) < s->func_hi - s->func_lo)
		return fail(s->why, sizeof(s->why), "its function is not all readable");
	from = patch_code__branch_into((const uint8_t *)s->func_lo, s->func_lo, s->func_hi, s->addr,
				       end, &aligned);
	if (from)
		return fail(s->why, sizeof(s->why),
			    "the branch at 0x%lx lands inside the %d bytes a jump displaces",
			    (unsigned long)from, s->code.len);
	if (!aligned)
		return fail(s->why, sizeof(s->why),
			    "its function's instructions, decoded, do not start there");
	return 0;
}

/* Read S's code and decide how to patch it.  0, or -1 with ERR. */
static int site__analyse(struct stp_patcher *p, struct patch_site *s, char *err, size_t errlen)
{
	const struct patch_map *m = patch_maps__find(&p->maps, s->addr);
	size_t avail;
	char why[160];

	if (!m && patch_maps__load(&p->maps) == 0)
		m = patch_maps__find(&p->maps, s->addr);
	if (!m || (m->prot & (PROT_READ | PROT_EXEC)) != (PROT_READ | PROT_EXEC))
		return fail(err, errlen, "0x%lx is not in readable executable memory",
			    (unsigned long)s->addr);
	avail = patch_maps__readable(&p->maps, s->addr);
	if (*(const uint8_t *)s->addr == PATCH_INT3)
		return fail(err, errlen, "0x%lx already holds a breakpoint (int3)",
			    (unsigned long)s->addr);
	s->kind = STP_PATCH_JUMP;
	if (site__try_jump(p, s, avail) != 0) {
		s->kind = STP_PATCH_TRAP;
		if (patch_code__decode(&s->code, (const uint8_t *)s->addr, avail, s->addr, 1, why,
				       sizeof(why)) != 0)
			return fail(err, errlen, "%s", why);
	}
	memcpy(s->orig, (const uint8_t *)s->addr, s->code.len);
	return 0;
}

static struct patch_site *patcher__new_site(struct stp_patcher *p, uintptr_t addr, uintptr_t lo,
					    uintptr_t hi, char *err, size_t errlen)
{
	struct patch_site *s;

	if (p->n == p->cap) {
		int ncap = p->cap ? p->cap * 2 : 16;
		struct patch_site *v = realloc(p->sites, ncap * sizeof(*v));

		if (!v) {
			fail(err, errlen, "out of memory");
			return NULL;
		}
		p->sites = v;
		p->cap = ncap;
	}
	s = &p->sites[p->n];
	*s = (struct patch_site){ .addr = addr, .func_lo = lo, .func_hi = hi };
	if (site__analyse(p, s, err, errlen) != 0)
		return NULL;
	p->n++;
	if (patcher__index(p, false) != 0) {
		p->n--;
		fail(err, errlen, "out of memory");
		return NULL;
	}
	return s;
}

static int site__add_probe(struct patch_site *s, stp_patch_fn entry, stp_patch_fn ret, void *arg)
{
	struct patch_probe *v = realloc(s->probes, (s->nprobes + 1) * sizeof(*v));

	if (!v)
		return -1;
	v[s->nprobes++] = (struct patch_probe){ entry, ret, arg };
	s->probes = v;
	s->has_ret |= ret != NULL;
	return 0;
}

int stp_patcher__add(struct stp_patcher *p, uintptr_t addr, uintptr_t func_lo, uintptr_t func_hi,
		     stp_patch_fn entry, stp_patch_fn ret, void *arg, char *err, size_t errlen)
{
	struct patch_site *s;

	if (p->built)
		return fail(err, errlen, "probes cannot be added once the patcher is installed");
	if (!entry && !ret)
		return fail(err, errlen, "a probe needs an entry or a return handler");
	if ((func_lo || func_hi) && (addr < func_lo || addr >= func_hi))
		return fail(err, errlen, "0x%lx is outside its function [0x%lx, 0x%lx)",
			    (unsigned long)addr, (unsigned long)func_lo, (unsigned long)func_hi);
	if (ret && func_lo && addr != func_lo)
		return fail(err, errlen,
			    "a return probe needs a function's entry: 0x%lx is not 0x%lx",
			    (unsigned long)addr, (unsigned long)func_lo);
	s = patcher__find(p, addr);
	if (!s)
		s = patcher__new_site(p, addr, func_lo, func_hi, err, errlen);
	if (!s)
		return -1;
	if (site__add_probe(s, entry, ret, arg) != 0)
		return fail(err, errlen, "out of memory");
	return 0;
}

/* ---- building records and stubs ---- */

static int site__cmp(const void *a, const void *b)
{
	const struct patch_site *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Sort the sites; a jump whose displaced bytes hold another probed instruction becomes a trap. */
static int patcher__untangle(struct stp_patcher *p, char *err, size_t errlen)
{
	qsort(p->sites, p->n, sizeof(p->sites[0]), site__cmp);
	if (p->n && patcher__index(p, true) != 0)
		return fail(err, errlen, "out of memory");
	for (int k = 0; k + 1 < p->n; k++) {
		struct patch_site *s = &p->sites[k];
		uintptr_t next = p->sites[k + 1].addr;

		if (s->addr + s->code.len <= next)
			continue;
		if (s->kind == STP_PATCH_JUMP) {
			s->kind = STP_PATCH_TRAP;
			snprintf(s->why, sizeof(s->why),
				 "the probe at 0x%lx is inside the bytes a jump displaces",
				 (unsigned long)next);
			s->code.len = s->code.insn[0].len;
			s->code.n = 1;
		}
		if (s->addr + s->code.len > next)
			return fail(err, errlen, "0x%lx is inside the instruction at 0x%lx",
				    (unsigned long)next, (unsigned long)s->addr);
	}
	return 0;
}

static struct patch_rec *site__record(const struct patch_site *s)
{
	struct patch_rec *r = patch_mem__record(sizeof(*r) + s->nprobes * sizeof(r->probes[0]));

	if (!r)
		return NULL;
	r->nprobes = s->nprobes;
	r->has_ret = s->has_ret;
	r->len = (uint8_t)s->code.len;
	r->addr = s->addr;
	memcpy(r->probes, s->probes, s->nprobes * sizeof(r->probes[0]));
	return r;
}

/* The bytes install writes: jmp rel32 to the stub, int3 after it; or an int3 on the first byte. */
static void site__patch_bytes(struct patch_site *s)
{
	int32_t rel = (int32_t)(s->rec->stub - (s->addr + PATCH_JMP_LEN));

	memcpy(s->patch, s->orig, s->code.len);
	s->patch[0] = PATCH_INT3;
	if (s->kind != STP_PATCH_JUMP)
		return;
	memset(s->patch + PATCH_JMP_LEN, PATCH_INT3, s->code.len - PATCH_JMP_LEN);
	s->patch[0] = 0xe9;
	memcpy(s->patch + 1, &rel, 4);
}

/* S's record and stub, the stub in a chunk of CS within reach (a new one for up to LEFT stubs). */
static int site__build(struct patch_site *s, struct patch_chunks *cs, int left, char *err,
		       size_t errlen)
{
	struct patch_chunk *c;
	uintptr_t lo, hi;
	char why[160];
	int n;

	s->rec = site__record(s);
	if (!s->rec)
		return fail(err, errlen, "out of memory");
	patch_code__window(&s->code, &lo, &hi);
	c = patch_chunks__reserve(cs, s->addr, lo, hi, (size_t)left * PATCH_STUB_MAX);
	if (!c)
		return fail(err, errlen,
			    "no free address range within 2 GB of 0x%lx for its trampoline",
			    (unsigned long)s->addr);
	n = patch_tramp__build((uint8_t *)(c->base + c->used), c->base + c->used, s->rec, &s->code,
			       s->copy, why, sizeof(why));
	if (n < 0)
		return fail(err, errlen, "%s", why);
	s->rec->stub = c->base + c->used + PATCH_STUB_ENTRY;
	c->used += ((uintptr_t)n + 15) & ~15ul;
	site__patch_bytes(s);
	return 0;
}

static int patcher__build(struct stp_patcher *p, char *err, size_t errlen)
{
	struct patch_chunks cs = { 0 };
	int r = patcher__untangle(p, err, errlen);

	for (int k = 0; r == 0 && k < p->n; k++)
		r = site__build(&p->sites[k], &cs, p->n - k, err, errlen);
	if (r == 0 && patch_chunks__seal(&cs) != 0)
		r = fail(err, errlen, "cannot make the trampolines executable: %s",
			 strerror(errno));
	patch_chunks__free(&cs);
	p->built = r == 0;
	return r;
}

/* ---- writing the code ---- */

/* Make every core run the code as now written (cross-modifying code); the lock held. */
static void code__sync(void)
{
	static int registered;	/* 1: yes, -1: this kernel cannot */
	long r;

	if (!registered) {
		r = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0,
			    0);
		registered = r == 0 ? 1 : -1;
	}
	if (registered > 0)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
}

/* Make the pages of the sites' bytes writable (when RESTORE: give them their protection back). */
static int code__protect(struct stp_patcher *p, bool restore, char *err, size_t errlen)
{
	uintptr_t done = 0;	/* sites are sorted: a page shared by several is done once */

	for (int k = 0; k < p->n; k++) {
		const struct patch_site *s = &p->sites[k];
		uintptr_t pg = s->addr & ~(PATCH_PAGE - 1);

		for (; pg < s->addr + s->code.len; pg += PATCH_PAGE) {
			const struct patch_map *m = patch_maps__find(&p->maps, pg);

			if (pg == done)
				continue;
			if (!m)
				return fail(err, errlen, "0x%lx is no longer mapped",
					    (unsigned long)pg);
			if (mprotect((void *)pg, PATCH_PAGE,
				     restore ? m->prot : PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
				return fail(err, errlen,
					    "cannot make the code at 0x%lx writable: %s",
					    (unsigned long)pg, strerror(errno));
			done = pg;
		}
	}
	return 0;
}

static void code__byte(uintptr_t at, uint8_t b)
{
	__atomic_store_n((uint8_t *)at, b, __ATOMIC_RELEASE);
}

static const uint8_t *site__bytes(const struct patch_site *s, bool restore)
{
	return restore ? s->orig : s->patch;
}

/* Write each site's patch (or, when RESTORE, its original bytes): int3, tails, first bytes. */
static void code__write(struct stp_patcher *p, bool restore)
{
	for (int k = 0; k < p->n; k++)
		code__byte(p->sites[k].addr, PATCH_INT3);
	code__sync();
	for (int k = 0; k < p->n; k++) {
		const struct patch_site *s = &p->sites[k];

		for (int i = 1; i < s->code.len; i++)
			code__byte(s->addr + i, site__bytes(s, restore)[i]);
	}
	code__sync();
	for (int k = 0; k < p->n; k++)
		code__byte(p->sites[k].addr, site__bytes(&p->sites[k], restore)[0]);
	code__sync();
}

/*
 * code__write with the pages writable meanwhile.  0, or -1 with ERR and
 * nothing written.  (Once written, a page whose protection cannot be
 * given back stays writable: the code is what counts.)
 */
static int code__patch(struct stp_patcher *p, bool restore, char *err, size_t errlen)
{
	char ignored[160];

	if (patch_maps__load(&p->maps) != 0)
		return fail(err, errlen, "cannot read /proc/self/maps: %s", strerror(errno));
	if (code__protect(p, false, err, errlen) != 0) {
		code__protect(p, true, ignored, sizeof(ignored));
		return -1;
	}
	code__write(p, restore);
	code__protect(p, true, ignored, sizeof(ignored));
	return 0;
}

static void patcher__set_state(struct stp_patcher *p, int state)
{
	for (int k = 0; k < p->n; k++)
		atomic_store(&p->sites[k].rec->state, state);
}

static int patcher__unchanged(const struct stp_patcher *p, char *err, size_t errlen)
{
	for (int k = 0; k < p->n; k++) {
		const struct patch_site *s = &p->sites[k];

		if (memcmp((const void *)s->addr, s->orig, s->code.len) != 0)
			return fail(err, errlen, "the code at 0x%lx changed since it was probed",
				    (unsigned long)s->addr);
	}
	return 0;
}

static struct patch_rec **patcher__recs(const struct stp_patcher *p)
{
	struct patch_rec **v = malloc((p->n ? p->n : 1) * sizeof(*v));

	for (int k = 0; v && k < p->n; k++)
		v[k] = p->sites[k].rec;
	return v;
}

static int patcher__install_locked(struct stp_patcher *p, struct patch_rec **recs, char *err,
				   size_t errlen)
{
	if (patch_tramp__setup(err, errlen) != 0)
		return -1;
	if (!p->built && patcher__build(p, err, errlen) != 0)
		return -1;
	for (int k = 0; k < p->n; k++)
		recs[k] = p->sites[k].rec;
	if (patcher__unchanged(p, err, errlen) != 0 ||
	    patch_table__add(recs, p->n, err, errlen) != 0)
		return -1;
	patcher__set_state(p, PATCH_REC_LIVE);
	if (code__patch(p, false, err, errlen) != 0) {
		patcher__set_state(p, PATCH_REC_OFF);
		patch_table__remove(recs, p->n);
		return -1;
	}
	p->installed = true;
	return 0;
}

int stp_patcher__install(struct stp_patcher *p, char *err, size_t errlen)
{
	struct patch_rec **recs;
	int r;

	if (p->installed)
		return 0;
	recs = patcher__recs(p);
	if (!recs)
		return fail(err, errlen, "out of memory");
	patch_lock();
	r = patcher__install_locked(p, recs, err, errlen);
	patch_unlock();
	free(recs);
	return r;
}

void stp_patcher__remove(struct stp_patcher *p)
{
	struct patch_rec **recs;
	char err[160];

	if (!p->installed)
		return;
	recs = patcher__recs(p);
	patch_lock();
	if (code__patch(p, true, err, sizeof(err)) == 0 && recs)
		patch_table__remove(recs, p->n); /* else the stubs go on serving: they stay valid */
	patcher__set_state(p, PATCH_REC_OFF);
	patch_unlock();
	free(recs);
	p->installed = false;
}

void stp_patcher__free(struct stp_patcher *p)
{
	if (!p)
		return;
	stp_patcher__remove(p);
	for (int k = 0; k < p->n; k++)
		free(p->sites[k].probes);
	free(p->sites);
	free(p->slots);
	patch_maps__free(&p->maps);
	free(p);
}

/* ---- what it did ---- */

void stp_patcher__counts(const struct stp_patcher *p, int *jumps, int *traps)
{
	*jumps = *traps = 0;
	for (int k = 0; k < p->n; k++)
		(*(p->sites[k].kind == STP_PATCH_JUMP ? jumps : traps))++;
}

unsigned long stp_patcher__skipped(const struct stp_patcher *p)
{
	unsigned long n = 0;

	for (int k = 0; k < p->n; k++)
		if (p->sites[k].rec)
			n += atomic_load_explicit(&p->sites[k].rec->skipped, memory_order_relaxed);
	return n;
}

int stp_patcher__info(const struct stp_patcher *p, uintptr_t addr, struct stp_patch_info *info)
{
	const struct patch_site *s = patcher__find(p, addr);

	if (!s)
		return -1;
	memset(info, 0, sizeof(*info));
	info->kind = s->kind;
	info->len = s->code.len;
	if (s->rec) {
		info->skipped = atomic_load_explicit(&s->rec->skipped, memory_order_relaxed);
		info->ret_missed = atomic_load_explicit(&s->rec->ret_missed, memory_order_relaxed);
	}
	if (s->kind == STP_PATCH_TRAP)
		snprintf(info->why, sizeof(info->why), "%s", s->why);
	return 0;
}

/*
 * Each displaced instruction but the first, as a pc move from where it is
 * to where its copy runs.  A thread at such a pc had run the instructions
 * before it in the original code, so it goes on with the copies of the
 * ones after; the stub's tail then brings it back to site + len.  A thread
 * there in a system call to restart came out of a syscall instruction
 * just before: copied as it is, its copy ends where TO starts.
 */
int stp_patcher__moves(const struct stp_patcher *p, struct stp_patch_move *v, int max)
{
	int n = 0;

	for (int k = 0; p->installed && k < p->n; k++) {
		const struct patch_site *s = &p->sites[k];

		for (int i = 1; s->kind == STP_PATCH_JUMP && i < s->code.n; i++, n++)
			if (n < max)
				v[n] = (struct stp_patch_move){ s->addr + s->code.insn[i].off,
								s->copy[i] };
	}
	return n;
}
