/*
 * stacks.c - instance names for array keys that are stacks.
 *
 * backtrace() and ubacktrace() give a stack as hex addresses, innermost
 * first ("0xffffffff81e0a5b4 0xffffffff81c00134"); an array keyed by one
 * (a[ubacktrace()]++) would have instances named by addresses nobody can
 * read, and whose process may be gone.  Such a key is named here by its
 * frames instead, outermost first and joined by ';' (the folded stacks of
 * flamegraph.pl, which a flame graph reads: "main+0x1d;level1+0x9"), each
 * "symbol+0xOFF", or "0xADDR" where no symbol is known.  A key is a stack
 * when it is one to 64 such addresses separated by single spaces, all in
 * the kernel's half of the address space or all in user space's (x86-64).
 * Kernel addresses are named through /proc/kallsyms; user ones through
 * what the stacks left in the script's stp_umaps map (build ids of the
 * files mapped, by process: symbolize_umaps.c), the process being the
 * one whose mappings place most of the frames.  Not newlines between
 * frames: pmdaCache saves an instance a line.
 *
 * The names are cached per script (a key is named once, when first seen).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pmdastap.h"
#include "../runtime/user/symbolize.h"

#define STACK_MAX_FRAMES 64
#define KERNEL_HALF 0xffff800000000000ULL
#define USER_END 0x0000800000000000ULL
#define CACHE_MAX 8192		/* names kept per script; then the cache starts again */
#define RELOAD_S 0.1		/* the copy of stp_umaps is read again at most this often */

struct stap_stack_name {
	char *raw;
	char *name;
};

struct stap_stacks {
	struct stap_stack_name *slot;
	size_t cap, n;
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* KEY (LEN bytes) as addresses into ADDRS; their number, 0 when it is not a stack. */
static int parse(const char *key, size_t len, uint64_t *addrs)
{
	size_t i = 0;
	int n = 0;
	bool kernel = false;

	while (i < len && n < STACK_MAX_FRAMES) {
		uint64_t v = 0;
		int digits = 0;

		if (n && key[i++] != ' ')
			return 0;
		if (i + 2 > len || key[i] != '0' || key[i + 1] != 'x')
			return 0;
		for (i += 2; i < len && hexval(key[i]) >= 0 && digits < 17; i++, digits++)
			v = v << 4 | (uint64_t)hexval(key[i]);
		if (digits == 0 || digits > 16)
			return 0;
		if (n == 0)
			kernel = v >= KERNEL_HALF;
		else if (kernel != (v >= KERNEL_HALF))
			return 0;
		if (!kernel && v >= USER_END)
			return 0;
		addrs[n++] = v;
	}
	return i == len ? n : 0;
}

static void frame(char *buf, size_t size, size_t *at, bool ok, const struct stp_sym_info *si,
		  uint64_t addr)
{
	int k;

	if (*at >= size)
		return;
	if (ok)
		k = snprintf(buf + *at, size - *at, "%s%s+0x%" PRIx64, *at ? ";" : "", si->name,
			     si->offset);
	else
		k = snprintf(buf + *at, size - *at, "%s0x%" PRIx64, *at ? ";" : "", addr);
	if (k > 0)
		*at += (size_t)k < size - *at ? (size_t)k : size - *at - 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The process of user stack ADDRS in the copy of SC's stp_umaps, read
 * again (at most every RELOAD_S) when it is another script's or no entry
 * places a frame: a process new since.  Most frames of a stack walked
 * without frame pointers place nowhere: no read of the map for each.
 */
static int user_pid(struct stap_script *sc, const uint64_t *addrs, int n)
{
	static int loaded_fd = -1;
	static double loaded_at;
	int pid = -1;

	if (sc->umaps_fd < 0)
		return -1;
	if (loaded_fd == sc->umaps_fd)
		pid = stp_sym_umaps_pid(addrs, n);
	if (pid < 0 && (loaded_fd != sc->umaps_fd || now() - loaded_at >= RELOAD_S)) {
		stp_sym_umaps_use(sc->umaps_fd);
		stp_sym_umaps_load();
		loaded_fd = sc->umaps_fd;
		loaded_at = now();
		pid = stp_sym_umaps_pid(addrs, n);
	}
	return pid;
}

/* The N addresses of ADDRS named into BUF, outermost first. */
static void name_frames(struct stap_script *sc, const uint64_t *addrs, int n, char *buf,
			size_t size)
{
	bool kernel = addrs[0] >= KERNEL_HALF;
	struct stp_sym_info si;
	size_t at = 0;
	int pid = -1, first = 0;

	buf[0] = '\0';
	if (!kernel)
		pid = user_pid(sc, addrs, n);
	/* the BPF program's own frames and the helper's, before the task's */
	for (int i = 0; kernel && i < n && i < 8; i++)
		if (stp_sym__lookup(stp_sym_default(), 0, addrs[i], &si) && strcmp(si.module, "bpf") == 0)
			first = i + 1;
	for (int i = n - 1; i >= first; i--) {
		bool ok = kernel ? stp_sym__lookup(stp_sym_default(), 0, addrs[i], &si)
				 : pid >= 0 && stp_sym_umaps_name(pid, addrs[i], &si);

		frame(buf, size, &at, ok, &si, addrs[i]);
	}
}

static uint64_t hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

static void cache_clear(struct stap_stacks *c)
{
	for (size_t i = 0; i < c->cap; i++) {
		free(c->slot[i].raw);
		free(c->slot[i].name);
	}
	memset(c->slot, 0, c->cap * sizeof(*c->slot));
	c->n = 0;
}

static struct stap_stack_name *cache_find(struct stap_stacks *c, const char *key, size_t len)
{
	size_t i = hash(key, len) & (c->cap - 1);

	while (c->slot[i].raw && (strlen(c->slot[i].raw) != len || memcmp(c->slot[i].raw, key, len)))
		i = (i + 1) & (c->cap - 1);
	return &c->slot[i];
}

static struct stap_stacks *cache_of(struct stap_script *sc)
{
	struct stap_stacks *c = sc->stacks;

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c || !(c->slot = calloc(2 * CACHE_MAX, sizeof(*c->slot)))) {
			free(c);
			return NULL;
		}
		c->cap = 2 * CACHE_MAX;
		sc->stacks = c;
	}
	if (c->n >= CACHE_MAX)
		cache_clear(c);
	return c;
}

bool stap_stack_name(struct stap_script *sc, const char *key, size_t len, char *buf, size_t size)
{
	uint64_t addrs[STACK_MAX_FRAMES];
	struct stap_stacks *c;
	struct stap_stack_name *e;
	int n = parse(key, len, addrs);

	if (n == 0 || !(c = cache_of(sc)))
		return false;
	e = cache_find(c, key, len);
	if (!e->raw) {
		name_frames(sc, addrs, n, buf, size);
		e->raw = strndup(key, len);
		e->name = strdup(buf);
		if (!e->raw || !e->name) {
			free(e->raw);
			free(e->name);
			e->raw = e->name = NULL;
			return true;
		}
		c->n++;
	}
	snprintf(buf, size, "%s", e->name);
	return true;
}

void stap_stacks_free(struct stap_script *sc)
{
	if (!sc->stacks)
		return;
	cache_clear(sc->stacks);
	free(sc->stacks->slot);
	free(sc->stacks);
	sc->stacks = NULL;
}
