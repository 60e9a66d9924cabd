/*
 * main.c - pmstap: run a SystemTap script, pass by pass.
 *
 * The driver reads as the pipeline: options, then parse (pass 1),
 * elaborate (pass 2), and so on, stopping after the pass -p names or at
 * the first pass that reports an error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include "arena.h"
#include "diag.h"
#include "lex.h"
#include "parse.h"
#include "sema.h"
#include "session.h"

#ifndef PMSTAP_TAPSET_DIR
#define PMSTAP_TAPSET_DIR "/usr/local/share/pmstap/tapset"
#endif

static const char usage_text[] =
	"Usage: pmstap [OPTIONS] FILE [ARGS...]\n"
	"       pmstap [OPTIONS] -e SCRIPT [ARGS...]\n"
	"Run a SystemTap script; its globals can also be served as PCP metrics\n"
	"by pmdastap.  FILE '-' reads the script from standard input.\n"
	"\n"
	"Options:\n"
	"  -e SCRIPT      run SCRIPT given on the command line\n"
	"  -p NUM         stop after pass NUM: 1 parse, 2 elaborate, 3 translate,\n"
	"                 4 compile, 5 run (the default)\n"
	"  -I DIR         look for tapsets in DIR too (may be repeated)\n"
	"  -D NAME[=VAL]  set a limit or macro for the generated code (MAXMAPENTRIES,\n"
	"                 MAXACTION, MAXSTRINGLEN, MAXERRORS, ...)\n"
	"  -g             guru mode: allow embedded C (%{ %}) in the script\n"
	"  -v             verbose: per-pass times and counts (repeat for more)\n"
	"  -w             suppress warnings\n"
	"  -o FILE        write the script's output to FILE\n"
	"  -c CMD         start CMD once probes are attached; stop when it exits\n"
	"  -x PID         set target() to PID\n"
	"  -T SECONDS     stop after SECONDS\n"
	"  -l PATTERN     list probe points matching PATTERN\n"
	"  -L PATTERN     list probe points and their variables\n"
	"  -r RELEASE     kernel release that %( kernel_v %) tests (default: uname -r)\n"
	"  -a ARCH        architecture that %( arch %) tests (default: uname -m)\n"
	"  --runtime=NAME runtime that %( runtime %) tests: bpf (the default)\n"
	"  -V, --version  print the version and exit\n"
	"  -h, --help     print this help and exit\n"
	"\n"
	"Script arguments are $1, $2, ... (as tokens) and @1, @2, ... (as strings).\n"
	"See pmstap(1).\n";

enum { OPT_RUNTIME = 256 };

static const struct option long_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "runtime", required_argument, NULL, OPT_RUNTIME },
	{ NULL, 0, NULL, 0 },
};

static void usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "pmstap: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'pmstap --help' for more information.\n");
	exit(1);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The tapset directory of a build tree, when pmstap runs from one. */
static const char *tapset_dir_near_binary(void)
{
	char exe[4096], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 32);
	struct stat st;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	/* build/bin/pmstap -> ../../tapset */
	for (int up = 0; up < 3; up++) {
		slash = strrchr(exe, '/');
		if (!slash)
			return NULL;
		*slash = '\0';
	}
	strcat(exe, "/tapset");
	if (stat(exe, &st) == 0 && S_ISDIR(st.st_mode))
		return arena_strdup(exe);
	return NULL;
}

static const char *default_tapset_dir(void)
{
	const char *env = getenv("PMSTAP_TAPSET_DIR");
	const char *near;

	if (env && *env)
		return env;
	near = tapset_dir_near_binary();
	return near ? near : PMSTAP_TAPSET_DIR;
}

static void session_defaults(struct session *s)
{
	static struct utsname u;

	memset(s, 0, sizeof(*s));
	s->last_pass = 5;
	uname(&u);
	s->kernel_release = u.release;
	s->arch = u.machine;
	s->runtime = "bpf";
	s->privilege = geteuid() == 0 ? "stapdev" : "stapusr";
	if (access("/sys/kernel/tracing/events", F_OK) == 0)
		s->tracefs = "/sys/kernel/tracing";
}

static int parse_pass(const char *arg)
{
	char *end;
	long n = strtol(arg, &end, 10);

	if (*end || n < 1 || n > 5)
		usage_error("invalid pass number '%s' (expected 1 to 5)", arg);
	return (int)n;
}

static void parse_options(struct session *s, int argc, char **argv)
{
	int c;

	while ((c = getopt_long(argc, argv, "+e:p:I:D:gvwo:c:x:T:l:L:r:a:hV",
				long_options, NULL)) != -1) {
		switch (c) {
		case 'e': s->script_text = optarg; break;
		case 'p': s->last_pass = parse_pass(optarg); break;
		case 'I': vec_push(&s->tapset_dirs, optarg); break;
		case 'D': vec_push(&s->defines, optarg); break;
		case 'g': s->guru = true; break;
		case 'v': s->verbose++; break;
		case 'w': s->no_warnings = true; break;
		case 'o': s->output_path = optarg; break;
		case 'r': s->kernel_release = optarg; break;
		case 'a': s->arch = optarg; break;
		case OPT_RUNTIME:
			if (strcmp(optarg, "bpf") != 0)
				usage_error("runtime '%s' is not available (only 'bpf')", optarg);
			s->runtime = optarg;
			break;
		case 'c': case 'x': case 'T': case 'l': case 'L':
			usage_error("-%s needs the runtime (passes 3-5), which is not built yet",
				    (char[]){ (char)c, 0 });
			break;
		case 'h': fputs(usage_text, stdout); exit(0);
		case 'V':
			printf("pmstap (pcp-stap) %s, SystemTap language %s\n",
			       PMSTAP_VERSION, PMSTAP_STAP_COMPAT);
			exit(0);
		default:
			fputs("Try 'pmstap --help' for more information.\n", stderr);
			exit(1);
		}
	}
	if (!s->script_text) {
		if (optind >= argc)
			usage_error("%s", "no script given (a FILE or -e SCRIPT)");
		s->script_path = argv[optind++];
	}
	s->args = (const char **)argv + optind;
	s->nargs = argc - optind;
	vec_push(&s->tapset_dirs, (void *)default_tapset_dir());
}

static int is_stpm(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 5 && strcmp(d->d_name + n - 5, ".stpm") == 0;
}

/* Library macros: every *.stpm in the tapset path, before the script. */
static int load_library_macros(struct session *s)
{
	int files = 0;

	for (int i = 0; i < s->tapset_dirs.len; i++) {
		const char *dir = VEC_AT(&s->tapset_dirs, i);
		struct dirent **list;
		int n = scandir(dir, &list, is_stpm, alphasort);

		for (int j = 0; j < n; j++) {
			struct source *src = source_read_file(
				arena_printf("%s/%s", dir, list[j]->d_name), true);

			if (src) {
				pp_load_library(s, src);
				files++;
			}
			free(list[j]);
		}
		if (n >= 0)
			free(list);
	}
	return files;
}

static struct stapfile *pass1_parse(struct session *s)
{
	double t0 = now_ms();
	int macro_files = load_library_macros(s);
	struct source *src;
	struct stapfile *file;

	if (s->script_text)
		src = source_from_string("<input>", s->script_text);
	else
		src = source_read_file(s->script_path, false);
	if (!src)
		return NULL;
	file = parse_file(s, src);
	if (s->verbose)
		fprintf(stderr, "Pass 1: parsed user script and %d library macro file%s in %.0f ms.\n",
			macro_files, macro_files == 1 ? "" : "s", now_ms() - t0);
	return diag_error_count() ? NULL : file;
}

static struct program *pass2_elaborate(struct session *s, struct stapfile *script)
{
	double t0 = now_ms();
	struct program *prog = sema_elaborate(s, script);
	int probes, funcs, globals;

	if (!prog)
		return NULL;
	if (s->verbose) {
		sema_counts(prog, &probes, &funcs, &globals);
		fprintf(stderr, "Pass 2: analyzed script: %d probe%s, %d function%s, %d global%s in %.0f ms.\n",
			probes, probes == 1 ? "" : "s", funcs, funcs == 1 ? "" : "s",
			globals, globals == 1 ? "" : "s", now_ms() - t0);
	}
	return prog;
}

static int finish(int status)
{
	int errors = diag_error_count();

	arena_free_all();
	if (errors && status)
		fprintf(stderr, "pmstap: %d error%s; stopped.\n", errors, errors == 1 ? "" : "s");
	return status;
}

int main(int argc, char **argv)
{
	struct session s;
	struct stapfile *script;
	struct program *prog;

	session_defaults(&s);
	parse_options(&s, argc, argv);
	diag_suppress_warnings(s.no_warnings);

	script = pass1_parse(&s);
	if (!script)
		return finish(1);
	if (s.last_pass == 1) {
		ast_print_file(stdout, script);
		return finish(0);
	}

	prog = pass2_elaborate(&s, script);
	if (!prog)
		return finish(1);
	if (s.last_pass == 2) {
		sema_print_program(stdout, prog);
		return finish(0);
	}

	fprintf(stderr, "pmstap: pass %d (%s) is not built yet: this version stops after pass 2\n",
		3, "translate");
	return finish(1);
}
