/*
 * scripts.c - the scripts pmdastap serves, and their children's lives.
 *
 * A script comes from the autostart directory at start, or from
 * pmstore stap.control.register.  Its text is copied to
 * state_dir/<name>.stp (root only), which is what its child compiles, so
 * diagnostics read name.stp:LINE:COL and nothing can change the text
 * between the checks and the compile.  Then:
 *
 *	starting --ready--> running --exit()--> exited
 *	    |                  |
 *	    |                  +--crash, kill, errors--> restarting --back-off--> starting
 *	    +--load/attach failed, start_timeout---------^
 *	    +--does not compile--> failed
 *
 * The back-off doubles from restart_backoff_min to restart_backoff_max,
 * and starts again at the minimum after a run of a minute or more.
 * Deregistration sends SIGTERM (SIGKILL after stop_timeout) and forgets
 * the script once its child is gone.  A child leads a process group of
 * its own, so signals reach its pmstap too.  An exited script's maps stay
 * open: its final values are still served.
 *
 * A script handed over by its user's pmstap (handover.c) has no child:
 * it is running from its ready message to the end of its connection, and
 * then it goes.  It is never restarted.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "pmdastap.h"
#include "../runtime/dyninst/dmap.h"
#include "../runtime/user/handover.h"
#include "../runtime/user/meta_wire.h"
#include "../runtime/user/msg.h"

#define ERRTEXT_MAX 8192
#define STABLE_RUN_S 60.0	/* a run this long resets the back-off */
#define SAFE_RULE "autostart scripts must be regular files owned by root and writable only by root"

struct stap_script **stap_scripts;
int stap_nscripts;

static const char *const reserved_names[] = { "control", "scripts", "probes", "info" };

static int script_retire(struct stap_script *sc, const char *why);

double stap_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *stap_status_name(enum stap_status st)
{
	switch (st) {
	case STAP_STATUS_STARTING: return "starting";
	case STAP_STATUS_RUNNING: return "running";
	case STAP_STATUS_RESTARTING: return "restarting";
	case STAP_STATUS_FAILED: return "failed";
	case STAP_STATUS_EXITED: return "exited";
	case STAP_STATUS_REFUSED: return "refused";
	case STAP_STATUS_STOPPING: return "stopping";
	}
	return "unknown";
}

/* ---- text buffers ---- */

void stap_text_append(struct stap_text *t, const char *p, size_t n)
{
	size_t max = t->max ? t->max : ERRTEXT_MAX;

	if (n > max) {
		p += n - max;
		n = max;
	}
	if (t->len + n > max) {		/* keep the tail */
		size_t drop = t->len + n - max;

		memmove(t->buf, t->buf + drop, t->len - drop);
		t->len -= drop;
	}
	if (t->len + n + 1 > t->size) {
		size_t size = t->len + n + 1 < 256 ? 256 : (t->len + n + 1) * 2;
		char *b = realloc(t->buf, size);

		if (!b)
			return;
		t->buf = b;
		t->size = size;
	}
	memcpy(t->buf + t->len, p, n);
	t->len += n;
	t->buf[t->len] = '\0';
}

void stap_text_reset(struct stap_text *t)
{
	t->len = 0;
	if (t->buf)
		t->buf[0] = '\0';
}

void stap_text_free(struct stap_text *t)
{
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

static void set_error(struct stap_script *sc, const char *text)
{
	free(sc->error);
	sc->error = text && *text ? strdup(text) : NULL;
}

/* ---- the registry ---- */

struct stap_script *stap_script_find(const char *name)
{
	for (int i = 0; i < stap_nscripts; i++)
		if (!stap_scripts[i]->removed && strcmp(stap_scripts[i]->name, name) == 0)
			return stap_scripts[i];
	return NULL;
}

struct stap_script *stap_script_by_cluster(int cluster)
{
	for (int i = 0; i < stap_nscripts; i++)
		if (!stap_scripts[i]->removed && stap_scripts[i]->cluster == cluster)
			return stap_scripts[i];
	return NULL;
}

const char *stap_script_name_problem(const char *name)
{
	size_t n = strlen(name);

	if (n == 0)
		return "the name is empty";
	if (n > 64)
		return "the name is longer than 64 characters";
	if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z')))
		return "a metric name component must start with a letter";
	for (size_t i = 1; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return "a metric name component may only hold letters, digits and '_'";
	}
	for (size_t i = 0; i < sizeof(reserved_names) / sizeof(reserved_names[0]); i++)
		if (strcmp(name, reserved_names[i]) == 0)
			return "the name is reserved (control, scripts, probes and info are "
			       "pmdastap's own)";
	return NULL;
}

static int live_scripts(void)
{
	int n = 0;

	for (int i = 0; i < stap_nscripts; i++)
		n += !stap_scripts[i]->removed;
	return n;
}

static struct stap_script *script_new(const char *name, enum stap_origin origin)
{
	struct stap_script *sc = calloc(1, sizeof(*sc));
	struct stap_script **more = realloc(stap_scripts,
					    (size_t)(stap_nscripts + 1) * sizeof(*stap_scripts));
	int inst;

	if (!sc || !more || !(sc->name = strdup(name))) {
		free(sc);
		if (more)
			stap_scripts = more;
		return NULL;
	}
	stap_scripts = more;
	inst = stap_identity_script(name);
	if (inst < 0) {
		free(sc->name);
		free(sc);
		return NULL;
	}
	sc->origin = origin;
	sc->ncpus = libbpf_num_possible_cpus();
	if (sc->ncpus <= 0)
		sc->ncpus = 1;
	sc->inst = inst;
	sc->cluster = STAP_CLUSTER_FIRST_SCRIPT + inst;
	sc->ctl_fd = sc->out_fd = sc->err_fd = sc->dseg_fd = sc->umaps_fd = -1;
	sc->queue = -1;
	sc->errtext.max = ERRTEXT_MAX;
	sc->partial.max = stap_config.max_line_bytes;
	pmdaCacheStore(stap_indom(STAP_INDOM_SCRIPTS), PMDA_CACHE_ADD, name, sc);
	stap_scripts[stap_nscripts++] = sc;
	stap_output_open(sc);
	return sc;
}

static void script_free(struct stap_script *sc)
{
	int i;

	for (i = 0; i < stap_nscripts && stap_scripts[i] != sc; i++)
		;
	if (i < stap_nscripts) {
		memmove(&stap_scripts[i], &stap_scripts[i + 1],
			(size_t)(stap_nscripts - i - 1) * sizeof(*stap_scripts));
		stap_nscripts--;
	}
	if (!stap_script_find(sc->name))
		pmdaCacheStore(stap_indom(STAP_INDOM_SCRIPTS), PMDA_CACHE_HIDE, sc->name, NULL);
	stap_maps_close(sc);
	stap_snaps_free(sc);
	stap_metrics_free(sc);
	stap_output_close(sc);
	for (int *fd = (int[]){ sc->ctl_fd, sc->out_fd, sc->err_fd, sc->dseg_fd }, k = 0; k < 4; k++)
		if (fd[k] >= 0)
			close(fd[k]);
	stp_dseg__free(sc->dseg);
	stp_meta__free(sc->owned_meta);
	if (sc->dl)
		dlclose(sc->dl);
	if (sc->origin == STAP_ORIGIN_REGISTERED && sc->file)
		unlink(sc->file);
	stap_text_free(&sc->errtext);
	stap_text_free(&sc->partial);
	free(sc->attached);
	free(sc->watched);
	free(sc->build_dir);
	free(sc->error);
	free(sc->source);
	free(sc->file);
	free(sc->name);
	free(sc);
}

/* ---- directories and private copies ---- */

/* DIR as a directory only root can touch (made if need be). */
static int private_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		pmNotifyErr(LOG_ERR, "cannot make %s: %s", dir, strerror(errno));
		return -1;
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		pmNotifyErr(LOG_ERR, "%s must be a directory of uid %d that no one else can "
			    "write", dir, (int)geteuid());
		return -1;
	}
	return 0;
}

/*
 * PATH holds TEXT already, a file of ours no one else can write: kept as
 * it is, so that pmstap's manifest (its inputs unchanged since the build)
 * lets the next start skip passes 1-4.
 */
static bool holds(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	char *have = NULL;
	bool same;

	if (fd < 0)
		return false;
	same = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	       !(st.st_mode & 077) && (size_t)st.st_size == len && (have = malloc(len + 1)) &&
	       read(fd, have, len + 1) == (ssize_t)len && memcmp(have, text, len) == 0;
	free(have);
	close(fd);
	return same;
}

/* TEXT as DIR/NAME.stp (DIR root's only); its path (malloc'd), or NULL after logging why. */
static char *write_private(const char *dir, const char *name, const char *text)
{
	char *path;
	FILE *f;
	int fd;

	if (private_dir(dir) < 0 || asprintf(&path, "%s/%s.stp", dir, name) < 0)
		return NULL;
	if (holds(path, text))
		return path;
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		pmNotifyErr(LOG_ERR, "cannot write %s: %s", path, strerror(errno));
		if (!f && fd >= 0)
			close(fd);
		free(path);
		return NULL;
	}
	return path;
}

static int write_copy(struct stap_script *sc)
{
	char *path = private_dir(stap_config.state_dir) < 0 ? NULL :
		     write_private(stap_config.state_dir, sc->name, sc->source);

	if (!path)
		return -1;
	free(sc->file);
	sc->file = path;
	return 0;
}

/* ---- starting a child ---- */

/* A child leads its own process group: its pmstap goes with it. */
static void kill_child(struct stap_script *sc, int sig)
{
	if (sc->pid <= 0)
		return;
	if (kill(-sc->pid, sig) < 0)
		kill(sc->pid, sig);
}

/* Put from[i] at fd i (0..n-1) whatever their numbers, then close the rest. */
static void arrange_fds(int *from, int n)
{
	int high[4];

	for (int i = 0; i < n; i++)
		high[i] = fcntl(from[i], F_DUPFD, 100);
	for (int i = 0; i < n; i++)
		dup2(high[i], i);
	close_range((unsigned int)n, ~0U, 0);
}

static void nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static void script_start(struct stap_script *sc)
{
	int ctl[2], out[2], err[2], devnull;
	pid_t parent = getpid(), pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0)
		goto fail;
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		goto fail;
	pid = fork();
	if (pid < 0)
		goto fail;
	if (pid == 0) {
		setpgid(0, 0);
		devnull = open("/dev/null", O_RDONLY);
		arrange_fds((int[]){ devnull, out[1], err[1], ctl[1] }, 4);
		stap_child_main(sc, parent);
	}
	setpgid(pid, pid);	/* as the child does: whichever runs first */
	close(ctl[1]);
	close(out[1]);
	close(err[1]);
	sc->ctl_fd = ctl[0];
	sc->out_fd = out[0];
	sc->err_fd = err[0];
	nonblock(sc->ctl_fd);
	nonblock(sc->out_fd);
	nonblock(sc->err_fd);
	sc->pid = pid;
	sc->status = STAP_STATUS_STARTING;
	sc->started = stap_now();
	sc->running_since = 0;
	sc->timed_out = false;
	stap_text_reset(&sc->errtext);
	if (pmDebugOptions.appl0)
		pmNotifyErr(LOG_DEBUG, "script %s: child %d started", sc->name, (int)pid);
	return;
fail:
	pmNotifyErr(LOG_ERR, "script %s: cannot start a child: %s", sc->name, strerror(errno));
	sc->status = STAP_STATUS_RESTARTING;
	sc->restart_at = stap_now() + stap_config.backoff_max;
}

/* ---- autostart ---- */

static void refuse(struct stap_script *sc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void refuse(struct stap_script *sc, const char *fmt, ...)
{
	va_list ap;
	char *why = NULL;

	va_start(ap, fmt);
	if (vasprintf(&why, fmt, ap) < 0)
		why = NULL;
	va_end(ap);
	sc->status = STAP_STATUS_REFUSED;
	set_error(sc, why);
	pmNotifyErr(LOG_ERR, "script %s refused: %s", sc->name, why ? why : "?");
	free(why);
}

/* Why an autostart file may not run as root, or NULL. */
static const char *unsafe_file(const struct stat *st, char *buf, size_t size)
{
	if (!S_ISREG(st->st_mode))
		return "it is not a regular file";
	if (st->st_uid != 0) {
		snprintf(buf, size, "it is owned by uid %d, not root", (int)st->st_uid);
		return buf;
	}
	if (st->st_mode & 022) {
		snprintf(buf, size, "it is writable by %s (mode %04o)",
			 (st->st_mode & 002) ? "everyone" : "its group",
			 (unsigned int)(st->st_mode & 07777));
		return buf;
	}
	if ((size_t)st->st_size > stap_config.max_script_bytes) {
		snprintf(buf, size, "it is larger than max_script_bytes (%zu)",
			 stap_config.max_script_bytes);
		return buf;
	}
	return NULL;
}

static char *read_all(int fd, size_t max)
{
	size_t len = 0;
	char *text = malloc(max + 1);
	ssize_t n;

	if (!text)
		return NULL;
	while (len < max && (n = read(fd, text + len, max - len)) > 0)
		len += (size_t)n;
	text[len] = '\0';
	return text;
}

static void autostart_file(const char *dir, const char *file)
{
	char name[128], why[160];
	const char *problem;
	struct stap_script *sc;
	struct stat st;
	int fd;

	snprintf(name, sizeof(name), "%.*s", (int)(strlen(file) - 4), file);
	if ((problem = stap_script_name_problem(name))) {
		/* the file still gets an instance, to say why it does not run */
		if (stap_script_find(name) || strlen(name) > 64 || !*name ||
		    !(sc = script_new(name, STAP_ORIGIN_AUTOSTART))) {
			pmNotifyErr(LOG_ERR, "%s/%s refused: %s", dir, file, problem);
		} else {
			lstat(file, &sc->src_st);
			refuse(sc, "%s/%s: %s", dir, file, problem);
		}
		return;
	}
	if (live_scripts() >= stap_config.max_scripts) {
		pmNotifyErr(LOG_ERR, "%s/%s not started: there are max_scripts (%d) scripts already",
			    dir, file, stap_config.max_scripts);
		return;
	}
	if (stap_script_find(name) || !(sc = script_new(name, STAP_ORIGIN_AUTOSTART)))
		return;
	lstat(file, &sc->src_st);
	fd = openat(AT_FDCWD, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ELOOP) {
		refuse(sc, "%s/%s: it is a symbolic link; %s", dir, file, SAFE_RULE);
		return;
	}
	if (fd < 0) {
		refuse(sc, "cannot open %s/%s: %s", dir, file, strerror(errno));
		return;
	}
	if (fstat(fd, &st) < 0 || (problem = unsafe_file(&st, why, sizeof(why)))) {
		refuse(sc, "%s/%s: %s; %s", dir, file, problem ? problem : strerror(errno), SAFE_RULE);
		close(fd);
		return;
	}
	sc->source = read_all(fd, stap_config.max_script_bytes);
	close(fd);
	if (!sc->source || write_copy(sc) < 0) {
		refuse(sc, "cannot copy %s/%s to %s", dir, file, stap_config.state_dir);
		return;
	}
	pmNotifyErr(LOG_INFO, "script %s: starting from %s/%s", name, dir, file);
	script_start(sc);
}

static int is_stp(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 4 && strcmp(d->d_name + n - 4, ".stp") == 0 && d->d_name[0] != '.';
}

/* Is DIR usable?  Said in the log when the answer changes (rescans repeat it). */
static bool dir_safe(const char *dir)
{
	static int was = -1;
	struct stat st;
	int now;

	if (stat(dir, &st) < 0) {
		if (was != 0)
			pmNotifyErr(LOG_INFO, "no autostart directory %s: %s", dir, strerror(errno));
		now = 0;
	} else if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022)) {
		if (was != 0)
			pmNotifyErr(LOG_ERR, "autostart directory %s refused: it must be a directory "
				    "owned by root and writable only by root (uid %d, mode %04o)",
				    dir, (int)st.st_uid, (unsigned int)(st.st_mode & 07777));
		now = 0;
	} else {
		now = 1;
	}
	was = now;
	return now;
}

/*
 * The directory is scanned at start and again whenever inotify says it
 * changed (RESCAN_DELAY_S after the last event, so that a file being
 * written is read whole), and every RESCAN_S seconds in case inotify
 * missed something or the directory appeared later.  A new file starts,
 * a file gone stops its script, and a file that changed in any way
 * (contents, owner, mode, a new file renamed over it) stops and starts
 * again with the same checks: the script keeps its name and identity.
 */
#define RESCAN_S 5.0
#define RESCAN_DELAY_S 0.2

static int watch_fd = -1;
static bool watching;		/* watch_fd watches the directory */
static double rescan_at;	/* an inotify event asked for a rescan (0: none) */
static double periodic_at;

bool stap_same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mode == b->st_mode && a->st_uid == b->st_uid &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static struct stap_script *autostart_find(const char *name)
{
	struct stap_script *sc = stap_script_find(name);

	return sc && sc->origin == STAP_ORIGIN_AUTOSTART ? sc : NULL;
}

/* One file of the directory (the cwd): true when a script came, went or changed. */
static bool rescan_file(const char *dir, const char *file)
{
	char name[128];
	struct stap_script *sc;
	struct stat st;

	snprintf(name, sizeof(name), "%.*s", (int)(strlen(file) - 4), file);
	sc = autostart_find(name);
	if (sc && lstat(file, &st) == 0 && stap_same_file(&st, &sc->src_st)) {
		sc->src_seen = true;
		return false;
	}
	if (sc) {
		pmNotifyErr(LOG_INFO, "script %s: %s/%s changed: starting it again", name, dir, file);
		script_retire(sc, "stopped: its file changed");
	} else if (stap_script_find(name)) {
		return false;	/* a registered script has the name */
	}
	autostart_file(dir, file);
	if ((sc = autostart_find(name)))
		sc->src_seen = true;
	return true;
}

static void watch_dir(const char *dir)
{
	if (watch_fd < 0)
		watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (watch_fd >= 0 && !watching)
		watching = inotify_add_watch(watch_fd, dir, IN_CREATE | IN_DELETE | IN_MOVED_FROM |
					     IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB |
					     IN_DELETE_SELF | IN_MOVE_SELF) >= 0;
}

/* The files of DIR, or none when it is missing or unsafe; true when anything changed. */
static bool rescan_dir(const char *dir)
{
	struct dirent **list;
	char cwd[MAXPATHLEN];
	bool changed = false;
	int n;

	if (!dir_safe(dir) || !getcwd(cwd, sizeof(cwd)) || chdir(dir) < 0)
		return false;
	watch_dir(dir);
	n = scandir(".", &list, is_stp, alphasort);
	for (int i = 0; i < n; i++) {
		changed |= rescan_file(dir, list[i]->d_name);
		free(list[i]);
	}
	if (n >= 0)
		free(list);
	if (chdir(cwd) < 0)
		pmNotifyErr(LOG_WARNING, "cannot return to %s: %s", cwd, strerror(errno));
	return changed;
}

static void autostart_rescan(void)
{
	bool changed;

	periodic_at = stap_now() + RESCAN_S;
	for (int i = 0; i < stap_nscripts; i++)
		stap_scripts[i]->src_seen = false;
	changed = rescan_dir(stap_config.autostart_dir);
	for (int i = stap_nscripts - 1; i >= 0; i--) {
		struct stap_script *sc = stap_scripts[i];

		if (sc->origin == STAP_ORIGIN_AUTOSTART && !sc->removed && !sc->src_seen) {
			script_retire(sc, "stopped: its autostart file is gone");
			changed = true;
		}
	}
	if (changed)
		stap_metrics_rebuild();
}

int stap_autostart_fd(void)
{
	return watch_fd;
}

void stap_autostart_event(void)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(watch_fd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + n; p += sizeof(struct inotify_event) +
						      ((struct inotify_event *)p)->len)
			if (((struct inotify_event *)p)->mask & (IN_IGNORED | IN_DELETE_SELF |
								 IN_MOVE_SELF))
				watching = false;	/* watched again at the rescan */
	rescan_at = stap_now() + RESCAN_DELAY_S;
}

/* ---- registered scripts kept across restarts ---- */

/*
 * state_dir/registered/<name>.stp: the text of every registered script,
 * root's only, written when registration succeeds and removed at
 * deregistration; started again when the PMDA starts (if registration is
 * still enabled), after the autostart scripts.
 */
static char *registered_path(const char *name)
{
	char *path = NULL;

	if (name && asprintf(&path, "%s/registered%s%s%s", stap_config.state_dir, *name ? "/" : "",
			     name, *name ? ".stp" : "") < 0)
		path = NULL;
	return path;
}

static void keep_registered(struct stap_script *sc)
{
	char *dir = registered_path(""), *path = registered_path(sc->name), *tmp = NULL;
	size_t len = strlen(sc->source);
	int fd = -1;

	if (!dir || !path || private_dir(stap_config.state_dir) < 0 || private_dir(dir) < 0 ||
	    asprintf(&tmp, "%s.XXXXXX", path) < 0 || (fd = mkstemp(tmp)) < 0 ||
	    write(fd, sc->source, len) != (ssize_t)len || fsync(fd) < 0 || rename(tmp, path) < 0) {
		pmNotifyErr(LOG_ERR, "script %s: cannot keep it for the next start in %s: %s",
			    sc->name, dir ? dir : "?", strerror(errno));
		if (tmp && fd >= 0)
			unlink(tmp);
	}
	if (fd >= 0)
		close(fd);
	free(tmp);
	free(path);
	free(dir);
}

static void forget_registered(const char *name)
{
	char *path = registered_path(name);

	if (path && unlink(path) < 0 && errno != ENOENT)
		pmNotifyErr(LOG_WARNING, "cannot remove %s: %s", path, strerror(errno));
	free(path);
}

/* One kept script (the cwd is the registered directory). */
static void restart_registered(const char *file)
{
	char name[128], why[160];
	const char *problem = NULL;
	struct stap_script *sc;
	struct stat st;
	int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	snprintf(name, sizeof(name), "%.*s", (int)(strlen(file) - 4), file);
	if (fd < 0 || fstat(fd, &st) < 0 || (problem = unsafe_file(&st, why, sizeof(why))) ||
	    (problem = stap_script_name_problem(name)) || stap_script_find(name) ||
	    live_scripts() >= stap_config.max_scripts) {
		pmNotifyErr(LOG_ERR, "registered script %s not started: %s", name,
			    fd < 0 ? strerror(errno) : problem ? problem :
			    stap_script_find(name) ? "a script has its name" : "max_scripts reached");
		if (fd >= 0)
			close(fd);
		return;
	}
	sc = script_new(name, STAP_ORIGIN_REGISTERED);
	if (sc && (sc->source = read_all(fd, stap_config.max_script_bytes)) && write_copy(sc) == 0) {
		pmNotifyErr(LOG_INFO, "script %s: registered before the last start: starting it", name);
		script_start(sc);
	} else if (sc) {
		refuse(sc, "cannot copy the registered script to %s", stap_config.state_dir);
	}
	close(fd);
}

static void restart_registered_all(void)
{
	char *dir = registered_path(""), cwd[MAXPATHLEN];
	struct dirent **list;
	struct stat st;
	int n;

	if (!dir || stat(dir, &st) < 0 || !getcwd(cwd, sizeof(cwd))) {
		free(dir);
		return;
	}
	if (!stap_config.registration)
		pmNotifyErr(LOG_WARNING, "registration is disabled: the scripts kept in %s are "
			    "not started", dir);
	else if (private_dir(dir) == 0 && chdir(dir) == 0) {
		n = scandir(".", &list, is_stp, alphasort);
		for (int i = 0; i < n; i++) {
			restart_registered(list[i]->d_name);
			free(list[i]);
		}
		if (n >= 0)
			free(list);
		if (chdir(cwd) < 0)
			pmNotifyErr(LOG_WARNING, "cannot return to %s: %s", cwd, strerror(errno));
	}
	free(dir);
}

void stap_scripts_autostart(void)
{
	autostart_rescan();
	restart_registered_all();
	stap_metrics_rebuild();
}

/* ---- registration ---- */

/*
 * pmstap -p2 on TEXT as NAME.stp, in state_dir/check, before anything of
 * the script exists: a refused script takes no identity (a cluster) and
 * no event queue, which libpcp_pmda never frees.  0, pmstap's status, or
 * -1 when it could not run.
 */
static int check_registration(const char *name, const char *text, char **diag)
{
	char *dir, *path;
	int rc;

	*diag = NULL;
	if (private_dir(stap_config.state_dir) < 0 ||
	    asprintf(&dir, "%s/check", stap_config.state_dir) < 0)
		return -1;
	path = write_private(dir, name, text);
	rc = path ? stap_check_script(dir, path, diag) : -1;
	if (path)
		unlink(path);
	free(path);
	free(dir);
	return rc;
}

struct stap_script *stap_script_register(const char *name, const char *text, char **why)
{
	struct stap_script *sc;
	char *diag = NULL;
	int rc;

	*why = NULL;
	if (live_scripts() >= stap_config.max_scripts) {
		if (asprintf(why, "too many scripts: max_scripts is %d", stap_config.max_scripts) < 0)
			*why = NULL;
		return NULL;
	}
	if ((rc = check_registration(name, text, &diag)) != 0) {
		*why = diag ? diag : strdup(rc < 0 ? "cannot check the script: see the pmdastap log"
						   : "pmstap rejected the script");
		return NULL;
	}
	free(diag);
	sc = script_new(name, STAP_ORIGIN_REGISTERED);
	if (!sc || !(sc->source = strdup(text)) || write_copy(sc) < 0) {
		*why = strdup("cannot keep the script: see the pmdastap log");
		if (sc)
			script_free(sc);
		return NULL;
	}
	pmNotifyErr(LOG_INFO, "script %s: registered", name);
	keep_registered(sc);
	script_start(sc);
	stap_metrics_rebuild();
	return sc;
}

struct stap_script *stap_script_handed(const char *name, int fd, pid_t pid, char *why, size_t size)
{
	struct stap_script *sc;

	if (live_scripts() >= stap_config.max_scripts) {
		snprintf(why, size, "too many scripts: max_scripts is %d", stap_config.max_scripts);
		return NULL;
	}
	sc = script_new(name, STAP_ORIGIN_HANDOVER);
	if (!sc) {
		snprintf(why, size, "pmdastap is out of memory or identities: see its log");
		return NULL;
	}
	sc->ctl_fd = fd;
	sc->peer_pid = pid;
	sc->status = STAP_STATUS_STARTING;
	sc->started = stap_now();
	return sc;
}

int stap_script_deregister(struct stap_script *sc)
{
	if (sc->origin == STAP_ORIGIN_REGISTERED)
		forget_registered(sc->name);
	return script_retire(sc, "deregistered");
}

/* Stop SC (SIGTERM, then SIGKILL after stop_timeout) and forget it once its child is gone. */
static int script_retire(struct stap_script *sc, const char *why)
{
	sc->removed = true;
	pmdaCacheStore(stap_indom(STAP_INDOM_SCRIPTS), PMDA_CACHE_HIDE, sc->name, NULL);
	pmNotifyErr(LOG_INFO, "script %s: %s", sc->name, why);
	if (sc->pid > 0) {
		sc->status = STAP_STATUS_STOPPING;
		kill_child(sc, SIGTERM);
		sc->kill_at = stap_now() + stap_config.stop_timeout;
		stap_metrics_rebuild();
		return 0;
	}
	script_free(sc);
	stap_metrics_rebuild();
	return 0;
}

/* ---- messages from a child ---- */

void stap_script_describe(struct stap_script *sc, const struct stp_meta *meta)
{
	stap_maps_close(sc);
	stap_snaps_free(sc);
	stap_metrics_free(sc);
	sc->meta = meta;
	free(sc->attached);
	sc->attached = calloc((size_t)meta->nprobes + 1, 1);
	stap_metrics_build(sc);
	stap_metrics_rebuild();
}

static int load_meta(struct stap_script *sc, const char *dir)
{
	char *path;
	void *dl;
	const struct stp_meta *meta;

	if (asprintf(&path, "%s/script.so", dir) < 0)
		return -1;
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	free(path);
	if (!dl) {
		pmNotifyErr(LOG_ERR, "script %s: cannot load %s/script.so: %s", sc->name, dir, dlerror());
		return -1;
	}
	meta = dlsym(dl, STP_META_SYMBOL);
	if (!meta || meta->version != STP_META_VERSION) {
		pmNotifyErr(LOG_ERR, "script %s: %s/script.so has no metadata of version %d",
			    sc->name, dir, STP_META_VERSION);
		dlclose(dl);
		return -1;
	}
	stap_script_describe(sc, meta);		/* the last meta's metrics go before its script.so */
	if (sc->dl)
		dlclose(sc->dl);
	sc->dl = dl;
	free(sc->build_dir);
	sc->build_dir = strdup(dir);
	stap_watch_reset(sc);
	return 0;
}

static void on_build(struct stap_script *sc, const char *dir)
{
	if (sc->build_dir && strcmp(sc->build_dir, dir) == 0 && sc->meta)
		return;		/* a restart of the same build: names and ids as they were */
	if (load_meta(sc, dir) < 0)
		kill_child(sc, SIGKILL);
}

void stap_pending_add(struct stap_script *sc, const char *name, int fd)
{
	struct stap_mapfd *more;

	if (fd < 0)
		return;
	more = realloc(sc->pending, (size_t)(sc->npending + 1) * sizeof(*more));
	if (!more || !(name = strdup(name))) {
		close(fd);
		if (more)
			sc->pending = more;
		return;
	}
	sc->pending = more;
	more[sc->npending].name = (char *)name;
	more[sc->npending].fd = fd;
	sc->npending++;
}

/* A probe's program: kept with the maps as "prog:INDEX" until the ready message. */
static void on_prog(struct stap_script *sc, const char *index, int fd)
{
	char name[32];

	snprintf(name, sizeof(name), "prog:%.20s", index);
	stap_pending_add(sc, name, fd);
}

static void on_ready(struct stap_script *sc, const unsigned char *flags, size_t n)
{
	if (!sc->meta)
		return;
	for (int i = 0; i < sc->meta->nprobes; i++)
		sc->attached[i] = (size_t)i < n ? flags[i] : 1;
	stap_maps_adopt(sc);
	sc->status = sc->removed ? STAP_STATUS_STOPPING : STAP_STATUS_RUNNING;
	sc->running_since = stap_now();
	pmNotifyErr(LOG_INFO, "script %s: running (pid %d)", sc->name, (int)sc->pid);
}

/* A handed-over script's end, or a message it should not have sent: said, and it goes. */
static void handover_end(struct stap_script *sc, const char *why)
{
	if (why) {
		stp_msg_send(sc->ctl_fd, STP_HO_REFUSE, why, strlen(why), -1);
		pmNotifyErr(LOG_ERR, "script %s: %s", sc->name, why);
		set_error(sc, why);
	}
	close(sc->ctl_fd);
	sc->ctl_fd = -1;
	sc->ended = true;
}

/* A message of a handed-over script's pmstap; FD is taken. */
static void on_handover_msg(struct stap_script *sc, const char *buf, size_t n, int fd)
{
	char why[512] = "";
	int rc = 0;

	switch (buf[0]) {
	case STP_HO_META:
		rc = fd < 0 ? -1 : stap_handover_meta(sc, fd, why, sizeof(why));
		break;
	case STP_HO_SEGMENT:
		rc = fd < 0 ? -1 : stap_handover_segment(sc, fd, why, sizeof(why));
		if (rc == 0)
			fd = -1;	/* the script's now */
		break;
	case STP_HO_OUTPUT:
		if (fd < 0 || sc->out_fd >= 0) {
			rc = -1;
			break;
		}
		sc->out_fd = fd;
		nonblock(fd);
		fd = -1;
		break;
	case STP_HO_READY:
		if (!sc->meta || !sc->dseg || sc->status != STAP_STATUS_STARTING) {
			snprintf(why, sizeof(why), "ready before its description and data");
			rc = -1;
			break;
		}
		on_ready(sc, (const unsigned char *)buf + 1, n - 1);
		stp_msg_send(sc->ctl_fd, STP_HO_ACCEPT, NULL, 0, -1);
		break;
	default:
		snprintf(why, sizeof(why), "unknown message '%c'", buf[0]);
		rc = -1;
	}
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		handover_end(sc, *why ? why : "a message came without what it carries");
}

void stap_script_ctl_ready(struct stap_script *sc)
{
	static char buf[STAP_MSG_MAX];
	ssize_t n;
	int fd;

	while (sc->ctl_fd >= 0) {
		n = stp_msg_recv(sc->ctl_fd, buf, sizeof(buf), &fd, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0 && sc->origin == STAP_ORIGIN_HANDOVER) {
			handover_end(sc, NULL);
			return;
		}
		if (n <= 0) {
			close(sc->ctl_fd);
			sc->ctl_fd = -1;
			return;
		}
		if (sc->origin == STAP_ORIGIN_HANDOVER) {
			on_handover_msg(sc, buf, (size_t)n, fd);
			continue;
		}
		switch (buf[0]) {
		case STAP_MSG_BUILD: on_build(sc, buf + 1); break;
		case STAP_MSG_MAP: stap_pending_add(sc, buf + 1, fd); fd = -1; break;
		case STAP_MSG_MODULE: stap_kmod_pending(sc, buf + 1, fd); fd = -1; break;
		case STAP_MSG_PROG: on_prog(sc, buf + 1, fd); fd = -1; break;
		case STAP_MSG_READY: on_ready(sc, (unsigned char *)buf + 1, (size_t)n - 1); break;
		default:
			pmNotifyErr(LOG_WARNING, "script %s: unknown message '%c'", sc->name, buf[0]);
		}
		if (fd >= 0)
			close(fd);
	}
}

/* stderr: logged line by line, and kept for stap.scripts.error. */
void stap_script_err_ready(struct stap_script *sc)
{
	char buf[4096];
	ssize_t n;

	while (sc->err_fd >= 0) {
		n = read(sc->err_fd, buf, sizeof(buf) - 1);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			close(sc->err_fd);
			sc->err_fd = -1;
			return;
		}
		buf[n] = '\0';
		stap_text_append(&sc->errtext, buf, (size_t)n);
		for (char *line = buf, *nl; *line; line = nl ? nl + 1 : line + strlen(line)) {
			nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			if (*line)
				pmNotifyErr(LOG_INFO, "[%s] %s", sc->name, line);
		}
	}
}

/* ---- a child's end ---- */

static void describe_end(struct stap_script *sc, int wstatus, char *buf, size_t size)
{
	if (sc->timed_out)
		snprintf(buf, size, "did not start within start_timeout (%d s)",
			 stap_config.start_timeout);
	else if (WIFSIGNALED(wstatus))
		snprintf(buf, size, "killed by signal %d (%s)", WTERMSIG(wstatus),
			 strsignal(WTERMSIG(wstatus)));
	else if (WEXITSTATUS(wstatus) == STAP_CHILD_COMPILE)
		snprintf(buf, size, "pmstap could not compile it");
	else if (WEXITSTATUS(wstatus) == STAP_CHILD_RUNTIME)
		snprintf(buf, size, "it asks for a runtime that cannot run here");
	else if (WEXITSTATUS(wstatus) == STAP_CHILD_LOAD)
		snprintf(buf, size, "it could not be loaded or attached");
	else if (WEXITSTATUS(wstatus) == STAP_CHILD_ERRORS)
		snprintf(buf, size, "it stopped after runtime errors");
	else
		snprintf(buf, size, "its process exited with status %d", WEXITSTATUS(wstatus));
}

static void next_backoff(struct stap_script *sc)
{
	double ran = sc->running_since > 0 ? stap_now() - sc->running_since : 0;

	if (ran >= STABLE_RUN_S || sc->backoff <= 0)
		sc->backoff = stap_config.backoff_min;
	else
		sc->backoff = sc->backoff * 2 > stap_config.backoff_max ? stap_config.backoff_max :
									  sc->backoff * 2;
}

static void record_failure(struct stap_script *sc, const char *reason)
{
	struct stap_text t = { .max = ERRTEXT_MAX + 256 };

	if (sc->errtext.len)
		stap_text_append(&t, sc->errtext.buf, sc->errtext.len);
	if (t.len && t.buf[t.len - 1] != '\n')
		stap_text_append(&t, "\n", 1);
	stap_text_append(&t, sc->name, strlen(sc->name));
	stap_text_append(&t, ": ", 2);
	stap_text_append(&t, reason, strlen(reason));
	set_error(sc, t.buf);
	stap_text_free(&t);
}

static void restart_at_once(struct stap_script *sc)
{
	sc->restart_now = false;
	sc->status = STAP_STATUS_RESTARTING;
	sc->restart_at = stap_now();
	sc->backoff = 0;
	sc->restarts++;
}

void stap_script_restart(struct stap_script *sc, const char *why)
{
	pmNotifyErr(LOG_INFO, "script %s: %s", sc->name, why);
	if (sc->pid <= 0) {
		restart_at_once(sc);
		return;
	}
	sc->restart_now = true;	/* its end (on_exit_status) starts it again */
	kill_child(sc, SIGTERM);
	sc->kill_at = stap_now() + stap_config.stop_timeout;
}

static void on_exit_status(struct stap_script *sc, int wstatus)
{
	bool ok = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == STAP_CHILD_OK && !sc->timed_out;
	char reason[160];

	if (sc->restart_now) {	/* stopped by stap_script_restart(): no failure */
		stap_maps_close(sc);
		restart_at_once(sc);
		return;
	}
	describe_end(sc, wstatus, reason, sizeof(reason));
	if (ok && sc->running_since > 0) {
		/* its maps stay open: the final values are still served */
		sc->status = STAP_STATUS_EXITED;
		if (sc->errtext.len)
			set_error(sc, sc->errtext.buf);
		pmNotifyErr(LOG_INFO, "script %s: exited", sc->name);
		return;
	}
	/* a run its errors stopped keeps its maps until the next run is ready:
	   its values and stap.scripts.errors still say what happened */
	if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != STAP_CHILD_ERRORS)
		stap_maps_close(sc);
	record_failure(sc, reason);
	if (WIFEXITED(wstatus) && (WEXITSTATUS(wstatus) == STAP_CHILD_COMPILE ||
				   WEXITSTATUS(wstatus) == STAP_CHILD_RUNTIME)) {
		sc->status = STAP_STATUS_FAILED;
		pmNotifyErr(LOG_ERR, "script %s: %s; not restarted", sc->name, reason);
		return;
	}
	next_backoff(sc);
	sc->status = STAP_STATUS_RESTARTING;
	sc->restart_at = stap_now() + sc->backoff;
	sc->restarts++;
	pmNotifyErr(LOG_ERR, "script %s: %s; restarting in %d s", sc->name, reason, sc->backoff);
}

static void close_child(struct stap_script *sc)
{
	stap_script_ctl_ready(sc);
	stap_script_err_ready(sc);
	stap_output_drain(sc);
	if (sc->ctl_fd >= 0)
		close(sc->ctl_fd);
	if (sc->out_fd >= 0)
		close(sc->out_fd);
	if (sc->err_fd >= 0)
		close(sc->err_fd);
	sc->ctl_fd = sc->out_fd = sc->err_fd = -1;
	for (int i = 0; i < sc->npending; i++) {
		close(sc->pending[i].fd);
		free(sc->pending[i].name);
	}
	free(sc->pending);
	sc->pending = NULL;
	sc->npending = 0;
	sc->pid = 0;
	sc->kill_at = 0;
}

/* Whatever a child's exit means; false when sc was freed. */
static bool child_ended(struct stap_script *sc, int wstatus)
{
	close_child(sc);
	if (sc->removed) {
		script_free(sc);
		return false;
	}
	on_exit_status(sc, wstatus);
	return true;
}

void stap_scripts_reap(void)
{
	for (int i = 0; i < stap_nscripts; i++) {
		struct stap_script *sc = stap_scripts[i];
		int wstatus;

		if (sc->pid <= 0 || waitpid(sc->pid, &wstatus, WNOHANG) != sc->pid)
			continue;
		if (!child_ended(sc, wstatus))
			i--;
	}
}

/* ---- time ---- */

static void deadline(double at, double now, double *next)
{
	if (at > 0 && (*next < 0 || at - now < *next))
		*next = at - now < 0 ? 0 : at - now;
}

/* A handed-over script whose pmstap ended, or did not get ready in start_timeout: it goes. */
static bool handover_tick(struct stap_script *sc, double now, double *next)
{
	double limit = sc->started + stap_config.start_timeout;

	if (sc->origin != STAP_ORIGIN_HANDOVER || sc->removed)
		return false;
	if (!sc->ended && sc->status == STAP_STATUS_STARTING && now < limit)
		deadline(limit, now, next);
	if (!sc->ended && (sc->status != STAP_STATUS_STARTING || now < limit))
		return false;
	stap_output_drain(sc);
	script_retire(sc, sc->ended ? "its pmstap ended" : "not ready within start_timeout");
	return true;
}

static void tick_one(struct stap_script *sc, double now, double *next)
{
	if (sc->status == STAP_STATUS_RESTARTING && !sc->removed && sc->pid <= 0) {
		if (now >= sc->restart_at)
			script_start(sc);
		else
			deadline(sc->restart_at, now, next);
	}
	if (sc->status == STAP_STATUS_STARTING && sc->pid > 0 && !sc->timed_out) {
		double limit = sc->started + stap_config.start_timeout;

		if (now >= limit) {
			sc->timed_out = true;
			kill_child(sc, SIGKILL);
		} else {
			deadline(limit, now, next);
		}
	}
	if (sc->kill_at > 0 && sc->pid > 0) {
		if (now >= sc->kill_at) {
			kill_child(sc, SIGKILL);
			sc->kill_at = 0;
		} else {
			deadline(sc->kill_at, now, next);
		}
	}
}

int stap_scripts_tick(void)
{
	double now = stap_now(), next = -1;

	if ((rescan_at > 0 && now >= rescan_at) || now >= periodic_at) {
		rescan_at = 0;
		autostart_rescan();
		now = stap_now();
	}
	deadline(rescan_at, now, &next);
	deadline(periodic_at, now, &next);
	stap_watch_tick(now, &next);

	stap_handover_tick(now, &next);
	for (int i = 0; i < stap_nscripts; i++)
		if (handover_tick(stap_scripts[i], now, &next))
			i--;	/* freed */
		else
			tick_one(stap_scripts[i], now, &next);
	return next < 0 ? -1 : (int)(next * 1000) + 1;
}

bool stap_scripts_starting(void)
{
	for (int i = 0; i < stap_nscripts; i++)
		if (!stap_scripts[i]->removed && stap_scripts[i]->origin == STAP_ORIGIN_AUTOSTART &&
		    stap_scripts[i]->status == STAP_STATUS_STARTING)
			return true;
	return false;
}

void stap_scripts_shutdown(void)
{
	double until = stap_now() + stap_config.stop_timeout;
	bool alive = true;

	for (int i = 0; i < stap_nscripts; i++)
		kill_child(stap_scripts[i], SIGTERM);
	while (alive && stap_now() < until) {
		alive = false;
		for (int i = 0; i < stap_nscripts; i++) {
			struct stap_script *sc = stap_scripts[i];

			if (sc->pid > 0 && waitpid(sc->pid, NULL, WNOHANG) == sc->pid)
				sc->pid = 0;
			alive |= sc->pid > 0;
		}
		if (alive)
			poll(NULL, 0, 20);
	}
	for (int i = 0; i < stap_nscripts; i++)
		if (stap_scripts[i]->pid > 0) {
			kill_child(stap_scripts[i], SIGKILL);
			waitpid(stap_scripts[i]->pid, NULL, 0);
			stap_scripts[i]->pid = 0;
		}
	for (int i = 0; i < stap_nscripts; i++)
		stap_maps_close(stap_scripts[i]);	/* kernel modules: unloaded */
}

/* ---- pmstap -p2, synchronously, for registration ---- */

static void exec_check(const char *dir, const char *file, int err)
{
	int devnull = open("/dev/null", O_RDWR);
	const char *runtime;

	arrange_fds((int[]){ devnull, devnull, err }, 3);
	if (chdir(dir) < 0)
		_exit(127);
	setenv("PMSTAP_CACHE", stap_config.cache_dir, 1);
	runtime = stap_script_runtime(file);
	if (!runtime)
		_exit(1);
	execl(stap_config.pmstap, stap_config.pmstap, "-p2", strcmp(runtime, "kernel") == 0 ?
	      "--runtime=kernel" : "--runtime=bpf", file, (char *)NULL);
	fprintf(stderr, "cannot run %s: %s\n", stap_config.pmstap, strerror(errno));
	_exit(127);
}

/* Read fd to its end into t: true, or false when `until` came first. */
static bool read_until(int fd, double until, struct stap_text *t)
{
	char buf[4096];
	ssize_t n;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		double left = until - stap_now();

		if (left <= 0 || poll(&pfd, 1, (int)(left * 1000) + 1) <= 0)
			return false;
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return true;
		stap_text_append(t, buf, (size_t)n);
	}
}

/*
 * pmstap's diagnostics as a client gets them: each line cut at
 * DIAG_LINE_MAX bytes ("..." after), and the first ERRTEXT_MAX bytes, so
 * that the first error stays when a line of the script is huge.
 */
#define DIAG_LINE_MAX 240

static char *client_diag(char *text)
{
	char *out = text ? malloc(ERRTEXT_MAX + 1) : NULL;
	size_t n = 0;

	if (!out)
		return text;
	for (const char *line = text; *line && n < ERRTEXT_MAX; ) {
		size_t len = strcspn(line, "\n"), take = len > DIAG_LINE_MAX ? DIAG_LINE_MAX - 3 : len;

		if (n + take + 5 > ERRTEXT_MAX)
			break;
		memcpy(out + n, line, take);
		n += take;
		if (take < len) {
			memcpy(out + n, "...", 3);
			n += 3;
		}
		line += len;
		if (*line == '\n') {
			out[n++] = '\n';
			line++;
		}
	}
	out[n] = '\0';
	free(text);
	return out;
}

int stap_check_script(const char *dir, const char *file, char **diag)
{
	struct stap_text t = { .max = 64 * ERRTEXT_MAX };	/* cut by client_diag() */
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	int pfd[2], wstatus = 0;
	pid_t pid;

	*diag = NULL;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0)
		exec_check(dir, base, pfd[1]);
	close(pfd[1]);
	if (!read_until(pfd[0], stap_now() + stap_config.check_timeout, &t)) {
		static const char late[] = "pmstap: the check took longer than check_timeout\n";

		kill(pid, SIGKILL);
		stap_text_append(&t, late, sizeof(late) - 1);
	}
	close(pfd[0]);
	while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	*diag = client_diag(t.buf);
	return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
}
