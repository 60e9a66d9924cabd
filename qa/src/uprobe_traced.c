/*
 * uprobe_traced.c - uprobe_target's SDT mark with a semaphore: the
 * kernel raises uprobe_target_traced_semaphore while a probe is attached
 * to the mark, and only then does the mark fire (qa/30x).
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

int traced_mark(int i);

unsigned short uprobe_target_traced_semaphore __attribute__((section(".probes"))) = 0;

/* 1 when the semaphore was raised (and the mark fired) */
int traced_mark(int i)
{
	if (!uprobe_target_traced_semaphore)
		return 0;
	STAP_PROBE1(uprobe_target, traced, i);
	return 1;
}
