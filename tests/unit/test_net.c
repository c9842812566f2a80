/* SPDX-License-Identifier: MIT */
/*
 * net.h: CPU lists, addresses, socket options (read back where the kernel lets
 * us), NAPI id on loopback, capabilities. Also napi_nl's error mapping, fed the
 * replies a Linux 6.13..6.16 kernel would give, since this kernel has everything.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include <busypoll/loop.h>
#include <busypoll/napi.h>
#include <busypoll/net.h>

#include "base/compat.h"
#include "net/napi_nl.h"
#include "bptest.h"

#define CAP_NET_ADMIN_BIT 12

/* ---- CPU lists ---- */

static void test_cpu_list(void **state)
{
	int c[16];

	assert_int_equal(bp_parse_cpu_list("0", c, 16), 1);
	assert_int_equal(c[0], 0);
	assert_int_equal(bp_parse_cpu_list("0,2-3", c, 16), 3);
	assert_int_equal(c[0], 0);
	assert_int_equal(c[1], 2);
	assert_int_equal(c[2], 3);
	/* order as written, duplicates kept (two threads may share a CPU) */
	assert_int_equal(bp_parse_cpu_list("5,1,1", c, 16), 3);
	assert_int_equal(c[0], 5);
	assert_int_equal(c[1], 1);
	assert_int_equal(c[2], 1);
	assert_int_equal(bp_parse_cpu_list("3-3", c, 16), 1);
	assert_int_equal(c[0], 3);
	/* as read from /sys/devices/system/cpu/online */
	assert_int_equal(bp_parse_cpu_list("0-1\n", c, 16), 2);
	assert_int_equal(c[1], 1);
	assert_int_equal(bp_parse_cpu_list("1023", c, 16), 1);
	/* exactly max is fine, one more is not */
	assert_int_equal(bp_parse_cpu_list("0-3", c, 4), 4);
	assert_int_equal(bp_parse_cpu_list("0-4", c, 4), -EINVAL);
	assert_non_null(strstr(bp_last_error(), "more than 4"));
	assert_int_equal(bp_parse_cpu_list("0", c, 0), -EINVAL);
}

static void test_cpu_list_errors(void **state)
{
	static const char *bad[] = {
		"", ",", "0,", ",0", "0,,1", "a", "1a", "-1", "1-", "-", "3-1", "0 ,1", " 0",
		"0\n\n", "1024", "99999999999999999999", "0-2-3", "0:2", "0x1",
	};
	int c[16];

	assert_int_equal(bp_parse_cpu_list(NULL, c, 16), -EINVAL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = bp_parse_cpu_list(bad[i], c, 16);
		if (rc != -EINVAL)
			fail_msg("'%s' gave %d, want -EINVAL", bad[i], rc);
		assert_true(strlen(bp_last_error()) > 0);
	}
	bp_parse_cpu_list("3-1", c, 16);
	assert_non_null(strstr(bp_last_error(), "backwards"));
}

static void test_pin_thread(void **state)
{
	cpu_set_t old;

	assert_int_equal(sched_getaffinity(0, sizeof(old), &old), 0);
	assert_int_equal(bp_pin_thread(0), 0);
	assert_int_equal(sched_getcpu(), 0);
	assert_int_equal(bp_pin_thread(-1), -EINVAL);
	assert_int_equal(bp_pin_thread(CPU_SETSIZE), -EINVAL);
	/* a CPU this machine does not have: the kernel's EINVAL, named */
	assert_int_equal(bp_pin_thread(CPU_SETSIZE - 1), -EINVAL);
	assert_non_null(strstr(bp_last_error(), "pthread_setaffinity_np(cpu 1023)"));
	sched_setaffinity(0, sizeof(old), &old);
}

/* ---- addresses ---- */

static void expect_addr(const char *text, uint16_t dport, const char *formatted)
{
	struct sockaddr_storage ss;
	socklen_t len = 0;
	char buf[80];
	int rc = bp_parse_addr(text, dport, &ss, &len);

	if (rc)
		fail_msg("'%s': %d %s", text, rc, bp_last_error());
	assert_int_equal(len, ss.ss_family == AF_INET ? sizeof(struct sockaddr_in)
						      : sizeof(struct sockaddr_in6));
	assert_string_equal(bp_format_addr((struct sockaddr *)&ss, buf, sizeof(buf)), formatted);
}

static void test_addr_parse(void **state)
{
	expect_addr("127.0.0.1", 7000, "127.0.0.1:7000");
	expect_addr("127.0.0.1:9000", 7000, "127.0.0.1:9000");
	expect_addr("10.1.2.3:0", 7000, "10.1.2.3:0");
	expect_addr("0.0.0.0:65535", 1, "0.0.0.0:65535");
	expect_addr("[::1]:9000", 7000, "[::1]:9000");
	expect_addr("[::1]", 7000, "[::1]:7000");
	expect_addr("::1", 7000, "[::1]:7000");       /* bare IPv6: no port possible */
	expect_addr("[fe80::1%1]:5", 7000, "[fe80::1%1]:5"); /* scope id kept */
	expect_addr("[2001:db8::a:b]:80", 1, "[2001:db8::a:b]:80");
	expect_addr("[::ffff:1.2.3.4]:80", 1, "[::ffff:1.2.3.4]:80");
	/* names from /etc/hosts (never DNS in a test): IPv4 preferred */
	expect_addr("localhost:5555", 7000, "127.0.0.1:5555");
	expect_addr("localhost", 7000, "127.0.0.1:7000");
}

static void test_addr_errors(void **state)
{
	static const char *bad[] = {
		"", ":80", "1.2.3.4:", "1.2.3.4:99999", "1.2.3.4:x", "1.2.3.4:-1", "1.2.3.4:8 0",
		"[::1", "[::1]x", "[::1]:", "[]:80", "[1.2.3.4]:80", "[localhost]:80",
		"[not-v6]", "[::1]:65536",
	};
	struct sockaddr_storage ss;
	socklen_t len;

	assert_int_equal(bp_parse_addr(NULL, 1, &ss, &len), -EINVAL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = bp_parse_addr(bad[i], 80, &ss, &len);
		if (rc != -EINVAL)
			fail_msg("'%s' gave %d (%s), want -EINVAL", bad[i], rc, bp_last_error());
	}
	bp_parse_addr("[::1", 80, &ss, &len);
	assert_non_null(strstr(bp_last_error(), "missing ']'"));
	bp_parse_addr("1.2.3.4:99999", 80, &ss, &len);
	assert_non_null(strstr(bp_last_error(), "above 65535"));
}

/*
 * A name that does not resolve, looked up in a fresh network namespace with no
 * interfaces, so no DNS query can leave this machine. Skipped where neither root
 * nor an unprivileged user namespace can make one.
 */
static void test_addr_unresolvable(void **state)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct sockaddr_storage ss;
		socklen_t len;
		if (unshare(CLONE_NEWNET) && unshare(CLONE_NEWUSER | CLONE_NEWNET))
			_exit(77);
		int rc = bp_parse_addr("no-such-host.invalid:80", 1, &ss, &len);
		if (rc != -ENOENT) {
			fprintf(stderr, "got %d: %s\n", rc, bp_last_error());
			_exit(1);
		}
		_exit(strstr(bp_last_error(), "getaddrinfo(no-such-host.invalid)") ? 0 : 2);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		bpt_skip_part("test_addr_unresolvable: neither root nor a user namespace can make an empty network namespace");
		return;
	}
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_addr_format(void **state)
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(80) };
	struct sockaddr_un_like { sa_family_t f; char p[20]; } un = { AF_UNIX, "x" };
	char buf[64], tiny[6];

	inet_pton(AF_INET, "192.0.2.7", &in.sin_addr);
	assert_string_equal(bp_format_addr((struct sockaddr *)&in, buf, sizeof(buf)), "192.0.2.7:80");
	/* truncates, always terminated */
	assert_string_equal(bp_format_addr((struct sockaddr *)&in, tiny, sizeof(tiny)), "192.0");
	assert_string_equal(bp_format_addr(NULL, buf, sizeof(buf)), "(none)");
	assert_string_equal(bp_format_addr((struct sockaddr *)&un, buf, sizeof(buf)), "(family 1)");
}

/* ---- socket options ---- */

static int get_int(int fd, int level, int opt)
{
	int v = -12345;
	socklen_t len = sizeof(v);

	assert_int_equal(getsockopt(fd, level, opt, &v, &len), 0);
	return v;
}

static void test_sockopts(void **state)
{
	bool admin = bp_have_cap(CAP_NET_ADMIN_BIT);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int pfd[2];

	assert_true(fd >= 0);
	assert_int_equal(bp_sock_set_busy_poll(fd, 50), 0);
	assert_int_equal(get_int(fd, SOL_SOCKET, SO_BUSY_POLL), 50);
	assert_int_equal(bp_sock_set_busy_poll(fd, 0), 0);
	assert_int_equal(get_int(fd, SOL_SOCKET, SO_BUSY_POLL), 0);
	assert_int_equal(bp_sock_set_busy_poll(fd, 0x80000000u), -EINVAL);

	assert_int_equal(bp_sock_set_prefer_busy_poll(fd, false), 0);
	assert_int_equal(get_int(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL), 0);
	if (admin) {
		assert_int_equal(bp_sock_set_prefer_busy_poll(fd, true), 0);
		assert_int_equal(get_int(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL), 1);
	} else {
		assert_int_equal(bp_sock_set_prefer_busy_poll(fd, true), -EPERM);
		assert_non_null(strstr(bp_last_error(), "SO_PREFER_BUSY_POLL"));
	}

	/*
	 * The kernel has no getsockopt for the budget: set only. A new socket's budget
	 * is 0, and any raise needs CAP_NET_ADMIN, so unprivileged can only set 0.
	 */
	assert_int_equal(bp_sock_set_busy_poll_budget(fd, 0), 0);
	if (admin) {
		assert_int_equal(bp_sock_set_busy_poll_budget(fd, 8), 0);
		assert_int_equal(bp_sock_set_busy_poll_budget(fd, 200), 0);
		assert_int_equal(bp_sock_set_busy_poll_budget(fd, 8), 0); /* lowering */
	} else {
		assert_int_equal(bp_sock_set_busy_poll_budget(fd, 8), -EPERM);
		assert_non_null(strstr(bp_last_error(), "setsockopt(SO_BUSY_POLL_BUDGET)"));
	}

	assert_int_equal(bp_sock_set_priority(fd, 3), 0);
	assert_int_equal(get_int(fd, SOL_SOCKET, SO_PRIORITY), 3);
	if (admin) {
		assert_int_equal(bp_sock_set_priority(fd, 7), 0);
		assert_int_equal(get_int(fd, SOL_SOCKET, SO_PRIORITY), 7);
	} else {
		assert_int_equal(bp_sock_set_priority(fd, 7), -EPERM);
		assert_non_null(strstr(bp_last_error(), "setsockopt(SO_PRIORITY)"));
	}

	assert_int_equal(bp_sock_set_nodelay(fd, true), 0);
	assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_NODELAY), 1);
	assert_int_equal(bp_sock_set_nodelay(fd, false), 0);
	assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_NODELAY), 0);

	assert_false(fcntl(fd, F_GETFL) & O_NONBLOCK);
	assert_int_equal(bp_sock_set_nonblock(fd), 0);
	assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
	assert_int_equal(bp_sock_set_nonblock(fd), 0); /* already: fine */
	close(fd);

	/* failures name the option */
	assert_int_equal(pipe(pfd), 0);
	assert_int_equal(bp_sock_set_busy_poll(pfd[0], 50), -ENOTSOCK);
	assert_string_equal(bp_last_error(), "setsockopt(SO_BUSY_POLL): Socket operation on non-socket");
	assert_int_equal(bp_sock_set_nodelay(pfd[0], true), -ENOTSOCK);
	assert_non_null(strstr(bp_last_error(), "setsockopt(TCP_NODELAY)"));
	close(pfd[0]);
	close(pfd[1]);
	assert_int_equal(bp_sock_set_nonblock(pfd[0]), -EBADF);
	assert_non_null(strstr(bp_last_error(), "fcntl(F_GETFL)"));
	uint32_t id;
	assert_int_equal(bp_sock_napi_id(pfd[0], &id), -EBADF);
	assert_non_null(strstr(bp_last_error(), "getsockopt(SO_INCOMING_NAPI_ID)"));
	/* TCP_NODELAY means nothing to UDP */
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(bp_sock_set_nodelay(fd, true) < 0);
	close(fd);
}

static void test_napi_id_loopback(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), c = socket(AF_INET, SOCK_STREAM, 0), s;
	uint32_t id = 0xffffffff;
	char buf[8];

	assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&a, &alen), 0);
	assert_int_equal(connect(c, (struct sockaddr *)&a, sizeof(a)), 0);
	s = accept(l, NULL, NULL);
	assert_true(s >= 0);
	assert_int_equal(bp_sock_napi_id(s, &id), 0);
	assert_int_equal(id, 0); /* before traffic */
	assert_int_equal(send(c, "hello", 5, 0), 5);
	assert_int_equal(recv(s, buf, 5, MSG_WAITALL), 5);
	assert_int_equal(bp_sock_napi_id(s, &id), 0);
	assert_int_equal(id, 0); /* loopback has no NAPI */
	assert_int_equal(bp_sock_napi_id(c, &id), 0);
	assert_int_equal(id, 0);
	close(s);
	close(c);
	close(l);
}

static void test_have_cap(void **state)
{
	assert_false(bp_have_cap(-1));
	assert_false(bp_have_cap(64));
	assert_false(bp_have_cap(1000));
	/* root in the initial user namespace has CAP_NET_ADMIN; others usually not */
	if (geteuid() == 0)
		assert_true(bp_have_cap(CAP_NET_ADMIN_BIT));
}

/* ---- netdev netlink: error mapping and what works without a test bed ---- */

/* A napi-set request carrying id, then attribute 'type'; returns its offset. */
static uint32_t napi_set_req(char *buf, unsigned int type, struct nlmsghdr **out)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	uint32_t offs;

	nlh->nlmsg_type = 0x14;
	g->cmd = BP_NETDEV_CMD_NAPI_SET;
	mnl_attr_put_u32(nlh, BP_NETDEV_A_NAPI_ID, 300);
	offs = nlh->nlmsg_len;
	mnl_attr_put_u32(nlh, (uint16_t)type, 1);
	*out = nlh;
	return offs;
}

static void test_napi_explain(void **state)
{
	char buf[256] __attribute__((aligned(4))) = { 0 };
	struct nlmsghdr *req;
	uint32_t offs;

	/* what Linux 6.13..6.16 says to threaded (attribute 8, Linux 6.17) */
	offs = napi_set_req(buf, BP_NETDEV_A_NAPI_THREADED, &req);
	assert_int_equal(offs, 28); /* as this kernel reports it: 16 + 4 + 8 */
	assert_int_equal(bp_napi_nl_explain(req, -EINVAL, "Unknown attribute type", offs, "napi-set"),
			 -EOPNOTSUPP);
	assert_string_equal(bp_last_error(), "napi-set threaded: this kernel lacks it (Linux 6.17)");
	/* no message at all: still the attribute's fault */
	offs = napi_set_req(buf, BP_NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT, &req);
	assert_int_equal(bp_napi_nl_explain(req, -EINVAL, NULL, offs, "napi-set"), -EOPNOTSUPP);
	assert_string_equal(bp_last_error(),
			    "napi-set irq-suspend-timeout: this kernel lacks it (Linux 6.13)");
	/* a bad value is not a missing feature */
	offs = napi_set_req(buf, BP_NETDEV_A_NAPI_DEFER_HARD_IRQS, &req);
	assert_int_equal(bp_napi_nl_explain(req, -ERANGE, "integer out of range", offs, "napi-set"),
			 -ERANGE);
	assert_string_equal(bp_last_error(), "napi-set defer-hard-irqs: integer out of range");
	assert_int_equal(bp_napi_nl_explain(req, -EINVAL, "invalid attribute length", offs,
					    "napi-set"), -EINVAL);
	/* an attribute this code does not know: named by number, errno kept */
	offs = napi_set_req(buf, 42, &req);
	assert_int_equal(bp_napi_nl_explain(req, -EINVAL, "Unknown attribute type", offs,
					    "napi-set"), -EINVAL);
	assert_string_equal(bp_last_error(), "napi-set attribute 42: Unknown attribute type");
	/* offsets outside the request are ignored */
	assert_int_equal(bp_napi_nl_explain(req, -EINVAL, NULL, 4000, "napi-set"), -EINVAL);
	assert_string_equal(bp_last_error(), "napi-set: Invalid argument");
	assert_int_equal(bp_napi_nl_explain(req, -EINVAL, NULL, 3, "napi-set"), -EINVAL);
	/* EPERM says what is missing */
	assert_int_equal(bp_napi_nl_explain(req, -EPERM, NULL, 0, "napi-set"), -EPERM);
	assert_string_equal(bp_last_error(), "napi-set: Operation not permitted (needs CAP_NET_ADMIN)");
	assert_string_equal(bp_napi_attr_name(BP_NETDEV_A_NAPI_GRO_FLUSH_TIMEOUT), "gro-flush-timeout");
	assert_null(bp_napi_attr_name(99));
}

static void test_napi_live(void **state)
{
	struct bp_napi_info info[64], one;
	bp_napi_settings none = { .has = BP_NAPI_HAS_IRQ | BP_NAPI_HAS_PID };
	int n = bp_napi_list(0, info, 64);

	if (n == -ENOENT || n == -EOPNOTSUPP) {
		bpt_skip_part("test_napi_live: no NAPI netlink here: %s", bp_last_error());
		return;
	}
	assert_true(n >= 0);
	for (int i = 0; i < n && i < 64; i++) {
		assert_true(info[i].id >= BP_MIN_NAPI_ID);
		assert_true(info[i].ifindex > 0);
		assert_int_equal(bp_napi_get(info[i].id, &one), 0);
		assert_int_equal(one.id, info[i].id);
		assert_int_equal(one.ifindex, info[i].ifindex);
	}
	/* max 0 only counts */
	assert_int_equal(bp_napi_list(0, NULL, 0), n);
	/* loopback has none */
	assert_int_equal(bp_napi_list(1, info, 64), 0);
	assert_int_equal(bp_napi_get(1, &one), -ENOENT);
	assert_non_null(strstr(bp_last_error(), "ids below 256"));
	assert_int_equal(bp_napi_get(0x7ffffff0u, &one), -ENOENT);
	/* only read-only bits: nothing to send */
	assert_int_equal(bp_napi_set(0x7ffffff0u, &none), 0);
	if (bp_have_cap(CAP_NET_ADMIN_BIT)) {
		bp_napi_settings s = { .has = BP_NAPI_HAS_DEFER, .defer_hard_irqs = 1 };
		assert_int_equal(bp_napi_set(0x7ffffff0u, &s), -ENOENT);
		assert_non_null(strstr(bp_last_error(), "napi-set: no NAPI id"));
	}
}

static void test_dev_knob(void **state)
{
	uint64_t v = 12345;

	assert_int_equal(bp_dev_get_knob("lo", "gro_flush_timeout", &v), 0);
	assert_int_equal(bp_dev_get_knob("lo", "napi_defer_hard_irqs", &v), 0);
	assert_int_equal(bp_dev_get_knob("lo", "mtu", &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(bp_dev_get_knob("no-such-dev0", "gro_flush_timeout", &v), -ENOENT);
	assert_non_null(strstr(bp_last_error(), "/sys/class/net/no-such-dev0/gro_flush_timeout"));
	assert_int_equal(bp_dev_get_knob("..", "x", &v), -EINVAL);
	assert_int_equal(bp_dev_get_knob("lo", "../../../etc/passwd", &v), -EINVAL);
	assert_int_equal(bp_dev_get_knob("lo", "", &v), -EINVAL);
	assert_int_equal(bp_dev_set_knob("lo/..", "mtu", 1), -EINVAL);
	/* not a number */
	assert_int_equal(bp_dev_get_knob("lo", "address", &v), -EIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_list),
		cmocka_unit_test(test_cpu_list_errors),
		cmocka_unit_test(test_pin_thread),
		cmocka_unit_test(test_addr_parse),
		cmocka_unit_test(test_addr_errors),
		cmocka_unit_test(test_addr_unresolvable),
		cmocka_unit_test(test_addr_format),
		cmocka_unit_test(test_sockopts),
		cmocka_unit_test(test_napi_id_loopback),
		cmocka_unit_test(test_have_cap),
		cmocka_unit_test(test_napi_explain),
		cmocka_unit_test(test_napi_live),
		cmocka_unit_test(test_dev_knob),
	};
	if (getenv("BPT_FILTER")) /* run one test: BPT_FILTER=test_sockopts */
		cmocka_set_test_filter(getenv("BPT_FILTER"));
	return bpt_unit_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
