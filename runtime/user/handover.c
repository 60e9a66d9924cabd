/*
 * handover.c - pmstap's side of handing a running script to pmdastap
 * (handover.h; pmda/handover.c is the other side).
 *
 * The hello comes before the target starts, so a refusal (the user not
 * allowed, the name taken) costs nothing but a line and exit status 1.
 * The rest follows once the probes are attached.  Output is copied to the
 * PMDA on a pipe that never blocks the script: whatever does not fit is
 * counted and reported at the end, as a full ring buffer is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "handover.h"
#include "meta_wire.h"
#include "msg.h"
#include "script_int.h"
#include "../dyninst/dmap.h"

#define ANSWER_MS 10000		/* the PMDA answers at once; this is for a stuck one */
#define ANSWER_MAX 4096
#define PIPE_BYTES (1 << 20)	/* asked for; pipe-max-size may give less */

static const char *socket_path(void)
{
	const char *env = getenv(STP_HANDOVER_SOCKET_ENV);

	return env && *env ? env : STP_HANDOVER_SOCKET;
}

/* The PMDA's answer: 0 on ACCEPT, else -errno after saying why. */
static int answer(struct stp_script *s, const char *what)
{
	char buf[ANSWER_MAX];
	struct pollfd pfd = { .fd = s->ho_sock, .events = POLLIN };
	ssize_t n;
	int fd;

	if (poll(&pfd, 1, ANSWER_MS) <= 0) {
		stp_msg(s, "error", "pmdastap did not answer %s within %d s", what, ANSWER_MS / 1000);
		return -ETIMEDOUT;
	}
	n = stp_msg_recv(s->ho_sock, buf, sizeof(buf), &fd, 0);
	if (fd >= 0)
		close(fd);
	if (n > 0 && buf[0] == STP_HO_ACCEPT)
		return 0;
	if (n > 0 && buf[0] == STP_HO_REFUSE)
		stp_msg(s, "error", "pmdastap refused the script: %s", buf + 1);
	else
		stp_msg(s, "error", "pmdastap closed the connection at %s%s%s", what,
			n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
	return -EPERM;
}

int stp_handover_hello(struct stp_script *s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = socket_path();
	char hello[256];
	int len;

	if (!s->dseg) {
		stp_msg(s, "error", "--pmda hands over dyninst scripts only (--runtime=dyninst); "
			"pmdastap runs BPF scripts itself: see pmdastap(1)");
		return -EINVAL;
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		stp_msg(s, "error", "the pmdastap socket path %s is too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	s->ho_sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s->ho_sock < 0 || connect(s->ho_sock, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;

		stp_msg(s, "error", "cannot reach pmdastap at %s: %s%s", path, strerror(err),
			err == ENOENT || err == ECONNREFUSED ?
			" (is pmdastap installed, with [handover] enabled in pmdastap.conf?)" : "");
		return -err;
	}
	len = snprintf(hello, sizeof(hello), "%d %s", STP_HANDOVER_VERSION, s->opts.pmda_name);
	if (len >= (int)sizeof(hello) || stp_msg_send(s->ho_sock, STP_HO_HELLO, hello,
						      (size_t)len, -1) < 0) {
		stp_msg(s, "error", "cannot talk to pmdastap: %s",
			len >= (int)sizeof(hello) ? "the name is too long" : strerror(errno));
		return -EINVAL;
	}
	return answer(s, "the hello");
}

/* The encoded meta in a sealed memfd; -errno. */
static int meta_memfd(struct stp_script *s)
{
	size_t len = 0;
	void *buf = stp_meta__encode(s->meta, &len);
	int fd = buf ? memfd_create("stap-meta", MFD_CLOEXEC | MFD_ALLOW_SEALING) : -1;
	size_t done = 0;

	while (fd >= 0 && done < len) {
		ssize_t w = write(fd, (char *)buf + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			fd = -1;
			break;
		}
		done += (size_t)w;
	}
	free(buf);
	if (fd >= 0)
		fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	return fd >= 0 ? fd : -ENOMEM;
}

/* Which probes are in, as pmdastap/child.c says it for BPF: all of a dyninst script's. */
static int send_ready(struct stp_script *s)
{
	size_t n = (size_t)s->meta->nprobes;
	unsigned char *flags = malloc(n + 1);
	int rc;

	if (!flags)
		return -1;
	for (size_t i = 0; i < n; i++)
		flags[i] = !s->skipped || !s->skipped[i];
	rc = stp_msg_send(s->ho_sock, STP_HO_READY, flags, n, -1);
	free(flags);
	return rc;
}

int stp_handover_ready(struct stp_script *s)
{
	int meta = meta_memfd(s), out[2] = { -1, -1 }, seg = stp_dseg__fd(s->dseg), rc = -1;

	if (meta >= 0 && pipe2(out, O_CLOEXEC) == 0) {
		fcntl(out[1], F_SETFL, O_NONBLOCK);
		fcntl(out[1], F_SETPIPE_SZ, PIPE_BYTES);
		rc = stp_msg_send(s->ho_sock, STP_HO_META, NULL, 0, meta) < 0 ||
		     stp_msg_send(s->ho_sock, STP_HO_SEGMENT, NULL, 0, seg) < 0 ||
		     stp_msg_send(s->ho_sock, STP_HO_OUTPUT, NULL, 0, out[0]) < 0 ||
		     send_ready(s) < 0 ? -1 : 0;
	}
	if (meta >= 0)
		close(meta);
	if (out[0] >= 0)
		close(out[0]);
	if (rc < 0) {
		stp_msg(s, "error", "cannot hand the script to pmdastap: %s", strerror(errno));
		if (out[1] >= 0)
			close(out[1]);
		return -EIO;
	}
	s->ho_out = out[1];
	rc = answer(s, "the script's data");
	if (rc == 0 && s->opts.verbose)
		fprintf(stderr, "%s: pmdastap serves the script as stap.%s\n", s->prog_name,
			s->opts.pmda_name);
	return rc;
}

/*
 * Pieces of at most PIPE_BUF bytes are written whole or not at all; each
 * ends at a newline where one is near, so that what is lost is whole lines.
 */
void stp_handover_output(struct stp_script *s, const char *buf, size_t len)
{
	while (s->opts.pmda_name && s->ho_out >= 0 && len > 0) {
		size_t n = len < PIPE_BUF ? len : PIPE_BUF;
		const char *nl = n < len ? memrchr(buf, '\n', n) : NULL;
		ssize_t w;

		if (nl)
			n = (size_t)(nl - buf) + 1;
		w = write(s->ho_out, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN) {		/* the PMDA let go: no more copies */
			close(s->ho_out);
			s->ho_out = -1;
			return;
		}
		if (w < 0)
			s->ho_dropped += n;
		n = w > 0 ? (size_t)w : n;
		buf += n;
		len -= n;
	}
}

void stp_handover_close(struct stp_script *s)
{
	if (s->ho_dropped)
		fprintf(stderr, "WARNING: %llu bytes of output not copied to pmdastap "
			"(it fell behind)\n", (unsigned long long)s->ho_dropped);
	s->ho_dropped = 0;
	if (s->ho_out >= 0)
		close(s->ho_out);
	if (s->ho_sock >= 0)
		close(s->ho_sock);
	s->ho_out = s->ho_sock = -1;
}
