/*
 * maps.c - a running script's maps by descriptor and by name (maps.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "maps.h"
#include "../dyninst/dmap.h"

/* ---- descriptors of segment maps ---- */

struct reg {
	int fd;
	struct stp_dmap *m;
};

static struct {
	struct reg *v;
	int n, cap;
} regs;

struct stp_dmap *stp_mapfd_dmap(int fd)
{
	for (int i = 0; fd >= 0 && i < regs.n; i++)
		if (regs.v[i].fd == fd)
			return regs.v[i].m;
	return NULL;
}

int stp_mapfd_register(struct stp_dmap *m, int dup_of)
{
	int fd;

	if (regs.n == regs.cap) {
		int cap = regs.cap ? 2 * regs.cap : 32;
		struct reg *v = realloc(regs.v, (size_t)cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		regs.v = v;
		regs.cap = cap;
	}
	fd = fcntl(dup_of, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	regs.v[regs.n++] = (struct reg){ fd, m };
	return fd;
}

void stp_mapfd_unregister(int fd)
{
	for (int i = 0; i < regs.n; i++)
		if (regs.v[i].fd == fd) {
			regs.v[i] = regs.v[--regs.n];
			return;
		}
}

/* ---- operations ---- */

static int result(int r)
{
	if (r < 0)
		errno = -r;
	return r;
}

int stp_mapfd_lookup(int fd, const void *key, void *val)
{
	struct stp_dmap *m = stp_mapfd_dmap(fd);

	return m ? result(stp_dmap__read(m, key, val)) : bpf_map_lookup_elem(fd, key, val);
}

int stp_mapfd_update(int fd, const void *key, const void *val, uint64_t flags)
{
	struct stp_dmap *m = stp_mapfd_dmap(fd);

	if (m && stp_dmap__def(m)->type == STP_DMAP_QUEUE)
		return result(stp_dmap__push(m, val, flags));
	return m ? result(stp_dmap__write(m, key, val, flags)) :
		   bpf_map_update_elem(fd, key, val, flags);
}

int stp_mapfd_delete(int fd, const void *key)
{
	struct stp_dmap *m = stp_mapfd_dmap(fd);

	return m ? result(stp_dmap__delete(m, key)) : bpf_map_delete_elem(fd, key);
}

int stp_mapfd_next_key(int fd, const void *key, void *next)
{
	struct stp_dmap *m = stp_mapfd_dmap(fd);

	return m ? result(stp_dmap__next_key(m, key, next)) : bpf_map_get_next_key(fd, key, next);
}

int stp_mapfd_pop(int fd, void *val)
{
	struct stp_dmap *m = stp_mapfd_dmap(fd);

	return m ? result(stp_dmap__pop(m, val)) : bpf_map_lookup_and_delete_elem(fd, NULL, val);
}

int stp_mapfd_info(int fd, struct stp_map_info *info)
{
	struct stp_dmap *m = stp_mapfd_dmap(fd);
	struct bpf_map_info bi;
	uint32_t len = sizeof(bi);

	if (m) {
		const struct stp_dmap_def *d = stp_dmap__def(m);

		*info = (struct stp_map_info){ d->type, d->key_size, d->value_size, d->max_entries,
					       d->flags };
		return 0;
	}
	memset(&bi, 0, sizeof(bi));
	if (bpf_obj_get_info_by_fd(fd, &bi, &len) < 0)
		return -errno;
	*info = (struct stp_map_info){ bi.type, bi.key_size, bi.value_size, bi.max_entries,
				       bi.map_flags };
	return 0;
}

void *stp_mapfd_mmap(int fd, size_t len)
{
	struct stp_dmap *m = stp_mapfd_dmap(fd);
	void *p;

	if (m)	/* the map's own values: LEN may be a page-rounded size of them */
		return stp_dmap__values(m, NULL);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

void stp_mapfd_munmap(int fd, void *p, size_t len)
{
	if (p && !stp_mapfd_dmap(fd))
		munmap(p, len);
}

/* ---- by name ---- */

struct stp_maps {
	struct bpf_object *obj;
	struct stp_dseg *seg;
	int *fds;		/* the segment's maps, or a kept set's, by index */
	char **names;		/* a kept set's (keep.c) */
	int nmaps;
};

struct stp_maps *stp_maps__bpf(struct bpf_object *obj)
{
	struct stp_maps *ms = calloc(1, sizeof(*ms));

	if (ms)
		ms->obj = obj;
	return ms;
}

struct stp_maps *stp_maps__dyn(struct stp_dseg *seg)
{
	struct stp_maps *ms = calloc(1, sizeof(*ms));
	int n = stp_dseg__nmaps(seg);

	if (!ms || !(ms->fds = calloc((size_t)n + 1, sizeof(int)))) {
		free(ms);
		return NULL;
	}
	ms->seg = seg;
	for (; ms->nmaps < n; ms->nmaps++) {
		ms->fds[ms->nmaps] = stp_mapfd_register(stp_dseg__map_at(seg, ms->nmaps),
						      stp_dseg__fd(seg));
		if (ms->fds[ms->nmaps] < 0) {
			stp_maps__free(ms);
			return NULL;
		}
	}
	return ms;
}

struct stp_maps *stp_maps__fds(char **names, int *fds, int n)
{
	struct stp_maps *ms = calloc(1, sizeof(*ms));

	if (!ms)
		return NULL;
	ms->names = names;
	ms->fds = fds;
	ms->nmaps = n;
	return ms;
}

void stp_maps__free(struct stp_maps *ms)
{
	if (!ms)
		return;
	for (int i = 0; i < ms->nmaps; i++) {
		stp_mapfd_unregister(ms->fds[i]);
		close(ms->fds[i]);
		if (ms->names)
			free(ms->names[i]);
	}
	free(ms->names);
	free(ms->fds);
	free(ms);
}

int stp_maps__count(const struct stp_maps *ms)
{
	struct bpf_map *map;
	int n = 0;

	if (!ms || !ms->obj)
		return ms ? ms->nmaps : 0;
	bpf_object__for_each_map(map, ms->obj)
		n++;
	return n;
}

int stp_maps__at(const struct stp_maps *ms, int i, const char **name)
{
	struct bpf_map *map;
	int n = 0;

	if (ms && ms->obj) {
		bpf_object__for_each_map(map, ms->obj)
			if (n++ == i) {
				*name = bpf_map__name(map);
				return bpf_map__fd(map);
			}
		return -ENOENT;
	}
	if (!ms || i < 0 || i >= ms->nmaps)
		return -ENOENT;
	*name = ms->names ? ms->names[i] : stp_dmap__def(stp_dseg__map_at(ms->seg, i))->name;
	return ms->fds[i];
}

int stp_maps__find(const struct stp_maps *ms, const char *name, struct stp_map_info *info)
{
	struct bpf_map *map;
	int fd = -ENOENT;

	if (!ms || !name)
		return -ENOENT;
	if (ms->names) {
		for (int i = 0; i < ms->nmaps && fd < 0; i++)
			if (strcmp(ms->names[i], name) == 0)
				fd = ms->fds[i];
	} else if (ms->seg) {
		for (int i = 0; i < ms->nmaps && fd < 0; i++)
			if (strcmp(stp_dmap__def(stp_dseg__map_at(ms->seg, i))->name, name) == 0)
				fd = ms->fds[i];
	} else if (ms->obj && (map = bpf_object__find_map_by_name(ms->obj, name))) {
		fd = bpf_map__fd(map);
		if (fd >= 0 && info)
			*info = (struct stp_map_info){ bpf_map__type(map), bpf_map__key_size(map),
						       bpf_map__value_size(map),
						       bpf_map__max_entries(map),
						       bpf_map__map_flags(map) };
		return fd >= 0 ? fd : -ENOENT;
	}
	if (fd >= 0 && info)
		stp_mapfd_info(fd, info);
	return fd;
}

int stp_maps__ncpus(const struct stp_maps *ms)
{
	int n = ms && ms->seg ? stp_dseg__nslots(ms->seg) : libbpf_num_possible_cpus();

	return n > 0 ? n : 1;
}
