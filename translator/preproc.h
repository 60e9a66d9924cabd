/*
 * preproc.h - pass 1b: the preprocessor (preproc.c) between the lexer and
 * the parser: @define macros (with parameters) and
 * %( COND %? ... %: ... %) conditionals.  Macros from tapset *.stpm files
 * are visible to every file; a script's own macros only to that file.
 */
#ifndef PMSTAP_PREPROC_H
#define PMSTAP_PREPROC_H

#include "lex.h"
#include "session.h"

struct pp;

struct pp *preproc_open(struct session *s, const struct source *src);
struct token *preproc_next(struct pp *pp);
void preproc_load_library(struct session *s, const struct source *stpm);
int preproc_systemtap_v_seen(const struct pp *pp);

#endif
