/*
 * tapset_user.c - the runtime/stp_tapset.h services in user context.
 *
 * See tapset_user.h: the current task is the runner itself.  Values the
 * kernel side gets from helpers come here from system calls and /proc;
 * the string algorithms are runtime/stp_strings.h's, shared with BPF.
 * Errors, warnings and exit go through the user-context runtime
 * (stp_user.h: stp_raise_msg(), stp_send_warn(), stp_request_exit()...).
 *
 * No _GNU_SOURCE interfaces: the file may be #included into a generated
 * script.c after system headers, so Linux-only calls are syscall()s.
 */
#include <stdint.h>

/*
 * The script's MAXSTRINGLEN: 512 until stp_tapset_user_set_maxstringlen()
 * says otherwise (libstaprt's build: the runner tells it the loaded
 * script's), or a constant when this file is compiled with one (-D).
 */
#ifndef MAXSTRINGLEN
static int64_t maxstringlen = 512;
#define MAXSTRINGLEN maxstringlen
#define STP_MAXSTRINGLEN_AT_RUN_TIME 1
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "../kmod/kmod_abi.h"
#include "kread.h"
#include "stp_user.h"
#include "tapset_user.h"
#include "../stp_strings.h"

static const struct stp_rt_info *rt_info;
static const struct stp_rt_info rt_none;

void stp_tapset_user_init(const struct stp_rt_info *rt)
{
	rt_info = rt;
}

/* ---- --runtime=kernel: the script's embedded C, run by the module ---- */

static int kmod_fd = -1;

void stp_tapset_user_kmod(int fd)
{
	kmod_fd = fd;
}

void stp_kmod_ucall(struct context *c, struct stp_kmod_call *k, char *err)
{
	err[0] = '\0';
	k->errmsg = (uintptr_t)err;
	if (kmod_fd < 0 || ioctl(kmod_fd, STP_KMOD_IOC_CALL, k) < 0) {
		snprintf(err, MAXSTRINGLEN, "the module did not run the embedded-C function: %s",
			 kmod_fd < 0 ? "no module" : strerror(errno));
		stp_raise_msg(c, err);
		return;
	}
	if (k->error == STP_ERR_RAISED || k->error == STP_ERR_FATAL) {
		stp_raise_msg(c, err);
		c->error = k->error;
	} else if (k->error == STP_ERR_NEXT) {
		c->error = STP_ERR_NEXT;
	}
}

void stp_tapset_user_set_maxstringlen(int64_t limit)
{
#ifdef STP_MAXSTRINGLEN_AT_RUN_TIME
	if (limit >= 2)
		maxstringlen = limit;
#endif
}

static const struct stp_rt_info *rt(void)
{
	return rt_info ? rt_info : &rt_none;
}

/* Raise FMT (one long argument, as the kernel side's messages). */
static void raisef(struct context *c, const char *fmt, long long arg)
{
	char msg[128];

	snprintf(msg, sizeof(msg), fmt, arg);
	stp_raise_msg(c, msg);
}

/* Copy S into OUT (MAXSTRINGLEN bytes), cut to MAXSTRINGLEN - 1 bytes. */
static void put_str(char *out, const char *s)
{
	size_t n = strnlen(s, (size_t)STP_STR_MAX);

	memcpy(out, s, n);
	out[n] = '\0';
}

/* Read the whole small file PATH into BUF; its length, or -1. */
static ssize_t read_small_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, len = 0;

	if (fd < 0)
		return -1;
	while ((size_t)len < size - 1 && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return len;
}

/* ---- the task ---- */

int64_t stp_pid(struct context *c)
{
	return getpid();
}

int64_t stp_tid(struct context *c)
{
	return syscall(SYS_gettid);
}

int64_t stp_ppid(struct context *c)
{
	return getppid();
}

int64_t stp_pgrp(struct context *c)
{
	return getpgrp();
}

int64_t stp_sid(struct context *c)
{
	return getsid(0);
}

int64_t stp_uid(struct context *c)
{
	return getuid();
}

int64_t stp_gid(struct context *c)
{
	return getgid();
}

int64_t stp_euid(struct context *c)
{
	return geteuid();
}

int64_t stp_egid(struct context *c)
{
	return getegid();
}

/* A comm: at most 15 bytes, cut further by a small MAXSTRINGLEN. */
static void put_comm(char *out, const char *comm)
{
	size_t n = strcspn(comm, "\n");

	if (n > 15)
		n = 15;
	if (n > (size_t)STP_STR_MAX)
		n = (size_t)STP_STR_MAX;
	memcpy(out, comm, n);
	out[n] = '\0';
}

void stp_execname(struct context *c, char *out)
{
	char comm[17] = "";

	if (prctl(PR_GET_NAME, comm) != 0)
		comm[0] = '\0';
	put_comm(out, comm);
}

void stp_pexecname(struct context *c, char *out)
{
	char path[64], comm[64];
	pid_t parent = getppid();

	out[0] = '\0';
	if (parent <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)parent);
	if (read_small_file(path, comm, sizeof(comm)) > 0)
		put_comm(out, comm);
}

int64_t stp_cpu(struct context *c)
{
	unsigned cpu = 0;

	if (syscall(SYS_getcpu, &cpu, NULL, NULL) != 0)
		return 0;
	return cpu;
}

int64_t stp_target(struct context *c)
{
	return c->u ? c->u->target : rt()->target;
}

/* ---- the probe ---- */

void stp_pp(struct context *c, char *out)
{
	put_str(out, c->probe && c->probe->point ? c->probe->point : "");
}

void stp_pn(struct context *c, char *out)
{
	const struct stp_meta_probe *p = c->probe;

	put_str(out, p && p->name ? p->name : p && p->point ? p->point : "");
}

void stp_probefunc(struct context *c, char *out)
{
	stp_pp(c, out);
	stp__pp_function(out);
}

void stp_probemod(struct context *c, char *out)
{
	stp_pp(c, out);
	stp__pp_module(out);
}

/* begin, end, error and timer probes are never return probes. */
int64_t stp_is_return(struct context *c)
{
	return 0;
}

/* begin, end, error and timer probes: stap's hrtimer and begin/end probes give 0 too. */
int64_t stp_user_mode(struct context *c)
{
	return 0;
}

/* No sample is ever handled here. */
uint64_t stp_perf_addr(struct context *c)
{
	return 0;
}

/*
 * Field N (1-based, as proc(5) counts) of /proc/self/stat, or 0.  The
 * command name in field 2 may hold spaces and parentheses: count from the
 * last ')'.
 */
static uint64_t self_stat_field(int n)
{
	char buf[2048], *p, *end;
	uint64_t v = 0;
	int field;

	if (read_small_file("/proc/self/stat", buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	for (field = 2; field < n && p; field++)
		p = strchr(p + 1, ' ');
	if (p) {
		v = strtoull(p + 1, &end, 10);
		if (end == p + 1)
			v = 0;
	}
	return v;
}

uint64_t stp_cmdline_start(struct context *c)
{
	return self_stat_field(48);	/* arg_start */
}

uint64_t stp_cmdline_end(struct context *c)
{
	return self_stat_field(49);	/* arg_end */
}

/* The arguments the runner gave: stp_rt_info's as in kernel context, else the uctx's. */
int64_t stp_script_argc(struct context *c)
{
	if (!rt_info && c->u)
		return c->u->argc;
	return rt()->argc;
}

void stp_script_arg(struct context *c, int64_t n, char *out)
{
	const struct stp_rt_info *r = rt();
	unsigned off;

	out[0] = '\0';
	if (!rt_info && c->u) {
		if (n >= 1 && n <= c->u->argc && c->u->argv)
			put_str(out, c->u->argv[n - 1]);
		return;
	}
	if (n < 1 || n > r->argc || n > STP_RT_MAXARGS)
		return;
	off = r->argoff[n - 1];
	if (off < STP_RT_ARGBYTES)
		put_str(out, r->args + off);
}

/* ---- time ---- */

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t stp_gettimeofday_ns(struct context *c)
{
	return clock_ns(CLOCK_REALTIME);
}

/* The kernel's ktime_get_ns() and bpf_ktime_get_ns() are CLOCK_MONOTONIC. */
int64_t stp_ktime_get_ns(struct context *c)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* Kernel context reads the monotonic clock for local_clock() too: so does this side. */
int64_t stp_local_clock_ns(struct context *c)
{
	return clock_ns(CLOCK_MONOTONIC);
}

int64_t stp_cpu_clock_ns(struct context *c, int64_t cpu)
{
	int64_t ncpus = rt()->ncpus;

	if (ncpus <= 0)
		ncpus = sysconf(_SC_NPROCESSORS_CONF);
	if (cpu < 0 || cpu >= ncpus) {
		raisef(c, STP_MSG_NO_CPU, (long long)cpu);
		return 0;
	}
	return clock_ns(CLOCK_MONOTONIC);
}

int64_t stp_randint(struct context *c, int64_t n)
{
	if ((uint64_t)n > STP_RANDINT_MAX) {
		raisef(c, STP_MSG_RANDINT, (long long)n);
		return 0;
	}
	return n ? (int64_t)arc4random_uniform((uint32_t)n) : 0;
}

int64_t stp_get_cycles(struct context *c)
{
#if defined(__x86_64__) || defined(__i386__)
	return (int64_t)__builtin_ia32_rdtsc();
#elif defined(__aarch64__)
	uint64_t v;

	__asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
	return (int64_t)v;
#else
	return 0;
#endif
}

/* CONFIG_HZ in a kernel config, plain or gzipped (zlib reads both); 0 if none. */
static int64_t hz_from_config(const char *path)
{
	gzFile f = gzopen(path, "rb");
	char line[256];
	int64_t hz = 0;

	if (!f)
		return 0;
	while (!hz && gzgets(f, line, sizeof(line)))
		if (strncmp(line, "CONFIG_HZ=", 10) == 0)
			hz = strtoll(line + 10, NULL, 10);
	gzclose(f);
	return hz;
}

static int64_t hz_from_boot_config(void)
{
	char path[sizeof(((struct utsname *)0)->release) + 16];
	struct utsname u;

	if (uname(&u) != 0)
		return 0;
	snprintf(path, sizeof(path), "/boot/config-%s", u.release);
	return hz_from_config(path);
}

/*
 * The kernel's jiffies at a moment of CLOCK_MONOTONIC, from
 * /proc/timer_list ("now at N nsecs" ... "jiffies: J"), readable by root.
 */
static int read_timer_list(int64_t *now_ns, int64_t *jiffies)
{
	FILE *f = fopen("/proc/timer_list", "r");
	char line[256];
	long long now = -1, j = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && j < 0) {
		if (now < 0)
			sscanf(line, "now at %lld nsecs", &now);
		else
			sscanf(line, "jiffies: %lld", &j);
	}
	fclose(f);
	if (now < 0 || j < 0)
		return -1;
	*now_ns = now;
	*jiffies = j;
	return 0;
}

/* Jiffies start 300 seconds before wrapping 32 bits (the kernel's INITIAL_JIFFIES). */
static int64_t initial_jiffies(int64_t hz)
{
	return (int64_t)(uint32_t)(-300 * (int32_t)hz);
}

/*
 * HZ measured from one timer_list reading: jiffies = INITIAL_JIFFIES +
 * uptime * HZ, solved for HZ and rounded to the nearest usual value.
 */
static int64_t hz_from_timer_list(void)
{
	static const int64_t usual[] = { 100, 250, 300, 1000 };
	int64_t now, j, best = 0, best_err = INT64_MAX;

	if (read_timer_list(&now, &j) != 0)
		return 0;
	for (size_t i = 0; i < sizeof(usual) / sizeof(usual[0]); i++) {
		int64_t want = initial_jiffies(usual[i]) + now / 1000000000 * usual[i];
		int64_t err = llabs(want - j);

		if (err < best_err) {
			best_err = err;
			best = usual[i];
		}
	}
	return best;
}

int64_t stp_kernel_hz(void)
{
	static int64_t hz = -1;

	if (hz < 0) {
		hz = hz_from_config("/proc/config.gz");
		if (hz <= 0)
			hz = hz_from_boot_config();
		if (hz <= 0)
			hz = hz_from_timer_list();
	}
	return hz;
}

int64_t stp_hz(struct context *c)
{
	return rt()->hz > 0 ? rt()->hz : stp_kernel_hz();
}

/*
 * jiffies: one /proc/timer_list reading, then CLOCK_MONOTONIC's progress
 * at HZ; without timer_list, counted from boot.
 */
int64_t stp_jiffies(struct context *c)
{
	static int64_t base_ns = -1, base_jiffies;
	int64_t hz = stp_hz(c), now = clock_ns(CLOCK_MONOTONIC);

	if (hz <= 0)
		return 0;
	if (base_ns < 0 && read_timer_list(&base_ns, &base_jiffies) != 0) {
		base_ns = 0;
		base_jiffies = initial_jiffies(hz);
	}
	return base_jiffies + (now - base_ns) / (1000000000 / hz);
}

int64_t stp_page_size(struct context *c)
{
	return rt()->page_size;
}

int64_t stp_tz_gmtoff(struct context *c)
{
	return rt()->tz_gmtoff;
}

void stp_tz_name(struct context *c, char *out)
{
	size_t n = strnlen(rt()->tz_name, STP_RT_TZLEN - 1);

	if (n > (size_t)STP_STR_MAX)
		n = (size_t)STP_STR_MAX;
	memcpy(out, rt()->tz_name, n);
	out[n] = '\0';
}

/* ---- strings ---- */

int64_t stp_strlen(struct context *c, const char *s)
{
	return stp__strlen(s);
}

void stp_substr(struct context *c, char *out, const char *s, int64_t start, int64_t len)
{
	stp__substr(out, s, start, len);
}

int64_t stp_char_at(struct context *c, const char *s, int64_t pos)
{
	int64_t ch = stp__char_at(s, pos);

	if (ch < 0) {
		raisef(c, STP_MSG_POSITION, (long long)pos);
		return 0;
	}
	return ch;
}

int64_t stp_strpos(struct context *c, const char *s, const char *sub)
{
	return stp__strpos(s, sub);
}

int64_t stp_strspn(struct context *c, const char *s, const char *set)
{
	return stp__span(s, set, 1);
}

int64_t stp_strcspn(struct context *c, const char *s, const char *set)
{
	return stp__span(s, set, 0);
}

int64_t stp_strtol(struct context *c, const char *s, int64_t base)
{
	return stp__strtol(s, base);
}

void stp_text_str(struct context *c, char *out, const char *in, int64_t inlen, int64_t outlen,
		  int64_t quoted)
{
	stp__text_str(out, in, inlen, outlen, quoted);
}

/* ---- memory ---- */

/* Read LEN bytes at ADDR of this process; the bytes read (short at an unmapped page), or -1. */
static ssize_t read_self(void *buf, uint64_t addr, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };

	if (len == 0)
		return 0;
	return syscall(SYS_process_vm_readv, getpid(), &local, 1UL, &remote, 1UL, 0UL);
}

/* An integer of 1, 2, 4 or 8 bytes as memory held it. */
union stp_int {
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
};

/* V's SIZE bytes as a long: sign-extended when IS_SIGNED, else zero-extended. */
static int64_t extend(const union stp_int *v, int64_t size, int64_t is_signed)
{
	switch (size) {
	case 1: return is_signed ? (int64_t)(int8_t)v->u8 : (int64_t)v->u8;
	case 2: return is_signed ? (int64_t)(int16_t)v->u16 : (int64_t)v->u16;
	case 4: return is_signed ? (int64_t)(int32_t)v->u32 : (int64_t)v->u32;
	default: return (int64_t)v->u64;
	}
}

int64_t stp_read_user_int(struct context *c, uint64_t addr, int64_t size, int64_t is_signed)
{
	union stp_int v;

	if (size != 1 && size != 2 && size != 4 && size != 8) {
		raisef(c, STP_MSG_READ_SIZE("user"), (long long)size);
		return 0;
	}
	if (read_self(&v, addr, (size_t)size) != size) {
		raisef(c, STP_MSG_READ_FAULT("user"), (long long)addr);
		return 0;
	}
	return extend(&v, size, is_signed);
}

/*
 * Kernel memory comes through a BPF program run on demand (kread.c).  A
 * kernel that cannot run it makes every read fault, and the first fault
 * says why.
 */
static void kernel_fault(struct context *c, const char *fmt, uint64_t addr)
{
	static bool told;
	const char *why = stp_kread_unavailable();

	if (why && !told) {
		told = true;
		stp_send_warn(c, why);
	}
	raisef(c, fmt, (long long)addr);
}

int64_t stp_read_kernel_int(struct context *c, uint64_t addr, int64_t size, int64_t is_signed)
{
	union stp_int v;

	if (size != 1 && size != 2 && size != 4 && size != 8) {
		raisef(c, STP_MSG_READ_SIZE("kernel"), (long long)size);
		return 0;
	}
	if (stp_kread(&v, addr, (size_t)size, false) != size) {
		kernel_fault(c, STP_MSG_READ_FAULT("kernel"), addr);
		return 0;
	}
	return extend(&v, size, is_signed);
}

int64_t stp_read_user_string(struct context *c, char *out, uint64_t addr, int64_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = 0;

	out[0] = '\0';
	if (n < 1)
		return 0;
	if (n > STP_STR_MAX)
		n = STP_STR_MAX;
	/* a page at a time: a string may end just before an unmapped page */
	while (len < (size_t)n) {
		uint64_t at = addr + len;
		size_t chunk = page - (size_t)(at % page);
		ssize_t got;
		char *nul;

		if (chunk > (size_t)n - len)
			chunk = (size_t)n - len;
		got = read_self(out + len, at, chunk);
		if (got <= 0) {
			out[0] = '\0';
			raisef(c, STP_MSG_STRING_FAULT("user"), (long long)addr);
			return -EFAULT;
		}
		nul = memchr(out + len, '\0', (size_t)got);
		if (nul)
			return nul - out;
		len += (size_t)got;
	}
	out[len] = '\0';
	return (int64_t)len;
}

int64_t stp_read_kernel_string(struct context *c, char *out, uint64_t addr, int64_t n)
{
	int got;

	out[0] = '\0';
	if (n < 1)
		return 0;
	if (n > STP_STR_MAX)
		n = STP_STR_MAX;
	/* n + 1 as bpf_probe_read_kernel_str, within what one kread may ask for */
	got = stp_kread(out, addr, (size_t)n + 1 < STP_KREAD_MAX ? (size_t)n + 1 : STP_KREAD_MAX,
			true);
	if (got <= 0) {
		out[0] = '\0';
		kernel_fault(c, STP_MSG_STRING_FAULT("kernel"), addr);
		return -EFAULT;
	}
	out[got - 1] = '\0';
	return got - 1;
}

/* ---- control ---- */

void stp_error(struct context *c, const char *msg)
{
	stp_raise_msg(c, msg[0] ? msg : STP_MSG_UNKNOWN);
}

void stp_warn(struct context *c, const char *msg)
{
	stp_send_warn(c, msg);
}

void stp_system(struct context *c, const char *cmd)
{
	stp_send_system(c, cmd);
}

void stp_switch_file(struct context *c)
{
	stp_send_switch_file(c);
}

void stp_exit(struct context *c)
{
	stp_request_exit(c);
}

void stp_abort(struct context *c)
{
	stp_request_abort(c);
}

void stp_printk(struct context *c, int64_t level, const char *msg)
{
	static int warned;
	char line[8192];
	int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC), n;

	if (level < 0 || level > 7)
		level = level < 0 ? 0 : 7;
	n = snprintf(line, sizeof(line), "<%d>%.*s\n", (int)level, (int)stp__strlen(msg), msg);
	if (n >= (int)sizeof(line))
		n = sizeof(line) - 1;
	if (fd < 0 || write(fd, line, (size_t)n) != n) {
		if (!warned) {
			snprintf(line, sizeof(line), "printk: cannot write to /dev/kmsg: %s",
				 strerror(errno));
			stp_send_warn(c, line);
			warned = 1;
		}
	}
	if (fd >= 0)
		close(fd);
}

/* ---- the run's facts, for the runner ---- */

/* The CPUs the kernel may bring up (as libbpf counts them for per-CPU maps). */
static int64_t possible_cpus(void)
{
	char buf[256], *p;
	int64_t last = -1;

	if (read_small_file("/sys/devices/system/cpu/possible", buf, sizeof(buf)) <= 0)
		return sysconf(_SC_NPROCESSORS_CONF);
	for (p = buf; *p;) {
		char *end;
		long long v = strtoll(p, &end, 10);

		if (end == p)
			break;
		if (v > last)
			last = v;
		p = end + strspn(end, ",-\n");
	}
	return last + 1;
}

static void rt_set_args(struct stp_rt_info *r, int argc, const char *const *argv)
{
	size_t off = 0;

	r->argc = argc > 0 ? argc : 0;
	for (int i = 0; i < argc && i < STP_RT_MAXARGS; i++) {
		size_t n = strlen(argv[i]);

		r->argoff[i] = STP_RT_ARGBYTES;	/* "" unless it fits */
		if (off + n + 1 > STP_RT_ARGBYTES)
			continue;
		memcpy(r->args + off, argv[i], n + 1);
		r->argoff[i] = (uint16_t)off;
		off += n + 1;
	}
}

void stp_rt_info_init(struct stp_rt_info *r, int64_t target, int argc, const char *const *argv)
{
	struct timex tx = { .modes = 0 };
	time_t now = time(NULL);
	struct tm tm;

	memset(r, 0, sizeof(*r));
	r->target = target;
	if (adjtimex(&tx) >= 0)
		r->tai_offset_ns = (int64_t)tx.tai * 1000000000;
	tzset();
	if (localtime_r(&now, &tm)) {
		r->tz_gmtoff = -(int64_t)tm.tm_gmtoff;
		snprintf(r->tz_name, sizeof(r->tz_name), "%s", tm.tm_zone ? tm.tm_zone : "");
	}
	r->hz = stp_kernel_hz();
	r->ncpus = possible_cpus();
	r->page_size = sysconf(_SC_PAGESIZE);	/* the kernel's: what the auxv's AT_PAGESZ gives */
	rt_set_args(r, argc, argv);
}

/* backtraces: stp_backtrace(), stp_print_stack(), stp_sym_sprint(), stp_uaddr() */
#include "tapset_stack_user.c"

/* registers: only uprobes, which run in kernel context, have them */
STP_SERVICE int64_t stp_uregister(struct context *c, int64_t reg)
{
	stp_raise_msg(c, "registers are not available in user context (begin, end, error, timer "
			 "probes)");
	return 0;
}

STP_SERVICE int64_t stp_uarg(struct context *c, int64_t n)
{
	return stp_uregister(c, 0);
}

/* the task services (tapset/task.stp) */
#include "tapset_task.c"
