/*
 * keep.c - a script's loaded programs and maps kept for its next run.
 *
 * With its build cached, a script's start is its load: the kernel verifies
 * every program again (strace.stp: 221 programs, 370 K instructions, a
 * third of a second on two CPUs), and nothing pmstap does can share that
 * work between runs but the loaded programs themselves.  So at the end of
 * a run, once its probes are detached, pmstap forks a keeper
 * ("pmstap-keep") that holds the programs and maps, puts every map back as
 * the load left it, and waits PMSTAP_KEEP_LOADED seconds (run.c) on a Unix
 * socket named after the build.  The next run of that build by the same
 * pmstap takes them over the socket (SCM_RIGHTS) instead of loading, and
 * the keeper exits; that run offers them again at its end.  The kernel
 * frees all of it when the keeper's descriptors go: it leaves nothing
 * behind, no pinned object and no file but its socket.  Removing the
 * socket (or SIGTERM) ends a keeper at once.
 *
 * Sockets: root's in /run/pmstap, another user's in $XDG_RUNTIME_DIR/pmstap
 * (PMSTAP_KEEP_DIR for tests), a directory of mode 0700 that its owner
 * made; both ends check the other's uid (SO_PEERCRED).  A user has at most
 * KEEP_MAX keepers: a run that finds that many keeps nothing.
 *
 * What is kept: the BPF runtime's sets whose every map can be put back
 * (hashes, arrays, the ring buffer, queues, stack traces, perf event and
 * prog arrays) and whose every probe attaches from its program's
 * descriptor alone (tracepoints, raw tracepoints, perf events, the
 * syscall dispatch, process and thread probes, uprobe_multi links:
 * attach.c); kprobes, uprobes one by one, fentry, netfilter and perf
 * counters attach through libbpf's object, so their scripts load each
 * time.  Not a run handed to pmdastap (--pmda), which holds its maps.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "keep.h"
#include "maps.h"
#include "msg.h"
#include "script_int.h"

#define KEEP_MAX 8		/* keepers per user */
#define KEEP_MAGIC 0x4b505453u	/* "STPK" */
#define KEEP_VERSION 1
#define KEEP_FDS_PER_MSG 200	/* SCM_RIGHTS takes at most 253 */
#define KEEP_ANSWER_MS 2000	/* a keeper answers at once: this is for a stuck one */

struct keep_header {
	uint32_t magic, version;
	uint32_t nprogs, nmaps, nprobes;
	uint32_t names_len, snaps_len;
	uint32_t um_on;
	int32_t pid;
};

/* ---- the socket ---- */

/* The keepers' directory, made if missing and checked; NULL when there is none to trust. */
static const char *keep_dir(char *buf, size_t size)
{
	const char *env = getenv("PMSTAP_KEEP_DIR"), *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;

	if (env && *env)
		snprintf(buf, size, "%s", env);
	else if (geteuid() == 0)
		snprintf(buf, size, "/run/pmstap");
	else if (xdg && *xdg)
		snprintf(buf, size, "%s/pmstap", xdg);
	else
		return NULL;
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return NULL;
	if (lstat(buf, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077))
		return NULL;
	return buf;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

/*
 * The socket of S's set: its build (the cache directory, named by its
 * key), this pmstap (its file's identity: a rebuilt pmstap may read the
 * maps otherwise), the CPUs and how uprobes link (PMSTAP_NO_UMULTI: the
 * programs were loaded for one way).
 */
static bool keep_path(const struct stp_script *s, struct sockaddr_un *sa)
{
	char dir[PATH_MAX], real[PATH_MAX];
	uint64_t h = 14695981039346656037ULL, e = h;
	struct stat st;
	const char *d = keep_dir(dir, sizeof(dir));

	if (!d || !realpath(s->dir, real) || stat("/proc/self/exe", &st) < 0)
		return false;
	h = fnv(h, real, strlen(real));
	e = fnv(e, &st.st_dev, sizeof(st.st_dev));
	e = fnv(e, &st.st_ino, sizeof(st.st_ino));
	e = fnv(e, &st.st_size, sizeof(st.st_size));
	e = fnv(e, &st.st_mtim, sizeof(st.st_mtim));
	e = fnv(e, &s->ncpus, sizeof(s->ncpus));
	e = fnv(e, getenv("PMSTAP_NO_UMULTI") ? "u" : "-", 1);
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	return snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/k-%016llx%016llx", d,
			(unsigned long long)h, (unsigned long long)e) < (int)sizeof(sa->sun_path);
}

static bool peer_is_us(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
	       cred.uid == geteuid();
}

/* LEN bytes of BUF to FD, with N descriptors of FDS riding on the first. */
static int send_all(int fd, const void *buf, size_t len, const int *fds, int n)
{
	char ctl[CMSG_SPACE(sizeof(int) * KEEP_FDS_PER_MSG)];
	const char *p = buf;

	while (len > 0) {
		struct iovec iov = { (void *)p, len };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t w;

		stp_msg_put_fds(&msg, ctl, fds, n);
		w = sendmsg(fd, &msg, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
		n = 0;
	}
	return 0;
}

/* LEN bytes from FD into BUF, and the descriptors that come with them (up to MAX) into FDS. */
static int recv_all(int fd, void *buf, size_t len, int *fds, int max, int *got)
{
	char ctl[CMSG_SPACE(sizeof(int) * KEEP_FDS_PER_MSG)];
	char *p = buf;

	if (got)
		*got = 0;
	while (len > 0) {
		struct iovec iov = { p, len };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
				      .msg_controllen = sizeof(ctl) };
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&pfd, 1, KEEP_ANSWER_MS) <= 0)
			return -1;
		r = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		if (got)
			*got += stp_msg_take_fds(&msg, fds + *got, max - *got);
		else
			stp_msg_take_fds(&msg, NULL, 0);	/* none wanted: closed */
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

/* ---- putting the maps back ---- */

/* Every key of hash-like map FD (at most MAX of them) deleted: all read, then deleted. */
static void empty_keys(int fd, uint32_t key_size, uint32_t max)
{
	size_t ks = key_size ? key_size : 1;
	char *keys = calloc((size_t)max + 1, ks);
	uint32_t n = 0;

	while (keys && n < max &&
	       bpf_map_get_next_key(fd, n ? keys + (n - 1) * ks : NULL, keys + n * ks) == 0)
		n++;
	for (uint32_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, keys + i * ks);
	free(keys);
}

/* Array-like map FD's slots 0 .. MAX-1 deleted (perf event and prog arrays). */
static void empty_slots(int fd, uint32_t max)
{
	for (uint32_t i = 0; i < max; i++)
		bpf_map_delete_elem(fd, &i);
}

/* The ring buffer's records, read or not, dropped: its consumer where its producer is. */
static void empty_ringbuf(int fd)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long *cons = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	unsigned long *prod = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, page);

	if (cons != MAP_FAILED && prod != MAP_FAILED)
		__atomic_store_n(cons, __atomic_load_n(prod, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
	if (cons != MAP_FAILED)
		munmap(cons, (size_t)page);
	if (prod != MAP_FAILED)
		munmap(prod, (size_t)page);
}

/* Array FD (INFO) as SNAP has it (its whole values), or zeroed when SNAP is NULL. */
static int refill_array(int fd, const struct stp_map_info *info, const void *snap, int ncpus)
{
	size_t vsize = info->type == BPF_MAP_TYPE_PERCPU_ARRAY ?
		       (size_t)((info->value_size + 7) & ~7u) * (size_t)ncpus : info->value_size;
	char *zero;
	int err = 0;

	if ((info->flags & BPF_F_MMAPABLE) && info->type == BPF_MAP_TYPE_ARRAY) {
		/* the kernel's layout: elements 8-byte aligned */
		size_t elem = ((size_t)info->value_size + 7) & ~(size_t)7;
		size_t len = elem * info->max_entries;
		long page = sysconf(_SC_PAGESIZE);
		size_t mlen = (len + (size_t)page - 1) / (size_t)page * (size_t)page;
		char *p = mmap(NULL, mlen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

		if (p == MAP_FAILED)
			return -errno;
		memset(p, 0, len);
		for (uint32_t i = 0; snap && i < info->max_entries; i++)
			memcpy(p + (size_t)i * elem, (const char *)snap + (size_t)i * info->value_size,
			       info->value_size);
		munmap(p, mlen);
		return 0;
	}
	zero = calloc(1, vsize);
	if (!zero)
		return -ENOMEM;
	for (uint32_t i = 0; i < info->max_entries && !err; i++) {
		const void *v = snap && info->type == BPF_MAP_TYPE_ARRAY ?
				(const char *)snap + (size_t)i * info->value_size : zero;

		if (bpf_map_update_elem(fd, &i, v, BPF_ANY) != 0)
			err = -errno;
	}
	free(zero);
	return err;
}

/* Whether a map of TYPE can be put back as its load left it. */
static bool resettable(uint32_t type)
{
	switch (type) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_RINGBUF:
	case BPF_MAP_TYPE_QUEUE:
	case BPF_MAP_TYPE_STACK:
	case BPF_MAP_TYPE_STACK_TRACE:
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
	case BPF_MAP_TYPE_PROG_ARRAY:
		return true;
	default:
		return false;
	}
}

/* Map FD as its load left it: 0, or -errno. */
static int reset_map(int fd, const void *snap, size_t snap_len, int ncpus)
{
	struct stp_map_info info;

	if (stp_mapfd_info(fd, &info) < 0)
		return -EINVAL;
	if (info.flags & BPF_F_RDONLY_PROG)	/* .rodata, .kconfig: frozen */
		return 0;
	switch (info.type) {
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		if (snap && snap_len != (size_t)info.max_entries * info.value_size)
			return -EINVAL;
		return refill_array(fd, &info, snap, ncpus);
	case BPF_MAP_TYPE_RINGBUF:
		empty_ringbuf(fd);
		return 0;
	case BPF_MAP_TYPE_QUEUE:
	case BPF_MAP_TYPE_STACK: {
		char *val = calloc(1, info.value_size ? info.value_size : 1);

		while (val && bpf_map_lookup_and_delete_elem(fd, NULL, val) == 0)
			;
		free(val);
		return 0;
	}
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
	case BPF_MAP_TYPE_PROG_ARRAY:
		empty_slots(fd, info.max_entries);
		return 0;
	default:
		if (!resettable(info.type))
			return -EOPNOTSUPP;
		empty_keys(fd, info.key_size, info.max_entries);
		return 0;
	}
}

/* ---- what a set is ---- */

/* Why S's set cannot be kept, or NULL. */
static const char *why_not(const struct stp_script *s, char *buf, size_t size)
{
	const struct stp_maps *ms = s->maps;

	if (s->nprogs == 0)
		return "it loaded no BPF program";
	if (s->opts.pmda_name)
		return "the run was handed to pmdastap";
	if (!s->load_skipped)
		return "out of memory";
	if (s->internal_error || s->attach_failed)
		return "the run had an internal error";
	for (int i = 0; i < s->meta->nprobes; i++) {
		const struct stp_meta_probe *p = &s->meta->probes[i];
		const struct stp_prog *prog;

		if (p->context != STP_CTX_KERNEL || s->load_skipped[i])
			continue;
		prog = stp_script__program(s, p->prog);
		if (!prog || stp_attach_needs_object(s, i, prog)) {
			snprintf(buf, size, "probe %s attaches through libbpf's object", p->point);
			return buf;
		}
	}
	for (int i = 0, n = stp_maps__count(ms); i < n; i++) {
		const char *name = "";
		int fd = stp_maps__at(ms, i, &name);
		struct stp_map_info info;

		if (fd < 0 || stp_mapfd_info(fd, &info) < 0 || !resettable(info.type)) {
			snprintf(buf, size, "map %s cannot be put back as it was loaded", name);
			return buf;
		}
	}
	return NULL;
}

/* The snapshot of map NAME (its values as loaded), or NULL when the load wrote nothing there. */
static const struct stp_keep_snap *snap_of(const struct stp_script *s, const char *name)
{
	for (int i = 0; i < s->nsnaps; i++)
		if (strcmp(s->snaps[i].name, name) == 0)
			return &s->snaps[i];
	return NULL;
}

void stp_keep_note_load(struct stp_script *s)
{
	struct bpf_map *map;

	if (s->opts.keep_seconds <= 0 || !s->obj)
		return;
	s->load_skipped = malloc((size_t)s->meta->nprobes + 1);
	if (s->load_skipped)
		memcpy(s->load_skipped, s->skipped, (size_t)s->meta->nprobes);
	/* what a load writes into maps: libbpf's .data (the rest starts zero, or is frozen) */
	bpf_object__for_each_map(map, s->obj) {
		size_t len = 0;
		const void *v = bpf_map__initial_value(map, &len);
		struct stp_keep_snap *more;

		if (!v || !len || (bpf_map__map_flags(map) & BPF_F_RDONLY_PROG) ||
		    bpf_map__type(map) != BPF_MAP_TYPE_ARRAY)
			continue;
		more = realloc(s->snaps, sizeof(*s->snaps) * (size_t)(s->nsnaps + 1));
		if (!more)
			goto fail;
		s->snaps = more;
		s->snaps[s->nsnaps++] = (struct stp_keep_snap){ strdup(bpf_map__name(map)),
								malloc(len), len };
		if (!s->snaps[s->nsnaps - 1].name || !s->snaps[s->nsnaps - 1].bytes)
			goto fail;
		memcpy(s->snaps[s->nsnaps - 1].bytes, v, len);
	}
	return;
fail:	/* a keeper without a map's .data would zero it: keep nothing ("out of memory") */
	stp_keep_free(s);
}

void stp_keep_free(struct stp_script *s)
{
	for (int i = 0; i < s->nsnaps; i++) {
		free(s->snaps[i].name);
		free(s->snaps[i].bytes);
	}
	free(s->snaps);
	free(s->load_skipped);
	s->snaps = NULL;
	s->load_skipped = NULL;
	s->nsnaps = 0;
}

/* ---- the keeper ---- */

struct keep_set {
	int *fds;		/* programs, then maps */
	int nprogs, nmaps;
	char *names;		/* per program: name, section, type; per map: name; each \0-ended */
	size_t names_len;
	char *snaps;		/* per map: its length (uint32_t), then its bytes */
	size_t snaps_len;
};

static int add_name(struct keep_set *k, const char *name)
{
	size_t n = strlen(name) + 1;
	char *more = realloc(k->names, k->names_len + n);

	if (!more)
		return -ENOMEM;
	memcpy(more + k->names_len, name, n);
	k->names = more;
	k->names_len += n;
	return 0;
}

static int add_snap(struct keep_set *k, const struct stp_keep_snap *sn)
{
	uint32_t len = sn ? (uint32_t)sn->len : 0;
	char *more = realloc(k->snaps, k->snaps_len + sizeof(len) + len);

	if (!more)
		return -ENOMEM;
	memcpy(more + k->snaps_len, &len, sizeof(len));
	if (len)
		memcpy(more + k->snaps_len + sizeof(len), sn->bytes, len);
	k->snaps = more;
	k->snaps_len += sizeof(len) + len;
	return 0;
}

/* S's programs and maps as the keeper sends them. */
static int gather(const struct stp_script *s, struct keep_set *k)
{
	int n = stp_maps__count(s->maps);
	char type[16];

	k->fds = calloc((size_t)(s->nprogs + n) + 1, sizeof(int));
	if (!k->fds)
		return -ENOMEM;
	for (int i = 0; i < s->nprogs; i++) {
		snprintf(type, sizeof(type), "%u", s->progs[i].type);
		if (add_name(k, s->progs[i].name) || add_name(k, s->progs[i].section) ||
		    add_name(k, type))
			return -ENOMEM;
		k->fds[k->nprogs++] = s->progs[i].fd;
	}
	for (int i = 0; i < n; i++) {
		const char *name = "";
		int fd = stp_maps__at(s->maps, i, &name);

		if (fd < 0)
			return -ENOENT;
		if (add_name(k, name) || add_snap(k, snap_of(s, name)))
			return -ENOMEM;
		k->fds[k->nprogs + k->nmaps++] = fd;
	}
	return 0;
}

/* In the keeper: every map of K as its load left it. */
static int reset_all(const struct keep_set *k, int ncpus)
{
	const char *sp = k->snaps;

	for (int i = 0; i < k->nmaps; i++) {
		uint32_t len;
		int err;

		memcpy(&len, sp, sizeof(len));
		sp += sizeof(len);
		err = reset_map(k->fds[k->nprogs + i], len ? sp : NULL, len, ncpus);
		sp += len;
		if (err)
			return err;
	}
	return 0;
}

/* In the keeper: every descriptor closed but K's and KEEP, and 0-2 on /dev/null. */
static void close_others(const struct keep_set *k, int keep)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int null;

	while (d && (e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name);
		bool ours = fd == dirfd(d) || fd == keep || e->d_name[0] == '.';

		for (int i = 0; !ours && i < k->nprogs + k->nmaps; i++)
			ours = k->fds[i] == fd;
		if (!ours)
			close(fd);
	}
	if (d)
		closedir(d);
	null = open("/dev/null", O_RDWR);
	for (int fd = 0; null >= 0 && fd < 3; fd++)
		if (fd != null)
			dup2(null, fd);
	if (null > 2)
		close(null);
}

/* Keepers' sockets in DIR now, stale ones (nothing listening) removed. */
static int count_keepers(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)) != NULL) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd;

		if (strncmp(e->d_name, "k-", 2) != 0 ||
		    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir, e->d_name) >=
			    (int)sizeof(sa.sun_path))
			continue;
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			n++;	/* a live one: it serves only who sends 'T' */
			send_all(fd, "P", 1, NULL, 0);
		} else if (fd >= 0 && errno == ECONNREFUSED) {
			unlink(sa.sun_path);
		}
		if (fd >= 0)
			close(fd);
	}
	if (d)
		closedir(d);
	return n;
}

/*
 * The keeper, made: out of the run's session and signals, holding only
 * K's descriptors and READY, its maps put back, listening on SA; -1 when
 * it cannot (another keeper of this set has the socket: it serves).
 * READY hears a byte once it listens: the run that made it waits for
 * that, so that the next run finds it.
 */
static int keeper_start(const struct stp_script *s, const struct keep_set *k,
			const struct sockaddr_un *sa, int ready)
{
	sigset_t none;
	int lfd;

	prctl(PR_SET_NAME, "pmstap-keep");
	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	close_others(k, ready);
	if (reset_all(k, s->ncpus) != 0)
		return -1;
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (const struct sockaddr *)sa, sizeof(*sa)) < 0 ||
	    listen(lfd, 4) < 0 || write(ready, "R", 1) != 1)
		return -1;
	close(ready);
	return lfd;
}

/* A watch on the folder of SA's socket, to see it removed; -1 without one. */
static int watch_socket(const struct sockaddr_un *sa)
{
	char dir[sizeof(sa->sun_path)], *slash;
	int ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);

	snprintf(dir, sizeof(dir), "%s", sa->sun_path);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (ino >= 0 && inotify_add_watch(ino, dir, IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF) < 0) {
		close(ino);
		ino = -1;
	}
	return ino;
}

/*
 * A run of ours on LFD asking for the set ('T'), until END; -1 when the
 * time is up or the socket SA was removed.  Another connection (a count
 * of keepers: 'P') is closed and the wait goes on.
 */
static int keeper_wait(int lfd, const struct sockaddr_un *sa, const struct timespec *end)
{
	int ino = watch_socket(sa);

	for (;;) {
		struct pollfd pfd[2] = { { lfd, POLLIN, 0 }, { ino, POLLIN, 0 } };
		struct timespec now;
		struct stat st;
		long ms;
		char c = 0;
		int cfd;

		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (end->tv_sec - now.tv_sec) * 1000 + (end->tv_nsec - now.tv_nsec) / 1000000;
		if (ms <= 0 || poll(pfd, ino >= 0 ? 2 : 1, (int)(ms > INT_MAX ? INT_MAX : ms)) == 0)
			return -1;
		if (ino >= 0 && (pfd[1].revents & POLLIN)) {
			char ev[4096];

			while (read(ino, ev, sizeof(ev)) > 0)
				;
			if (stat(sa->sun_path, &st) < 0)
				return -1;	/* its socket was removed: forget the set */
		}
		if (!(pfd[0].revents & POLLIN))
			continue;
		cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd >= 0 && peer_is_us(cfd) && recv_all(cfd, &c, 1, NULL, 0, NULL) == 0 &&
		    c == 'T')
			return cfd;
		if (cfd >= 0)
			close(cfd);
	}
}

/* K to the run on CFD: header, names, snapshots, skipped probes, descriptors. */
static void keeper_serve(const struct stp_script *s, const struct keep_set *k, int cfd)
{
	struct keep_header h = { KEEP_MAGIC, KEEP_VERSION, (uint32_t)k->nprogs,
				 (uint32_t)k->nmaps, (uint32_t)s->meta->nprobes,
				 (uint32_t)k->names_len, (uint32_t)k->snaps_len, s->um_on,
				 (int32_t)getpid() };
	char c;

	if (send_all(cfd, &h, sizeof(h), NULL, 0) == 0 &&
	    send_all(cfd, k->names, k->names_len, NULL, 0) == 0 &&
	    send_all(cfd, k->snaps, k->snaps_len, NULL, 0) == 0 &&
	    send_all(cfd, s->load_skipped, (size_t)s->meta->nprobes, NULL, 0) == 0)
		for (int i = 0; i < k->nprogs + k->nmaps; i += KEEP_FDS_PER_MSG) {
			int n = k->nprogs + k->nmaps - i;

			n = n > KEEP_FDS_PER_MSG ? KEEP_FDS_PER_MSG : n;
			if (send_all(cfd, "F", 1, k->fds + i, n) < 0)
				break;
		}
	/* until the run has them all: it closes its end when it read them */
	recv_all(cfd, &c, 1, NULL, 0, NULL);
}

/* The keeper's life: serve K once on SA, or go after SECONDS. */
static void keeper(const struct stp_script *s, const struct keep_set *k,
		   const struct sockaddr_un *sa, long seconds, int ready)
{
	int lfd = keeper_start(s, k, sa, ready), cfd;
	struct timespec end;

	if (lfd < 0)
		_exit(0);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += seconds;
	cfd = keeper_wait(lfd, sa, &end);
	unlink(sa->sun_path);	/* one run takes the set; the next finds none */
	if (cfd >= 0)
		keeper_serve(s, k, cfd);
	_exit(0);
}

void stp_keep_offer(struct stp_script *s)
{
	struct keep_set k = { 0 };
	struct sockaddr_un sa;
	char why[256], dir[PATH_MAX];
	const char *no;
	int ready[2];
	pid_t pid;

	if (s->opts.keep_seconds <= 0 || s->dseg || !s->progs || !s->maps)
		return;
	no = why_not(s, why, sizeof(why));
	if (!no && (!keep_path(s, &sa) || !keep_dir(dir, sizeof(dir))))
		no = "no directory of this user's to put its socket in";
	if (!no && count_keepers(dir) >= KEEP_MAX) {
		snprintf(why, sizeof(why), "this user has %d keepers already", KEEP_MAX);
		no = why;
	}
	if (!no && gather(s, &k) != 0)
		no = "out of memory";
	if (no) {
		if (s->opts.verbose)
			stp_msg(s, "note", "not keeping the loaded programs for the next run: %s",
				no);
		goto out;
	}
	if (pipe2(ready, O_CLOEXEC) < 0)
		goto out;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(ready[0]);
		keeper(s, &k, &sa, s->opts.keep_seconds, ready[1]);
	}
	close(ready[1]);
	if (pid > 0) {	/* a few ms: the maps put back */
		struct pollfd pfd = { .fd = ready[0], .events = POLLIN };
		char c;

		if (poll(&pfd, 1, KEEP_ANSWER_MS) <= 0 || read(ready[0], &c, 1) != 1)
			pid = -1;
	}
	close(ready[0]);
	if (pid > 0 && s->opts.verbose)
		stp_msg(s, "note", "keeping %d loaded program%s and %d maps for the next run for "
			"%ld s (PMSTAP_KEEP_LOADED): pmstap-keep, pid %d", k.nprogs,
			k.nprogs == 1 ? "" : "s", k.nmaps, s->opts.keep_seconds, (int)pid);
out:
	free(k.fds);
	free(k.names);
	free(k.snaps);
}

/* ---- taking a set ---- */

/* The next \0-ended string of NAMES (LEN long, from *AT), or NULL at its end. */
static const char *next_name(const char *names, size_t len, size_t *at)
{
	const char *p = names + *at;
	const char *end = memchr(p, '\0', len - *at);

	if (*at >= len || !end)
		return NULL;
	*at += (size_t)(end - p) + 1;
	return p;
}

/* S's programs, maps and snapshots from header H and what followed it; FDS are S's now. */
static int adopt(struct stp_script *s, const struct keep_header *h, const char *names,
		 const char *snaps, int *fds)
{
	char **mnames = calloc((size_t)h->nmaps + 1, sizeof(char *));
	int *mfds = calloc((size_t)h->nmaps + 1, sizeof(int));
	size_t at = 0, sat = 0;

	s->progs = calloc((size_t)h->nprogs + 1, sizeof(*s->progs));
	if (!mnames || !mfds || !s->progs)
		goto fail;
	for (uint32_t i = 0; i < h->nmaps; i++)
		mfds[i] = -1;
	s->progs_owned = true;
	for (uint32_t i = 0; i < h->nprogs; i++) {
		const char *name = next_name(names, h->names_len, &at);
		const char *sec = next_name(names, h->names_len, &at);
		const char *type = next_name(names, h->names_len, &at);

		if (!name || !sec || !type)
			goto fail;
		s->progs[i] = (struct stp_prog){ strdup(name), strdup(sec),
						 (uint32_t)strtoul(type, NULL, 10), fds[i] };
		fds[i] = -1;
		s->nprogs++;
	}
	for (uint32_t i = 0; i < h->nmaps; i++) {
		const char *name = next_name(names, h->names_len, &at);
		uint32_t len;

		if (!name || sat + sizeof(len) > h->snaps_len || !(mnames[i] = strdup(name)))
			goto fail;
		mfds[i] = fds[h->nprogs + i];
		fds[h->nprogs + i] = -1;
		memcpy(&len, snaps + sat, sizeof(len));
		sat += sizeof(len);
		if (len) {
			struct stp_keep_snap *more = realloc(s->snaps, sizeof(*s->snaps) *
							     (size_t)(s->nsnaps + 1));

			if (!more || sat + len > h->snaps_len)
				goto fail;
			s->snaps = more;
			s->snaps[s->nsnaps] = (struct stp_keep_snap){ strdup(name), malloc(len), len };
			if (!s->snaps[s->nsnaps].name || !s->snaps[s->nsnaps].bytes)
				goto fail;
			memcpy(s->snaps[s->nsnaps++].bytes, snaps + sat, len);
			sat += len;
		}
	}
	stp_maps__free(s->maps);
	s->maps = stp_maps__fds(mnames, mfds, (int)h->nmaps);
	if (!s->maps)
		goto fail;
	s->um_on = h->um_on != 0;
	return 0;
fail:
	for (uint32_t i = 0; mnames && mfds && i < h->nmaps; i++) {
		free(mnames[i]);
		if (mfds[i] >= 0)
			close(mfds[i]);
	}
	free(mnames);
	free(mfds);
	return -ENOMEM;
}

/* A connection to the keeper of S's set, or -1 when none listens (a dead one's socket removed). */
static int take_connect(const struct stp_script *s)
{
	struct sockaddr_un sa;
	int fd;

	if (s->opts.keep_seconds <= 0 || !keep_path(s, &sa))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	if (fd >= 0 && errno == ECONNREFUSED)
		unlink(sa.sun_path);
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The set's header from FD, asked for: 0 when it is one S can take. */
static int take_header(const struct stp_script *s, int fd, struct keep_header *h)
{
	if (!peer_is_us(fd) || send_all(fd, "T", 1, NULL, 0) < 0 ||
	    recv_all(fd, h, sizeof(*h), NULL, 0, NULL) < 0)
		return -1;
	return h->magic == KEEP_MAGIC && h->version == KEEP_VERSION &&
	       h->nprobes == (uint32_t)s->meta->nprobes && h->nprogs + h->nmaps > 0 &&
	       h->nprogs + h->nmaps <= 65536 && h->names_len <= (1u << 24) &&
	       h->snaps_len <= (1u << 30) ? 0 : -1;
}

/* What follows header H on FD, into S: 0, or -1 with nothing of it kept. */
static int take_set(struct stp_script *s, int fd, const struct keep_header *h)
{
	int n = (int)(h->nprogs + h->nmaps), got = 0, err = -1;
	char *names = malloc(h->names_len + 1), *snaps = malloc(h->snaps_len + 1);
	int *fds = malloc(sizeof(int) * (size_t)n);

	if (!names || !snaps || !fds || recv_all(fd, names, h->names_len, NULL, 0, NULL) < 0 ||
	    recv_all(fd, snaps, h->snaps_len, NULL, 0, NULL) < 0 ||
	    recv_all(fd, s->skipped, (size_t)h->nprobes, NULL, 0, NULL) < 0)
		goto out;
	while (got < n) {
		char c;
		int more;

		if (recv_all(fd, &c, 1, fds + got, n - got, &more) < 0 || more == 0)
			goto out;
		got += more;
	}
	err = adopt(s, h, names, snaps, fds);
	if (!err)
		got = 0;	/* all adopted */
out:
	for (int i = 0; i < got; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	free(names);
	free(snaps);
	return err;
}

int stp_keep_take(struct stp_script *s)
{
	struct keep_header h;
	int fd = take_connect(s), err;

	if (fd < 0)
		return -1;
	err = take_header(s, fd, &h) == 0 ? take_set(s, fd, &h) : -1;
	close(fd);
	s->load_skipped = err ? NULL : malloc(h.nprobes + 1);
	if (s->load_skipped) {	/* for its keeper in turn */
		memcpy(s->load_skipped, s->skipped, h.nprobes);
		s->kept_from = h.pid;
	}
	if (!err && s->load_skipped)
		return 0;
	memset(s->skipped, 0, (size_t)s->meta->nprobes);
	stp_keep_free(s);
	stp_progs_free(s);
	return -1;
}
