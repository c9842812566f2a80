/* SPDX-License-Identifier: MIT */
/*
 * bench_timer_rearm - what re-arming a kernel hrtimer costs on this machine, the
 * price epoll:suspend pays twice per epoll_wait that returns events (the NAPI
 * watchdog: armed with gro-flush-timeout when the busy poll stops, then pushed
 * out to irq-suspend-timeout). A timerfd's hrtimer stands in for it, armed the
 * same way in pairs, 20 us then 2 ms: the 20 us one is earlier than what the clock
 * event device was programmed for, so it is reprogrammed (a TSC-deadline write,
 * which a VM may trap); then in pairs of 2 ms, where it never is; beside a syscall
 * that does nothing. The difference of the two pairs is the reprogramming.
 * docs/rate.md reads the figures. Never a test.
 *
 * usage: bench_timer_rearm [-n N] [--cpu C]     (default 200000 each, not pinned)
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

/* now_ns - CLOCK_MONOTONIC in ns. */
static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* settime - arm fd to fire after ns (relative); exits 1 with the reason on failure. */
static void settime(int fd, long ns)
{
	struct itimerspec v = { .it_value = { .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 } };

	if (timerfd_settime(fd, 0, &v, NULL) < 0) {
		fprintf(stderr, "bench_timer_rearm: timerfd_settime: %s\n", strerror(errno));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	long n = 200000, cpu = -1;
	double t0, t1, t2, t3;
	int fd;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu = strtol(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "usage: bench_timer_rearm [-n N] [--cpu C]\n");
			return 2;
		}
	}
	if (n < 1) {
		fprintf(stderr, "bench_timer_rearm: -n must be at least 1\n");
		return 2;
	}
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((int)cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0) {
			fprintf(stderr, "bench_timer_rearm: --cpu %ld: %s\n", cpu, strerror(errno));
			return 2;
		}
	}
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "bench_timer_rearm: timerfd_create: %s\n", strerror(errno));
		return 1;
	}
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	t1 = now_ns();
	/* 20 us then 2 ms, as suspend's gro-flush and irq-suspend arms: each the earliest timer */
	for (long i = 0; i < n; i++) {
		settime(fd, 20000);
		settime(fd, 2000000);
	}
	t2 = now_ns();
	/* 2 ms twice: the same call, but the tick or another timer stays the earliest */
	for (long i = 0; i < n; i++) {
		settime(fd, 2000000);
		settime(fd, 2000000);
	}
	t3 = now_ns();
	close(fd);
	printf("a syscall that does nothing                  %7.0f ns\n", (t1 - t0) / (double)n);
	printf("arm 20 us then 2 ms (as suspend, per wait)   %7.0f ns a pair\n", (t2 - t1) / (double)n);
	printf("arm 2 ms twice (no reprogramming)            %7.0f ns a pair\n", (t3 - t2) / (double)n);
	printf("so reprogramming the clock event costs about %7.0f ns\n", ((t2 - t1) - (t3 - t2)) / (double)n);
	return 0;
}
