/* SPDX-License-Identifier: MIT */
/*
 * The agent's session (agent/session.c) without a client, on the control
 * protocol: each bad request is one CTL_ERROR (errno, one line) numbered as the
 * request, and the session goes on; bytes that are not one control message are
 * refused with seq 0; the requests that need no privilege answer (HELLO, a path
 * report by device and by address, SAMPLE); a server start that the agent refuses
 * before it runs anything (a tool it does not know, a CPU outside its --cpus, a
 * file namespace through a standing agent) leaves nothing running; BYE ends it;
 * a change that fails leaves no journal behind. (The changes themselves,
 * journalled and restored, are tests/integration/test_agent_journal.c; servers
 * started for real are test_agent_servers.c.)
 */
#include <errno.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpt_agent.h"

#include "tools/agent/session.h"
#include "tools/link/agent_wire.h"

static char dir[64];
static uint8_t wire[SESSION_REPLY_MAX];
static struct ctl_msg m, reply;
static struct agent_cfg cfg;
static struct session s;
static uint32_t next_seq = 100;

/* send_raw - bytes to the session; its reply decoded into reply. */
static void send_raw(const void *bytes, size_t len, bool *end)
{
	size_t n = session_handle(&s, bytes, len, wire, end);

	assert_true(n >= CTL_HDR_LEN && n <= sizeof(wire));
	assert_int_equal(ctl_decode(wire, n, &reply, NULL), (int)n);
}

/* ask - m (numbered) to the session; the reply carries its seq. */
static void ask(bool *end)
{
	static uint8_t buf[CTL_HDR_LEN + CTL_MAX_BODY];
	int n;

	m.seq = ++next_seq;
	n = ctl_encode(&m, buf, sizeof(buf));
	assert_true(n > 0);
	send_raw(buf, (size_t)n, end);
	assert_int_equal(reply.seq, m.seq);
}

/* refused - m is answered CTL_ERROR with err and a reason starting with why; the session goes on. */
static void refused(int err, const char *why)
{
	char reason[CTL_MAX_TEXT];
	uint64_t e = 0;
	bool end;

	ask(&end);
	assert_false(end);
	if (reply.type != CTL_ERROR)
		fail_msg("%s: answered %s, wanted ERROR '%s'", ctl_type_name(m.type), ctl_type_name(reply.type), why);
	assert_int_equal(ctl_get_u64(&reply, CTL_T_ERRNO, &e), 0);
	assert_int_equal(ctl_get_text(&reply, CTL_T_REASON, reason, sizeof(reason)), 0);
	if ((int)e != err || strncmp(reason, why, strlen(why)))
		fail_msg("%s: got %d '%s', wanted %d '%s...'", ctl_type_name(m.type), (int)e, reason, err, why);
}

static void req(uint16_t type)
{
	ctl_msg_init(&m, type);
}

static void set(const char *settings)
{
	ctl_put_u64(&m, CTL_T_FLAGS, CTL_F_SET);
	ctl_put_text(&m, CTL_T_SETTINGS, settings);
}

static void test_refusals(void **state)
{
	uint8_t buf[64];
	bool end;
	int n;

	session_start(&s, &cfg, "unit");
	/* not a control message: seq 0, a reason, and the session goes on */
	send_raw("hello", 5, &end);
	assert_int_equal(reply.type, CTL_ERROR);
	assert_int_equal(reply.seq, 0);
	req(CTL_SAMPLE);
	n = ctl_encode(&m, buf, sizeof(buf));
	send_raw(buf, (size_t)n - 1, &end); /* cut short */
	assert_int_equal(reply.type, CTL_ERROR);
	memset(buf + n, 0, 4);
	send_raw(buf, (size_t)n + 4, &end); /* bytes after it */
	assert_int_equal(reply.type, CTL_ERROR);
	assert_int_equal(reply.seq, 0);

	req(CTL_NAPI);
	refused(EINVAL, "NAPI needs a NAPI id");
	req(CTL_NAPI);
	ctl_put_u64(&m, CTL_T_NAPI_ID, 0);
	refused(EINVAL, "NAPI needs a NAPI id");
	req(CTL_NAPI);
	ctl_put_u64(&m, CTL_T_NAPI_ID, 300);
	ctl_put_u64(&m, CTL_T_FLAGS, CTL_F_SET);
	refused(EINVAL, "NAPI with a change needs its settings");
	req(CTL_NAPI);
	ctl_put_u64(&m, CTL_T_NAPI_ID, 300);
	set("irq=5");
	refused(EINVAL, "irq is read-only");
	req(CTL_NAPI);
	ctl_put_u64(&m, CTL_T_NAPI_ID, 300);
	set("defer-hard-irqs=1,,threaded=1");
	refused(EINVAL, "'defer-hard-irqs=1,,threaded=1': an empty item");
	req(CTL_KNOB);
	refused(EINVAL, "KNOB needs a device name");
	req(CTL_KNOB);
	ctl_put_text(&m, CTL_T_DEV, "eth0");
	refused(EINVAL, "KNOB needs a knob name");
	req(CTL_KNOB);
	ctl_put_text(&m, CTL_T_DEV, "eth0");
	ctl_put_text(&m, CTL_T_KNOB, "mtu");
	ctl_put_u64(&m, CTL_T_FLAGS, CTL_F_SET);
	ctl_put_u64(&m, CTL_T_VALUE, 9000);
	refused(EINVAL, "KNOB mtu: not a knob the agent reads or changes");
	/* a read is checked as a write is: no other attribute of the device */
	req(CTL_KNOB);
	ctl_put_text(&m, CTL_T_DEV, "lo");
	ctl_put_text(&m, CTL_T_KNOB, "mtu");
	refused(EINVAL, "KNOB mtu: not a knob the agent reads or changes");
	req(CTL_COALESCE);
	ctl_put_text(&m, CTL_T_DEV, "a/b");
	refused(EINVAL, "COALESCE needs a device name");
	req(CTL_COALESCE);
	ctl_put_text(&m, CTL_T_DEV, "eth0");
	set("rx-usec=1");
	refused(EINVAL, "unknown coalescing key 'rx-usec'");
	req(CTL_CHANNELS);
	ctl_put_text(&m, CTL_T_DEV, "eth0");
	set("queues=4");
	refused(EINVAL, "unknown channel kind 'queues'");
	req(CTL_COALESCE);
	ctl_put_text(&m, CTL_T_DEV, "nosuch0");
	refused(ENODEV, "coalesce-get nosuch0: no such device in this network namespace");
	req(CTL_PATH_REPORT);
	ctl_put_text(&m, CTL_T_DEV, "nosuch0");
	refused(ENODEV, "path nosuch0: no such device in this network namespace");
	req(CTL_PATH_REPORT);
	ctl_put_text(&m, CTL_T_ADDR, "203.0.113.9");
	refused(EADDRNOTAVAIL, "PATH_REPORT 203.0.113.9: no device of this host has that address");
	req(CTL_PATH_REPORT);
	ctl_put_text(&m, CTL_T_ADDR, "not an address");
	refused(EINVAL, "PATH_REPORT not an address: not an address");
	/* messages for servers: one the session started, and only those types */
	req(CTL_START);
	refused(EINVAL, "START goes to a server this session started");
	req(CTL_START);
	ctl_put_u64(&m, CTL_T_SERVER, 5);
	refused(ENOENT, "START for server 5: no such server in this session");
	req(CTL_SERVER_STOP);
	ctl_put_u64(&m, CTL_T_SERVER, 7);
	refused(ENOENT, "SERVER_STOP: no server 7 in this session");
	req(CTL_MODE_SET);
	refused(EPROTO, "MODE_SET is not a request the agent takes");
	req(CTL_PATH);
	refused(EPROTO, "PATH is not a request the agent takes");
	/* still serving after all of it */
	req(CTL_HELLO);
	ask(&end);
	assert_int_equal(reply.type, CTL_HELLO_OK);
	assert_int_equal(s.changes, 0);
	assert_int_equal(session_end(&s, "test"), 0);
}

static void test_server_refusals(void **state)
{
	char cmd[160];

	cfg.cpus[0] = 0;
	cfg.ncpus = 1;
	snprintf(cfg.cpus_text, sizeof(cfg.cpus_text), "0");
	session_start(&s, &cfg, "unit");
	req(CTL_SERVER_START);
	refused(EINVAL, "SERVER_START: which server");
	req(CTL_SERVER_START);
	ctl_put_text(&m, CTL_T_TOOL, "sshd");
	refused(EINVAL, "SERVER_START: which server");
	req(CTL_SERVER_START);
	ctl_put_text(&m, CTL_T_TOOL, "rr");
	ctl_put_i64(&m, CTL_T_CPU, 5);
	refused(EINVAL, "SERVER_START: CPU 5 is not one the agent may use (its --cpus 0)");
	req(CTL_SERVER_START);
	ctl_put_text(&m, CTL_T_TOOL, "rr");
	ctl_put_u64(&m, CTL_T_PORT, 70000);
	refused(EINVAL, "SERVER_START rr: a port");
	req(CTL_SERVER_START);
	ctl_put_text(&m, CTL_T_TOOL, "rr");
	ctl_put_text(&m, CTL_T_ARGS, "--ns ram:1M");
	refused(EINVAL, "SERVER_START rr: a port, thread count, delay, priority or argument");
	/* a standing agent serves no file of its host to a key holder */
	cfg.listen = "127.0.0.1:0";
	req(CTL_SERVER_START);
	ctl_put_text(&m, CTL_T_TOOL, "target");
	ctl_put_text(&m, CTL_T_ARGS, "--ns ram:1M --ns file:/etc/passwd");
	refused(EACCES, "SERVER_START target: a standing agent serves RAM namespaces only");
	req(CTL_SERVER_START);
	ctl_put_text(&m, CTL_T_TOOL, "target");
	ctl_put_text(&m, CTL_T_ARGS, "--ns='unbalanced");
	refused(EINVAL, "SERVER_START target: its arguments have unbalanced quotes");
	cfg.listen = NULL;
	cfg.ncpus = 0;
	cfg.cpus_text[0] = 0;
	/* none of these took the host's lock or wrote a journal */
	assert_int_equal(s.journal.fd, -1);
	session_end(&s, "test");
	snprintf(cmd, sizeof(cmd), "ls '%s'/*.journal >/dev/null 2>&1", dir);
	assert_int_not_equal(system(cmd), 0);
}

static void test_answers(void **state)
{
	struct aw_hello h;
	struct bp_path_report *r = malloc(sizeof(*r));
	struct evidence ev;
	uint64_t v;
	bool end;

	assert_non_null(r);
	cfg.cpus[0] = 0;
	cfg.ncpus = 1;
	session_start(&s, &cfg, "unit");
	req(CTL_HELLO);
	ctl_put_text(&m, CTL_T_TOOL, "agent");
	ask(&end);
	assert_int_equal(aw_hello_get(&reply, &h), 0);
	assert_int_equal(h.pid, (uint32_t)getpid());
	assert_int_equal(h.ncpus, 1);
	assert_int_equal(h.cpus[0], 0);
	assert_true(h.kernel[0] && h.hostname[0] && h.netns);
	/* the path report of loopback, by name and by its address: the same device */
	req(CTL_PATH_REPORT);
	ctl_put_text(&m, CTL_T_DEV, "lo");
	ask(&end);
	assert_int_equal(reply.type, CTL_PATH);
	assert_int_equal(aw_path_get(&reply, r), 0);
	assert_string_equal(r->dev, "lo");
	assert_int_not_equal(r->err[BP_PATH_COALESCE], 0);
	req(CTL_PATH_REPORT);
	ctl_put_text(&m, CTL_T_ADDR, "127.0.0.1");
	ask(&end);
	assert_int_equal(aw_path_get(&reply, r), 0);
	assert_string_equal(r->dev, "lo");
	/* the host's evidence: no server, nothing counted but the namespace */
	req(CTL_SAMPLE);
	ask(&end);
	assert_int_equal(reply.type, CTL_EVIDENCE);
	assert_int_equal(ev_decode(&reply, &ev), 0);
	assert_int_equal(ev.nthr, 0);
	assert_true(ev.interval_ns > 0);
	req(CTL_BYE);
	ask(&end);
	assert_true(end);
	assert_int_equal(reply.type, CTL_BYE);
	assert_int_equal(ctl_get_u64(&reply, CTL_T_RESTORED, &v), 0);
	assert_int_equal(v, 0);
	assert_true(s.ended);
	assert_int_equal(session_end(&s, "again"), 0); /* idempotent */
	cfg.ncpus = 0;
	free(r);
}

/* A change that fails at its first step still leaves no journal once the session ends. */
static void test_failed_change_leaves_nothing(void **state)
{
	char cmd[160];

	session_start(&s, &cfg, "unit");
	req(CTL_NAPI);
	ctl_put_u64(&m, CTL_T_NAPI_ID, 4294967295u);
	set("defer-hard-irqs=1");
	{
		bool end;

		ask(&end);
	}
	assert_int_equal(reply.type, CTL_ERROR);
	assert_int_equal(s.changes, 0);
	session_end(&s, "test");
	snprintf(cmd, sizeof(cmd), "ls '%s'/*.journal >/dev/null 2>&1", dir);
	assert_int_not_equal(system(cmd), 0);
}

/*
 * test_hello_sysctl_unknown - an agent that cannot read net.core.busy_poll/busy_read
 * sends no value for them (never -1) and says why; the client takes them as unknown
 * with that reason, and a hello without them (nor a reason) as unknown too.
 */
static void test_hello_sysctl_unknown(void **state)
{
	struct aw_hello h = { .pid = 7, .busy_poll = -1, .busy_read = 0 }, got;
	int64_t v;

	(void)state;
	snprintf(h.version, sizeof(h.version), "1");
	snprintf(h.hostname, sizeof(h.hostname), "b");
	snprintf(h.kernel, sizeof(h.kernel), "6.18");
	snprintf(h.sysctl_why, sizeof(h.sysctl_why), "net.core.busy_poll cannot be read: Permission denied");
	aw_hello_put(&m, &h);
	assert_int_equal(ctl_get_i64(&m, CTL_T_BUSY_POLL, &v), -ENOENT);
	assert_int_equal(ctl_get_i64(&m, CTL_T_BUSY_READ, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(aw_hello_get(&m, &got), 0);
	assert_int_equal(got.busy_poll, -1);
	assert_int_equal(got.busy_read, 0);
	assert_string_equal(got.sysctl_why, h.sysctl_why);
	/* both read: no reason */
	h.busy_poll = 50;
	h.sysctl_why[0] = 0;
	aw_hello_put(&m, &h);
	assert_int_equal(aw_hello_get(&m, &got), 0);
	assert_int_equal(got.busy_poll, 50);
	assert_string_equal(got.sysctl_why, "");
	/* unknown without a reason sent: still a reason for the reader */
	h.busy_read = -1;
	aw_hello_put(&m, &h);
	assert_int_equal(aw_hello_get(&m, &got), 0);
	assert_int_equal(got.busy_read, -1);
	assert_true(got.sysctl_why[0] != 0);
}

/*
 * test_path_features - the device's GRO and TSO beside a path report: each sent only when
 * read, so an unreadable one (and an agent that predates them) is unknown, never off; a
 * value not 0 or 1 does not decode. The agent's own reply carries them for a device it reads.
 */
static void test_path_features(void **state)
{
	struct aw_features f = { .gro = DIAG_ON, .tso = DIAG_OFF }, got;
	uint64_t v;
	bool end = false;

	(void)state;
	ctl_msg_init(&m, CTL_PATH);
	aw_features_put(&m, &f);
	assert_int_equal(aw_features_get(&m, &got), 0);
	assert_true(got.gro == DIAG_ON && got.tso == DIAG_OFF);
	ctl_msg_init(&m, CTL_PATH);
	f.gro = DIAG_UNKNOWN;
	f.tso = DIAG_ON;
	aw_features_put(&m, &f);
	assert_int_equal(ctl_get_u64(&m, CTL_T_P_GRO, &v), -ENOENT);
	assert_int_equal(aw_features_get(&m, &got), 0);
	assert_true(got.gro == DIAG_UNKNOWN && got.tso == DIAG_ON);
	ctl_msg_init(&m, CTL_PATH);
	ctl_put_u64(&m, CTL_T_P_TSO, 2);
	assert_int_equal(aw_features_get(&m, &got), -EPROTO);
	/* the agent's reply for loopback: read there, so known */
	session_start(&s, &cfg, "unit");
	req(CTL_PATH_REPORT);
	ctl_put_text(&m, CTL_T_DEV, "lo");
	ask(&end);
	assert_int_equal(reply.type, CTL_PATH);
	assert_int_equal(aw_features_get(&reply, &got), 0);
	assert_true(got.gro != DIAG_UNKNOWN && got.tso != DIAG_UNKNOWN);
	req(CTL_BYE);
	ask(&end);
}

static int setup(void **state)
{
	bpt_tmpdir("test-session", dir, sizeof(dir));
	cfg.state_dir = dir;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_server_refusals),
		cmocka_unit_test(test_answers),
		cmocka_unit_test(test_failed_change_leaves_nothing),
		cmocka_unit_test(test_hello_sysctl_unknown),
		cmocka_unit_test(test_path_features),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
