/*
 * procfs.c - procfs("NAME").read/.write probes: FIFOs the runner serves.
 *
 * As stap's BPF runtime (stapbpf) does, each file is a FIFO in
 * /var/tmp/systemtap-USER/MODULE/ (MODULE: -m NAME, else the script's
 * name), with the mode .umask(N) leaves of 0444 (.read) or 0222 (.write);
 * a runner that is not root (the dyninst runtime's user) adds the owner's
 * bit its own end needs (write for .read, read for .write), since the
 * kernel checks it at each open() of the FIFO.
 * (On the kernel runtime the module makes /proc/systemtap/MODULE/NAME
 * instead: runtime/kmod/procfs.c.)
 * A thread per file waits in a blocking open() for the other end: a
 * reader of a .read file, a writer of a .write file.  The handlers run in
 * the event loop's thread, as every user-context probe does: the thread
 * asks through an eventfd (EV_PROCFS in loop.c) and waits for the answer.
 *
 * One answer per open, with no race between readers: as soon as the
 * thread's open() returns, a fresh FIFO is renamed over the name.  The
 * FIFO the reader holds has no name any more, so nobody else can open it:
 * the thread writes the answer, closes, and the reader gets the answer
 * and end of file; the next reader opens the new FIFO and waits there
 * until the thread opens it in turn.  (stapbpf closes and then probes for
 * readers still open with an O_NONBLOCK open: a reader arriving then gets
 * an empty end of file, or one still reading gets two answers.)  A reader
 * that opens in the instant between the thread's open and the rename
 * shares that answer: readers at the same instant are not told apart.
 * A .write file works the same way: what the writers of one FIFO write,
 * until the last closes, is read in pieces of at most MAXSTRINGLEN - 1
 * bytes (stap's bound on $value) and the .write handlers run once a piece.
 *
 * procfs("__stdin").write, which stap's input.char and input.line probes
 * are (tapset/input.stp), is no FIFO: its thread reads the runner's own
 * standard input and runs the handlers once a byte, as stapio feeds that
 * file, until end of file.
 *
 * The folder is locked (flock) while the script runs.  At the end the
 * files and the folder are removed, after any reader or writer still
 * waiting in open() is let go; a run killed with SIGKILL leaves them, and
 * the next run of that module, finding the folder unlocked, empties it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "script_int.h"
#include "uctx_glue.h"
#include "procfs.h"
#include "stp_user.h"

struct stp_procfs_file {
	struct stp_script *s;
	const char *name;
	char path[PATH_MAX];	/* the folder's, then NAME */
	bool write;
	bool stdin_;		/* "__stdin": the runner's standard input */
	mode_t mode;
	int *probes;		/* its handlers (several .write probes may share a file) */
	int nprobes;
	pthread_t thread;
	bool started;
	int request;		/* eventfd: the thread asks the loop to run the handlers */
	int reply[2];		/* pipe: the loop says they ran */
	int fd;			/* the FIFO the thread has open, or -1 */
	char *buf;		/* .read: the answer; .write: the piece written */
	size_t len, size;	/* size: the buffer's bytes, NUL included */
	bool failed;		/* the thread stopped: reported once */
};

struct stp_procfs {
	char dir[PATH_MAX];
	int dirfd;		/* the folder, flocked while the script runs */
	struct stp_procfs_file *files;
	int nfiles;
};

/* The $value of the handlers running now (the loop's thread only), or NULL. */
static struct stp_procfs_file *current;

/* ---- $value (tapset/procfs.stp) ---- */

static void too_big(struct context *c, size_t need)
{
	char msg[96];

	snprintf(msg, sizeof(msg), "buffer size exceeded, consider .maxsize(%lu).",
		 (unsigned long)need);
	stp_raise_msg(c, msg);
}

/* stap's strlcpy/strlcat into the buffer: cut at size - 1, then the error. */
static void value_put(struct context *c, const char *v, bool append)
{
	struct stp_procfs_file *f = current;
	size_t have, vlen = strlen(v), room;

	if (!f || f->write)
		return;
	have = append ? f->len : 0;
	room = f->size - 1 - have;
	memcpy(f->buf + have, v, vlen < room ? vlen : room);
	f->len = have + (vlen < room ? vlen : room);
	f->buf[f->len] = '\0';
	if (have + vlen > f->size - 1)
		too_big(c, have + vlen + 1);
}

void stp_procfs_value_set(struct context *c, const char *v)
{
	value_put(c, v, false);
}

void stp_procfs_value_append(struct context *c, const char *v)
{
	value_put(c, v, true);
}

void stp_procfs_value_get(struct context *c, char *out)
{
	(void)c;
	out[0] = '\0';
	if (current && current->write)
		memcpy(out, current->buf, current->len + 1);
}

/* ---- the loop's side ---- */

void stp_procfs_on_request(struct stp_script *s, int i)
{
	struct stp_procfs_file *f = &s->procfs->files[i];
	uint64_t n;
	char done = 1;

	if (read(f->request, &n, sizeof(n)) != sizeof(n))
		return;
	if (!f->write) {
		f->len = 0;
		f->buf[0] = '\0';
	}
	current = f;
	for (int k = 0; k < f->nprobes && s->state == STP_STATE_RUNNING; k++) {
		stp_uctx_run(s, f->probes[k]);
		stp_events_drain(s);
	}
	current = NULL;
	if (write(f->reply[1], &done, 1) != 1)
		stp_msg(s, "error", "procfs file %s: cannot answer its thread", f->path);
}

/* ---- the threads ---- */

/* The thread: have the loop run the handlers, and wait until it has. */
static int ask(struct stp_procfs_file *f)
{
	uint64_t one = 1;
	char done;

	if (write(f->request, &one, sizeof(one)) != sizeof(one))
		return -1;
	return read(f->reply[0], &done, 1) == 1 ? 0 : -1;
}

/* A new FIFO at F's name: mkfifo beside it, then rename over it. */
static int fifo_make(struct stp_procfs_file *f)
{
	char tmp[PATH_MAX + 16];

	snprintf(tmp, sizeof(tmp), "%s.new", f->path);
	unlink(tmp);
	if (mkfifo(tmp, 0600) < 0 || chmod(tmp, f->mode) < 0 || rename(tmp, f->path) < 0) {
		int err = errno;

		unlink(tmp);
		return -err;
	}
	return 0;
}

static void fifo_close(struct stp_procfs_file *f)
{
	int fd = f->fd;

	f->fd = -1;	/* before close(), a cancellation point */
	close(fd);
}

static bool write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;	/* the reader left: its loss */
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* One reader: the handler's answer, then end of file. */
static int serve_reader(struct stp_procfs_file *f)
{
	if (ask(f) < 0)
		return -1;
	write_all(f->fd, f->buf, f->len);
	return 0;
}

/* One FIFO's writers: the handlers once per piece, until the last one closes. */
static int serve_writers(struct stp_procfs_file *f)
{
	for (;;) {
		ssize_t n = read(f->fd, f->buf, f->size - 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		f->buf[n] = '\0';
		f->len = strlen(f->buf);
		if (ask(f) < 0)
			return -1;
	}
}

/* "__stdin": the handlers once a byte of the runner's standard input. */
static int serve_stdin(struct stp_procfs_file *f)
{
	char chunk[4096];

	for (;;) {
		ssize_t n = read(STDIN_FILENO, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : 0;
		for (ssize_t i = 0; i < n; i++) {
			f->buf[0] = chunk[i];
			f->buf[1] = '\0';
			f->len = chunk[i] ? 1 : 0;
			if (ask(f) < 0)
				return -EPIPE;
		}
	}
}

static void *serve(void *arg)
{
	struct stp_procfs_file *f = arg;
	int err = 0;

	if (f->stdin_) {
		err = serve_stdin(f);
		if (err)
			stp_msg(f->s, "error", "standard input is no longer read: %s", strerror(-err));
		return NULL;
	}

	while (!err) {
		f->fd = open(f->path, (f->write ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
		if (f->fd < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		err = fifo_make(f);	/* whoever comes next gets a FIFO of their own */
		if (!err && (f->write ? serve_writers(f) : serve_reader(f)) < 0)
			err = -EPIPE;
		fifo_close(f);
	}
	stp_msg(f->s, "error", "procfs file %s is no longer served: %s", f->path, strerror(-err));
	return NULL;
}

/* ---- the folder ---- */

/* /var/tmp/systemtap-USER, USER the one running now; -ENOENT without a name. */
static int user_dir_name(char *out, size_t size)
{
	struct passwd *pw = getpwuid(geteuid());

	if (!pw)
		return -ENOENT;
	snprintf(out, size, "/var/tmp/systemtap-%s", pw->pw_name);
	return 0;
}

int stp_procfs_path(const char *module, const char *name, char *out, size_t size)
{
	char user[PATH_MAX / 2];
	int err = user_dir_name(user, sizeof(user));

	if (err)
		return err;
	if ((size_t)snprintf(out, size, "%s/%s/%s", user, module, name) >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* /var/tmp/systemtap-USER: made if need be, and ours (a world-writable parent). */
static int user_dir(struct stp_script *s, char *out, size_t size)
{
	struct stat st;

	if (user_dir_name(out, size) < 0) {
		stp_msg(s, "error", "cannot make procfs files: no user name for uid %u",
			(unsigned)geteuid());
		return -ENOENT;
	}
	if (mkdir(out, 0755) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(out, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		stp_msg(s, "error", "cannot make procfs files in %s: it is not a folder of yours",
			out);
		return -EPERM;
	}
	return 0;
}

/* Remove what a killed run left (the folder is locked: no run uses it). */
static void empty_dir(int dirfd)
{
	DIR *d = fdopendir(dup(dirfd));
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd, e->d_name, 0);
	closedir(d);
}

static int module_dir(struct stp_script *s, struct stp_procfs *pf)
{
	const char *module = s->opts.module_name ? s->opts.module_name : s->meta->script;
	char user[PATH_MAX / 2];
	int err = user_dir(s, user, sizeof(user));

	if (err)
		return err;
	snprintf(pf->dir, sizeof(pf->dir), "%s/%s", user, module);
	if (mkdir(pf->dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	pf->dirfd = open(pf->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (pf->dirfd < 0)
		return -errno;
	if (flock(pf->dirfd, LOCK_EX | LOCK_NB) < 0) {
		stp_msg(s, "error", "procfs folder %s is in use by another run of module '%s'",
			pf->dir, module);
		stp_msg(s, "hint", "-m NAME names another module");
		close(pf->dirfd);
		pf->dirfd = -1;
		return -EBUSY;
	}
	empty_dir(pf->dirfd);
	return 0;
}

/* ---- start and stop ---- */

static struct stp_procfs_file *file_of(struct stp_procfs *pf, const struct stp_meta_probe *p)
{
	struct stp_procfs_file *f;

	for (int i = 0; i < pf->nfiles; i++)
		if (!strcmp(pf->files[i].name, p->procfs_path))
			return &pf->files[i];
	f = &pf->files[pf->nfiles++];
	f->name = p->procfs_path;
	f->write = p->procfs_write;
	f->stdin_ = f->write && !strcmp(f->name, "__stdin");
	f->mode = (mode_t)p->procfs_mode;
	if (geteuid() != 0)	/* the runner's own end: root opens it whatever the mode */
		f->mode |= f->write ? S_IRUSR : S_IWUSR;
	f->size = (size_t)p->procfs_maxsize;
	f->fd = f->request = f->reply[0] = f->reply[1] = -1;
	return f;
}

static int file_open(struct stp_script *s, struct stp_procfs *pf, struct stp_procfs_file *f)
{
	size_t piece = (size_t)s->meta->limits.maxstringlen;

	f->s = s;
	if (f->write && (f->size == 0 || f->size > piece))
		f->size = piece;
	if (strlen(pf->dir) + strlen(f->name) + 8 > sizeof(f->path))
		return -ENAMETOOLONG;
	strcpy(f->path, pf->dir);
	strcat(strcat(f->path, "/"), f->name);
	f->buf = calloc(1, f->size + 1);
	f->request = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!f->buf || f->request < 0 || pipe2(f->reply, O_CLOEXEC) < 0)
		return -ENOMEM;
	if (f->stdin_) {
		f->path[0] = '\0';	/* nothing to make, nothing to remove */
		return 0;
	}
	return fifo_make(f);
}

static int files_collect(struct stp_script *s, struct stp_procfs *pf)
{
	const struct stp_meta *m = s->meta;

	pf->files = calloc((size_t)m->nprobes + 1, sizeof(*pf->files));
	if (!pf->files)
		return -ENOMEM;
	for (int i = 0; i < m->nprobes; i++) {
		struct stp_procfs_file *f;
		int *grown;

		if (m->probes[i].kind != STP_PROBE_PROCFS || m->probes[i].context != STP_CTX_USER ||
		    s->skipped[i])
			continue;
		f = file_of(pf, &m->probes[i]);
		grown = realloc(f->probes, sizeof(int) * (size_t)(f->nprobes + 1));
		if (!grown)
			return -ENOMEM;
		f->probes = grown;
		f->probes[f->nprobes++] = i;
	}
	return 0;
}

bool stp_procfs_wanted(const struct stp_script *s)
{
	for (int i = 0; i < s->meta->nprobes; i++)
		if (s->meta->probes[i].kind == STP_PROBE_PROCFS &&
		    s->meta->probes[i].context == STP_CTX_USER)	/* not a module's */
			return true;
	return false;
}

int stp_procfs_start(struct stp_script *s, int (*watch)(struct stp_script *, int, int))
{
	struct stp_procfs *pf;
	int err;

	if (!stp_procfs_wanted(s))
		return 0;
	pf = calloc(1, sizeof(*pf));
	if (!pf)
		return -ENOMEM;
	pf->dirfd = -1;
	s->procfs = pf;
	err = module_dir(s, pf);
	if (!err)
		err = files_collect(s, pf);
	for (int i = 0; !err && i < pf->nfiles; i++) {
		struct stp_procfs_file *f = &pf->files[i];

		err = file_open(s, pf, f);
		if (!err)
			err = watch(s, f->request, i);
		if (!err)
			err = -pthread_create(&f->thread, NULL, serve, f);
		f->started = !err;
		if (err)
			stp_msg(s, "error", "cannot make procfs file %s: %s", f->path,
				strerror(-err));
	}
	if (!err && s->opts.verbose)
		fprintf(stderr, "Pass 5: %d procfs %s in %s\n", pf->nfiles,
			pf->nfiles == 1 ? "file" : "files", pf->dir);
	return err;
}

/* Let go of a reader or writer waiting in open(): it gets end of file, or EPIPE. */
static void file_release(struct stp_procfs_file *f)
{
	int fd = open(f->path, (f->write ? O_RDONLY : O_WRONLY) | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
	unlink(f->path);
}

static void file_stop(struct stp_procfs_file *f)
{
	if (f->started) {
		pthread_cancel(f->thread);
		pthread_join(f->thread, NULL);
	}
	if (f->fd >= 0)
		close(f->fd);
	if (f->path[0])
		file_release(f);
	if (f->request >= 0)
		close(f->request);
	if (f->reply[0] >= 0)
		close(f->reply[0]);
	if (f->reply[1] >= 0)
		close(f->reply[1]);
	free(f->buf);
	free(f->probes);
}

void stp_procfs_stop(struct stp_script *s)
{
	struct stp_procfs *pf = s->procfs;

	if (!pf)
		return;
	for (int i = 0; i < pf->nfiles; i++)
		file_stop(&pf->files[i]);
	if (pf->dirfd >= 0) {
		empty_dir(pf->dirfd);
		rmdir(pf->dir);
		close(pf->dirfd);
	}
	free(pf->files);
	free(pf);
	s->procfs = NULL;
}
