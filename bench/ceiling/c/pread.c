/*
 * The bare pread loop in C: random aligned preads of BS bytes from FILE, one at a time, for
 * SECONDS, measuring nothing but the count (the clock is read every 256 calls). What a tool's
 * psync figure is compared with: the least any program can spend per I/O on this path.
 * Prints "ops_per_s bytes_per_s", as bench/ceiling's loops do.
 *
 *   pread FILE BS SECONDS [direct]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: pread FILE BS SECONDS [direct]\n");
		return 2;
	}
	int direct = argc > 4 && strcmp(argv[4], "direct") == 0;
	int fd = open(argv[1], O_RDONLY | (direct ? O_DIRECT : 0));
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	size_t bs = strtoull(argv[2], NULL, 10);
	double secs = atof(argv[3]);
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)bs) {
		fprintf(stderr, "%s: smaller than one block\n", argv[1]);
		return 1;
	}
	uint64_t blocks = st.st_size / bs;
	void *buf;
	if (posix_memalign(&buf, 4096, bs))
		return 1;
	memset(buf, 0, bs);
	uint64_t x = 0x9E3779B97F4A7C15ull, ops = 0;
	double start = now(), t = start;
	while (t - start < secs) {
		for (int i = 0; i < 256; i++) {
			/* xorshift64*, then a multiply-shift into [0, blocks): no division */
			x ^= x >> 12;
			x ^= x << 25;
			x ^= x >> 27;
			uint64_t r = x * 0x2545F4914F6CDD1Dull;
			uint64_t b = (uint64_t)(((unsigned __int128)r * blocks) >> 64);
			if (pread(fd, buf, bs, (off_t)(b * bs)) != (ssize_t)bs) {
				perror("pread");
				return 1;
			}
		}
		ops += 256;
		t = now();
	}
	double el = t - start;
	printf("%.1f %.1f\n", ops / el, ops * (double)bs / el);
	return 0;
}
