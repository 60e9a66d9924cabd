/*
 * procfs.c - a script's procfs files as metrics (stap.SCRIPT.procfs.NAME):
 * pmdastap reads and writes the FIFOs the script's run serves in
 * /var/tmp/systemtap-USER/SCRIPT (runtime/user/procfs.c), as a reader or
 * a writer of the file from outside would.
 *
 * A fetch of a .read file opens the FIFO without blocking: the run's
 * thread, waiting in its own open(), wakes up, runs the .read handler and
 * writes the answer, then closes; the answer is what came before the end
 * of file.  The FIFO says end of file only once a writer has come and
 * gone, so the fetch waits (poll) for that, up to STAP_PROCFS_WAIT_MS:
 * a run whose handler does not answer by then costs a fetch that much at
 * most, and the fetch says PM_ERR_AGAIN.
 *
 * A store to a .write file opens the FIFO for writing without blocking,
 * which works once the run's thread waits in open() for a writer (it goes
 * back there after each writer, so an open that finds no reader is tried
 * again until STAP_PROCFS_WAIT_MS), writes the value and closes: the
 * .write handlers get it in $value, in pieces of MAXSTRINGLEN - 1 bytes
 * at most, as from `printf VALUE > FILE` (no newline is added).
 *
 * A script on the kernel runtime (its module's name adopted, kmodule.c)
 * has real files instead, /proc/systemtap/SCRIPT/NAME, that its module
 * serves (runtime/kmod/procfs.c): the same reads and writes work on
 * them, the .read handler running in this process's task, in the read.
 * The module lets one opener in at a time and answers another's
 * O_NONBLOCK open with EAGAIN: such an open is tried again, as a FIFO's
 * ENXIO is, until STAP_PROCFS_WAIT_MS.  A write the module takes none of
 * (its last .write handler raised an error) is EIO.  A module's file may
 * have a .read and .write probes both: its metric is fetched and stored.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pmdastap.h"
#include "../runtime/user/procfs.h"

#define STAP_PROCFS_WAIT_MS 1000

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The module's file on the kernel runtime, else the FIFO the run serves. */
static int file_path(const struct stap_metric *m, char *path, size_t size)
{
	const struct stap_script *sc = m->script;
	const struct stp_meta_probe *p = &sc->meta->probes[m->probe];

	if (!sc->kmod_name)
		return stp_procfs_path(sc->meta->script, p->procfs_path, path, size);
	if ((size_t)snprintf(path, size, "/proc/systemtap/%s/%s", sc->meta->script,
			     p->procfs_path) >= size)
		return -ENAMETOOLONG;
	return 0;
}

/*
 * PATH opened without blocking (FLAGS and O_NONBLOCK), tried again while
 * it is not ready: a FIFO with no reader yet (ENXIO), a module's file that
 * another opener holds (EAGAIN).  The descriptor, or a negative errno.
 */
static int open_file(const char *path, int flags)
{
	int64_t until = now_ms() + STAP_PROCFS_WAIT_MS;
	struct timespec pause = { 0, 5 * 1000000 };

	for (;;) {
		int fd = open(path, flags | O_NONBLOCK | O_CLOEXEC);

		if (fd >= 0 || (errno != ENXIO && errno != EAGAIN) || now_ms() >= until)
			return fd >= 0 ? fd : -errno;
		nanosleep(&pause, NULL);	/* free again in a moment */
	}
}

const struct stp_meta_probe *stap_procfs_probe(const struct stp_meta *meta, const char *name,
					       bool write)
{
	for (int i = 0; i < meta->nprobes; i++)
		if (meta->probes[i].kind == STP_PROBE_PROCFS && meta->probes[i].procfs_write == write &&
		    !strcmp(meta->probes[i].procfs_path, name))
			return &meta->probes[i];
	return NULL;
}

/* Append what the file has to *buf; 1 at its end, 0 for more later, <0 an error. */
static int read_some(int fd, char **buf, size_t *len, size_t *cap)
{
	for (;;) {
		ssize_t n;

		if (*cap - *len < 4096) {
			char *bigger = realloc(*buf, *cap * 2);

			if (!bigger)
				return -ENOMEM;
			*buf = bigger;
			*cap *= 2;
		}
		n = read(fd, *buf + *len, *cap - *len - 1);
		if (n > 0) {
			*len += (size_t)n;
			continue;
		}
		if (n == 0)
			return 1;
		if (errno == EINTR)
			continue;
		return errno == EAGAIN ? 0 : -errno;
	}
}

int stap_procfs_fetch(const struct stap_metric *m, pmAtomValue *atom)
{
	const struct stp_meta_probe *p = &m->script->meta->probes[m->probe];
	char path[PATH_MAX], *buf;
	size_t len = 0, cap = 8192;
	int64_t until = now_ms() + STAP_PROCFS_WAIT_MS;
	int fd, rc = 0;

	if (!stap_procfs_probe(m->script->meta, p->procfs_path, false) ||
	    m->script->status != STAP_STATUS_RUNNING)
		return PMDA_FETCH_NOVALUES;
	if (file_path(m, path, sizeof(path)) < 0)
		return PMDA_FETCH_NOVALUES;
	fd = open_file(path, O_RDONLY);
	if (fd == -EAGAIN)
		return PM_ERR_AGAIN;		/* held by another reader all that time */
	if (fd < 0)
		return PMDA_FETCH_NOVALUES;	/* not served (yet, or any more) */
	if (!(buf = malloc(cap))) {
		close(fd);
		return -ENOMEM;
	}
	while (rc == 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = until - now_ms();
		int ready = left > 0 ? poll(&pfd, 1, (int)left) : 0;

		if (ready < 0 && errno == EINTR)
			continue;	/* never read before poll says: that would be "end of file" */
		if (ready <= 0) {
			rc = PM_ERR_AGAIN;
			break;
		}
		rc = read_some(fd, &buf, &len, &cap);
	}
	close(fd);
	if (rc < 0) {
		if (rc == PM_ERR_AGAIN)
			pmNotifyErr(LOG_WARNING, "%s: no answer from %s within %d ms", m->name, path,
				    STAP_PROCFS_WAIT_MS);
		free(buf);
		return rc;
	}
	buf[len] = '\0';
	atom->cp = buf;
	return PMDA_FETCH_DYNAMIC;
}

int stap_procfs_store(const struct stap_metric *m, const char *value, size_t len)
{
	const struct stp_meta_probe *p = &m->script->meta->probes[m->probe];
	char path[PATH_MAX];
	int fd;

	if (!stap_procfs_probe(m->script->meta, p->procfs_path, true))
		return PM_ERR_PERMISSION;	/* a .read file: nothing takes what is written */
	if (m->script->status != STAP_STATUS_RUNNING || file_path(m, path, sizeof(path)) < 0)
		return PM_ERR_AGAIN;
	fd = open_file(path, O_WRONLY);
	if (fd < 0)
		return fd == -ENOENT || fd == -ENXIO || fd == -EAGAIN ? PM_ERR_AGAIN : fd;
	fcntl(fd, F_SETFL, 0);	/* the value in full: the thread (or module) takes it as we write */
	while (len > 0) {
		ssize_t n = write(fd, value, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? -errno : -EIO;

			close(fd);
			return err;
		}
		value += n;
		len -= (size_t)n;
	}
	close(fd);
	return 0;
}
