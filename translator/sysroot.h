/*
 * sysroot.h - where the translator reads the kernel it translates for:
 * this machine's /, or PMSTAP_SYSROOT, a snapshot of another machine's
 * (BTF, tracefs event formats, kallsyms, its release), so that a script
 * can be compiled here and run there (the qa guest does that).
 */
#ifndef PMSTAP_SYSROOT_H
#define PMSTAP_SYSROOT_H

/* PATH ("/sys/kernel/btf/vmlinux") under the sysroot: PATH itself without one. */
const char *sys_path(const char *path);

/* The sysroot's directory, or NULL when the running system is read. */
const char *sys_root(void);

/* The kernel's release (uname -r) and build (uname -v): the sysroot's or this one's. */
const char *sys_kernel_release(void);
const char *sys_kernel_version(void);

/* The kernel's build-id in hex (its /sys/kernel/notes), or "none". */
const char *sys_kernel_build_id(void);

#endif
