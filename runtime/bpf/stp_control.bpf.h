/*
 * stp_control.bpf.h - the run state the runner shares with kernel-context
 * code: one entry of the ARRAY map STP_CONTROL_MAP ("stp_control").
 *
 * Plain C with fixed-width types, included by runtime/bpf/stp.bpf.h and by
 * user-space code (runtime/user/stp_user.h, the runner).  The runner
 * writes it with bpf_map_update_elem() (key 0); kernel-context code reads
 * it at the start of every handler.
 */
#ifndef STP_CONTROL_BPF_H
#define STP_CONTROL_BPF_H

#define STP_CONTROL_MAP "stp_control"
#define STP_CTX_MAP "stp_ctx"		/* the contexts: an ARRAY, STP_CTX_LEVELS per CPU */

/*
 * Contexts per CPU: a handler that interrupts another on its CPU (a disk's
 * completion in an interrupt while a task's handler runs, a timer, an
 * NMI) takes the next free one, as the kernel keeps a recursion context
 * for each of task, softirq, hardirq and NMI; with all of them taken, the
 * hit is skipped and counted.  A dyninst thread slot is never interrupted
 * by a handler of its own: one.
 */
#ifdef STP_DYNINST
#define STP_CTX_LEVELS 1
#else
#define STP_CTX_LEVELS 4
#endif

/* Where a run is; kernel handlers run only while it is STP_RUN_RUNNING. */
enum stp_run_state {
	STP_RUN_STARTING = 0,	/* begin probes: kernel handlers are skipped */
	STP_RUN_RUNNING,	/* set by the runner once the begin probes are done */
	STP_RUN_STOPPING,	/* exit(), -T, a signal: set by either side */
	STP_RUN_ERROR,		/* more errors than MAXERRORS: set by either side */
};

/* stp_control.flags, set by the runner */
#define STP_CTL_SUPPRESS_ERRORS 1	/* --suppress-handler-errors: errors never stop the run */

/*
 * context->error in both runtimes: why a handler is unwinding.  RAISED
 * and FATAL are errors (reported, counted); try/catch catches only RAISED.
 */
enum stp_err {
	STP_ERR_NONE,
	STP_ERR_RAISED,		/* a soft error: caught by try/catch, else reported */
	STP_ERR_ABORT,		/* abort(): unwind, nothing reported */
	STP_ERR_NEXT,		/* next: leave the handler (or try the next overload) */
	STP_ERR_RETURN,		/* return inside a kernel loop body (a bpf_loop callback) */
	STP_ERR_FATAL,		/* an error try/catch cannot catch (MAXACTION): reported */
	STP_ERR_SKIP,		/* a map was busy: unwind, counted as a skipped probe */
};

struct stp_control {
	uint32_t state;		/* enum stp_run_state */
	uint32_t flags;		/* STP_CTL_* */
	int64_t target;		/* target(): the -x PID or the -c command's pid, else 0 */
	int64_t errors;		/* errors kernel handlers raised: past MAXERRORS they set
				   STP_RUN_ERROR at once, so that no more handlers run */
};

#endif
