/*
 * stp_meta.h - what a compiled script says about itself.
 *
 * Pass 3 emits one `const struct stp_meta stp_meta` into the script's
 * user-context shared object (script.so).  The runner (pmstap pass 5,
 * libstaprt) and pmdastap read it there: the maps and their layouts, the
 * probes and where each runs, printf formats, error sites, limits and the
 * exported metrics.  Nothing re-derives any of this from the script.
 *
 * Plain C, no pointers into the translator: the object describes itself.
 */
#ifndef STP_META_H
#define STP_META_H

#include <stdbool.h>
#include <stdint.h>

#define STP_META_VERSION 3
#define STP_META_SYMBOL "stp_meta"	/* dlsym() name of the struct stp_meta */
#define STP_MAX_KEYS 9

/* Value and key types. */
enum stp_type {
	STP_TYPE_LONG = 1,
	STP_TYPE_STRING,
	STP_TYPE_STATS,
};

struct stp_loc {
	const char *file;
	int line;
	int col;
};

/* How a statistic keeps its histogram, when any @hist_* uses it. */
enum stp_meta_hist_kind {
	STP_META_HIST_NONE,	/* prefixed: stats.h's STP_HIST_* name its own enum */
	STP_META_HIST_LOG,
	STP_META_HIST_LINEAR,
};

struct stp_meta_hist {
	enum stp_meta_hist_kind kind;
	int64_t start, stop, interval;	/* linear only */
	int buckets;			/* slots in the per-CPU value */
};

/*
 * A global.  Scalars (nkeys 0) of type long or string live in the map
 * `map` at byte `offset` of its single value; arrays and statistics have a
 * map of their own, with the key columns laid out at key_offsets (a long
 * is 8 bytes, a string MAXSTRINGLEN bytes, NUL-terminated).
 */
struct stp_meta_global {
	const char *name;
	enum stp_type type;
	int nkeys;
	enum stp_type key_types[STP_MAX_KEYS];
	uint32_t key_offsets[STP_MAX_KEYS];
	const char *map;		/* BPF map name in script.bpf.o */
	uint32_t offset;		/* scalars: byte offset in that map's value */
	uint32_t key_size;
	uint32_t value_size;		/* per CPU for statistics */
	uint32_t max_entries;
	bool wrap;			/* global a% */
	bool percpu;			/* statistics: one value per CPU, merged on read */
	struct stp_meta_hist hist;

	/* for pmdastap */
	bool exported;			/* export global, or every global of a script with no export */
	const char *doc;		/* the doc comment's text, or NULL */
	struct stp_loc loc;

	/*
	 * Slotted arrays (of longs or strings, not a%): `map` maps each key to
	 * a uint32_t slot, and the values live in values_map, a BPF_F_MMAPABLE
	 * array of max_entries + STP_SLOT_FIRST elements of value_size bytes
	 * (8-byte aligned); free_map is a queue of freed slots.  NULL: the
	 * values are in `map` itself.  See runtime/bpf/stp_slots.bpf.h.
	 */
	const char *values_map;
	const char *free_map;
};

/* The head elements of a values_map: then slots STP_SLOT_FIRST... */
#define STP_SLOT_GEN 0		/* int64: bumped after every key insert or delete */
#define STP_SLOT_NEXT 1		/* int64: slots never used start at STP_SLOT_FIRST + this */
#define STP_SLOT_FIRST 2

/* Where a handler runs. */
enum stp_context {
	STP_CTX_KERNEL,		/* a BPF program in script.bpf.o */
	STP_CTX_USER,		/* a function in script.so, run by the runner */
};

enum stp_probe_kind {
	STP_PROBE_BEGIN = 1,
	STP_PROBE_END,
	STP_PROBE_ERROR,
	STP_PROBE_NEVER,
	STP_PROBE_TIMER,	/* user context: POSIX timer */
	STP_PROBE_PROFILE,	/* perf cpu-clock on every CPU */
	STP_PROBE_PERF,
	STP_PROBE_TRACEPOINT,	/* tracefs tracepoint (tp) */
	STP_PROBE_RAW_TRACEPOINT,	/* raw tracepoint (raw_tp / tp_btf) */
	STP_PROBE_KFUNC,
	STP_PROBE_UPROBE,
	STP_PROBE_PROCESS_BEGIN,
	STP_PROBE_PROCESS_END,
	STP_PROBE_PROCFS,	/* user context: a FIFO the runner serves (runtime/user/procfs.c) */
	STP_PROBE_NETFILTER,	/* a BPF netfilter link (runtime/user/attach_netfilter.c) */
};

/*
 * Probes on syscalls:sys_enter_* (or sys_exit_*) from which the runtime
 * runs them from one program on raw_syscalls:sys_enter (sys_exit) that
 * jumps by the syscall's number (runtime/user/attach_syscall.c), and the
 * translator writes that program (runtime/bpf/stp_syscall.bpf.h).
 */
#define STP_SC_MIN_PROBES 16

struct stp_uctx;

struct stp_meta_probe {
	const char *point;		/* kernel.trace("sched:sched_switch") */
	const char *name;		/* pn(), where the script calls it and it differs */
	struct stp_loc loc;		/* the probe in the script */
	enum stp_probe_kind kind;
	enum stp_context context;
	const char *prog;		/* STP_CTX_KERNEL: BPF program name */
	int (*handler)(struct stp_uctx *);	/* STP_CTX_USER */
	int64_t priority;		/* begin/end/error(N) */
	int64_t interval_ns;		/* timers */
	int64_t randomize_ns;
	uint32_t perf_type;		/* perf / profile */
	uint64_t perf_config;
	uint64_t perf_sample;		/* period; 0: the default */
	const char *tp_system;		/* tracepoints */
	const char *tp_name;
	const char *target;		/* kfunc / uprobe: function or path:offset */
	bool optional;			/* the point ended in '?': skipped where it cannot load or attach */
	/* STP_PROBE_UPROBE: process(..).function/.statement/.mark */
	const char *uprobe_path;	/* the ELF file (executable or library) */
	uint64_t uprobe_offset;		/* file offset of the probed instruction */
	bool uprobe_return;		/* a uretprobe */
	uint64_t uprobe_ref_ctr_offset;	/* SDT semaphore's file offset, raised while attached; 0: none */
	int64_t uprobe_pid;		/* process(PID): only that process; 0: any */
	int uprobe_file;		/* uprobe_path's entry in stp_meta.files */
	/* STP_PROBE_KFUNC: kernel.function, module().function, kprobe.function (target: the function) */
	bool kprobe;			/* a kprobe at target; else fentry/fexit, as the program's section says */
	bool kprobe_return;		/* a .return: kretprobe or fexit */
	/* STP_PROBE_PROCFS: procfs("NAME").read/.write */
	const char *procfs_path;	/* NAME: the FIFO's name in the run's folder */
	bool procfs_write;		/* .write: a reader of what is written; else .read */
	uint32_t procfs_mode;		/* the FIFO's mode: 0444 or 0222 less .umask(N) */
	int64_t procfs_maxsize;		/* .read: the answer's buffer, its NUL included */
	/* STP_PROBE_PERF of one process, perf.*.process("PATH"): PATH; NULL: every CPU */
	const char *perf_path;
	/* STP_PROBE_NETFILTER: netfilter.hook(..).pf(..).priority(..) */
	int32_t nf_pf, nf_hook, nf_priority;
	/* STP_PROBE_PERF of perf_type PERF_TYPE_BREAKPOINT, kernel.data(..): the watchpoint */
	uint64_t bp_addr;		/* the address; 0: bp_symbol's in /proc/kallsyms */
	const char *bp_symbol;
	uint32_t bp_type;		/* HW_BREAKPOINT_W or HW_BREAKPOINT_RW */
	uint32_t bp_len;		/* HW_BREAKPOINT_LEN_1/2/4/8 */
};

/*
 * A file the compiled code was made from (an ELF file probed, its separate
 * debug file, a @cast or @var module): its identity then, as
 * runtime/stp_fileid.h defines it.  The runtime refuses to attach when a
 * file it probes is no longer that file.
 */
struct stp_meta_file {
	const char *path;
	const char *build_id;		/* hex; "" when the file has none */
	int64_t size;			/* what identifies a file with no build-id */
	int64_t mtime_ns;
};

/*
 * A per-process perf counter, perf.*.process("PATH").counter("NAME"):
 * the runner keeps its perf event in every thread of each process that
 * runs PATH (runtime/user/perfctr.c); @perf("NAME") reads it
 * (runtime/bpf/stp_perf.bpf.h).  At most STP_MAX_COUNTERS.
 */
struct stp_meta_counter {
	const char *name;
	const char *point;		/* as pass 2 wrote it */
	struct stp_loc loc;
	uint32_t perf_type;
	uint64_t perf_config;
	const char *path;		/* PATH, absolute; NULL: no handler reads it */
};

#define STP_MAX_COUNTERS 32

/* A printf/print format used by kernel-context code: records carry its index. */
struct stp_meta_format {
	const char *body;		/* as stp_format__new() takes it: escapes as written */
	struct stp_loc loc;
};

/* A place a runtime error can be raised: records carry its index. */
struct stp_meta_error {
	const char *what;		/* stap's words: "division by 0", "MAXACTION exceeded", ... */
	struct stp_loc loc;
	const char *near;		/* the token there, as stap names it: "operator '/'"; or NULL */
};

/* Limits the code was compiled with (stap's names; -D overrides). */
struct stp_meta_limits {
	int64_t maxstringlen;
	int64_t maxmapentries;
	int64_t maxaction;
	int64_t maxerrors;
	int64_t maxnesting;
	int64_t ringbuf_bytes;
};

/* the prog array of split handlers' bodies (translator/emit_body.c) */
#define STP_BODIES_MAP "stp_bodies"

struct stp_meta {
	int version;			/* STP_META_VERSION */
	const char *script;		/* script name, e.g. "syscalls" from syscalls.stp */
	const char *source;		/* the script's text */
	const struct stp_meta_global *globals;
	int nglobals;
	const struct stp_meta_probe *probes;
	int nprobes;
	const struct stp_meta_format *formats;
	int nformats;
	const struct stp_meta_error *errors;
	int nerrors;
	const struct stp_meta_file *files;
	int nfiles;
	struct stp_meta_limits limits;
	const int *autoprint;		/* indexes of globals to print at exit (written, never read) */
	int nautoprint;
	const struct stp_meta_counter *counters;
	int ncounters;
	const char *const *bodies;	/* the programs of prog array STP_BODIES_MAP, by slot
					   (translator/emit_body.c): the runner fills it */
	int nbodies;
};

/*
 * Ring buffer records, kernel to user.  Every record starts with this
 * header; size counts the header.  Payloads:
 *   STP_REC_PRINTF  id = format index; the arguments in order: a long as
 *                   8 bytes (host order), a string as a u16 length then
 *                   that many bytes (no NUL), memory (%m/%M) likewise.
 *   STP_REC_ERROR   id = error index; optional string detail as above.
 *   STP_REC_WARN    a string (warn()).
 *   STP_REC_EXIT    exit() was called; no payload.
 *   STP_REC_SYSTEM  a string: the command system() asked for.
 *   STP_REC_SWITCH_FILE  switch_file() was called; no payload.
 * Arguments are packed with no padding: read them with memcpy.
 */
enum stp_rec_kind {
	STP_REC_PRINTF = 1,
	STP_REC_ERROR,
	STP_REC_WARN,
	STP_REC_EXIT,
	STP_REC_STACK,	/* see STP_REC_STACK below */
	STP_REC_SYSTEM,	/* a string: system()'s command */
	STP_REC_HIST,	/* print(@hist_*(s)) in a module: id = the global's index; its
			   count, sum, min, max (8 bytes each), then its histogram's
			   buckets merged over the CPUs (8 bytes each) */
	STP_REC_PERF,	/* struct stp_rec_perf: a thread to count, or gone (stp_perf.bpf.h) */
	STP_REC_SWITCH_FILE,	/* switch_file(): -o's next file for what follows */
};

/*
 * STP_REC_STACK: print_stack() and friends.  id = STP_STACK_* flags
 * (stp_tapset.h) and STP_REC_STACK_ADDRS; the payload is the task's pid
 * (8 bytes), then either a string of hex addresses as backtrace() gives
 * them, or, with STP_REC_STACK_ADDRS, 8-byte addresses to the record's end.
 * runtime/user/symbolize.c prints them symbolized.
 */
#define STP_REC_STACK_ADDRS 0x100

/*
 * A string argument of STP_REC_PRINTF whose u16 length has this bit set
 * is symbols to name, printed from kernel context (symname(a),
 * sprint_ubacktrace()...): the other 15 bits count a payload of a u8
 * style (STP_SYM_* of stp_tapset.h), a u8 of STP_STACK_* flags, the
 * task's pid (8 bytes), then 8-byte addresses to the payload's end.
 * The runner names them (runtime/user/stack_print.c).
 */
#define STP_REC_SYMS 0x8000

struct stp_rec_hdr {
	uint16_t kind;
	uint16_t id;
	uint32_t size;
};

/* STP_REC_PERF: id is STP_PERF_NEW (counters: a mask of its counters) or STP_PERF_GONE. */
enum stp_perf_what {
	STP_PERF_NEW,
	STP_PERF_GONE,
};

struct stp_rec_perf {
	struct stp_rec_hdr hdr;
	uint32_t tid;
	uint32_t tgid;
	uint32_t counters;
	uint32_t pad;
};

/*
 * Per-CPU health counters, kept by kernel-context code in the map
 * STP_COUNTERS_MAP (an array of one struct stp_counters per CPU) and
 * summed by the runner: nothing is dropped without being counted.
 */
#define STP_COUNTERS_MAP "stp_counters"
/* dyninst: the counters of threads with no slot of their own, one entry */
#define STP_COUNTERS_SHARED_MAP "stp_counters_shared"
#define STP_COUNTERS_SHARED_MAP_C stp_counters_shared
#define STP_PROBE_STATS_MAP "stp_probe_stats"	/* per CPU, indexed by probe index */
#define STP_RINGBUF_MAP "stp_events"

struct stp_counters {
	uint64_t errors;		/* runtime errors raised */
	uint64_t skipped;		/* handlers not run: reentrancy or after exit */
	uint64_t dropped;		/* records lost: ring buffer full */
	uint64_t map_full;		/* array inserts refused: map full */
	uint64_t maxaction;		/* handlers stopped at MAXACTION */
	uint64_t keys_cut;		/* array keys whose string was cut to its column (a BPF
					   hash key is at most 512 bytes, shared by the columns) */
};

/* Per-probe counters (for stap.probes.* in pmdastap), per CPU. */
struct stp_probe_stats {
	uint64_t hits;			/* handler runs */
	uint64_t run_ns;		/* time spent in the handler */
	uint64_t errors;		/* raised by user-context handlers (the runner counts
					   them here; kernel handlers' are in stp_counters) */
	uint64_t keys_cut;		/* array keys user-context handlers cut (the same) */
};

#endif
