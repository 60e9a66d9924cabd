/*
 * tcp_closed.h - for the qa workloads: wait until TCP sockets are in
 * CLOSE, that is until every segment of their connection has been handled
 * (a plain close() may leave that to softirq work that runs after the
 * program, and a tracing script, have ended).
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* FD's TCP state (TCP_INFO), or -1. */
static int tcp_state(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
		return -1;
	return ti.tcpi_state;
}

/* Wait until A and B (unless B is -1) are in CLOSE: 0, or -1 after MS ms. */
static int tcp_closed(int a, int b, int ms)
{
	struct timespec one = { 0, 1000000 };

	for (int i = 0; i < ms; i++) {
		if (tcp_state(a) == TCP_CLOSE && (b < 0 || tcp_state(b) == TCP_CLOSE))
			return 0;
		nanosleep(&one, NULL);
	}
	return -1;
}
