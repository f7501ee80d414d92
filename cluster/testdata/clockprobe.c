// clockprobe prints what the clock functions return, one "name sec nsec"
// line each, for clock_test.go to run with and without the clock shim.
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

static void show(const char *name, clockid_t clk) {
	struct timespec ts;
	if (clock_gettime(clk, &ts) != 0) {
		perror(name);
		return;
	}
	printf("%s %lld %ld\n", name, (long long)ts.tv_sec, ts.tv_nsec);
}

int main(void) {
	struct timeval tv;
	show("monotonic", CLOCK_MONOTONIC);
	show("realtime", CLOCK_REALTIME);
	show("realtime_coarse", CLOCK_REALTIME_COARSE);
	gettimeofday(&tv, NULL);
	printf("gettimeofday %lld %ld\n", (long long)tv.tv_sec, tv.tv_usec * 1000L);
	time_t t0, t1 = time(&t0);
	printf("time %lld %d\n", (long long)(t0 == t1 ? t1 : -1), 0);
	show("boottime", CLOCK_BOOTTIME);
	return 0;
}
