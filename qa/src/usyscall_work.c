/*
 * usyscall_work - a workload for the process.syscall tests: a known
 * sequence of system calls.
 *
 *	usyscall_work [-p PIDFILE] N
 *
 * Prints the numbers of getppid, write and close on this machine
 * ("nr getppid 110 write 1 close 3"), then makes exactly N getppid calls,
 * one write of 37 bytes to file descriptor 9 (/dev/null), one close of
 * descriptor 99, which is not open (EBADF), and forks a child that makes
 * exactly 3 getppid calls; waits for it and exits 0.  With -p it writes
 * its pid to PIDFILE (through a temporary name) and waits for a line on
 * its standard input before the calls, so that a probe can attach first.
 *
 * The calls go through syscall(2) so no C library can cache or skip them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "usyscall_work: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void write_pidfile(const char *path)
{
	char tmp[4096], line[16];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0 || rename(tmp, path) != 0)
		die(path);
	if (!fgets(line, sizeof(line), stdin))
		die("no line to go on");
}

static void getppids(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
}

int main(int argc, char **argv)
{
	static const char msg[37] = "thirty-seven bytes to /dev/null ....\n";
	const char *pidfile = NULL;
	char *end;
	long n;
	pid_t child;
	int fd, st;

	if (argc == 4 && strcmp(argv[1], "-p") == 0) {
		pidfile = argv[2];
		argv += 2;
		argc -= 2;
	}
	n = argc == 2 ? strtol(argv[1], &end, 10) : -1;
	if (argc != 2 || *end || n < 0) {
		fprintf(stderr, "usage: usyscall_work [-p PIDFILE] N\n");
		return 2;
	}
	printf("nr getppid %d write %d close %d\n", SYS_getppid, SYS_write, SYS_close);
	fflush(stdout);
	fd = open("/dev/null", O_WRONLY);
	if (fd < 0 || dup2(fd, 9) != 9)
		die("/dev/null");
	if (pidfile)
		write_pidfile(pidfile);
	getppids(n);
	if (syscall(SYS_write, 9, msg, sizeof(msg)) != (long)sizeof(msg))
		die("write");
	if (syscall(SYS_close, 99) != -1 || errno != EBADF)
		die("close(99) did not fail with EBADF");
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		getppids(3);
		_exit(0);
	}
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st))
		die("the child");
	return 0;
}
