/*
 * filedeps.c - the files a build is made from (filedeps.h).
 */
#include <string.h>
#include "arena.h"
#include "filedeps.h"
#include "vec.h"

static struct vec deps;		/* struct filedep * */
static unsigned deps_generation;

/* A new arena generation is a new translation: forget the old one's files. */
static void fresh(void)
{
	if (deps_generation != arena_generation()) {
		deps = (struct vec){ 0 };
		deps_generation = arena_generation();
	}
}

void filedeps_add(const char *path, int fd)
{
	struct filedep *d;

	if (!path || fd < 0 || filedeps_index(path) >= 0)
		return;
	d = ARENA_NEW(struct filedep);
	d->path = arena_strdup(path);
	if (!stp_fileid_of_fd(fd, &d->id))
		return;
	vec_push(&deps, d);
}

int filedeps_count(void)
{
	fresh();
	return deps.len;
}

const struct filedep *filedeps_at(int i)
{
	fresh();
	return i >= 0 && i < deps.len ? VEC_AT(&deps, i) : NULL;
}

int filedeps_index(const char *path)
{
	fresh();
	for (int i = 0; path && i < deps.len; i++)
		if (strcmp(((struct filedep *)VEC_AT(&deps, i))->path, path) == 0)
			return i;
	return -1;
}
