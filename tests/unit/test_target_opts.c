/* SPDX-License-Identifier: MIT */
/*
 * busypoll target's options: defaults (loopback 4420, poll mode off), every option
 * into the library's configuration, namespace specs and sizes, and the one-line
 * messages that name the option as typed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "tools/target/target.h"

static struct target_opts o;
static char err[512];

static int parse(int argc, const char **argv)
{
	return target_parse_opts(argc, (char **)argv, &o, err, sizeof(err));
}

static void test_defaults(void **state)
{
	const char *argv[] = { "target", "--ns", "ram:64M" };
	const struct sockaddr_in *sin = (const struct sockaddr_in *)&o.cfg.listen;

	assert_int_equal(parse(3, argv), 0);
	assert_int_equal(sin->sin_family, AF_INET);
	assert_int_equal(ntohs(sin->sin_port), 4420);
	assert_int_equal(ntohl(sin->sin_addr.s_addr), INADDR_LOOPBACK); /* anything else is explicit */
	assert_int_equal(o.cfg.poll_period_us, 0);
	assert_int_equal(o.cfg.so_priority, -1);
	assert_int_equal(o.cfg.threads, 1);
	assert_int_equal(o.cfg.n_ns, 1);
	assert_int_equal(o.cfg.ns[0].kind, BP_NVMET_NS_RAM);
	assert_true(o.cfg.ns[0].size == 64ull << 20);
	assert_int_equal(o.cfg.ns[0].block_size, 512);
	assert_int_equal(o.cfg.n_allow, 0);
	assert_int_equal(o.cfg.queue_depth, 128);
	assert_int_equal(o.cfg.io_depth, 128);
	assert_string_equal(o.mode_text, "epoll:block");
}

/* file: O_DIRECT unless buffered, the device's block size unless bs=, read-only only when asked (or forced). */
static void test_file_namespaces(void **state)
{
	const char *argv[] = { "target", "--ns", "file:/dev/loop9", "--ns", "file:/tmp/b.img,size=1G,buffered,ro",
			       "--ns", "file:/tmp/c.img,bs=2048", "--io-depth", "32" };

	assert_int_equal(parse(sizeof(argv) / sizeof(argv[0]), argv), 0);
	assert_int_equal(o.cfg.n_ns, 3);
	assert_string_equal(o.cfg.ns[0].path, "/dev/loop9");
	assert_int_equal(o.cfg.ns[0].block_size, 0);
	assert_false(o.cfg.ns[0].buffered);
	assert_false(o.cfg.ns[0].read_only);
	assert_true(o.cfg.ns[1].buffered && o.cfg.ns[1].read_only);
	assert_true(o.cfg.ns[1].size == 1ull << 30);
	assert_int_equal(o.cfg.ns[2].block_size, 2048);
	assert_int_equal(o.cfg.io_depth, 32);
}

static void test_everything(void **state)
{
	const char *argv[] = { "target", "--listen", "127.0.0.2:5000", "--nqn", "nqn.2024-01.io.busypoll:x",
			       "--ns", "ram:1G,bs=4096", "--ns", "file:/tmp/a.img,size=2T", "--allow-host", "h1",
			       "--allow-host", "h2", "--threads", "2", "--poll-period-us", "50", "--so-priority", "3",
			       "--max-queues", "8", "--queue-depth", "256", "--max-conns", "99", "--max-transfer",
			       "2M", "--inline-data", "16K", "--log-level", "debug", "--mode", "epoll:spin",
			       "--cpus", "0", "--file-beyond-space" };
	const struct sockaddr_in *sin = (const struct sockaddr_in *)&o.cfg.listen;

	assert_int_equal(parse(sizeof(argv) / sizeof(argv[0]), argv), 0);
	assert_true(o.file_beyond_space); /* size=2T on whatever /tmp has free: meant */
	assert_int_equal(ntohs(sin->sin_port), 5000);
	assert_string_equal(o.cfg.nqn, "nqn.2024-01.io.busypoll:x");
	assert_int_equal(o.cfg.n_ns, 2);
	assert_int_equal(o.cfg.ns[0].block_size, 4096);
	assert_int_equal(o.cfg.ns[1].kind, BP_NVMET_NS_FILE);
	assert_string_equal(o.cfg.ns[1].path, "/tmp/a.img");
	assert_true(o.cfg.ns[1].size == 2ull << 40);
	assert_int_equal(o.cfg.n_allow, 2);
	assert_string_equal(o.cfg.allow_hosts[1], "h2");
	assert_int_equal(o.cfg.threads, 2);
	assert_int_equal(o.cfg.poll_period_us, 50);
	assert_int_equal(o.cfg.so_priority, 3);
	assert_int_equal(o.cfg.max_queues, 8);
	assert_int_equal(o.cfg.queue_depth, 256);
	assert_int_equal(o.cfg.max_conns, 99);
	assert_int_equal(o.cfg.max_transfer, 2u << 20);
	assert_int_equal(o.cfg.inline_data, 16384);
	assert_int_equal(o.cfg.log_level, BP_NVMET_LOG_DEBUG);
	assert_string_equal(o.mode_text, "epoll:spin");
	assert_int_equal(o.cfg.ncpus, 1);
}

static void expect_err(int argc, const char **argv, const char *want)
{
	assert_int_equal(parse(argc, argv), -EINVAL);
	if (!strstr(err, want))
		fail_msg("message '%s' does not contain '%s'", err, want);
	assert_null(strchr(err, '\n'));
}

static void test_errors(void **state)
{
	const char *a1[] = { "target" };
	const char *a2[] = { "target", "--ns", "disk:1M" };
	const char *a3[] = { "target", "--ns", "ram:0" };
	const char *a4[] = { "target", "--ns", "ram:1M", "--threads", "65" };
	const char *a5[] = { "target", "--ns", "ram:1M", "--poll-period-us", "-1" };
	const char *a6[] = { "target", "--ns", "ram:1M", "--max-transfer", "3M" };
	const char *a7[] = { "target", "--ns", "ram:1M", "extra" };
	const char *a8[] = { "target", "--ns", "file:/x,size=1M,zz=1" };
	const char *a9[] = { "target", "--ns", "ram:1M", "--nqn", "" };
	const char *a10[] = { "target", "--ns" };
	const char *a11[] = { "target", "--ns", "file:/x,bs=1000" };
	const char *a12[] = { "target", "--ns", "ram:1M,buffered" };
	const char *a13[] = { "target", "--ns", "ram:1M", "--io-depth", "0" };
	const char *a14[] = { "target", "--ns", "file:/x,size=1000" };

	expect_err(1, a1, "no namespace");
	expect_err(3, a2, "--ns disk:1M");
	expect_err(3, a3, "ram:0");
	expect_err(5, a4, "--threads 65: must be between 1 and 64");
	expect_err(5, a5, "--poll-period-us -1");
	expect_err(5, a6, "power of two");
	expect_err(4, a7, "unexpected argument 'extra'");
	expect_err(3, a8, "unknown option 'zz=1'");
	expect_err(5, a9, "--nqn");
	expect_err(2, a10, "--ns needs a value");
	expect_err(3, a11, "bs=1000: block size must be 512, 1024, 2048 or 4096");
	expect_err(3, a12, "unknown option 'buffered' (bs=)");
	expect_err(5, a13, "--io-depth 0: must be between 1 and 4096");
	expect_err(3, a14, "not a multiple of 512 bytes");
}

static void test_sizes(void **state)
{
	uint64_t v;

	assert_int_equal(bp_nvmet_parse_size("4096", &v), 0);
	assert_true(v == 4096);
	assert_int_equal(bp_nvmet_parse_size("64M", &v), 0);
	assert_true(v == 64ull << 20);
	assert_int_equal(bp_nvmet_parse_size("1GiB", &v), 0);
	assert_true(v == 1ull << 30);
	assert_int_equal(bp_nvmet_parse_size("8k", &v), 0);
	assert_true(v == 8192);
	assert_int_equal(bp_nvmet_parse_size("1X", &v), -EINVAL);
	assert_int_equal(bp_nvmet_parse_size("", &v), -EINVAL);
	assert_int_equal(bp_nvmet_parse_size("-1", &v), -EINVAL);
	assert_int_equal(bp_nvmet_parse_size("99999999999999999999", &v), -EINVAL);
	assert_int_equal(bp_nvmet_parse_size("17179869184T", &v), -EINVAL); /* overflow */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_everything),
		cmocka_unit_test(test_file_namespaces),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_sizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
