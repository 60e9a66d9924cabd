// dyn_throw - a C++ workload for the dyninst runtime's tests (qa/374):
// N rounds of dt_thrower(i), which throws for odd i from two frames down
// (dt_inner), and returns i for even i; the caller catches.  Prints the
// sum of the returns and the count of the catches.
//
//	dyn_throw N
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

__attribute__((noinline)) long dt_inner(long i)
{
	if (i & 1)
		throw std::runtime_error("odd");
	return i;
}

__attribute__((noinline)) long dt_thrower(long i)
{
	long r = dt_inner(i);

	__asm__ __volatile__("" ::: "memory");
	return r;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10, sum = 0, caught = 0;

	for (long i = 0; i < n; i++) {
		try {
			sum += dt_thrower(i);
		} catch (const std::exception &) {
			caught++;
		}
	}
	printf("sum %ld caught %ld\n", sum, caught);
	return 0;
}
