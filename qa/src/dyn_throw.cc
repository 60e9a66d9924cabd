// dyn_throw - a C++ workload for the dyninst runtime's tests (qa/374):
// N rounds of dt_thrower(i), which throws for odd i from two frames down
// (dt_inner), and returns i for even i; the caller catches.  Prints the
// sum of the returns and the count of the catches.
//
//	dyn_throw N
//	dyn_throw serve		print "ready PID", then for each line N read
//				from stdin make N rounds and print "sum ..."
//				as above, until end of file
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <unistd.h>

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

static void rounds(long n)
{
	long sum = 0, caught = 0;

	for (long i = 0; i < n; i++) {
		try {
			sum += dt_thrower(i);
		} catch (const std::exception &) {
			caught++;
		}
	}
	printf("sum %ld caught %ld\n", sum, caught);
}

int main(int argc, char **argv)
{
	char line[64];

	if (argc > 1 && strcmp(argv[1], "serve") == 0) {
		setvbuf(stdout, NULL, _IOLBF, 0);
		printf("ready %d\n", (int)getpid());
		while (fgets(line, sizeof(line), stdin))
			rounds(atol(line));
		return 0;
	}
	rounds(argc > 1 ? atol(argv[1]) : 10);
	return 0;
}
