/*
 * kmodule.c - scripts on the kernel runtime (a line "# runtime: kernel").
 *
 * Such a script's child loads it as a kernel module (runtime/user/kmod.c)
 * and, instead of map descriptors, sends the module's device as it opened
 * it, with the module's name (STAP_MSG_MODULE).  The module's data is one
 * segment laid out as stp_meta says (runtime/dyninst/dmap.h), which is
 * mapped here read-only, for good (the module refuses to make such a
 * mapping writable, and stp_kmod_reader checks that it does), and read in
 * place through the same data interface as BPF maps (runtime/user/data.h)
 * as a reader: no lock is taken, a hash map is copied between its
 * sequence counts, and a copy that writers keep changing for longer than
 * STAP_READER_PATIENCE_US is given up and counted (said here), never torn.
 * Holding the device holds the module: it stays loaded while its values
 * are served (an exited script's final values too), and the PMDA removes
 * it when it lets go of them.  A PMDA that dies leaves it unused, and the
 * next pmstap run removes it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "pmdastap.h"
#include "../runtime/dyninst/dmap.h"
#include "../runtime/user/data.h"
#include "../runtime/user/script.h"

#define KMOD_PREFIX "kmod:"		/* the pending item of a module's device */

void stap_kmod_pending(struct stap_script *sc, const char *name, int fd)
{
	char item[96];

	snprintf(item, sizeof(item), KMOD_PREFIX "%.80s", name);
	stap_pending_add(sc, item, fd);
}

/* The module's segment, from the pending items (taken from them); ncpus is its CPUs. */
void stap_kmod_adopt(struct stap_script *sc)
{
	char err[256];

	if (sc->origin != STAP_ORIGIN_HANDOVER)
		sc->ncpus = libbpf_num_possible_cpus() > 0 ? libbpf_num_possible_cpus() : 1;
	for (int i = 0; i < sc->npending; i++) {
		struct stap_mapfd *p = &sc->pending[i];

		if (strncmp(p->name, KMOD_PREFIX, strlen(KMOD_PREFIX)) != 0 || p->fd < 0)
			continue;
		if (sc->kseg) {
			close(p->fd);
		} else if (!(sc->kseg = stp_kmod_reader(p->fd, STAP_READER_PATIENCE_US, err,
							sizeof(err)))) {
			pmNotifyErr(LOG_ERR, "script %s: module %s: %s", sc->name,
				    p->name + strlen(KMOD_PREFIX), err);
			close(p->fd);
		} else {
			sc->kmod_name = strdup(p->name + strlen(KMOD_PREFIX));
			sc->ncpus = stp_dseg__nslots(sc->kseg);
			close(p->fd);	/* the segment keeps its own */
		}
		p->fd = -1;
	}
}

void stap_kmod_data(struct stap_script *sc)
{
	if (sc->kseg && sc->data)
		stp_data__adopt_dseg(sc->data, sc->kseg, stp_dseg__fd(sc->kseg));
}

/* After the data: the mapping goes, and the module once its child is done with it. */
void stap_kmod_release(struct stap_script *sc)
{
	uint64_t retries, busy;

	if (!sc->kseg)
		return;
	stp_dseg__reader_stats(sc->kseg, &retries, &busy);
	if (retries)
		pmNotifyErr(LOG_INFO, "script %s: module %s: %llu reads of its data taken again "
			    "(a probe was changing the map), %llu given up", sc->name, sc->kmod_name,
			    (unsigned long long)retries, (unsigned long long)busy);
	stp_dseg__free(sc->kseg);
	sc->kseg = NULL;
	/* a child that still holds it removes it itself */
	if (!stp_kmod_unload(sc->kmod_name) && errno != EWOULDBLOCK && errno != ENOENT)
		pmNotifyErr(LOG_WARNING, "script %s: cannot remove module %s: %s (the next "
			    "pmstap run removes it)", sc->name, sc->kmod_name, strerror(errno));
	free(sc->kmod_name);
	sc->kmod_name = NULL;
}

/* Reads of the segment (a module's, or a handed-over script's) given up since last said. */
void stap_kmod_check_reads(struct stap_script *sc)
{
	struct stp_dseg *seg = sc->kseg ? sc->kseg : sc->dseg;
	uint64_t retries, busy;

	if (!seg)
		return;
	stp_dseg__reader_stats(seg, &retries, &busy);
	if (busy == sc->reads_busy)
		return;
	pmNotifyErr(LOG_WARNING, "script %s: %llu reads of its data gave up: a writer kept "
		    "changing the map for %d ms (%llu copies taken again in all)", sc->name,
		    (unsigned long long)(busy - sc->reads_busy), STAP_READER_PATIENCE_US / 1000,
		    (unsigned long long)retries);
	sc->reads_busy = busy;
}
