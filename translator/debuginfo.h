/*
 * debuginfo.h - separate debuginfo of an ELF file: the .debug file that
 * holds the DWARF of a stripped program or library.
 */
#ifndef PMSTAP_DEBUGINFO_H
#define PMSTAP_DEBUGINFO_H

#include <libelf.h>
#include <stdbool.h>

/*
 * The separate debug file of ELF (opened from PATH), found as gdb and
 * libdwfl find it: by build-id under /usr/lib/debug/.build-id/, then by
 * the .gnu_debuglink name beside PATH, in .debug/ beside it, and under
 * /usr/lib/debug/ + PATH's directory.  NULL when there is none.
 */
const char *debuginfo_find(Elf *elf, const char *path);

/* The file whose separate debug file is DEBUG_PATH (as found above), or NULL. */
const char *debuginfo_main_file(const char *debug_path);

/* Whether DEBUGINFOD_URLS names servers that debuginfo_find() asks. */
bool debuginfo_servers_named(void);

#endif
