/*
 * main.c - pmstap: run a SystemTap script, pass by pass.
 *
 * The driver reads as the pipeline: options, then parse (pass 1),
 * elaborate (pass 2), and so on, stopping after the pass -p names or at
 * the first pass that reports an error.  A run whose inputs are unchanged
 * since its build goes from the options to pass 5 (manifest.h).
 */
#define _GNU_SOURCE	/* strverscmp */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include "arena.h"
#include "cache.h"
#include "compile.h"
#include "diag.h"
#include "lex.h"
#include "listing.h"
#include "manifest.h"
#include "parse.h"
#include "preproc.h"
#include "run.h"
#include "runtimes.h"
#include "sema.h"
#include "session.h"
#include "sysroot.h"
#include "tapset_path.h"

#ifndef PMSTAP_TAPSET_DIR
#define PMSTAP_TAPSET_DIR "/usr/local/share/pmstap/tapset"
#endif
#ifndef PMSTAP_RUNTIME_DIR
#define PMSTAP_RUNTIME_DIR "/usr/local/share/pmstap/runtime"
#endif

static const char usage_text[] =
	"Usage: pmstap [OPTIONS] FILE [ARGS...]\n"
	"       pmstap [OPTIONS] -e SCRIPT [ARGS...]\n"
	"       pmstap [OPTIONS] --dump-functions | --dump-probe-aliases | --dump-probe-types\n"
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
	"  -W             turn warnings into errors\n"
	"  -u             unoptimized: elide no dead code before checking types\n"
	"  -o FILE        write the script's output to FILE (strftime(3)'s %\n"
	"                 conversions expanded); switch_file() or SIGUSR2 go on\n"
	"                 to FILE.1, FILE.2 ...\n"
	"  -S SIZE[,N]    with -o: FILE.0, FILE.1 ..., the next one after SIZE\n"
	"                 megabytes; keep the last N\n"
	"  -c CMD         start CMD once probes are attached; stop when it exits\n"
	"  -x PID         set target() to PID (--runtime=dyninst: probe that process)\n"
	"  -T SECONDS     stop after SECONDS\n"
	"  -m NAME        name the run's procfs folder /var/tmp/systemtap-USER/NAME\n"
	"                 (default: the script's name)\n"
	"  -l PATTERN     list probe points matching PATTERN\n"
	"  -L PATTERN     list probe points and their variables\n"
	"  -r RELEASE     kernel release that %( kernel_v %) tests (default: uname -r)\n"
	"  -a ARCH        architecture that %( arch %) tests (default: uname -m)\n"
	"  --runtime=NAME compile for runtime NAME: bpf (the default), kernel (a kernel\n"
	"                 module) or dyninst (in the probed process); %( runtime %) tests it\n"
	"  --dyninst      --runtime=dyninst, as stap spells it\n"
	"  --pmda[=NAME]  --runtime=dyninst: pmdastap serves the script's globals as\n"
	"                 stap.NAME.* while it runs (NAME: the script's; see pmdastap(1))\n"
	"  -G NAME=VALUE  set the initial value of global NAME\n"
	"  --compatible=VERSION  what %( systemtap_v %) tests: the SystemTap\n"
	"                 version whose language and tapsets the script expects\n"
	"                 (default " PMSTAP_STAP_COMPAT "; a later one is refused)\n"
	"  --check-version  warn where the script uses tapset code that depends on\n"
	"                 the systemtap version\n"
	"  --dump-functions  list the tapset functions with their types, and exit\n"
	"  --dump-probe-aliases  list the tapsets' probe aliases, and exit\n"
	"  --dump-probe-types  list the shapes of builtin probe points, and exit\n"
	"  -P, --prologue-searching[=WHEN]  put process function probes after the\n"
	"                 prologue: always (-P), auto (the default: unoptimized code\n"
	"                 only, as stap), never\n"
	"  --suppress-handler-errors  count handler errors without stopping\n"
	"  --skip-badvars  a $var that cannot be read is 0, with a warning\n"
	"  -d FILE        name FILE's addresses in kernel context too (usymname(),\n"
	"                 probefunc() ... kept as strings), as the probed programs'\n"
	"  --ldd          the same for the libraries the probed programs and the -d\n"
	"                 files load\n"
	"  -V, --version  print the version and exit\n"
	"  -h, --help     print this help and exit\n"
	"\n"
	"Script arguments are $1, $2, ... (as tokens) and @1, @2, ... (as strings).\n"
	"stap's module-runtime options (-b -s -B -R -k -t -F\n"
	"--all-modules ...) are accepted and have no effect.\n"
	"See pmstap(1).\n";

enum {
	OPT_RUNTIME = 256,
	OPT_DYNINST,
	OPT_PMDA,
	OPT_PROLOGUE,
	OPT_SUPPRESS_HANDLER_ERRORS,
	OPT_SKIP_BADVARS,
	OPT_COMPATIBLE,
	OPT_CHECK_VERSION,
	OPT_DUMP_FUNCTIONS,
	OPT_DUMP_PROBE_ALIASES,
	OPT_DUMP_PROBE_TYPES,
	OPT_LDD,
	OPT_IGNORED,		/* stap options with no effect here, see ignored_option() */
	OPT_IGNORED_ARG,
};

static const struct option long_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "runtime", required_argument, NULL, OPT_RUNTIME },
	{ "dyninst", no_argument, NULL, OPT_DYNINST },
	{ "pmda", optional_argument, NULL, OPT_PMDA },
	{ "suppress-handler-errors", no_argument, NULL, OPT_SUPPRESS_HANDLER_ERRORS },
	{ "skip-badvars", no_argument, NULL, OPT_SKIP_BADVARS },
	{ "compatible", required_argument, NULL, OPT_COMPATIBLE },
	{ "check-version", no_argument, NULL, OPT_CHECK_VERSION },
	{ "dump-functions", no_argument, NULL, OPT_DUMP_FUNCTIONS },
	{ "dump-probe-aliases", no_argument, NULL, OPT_DUMP_PROBE_ALIASES },
	{ "dump-probe-types", no_argument, NULL, OPT_DUMP_PROBE_TYPES },
	{ "ldd", no_argument, NULL, OPT_LDD },
	{ "all-modules", no_argument, NULL, OPT_IGNORED },
	{ "disable-cache", no_argument, NULL, OPT_IGNORED },
	{ "poison-cache", no_argument, NULL, OPT_IGNORED },
	{ "prologue-searching", optional_argument, NULL, OPT_PROLOGUE },
	{ "tmpdir", required_argument, NULL, OPT_IGNORED_ARG },
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

/* Directory NAME (tapset, runtime) of a build tree, when pmstap runs from one. */
static const char *dir_near_binary(const char *name)
{
	char exe[4096], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 64);
	const char *dir;
	struct stat st;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	/* PREFIX/bin/pmstap -> PREFIX/share/pmstap/NAME (an install anywhere) */
	dir = arena_printf("%s/../share/pmstap/%.16s", exe, name);
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return dir;
	/* build/bin/pmstap -> ../../NAME (the source tree) */
	for (int up = 0; up < 2; up++) {
		slash = strrchr(exe, '/');
		if (!slash)
			return NULL;
		*slash = '\0';
	}
	dir = arena_printf("%s/%.16s", exe, name);
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? dir : NULL;
}

/* PMSTAP_TAPSET_DIR, else stap's SYSTEMTAP_TAPSET, else beside pmstap, else the built-in. */
static const char *default_tapset_dir(void)
{
	const char *env = getenv("PMSTAP_TAPSET_DIR");
	const char *near;

	if (env && *env)
		return env;
	env = getenv("SYSTEMTAP_TAPSET");
	if (env && *env)
		return env;
	near = dir_near_binary("tapset");
	return near ? near : PMSTAP_TAPSET_DIR;
}

static const char *default_runtime_dir(void)
{
	const char *env = getenv("PMSTAP_RUNTIME_DIR");
	const char *near;

	if (env && *env)
		return env;
	near = dir_near_binary("runtime");
	return near ? near : PMSTAP_RUNTIME_DIR;
}

static void session_defaults(struct session *s)
{
	static struct utsname u;

	memset(s, 0, sizeof(*s));
	s->last_pass = 5;
	uname(&u);
	s->kernel_release = sysroot_kernel_release();	/* PMSTAP_SYSROOT's, if set */
	s->arch = u.machine;
	s->runtime = "bpf";
	s->privilege = geteuid() == 0 ? "stapdev" : "stapusr";
	if (access(sysroot_path("/sys/kernel/tracing/events"), F_OK) == 0)
		s->tracefs = sysroot_path("/sys/kernel/tracing");
}

static long parse_number(const char *arg, long lo, long hi, const char *what)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(arg, &end, 10);
	if (errno || end == arg || *end || n < lo || n > hi)
		usage_error(what, arg);
	return n;
}

/* -D and -G take NAME=VALUE (-D may omit =VALUE). */
static void check_assignment(const char *arg, bool value_required, const char *opt)
{
	const char *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);

	if (len == 0 || (value_required && !eq))
		usage_error(opt, arg);
	for (size_t i = 0; i < len; i++)
		if (!(arg[i] == '_' || (arg[i] >= 'A' && arg[i] <= 'Z') ||
		      (arg[i] >= 'a' && arg[i] <= 'z') || (i && arg[i] >= '0' && arg[i] <= '9')))
			usage_error(opt, arg);
}

/*
 * stap options that only tune its kernel-module runtime (buffer sizes,
 * module names, cache and symbol-table control) are accepted, so that
 * scripts' documented command lines work, and have no effect; -v says so.
 */
static void ignored_option(struct session *s, const char *name)
{
	if (s->verbose)
		fprintf(stderr, "pmstap: option %s has no effect: it tunes stap's module runtime\n",
			name);
}

/*
 * -S SIZE[,N], as stap's: -o's output goes to FILE.0, FILE.1 ..., the next
 * once SIZE megabytes are written, keeping the last N (0: all).
 */
static void output_sizes(struct session *s, const char *arg)
{
	char *end;
	unsigned long long mb;
	unsigned long n = 0;

	errno = 0;
	mb = strtoull(arg, &end, 10);
	if (*end == ',' && end[1] >= '0' && end[1] <= '9')
		n = strtoul(end + 1, &end, 10);
	if (!(*arg >= '0' && *arg <= '9') || *end || errno || mb > (UINT64_MAX >> 20) || n > INT_MAX)
		usage_error("invalid -S '%s' (expected SIZE[,N]: megabytes per file, files kept)",
			    arg);
	s->output_size_max = (uint64_t)mb << 20;
	s->output_files_max = (int)n;
}

/* -m NAME: stap's rule, letters, digits and '_' (it names a folder). */
static const char *module_name(const char *name)
{
	size_t n = strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");

	if (!*name || name[n] || strlen(name) > 64)
		usage_error("invalid module name '%s' (letters, digits and '_', at most 64)", name);
	return name;
}

static void print_version(void)
{
	printf("pmstap (pcp-stap) %s, SystemTap language %s\n", PMSTAP_VERSION,
	       PMSTAP_STAP_COMPAT);
	exit(0);
}

static bool pass_given;	/* -p: stap refuses it with -l, -L and --dump-* */

/* --compatible=VERSION: stap's words for a version later than ours. */
static void compatible_option(struct session *s, const char *version)
{
	if (strverscmp(version, PMSTAP_STAP_COMPAT) > 0)
		usage_error("systemtap version " PMSTAP_STAP_COMPAT
			    " cannot be compatible with future version %s", version);
	s->compatible = version;
}

/* --dump-*: one of them, and not with -l or -L (as stap). */
static void dump_option(struct session *s, int which)
{
	if (s->dump || s->list_pattern)
		usage_error("%s", "only one of the -l/-L/--dump-* switches may be specified");
	s->dump = which;
}

/* -l / -L PATTERN: elaborate "probe PATTERN {}" and list what it became, as stap does. */
static void listing_option(struct session *s, bool vars)
{
	if (s->dump)
		usage_error("%s", "only one of the -l/-L/--dump-* switches may be specified");
	if (s->list_pattern || s->script_text)
		usage_error("%s", "only one script can be given (-l, -L or -e)");
	s->list_pattern = optarg;
	s->list_vars = vars;
	s->script_text = listing_script(optarg);
	s->last_pass = 2;
	s->no_warnings = true;
}

static void parse_option(struct session *s, int c, int long_index)
{
	switch (c) {
	case 'e':
		if (s->list_pattern || s->script_text)
			usage_error("%s", "only one script can be given (-l, -L or -e)");
		s->script_text = optarg;
		break;
	case 'p':
		s->last_pass = (int)parse_number(optarg, 1, 5, "invalid pass number '%s' (expected 1 to 5)");
		pass_given = true;
		break;
	case 'I': vec_push(&s->tapset_dirs, optarg); break;
	case 'D': check_assignment(optarg, false, "invalid -D '%s' (expected NAME or NAME=VALUE)"); vec_push(&s->defines, optarg); break;
	case 'G': check_assignment(optarg, true, "invalid -G '%s' (expected NAME=VALUE)"); vec_push(&s->global_sets, optarg); break;
	case 'g': s->guru = true; break;
	case 'v': s->verbose++; break;
	case 'w': s->no_warnings = true; break;
	case 'W': s->warnings_are_errors = true; break;
	case 'o': s->output_path = optarg; break;
	case 'c': s->target_cmd = optarg; break;
	case 'x': s->target_pid = parse_number(optarg, 1, 0x7fffffff, "invalid process id '%s'"); break;
	case 'T': s->timeout_s = parse_number(optarg, 1, 0x7fffffff, "invalid timeout '%s' (expected seconds)"); break;
	case 'r': s->kernel_release = optarg; break;
	case 'a': s->arch = optarg; break;
	case OPT_RUNTIME:
		if (!runtime_find(optarg))
			usage_error("no runtime '%s' (the runtimes are bpf, kernel and dyninst)", optarg);
		s->runtime = optarg;
		break;
	case OPT_DYNINST: s->runtime = "dyninst"; break;
	case OPT_PMDA: s->pmda_name = optarg ? optarg : ""; break;
	case OPT_SUPPRESS_HANDLER_ERRORS: s->suppress_handler_errors = true; break;
	case OPT_SKIP_BADVARS: s->skip_badvars = true; break;
	case OPT_COMPATIBLE: compatible_option(s, optarg); break;
	case OPT_CHECK_VERSION: s->check_version = true; break;
	case OPT_DUMP_FUNCTIONS: dump_option(s, DUMP_FUNCTIONS); break;
	case OPT_DUMP_PROBE_ALIASES: dump_option(s, DUMP_PROBE_ALIASES); break;
	case OPT_DUMP_PROBE_TYPES: dump_option(s, DUMP_PROBE_TYPES); break;
	case 'l': case 'L': listing_option(s, c == 'L'); break;
	case 'P': s->prologue = PROLOGUE_ALWAYS; break;
	case OPT_PROLOGUE:
		if (!optarg || !strcmp(optarg, "always"))
			s->prologue = PROLOGUE_ALWAYS;
		else if (!strcmp(optarg, "auto"))
			s->prologue = PROLOGUE_AUTO;
		else if (!strcmp(optarg, "never"))
			s->prologue = PROLOGUE_NEVER;
		else
			usage_error("invalid --prologue-searching '%s' (expected always, auto or never)",
				    optarg);
		break;
	case 'u': s->unoptimized = true; break;
	case 'b': case 'k': case 't': case 'F':
		ignored_option(s, (char[]){ '-', (char)c, 0 });
		break;
	case 'm': s->module_name = module_name(optarg); break;
	case 's':
		/* no buffer here, but stap's check of the value */
		parse_number(optarg, 1, 4095, "invalid buffer size '%s' (should be 1-4095)");
		ignored_option(s, "-s");
		break;
	case 'S': output_sizes(s, optarg); break;
	case 'd': vec_push(&s->sym_files, optarg); break;
	case OPT_LDD: s->ldd = true; break;
	case 'B': case 'R':
		ignored_option(s, (char[]){ '-', (char)c, 0 });
		break;
	case OPT_IGNORED: case OPT_IGNORED_ARG:
		ignored_option(s, long_options[long_index].name);
		break;
	case 'h': fputs(usage_text, stdout); exit(0);
	case 'V': print_version(); break;
	default:
		fputs("Try 'pmstap --help' for more information.\n", stderr);
		exit(1);
	}
}

/*
 * TMPDIR, as stap checks it: clang and kbuild write there at pass 4, and a
 * name with spaces or shell characters breaks kbuild, so only stap's safe
 * characters; and it must be a directory pmstap can write.
 */
static void check_tmpdir(void)
{
	const char *dir = getenv("TMPDIR");
	regex_t safe;
	bool ok;

	if (!dir)
		return;
	regcomp(&safe, "^[-/._0-9a-z]+$", REG_ICASE | REG_NOSUB | REG_EXTENDED);
	ok = regexec(&safe, dir, 0, NULL, 0) == 0;
	regfree(&safe);
	if (!ok)
		usage_error("TMPDIR '%s' has characters other than letters, digits and -/._", dir);
	if (access(dir, W_OK | X_OK) != 0) {
		fprintf(stderr, "pmstap: cannot use TMPDIR '%s': %s\n", dir, strerror(errno));
		exit(1);
	}
}

/* A --dump-* option lists and exits: no script, no -p (stap's rules). */
static void check_dump_options(struct session *s, int left)
{
	if (s->script_text || left > 0)
		usage_error("%s", "cannot specify a script with -l/-L/--dump-* switches");
	if (pass_given)
		usage_error("%s", "cannot specify -p with -l/-L/--dump-* switches");
	/* stap lists functions and aliases quietly; -vv shows the warnings */
	if (s->dump != DUMP_PROBE_TYPES && s->verbose < 2)
		s->no_warnings = true;
}

static void parse_options(struct session *s, int argc, char **argv)
{
	int c, long_index = 0;

	while ((c = getopt_long(argc, argv, "e:p:I:D:G:gvwWo:c:x:T:l:L:r:a:hVbktuPFs:S:B:R:m:d:",
				long_options, &long_index)) != -1)
		parse_option(s, c, long_index);
	if (s->dump)
		check_dump_options(s, argc - optind);
	else if (!s->script_text) {
		if (optind >= argc)
			usage_error("%s", "no script given (a FILE or -e SCRIPT)");
		s->script_path = argv[optind++];
	}
	s->args = (const char **)argv + optind;
	s->nargs = argc - optind;
	if (s->target_cmd && s->target_pid)
		usage_error("%s", "cannot specify -c and -x together");
	if (s->output_size_max && !s->output_path)
		usage_error("%s", "-S needs -o FILE: the files it fills one after another");
	check_tmpdir();
	if (s->pmda_name && strcmp(s->runtime, "dyninst") != 0)
		usage_error("--pmda hands a --runtime=dyninst script to pmdastap; scripts of the "
			    "%s runtime run in pmdastap itself (its autostart directory or "
			    "stap.control.register, see pmdastap(1))", s->runtime);
	s->include_dirs = s->tapset_dirs.len;
	vec_push(&s->tapset_dirs, (void *)default_tapset_dir());
	s->runtime_dir = default_runtime_dir();
}

static int is_stpm(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 5 && strcmp(d->d_name + n - 5, ".stpm") == 0;
}

/* Was PATH loaded already through another directory (stap: by inode)? */
static bool seen_file(struct hmap *seen, const char *path)
{
	struct stat st;
	char *id;

	if (stat(path, &st) != 0)
		return false;
	id = arena_printf("%ju:%ju", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
	if (hmap_get(seen, id))
		return true;
	hmap_put(seen, id, id);
	return false;
}

/* Library macros: every *.stpm in the tapset path, before the script. */
static int load_library_macros(struct session *s)
{
	struct hmap seen = { .str_keys = true };
	int files = 0;

	for (int i = 0; i < s->tapset_dirs.len; i++) {
		const char *dir = VEC_AT(&s->tapset_dirs, i);
		struct dirent **list;
		int n = scandir(dir, &list, is_stpm, alphasort);

		for (int j = 0; j < n; j++) {
			const char *path = arena_printf("%s/%s", dir, list[j]->d_name);
			struct source *src = seen_file(&seen, path) ? NULL
					     : lex_source_read_file(path, true);

			if (src) {
				preproc_load_library(s, src);
				files++;
			}
			free(list[j]);
		}
		if (n >= 0)
			free(list);
	}
	/* @MAXSTRINGLEN: the longest string the script's runtime keeps, as -D sets it */
	preproc_load_library(s, lex_source_from_string("<built-in>", arena_printf(
		"@define MAXSTRINGLEN %%( %lld %%)\n",
		(long long)session_define(s, "MAXSTRINGLEN", STAP_MAXSTRINGLEN))));
	return files;
}

static struct source *read_stdin(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	char buf[8192];
	size_t n;
	struct source *src;

	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
		fwrite(buf, 1, n, mem);
	fclose(mem);
	src = lex_source_from_string("<stdin>", text);
	free(text);
	return src;
}

static struct stapfile *pass1_parse(struct session *s)
{
	double t0 = now_ms();
	int macro_files = load_library_macros(s);
	int include_files = tapset_path_parse_includes(s);
	struct source *src;
	struct stapfile *file;
	const char *tapset;

	if (s->script_text)
		src = lex_source_from_string("<input>", s->script_text);
	else if (strcmp(s->script_path, "-") == 0)
		src = read_stdin();
	else if ((tapset = tapset_path_holding(s, s->script_path))) {
		diag_error((struct srcloc){ 0 }, "%stapset file '%s' cannot be run directly as a session script",
			   strlen(tapset) > 5 && !strcmp(tapset + strlen(tapset) - 5, ".stpm") ? "macro " : "",
			   tapset_path_display(tapset));
		return NULL;
	} else
		src = lex_source_read_file(s->script_path, false);
	if (!src)
		return NULL;
	file = parse_file(s, src);
	if (s->verbose)
		fprintf(stderr, "Pass 1: parsed user script, %d library macro file%s and %d -I tapset file%s in %.0f ms.\n",
			macro_files, macro_files == 1 ? "" : "s", include_files,
			include_files == 1 ? "" : "s", now_ms() - t0);
	return diag_error_count() ? NULL : file;
}

static struct program *pass2_elaborate(struct session *s, struct stapfile *script)
{
	double t0 = now_ms();
	struct program *prog = sema_elaborate(s, script);
	int probes, funcs, globals;

	if (!prog || diag_error_count())	/* -W: a warning after the last check */
		return NULL;
	if (!s->list_pattern && !runtime_check_program(s, prog))
		return NULL;
	if (s->verbose) {
		sema_counts(prog, &probes, &funcs, &globals);
		fprintf(stderr, "Pass 2: analyzed script: %d probe%s, %d function%s, %d global%s in %.0f ms.\n",
			probes, probes == 1 ? "" : "s", funcs, funcs == 1 ? "" : "s",
			globals, globals == 1 ? "" : "s", now_ms() - t0);
	}
	return prog;
}

/* -l / -L: the points "probe PATTERN {}" became. */
static int list_points(struct session *s, struct program *prog)
{
	if (listing_print(stdout, s, prog) > 0)
		return 0;
	diag_error((struct srcloc){ 0 }, "no probe point matches '%s'", s->list_pattern);
	return 1;
}

/* ---- passes 3 and 4, or what they made, from the cache ---- */

struct build {
	const char *root;	/* the cache directory */
	const char *key;	/* the hash of everything the build depends on */
	const char *dir;	/* the build: a cache entry, or a directory in the making */
	bool unpublished;	/* -p3: made, shown and removed; never a cache entry */
};

static bool pass3_translate(struct session *s, struct program *prog, struct build *b)
{
	double t0 = now_ms();

	if (!(b->dir = cache_begin(b->root, b->key)))
		return false;
	b->unpublished = s->last_pass == 3;
	if (runtime_of(s)->emit(s, prog, b->dir) != 0) {
		cache_remove(b->dir);
		return false;
	}
	if (s->verbose)
		fprintf(stderr, "Pass 3: translated to C into \"%s\" in %.0f ms.\n",
			b->unpublished ? b->dir : arena_printf("%s/%s", b->root, b->key),
			now_ms() - t0);
	return true;
}

/* On failure the build stays where it is, for the bug report. */
static bool pass4_compile(struct session *s, struct build *b)
{
	double t0 = now_ms();

	if (runtime_of(s)->compile(s, b->dir, b->root) != 0)
		return false;
	if (!(b->dir = cache_publish(b->root, b->dir, b->key)))
		return false;
	if (s->verbose)
		fprintf(stderr, "Pass 4: compiled C into \"%s\" in %.0f ms.\n", runtime_of(s)->object,
			now_ms() - t0);
	return true;
}

/* -v: passes 3 and 4 were the cache's build DIR. */
static void say_cached(struct session *s, const char *dir)
{
	if (!s->verbose)
		return;
	fprintf(stderr, "Pass 3: using cached %s\n", dir);
	if (s->last_pass >= 4)
		fprintf(stderr, "Pass 4: using cached %s/%s\n", dir, runtime_of(s)->object);
}

/* Passes 3 and 4 up to -p, skipped when the cache has their output already. */
static bool build_program(struct session *s, struct program *prog, struct build *b)
{
	const char *stale;

	if (!runtime_of(s)->emit) {
		diag_error((struct srcloc){ 0 }, "the %s runtime cannot translate scripts yet: "
			   "pass 2 checked this one for it", s->runtime);
		diag_hint("run it on the bpf runtime (--runtime=bpf, the default)");
		return false;
	}
	if (!(b->root = cache_root(s)))
		return false;
	b->key = cache_key(s, prog);
	if ((b->dir = cache_lookup(b->root, b->key, &stale))) {
		say_cached(s, b->dir);
		return true;
	}
	if (stale && s->verbose)
		fprintf(stderr, "Pass 3: the cached build was made from another version of %s\n",
			stale);
	return pass3_translate(s, prog, b) && (s->last_pass == 3 || pass4_compile(s, b));
}

static void print_file(const char *path)
{
	size_t len = 0;
	char *text = arena_read_file(path, &len);

	if (text)
		fwrite(text, 1, len, stdout);
	else
		diag_error((struct srcloc){ 0 }, "cannot read %s: %s", path, strerror(errno));
}

/* -p3: the generated C, kernel side then user side. */
static int print_sources(struct session *s, struct build *b)
{
	const char *source = runtime_of(s)->source;

	printf("/* ---- %s ---- */\n", source);
	print_file(arena_printf("%s/%s", b->dir, source));
	printf("/* ---- %s ---- */\n", COMPILE_USER_SOURCE);
	print_file(arena_printf("%s/%s", b->dir, COMPILE_USER_SOURCE));
	if (b->unpublished)
		cache_remove(b->dir);
	return diag_error_count() ? 1 : 0;
}

/* -p4: where the objects are. */
static int print_objects(struct session *s, struct build *b)
{
	printf("%s/%s\n%s/%s\n", b->dir, runtime_of(s)->object, b->dir, COMPILE_USER_OBJECT);
	return 0;
}

static int finish(int status)
{
	int errors = diag_errors_shown();

	arena_free_all();
	diag_report_duplicates();
	if (errors && status)
		fprintf(stderr, "pmstap: %d error%s; stopped.\n", errors, errors == 1 ? "" : "s");
	return status;
}

/*
 * A listing (-p1, -p2) written whole: made in memory, then sent with one
 * write().  Tests pipe listings into "grep -q", which exits at its first
 * match; stdio's 4-KiB pieces written after that would kill pmstap with
 * SIGPIPE, where stap's shorter -p2 listing (no handler bodies) leaves
 * in one piece.  A pipe takes up to 64 KiB in one write.
 */
struct whole {
	char *text;
	size_t len;
	FILE *f;
};

static FILE *whole_begin(struct whole *w)
{
	w->f = open_memstream(&w->text, &w->len);
	return w->f ? w->f : stdout;
}

static void whole_end(struct whole *w)
{
	ssize_t n;

	if (!w->f)
		return;
	fclose(w->f);
	fflush(stdout);
	for (size_t off = 0; off < w->len; off += (size_t)n) {
		n = write(STDOUT_FILENO, w->text + off, w->len - off);
		if (n < 0 && errno == EINTR)
			n = 0;
		else if (n < 0)
			break;
	}
	free(w->text);
}

/* Passes 1-4 skipped: the cache's manifest for this command line names a build (manifest.h). */
static bool build_from_manifest(struct session *s, int argc, char **argv, struct build *b)
{
	double t0 = now_ms();

	if (!(b->dir = manifest_lookup(s, argc, argv)))
		return false;
	if (s->verbose)
		fprintf(stderr, "Pass 1-2: skipped: nothing the cached build was made from has "
			"changed (checked in %.1f ms).\n", now_ms() - t0);
	say_cached(s, b->dir);
	return true;
}

/*
 * Passes 1-4 up to -p: -1 when there is a build to go on with, else the
 * exit status (-p1, -p2 and -l are done; an error).
 */
static int passes_1_to_4(struct session *s, struct build *b)
{
	struct stapfile *script;
	struct program *prog;
	struct whole listing = { 0 };

	script = pass1_parse(s);
	if (!script)
		return 1;
	if (s->last_pass == 1) {
		ast_print_file(whole_begin(&listing), script);
		whole_end(&listing);
		return 0;
	}

	prog = pass2_elaborate(s, script);
	manifest_passes_done();
	if (!prog)
		return 1;
	if (s->list_pattern)
		return list_points(s, prog);
	if (s->last_pass == 2) {
		sema_print_program(whole_begin(&listing), prog);
		whole_end(&listing);
		return 0;
	}

	if (!build_program(s, prog, b))
		return 1;
	if (!b->unpublished)
		manifest_write(s, b->root, b->key);
	return -1;
}

/* --dump-*: the library (with the -I directories, parsed as pass 1 does), listed. */
static int dump(struct session *s)
{
	load_library_macros(s);
	tapset_path_parse_includes(s);
	if (diag_error_count())
		return 1;
	return sema_dump(stdout, s);
}

int main(int argc, char **argv)
{
	struct session s;
	struct build b = { 0 };
	int status;

	session_defaults(&s);
	parse_options(&s, argc, argv);
	diag_suppress_warnings(s.no_warnings);
	diag_warnings_are_errors(s.warnings_are_errors);
	diag_keep_duplicates(s.verbose > 0);	/* as stap */
	if (s.dump)
		return finish(dump(&s));

	if (!build_from_manifest(&s, argc, argv, &b) && (status = passes_1_to_4(&s, &b)) >= 0)
		return finish(status);
	if (s.last_pass == 3)
		return finish(print_sources(&s, &b));
	if (s.last_pass == 4)
		return finish(print_objects(&s, &b));
	return finish(run_program(&s, b.dir));
}
