/* proc_attach.h - attaching process.begin/end and thread.begin/end probes (proc_attach.c). */
#ifndef STP_PROC_ATTACH_H
#define STP_PROC_ATTACH_H

#include <stdbool.h>

struct stp_meta_probe;
struct stp_prog;
struct stp_script;

/* Whether probe P, whose program's section is SEC, is a process, thread or process.syscall probe. */
bool stp_proc_probe(const struct stp_meta_probe *p, const char *sec);

/* Attach it (probe I of S); 0 or a negative errno. */
int stp_proc_attach(struct stp_script *s, int i, const struct stp_prog *prog);

/*
 * The kernel runtime's side: the module registers the probes, the runner
 * notes each process.syscall probe's executable (and -c's) as for BPF.
 * 0, or a negative errno after saying why.
 */
int stp_proc_note_kmod(struct stp_script *s);

/*
 * process("PATH").library("LIB") probes: a uprobe on LIB fires in every
 * process that maps it, so the runner notes PATH's file at each such
 * probe's index in stp_proc_exes, where its program (prologue: see
 * translator/emit_uprobe.c) checks the task's executable.  Both runtimes;
 * 0, or a negative errno after saying why.
 */
int stp_proc_note_libraries(struct stp_script *s);

/*
 * Run the handlers of process.begin and thread.begin once for each
 * process (thread) that runs already, as stap does at startup: after
 * the begin probes, once kernel handlers run.
 */
void stp_proc_existing(struct stp_script *s);

#endif
