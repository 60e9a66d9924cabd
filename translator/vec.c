/* vec.c - the translator's list type (vec.h). */
#include <string.h>
#include "arena.h"
#include "vec.h"

void vec_push(struct vec *v, void *item)
{
	if (v->len == v->cap) {
		int cap = v->cap ? v->cap * 2 : 8;
		void **items = arena_alloc(sizeof(void *) * (size_t)cap);

		if (v->len)
			memcpy(items, v->items, sizeof(void *) * (size_t)v->len);
		v->items = items;
		v->cap = cap;
	}
	v->items[v->len++] = item;
}
