/* session.h - what one pmstap run was asked to do, shared by every pass. */
#ifndef PMSTAP_SESSION_H
#define PMSTAP_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "arena.h"
#include "hmap.h"
#include "vec.h"

struct pp_shared;

struct session {
	/* the script: a file, or -e text */
	const char *script_path;	/* NULL with -e */
	const char *script_text;	/* the -e text, else NULL */
	const char **args;		/* $1.. / @1.. */
	int nargs;

	struct vec tapset_dirs;		/* char *: -I dirs, then the default */
	int include_dirs;		/* how many of those came from -I */
	struct vec defines;		/* char *: -D NAME[=VALUE] as given */
	struct vec global_sets;		/* char *: -G NAME=VALUE, initial values of globals */
	const char *output_path;	/* -o FILE */
	uint64_t output_size_max;	/* -S SIZE[,N]: SIZE in bytes (0: none) */
	int output_files_max;		/*	      and N (0: all) */
	const char *target_cmd;		/* -c CMD */
	const char *pmda_name;		/* --pmda[=NAME]: "" for the script's name; NULL: none */
	const char *module_name;	/* -m NAME: the procfs folder's name; NULL: the script's */
	long target_pid;		/* -x PID; 0 when not given */
	long timeout_s;			/* -T SECONDS; 0 when not given */
	bool suppress_handler_errors;	/* --suppress-handler-errors */
	bool skip_badvars;		/* --skip-badvars: a $var that cannot be read is 0 */
	struct vec sym_files;		/* char *: -d FILE, named in kernel context (emit_usyms.c) */
	bool ldd;			/* --ldd: and the libraries the probed files load */
	/* process(..).function probes after the prologue: -P, --prologue-searching[=WHEN] */
	enum { PROLOGUE_AUTO, PROLOGUE_ALWAYS, PROLOGUE_NEVER } prologue;

	int last_pass;			/* -pN: 1..5 */
	int verbose;			/* -v count */
	bool guru;			/* -g: embedded C allowed */
	bool unoptimized;		/* -u: no dead code elided before types are checked */
	bool no_warnings;		/* -w */
	bool warnings_are_errors;	/* -W */
	bool check_version;		/* --check-version: warn where code depends on systemtap_v */
	const char *compatible;		/* --compatible=VERSION: what systemtap_v is */

	/* --dump-functions, --dump-probe-aliases, --dump-probe-types: list, run nothing */
	enum { DUMP_NONE, DUMP_FUNCTIONS, DUMP_PROBE_ALIASES, DUMP_PROBE_TYPES } dump;

	/*
	 * The files of the -I directories, parsed in pass 1 as stap does:
	 * path -> struct stapfile *, or -> the session itself for a file with
	 * errors (skipped).  Pass 2's library takes them from here.
	 */
	struct hmap *include_parsed;

	/* what %( %) conditionals test, from the running system unless overridden */
	const char *kernel_release;	/* uname -r, or -r */
	const char *arch;		/* x86_64, ... (-a) */
	const char *runtime;		/* "bpf" (--runtime) */
	const char *privilege;		/* "stapdev" when root, else "stapusr" */
	const char *kconfig_path;	/* where CONFIG_* values are read (NULL: search) */
	const char *tracefs;		/* /sys/kernel/tracing, or NULL when absent */
	const char *runtime_dir;	/* the runtime headers the generated C includes */

	/* -l / -L PATTERN: list the probe points PATTERN matches, run nothing */
	const char *list_pattern;
	bool list_vars;			/* -L: with their variables; pass 2 keeps unread locals */

	/* the preprocessor's state for every file: tapset macros, kernel config */
	struct pp_shared *pp;		/* preproc.c, in the arena; NULL until first used */
};

/* The longest string, NUL included, unless -D MAXSTRINGLEN=N says otherwise. */
#define STAP_MAXSTRINGLEN 512

/* The value of -D NAME=VALUE (the last one given), else DFLT. */
static inline int64_t session_define(const struct session *s, const char *name, int64_t dflt)
{
	size_t n = strlen(name);

	for (int i = s->defines.len - 1; i >= 0; i--) {
		const char *d = VEC_AT(&s->defines, i);

		if (strncmp(d, name, n) == 0 && d[n] == '=')
			return strtoll(d + n + 1, NULL, 0);
	}
	return dflt;
}

/* The installed version, as systemtap_v sees it and -V prints. */
#define PMSTAP_VERSION "0.1"
#define PMSTAP_STAP_COMPAT "4.8"	/* the language level systemtap_v reports */

#endif
