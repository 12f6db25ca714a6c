/*
 * What one clock read costs on this machine: N back-to-back reads of the TSC (`rdtsc`, the
 * clock iogauge times each I/O with where the kernel trusts it) and of CLOCK_MONOTONIC
 * (clock_gettime through the vDSO, fio's default clock), each loop timed with
 * CLOCK_MONOTONIC. docs/performance.md uses it to say how much of a null I/O is the two reads
 * that bracket it.
 *
 *   cc -O2 -o clock clock.c && ./clock [N]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

static double ns_since(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1e9 + (b.tv_nsec - a->tv_nsec);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000000;
	uint64_t sink = 0;
	struct timespec a, t;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		sink += __rdtsc();
	printf("rdtsc: %.2f ns a read\n", ns_since(&a) / n);

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n / 10; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		sink += (uint64_t)t.tv_nsec;
	}
	printf("clock_gettime(CLOCK_MONOTONIC): %.2f ns a read\n", ns_since(&a) / (n / 10));
	return (int)(sink & 0);
}
