/*
 * inject_sym.c - where the dynamic loader's entry points are in the process.
 *
 * glibc 2.34 and later, and musl, export dlopen, dlsym and dlerror from
 * libc itself; older glibc has them in libdl.so.2 when the program links
 * it, and otherwise only __libc_dlopen_mode and __libc_dlsym (no dlerror).
 * The libc (then libdl) the process maps is found in /proc/PID/maps, its
 * file opened through /proc/PID/root (so in the process's own mount
 * namespace), and its .dynsym read with libelf.  A symbol's address is
 * where the process maps the file offset that the PT_LOAD holding the
 * symbol's value puts it at: no load bias to guess.
 *
 * A file replaced on disk since the process mapped it (an upgrade) would
 * give wrong addresses: the .dynsym entry of the first symbol found is read
 * from the process too, and must be the file's, byte for byte.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "inject_int.h"

#define SYM_RTLD_DLOPEN 0x80000000	/* glibc's __RTLD_DLOPEN, for __libc_dlopen_mode */
#define SYM_DELETED	" (deleted)"

/* The symbols looked for, in this order. */
enum sym_id {
	SYM_DLOPEN,
	SYM_DLSYM,
	SYM_DLERROR,
	SYM_LIBC_DLOPEN,
	SYM_LIBC_DLSYM,
	SYM_N,
};

static const char *const sym_names[SYM_N] = {
	"dlopen", "dlsym", "dlerror", "__libc_dlopen_mode", "__libc_dlsym",
};

/* An object the process maps, and the symbols found in it. */
struct sym_obj {
	char path[PATH_MAX];	/* as the maps name it */
	uint64_t value[SYM_N];	/* st_value; 0: not found */
	uint64_t entry[SYM_N];	/* the file offset of its .dynsym entry */
	uintptr_t addr[SYM_N];	/* where it is in the process */
};

/* ---- /proc/PID/maps ---- */

struct sym_map {
	unsigned long start, end;
	unsigned long long off;
	const char *path;
};

typedef int (*sym_map_fn)(const struct sym_map *m, void *arg);

/* Call FN on each mapping of process PID until it returns nonzero: that value, or 0; -1. */
static int maps__each(pid_t pid, sym_map_fn fn, void *arg)
{
	char maps[64], line[PATH_MAX + 128];
	struct sym_map m;
	int r = 0, at;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "re");
	if (!f)
		return -1;
	while (!r && fgets(line, sizeof(line), f)) {
		at = 0;
		if (sscanf(line, "%lx-%lx %*s %llx %*s %*s %n", &m.start, &m.end, &m.off,
			   &at) != 3 || !at)
			continue;
		line[strcspn(line, "\n")] = 0;
		m.path = line + at;
		r = fn(&m, arg);
	}
	fclose(f);
	return r;
}

struct find_arg {
	bool (*is)(const char *base);
	struct sym_obj *o;
	bool zero;		/* something is mapped at address 0 */
};

static int find_cb(const struct sym_map *m, void *arg)
{
	struct find_arg *a = arg;

	if (m->start == 0)
		a->zero = true;
	if (m->path[0] != '/' || !a->is(strrchr(m->path, '/') + 1))
		return 0;
	snprintf(a->o->path, sizeof(a->o->path), "%s", m->path);
	return 1;
}

struct addr_arg {
	const char *path;
	uint64_t off;
	uintptr_t addr;
};

static int addr_cb(const struct sym_map *m, void *arg)
{
	struct addr_arg *a = arg;

	if (strcmp(m->path, a->path) != 0 || a->off < m->off ||
	    a->off - m->off >= m->end - m->start)
		return 0;
	a->addr = m->start + (a->off - m->off);
	return 1;
}

/* Where file offset OFF of PATH is in process PID; 0 when it is not mapped. */
static uintptr_t maps__addr(pid_t pid, const char *path, uint64_t off)
{
	struct addr_arg a = { .path = path, .off = off };

	return maps__each(pid, addr_cb, &a) == 1 ? a.addr : 0;
}

/* ---- which objects ---- */

static bool is_libc(const char *base)
{
	return strncmp(base, "libc.so.", 8) == 0 ||
	       (strncmp(base, "libc-", 5) == 0 && isdigit((unsigned char)base[5])) ||
	       strncmp(base, "libc.musl-", 10) == 0 || strncmp(base, "ld-musl-", 8) == 0;
}

static bool is_libdl(const char *base)
{
	return strncmp(base, "libdl.so.", 9) == 0 ||
	       (strncmp(base, "libdl-", 6) == 0 && isdigit((unsigned char)base[6]));
}

/* ---- the ELF file ---- */

/* The file offset that virtual address VADDR of E is loaded from; -1 when none. */
static uint64_t elf__offset(Elf *e, uint64_t vaddr)
{
	GElf_Phdr ph;
	size_t n;

	if (elf_getphdrnum(e, &n) != 0)
		return (uint64_t)-1;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr - ph.p_vaddr < ph.p_filesz)
			return vaddr - ph.p_vaddr + ph.p_offset;
	return (uint64_t)-1;
}

static int sym_id(const char *name)
{
	for (int k = 0; name && k < SYM_N; k++)
		if (strcmp(name, sym_names[k]) == 0)
			return k;
	return -1;
}

static void elf__scan(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct sym_obj *o)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	GElf_Sym s;
	int k;

	for (size_t i = 0; d && i < n; i++) {
		if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value ||
		    GELF_ST_TYPE(s.st_info) != STT_FUNC)
			continue;
		k = sym_id(elf_strptr(e, sh->sh_link, s.st_name));
		if (k < 0 || o->value[k])
			continue;
		o->value[k] = s.st_value;
		o->entry[k] = sh->sh_offset + i * sh->sh_entsize;
	}
}

/* Fill O's values from the .dynsym of E. */
static void elf__dynsym(Elf *e, struct sym_obj *o)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM)
			elf__scan(e, scn, &sh, o);
}

/* ---- an object's symbols in the process ---- */

/* Is the .dynsym entry of symbol K, in the process, the one in file FD? */
static bool obj__same(const struct inject *in, const struct sym_obj *o, int k, int fd)
{
	uintptr_t at = maps__addr(in->pid, o->path, o->entry[k]);
	Elf64_Sym file, mem;

	return at && pread(fd, &file, sizeof(file), (off_t)o->entry[k]) == sizeof(file) &&
	       inj_mem__read(in, at, &mem, sizeof(mem)) == 0 &&
	       memcmp(&file, &mem, sizeof(file)) == 0;
}

/* Place the symbols of O found in E, checking the first against the process. */
static int obj__place(struct inject *in, struct sym_obj *o, Elf *e, int fd)
{
	bool checked = false;

	for (int k = 0; k < SYM_N; k++) {
		uint64_t off = o->value[k] ? elf__offset(e, o->value[k]) : (uint64_t)-1;

		if (off == (uint64_t)-1)
			continue;
		if (!checked && !obj__same(in, o, k, fd))
			return inj__fail(in, "%s in process %d is not the file on disk (was it "
					 "replaced since the process started?)", o->path, in->pid);
		checked = true;
		o->addr[k] = maps__addr(in->pid, o->path, off);
	}
	return 0;
}

static int obj__read(struct inject *in, struct sym_obj *o)
{
	size_t len = strlen(o->path), dlen = strlen(SYM_DELETED);
	char file[PATH_MAX + 64];
	GElf_Ehdr eh;
	int fd, r;
	Elf *e;

	if (len > dlen && strcmp(o->path + len - dlen, SYM_DELETED) == 0)
		len -= dlen;
	snprintf(file, sizeof(file), "/proc/%d/root%.*s", in->pid, (int)len, o->path);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return inj__fail(in, "cannot open %.*s of process %d: %s", (int)len, o->path,
				 in->pid, strerror(errno));
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && gelf_getehdr(e, &eh) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_machine == EM_X86_64) {
		elf__dynsym(e, o);
		r = obj__place(in, o, e, fd);
	} else {
		r = inj__fail(in, "%s of process %d is not an x86-64 ELF object", o->path, in->pid);
	}
	elf_end(e);
	close(fd);
	return r;
}

/* Find the object IS names in the maps of the process and read its symbols: 1, 0 when none, -1. */
static int obj__find(struct inject *in, bool (*is)(const char *), struct sym_obj *o)
{
	struct find_arg a = { .is = is, .o = o };
	int r = maps__each(in->pid, find_cb, &a);

	if (r < 0)
		return inj__fail(in, "cannot read the maps of process %d: %s", in->pid,
				 strerror(errno));
	if (a.zero)
		return inj__fail(in, "process %d maps memory at address 0, where the calls return",
				 in->pid);
	return r == 1 && obj__read(in, o) != 0 ? -1 : r;
}

static bool has(const struct sym_obj *o, enum sym_id open, enum sym_id sym)
{
	return o->addr[open] && o->addr[sym];
}

static void use(struct inject *in, const struct sym_obj *o, enum sym_id open, enum sym_id sym)
{
	in->dlopen = o->addr[open];
	in->dlsym = o->addr[sym];
	in->dlerror = open == SYM_DLOPEN ? o->addr[SYM_DLERROR] : 0;
	if (open == SYM_LIBC_DLOPEN)
		in->dlopen_flags |= SYM_RTLD_DLOPEN;
}

int inj_sym__find(struct inject *in)
{
	struct sym_obj libc = { 0 }, libdl = { 0 };
	int r = obj__find(in, is_libc, &libc);

	if (r <= 0)
		return r < 0 ? -1 : inj__fail(in, "cannot find libc in process %d (a statically "
					      "linked program cannot load libraries)", in->pid);
	if (has(&libc, SYM_DLOPEN, SYM_DLSYM)) {
		use(in, &libc, SYM_DLOPEN, SYM_DLSYM);
		return 0;
	}
	r = obj__find(in, is_libdl, &libdl);
	if (r < 0)
		return -1;
	if (has(&libdl, SYM_DLOPEN, SYM_DLSYM))
		use(in, &libdl, SYM_DLOPEN, SYM_DLSYM);
	else if (has(&libc, SYM_LIBC_DLOPEN, SYM_LIBC_DLSYM))
		use(in, &libc, SYM_LIBC_DLOPEN, SYM_LIBC_DLSYM);
	else
		return inj__fail(in, "cannot find dlopen in %s of process %d", libc.path, in->pid);
	return 0;
}
