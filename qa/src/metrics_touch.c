/*
 * metrics_touch - a workload for the metrics QA tests: page faults
 *
 *	metrics_touch PAGES
 *
 * Maps PAGES fresh anonymous pages (huge pages refused with
 * MADV_NOHUGEPAGE, so that each page faults on its own) and writes one
 * byte to each from user code: PAGES write faults taken in user mode.
 * Then reads each page again (no fault: the pages are there) and exits
 * 0, or 1 with a message.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	volatile unsigned char *p;
	unsigned long sum = 0;
	long pages, page, i;
	char *end;

	if (argc != 2) {
		fprintf(stderr, "usage: metrics_touch PAGES\n");
		return 2;
	}
	errno = 0;
	pages = strtol(argv[1], &end, 10);
	if (errno || *end || end == argv[1] || pages < 1) {
		fprintf(stderr, "usage: metrics_touch PAGES\n");
		return 2;
	}
	page = sysconf(_SC_PAGESIZE);
	p = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "metrics_touch: mmap: %s\n", strerror(errno));
		return 1;
	}
	if (madvise((void *)p, pages * page, MADV_NOHUGEPAGE) < 0) {
		fprintf(stderr, "metrics_touch: madvise: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < pages; i++)
		p[i * page] = (unsigned char)i;
	for (i = 0; i < pages; i++)
		sum += p[i * page];
	return sum == (unsigned long)-1;
}
