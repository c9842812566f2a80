/* SPDX-License-Identifier: MIT */
/*
 * compare's proof flag ('!'), each side on its own: cells made by hand with a
 * busy-poll mode and BusyPollRxPackets per transaction on each side. A side that
 * busy-polls without the kernel's proof flags the cell whatever the other side
 * shows; proof on both sides, or a side in a blocking mode, does not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tools/compare/compare.h"

/* cell - a cell whose client and server ran busy-poll modes (or not) with these figures */
static struct cmp_cell cell(bool bp_client, double bprx_client, bool bp_server, double bprx_server)
{
	struct cmp_cell c;

	memset(&c, 0, sizeof(c));
	c.busy_poll_mode_client = bp_client;
	c.bprx_client_per_tx = bprx_client;
	c.busy_poll_mode_server = bp_server;
	c.bprx_server_per_tx = bprx_server;
	return c;
}

static void client_unproven_server_proven(void **state)
{
	struct cmp_cell c = cell(true, 0, true, 1.0);

	(void)state;
	assert_true(cmp_side_unproven(&c, true));
	assert_false(cmp_side_unproven(&c, false));
	assert_true(cmp_proof_missing(&c));
	c.bprx_client_per_tx = CMP_PROOF_MIN / 2; /* a trace of polling is not proof */
	assert_true(cmp_proof_missing(&c));
}

static void server_unproven_client_proven(void **state)
{
	struct cmp_cell c = cell(true, 1.0, true, 0);

	(void)state;
	assert_false(cmp_side_unproven(&c, true));
	assert_true(cmp_side_unproven(&c, false));
	assert_true(cmp_proof_missing(&c));
	c.bprx_server_per_tx = CMP_PROOF_MIN / 2;
	assert_true(cmp_proof_missing(&c));
}

static void both_unproven(void **state)
{
	struct cmp_cell c = cell(true, 0, true, 0);

	(void)state;
	assert_true(cmp_side_unproven(&c, true));
	assert_true(cmp_side_unproven(&c, false));
	assert_true(cmp_proof_missing(&c));
}

static void both_proven(void **state)
{
	struct cmp_cell c = cell(true, 1.0, true, 0.9);

	(void)state;
	assert_false(cmp_side_unproven(&c, true));
	assert_false(cmp_side_unproven(&c, false));
	assert_false(cmp_proof_missing(&c));
	c = cell(true, CMP_PROOF_MIN, true, CMP_PROOF_MIN); /* the threshold itself is proof */
	assert_false(cmp_proof_missing(&c));
}

/* A blocking side owes no proof: the baseline, and a busy-poll server behind a blocking client. */
static void blocking_side_needs_no_proof(void **state)
{
	struct cmp_cell c = cell(false, 0, false, 0);

	(void)state;
	assert_false(cmp_proof_missing(&c));
	c = cell(false, 0, true, 1.0);
	assert_false(cmp_side_unproven(&c, true));
	assert_false(cmp_proof_missing(&c));
	c = cell(true, 1.0, false, 0);
	assert_false(cmp_side_unproven(&c, false));
	assert_false(cmp_proof_missing(&c));
	/* ... but the busy-poll side beside it still does */
	c = cell(false, 0, true, 0);
	assert_true(cmp_proof_missing(&c));
	c = cell(true, 0, false, 0);
	assert_true(cmp_proof_missing(&c));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(client_unproven_server_proven),
		cmocka_unit_test(server_unproven_client_proven),
		cmocka_unit_test(both_unproven),
		cmocka_unit_test(both_proven),
		cmocka_unit_test(blocking_side_needs_no_proof),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
