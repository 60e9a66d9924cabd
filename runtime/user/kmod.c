/*
 * kmod.c - the runner's side of the kernel runtime (runtime/kmod): pmstap
 * plays staprun's part.
 *
 * A script compiled for it has script.ko instead of script.bpf.o.  The
 * runner loads a copy renamed STP_KMOD_PREFIX<pid> (so that two runs of
 * one script can load at once, as staprun's -R does), maps the module's
 * segment from its device and reads and writes it through maps.h as the
 * dyninst runtime's (the event loop polls its ring buffer on the same
 * timer), tells the module to register its probes when the other
 * runtimes attach theirs, and at the end unmaps, closes and unloads.
 * A module whose pmstap died (nothing holds it then) is removed by the
 * next run, which says so.  A script with procfs probes gets its files
 * from the module, in /proc/systemtap/MODULE (runtime/kmod/procfs.c),
 * MODULE being the other runtimes' folder name (-m NAME, else the
 * script's name), given as the module's parameter procfs_dir.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "maps.h"
#include "script_int.h"
#include "tapset_user.h"
#include "../dyninst/dmap.h"
#include "../kmod/kmod_abi.h"

bool stp_kmod_is(const char *dir)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/script.ko", dir);
	return access(path, F_OK) == 0;
}

/* ---- leftovers ---- */

/* Unload the modules of pmstaps that are gone (none of their files is open any more). */
static void remove_leftovers(struct stp_script *s)
{
	FILE *f = fopen("/proc/modules", "r");
	char name[64];
	long refs;
	int pid;

	while (f && fscanf(f, "%63s %*s %ld %*[^\n]", name, &refs) == 2) {
		if (strncmp(name, STP_KMOD_PREFIX, strlen(STP_KMOD_PREFIX)) != 0 || refs != 0)
			continue;
		pid = atoi(name + strlen(STP_KMOD_PREFIX));
		if (pid <= 0 || (kill(pid, 0) == 0 || errno != ESRCH))
			continue;
		if (syscall(SYS_delete_module, name, O_NONBLOCK) == 0)
			stp_msg(s, "note", "removed module %s, left behind by pmstap %d", name, pid);
	}
	if (f)
		fclose(f);
}

/* ---- the module's copy ---- */

/* Section NAME of the ELF image IMG (LEN bytes): its bytes in IMG, or NULL. */
static uint8_t *elf_section(uint8_t *img, size_t len, const char *name, size_t *size)
{
	Elf *e = elf_version(EV_CURRENT) != EV_NONE ? elf_memory((char *)img, len) : NULL;
	Elf_Scn *scn = NULL;
	uint8_t *at = NULL;
	size_t strs;
	GElf_Shdr sh;

	if (e && elf_getshdrstrndx(e, &strs) == 0)
		while (!at && (scn = elf_nextscn(e, scn))) {
			const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(e, strs, sh.sh_name) : NULL;

			if (n && strcmp(n, name) == 0 && sh.sh_offset <= len &&
			    sh.sh_size <= len - sh.sh_offset) {
				at = img + sh.sh_offset;
				*size = sh.sh_size;
			}
		}
	if (e)
		elf_end(e);
	return at;
}

/* In section SEC, the string OLD (as a whole string) becomes NEW, no longer than OLD. */
static bool rename_in(uint8_t *img, size_t len, const char *sec, const char *old,
		      const char *new)
{
	size_t size, n = strlen(old) + 1;
	uint8_t *at = elf_section(img, len, sec, &size), *p;

	p = at ? memmem(at, size, old, n) : NULL;
	if (!p)
		return false;
	memset(p, 0, n);
	memcpy(p, new, strlen(new));
	return true;
}

/*
 * script.ko, read, with its name (in struct module, and in .modinfo's
 * "name=") made NAME.
 */
static uint8_t *module_copy(struct stp_script *s, const char *name, size_t *len)
{
	char path[4096];
	uint8_t *img = NULL;
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/script.ko", s->dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !(img = malloc((size_t)st.st_size)) ||
	    read(fd, img, (size_t)st.st_size) != st.st_size) {
		stp_msg(s, "error", "cannot read %s: %s", path, strerror(errno));
		free(img);
		img = NULL;
	}
	if (fd >= 0)
		close(fd);
	*len = img ? (size_t)st.st_size : 0;
	snprintf(path, sizeof(path), "name=%s", name);
	if (img && (!rename_in(img, *len, ".gnu.linkonce.this_module", STP_KMOD_BUILD_NAME, name) ||
		    !rename_in(img, *len, ".modinfo", "name=" STP_KMOD_BUILD_NAME, path))) {
		stp_msg(s, "error", "%s/script.ko is not a module of the kernel runtime", s->dir);
		free(img);
		img = NULL;
	}
	return img;
}

/* Why init_module() refused the module, for a user. */
static const char *load_error(int err)
{
	switch (err) {
	case ENOSYS:
		return "this kernel cannot load modules";
	case EPERM:
		return "the kernel refuses to load modules (lockdown, kernel.modules_disabled, or "
		       "not root)";
	case EKEYREJECTED:
	case EBADMSG:
		return "the kernel requires signed modules (module.sig_enforce), and pmstap's "
		       "are not signed";
	case ENOEXEC:
		return "the module was built for another kernel (see dmesg): build it for this "
		       "one (-r `uname -r`)";
	case ENOENT:
		return "the module needs a symbol or a module this kernel does not have (see dmesg)";
	default:
		return strerror(err);
	}
}

/* ---- the device and the segment ---- */

/* /dev/NAME, made from /sys/class/misc/NAME/dev where no devtmpfs made it. */
static int open_device(struct stp_script *s)
{
	char path[128], dev[128] = "";
	unsigned int major, minor;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/dev/%s", s->kmod_name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0 || errno != ENOENT)
		return fd;
	snprintf(dev, sizeof(dev), "/sys/class/misc/%s/dev", s->kmod_name);
	f = fopen(dev, "r");
	if (!f || fscanf(f, "%u:%u", &major, &minor) != 2) {
		if (f)
			fclose(f);
		errno = ENOENT;
		return -1;
	}
	fclose(f);
	if (mknod(path, S_IFCHR | 0600, makedev(major, minor)) < 0 && errno != EEXIST)
		return -1;
	return open(path, O_RDWR | O_CLOEXEC);
}

/* The device's "size N" and "error TEXT" lines: the size; the error into ERR. */
static uint64_t device_status(int fd, char *err, size_t errlen)
{
	char buf[512];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	unsigned long long size = 0;
	char *e;

	buf[n > 0 ? n : 0] = '\0';
	sscanf(buf, "size %llu", &size);
	if (err && (e = strstr(buf, "\nerror ")))
		snprintf(err, errlen, "%.*s", (int)strcspn(e + 7, "\n"), e + 7);
	return size;
}

/*
 * The module maps a read-only mapping of its data for good (it clears
 * VM_MAYWRITE): a reader checks that making it writable fails, so that
 * no bug here can write the module's data.
 */
static bool stays_read_only(void *base, uint64_t size)
{
	if (mprotect(base, size, PROT_READ | PROT_WRITE) < 0)
		return errno == EACCES;
	mprotect(base, size, PROT_READ);
	return false;
}

struct stp_dseg *stp_kmod_reader(int fd, unsigned int patience_us, char *err, size_t errlen)
{
	uint64_t size = device_status(fd, NULL, 0);
	struct stp_dseg *seg;
	void *base;

	base = size ? mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
	if (base == MAP_FAILED) {
		snprintf(err, errlen, "cannot map the module's data: %s",
			 size ? strerror(errno) : "its device gives no size");
		return NULL;
	}
	if (!stays_read_only(base, size)) {
		snprintf(err, errlen, "the module's read-only mapping of its data could be made "
			 "writable (a module of an older pmstap?)");
		munmap(base, size);
		return NULL;
	}
	seg = stp_dseg__attach_mem_reader(base, size, fd, patience_us, err, errlen);
	if (!seg)
		munmap(base, size);
	return seg;
}

static int map_segment(struct stp_script *s)
{
	char err[256];
	uint64_t size = device_status(s->kmod_fd, NULL, 0);
	void *base;

	base = size ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, s->kmod_fd, 0)
		    : MAP_FAILED;
	if (base == MAP_FAILED) {
		stp_msg(s, "error", "cannot map module %s's data: %s", s->kmod_name,
			size ? strerror(errno) : "it gives no size");
		return -EIO;
	}
	s->dseg = stp_dseg__attach_mem(base, size, s->kmod_fd, err, sizeof(err));
	if (!s->dseg) {
		munmap(base, size);
		stp_msg(s, "error", "module %s's data: %s", s->kmod_name, err);
		return -EINVAL;
	}
	s->maps = stp_maps__dyn(s->dseg);
	if (!s->maps)
		return -ENOMEM;
	s->ncpus = stp_dseg__nslots(s->dseg);
	s->dyn_ring = stp_dseg__map(s->dseg, STP_RINGBUF_MAP);
	return 0;
}

/* The module's parameters: procfs_dir=MODULE when it has procfs files; NULL after an error. */
static char *module_params(struct stp_script *s)
{
	const char *module = s->opts.module_name ? s->opts.module_name : s->meta->script;
	char dir[4096], *params = NULL;
	struct stat st;
	bool any = false;

	for (int i = 0; i < s->meta->nprobes; i++)
		any |= s->meta->probes[i].kind == STP_PROBE_PROCFS;
	if (!any)
		return strdup("");
	snprintf(dir, sizeof(dir), "/proc/systemtap/%s", module);
	if (stat(dir, &st) == 0) {
		stp_msg(s, "error", "procfs folder %s is in use by another run of module '%s'", dir,
			module);
		stp_msg(s, "hint", "-m NAME names another module");
		return NULL;
	}
	if (asprintf(&params, "procfs_dir=\"%s\"", module) < 0)
		return NULL;
	return params;
}

/* script.so's user context calls the script's embedded C through the device (tapset_user.c). */
static void give_device(struct stp_script *s)
{
	stp_tapset_user_kmod(s->kmod_fd);
}

int stp_kmod_open(struct stp_script *s)
{
	uint8_t *img;
	char *params;
	size_t len;
	int rc;

	remove_leftovers(s);
	params = module_params(s);
	if (!params)
		return -EBUSY;
	snprintf(s->kmod_name, sizeof(s->kmod_name), STP_KMOD_PREFIX "%d", (int)getpid());
	img = module_copy(s, s->kmod_name, &len);
	if (!img) {
		free(params);
		return -EINVAL;
	}
	rc = (int)syscall(SYS_init_module, img, len, params);
	free(img);
	free(params);
	if (rc != 0) {
		stp_msg(s, "error", "cannot load the script's module: %s", load_error(errno));
		return -errno;
	}
	s->kmod_loaded = true;
	s->kmod_fd = open_device(s);
	if (s->kmod_fd < 0) {
		stp_msg(s, "error", "cannot open module %s's device: %s", s->kmod_name,
			strerror(errno));
		return -ENODEV;
	}
	give_device(s);
	return map_segment(s);
}

/* The module probe I's point names ('module("M")'), into MOD; false for another probe. */
static bool probe_module(const struct stp_script *s, int i, char *mod, size_t size)
{
	const char *p = strstr(s->meta->probes[i].point, "module(\""), *end;

	if (!p || !(end = strchr(p + 8, '"')))
		return false;
	snprintf(mod, size, "%.*s", (int)(end - p - 8), p + 8);
	return true;
}

/*
 * A module's functions are probed while it is loaded, as stap's module
 * does (stp_kmod_module_event()): say which modules the probes wait for.
 */
static void note_waiting(struct stp_script *s)
{
	char mod[64], other[64], path[128];

	for (int i = 0; i < s->meta->nprobes; i++) {
		bool said = false;

		if (!probe_module(s, i, mod, sizeof(mod)))
			continue;
		for (int j = 0; j < i && !said; j++)
			said = probe_module(s, j, other, sizeof(other)) && strcmp(mod, other) == 0;
		snprintf(path, sizeof(path), "/sys/module/%s", mod);
		if (!said && access(path, F_OK) != 0)
			stp_msg(s, "warning", "module '%s' is not loaded: its probes wait until it is",
				mod);
	}
}

/* The probes go in: every one, or none and the error. */
int stp_kmod_start(struct stp_script *s)
{
	char why[256] = "";
	int probe = -1, err = 0;

	if (write(s->kmod_fd, STP_KMOD_CMD_START, strlen(STP_KMOD_CMD_START)) >= 0) {
		note_waiting(s);
		return 0;
	}
	err = errno;
	device_status(s->kmod_fd, why, sizeof(why));
	if (sscanf(why, "probe %d", &probe) == 1 && probe >= 0 && probe < s->meta->nprobes) {
		int code = 0;
		const char *e = strstr(why, "error ");

		const struct stp_meta_probe *p = &s->meta->probes[probe];
		const char *r;

		if (e)
			code = atoi(e + 6);
		r = p->kind == STP_PROBE_PERF ? stp_perf_reason(p->perf_type, -code) : NULL;
		stp_msg(s, "error", "cannot attach probe %s: %s", p->point, r ? r :
			code == ENOENT || code == EINVAL ? "the kernel has no such function or "
			"tracepoint, or cannot probe it" : strerror(code ? code : err));
	} else {
		stp_msg(s, "error", "cannot attach the module's probes: %s",
			why[0] ? why : strerror(err));
	}
	return -err;
}

/* process.begin and thread.begin of the tasks that run already (runtime/kmod/proc.c). */
int stp_kmod_existing(struct stp_script *s)
{
	if (write(s->kmod_fd, STP_KMOD_CMD_EXISTING, strlen(STP_KMOD_CMD_EXISTING)) < 0)
		return -errno;
	return 0;
}

/*
 * Before the end probes, as stap's module unregisters its probes: the
 * returns its kretprobes missed are counted as skipped then (in the
 * module), so the summary has them.  The data stays mapped.
 */
void stp_kmod_detach(struct stp_script *s)
{
	if (s->kmod_fd >= 0)
		(void)!write(s->kmod_fd, STP_KMOD_CMD_STOP, strlen(STP_KMOD_CMD_STOP));
}

void stp_kmod_close(struct stp_script *s)
{
	if (s->kmod_fd >= 0) {
		(void)!write(s->kmod_fd, STP_KMOD_CMD_STOP, strlen(STP_KMOD_CMD_STOP));
		stp_dseg__free(s->dseg);	/* the mapping goes: the module is free */
		s->dseg = NULL;
		s->dyn_ring = NULL;
		close(s->kmod_fd);
		s->kmod_fd = -1;
	}
	if (s->kmod_loaded && syscall(SYS_delete_module, s->kmod_name, O_NONBLOCK) != 0 &&
	    !(s->opts.kmod_shared && errno == EWOULDBLOCK))
		stp_msg(s, "warning", "cannot unload module %s: %s (the next run removes it)",
			s->kmod_name, strerror(errno));
	s->kmod_loaded = false;
}

const char *stp_script__kmod_name(const struct stp_script *s)
{
	return s->kmod_fd >= 0 ? s->kmod_name : NULL;
}

bool stp_kmod_unload(const char *name)
{
	return strncmp(name, STP_KMOD_PREFIX, strlen(STP_KMOD_PREFIX)) == 0 &&
	       syscall(SYS_delete_module, name, O_NONBLOCK) == 0;
}
