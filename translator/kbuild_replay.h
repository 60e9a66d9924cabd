#ifndef PMSTAP_KBUILD_REPLAY_H
#define PMSTAP_KBUILD_REPLAY_H

/*
 * A shell script in DIR (script.kbuild.sh) that builds DIR's module as
 * kbuild would, from script.kmod.c with CCFLAGS (the Kbuild file's
 * ccflags-y), by running the commands kbuild ran for a module of the
 * same names against HEADERS with MAKE and CC: recorded the first time
 * (one kbuild run), kept in the cache.  NULL where it cannot be had (the
 * recording failed, a path that needs quoting, PMSTAP_KBUILD_MAKE set):
 * then kbuild itself builds the module.
 */
const char *kbuild_replay_script(const char *headers, const char *make, const char *cc,
				 const char *dir, const char *ccflags);

#endif
