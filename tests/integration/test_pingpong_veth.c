/* SPDX-License-Identifier: MIT */
/*
 * busypoll pingpong --matrix over the veth test bed (root), the bed's two
 * namespaces as two hosts: BusyPollRxPackets (bp_kstats_read in each namespace)
 * rises only on the sides that busy poll: on neither with no busy polling, on the
 * client only with the client only, on both with both ends. The server is started
 * on host b by its agent (--remote, `ip netns exec` as the way in) and switches
 * modes on the agent's word; a server that a client on host a reaches directly
 * refuses to switch (EPERM, pointing at --remote) and nothing is measured, while
 * a plain run against it (no switch needed) is measured in the server's own mode. The
 * kernel's own evidence, never timings. Not root: skipped with the reason.
 * Usage: integ_test_pingpong_veth [--mode MODE]   (a busy-poll mode)
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "tools/bed/testbed.h"

#include "bpt_agent.h"
#include "bpt_testbed.h"
#include "bptest.h"
#include "tools/pingpong/pingpong.h"

static struct bp_testbed tb;

/* kstats_in - the kernel counters of one side's namespace, read from inside it. */
static void kstats_in(int side, struct bp_kstats *k)
{
	int home;

	BPT_CHECK(bp_netns_save(&home) == 0, "save: %s", bp_last_error());
	BPT_CHECK(bp_testbed_enter(&tb, side) == 0, "enter %d: %s", side, bp_last_error());
	BPT_CHECK(bp_kstats_read(k) == 0, "kstats: %s", bp_last_error());
	BPT_CHECK(bp_netns_restore(home) == 0, "restore: %s", bp_last_error());
}

static char state[64];

/*
 * direct_run - a plain `pingpong --server` in b, a client in a (in mode; --matrix when
 * matrix) reaching it straight, not through an agent: pp_measure's return, co and res
 * as it left them.
 */
static int direct_run(const char *mode, bool matrix, struct pp_opts *co, struct pp_result *res, char *err,
		      size_t errlen)
{
	struct pp_opts so;
	struct pp_server *s;
	int home, ret;

	pp_opts_defaults(&so);
	so.server = true;
	so.quiet = true;
	so.port = 0;
	snprintf(so.host, sizeof(so.host), "%s", tb.addr[1]);
	*co = so;
	co->server = false;
	co->matrix = matrix;
	co->n = 200;
	co->runs = 1;
	co->warmup = 20;
	BPT_CHECK(bpt_mode_usable(mode, &co->mode), "mode %s", mode);
	bp_mode_format(&co->mode, co->mode_text, sizeof(co->mode_text));
	co->server_mode = co->mode;
	snprintf(co->server_mode_text, sizeof(co->server_mode_text), "%s", co->mode_text);
	BPT_CHECK(bp_netns_save(&home) == 0 && bp_testbed_enter(&tb, 1) == 0, "enter b: %s", bp_last_error());
	BPT_CHECK(pp_server_start(&so, &s, err, errlen) == 0, "server: %s", err);
	BPT_CHECK(bp_testbed_enter(&tb, 0) == 0, "enter a: %s", bp_last_error());
	co->port = pp_server_port(s);
	ret = pp_measure(co, NULL, res, err, errlen);
	BPT_CHECK(bp_netns_restore(home) == 0, "restore: %s", bp_last_error());
	pp_server_stop(s);
	return ret;
}

/* direct - a server in b reached straight from a: --matrix is refused its first mode switch. */
static void direct(const char *mode)
{
	struct pp_result *res = calloc(1, sizeof(*res));
	struct pp_opts co;
	char err[512];
	int ret;

	BPT_CHECK(res, "calloc");
	ret = direct_run(mode, true, &co, res, err, sizeof(err));
	BPT_CHECK(ret == -EPERM && strstr(err, "needs the agent there: run the client with --remote HOST"),
		  "a mode switch from another host: %d %s", ret, err);
	BPT_CHECK(!pp_measured(res), "something was measured");
	printf("ok   a server on another host refuses a mode switch from a client there: %s\n", err);
	pp_result_free(res);
	free(res);
}

/*
 * plain - `pingpong --client B` (in mode, no --matrix) against a plain `pingpong --server`
 * on B: no switch is asked for, the run is measured, and the row shows the server's
 * own mode as the server says it.
 */
static void plain(const char *mode)
{
	struct pp_result *res = calloc(1, sizeof(*res));
	struct pp_opts co;
	char err[512];
	int ret;

	BPT_CHECK(res, "calloc");
	ret = direct_run(mode, false, &co, res, err, sizeof(err));
	BPT_CHECK(ret == 0, "a plain client against a plain server on another host: %s", err);
	BPT_CHECK(res->nrows == 1 && res->rows[0].nruns == 1 && res->rows[0].all->count == co.n,
		  "not measured: %d rows, %d runs", res->nrows, res->rows[0].nruns);
	/* the server runs its default (no busy polling), not the client's busy mode */
	BPT_CHECK(res->server_mode[0] && !strcmp(res->rows[0].server_mode, res->server_mode) &&
		  strcmp(res->rows[0].server_mode, co.mode_text),
		  "the row says the server runs '%s', its HELLO '%s', the client '%s'", res->rows[0].server_mode,
		  res->server_mode, co.mode_text);
	printf("ok   a plain client (%s) against a plain server on another host: measured, the server in its own %s\n",
	       co.mode_text, res->rows[0].server_mode);
	pp_result_free(res);
	free(res);
}

static void matrix(const char *mode, bool tcp)
{
	struct pp_result *res = calloc(1, sizeof(*res));
	struct bp_kstats a0, a1, b0, b1;
	struct pp_opts co;
	uint64_t client_sum = 0, server_sum = 0;
	char err[512];
	int home, ret;

	BPT_CHECK(res, "calloc");
	pp_opts_defaults(&co);
	co.quiet = true;
	co.cpu = 0;
	co.server_cpu = 1;
	snprintf(co.host, sizeof(co.host), "%s", tb.addr[1]);
	/* host b's agent, through `ip netns exec` as ssh would run it there */
	snprintf(co.remote.remote, sizeof(co.remote.remote), "%s", tb.ns[1]);
	snprintf(co.remote.ssh, sizeof(co.remote.ssh), "ip netns exec");
	snprintf(co.remote.agent_cmd, sizeof(co.remote.agent_cmd), "%s agent --stdio --state-dir %s", bpt_busypoll(),
		 state);
	co.tcp = tcp;
	co.matrix = true;
	co.n = 1000;
	co.runs = 2;
	co.warmup = 100;
	BPT_CHECK(bpt_mode_usable(mode, &co.mode), "mode %s", mode);
	bp_mode_format(&co.mode, co.mode_text, sizeof(co.mode_text));
	co.server_mode = co.mode;
	snprintf(co.server_mode_text, sizeof(co.server_mode_text), "%s", co.mode_text);

	kstats_in(0, &a0);
	kstats_in(1, &b0);
	BPT_CHECK(bp_netns_save(&home) == 0, "save: %s", bp_last_error());
	BPT_CHECK(bp_testbed_enter(&tb, 0) == 0, "enter a: %s", bp_last_error());
	ret = pp_measure(&co, NULL, res, err, sizeof(err));
	BPT_CHECK(bp_netns_restore(home) == 0, "restore: %s", bp_last_error());
	BPT_CHECK(ret == 0, "%s: %s", mode, err);
	BPT_CHECK(res->agent[0] && res->server_pid > 0 && res->server_cpu == 1, "the agent's server: '%s' pid %u CPU %d",
		  res->agent, res->server_pid, res->server_cpu);
	kstats_in(0, &a1);
	kstats_in(1, &b1);

	BPT_CHECK(res->nrows == 3, "%d rows", res->nrows);
	for (int i = 0; i < 3; i++) {
		const struct pp_row *row = &res->rows[i];
		uint64_t rts = row->client.transactions;
		bool client_polls = i >= 1, server_polls = i == 2;

		BPT_CHECK(row->nruns == co.runs && row->all->count == co.n * (uint64_t)co.runs,
			  "%s: %d runs, %llu samples", row->label, row->nruns, (unsigned long long)row->all->count);
		BPT_CHECK(row->client.valid && row->server.valid, "%s: a side did not report", row->label);
		printf("ok   %s %s %-16s client %-30s server %-30s BusyPollRxPackets client %5llu server %5llu (of %llu round trips)\n",
		       mode, tcp ? "TCP" : "UDP", row->label, row->client_mode, row->server_mode,
		       (unsigned long long)row->client.busy_poll_rx, (unsigned long long)row->server.busy_poll_rx,
		       (unsigned long long)rts);
		/* one packet each way per round trip: at least a quarter of them by busy polling */
		if (client_polls)
			BPT_CHECK(row->client.busy_poll_rx > rts / 4, "%s: the client did not busy poll (%llu)",
				  row->label, (unsigned long long)row->client.busy_poll_rx);
		else
			BPT_CHECK(row->client.busy_poll_rx == 0, "%s: the client busy polled in %s (%llu)", row->label,
				  row->client_mode, (unsigned long long)row->client.busy_poll_rx);
		if (server_polls)
			BPT_CHECK(row->server.busy_poll_rx > rts / 4, "%s: the server did not busy poll (%llu)",
				  row->label, (unsigned long long)row->server.busy_poll_rx);
		else
			BPT_CHECK(row->server.busy_poll_rx == 0, "%s: the server busy polled in %s (%llu)", row->label,
				  row->server_mode, (unsigned long long)row->server.busy_poll_rx);
		BPT_CHECK(row->runs[0].napi_id != 0 && row->server_napi_id != 0,
			  "%s: no NAPI id (client %u server %u): busy polling cannot engage", row->label,
			  row->runs[0].napi_id, row->server_napi_id);
		client_sum += row->client.busy_poll_rx;
		server_sum += row->server.busy_poll_rx;
	}
	/* The namespaces' own totals hold at least what the rows claim (nothing else polls there). */
	BPT_CHECK(a1.busy_poll_rx - a0.busy_poll_rx >= client_sum, "namespace a rose by %llu, rows claim %llu",
		  (unsigned long long)(a1.busy_poll_rx - a0.busy_poll_rx), (unsigned long long)client_sum);
	BPT_CHECK(b1.busy_poll_rx - b0.busy_poll_rx >= server_sum, "namespace b rose by %llu, rows claim %llu",
		  (unsigned long long)(b1.busy_poll_rx - b0.busy_poll_rx), (unsigned long long)server_sum);
	pp_result_free(res);
	free(res);
}

int main(int argc, char **argv)
{
	const char *modes[] = { "epoll:napi,usecs=100,budget=8", "uring:napi,usecs=100", NULL };
	const char *only = NULL;
	struct bp_mode m;
	char name[32];
	int ran = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mode") && i + 1 < argc)
			only = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--mode MODE]\n", argv[0]);
			return 2;
		}
	}
	bpt_require_root("the veth test bed");
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		fprintf(stderr, "SKIP: client and server need a CPU each\n");
		return BPT_SKIP;
	}
	bpt_busypoll();
	bpt_tmpdir("pp-veth", state, sizeof(state));
	bpt_testbed_name("tpp", name, sizeof(name));
	bpt_testbed_guard(name);
	BPT_CHECK(bp_testbed_up(&tb, name, 1, false) == 0, "testbed: %s", bp_last_error());
	for (int i = 0; only ? i < 1 : modes[i] != NULL; i++) {
		const char *mode = only ? only : modes[i];

		if (!bpt_mode_usable(mode, &m))
			continue;
		if (!ran) {
			direct(mode);
			plain(mode);
		}
		matrix(mode, false);
		matrix(mode, true);
		ran++;
	}
	BPT_CHECK(bp_testbed_down(&tb) == 0, "down: %s", bp_last_error());
	if (!ran)
		return bpt_exit_status();
	printf("%d modes, 0 failed\n", ran);
	return bpt_exit_status();
}
