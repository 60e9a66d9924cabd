/*
 * uctx_glue.h - how the runner drives user-context handlers.
 *
 * The generated user-context code (script.so) runs through a struct
 * stp_uctx, defined with its helpers in stp_user.h/uctx.c.  The runner
 * creates one per script and calls the handler of a probe with it.
 */
#ifndef STP_UCTX_GLUE_H
#define STP_UCTX_GLUE_H

struct stp_script;

int stp_uctx_create(struct stp_script *s);
void stp_uctx_destroy(struct stp_script *s);
/* Run the handler of user-context probe i. */
void stp_uctx_run(struct stp_script *s, int i);

#endif
