/*
 * perf_work N K [GOFILE [first]]: N times, touch K pages it never
 * touched before, then call step(i, minflt) with its own thread's count
 * of minor page faults so far (getrusage, the control of qa/166's @perf
 * page_faults counter).  With GOFILE, a second thread then does the
 * same, after calling ready() every millisecond until GOFILE exists (the
 * test makes it once the script has seen that thread's counter); with
 * "first" too, the main thread waits so before its own steps, and there
 * is no second thread.
 * Transparent huge pages are off for the area: each page is a fault.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

__attribute__((noinline)) void step(long i, long minflt);
__attribute__((noinline)) void ready(void);

static long n, k, page;
static const char *gofile;

__attribute__((noinline)) void step(long i, long minflt)
{
	__asm__ volatile("" : : "r"(i), "r"(minflt) : "memory");
}

__attribute__((noinline)) void ready(void)
{
	__asm__ volatile("" : : : "memory");
}

static void work(void)
{
	struct rusage ru;
	char *mem = mmap(NULL, (size_t)(n * k * page), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	madvise(mem, (size_t)(n * k * page), MADV_NOHUGEPAGE);
	for (long i = 0; i < n; i++) {
		for (long j = 0; j < k; j++)
			mem[(i * k + j) * page] = 1;
		getrusage(RUSAGE_THREAD, &ru);
		step(i, ru.ru_minflt);
	}
}

static void wait_go(void)
{
	while (access(gofile, F_OK) != 0) {
		ready();
		usleep(1000);
	}
}

static void *thread_main(void *arg)
{
	(void)arg;
	wait_go();
	work();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	n = argc > 2 ? atol(argv[1]) : 10;
	k = argc > 2 ? atol(argv[2]) : 16;
	gofile = argc > 3 ? argv[3] : NULL;
	page = sysconf(_SC_PAGESIZE);
	if (gofile && argc > 4) {
		wait_go();
		work();
		return 0;
	}
	work();
	if (gofile) {
		if (pthread_create(&t, NULL, thread_main, NULL) != 0)
			return 1;
		pthread_join(t, NULL);
	}
	return 0;
}
