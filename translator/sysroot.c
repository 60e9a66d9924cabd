/*
 * sysroot.c - where the translator reads the kernel it translates for.
 *
 * Pass 2 resolves probe points against the running system and pass 4
 * compiles against its BTF; the cache key names its release.  With
 * PMSTAP_SYSROOT=DIR all of those come from DIR instead: DIR/sys/kernel/
 * btf/vmlinux, DIR/sys/kernel/tracing/..., DIR/proc/kallsyms, and the
 * release and build from DIR/proc/sys/kernel/osrelease and version, its
 * build-id from DIR/sys/kernel/notes.
 * Pass 5 still runs on this machine: a sysroot is for pmstap -p4, whose
 * cached build another machine (with that kernel) then runs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include "arena.h"
#include "sysroot.h"

const char *sysroot_dir(void)
{
	const char *root = getenv("PMSTAP_SYSROOT");

	return root && *root && strcmp(root, "/") != 0 ? root : NULL;
}

const char *sysroot_path(const char *path)
{
	const char *root = sysroot_dir();

	return root ? arena_printf("%s%s", root, path) : path;
}

FILE *sysroot_kallsyms(void)
{
	static char *text;
	static size_t len;
	static unsigned generation;

	if (!text || generation != arena_generation()) {
		text = arena_read_file(sysroot_path("/proc/kallsyms"), &len);
		generation = arena_generation();
	}
	return text && len ? fmemopen(text, len, "r") : NULL;
}

/* The first line of the sysroot's FILE into BUF; false when unreadable. */
static int read_line(const char *file, char *buf, size_t size)
{
	FILE *f = fopen(sysroot_path(file), "r");
	int ok = f && fgets(buf, (int)size, f);

	if (f)
		fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok && buf[0];
}

/*
 * A sysroot without its release is unusable (the cache key and vmlinux.h
 * are named after it): say so and stop, rather than mix two kernels.
 */
static const char *from_sysroot(const char *file, char *buf, size_t size)
{
	if (read_line(file, buf, size))
		return buf;
	fprintf(stderr, "pmstap: error: cannot read %s%s: PMSTAP_SYSROOT is not a kernel snapshot\n",
		sysroot_dir(), file);
	exit(1);
}

const char *sysroot_kernel_release(void)
{
	static struct utsname u;
	static char buf[sizeof(u.release)];

	if (sysroot_dir())
		return buf[0] ? buf : from_sysroot("/proc/sys/kernel/osrelease", buf, sizeof(buf));
	if (!u.release[0])
		uname(&u);
	return u.release;
}

const char *sysroot_kernel_version(void)
{
	static struct utsname u;
	static char buf[sizeof(u.version)];

	if (sysroot_dir())
		return buf[0] ? buf : from_sysroot("/proc/sys/kernel/version", buf, sizeof(buf));
	if (!u.version[0])
		uname(&u);
	return u.version;
}

/*
 * The kernel's GNU build-id, from the ELF notes the kernel shows in
 * /sys/kernel/notes (each: namesz, descsz, type, the name and the
 * descriptor, both padded to 4 bytes); "none" when it has none.  It names
 * the exact vmlinux, so the BTF too, where the release and build strings
 * of a rebuilt kernel may stay the same.
 */
const char *sysroot_kernel_build_id(void)
{
	size_t len = 0;
	const unsigned char *p = (const unsigned char *)arena_read_file(
		sysroot_path("/sys/kernel/notes"), &len);
	const unsigned char *end = p + len;

	while (p && end - p >= 12) {
		uint32_t n[3];
		size_t name, desc;

		memcpy(n, p, sizeof(n));
		name = (n[0] + 3u) & ~3u;
		desc = (n[1] + 3u) & ~3u;
		if ((size_t)(end - p) - 12 < name + desc)
			break;
		if (n[2] == 3 && n[0] == 4 && memcmp(p + 12, "GNU", 4) == 0) {	/* NT_GNU_BUILD_ID */
			char *hex = arena_alloc(2 * (size_t)n[1] + 1);

			for (uint32_t i = 0; i < n[1]; i++)
				sprintf(hex + 2 * i, "%02x", p[12 + name + i]);
			return hex;
		}
		p += 12 + name + desc;
	}
	return "none";
}
