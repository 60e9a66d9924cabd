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

int stp_msg_send(int sock, char type, const void *payload, size_t len, int fd)
{
	static char buf[MSG_BUF];
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = buf };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (len + 1 > sizeof(buf))
		len = sizeof(buf) - 1;
	iov.iov_len = len + 1;
	buf[0] = type;
	if (len)
		memcpy(buf + 1, payload, len);
	if (fd >= 0) {
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
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
	struct cmsghdr *cm;
	ssize_t n;

	*fd = -1;
	n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -1;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		int nfds = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (int i = 0; i < nfds; i++) {
			int got;

			memcpy(&got, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (*fd < 0)
				*fd = got;
			else
				close(got);	/* one fd per message: extras are not ours */
		}
	}
	buf[n] = '\0';
	return n;
}
