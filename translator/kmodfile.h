/*
 * kmodfile.h - a kernel module's file (its .ko under /lib/modules/KVER),
 * read without loading it: its BTF section, split against vmlinux's, and
 * where a kprobe by name lands on one of its functions.
 */
#ifndef PMSTAP_KMODFILE_H
#define PMSTAP_KMODFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* MODULE's .ko as modules.dep names it ('-' and '_' alike), or NULL. */
const char *kmodfile_path(const char *module);

/* The bytes of section NAME of the .ko at PATH (arena), or NULL. */
char *kmodfile_section(const char *path, const char *name, size_t *len);

/*
 * How a kprobe reaches function FUNC of the .ko at PATH.  The kernel finds
 * "M:F" as the first F of the module's symbol table, and locals come
 * first: when the module defines F more than once (a static F beside the
 * global one), the global F is reached as ANCHOR+OFFSET, ANCHOR a function
 * of the same section defined once.  *ANCHOR = FUNC, *OFFSET = 0 when F is
 * defined once.  False when F is not there or no anchor fits.
 */
bool kmodfile_site(const char *path, const char *func, const char **anchor, uint64_t *offset);

#endif
