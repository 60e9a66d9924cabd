/*
 * test_dyn_inject.c - runtime/dyninst/inject*.c: a library loaded into a
 * child that runs, and a function of it called there.
 *
 * The children are forks of this program.  Most spin in t_spin (below, in
 * assembly): it fills the 2 KB below its stack pointer with 0xa5, sets
 * fixed values in the general registers and in xmm0, xmm1, xmm7, xmm15,
 * then loops, counting in shared memory, and counting apart each round
 * that finds one of them (or rsp) changed: a thread whose registers are
 * not given back exactly shows it.  Others block in
 * read() or nanosleep() and report through a pipe how it ended.
 *
 * The library is built at run time into a temporary directory (with a
 * little initial-exec TLS, as libstapdyn.so has):
 *   hello(PATH)	writes "PATH PID CALLS" into PATH, returns
 *			strlen(PATH) + 42 + 1000 * CALLS (CALLS: a static count)
 *   raise_two()	sends SIGUSR1 then SIGUSR2 to its own process, returns 7
 *   frozen("ADDR N")	how many of N slot counters at ADDR moved during 1000
 *			sched_yield()s: 0 when the other threads are stopped
 *   forever()		never returns
 *   bye()		_exit(3)
 *   call_at("ADDR")	sets its variable `moves` to what the function at
 *			ADDR in the child returns (a struct stp_inject_moves *)
 *			and returns 0 when it is not NULL; the children are
 *			forks of this program, so ADDR is a function here
 * Waits for the children are bounded polls of a value, never sleeps.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "unit.h"
#include "../../runtime/dyninst/inject.h"
#include "../../runtime/dyninst/patch.h"

/* What a spinning thread shares with the test: one cache line. */
struct slot {
	atomic_long count;	/* rounds of t_spin */
	atomic_long bad;	/* rounds that found a register changed */
	unsigned long sp;	/* t_spin's stack pointer */
	long pad[5];
};

_Static_assert(sizeof(struct slot) == 64, "frozen() in the library strides by 8 longs");

#define SLOTS 4

struct shared {
	struct slot slot[SLOTS];
};

/* t_spin(struct slot *): never returns. */
asm(".text\n.p2align 4\n.type t_spin, @function\nt_spin:\n"
    " mov %rdi, %r15\n mov %rsp, 16(%r15)\n"
    " lea -2048(%rsp), %rdi\n mov $2048, %ecx\n mov $0xa5, %eax\n rep stosb\n"
    "1: mov $0x01010101, %eax\n mov $0x02020202, %ebx\n mov $0x03030303, %ecx\n"
    " mov $0x04040404, %edx\n mov $0x05050505, %esi\n mov $0x06060606, %edi\n"
    " mov $0x07070707, %ebp\n mov $0x08080808, %r8d\n mov $0x09090909, %r9d\n"
    " mov $0x0a0a0a0a, %r10d\n mov $0x0c0c0c0c, %r12d\n mov $0x0d0d0d0d, %r13d\n"
    " mov $0x0e0e0e0e, %r14d\n"
    " movq %rax, %xmm0\n movq %rbx, %xmm1\n movq %rcx, %xmm7\n movq %rdx, %xmm15\n"
    "2: lock incq (%r15)\n"
    " cmp $0x01010101, %rax\n jne 3f\n cmp $0x02020202, %rbx\n jne 3f\n"
    " cmp $0x03030303, %rcx\n jne 3f\n cmp $0x04040404, %rdx\n jne 3f\n"
    " cmp $0x05050505, %rsi\n jne 3f\n cmp $0x06060606, %rdi\n jne 3f\n"
    " cmp $0x07070707, %rbp\n jne 3f\n cmp $0x08080808, %r8\n jne 3f\n"
    " cmp $0x09090909, %r9\n jne 3f\n cmp $0x0a0a0a0a, %r10\n jne 3f\n"
    " cmp $0x0c0c0c0c, %r12\n jne 3f\n cmp $0x0d0d0d0d, %r13\n jne 3f\n"
    " cmp $0x0e0e0e0e, %r14\n jne 3f\n"
    " movq %xmm0, %r11\n cmp %rax, %r11\n jne 3f\n movq %xmm1, %r11\n cmp %rbx, %r11\n jne 3f\n"
    " movq %xmm7, %r11\n cmp %rcx, %r11\n jne 3f\n movq %xmm15, %r11\n cmp %rdx, %r11\n"
    " jne 3f\n cmp 16(%r15), %rsp\n jne 3f\n"
    " jmp 2b\n"
    "3: lock incq 8(%r15)\n jmp 1b\n"
    ".size t_spin, .-t_spin\n");

void t_spin(struct slot *s) __attribute__((noreturn, visibility("hidden")));

/*
 * Where a thread blocks in read() with its pc inside the bytes a probe's
 * jump replaces (rax 0, and rdi, rsi, rdx as for read(); each site is 5
 * bytes of whole instructions, in functions of known bounds):
 *   t_sys_first	syscall first: stopped at +2, inside
 *   t_sys_second	after a nop: stopped at +3, inside
 *   t_sys_before	a syscall that falls through into t_sys_at: stopped
 *			at t_sys_at, a site's first byte, where no pc moves
 * t_block(FN, FD, BUF, LEN) calls FN as read(FD, BUF, LEN).
 */
asm(".text\n.p2align 4\n"
    "t_sys_first:\n syscall\n nop\n nop\n nop\n ret\nt_sys_first_end:\n"
    ".p2align 4\nt_sys_second:\n nop\n syscall\n nop\n nop\n ret\nt_sys_second_end:\n"
    ".p2align 4\nt_sys_before:\n syscall\n"
    "t_sys_at:\n nop\n nop\n nop\n nop\n nop\n ret\nt_sys_at_end:\n"
    ".p2align 4\nt_block:\n sub $8, %rsp\n mov %rdi, %r11\n mov %rsi, %rdi\n mov %rdx, %rsi\n"
    " mov %rcx, %rdx\n xor %eax, %eax\n call *%r11\n add $8, %rsp\n ret\n");

extern const char t_sys_first[], t_sys_first_end[], t_sys_second[], t_sys_second_end[],
	t_sys_before[], t_sys_at[], t_sys_at_end[] __attribute__((visibility("hidden")));
long t_block(const char *fn, int fd, void *buf, size_t len) __attribute__((visibility("hidden")));

/* ---- the children ---- */

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* The children spawned, reaped by the next case or at exit even when a case stops early. */
static pid_t kids[16];
static int nkids;

static void reap_all(void)
{
	while (nkids > 0)
		reap(kids[--nkids]);
}

/* ---- the library ---- */

static const char lib_src[] =
	"#include <fcntl.h>\n#include <sched.h>\n#include <signal.h>\n#include <stdio.h>\n"
	"#include <stdlib.h>\n#include <string.h>\n#include <unistd.h>\n"
	"static int calls;\n"
	"static __thread long tls[8] __attribute__((tls_model(\"initial-exec\")));\n"
	"long hello(const char *path)\n{\n"
	" char line[512];\n"
	" int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600), n;\n"
	" calls++;\n"
	" tls[calls % 8] = calls;\n"
	" if (fd < 0)\n  return -1;\n"
	" n = snprintf(line, sizeof(line), \"%s %d %d\\n\", path, (int)getpid(), calls);\n"
	" if (write(fd, line, n) != n)\n  calls = -1000;\n"
	" close(fd);\n"
	" return (long)strlen(path) + 42 + 1000 * calls;\n}\n"
	"long raise_two(const char *arg)\n{\n kill(getpid(), SIGUSR1);\n kill(getpid(), SIGUSR2);\n"
	" return 7;\n}\n"
	"long frozen(const char *arg)\n{\n"
	" char *end;\n"
	" volatile long *c = (volatile long *)strtoul(arg, &end, 16);\n"
	" long n = strtol(end, NULL, 10), before[16], moved = 0;\n"
	" for (long k = 0; k < n && k < 16; k++)\n  before[k] = c[8 * k];\n"
	" for (int k = 0; k < 1000; k++)\n  sched_yield();\n"
	" for (long k = 0; k < n && k < 16; k++)\n  moved += c[8 * k] != before[k];\n"
	" return moved;\n}\n"
	"long forever(const char *arg)\n{\n for (;;)\n  __asm__ volatile(\"\");\n}\n"
	"long bye(const char *arg)\n{\n _exit(3);\n}\n"
	"const void *moves;\n"
	"long call_at(const char *arg)\n{\n"
	" moves = ((const void *(*)(void))strtoul(arg, NULL, 16))();\n"
	" return moves ? 0 : -1;\n}\n";

static char dir[256], lib[300];

static void cleanup(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "test_dyn_inject: cannot remove %s\n", dir);
}

/* Before each case: the last case's children reaped; the library built once, into a
 * temporary directory removed at exit. */
static void setup(void)
{
	const char *tmp = getenv("TMPDIR");
	char src[300], cmd[700];
	FILE *f;

	reap_all();
	if (lib[0])
		return;
	atexit(reap_all);
	snprintf(dir, sizeof(dir), "%s/test_dyn_inject.XXXXXX", tmp ? tmp : "/tmp");
	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	atexit(cleanup);
	snprintf(src, sizeof(src), "%s/inj.c", dir);
	f = fopen(src, "w");
	CU_ASSERT_FATAL(f != NULL);
	fputs(lib_src, f);
	fclose(f);
	snprintf(lib, sizeof(lib), "%s/libinj.so", dir);
	snprintf(cmd, sizeof(cmd), "cc -shared -fPIC -O1 -o '%s' '%s'", lib, src);
	if (system(cmd) != 0) {
		lib[0] = 0;
		CU_FAIL_FATAL("cannot build the library with cc");
	}
}

#define WAIT_UNTIL(cond)                                                                           \
	({                                                                                         \
		bool ok_ = false;                                                                  \
		for (int k_ = 0; k_ < 10000 && !(ok_ = (cond)); k_++)                              \
			usleep(1000);                                                              \
		ok_;                                                                               \
	})

static struct shared *shared_new(void)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	CU_ASSERT_FATAL(sh != MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	return sh;
}

static pid_t spawn(void (*body)(void *), void *arg)
{
	pid_t pid = fork();

	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		body(arg);
		_exit(0);
	}
	if (nkids < 16)
		kids[nkids++] = pid;
	return pid;
}

static void body_spin(void *arg)
{
	t_spin(&((struct shared *)arg)->slot[0]);
}

static void *thread_spin(void *slot)
{
	t_spin(slot);
}

static void body_threads(void *arg)
{
	struct shared *sh = arg;
	pthread_t t;

	for (int k = 0; k < SLOTS; k++)
		if (pthread_create(&t, NULL, thread_spin, &sh->slot[k]) != 0)
			_exit(2);
	for (;;)
		pause();
}

static void *thread_count(void *slot)
{
	__atomic_fetch_add(&((struct slot *)slot)->sp, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* Threads created and joined, one after the other, for ever; slot 0's sp counts the threads. */
static void body_churn(void *arg)
{
	struct slot *s = &((struct shared *)arg)->slot[0];
	pthread_t t;

	for (;;) {
		if (pthread_create(&t, NULL, thread_count, s) != 0 || pthread_join(t, NULL) != 0)
			_exit(2);
		atomic_fetch_add(&s->count, 1);
	}
}

/* How a blocking child's syscall ended. */
struct report {
	long r;			/* read's or nanosleep's result */
	int err;		/* its errno */
	char data[16];		/* what read got */
	int usr1, usr2;		/* SIGUSR1, SIGUSR2 handled */
	int from, code;		/* with this siginfo: si_pid, si_code */
	long elapsed_ns;
};

struct blocker {
	int in[2], out[2];
	bool handler;		/* SIGUSR1 and SIGUSR2 get a handler, without SA_RESTART */
};

static volatile sig_atomic_t usr1_n, usr2_n, usr1_pid, usr1_code;

static void on_usr(int sig, siginfo_t *si, void *uc)
{
	if (sig == SIGUSR2) {
		usr2_n++;
		return;
	}
	usr1_n++;
	usr1_pid = si->si_pid;
	usr1_code = si->si_code;
}

/* Handlers for SIGUSR1 and SIGUSR2, without SA_RESTART. */
static void usr_handlers(void)
{
	struct sigaction sa = { .sa_sigaction = on_usr, .sa_flags = SA_SIGINFO };

	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
}

/* Wait for both signals, without a window where one could come unseen. */
static void usr_wait(void)
{
	sigset_t both, old;

	sigemptyset(&both);
	sigaddset(&both, SIGUSR1);
	sigaddset(&both, SIGUSR2);
	sigprocmask(SIG_BLOCK, &both, &old);
	while (!usr1_n || !usr2_n)
		sigsuspend(&old);
}

static void report(struct blocker *b, struct report *r)
{
	r->usr1 = usr1_n;
	r->usr2 = usr2_n;
	r->from = usr1_pid;
	r->code = usr1_code;
	if (write(b->out[1], r, sizeof(*r)) != sizeof(*r))
		_exit(2);
}

static void body_read(void *arg)
{
	struct blocker *b = arg;
	struct report r = { 0 };

	if (b->handler)
		usr_handlers();
	r.r = read(b->in[0], r.data, sizeof(r.data) - 1);
	r.err = r.r < 0 ? errno : 0;
	if (b->handler)
		usr_wait();
	report(b, &r);
}

static long ns_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000000l + b->tv_nsec - a->tv_nsec;
}

static void body_sleep(void *arg)
{
	struct timespec a, b, d = { 1, 0 };
	struct report r = { 0 };

	clock_gettime(CLOCK_MONOTONIC, &a);
	r.r = nanosleep(&d, NULL);
	r.err = r.r < 0 ? errno : 0;
	clock_gettime(CLOCK_MONOTONIC, &b);
	r.elapsed_ns = ns_between(&a, &b);
	report(arg, &r);
}

static void blocker_open(struct blocker *b, bool handler)
{
	CU_ASSERT_FATAL(pipe(b->in) == 0 && pipe(b->out) == 0);
	b->handler = handler;
}

static void blocker_close(struct blocker *b)
{
	close(b->in[0]);
	close(b->in[1]);
	close(b->out[0]);
	close(b->out[1]);
}

/* The child's report, within 10 s. */
static bool report_read(struct blocker *b, struct report *r)
{
	struct pollfd p = { .fd = b->out[0], .events = POLLIN };

	return poll(&p, 1, 10000) == 1 && read(b->out[0], r, sizeof(*r)) == sizeof(*r);
}

/* ---- looking at a child ---- */

/* Is process PID blocked in syscall NR? */
static bool in_syscall(pid_t pid, long nr)
{
	char path[64], line[256] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	return line[0] >= '0' && line[0] <= '9' && strtol(line, NULL, 10) == nr;
}

static char proc_state(pid_t pid)
{
	char path[64], line[512] = "", *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	p = strrchr(line, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* How many mappings of process PID are of file PATH. */
static int mappings_of(pid_t pid, const char *path)
{
	char maps[64], line[1024];
	int n = 0;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, path) != NULL;
	fclose(f);
	return n;
}

static long count(const struct slot *s)
{
	return atomic_load(&s->count);
}

/* Slot S counts on, and found its registers as they were. */
static void check_spins(const struct slot *s)
{
	long c = count(s);

	CU_ASSERT(WAIT_UNTIL(count(s) > c + 1000));
	CU_ASSERT_EQUAL(atomic_load(&s->bad), 0);
}

/* A file in the temporary directory, for hello() to write. */
static void out_path(char *path, size_t len, const char *name)
{
	snprintf(path, len, "%s/%s", dir, name);
	unlink(path);
}

/* hello() wrote PATH, from process PID, on its call number CALLS. */
static void check_hello_file(const char *path, pid_t pid, int calls)
{
	char got[300] = "", want[300];
	FILE *f = fopen(path, "r");

	CU_ASSERT_FATAL(f != NULL);
	if (!fgets(got, sizeof(got), f))
		got[0] = 0;
	fclose(f);
	snprintf(want, sizeof(want), "%s %d %d\n", path, pid, calls);
	CU_ASSERT_STRING_EQUAL(got, want);
}

static int inject(pid_t pid, const char *l, const char *fn, const char *arg, long *ret, char *err)
{
	int r = stp_inject__call(pid, l, fn, arg, ret, err, 512);

	if (r != 0 && getenv("TEST_DYN_INJECT_VERBOSE"))
		fprintf(stderr, "inject %d %s: %s\n", pid, fn, err);
	return r;
}

/* Inject hello(PATH) into PID, expecting call number CALLS. */
static void hello_ok(pid_t pid, const char *path, int calls)
{
	char err[512] = "";
	long ret = 0;

	CU_ASSERT_EQUAL(inject(pid, lib, "hello", path, &ret, err), 0);
	CU_ASSERT_STRING_EQUAL(err, "");
	CU_ASSERT_EQUAL(ret, (long)strlen(path) + 42 + 1000 * calls);
	check_hello_file(path, pid, calls);
}

/* ---- the cases ---- */

/* The bytes below the child's red zone that the call's strings used. */
static bool stack_bytes(pid_t pid, unsigned long sp, size_t len, unsigned char *buf)
{
	struct iovec local = { buf, len }, remote = { (void *)(sp - 128 - len), len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

static void test_call(void)
{
	struct shared *sh = shared_new();
	unsigned char before[256], after[256];
	char path[300];
	size_t len;
	pid_t pid;

	setup();
	out_path(path, sizeof(path), "call");
	len = strlen(lib) + strlen("hello") + strlen(path) + 3;
	CU_ASSERT_FATAL(len <= sizeof(before));
	pid = spawn(body_spin, sh);
	CU_ASSERT_FATAL(WAIT_UNTIL(count(&sh->slot[0]) > 0));
	CU_ASSERT_FATAL(stack_bytes(pid, sh->slot[0].sp, len, before));
	CU_ASSERT_EQUAL(before[0], 0xa5);
	hello_ok(pid, path, 1);
	CU_ASSERT_FATAL(stack_bytes(pid, sh->slot[0].sp, len, after));
	CU_ASSERT(memcmp(before, after, len) == 0);
	check_spins(&sh->slot[0]);
	reap(pid);
	munmap(sh, sizeof(*sh));
}

static void test_twice(void)
{
	struct shared *sh = shared_new();
	char path[300];
	pid_t pid;
	int maps;

	setup();
	out_path(path, sizeof(path), "twice");
	pid = spawn(body_spin, sh);
	CU_ASSERT_FATAL(WAIT_UNTIL(count(&sh->slot[0]) > 0));
	hello_ok(pid, path, 1);
	maps = mappings_of(pid, lib);
	CU_ASSERT(maps > 0);
	hello_ok(pid, path, 2);
	CU_ASSERT_EQUAL(mappings_of(pid, lib), maps);
	check_spins(&sh->slot[0]);
	reap(pid);
	munmap(sh, sizeof(*sh));
}

/* Blocked in read(): the call works, then read() still gets the data. */
static void test_read(void)
{
	struct report r = { 0 };
	struct blocker b;
	char path[300];
	pid_t pid;

	setup();
	out_path(path, sizeof(path), "read");
	blocker_open(&b, false);
	pid = spawn(body_read, &b);
	CU_ASSERT_FATAL(WAIT_UNTIL(in_syscall(pid, SYS_read)));
	hello_ok(pid, path, 1);
	CU_ASSERT(WAIT_UNTIL(in_syscall(pid, SYS_read)));	/* blocked again */
	CU_ASSERT_EQUAL(write(b.in[1], "data", 4), 4);
	CU_ASSERT_FATAL(report_read(&b, &r));
	CU_ASSERT_EQUAL(r.r, 4);
	CU_ASSERT_EQUAL(r.err, 0);
	CU_ASSERT_STRING_EQUAL(r.data, "data");
	reap(pid);
	blocker_close(&b);
}

/*
 * Blocked in read(), with handlers without SA_RESTART: the call raises
 * SIGUSR1 then SIGUSR2.  They are delivered after it, SIGUSR1 with its
 * siginfo, and read() fails with EINTR as it would have.
 */
static void test_signal(void)
{
	struct report r = { 0 };
	char err[512] = "";
	struct blocker b;
	long ret = 0;
	pid_t pid;

	setup();
	blocker_open(&b, true);
	pid = spawn(body_read, &b);
	CU_ASSERT_FATAL(WAIT_UNTIL(in_syscall(pid, SYS_read)));
	CU_ASSERT_EQUAL(inject(pid, lib, "raise_two", "", &ret, err), 0);
	CU_ASSERT_EQUAL(ret, 7);
	CU_ASSERT_FATAL(report_read(&b, &r));
	CU_ASSERT_EQUAL(r.r, -1);
	CU_ASSERT_EQUAL(r.err, EINTR);
	CU_ASSERT_EQUAL(r.usr1, 1);
	CU_ASSERT_EQUAL(r.usr2, 1);
	CU_ASSERT_EQUAL(r.from, pid);
	CU_ASSERT_EQUAL(r.code, SI_USER);
	reap(pid);
	blocker_close(&b);
}

/* Blocked in nanosleep(1 s): the call works, the sleep completes, all of it. */
static void test_sleep(void)
{
	struct report r = { 0 };
	struct blocker b;
	char path[300];
	pid_t pid;

	setup();
	out_path(path, sizeof(path), "sleep");
	blocker_open(&b, false);
	pid = spawn(body_sleep, &b);
	CU_ASSERT_FATAL(WAIT_UNTIL(in_syscall(pid, SYS_clock_nanosleep)));
	hello_ok(pid, path, 1);
	CU_ASSERT_FATAL(report_read(&b, &r));
	CU_ASSERT_EQUAL(r.r, 0);
	CU_ASSERT_EQUAL(r.err, 0);
	CU_ASSERT(r.elapsed_ns >= 1000000000l);
	reap(pid);
	blocker_close(&b);
}

static bool all_counting(const struct shared *sh)
{
	for (int k = 0; k < SLOTS; k++)
		if (count(&sh->slot[k]) == 0)
			return false;
	return true;
}

/* A thread of PID other than the leader, or 0. */
static pid_t other_thread(pid_t pid)
{
	struct dirent *e;
	char path[64];
	pid_t tid = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!tid && (e = readdir(d)))
		if (atoi(e->d_name) > 0 && atoi(e->d_name) != pid)
			tid = atoi(e->d_name);
	closedir(d);
	return tid;
}

/* Four spinning threads: all stopped during the call, all spinning after. */
static void test_threads(void)
{
	struct shared *sh = shared_new();
	char path[300], arg[64], err[512] = "", want[128];
	long ret = -1;
	pid_t pid, tid;

	setup();
	out_path(path, sizeof(path), "threads");
	pid = spawn(body_threads, sh);
	CU_ASSERT_FATAL(WAIT_UNTIL(all_counting(sh)));
	snprintf(arg, sizeof(arg), "%lx %d", (unsigned long)&sh->slot[0].count, SLOTS);
	CU_ASSERT_EQUAL(inject(pid, lib, "frozen", arg, &ret, err), 0);
	CU_ASSERT_EQUAL(ret, 0);
	hello_ok(pid, path, 1);
	for (int k = 0; k < SLOTS; k++)
		check_spins(&sh->slot[k]);
	tid = other_thread(pid);
	CU_ASSERT_FATAL(tid > 0);
	snprintf(want, sizeof(want), "%d is a thread of process %d, not a process", tid, pid);
	CU_ASSERT_EQUAL(inject(tid, lib, "hello", path, &ret, err), -1);
	CU_ASSERT_STRING_EQUAL(err, want);
	reap(pid);
	munmap(sh, sizeof(*sh));
}

/* Threads created and joined all along: the ones that come and go are handled. */
static void test_churn(void)
{
	struct shared *sh = shared_new();
	char path[300], arg[64], err[512];
	long c, ret = -1;
	pid_t pid;

	setup();
	out_path(path, sizeof(path), "churn");
	pid = spawn(body_churn, sh);
	CU_ASSERT_FATAL(WAIT_UNTIL(count(&sh->slot[0]) > 100));
	snprintf(arg, sizeof(arg), "%lx 1", (unsigned long)&sh->slot[0].sp);
	for (int k = 1; k <= 5; k++) {
		hello_ok(pid, path, k);
		CU_ASSERT_EQUAL(inject(pid, lib, "frozen", arg, &ret, err), 0);
		CU_ASSERT_EQUAL(ret, 0);	/* no thread created during the call */
	}
	c = count(&sh->slot[0]);
	CU_ASSERT(WAIT_UNTIL(count(&sh->slot[0]) > c + 100));
	reap(pid);
	munmap(sh, sizeof(*sh));
}

/* Stopped by SIGSTOP: the call works, the child is stopped again after, runs on SIGCONT. */
static void test_stopped(void)
{
	struct shared *sh = shared_new();
	char path[300];
	int status;
	pid_t pid;

	setup();
	out_path(path, sizeof(path), "stopped");
	pid = spawn(body_spin, sh);
	CU_ASSERT_FATAL(WAIT_UNTIL(count(&sh->slot[0]) > 0));
	kill(pid, SIGSTOP);
	CU_ASSERT_FATAL(waitpid(pid, &status, WUNTRACED) == pid && WIFSTOPPED(status));
	hello_ok(pid, path, 1);
	CU_ASSERT(WAIT_UNTIL(proc_state(pid) == 'T'));
	kill(pid, SIGCONT);
	check_spins(&sh->slot[0]);
	reap(pid);
	munmap(sh, sizeof(*sh));
}

/* Calls that fail: -1, why, and the child spins on unharmed. */
static void expect_fail(pid_t pid, const char *l, const char *fn, const char *want)
{
	char err[512] = "";
	long ret = 12345;

	CU_ASSERT_EQUAL(inject(pid, l, fn, "x", &ret, err), -1);
	CU_ASSERT_STRING_EQUAL(err, want);
	CU_ASSERT_EQUAL(ret, 12345);
}

static void test_missing(void)
{
	const char *nope = "/nonexistent/libnope.so";
	struct shared *sh = shared_new();
	char want[1024];
	pid_t pid;

	setup();
	pid = spawn(body_spin, sh);
	CU_ASSERT_FATAL(WAIT_UNTIL(count(&sh->slot[0]) > 0));
	snprintf(want, sizeof(want), "cannot load %s in process %d: %s: cannot open shared "
		 "object file: No such file or directory", nope, pid, nope);
	expect_fail(pid, nope, "hello", want);
	check_spins(&sh->slot[0]);
	snprintf(want, sizeof(want), "cannot find nosuch in %s in process %d: %s: undefined "
		 "symbol: nosuch", lib, pid, lib);
	expect_fail(pid, lib, "nosuch", want);
	check_spins(&sh->slot[0]);
	reap(pid);
	munmap(sh, sizeof(*sh));
}

/* A call that never returns: abandoned after the time limit, the child spins on. */
static void test_timeout(void)
{
	struct shared *sh = shared_new();
	char want[256];
	pid_t pid;

	setup();
	pid = spawn(body_spin, sh);
	CU_ASSERT_FATAL(WAIT_UNTIL(count(&sh->slot[0]) > 0));
	stp_inject__set_timeout(300);
	snprintf(want, sizeof(want), "the call to forever in process %d did not return within "
		 "0.3 s", pid);
	expect_fail(pid, lib, "forever", want);
	stp_inject__set_timeout(0);
	check_spins(&sh->slot[0]);
	reap(pid);
	munmap(sh, sizeof(*sh));
}

/* A call that exits the process. */
static void test_exit(void)
{
	struct shared *sh = shared_new();
	char want[256];
	pid_t pid;

	setup();
	pid = spawn(body_spin, sh);
	CU_ASSERT_FATAL(WAIT_UNTIL(count(&sh->slot[0]) > 0));
	snprintf(want, sizeof(want), "process %d exited with status 3 during the call to bye",
		 pid);
	expect_fail(pid, lib, "bye", want);
	CU_ASSERT_EQUAL(kill(pid, 0), -1);	/* reaped, by the injector as its tracer */
	reap(pid);
	munmap(sh, sizeof(*sh));
}

/* A process that is gone, this process, not a valid id. */
static void test_no_process(void)
{
	char want[128];
	pid_t pid = fork();

	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0)
		_exit(0);
	CU_ASSERT_FATAL(waitpid(pid, NULL, 0) == pid);
	snprintf(want, sizeof(want), "no process %d", pid);
	expect_fail(pid, "/x.so", "f", want);
	expect_fail(0, "/x.so", "f", "invalid process id 0");
	snprintf(want, sizeof(want), "cannot inject into process %d: it is the calling process",
		 getpid());
	expect_fail(getpid(), "/x.so", "f", want);
}

/*
 * A process already traced: a helper forks a grandchild that asks to be
 * traced (PTRACE_TRACEME), sends its pid up, and spins until the helper
 * kills it, when the test closes the helper's pipe.
 */
static void body_tracer(void *arg)
{
	int *fds = arg;	/* the test's pipes: down (read, write), up (read, write) */
	char c;
	pid_t g;

	close(fds[1]);
	close(fds[2]);
	g = fork();

	if (g == 0) {
		struct shared sh = { 0 };

		if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0)
			_exit(2);
		g = getpid();
		if (write(fds[3], &g, sizeof(g)) != sizeof(g))
			_exit(2);
		t_spin(&sh.slot[0]);
	}
	if (read(fds[0], &c, 1) < 0)
		_exit(2);
	reap(g);
}

static void test_traced(void)
{
	int fds[4], *down = fds, *up = fds + 2;
	char want[128];
	pid_t helper, g = 0;

	CU_ASSERT_FATAL(pipe(down) == 0 && pipe(up) == 0);
	helper = spawn(body_tracer, fds);
	CU_ASSERT_FATAL(read(up[0], &g, sizeof(g)) == sizeof(g));
	snprintf(want, sizeof(want), "process %d is already traced by process %d", g, helper);
	expect_fail(g, "/x.so", "f", want);
	close(down[1]);
	CU_ASSERT_EQUAL(waitpid(helper, NULL, 0), helper);
	close(down[0]);
	close(up[0]);
	close(up[1]);
}

/* ---- pc moves: threads stopped inside the bytes a probe's jump replaced ---- */

/* A thread blocked in one of the t_sys functions, and what its two reads got. */
struct sysblock {
	int in[2];
	const char *fn;		/* NULL: no such thread */
	atomic_int reads;	/* reads done */
	long r[2];
	char data[2][8];
};

#define SYSBLOCKS 3
#define SYSMOVES 16

/* The child's threads (the leader first) and what its patcher did, shared with the test. */
struct sysshared {
	struct sysblock b[SYSBLOCKS];		/* t_sys_first, t_sys_second, t_sys_before */
	atomic_long hits[SYSBLOCKS];		/* entry probes at t_sys_first, t_sys_second, t_sys_at */
	int kind[SYSBLOCKS], len[SYSBLOCKS];	/* how each site was written */
	int nmoves;
	struct stp_inject_move moves[SYSMOVES];
};

static struct sysshared *sys_sh;	/* the children inherit it */

static void sys_run(struct sysblock *b)
{
	for (int k = 0; k < 2; k++) {
		b->r[k] = t_block(b->fn, b->in[0], b->data[k], sizeof(b->data[k]) - 1);
		atomic_fetch_add(&b->reads, 1);
	}
}

static void *sys_thread(void *b)
{
	sys_run(b);
	return NULL;
}

static void body_sys(void *arg)
{
	struct sysshared *sh = arg;
	pthread_t t;

	for (int k = 1; k < SYSBLOCKS; k++)
		if (sh->b[k].fn && pthread_create(&t, NULL, sys_thread, &sh->b[k]) != 0)
			_exit(2);
	sys_run(&sh->b[0]);
	for (;;)
		pause();
}

static void sys_hit(struct stp_regs *regs, void *arg)
{
	atomic_fetch_add((atomic_long *)arg, 1);
}

/* In the child, through call_at(): probes at the three sites; their pc moves, or NULL. */
static const void *sys_patch(void)
{
	static const char *const site[SYSBLOCKS][2] = {
		{ t_sys_first, t_sys_first_end },
		{ t_sys_second, t_sys_second_end },
		{ t_sys_at, t_sys_at_end },
	};
	static struct {
		uint64_t n;
		struct stp_inject_move v[SYSMOVES];
	} table;
	struct stp_patcher *p = stp_patcher__new();
	struct stp_patch_move v[SYSMOVES];
	struct stp_patch_info info;
	char err[256];

	for (int k = 0; k < SYSBLOCKS; k++)
		if (stp_patcher__add(p, (uintptr_t)site[k][0], (uintptr_t)site[k][0],
				     (uintptr_t)site[k][1], sys_hit, NULL, &sys_sh->hits[k], err,
				     sizeof(err)) != 0)
			return NULL;
	if (stp_patcher__install(p, err, sizeof(err)) != 0)
		return NULL;
	for (int k = 0; k < SYSBLOCKS && stp_patcher__info(p, (uintptr_t)site[k][0], &info) == 0;
	     k++) {
		sys_sh->kind[k] = info.kind;
		sys_sh->len[k] = info.len;
	}
	table.n = sys_sh->nmoves = stp_patcher__moves(p, v, SYSMOVES);
	for (uint64_t k = 0; k < table.n && k < SYSMOVES; k++)
		sys_sh->moves[k] = table.v[k] = (struct stp_inject_move){ v[k].from, v[k].to };
	return table.n <= SYSMOVES ? &table : NULL;
}

/* In the child, through call_at(): a move from t_sys_first + 2 to after 2 nops, no patch. */
static const void *sys_bad_move(void)
{
	static struct {
		uint64_t n;
		struct stp_inject_move v[1];
	} table;

	table.n = 1;
	table.v[0] = (struct stp_inject_move){ (uintptr_t)t_sys_first + 2,
					       (uintptr_t)t_sys_first + 4 };
	return &table;
}

static struct sysshared *sys_new(int nthreads)
{
	static const char *const fn[SYSBLOCKS] = { t_sys_first, t_sys_second, t_sys_before };
	struct sysshared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	CU_ASSERT_FATAL(sh != MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	for (int k = 0; k < nthreads; k++) {
		CU_ASSERT_FATAL(pipe(sh->b[k].in) == 0);
		sh->b[k].fn = fn[k];
	}
	sys_sh = sh;
	return sh;
}

static void sys_free(struct sysshared *sh)
{
	for (int k = 0; k < SYSBLOCKS; k++) {
		if (!sh->b[k].fn)
			continue;
		close(sh->b[k].in[0]);
		close(sh->b[k].in[1]);
	}
	munmap(sh, sizeof(*sh));
}

/* Is a thread of PID blocked in read() with its pc at PC? */
static bool sys_blocked(pid_t pid, uintptr_t pc)
{
	char path[300], line[256];
	struct dirent *e;
	bool found = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && !found && (e = readdir(d))) {
		FILE *f;
		char *last;

		if (atoi(e->d_name) <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/syscall", pid, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f) && strncmp(line, "0 ", 2) == 0 &&
		    (last = strrchr(line, ' ')))
			found = strtoul(last + 1, NULL, 16) == pc;
		fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

/* Where the move from FROM goes, or 0. */
static uintptr_t sys_move(const struct sysshared *sh, uintptr_t from)
{
	for (int k = 0; k < sh->nmoves && k < SYSMOVES; k++)
		if (sh->moves[k].from == from)
			return sh->moves[k].to;
	return 0;
}

/* The 2 bytes before AT in process PID are a syscall instruction. */
static bool sys_after_syscall(pid_t pid, uintptr_t at)
{
	unsigned char b[2] = { 0 };
	struct iovec local = { b, 2 }, remote = { (void *)(at - 2), 2 };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == 2 && b[0] == 0x0f && b[1] == 5;
}

/*
 * Write WHAT into each thread's pipe: each thread's read N (0 or 1) got
 * it, and (unless PCS is NULL) thread K is blocked in its next read at
 * PCS[K], its probe run.
 */
static void sys_feed(struct sysshared *sh, pid_t pid, int n, const char *what,
		     const uintptr_t *pcs)
{
	for (int k = 0; k < SYSBLOCKS; k++) {
		struct sysblock *b = &sh->b[k];

		if (!b->fn)
			continue;
		CU_ASSERT_EQUAL(write(b->in[1], what, strlen(what)), (ssize_t)strlen(what));
		CU_ASSERT_FATAL(WAIT_UNTIL(atomic_load(&b->reads) == n + 1));
		CU_ASSERT_EQUAL(b->r[n], (long)strlen(what));
		CU_ASSERT_STRING_EQUAL(b->data[n], what);
		if (pcs)
			CU_ASSERT(WAIT_UNTIL(sys_blocked(pid, pcs[k])));
	}
}

/* A child whose first N threads are blocked at PCS; ARG (32 bytes) gets call_at()'s for FN. */
static struct sysshared *sys_start(int n, const uintptr_t *pcs, const void *(*fn)(void),
				   char *arg, pid_t *pid)
{
	struct sysshared *sh;

	setup();
	CU_ASSERT_FATAL(memcmp(t_sys_first, "\x0f\x05\x90\x90\x90\xc3", 6) == 0);
	CU_ASSERT_FATAL(memcmp(t_sys_second, "\x90\x0f\x05\x90\x90\xc3", 6) == 0);
	CU_ASSERT_FATAL(memcmp(t_sys_before, "\x0f\x05\x90\x90\x90\x90\x90\xc3", 8) == 0);
	sh = sys_new(n);
	*pid = spawn(body_sys, sh);
	for (int k = 0; k < n; k++)
		CU_ASSERT_FATAL(WAIT_UNTIL(sys_blocked(*pid, pcs[k])));
	snprintf(arg, 32, "%lx", (unsigned long)(uintptr_t)fn);
	return sh;
}

/*
 * Probes patched in by a call while the leader is blocked in read() at
 * t_sys_first + 2 and another thread at t_sys_second + 3, both inside a
 * jump's 5 bytes, and a third at t_sys_at, a site's first byte.  The two
 * are moved into the copies (the leader, which ran the call, through its
 * saved registers), where the kernel restarts their read() at the copy of
 * the syscall; the third stays.  The probes run at the next calls only.
 */
static void test_pc_moves(void)
{
	const uintptr_t first = (uintptr_t)t_sys_first + 2, second = (uintptr_t)t_sys_second + 3,
			at = (uintptr_t)t_sys_at;
	const uintptr_t pcs[] = { first, second, at };
	struct sysshared *sh;
	char arg[32], err[512] = "";
	uintptr_t to1, to2, again[SYSBLOCKS];
	long ret = -1;
	pid_t pid;

	sh = sys_start(3, pcs, sys_patch, arg, &pid);
	stp_inject__set_pc_moves("moves");
	CU_ASSERT_EQUAL(inject(pid, lib, "call_at", arg, &ret, err), 0);
	stp_inject__set_pc_moves(NULL);
	CU_ASSERT_STRING_EQUAL(err, "");
	CU_ASSERT_EQUAL_FATAL(ret, 0);
	for (int k = 0; k < SYSBLOCKS; k++) {
		CU_ASSERT_EQUAL(sh->kind[k], STP_PATCH_JUMP);
		CU_ASSERT_EQUAL(sh->len[k], 5);
	}
	CU_ASSERT_EQUAL(sh->nmoves, 3 + 3 + 4);
	to1 = sys_move(sh, first);
	to2 = sys_move(sh, second);
	CU_ASSERT_FATAL(to1 && to2);
	CU_ASSERT_EQUAL(sys_move(sh, at), 0);
	CU_ASSERT(sys_after_syscall(pid, to1));
	CU_ASSERT(sys_after_syscall(pid, to2));
	/* blocked again, restarted in the copies, no probe run; the third where it was */
	CU_ASSERT(WAIT_UNTIL(sys_blocked(pid, to1) && sys_blocked(pid, to2) &&
			     sys_blocked(pid, at)));
	for (int k = 0; k < SYSBLOCKS; k++)
		CU_ASSERT_EQUAL(atomic_load(&sh->hits[k]), 0);
	/* the next calls: through the jumps, blocked in the copies again */
	again[0] = to1;
	again[1] = to2;
	again[2] = at;
	sys_feed(sh, pid, 0, "one", again);
	for (int k = 0; k < SYSBLOCKS; k++)
		CU_ASSERT_EQUAL(atomic_load(&sh->hits[k]), 1);
	sys_feed(sh, pid, 1, "two", NULL);
	CU_ASSERT_EQUAL(atomic_load(&sh->hits[0]), 1);
	CU_ASSERT_EQUAL(atomic_load(&sh->hits[1]), 1);
	CU_ASSERT_EQUAL(atomic_load(&sh->hits[2]), 2);	/* read() returned into the site */
	reap(pid);
	sys_free(sh);
}

/*
 * The same without the moves: the leader's read() restarts at
 * t_sys_first, now the jump, so the probe runs for a call that had begun
 * before it (at t_sys_second + 3 it would run the jump's rel32 as code).
 */
static void test_pc_unmoved(void)
{
	const uintptr_t first = (uintptr_t)t_sys_first + 2;
	struct sysshared *sh;
	char arg[32], err[512] = "";
	long ret = -1;
	pid_t pid;

	sh = sys_start(1, &first, sys_patch, arg, &pid);
	CU_ASSERT_EQUAL(inject(pid, lib, "call_at", arg, &ret, err), 0);
	CU_ASSERT_EQUAL_FATAL(ret, 0);
	CU_ASSERT(WAIT_UNTIL(atomic_load(&sh->hits[0]) == 1));
	CU_ASSERT(WAIT_UNTIL(sys_blocked(pid, sys_move(sh, first))));
	sys_feed(sh, pid, 0, "one", &(uintptr_t){ sys_move(sh, first) });
	CU_ASSERT_EQUAL(atomic_load(&sh->hits[0]), 2);	/* the restart's, the next call's */
	reap(pid);
	sys_free(sh);
}

/*
 * A move for a thread that restarts a system call, to a place the 2 bytes
 * before which are no syscall: refused, the call fails, the thread keeps
 * its pc and its read() (nothing is patched here).  A LIB without the
 * moves' variable: the call fails before FN runs.
 */
static void test_pc_move_refused(void)
{
	const uintptr_t first = (uintptr_t)t_sys_first + 2;
	struct sysshared *sh;
	char arg[32], err[512] = "", want[1024];
	long ret = -1;
	pid_t pid;

	sh = sys_start(1, &first, sys_bad_move, arg, &pid);
	stp_inject__set_pc_moves("nosuch_moves");
	snprintf(want, sizeof(want), "cannot find nosuch_moves in %s in process %d: %s: undefined "
		 "symbol: nosuch_moves", lib, pid, lib);
	expect_fail(pid, lib, "call_at", want);
	stp_inject__set_pc_moves("moves");
	CU_ASSERT_EQUAL(inject(pid, lib, "call_at", arg, &ret, err), -1);
	stp_inject__set_pc_moves(NULL);
	CU_ASSERT_EQUAL(ret, 0);
	snprintf(want, sizeof(want), "thread %d of process %d restarts a system call at 0x%lx, "
		 "but 0x%lx does not follow a copy of the syscall instruction", pid, pid,
		 (unsigned long)first, (unsigned long)first + 2);
	CU_ASSERT_STRING_EQUAL(err, want);
	CU_ASSERT(WAIT_UNTIL(sys_blocked(pid, first)));
	sys_feed(sh, pid, 0, "one", NULL);
	reap(pid);
	sys_free(sh);
}

static const struct unit_case cases[] = {
	{ "call", test_call },
	{ "twice", test_twice },
	{ "read", test_read },
	{ "signal", test_signal },
	{ "sleep", test_sleep },
	{ "threads", test_threads },
	{ "churn", test_churn },
	{ "stopped", test_stopped },
	{ "missing", test_missing },
	{ "timeout", test_timeout },
	{ "exit", test_exit },
	{ "no_process", test_no_process },
	{ "traced", test_traced },
	{ "pc_moves", test_pc_moves },
	{ "pc_unmoved", test_pc_unmoved },
	{ "pc_move_refused", test_pc_move_refused },
	{ NULL, NULL },
};

void unit_register(void)
{
	unit_add_suite("dyn_inject", cases);
}
