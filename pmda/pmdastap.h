/*
 * pmdastap.h - pmdastap's modules and what they share.
 *
 *	pmda.c		main, options, the dispatch table, the main loop
 *	config.c	pmdastap.conf
 *	scripts.c	the scripts: autostart, registration, children's lives
 *	child.c		what a script's child process does, and its messages
 *	metrics.c	metric tables and names built from each script's stp_meta
 *	fetch.c		per-fetch snapshots of the maps, values, instances, labels
 *	events.c	printf output: pipes drained into per-script event queues
 *	outtext.c	the same output as text, for clients that cannot read events
 *	identity.c	PMIDs and instance ids kept across restarts (pmdaCache)
 *	control.c	stap.control.*: register and deregister, per-client state
 *	watch.c		restarts a script whose probed files were rebuilt or upgraded
 *	handover.c	scripts users run themselves and hand over (pmstap --pmda)
 *
 * Every exported function has the stap_ prefix.
 */
#ifndef PMDASTAP_H
#define PMDASTAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <pcp/pmapi.h>
#include <pcp/pmda.h>

/* stp_meta.h and stats.h both name their histogram kinds STP_HIST_*, with the same values */
#define STP_HIST_NONE STP_META_HIST_NONE
#define STP_HIST_LOG STP_META_HIST_LOG
#define STP_HIST_LINEAR STP_META_HIST_LINEAR
#include "../runtime/stp_meta.h"
#undef STP_HIST_NONE
#undef STP_HIST_LOG
#undef STP_HIST_LINEAR

#define STAP_PMDA_VERSION "0.1"

/* PMID clusters.  Their numbers are in archives: never renumber. */
enum {
	STAP_CLUSTER_CONTROL = 0,
	STAP_CLUSTER_INFO = 1,
	STAP_CLUSTER_SCRIPTS = 2,
	STAP_CLUSTER_PROBES = 3,
	STAP_CLUSTER_FIRST_SCRIPT = 16,		/* script clusters: 16 + its instance id */
	STAP_CLUSTER_MAX = 4095,
};

/* Items of the static clusters.  Numbers are in archives: append only. */
enum { STAP_CONTROL_REGISTER, STAP_CONTROL_DEREGISTER };
enum { STAP_INFO_VERSION, STAP_INFO_REGISTRATION, STAP_INFO_AUTOSTART_DIR };
enum {
	STAP_SCRIPTS_STATUS,
	STAP_SCRIPTS_ERROR,
	STAP_SCRIPTS_SOURCE,
	STAP_SCRIPTS_UPTIME,
	STAP_SCRIPTS_ERRORS,
	STAP_SCRIPTS_SKIPPED,
	STAP_SCRIPTS_DROPPED,
	STAP_SCRIPTS_MAP_FULL,
	STAP_SCRIPTS_OUTPUT,
	STAP_SCRIPTS_OUTPUT_LINES,
	STAP_SCRIPTS_OUTPUT_BYTES,
	STAP_SCRIPTS_LAST_OUTPUT,
	STAP_SCRIPTS_LINE,		/* the event records' parameter */
	STAP_SCRIPTS_RESTARTS,
	STAP_SCRIPTS_PID,
	STAP_SCRIPTS_OUTPUT_TEXT,	/* the lines since this context's last fetch */
	STAP_SCRIPTS_OUTPUT_MISSED,	/* lines this context's output_text skipped */
	STAP_SCRIPTS_KEYS_CUT,
};
enum { STAP_PROBES_HITS, STAP_PROBES_RUN_TIME, STAP_PROBES_ATTACHED, STAP_PROBES_SKIPPED };

/*
 * Instance-domain serials.  A script's own indoms are cluster << 10 | item
 * (>= 16 << 10), the items cache of a script cluster << 10 | STAP_ITEM_CACHE.
 */
enum {
	STAP_INDOM_SCRIPTS = 0,		/* also script -> cluster */
	STAP_INDOM_PROBES = 1,
	STAP_INDOM_LAYOUT = 2,		/* the identity caches' version; never served */
};
#define STAP_ITEM_CACHE 1023
#define STAP_ITEM_MAX 1022

/* ---- config.c ---- */

struct stap_users {			/* a comma-separated list of user names */
	char **names;
	int n;
};

struct stap_config {
	char *path;			/* the file read, or NULL */
	char *pmstap;			/* the translator */
	char *autostart_dir;
	char *cache_dir;		/* PMSTAP_CACHE of the children */
	char *state_dir;		/* private copies of the scripts' sources */
	bool registration;		/* pmstore stap.control.register allowed */
	struct stap_users allowed_users;	/* who may register */
	bool handover;			/* pmstap --pmda hands scripts over (handover.c) */
	struct stap_users handover_users;	/* who may */
	char *handover_socket;		/* where they connect */
	size_t handover_max_bytes;	/* a script's segment at most: what it may make us map */
	int max_scripts;
	size_t max_script_bytes;
	size_t output_queue_bytes;	/* per script, for stap.scripts.output */
	size_t max_line_bytes;
	size_t output_text_bytes;	/* per script, for stap.scripts.output_text */
	int start_timeout;		/* seconds a child may take to start */
	int ready_timeout;		/* seconds autostart scripts may delay readiness */
	int check_timeout;		/* seconds for pmstap -p2 at registration */
	int backoff_min, backoff_max;	/* seconds between restarts */
	int stop_timeout;		/* seconds from SIGTERM to SIGKILL */
};

extern struct stap_config stap_config;

void stap_config_defaults(void);
/* 0, or -1 after logging why the file is unusable. */
int stap_config_load(const char *path);
bool stap_config_user_in(const struct stap_users *u, const char *user);

/* ---- scripts.c ---- */

enum stap_status {
	STAP_STATUS_STARTING,		/* the child compiles, loads, attaches */
	STAP_STATUS_RUNNING,
	STAP_STATUS_RESTARTING,		/* waiting out the back-off after a failure */
	STAP_STATUS_FAILED,		/* does not compile: not restarted */
	STAP_STATUS_EXITED,		/* the script called exit(): not restarted */
	STAP_STATUS_REFUSED,		/* an unsafe autostart file, a bad name */
	STAP_STATUS_STOPPING,		/* deregistered, the child not gone yet */
};

enum stap_origin {
	STAP_ORIGIN_AUTOSTART,
	STAP_ORIGIN_REGISTERED,
	STAP_ORIGIN_HANDOVER,		/* run by its user's pmstap, served here (handover.c) */
};

struct stap_text {			/* a growing string; keeps its tail past max */
	char *buf;
	size_t len, size, max;
};

/* A script's newest output lines (outtext.c). */
struct stap_history {
	char *buf;			/* lines [start, end), each ended by '\n'; buf[end] is '\0' */
	size_t start, end, cap;		/* cap: bytes held at most (2 * cap + 1 allocated) */
	uint64_t first;			/* the number of the line at start */
};

struct stap_metric;
struct stap_gsnap;

struct stap_script {
	char *name;
	char *file;			/* its private copy, in state_dir */
	char *source;
	enum stap_origin origin;
	enum stap_status status;
	char *error;			/* why it last failed or was refused */
	int inst;			/* in STAP_INDOM_SCRIPTS */
	int cluster;
	bool removed;			/* deregistered: freed once the child is gone */
	struct stat src_st;		/* autostart: the file as last seen (lstat) */
	bool src_seen;			/* autostart: still there at this rescan */
	bool timed_out;			/* killed for taking longer than start_timeout */

	/* the child */
	pid_t pid;
	int ctl_fd, out_fd, err_fd;
	double started;			/* monotonic seconds: fork */
	double running_since;		/* monotonic seconds: ready */
	double restart_at, kill_at;
	int backoff;
	unsigned int restarts;
	struct stap_text errtext;	/* the stderr of the current run */
	struct stap_text partial;	/* an output line not ended yet */

	/* handed over (handover.c): the user's pmstap, its description and segment */
	pid_t peer_pid;
	uid_t peer_uid;
	struct stp_meta *owned_meta;	/* decoded here: sc->meta, freed with sc */
	struct stp_dseg *dseg;
	int dseg_fd;

	/* on the kernel runtime (kmodule.c): the module's segment, mapped here */
	struct stp_dseg *kseg;
	char *kmod_name;
	uint64_t reads_busy;		/* segment reads given up, as last said (kmodule.c) */
	bool ended;			/* its connection ended: retired at the next tick */

	/* what it is, from the compiled script the child reported */
	char *build_dir;
	void *dl;			/* script.so, for its stp_meta */
	const struct stp_meta *meta;
	int ncpus;
	struct stp_data *data;		/* its globals and counters (runtime/user/data.h) */
	unsigned char *attached;	/* per meta->probes */
	struct stap_mapfd *pending;	/* fds received before the ready message */
	int umaps_fd;			/* its stp_umaps map: names user stacks (stacks.c) */
	struct stap_stacks *stacks;	/* names of stack keys (stacks.c) */
	int npending;
	struct stap_watched *watched;	/* per meta->files (watch.c) */
	bool restart_now;		/* stopped to start again at once (watch.c) */

	/* its metrics (metrics.c) and their snapshots (fetch.c) */
	struct stap_metric *metrics;
	int nmetrics;
	struct stap_probe_ref *probe_refs;	/* per meta->probes */
	struct stap_gsnap *snaps;	/* per meta->globals */
	char *globals_val;		/* the stp_globals value of this fetch */
	size_t globals_size;
	unsigned int globals_gen, counters_gen, probes_gen;
	struct stp_counters counters;
	struct stp_probe_stats *probe_stats;
	uint64_t *probe_misses;		/* per meta->probes: runs the kernel skipped */
	uint64_t misses;		/* their sum */

	/* output (events.c) */
	int queue;
	char *queue_name;
	uint64_t output_lines, output_bytes;
	char *last_output;
	struct stap_history history;	/* for stap.scripts.output_text (outtext.c) */
};

struct stap_mapfd {
	char *name;
	int fd;
};

/* A probe of a script: the private data of its STAP_INDOM_PROBES instance. */
struct stap_probe_ref {
	struct stap_script *script;
	int probe;			/* in meta->probes */
	int inst;
};

extern struct stap_script **stap_scripts;
extern int stap_nscripts;

const char *stap_status_name(enum stap_status st);
double stap_now(void);
struct stap_script *stap_script_find(const char *name);
struct stap_script *stap_script_by_cluster(int cluster);
/* Is NAME usable as stap.NAME?  NULL, or why not. */
const char *stap_script_name_problem(const char *name);
void stap_scripts_autostart(void);
/* The autostart directory's inotify fd (-1 without one), and its events. */
int stap_autostart_fd(void);
void stap_autostart_event(void);
/* A new script from registration: the script, or NULL with *why set (malloc'd). */
struct stap_script *stap_script_register(const char *name, const char *text, char **why);
int stap_script_deregister(struct stap_script *sc);
/* Work due now (restarts, kills, time-outs); returns ms until the next, or -1. */
int stap_scripts_tick(void);
void stap_scripts_reap(void);
/* A child's control socket, output or stderr is readable. */
void stap_script_ctl_ready(struct stap_script *sc);
void stap_script_err_ready(struct stap_script *sc);
bool stap_scripts_starting(void);	/* an autostart script is still starting */
void stap_scripts_shutdown(void);
/* Run pmstap -p2 on FILE in DIR: 0, or its exit status with its stderr in *diag. */
int stap_check_script(const char *dir, const char *file, char **diag);

/* SC is what META describes: its metrics built anew (the last ones, and their maps, gone). */
void stap_script_describe(struct stap_script *sc, const struct stp_meta *meta);
/* A script handed over on connection FD by pid PID: the script, or NULL with WHY. */
struct stap_script *stap_script_handed(const char *name, int fd, pid_t pid, char *why, size_t size);

/* Are A and B the same file, unchanged (inode, size, mode, owner, times)? */
bool stap_same_file(const struct stat *a, const struct stat *b);
/* Stop SC's child, if any, and start it again at once, for WHY (logged). */
void stap_script_restart(struct stap_script *sc, const char *why);

void stap_text_append(struct stap_text *t, const char *p, size_t n);
void stap_text_reset(struct stap_text *t);
void stap_text_free(struct stap_text *t);

/* A descriptor a child sent (a map's, a program's as "prog:N"), kept until its ready message. */
void stap_pending_add(struct stap_script *sc, const char *name, int fd);

/* ---- kmodule.c ---- */

/* A segment's map that writers keep changing longer: that read gives up. */
#define STAP_READER_PATIENCE_US 20000

/* A child's module NAME, its device FD: pending until the ready message. */
void stap_kmod_pending(struct stap_script *sc, const char *name, int fd);
/* At the ready message: the pending module mapped (and sc->ncpus its CPUs), then its data. */
void stap_kmod_adopt(struct stap_script *sc);
void stap_kmod_data(struct stap_script *sc);
/* After sc->data goes: the mapping, and the module unless the child still holds it. */
void stap_kmod_release(struct stap_script *sc);
/* After a global's refresh: says how many more reads of the segment gave up (-EBUSY). */
void stap_kmod_check_reads(struct stap_script *sc);

/* ---- handover.c ---- */

void stap_handover_open(void);		/* listen, when [handover] enabled */
void stap_handover_shutdown(void);
/* The descriptors to poll (the socket, connections awaiting their hello), and their events. */
int stap_handover_nfds(void);
int stap_handover_fd(int i);
void stap_handover_event(int fd);
void stap_handover_tick(double now, double *next);
/* A handed-over script's description and segment, sent with FD: 0, or -1 with WHY. */
int stap_handover_meta(struct stap_script *sc, int fd, char *why, size_t size);
int stap_handover_segment(struct stap_script *sc, int fd, char *why, size_t size);

/* ---- watch.c ---- */

struct stap_watched;
/* SC's build changed: watch its files afresh. */
void stap_watch_reset(struct stap_script *sc);
/* Look at the files every script's build was made from, when due; *next as stap_scripts_tick. */
void stap_watch_tick(double now, double *next);

/* ---- child.c ---- */

/* Exit statuses of a script's child; the order means nothing. */
enum {
	STAP_CHILD_OK = 0,		/* the script ended: exit() */
	STAP_CHILD_ERRORS = 1,		/* it ended after runtime errors */
	STAP_CHILD_LOAD = 2,		/* load or attach failed */
	STAP_CHILD_COMPILE = 3,		/* pmstap -p4 failed: a diagnostic */
	STAP_CHILD_INTERNAL = 4,	/* the child could not do its work */
	STAP_CHILD_RUNTIME = 5,		/* its "# runtime:" cannot run here: a diagnostic */
};

/* Messages from a child on its control socket (SOCK_SEQPACKET). */
enum {
	STAP_MSG_BUILD = 'B',		/* the compiled script's directory */
	STAP_MSG_MAP = 'M',		/* a map's name, its fd attached */
	STAP_MSG_PROG = 'P',		/* a probe's index, its program's fd attached */
	STAP_MSG_READY = 'R',		/* probes attached: one byte per probe, 1 attached */
	STAP_MSG_MODULE = 'K',		/* kernel runtime: the module's name, its device attached */
};

#define STAP_MSG_MAX 65536

/* The value of a script's first "# KEY: VALUE" or "// KEY: VALUE" line (LEN bytes), or NULL. */
const char *stap_header_line(const char *text, const char *key, size_t *len);
/*
 * The runtime a script's first line "# runtime: NAME" chooses: "bpf" (also
 * with no such line) or "kernel"; NULL after saying on stderr, as
 * pmstap's diagnostics do, why it cannot run here.
 */
const char *stap_script_runtime(const char *path);

/* In the forked child: compile, load, attach, report, run.  Never returns. */
void stap_child_main(struct stap_script *sc, pid_t parent) __attribute__((noreturn));

/* ---- metrics.c ---- */

enum stap_mkind {
	STAP_M_VALUE,			/* a long or string, scalar or per key */
	STAP_M_COUNT,
	STAP_M_SUM,
	STAP_M_MIN,
	STAP_M_MAX,
	STAP_M_AVG,
	STAP_M_HIST,
	STAP_M_PROCFS,			/* a procfs file: its .read handler's answer */
};

struct stap_metric {
	struct stap_script *script;
	int global;			/* in meta->globals; -1 for STAP_M_PROCFS */
	int probe;			/* STAP_M_PROCFS: the file's first probe in meta->probes */
	enum stap_mkind kind;
	char *name;			/* stap.<script>.<global>[.<sub>] */
	char *oneline, *help;
	pmDesc desc;
};

/* Build sc's metrics from its meta; then stap_metrics_rebuild(). */
int stap_metrics_build(struct stap_script *sc);
void stap_metrics_free(struct stap_script *sc);
/* The metric table and names from the scripts now registered. */
void stap_metrics_rebuild(void);
void stap_metrics_init(pmdaInterface *dispatch);
int stap_pmid(const char *name, pmID *pmid, pmdaExt *pmda);
int stap_name(pmID pmid, char ***names, pmdaExt *pmda);
int stap_children(const char *name, int traverse, char ***kids, int **sts, pmdaExt *pmda);
int stap_text(int ident, int type, char **buf, pmdaExt *pmda);
struct stap_metric *stap_metric_by_indom(pmInDom indom);
struct stap_metric *stap_metric_by_pmid(pmID pmid);
pmID stap_line_pmid(void);

/* ---- fetch.c ---- */

/* Start a fetch: snapshots older than this are stale. */
void stap_fetch_begin(void);
/* Make sure what pmid's values come from is read in this fetch. */
void stap_fetch_prepare(pmID pmid);
void stap_fetch_prepare_indom(pmInDom indom);
int stap_fetch_callback(pmdaMetric *m, unsigned int inst, pmAtomValue *atom);
int stap_label_callback(pmInDom indom, unsigned int inst, pmLabelSet **lp);
void stap_snaps_free(struct stap_script *sc);
/* Take the maps a child sent; -1 when they do not match the meta. */
void stap_maps_adopt(struct stap_script *sc);
void stap_maps_close(struct stap_script *sc);

/* ---- procfs.c ---- */

/* File NAME's first .write probe (WRITE) or .read probe, or NULL: a module's file may have both. */
const struct stp_meta_probe *stap_procfs_probe(const struct stp_meta *meta, const char *name,
					       bool write);
/* The .read handler's answer, as a reader of the file gets it; PMDA_FETCH_DYNAMIC. */
int stap_procfs_fetch(const struct stap_metric *m, pmAtomValue *atom);
/* What a pmstore of a .write file gives its handlers. */
int stap_procfs_store(const struct stap_metric *m, const char *value, size_t len);

/* ---- stacks.c ---- */

/*
 * KEY (LEN bytes, a string column of an array key) when it is a stack
 * (backtrace(), ubacktrace()): its frames named into BUF, outermost
 * first, joined by ';'.  False: not a stack, BUF untouched.
 */
bool stap_stack_name(struct stap_script *sc, const char *key, size_t len, char *buf, size_t size);
void stap_stacks_free(struct stap_script *sc);

/* ---- events.c ---- */

int stap_output_open(struct stap_script *sc);
void stap_output_close(struct stap_script *sc);
void stap_output_ready(struct stap_script *sc);	/* the output pipe is readable: one read */
void stap_output_drain(struct stap_script *sc);	/* the child ended: read to the end, flush */
void stap_output_flush(struct stap_script *sc);	/* at EOF: the line not ended */
int stap_output_fetch(struct stap_script *sc, pmAtomValue *atom);
void stap_output_end_context(int ctx);

/* ---- outtext.c ---- */

/* Line number sc->output_lines, LEN bytes at LINE, into sc's history. */
void stap_history_append(struct stap_script *sc, const char *line, size_t len);
void stap_history_free(struct stap_script *sc);	/* and every context's place in it */
void stap_outtext_begin(void);			/* a fetch starts */
void stap_outtext_prepare(void);		/* it asks for stap.scripts.output_text */
int stap_outtext_fetch(struct stap_script *sc, int item, pmAtomValue *atom);
void stap_outtext_end_context(int ctx);

/* ---- identity.c ---- */

void stap_identity_init(void);
/* Instance ids: created, or found again, by name; -1 when the indom is full. */
int stap_identity_script(const char *name);
int stap_identity_item(int cluster, const char *relname);
void stap_identity_load(pmInDom indom);
void stap_identity_save(pmInDom indom);
pmInDom stap_indom(unsigned int serial);

/* ---- control.c ---- */

int stap_store(pmResult *result, pmdaExt *pmda);
int stap_attribute(int ctx, int attr, const char *value, int len, pmdaExt *pmda);
void stap_end_context(int ctx);
int stap_control_fetch(int item, pmAtomValue *atom);

/* ---- pmda.c ---- */

extern pmdaInterface stap_dispatch;
extern int stap_domain;
/* The namespace changed: pmcd tells clients at the next reply. */
void stap_names_changed(void);

#endif
