/* SPDX-License-Identifier: MIT */
/*
 * The veth test bed end to end, as root: build it, find its NAPIs, run TCP between
 * its namespaces (each thread setns()'d into its own side), see the NAPI id on the
 * sockets and the kernel count busy-polled packets, change per-NAPI settings over
 * netlink and put them back, then remove it and check nothing is left.
 *
 * Every failure exits non-zero through exit() or a signal, and both paths remove
 * the namespaces (bpt_testbed_guard). Not root: skipped (77).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <busypoll/kstats.h>
#include <busypoll/loop.h>
#include <busypoll/napi.h>
#include <busypoll/net.h>
#include "tools/bed/testbed.h"

#include "bpt_testbed.h"
#include "bptest.h"
#include "base/compat.h"

#define ROUNDS 2000  /* 1-byte round trips with SO_BUSY_POLL on the server */
#define MAXQ 8

#define CHECK(cond, ...)                                                              \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                 \
			fputc('\n', stderr);                                          \
			exit(1);                                                      \
		}                                                                     \
	} while (0)
#define CHECK_RC(expr)                                                                \
	do {                                                                          \
		int rc_ = (expr);                                                     \
		CHECK(rc_ == 0, "%d (%s)", rc_, bp_last_error());                     \
	} while (0)

static bool ns_file_exists(const char *ns)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	return stat(path, &st) == 0;
}

static bool in_list(uint32_t id, const uint32_t *ids, int n)
{
	for (int i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* ---- TCP between the two sides: one thread in each namespace ---- */

struct peer {
	const struct bp_testbed *tb;
	sem_t ready;            /* server listening, port known */
	uint16_t port;
	/* results */
	int rc;
	char err[256];
	uint32_t napi_at_accept, napi_after;
	uint64_t busy_poll_rx;  /* server: BusyPollRxPackets delta over the rounds */
};

static void *peer_fail(struct peer *p, const char *what)
{
	p->rc = -1;
	snprintf(p->err, sizeof(p->err), "%s: %s", what, bp_last_error());
	return NULL;
}

static void *sys_fail(struct peer *p, const char *what)
{
	p->rc = -errno;
	snprintf(p->err, sizeof(p->err), "%s: %s", what, strerror(errno));
	return NULL;
}

static void set_timeouts(int fd)
{
	struct timeval tv = { .tv_sec = 10 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)); /* bounds connect() too */
}

static void *server(void *arg)
{
	struct peer *p = arg;
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	struct bp_kstats before, after, d;
	char buf[8];
	int l, s;

	if (bp_testbed_enter(p->tb, 1)) {
		sem_post(&p->ready);
		return peer_fail(p, "enter side b");
	}
	bp_pin_thread(1); /* best effort: client on cpu0, server on cpu1 */
	inet_pton(AF_INET, p->tb->addr[1], &a.sin_addr);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &alen)) {
		sem_post(&p->ready);
		return sys_fail(p, "server socket/bind/listen");
	}
	set_timeouts(l);
	p->port = ntohs(a.sin_port);
	sem_post(&p->ready);
	s = accept(l, NULL, NULL);
	close(l);
	if (s < 0)
		return sys_fail(p, "accept");
	set_timeouts(s);
	if (bp_sock_napi_id(s, &p->napi_at_accept))
		return peer_fail(p, "napi id at accept");
	if (recv(s, buf, 5, MSG_WAITALL) != 5 || memcmp(buf, "hello", 5))
		return sys_fail(p, "server recv hello");
	if (bp_sock_napi_id(s, &p->napi_after))
		return peer_fail(p, "napi id after hello");
	/* blocking recv + SO_BUSY_POLL: the kernel busy-polls the socket's NAPI */
	if (bp_sock_set_busy_poll(s, 50))
		return peer_fail(p, "SO_BUSY_POLL");
	if (bp_kstats_read(&before))
		return peer_fail(p, "kstats before");
	for (int i = 0; i < ROUNDS; i++)
		if (recv(s, buf, 1, MSG_WAITALL) != 1 || send(s, buf, 1, 0) != 1)
			return sys_fail(p, "server round trip");
	if (bp_kstats_read(&after))
		return peer_fail(p, "kstats after");
	bp_kstats_delta(&after, &before, &d);
	p->busy_poll_rx = d.busy_poll_rx;
	close(s);
	return NULL;
}

static void *client(void *arg)
{
	struct peer *p = arg;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(p->port) };
	char b = 'x';
	int s;

	if (bp_testbed_enter(p->tb, 0))
		return peer_fail(p, "enter side a");
	bp_pin_thread(0);
	inet_pton(AF_INET, p->tb->addr[1], &a.sin_addr);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return sys_fail(p, "client socket");
	set_timeouts(s);
	if (connect(s, (struct sockaddr *)&a, sizeof(a)))
		return sys_fail(p, "connect");
	bp_sock_set_nodelay(s, true);
	if (send(s, "hello", 5, 0) != 5)
		return sys_fail(p, "send hello");
	for (int i = 0; i < ROUNDS; i++)
		if (send(s, &b, 1, 0) != 1 || recv(s, &b, 1, MSG_WAITALL) != 1)
			return sys_fail(p, "client round trip");
	if (bp_sock_napi_id(s, &p->napi_after))
		return peer_fail(p, "client napi id");
	close(s);
	return NULL;
}

static void tcp_between_sides(const struct bp_testbed *tb, const uint32_t *ids_a, int na,
			      const uint32_t *ids_b, int nb)
{
	struct peer srv = { .tb = tb }, cli = { .tb = tb };
	pthread_t ts, tc;

	sem_init(&srv.ready, 0, 0);
	CHECK(pthread_create(&ts, NULL, server, &srv) == 0, "pthread_create");
	sem_wait(&srv.ready);
	CHECK(srv.rc == 0, "%s", srv.err);
	cli.port = srv.port;
	CHECK(pthread_create(&tc, NULL, client, &cli) == 0, "pthread_create");
	pthread_join(tc, NULL);
	pthread_join(ts, NULL);
	CHECK(cli.rc == 0, "client: %s", cli.err);
	CHECK(srv.rc == 0, "server: %s", srv.err);
	printf("accepted socket: napi id %u at accept, %u after the first bytes; client: %u\n",
	       srv.napi_at_accept, srv.napi_after, cli.napi_after);
	CHECK(srv.napi_after != 0, "SO_INCOMING_NAPI_ID is 0 on the accepted socket");
	CHECK(in_list(srv.napi_after, ids_b, nb), "server napi id %u is not one of side b's",
	      srv.napi_after);
	CHECK(in_list(cli.napi_after, ids_a, na), "client napi id %u is not one of side a's",
	      cli.napi_after);
	printf("BusyPollRxPackets in side b over %d round trips: +%llu\n", ROUNDS,
	       (unsigned long long)srv.busy_poll_rx);
	CHECK(srv.busy_poll_rx > 0, "SO_BUSY_POLL=50 on the server never busy-polled a packet");
	sem_destroy(&srv.ready);
}

/* ---- per-NAPI settings over netlink, inside side b ---- */

static void napi_settings(const struct bp_testbed *tb, uint32_t id)
{
	struct bp_napi_info old, now;
	bp_napi_settings s;
	int saved, rc;

	/* ids are global, lookups are per namespace: from here it does not exist */
	CHECK(bp_napi_get(id, &now) == -ENOENT, "napi %u visible outside its namespace", id);

	CHECK_RC(bp_netns_save(&saved));
	CHECK_RC(bp_testbed_enter(tb, 1));
	CHECK_RC(bp_napi_get(id, &old));
	CHECK(old.id == id && old.ifindex == tb->ifindex[1], "id %u ifindex %u", old.id, old.ifindex);
	CHECK((old.has & (BP_NAPI_HAS_DEFER | BP_NAPI_HAS_GRO_FLUSH)) ==
		      (BP_NAPI_HAS_DEFER | BP_NAPI_HAS_GRO_FLUSH), "has 0x%x", old.has);
	printf("napi %u before: defer-hard-irqs %u gro-flush-timeout %llu irq-suspend-timeout %llu "
	       "threaded %u irq %d pid %d has 0x%x\n", id, old.defer_hard_irqs,
	       (unsigned long long)old.gro_flush_timeout_ns,
	       (unsigned long long)old.irq_suspend_timeout_ns, old.threaded, old.irq, old.pid,
	       old.has);

	s = (bp_napi_settings){ .has = BP_NAPI_HAS_DEFER | BP_NAPI_HAS_GRO_FLUSH,
				.defer_hard_irqs = 2, .gro_flush_timeout_ns = 20000 };
	CHECK_RC(bp_napi_set(id, &s));
	CHECK_RC(bp_napi_get(id, &now));
	CHECK(now.defer_hard_irqs == 2, "defer-hard-irqs read back %u", now.defer_hard_irqs);
	CHECK(now.gro_flush_timeout_ns == 20000, "gro-flush-timeout read back %llu",
	      (unsigned long long)now.gro_flush_timeout_ns);

	/* above 32 bits the "uint" attribute goes as 8 bytes */
	s = (bp_napi_settings){ .has = BP_NAPI_HAS_GRO_FLUSH | BP_NAPI_HAS_IRQ_SUSPEND,
				.gro_flush_timeout_ns = 5000000000ull,
				.irq_suspend_timeout_ns = 40000 };
	CHECK_RC(bp_napi_set(id, &s));
	CHECK_RC(bp_napi_get(id, &now));
	CHECK(now.gro_flush_timeout_ns == 5000000000ull, "%llu",
	      (unsigned long long)now.gro_flush_timeout_ns);
	CHECK(now.irq_suspend_timeout_ns == 40000, "%llu",
	      (unsigned long long)now.irq_suspend_timeout_ns);
	CHECK(now.defer_hard_irqs == 2, "an unsent setting changed: %u", now.defer_hard_irqs);

	/* a bad value is refused with the setting named, and nothing changes */
	s = (bp_napi_settings){ .has = BP_NAPI_HAS_DEFER, .defer_hard_irqs = 0x80000000u };
	rc = bp_napi_set(id, &s);
	printf("defer-hard-irqs 2^31: %d (%s)\n", rc, bp_last_error());
	CHECK(rc < 0 && rc != -EOPNOTSUPP, "got %d", rc);
	CHECK(strstr(bp_last_error(), "defer-hard-irqs"), "%s", bp_last_error());

	/* threaded per NAPI (Linux 6.17): the kthread's pid shows up */
	s = (bp_napi_settings){ .has = BP_NAPI_HAS_THREADED, .threaded = 1 };
	rc = bp_napi_set(id, &s);
	if (rc == -EOPNOTSUPP) {
		printf("per-NAPI threaded not here: %s\n", bp_last_error());
	} else {
		CHECK(rc == 0, "threaded=1: %s", bp_last_error());
		CHECK_RC(bp_napi_get(id, &now));
		CHECK(now.threaded == 1 && (now.has & BP_NAPI_HAS_PID) && now.pid > 0,
		      "threaded %u pid %d", now.threaded, now.pid);
		printf("napi %u threaded: kthread pid %d\n", id, now.pid);
		s.threaded = 0;
		CHECK_RC(bp_napi_set(id, &s));
		CHECK_RC(bp_napi_get(id, &now));
		CHECK(now.threaded == 0 && !(now.has & BP_NAPI_HAS_PID), "threaded %u", now.threaded);
	}

	/* put everything back as it was (a napi-get result goes straight back) */
	CHECK_RC(bp_napi_set(id, &old));
	CHECK_RC(bp_napi_get(id, &now));
	CHECK(now.defer_hard_irqs == old.defer_hard_irqs &&
		      now.gro_flush_timeout_ns == old.gro_flush_timeout_ns &&
		      now.irq_suspend_timeout_ns == old.irq_suspend_timeout_ns &&
		      now.threaded == old.threaded,
	      "not restored: defer %u gro %llu", now.defer_hard_irqs,
	      (unsigned long long)now.gro_flush_timeout_ns);
	CHECK(bp_napi_get(0x7ffffff0u, &now) == -ENOENT, "%s", bp_last_error());
	CHECK_RC(bp_netns_restore(saved));
}

/* ---- the device-wide sysfs knobs, which /sys outside the namespace cannot see ---- */

static void dev_knobs(const struct bp_testbed *tb)
{
	uint64_t v = 1;

	CHECK(bp_dev_get_knob(tb->dev[1], "gro_flush_timeout", &v) == -ENOENT,
	      "the host's /sys shows %s (it should not)", tb->dev[1]);
	CHECK_RC(bp_netns_dev_get_knob(tb->ns[1], tb->dev[1], "gro_flush_timeout", &v));
	CHECK(v == 0, "gro_flush_timeout %llu", (unsigned long long)v);
	CHECK_RC(bp_netns_dev_set_knob(tb->ns[1], tb->dev[1], "gro_flush_timeout", 30000));
	CHECK_RC(bp_netns_dev_get_knob(tb->ns[1], tb->dev[1], "gro_flush_timeout", &v));
	CHECK(v == 30000, "gro_flush_timeout read back %llu", (unsigned long long)v);
	CHECK_RC(bp_netns_dev_set_knob(tb->ns[1], tb->dev[1], "gro_flush_timeout", 0));
	CHECK(bp_netns_dev_get_knob(tb->ns[1], "nope0", "gro_flush_timeout", &v) == -ENOENT,
	      "%s", bp_last_error());
}

/* ---- refusals ---- */

static void refusals(const struct bp_testbed *tb)
{
	struct bp_testbed other;
	int status, rc;
	pid_t pid;

	/* an existing bed is never touched */
	rc = bp_testbed_up(&other, tb->name, 1, false);
	CHECK(rc == -EEXIST, "second up gave %d (%s)", rc, bp_last_error());
	CHECK(ns_file_exists(tb->ns[0]) && ns_file_exists(tb->ns[1]), "refused up removed the bed");
	CHECK(bp_testbed_up(&other, "bad/name", 1, false) == -EINVAL, "bad name accepted");
	CHECK(bp_testbed_up(&other, "q0", 0, false) == -EINVAL, "0 queues accepted");
	CHECK(bp_testbed_enter(tb, 2) == -EINVAL, "side 2 accepted");
	CHECK(bp_netns_enter("bp-no-such-bed-a") == -ENOENT, "%s", bp_last_error());

	/* not root: refused with the reason, before touching anything */
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct bp_testbed x;
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(3);
		rc = bp_testbed_up(&x, "nonroot", 1, false);
		_exit(rc == -EPERM && strstr(bp_last_error(), "run as root") ? 0 : 1);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "non-root up: status 0x%x", status);
	CHECK(!bp_testbed_exists("nonroot"), "non-root made a bed");
}

/* ---- a build that fails halfway leaves nothing behind ---- */

static void failed_builds(const char *name)
{
	char dir[] = "/tmp/bpt-fakebin-XXXXXX", tool[64], path[512];
	const char *old = getenv("PATH");
	struct bp_testbed tb;
	FILE *f;
	int rc;

	/* an `ethtool` that fails: up gets as far as the veth pair, then must undo it */
	CHECK(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(tool, sizeof(tool), "%s/ethtool", dir);
	f = fopen(tool, "w");
	CHECK(f, "fopen %s", tool);
	fprintf(f, "#!/bin/sh\necho 'fake ethtool refuses' >&2\nexit 3\n");
	fclose(f);
	chmod(tool, 0755);
	snprintf(path, sizeof(path), "%s:%s", dir, old ? old : "/usr/sbin:/usr/bin:/sbin:/bin");
	setenv("PATH", path, 1);
	rc = bp_testbed_up(&tb, name, 1, false);
	printf("with a failing ethtool: %d (%s)\n", rc, bp_last_error());
	CHECK(rc == -EIO, "got %d", rc);
	CHECK(strstr(bp_last_error(), "fake ethtool refuses") && strstr(bp_last_error(), "exit 3"),
	      "stderr not in the message: %s", bp_last_error());
	CHECK(!bp_testbed_exists(name), "a failed up left namespaces behind");

	/* no `ip` at all */
	setenv("PATH", dir, 1);
	unlink(tool);
	rc = bp_testbed_up(&tb, name, 1, false);
	printf("without ip: %d (%s)\n", rc, bp_last_error());
	CHECK(rc == -ENOENT && strstr(bp_last_error(), "ip: not found"), "got %d", rc);
	CHECK(!bp_testbed_exists(name), "namespaces left behind");
	if (old)
		setenv("PATH", old, 1);
	else
		unsetenv("PATH");
	rmdir(dir);
}

/* ---- a second bed: two queues, threaded NAPI ---- */

static void multiqueue_threaded(const char *name)
{
	struct bp_testbed tb, seen;
	uint32_t ids[MAXQ];
	struct bp_napi_info info;
	int n, saved;

	CHECK_RC(bp_testbed_up(&tb, name, 2, true));
	for (int side = 0; side < 2; side++) {
		n = bp_testbed_napi_ids(&tb, side, ids, MAXQ);
		CHECK(n == 2, "side %d has %d NAPIs, want one per queue", side, n);
		CHECK_RC(bp_netns_save(&saved));
		CHECK_RC(bp_testbed_enter(&tb, side));
		for (int i = 0; i < n; i++) {
			CHECK_RC(bp_napi_get(ids[i], &info));
			CHECK(info.threaded == 1 && info.pid > 0, "napi %u threaded %u pid %d", ids[i],
			      info.threaded, info.pid);
		}
		CHECK_RC(bp_netns_restore(saved));
	}
	CHECK_RC(bp_testbed_open(&seen, name));
	CHECK(seen.queues == 2 && seen.threaded, "open: queues %d threaded %d", seen.queues,
	      seen.threaded);
	CHECK(seen.ifindex[0] == tb.ifindex[0] && seen.ifindex[1] == tb.ifindex[1] &&
		      !strcmp(seen.addr[1], tb.addr[1]), "open described another bed");
	CHECK_RC(bp_testbed_down(&tb));
	CHECK(!bp_testbed_exists(name), "still there after down");
}

int main(void)
{
	char name[32], name2[32], name3[32];
	struct bp_testbed tb;
	uint32_t ids_a[MAXQ], ids_b[MAXQ];
	int na, nb;

	setvbuf(stdout, NULL, _IOLBF, 0);
	bpt_require_root("test_testbed_napi");
	bpt_testbed_name("t", name, sizeof(name));
	bpt_testbed_name("tq", name2, sizeof(name2));
	bpt_testbed_name("tf", name3, sizeof(name3));
	bpt_testbed_guard(name);
	bpt_testbed_guard(name2);
	bpt_testbed_guard(name3);
	CHECK(!bp_testbed_exists(name), "a bed named %s is already here", name);

	CHECK_RC(bp_testbed_up(&tb, name, 1, false));
	printf("bed %s: %s %s=%s  <->  %s %s=%s, ifindex %u/%u\n", tb.name, tb.ns[0], tb.dev[0],
	       tb.addr[0], tb.ns[1], tb.dev[1], tb.addr[1], tb.ifindex[0], tb.ifindex[1]);
	CHECK(bp_testbed_exists(name), "bp_testbed_exists says no");
	CHECK(ns_file_exists(tb.ns[0]) && ns_file_exists(tb.ns[1]), "namespace files missing");
	CHECK(tb.ifindex[0] && tb.ifindex[1], "no ifindex");

	/* NAPIs exist as soon as GRO and the link are up, before any traffic */
	na = bp_testbed_napi_ids(&tb, 0, ids_a, MAXQ);
	nb = bp_testbed_napi_ids(&tb, 1, ids_b, MAXQ);
	CHECK(na == 1 && nb == 1, "NAPIs: side a %d, side b %d (%s)", na, nb, bp_last_error());
	CHECK(ids_a[0] >= BP_MIN_NAPI_ID && ids_b[0] >= BP_MIN_NAPI_ID && ids_a[0] != ids_b[0],
	      "ids %u %u", ids_a[0], ids_b[0]);
	printf("napi ids before traffic: side a %u, side b %u\n", ids_a[0], ids_b[0]);

	refusals(&tb);
	tcp_between_sides(&tb, ids_a, na, ids_b, nb);
	napi_settings(&tb, ids_b[0]);
	dev_knobs(&tb);

	CHECK_RC(bp_testbed_down(&tb));
	CHECK(!ns_file_exists(tb.ns[0]) && !ns_file_exists(tb.ns[1]), "namespaces left behind");
	CHECK(!bp_testbed_exists(name), "bp_testbed_exists says yes after down");
	CHECK(bp_testbed_down(&tb) == -ENOENT, "second down: %s", bp_last_error());

	multiqueue_threaded(name2);
	failed_builds(name3);
	printf("all checks passed\n");
	return bpt_exit_status();
}
