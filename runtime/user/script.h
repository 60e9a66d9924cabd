/*
 * script.h - libstaprt: load a compiled script and run it.
 *
 * A compiled script is a directory holding script.so (the user-context
 * handlers and the struct stp_meta that describes everything, see
 * runtime/stp_meta.h) and script.bpf.o (the kernel-context handlers and
 * every map).  Its life:
 *
 *	s = stp_script__open(dir, &opts);	dlopen script.so, read stp_meta,
 *						open script.bpf.o, size its maps
 *	stp_script__load(s);			load the BPF object (optional
 *						probes the kernel refuses are
 *						dropped), fork -c's command (it
 *						waits), initial values, -G
 *	stp_script__attach(s);			attach every kernel-context probe;
 *						their handlers wait (stp_control)
 *	status = stp_script__run(s);		begin probes, then the handlers
 *						and -c's command run; the event
 *						loop; end (or error) probes,
 *						autoprint, the summary
 *	stp_script__free(s);
 *
 * Each step returns 0 or a negative errno and has already told the user
 * why on stderr.  __run returns the exit status: 0, or 1 after errors.
 */
#ifndef STP_SCRIPT_H
#define STP_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../stp_meta.h"

struct stp_script;
struct bpf_object;
struct stp_dseg;

/* What the user asked for (pmstap's options). */
struct stp_script_opts {
	const char *output_path;	/* -o FILE (strftime(3) conversions expanded); NULL: stdout */
	uint64_t output_size_max;	/* -S SIZE: bytes; 0: FILE is not numbered */
	int output_files_max;		/* -S SIZE,N: files kept; 0: all */
	const char *target_cmd;		/* -c CMD: run through /bin/sh once probes are attached */
	long target_pid;		/* -x PID; 0: none */
	bool target_implied;		/* target_pid is process(PID)'s, not -x: target() is 0 */
	long timeout_s;			/* -T SECONDS; 0: none */
	const char *const *args;	/* the script's arguments: $1.. / @1.. */
	int nargs;
	const char *const *global_sets;	/* -G NAME=VALUE, nglobal_sets of them */
	int nglobal_sets;
	bool suppress_handler_errors;	/* --suppress-handler-errors */
	int verbose;			/* -v count */
	const char *prog_name;		/* prefix of runner messages; NULL: "pmstap" */
	const char *pmda_name;		/* --pmda: pmdastap serves it as stap.NAME (handover.h) */
	const char *module_name;	/* -m NAME: names the procfs folder; NULL: the script's name */
	bool kmod_shared;		/* pmdastap maps the module too and unloads it when done */
	long keep_seconds;		/* keep the loaded set this long for the next run (keep.c); 0: no */
};

struct stp_script *stp_script__open(const char *dir, const struct stp_script_opts *opts);
int stp_script__load(struct stp_script *s);
int stp_script__attach(struct stp_script *s);
int stp_script__run(struct stp_script *s);
void stp_script__free(struct stp_script *s);
/*
 * The dyninst runtime with neither -c nor -x: attach to the one process
 * the probe points name (process(PID)), as -x PID does, target() staying 0.
 */
void stp_script__attach_named_pid(struct stp_script *s);
/* --pmda without a name: NAME (kept by the caller while S lives). */
void stp_script__set_pmda_name(struct stp_script *s, const char *name);

/*
 * The kernel runtime's data for another process (pmdastap): FD, the
 * module's device as the script's runner opened it (passed over a socket:
 * a device opened anew would stop the probes when closed), mapped and
 * read as stp_dseg__attach_mem_reader reads; NULL with the reason in ERR.
 * stp_kmod_unload removes module NAME (one of pmstap's) once nothing holds it.
 */
struct stp_dseg *stp_kmod_reader(int fd, unsigned int patience_us, char *err, size_t errlen);
bool stp_kmod_unload(const char *name);

/* What a loaded script is made of (for pmdastap and the user-context code). */
const struct stp_meta *stp_script__meta(const struct stp_script *s);
struct bpf_object *stp_script__bpf_object(const struct stp_script *s);
struct stp_dseg *stp_script__dseg(const struct stp_script *s);	/* dyninst, kernel: the segment */
const char *stp_script__kmod_name(const struct stp_script *s);	/* kernel: the module; else NULL */
int stp_script__map_fd(const struct stp_script *s, const char *map_name);
struct stp_maps;
const struct stp_maps *stp_script__maps(const struct stp_script *s);	/* every map, by name */
int stp_script__ncpus(const struct stp_script *s);	/* possible CPUs: per-CPU value count */

/*
 * Runs of a loaded BPF program that the kernel skipped because the program
 * was already running on that CPU (bpf_prog_info.recursion_misses: counted
 * for raw tracepoints and fentry/fexit, and by newer kernels for more
 * kinds); 0 when the kernel does not say.  The script's handlers that found
 * their CPU's context busy are stp_counters.skipped, counted apart.
 */
uint64_t stp_prog_misses(int prog_fd);
/* The sum of stp_prog_misses over the script's loaded programs. */
uint64_t stp_script__misses(const struct stp_script *s);
/* Array keys user-context handlers cut to their string column (uctx.c). */
uint64_t stp_uctx_keys_cut(void);

/*
 * The value of the scalar globals' map (the single entry of stp_globals),
 * mapped into this process: reads and writes are the kernel's.  NULL when
 * the script has no such map.
 */
void *stp_script__globals(const struct stp_script *s);

/* target(): the -x PID or the -c CMD's pid; 0 when neither was given. */
int64_t stp_script__target(const struct stp_script *s);

/*
 * Services for user-context code (begin, end, error and timer probes run
 * by the runner): it shares the kernel side's output stream, error
 * accounting and exit.
 */
void stp_script__output(struct stp_script *s, const char *buf, size_t len);
/* A soft error at meta.errors[error_index]; detail may be NULL. */
void stp_script__error(struct stp_script *s, int error_index, const char *detail, size_t len);
void stp_script__warn(struct stp_script *s, const char *text, size_t len);
/* system(CMD): /bin/sh -c CMD, started in the background; its output is the runner's. */
void stp_script__system(struct stp_script *s, const char *cmd, size_t len);
/* switch_file() or SIGUSR2: what is printed next goes to -o's next file */
void stp_script__switch_file(struct stp_script *s);
void stp_script__exit(struct stp_script *s);
bool stp_script__exiting(const struct stp_script *s);

#endif
