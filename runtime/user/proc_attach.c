/*
 * proc_attach.c - attach process.begin/end, thread.begin/end and
 * process.syscall[.return] probes (translator/emit_proc.c,
 * runtime/bpf/stp_proc.bpf.h).
 *
 * A probe's program is a raw tracepoint program whose section names the
 * sched tracepoints it serves, joined by '+'
 * ("raw_tp/sched_process_fork+sched_process_exec"): one link each.  For
 * process("PATH") the executable's device and inode go to the
 * stp_proc_exes map first, at the probe's index, so that the program
 * knows PATH's file whatever name an exec used for it; with them the
 * time of the attach and, with -c, the runner's own executable (see
 * stp_proc.bpf.h).  sched_prepare_exec (process.end at an exec) is
 * older kernels' loss only: without it the probe attaches to the rest.
 *
 * stp_proc_existing() runs the task iterators of process.begin and
 * thread.begin once, for the tasks that ran before the script (the
 * kernel runtime's module walks them itself when told).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../stp_fileid.h"
#include "maps.h"
#include "script_int.h"
#include "proc_attach.h"

#define SEC_PREFIX "raw_tp/sched_process_"
#define SEC_SYSCALL "raw_tp/sys_e"	/* process.syscall: sys_enter, .return: sys_exit */
#define EXES_MAP "stp_proc_exes"
#define OPTIONAL_TP "sched_prepare_exec"

bool stp_proc_probe(const struct stp_meta_probe *p, const char *sec)
{
	return p->kind == STP_PROBE_RAW_TRACEPOINT && !p->tp_name && sec &&
	       (strncmp(sec, SEC_PREFIX, strlen(SEC_PREFIX)) == 0 ||
		strncmp(sec, SEC_SYSCALL, strlen(SEC_SYSCALL)) == 0);
}

/* PATH of a point process("PATH")..., as pass 2 wrote it (absolute), or NULL. */
static char *point_path(const char *point)
{
	const char *start = "process(\"", *end;

	if (strncmp(point, start, strlen(start)) != 0)
		return NULL;
	point += strlen(start);
	end = strstr(point, "\")");
	return end ? strndup(point, (size_t)(end - point)) : NULL;
}

static uint64_t now_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
}

/* Probe I's entry of stp_proc_exes (struct stp_proc_exe of stp_proc.bpf.h). */
static int note_exe(struct stp_script *s, int i, const char *path)
{
	int fd = stp_maps__find(s->maps, EXES_MAP, NULL);
	uint64_t value[5] = { 0 };
	uint32_t key = (uint32_t)i;
	struct stat st;

	if (path && stat(path, &st) != 0)
		return -errno;
	if (path) {
		value[0] = stp_kernel_dev(st.st_dev);
		value[1] = st.st_ino;
	}
	value[2] = now_ns();
	if (s->opts.target_cmd && stat("/proc/self/exe", &st) == 0) {
		value[3] = stp_kernel_dev(st.st_dev);
		value[4] = st.st_ino;
	}
	if (fd < 0 || stp_mapfd_update(fd, &key, value, BPF_ANY) != 0)
		return fd < 0 ? -ENOENT : -errno;
	return 0;
}

/* Probe I's entry of stp_proc_exes, for the PATH its point names. */
static int note_point(struct stp_script *s, int i)
{
	char *path = point_path(s->meta->probes[i].point);
	int err = note_exe(s, i, path);

	free(path);
	return err;
}

int stp_proc_note_kmod(struct stp_script *s)
{
	char where[256];
	int err;

	for (int i = 0; i < s->meta->nprobes; i++) {
		const struct stp_meta_probe *p = &s->meta->probes[i];

		if (p->context != STP_CTX_KERNEL || p->kind != STP_PROBE_RAW_TRACEPOINT ||
		    p->tp_name)
			continue;
		err = note_point(s, i);
		if (err) {
			stp_msg(s, "error", "%s: cannot attach probe %s: %s",
				stp_loc_str(&p->loc, where, sizeof(where)), p->point, strerror(-err));
			return err;
		}
	}
	return 0;
}

int stp_proc_note_libraries(struct stp_script *s)
{
	char where[256];
	int err;

	for (int i = 0; i < s->meta->nprobes; i++) {
		const struct stp_meta_probe *p = &s->meta->probes[i];
		char *path;

		if (p->kind != STP_PROBE_UPROBE || p->uprobe_pid > 0 || !p->uprobe_path ||
		    !strstr(p->point, ").library(\""))
			continue;
		path = point_path(p->point);
		err = path && strcmp(path, p->uprobe_path) != 0 ? note_exe(s, i, path) : 0;
		free(path);
		if (err) {
			stp_msg(s, "error", "%s: cannot attach probe %s: %s",
				stp_loc_str(&p->loc, where, sizeof(where)), p->point, strerror(-err));
			return err;
		}
	}
	return 0;
}

static int attach_tracepoints(struct stp_script *s, int i, const struct stp_prog *prog,
			      const char *names)
{
	char *list = strdup(names), *save = NULL, *tp;
	int n = 0, err = 0;

	if (!list)
		return -ENOMEM;
	for (tp = strtok_r(list, "+", &save); tp && n < 3; tp = strtok_r(NULL, "+", &save)) {
		int fd = bpf_raw_tracepoint_open(tp, prog->fd);

		err = fd < 0 ? -errno : 0;
		if (err && strcmp(tp, OPTIONAL_TP) == 0) {
			err = 0;
			continue;
		}
		if (err || (err = stp_keep_link_fd(s, i, fd)) != 0)
			break;
		n++;
	}
	free(list);
	return err;
}

int stp_proc_attach(struct stp_script *s, int i, const struct stp_prog *prog)
{
	int err = note_point(s, i);

	if (err)
		return err;
	return attach_tracepoints(s, i, prog, prog->section + strlen("raw_tp/"));
}

/*
 * The tasks the iterator leaves to the tracepoints: those born from now
 * on.  Handlers run from the moment the begin probes are done, a little
 * before this: a task born in between may get its begin twice, none
 * gets none.
 */
static int set_since(struct stp_script *s, int i)
{
	int fd = stp_script__map_fd(s, EXES_MAP);
	uint32_t key = (uint32_t)i;
	uint64_t value[5];

	if (fd < 0 || bpf_map_lookup_elem(fd, &key, value) != 0)
		return -ENOENT;
	value[2] = now_ns();
	return bpf_map_update_elem(fd, &key, value, BPF_ANY) ? -errno : 0;
}

/* Run probe I's task iterator to its end: its handler runs for each task. */
static int run_existing(struct stp_script *s, int i)
{
	char name[32], buf[64];
	const struct stp_prog *prog;
	int link, fd, err = 0;
	ssize_t n;

	snprintf(name, sizeof(name), "probe_%d_existing", i);
	prog = stp_script__program(s, name);
	if (!prog || !s->links || !s->links[i])
		return 0;
	err = set_since(s, i);
	if (err)
		return err;
	link = bpf_link_create(prog->fd, 0, BPF_TRACE_ITER, NULL);
	if (link < 0)
		return -errno;
	fd = bpf_iter_create(link);
	if (fd < 0)
		err = -errno;
	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) != 0)
		if (n < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
	if (fd >= 0)
		close(fd);
	close(link);
	return err;
}

void stp_proc_existing(struct stp_script *s)
{
	char where[256];
	int err;

	if (s->kmod_fd >= 0) {	/* the module walks them, the tasks born from now on left out */
		err = stp_proc_note_kmod(s);
		err = err ? err : stp_kmod_existing(s);
		if (err)
			stp_msg(s, "warning", "the processes that ran already were not visited: %s",
				strerror(-err));
		return;
	}

	for (int i = 0; s->progs && i < s->meta->nprobes; i++) {
		err = run_existing(s, i);
		if (err)
			stp_msg(s, "warning", "%s: probe %s: the processes that ran already were "
				"not visited: %s", stp_loc_str(&s->meta->probes[i].loc, where,
							       sizeof(where)),
				s->meta->probes[i].point, strerror(-err));
	}
}
