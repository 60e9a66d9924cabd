/*
 * manifest.h - the cache's direct lookup: a run whose inputs are all
 * unchanged since it was last built skips passes 1-4 (ccache's "direct
 * mode" does the same for the preprocessor).
 *
 * The cache key (cache.h) names what passes 1-2 found: the tapsets the
 * script used, the ELF files it read.  Finding them is passes 1-2, 20-40
 * ms of every cached run.  A manifest is named by a hash of what decides
 * those passes before they start (pmstap itself, its arguments, the
 * working directory, the environment it reads, the user, the kernel and
 * this boot of it with its modules and dynamic events) and lists what
 * they read besides, each file by identity: the script, the tapset and
 * runtime trees, the ELF files, the programs found in $PATH.  It also
 * keeps the key they led to and what they printed.  When every entry is
 * unchanged the run takes that key's build, prints what passes 1-2 said
 * then, and goes to pass 5.
 *
 *	$cache/manifest-<hash>	one per way of running a script
 *
 * A search (PATH, library, debuginfo and kernel DWARF directories) lists
 * each file it looked at, those missing too, so that one that comes later
 * is seen.  Anything else passes 1-2 consult that an identity cannot
 * vouch for (a glob, another process's executable, another kernel's
 * snapshot) calls manifest_unsure(), and
 * that run writes no manifest: its script always runs passes 1-2.  So
 * does a script read from stdin, and a run where a file it read had
 * changed in the last second (a change within the file system's clock
 * tick would keep its times: git's "racy" files).
 */
#ifndef PMSTAP_MANIFEST_H
#define PMSTAP_MANIFEST_H

#include "session.h"

/*
 * The build to run, when the manifest for this command line lists only
 * unchanged inputs (what passes 1-2 printed when it was made is printed
 * again); NULL to run passes 1-2.  Call before pass 1, with main's
 * ARGC/ARGV; it starts keeping what passes 1-2 print, for
 * manifest_write().
 */
const char *manifest_lookup(struct session *s, int argc, char **argv);

/* Passes 1-2 consulted something that manifest_write() could not check again. */
void manifest_unsure(const char *why);

/*
 * Passes 1-2 read PATH, or looked for it there (a search's candidate,
 * missing or not): its identity, or its absence, is checked again on lookup.
 */
void manifest_file(const char *path);

/* sys_find_executable(QUERY) gave ANSWER (NULL: none): checked again on lookup. */
void manifest_exe(const char *query, const char *answer);

/* Passes 1-2 are over: stop keeping what they print. */
void manifest_passes_done(void);

/* Record this run's inputs as leading to KEY's build in ROOT, unless unsure. */
void manifest_write(struct session *s, const char *root, const char *key);

#endif
