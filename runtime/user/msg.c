/*
 * msg.c - messages on a SOCK_SEQPACKET Unix socket (msg.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "msg.h"

#define MSG_BUF 65536

void stp_msg_put_fds(struct msghdr *mh, void *cbuf, const int *fds, int n)
{
	struct cmsghdr *cm;

	if (n <= 0)
		return;
	memset(cbuf, 0, CMSG_SPACE(sizeof(int) * (size_t)n));
	mh->msg_control = cbuf;
	mh->msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
	cm = CMSG_FIRSTHDR(mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)n);
}

int stp_msg_take_fds(struct msghdr *mh, int *fds, int max)
{
	struct cmsghdr *cm;
	int got = 0;

	for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		int nfds = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (int i = 0; i < nfds; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + (size_t)i * sizeof(int), sizeof(int));
			if (got < max)
				fds[got++] = fd;
			else
				close(fd);	/* more than asked for: not ours */
		}
	}
	return got;
}

int stp_msg_send(int sock, char type, const void *payload, size_t len, int fd)
{
	static char buf[MSG_BUF];
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = buf };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (len + 1 > sizeof(buf))
		len = sizeof(buf) - 1;
	iov.iov_len = len + 1;
	buf[0] = type;
	if (len)
		memcpy(buf + 1, payload, len);
	stp_msg_put_fds(&mh, cbuf, &fd, fd >= 0);
	return sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 ? -1 : 0;
}

ssize_t stp_msg_recv(int sock, char *buf, size_t size, int *fd, int flags)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = { .iov_base = buf, .iov_len = size - 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	ssize_t n;

	*fd = -1;
	n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -1;
	stp_msg_take_fds(&mh, fd, 1);	/* one fd per message */
	buf[n] = '\0';
	return n;
}
