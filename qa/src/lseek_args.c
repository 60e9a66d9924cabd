/*
 * lseek_args - a workload for the QA tests: one lseek(2) with known arguments
 *
 *	lseek_args FD OFFSET WHENCE [COUNT]
 *
 * Opens /dev/null as file descriptor FD and calls lseek(FD, OFFSET, WHENCE)
 * COUNT times (default 1), then exits 0.  Tests read the arguments back
 * from the syscalls:sys_enter_lseek tracepoint ($fd, $offset, $whence).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd, whence, null;
	long long offset;
	long count = 1, i;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: lseek_args FD OFFSET WHENCE [COUNT]\n");
		return 2;
	}
	fd = atoi(argv[1]);
	offset = atoll(argv[2]);
	whence = atoi(argv[3]);
	if (argc == 5)
		count = atol(argv[4]);
	null = open("/dev/null", O_RDWR);
	if (fd < 3 || null < 0 || dup2(null, fd) < 0) {
		fprintf(stderr, "lseek_args: cannot open /dev/null as fd %d: %s\n", fd, strerror(errno));
		return 1;
	}
	for (i = 0; i < count; i++)
		lseek(fd, (off_t)offset, whence);
	return 0;
}
