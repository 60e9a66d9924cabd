/*
 * regex_open - a workload for the regular expression tests (qa/050-054)
 *
 *	regex_open NAME...
 *
 * Calls openat(AT_FDCWD, NAME, O_RDONLY) once for each NAME, in order
 * (names that do not exist fail with ENOENT: the syscall still enters),
 * closes what opened, and exits 0.
 */
#include <fcntl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		int fd = openat(AT_FDCWD, argv[i], O_RDONLY);

		if (fd >= 0)
			close(fd);
	}
	return 0;
}
