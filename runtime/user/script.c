/*
 * script.c - libstaprt: open a compiled script, load it, set its globals.
 *
 * The script's directory holds script.so, whose `stp_meta` says
 * everything about the script, and script.bpf.o, which libbpf opens and
 * loads.  Maps are sized from the metadata before the load.  A kernel-
 * context probe whose program the kernel refuses (fentry where the
 * kernel forbids it, say) stops the load with a message naming the probe
 * point, unless the point was optional ('?'): then the object is opened
 * again without that program and the load retried.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "maps.h"
#include "handover.h"
#include "keep.h"
#include "script_int.h"
#include "attach_netfilter.h"
#include "uctx_glue.h"
#include "tapset_user.h"
#include "../bpf/stp_control.bpf.h"
#include "../stp_tapset.h"

#define GLOBALS_MAP "stp_globals"

/* ---- messages ---- */

void stp_vmsg(const struct stp_script *s, const char *level, const char *fmt, va_list ap)
{
	if (s)
		stp_out_flush((struct stp_script *)s);
	fprintf(stderr, "%s: %s: ", s ? s->prog_name : "pmstap", level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void stp_msg(const struct stp_script *s, const char *level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	stp_vmsg(s, level, fmt, ap);
	va_end(ap);
}

/* "file:line:col", or "" when the location is unknown. */
const char *stp_loc_str(const struct stp_loc *loc, char *buf, size_t size)
{
	if (!loc->file) {
		snprintf(buf, size, "<unknown>");
		return buf;
	}
	snprintf(buf, size, "%s:%d:%d", loc->file, loc->line, loc->col);
	return buf;
}

/*
 * libbpf's messages: kept (the tail of them) so that a refused program's
 * verifier log can be shown with the error, and printed as they come at
 * -vvv.
 */
static struct {
	char buf[65536];
	size_t len;
	int verbose;
} bpf_log;

/*
 * A message longer than the room left (a verifier log comes as one): its
 * end, where the verifier says why, replaces what was kept.
 */
static void bpf_log_keep_end(const char *fmt, va_list ap)
{
	size_t keep = sizeof(bpf_log.buf) / 2, len;
	const char *from;
	char *big;

	if (vasprintf(&big, fmt, ap) < 0)
		return;
	len = strlen(big);
	from = len > keep ? big + len - keep : big;
	if (from > big) {	/* from the next line's start, if a line ends in the part kept */
		const char *nl = strchr(from, '\n');

		if (nl && nl[1])
			from = nl + 1;
	}
	bpf_log.len = (size_t)snprintf(bpf_log.buf, sizeof(bpf_log.buf), "%s%s",
				       from > big ? "(the beginning of the log is cut)\n" : "",
				       from);
	free(big);
}

static int libbpf_print_locked(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	size_t room = sizeof(bpf_log.buf) - bpf_log.len;
	va_list copy;
	int n;

	if (bpf_log.verbose >= 3) {
		va_copy(copy, ap);
		vfprintf(stderr, fmt, copy);
		va_end(copy);
	}
	if (level == LIBBPF_DEBUG)
		return 0;
	if (room < 1024) {
		/* keep the newer half */
		size_t half = sizeof(bpf_log.buf) / 2;

		memmove(bpf_log.buf, bpf_log.buf + bpf_log.len - half, half);
		bpf_log.len = half;
		room = sizeof(bpf_log.buf) - half;
	}
	va_copy(copy, ap);
	n = vsnprintf(bpf_log.buf + bpf_log.len, room, fmt, copy);
	va_end(copy);
	if (n > 0 && (size_t)n < room)
		bpf_log.len += (size_t)n;
	else if (n > 0)
		bpf_log_keep_end(fmt, ap);
	return 0;
}

/* libbpf prints from the threads of load_split.c too */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

	pthread_mutex_lock(&lock);
	libbpf_print_locked(level, fmt, ap);
	pthread_mutex_unlock(&lock);
	return 0;
}

static void bpf_log_reset(void)
{
	bpf_log.len = 0;
	bpf_log.buf[0] = '\0';
}

/* Print the last max_lines lines of libbpf's log, indented. */
static void bpf_log_print_tail(int max_lines)
{
	const char *p = bpf_log.buf + bpf_log.len;
	int lines = 0;

	bpf_log.buf[bpf_log.len] = '\0';
	while (p > bpf_log.buf && lines <= max_lines)
		if (*--p == '\n')
			lines++;
	if (*p == '\n')
		p++;
	while (*p) {
		const char *nl = strchr(p, '\n');
		int n = nl ? (int)(nl - p) : (int)strlen(p);

		fprintf(stderr, "    %.*s\n", n, p);
		p += n + (nl != NULL);
	}
}

/* ---- opening ---- */

static int open_shared_object(struct stp_script *s)
{
	char *path;

	if (asprintf(&path, "%s/script.so", s->dir) < 0)
		return -ENOMEM;
	s->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!s->dl) {
		stp_msg(s, "error", "cannot load the compiled script: %s", dlerror());
		free(path);
		return -ENOENT;
	}
	s->meta = dlsym(s->dl, STP_META_SYMBOL);
	if (!s->meta) {
		stp_msg(s, "error", "%s has no '%s': not a compiled script", path, STP_META_SYMBOL);
		free(path);
		return -EINVAL;
	}
	free(path);
	return 0;
}

static int check_probe(const struct stp_script *s, const struct stp_meta_probe *p)
{
	if (p->kind < STP_PROBE_BEGIN || p->kind > STP_PROBE_NETFILTER || !p->point)
		return -1;
	/* a procfs probe in the kernel is a module's (runtime/kmod/procfs.c) */
	if (p->kind == STP_PROBE_PROCFS && ((p->context != STP_CTX_USER && !stp_kmod_is(s->dir)) ||
					    !p->procfs_path || p->procfs_maxsize <= 0))
		return -1;
	if (p->context == STP_CTX_KERNEL && !p->prog)
		return -1;
	if (p->context == STP_CTX_USER && !p->handler && p->kind != STP_PROBE_NEVER)
		return -1;
	return 0;
}

static int check_meta(struct stp_script *s)
{
	const struct stp_meta *m = s->meta;

	if (m->version != STP_META_VERSION) {
		stp_msg(s, "error", "the compiled script has metadata version %d, this runtime reads "
			"version %d: translate it again", m->version, STP_META_VERSION);
		return -EINVAL;
	}
	for (int i = 0; i < m->nprobes; i++)
		if (check_probe(s, &m->probes[i]) < 0) {
			stp_msg(s, "error", "internal: the metadata of probe %d (%s) is inconsistent",
				i, m->probes[i].point ? m->probes[i].point : "?");
			return -EINVAL;
		}
	for (int i = 0; i < m->nautoprint; i++)
		if (m->autoprint[i] < 0 || m->autoprint[i] >= m->nglobals) {
			stp_msg(s, "error", "internal: autoprint global %d does not exist", m->autoprint[i]);
			return -EINVAL;
		}
	return 0;
}

uint32_t stp_pow2_pages(uint64_t n)
{
	uint64_t p = (uint64_t)sysconf(_SC_PAGESIZE);

	while (p < n && p < (1u << 30))
		p <<= 1;
	return (uint32_t)p;
}

/* Map sizes the metadata fixes: the ring buffer, arrays, per-CPU arrays. */
static int size_maps(struct stp_script *s)
{
	const struct stp_meta *m = s->meta;
	struct bpf_map *map;

	map = bpf_object__find_map_by_name(s->obj, STP_RINGBUF_MAP);
	if (map && m->limits.ringbuf_bytes > 0 &&
	    bpf_map__set_max_entries(map, stp_pow2_pages((uint64_t)m->limits.ringbuf_bytes)) < 0)
		return -EINVAL;
	/* per-CPU state kept in plain arrays indexed by CPU */
	map = bpf_object__find_map_by_name(s->obj, STP_COUNTERS_MAP);
	if (map && bpf_map__type(map) == BPF_MAP_TYPE_ARRAY)
		bpf_map__set_max_entries(map, (uint32_t)s->ncpus);
	map = bpf_object__find_map_by_name(s->obj, STP_CTX_MAP);
	if (map && bpf_map__type(map) == BPF_MAP_TYPE_ARRAY)
		bpf_map__set_max_entries(map, (uint32_t)s->ncpus * STP_CTX_LEVELS);
	for (int i = 0; i < m->nglobals; i++) {
		const struct stp_meta_global *g = &m->globals[i];

		if (g->nkeys == 0 || !g->map || g->max_entries == 0)
			continue;
		map = bpf_object__find_map_by_name(s->obj, g->map);
		if (map && bpf_map__max_entries(map) != g->max_entries &&
		    bpf_map__set_max_entries(map, g->max_entries) < 0)
			return -EINVAL;
	}
	return 0;
}

static int open_bpf_object(struct stp_script *s)
{
	struct bpf_program *prog;
	int err;

	s->obj = bpf_object__open_file(s->bpf_path, NULL);
	err = libbpf_get_error(s->obj);
	if (err) {
		s->obj = NULL;
		stp_msg(s, "error", "cannot open %s: %s", s->bpf_path, strerror(-err));
		return err;
	}
	for (int i = 0; i < s->meta->nprobes; i++) {
		const struct stp_meta_probe *p = &s->meta->probes[i];

		if (p->context != STP_CTX_KERNEL)
			continue;
		prog = bpf_object__find_program_by_name(s->obj, p->prog);
		if (!prog) {
			stp_msg(s, "error", "internal: %s has no program '%s' for probe %s",
				s->bpf_path, p->prog, p->point);
			return -EINVAL;
		}
		if (p->kind == STP_PROBE_NETFILTER && !s->skipped[i]) {
			err = stp_nf_prepare(s, i, prog);
			if (err < 0)
				return err;
			s->skipped[i] = err > 0;
		}
		if (s->skipped[i])
			bpf_program__set_autoload(prog, false);
	}
	/* a program that several probes share loads if one of them is in */
	for (int i = 0; i < s->meta->nprobes; i++)
		if (s->meta->probes[i].context == STP_CTX_KERNEL && !s->skipped[i])
			bpf_program__set_autoload(bpf_object__find_program_by_name(s->obj,
							s->meta->probes[i].prog), true);
	stp_um_prepare(s);
	stp_usym_identify(s);
	err = size_maps(s);
	if (err)
		stp_msg(s, "error", "cannot size the maps of %s: %s", s->bpf_path, strerror(-err));
	stp_maps__free(s->maps);
	s->maps = stp_maps__bpf(s->obj);
	return err ? err : s->maps ? 0 : -ENOMEM;
}

struct stp_script *stp_script__open(const char *dir, const struct stp_script_opts *opts)
{
	struct stp_script *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->opts = *opts;
	s->prog_name = opts->prog_name ? opts->prog_name : "pmstap";
	s->out.fd = -1;
	s->epfd = s->sigfd = s->deadline_fd = -1;
	s->dyn_report = s->dyn_report_w = s->dyn_poll_fd = -1;
	s->kmod_fd = -1;
	s->ho_sock = s->ho_out = -1;
	s->sc_link_fds[0] = s->sc_link_fds[1] = -1;
	s->ncpus = libbpf_num_possible_cpus();
	bpf_log.verbose = opts->verbose;
	libbpf_set_print(libbpf_print);
	s->dir = strdup(dir);
	if (!s->dir || asprintf(&s->bpf_path, "%s/script.bpf.o", dir) < 0 || s->ncpus <= 0)
		goto fail;
	if (open_shared_object(s) < 0 || check_meta(s) < 0)
		goto fail;
	s->skipped = calloc((size_t)s->meta->nprobes + 1, sizeof(*s->skipped));
	s->links = calloc((size_t)s->meta->nprobes + 1, sizeof(*s->links));
	s->dispatched = calloc((size_t)s->meta->nprobes + 1, sizeof(*s->dispatched));
	if (!s->skipped || !s->links || !s->dispatched)
		goto fail;
	if ((stp_kmod_is(dir) ? stp_kmod_open(s) : stp_dyn_is(dir) ? stp_dyn_open(s) :
	     stp_keep_take(s) == 0 ? 0 : open_bpf_object(s)) < 0 ||
	    stp_formats_compile(s) < 0 || stp_out_open(s) < 0)
		goto fail;
	return s;
fail:
	stp_script__free(s);
	return NULL;
}

/* ---- loading ---- */

static int probe_of_prog(const struct stp_script *s, const char *name, size_t len)
{
	for (int i = 0; i < s->meta->nprobes; i++) {
		const char *prog = s->meta->probes[i].prog;

		if (s->meta->probes[i].context == STP_CTX_KERNEL && strlen(prog) == len &&
		    strncmp(prog, name, len) == 0)
			return i;
	}
	return -1;
}

/*
 * Which probe's program made the load fail: the last program libbpf's
 * messages name, else the first program to load that did not.
 */
static int failed_probe(const struct stp_script *s)
{
	const char *p = NULL, *q = bpf_log.buf;
	struct bpf_program *prog;

	bpf_log.buf[bpf_log.len] = '\0';
	while ((q = strstr(q, "prog '")) != NULL)
		p = q += 6;
	if (p) {
		const char *end = strchr(p, '\'');
		int i = end ? probe_of_prog(s, p, (size_t)(end - p)) : -1;

		if (i >= 0)
			return i;
	}
	bpf_object__for_each_program(prog, s->obj) {
		const char *name = bpf_program__name(prog);

		if (bpf_program__autoload(prog) && bpf_program__fd(prog) < 0)
			return probe_of_prog(s, name, strlen(name));
	}
	return -1;
}

/* Why the kernel refused a probe's program, in words. */
static const char *load_reason(const struct stp_meta_probe *p, int err, bool *show_log)
{
	*show_log = false;
	if (err == -EPERM && p->kind == STP_PROBE_KFUNC)
		return "this kernel refuses fentry/fexit programs (operation not permitted)";
	if (err == -EPERM)
		return "the kernel refused the program (operation not permitted)";
	if ((err == -EACCES || err == -EINVAL) &&
	    strstr(bpf_log.buf, "cannot use helper bpf_probe_write_user"))
		return "this kernel does not let BPF programs write user memory (no "
		       "bpf_probe_write_user: kernel lockdown), so the probe's writes to target "
		       "variables cannot run here";
	if (err == -EACCES || err == -EINVAL) {
		*show_log = true;
		return "the BPF verifier rejected the program";
	}
	if (err == -ENOENT || err == -ESRCH)
		return "the probed kernel object does not exist on this kernel";
	if (err == -E2BIG) {
		*show_log = true;	/* which limit: instructions, states, jumps */
		return "the program is too large for the BPF verifier";
	}
	return NULL;
}

static void report_load_error(struct stp_script *s, int i, int err)
{
	const struct stp_meta_probe *p = &s->meta->probes[i];
	char where[256];
	bool show_log;
	const char *why = load_reason(p, err, &show_log);

	stp_loc_str(&p->loc, where, sizeof(where));
	stp_msg(s, "error", "%s: cannot load probe %s: %s", where, p->point,
		why ? why : strerror(-err));
	if (show_log)
		bpf_log_print_tail(s->opts.verbose ? 400 : 20);
}

/*
 * -v: the verifier's statistics of each program (log level 4: its time,
 * the instructions it processed), in a buffer of its own.  libbpf prints
 * no verifier log for a program with one, so a load that fails is tried
 * again without them (load_retrying()).
 */
#define STP_VSTATS_BYTES 512

static void want_vstats(struct stp_script *s)
{
	free(s->vstats);
	s->vstats = NULL;
	stp_vstats_want(s, s->obj);
}

/*
 * OBJ (s->obj or a copy of it: load_split.c) loads its programs with
 * their statistics, each in the slot of its index, which is the same in
 * every copy.
 */
void stp_vstats_want(struct stp_script *s, struct bpf_object *obj)
{
	struct bpf_program *prog;
	size_t n = 0;

	if (!s->opts.verbose || s->vstats_off)
		return;
	if (!s->vstats) {
		bpf_object__for_each_program(prog, obj)
			n++;
		s->vstats = calloc(n ? n : 1, STP_VSTATS_BYTES);
		if (!s->vstats)
			return;
		n = 0;
	}
	bpf_object__for_each_program(prog, obj) {
		if (bpf_program__autoload(prog) &&
		    (bpf_program__set_log_level(prog, 4) != 0 ||
		     bpf_program__set_log_buf(prog, s->vstats + n * STP_VSTATS_BYTES,
					      STP_VSTATS_BYTES) != 0))
			bpf_program__set_log_level(prog, 0);
		n++;
	}
}

static int load_once(struct stp_script *s)
{
	bpf_log_reset();
	want_vstats(s);
	return bpf_object__load(s->obj);
}

/* Put the split handlers' bodies in their prog array (translator/emit_body.c). */
static int fill_bodies(struct stp_script *s)
{
	int fd = s->meta->nbodies ? stp_script__map_fd(s, STP_BODIES_MAP) : -1;

	for (uint32_t i = 0; fd >= 0 && i < (uint32_t)s->meta->nbodies; i++) {
		const struct stp_prog *prog = stp_script__program(s, s->meta->bodies[i]);

		if (prog && bpf_map_update_elem(fd, &i, &prog->fd, BPF_ANY) != 0) {
			stp_msg(s, "error", "cannot put %s in map %s: %s", s->meta->bodies[i],
				STP_BODIES_MAP, strerror(errno));
			return -errno;
		}
	}
	return 0;
}

static bool same_program(const struct stp_script *s, int i, int j)
{
	return s->meta->probes[j].context == STP_CTX_KERNEL &&
	       strcmp(s->meta->probes[j].prog, s->meta->probes[i].prog) == 0;
}

/* A probe that runs probe I's program and is not optional, else I. */
static int required_sharer(const struct stp_script *s, int i)
{
	for (int j = 0; j < s->meta->nprobes; j++)
		if (same_program(s, i, j) && !s->meta->probes[j].optional)
			return j;
	return i;
}

/* Probe I cannot load: neither can the others that run its program. */
static void skip_program(struct stp_script *s, int i)
{
	for (int j = 0; j < s->meta->nprobes; j++)
		if (same_program(s, i, j))
			s->skipped[j] = true;
}

static int load_retrying(struct stp_script *s)
{
	int err, i;

	while ((err = load_once(s)) != 0) {
		if (s->vstats) {	/* again, with the verifier's log of what it refused */
			s->vstats_off = true;
			bpf_object__close(s->obj);
			s->obj = NULL;
			if ((err = open_bpf_object(s)) != 0)
				return err;
			continue;
		}
		i = failed_probe(s);
		if (i < 0 || s->skipped[i]) {
			stp_msg(s, "error", "cannot load %s: %s", s->bpf_path, strerror(-err));
			bpf_log_print_tail(s->opts.verbose ? 400 : 20);
			return err;
		}
		i = required_sharer(s, i);
		if (!s->meta->probes[i].optional) {
			report_load_error(s, i, err);
			return err;
		}
		skip_program(s, i);
		if (s->opts.verbose) {
			bool show_log;
			const char *why = load_reason(&s->meta->probes[i], err, &show_log);

			stp_msg(s, "note", "skipping optional probe %s: %s", s->meta->probes[i].point,
				why ? why : strerror(-err));
		}
		bpf_object__close(s->obj);
		s->obj = NULL;
		err = open_bpf_object(s);
		if (err)
			return err;
	}
	return 0;
}

int stp_globals_map_fd(const struct stp_script *s)
{
	int fd = stp_script__map_fd(s, GLOBALS_MAP);

	return fd >= 0 ? fd : -1;
}

/* The dyninst runtime's scalars: in the segment. */
static int map_dyn_globals(struct stp_script *s)
{
	struct stp_map_info info;
	int fd = stp_maps__find(s->maps, GLOBALS_MAP, &info);

	if (fd < 0)
		return 0;
	s->globals_size = info.value_size;
	s->globals = stp_mapfd_mmap(fd, info.value_size);
	return s->globals ? 0 : -EINVAL;
}

/* Point s->globals at the kernel's copy of the scalars' map value. */
static int map_globals(struct stp_script *s)
{
	struct bpf_map *map = s->obj ? bpf_object__find_map_by_name(s->obj, GLOBALS_MAP) : NULL;
	size_t size, page = (size_t)sysconf(_SC_PAGESIZE);
	struct stp_map_info info;
	void *p;
	int fd;

	if (s->dseg)
		return map_dyn_globals(s);
	if (map) {
		p = (void *)bpf_map__initial_value(map, &size);
		if (p) {
			s->globals_size = bpf_map__value_size(map);
			s->globals = p;
			return 0;
		}
	}
	fd = stp_maps__find(s->maps, GLOBALS_MAP, &info);	/* a kept set's too */
	if (fd < 0)
		return 0;
	s->globals_size = info.value_size;
	if (!(info.flags & BPF_F_MMAPABLE)) {
		stp_msg(s, "error", "internal: map %s is not mmapable", GLOBALS_MAP);
		return -EINVAL;
	}
	size = (s->globals_size + page - 1) / page * page;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		stp_msg(s, "error", "cannot map the globals of the script: %s", strerror(errno));
		return -errno;
	}
	s->globals = p;
	s->globals_mapped = true;
	return 0;
}

static const struct stp_meta_global *find_global(const struct stp_script *s, const char *name,
						 size_t len)
{
	for (int i = 0; i < s->meta->nglobals; i++) {
		const struct stp_meta_global *g = &s->meta->globals[i];

		if (strlen(g->name) == len && strncmp(g->name, name, len) == 0)
			return g;
	}
	return NULL;
}

static int set_long_global(struct stp_script *s, const struct stp_meta_global *g,
			   const char *arg, const char *value)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(value, &end, 0);
	if (errno || end == value || *end) {
		stp_msg(s, "error", "-G %s: '%s' is not a number (global '%s' is a long)", arg,
			value, g->name);
		return -EINVAL;
	}
	memcpy((char *)s->globals + g->offset, &(int64_t){ v }, sizeof(int64_t));
	return 0;
}

static int set_string_global(struct stp_script *s, const struct stp_meta_global *g,
			     const char *value)
{
	size_t max = (size_t)s->meta->limits.maxstringlen;
	size_t n = strlen(value);
	char *dst = (char *)s->globals + g->offset;

	if (max == 0 || g->offset + max > s->globals_size)
		max = s->globals_size - g->offset;
	if (n >= max)
		n = max - 1;
	memcpy(dst, value, n);
	dst[n] = '\0';
	return 0;
}

/* -G NAME=VALUE: the initial value of a scalar global. */
static int set_global(struct stp_script *s, const char *arg)
{
	const char *eq = strchr(arg, '=');
	const struct stp_meta_global *g;

	if (!eq) {
		stp_msg(s, "error", "-G %s: expected NAME=VALUE", arg);
		return -EINVAL;
	}
	g = find_global(s, arg, (size_t)(eq - arg));
	if (!g) {
		stp_msg(s, "error", "-G %s: the script has no global '%.*s' (or never uses it)", arg,
			(int)(eq - arg), arg);
		return -ENOENT;
	}
	if (g->nkeys || g->type == STP_TYPE_STATS || !s->globals ||
	    g->offset >= s->globals_size) {
		stp_msg(s, "error", "-G %s: global '%s' is not a scalar long or string", arg, g->name);
		return -EINVAL;
	}
	if (g->type == STP_TYPE_LONG)
		return set_long_global(s, g, arg, eq + 1);
	return set_string_global(s, g, eq + 1);
}

/*
 * Tell kernel-context code where the run is (its handlers run only while
 * it is running) and target().  A script without the control map has no
 * kernel handlers that care.
 */
int stp_control_set(struct stp_script *s, enum stp_state state)
{
	struct stp_control c = { .target = s->target };
	int fd = stp_script__map_fd(s, STP_CONTROL_MAP);
	uint32_t key = 0;

	if (fd < 0)
		return 0;
	c.state = state == STP_STATE_STARTING ? STP_RUN_STARTING :
		  state == STP_STATE_RUNNING ? STP_RUN_RUNNING : STP_RUN_STOPPING;
	if (stp_mapfd_update(fd, &key, &c, BPF_ANY) < 0) {
		stp_msg(s, "error", "cannot update map %s: %s", STP_CONTROL_MAP, strerror(errno));
		return -errno;
	}
	return 0;
}

/*
 * What kernel context cannot find out (target(), clocks, the script's
 * arguments): the struct stp_rt_info in the object's STP_RT_SECTION map,
 * filled by stp_rt_info_init() of the user-context tapset services
 * (tapset_user.c, which script.so calls here), which read the same
 * memory, and with the script's MAXSTRINGLEN.
 */
static int init_rt_info(struct stp_script *s)
{
	struct bpf_map *map = s->obj ? bpf_object__find_map_by_name(s->obj, STP_RT_SECTION) : NULL;
	struct stp_rt_info *rt = NULL;
	size_t size = 0;
	int fd;
	struct stp_map_info info;
	static struct stp_rt_info kept;	/* a kept set's: made here, written to its map */

	stp_tapset_user_set_maxstringlen(s->meta->limits.maxstringlen);
	if (s->dseg && (fd = stp_maps__find(s->maps, "stp_rt_map", NULL)) >= 0)
		rt = stp_mapfd_mmap(fd, sizeof(*rt));	/* the dyninst runtime's: in the segment */
	else if (map)
		rt = (void *)bpf_map__initial_value(map, &size);
	else if (!s->obj && (fd = stp_maps__find(s->maps, STP_RT_SECTION, &info)) >= 0 &&
		 info.value_size >= sizeof(kept))
		rt = &kept, size = sizeof(kept);
	if (!rt || (!s->dseg && size < sizeof(*rt)))
		return 0;	/* no tapset service needs it */
	stp_rt_info_init(rt, s->target, s->opts.nargs, s->opts.args);
	stp_tapset_user_init(rt);
	if (s->dseg)
		return 0;	/* the handlers read it there, in place */
	/*
	 * After load, libbpf's initial value is its own copy, no longer
	 * the map's memory (libbpf before 1.5 maps it only for skeletons):
	 * write it to the map for kernel context.
	 */
	fd = map ? bpf_map__fd(map) : stp_maps__find(s->maps, STP_RT_SECTION, NULL);
	if (stp_mapfd_update(fd, &(int){ 0 }, rt, BPF_ANY) != 0) {
		stp_msg(s, "error", "cannot update map %s: %s", STP_RT_SECTION, strerror(errno));
		return -errno;
	}
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The probe point program NAME runs ("3 probes, the first PP" when it runs more). */
static const char *program_point(const struct stp_script *s, const char *name, char *buf,
				 size_t size)
{
	const char *first = NULL;
	int n = 0;

	for (int i = 0; i < s->meta->nprobes; i++) {
		const struct stp_meta_probe *p = &s->meta->probes[i];

		if (p->context != STP_CTX_KERNEL || s->skipped[i] || strcmp(p->prog, name) != 0)
			continue;
		if (!n++)
			first = p->point;
	}
	if (!first) {	/* a split handler's body (emit_body.c): its handler's point */
		size_t len = strlen(name);

		if (len > 5 && len < 128 && strcmp(name + len - 5, "_body") == 0) {
			char head[128], of[256];

			snprintf(head, sizeof(head), "%.*s", (int)(len - 5), name);
			snprintf(buf, size, "the body of %s", program_point(s, head, of, sizeof(of)));
			return buf;
		}
		return "the runtime's";
	}
	if (n == 1)
		return first;
	snprintf(buf, size, "%d probes, the first %s", n, first);
	return buf;
}

/* The verifier's time for program I, from its statistics; -1 when it did not say. */
static long long vstats_usec(const struct stp_script *s, size_t i)
{
	const char *log = s->vstats ? s->vstats + i * STP_VSTATS_BYTES : "";
	const char *at = strstr(log, "verification time ");
	long long us;

	return at && sscanf(at, "verification time %lld usec", &us) == 1 ? us : -1;
}

static const char *parts_note(const struct stp_script *s)
{
	static char buf[64];

	if (s->nparts < 2)
		return "";
	snprintf(buf, sizeof(buf), " (by %d threads)", s->nparts);
	return buf;
}

/*
 * -v: how many programs the verifier passed, their instructions, the
 * load's time and the verifier's part of it, and the program it took
 * longest over; -vv: each program's.
 */
static void report_programs(const struct stp_script *s, double ms)
{
	struct bpf_program *each, *prog, *slowest = NULL;
	unsigned long long insns = 0, xlated = 0, slowest_insns = 0;
	long long verify_us = 0, slowest_us = -1;
	size_t i = 0;
	int n = 0;

	bpf_object__for_each_program(each, s->obj) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);
		long long us = vstats_usec(s, i++);

		prog = stp_script__loaded(s, each);
		if (bpf_program__fd(prog) < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) != 0)
			info.verified_insns = info.xlated_prog_len = 0;
		insns += info.verified_insns;
		xlated += info.xlated_prog_len / 8;
		n++;
		if (us < 0)
			continue;
		verify_us += us;
		if (us > slowest_us) {
			slowest_us = us;
			slowest = prog;
			slowest_insns = info.verified_insns;
		}
		if (s->opts.verbose >= 2) {
			char buf[256];

			stp_msg(s, "note", "program %s (%s): %u instructions verified in %.1f ms",
				bpf_program__name(prog),
				program_point(s, bpf_program__name(prog), buf, sizeof(buf)),
				info.verified_insns, us / 1e3);
		}
	}
	stp_msg(s, "note", "loaded %d BPF program%s: %llu instructions verified, %llu loaded, "
		"in %.0f ms%s", n, n == 1 ? "" : "s", insns, xlated, ms, parts_note(s));
	if (slowest) {
		char buf[256];

		stp_msg(s, "note", "the verifier took %.0f ms%s, the longest over %s (%s: %llu "
			"instructions, %.1f ms)%s", verify_us / 1e3,
			s->nparts > 1 ? " in all threads" : "", bpf_program__name(slowest),
			program_point(s, bpf_program__name(slowest), buf, sizeof(buf)),
			slowest_insns, slowest_us / 1e3,
			s->opts.verbose >= 2 || n == 1 ? "" : "; -vv lists each program");
	}
}

/* The programs libbpf loaded, as attaching needs them (s->progs; libbpf keeps the descriptors). */
static int progs_from_object(struct stp_script *s)
{
	struct bpf_program *each;
	int n = 0;

	bpf_object__for_each_program(each, s->obj)
		n++;
	s->progs = calloc((size_t)n + 1, sizeof(*s->progs));
	if (!s->progs)
		return -ENOMEM;
	bpf_object__for_each_program(each, s->obj) {
		struct bpf_program *prog = stp_script__loaded(s, each);
		struct stp_prog *p = &s->progs[s->nprogs];

		if (bpf_program__fd(prog) < 0)
			continue;
		p->name = strdup(bpf_program__name(prog));
		p->section = strdup(bpf_program__section_name(prog));
		p->type = (uint32_t)bpf_program__type(prog);
		p->fd = bpf_program__fd(prog);
		s->nprogs++;
		if (!p->name || !p->section)
			return -ENOMEM;
	}
	return 0;
}

const struct stp_prog *stp_script__program(const struct stp_script *s, const char *name)
{
	for (int i = 0; name && i < s->nprogs; i++)
		if (strcmp(s->progs[i].name, name) == 0)
			return &s->progs[i];
	return NULL;
}

void stp_progs_free(struct stp_script *s)
{
	for (int i = 0; i < s->nprogs; i++) {
		free(s->progs[i].name);
		free(s->progs[i].section);
		if (s->progs_owned)
			close(s->progs[i].fd);
	}
	free(s->progs);
	s->progs = NULL;
	s->nprogs = 0;
	s->progs_owned = false;
}

/* Load the programs: by parts on several CPUs (load_split.c), else in one object. */
static int load_programs(struct stp_script *s)
{
	int err;

	bpf_log_reset();
	err = stp_load_split(s);
	if (err < 0) {
		if (s->opts.verbose)
			stp_msg(s, "note", "loading by parts failed (%s): loading again in one",
				strerror(-err));
		bpf_object__close(s->obj);
		s->obj = NULL;
		err = open_bpf_object(s);
	}
	if (err == 0)
		err = load_retrying(s);
	if (err >= 0)	/* loaded by parts (> 0), or in one */
		err = progs_from_object(s);
	return err < 0 ? err : fill_bodies(s);
}

/*
 * A kept set (keep.c): nothing to load; the split bodies go back in their
 * prog array, and the programs' recursion misses so far are the base the
 * run's count starts from.
 */
static int load_kept(struct stp_script *s, double t0)
{
	unsigned long long insns = 0;
	int err = fill_bodies(s);

	for (int i = 0; i < s->nprogs; i++) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(s->progs[i].fd, &info, &len) == 0) {
			s->misses_base += info.recursion_misses;
			insns += info.verified_insns;
		}
	}
	if (err || !s->opts.verbose)
		return err;
	stp_msg(s, "note", "took %d loaded BPF program%s and %d maps from pmstap-keep (pid %d) "
		"in %.0f ms: nothing to verify (%llu instructions verified when they were loaded)",
		s->nprogs, s->nprogs == 1 ? "" : "s", stp_maps__count(s->maps), s->kept_from,
		now_ms() - t0, insns);
	return 0;
}

int stp_script__load(struct stp_script *s)
{
	double t0 = now_ms();
	int err = s->dseg ? stp_dyn_prepare(s) : s->progs_owned ? load_kept(s, t0) :
		  load_programs(s);

	if (!err && s->obj && s->opts.verbose)
		report_programs(s, now_ms() - t0);
	if (!err && s->obj)
		stp_keep_note_load(s);

	if (!err)
		err = map_globals(s);
	if (!err && s->opts.pmda_name)
		err = stp_handover_hello(s);	/* before the command starts: a refusal costs nothing */
	if (!err)
		err = stp_target_start(s);
	if (!err)
		err = stp_control_set(s, STP_STATE_STARTING);
	if (!err)
		err = init_rt_info(s);
	if (!err)
		err = stp_uctx_create(s);	/* the globals' initial values, then -G */
	for (int i = 0; !err && i < s->opts.nglobal_sets; i++)
		err = set_global(s, s->opts.global_sets[i]);
	return err;
}

/* ---- accessors ---- */

void stp_script__attach_named_pid(struct stp_script *s)
{
	if (!s->dseg || s->opts.target_cmd || s->opts.target_pid > 0)
		return;
	for (int i = 0; i < s->meta->nprobes; i++)
		if (s->meta->probes[i].kind == STP_PROBE_UPROBE && s->meta->probes[i].uprobe_pid > 0) {
			s->opts.target_pid = s->meta->probes[i].uprobe_pid;
			s->opts.target_implied = true;
			return;
		}
}

void stp_script__set_pmda_name(struct stp_script *s, const char *name)
{
	s->opts.pmda_name = name;
}

const struct stp_meta *stp_script__meta(const struct stp_script *s)
{
	return s->meta;
}

struct bpf_object *stp_script__bpf_object(const struct stp_script *s)
{
	return s->obj;
}

struct stp_dseg *stp_script__dseg(const struct stp_script *s)
{
	return s->dseg;
}

uint64_t stp_prog_misses(int prog_fd)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (prog_fd < 0 || bpf_obj_get_info_by_fd(prog_fd, &info, &len) < 0)
		return 0;
	return info.recursion_misses;
}

uint64_t stp_script__misses(const struct stp_script *s)
{
	uint64_t sum = 0;

	for (int i = 0; i < s->nprogs; i++)
		sum += stp_prog_misses(s->progs[i].fd);
	return sum - s->misses_base;	/* a kept set's counts go on from its earlier runs */
}

const struct stp_maps *stp_script__maps(const struct stp_script *s)
{
	return s->maps;
}

int stp_script__map_fd(const struct stp_script *s, const char *map_name)
{
	return stp_maps__find(s->maps, map_name, NULL);
}

int stp_script__ncpus(const struct stp_script *s)
{
	return s->ncpus;
}

void *stp_script__globals(const struct stp_script *s)
{
	return s->globals;
}

int64_t stp_script__target(const struct stp_script *s)
{
	return s->target;
}

/* ---- freeing ---- */

void stp_script__free(struct stp_script *s)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (!s)
		return;
	stp_target_stop(s);
	stp_detach_all(s);
	stp_files_close(s);
	stp_uctx_destroy(s);
	stp_events_close(s);
	stp_out_close(s);
	stp_handover_close(s);
	stp_formats_free(s);
	stp_perfctr_free(s);
	free(s->child_exe);
	if (s->globals_mapped)
		munmap(s->globals, (s->globals_size + page - 1) / page * page);
	stp_keep_offer(s);	/* the probes detached, the maps still open */
	stp_keep_free(s);
	stp_maps__free(s->maps);
	stp_progs_free(s);
	stp_load_split_close(s);
	bpf_object__close(s->obj);
	stp_kmod_close(s);
	stp_dyn_close(s);
	if (s->dl)
		dlclose(s->dl);
	free(s->links);
	free(s->link_fds);	/* its lists went with the links (stp_detach_all()) */
	free(s->dispatched);
	free(s->vstats);
	free(s->skipped);
	free(s->bpf_path);
	free(s->dir);
	free(s);
}
