/*
 * metrics_tcp - a workload for the metrics QA tests: TCP connections on
 * the loopback, one of them with a retransmitted SYN
 *
 *	metrics_tcp
 *
 * Listens on 127.0.0.1 (an ephemeral port) with a backlog of 0, so the
 * accept queue is full as soon as it holds one connection.  Connects A
 * and waits until the listener has it queued; connects B, whose SYN the
 * listener drops (the queue is full); waits until that drop has
 * happened; accepts A, so that B's SYN, sent again when the client's
 * retransmission timer fires (about 1 s), is taken; accepts B; closes
 * everything.  Two connections opened and accepted, at least one SYN
 * retransmitted.  Then each connection is shut down from both ends and
 * the program waits until its four sockets have reached CLOSE before it
 * closes them and the listener: a plain close() leaves the FIN/ACK
 * exchange to softirq work (ksoftirqd on a loaded machine) that may run
 * after the program has exited, and after a tracing script has ended.
 * Exits 0, or 1 with a message when a step fails or takes more than 10 s.
 *
 * The wait for the drop is what makes the retransmission certain: the
 * SYN travels through the loopback device and may be handled later, on
 * another CPU, so accepting A at once could empty the queue before B's
 * SYN arrives.  The drop shows in the namespace's TcpExt ListenOverflows
 * counter (/proc/net/netstat), or failing that in B's own TCP_INFO once
 * the SYN has been sent again (while A still fills the queue: B then
 * gets in at its next try, about 3 s in).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "tcp_closed.h"

#define STEP_MS 10000

static void die(const char *what)
{
	fprintf(stderr, "metrics_tcp: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Wait for EVENTS on FD, or fail after STEP_MS. */
static void wait_for(int fd, short events, const char *what)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n;

	do
		n = poll(&p, 1, STEP_MS);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		die(what);
	if (n == 0) {
		fprintf(stderr, "metrics_tcp: %s: timed out\n", what);
		exit(1);
	}
}

static int connect_to(const struct sockaddr_in *sa)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	if (fd < 0)
		die("socket");
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0 && errno != EINPROGRESS)
		die("connect");
	return fd;
}

/* Wait until a non-blocking connect on FD has finished, and check it worked. */
static void connected(int fd, const char *what)
{
	socklen_t len = sizeof(int);
	int err = 0;

	wait_for(fd, POLLOUT, what);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		die("getsockopt");
	if (err) {
		errno = err;
		die(what);
	}
}

static int accept_one(int lfd, const char *what)
{
	int fd;

	wait_for(lfd, POLLIN, what);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die(what);
	return fd;
}

/* TcpExt's ListenOverflows from /proc/net/netstat, or -1 when it cannot be read. */
static long listen_overflows(void)
{
	char names[4096], values[4096], *n, *v, *ns, *vs;
	FILE *f = fopen("/proc/net/netstat", "r");
	long found = -1;

	if (!f)
		return -1;
	while (found < 0 && fgets(names, sizeof(names), f) && fgets(values, sizeof(values), f)) {
		if (strncmp(names, "TcpExt:", 7) || strncmp(values, "TcpExt:", 7))
			continue;
		n = strtok_r(names, " \n", &ns);
		v = strtok_r(values, " \n", &vs);
		while ((n = strtok_r(NULL, " \n", &ns)) && (v = strtok_r(NULL, " \n", &vs)))
			if (!strcmp(n, "ListenOverflows"))
				found = atol(v);
	}
	fclose(f);
	return found;
}

/* Has FD (a socket still connecting) sent its SYN again? */
static int syn_retransmitted(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
		die("getsockopt TCP_INFO");
	return ti.tcpi_total_retrans > 0 || ti.tcpi_retransmits > 0;
}

/* Wait until the listener has dropped FD's SYN: see the comment at the top. */
static void syn_dropped(int fd, long before)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < STEP_MS; i++) {
		long now = listen_overflows();

		if ((before >= 0 && now > before) || syn_retransmitted(fd))
			return;
		nanosleep(&ms, NULL);
	}
	fprintf(stderr, "metrics_tcp: the listener did not drop connection B's SYN\n");
	exit(1);
}

/*
 * Shut the connection between CLIENT and SERVER down, FIN from each end,
 * and wait until both sockets are in CLOSE: the client's after the
 * server's FIN (TIME_WAIT is kept by another socket), the server's after
 * the client's last ACK.
 */
static void shut_down(int client, int server, const char *what)
{
	if (shutdown(client, SHUT_WR) < 0 || shutdown(server, SHUT_WR) < 0)
		die(what);
	if (tcp_closed(client, server, STEP_MS) == 0)
		return;
	fprintf(stderr, "metrics_tcp: %s: the sockets did not reach CLOSE\n", what);
	exit(1);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int lfd, a, b, sa_fd, sb_fd;
	long overflows;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: metrics_tcp\n");
		return 2;
	}
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		die("socket");
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("bind");
	if (getsockname(lfd, (struct sockaddr *)&sa, &len) < 0)
		die("getsockname");
	if (listen(lfd, 0) < 0)
		die("listen");

	a = connect_to(&sa);
	connected(a, "connection A");
	wait_for(lfd, POLLIN, "A queued at the listener");
	overflows = listen_overflows();
	b = connect_to(&sa);
	syn_dropped(b, overflows);
	sa_fd = accept_one(lfd, "accept A");
	connected(b, "connection B");
	sb_fd = accept_one(lfd, "accept B");

	shut_down(a, sa_fd, "shutdown A");
	shut_down(b, sb_fd, "shutdown B");
	close(a);
	close(b);
	close(sa_fd);
	close(sb_fd);
	close(lfd);
	return 0;
}
