/*
 * dyn.c - the runner's side of the dyninst runtime (runtime/dyninst).
 *
 * A script compiled for it has script.dyn.so instead of script.bpf.o.
 * The runner opens it only to read the maps it declares
 * (stp_dyn_maps(), runtime/dyninst/stp_dyn.h), creates the script's
 * shared segment with them (the ring buffer sized as stp_meta says) and
 * reads and writes it like BPF maps, through maps.h.  The -c command
 * starts with libstapdyn.so preloaded and the segment inherited
 * (stp_dyn_child_env); its loader patches the probe sites before main()
 * and reports on a pipe, which the event loop reads (stp_dyn_on_report).
 * -x PID: libstapdyn-attach.so is loaded into the process and its
 * stp_dyn_attach() called there (runtime/dyninst/inject.h), which opens
 * the segment and the report pipe through /proc/PMSTAP/fd/, patches and
 * reports the same way (threads stopped inside the bytes a jump replaced
 * are moved into the copy, from its stp_dyn_pc_moves table before they
 * resume); at the end stp_dyn_detach() puts the code back
 * and the process runs on.  Records come from the segment's ring buffer, which
 * has no descriptor to wait on: the event loop polls it on a timer
 * (STP_DYN_POLL_MS) and drains it at the end.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maps.h"
#include "script_int.h"
#include "../dyninst/inject.h"
#include "../dyninst/stp_dyn.h"

bool stp_dyn_is(const char *dir)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/script.dyn.so", dir);
	return access(path, F_OK) == 0;
}

/* The maps script.dyn.so declares, sized as the metadata says, into DEFS (malloc'd). */
static int map_defs(struct stp_script *s, struct stp_dmap_def **defs)
{
	stp_dyn_maps_fn maps_of = (stp_dyn_maps_fn)dlsym(s->dyn_dl, "stp_dyn_maps");
	struct stp_dmap_ref **refs;
	int n;

	if (!maps_of) {
		stp_msg(s, "error", "%s has no map table: not a dyninst script", s->bpf_path);
		return -EINVAL;
	}
	refs = maps_of(&n);
	*defs = calloc((size_t)n + 1, sizeof(**defs));
	if (!*defs)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		(*defs)[i] = refs[i]->def;
		if (strcmp(refs[i]->def.name, STP_RINGBUF_MAP) == 0 &&
		    s->meta->limits.ringbuf_bytes > 0)
			(*defs)[i].max_entries = stp_pow2_pages((uint64_t)s->meta->limits.ringbuf_bytes);
	}
	return n;
}

int stp_dyn_open(struct stp_script *s)
{
	struct stp_dmap_def *defs;
	char err[256];
	int n;

	free(s->bpf_path);
	if (asprintf(&s->bpf_path, "%s/script.dyn.so", s->dir) < 0)
		return -ENOMEM;
	/* lazily: the handlers' calls into libstapdyn.so are never made here */
	s->dyn_dl = dlopen(s->bpf_path, RTLD_LAZY | RTLD_LOCAL);
	if (!s->dyn_dl) {
		stp_msg(s, "error", "cannot load the compiled script: %s", dlerror());
		return -ENOENT;
	}
	n = map_defs(s, &defs);
	if (n < 0)
		return n;
	s->dseg = stp_dseg__create(defs, n, STP_DYN_SLOTS, err, sizeof(err));
	free(defs);
	if (!s->dseg) {
		stp_msg(s, "error", "cannot create the script's shared segment: %s", err);
		return -ENOMEM;
	}
	s->maps = stp_maps__dyn(s->dseg);
	if (!s->maps)
		return -ENOMEM;
	s->ncpus = stp_dseg__nslots(s->dseg);
	s->dyn_ring = stp_dseg__map(s->dseg, STP_RINGBUF_MAP);	/* drained after every handler */
	return 0;
}

void stp_dyn_close(struct stp_script *s)
{
	if (s->dyn_report >= 0)
		close(s->dyn_report);
	s->dyn_report = -1;
	stp_dseg__free(s->dseg);
	s->dseg = NULL;
	s->dyn_ring = NULL;
	if (s->dyn_dl)
		dlclose(s->dyn_dl);
	s->dyn_dl = NULL;
}

/* ---- the -c command ---- */

/*
 * Where libstapdyn.so (NAME) is: PMSTAP_DYNLIB, else ../lib/pmstap/
 * beside the running program; libstapdyn-attach.so beside it.
 */
static const char *dyn_lib(const char *name, char *buf, size_t size)
{
	const char *env = getenv("PMSTAP_DYNLIB"), *end;
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env && strcmp(name, STP_DYN_LIB) == 0) {
		snprintf(buf, size, "%s", env);
		return buf;
	}
	if (env && *env && (end = strrchr(env, '/'))) {
		snprintf(buf, size, "%.*s/%s", (int)(end - env), env, name);
		return buf;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	end = strrchr(exe, '/');
	if ((size_t)snprintf(buf, size, "%.*s/../lib/pmstap/%s",
			     (int)(end ? end - exe : n), exe, name) >= size)
		return NULL;
	return buf;
}

int stp_dyn_prepare(struct stp_script *s)
{
	const char *name = s->opts.target_cmd ? STP_DYN_LIB : STP_DYN_ATTACH_LIB;
	int pipefd[2];

	if (!s->dseg || s->kmod_fd >= 0 || (!s->opts.target_cmd && s->opts.target_pid <= 0))
		return 0;
	if (!dyn_lib(name, s->dyn_lib, sizeof(s->dyn_lib)) || access(s->dyn_lib, R_OK) != 0) {
		stp_msg(s, "error", "cannot find the dyninst runtime %s (set PMSTAP_DYNLIB)",
			s->dyn_lib[0] ? s->dyn_lib : name);
		return -ENOENT;
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	s->dyn_report = pipefd[0];
	s->dyn_report_w = pipefd[1];
	return 0;
}

static void set_fd_env(const char *name, int fd)
{
	char v[16];

	fcntl(fd, F_SETFD, 0);	/* inherited across exec */
	snprintf(v, sizeof(v), "%d", fd);
	setenv(name, v, 1);
}

/* In the -c child, before exec: what libstapdyn.so finds there. */
void stp_dyn_child_env(struct stp_script *s)
{
	const char *old = getenv("LD_PRELOAD");
	char *preload;

	if (!s->dseg || s->kmod_fd >= 0)
		return;
	set_fd_env(STP_DYN_ENV_SEG, stp_dseg__fd(s->dseg));
	set_fd_env(STP_DYN_ENV_REPORT, s->dyn_report_w);
	setenv(STP_DYN_ENV_SO, s->bpf_path, 1);
	if (old && *old && asprintf(&preload, "%s:%s", s->dyn_lib, old) >= 0)
		setenv("LD_PRELOAD", preload, 1);
	else
		setenv("LD_PRELOAD", s->dyn_lib, 1);
}

/* The parent's copy of the report pipe's write end goes once the child has its own. */
void stp_dyn_started(struct stp_script *s)
{
	if (s->dyn_report_w >= 0)
		close(s->dyn_report_w);
	s->dyn_report_w = -1;
}

/*
 * The report pipe is readable (the event loop watches it): the loader in
 * the command says in one line whether the probes went in.  EOF without
 * that line means it never loaded libstapdyn.so: a statically linked
 * program, or an exec that failed (whose own message said why).
 */
int stp_dyn_on_report(struct stp_script *s)
{
	char line[600];
	ssize_t n;

	if (s->dyn_report < 0)
		return 0;
	n = read(s->dyn_report, line, sizeof(line) - 1);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	close(s->dyn_report);	/* the epoll set forgets it too */
	s->dyn_report = -1;
	line[n > 0 ? n : 0] = '\0';
	line[strcspn(line, "\n")] = '\0';
	if (strncmp(line, "ok ", 3) == 0) {
		if (s->opts.verbose && s->opts.target_cmd)
			stp_msg(s, "note", "the -c command has the script loaded: %s", line + 3);
		else if (s->opts.verbose)
			stp_msg(s, "note", "process %ld has the script loaded: %s",
				s->opts.target_pid, line + 3);
		return 0;
	}
	if (!s->opts.target_cmd)
		stp_msg(s, "error", "process %ld: %s", s->opts.target_pid,
			strncmp(line, "error: ", 7) == 0 ? line + 7 : "the script did not load");
	else if (strncmp(line, "error: ", 7) == 0)
		stp_msg(s, "error", "-c '%s': %s", s->opts.target_cmd, line + 7);
	else
		stp_msg(s, "error", "-c '%s' did not load the dyninst runtime (a statically linked "
			"program, or one that could not start)", s->opts.target_cmd);
	return -EINVAL;
}

/* ---- -x PID ---- */

int stp_dyn_attach_pid(struct stp_script *s)
{
	char arg[8192], err[512];
	pid_t pid = (pid_t)s->opts.target_pid;
	long ret = -1;
	int rc;

	if (!s->dseg || s->kmod_fd >= 0 || s->opts.target_cmd || pid <= 0)
		return 0;
	snprintf(arg, sizeof(arg), "/proc/%d/fd/%d\n%s\n/proc/%d/fd/%d", (int)getpid(),
		 stp_dseg__fd(s->dseg), s->bpf_path, (int)getpid(), s->dyn_report_w);
	stp_inject__set_pc_moves("stp_dyn_pc_moves");
	rc = stp_inject__call(pid, s->dyn_lib, "stp_dyn_attach", arg, &ret, err, sizeof(err));
	stp_inject__set_pc_moves(NULL);
	stp_dyn_started(s);	/* its report is in the pipe now, or never */
	s->dyn_attached = ret == 0;	/* even when what followed failed: the end takes them out */
	if (rc != 0) {
		stp_msg(s, "error", "cannot load the script into process %d: %s", (int)pid, err);
		return -EPERM;
	}
	return 0;	/* a refusal: its report says why (stp_dyn_on_report) */
}

/* The begin probes ran: process.begin for the process -x names, which ran already. */
void stp_dyn_begin_pid(struct stp_script *s)
{
	char err[512];
	long ret;

	if (s->dyn_attached &&
	    stp_inject__call((pid_t)s->opts.target_pid, s->dyn_lib, "stp_dyn_begin", "", &ret,
			     err, sizeof(err)) != 0)
		stp_msg(s, "warning", "process %ld: its process.begin probes did not run: %s",
			s->opts.target_pid, err);
}

void stp_dyn_detach_pid(struct stp_script *s)
{
	char err[512];
	long ret;

	if (!s->dyn_attached)
		return;
	s->dyn_attached = false;
	if (kill((pid_t)s->opts.target_pid, 0) != 0)
		return;	/* it is gone */
	if (stp_inject__call((pid_t)s->opts.target_pid, s->dyn_lib, "stp_dyn_detach", "", &ret,
			     err, sizeof(err)) != 0)
		stp_msg(s, "warning", "cannot take the probes out of process %d: %s",
			(int)s->opts.target_pid, err);
}

/* ---- records ---- */

int stp_dyn_drain(struct stp_script *s)
{
	int n, total = 0;

	while (s->dyn_ring && (n = stp_dmap__consume(s->dyn_ring, stp_events_record, s)) > 0)
		total += n;
	return total;
}

/* The poll timer expired: read it, then the ring buffer. */
void stp_dyn_on_poll(struct stp_script *s)
{
	uint64_t expirations;

	if (read(s->dyn_poll_fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		stp_msg(s, "warning", "the ring buffer's timer: %s", strerror(errno));
	stp_dyn_drain(s);
}
