/*
 * child.c - a script's own process.
 *
 * pmdastap forks one child per script, so that a script that crashes,
 * hangs or fails to attach takes nothing else down.  The child finds at
 *	fd 0  /dev/null
 *	fd 1  the output pipe: the script's printf output, drained by the
 *	      PMDA's main loop into stap.scripts.output
 *	fd 2  the stderr pipe: diagnostics and runtime errors, logged by the
 *	      PMDA and kept for stap.scripts.error
 *	fd 3  its end of a SOCK_SEQPACKET control socket
 * and then
 *	1. compiles the script's private copy with `pmstap -p4` (passes 1-4,
 *	   cached by pmstap), whose diagnostics go to fd 2 as they are, with
 *	   --runtime=kernel when a line "# runtime: kernel" asks for it;
 *	2. sends STAP_MSG_BUILD with the compiled script's directory, from
 *	   which the PMDA reads the script's stp_meta (script.so);
 *	3. opens, loads and attaches it with libstaprt (runtime/user/script.h);
 *	4. sends every map the PMDA reads, one STAP_MSG_MAP each with the map's
 *	   fd attached (SCM_RIGHTS), each kernel probe's program (STAP_MSG_PROG,
 *	   for the runs the kernel skipped), then STAP_MSG_READY; a kernel
 *	   module's script sends STAP_MSG_MODULE instead of maps and
 *	   programs: the module's device, whose data segment the PMDA maps;
 *	5. runs it (begin probes, the event loop, end probes) until exit(),
 *	   SIGTERM from the PMDA, or too many errors.
 *
 * Passing fds rather than pinning maps in bpffs: no bpffs mount to need,
 * nothing left behind in /sys/fs/bpf when a child is killed, no names to
 * clash between scripts or PMDA instances, and a map lives exactly as long
 * as a process holds it, so a crashed child's maps stay readable until the
 * PMDA lets go of them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "pmdastap.h"
#include "../runtime/user/msg.h"
#include "../runtime/dyninst/dmap.h"
#include "../runtime/user/script.h"

#define CTL_FD 3

/* ---- the runtime: a line "# runtime: NAME" ---- */

/* The text of the file at PATH (NUL-terminated, malloc'd), or NULL. */
static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t cap = 0, len;

	if (!f)
		return NULL;
	len = getdelim(&text, &cap, '\0', f) > 0 ? strlen(text) : 0;
	fclose(f);
	if (!len) {
		free(text);
		return strdup("");
	}
	return text;
}

const char *stap_script_runtime(const char *path)
{
	char *text = read_text(path), name[64] = "bpf";
	const char *at = text ? stap_header_line(text, "runtime", &(size_t){ 0 }) : NULL;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	int lineno = 1;

	if (at) {
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(at, " \t\r\n"), at);
		for (const char *p = text; p < at; p++)
			lineno += *p == '\n';
	}
	free(text);
	if (strcmp(name, "bpf") == 0)
		return "bpf";
	if (strcmp(name, "kernel") == 0 && access("/proc/modules", F_OK) == 0)
		return "kernel";
	fprintf(stderr, "%s:%d:1: error: ", base, lineno);
	if (strcmp(name, "kernel") == 0)
		fprintf(stderr, "'# runtime: kernel' runs the script as a kernel module, and this "
			"kernel cannot load modules (it has no /proc/modules)\n");
	else if (strcmp(name, "dyninst") == 0)
		fprintf(stderr, "pmdastap does not run scripts on the dyninst runtime: run it with "
			"pmstap --runtime=dyninst --pmda and its processes\n");
	else
		fprintf(stderr, "unknown runtime '%s' (bpf or kernel)\n", name);
	return NULL;
}

/* ---- pass 1-4 with pmstap ---- */

static void exec_pmstap(const struct stap_script *sc, const char *runtime, int out)
{
	char *argv[] = { stap_config.pmstap, "-p4", basename(sc->file), NULL, NULL };
	char *dir = strdup(sc->file);

	dup2(out, STDOUT_FILENO);
	close(out);
	close(CTL_FD);
	if (!dir || chdir(dirname(dir)) < 0) {
		fprintf(stderr, "cannot enter the directory of %s: %s\n", sc->file, strerror(errno));
		_exit(127);
	}
	setenv("PMSTAP_CACHE", stap_config.cache_dir, 1);
	if (strcmp(runtime, "kernel") == 0) {	/* as `pmstap --runtime=kernel NAME.stp` */
		argv[3] = argv[2];
		argv[2] = "--runtime=kernel";
	}
	execv(argv[0], argv);
	fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Read pmstap's stdout: the first line is <dir>/script.bpf.o. */
static int read_build_dir(int fd, char *dir, size_t size)
{
	size_t len = 0;
	ssize_t n;
	char *nl;

	while (len < size - 1 && (n = read(fd, dir + len, size - 1 - len)) > 0)
		len += (size_t)n;
	dir[len] = '\0';
	nl = strchr(dir, '\n');
	if (nl)
		*nl = '\0';
	if (!*dir || !strchr(dir, '/'))
		return -1;
	*strrchr(dir, '/') = '\0';
	return 0;
}

static int compile(const struct stap_script *sc, const char *runtime, char *dir, size_t size)
{
	int pfd[2], status;
	pid_t pid;

	if (pipe(pfd) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(pfd[0]);
		exec_pmstap(sc, runtime, pfd[1]);
	}
	close(pfd[1]);
	if (read_build_dir(pfd[0], dir, size) < 0)
		dir[0] = '\0';
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !dir[0])
		return -1;
	return 0;
}

/* ---- the maps the PMDA reads ---- */

static bool sent_already(const struct stp_meta *m, int g)
{
	for (int i = 0; i < g; i++)
		if (m->globals[i].exported && m->globals[i].map &&
		    strcmp(m->globals[i].map, m->globals[g].map) == 0)
			return true;
	return false;
}

static int send_map(struct stp_script *s, const char *name)
{
	int fd = stp_script__map_fd(s, name);

	if (fd < 0)
		return 0;	/* the script does without it */
	return stp_msg_send(CTL_FD, STAP_MSG_MAP, name, strlen(name), fd);
}

static int send_maps(struct stp_script *s)
{
	const struct stp_meta *m = stp_script__meta(s);

	for (int g = 0; g < m->nglobals; g++) {
		if (!m->globals[g].exported || !m->globals[g].map || sent_already(m, g))
			continue;
		if (send_map(s, m->globals[g].map) < 0)
			return -1;
		if (m->globals[g].values_map && send_map(s, m->globals[g].values_map) < 0)
			return -1;
	}
	/* stacks' files, for naming ubacktrace() keys (pmda/stacks.c) */
	if (send_map(s, STP_COUNTERS_MAP) < 0 || send_map(s, STP_PROBE_STATS_MAP) < 0 ||
	    send_map(s, "stp_umaps") < 0)
		return -1;
	return 0;
}

/* Kernel probe P's program when it loaded, else NULL. */
static struct bpf_program *loaded_prog(struct bpf_object *obj, const struct stp_meta_probe *p)
{
	struct bpf_program *prog;

	if (!obj || p->context == STP_CTX_USER || !p->prog)
		return NULL;
	prog = bpf_object__find_program_by_name(obj, p->prog);
	return prog && bpf_program__autoload(prog) && bpf_program__fd(prog) >= 0 ? prog : NULL;
}

/* The first kernel probe that runs probe I's program. */
static int first_of_prog(const struct stp_meta *m, int i)
{
	for (int j = 0; j < i; j++)
		if (m->probes[j].context == STP_CTX_KERNEL && m->probes[j].prog &&
		    strcmp(m->probes[j].prog, m->probes[i].prog) == 0)
			return j;
	return i;
}

/* Each kernel probe's loaded program: the PMDA reads its recursion misses. */
static int send_progs(struct stp_script *s)
{
	const struct stp_meta *m = stp_script__meta(s);
	struct bpf_object *obj = stp_script__bpf_object(s);

	for (int i = 0; i < m->nprobes; i++) {
		struct bpf_program *prog = loaded_prog(obj, &m->probes[i]);
		char index[16];

		/* a program that several probes share: its misses count once, for the first */
		if (!prog || first_of_prog(m, i) != i)
			continue;
		snprintf(index, sizeof(index), "%d", i);
		if (stp_msg_send(CTL_FD, STAP_MSG_PROG, index, strlen(index), bpf_program__fd(prog)) < 0)
			return -1;
	}
	return 0;
}

/*
 * The kernel runtime: the module's device, as this process opened it (so
 * that the module's probes stop only when both have closed it), and the
 * module's name, for pmdastap to map the data and unload the module.
 */
static int send_module(struct stp_script *s)
{
	const char *name = stp_script__kmod_name(s);

	return stp_msg_send(CTL_FD, STAP_MSG_MODULE, name, strlen(name),
			    stp_dseg__fd(stp_script__dseg(s)));
}

/* Which probes are in: user-context ones always, kernel ones if their program loaded. */
static int send_ready(struct stp_script *s)
{
	const struct stp_meta *m = stp_script__meta(s);
	struct bpf_object *obj = stp_script__bpf_object(s);
	size_t n = (size_t)m->nprobes < STAP_MSG_MAX - 2 ? (size_t)m->nprobes : STAP_MSG_MAX - 2;
	unsigned char *flags = calloc(n + 1, 1);
	int rc;

	if (!flags)
		return -1;
	for (size_t i = 0; i < n; i++)	/* a module registers every probe, or none */
		flags[i] = m->probes[i].context == STP_CTX_USER || stp_script__kmod_name(s) ||
			   loaded_prog(obj, &m->probes[i]);
	rc = stp_msg_send(CTL_FD, STAP_MSG_READY, flags, n, -1);
	free(flags);
	return rc;
}

/* ---- the child's life ---- */

static void reset_signals(void)
{
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

static int run(struct stap_script *sc, const char *dir)
{
	struct stp_script_opts opts = { .prog_name = sc->name, .kmod_shared = true };
	struct stp_script *s = stp_script__open(dir, &opts);
	int status;

	if (!s)
		return STAP_CHILD_LOAD;
	if (stp_script__load(s) < 0 || stp_script__attach(s) < 0) {
		stp_script__free(s);
		return STAP_CHILD_LOAD;
	}
	if ((stp_script__kmod_name(s) ? send_module(s) : send_maps(s) < 0 ? -1 : send_progs(s)) < 0 ||
	    send_ready(s) < 0) {
		fprintf(stderr, "%s: cannot hand the maps to pmdastap: %s\n", sc->name,
			strerror(errno));
		stp_script__free(s);
		return STAP_CHILD_INTERNAL;
	}
	status = stp_script__run(s);
	stp_script__free(s);
	return status ? STAP_CHILD_ERRORS : STAP_CHILD_OK;
}

void stap_child_main(struct stap_script *sc, pid_t parent)
{
	char dir[4096];
	char title[16];
	const char *runtime;

	reset_signals();
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(STAP_CHILD_INTERNAL);	/* the PMDA died before the line above */
	snprintf(title, sizeof(title), "stap:%s", sc->name);
	prctl(PR_SET_NAME, title);
	runtime = stap_script_runtime(sc->file);
	if (!runtime)
		_exit(STAP_CHILD_RUNTIME);
	if (compile(sc, runtime, dir, sizeof(dir)) < 0)
		_exit(STAP_CHILD_COMPILE);
	if (stp_msg_send(CTL_FD, STAP_MSG_BUILD, dir, strlen(dir), -1) < 0)
		_exit(STAP_CHILD_INTERNAL);
	_exit(run(sc, dir));
}
