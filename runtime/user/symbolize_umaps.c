/*
 * symbolize_umaps.c - names for the user addresses of processes that are
 * gone: a short command has often exited by the time the runner formats
 * its records, or by the end probe that names the addresses it kept.
 *
 * Each user stack taken in kernel context leaves, in the script's
 * stp_umaps map (runtime/bpf/stp_stack.bpf.h: a BPF map, or the dyninst
 * runtime's in its segment, both read through maps.h), one entry per
 * mapping it passed through: the process, the mapping's bias (an address
 * minus its offset in the file) and the file's build id.  Here an address
 * of such a process becomes a file offset (the entry with the highest
 * bias that puts it inside an executable segment), the build id becomes
 * a file, and the file's symbols name the offset.
 *
 * Files are found by build id among those the script said it probes or
 * runs (stp_sym_umaps_add_file()), those the runner maps itself, those
 * any live process maps (one scan of /proc/PID/maps, at most once a
 * second), and /usr/lib/debug/.build-id.  Each file is opened once,
 * with libdwfl, and kept.
 */
#define _GNU_SOURCE		/* strdup, getline */
#include <dirent.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "maps.h"
#include "symbolize.h"

/*
 * The map is read through maps.h, which knows a dyninst segment's maps;
 * weak, so that the unit tests link this file without it (BPF maps only).
 */
#pragma weak stp_mapfd_next_key
#pragma weak stp_mapfd_lookup

#define BUILD_ID_BYTES 20	/* BPF_BUILD_ID_SIZE */

/* An entry of stp_umaps (struct stp_umap_key and stp_umap of stp_stack.bpf.h). */
struct umap_key {
	uint32_t pid;
	uint32_t pad;
	uint64_t bias;
};

struct umap {
	struct umap_key key;
	unsigned char build_id[BUILD_ID_BYTES];
};

/* A file that may be mapped, opened with libdwfl when first read. */
struct file {
	char *path;
	dev_t dev;
	ino_t ino;
	bool read;		/* build_id and dwfl are set (or could not be) */
	unsigned char build_id[BUILD_ID_BYTES];
	Dwfl *dwfl;
	Dwfl_Module *mod;
};

static int map_fd = -1;
static struct umap *umaps;
static size_t numaps, capumaps;
static struct file *files;
static size_t nfiles, capfiles;
static time_t scanned;		/* the last scan of /proc/PID/maps */

/* Build ids looked for and not found, and when: looked for again a second later. */
struct missing {
	unsigned char id[BUILD_ID_BYTES];
	time_t at;
};

static struct missing *missing;
static size_t nmissing, capmissing;
static char *last_name;

static const Dwfl_Callbacks file_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

void stp_sym_umaps_use(int fd)
{
	map_fd = fd;
	numaps = 0;
}

/* ---- files ---- */

static struct file *file_search(const unsigned char *id);

void stp_sym_umaps_add_file(const char *path)
{
	struct file *v;
	struct stat st;

	if (!path || path[0] != '/' || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	for (size_t i = 0; i < nfiles; i++)
		if (files[i].dev == st.st_dev && files[i].ino == st.st_ino)
			return;
	v = stp_grow(files, nfiles, &capfiles, sizeof(*v), 64);
	if (!v)
		return;
	files = v;
	memset(&files[nfiles], 0, sizeof(files[nfiles]));
	files[nfiles].path = strdup(path);
	files[nfiles].dev = st.st_dev;
	files[nfiles].ino = st.st_ino;
	if (files[nfiles].path)
		nfiles++;
}

/* F's build id and symbols: once. */
static void file_read(struct file *f)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n;

	if (f->read)
		return;
	f->read = true;
	f->dwfl = dwfl_begin(&file_callbacks);
	if (!f->dwfl)
		return;
	dwfl_report_begin(f->dwfl);
	f->mod = dwfl_report_elf(f->dwfl, f->path, f->path, -1, 0, false);
	dwfl_report_end(f->dwfl, NULL, NULL);
	n = f->mod ? dwfl_module_build_id(f->mod, &bits, &vaddr) : 0;
	if (n > 0 && n <= BUILD_ID_BYTES)
		memcpy(f->build_id, bits, (size_t)n);
	else
		f->mod = NULL;
}

static struct file *file_by_id(const unsigned char *id, size_t from)
{
	for (size_t i = from; i < nfiles; i++) {
		file_read(&files[i]);
		if (files[i].mod && memcmp(files[i].build_id, id, BUILD_ID_BYTES) == 0)
			return &files[i];
	}
	return NULL;
}

/* The files of one /proc/PID/maps. */
static void add_maps(const char *maps)
{
	FILE *fp = fopen(maps, "r");
	char *line = NULL, *path;
	size_t cap = 0;

	if (!fp)
		return;
	while (getline(&line, &cap, fp) > 0) {
		path = strchr(line, '/');
		if (!path || !strstr(line, " r-xp ") || !strchr(path, '\n'))
			continue;
		*strchr(path, '\n') = '\0';
		stp_sym_umaps_add_file(path);
	}
	free(line);
	fclose(fp);
}

/* The files of every live process, at most once a second. */
static void scan_procs(void)
{
	struct dirent *de;
	char maps[sizeof("/proc//maps") + sizeof(de->d_name)];
	DIR *d;

	if (time(NULL) == scanned)
		return;
	scanned = time(NULL);
	d = opendir("/proc");
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(maps, sizeof(maps), "/proc/%s/maps", de->d_name);
		add_maps(maps);
	}
	closedir(d);
}

/* ID's entry among the missing, made when MAKE; NULL when there is none. */
static struct missing *missing_of(const unsigned char *id, bool make)
{
	struct missing *m;

	for (size_t i = 0; i < nmissing; i++)
		if (memcmp(missing[i].id, id, BUILD_ID_BYTES) == 0)
			return &missing[i];
	if (!make || !(m = stp_grow(missing, nmissing, &capmissing, sizeof(*m), 16)))
		return NULL;
	missing = m;
	memcpy(missing[nmissing].id, id, BUILD_ID_BYTES);
	return &missing[nmissing++];
}

/*
 * The file with build id ID: known, mapped somewhere, or a debug file.
 * One not found is looked for again a second later, not at every frame
 * that names it (the PMDA names many stacks at once, and a file deleted
 * since is never found).
 */
static struct file *file_find(const unsigned char *id)
{
	struct missing *m;
	struct file *f = file_by_id(id, 0);

	if (f)
		return f;
	m = missing_of(id, false);
	if (m && m->at == time(NULL))
		return NULL;
	f = file_search(id);
	if (!f && (m || (m = missing_of(id, true))))
		m->at = time(NULL);
	return f;
}

/* file_find()'s search: this process's files, every live process's, a debug file. */
static struct file *file_search(const unsigned char *id)
{
	char path[PATH_MAX];
	struct file *f;
	size_t known = nfiles, at;
	int len = 0;

	add_maps("/proc/self/maps");
	scan_procs();
	f = file_by_id(id, known);
	if (f)
		return f;
	len = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (int i = 1; i < BUILD_ID_BYTES && len < (int)sizeof(path) - 8; i++)
		len += snprintf(path + len, sizeof(path) - (size_t)len, "%02x", id[i]);
	snprintf(path + len, sizeof(path) - (size_t)len, ".debug");
	at = nfiles;
	stp_sym_umaps_add_file(path);
	return file_by_id(id, at);
}

/* The address in F's module of file offset OFF, in an executable segment; 0: none. */
static Dwarf_Addr file_addr(struct file *f, uint64_t off)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(f->mod, &bias);
	size_t n;

	if (!elf || elf_getphdrnum(elf, &n) != 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		if (ph && ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && off >= ph->p_offset &&
		    off < ph->p_offset + ph->p_filesz)
			return ph->p_vaddr + (off - ph->p_offset) + bias;
	}
	return 0;
}

/* ---- the map ---- */

static int umap_cmp(const void *a, const void *b)
{
	const struct umap *x = a, *y = b;

	if (x->key.pid != y->key.pid)
		return x->key.pid < y->key.pid ? -1 : 1;
	return x->key.bias > y->key.bias ? -1 : x->key.bias < y->key.bias;	/* highest first */
}

static int umap_next_key(const struct umap_key *key, struct umap_key *next)
{
	return stp_mapfd_next_key ? stp_mapfd_next_key(map_fd, key, next)
				  : bpf_map_get_next_key(map_fd, key, next);
}

static int umap_lookup(const struct umap_key *key, unsigned char *build_id)
{
	return stp_mapfd_lookup ? stp_mapfd_lookup(map_fd, key, build_id)
				: bpf_map_lookup_elem(map_fd, key, build_id);
}

/* A copy of stp_umaps, sorted by process, then bias from the highest. */
static void umaps_load(void)
{
	struct umap_key key, next, *prev = NULL;
	struct umap *v;

	numaps = 0;
	while (map_fd >= 0 && umap_next_key(prev, &next) == 0) {
		key = next;
		prev = &key;
		v = stp_grow(umaps, numaps, &capumaps, sizeof(*v), 256);
		if (!v)
			break;
		umaps = v;
		umaps[numaps].key = key;
		if (umap_lookup(&key, umaps[numaps].build_id) == 0)
			numaps++;
	}
	qsort(umaps, numaps, sizeof(*umaps), umap_cmp);
}

/* The file of U's build id and the address in its module of ADDR; false when none has it. */
static bool umap_place(const struct umap *u, uint64_t addr, struct file **f, Dwarf_Addr *at)
{
	*f = file_find(u->build_id);
	*at = *f ? file_addr(*f, addr - u->key.bias) : 0;
	return *at != 0;
}

static bool umaps_name(const struct umap *u, uint64_t addr, struct stp_sym_info *info)
{
	struct file *f;
	Dwarf_Addr at;
	GElf_Off off = 0;
	GElf_Sym s;
	const char *name = umap_place(u, addr, &f, &at)
		? dwfl_module_addrinfo(f->mod, at, &off, &s, NULL, NULL, NULL) : NULL;

	if (!name)
		return false;
	free(last_name);
	last_name = strdup(name);
	info->name = last_name ? last_name : "";
	info->offset = off;
	info->size = s.st_size;
	info->module = f->path;
	return true;
}

/* umaps_name()'s for a source line: *FILE and *LINE as dwfl_lineinfo() gives them. */
static bool umaps_line(const struct umap *u, uint64_t addr, const char **file, int *line)
{
	struct file *f;
	Dwarf_Addr at;
	Dwfl_Line *l = umap_place(u, addr, &f, &at) ? dwfl_module_getsrc(f->mod, at) : NULL;

	*file = l ? dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL) : NULL;
	return *file != NULL;
}

/* The entries of process PID that may hold ADDR, from the highest bias: the first that FOUND takes. */
static bool umaps_find(int pid, uint64_t addr, bool (*found)(const struct umap *, uint64_t, void *,
							  void *), void *a, void *b)
{
	for (size_t i = 0; i < numaps; i++)
		if (umaps[i].key.pid == (uint32_t)pid && umaps[i].key.bias <= addr &&
		    found(&umaps[i], addr, a, b))
			return true;
	return false;
}

static bool found_name(const struct umap *u, uint64_t addr, void *info, void *unused)
{
	(void)unused;
	return umaps_name(u, addr, info);
}

static bool found_line(const struct umap *u, uint64_t addr, void *file, void *line)
{
	return umaps_line(u, addr, file, line);
}

/* From the copy, else from the map as it is now (stacks taken since). */
bool stp_sym_umaps_lookup(int pid, uint64_t addr, struct stp_sym_info *info)
{
	if (map_fd < 0)
		return false;
	if (umaps_find(pid, addr, found_name, info, NULL))
		return true;
	umaps_load();
	return umaps_find(pid, addr, found_name, info, NULL);
}

bool stp_sym_umaps_line(int pid, uint64_t addr, const char **file, int *line)
{
	if (map_fd < 0)
		return false;
	if (umaps_find(pid, addr, found_line, file, line))
		return true;
	umaps_load();
	return umaps_find(pid, addr, found_line, file, line);
}

void stp_sym_umaps_load(void)
{
	umaps_load();
}

bool stp_sym_umaps_name(int pid, uint64_t addr, struct stp_sym_info *info)
{
	return map_fd >= 0 && umaps_find(pid, addr, found_name, info, NULL);
}

/* Do entries I..END (one process's) place ADDR? */
static bool umaps_place_any(size_t i, size_t end, uint64_t addr)
{
	struct file *f;
	Dwarf_Addr at;

	for (; i < end; i++)
		if (umaps[i].key.bias <= addr && umap_place(&umaps[i], addr, &f, &at))
			return true;
	return false;
}

/*
 * The process whose entries place the most of the N addresses at ADDRS (a
 * user stack whose process is not known: an array key ubacktrace() gave),
 * the first such process on a tie; -1 when none places any.  Only the
 * processes that place the first address (where the task was: a walk
 * without frame pointers may give garbage after it) are counted.
 */
int stp_sym_umaps_pid(const uint64_t *addrs, int n)
{
	int best = -1, most = 0;

	if (map_fd < 0 || n < 1)
		return -1;
	for (size_t i = 0, end; i < numaps; i = end) {
		uint32_t pid = umaps[i].key.pid;
		int placed = 1;

		for (end = i; end < numaps && umaps[end].key.pid == pid; end++)
			;
		if (!umaps_place_any(i, end, addrs[0]))
			continue;
		for (int a = 1; a < n; a++)
			placed += umaps_place_any(i, end, addrs[a]);
		if (placed > most) {
			most = placed;
			best = (int)pid;
		}
	}
	return best;
}
