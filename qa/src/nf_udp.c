/*
 * nf_udp - a workload for the netfilter tests: known UDP datagrams over
 * the loopback device.
 *
 *	nf_udp PORT CONTROL N
 *
 * Binds a receiver on 127.0.0.1:PORT and one on 127.0.0.1:CONTROL, sends
 * N datagrams of 32 bytes to PORT, then N to CONTROL, from one socket;
 * waits (up to 10 s) until CONTROL has received its N, then takes what
 * PORT has received without waiting: loopback delivers a sender's
 * datagrams in order, so by then PORT has every datagram it will get.
 * Prints "PORT sent N received R" for each port and exits 0, or 1 when a
 * call fails or CONTROL's datagrams do not all come.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "nf_udp: %s: %s\n", what, strerror(errno));
	exit(1);
}

static struct sockaddr_in loopback(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static int receiver(int port)
{
	struct sockaddr_in a = loopback(port);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("bind");
	return fd;
}

static void send_n(int fd, int port, int n)
{
	struct sockaddr_in a = loopback(port);
	char buf[32] = "nf_udp";

	for (int i = 0; i < n; i++)
		if (sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&a, sizeof(a)) != sizeof(buf))
			die("sendto");
}

/* Datagrams FD has now, taken without waiting. */
static int drain(int fd)
{
	char buf[64];
	int n = 0;

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		n++;
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		die("recv");
	return n;
}

int main(int argc, char **argv)
{
	int port, control, n, rp, rc, got = 0, fd;
	struct pollfd p;

	if (argc != 4)
		return fprintf(stderr, "usage: nf_udp PORT CONTROL N\n"), 2;
	port = atoi(argv[1]);
	control = atoi(argv[2]);
	n = atoi(argv[3]);
	rp = receiver(port);
	rc = receiver(control);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		die("socket");
	send_n(fd, port, n);
	send_n(fd, control, n);
	p = (struct pollfd){ .fd = rc, .events = POLLIN };
	while (got < n && poll(&p, 1, 10000) > 0)
		got += drain(rc);
	printf("%d sent %d received %d\n", port, n, drain(rp));
	printf("%d sent %d received %d\n", control, n, got);
	return got == n ? 0 : 1;
}
