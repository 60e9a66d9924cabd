/*
 * debuginfo.c - find the separate debuginfo of a stripped ELF file.
 *
 * `objcopy --only-keep-debug` puts a program's DWARF in a file of its
 * own; the program keeps a .gnu_debuglink section (the file's name and a
 * CRC) and usually a build-id note, which the debug file keeps too.  A
 * candidate counts when it is an ELF file with DWARF and, when both have
 * a build-id, the same one.  The files found are remembered, so that
 * DWARF readers can go back from the debug file to the program (whose
 * .eh_frame the debug file does not have).
 *
 * When no file here has it and DEBUGINFOD_URLS names servers, it is asked
 * of them by build-id, as stap's elfutils does (debuginfod below).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include "arena.h"
#include "debuginfo.h"
#include "diag.h"
#include "manifest.h"

#define DEBUG_ROOT "/usr/lib/debug"

struct found {
	char *debug, *main;
	struct found *next;
};

static struct found *found;	/* malloc'd: paths outlive the arena */

static void remember(const char *debug, const char *main)
{
	struct found *f;

	for (f = found; f; f = f->next)
		if (strcmp(f->debug, debug) == 0)
			return;
	f = calloc(1, sizeof(*f));
	if (!f)
		return;
	f->debug = strdup(debug);
	f->main = strdup(main);
	f->next = found;
	found = f;
}

const char *debuginfo_main_file(const char *debug_path)
{
	for (struct found *f = found; f; f = f->next)
		if (strcmp(f->debug, debug_path) == 0)
			return f->main;
	return NULL;
}

/* Whether PATH is an ELF file with DWARF whose build-id (if any) is ID[0..LEN). */
static bool usable(const char *path, const void *id, ssize_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	Dwarf *dw;
	bool ok = false;

	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	if (dw) {
		const void *other;
		ssize_t n = dwelf_elf_gnu_build_id(elf, &other);

		ok = len <= 0 || n <= 0 || (n == len && memcmp(id, other, (size_t)len) == 0);
		dwarf_end(dw);
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return ok;
}

static const char *by_build_id(const unsigned char *id, ssize_t len)
{
	char hex[2 * 64 + 1];

	if (len < 2 || len > 64)
		return NULL;
	for (ssize_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	return arena_printf(DEBUG_ROOT "/.build-id/%.2s/%s.debug", hex, hex + 2);
}

/* The debuglink candidates of NAME for the file at PATH, in the order tried. */
static void link_candidates(const char *path, const char *name, const char **cand)
{
	char real[PATH_MAX];
	const char *dir, *slash;

	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	slash = strrchr(real, '/');
	dir = slash ? arena_strndup(real, (size_t)(slash - real)) : ".";
	cand[0] = arena_printf("%s/%s", dir, name);
	cand[1] = arena_printf("%s/.debug/%s", dir, name);
	cand[2] = arena_printf(DEBUG_ROOT "%s/%s", dir, name);
	cand[3] = NULL;
}

/* ---- debuginfod ---- */

/*
 * libdebuginfod, loaded the first time a server is to be asked (pmstap
 * runs without it, as elfutils' own tools do).  Its client fetches into its
 * cache (DEBUGINFOD_CACHE_PATH, else ~/.cache/debuginfod_client) and reads
 * DEBUGINFOD_TIMEOUT, DEBUGINFOD_PROGRESS and the rest of its environment
 * itself (debuginfod-client-config(7)).
 */
#define DEBUGINFOD_LIB "libdebuginfod.so.1"

struct debuginfod_client;

static struct {
	bool tried;
	struct debuginfod_client *client;
	int (*find)(struct debuginfod_client *, const unsigned char *, int, char **);
} dbgd;

bool debuginfo_servers_named(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && urls[strspn(urls, " \t")];
}

static bool dbgd_open(void)
{
	struct debuginfod_client *(*begin)(void);
	void *lib;

	if (dbgd.tried)
		return dbgd.client != NULL;
	dbgd.tried = true;
	lib = dlopen(DEBUGINFOD_LIB, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		diag_warning((struct srcloc){ 0 }, "DEBUGINFOD_URLS is set, but %s cannot be "
			     "loaded (%s): no debuginfo is asked of its servers", DEBUGINFOD_LIB,
			     dlerror());
		diag_hint("apt-get install libdebuginfod1");
		return false;
	}
	begin = (struct debuginfod_client *(*)(void))dlsym(lib, "debuginfod_begin");
	dbgd.find = (int (*)(struct debuginfod_client *, const unsigned char *, int, char **))
		dlsym(lib, "debuginfod_find_debuginfo");
	dbgd.client = begin && dbgd.find ? begin() : NULL;
	if (!dbgd.client)
		diag_warning((struct srcloc){ 0 }, "%s has no client to give: no debuginfo is "
			     "asked of the DEBUGINFOD_URLS servers", DEBUGINFOD_LIB);
	return dbgd.client != NULL;
}

/*
 * The debug file of build-id ID[0..LEN) (PATH's) from the DEBUGINFOD_URLS
 * servers, in the client's cache; NULL when none has it.  Whether one
 * does may change with no file here changing, so a run that asked in vain
 * leaves no manifest: the next one asks again.
 */
static const char *from_debuginfod(const unsigned char *id, ssize_t len, const char *path)
{
	char *got = NULL;
	const char *p;
	int fd;

	if (len <= 0 || !debuginfo_servers_named() || !dbgd_open())
		return NULL;
	fd = dbgd.find(dbgd.client, id, (int)len, &got);
	if (fd < 0 || !got) {
		manifest_unsure("a debuginfod server may have the debuginfo later");
		if (fd >= 0)
			close(fd);
		free(got);
		return NULL;
	}
	close(fd);
	p = arena_strdup(got);
	free(got);
	manifest_file(p);
	if (!usable(p, id, len)) {
		diag_warning((struct srcloc){ 0 }, "the debuginfod server's file for '%s' (%s) is "
			     "not its debuginfo", path, p);
		return NULL;
	}
	return p;
}

const char *debuginfo_find(Elf *elf, const char *path)
{
	const void *id = NULL;
	ssize_t len = dwelf_elf_gnu_build_id(elf, &id);
	const char *p = len > 0 ? by_build_id(id, len) : NULL, *name, *cand[4];
	GElf_Word crc;

	if (p)
		manifest_file(p);	/* missing now, it may come: looked at again */
	if (p && usable(p, id, len)) {
		remember(p, path);
		return p;
	}
	name = dwelf_elf_gnu_debuglink(elf, &crc);
	if (name && *name) {
		link_candidates(path, name, cand);
		for (int i = 0; cand[i]; i++) {
			manifest_file(cand[i]);
			if (strcmp(cand[i], path) == 0 || !usable(cand[i], id, len))
				continue;
			remember(cand[i], path);
			return cand[i];
		}
	}
	p = from_debuginfod(id, len, path);
	if (p)
		remember(p, path);
	return p;
}
