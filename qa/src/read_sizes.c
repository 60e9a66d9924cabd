/*
 * read_sizes - a workload for the QA tests: read(2)s of known sizes
 *
 *	read_sizes [-f FD] SIZE[xCOUNT]...
 *
 * Opens /dev/zero as file descriptor FD (default 42, a number nothing
 * else in the process uses) and makes COUNT (default 1) reads of SIZE
 * bytes for each argument, in order, then exits 0.  Tests filter the
 * syscalls:sys_enter_read tracepoint on $fd == FD, so the C library's
 * own reads at start-up are not counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SIZE (1 << 20)

static void usage(void)
{
	fprintf(stderr, "usage: read_sizes [-f FD] SIZE[xCOUNT]...\n");
	exit(2);
}

static long parse_num(const char *s, char **end)
{
	long v;

	errno = 0;
	v = strtol(s, end, 10);
	if (errno || *end == s || v < 0)
		usage();
	return v;
}

static int open_zero(int fd)
{
	int z = open("/dev/zero", O_RDONLY);

	if (z < 0 || dup2(z, fd) < 0) {
		fprintf(stderr, "read_sizes: /dev/zero: %s\n", strerror(errno));
		exit(1);
	}
	if (z != fd)
		close(z);
	return fd;
}

static void reads(int fd, char *buf, const char *arg)
{
	char *end;
	long size, count = 1, i;

	size = parse_num(arg, &end);
	if (*end == 'x')
		count = parse_num(end + 1, &end);
	if (*end || size > MAX_SIZE)
		usage();
	for (i = 0; i < count; i++) {
		if (read(fd, buf, size) != size) {
			fprintf(stderr, "read_sizes: short read of %ld\n", size);
			exit(1);
		}
	}
}

int main(int argc, char **argv)
{
	static char buf[MAX_SIZE];
	int fd = 42, c;

	while ((c = getopt(argc, argv, "f:")) != -1) {
		if (c != 'f')
			usage();
		fd = atoi(optarg);
		if (fd < 3)
			usage();
	}
	if (optind == argc)
		usage();
	open_zero(fd);
	for (; optind < argc; optind++)
		reads(fd, buf, argv[optind]);
	return 0;
}
