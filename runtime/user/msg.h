/*
 * msg.h - messages on a SOCK_SEQPACKET Unix socket: a type byte, a
 * payload, at most one descriptor attached (SCM_RIGHTS).  pmdastap talks
 * this way to its children (pmda/child.c) and to the pmstap that hands it
 * a script (handover.h).
 */
#ifndef STP_MSG_H
#define STP_MSG_H

#include <stddef.h>
#include <sys/types.h>

struct msghdr;

/*
 * Descriptors passed on a Unix socket (SCM_RIGHTS), for messages of any
 * shape: put_fds attaches the N of FDS to MH, in CBUF (CMSG_SPACE of
 * them, at least); take_fds gives those a received MH carries, up to MAX
 * into FDS, closing the rest, and says how many.
 */
void stp_msg_put_fds(struct msghdr *mh, void *cbuf, const int *fds, int n);
int stp_msg_take_fds(struct msghdr *mh, int *fds, int max);

/* TYPE then LEN bytes of PAYLOAD (cut to fit MAX - 1), with FD attached unless it is -1. */
int stp_msg_send(int sock, char type, const void *payload, size_t len, int fd);

/*
 * One message into BUF (SIZE bytes, NUL-terminated after the message);
 * its length, 0 at the end of the stream, -1 with errno (EAGAIN when
 * nothing waits).  *FD gets the attached descriptor (close-on-exec) or
 * -1; extra descriptors are closed.  FLAGS: MSG_DONTWAIT or 0.
 */
ssize_t stp_msg_recv(int sock, char *buf, size_t size, int *fd, int flags);

#endif
