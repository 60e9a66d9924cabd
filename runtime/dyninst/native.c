/*
 * native.c - the functions of stp_dyn.h that script.dyn.so's handlers
 * call in the probed process: the thread's slot, ids and name, the
 * registers of the hit.  Part of
 * libstapdyn.so (loader.c sets the segment and the registers).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "native.h"

struct stp_dseg *stp_dyn_seg;
uint32_t stp_dyn_seg_gen;
__thread struct pt_regs *stp_dyn_cur_regs;
__thread uintptr_t stp_dyn_cur_func;

static __thread uint64_t pid_tgid;
static __thread uint64_t slot_key;	/* stp_dyn_seg_gen << 32 | the slot + 1; 0: not known */

/* A forked child is another process: its thread ids and slot are new. */
static void forget_ids(void)
{
	pid_tgid = 0;
	slot_key = 0;
}

static void native_init_once(void)
{
	pthread_atfork(NULL, NULL, forget_ids);
}

void stp_dyn_native_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, native_init_once);
}

uint32_t stp_dyn_slot(void)
{
	uint64_t key = slot_key;
	int slot;

	if ((uint32_t)key && key >> 32 == __atomic_load_n(&stp_dyn_seg_gen, __ATOMIC_RELAXED))
		return (uint32_t)key - 1;
	slot = stp_dyn_seg ? stp_dseg__slot(stp_dyn_seg) : -1;
	if (slot < 0)
		return UINT32_MAX;	/* none free: asked again at the next hit */
	slot_key = (uint64_t)stp_dyn_seg_gen << 32 | ((uint32_t)slot + 1);
	return (uint32_t)slot;
}

uint64_t stp_dyn_pid_tgid(void)
{
	if (!pid_tgid)
		pid_tgid = (uint64_t)getpid() << 32 | (uint32_t)gettid();
	return pid_tgid;
}

/* The thread's name as the kernel keeps it (comm), as execname() gives it. */
void stp_dyn_comm(char *out, uint32_t n)
{
	char comm[16] = "";

	if (n == 0)
		return;
	prctl(PR_GET_NAME, comm);
	comm[15] = '\0';
	snprintf(out, n, "%s", comm);
}

struct pt_regs *stp_dyn_regs(void)
{
	return stp_dyn_cur_regs;
}

uint64_t stp_dyn_func_ip(void)
{
	return stp_dyn_cur_func;
}
