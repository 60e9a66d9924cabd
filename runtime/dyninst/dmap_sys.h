/*
 * dmap_sys.h - what dmap*.c take from their surroundings: libc in a
 * process, the kernel's own calls in a module (--runtime=kernel builds
 * dmap.c, dmap_hash.c and dmap_ring.c into each script's module, with
 * runtime/kmod/dmap_sync.c in place of dmap_sync.c).  In a module the
 * allocations happen when it loads (the segment's view) or never (a
 * reader's record copies: modules are never readers).
 */
#ifndef STP_DMAP_SYS_H
#define STP_DMAP_SYS_H

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>

#define calloc(n, size) kcalloc((n), (size), GFP_KERNEL)
#define realloc(p, size) krealloc((p), (size), GFP_ATOMIC)
#define free(p) kfree(p)
#else
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#endif

#endif
