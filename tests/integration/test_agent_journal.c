/* SPDX-License-Identifier: MIT */
/*
 * The agent puts back what it changed, as root on a veth test bed with the agent
 * in the bed's second namespace (through `ip netns exec`, as on a host of its own):
 *   - a normal end (bye): a NAPI's settings and a device knob changed, coalescing
 *     refused on veth (said so, nothing journalled), all back afterwards;
 *   - the client vanishing from a standing agent (its TCP connection reset from
 *     the other namespace): back; the standing agent stopped by SIGTERM mid-session:
 *     back;
 *   - two sessions at once: the second is refused a change (naming the first) until
 *     the first has ended and restored, so two never restore over each other;
 *   - the agent SIGKILLed after changing channels, a NAPI and a knob: the values
 *     stay changed and the journal stays; `busypoll agent --restore` in another
 *     namespace leaves it (and says so); in the right one it puts everything back;
 *     and again with a plain restart of the agent instead of --restore.
 * Every value is read back from the kernel (netdev netlink, ethtool, sysfs).
 * Not root: skipped (77).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <busypoll/loop.h>
#include <busypoll/napi.h>
#include <busypoll/nic.h>

#include "bpt_agent.h"
#include "bpt_faults.h"
#include "bpt_testbed.h"
#include "bptest.h"
#include "tools/common/remote.h"

static struct bp_testbed tb;
static char dir[64], state[128], key[128];
static uint32_t napi_id;

/* What the test watches on side b, read from the kernel. */
struct values {
	uint32_t defer;
	uint64_t gro_flush;
	uint64_t knob;       /* bpvb's napi_defer_hard_irqs (sysfs) */
	uint32_t rx;         /* bpvb's rx channels */
};

static void read_values(struct values *v)
{
	struct bp_napi_info n;
	struct bp_nic_channels ch;
	int home;

	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(&tb, 1) == 0, "%s", bp_last_error());
	BPT_CHECK(bp_napi_get(napi_id, &n) == 0, "napi-get %u: %s", napi_id, bp_last_error());
	BPT_CHECK(bp_nic_channels_get(tb.dev[1], &ch) == 0, "%s", bp_last_error());
	BPT_CHECK(bp_netns_restore(home) == 0, "%s", bp_last_error());
	v->defer = n.defer_hard_irqs;
	v->gro_flush = n.gro_flush_timeout_ns;
	v->rx = ch.count[BP_CHAN_RX];
	BPT_CHECK(bp_netns_dev_get_knob(tb.ns[1], tb.dev[1], "napi_defer_hard_irqs", &v->knob) == 0,
		  "%s", bp_last_error());
}

static void same(const struct values *a, const struct values *b, const char *when)
{
	BPT_CHECK(a->defer == b->defer && a->gro_flush == b->gro_flush && a->knob == b->knob &&
		  a->rx == b->rx, "%s: defer %u/%u gro-flush %llu/%llu knob %llu/%llu rx %u/%u", when,
		  a->defer, b->defer, (unsigned long long)a->gro_flush, (unsigned long long)b->gro_flush,
		  (unsigned long long)a->knob, (unsigned long long)b->knob, a->rx, b->rx);
	printf("ok: %s\n", when);
}

static int journals(void)
{
	struct dirent *e;
	DIR *d = opendir(state);
	int n = 0;

	while (d && (e = readdir(d)))
		n += strstr(e->d_name, ".journal") != NULL;
	if (d)
		closedir(d);
	return n;
}

static void call(struct bpt_agent *a, const char *req, const char *want)
{
	char reply[4096];

	BPT_CHECK(bpt_agent_call(a, req, reply, sizeof(reply), 10000), "%s: no reply", req);
	BPT_CHECK(!strncmp(reply, want, strlen(want)), "%s: '%s', wanted '%s...'", req, reply, want);
}

static void start_stdio(struct bpt_agent *a)
{
	const char *args[] = { "--stdio", "--state-dir", state, NULL };

	bpt_agent_start(a, tb.ns[1], true, args);
}

/* The changes every case makes (channels first: it may renew NAPIs). */
static void change(struct bpt_agent *a, bool channels)
{
	char req[128];

	if (channels) {
		snprintf(req, sizeof(req), "channels-set %s rx=1", tb.dev[1]);
		call(a, req, "ok");
	}
	snprintf(req, sizeof(req), "napi-set %u defer-hard-irqs=3,gro-flush-timeout=50000", napi_id);
	call(a, req, "ok");
	snprintf(req, sizeof(req), "knob-set %s napi_defer_hard_irqs=7", tb.dev[1]);
	call(a, req, "ok");
}

static void normal_end(const struct values *before)
{
	struct bpt_agent a;
	struct values v;
	char req[128];

	start_stdio(&a);
	call(&a, "hello", "ok busypoll-agent 1");
	change(&a, false);
	snprintf(req, sizeof(req), "coalesce-set %s rx-usecs=0", tb.dev[1]);
	call(&a, req, "error 95 coalesce-get bpvb: the veth driver has no interrupt coalescing");
	read_values(&v);
	BPT_CHECK(v.defer == 7 && v.gro_flush == 50000 && v.knob == 7, "changed: defer %u gro %llu knob %llu",
		  v.defer, (unsigned long long)v.gro_flush, (unsigned long long)v.knob);
	BPT_CHECK(journals() == 1, "%d journals during the session", journals());
	call(&a, "bye", "ok restored 2");
	BPT_CHECK(bpt_agent_end(&a, 0, 10000) == 0, "the agent's exit after bye");
	read_values(&v);
	same(&v, before, "a normal end restores the NAPI and the knob");
	BPT_CHECK(journals() == 0, "a journal is left after a normal end");
}

/* A standing agent in b, a client in a that changes a NAPI and then resets its connection. */
static void client_vanishes(const struct values *before)
{
	char listen[64], hostport[64], err[256], reply[256], req[128];
	const char *args[] = { "--listen", listen, "--key-file", key, "--state-dir", state, NULL };
	struct bpt_agent a;
	struct remote r;
	struct values v;
	int home;

	snprintf(listen, sizeof(listen), "%s:0", tb.addr[1]);
	bpt_agent_start(&a, tb.ns[1], false, args);
	bpt_agent_wait_listening(&a, 5000);
	snprintf(hostport, sizeof(hostport), "%s:%u", tb.addr[1], a.port);
	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(&tb, 0) == 0, "%s", bp_last_error());
	BPT_CHECK(remote_connect(&r, hostport, key, 5000, err, sizeof(err)) == 0, "%s", err);
	snprintf(req, sizeof(req), "napi-set %u defer-hard-irqs=3,gro-flush-timeout=50000", napi_id);
	BPT_CHECK(remote_call(&r, req, reply, sizeof(reply), err, sizeof(err)) == 0 &&
		  !strcmp(reply, "ok"), "%s: %s %s", req, reply, err);
	BPT_CHECK(bp_netns_restore(home) == 0, "%s", bp_last_error());
	read_values(&v);
	BPT_CHECK(v.defer == 3 && v.gro_flush == 50000, "changed over TCP");
	bpt_vanish(r.rfd, BPT_RST);
	r.rfd = r.wfd = -1;
	remote_close(&r);
	BPT_CHECK(bpt_agent_wait_log(&a, "session ended (the connection failed", 10000),
		  "the agent did not see the client go");
	BPT_CHECK(bpt_agent_wait_log(&a, "restored napi", 5000), "no restore logged");
	read_values(&v);
	same(&v, before, "a client that vanishes (RST) gets its NAPI settings restored");

	/* the agent told to stop while a session has a change: it restores, then exits 0 */
	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(&tb, 0) == 0, "%s", bp_last_error());
	BPT_CHECK(remote_connect(&r, hostport, key, 5000, err, sizeof(err)) == 0, "%s", err);
	BPT_CHECK(remote_call(&r, req, reply, sizeof(reply), err, sizeof(err)) == 0 &&
		  !strcmp(reply, "ok"), "%s: %s %s", req, reply, err);
	BPT_CHECK(bp_netns_restore(home) == 0, "%s", bp_last_error());
	BPT_CHECK(bpt_agent_end(&a, SIGTERM, 5000) == 0, "the standing agent's exit");
	BPT_CHECK(strstr(a.log, "session ended (the agent is stopping)"), "no session end on SIGTERM");
	remote_close(&r);
	read_values(&v);
	same(&v, before, "a standing agent stopped by SIGTERM restores its sessions' changes");
	BPT_CHECK(journals() == 0, "a journal is left after the client vanished");
}

/* Two sessions at once: the second may read, but not change the host until the first ends. */
static void one_at_a_time(const struct values *before)
{
	struct bpt_agent first, second;
	struct values v;
	char req[128];

	start_stdio(&first);
	start_stdio(&second);
	change(&first, false);
	snprintf(req, sizeof(req), "napi-get %u", napi_id);
	call(&second, req, "ok defer-hard-irqs=7");
	snprintf(req, sizeof(req), "napi-set %u defer-hard-irqs=1", napi_id);
	call(&second, req, "error 16 another session is changing this host's settings (pid ");
	read_values(&v);
	BPT_CHECK(v.defer == 7, "the refused change changed something");
	call(&first, "bye", "ok restored 2");
	call(&second, req, "ok");
	call(&second, "bye", "ok restored 1");
	BPT_CHECK(bpt_agent_end(&first, 0, 10000) == 0 && bpt_agent_end(&second, 0, 10000) == 0,
		  "the agents' exits");
	read_values(&v);
	same(&v, before, "two sessions: the second waits for the first, both restore");
	BPT_CHECK(journals() == 0, "a journal is left after two sessions");
}

/* busypoll agent ARGS in namespace ns (NULL: ours); its exit status. */
static int run_agent(const char *ns, const char *const args[])
{
	struct bpt_agent a;

	bpt_agent_start(&a, ns, false, args);
	return bpt_agent_end(&a, 0, 20000);
}

static void killed(const struct values *before, bool restart)
{
	const char *restore[] = { "--restore", "--state-dir", state, NULL };
	struct bpt_agent a, b;
	struct values v;

	start_stdio(&a);
	change(&a, true);
	read_values(&v);
	BPT_CHECK(v.rx == 1 && v.defer == 7 && v.knob == 7, "changed: rx %u defer %u knob %llu", v.rx,
		  v.defer, (unsigned long long)v.knob);
	BPT_CHECK(bpt_agent_end(&a, SIGKILL, 5000) == 128 + SIGKILL, "the agent did not die of SIGKILL");
	read_values(&v);
	BPT_CHECK(v.rx == 1 && v.defer == 7, "a SIGKILLed agent restored something: it cannot have");
	BPT_CHECK(journals() == 1, "%d journals after the SIGKILL", journals());
	if (!restart) {
		/* from the wrong namespace: left, and it says where it belongs */
		BPT_CHECK(run_agent(NULL, restore) == 1, "--restore elsewhere must fail");
		BPT_CHECK(journals() == 1, "--restore elsewhere removed the journal");
		read_values(&v);
		BPT_CHECK(v.rx == 1, "--restore elsewhere changed something");
		BPT_CHECK(run_agent(tb.ns[1], restore) == 0, "--restore failed");
		read_values(&v);
		same(&v, before, "after SIGKILL, --restore puts channels, NAPI and knob back");
	} else {
		start_stdio(&b);
		BPT_CHECK(bpt_agent_wait_log(&b, "is gone; restoring what it changed", 10000),
			  "the restarted agent did not restore");
		call(&b, "hello", "ok busypoll-agent 1");
		read_values(&v);
		same(&v, before, "after SIGKILL, the next agent restores before serving");
		BPT_CHECK(bpt_agent_end(&b, 0, 10000) == 0, "the restarted agent's exit");
	}
	BPT_CHECK(journals() == 0, "the journal is still there");
}

int main(void)
{
	char name[32], cmd[512];
	struct values before;
	uint32_t ids[4];

	bpt_require_root("test_agent_journal");
	bpt_busypoll();
	bpt_testbed_name("agj", name, sizeof(name));
	bpt_testbed_guard(name);
	BPT_CHECK(bp_testbed_up(&tb, name, 2, false) == 0, "%s", bp_last_error());
	BPT_CHECK(bp_testbed_napi_ids(&tb, 1, ids, 4) == 2, "two NAPIs on side b");
	napi_id = ids[0] < ids[1] ? ids[0] : ids[1];
	bpt_tmpdir("agent-journal", dir, sizeof(dir));
	/* journals beside the keys: bpt_rmdir_at_exit removes files, not subdirectories */
	snprintf(state, sizeof(state), "%s", dir);
	snprintf(key, sizeof(key), "%s/agent.key", dir);
	snprintf(cmd, sizeof(cmd), "'%s' agent --new-key '%s' >/dev/null", bpt_busypoll(), key);
	BPT_CHECK(system(cmd) == 0, "--new-key");

	read_values(&before);
	BPT_CHECK(before.rx == 2, "rx %u", before.rx);
	normal_end(&before);
	one_at_a_time(&before);
	client_vanishes(&before);
	killed(&before, false);
	killed(&before, true);

	BPT_CHECK(bp_testbed_down(&tb) == 0, "%s", bp_last_error());
	printf("ok\n");
	return 0;
}
