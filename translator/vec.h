/*
 * vec.h - a growable array of pointers kept in the arena (vec.c): the
 * translator's one list type.  A zeroed struct vec is empty.  Growing
 * copies into a larger arena block; the old one is simply abandoned,
 * which is cheap because nothing is freed before exit.
 */
#ifndef PMSTAP_VEC_H
#define PMSTAP_VEC_H

struct vec {
	void **items;
	int len;
	int cap;
};

void vec_push(struct vec *v, void *item);
#define VEC_AT(v, i) ((v)->items[i])

#endif
