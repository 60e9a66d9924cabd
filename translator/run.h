/* run.h - pass 5: run a compiled script (libstaprt, runtime/user/script.h). */
#ifndef PMSTAP_RUN_H
#define PMSTAP_RUN_H

#include "session.h"

/*
 * Load the compiled script in dir (script.so, script.bpf.o), attach its
 * probes, run it as the session's options say (-o, -c, -x, -T, -G,
 * --suppress-handler-errors) and return pmstap's exit status: 0, or 1
 * after runtime errors or when the script could not start.
 */
int run_program(struct session *s, const char *dir);

#endif
