/*
 * keep.h - a script's loaded programs and maps kept for its next run by a
 * keeper process (keep.c).
 */
#ifndef STP_KEEP_H
#define STP_KEEP_H

struct stp_script;

/* After a load: what a keeper needs that only the load knows (skipped probes, .data). */
void stp_keep_note_load(struct stp_script *s);

/*
 * Before a load: take the set a keeper holds for this build, if one does;
 * 0 (s->progs and s->maps are the set's, s->skipped as its load left it)
 * or -1 (load as usual).
 */
int stp_keep_take(struct stp_script *s);

/* At the end of a run, its probes detached: fork a keeper for the set, when it can be kept. */
void stp_keep_offer(struct stp_script *s);

void stp_keep_free(struct stp_script *s);

#endif
