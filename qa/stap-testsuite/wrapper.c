// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * qa/stap-testsuite/wrapper.c - the "stap" that SystemTap's tests find in
 * PATH (run.sh compiles it with -g).  An ELF program, not a script, since
 * some tests probe process("stap") itself (its main, _start, PLT).
 *
 * Runs $STAP_TS_EXEC with the test's arguments, after the words of
 * $STAP_TS_PRE (real stap's "-r KVER").  With $STAP_TS_LOCK set, a run that
 * may reach pass 5 (no -pN, -l, -L, -V, -h, --dump-*) holds that file's
 * flock, which serializes BPF loads on this machine.  A run killed by a
 * signal is noted in $STAP_TS_CRASH: a shell test may hide its status.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

/* does argument A stop the run before pass 5? */
static int stops_early(const char *a)
{
	static const char *const words[] = { "-h", "-V", "-l", "-L", "--help", "--version" };
	size_t i;

	if (strncmp(a, "--dump-", 7) == 0)
		return 1;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(a, words[i]) == 0)
			return 1;
	if (a[0] != '-' || a[1] == '-')
		return 0;
	for (a++; *a && strchr("guwWvtkqbFP", *a); a++)
		;			/* a cluster of flags, as in -gup2 */
	return *a == 'p';
}

static void lock_if_needed(int argc, char **argv)
{
	const char *path = getenv("STAP_TS_LOCK");
	int i, fd;

	if (!path || !*path)
		return;
	for (i = 1; i < argc; i++)
		if (stops_early(argv[i]))
			return;
	fd = open(path, O_RDWR | O_CREAT, 0666);
	if (fd >= 0)
		flock(fd, LOCK_EX);	/* held until this process exits */
}

static char **make_argv(int argc, char **argv, const char *prog)
{
	char *pre = getenv("STAP_TS_PRE"), *w;
	char **v = calloc(argc + 16, sizeof(*v));
	int n = 0, i;

	v[n++] = (char *)prog;
	for (w = pre ? strtok(strdup(pre), " ") : NULL; w && n < 15; w = strtok(NULL, " "))
		v[n++] = w;
	for (i = 1; i < argc; i++)
		v[n++] = argv[i];
	return v;
}

static void note_crash(int sig, int argc, char **argv)
{
	const char *path = getenv("STAP_TS_CRASH");
	FILE *f = path ? fopen(path, "a") : NULL;
	int i;

	if (!f)
		return;
	fprintf(f, "killed by signal %d:", sig);
	for (i = 1; i < argc; i++)
		fprintf(f, " %s", argv[i]);
	fputc('\n', f);
	fclose(f);
}

int main(int argc, char **argv)
{
	const char *prog = getenv("STAP_TS_EXEC");
	int status;
	pid_t pid;

	if (!prog) {
		fprintf(stderr, "stap wrapper: STAP_TS_EXEC is not set\n");
		return 2;
	}
	lock_if_needed(argc, argv);
	pid = fork();
	if (pid == 0) {
		execv(prog, make_argv(argc, argv, prog));
		perror(prog);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return 2;
	if (WIFSIGNALED(status)) {
		note_crash(WTERMSIG(status), argc, argv);
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}
