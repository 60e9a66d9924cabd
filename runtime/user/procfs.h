/*
 * procfs.h - procfs("NAME").read/.write files: FIFOs served while the
 * script runs (procfs.c says how).
 */
#ifndef STP_PROCFS_H
#define STP_PROCFS_H

#include <stdbool.h>
#include <stddef.h>

struct stp_script;

/* Does the script have procfs probes? */
bool stp_procfs_wanted(const struct stp_script *s);
/*
 * Make the folder and the FIFOs and start serving them; WATCH(s, fd, i)
 * puts file I's request descriptor in the event loop, which then calls
 * stp_procfs_on_request(s, i).  0, or a negative errno after a message.
 */
int stp_procfs_start(struct stp_script *s, int (*watch)(struct stp_script *, int fd, int i));
/* File I's thread asks for its handlers: run them (the event loop's thread). */
void stp_procfs_on_request(struct stp_script *s, int i);
/* Stop serving, let go of waiting readers and writers, remove the files and the folder. */
void stp_procfs_stop(struct stp_script *s);
/*
 * The FIFO of file NAME of MODULE's run by the user running now
 * (/var/tmp/systemtap-USER/MODULE/NAME), for a reader or writer from
 * outside (pmdastap).  0, or a negative errno.
 */
int stp_procfs_path(const char *module, const char *name, char *out, size_t size);

#endif
