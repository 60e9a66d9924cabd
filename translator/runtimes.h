/*
 * runtimes.h - what each runtime (--runtime=NAME) can do, in one table:
 * the probe families it runs (probe_kinds.h's context columns), whether
 * this machine can run it, and its pass-3 emitter and pass-4 toolchain.
 *
 *	bpf	BPF programs in the kernel, user-context probes in the runner
 *		(libstaprt); the default
 *	kernel	a kernel module (stap's original runtime), built with kbuild
 *		for a release (-r) and run where modules load
 *	dyninst	inside the probed process, for an unprivileged user
 *
 * Pass 2 refuses, with the probe's location and the runtime's name, a
 * probe the chosen runtime cannot run, and a runtime this machine cannot
 * run; pass 3 refuses a runtime whose emitter is not written yet.
 * Adding a runtime: its enum runtime_id (probe_kinds.h), its row here, a
 * context column in every probe family's row, its emitter and toolchain.
 */
#ifndef PMSTAP_RUNTIMES_H
#define PMSTAP_RUNTIMES_H

#include "probe_kinds.h"
#include "session.h"

struct runtime_info {
	const char *name;		/* --runtime=NAME, and %( runtime == "NAME" %) */
	/* Why this machine cannot run the script on it (NULL: it can), and what to do then. */
	const char *(*unavailable)(const struct session *s);
	const char *unavailable_hint;
	/* Pass 3 into DIR (NULL: not written yet), then pass 4 there. */
	int (*emit)(struct session *s, struct program *prog, const char *dir);
	int (*compile)(struct session *s, const char *dir, const char *root);
	/* pass 3's C for the probes' side and pass 4's object of it, in DIR */
	const char *source, *object;
};

/* NAME's row, or NULL when there is no such runtime. */
const struct runtime_info *runtime_find(const char *name);
enum runtime_id runtime_id_of(const struct session *s);
const struct runtime_info *runtime_of(const struct session *s);

/*
 * The end of pass 2: every probe of PROG can run on the session's runtime,
 * and this machine can run that runtime.  False after reporting each
 * probe that cannot.
 */
bool runtime_check_program(const struct session *s, const struct program *prog);

#endif
