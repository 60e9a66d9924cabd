/*
 * cache.h - where compiled scripts are kept: one directory per hash of
 * everything that went into them, so a second run skips passes 3 and 4.
 *
 *	$PMSTAP_CACHE, else $HOME/.cache/pmstap
 *	    <key>/			a complete build: script.bpf.c script.c
 *					script.bpf.o script.so (vmlinux.h links to ../),
 *					files (the ELF files it was made from)
 *	    vmlinux-<release>.h		the kernel's types, made once per release
 *	    bpf-<release>-<hash>.pch	vmlinux.h and libbpf's headers precompiled
 *	    tapset-<hash>.o		the tapset services for a set of limits
 *					(both: see compile_int.h; a week unused, they go)
 *	    kdwarf-<build-id>.idx	a kernel's (a module's) function names and the
 *					DWARF units defining them (kdwarf_index.h)
 *	    manifest-<hash>		a command line's inputs and the key they led to,
 *					for a run that skips passes 1-4 (manifest.h; a
 *					week after it was written it goes)
 *	    tmp-<key>-XXXXXX/		a build in progress, or one that failed
 *
 * A build is made in a tmp- directory and renamed into place when it is
 * complete, so a directory named by a key is always whole, and two pmstaps
 * building the same script at once both end up with the same entry.
 */
#ifndef PMSTAP_CACHE_H
#define PMSTAP_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include "session.h"

struct program;

/* SHA-256, for the key. */
struct cache_sha256 {
	uint32_t h[8];
	uint64_t bytes;
	unsigned char buf[64];
	size_t fill;
	bool portable;		/* never the CPU's SHA instructions (tests) */
	const char *trace;	/* PMSTAP_DEBUG_KEY: each tagged item is printed after this */
};

void cache_sha256_init(struct cache_sha256 *c);
void cache_sha256_update(struct cache_sha256 *c, const void *data, size_t n);
void cache_sha256_final(struct cache_sha256 *c, unsigned char digest[32]);
/* An item of a key: TAG, LEN and DATA, so that items never run together. */
void cache_sha256_tagged(struct cache_sha256 *c, const char *tag, const void *data, size_t len);
/* The digest as 64 hex digits. */
const char *cache_sha256_hex(struct cache_sha256 *c);

/*
 * The cache directory, created (mode 0700) if need be, and checked to be
 * the user's own and writable by nobody else; NULL after an error.
 */
const char *cache_root(struct session *s);

/* The cache directory as cache_root() gives it, but NULL without a word if it would fail. */
const char *cache_root_quiet(void);

/*
 * NAME's path in the cache directory, for a piece kept across builds
 * (kdwarf_index.h); NULL, saying nothing, where cache_root() would fail.
 */
const char *cache_piece_path(const char *name);

/*
 * 64 hex digits naming the build of PROG: a hash of pmstap itself, the
 * script's text and arguments, the tapsets it used, the library macros,
 * the runtime, the options that change the code, the kernel (release,
 * build and build-id), the ELF files pass 2 read (each by build-id, else
 * size and time: filedeps.h) and the compilers.
 */
const char *cache_key(struct session *s, const struct program *prog);

/* "PATH SIZE MTIME INODE": a file told apart from a rebuilt one; "none" if missing. */
const char *cache_file_id(const char *path);

/*
 * KEY's complete build in ROOT, marked as just used; NULL when there is
 * none.  A build made from another version of a file it depends on than
 * the one on disk now is removed, and *STALE names the file.
 */
const char *cache_lookup(const char *root, const char *key, const char **stale);

/* A new empty directory in ROOT to build KEY in; NULL after an error. */
const char *cache_begin(const char *root, const char *key);

/*
 * Rename the finished BUILD into place as KEY's entry and return the
 * entry's path.  If another run got there first, BUILD goes and its
 * entry is returned.  Then old entries go while the cache is over its
 * size limit ($PMSTAP_CACHE_MB, 256 by default), least recently used first.
 */
const char *cache_publish(const char *root, const char *build, const char *key);

/* Remove DIR and everything in it (a build no one wants). */
void cache_remove(const char *dir);

#endif
