/*
 * socket_work - a workload for the socket tapset's tests (qa/376, qa/377):
 * UDP and TCP sockets on the loopback, messages of known sizes
 *
 *	socket_work
 *
 * UDP: a socket bound to 127.0.0.1 (an ephemeral port) and another that
 * sends it 3 datagrams of 100 bytes with sendto() and 2 of 1400 bytes
 * with sendmsg(); each is received with recvfrom() into a buffer of 2000.
 * TCP: a listener on 127.0.0.1, a client that connects, the connection
 * accepted; the client send()s 4 messages of 500 bytes and 2 of 3000,
 * each received whole by recv(MSG_WAITALL) of its size; then it write()s
 * 2 of 77 bytes, each read() whole once all 77 bytes have arrived
 * (FIONREAD), so that every call moves exactly one message.  The five
 * sockets are closed, then the program exits 0 (1 with a message when a
 * step fails or takes more than 10 s).
 *
 * The four sockets made with socket() name their protocol (IPPROTO_UDP,
 * IPPROTO_TCP), so that __sock_create() sees it; the accepted one is made
 * by accept().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define STEP_MS 10000

static char buf[4000];

static void die(const char *what)
{
	fprintf(stderr, "socket_work: %s: %s\n", what, errno ? strerror(errno) : "short transfer");
	exit(1);
}

/* A socket of TYPE and PROTO bound to 127.0.0.1 (an ephemeral port); its address in SA. */
static int bound_socket(int type, int proto, struct sockaddr_in *sa)
{
	socklen_t len = sizeof(*sa);
	int fd = socket(AF_INET, type, proto);

	if (fd < 0)
		die("socket");
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)sa, sizeof(*sa)) < 0 ||
	    getsockname(fd, (struct sockaddr *)sa, &len) < 0)
		die("bind");
	return fd;
}

/* Wait until FD has N bytes to read. */
static void wait_bytes(int fd, int n)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int have = 0;

	for (int waited = 0; have < n; waited += 10) {
		if (waited > STEP_MS || ioctl(fd, FIONREAD, &have) < 0)
			die("waiting for data");
		if (have < n)
			poll(&p, 1, 10);
	}
}

static void expect(ssize_t got, size_t want, const char *what)
{
	if (got != (ssize_t)want) {
		if (got >= 0)
			errno = 0;
		die(what);
	}
}

static void udp(void)
{
	struct sockaddr_in to;
	int rx = bound_socket(SOCK_DGRAM, IPPROTO_UDP, &to);
	int tx = socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP);
	struct iovec iov = { .iov_base = buf, .iov_len = 1400 };
	struct msghdr msg = { .msg_name = &to, .msg_namelen = sizeof(to), .msg_iov = &iov,
			      .msg_iovlen = 1 };

	if (tx < 0)
		die("socket");
	for (int i = 0; i < 3; i++) {
		expect(sendto(tx, buf, 100, 0, (struct sockaddr *)&to, sizeof(to)), 100, "sendto");
		expect(recvfrom(rx, buf, 2000, 0, NULL, NULL), 100, "recvfrom");
	}
	for (int i = 0; i < 2; i++) {
		expect(sendmsg(tx, &msg, 0), 1400, "sendmsg");
		expect(recvfrom(rx, buf, 2000, 0, NULL, NULL), 1400, "recvfrom");
	}
	close(tx);
	close(rx);
}

static void tcp(void)
{
	static const size_t sizes[] = { 500, 500, 500, 500, 3000, 3000 };
	struct sockaddr_in sa;
	int l = bound_socket(SOCK_STREAM, IPPROTO_TCP, &sa);
	int c = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP), a;

	if (c < 0 || listen(l, 1) < 0)
		die("socket");
	if (connect(c, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("connect");
	if ((a = accept(l, NULL, NULL)) < 0)
		die("accept");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		expect(send(c, buf, sizes[i], 0), sizes[i], "send");
		expect(recv(a, buf, sizes[i], MSG_WAITALL), sizes[i], "recv");
	}
	for (int i = 0; i < 2; i++) {
		expect(write(c, buf, 77), 77, "write");
		wait_bytes(a, 77);
		expect(read(a, buf, 77), 77, "read");
	}
	close(a);
	close(c);
	close(l);
}

int main(void)
{
	memset(buf, 'x', sizeof(buf));
	udp();
	tcp();
	return 0;
}
