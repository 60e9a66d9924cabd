/*
 * stp_fileid.h - which version of a file a compiled script was made for.
 *
 * A compiled script holds addresses, DWARF locations, SDT offsets and
 * semaphores read from ELF files: run against another build of such a file,
 * a uprobe lands in the middle of an instruction and the program dies.  So
 * the translator records each file's identity (in the cache key and in
 * stp_meta.files) and the runtime compares it with the file it is about to
 * probe.  The identity is the GNU build-id where the file has one (the
 * linker's hash of its contents: it survives copies, 9p and reinstalls of
 * the same build), else its size and modification time in nanoseconds (no
 * inode number: the qa guest sees the same files over 9p with other
 * numbers).  One copy of the rule, included by the translator, libstaprt
 * and pmdastap.
 */
#ifndef STP_FILEID_H
#define STP_FILEID_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <elfutils/libdwelf.h>
#include <libelf.h>

#define STP_BUILD_ID_MAX 64	/* bytes; SHA-1 ids have 20, the longest linkers make 64 */

struct stp_fileid {
	char build_id[2 * STP_BUILD_ID_MAX + 1];	/* hex; "" when the file has none */
	int64_t size;
	int64_t mtime_ns;
};

/* The GNU build-id of the ELF file open at FD, as hex into OUT ("" when none). */
static inline void stp_build_id_of_fd(int fd, char out[2 * STP_BUILD_ID_MAX + 1])
{
	const unsigned char *id;
	Elf *elf;
	ssize_t n;

	out[0] = '\0';
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return;
	n = elf_kind(elf) == ELF_K_ELF ? dwelf_elf_gnu_build_id(elf, (const void **)&id) : -1;
	for (ssize_t i = 0; i < n && i < STP_BUILD_ID_MAX; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
	elf_end(elf);
}

/* The identity of the file open at FD; false when it cannot be read. */
static inline bool stp_fileid_of_fd(int fd, struct stp_fileid *id)
{
	struct stat st;

	memset(id, 0, sizeof(*id));
	if (fstat(fd, &st) != 0)
		return false;
	id->size = (int64_t)st.st_size;
	id->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (S_ISREG(st.st_mode))
		stp_build_id_of_fd(fd, id->build_id);
	return true;
}

/* The kernel's dev_t (MKDEV(): the major above bit 20) of a device number from stat(). */
static inline uint64_t stp_kernel_dev(dev_t dev)
{
	return ((uint64_t)major(dev) << 20) | minor(dev);
}

/* An identity as stp_meta.files records it (build_id "" or NULL: none). */
static inline struct stp_fileid stp_fileid_make(const char *build_id, int64_t size,
						int64_t mtime_ns)
{
	struct stp_fileid id = { .size = size, .mtime_ns = mtime_ns };

	snprintf(id.build_id, sizeof(id.build_id), "%s", build_id ? build_id : "");
	return id;
}

/* Is HAVE the file WANT describes?  By build-id when WANT has one. */
static inline bool stp_fileid_same(const struct stp_fileid *want, const struct stp_fileid *have)
{
	if (want->build_id[0])
		return strcmp(want->build_id, have->build_id) == 0;
	return !have->build_id[0] && want->size == have->size && want->mtime_ns == have->mtime_ns;
}

/* ID in words, for messages and the cache key: "build-id 1f0e..." or "size N, mtime S.NS". */
static inline const char *stp_fileid_str(const struct stp_fileid *id, char *buf, size_t size)
{
	if (id->build_id[0])
		snprintf(buf, size, "build-id %s", id->build_id);
	else
		snprintf(buf, size, "no build-id, size %lld, mtime %lld.%09lld",
			 (long long)id->size, (long long)(id->mtime_ns / 1000000000),
			 (long long)(id->mtime_ns % 1000000000));
	return buf;
}

#endif
