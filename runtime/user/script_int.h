/*
 * script_int.h - libstaprt's internals, shared by script.c (open, load,
 * globals), attach.c, events.c (records and output), loop.c (the event
 * loop and probe sequencing), target.c (-c/-x) and autoprint.c.
 */
#ifndef STP_SCRIPT_INT_H
#define STP_SCRIPT_INT_H

#include <stdarg.h>
#include <sys/types.h>

#include "format.h"
#include "script.h"

struct bpf_link;
struct bpf_program;
struct ring_buffer;
struct stp_uctx;
struct stp_procfs;
struct stp_perfctr;

/* Where a run is: stap's session states, in order. */
enum stp_state {
	STP_STATE_STARTING,	/* begin probes */
	STP_STATE_RUNNING,
	STP_STATE_STOPPING,	/* exit(), -T, a signal, the -c command ended */
	STP_STATE_ERROR,	/* more errors than MAXERRORS */
};

/* The output stream: script output in order, buffered. */
struct stp_outstream {
	int fd;
	bool owned;		/* opened for -o: closed at free */
	char *buf;
	size_t len, size;
	bool failed;		/* a write failed: reported once */
	/* -o's rotation (-S, switch_file(), SIGUSR2): FILE, or FILE.0 with -S, then FILE.1 ... */
	int fnum;		/* the current file's number */
	uint64_t written;	/* bytes written to it */
	unsigned switches;	/* asked for, not done yet */
	time_t *opened;		/* -S SIZE,N: when the last N were opened (their names) */
};

/* A user-context timer probe. */
struct stp_timer {
	int probe;		/* index in meta.probes */
	int fd;			/* timerfd */
};

#define STP_LOAD_PARTS 4	/* the most threads that load a script's programs */

/* A map's values as the load left them (libbpf's .data), for a keeper to put back. */
struct stp_keep_snap {
	char *name;
	void *bytes;
	size_t len;
};

/*
 * A loaded program as attaching needs it: libbpf's (after a load) or a
 * kept set's (keep.c), which has no libbpf object behind it.
 */
struct stp_prog {
	char *name;
	char *section;
	uint32_t type;		/* enum bpf_prog_type */
	int fd;
};

struct stp_script {
	struct stp_script_opts opts;
	const char *prog_name;
	char *dir;
	void *dl;				/* script.so */
	const struct stp_meta *meta;
	struct bpf_object *obj;
	char *bpf_path;				/* script.bpf.o, or script.dyn.so */
	int ncpus;				/* per-CPU values: CPUs, or thread slots */
	struct stp_maps *maps;			/* the maps by name: obj's, or dseg's */

	/* the dyninst runtime (dyn.c) */
	void *dyn_dl;				/* script.dyn.so, for its map table */
	struct stp_dseg *dseg;			/* the shared segment */
	struct stp_dmap *dyn_ring;		/* its ring buffer, or NULL */
	int dyn_report, dyn_report_w;		/* the -c command's loader reports here */
	int dyn_poll_fd;			/* the event loop's timer to read the ring */
	bool dyn_attached;			/* -x: the script is loaded in the process */
	char dyn_lib[4096];			/* libstapdyn.so */

	/* the kernel runtime (kmod.c): its segment is dseg, its ring dyn_ring */
	int kmod_fd;				/* the module's device, or -1 */
	bool kmod_loaded;
	char kmod_name[64];			/* STP_KMOD_PREFIX<pid> */

	/* copies of obj that loaded its programs by parts (load_split.c) */
	struct bpf_object *parts[STP_LOAD_PARTS];
	int nparts;

	/* -v: each program's verifier statistics (log level 4), STP_VSTATS_BYTES each */
	char *vstats;
	bool vstats_off;			/* a load failed with them: the verifier's reasons instead */

	/* the programs that loaded; their descriptors are libbpf's unless progs_owned */
	struct stp_prog *progs;
	int nprogs;
	bool progs_owned;			/* a kept set's (keep.c) */

	/* keeping the set for the next run (keep.c) */
	bool *load_skipped;			/* s->skipped as the load left it */
	struct stp_keep_snap *snaps;		/* what the load wrote in maps */
	int nsnaps;
	int kept_from;				/* the keeper the set came from, or 0 */
	uint64_t misses_base;			/* the kept programs' recursion misses before */

	/* per probe, indexed like meta.probes */
	bool *skipped;				/* optional and unavailable here */
	struct bpf_link ***links;		/* libbpf's, NULL-terminated; not NULL: attached */
	bool *dispatched;			/* run by a syscall dispatcher (attach_syscall.c) */
	int sc_link_fds[2];			/* the dispatchers' links on raw_syscalls, or -1 */
	int **link_fds;				/* links made with bpf(2), each list -1-ended, or
						   NULL: perf events, tracepoints, raw tracepoints,
						   netfilter (attach_netfilter.c) */
	bool um_on;				/* uprobes on uprobe_multi links (attach_uprobe.c) */
	int *um_fds, um_nfds;			/* those links */

	struct stp_format **formats;		/* meta.formats, compiled */
	struct stp_value *values;		/* room for the most arguments of any format */
	int max_args;

	void *globals;				/* stp_globals' value */
	size_t globals_size;
	bool globals_mapped;			/* mmap()ed here: munmap at free */

	struct stp_outstream out;
	struct stp_uctx *uctx;

	/* the run */
	enum stp_state state;
	int epfd, sigfd, deadline_fd;
	struct ring_buffer *rb;
	struct stp_timer *timers;
	int ntimers;
	struct stp_procfs *procfs;		/* procfs probes' FIFOs (procfs.c), or NULL */
	struct stp_perfctr *perf;		/* perf counters' events (perfctr.c), or NULL */
	long errors;				/* reported */
	long suppressed;			/* --suppress-handler-errors: counted only */
	long kernel_error_records;
	bool internal_error;			/* a malformed record, a failed attach... */
	bool attach_failed;
	int *file_fds;				/* meta.files, open while probes attach */

	/* --pmda (handover.c) */
	int ho_sock;				/* pmdastap's socket, or -1 */
	int ho_out;				/* the output pipe's write end, or -1 */
	uint64_t ho_dropped;			/* output bytes it missed */

	/* -c / -x */
	pid_t child;				/* -c: the command, 0 when none or reaped */
	bool child_held;			/* -c: it waits for SIGUSR1 to exec */
	char *child_exe;			/* -c: the file it will exec, or NULL (a shell's command) */
	int64_t target;
	bool child_exited;
	bool child_failed;			/* it exited with a status not 0, or by a signal */
};

/* script.c */
void stp_msg(const struct stp_script *s, const char *level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void stp_vmsg(const struct stp_script *s, const char *level, const char *fmt, va_list ap);
const char *stp_loc_str(const struct stp_loc *loc, char *buf, size_t size);
int stp_globals_map_fd(const struct stp_script *s);
void stp_vstats_want(struct stp_script *s, struct bpf_object *obj);
uint32_t stp_pow2_pages(uint64_t n);	/* a ring buffer's size: pages, a power of two, >= N */
int stp_control_set(struct stp_script *s, enum stp_state state);

/* load_split.c */
int stp_load_split(struct stp_script *s);
void stp_load_split_close(struct stp_script *s);
struct bpf_program *stp_script__prog(const struct stp_script *s, const char *name);
/* s->progs emptied (their descriptors closed when a kept set's). */
void stp_progs_free(struct stp_script *s);
/* NAME's loaded program, libbpf's or a kept set's; NULL when it did not load. */
const struct stp_prog *stp_script__program(const struct stp_script *s, const char *name);
struct bpf_program *stp_script__loaded(const struct stp_script *s, struct bpf_program *prog);

/* attach.c */
int stp_attach_probe(struct stp_script *s, int i);
/* Whether probe I, its program PROG, attaches only through libbpf's object (never a kept set's). */
bool stp_attach_needs_object(const struct stp_script *s, int i, const struct stp_prog *prog);
const char *stp_perf_reason(uint32_t type, int err);
void stp_detach_all(struct stp_script *s);

/* attach_syscall.c */
int stp_sc_attach(struct stp_script *s);
bool stp_kprobes_available(void);

/* attach_files.c */
int stp_files_check(struct stp_script *s);
void stp_files_close(struct stp_script *s);
const char *stp_file_attach_path(const struct stp_script *s, int i, char *buf, size_t size);
void stp_usym_identify(struct stp_script *s);

/* attach_uprobe.c */
struct bpf_link *stp_attach_uprobe(struct stp_script *s, const struct stp_meta_probe *p,
				   struct bpf_program *prog);
int stp_keep_link_fd(struct stp_script *s, int i, int fd);
int stp_link_perf(int prog_fd, int pfd, uint64_t cookie);
int stp_link_tracepoint(int prog_fd, const char *sys, const char *name, uint64_t cookie);
void stp_um_prepare(struct stp_script *s);
void stp_um_attach(struct stp_script *s);
int stp_um_attach_one(struct stp_script *s, int i);
int stp_um_count(const struct stp_script *s, int *probes);

/* events.c */
int stp_out_open(struct stp_script *s);
void stp_out_flush(struct stp_script *s);
void stp_out_close(struct stp_script *s);
int stp_formats_compile(struct stp_script *s);
void stp_formats_free(struct stp_script *s);
int stp_events_open(struct stp_script *s);
int stp_events_record(void *ctx, void *data, size_t size);	/* one ring buffer record */
int stp_events_drain(struct stp_script *s);
void stp_events_close(struct stp_script *s);
void stp_report_error(struct stp_script *s, int index, const char *detail, size_t len);
void stp_summary(struct stp_script *s);

/* loop.c */
void stp_request_stop(struct stp_script *s, enum stp_state state);

/* target.c */
int stp_target_start(struct stp_script *s);
void stp_target_release(struct stp_script *s);
void stp_target_reap(struct stp_script *s);
void stp_target_stop(struct stp_script *s);
void stp_target_child_signals(void);

/* kmod.c */
bool stp_kmod_is(const char *dir);
int stp_kmod_open(struct stp_script *s);
int stp_kmod_start(struct stp_script *s);
int stp_kmod_existing(struct stp_script *s);
/* The module's probes unregistered, as BPF's links go at the end (kmod.c). */
void stp_kmod_detach(struct stp_script *s);
void stp_kmod_close(struct stp_script *s);

/* dyn.c */
bool stp_dyn_is(const char *dir);
int stp_dyn_open(struct stp_script *s);
void stp_dyn_close(struct stp_script *s);
int stp_dyn_prepare(struct stp_script *s);
void stp_dyn_child_env(struct stp_script *s);
void stp_dyn_started(struct stp_script *s);
int stp_dyn_on_report(struct stp_script *s);
int stp_dyn_drain(struct stp_script *s);
void stp_dyn_on_poll(struct stp_script *s);
int stp_dyn_attach_pid(struct stp_script *s);	/* -x */
void stp_dyn_begin_pid(struct stp_script *s);
void stp_dyn_detach_pid(struct stp_script *s);
#define STP_DYN_POLL_MS 20	/* how often the event loop reads the segment's ring buffer */

/* perfctr.c */
int stp_perfctr_attach(struct stp_script *s);
void stp_perfctr_hold(struct stp_script *s, pid_t pid, const char *exe);	/* -c before its exec */
int stp_perfctr_record(struct stp_script *s, int what, const void *data, size_t len);
void stp_perfctr_summary(struct stp_script *s);
void stp_perfctr_detach(struct stp_script *s);
void stp_perfctr_free(struct stp_script *s);

/* autoprint.c */
void stp_autoprint(struct stp_script *s);

#endif
