/* SPDX-License-Identifier: MIT */
/*
 * compare's proof flag: a cell that ran a busy-poll mode on a side whose kernel
 * evidence says busy polling (almost) never ran there. Decided per side, from the
 * cell's medians alone, so a test can call it with figures made by hand.
 */
#include "tools/compare/compare.h"

bool cmp_side_unproven(const struct cmp_cell *c, bool client)
{
	if (client)
		return c->busy_poll_mode_client && c->bprx_client_per_tx < EV_PROOF_MIN;
	return c->busy_poll_mode_server && c->bprx_server_per_tx < EV_PROOF_MIN;
}

bool cmp_proof_missing(const struct cmp_cell *c)
{
	return cmp_side_unproven(c, true) || cmp_side_unproven(c, false);
}
