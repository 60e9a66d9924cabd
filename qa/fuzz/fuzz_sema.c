/*
 * fuzz_sema.c - libFuzzer target past the parser: passes 1 to 3 on
 * arbitrary input as a user script, as pmstap -p3 runs them: parse,
 * elaborate against the tapset library and this machine (tracepoints,
 * BTF, kallsyms, ELF files), translate to C.  Pass 3 writes into one
 * scratch directory per process.  Every run frees the arena, so ASan's
 * leak check covers the three passes.
 *
 * PMSTAP_TAPSET_DIR and PMSTAP_RUNTIME_DIR name the library and runtime
 * (qa/fuzz/run.sh sets them to the tree's).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "arena.h"
#include "diag.h"
#include "emit.h"
#include "parse.h"
#include "sema.h"
#include "session.h"
#include "sysroot.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[] = "/tmp/pmstap-fuzz-sema-XXXXXX";
static const char *tapset_dir, *runtime_dir, *tracefs;

/* What pass 3 writes there (emit.c): script.bpf.c and script.c. */
static void remove_scratch(void)
{
	static const char *const files[] = { "script.bpf.c", "script.c" };
	char path[sizeof(scratch) + 32];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", scratch, files[i]);
		unlink(path);
	}
	rmdir(scratch);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static FILE *devnull;

	(void)argc;
	(void)argv;
	tapset_dir = getenv("PMSTAP_TAPSET_DIR");
	runtime_dir = getenv("PMSTAP_RUNTIME_DIR");
	if (!tapset_dir || !runtime_dir || !mkdtemp(scratch)) {
		fprintf(stderr, "fuzz_sema: set PMSTAP_TAPSET_DIR and PMSTAP_RUNTIME_DIR\n");
		exit(2);
	}
	atexit(remove_scratch);
	if (access("/sys/kernel/tracing/events", F_OK) == 0)
		tracefs = "/sys/kernel/tracing";
	devnull = fopen("/dev/null", "w");
	diag_set_stream(devnull);
	return 0;
}

static void fuzz_session(struct session *s)
{
	memset(s, 0, sizeof(*s));
	s->last_pass = 3;
	s->kernel_release = sysroot_kernel_release();
	s->arch = "x86_64";
	s->runtime = "bpf";
	s->privilege = "stapdev";
	s->tracefs = tracefs;
	s->runtime_dir = runtime_dir;
	vec_push(&s->tapset_dirs, (void *)tapset_dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct source src = { "fuzz.stp", text, size, false };
	struct stapfile *file;
	struct program *prog;
	struct session s;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	fuzz_session(&s);
	file = parse_file(&s, &src);
	prog = file && !diag_error_count() ? sema_elaborate(&s, file) : NULL;
	if (prog && !diag_error_count())
		emit_program(&s, prog, scratch);
	diag_reset();
	arena_free_all();
	free(text);
	return 0;
}
