/*
 * tapset_path.h - the files of the tapset path (tapset_path.c): which
 * *.stp files a tapset directory holds, and pass 1's parse of the -I
 * directories' files.
 */
#ifndef PMSTAP_TAPSET_PATH_H
#define PMSTAP_TAPSET_PATH_H

#include "ast.h"
#include "hmap.h"
#include "session.h"
#include "vec.h"

/*
 * Append to PATHS (char *) every *.stp under DIR: in name order, files
 * before subdirectories, other architectures' subdirectories skipped.
 * With SEEN, a file already in it (by device and inode: the same file
 * through another directory of the path) is left out, and the others are
 * added to it.
 */
void tapset_path_files(const struct session *s, const char *dir, struct vec *paths,
		       struct hmap *seen);

/*
 * The file of the tapset path (a *.stp under one of its directories, or a
 * *.stpm in one) that PATH is, by device and inode; NULL when none.  stap
 * refuses to run a tapset file as the script.
 */
const char *tapset_path_holding(const struct session *s, const char *path);

/* PATH relative to the working directory when it is under it (shorter messages). */
const char *tapset_path_display(const char *path);

/*
 * Pass 1: parse every file of the -I directories, as stap parses its
 * tapset path before the script.  A file with errors shows them, then a
 * warning that it "has errors, and will be skipped" (an error under -W);
 * the run goes on without it.  The results are in s->include_parsed,
 * for pass 2's library.  Returns how many files parsed cleanly.
 */
int tapset_path_parse_includes(struct session *s);

/* A file tapset_path_parse_includes() parsed: its tree, NULL if it was skipped. */
struct stapfile *tapset_path_parsed(const struct session *s, const char *path, bool *known);

#endif
