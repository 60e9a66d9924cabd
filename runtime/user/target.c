/*
 * target.c - the target process: -c CMD and -x PID.
 *
 * -c CMD forks at load time, so that target() is known to the begin
 * probes; the child waits in sigsuspend() for SIGUSR1, sent when the
 * begin probes have run and the probes are attached (staprun's way: a
 * wait on a pipe would end in a read() the script's probes see return
 * in the target), then runs CMD as stap does: split into words
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
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <wordexp.h>

#include "script_int.h"

static volatile sig_atomic_t child_go;

static void child_go_handler(int sig)
{
	(void)sig;
	child_go = 1;
}

/*
 * In the child: wait for SIGUSR1 (blocked since before fork(), so that
 * one sent early stays pending), then exec the command.  It dies with
 * the runner until then.  Never returns.
 */
static void child_run(struct stp_script *s, char *const *argv, pid_t runner)
{
	struct sigaction go = { .sa_handler = child_go_handler };
	sigset_t none;

	sigemptyset(&none);
	signal(SIGPIPE, SIG_DFL);
	sigaction(SIGUSR1, &go, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (kill(runner, 0) < 0)	/* not getppid(): scripts count those */
		_exit(127);	/* the runner went away before releasing us */
	while (!child_go)
		sigsuspend(&none);
	prctl(PR_SET_PDEATHSIG, 0);
	signal(SIGUSR1, SIG_DFL);
	sigprocmask(SIG_SETMASK, &none, NULL);
	stp_dyn_child_env(s);	/* the dyninst runtime: loaded into the command */
	execvp(argv[0], argv);
	fprintf(stderr, "pmstap: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* The file execvp() runs for NAME, or NULL. */
static char *exec_path(const char *name)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(name, '/'))
		return strdup(name);
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");

		snprintf(buf, sizeof(buf), "%.*s%s%s", (int)n, p, n ? "/" : "", name);
		if (access(buf, X_OK) == 0)
			return strdup(buf);
		p += n + (p[n] == ':');
	}
	return NULL;
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
	sigset_t usr1, saved;
	pid_t pid, runner = getpid();
	int shell;

	if (s->opts.target_pid > 0 && !s->opts.target_implied)
		s->target = s->opts.target_pid;
	if (!s->opts.target_cmd)
		return 0;
	shell = command_words(s, &words, sh_argv);
	if (shell < 0)
		return shell;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &saved);
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		child_run(s, shell ? sh_argv : words.we_wordv, runner);
	sigprocmask(SIG_SETMASK, &saved, NULL);
	stp_dyn_started(s);
	if (!shell) {
		s->child_exe = exec_path(words.we_wordv[0]);
		wordfree(&words);
	}
	if (pid < 0) {
		stp_msg(s, "error", "cannot start the -c command: %s", strerror(errno));
		return -errno;
	}
	s->child = pid;
	s->child_held = true;
	s->target = pid;
	return 0;
}

/* Let the -c command run. */
void stp_target_release(struct stp_script *s)
{
	if (!s->child_held)
		return;
	s->child_held = false;
	if (s->child > 0)
		stp_perfctr_hold(s, s->child, s->child_exe);
	if (s->child > 0 && kill(s->child, SIGUSR1) < 0)
		stp_msg(s, "warning", "cannot start the -c command: %s", strerror(errno));
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
	/* as stapio: a command that failed is a warning, and pmstap's exit status 1 */
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		if (s->opts.verbose)
			stp_msg(s, "note", "the -c command exited with status 0");
	} else {
		s->child_failed = true;
		stp_out_flush(s);
		if (WIFEXITED(status))
			fprintf(stderr, "WARNING: Child process exited with status %d\n",
				WEXITSTATUS(status));
		else if (WIFSIGNALED(status))
			fprintf(stderr, "WARNING: Child process exited with signal %d (%s)\n",
				WTERMSIG(status), strsignal(WTERMSIG(status)));
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
	s->child_held = false;	/* one never released dies of the SIGTERM */
	if (s->child <= 0)
		return;
	kill_tree(s->child, SIGTERM);
	if (!wait_child(s->child, 1000)) {
		kill(s->child, SIGKILL);
		waitpid(s->child, NULL, 0);
	}
	s->child = 0;
}
