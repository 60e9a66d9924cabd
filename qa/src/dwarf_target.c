/*
 * dwarf_target.c - a workload with known values for target variables read
 * through DWARF (qa/320-339): parameters of several types, a struct with
 * nested pointers, an array, globals, a static local, a known return value
 * and a recursion.  "dwarf_target [N]" runs every function N times (1).
 * qa/src/dwarf.mk builds it -g -O0, -g -O2 and stripped.
 */
#include <stdio.h>
#include <stdlib.h>

struct inner {
	long b;
	int c;
};

struct node {
	int id;
	struct inner *a;
	char name[8];
	struct node *next;
	long x;
};

long dt_global = 4242;
int dt_table[4] = { 10, 20, 30, 40 };
static int dt_calls;

long dt_scalars(int i, long l, unsigned char u, short s, const char *str);
long dt_struct(struct node *p);
int dt_array(int *arr, int n);
long dt_fact(int n);
long dt_foo(struct node *var);
long dt_next(struct node *p);

__attribute__((noinline)) long dt_scalars(int i, long l, unsigned char u, short s, const char *str)
{
	dt_calls++;
	return i + l + u + s + str[0];
}

__attribute__((noinline)) long dt_struct(struct node *p)
{
	return p->a->b + p->x;
}

__attribute__((noinline)) int dt_array(int *arr, int n)
{
	static int seen;
	int doubled = arr[2] * 2;

	seen += n;
	doubled += seen - n;	/* DT_STATEMENT: doubled is 60 here on the first call */
	return doubled;
}

__attribute__((noinline)) long dt_fact(int n)
{
	return n <= 1 ? 1 : n * dt_fact(n - 1);
}

__attribute__((noinline)) long dt_foo(struct node *var)
{
	return var->x;
}

__attribute__((noinline)) long dt_next(struct node *p)
{
	return p->next ? p->next->x : -1;
}

int main(int argc, char **argv)
{
	struct inner in = { 77, 5 };
	struct node n = { 3, &in, "node3", NULL, 600 };
	int arr[5] = { 1, 2, 30, 4, 5 };
	int runs = argc > 1 ? atoi(argv[1]) : 1;
	char word[] = "hello";	/* on the stack: its page is present when probes read it */
	long sum = 0;

	for (int r = 0; r < runs; r++) {
		sum += dt_scalars(-7, 1L << 40, 200, -300, word);
		sum += dt_struct(&n);
		sum += dt_array(arr, 5);
		sum += dt_fact(5);
		sum += dt_foo(&n);
		sum += dt_next(&n);
	}
	if (getenv("DT_VERBOSE"))
		printf("sum %ld calls %d table %d\n", sum, dt_calls, dt_table[1]);
	return 0;
}
