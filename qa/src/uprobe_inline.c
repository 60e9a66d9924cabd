/*
 * uprobe_inline.c - a workload for .inline and .call probes (qa/308-313),
 * built -O2 -g so that gcc really inlines.
 *
 *	uprobe_inline [N]	N rounds of: scale_in_a(i) and scale_in_b(i), each
 *				with inl_scale() inlined into it (2 inline
 *				instances, N hits each), and shared_step(i)
 *				called both inlined (in main) and through a
 *				pointer (its out-of-line copy), once each
 *
 * inl_scale() exists only inline; shared_step() is inlined into main and
 * also has an out-of-line copy because its address is taken.
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define INLINE static inline __attribute__((always_inline))

static volatile long sink;

INLINE long inl_scale(long x)
{
	sink += x;
	return x * 5 + sink % 3;
}

NOINLINE long scale_in_a(long i)
{
	return inl_scale(i) + 1;
}

NOINLINE long scale_in_b(long i)
{
	return inl_scale(i * 2) - 1;
}

INLINE long shared_step(long x)
{
	sink ^= x;
	return sink + 7;
}

static long (*volatile step_ptr)(long) = shared_step;

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	long total = 0;

	for (int i = 1; i <= n; i++) {
		total += scale_in_a(i) + scale_in_b(i);
		total += shared_step(i);	/* inlined here */
		total += step_ptr(i);		/* the out-of-line copy */
	}
	printf("rounds %d\n", n);
	return total == 12345678 ? 1 : 0;
}
