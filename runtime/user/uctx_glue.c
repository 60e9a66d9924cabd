/*
 * uctx_glue.c - the runner's side of user-context handlers (stp_user.h).
 *
 * One struct stp_uctx per script, made once the BPF object is loaded: its
 * output, errors, warnings and exit() go through the runner's stream and
 * accounting (events.c), so that both contexts print and count the same
 * way.  The script's stp_globals_init() gives the globals their initial
 * values before -G and before any probe runs.  Each handler's run, its
 * time and the errors it raised are counted in STP_PROBE_STATS_MAP.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "maps.h"
#include "stp_user.h"	/* first: it includes stp_meta.h and stats.h together */
#include "data.h"
#include "script_int.h"
#include "uctx_glue.h"

static void on_output(void *arg, const char *buf, size_t len)
{
	stp_script__output(arg, buf, len);
}

static void on_error(void *arg, int index, const char *msg, size_t len)
{
	stp_report_error(arg, index, msg, len);
}

static void on_warn(void *arg, const char *msg, size_t len)
{
	stp_script__warn(arg, msg, len);
}

static void on_system(void *arg, const char *cmd, size_t len)
{
	stp_script__system(arg, cmd, len);
}

static void on_switch_file(void *arg)
{
	stp_script__switch_file(arg);
}

static void on_exit_called(void *arg)
{
	stp_script__exit(arg);
}

static int init_globals(struct stp_script *s)
{
	int (*init)(struct stp_uctx *);

	*(void **)&init = dlsym(s->dl, STP_GLOBALS_INIT_SYMBOL);
	if (!init)
		return 0;
	if (init(s->uctx) != 0) {
		stp_msg(s, "error", "the initial values of the script's globals could not be set");
		return -1;
	}
	return 0;
}

int stp_uctx_create(struct stp_script *s)
{
	const struct stp_uctx_ops ops = {
		.output = on_output,
		.error = on_error,
		.warn = on_warn,
		.exit = on_exit_called,
		.system = on_system,
		.switch_file = on_switch_file,
		.arg = s,
	};

	s->uctx = stp_uctx__new(s->maps, s->meta, stdout);
	if (!s->uctx) {
		stp_msg(s, "error", "cannot set up the user-context probes");
		return -1;
	}
	stp_uctx__set_ops(s->uctx, &ops);
	stp_uctx__set_target(s->uctx, s->target);
	stp_uctx__set_args(s->uctx, s->opts.nargs, s->opts.args);
	return init_globals(s);
}

void stp_uctx_destroy(struct stp_script *s)
{
	if (s->uctx)
		stp_uctx__free(s->uctx);
	s->uctx = NULL;
}


static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * A user-context run in its probe's entry of STP_PROBE_STATS_MAP, as
 * kernel-context handlers count theirs, so that pmdastap's stap.probes.*,
 * stap.scripts.errors and keys_cut see both.  No BPF program writes a
 * user-context probe's entry: reading and writing it back loses nothing.
 */
static void count_run(struct stp_script *s, int i, uint64_t ns, uint64_t errors,
		      uint64_t keys_cut)
{
	size_t stride = stp_percpu_stride(sizeof(struct stp_probe_stats));
	int fd = stp_script__map_fd(s, STP_PROBE_STATS_MAP);
	uint32_t key = (uint32_t)i;
	char *vals;
	struct stp_probe_stats *mine;

	if (fd < 0 || s->ncpus <= 0 || !(vals = calloc((size_t)s->ncpus, stride)))
		return;
	if (stp_mapfd_lookup(fd, &key, vals) == 0) {
		mine = (struct stp_probe_stats *)vals;	/* CPU 0's: any one will do */
		mine->hits++;
		mine->run_ns += ns;
		mine->errors += errors;
		mine->keys_cut += keys_cut;
		stp_mapfd_update(fd, &key, vals, BPF_ANY);
	}
	free(vals);
}

void stp_uctx_run(struct stp_script *s, int i)
{
	const struct stp_meta_probe *p = &s->meta->probes[i];
	long errors = s->errors + s->suppressed;
	uint64_t t0, cut = stp_uctx_keys_cut();

	if (!p->handler)
		return;
	t0 = now_ns();
	p->handler(s->uctx);	/* errors went to on_error already */
	count_run(s, i, now_ns() - t0, (uint64_t)(s->errors + s->suppressed - errors),
		  stp_uctx_keys_cut() - cut);
}
