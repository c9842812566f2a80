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
#include "tools/link/agent_wire.h"
#include "tools/remote/agent_client.h"
#include "tools/harness/control.h"

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

static struct ctl_msg rq, rp;

/* ask - one request (bpt_req's form); want_err 0: it must succeed, else that errno with a reason starting why. */
static void ask(struct agent_conn *c, uint16_t type, uint32_t id, const char *dev, const char *set, int want_err,
		const char *why)
{
	char reason[CTL_MAX_TEXT];
	int e;

	bpt_req(&rq, type, id, dev, set);
	e = bpt_ask(c, &rq, &rp, reason, sizeof(reason));
	BPT_CHECK(e == want_err && (!want_err || !strncmp(reason, why, strlen(why))),
		  "%s %s: errno %d '%s', wanted %d '%s'", ctl_type_name(type), set ? set : "", e, e ? reason : "",
		  want_err, why ? why : "");
}

/* bye - BYE: the session's changes restored (counted). */
static void bye(struct agent_conn *c, unsigned want)
{
	unsigned restored;
	char err[512];

	BPT_CHECK(agent_close(c, &restored, err, sizeof(err)) == 0, "BYE: %s", err);
	BPT_CHECK(restored == want, "BYE: restored %u, wanted %u", restored, want);
}

static void start_stdio(struct bpt_agent *a, struct agent_conn *c)
{
	const char *args[] = { "--stdio", "--state-dir", state, NULL };

	bpt_agent_start(a, tb.ns[1], true, args);
	bpt_agent_conn(a, c);
}

/* The changes every case makes (channels first: it may renew NAPIs). */
static void change(struct agent_conn *c, bool channels)
{
	if (channels)
		ask(c, CTL_CHANNELS, 0, tb.dev[1], "rx=1", 0, NULL);
	ask(c, CTL_NAPI, napi_id, NULL, "defer-hard-irqs=3,gro-flush-timeout=50000", 0, NULL);
	ask(c, CTL_KNOB, 0, tb.dev[1], "napi_defer_hard_irqs=7", 0, NULL);
}

static void normal_end(const struct values *before)
{
	struct bpt_agent a;
	struct agent_conn c;
	struct values v;

	start_stdio(&a, &c);
	change(&c, false);
	ask(&c, CTL_COALESCE, 0, tb.dev[1], "rx-usecs=0", EOPNOTSUPP,
	    "coalesce-get bpvb: the veth driver has no interrupt coalescing");
	read_values(&v);
	BPT_CHECK(v.defer == 7 && v.gro_flush == 50000 && v.knob == 7, "changed: defer %u gro %llu knob %llu",
		  v.defer, (unsigned long long)v.gro_flush, (unsigned long long)v.knob);
	BPT_CHECK(journals() == 1, "%d journals during the session", journals());
	bye(&c, 2);
	BPT_CHECK(bpt_agent_end(&a, 0, 10000) == 0, "the agent's exit after bye");
	read_values(&v);
	same(&v, before, "a normal end restores the NAPI and the knob");
	BPT_CHECK(journals() == 0, "a journal is left after a normal end");
}

/* A standing agent in b, a client in a that changes a NAPI and then resets its connection. */
/* tcp_client - a client in a of the standing agent at hostport, with the key. */
static void tcp_client(struct agent_conn *c, const char *hostport)
{
	struct agent_remote_opts o;
	char err[512];
	int home;

	agent_remote_defaults(&o);
	snprintf(o.remote, sizeof(o.remote), "%s", hostport);
	snprintf(o.key_file, sizeof(o.key_file), "%s", key);
	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(&tb, 0) == 0, "%s", bp_last_error());
	BPT_CHECK(agent_open(c, &o, err, sizeof(err)) == 0, "%s", err);
	BPT_CHECK(bp_netns_restore(home) == 0, "%s", bp_last_error());
}

static void client_vanishes(const struct values *before)
{
	char listen[64], hostport[64];
	const char *args[] = { "--listen", listen, "--key-file", key, "--state-dir", state, NULL };
	struct bpt_agent a;
	struct agent_conn c;
	struct values v;

	snprintf(listen, sizeof(listen), "%s:0", tb.addr[1]);
	bpt_agent_start(&a, tb.ns[1], false, args);
	bpt_agent_wait_listening(&a, 5000);
	snprintf(hostport, sizeof(hostport), "%s:%u", tb.addr[1], a.port);
	tcp_client(&c, hostport);
	ask(&c, CTL_NAPI, napi_id, NULL, "defer-hard-irqs=3,gro-flush-timeout=50000", 0, NULL);
	read_values(&v);
	BPT_CHECK(v.defer == 3 && v.gro_flush == 50000, "changed over TCP");
	bpt_vanish(c.r.rfd, BPT_RST);
	c.r.rfd = c.r.wfd = -1;
	c.open = false;
	agent_close(&c, NULL, NULL, 0);
	BPT_CHECK(bpt_agent_wait_log(&a, "session ended (the connection failed", 10000),
		  "the agent did not see the client go");
	BPT_CHECK(bpt_agent_wait_log(&a, "restored napi", 5000), "no restore logged");
	read_values(&v);
	same(&v, before, "a client that vanishes (RST) gets its NAPI settings restored");

	/* the agent told to stop while a session has a change: it restores, then exits 0 */
	tcp_client(&c, hostport);
	ask(&c, CTL_NAPI, napi_id, NULL, "defer-hard-irqs=3,gro-flush-timeout=50000", 0, NULL);
	BPT_CHECK(bpt_agent_end(&a, SIGTERM, 5000) == 0, "the standing agent's exit");
	BPT_CHECK(strstr(a.log, "session ended (the agent is stopping)"), "no session end on SIGTERM");
	c.open = false; /* it is gone: no BYE */
	agent_close(&c, NULL, NULL, 0);
	read_values(&v);
	same(&v, before, "a standing agent stopped by SIGTERM restores its sessions' changes");
	BPT_CHECK(journals() == 0, "a journal is left after the client vanished");
}

/* Two sessions at once: the second may read, but not change the host until the first ends. */
static void one_at_a_time(const struct values *before)
{
	struct bpt_agent first, second;
	struct agent_conn c1, c2;
	struct bp_napi_info n;
	struct values v;

	start_stdio(&first, &c1);
	start_stdio(&second, &c2);
	change(&c1, false);
	ask(&c2, CTL_NAPI, napi_id, NULL, NULL, 0, NULL);
	BPT_CHECK(aw_napi_get(rp.body, rp.len, &n) == 0 && n.defer_hard_irqs == 7, "the second reads defer %u",
		  n.defer_hard_irqs);
	ask(&c2, CTL_NAPI, napi_id, NULL, "defer-hard-irqs=1", EBUSY,
	    "another session is changing this host's settings (pid ");
	read_values(&v);
	BPT_CHECK(v.defer == 7, "the refused change changed something");
	bye(&c1, 2);
	ask(&c2, CTL_NAPI, napi_id, NULL, "defer-hard-irqs=1", 0, NULL);
	bye(&c2, 1);
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
	struct agent_conn c;
	struct values v;

	start_stdio(&a, &c);
	change(&c, true);
	read_values(&v);
	BPT_CHECK(v.rx == 1 && v.defer == 7 && v.knob == 7, "changed: rx %u defer %u knob %llu", v.rx,
		  v.defer, (unsigned long long)v.knob);
	BPT_CHECK(bpt_agent_end(&a, SIGKILL, 5000) == 128 + SIGKILL, "the agent did not die of SIGKILL");
	c.open = false;
	agent_close(&c, NULL, NULL, 0);
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
		start_stdio(&b, &c); /* its HELLO answered: it restored before serving */
		BPT_CHECK(bpt_agent_wait_log(&b, "is gone; restoring what it changed", 10000),
			  "the restarted agent did not restore");
		read_values(&v);
		same(&v, before, "after SIGKILL, the next agent restores before serving");
		bye(&c, 0);
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
