/*
 * handover.c - scripts that users run themselves, served by pmdastap.
 *
 * `pmstap --runtime=dyninst --pmda[=NAME]` runs a script in the user's
 * own processes and hands it here (runtime/user/handover.h says what
 * travels), so that stap.NAME.* is served while it runs.  This PMDA runs
 * as root and the script's user is anyone [handover] allowed_users names,
 * so nothing the user gives is run or trusted: the script's description
 * comes as data, decoded with every bound checked (meta_wire.h); its
 * segment is mapped as an untrusting reader (runtime/dyninst/dmap.h), so
 * bytes changed under our feet give wrong numbers at worst; and its output
 * is a pipe like a child's.
 *
 * A connection waits here for its hello (at most HELLO_S seconds), which
 * is checked: the peer's uid from the socket, the name, max_scripts.  An
 * accepted one becomes a script (scripts.c, origin "handover") whose
 * control socket is the connection; the socket's end is the script's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "pmdastap.h"
#include "../runtime/dyninst/dmap.h"
#include "../runtime/user/handover.h"
#include "../runtime/user/meta_wire.h"
#include "../runtime/user/msg.h"

#define HELLO_S 10.0
#define MAX_WAITING 16

struct waiting {
	int fd;
	struct ucred cred;
	double until;
};

static int listen_fd = -1;
static struct waiting waiting[MAX_WAITING];
static int nwaiting;

/* ---- the socket ---- */

void stap_handover_open(void)
{
	const char *path = stap_config.handover_socket;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (!stap_config.handover)
		return;
	if (!path || strlen(path) >= sizeof(sa.sun_path)) {
		pmNotifyErr(LOG_ERR, "handover: the socket path is missing or too long");
		return;
	}
	strcpy(sa.sun_path, path);
	unlink(path);		/* a previous PMDA's */
	listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0666) < 0 || listen(listen_fd, MAX_WAITING) < 0) {
		pmNotifyErr(LOG_ERR, "handover: cannot listen on %s: %s", path, strerror(errno));
		if (listen_fd >= 0)
			close(listen_fd);
		listen_fd = -1;
		return;
	}
	pmNotifyErr(LOG_INFO, "handover: users' scripts accepted on %s", path);
}

void stap_handover_shutdown(void)
{
	for (int i = 0; i < nwaiting; i++)
		close(waiting[i].fd);
	nwaiting = 0;
	if (listen_fd >= 0) {
		close(listen_fd);
		unlink(stap_config.handover_socket);
	}
	listen_fd = -1;
}

int stap_handover_nfds(void)
{
	return (listen_fd >= 0) + nwaiting;
}

int stap_handover_fd(int i)
{
	return listen_fd >= 0 ? (i == 0 ? listen_fd : waiting[i - 1].fd) : waiting[i].fd;
}

static void drop_waiting(int i)
{
	close(waiting[i].fd);
	waiting[i] = waiting[--nwaiting];
}

static void accept_one(void)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	if (nwaiting == MAX_WAITING || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		close(fd);	/* too many at once: the client sees the end and says so */
		return;
	}
	waiting[nwaiting++] = (struct waiting){ fd, cred, stap_now() + HELLO_S };
}

/* ---- the hello ---- */

static void refuse(int fd, const char *why)
{
	stp_msg_send(fd, STP_HO_REFUSE, why, strlen(why), -1);
}

/* The user of UID by name, into BUF; "uid N" when it has none. */
static const char *user_name(uid_t uid, char *buf, size_t size)
{
	struct passwd pw, *res = NULL;
	char tmp[1024];

	if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &res) == 0 && res)
		snprintf(buf, size, "%s", pw.pw_name);
	else
		snprintf(buf, size, "uid %u", (unsigned int)uid);
	return buf;
}

/* Why USER may not hand NAME over (into WHY), or 0. */
static int hello_problem(const char *user, const char *msg, char *why, size_t size,
			 const char **name)
{
	const char *problem;
	int version = atoi(msg);
	const char *sp = strchr(msg, ' ');

	*name = sp ? sp + 1 : "";
	if (version != STP_HANDOVER_VERSION || !sp)
		snprintf(why, size, "pmstap and pmdastap are of different versions (protocol %d, "
			 "this pmdastap speaks %d)", version, STP_HANDOVER_VERSION);
	else if (!stap_config_user_in(&stap_config.handover_users, user))
		snprintf(why, size, "user %s may not hand scripts to pmdastap: see allowed_users in "
			 "[handover] of %s", user, stap_config.path ? stap_config.path :
			 "pmdastap.conf");
	else if ((problem = stap_script_name_problem(*name)))
		snprintf(why, size, "stap.%s: %s (choose a name with --pmda=NAME)", *name, problem);
	else if (stap_script_find(*name))
		snprintf(why, size, "stap.%s is served already: choose another name with --pmda=NAME",
			 *name);
	else
		return 0;
	return -1;
}

static void on_hello(int i)
{
	struct waiting w = waiting[i];
	char buf[512], why[512], user[256];
	const char *name;
	struct stap_script *sc;
	ssize_t n;
	int fd;

	n = stp_msg_recv(w.fd, buf, sizeof(buf), &fd, MSG_DONTWAIT);
	if (fd >= 0)
		close(fd);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0 || buf[0] != STP_HO_HELLO) {
		drop_waiting(i);
		return;
	}
	waiting[i] = waiting[--nwaiting];	/* ours now: a script's or closed */
	user_name(w.cred.uid, user, sizeof(user));
	if (hello_problem(user, buf + 1, why, sizeof(why), &name) < 0 ||
	    !(sc = stap_script_handed(name, w.fd, w.cred.pid, why, sizeof(why)))) {
		pmNotifyErr(LOG_INFO, "handover refused (pid %d): %s", (int)w.cred.pid, why);
		refuse(w.fd, why);
		close(w.fd);
		return;
	}
	sc->peer_uid = w.cred.uid;
	stp_msg_send(w.fd, STP_HO_ACCEPT, NULL, 0, -1);
	pmNotifyErr(LOG_INFO, "script %s: handed over by %s (pid %d)", name, user,
		    (int)w.cred.pid);
}

void stap_handover_event(int fd)
{
	if (fd == listen_fd) {
		accept_one();
		return;
	}
	for (int i = 0; i < nwaiting; i++)
		if (waiting[i].fd == fd) {
			on_hello(i);
			return;
		}
}

void stap_handover_tick(double now, double *next)
{
	for (int i = nwaiting - 1; i >= 0; i--) {
		if (now >= waiting[i].until) {
			drop_waiting(i);
			continue;
		}
		if (*next < 0 || waiting[i].until - now < *next)
			*next = waiting[i].until - now;
	}
}

/* ---- what a handed-over script sends ---- */

/* The encoded meta in FD (a memfd of the user's), copied here then decoded. */
int stap_handover_meta(struct stap_script *sc, int fd, char *why, size_t size)
{
	struct stat st;
	struct stp_meta *meta;
	char *buf = NULL;
	size_t len = 0;

	if (sc->meta) {
		snprintf(why, size, "the script's description came twice");
		return -1;
	}
	if (fstat(fd, &st) < 0 || st.st_size <= 0 || (uint64_t)st.st_size > STP_HANDOVER_META_MAX) {
		snprintf(why, size, "the script's description is missing or too large");
		return -1;
	}
	buf = malloc((size_t)st.st_size);
	while (buf && len < (size_t)st.st_size) {
		ssize_t r = pread(fd, buf + len, (size_t)st.st_size - len, (off_t)len);

		if (r <= 0)
			break;
		len += (size_t)r;
	}
	meta = buf ? stp_meta__decode(buf, len, why, size) : NULL;
	free(buf);
	if (!meta)
		return -1;
	sc->owned_meta = meta;
	sc->source = strdup(meta->source ? meta->source : "");
	stap_script_describe(sc, meta);	/* not watched: never restarted */
	return 0;
}

/* The segment: mapped as a reader that trusts none of its bytes. */
int stap_handover_segment(struct stap_script *sc, int fd, char *why, size_t size)
{
	struct stat st;
	char err[256];

	if (sc->dseg) {
		snprintf(why, size, "the script's data came twice");
		return -1;
	}
	if (fstat(fd, &st) < 0 || st.st_uid != sc->peer_uid) {
		snprintf(why, size, "the script's data is not its user's own");
		return -1;
	}
	if ((uint64_t)st.st_size > stap_config.handover_max_bytes) {
		snprintf(why, size, "the script's data (%lld bytes) is larger than max_segment_bytes "
			 "(%zu) in [handover] of pmdastap.conf", (long long)st.st_size,
			 stap_config.handover_max_bytes);
		return -1;
	}
	sc->dseg = stp_dseg__attach_reader(fd, STAP_READER_PATIENCE_US, err, sizeof(err));
	if (!sc->dseg) {
		snprintf(why, size, "the script's data is refused: %s", err);
		return -1;
	}
	sc->dseg_fd = fd;
	sc->ncpus = stp_dseg__nslots(sc->dseg);
	return 0;
}
