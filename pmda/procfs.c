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

static int fifo_path(const struct stap_metric *m, char *path, size_t size)
{
	const struct stp_meta_probe *p = &m->script->meta->probes[m->probe];

	return stp_procfs_path(m->script->meta->script, p->procfs_path, path, size);
}

/* Append what the FIFO has to *buf; 1 at its end, 0 for more later, <0 an error. */
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

	if (p->procfs_write || m->script->status != STAP_STATUS_RUNNING)
		return PMDA_FETCH_NOVALUES;
	if (fifo_path(m, path, sizeof(path)) < 0)
		return PMDA_FETCH_NOVALUES;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
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

/* The FIFO opened for writing once the run's thread waits for a writer. */
static int open_writer(const char *path)
{
	int64_t until = now_ms() + STAP_PROCFS_WAIT_MS;
	struct timespec pause = { 0, 5 * 1000000 };

	for (;;) {
		int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);

		if (fd >= 0 || errno != ENXIO || now_ms() >= until)
			return fd >= 0 ? fd : -errno;
		nanosleep(&pause, NULL);	/* the thread is back in open() in a moment */
	}
}

int stap_procfs_store(const struct stap_metric *m, const char *value, size_t len)
{
	const struct stp_meta_probe *p = &m->script->meta->probes[m->probe];
	char path[PATH_MAX];
	int fd;

	if (!p->procfs_write)
		return PM_ERR_PERMISSION;	/* a .read file: nothing takes what is written */
	if (m->script->status != STAP_STATUS_RUNNING || fifo_path(m, path, sizeof(path)) < 0)
		return PM_ERR_AGAIN;
	fd = open_writer(path);
	if (fd < 0)
		return fd == -ENOENT || fd == -ENXIO ? PM_ERR_AGAIN : fd;
	fcntl(fd, F_SETFL, 0);	/* the value in full: the thread reads as we write */
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
