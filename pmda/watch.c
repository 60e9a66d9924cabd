/*
 * watch.c - a script starts again, compiled anew, when a file it probes is
 * rebuilt or upgraded.
 *
 * A script's compiled code holds offsets into the files it probes
 * (stp_meta.files).  Its uprobes stay on the file they were attached to: a
 * program rebuilt or a library upgraded on disk is another file, which
 * they never see and whose offsets are other ones.  So every WATCH_S
 * seconds each running script (and each one whose last compile failed)
 * has its files stat()ed.  A file whose stat changed, and then stayed the
 * same for one more period (a linker or dpkg may still be writing it), is
 * read again (runtime/stp_fileid.h); if it is not the build the script was
 * compiled for, the script starts again and its child compiles it for the
 * file as it is now.  If that compile fails, stap.scripts.error says why,
 * and the next change of the file tries again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmdastap.h"
#include "../runtime/stp_fileid.h"

#define WATCH_S 1.0

/* One file of a script's build, as last seen. */
struct stap_watched {
	struct stat seen;		/* the stat of the build compiled for (or last restarted for) */
	bool have_seen;
	struct stat pending;		/* a new stat, waiting one period to settle */
	bool have_pending;
};

static double watch_at;

void stap_watch_reset(struct stap_script *sc)
{
	free(sc->watched);
	sc->watched = sc->meta && sc->meta->nfiles ?
		      calloc((size_t)sc->meta->nfiles, sizeof(*sc->watched)) : NULL;
}

/* Is PATH (now ST) still the build F recorded?  Its identity into *HAVE. */
static bool still_compiled_for(const struct stp_meta_file *f, struct stp_fileid *have)
{
	struct stp_fileid want = stp_fileid_make(f->build_id, f->size, f->mtime_ns);
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);
	bool read;

	if (fd < 0)
		return true;	/* gone: nothing new to probe */
	read = stp_fileid_of_fd(fd, have);
	close(fd);
	return !read || stp_fileid_same(&want, have);
}

/* File i of SC's build: true when the script must start again for it. */
static bool file_changed(struct stap_script *sc, int i, char *why, size_t size)
{
	const struct stp_meta_file *f = &sc->meta->files[i];
	struct stap_watched *w = &sc->watched[i];
	struct stp_fileid have;
	struct stat st;
	char id[160];

	if (stat(f->path, &st) != 0 || (w->have_seen && stap_same_file(&st, &w->seen))) {
		w->have_pending = false;
		return false;
	}
	if (!w->have_pending || !stap_same_file(&st, &w->pending)) {
		w->pending = st;	/* changed: look again once it settles */
		w->have_pending = true;
		return false;
	}
	w->have_pending = false;
	w->seen = st;		/* not again for this same file */
	w->have_seen = true;
	if (still_compiled_for(f, &have))
		return false;
	snprintf(why, size, "%s changed on disk (now %s): compiling the script again", f->path,
		 stp_fileid_str(&have, id, sizeof(id)));
	return true;
}

/* Look at SC's files; false when it has none to look at. */
static bool watch_script(struct stap_script *sc, bool look)
{
	char why[512];

	if (!sc->meta || !sc->watched || sc->removed ||
	    (sc->status != STAP_STATUS_RUNNING && sc->status != STAP_STATUS_FAILED))
		return false;
	for (int i = 0; look && i < sc->meta->nfiles; i++)
		if (file_changed(sc, i, why, sizeof(why))) {
			stap_script_restart(sc, why);
			break;
		}
	return true;
}

void stap_watch_tick(double now, double *next)
{
	bool look = now >= watch_at, any = false;

	for (int i = 0; i < stap_nscripts; i++)
		any |= watch_script(stap_scripts[i], look);
	if (look)
		watch_at = now + WATCH_S;
	if (any && (*next < 0 || watch_at - now < *next))	/* no wake-ups for nothing */
		*next = watch_at - now;
}
