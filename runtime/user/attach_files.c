/*
 * attach_files.c - before any probe goes in, the files a script was
 * compiled from are still the ones on disk and in the processes it probes.
 *
 * A compiled script holds file offsets, DWARF locations and semaphores of
 * the ELF files it probes (stp_meta.files, with each file's identity when
 * it was read: runtime/stp_fileid.h).  A rebuilt or upgraded program has
 * other offsets: a uprobe at an old one lands inside another instruction
 * and the program dies.  So, as stap checks build-ids when it attaches:
 *   1. every file is opened and compared with its recorded identity; a
 *      difference is an error naming the file and both identities, and
 *      nothing is attached;
 *   2. the processes the script is told to probe (-x PID, process(PID))
 *      are looked at too: a process started before its program was replaced
 *      on disk maps the old one (/proc/PID/maps says "(deleted)"), which
 *      may be another build than the script's;
 *   3. uprobes attach through the descriptors opened in 1
 *      (/proc/self/fd/N), so the file attached is the file checked, even if
 *      the path is replaced in between.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "../stp_fileid.h"
#include "../stp_tapset.h"
#include "script_int.h"

/* What meta.files[i] recorded, as a struct stp_fileid. */
static struct stp_fileid recorded(const struct stp_meta_file *f)
{
	return stp_fileid_make(f->build_id, f->size, f->mtime_ns);
}

/* Open meta.files[i] into s->file_fds[i] and compare it with its record. */
static int check_file(struct stp_script *s, int i)
{
	const struct stp_meta_file *f = &s->meta->files[i];
	struct stp_fileid want = recorded(f), have;
	char w[160], h[160];
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		stp_msg(s, "error", "cannot open %s, which the script was compiled from: %s",
			f->path, strerror(errno));
		return -errno;
	}
	s->file_fds[i] = fd;
	if (!stp_fileid_of_fd(fd, &have)) {
		stp_msg(s, "error", "cannot read %s: %s", f->path, strerror(errno));
		return -EIO;
	}
	if (stp_fileid_same(&want, &have))
		return 0;
	stp_msg(s, "error", "%s has changed since the script was compiled: it has %s, the "
		"script was compiled for %s", f->path, stp_fileid_str(&have, h, sizeof(h)),
		stp_fileid_str(&want, w, sizeof(w)));
	stp_msg(s, "note", "it was rebuilt or upgraded meanwhile: run the script again, and "
		"pmstap compiles it anew for the file as it is now");
	return -ESTALE;
}

/* The file a line of /proc/PID/maps names ("(deleted)" cut off), or NULL; *deleted set. */
static const char *maps_path(char *line, bool *deleted)
{
	char *path = strchr(line, '/');
	size_t n;

	if (!path)
		return NULL;
	line[strcspn(line, "\n")] = '\0';
	n = strlen(path);
	*deleted = n > 10 && strcmp(path + n - 10, " (deleted)") == 0;
	if (*deleted)
		path[n - 10] = '\0';
	return path;
}

/*
 * The identity of the file mapped at the range a maps line starts with,
 * through /proc/PID/map_files (root only); false when it cannot be read.
 */
static bool mapped_id(int pid, const char *line, struct stp_fileid *id)
{
	char path[96];
	int fd;
	bool ok;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%.*s", pid, (int)strcspn(line, " "), line);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = stp_fileid_of_fd(fd, id);
	close(fd);
	return ok;
}

/* Process PID's copy of meta.files[i], which a line of its maps names. */
static int check_mapping(struct stp_script *s, int pid, int i, const char *line, bool deleted)
{
	const struct stp_meta_file *f = &s->meta->files[i];
	struct stp_fileid want = recorded(f), have;
	char w[160], h[160];

	if (!mapped_id(pid, line, &have)) {
		if (!deleted)
			return 0;	/* the file on disk, checked already */
		stp_msg(s, "error", "process %d runs a copy of %s that was replaced on disk after "
			"it started, and its build cannot be read: %s", pid, f->path, strerror(errno));
		return -ESTALE;
	}
	if (!stp_fileid_same(&want, &have)) {
		stp_msg(s, "error", "process %d runs a copy of %s that is not the one the script "
			"was compiled for: it has %s, the script was compiled for %s%s", pid, f->path,
			stp_fileid_str(&have, h, sizeof(h)), stp_fileid_str(&want, w, sizeof(w)),
			deleted ? " (the file was replaced after the process started)" : "");
		stp_msg(s, "note", "restart process %d so that it runs the file on disk, then "
			"probe it again", pid);
		return -ESTALE;
	}
	if (deleted)
		stp_msg(s, "warning", "process %d runs a copy of %s that was replaced on disk (the "
			"same build): probes on the new file do not fire in it", pid, f->path);
	return 0;
}

static int file_index(const struct stp_meta *m, const char *path)
{
	for (int i = 0; i < m->nfiles; i++)
		if (strcmp(m->files[i].path, path) == 0)
			return i;
	return -1;
}

/* Every file of the script that process PID maps; a process gone is no error. */
static int check_process(struct stp_script *s, int pid)
{
	char path[64], *line = NULL, *seen;
	size_t size = 0;
	int err = 0;
	FILE *maps;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (!(maps = fopen(path, "r")))
		return 0;
	seen = calloc((size_t)s->meta->nfiles + 1, 1);	/* a file maps several ranges */
	while (seen && !err && getline(&line, &size, maps) > 0) {
		bool deleted;
		const char *file = maps_path(line, &deleted);
		int i = file ? file_index(s->meta, file) : -1;

		if (i >= 0 && !seen[i]) {
			seen[i] = 1;
			err = check_mapping(s, pid, i, line, deleted);
		}
	}
	free(seen);
	free(line);
	fclose(maps);
	return err;
}

/* The processes named by -x and by process(PID) probes. */
static int check_processes(struct stp_script *s)
{
	const struct stp_meta *m = s->meta;
	int err = s->opts.target_pid > 0 ? check_process(s, (int)s->opts.target_pid) : 0;

	for (int i = 0; i < m->nprobes && !err; i++)
		if (m->probes[i].kind == STP_PROBE_UPROBE && m->probes[i].uprobe_pid > 0 &&
		    m->probes[i].uprobe_pid != s->opts.target_pid)
			err = check_process(s, (int)m->probes[i].uprobe_pid);
	return err;
}

int stp_files_check(struct stp_script *s)
{
	const struct stp_meta *m = s->meta;
	int err = 0;

	if (!m->nfiles)
		return 0;
	s->file_fds = malloc((size_t)m->nfiles * sizeof(int));
	if (!s->file_fds)
		return -ENOMEM;
	for (int i = 0; i < m->nfiles; i++)
		s->file_fds[i] = -1;
	for (int i = 0; i < m->nfiles; i++) {
		int rc = check_file(s, i);

		err = err ? err : rc;	/* every file that changed is named */
	}
	if (!err)
		err = check_processes(s);
	if (err) {
		stp_msg(s, "note", "nothing was attached");
		stp_files_close(s);
	}
	return err;
}

void stp_files_close(struct stp_script *s)
{
	for (int i = 0; s->file_fds && i < s->meta->nfiles; i++)
		if (s->file_fds[i] >= 0)
			close(s->file_fds[i]);
	free(s->file_fds);
	s->file_fds = NULL;
}

const char *stp_file_attach_path(const struct stp_script *s, int i, char *buf, size_t size)
{
	if (!s->file_fds || i < 0 || i >= s->meta->nfiles || s->file_fds[i] < 0)
		return NULL;
	snprintf(buf, size, "/proc/self/fd/%d", s->file_fds[i]);
	return buf;
}

/* Where VAR is in the object's section SEC (its DATASEC in BTF), its size in *SIZE; -1: not there. */
static long section_var(const struct btf *btf, const char *sec, const char *var, size_t *size)
{
	int id = btf ? btf__find_by_name_kind(btf, sec, BTF_KIND_DATASEC) : -1;
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;
	const struct btf_var_secinfo *v = t ? btf_var_secinfos(t) : NULL;

	for (int i = 0; t && i < btf_vlen(t); i++, v++) {
		const struct btf_type *vt = btf__type_by_id(btf, v->type);

		if (vt && strcmp(btf__name_by_offset(btf, vt->name_off), var) == 0) {
			*size = v->size;
			return v->offset;
		}
	}
	return -1;
}

/*
 * PATH's inode as a mapping of it holds it, which kernel context sees:
 * on overlayfs the file underneath, on btrfs its filesystem's device,
 * where stat() gives others.  From /proc/self/maps, of a page mapped here.
 */
static bool mapped_inode(const char *path, uint64_t *dev, uint64_t *ino)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *p = fd >= 0 ? mmap(NULL, 1, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	unsigned int major, minor;
	unsigned long long i;
	char want[32], *line = NULL;
	size_t size = 0;
	bool found = false;
	FILE *maps;

	if (fd >= 0)
		close(fd);
	if (p == MAP_FAILED)
		return false;
	snprintf(want, sizeof(want), "%lx-", (unsigned long)(uintptr_t)p);
	maps = fopen("/proc/self/maps", "re");
	while (maps && !found && getline(&line, &size, maps) > 0)
		found = strncmp(line, want, strlen(want)) == 0 &&
			sscanf(line, "%*s %*s %*s %x:%x %llu", &major, &minor, &i) == 3;
	if (maps)
		fclose(maps);
	free(line);
	munmap(p, 1);
	if (found) {
		*dev = stp_kernel_dev(makedev(major, minor));
		*ino = i;
	}
	return found;
}

/*
 * The inode each file whose symbols the script carries (stp_usym_files,
 * translator/emit_usyms.c) has here, written into the object's .data
 * before it loads: kernel context knows a file by it where a process maps
 * the file under another path than the script's, in a container
 * (runtime/bpf/stp_stack.bpf.h: stp__usym_same_file()).  A file not found
 * keeps 0 and is known by its path only.
 */
void stp_usym_identify(struct stp_script *s)
{
	struct btf *btf = bpf_object__btf(s->obj);
	struct bpf_map *data = bpf_object__find_map_by_name(s->obj, ".data");
	struct bpf_map *ro = bpf_object__find_map_by_name(s->obj, ".rodata");
	size_t files_len = 0, names_len = 0, dlen = 0, rlen = 0;
	long files_at = section_var(btf, ".data", "stp_usym_files", &files_len);
	long names_at = section_var(btf, ".rodata", "stp_usym_names", &names_len);
	const char *names;
	const void *init;
	char *copy;

	if (files_at < 0 || names_at < 0 || !data || !ro)
		return;
	init = bpf_map__initial_value(data, &dlen);
	names = bpf_map__initial_value(ro, &rlen);
	if (!init || !names || files_at + files_len > dlen || names_at + names_len > rlen ||
	    !(copy = malloc(dlen)))
		return;
	memcpy(copy, init, dlen);
	names += names_at;
	for (size_t i = 0; i < files_len / sizeof(struct stp_usym_file); i++) {
		struct stp_usym_file f;

		memcpy(&f, copy + files_at + i * sizeof(f), sizeof(f));
		if (f.path < names_len && memchr(names + f.path, '\0', names_len - f.path) &&
		    mapped_inode(names + f.path, &f.dev, &f.ino))
			memcpy(copy + files_at + i * sizeof(f), &f, sizeof(f));
	}
	if (bpf_map__set_initial_value(data, copy, dlen) != 0 && s->opts.verbose)
		stp_msg(s, "note", "cannot note the inodes of the files named in kernel context: %s",
			strerror(errno));
	free(copy);
}
