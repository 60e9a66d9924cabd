/*
 * filedeps.h - the files a build is made from, besides the script and the
 * tapsets: ELF files whose addresses, DWARF, SDT notes and types passes 2
 * and 3 compile into the object.  Each is recorded with its identity
 * (runtime/stp_fileid.h) as it was read.  The cache key names them (a
 * rebuilt program means a new build), the cache entry lists them (a lookup
 * checks them again), and stp_meta.files carries them to the runtime,
 * which refuses to probe a file that is no longer the one compiled for.
 */
#ifndef PMSTAP_FILEDEPS_H
#define PMSTAP_FILEDEPS_H

#include "../runtime/stp_fileid.h"

struct filedep {
	const char *path;
	struct stp_fileid id;
};

/* PATH, open at FD, is read for this build (once per path: the first read counts). */
void filedeps_add(const char *path, int fd);

/* The files recorded so far, in the order they were first read. */
int filedeps_count(void);
const struct filedep *filedeps_at(int i);

/* PATH's index among them, or -1. */
int filedeps_index(const char *path);

#endif
