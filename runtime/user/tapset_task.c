/*
 * tapset_task.c - the task services of runtime/stp_tapset.h in user
 * context (tapset/task.stp), included by tapset_user.c.  A task is a
 * thread id; its facts come from /proc/ID/status, /proc/ID/stat,
 * /proc/ID/statm, /proc/ID/comm and /proc/ID/fd, as ps(1) reads them.
 * stat's state letter becomes the kernel's state bits, in
 * fs/proc/array.c's order.
 */
#include <dirent.h>
#include <sys/resource.h>
#include <stdbool.h>

int64_t stp_task_current(struct context *c)
{
	return (int64_t)syscall(SYS_gettid);
}

/* /proc/TASK/NAME into BUF; false (after raising the error) when there is no such task. */
static bool task_read(struct context *c, int64_t task, const char *name, char *buf, size_t size)
{
	char path[64];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%lld/%s", (long long)task, name);
	fd = task > 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		n = read(fd, buf, size - 1);
		close(fd);
	}
	if (n < 0) {
		char msg[64];

		snprintf(msg, sizeof(msg), "no task %lld", (long long)task);
		stp_raise_msg(c, msg);
		return false;
	}
	buf[n] = '\0';
	return true;
}

/* Column COL (1: Uid's real id) of "KEY:" in /proc/TASK/status. */
static int64_t task_status(struct context *c, int64_t task, const char *key, int col)
{
	char buf[4096], *p;
	long long v[4] = { 0 };

	if (!task_read(c, task, "status", buf, sizeof(buf)))
		return 0;
	for (p = buf; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, key, strlen(key)) == 0 && p[strlen(key)] == ':') {
			sscanf(p + strlen(key) + 1, "%lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3]);
			return v[col - 1];
		}
	}
	return 0;
}

/* Field N (from 1, as proc(5) numbers them) of /proc/TASK/stat; the state letter for 3. */
static int64_t task_stat(struct context *c, int64_t task, int n)
{
	char buf[1024], *p, *tok, *save;
	int i;

	if (!task_read(c, task, "stat", buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');	/* the comm may hold spaces and parentheses */
	if (!p)
		return 0;
	tok = strtok_r(p + 1, " ", &save);
	for (i = 3; tok && i < n; i++)
		tok = strtok_r(NULL, " ", &save);
	if (!tok)
		return 0;
	return n == 3 ? tok[0] : strtoll(tok, NULL, 10);
}

static int64_t task_state_bits(int letter)
{
	static const char letters[] = "RSDTtXZPI";
	const char *at = letter ? strchr(letters, letter) : NULL;

	return at && at > letters ? 1LL << (at - letters - 1) : 0;
}

static int64_t task_open_files(struct context *c, int64_t task)
{
	char path[64];
	struct dirent *e;
	int64_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%lld/fd", (long long)task);
	d = opendir(path);
	if (!d) {
		char msg[64];

		snprintf(msg, sizeof(msg), "no task %lld", (long long)task);
		stp_raise_msg(c, msg);
		return 0;
	}
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The soft RLIMIT_NOFILE of TASK, -1 when unlimited (the kernel's RLIM_INFINITY as stap gives it). */
static int64_t task_rlimit_nofile(struct context *c, int64_t task)
{
	struct { uint64_t cur, max; } r;	/* the kernel's struct rlimit64: prlimit(2) is _GNU_SOURCE */

	if (task <= 0 || syscall(SYS_prlimit64, (pid_t)task, RLIMIT_NOFILE, NULL, &r) != 0) {
		char msg[64];

		snprintf(msg, sizeof(msg), "no task %lld", (long long)task);
		stp_raise_msg(c, msg);
		return 0;
	}
	return (int64_t)r.cur;	/* RLIM64_INFINITY is -1 */
}

/*
 * FIELD (an STP_TASK_MEM_*) of TASK's memory in pages, from
 * /proc/TASK/statm (size resident shared text lib data dt), and for the
 * file pages alone (statm's shared adds shared memory) status's RssFile.
 */
static int64_t task_mem(struct context *c, int64_t task, int64_t field)
{
	long long v[6] = { 0 };
	long page_kb = sysconf(_SC_PAGESIZE) / 1024;
	char buf[256];

	if (field == STP_TASK_MEM_SHR)
		return task_status(c, task, "RssFile", 1) / (page_kb > 0 ? page_kb : 4);
	if (!task_read(c, task, "statm", buf, sizeof(buf)))
		return 0;
	sscanf(buf, "%lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]);
	switch (field) {
	case STP_TASK_MEM_SIZE: return v[0];
	case STP_TASK_MEM_RSS: return v[1];
	case STP_TASK_MEM_TXT: return v[3];
	default: return v[5];	/* STP_TASK_MEM_DATA */
	}
}

int64_t stp_task_field(struct context *c, int64_t task, int64_t field)
{
	long tick = sysconf(_SC_CLK_TCK);
	int64_t ns_per_tick = 1000000000LL / (tick > 0 ? tick : 100);

	switch (field) {
	case STP_TASK_PID: return task_status(c, task, "Tgid", 1);
	case STP_TASK_TID: return task_status(c, task, "Pid", 1);
	case STP_TASK_PARENT: return task_status(c, task, "PPid", 1);
	case STP_TASK_STATE: return task_state_bits((int)task_stat(c, task, 3));
	case STP_TASK_UID: return task_status(c, task, "Uid", 1);
	case STP_TASK_EUID: return task_status(c, task, "Uid", 2);
	case STP_TASK_GID: return task_status(c, task, "Gid", 1);
	case STP_TASK_EGID: return task_status(c, task, "Gid", 2);
	case STP_TASK_PRIO: return task_stat(c, task, 18);
	case STP_TASK_NICE: return task_stat(c, task, 19);
	case STP_TASK_CPU: return task_stat(c, task, 39);
	case STP_TASK_OPEN_FILES: return task_open_files(c, task);
	case STP_TASK_MAX_FILES: return task_status(c, task, "FDSize", 1);
	case STP_TASK_START_TIME:
		return task_stat(c, task, 22) * ns_per_tick;
	case STP_TASK_UTIME: return task_stat(c, task, 14) * ns_per_tick;
	case STP_TASK_STIME: return task_stat(c, task, 15) * ns_per_tick;
	case STP_TASK_RLIMIT_NOFILE: return task_rlimit_nofile(c, task);
	case STP_TASK_MEM_SIZE: case STP_TASK_MEM_RSS: case STP_TASK_MEM_SHR:
	case STP_TASK_MEM_TXT: case STP_TASK_MEM_DATA:
		return task_mem(c, task, field);
	default: return 0;
	}
}

void stp_task_execname(struct context *c, char *out, int64_t task)
{
	char buf[64];

	out[0] = '\0';
	if (!task_read(c, task, "comm", buf, sizeof(buf)))
		return;
	buf[strcspn(buf, "\n")] = '\0';
	put_comm(out, buf);
}

int64_t stp_pid2task(struct context *c, int64_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%lld", (long long)pid);
	return pid > 0 && access(path, F_OK) == 0 ? pid : 0;
}
