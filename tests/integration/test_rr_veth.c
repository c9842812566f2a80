/* SPDX-License-Identifier: MIT */
/*
 * busypoll rr over the veth test bed (root): BusyPollRxPackets rises on both sides
 * when both run epoll:napi, only on the client when only the client does, and on
 * neither in epoll:block. The kernel's own evidence, never timings.
 */
#include <string.h>

#include "tools/bed/testbed.h"

#include "bpt_testbed.h"
#include "bptest.h"
#include "tools/rr/rr.h"

static struct bp_testbed tb;

struct expect {
	const char *client, *server;
	bool client_polls, server_polls;
};

static void run(const struct expect *e)
{
	struct rr_opts so, co;
	struct rr_server *s;
	struct rr_result *res = calloc(1, sizeof(*res));
	char err[512];
	int home;

	BPT_CHECK(res, "malloc");
	rr_opts_defaults(&so);
	so.server = true;
	so.quiet = true;
	so.cpus[0] = 1;
	so.ncpus = 1;
	snprintf(so.host, sizeof(so.host), "%s", tb.addr[1]);
	BPT_CHECK(bpt_mode_usable(e->server, &so.mode), "server mode %s", e->server);
	snprintf(so.mode_text, sizeof(so.mode_text), "%s", e->server);
	co = so;
	co.server = false;
	co.cpus[0] = 0;
	co.flows = 1;
	co.duration_s = 0;
	co.transactions = 3000;
	co.warmup_s = 0.1;
	BPT_CHECK(bpt_mode_usable(e->client, &co.mode), "client mode %s", e->client);
	snprintf(co.mode_text, sizeof(co.mode_text), "%s", e->client);

	BPT_CHECK(bp_netns_save(&home) == 0, "save: %s", bp_last_error());
	BPT_CHECK(bp_testbed_enter(&tb, 1) == 0, "enter b: %s", bp_last_error());
	BPT_CHECK(rr_server_start(&so, &s, err, sizeof(err)) == 0, "server: %s", err);
	BPT_CHECK(bp_testbed_enter(&tb, 0) == 0, "enter a: %s", bp_last_error());
	co.port = rr_server_port(s);
	BPT_CHECK(rr_client_run(&co, NULL, res, err, sizeof(err)) == 0, "client: %s", err);
	BPT_CHECK(bp_netns_restore(home) == 0, "restore: %s", bp_last_error());
	rr_server_stop(s);

	BPT_CHECK(res->server.valid && res->client.transactions == res->server.transactions,
		  "counts: client %llu server %llu", (unsigned long long)res->client.transactions,
		  (unsigned long long)res->server.transactions);
	printf("ok   client %-32s server %-32s BusyPollRxPackets client %llu server %llu (of %llu tx)\n", e->client,
	       e->server, (unsigned long long)res->client.busy_poll_rx, (unsigned long long)res->server.busy_poll_rx,
	       (unsigned long long)res->transactions);
	/*
	 * One flow, one packet each way per transaction. A share of at least a quarter
	 * comes by busy polling (about 75% with both ends polling, 45% when the peer
	 * blocks and answers later than the 100 us budget now and then).
	 */
	if (e->client_polls)
		BPT_CHECK(res->client.busy_poll_rx > res->transactions / 4, "client side did not busy poll: %llu",
			  (unsigned long long)res->client.busy_poll_rx);
	else
		BPT_CHECK(res->client.busy_poll_rx == 0, "client side busy polled in %s: %llu", e->client,
			  (unsigned long long)res->client.busy_poll_rx);
	if (e->server_polls)
		BPT_CHECK(res->server.busy_poll_rx > res->transactions / 4, "server side did not busy poll: %llu",
			  (unsigned long long)res->server.busy_poll_rx);
	else
		BPT_CHECK(res->server.busy_poll_rx == 0, "server side busy polled in %s: %llu", e->server,
			  (unsigned long long)res->server.busy_poll_rx);
	BPT_CHECK(res->client.n_napi_ids == 1 && res->server.n_napi_ids == 1, "NAPI ids: client %u server %u",
		  res->client.n_napi_ids, res->server.n_napi_ids);
	free(res);
}

int main(void)
{
	static const struct expect cases[] = {
		{ "epoll:napi,usecs=100,budget=8", "epoll:napi,usecs=100,budget=8", true, true },
		{ "epoll:napi,usecs=100,budget=8", "epoll:block", true, false },
		{ "epoll:block", "epoll:block", false, false },
		{ "uring:napi,usecs=100", "uring:napi,usecs=100", true, true },
	};
	char name[32];

	bpt_require_root("the veth test bed needs network namespaces");
	bpt_testbed_name("tr", name, sizeof(name));
	bpt_testbed_guard(name);
	BPT_CHECK(bp_testbed_up(&tb, name, 1, false) == 0, "testbed: %s", bp_last_error());
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run(&cases[i]);
	BPT_CHECK(bp_testbed_down(&tb) == 0, "down: %s", bp_last_error());
	printf("%zu passed, 0 failed\n", sizeof(cases) / sizeof(cases[0]));
	return bpt_exit_status();
}
