/*
 * kread.h - kernel memory for user-context probes (kread.c): a BPF
 * syscall program run on demand.
 */
#ifndef STP_KREAD_H
#define STP_KREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STP_KREAD_MAX 4096	/* bytes one read may ask for */

/*
 * LEN bytes of kernel memory at ADDR into DST; with STR, a NUL-terminated
 * string of at most LEN bytes with its NUL.  Returns the bytes read (STR:
 * with the NUL), -EFAULT (or another -errno) when the memory cannot be
 * read, -ENOSYS when this kernel cannot run the reader at all.
 */
int stp_kread(void *dst, uint64_t addr, size_t len, bool str);

/* Why every kernel read fails (the reader could not be loaded), or NULL. */
const char *stp_kread_unavailable(void);

#endif
