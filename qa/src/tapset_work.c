/*
 * tapset_work - the workload of the tapset function table (qa/tapset)
 *
 *	tapset_work [ARG...]
 *
 * The arguments are ignored (the cmdline rows read them back).
 * Gives each kernel-context row of qa/tapset/cases one known event, in
 * this order, then exits 0:
 *
 *	getppid()			the k rows
 *	tw_args(7, -3, 0x123456789, "arg")	the p rows (a uprobe), and the
 *					pr rows at its return (returns 42)
 *	write(77, &tw_data, 64)		the w rows: $buf points at tw_data,
 *					whose bytes the rows know (below)
 *	close(77), close(77)		the r rows: the second returns -EBADF
 *	a TCP connection on loopback	the t rows: from 127.0.0.1 port
 *					$TW_PORT + 1 to a listener on port
 *					$TW_PORT (default 47077), closed with a
 *					reset (no TIME_WAIT left behind)
 *
 * SIGUSR2 is ignored and SIGWINCH blocked before all that
 * (get_sa_handler()'s row reads SIGUSR2's k_sigaction, is_sig_blocked()'s
 * the blocked mask).  fd 77 is /dev/null.  System calls go through syscall(2) so that no C
 * library can cache or skip them.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TW_FD 77

/* Offsets are part of the contract with qa/tapset/cases: do not move. */
static struct {
	char str[16];		/*  0: "hello, tapset" */
	int64_t minus2;		/* 16: -2 (bytes fe ff ff ff ff ff ff ff) */
	uint64_t ramp;		/* 24: 0x0102030405060708 */
	char quoted[16];	/* 32: "a\tb\"c\n" */
	char bytes[16];		/* 48: 0x81 0x7f 'x' 0 ... */
} tw_data = {
	.str = "hello, tapset",
	.minus2 = -2,
	.ramp = 0x0102030405060708ULL,
	.quoted = "a\tb\"c\n",
	.bytes = { (char)0x81, 0x7f, 'x' },
};

/* The uprobe target: kept out of line, its arguments in registers. */
long tw_args(int a, long b, long c, const char *s);
__attribute__((noinline)) long tw_args(int a, long b, long c, const char *s)
{
	__asm__ volatile("" : : "r"(s) : "memory");
	return a + b + c - 0x123456789 + 38;	/* 42 */
}

/* A socket of PORT on 127.0.0.1: bound, and listening when LISTEN. */
static int tw_socket(int port, int listen_too)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || (listen_too && listen(fd, 1) != 0)) {
		perror("tapset_work: socket");
		return -1;
	}
	return fd;
}

/* The t rows' connection: from PORT + 1 to PORT, then reset. */
static int tw_connect(int port)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct linger reset = { .l_onoff = 1, .l_linger = 0 };
	int srv = tw_socket(port, 1), cli = tw_socket(port + 1, 0), acc;

	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (srv < 0 || cli < 0 || connect(cli, (struct sockaddr *)&to, sizeof(to)) != 0) {
		perror("tapset_work: connect");
		return 1;
	}
	acc = accept(srv, NULL, NULL);
	setsockopt(cli, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
	close(cli);
	if (acc >= 0)
		close(acc);
	close(srv);
	return 0;
}

int main(int argc, char **argv)
{
	int fd = open("/dev/null", O_WRONLY);
	sigset_t winch;

	if (fd < 0 || dup2(fd, TW_FD) != TW_FD) {
		perror("tapset_work: /dev/null");
		return 1;
	}
	(void)argc;
	(void)argv;
	close(fd);
	signal(SIGUSR2, SIG_IGN);
	sigemptyset(&winch);
	sigaddset(&winch, SIGWINCH);
	sigprocmask(SIG_BLOCK, &winch, NULL);
	syscall(SYS_getppid);
	if (tw_args(7, -3, 0x123456789L, "arg") != 42)
		return 1;
	if (syscall(SYS_write, TW_FD, &tw_data, sizeof(tw_data)) != (long)sizeof(tw_data))
		return 1;
	syscall(SYS_close, TW_FD);
	syscall(SYS_close, TW_FD);
	return tw_connect(getenv("TW_PORT") ? atoi(getenv("TW_PORT")) : 47077);
}
