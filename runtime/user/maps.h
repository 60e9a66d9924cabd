/*
 * maps.h - a running script's maps, whatever keeps them: BPF maps (the
 * BPF runtime) or the maps of a dyninst runtime's shared segment
 * (runtime/dyninst/dmap.h).
 *
 * libstaprt and pmdastap name a map by a descriptor, as libbpf does.  A
 * segment's map gets a descriptor of its own (a duplicate of the
 * segment's), registered here with the map it stands for, so the
 * operations below act on the segment for those descriptors and make the
 * bpf(2) call for the others, with the same meanings: copies in and out,
 * per-CPU values one after the other, 8-byte aligned (a segment's "CPUs"
 * are its thread slots).  They return 0 or a negative errno (and set
 * errno), as libbpf does.
 */
#ifndef STP_MAPS_H
#define STP_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_object;
struct stp_dseg;
struct stp_dmap;

struct stp_map_info {
	uint32_t type, key_size, value_size, max_entries, flags;
};

int stp_mapfd_lookup(int fd, const void *key, void *val);
int stp_mapfd_update(int fd, const void *key, const void *val, uint64_t flags);
int stp_mapfd_delete(int fd, const void *key);
int stp_mapfd_next_key(int fd, const void *key, void *next);
int stp_mapfd_pop(int fd, void *val);		/* a queue's oldest value */
int stp_mapfd_info(int fd, struct stp_map_info *info);
/* An array's values, LEN bytes, shared with its writers (BPF_F_MMAPABLE, or the segment); NULL on failure. */
void *stp_mapfd_mmap(int fd, size_t len);
void stp_mapfd_munmap(int fd, void *p, size_t len);
/* The segment's map FD stands for, or NULL for a BPF map. */
struct stp_dmap *stp_mapfd_dmap(int fd);

/* A segment's map M, given descriptor DUP_OF's duplicate; the new descriptor or -errno. */
int stp_mapfd_register(struct stp_dmap *m, int dup_of);
/* Forget FD (it is closed by its owner). */
void stp_mapfd_unregister(int fd);

/* A loaded script's maps by name. */
struct stp_maps;
struct stp_maps *stp_maps__bpf(struct bpf_object *obj);
struct stp_maps *stp_maps__dyn(struct stp_dseg *seg);
/* A kept set's maps (keep.c): NAMES and FDS, N of each, owned from now on. */
struct stp_maps *stp_maps__fds(char **names, int *fds, int n);
void stp_maps__free(struct stp_maps *ms);
/* How many maps MS has; map I's descriptor (owned by MS) and its name into *NAME, or -ENOENT. */
int stp_maps__count(const struct stp_maps *ms);
int stp_maps__at(const struct stp_maps *ms, int i, const char **name);
/* NAME's descriptor (owned by MS), and its shape into INFO when not NULL; -ENOENT when none. */
int stp_maps__find(const struct stp_maps *ms, const char *name, struct stp_map_info *info);
/* How many copies a per-CPU value has: possible CPUs, or the segment's thread slots. */
int stp_maps__ncpus(const struct stp_maps *ms);

#endif
