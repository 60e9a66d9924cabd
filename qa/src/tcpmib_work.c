/*
 * tcpmib_work - a workload for the tcpmib tapset's test (qa/417): TCP
 * connections on the loopback, closed in order, reset, and refused
 *
 *	tcpmib_work N E D R
 *
 * Listens on 127.0.0.1:41701 and binds 127.0.0.1:41702 without listening.
 * Then, one at a time, each client from its own port (41710, 41711, ...):
 *   N connections to 41701, each sending one byte that the server reads,
 *     shut down from both ends (FIN each way);
 *   E connections to 41701 that the client closes with SO_LINGER 0 (it
 *     sends a reset);
 *   D connections to 41701 that the server closes, the client then
 *     sending a byte, which the server's closed end answers with a reset;
 *   R connections to 41702, refused (the SYN is answered with a reset).
 * After each connection the program waits until its sockets are in CLOSE
 * (tcp_closed.h), so that every segment of it has been handled when the
 * program goes on.
 * Exits 0, or 1 with a message when a step fails or takes over 10 s.
 * The ports are in Linux's ephemeral range: the qa guest reserves them
 * (qa/guest/init), or an earlier connection's TIME_WAIT on one of them
 * would make its bind() fail.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "tcp_closed.h"

#define STEP_MS 10000

static void die(const char *what)
{
	fprintf(stderr, "tcpmib_work: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void fail(const char *what)
{
	fprintf(stderr, "tcpmib_work: %s\n", what);
	exit(1);
}

static struct sockaddr_in loopback(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sa;
}

/* A socket bound to 127.0.0.1:PORT. */
static int bound(int port)
{
	struct sockaddr_in sa = loopback(port);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		die("socket");
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "tcpmib_work: bind 127.0.0.1:%d: %s (reserve 41700-41799 in "
			"net.ipv4.ip_local_reserved_ports)\n", port, strerror(errno));
		exit(1);
	}
	return fd;
}

/* A connection to 127.0.0.1:PORT from the next client port: its fd, or -1 with errno. */
static int connect_to(int port)
{
	static int client = 41710;
	struct sockaddr_in sa = loopback(port);
	int fd = bound(client++);

	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	close(fd);
	return -1;
}

static void orderly(int lfd)
{
	int c = connect_to(41701), s = c < 0 ? -1 : accept(lfd, NULL, NULL);
	char b;

	if (s < 0)
		die("connect and accept");
	if (write(c, "x", 1) != 1 || read(s, &b, 1) != 1)
		die("one byte");
	if (shutdown(c, SHUT_WR) < 0 || read(s, &b, 1) != 0 || shutdown(s, SHUT_WR) < 0 ||
	    read(c, &b, 1) != 0)
		die("shutdown");
	if (tcp_closed(c, s, STEP_MS) < 0)
		fail("the sockets of an orderly close did not reach CLOSE");
	close(c);
	close(s);
}

static void reset(int lfd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int c = connect_to(41701), s = c < 0 ? -1 : accept(lfd, NULL, NULL);

	if (s < 0)
		die("connect and accept");
	if (setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) < 0)
		die("SO_LINGER");
	close(c);
	if (tcp_closed(s, -1, STEP_MS) < 0)
		fail("the server's socket of a reset did not reach CLOSE");
	close(s);
}

static void data_after_close(int lfd)
{
	int c = connect_to(41701), s = c < 0 ? -1 : accept(lfd, NULL, NULL);
	struct timespec ms = { 0, 1000000 };
	int i;

	if (s < 0)
		die("connect and accept");
	close(s);
	for (i = 0; i < STEP_MS && tcp_state(c) != TCP_CLOSE_WAIT; i++)
		nanosleep(&ms, NULL);
	if (i == STEP_MS)
		fail("the server's FIN did not come");
	if (write(c, "x", 1) != 1)
		die("a byte after the server's close");
	if (tcp_closed(c, -1, STEP_MS) < 0)
		fail("the client was not reset");
	close(c);
}

static void refused(void)
{
	if (connect_to(41702) >= 0 || errno != ECONNREFUSED)
		die("a connection to a closed port was not refused");
}

int main(int argc, char **argv)
{
	int lfd, cfd, n, e, d, r;

	if (argc != 5) {
		fprintf(stderr, "usage: tcpmib_work N E D R\n");
		return 2;
	}
	n = atoi(argv[1]);
	e = atoi(argv[2]);
	d = atoi(argv[3]);
	r = atoi(argv[4]);
	lfd = bound(41701);
	cfd = bound(41702);
	if (listen(lfd, 16) < 0)
		die("listen");
	for (int i = 0; i < n; i++)
		orderly(lfd);
	for (int i = 0; i < e; i++)
		reset(lfd);
	for (int i = 0; i < d; i++)
		data_after_close(lfd);
	for (int i = 0; i < r; i++)
		refused();
	close(cfd);
	close(lfd);
	return 0;
}
