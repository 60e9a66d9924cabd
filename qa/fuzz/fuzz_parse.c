/*
 * fuzz_parse.c - libFuzzer target: pass 1 (lexer, preprocessor, parser)
 * on arbitrary input, as a user script with no arguments, as one with two
 * arguments, and as a tapset macro library followed by a tapset using it.
 * Every run frees the arena, so ASan's leak check covers the whole pass.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "arena.h"
#include "diag.h"
#include "lex.h"
#include "parse.h"
#include "preproc.h"
#include "session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *fuzz_args[] = { "42", "sys_read" };

static void fuzz_session(struct session *s, int nargs)
{
	memset(s, 0, sizeof(*s));
	s->kernel_release = "6.1.0-18-amd64";
	s->arch = "x86_64";
	s->runtime = "bpf";
	s->privilege = "stapusr";
	s->kconfig_path = "/dev/null";	/* every CONFIG_ unset, and no I/O surprises */
	s->args = fuzz_args;
	s->nargs = nargs;
}

static void fuzz_one(const char *text, size_t len, int nargs, bool tapset)
{
	struct session s;
	struct source src = { "fuzz.stp", text, len, tapset };

	fuzz_session(&s, nargs);
	if (tapset) {
		struct source lib = { "fuzz.stpm", text, len, true };

		preproc_load_library(&s, &lib);
	}
	parse_file(&s, &src);
	diag_reset();
	arena_free_all();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	char *text = malloc(size + 1);

	if (!devnull) {
		devnull = fopen("/dev/null", "w");
		diag_set_stream(devnull);
	}
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	fuzz_one(text, size, 0, false);
	fuzz_one(text, size, 2, false);
	fuzz_one(text, size, 0, true);
	free(text);
	return 0;
}
