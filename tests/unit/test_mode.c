/* SPDX-License-Identifier: MIT */
/*
 * Wait modes: the parser, the canonical text, the table, and bp_mode_check.
 *
 * The check tests compare with what the kernel says independently (uname, the
 * io_uring_disabled sysctl), and exercise the refusals for real: a forked child drops
 * CAP_NET_ADMIN (capset, or setresuid to nobody) and must re-probe and get -EPERM; another
 * child installs a seccomp filter that makes the kernel look older (ENOTTY on EPIOCSPARAMS,
 * EINVAL on IORING_REGISTER_NAPI, ENOSYS/EPERM on io_uring_setup) and must get the
 * matching -EOPNOTSUPP/-EPERM. Children report with their exit status, never with cmocka
 * asserts (those would longjmp into the parent's copy of the runner).
 */
#include <errno.h>
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <busypoll/loop.h>
#include <busypoll/mode.h>

#include "base/compat.h"
#include "bptest.h"

#define CAP_NET_ADMIN_BIT 12

/* ---- helpers ---- */

static struct bp_mode parse_ok(const char *text)
{
	struct bp_mode m;
	char err[256];
	int ret = bp_mode_parse(text, &m, err, sizeof(err));

	if (ret)
		fail_msg("bp_mode_parse(\"%s\") = %d: %s", text, ret, err);
	return m;
}

/* Every value field; keys_set records how a mode was spelled, not what it means. */
static void assert_mode_equal(const struct bp_mode *a, const struct bp_mode *b)
{
	assert_int_equal(a->backend, b->backend);
	assert_int_equal(a->policy, b->policy);
	assert_int_equal(a->busy_usecs, b->busy_usecs);
	assert_int_equal(a->budget, b->budget);
	assert_int_equal(a->prefer, b->prefer);
	assert_int_equal(a->tracking, b->tracking);
	assert_int_equal(a->period_us, b->period_us);
	assert_int_equal(a->sq_idle_ms, b->sq_idle_ms);
	assert_int_equal(a->defer_hard_irqs, b->defer_hard_irqs);
	assert_true(a->gro_flush_ns == b->gro_flush_ns);
	assert_true(a->irq_suspend_ns == b->irq_suspend_ns);
	assert_int_equal(a->setup, b->setup);
	assert_int_equal(a->spin, b->spin);
}

static const char *format(const struct bp_mode *m)
{
	static char buf[256];
	int n = bp_mode_format(m, buf, sizeof(buf));

	assert_int_equal(n, (int)strlen(buf));
	return buf;
}

static int kernel_at_least(int maj, int min)
{
	struct utsname u;
	int a = 0, b = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &a, &b) != 2)
		return 0;
	return a > maj || (a == maj && b >= min);
}

static int read_int_file(const char *path, int dflt)
{
	FILE *f = fopen(path, "re");
	int v = dflt;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

static int have_cap_net_admin(void)
{
	char line[256];
	unsigned long long eff = 0;
	FILE *f = fopen("/proc/self/status", "re");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return (int)((eff >> CAP_NET_ADMIN_BIT) & 1);
}

/* ---- defaults ---- */

static void test_defaults_epoll(void **state)
{
	struct bp_mode m;

	m = parse_ok("epoll:block");
	assert_int_equal(m.backend, BP_BACKEND_EPOLL);
	assert_int_equal(m.policy, BP_POLICY_BLOCK);
	assert_int_equal(m.keys_set, 0);
	assert_false(m.prefer);

	m = parse_ok("epoll:napi");
	assert_int_equal(m.policy, BP_POLICY_NAPI);
	assert_int_equal(m.busy_usecs, 64);
	assert_int_equal(m.budget, 8);
	assert_false(m.prefer); /* prefer only when asked for */
	assert_int_equal(m.keys_set, 0);

	m = parse_ok("epoll:spin");
	assert_int_equal(m.policy, BP_POLICY_SPIN);
	assert_false(m.direct_off); /* direct reads are on by default where they help */
	m = parse_ok("epoll:spin,direct=0");
	assert_true(m.direct_off); /* direct=0 turns them off */
	m = parse_ok("epoll:napi");
	assert_true(m.direct_off); /* napi: off by default, measured not to pay (epoll_modes.c) */
	m = parse_ok("epoll:napi,direct=1");
	assert_false(m.direct_off);

	m = parse_ok("epoll:hybrid");
	assert_int_equal(m.policy, BP_POLICY_HYBRID);
	assert_int_equal(m.period_us, 30); /* about one wake-up on the test bed (docs/rate.md) */
	assert_false(m.direct_off); /* in its poll window hybrid reads directly, as spin does */
	m = parse_ok("epoll:hybrid,direct=0");
	assert_true(m.direct_off);

	m = parse_ok("epoll:suspend");
	assert_int_equal(m.policy, BP_POLICY_SUSPEND);
	/* 0 never waits in the busy-poll loop: no busy polling on a request/response path; 30: one wake-up */
	assert_int_equal(m.busy_usecs, 30);
	assert_int_equal(m.budget, 64);
	assert_true(m.prefer); /* implied */
	assert_int_equal(m.defer_hard_irqs, 100);
	assert_true(m.gro_flush_ns == 20000);
	assert_true(m.irq_suspend_ns == 2000000);
	assert_int_equal(m.keys_set, 0);
}

static void test_defaults_uring(void **state)
{
	struct bp_mode m;

	m = parse_ok("uring:block");
	assert_int_equal(m.backend, BP_BACKEND_URING);
	assert_int_equal(m.policy, BP_POLICY_BLOCK);
	assert_int_equal(m.setup, BP_URING_SETUP_DEFER);

	m = parse_ok("uring:napi");
	assert_int_equal(m.policy, BP_POLICY_NAPI);
	assert_int_equal(m.busy_usecs, 64);
	assert_false(m.prefer);
	assert_int_equal(m.tracking, BP_TRACKING_DYNAMIC);
	assert_int_equal(m.setup, BP_URING_SETUP_DEFER);
	assert_int_equal(m.keys_set, 0);

	m = parse_ok("uring:spin");
	assert_int_equal(m.policy, BP_POLICY_SPIN);
	assert_int_equal(m.setup, BP_URING_SETUP_DEFER); /* no task-work IPI per completion */

	m = parse_ok("uring:hybrid");
	assert_int_equal(m.period_us, 30);
	assert_int_equal(m.setup, BP_URING_SETUP_DEFER);

	m = parse_ok("uring:sqpoll");
	assert_int_equal(m.policy, BP_POLICY_SQPOLL);
	assert_int_equal(m.sq_idle_ms, 1000);
	assert_int_equal(m.busy_usecs, 0);
	assert_int_equal(m.keys_set, 0);
}

/* ---- every key ---- */

/* xsk: queue is optional (canonical only when given); napi takes epoll's keys and prefer. */
static void test_keys_xsk(void **state)
{
	struct bp_mode m;

	m = parse_ok("xsk:napi,usecs=50,budget=16,prefer,queue=3");
	assert_int_equal(m.backend, BP_BACKEND_XSK);
	assert_int_equal(m.policy, BP_POLICY_NAPI);
	assert_int_equal(m.busy_usecs, 50);
	assert_int_equal(m.budget, 16);
	assert_true(m.prefer);
	assert_int_equal(m.queue, 3);
	assert_string_equal(format(&m), "xsk:napi,usecs=50,budget=16,prefer,queue=3");
	m = parse_ok("xsk:spin");
	assert_int_equal(m.queue, 0);
	assert_string_equal(format(&m), "xsk:spin");
	assert_true(bp_mode_is_busy_poll(&m) == false);
	m = parse_ok("xsk:block,queue=1023");
	assert_int_equal(m.queue, 1023);
	m = parse_ok("xsk:napi");
	assert_true(bp_mode_is_busy_poll(&m));
}

static void test_keys_epoll_napi(void **state)
{
	struct bp_mode m;

	m = parse_ok("epoll:napi,usecs=50");
	assert_int_equal(m.busy_usecs, 50);
	assert_int_equal(m.keys_set, BP_KEY_USECS);
	m = parse_ok("epoll:napi,usecs=2147483647");
	assert_int_equal(m.busy_usecs, INT32_MAX);
	m = parse_ok("epoll:napi,usecs=0,prefer");
	assert_int_equal(m.busy_usecs, 0);
	assert_true(m.prefer);
	assert_int_equal(m.keys_set, BP_KEY_USECS | BP_KEY_PREFER);

	m = parse_ok("epoll:napi,budget=1");
	assert_int_equal(m.budget, 1);
	assert_int_equal(m.keys_set, BP_KEY_BUDGET);
	m = parse_ok("epoll:napi,budget=65535");
	assert_int_equal(m.budget, 65535);

	m = parse_ok("epoll:napi,prefer");
	assert_true(m.prefer);
	assert_int_equal(m.keys_set, BP_KEY_PREFER);
	m = parse_ok("epoll:napi,prefer=1");
	assert_true(m.prefer);
	m = parse_ok("epoll:napi,prefer=0");
	assert_false(m.prefer);
	assert_int_equal(m.keys_set, BP_KEY_PREFER);

	/* order does not matter */
	m = parse_ok("epoll:napi,prefer,budget=16,usecs=10");
	assert_int_equal(m.busy_usecs, 10);
	assert_int_equal(m.budget, 16);
	assert_true(m.prefer);
	assert_int_equal(m.keys_set, BP_KEY_USECS | BP_KEY_BUDGET | BP_KEY_PREFER);
}

static void test_keys_uring_napi(void **state)
{
	struct bp_mode m;

	m = parse_ok("uring:napi,usecs=1");
	assert_int_equal(m.busy_usecs, 1);
	m = parse_ok("uring:napi,usecs=10000");
	assert_int_equal(m.busy_usecs, 10000);
	assert_int_equal(m.keys_set, BP_KEY_USECS);
	m = parse_ok("uring:napi,prefer");
	assert_true(m.prefer);
	assert_int_equal(m.keys_set, BP_KEY_PREFER);
	m = parse_ok("uring:napi,tracking=static");
	assert_int_equal(m.tracking, BP_TRACKING_STATIC);
	assert_int_equal(m.keys_set, BP_KEY_TRACKING);
	m = parse_ok("uring:napi,tracking=dynamic");
	assert_int_equal(m.tracking, BP_TRACKING_DYNAMIC);
	m = parse_ok("uring:napi,setup=plain");
	assert_int_equal(m.setup, BP_URING_SETUP_PLAIN);
	assert_int_equal(m.keys_set, BP_KEY_SETUP);
	m = parse_ok("uring:napi,setup=coop");
	assert_int_equal(m.setup, BP_URING_SETUP_COOP);
	m = parse_ok("uring:napi,setup=defer");
	assert_int_equal(m.setup, BP_URING_SETUP_DEFER);
}

static void test_keys_other(void **state)
{
	struct bp_mode m;

	m = parse_ok("uring:block,setup=coop");
	assert_int_equal(m.setup, BP_URING_SETUP_COOP);
	m = parse_ok("uring:spin,setup=plain");
	assert_int_equal(m.setup, BP_URING_SETUP_PLAIN);

	m = parse_ok("epoll:hybrid,period=1");
	assert_int_equal(m.period_us, 1);
	assert_int_equal(m.keys_set, BP_KEY_PERIOD);
	m = parse_ok("uring:hybrid,period=10000000,setup=coop");
	assert_int_equal(m.period_us, 10000000);
	assert_int_equal(m.setup, BP_URING_SETUP_COOP);
	assert_int_equal(m.keys_set, BP_KEY_PERIOD | BP_KEY_SETUP);

	m = parse_ok("epoll:suspend,usecs=5,budget=32,defer=2,gro-flush=50000,suspend=9223372036854775807");
	assert_int_equal(m.busy_usecs, 5);
	assert_int_equal(m.budget, 32);
	assert_int_equal(m.defer_hard_irqs, 2);
	assert_true(m.gro_flush_ns == 50000);
	assert_true(m.irq_suspend_ns == 9223372036854775807ull);
	assert_true(m.prefer);
	assert_int_equal(m.keys_set, BP_KEY_USECS | BP_KEY_BUDGET | BP_KEY_DEFER | BP_KEY_GRO_FLUSH |
					     BP_KEY_SUSPEND);

	m = parse_ok("uring:sqpoll,idle=5");
	assert_int_equal(m.sq_idle_ms, 5);
	assert_int_equal(m.keys_set, BP_KEY_IDLE);
	m = parse_ok("uring:sqpoll,napi=10000,idle=4294967295");
	assert_int_equal(m.busy_usecs, 10000);
	assert_int_equal(m.sq_idle_ms, UINT32_MAX);
	assert_int_equal(m.keys_set, BP_KEY_NAPI | BP_KEY_IDLE);
	assert_false(m.spin);
	m = parse_ok("uring:sqpoll,spin");
	assert_true(m.spin);
	assert_int_equal(m.keys_set, BP_KEY_SPIN);
	m = parse_ok("uring:sqpoll,spin=0,napi=5");
	assert_false(m.spin);
	m = parse_ok("uring:sqpoll,cpu=1023");
	assert_int_equal(m.sq_cpu, 1023);
	assert_int_equal(m.keys_set, BP_KEY_CPU);
}

/* ---- errors ---- */

struct bad_case {
	const char *text;
	const char *want[3]; /* substrings the message must contain */
};

static const struct bad_case bad_cases[] = {
	/* syntax */
	{ "", { "empty mode" } },
	{ "epoll: napi", { "whitespace" } },
	{ "epoll:napi,usecs=1 ", { "whitespace" } },
	{ "epoll:napi,\tprefer", { "whitespace" } },
	{ "foo", { "unknown backend 'foo'", "(backends: epoll, uring, xsk)" } },
	{ "xsk:block,queue=1024", { "queue", "1024" } },
	{ "xsk:spin,direct=1", { "xsk:spin", "read directly always" } },
	{ "xsk:napi,usecs=0", { "usecs" } },
	{ "xsk:suspend", { "xsk" } },
	{ "foo:napi", { "unknown backend 'foo'" } },
	{ ":napi", { "unknown backend ''" } },
	{ "EPOLL:napi", { "unknown backend 'EPOLL'" } },
	{ "epoll", { "epoll: missing policy", "block, napi, spin, hybrid, suspend" } },
	{ "epoll:", { "epoll: missing policy" } },
	{ "epoll:x", { "epoll: unknown policy 'x'", "(policies: block, napi, spin, hybrid, suspend)" } },
	{ "epoll:sqpoll", { "epoll: unknown policy 'sqpoll'" } },
	{ "uring:suspend", { "uring: unknown policy 'suspend'", "(policies: block, napi, spin, hybrid, sqpoll)" } },
	{ "epoll:napi:x", { "unknown policy 'napi:x'" } },
	/* keys */
	{ "epoll:napi,foo", { "epoll:napi: unknown key 'foo'", "(keys: usecs, budget, prefer, direct)" } },
	{ "epoll:napi,foo=1", { "epoll:napi: unknown key 'foo'" } },
	{ "epoll:napi,setup=plain", { "unknown key 'setup'" } },
	{ "epoll:hybrid,usecs=1", { "epoll:hybrid: unknown key 'usecs'", "(keys: period, direct)" } },
	{ "epoll:suspend,direct=1", { "epoll:suspend: unknown key 'direct'" } },
	{ "uring:napi,budget=8", { "uring:napi: unknown key 'budget'", "(keys: usecs, prefer, tracking, setup)" } },
	{ "uring:block,period=5", { "unknown key 'period'", "(keys: setup)" } },
	{ "epoll:suspend,bogus=1", { "(keys: usecs, budget, defer, gro-flush, suspend)" } },
	{ "epoll:suspend,prefer", { "epoll:suspend", "prefer" } },
	{ "uring:sqpoll,setup=plain", { "uring:sqpoll", "setup" } },
	{ "uring:sqpoll,usecs=5", { "unknown key 'usecs'", "(keys: idle, napi, spin, cpu)" } },
	{ "uring:sqpoll,cpu=1024", { "uring:sqpoll: cpu=1024 is out of range (0..1023)" } },
	{ "uring:napi,cpu=1", { "unknown key 'cpu'" } },
	{ "uring:spin,spin", { "uring:spin: unknown key 'spin'", "(keys: setup)" } },
	{ "epoll:spin,spin", { "epoll:spin: unknown key 'spin'", "(keys: direct)" } },
	{ "epoll:spin,direct=2", { "epoll:spin: direct=2 is out of range (0..1)" } },
	{ "epoll:block,direct=0", { "epoll:block takes no keys" } },
	{ "uring:sqpoll,spin=2", { "spin='2' must be 0 or 1" } },
	{ "uring:sqpoll,spin,spin", { "duplicate key 'spin'" } },
	{ "epoll:block,usecs=1", { "epoll:block takes no keys" } },
	{ "epoll:block,", { "epoll:block takes no keys" } },
	{ "epoll:spin,prefer", { "epoll:spin: unknown key 'prefer'" } },
	{ "epoll:napi,usecs=1,usecs=2", { "duplicate key 'usecs'" } },
	{ "epoll:napi,prefer,prefer=0", { "duplicate key 'prefer'" } },
	{ "epoll:napi,", { "empty key" } },
	{ "epoll:napi,,usecs=1", { "empty key" } },
	{ "epoll:napi,=5", { "empty key" } },
	{ "epoll:napi,usecs", { "missing value", "'usecs'" } },
	{ "epoll:napi,usecs=", { "missing value", "'usecs'" } },
	{ "epoll:napi,prefer=", { "missing value", "'prefer'" } },
	{ "uring:napi,tracking=", { "missing value", "'tracking'" } },
	{ "uring:napi,setup", { "missing value", "'setup'" } },
	/* values */
	{ "epoll:napi,usecs=abc", { "epoll:napi: usecs='abc' is not a number" } },
	{ "epoll:napi,usecs=12x", { "usecs='12x' is not a number" } },
	{ "epoll:napi,usecs=0x10", { "usecs='0x10' is not a number" } },
	{ "epoll:napi,usecs=+5", { "usecs='+5' is not a number" } },
	{ "epoll:napi,usecs=1.5", { "usecs='1.5' is not a number" } },
	{ "epoll:napi,usecs=-1", { "usecs=-1 is out of range (0..2147483647)" } },
	{ "epoll:napi,usecs=2147483648", { "usecs=2147483648 is out of range (0..2147483647)" } },
	{ "epoll:napi,usecs=99999999999999999999999", { "usecs=99999999999999999999999 is out of range" } },
	{ "epoll:napi,usecs=18446744073709551616", { "usecs=18446744073709551616 is out of range" } },
	{ "epoll:napi,usecs=0", { "usecs=0", "prefer" } },
	{ "epoll:napi,usecs=0,prefer=0", { "usecs=0", "prefer" } },
	{ "epoll:napi,budget=0", { "budget=0 is out of range (1..65535)" } },
	{ "epoll:napi,budget=65536", { "budget=65536 is out of range (1..65535)" } },
	{ "epoll:napi,prefer=2", { "prefer='2'", "0 or 1" } },
	{ "epoll:napi,prefer=yes", { "prefer='yes'", "0 or 1" } },
	{ "uring:napi,usecs=20000", { "uring:napi: usecs=20000 is out of range (1..10000)" } },
	{ "uring:napi,usecs=10001", { "usecs=10001 is out of range (1..10000)" } },
	{ "uring:napi,usecs=0", { "usecs=0 is out of range (1..10000)" } },
	{ "uring:napi,tracking=foo", { "tracking='foo'", "dynamic, static" } },
	{ "uring:napi,setup=sqpoll", { "setup='sqpoll'", "plain, coop, defer" } },
	{ "epoll:hybrid,period=0", { "period=0 is out of range (1..10000000)" } },
	{ "uring:hybrid,period=10000001", { "period=10000001 is out of range (1..10000000)" } },
	{ "epoll:suspend,defer=0", { "defer=0 is out of range" } },
	{ "epoll:suspend,gro-flush=0", { "gro-flush=0 is out of range" } },
	{ "epoll:suspend,suspend=9223372036854775808", { "suspend=9223372036854775808 is out of range" } },
	{ "epoll:suspend,budget=65536", { "budget=65536 is out of range" } },
	{ "uring:sqpoll,idle=0", { "idle=0 is out of range" } },
	{ "uring:sqpoll,idle=4294967296", { "idle=4294967296 is out of range" } },
	{ "uring:sqpoll,napi=10001", { "napi=10001 is out of range (0..10000)" } },
};

static void test_parse_errors(void **state)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct bp_mode m, before;
		char err[256];
		int ret;

		memset(&m, 0xab, sizeof(m));
		before = m;
		ret = bp_mode_parse(c->text, &m, err, sizeof(err));
		if (ret != -EINVAL)
			fail_msg("\"%s\": got %d (%s), want -EINVAL", c->text, ret, ret ? err : "accepted");
		if (!err[0] || strchr(err, '\n'))
			fail_msg("\"%s\": message must be one non-empty line, got \"%s\"", c->text, err);
		for (size_t k = 0; k < 3 && c->want[k]; k++)
			if (!strstr(err, c->want[k]))
				fail_msg("\"%s\": message \"%s\" lacks \"%s\"", c->text, err, c->want[k]);
		/* a failed parse leaves the caller's mode alone */
		assert_memory_equal(&m, &before, sizeof(m));
		/* and is the thread's last error too */
		assert_string_equal(bp_last_error(), err);
	}
}

static void test_parse_null_and_small_err(void **state)
{
	struct bp_mode m;
	char err[8];

	assert_int_equal(bp_mode_parse(NULL, &m, NULL, 0), -EINVAL);
	assert_int_equal(bp_mode_parse("epoll:napi", NULL, NULL, 0), -EINVAL);
	assert_int_equal(bp_mode_parse("bogus", &m, NULL, 0), -EINVAL);
	/* a short buffer gets a truncated, terminated message */
	assert_int_equal(bp_mode_parse("bogus", &m, err, sizeof(err)), -EINVAL);
	assert_int_equal(strlen(err), sizeof(err) - 1);
	assert_int_equal(bp_mode_parse("epoll:napi", &m, err, 0), 0);
}

/* ---- format, round trip, name ---- */

static void test_format_canonical(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "epoll:block", "epoll:block" },
		{ "epoll:napi", "epoll:napi,usecs=64,budget=8" },
		{ "epoll:napi,prefer", "epoll:napi,usecs=64,budget=8,prefer" },
		{ "epoll:napi,prefer=0", "epoll:napi,usecs=64,budget=8" },
		{ "epoll:napi,budget=128,usecs=50", "epoll:napi,usecs=50,budget=128" },
		{ "epoll:spin", "epoll:spin" },
		{ "epoll:hybrid", "epoll:hybrid,period=30" },
		{ "epoll:suspend", "epoll:suspend,usecs=30,budget=64,defer=100,gro-flush=20000,suspend=2000000" },
		{ "uring:block", "uring:block,setup=defer" },
		{ "uring:napi", "uring:napi,usecs=64,tracking=dynamic,setup=defer" },
		{ "uring:napi,setup=coop,prefer,tracking=static",
		  "uring:napi,usecs=64,prefer,tracking=static,setup=coop" },
		{ "uring:spin", "uring:spin,setup=defer" },
		{ "uring:hybrid,period=7", "uring:hybrid,period=7,setup=defer" },
		{ "uring:sqpoll", "uring:sqpoll,idle=1000,napi=0" },
		{ "uring:sqpoll,napi=50", "uring:sqpoll,idle=1000,napi=50" },
		{ "uring:sqpoll,spin", "uring:sqpoll,idle=1000,napi=0,spin" },
		{ "uring:sqpoll,spin=0", "uring:sqpoll,idle=1000,napi=0" },
		/* cpu has no default: named only when given, then after the other keys */
		{ "uring:sqpoll,cpu=1", "uring:sqpoll,idle=1000,napi=0,cpu=1" },
		{ "uring:sqpoll,cpu=0,spin", "uring:sqpoll,idle=1000,napi=0,spin,cpu=0" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bp_mode m = parse_ok(cases[i].in);

		assert_string_equal(format(&m), cases[i].out);
	}
}

static void test_format_truncation(void **state)
{
	struct bp_mode m = parse_ok("epoll:napi");
	const char *full = "epoll:napi,usecs=64,budget=8";
	char small[12];

	assert_int_equal(bp_mode_format(&m, small, sizeof(small)), (int)strlen(full));
	assert_string_equal(small, "epoll:napi,");
	assert_int_equal(bp_mode_format(&m, NULL, 0), (int)strlen(full));
	m.policy = BP_POLICY_SQPOLL; /* epoll:sqpoll is no family */
	assert_true(bp_mode_format(&m, small, sizeof(small)) < 0);
	assert_string_equal(small, "");
	assert_string_equal(bp_mode_name(&m), "invalid");
	assert_false(bp_mode_is_busy_poll(&m));
}

static void test_round_trip(void **state)
{
	static const char *const modes[] = {
		"epoll:block", "epoll:napi", "epoll:spin", "epoll:hybrid", "epoll:suspend",
		"uring:block", "uring:napi", "uring:spin", "uring:hybrid", "uring:sqpoll",
		"epoll:napi,usecs=0,prefer", "epoll:napi,usecs=2147483647,budget=65535,prefer",
		"epoll:hybrid,period=10000000",
		"epoll:suspend,usecs=10,budget=128,defer=1,gro-flush=1,suspend=9223372036854775807",
		"uring:block,setup=plain", "uring:block,setup=coop",
		"uring:napi,usecs=10000,prefer,tracking=static,setup=plain",
		"uring:napi,usecs=1,setup=coop",
		"uring:spin,setup=defer", "uring:hybrid,period=1,setup=coop",
		"uring:sqpoll,idle=1,napi=10000", "uring:sqpoll,idle=4294967295",
		"uring:sqpoll,napi=50,spin",
	};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct bp_mode a = parse_ok(modes[i]), b;
		char text[256];

		bp_mode_format(&a, text, sizeof(text));
		b = parse_ok(text);
		assert_mode_equal(&a, &b);
		/* canonical text is a fixed point */
		assert_string_equal(format(&b), text);
		/* and spells out every applicable key */
		assert_true((a.keys_set & ~b.keys_set) == 0);
	}
}

static void test_name(void **state)
{
	struct bp_mode m = parse_ok("epoll:napi,usecs=5");

	assert_string_equal(bp_mode_name(&m), "epoll:napi");
	m = parse_ok("uring:sqpoll,napi=5");
	assert_string_equal(bp_mode_name(&m), "uring:sqpoll");
	assert_string_equal(bp_mode_name(NULL), "invalid");
}

static void test_is_busy_poll(void **state)
{
	static const struct {
		const char *mode;
		bool busy;
	} cases[] = {
		{ "epoll:block", false }, { "epoll:napi", true },   { "epoll:spin", false },
		{ "epoll:hybrid", false }, { "epoll:suspend", true }, { "uring:block", false },
		{ "uring:napi", true },   { "uring:spin", false },  { "uring:hybrid", false },
		{ "uring:sqpoll", false }, { "uring:sqpoll,napi=0", false }, { "uring:sqpoll,napi=1", true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bp_mode m = parse_ok(cases[i].mode);

		if (bp_mode_is_busy_poll(&m) != cases[i].busy)
			fail_msg("%s: bp_mode_is_busy_poll != %d", cases[i].mode, cases[i].busy);
	}
	assert_false(bp_mode_is_busy_poll(NULL));
}

/* The table's names parse, and its keys text is exactly the default's canonical keys. */
static void test_table(void **state)
{
	static const char *const order[] = {
		"epoll:block", "epoll:napi", "epoll:spin", "epoll:hybrid", "epoll:suspend",
		"uring:block", "uring:napi", "uring:spin", "uring:hybrid", "uring:sqpoll",
		"xsk:block", "xsk:napi", "xsk:spin",
	};
	size_t n = 0;
	const struct bp_mode_info *t = bp_mode_table(&n);

	assert_non_null(t);
	assert_int_equal(n, sizeof(order) / sizeof(order[0]));
	for (size_t i = 0; i < n; i++) {
		char want[256], keys[128];
		char *br;
		struct bp_mode m;

		assert_string_equal(t[i].name, order[i]);
		assert_non_null(t[i].summary);
		assert_true(strlen(t[i].summary) > 10);
		assert_null(strchr(t[i].summary, '\n'));
		m = parse_ok(t[i].name);
		assert_string_equal(bp_mode_name(&m), t[i].name);
		/* "usecs=64[,prefer],tracking=..." minus the optional flags */
		snprintf(keys, sizeof(keys), "%s", t[i].keys);
		while ((br = strchr(keys, '['))) {
			char *end = strchr(br, ']');

			assert_non_null(end);
			memmove(br, end + 1, strlen(end + 1) + 1);
		}
		snprintf(want, sizeof(want), "%s%s%s", t[i].name, keys[0] ? "," : "", keys);
		assert_string_equal(format(&m), want);
	}
}

/* ---- bp_mode_check in this process ---- */

static int check(const char *text, char *err, size_t errlen)
{
	struct bp_mode m = parse_ok(text);

	return bp_mode_check(&m, err, errlen);
}

static void test_check_epoll(void **state)
{
	char err[256];
	int want = kernel_at_least(6, 9) ? 0 : -EOPNOTSUPP;
	int ret;

	assert_int_equal(check("epoll:block", err, sizeof(err)), 0);
	assert_int_equal(check("epoll:spin", err, sizeof(err)), 0);
	assert_int_equal(check("epoll:hybrid", err, sizeof(err)), 0);
	ret = check("epoll:napi", err, sizeof(err));
	if (ret != want)
		fail_msg("epoll:napi: %d (%s), want %d", ret, err, want);
	if (ret)
		assert_non_null(strstr(err, "EPIOCSPARAMS"));
	/* asking twice gives the cached answer */
	assert_int_equal(check("epoll:napi", err, sizeof(err)), want);
	if (want == 0 && kernel_at_least(6, 13))
		assert_int_equal(check("epoll:napi,usecs=0,prefer", err, sizeof(err)), 0);

	if (!have_cap_net_admin() || want) {
		/* CI runs as root on >= 6.9; the child tests cover the refusal */
		bpt_skip_part("test_check_epoll as root: %s", want ? "no EPIOCSPARAMS (Linux < 6.9)" : "no CAP_NET_ADMIN");
		return;
	}
	ret = check("epoll:napi,budget=128", err, sizeof(err));
	if (ret)
		fail_msg("epoll:napi,budget=128 as root: %d (%s)", ret, err);
	if (kernel_at_least(6, 13)) {
		ret = check("epoll:suspend", err, sizeof(err));
		if (ret)
			fail_msg("epoll:suspend as root on >= 6.13: %d (%s)", ret, err);
	}
}

static void test_check_uring(void **state)
{
	static const char *const modes[] = {
		"uring:block", "uring:block,setup=plain", "uring:block,setup=coop", "uring:napi",
		"uring:napi,tracking=static", "uring:spin", "uring:hybrid", "uring:sqpoll",
		"uring:sqpoll,napi=50",
	};
	char err[256];

	if (read_int_file("/proc/sys/kernel/io_uring_disabled", 0) != 0 || !kernel_at_least(6, 13)) {
		bpt_skip_part("test_check_uring: the expectations are for an enabled io_uring on Linux >= 6.13");
		return;
	}
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		int ret = check(modes[i], err, sizeof(err));

		if (ret)
			fail_msg("%s: %d (%s)", modes[i], ret, err);
	}
}

static void test_check_invalid(void **state)
{
	struct bp_mode m = parse_ok("epoll:napi");
	char err[128];

	m.backend = BP_BACKEND_URING;
	m.policy = BP_POLICY_SUSPEND;
	assert_int_equal(bp_mode_check(&m, err, sizeof(err)), -EINVAL);
	assert_int_equal(bp_mode_check(NULL, err, sizeof(err)), -EINVAL);
}

/* ---- children: fewer privileges, or an older-looking kernel ---- */

#define CHILD_EXPECT(cond, ...)                                              \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "child: line %d: ", __LINE__);       \
			fprintf(stderr, __VA_ARGS__);                        \
			fputc('\n', stderr);                                 \
			_exit(1);                                            \
		}                                                            \
	} while (0)

/* In a child: check text, want ret, and every needle in the message. */
static void child_check(const char *text, int want, const char *needle1, const char *needle2)
{
	struct bp_mode m;
	char err[256] = "";
	int ret;

	CHILD_EXPECT(bp_mode_parse(text, &m, err, sizeof(err)) == 0, "parse %s: %s", text, err);
	ret = bp_mode_check(&m, err, sizeof(err));
	CHILD_EXPECT(ret == want, "%s: got %d (%s), want %d", text, ret, err, want);
	CHILD_EXPECT(!needle1 || strstr(err, needle1), "%s: \"%s\" lacks \"%s\"", text, err, needle1);
	CHILD_EXPECT(!needle2 || strstr(err, needle2), "%s: \"%s\" lacks \"%s\"", text, err, needle2);
}

static void run_child(void (*body)(void))
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		body();
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("child failed (status 0x%x); see its line on stderr", status);
}

static void drop_net_admin_capset(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	CHILD_EXPECT(syscall(SYS_capget, &hdr, data) == 0, "capget: %s", strerror(errno));
	data[0].effective &= ~(1u << CAP_NET_ADMIN_BIT);
	data[0].permitted &= ~(1u << CAP_NET_ADMIN_BIT);
	data[0].inheritable &= ~(1u << CAP_NET_ADMIN_BIT);
	CHILD_EXPECT(syscall(SYS_capset, &hdr, data) == 0, "capset: %s", strerror(errno));
}

static void expect_no_net_admin(void)
{
	/* The parent probed already; a stale cache would say 0 here. */
	child_check("epoll:napi,budget=128", -EPERM, "epoll:napi,budget=128 needs CAP_NET_ADMIN", NULL);
	child_check("epoll:napi,budget=65", -EPERM, "budget=65", "CAP_NET_ADMIN");
	child_check("epoll:napi,budget=64", 0, NULL, NULL);
	child_check("epoll:napi", 0, NULL, NULL);
	child_check("epoll:napi,prefer", 0, NULL, NULL); /* prefer is unprivileged on epoll */
	child_check("epoll:block", 0, NULL, NULL);
	child_check("xsk:spin", -EPERM, "xsk:spin needs CAP_NET_", "run as root");
	if (kernel_at_least(6, 13))
		child_check("epoll:suspend", -EPERM, "epoll:suspend", "CAP_NET_ADMIN");
}

static void child_capset(void)
{
	drop_net_admin_capset();
	expect_no_net_admin();
}

static void child_nobody(void)
{
	CHILD_EXPECT(setgroups(0, NULL) == 0 || errno == EPERM, "setgroups: %s", strerror(errno));
	CHILD_EXPECT(setresgid(65534, 65534, 65534) == 0, "setresgid: %s", strerror(errno));
	CHILD_EXPECT(setresuid(65534, 65534, 65534) == 0, "setresuid: %s", strerror(errno));
	expect_no_net_admin();
}

static int privileged_setup(void **state)
{
	char err[256];

	if (!have_cap_net_admin() || !kernel_at_least(6, 9))
		return 0; /* the tests skip themselves */
	/* Fill the parent's cache with the privileged answers first. */
	if (check("epoll:napi,budget=128", err, sizeof(err)) != 0)
		fail_msg("parent: epoll:napi,budget=128: %s", err);
	if (kernel_at_least(6, 13))
		(void)check("epoll:suspend", err, sizeof(err));
	return 0;
}

static void test_check_child_without_net_admin(void **state)
{
	if (!have_cap_net_admin() || !kernel_at_least(6, 9)) {
		bpt_skip_part("test_check_child_without_net_admin: needs CAP_NET_ADMIN and Linux >= 6.9");
		return;
	}
	run_child(child_capset);
}

static void test_check_child_nobody(void **state)
{
	if (getuid() != 0 || !kernel_at_least(6, 9)) {
		bpt_skip_part("test_check_child_nobody: needs root and Linux >= 6.9");
		return;
	}
	run_child(child_nobody);
}

/* ---- seccomp: make the kernel look older or io_uring disabled ---- */

#if defined(__x86_64__)
#define BP_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define BP_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#ifdef BP_AUDIT_ARCH
/* Fail syscall nr (when its argument argi's low 32 bits equal val, if argi >= 0) with err. */
static void deny(int nr, int argi, uint32_t val, int err)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BP_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* little-endian: the low word of args[argi] comes first */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args) + 8u * (uint32_t)(argi < 0 ? 0 : argi)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, val, argi < 0 ? 0 : 1, 0),
		BPF_STMT(BPF_RET | BPF_K, argi < 0 ? SECCOMP_RET_ERRNO | (uint32_t)err : SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (uint32_t)err),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	CHILD_EXPECT(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "no_new_privs: %s", strerror(errno));
	CHILD_EXPECT(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0, "seccomp: %s", strerror(errno));
}

/* A 6.8 kernel: no EPIOCSPARAMS (ENOTTY), no IORING_REGISTER_NAPI (EINVAL). */
static void child_old_kernel(void)
{
	deny(SYS_ioctl, 1, (uint32_t)EPIOCSPARAMS, ENOTTY);
	deny(SYS_io_uring_register, 1, IORING_REGISTER_NAPI, EINVAL);
	child_check("epoll:block", 0, NULL, NULL);
	child_check("epoll:napi", -EOPNOTSUPP,
		    "epoll:napi needs EPIOCSPARAMS (Linux 6.9); this kernel lacks it", NULL);
	child_check("epoll:suspend", -EOPNOTSUPP, "EPIOCSPARAMS", NULL);
	child_check("uring:block", 0, NULL, NULL);
	child_check("uring:napi", -EOPNOTSUPP, "uring:napi needs IORING_REGISTER_NAPI (Linux 6.9)", NULL);
	child_check("uring:napi,tracking=static", -EOPNOTSUPP, "IORING_REGISTER_NAPI", NULL);
	child_check("uring:sqpoll", 0, NULL, NULL);
	child_check("uring:sqpoll,napi=10", -EOPNOTSUPP, "napi", "IORING_REGISTER_NAPI");
}

static void child_uring_disabled(void)
{
	deny(SYS_io_uring_setup, -1, 0, ENOSYS);
	child_check("epoll:napi", 0, NULL, NULL);
	child_check("uring:block", -EOPNOTSUPP, "uring:block needs io_uring", "disabled");
	child_check("uring:napi", -EOPNOTSUPP, "io_uring", NULL);
	child_check("uring:sqpoll", -EOPNOTSUPP, "io_uring", NULL);
}

static void child_uring_restricted(void)
{
	deny(SYS_io_uring_setup, -1, 0, EPERM);
	child_check("uring:spin", -EPERM, "uring:spin needs io_uring", "io_uring_group");
}
#endif

static void test_check_child_old_kernel(void **state)
{
#ifdef BP_AUDIT_ARCH
	if (!kernel_at_least(6, 13) || read_int_file("/proc/sys/kernel/io_uring_disabled", 0) != 0) {
		bpt_skip_part("test_check_child_old_kernel: needs Linux >= 6.13 with io_uring enabled");
		return;
	}
	run_child(child_old_kernel);
	run_child(child_uring_disabled);
	run_child(child_uring_restricted);
#else
	bpt_skip_part("test_check_child_old_kernel: no seccomp filter for this architecture");
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_epoll),
		cmocka_unit_test(test_defaults_uring),
		cmocka_unit_test(test_keys_epoll_napi),
		cmocka_unit_test(test_keys_xsk),
		cmocka_unit_test(test_keys_uring_napi),
		cmocka_unit_test(test_keys_other),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_null_and_small_err),
		cmocka_unit_test(test_format_canonical),
		cmocka_unit_test(test_format_truncation),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_name),
		cmocka_unit_test(test_is_busy_poll),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_check_epoll),
		cmocka_unit_test(test_check_uring),
		cmocka_unit_test(test_check_invalid),
		cmocka_unit_test_setup(test_check_child_without_net_admin, privileged_setup),
		cmocka_unit_test_setup(test_check_child_nobody, privileged_setup),
		cmocka_unit_test(test_check_child_old_kernel),
	};

	return bpt_unit_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
