/*
 * native.c - the functions of stp_dyn.h that script.dyn.so's handlers
 * call in the probed process: the thread's slot, ids and name, the
 * registers of the hit, and bpf_snprintf()'s formatting.  Part of
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

/* ---- bpf_snprintf() ---- */

/* The conversion at FMT (after its '%'): its length, and its letter in *CONV. */
static size_t spec_len(const char *fmt, char *conv)
{
	size_t i = strspn(fmt, "-+ #0");

	i += strspn(fmt + i, "0123456789");
	if (fmt[i] == '.')
		i += 1 + strspn(fmt + i + 1, "0123456789");
	i += strspn(fmt + i, "hlzjt");
	*conv = fmt[i];
	return fmt[i] ? i + 1 : i;
}

/* One conversion SPEC (from '%', LEN bytes) of ARG into OUT; what snprintf returns. */
static int format_one(char *out, size_t size, const char *spec, size_t len, char conv,
		      uint64_t arg)
{
	char f[40];
	size_t flags = 1 + strcspn(spec + 1, "hlzjt" "diuxXcsp");
	bool wide = memchr(spec, 'l', len) != NULL;	/* %ld, %lld: 64 bits; else 32 */

	if (len >= sizeof(f) - 4)
		return 0;
	memcpy(f, spec, flags);	/* '%', flags, width, precision: no length modifier */
	switch (conv) {
	case 's':
		snprintf(f + flags, sizeof(f) - flags, "s");
		return snprintf(out, size, f, arg ? (const char *)(uintptr_t)arg : "(null)");
	case 'c':
		snprintf(f + flags, sizeof(f) - flags, "c");
		return snprintf(out, size, f, (int)arg);
	case 'p':
		return snprintf(out, size, "0x%llx", (unsigned long long)arg);
	case 'd':
	case 'i':
		snprintf(f + flags, sizeof(f) - flags, "ll%c", conv);
		return snprintf(out, size, f, wide ? (long long)arg : (long long)(int32_t)arg);
	default:
		snprintf(f + flags, sizeof(f) - flags, "ll%c", conv);
		return snprintf(out, size, f, wide ? (unsigned long long)arg :
						   (unsigned long long)(uint32_t)arg);
	}
}

long stp_dyn_snprintf(char *out, uint32_t size, const char *fmt, const uint64_t *data,
		      uint32_t len)
{
	uint32_t nargs = len / 8, argi = 0;
	size_t pos = 0;

	if (!size)
		return -22;
	out[0] = '\0';
	for (const char *p = fmt; *p; p++) {
		char conv;
		size_t n;
		int w;

		if (*p != '%' || p[1] == '%') {
			if (pos + 1 < size)
				out[pos] = *p;
			pos++;
			p += *p == '%';
			continue;
		}
		n = spec_len(p + 1, &conv);
		w = format_one(pos < size ? out + pos : NULL, pos < size ? size - pos : 0, p, n + 1,
			       conv, argi < nargs ? data[argi] : 0);
		argi++;
		pos += w > 0 ? (size_t)w : 0;
		p += n;
	}
	out[pos < size ? pos : size - 1] = '\0';
	return (long)pos + 1;
}
