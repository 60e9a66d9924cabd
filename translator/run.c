/*
 * run.c - pass 5: hand the compiled script to libstaprt and run it.
 *
 * Everything happens in runtime/user (script.h); this is the glue from
 * pmstap's session to its options, and the -v lines of pass 5.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../runtime/user/script.h"
#include "run.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#define KEEP_DEFAULT_S 300

/*
 * How long a keeper holds the run's loaded programs for the next run of
 * the same build (runtime/user/keep.c): PMSTAP_KEEP_LOADED seconds, 0
 * not at all; a value that is no number of seconds keeps the default.
 */
static long keep_seconds(void)
{
	const char *env = getenv("PMSTAP_KEEP_LOADED");
	char *end;
	long v;

	if (!env || !*env)
		return KEEP_DEFAULT_S;
	v = strtol(env, &end, 10);
	if (*end || v < 0 || v > 86400) {
		fprintf(stderr, "pmstap: warning: PMSTAP_KEEP_LOADED=%s is not a number of seconds "
			"(0 to 86400): keeping for %d s\n", env, KEEP_DEFAULT_S);
		return KEEP_DEFAULT_S;
	}
	return v;
}

static void session_opts(const struct session *s, struct stp_script_opts *o)
{
	*o = (struct stp_script_opts){
		.output_path = s->output_path,
		.output_size_max = s->output_size_max,
		.output_files_max = s->output_files_max,
		.target_cmd = s->target_cmd,
		.target_pid = s->target_pid,
		.timeout_s = s->timeout_s,
		.args = s->args,
		.nargs = s->nargs,
		.global_sets = (const char *const *)s->global_sets.items,
		.nglobal_sets = s->global_sets.len,
		.suppress_handler_errors = s->suppress_handler_errors,
		.verbose = s->verbose,
		.prog_name = "pmstap",
		.pmda_name = s->pmda_name,
		.module_name = s->module_name,
		.keep_seconds = keep_seconds(),
	};
}

int run_program(struct session *s, const char *dir)
{
	double t0 = now_ms();
	struct stp_script_opts opts;
	struct stp_script *script;
	int status = 1;

	session_opts(s, &opts);
	if (s->verbose)
		fprintf(stderr, "Pass 5: starting run.\n");
	script = stp_script__open(dir, &opts);
	if (!script)
		return 1;
	stp_script__attach_named_pid(script);	/* dyninst: process(PID) with no -c or -x */
	if (opts.pmda_name && !*opts.pmda_name)	/* --pmda: stap.<the script's name> */
		stp_script__set_pmda_name(script, stp_script__meta(script)->script);
	if (stp_script__load(script) == 0 && stp_script__attach(script) == 0)
		status = stp_script__run(script);
	stp_script__free(script);
	if (s->verbose)
		fprintf(stderr, "Pass 5: run %s in %.0f ms.\n", status ? "failed" : "completed",
			now_ms() - t0);
	return status;
}
