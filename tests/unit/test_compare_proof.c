/* SPDX-License-Identifier: MIT */
/*
 * compare's proof flag ('!'), each side on its own: cells made by hand with a
 * busy-poll mode (or not) and BusyPollRxPackets per transaction on each side. A side
 * that busy-polls without the kernel's proof flags the cell whatever the other side
 * shows; proof on both sides, or a side in a blocking mode, does not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tools/compare/compare.h"

/* One cell's figures and what the flag must say about each side and the cell. */
struct proof_case {
	const char *what;
	bool bp_client;
	double bprx_client;
	bool bp_server;
	double bprx_server;
	bool client_unproven, server_unproven, flagged;
};

static const struct proof_case cases[] = {
	{ "client busy-polls without proof, the server with", true, 0, true, 1.0, true, false, true },
	{ "the server busy-polls without proof, the client with", true, 1.0, true, 0, false, true, true },
	{ "a trace of client polling is no proof", true, EV_PROOF_MIN / 2, true, 1.0, true, false, true },
	{ "a trace of server polling is no proof", true, 1.0, true, EV_PROOF_MIN / 2, false, true, true },
	{ "neither side proven", true, 0, true, 0, true, true, true },
	{ "both sides proven", true, 1.0, true, 0.9, false, false, false },
	{ "the threshold itself is proof", true, EV_PROOF_MIN, true, EV_PROOF_MIN, false, false, false },
	{ "the baseline: both blocking, no polling", false, 0, false, 0, false, false, false },
	{ "a blocking client beside a proven server", false, 0, true, 1.0, false, false, false },
	{ "a blocking server beside a proven client", true, 1.0, false, 0, false, false, false },
	{ "a blocking client beside an unproven server", false, 0, true, 0, false, true, true },
	{ "a blocking server beside an unproven client", true, 0, false, 0, true, false, true },
};

static void each_side_on_its_own(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct proof_case *k = &cases[i];
		struct cmp_cell c;

		memset(&c, 0, sizeof(c));
		c.busy_poll_mode_client = k->bp_client;
		c.bprx_client_per_tx = k->bprx_client;
		c.busy_poll_mode_server = k->bp_server;
		c.bprx_server_per_tx = k->bprx_server;
		if (cmp_side_unproven(&c, true) != k->client_unproven || cmp_side_unproven(&c, false) != k->server_unproven ||
		    cmp_proof_missing(&c) != k->flagged)
			fail_msg("%s: client unproven %d, server unproven %d, flagged %d; want %d, %d, %d", k->what,
				 cmp_side_unproven(&c, true), cmp_side_unproven(&c, false), cmp_proof_missing(&c),
				 k->client_unproven, k->server_unproven, k->flagged);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(each_side_on_its_own),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
