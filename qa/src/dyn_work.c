/*
 * dyn_work - workloads for the dyninst runtime's tests (qa/370-379):
 *
 *	dyn_work threads T N	T threads call dw_count() N times each, at once
 *				(all T call it once, wait for each other, then
 *				make the other N - 1 calls); prints the sum
 *	dyn_work tree		dw_count() 3 times here, 5 times in a forked
 *				child, then exec "dyn_work threads 1 2"
 *	dyn_work fault N	dw_field() N times with a pointer that does not
 *				point anywhere; prints "survived N" after
 *	dyn_work hang FILE	dw_count() once, write the pid to FILE, then wait
 *				for a signal that never comes
 *	dyn_work serve		print "ready PID", then for each line N read from
 *				stdin call dw_count() N times and print "done N
 *				SUM" (SUM: the values returned), until EOF; a
 *				line "t N" makes the calls in a new thread
 *				(joined before the answer)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct dw_thing {
	long x;
};

long dw_count(long i);
long dw_field(struct dw_thing *t);

static pthread_barrier_t start, all_in;
static long per_thread;

__attribute__((noinline)) long dw_count(long i)
{
	__asm__ __volatile__("" ::: "memory");
	return i + 1;
}

__attribute__((noinline)) long dw_field(struct dw_thing *t)
{
	__asm__ __volatile__("" ::: "memory");
	return t ? 1 : 0;	/* never reads *t: only the probe does */
}

static void *thread_main(void *arg)
{
	long sum = 0;

	pthread_barrier_wait(&start);
	for (long i = 0; i < per_thread; i++) {
		sum += dw_count(i) > 0;
		if (i == 0)	/* every thread is running a probed call now */
			pthread_barrier_wait(&all_in);
	}
	return (void *)sum;
}

static int threads(int t, long n)
{
	pthread_t *tid = calloc((size_t)t, sizeof(*tid));
	long total = 0;

	per_thread = n;
	pthread_barrier_init(&start, NULL, (unsigned)t);
	pthread_barrier_init(&all_in, NULL, (unsigned)t);
	for (int i = 0; i < t; i++)
		pthread_create(&tid[i], NULL, thread_main, NULL);
	for (int i = 0; i < t; i++) {
		void *r;

		pthread_join(tid[i], &r);
		total += (long)r;
	}
	printf("calls %ld\n", total);
	free(tid);
	return 0;
}

static int tree(const char *self)
{
	pid_t pid;

	for (int i = 0; i < 3; i++)
		dw_count(i);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 5; i++)
			dw_count(i);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	execl(self, self, "threads", "1", "2", (char *)NULL);
	perror("exec");
	return 1;
}

static int fault(long n)
{
	long sum = 0;

	for (long i = 0; i < n; i++)
		sum += dw_field((struct dw_thing *)16);
	printf("survived %ld\n", sum);
	return 0;
}

static int hang(const char *file)
{
	FILE *f;

	dw_count(0);
	f = fopen(file, "w");
	if (!f)
		return 1;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	for (;;)
		pause();
}

struct calls {
	long n, sum;
};

static void *make_calls(void *arg)
{
	struct calls *c = arg;

	for (long i = 0; i < c->n; i++)
		c->sum += dw_count(i);
	return NULL;
}

static int serve(void)
{
	char line[64];

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %d\n", (int)getpid());
	while (fgets(line, sizeof(line), stdin)) {
		struct calls c = { atol(line[0] == 't' ? line + 1 : line), 0 };
		pthread_t t;

		if (line[0] == 't' && pthread_create(&t, NULL, make_calls, &c) == 0)
			pthread_join(t, NULL);
		else
			make_calls(&c);
		printf("done %ld %ld\n", c.n, c.sum);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "threads"))
		return threads(atoi(argv[2]), atol(argv[3]));
	if (argc == 2 && !strcmp(argv[1], "tree"))
		return tree(argv[0]);
	if (argc == 3 && !strcmp(argv[1], "fault"))
		return fault(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "hang"))
		return hang(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "serve"))
		return serve();
	fprintf(stderr, "usage: dyn_work threads T N | tree | fault N | hang FILE | serve\n");
	return 2;
}
