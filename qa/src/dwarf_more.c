/*
 * dwarf_more.c - a workload for target variables past the basics
 * (qa/330-339): bit fields, a struct the optimizer keeps in two registers
 * (DW_OP_piece), floats, pointers into pages never touched (reads that
 * fault), and functions whose results show a write to their variables.
 * "dwarf_more [N]" runs every function N times (1).  qa/src/dwarf_more.mk
 * builds it -g -O0 and -g -O2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct flags {
	unsigned int ready : 1;
	int level : 5;
	unsigned int mode : 3;
	signed char tag : 4;
	unsigned long big : 40;
	long plain;
};

struct pt {
	int x;
	int y;
};

struct real {
	double d;
	float f;
	int n;
};

struct item {
	long x;
	char *name;
	struct item *next;
};

long dm_global = 7;

long dm_flags(struct flags *f);
long dm_pair(int a, int b);
double dm_real(double d, float f, struct real *r);
long dm_write(struct item *p, long v);
long dm_unmapped(struct item *p, struct item *q);

__attribute__((noinline)) long dm_flags(struct flags *f)
{
	return f->level + f->mode + (long)f->big + f->plain + f->tag;
}

__attribute__((noinline)) long dm_pair(int a, int b)
{
	struct pt q = { a * 2, b + 1 };

	__asm__ volatile("" : : "r"(q.x), "r"(q.y));	/* DM_PAIR: q in two registers */
	return q.x * 3L + q.y;
}

__attribute__((noinline)) double dm_real(double d, float f, struct real *r)
{
	return d + f + r->n;
}

__attribute__((noinline)) long dm_write(struct item *p, long v)
{
	return p->x + v + dm_global;
}

__attribute__((noinline)) long dm_unmapped(struct item *p, struct item *q)
{
	return (long)p + (long)q;
}

int main(int argc, char **argv)
{
	struct flags fl = { 1, -3, 5, -2, 0x123456789aUL, 77 };
	struct real re = { 2.5, 0.5f, 9 };
	struct item it = { 40, "item", NULL };
	struct item far = { 1, NULL, NULL };
	int runs = argc > 1 ? atoi(argv[1]) : 1;
	long sum = 0;
	/* a page mapped but never touched: reads of it fault in a probe */
	char *untouched = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (untouched == MAP_FAILED)
		return 1;
	far.name = untouched + 16;
	for (int r = 0; r < runs; r++) {
		sum += dm_flags(&fl);
		sum += dm_pair(10, 20);
		sum += (long)dm_real(1.5, 0.25f, &re);
		it.x = 40;
		sum += dm_write(&it, 2);
		sum += dm_unmapped(&far, (struct item *)(untouched + 64));
	}
	if (getenv("DM_VERBOSE"))
		printf("write %ld global %ld\n", dm_write(&it, 2), dm_global);
	return sum == 0;
}
