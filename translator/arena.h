/* arena.h - the translator's allocator: allocate freely, free once at exit. */
#ifndef PMSTAP_ARENA_H
#define PMSTAP_ARENA_H

#include <stddef.h>
#include <stdarg.h>

/* Zero-filled memory that lives until arena_free_all(); never returns NULL. */
void *arena_alloc(size_t size);
char *arena_strdup(const char *s);
char *arena_strndup(const char *s, size_t n);
char *arena_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *arena_vprintf(const char *fmt, va_list ap);
void arena_free_all(void);

/*
 * Counts arena_free_all() calls.  A static cache that holds arena memory
 * keeps the generation it was filled in and starts over when it changes,
 * so a process that elaborates many scripts (tests, the fuzzer, a
 * daemon) never reads freed memory.
 */
unsigned arena_generation(void);

/*
 * The whole of the file at PATH, NUL-terminated, in the arena; its length
 * in *LEN when LEN is not NULL.  Works for /proc and /sys files, whose
 * size is not known in advance.  NULL with errno set when unreadable.
 */
char *arena_read_file(const char *path, size_t *len);

#define ARENA_NEW(type) ((type *)arena_alloc(sizeof(type)))

#endif
