//go:build ignore

// clockshim.c is preloaded (LD_PRELOAD) into redis-server by WithClockShim;
// the go:build line keeps it out of the Go build, which embeds it instead.
// It shifts the wall clock (clock_gettime of CLOCK_REALTIME and
// CLOCK_REALTIME_COARSE, gettimeofday, time) by a signed int64 of
// nanoseconds read, on every call, from the 8-byte file named by
// LOCKTORTURE_CLOCK_FILE, mapped shared. Other clocks, monotonic included,
// are not shifted. No dlsym, no malloc (libfaketime's dlsym recursion
// hangs jemalloc-linked redis-server): CLOCK_REALTIME is read through C11
// timespec_get, which glibc serves from the vDSO without calling any
// function we override; other clocks by raw syscall (~1.4 us each here,
// against ~30 ns; Redis reads CLOCK_REALTIME ~60 times as often).
// Unset variable, missing or short file: offset 0.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define NS 1000000000LL

static const volatile int64_t *offset; // NULL: offset 0

__attribute__((constructor)) static void clockshim_init(void) {
	const char *path = getenv("LOCKTORTURE_CLOCK_FILE");
	struct stat st;
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(int64_t)) {
		void *p = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
		if (p != MAP_FAILED)
			offset = p;
	}
	close(fd);
}

// shift adds the offset to ts, keeping 0 <= tv_nsec < 1e9. C division
// truncates toward zero, so off % NS is in (-1e9, 1e9) and one carry
// either way suffices.
static void shift(struct timespec *ts) {
	int64_t off = offset ? __atomic_load_n(offset, __ATOMIC_RELAXED) : 0;
	int64_t sec = ts->tv_sec + off / NS, nsec = ts->tv_nsec + off % NS;
	if (nsec < 0) {
		nsec += NS;
		sec--;
	} else if (nsec >= NS) {
		nsec -= NS;
		sec++;
	}
	ts->tv_sec = sec;
	ts->tv_nsec = nsec;
}

static int realtime(struct timespec *ts) {
	if (timespec_get(ts, TIME_UTC) == TIME_UTC)
		return 0;
	return syscall(SYS_clock_gettime, CLOCK_REALTIME, ts) ? -1 : 0;
}

int clock_gettime(clockid_t clk, struct timespec *ts) {
	if (clk == CLOCK_REALTIME ? realtime(ts) : syscall(SYS_clock_gettime, clk, ts))
		return -1; // errno set by syscall
	if (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE)
		shift(ts);
	return 0;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
	struct timespec ts;
	if (realtime(&ts) != 0)
		return -1;
	shift(&ts);
	tv->tv_sec = ts.tv_sec; // glibc declares tv nonnull
	tv->tv_usec = ts.tv_nsec / 1000;
	return tz ? (int)syscall(SYS_gettimeofday, NULL, tz) : 0;
}

time_t time(time_t *t) {
	struct timespec ts;
	realtime(&ts); // cannot fail with a valid &ts
	shift(&ts);
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
