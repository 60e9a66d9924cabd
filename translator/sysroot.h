/*
 * sysroot.h - where the translator reads the kernel it translates for:
 * this machine's /, or PMSTAP_SYSROOT, a snapshot of another machine's
 * (BTF, tracefs event formats, kallsyms, its release), so that a script
 * can be compiled here and run there (the qa guest does that).
 */
#ifndef PMSTAP_SYSROOT_H
#define PMSTAP_SYSROOT_H

#include <stdio.h>

/* PATH ("/sys/kernel/btf/vmlinux") under the sysroot: PATH itself without one. */
const char *sysroot_path(const char *path);

/*
 * /proc/kallsyms (the sysroot's) open for reading, NULL if it cannot be
 * read; fclose() it.  Its text is read once a run (arena generation) and
 * each open reads that copy: the kernel makes the file anew at every read
 * (0.2-0.4 s in the emulated qa guest), and pass 2 reads it three times.
 */
FILE *sysroot_kallsyms(void);

/* The sysroot's directory, or NULL when the running system is read. */
const char *sysroot_dir(void);

/* The kernel's release (uname -r) and build (uname -v): the sysroot's or this one's. */
const char *sysroot_kernel_release(void);
const char *sysroot_kernel_version(void);

/* The kernel's build-id in hex (its /sys/kernel/notes), or "none". */
const char *sysroot_kernel_build_id(void);

#endif
