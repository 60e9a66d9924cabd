/*
 * target.c - the target process: -c CMD and -x PID.
 *
 * -c CMD forks at load time, so that target() is known to the begin
 * probes; the child waits on a pipe until the begin probes have run and
 * the probes are attached, then runs CMD as stap does: split into words
 * (wordexp, no command substitution) and exec'd, so that target() is the
 * command's own pid; with shell metacharacters (| ; & < > ...) it runs
 * `/bin/sh -c CMD` (and target() is the shell's pid).  The script ends
 * when CMD exits.  If the script ends first, CMD and the processes it
 * started get SIGTERM (the shell SIGKILL a second later).  -x PID only
 * sets target().
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <wordexp.h>

#include "script_int.h"

/* In the child: wait for the gate, then exec the command.  Never returns. */
static void child_run(struct stp_script *s, char *const *argv, int gate)
{
	sigset_t none;
	char go;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (read(gate, &go, 1) != 1)
		_exit(127);	/* the runner went away before releasing us */
	close(gate);
	stp_dyn_child_env(s);	/* the dyninst runtime: loaded into the command */
	execvp(argv[0], argv);
	fprintf(stderr, "pmstap: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* CMD as words, or as a shell's command line when it needs a shell. */
static int command_words(struct stp_script *s, wordexp_t *words, char **sh_argv)
{
	const char *cmd = s->opts.target_cmd;
	int rc = wordexp(cmd, words, WRDE_NOCMD | WRDE_UNDEF);

	if (rc == WRDE_BADCHAR) {
		sh_argv[0] = "sh";
		sh_argv[1] = "-c";
		sh_argv[2] = (char *)cmd;
		sh_argv[3] = NULL;
		return 1;
	}
	if (rc == 0 && words->we_wordc > 0)
		return 0;
	if (rc == 0)
		wordfree(words);
	stp_msg(s, "error", "-c '%s': %s", cmd,
		rc == 0 ? "the command is empty" :
		rc == WRDE_SYNTAX ? "syntax error (unmatched quotes?)" :
		rc == WRDE_BADVAL ? "it uses an undefined shell variable" :
		rc == WRDE_CMDSUB ? "command substitution needs a shell: use sh -c" :
		"cannot split it into words");
	return -EINVAL;
}

int stp_target_start(struct stp_script *s)
{
	char *sh_argv[4];
	wordexp_t words;
	int gate[2], shell;
	pid_t pid;

	if (s->opts.target_pid > 0 && !s->opts.target_implied)
		s->target = s->opts.target_pid;
	if (!s->opts.target_cmd)
		return 0;
	shell = command_words(s, &words, sh_argv);
	if (shell < 0)
		return shell;
	if (pipe2(gate, O_CLOEXEC) < 0) {
		stp_msg(s, "error", "cannot start the -c command: %s", strerror(errno));
		if (!shell)
			wordfree(&words);
		return -errno;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(gate[1]);
		child_run(s, shell ? sh_argv : words.we_wordv, gate[0]);
	}
	stp_dyn_started(s);
	if (!shell)
		wordfree(&words);
	close(gate[0]);
	if (pid < 0) {
		stp_msg(s, "error", "cannot start the -c command: %s", strerror(errno));
		close(gate[1]);
		return -errno;
	}
	s->child = pid;
	s->child_gate = gate[1];
	s->target = pid;
	return 0;
}

/* Let the -c command run. */
void stp_target_release(struct stp_script *s)
{
	if (s->child_gate < 0)
		return;
	if (write(s->child_gate, "g", 1) != 1)
		stp_msg(s, "warning", "cannot start the -c command: %s", strerror(errno));
	close(s->child_gate);
	s->child_gate = -1;
}

/* After SIGCHLD: the script ends when the command has. */
void stp_target_reap(struct stp_script *s)
{
	int status;

	if (s->child <= 0)
		return;
	if (waitpid(s->child, &status, WNOHANG) != s->child)
		return;
	s->child = 0;
	s->child_exited = true;
	if (s->opts.verbose) {
		if (WIFEXITED(status))
			stp_msg(s, "note", "the -c command exited with status %d", WEXITSTATUS(status));
		else if (WIFSIGNALED(status))
			stp_msg(s, "note", "the -c command was killed by signal %d", WTERMSIG(status));
	}
	stp_request_stop(s, STP_STATE_STOPPING);
}

static bool wait_child(pid_t pid, int ms)
{
	struct timespec tick = { 0, 10 * 1000000 };

	for (int t = 0; t < ms; t += 10) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return true;
		nanosleep(&tick, NULL);
	}
	return false;
}

/* The parent of a process, from /proc; -1 when it is gone. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int ppid = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) != NULL)
		sscanf(p + 1, " %*c %d", &ppid);
	fclose(f);
	return ppid;
}

static bool descends_from(pid_t pid, pid_t root)
{
	for (int depth = 0; pid > 1 && depth < 64; depth++) {
		pid = parent_of(pid);
		if (pid == root)
			return true;
	}
	return false;
}

/* Signal the command's shell and whatever it started, still running. */
static void kill_tree(pid_t root, int sig)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL) {
		pid_t pid = (pid_t)atoi(e->d_name);

		if (pid > 1 && pid != root && descends_from(pid, root))
			kill(pid, sig);
	}
	if (d)
		closedir(d);
	kill(root, sig);
}

/* The script is over: a command still running is stopped, with what it started. */
void stp_target_stop(struct stp_script *s)
{
	if (s->child_gate >= 0) {	/* never released: it exits on EOF */
		close(s->child_gate);
		s->child_gate = -1;
	}
	if (s->child <= 0)
		return;
	kill_tree(s->child, SIGTERM);
	if (!wait_child(s->child, 1000)) {
		kill(s->child, SIGKILL);
		waitpid(s->child, NULL, 0);
	}
	s->child = 0;
}
