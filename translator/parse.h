/* parse.h - pass 1: tokens to a syntax tree. */
#ifndef PMSTAP_PARSE_H
#define PMSTAP_PARSE_H

#include "ast.h"
#include "session.h"

/*
 * Parse SRC (a script or a tapset) into a stapfile.  Syntax errors are
 * reported through diag_error(); the parser then skips to the next
 * top-level declaration and goes on, so one run reports them all.  The
 * result is never NULL; check diag_error_count().
 */
struct stapfile *parse_file(struct session *s, const struct source *src);

#endif
