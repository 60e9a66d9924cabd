/*
 * test_hmap.c - translator/hmap.c: string and pointer keys through many
 * growths (each key moved by the hash its slot keeps), a key put twice,
 * pointer keys to equal strings, and a reserved map that never grows
 * while its reserved keys go in.
 */
#include <stdio.h>
#include <string.h>
#include "unit.h"
#include "../../translator/arena.h"
#include "../../translator/hmap.h"

#define NKEYS 20000

static const char *key_at(int i)
{
	return arena_printf("sym_%d", i);
}

/* Every key put is found with its value after the map grew many times, and only those. */
static void test_string_keys(void)
{
	struct hmap m = { .str_keys = true };
	int wrong = 0;

	for (int i = 0; i < NKEYS; i++)
		hmap_put(&m, key_at(i), (void *)(long)(i + 1));
	CU_ASSERT_EQUAL(m.len, NKEYS);
	for (int i = 0; i < NKEYS; i++)	/* looked up by another copy of the string */
		wrong += hmap_get(&m, key_at(i)) != (void *)(long)(i + 1);
	CU_ASSERT_EQUAL(wrong, 0);
	CU_ASSERT_PTR_NULL(hmap_get(&m, "sym_-1"));
	CU_ASSERT_PTR_NULL(hmap_get(&m, key_at(NKEYS)));
}

/* Putting a key again replaces its value and adds no entry. */
static void test_replace(void)
{
	struct hmap m = { .str_keys = true };

	hmap_put(&m, "a", (void *)1);
	hmap_put(&m, arena_strdup("a"), (void *)2);
	CU_ASSERT_EQUAL(m.len, 1);
	CU_ASSERT_PTR_EQUAL(hmap_get(&m, "a"), (void *)2);
}

/* Pointer keys are told apart by address, not by what they point at. */
static void test_pointer_keys(void)
{
	struct hmap m = { 0 };
	static char same[2][4] = { "x", "x" };
	int wrong = 0;

	hmap_put(&m, same[0], (void *)1);
	hmap_put(&m, same[1], (void *)2);
	CU_ASSERT_EQUAL(m.len, 2);
	CU_ASSERT_PTR_EQUAL(hmap_get(&m, same[0]), (void *)1);
	CU_ASSERT_PTR_EQUAL(hmap_get(&m, same[1]), (void *)2);
	for (long i = 1; i <= NKEYS; i++)
		hmap_put(&m, (void *)(i * 16), (void *)i);
	for (long i = 1; i <= NKEYS; i++)
		wrong += hmap_get(&m, (void *)(i * 16)) != (void *)i;
	CU_ASSERT_EQUAL(wrong, 0);
	CU_ASSERT_PTR_EQUAL(hmap_get(&m, same[1]), (void *)2);
}

/* A map reserved for N keys keeps its table while they go in; its keys survive the reserve. */
static void test_reserve(void)
{
	struct hmap m = { .str_keys = true };
	struct hmap_slot *table;
	int wrong = 0;

	hmap_put(&m, "before", (void *)7);
	hmap_reserve(&m, NKEYS + 1);
	table = m.slots;
	CU_ASSERT(m.cap >= 2 * (NKEYS + 1));
	for (int i = 0; i < NKEYS; i++)
		hmap_put(&m, key_at(i), (void *)(long)(i + 1));
	CU_ASSERT_PTR_EQUAL(m.slots, table);
	CU_ASSERT_PTR_EQUAL(hmap_get(&m, "before"), (void *)7);
	for (int i = 0; i < NKEYS; i++)
		wrong += hmap_get(&m, key_at(i)) != (void *)(long)(i + 1);
	CU_ASSERT_EQUAL(wrong, 0);
	hmap_reserve(&m, 10);	/* smaller than it is: nothing changes */
	CU_ASSERT_PTR_EQUAL(m.slots, table);
}

static const struct unit_case hmap_cases[] = {
	{ "string keys through growth", test_string_keys },
	{ "a key put again", test_replace },
	{ "pointer keys", test_pointer_keys },
	{ "reserve", test_reserve },
	{ NULL, NULL },
};

void unit_register(void)
{
	unit_add_suite("hmap", hmap_cases);
}
