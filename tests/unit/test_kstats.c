/* SPDX-License-Identifier: MIT */
/*
 * The /proc/net/netstat and /proc/softirqs readers against real copies from the
 * project's VM and crafted edge cases. Values are exact: these counters are what
 * the busy-poll tests assert on, so a reader that guesses would hide a failure.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include <busypoll/kstats.h>
#include <busypoll/loop.h>

#define DATA(f) BP_TEST_DATA "/" f
/* netstat.busypoll was captured from a fresh bed after 2000 busy-polled round trips */
#define BUSYPOLL_RX_IN_SAMPLE 1990

static uint64_t field(const char *file, const char *section, const char *name, int *rc)
{
	uint64_t v = 0xdeadbeef;

	*rc = bp_read_netstat_field(file, section, name, &v);
	return v;
}

static void test_netstat_real(void **state)
{
	int rc;

	/* netstat.real: /proc/net/netstat of the root namespace, Linux 6.18 */
	assert_int_equal(field(DATA("netstat.real"), "TcpExt", "BusyPollRxPackets", &rc), 0);
	assert_int_equal(rc, 0);
	assert_int_equal(field(DATA("netstat.real"), "TcpExt", "TCPTimeouts", &rc), 2);
	assert_int_equal(rc, 0);
	assert_int_equal(field(DATA("netstat.real"), "TcpExt", "DelayedACKs", &rc), 7);
	assert_int_equal(field(DATA("netstat.real"), "TcpExt", "TCPHPHits", &rc), 514036);
	/* first and later sections */
	assert_int_equal(field(DATA("netstat.real"), "TcpExt", "SyncookiesSent", &rc), 0);
	assert_int_equal(rc, 0);
	assert_int_equal(field(DATA("netstat.real"), "IpExt", "InOctets", &rc), 2144688984u);
	assert_int_equal(rc, 0);
	assert_int_equal(field(DATA("netstat.real"), "MPTcpExt", "MPCapableSYNRX", &rc), 0);
	assert_int_equal(rc, 0);
}

static void test_netstat_busypoll(void **state)
{
	int rc;

	/*
	 * netstat.busypoll: /proc/net/netstat of a test bed's server namespace after a
	 * run with SO_BUSY_POLL, so the counter under test is not zero.
	 */
	uint64_t v = field(DATA("netstat.busypoll"), "TcpExt", "BusyPollRxPackets", &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(v, BUSYPOLL_RX_IN_SAMPLE);
}

static void test_netstat_missing(void **state)
{
	int rc;

	field(DATA("netstat.no-field"), "TcpExt", "BusyPollRxPackets", &rc);
	assert_int_equal(rc, -ENOENT);
	assert_non_null(strstr(bp_last_error(), "no field BusyPollRxPackets"));
	/* the other fields of that file still line up after the removed column */
	assert_int_equal(field(DATA("netstat.no-field"), "TcpExt", "TCPHPHits", &rc), 514036);
	assert_int_equal(rc, 0);

	field(DATA("netstat.no-section"), "TcpExt", "BusyPollRxPackets", &rc);
	assert_int_equal(rc, -ENOENT);
	assert_non_null(strstr(bp_last_error(), "no section TcpExt"));
	assert_int_equal(field(DATA("netstat.no-section"), "IpExt", "InOctets", &rc), 2144688984u);
	assert_int_equal(rc, 0);

	field(DATA("does-not-exist"), "TcpExt", "BusyPollRxPackets", &rc);
	assert_int_equal(rc, -ENOENT);
	assert_non_null(strstr(bp_last_error(), "open("));
}

static void test_netstat_truncated(void **state)
{
	int rc;

	/* cut inside the IpExt value line: TcpExt is whole, IpExt must not give a number */
	assert_int_equal(field(DATA("netstat.truncated"), "TcpExt", "TCPTimeouts", &rc), 2);
	assert_int_equal(rc, 0);
	field(DATA("netstat.truncated"), "IpExt", "InOctets", &rc);
	assert_int_equal(rc, -EIO);
	assert_non_null(strstr(bp_last_error(), "IpExt value line is cut off"));
	/*
	 * The whole file but its last '\n': the values still count right, yet the
	 * last one may have lost digits, so no number comes out of that line.
	 */
	field(DATA("netstat.no-final-newline"), "MPTcpExt", "MPCapableSYNRX", &rc);
	assert_int_equal(rc, -EIO);
	assert_non_null(strstr(bp_last_error(), "truncated file"));
	assert_int_equal(field(DATA("netstat.no-final-newline"), "IpExt", "InOctets", &rc),
			 2144688984u);
	assert_int_equal(rc, 0);
	/* sections after the cut are simply absent */
	field(DATA("netstat.truncated"), "MPTcpExt", "MPCapableSYNRX", &rc);
	assert_int_equal(rc, -ENOENT);

	/* a whole value line with fewer values than names */
	field(DATA("netstat.short-values"), "TcpExt", "SyncookiesSent", &rc);
	assert_int_equal(rc, -EIO);
	assert_non_null(strstr(bp_last_error(), "3 names but 2 values"));
}

static void test_netstat_crafted(void **state)
{
	int rc;

	/* exact section and field names only: not TcpExtra, not BusyPollRxPacketsX */
	assert_true(field(DATA("netstat.crafted"), "TcpExt", "BusyPollRxPackets", &rc) == UINT64_MAX);
	assert_int_equal(rc, 0);
	assert_int_equal(field(DATA("netstat.crafted"), "TcpExt", "BusyPollRxPacketsX", &rc), 222);
	assert_int_equal(field(DATA("netstat.crafted"), "TcpExtra", "BusyPollRxPackets", &rc), 111);
	assert_int_equal(field(DATA("netstat.crafted"), "MPTcpExt", "BusyPollRxPackets", &rc), 333);
	assert_int_equal(rc, 0);
	assert_int_equal(field(DATA("netstat.crafted"), "TcpExt", "SyncookiesSent", &rc), 1);
	field(DATA("netstat.crafted"), "TcpExt", "Negative", &rc);
	assert_int_equal(rc, -ERANGE);
	field(DATA("netstat.crafted"), "TcpExt", "Junk", &rc);
	assert_int_equal(rc, -EIO);
	field(DATA("netstat.crafted"), "Lonely", "NoValues", &rc);
	assert_int_equal(rc, -EIO);
	assert_non_null(strstr(bp_last_error(), "missing"));
	field(DATA("netstat.crafted"), "Nope", "BusyPollRxPackets", &rc);
	assert_int_equal(rc, -ENOENT);
}

static uint64_t softirq(const char *file, const char *row, int *rc)
{
	uint64_t v = 0xdeadbeef;

	*rc = bp_read_softirq(file, row, &v);
	return v;
}

static void test_softirqs(void **state)
{
	int rc;

	/* softirqs.real: 2 CPUs */
	assert_int_equal(softirq(DATA("softirqs.real"), "NET_RX", &rc), 686873 + 685855);
	assert_int_equal(rc, 0);
	assert_int_equal(softirq(DATA("softirqs.real"), "TIMER", &rc), 8758 + 8973);
	/* "TIMER" must not match "HRTIMER" */
	assert_int_equal(softirq(DATA("softirqs.real"), "HRTIMER", &rc), 3425 + 2700);
	assert_int_equal(softirq(DATA("softirqs.real"), "HI", &rc), 0);
	assert_int_equal(rc, 0);

	assert_int_equal(softirq(DATA("softirqs.1cpu"), "NET_RX", &rc), 4242424);
	assert_int_equal(rc, 0);
	/* sums past 32 bits */
	assert_true(softirq(DATA("softirqs.4cpu"), "NET_RX", &rc) == 4294967295ull + 4294967296ull + 17);
	assert_int_equal(rc, 0);
	assert_int_equal(softirq(DATA("softirqs.4cpu"), "TIMER", &rc), 100);

	softirq(DATA("softirqs.no-netrx"), "NET_RX", &rc);
	assert_int_equal(rc, -ENOENT);
	softirq(DATA("softirqs.short-row"), "NET_RX", &rc);
	assert_int_equal(rc, -EIO);
	assert_non_null(strstr(bp_last_error(), "1 values for 2 CPUs"));
	softirq(DATA("softirqs.truncated"), "NET_RX", &rc);
	assert_int_equal(rc, -EIO);
	assert_non_null(strstr(bp_last_error(), "(truncated file)"));
	/* rows before the cut are fine */
	assert_int_equal(softirq(DATA("softirqs.truncated"), "TIMER", &rc), 8758 + 8973);
	assert_int_equal(rc, 0);
	/* a netstat file is not a softirqs file */
	softirq(DATA("netstat.real"), "NET_RX", &rc);
	assert_int_equal(rc, -EIO);
}

/*
 * Live: each counter moves by what this test did, not merely "did not go down"
 * (which cannot fail). N datagrams to ourselves over loopback each run the
 * receive softirq once (loopback_xmit -> netif_rx, processed before the send
 * returns), so NET_RX rises by at least N; burnt CPU shows as user time; sleeps
 * as voluntary context switches. BusyPollRxPackets cannot move on loopback (no
 * NAPI): it must be exactly what /proc/thread-self/net/netstat said just before
 * and after (the veth tests see it rise).
 */
#define LIVE_DATAGRAMS 200

static uint64_t netstat_bprx(void)
{
	uint64_t v = 0;

	assert_int_equal(bp_read_netstat_field("/proc/thread-self/net/netstat", "TcpExt", "BusyPollRxPackets", &v), 0);
	return v;
}

static void test_kstats_live(void **state)
{
	struct bp_kstats a, b, d;
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(addr);
	int rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	volatile uint64_t x = 0;
	uint64_t bprx0, bprx1;
	char c;

	assert_true(rx >= 0 && tx >= 0);
	assert_int_equal(bind(rx, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(getsockname(rx, (struct sockaddr *)&addr, &al), 0);
	bprx0 = netstat_bprx();
	assert_int_equal(bp_kstats_read(&a), 0);
	for (int i = 0; i < LIVE_DATAGRAMS; i++) {
		assert_int_equal(sendto(tx, "k", 1, 0, (struct sockaddr *)&addr, sizeof(addr)), 1);
		assert_int_equal(recv(rx, &c, 1, 0), 1);
	}
	for (int i = 0; i < 20000000; i++) /* burn some user time */
		x += (uint64_t)i;
	for (int i = 0; i < 3; i++)
		usleep(2000); /* and voluntary context switches */
	assert_int_equal(bp_kstats_read(&b), 0);
	bprx1 = netstat_bprx();
	close(rx);
	close(tx);
	bp_kstats_delta(&b, &a, &d);
	if (d.net_rx < LIVE_DATAGRAMS)
		fail_msg("NET_RX rose by %llu over %d loopback datagrams, want at least one softirq each",
			 (unsigned long long)d.net_rx, LIVE_DATAGRAMS);
	assert_true(d.utime_us > 0);
	if (d.nvcsw < 3)
		fail_msg("%llu voluntary context switches over 3 sleeps", (unsigned long long)d.nvcsw);
	assert_true(a.busy_poll_rx >= bprx0 && b.busy_poll_rx <= bprx1 && a.busy_poll_rx <= b.busy_poll_rx);
	assert_int_equal(d.net_rx, b.net_rx - a.net_rx);
	/* delta may overwrite its input */
	bp_kstats_delta(&b, &a, &b);
	assert_memory_equal(&b, &d, sizeof(d));
}

static void test_kstats_delta_exact(void **state)
{
	struct bp_kstats before = { 1, 2, 3, 4, 5, 6 };
	struct bp_kstats after = { 101, 202, 303, 404, 505, 606 };
	struct bp_kstats d;

	bp_kstats_delta(&after, &before, &d);
	assert_int_equal(d.busy_poll_rx, 100);
	assert_int_equal(d.net_rx, 200);
	assert_int_equal(d.utime_us, 300);
	assert_int_equal(d.stime_us, 400);
	assert_int_equal(d.nvcsw, 500);
	assert_int_equal(d.nivcsw, 600);
}

/* bp_thread_cpu_ns: another thread's CPU clock, in ns; it rises while that thread works. */
static void *burn(void *arg)
{
	volatile uint64_t x = 0;
	uint64_t until = bp_now_ns() + 30 * 1000000ull;

	*(int *)arg = gettid();
	while (bp_now_ns() < until)
		x++;
	return NULL;
}

static void test_thread_cpu(void **state)
{
	uint64_t a = 0, b = 0;
	pthread_t t;
	int tid = 0;

	assert_int_equal(bp_thread_cpu_ns(gettid(), &a), 0);
	assert_int_equal(pthread_create(&t, NULL, burn, &tid), 0);
	while (!__atomic_load_n(&tid, __ATOMIC_ACQUIRE))
		usleep(100);
	usleep(10000);
	assert_int_equal(bp_thread_cpu_ns(tid, &b), 0);
	pthread_join(t, NULL);
	assert_true(b > 0);
	/* this thread slept meanwhile; the burner ran: its clock is its own */
	assert_int_equal(bp_thread_cpu_ns(gettid(), &b), 0);
	assert_true(b >= a);
	assert_int_equal(bp_thread_cpu_ns(tid, &b), -ESRCH); /* gone */
	assert_int_equal(bp_thread_cpu_ns(0, &b), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_netstat_real),
		cmocka_unit_test(test_netstat_busypoll),
		cmocka_unit_test(test_netstat_missing),
		cmocka_unit_test(test_netstat_truncated),
		cmocka_unit_test(test_netstat_crafted),
		cmocka_unit_test(test_softirqs),
		cmocka_unit_test(test_kstats_live),
		cmocka_unit_test(test_kstats_delta_exact),
		cmocka_unit_test(test_thread_cpu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
