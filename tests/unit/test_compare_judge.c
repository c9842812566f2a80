/* SPDX-License-Identifier: MIT */
/*
 * compare's facts for its two judgements (tools/compare/diag.c), on reports and
 * evidence made by hand: the diagnosis of a remote end whose GRO and TSO are not
 * known blames neither and names what is known (its sysctls, not this host's);
 * each side's evidence judged as that side's (a spinning server short of CPU, a
 * client's run-queue wait), io_uring helpers not taken for loop threads, facts an
 * older peer does not send left unknown, and the closed loop's consistency.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tools/compare/compare.h"

/* a cell of mode 0 (epoll:napi,usecs=0 on both ends) with no proof on either side */
static struct cmp_report *remote_report(void)
{
	struct cmp_report *r = calloc(1, sizeof(*r));
	struct cmp_cell *c;

	assert_non_null(r);
	r->remote = true;
	r->opts.threads = 1;
	r->opts.client_mode[0] = (struct bp_mode){ .policy = BP_POLICY_NAPI, .busy_usecs = 0 };
	r->opts.server_mode[0] = r->opts.client_mode[0];
	r->sysctl_busy_poll = 50; /* this host's */
	r->sysctl_busy_read = 50;
	r->ends[1].busy_poll = 0; /* the remote host's */
	r->ends[1].busy_read = 0;
	for (int i = 0; i < 2; i++)
		r->pathf[i] = (struct cmp_path){ .where = i ? "remote host" : "local host", .dev = "eth0", .napis = 2,
						 .gro = DIAG_UNKNOWN, .tso = DIAG_UNKNOWN, .threaded = DIAG_OFF };
	c = &r->cells[r->ncells++];
	*c = (struct cmp_cell){ .mode_idx = 0, .flows = 1, .runs = 1, .busy_poll_mode_client = true,
				.busy_poll_mode_server = true, .proof_missing = true, .served_client = 1,
				.served_server = 1 };
	return r;
}

static void remote_diagnosis(void **state)
{
	struct cmp_report *r = remote_report();
	char buf[512];

	(void)state;
	if (!cmp_cell_diag(r, &r->cells[0], false, buf, sizeof(buf)) ||
	    strncmp(buf, "server on the remote host: ", 27) || !strstr(buf, "net.core.busy_poll"))
		fail_msg("the remote end's own sysctls (0) and no usecs: no busy-poll time there, got '%s'", buf);
	if (strstr(buf, "TSO") || strstr(buf, "GRO"))
		fail_msg("GRO and TSO not known on the remote end must not be blamed: got '%s'", buf);
	if (!cmp_cell_diag(r, &r->cells[0], true, buf, sizeof(buf)) || !strstr(buf, "no cause found"))
		fail_msg("this host's sysctls give busy-poll time: no cause in its path, got '%s'", buf);
	r->cells[0].served_server = 0;
	if (!cmp_cell_diag(r, &r->cells[0], false, buf, sizeof(buf)) || !strstr(buf, "no NAPI id"))
		fail_msg("the remote sockets served by no NAPI: say so, got '%s'", buf);
	r->cells[0].runs = 0;
	if (cmp_cell_diag(r, &r->cells[0], false, buf, sizeof(buf)))
		fail_msg("a cell that never ran has nothing to diagnose: got '%s'", buf);
	free(r);
}

/* one side's evidence over 1 s: a loop thread at cpu_pct, an io_uring helper idle */
static struct evidence side_ev(const char *comm, double cpu_pct, bool sched, uint64_t run_delay_ns)
{
	struct evidence ev = { .valid = true, .threads = 1, .interval_ns = 1000000000ull, .nthr = 2,
			       .sched_known = sched, .run_delay_ns = run_delay_ns };

	ev.thr[0] = (struct ev_thread){ .tid = 10, .cpu_us = (uint64_t)(cpu_pct * 10000) };
	snprintf(ev.thr[0].comm, sizeof(ev.thr[0].comm), "%s", comm);
	ev.thr[1] = (struct ev_thread){ .tid = 11, .comm = "iou-sqp-10", .cpu_us = 0 };
	return ev;
}

static void each_side_judged(void **state)
{
	struct evidence c = side_ev("rr-client-0", 99, true, 0), s = side_ev("rr-server-0", 50, true, 0);
	struct cmp_sample smp = { .tps = 40000, .lat_us = { 0, 20 } };

	(void)state;
	cmp_sample_disturbed(&smp, &c, &s, true, true, 0, 1);
	if (!strstr(smp.disturbed, "server: a spinning loop thread got 50%"))
		fail_msg("the server's spinning thread at 50%%: the server is disturbed, got '%s'", smp.disturbed);
	s = side_ev("rr-server-0", 99, true, 0);
	cmp_sample_disturbed(&smp, &c, &s, true, true, 0, 1);
	if (smp.disturbed[0])
		fail_msg("both spinning threads at 99%% (the idle io_uring helper is no loop thread): got '%s'",
			 smp.disturbed);
	c = side_ev("rr-client-0", 30, true, 200000000);
	cmp_sample_disturbed(&smp, &c, &s, false, true, 0, 1);
	if (!strstr(smp.disturbed, "client: its loop threads waited on a run queue for 20%"))
		fail_msg("the client waiting 20%% of the interval: the client is disturbed, got '%s'", smp.disturbed);
	c = side_ev("rr-client-0", 30, false, 200000000);
	cmp_sample_disturbed(&smp, &c, &s, false, true, 0, 1);
	if (smp.disturbed[0])
		fail_msg("a run-queue wait not sent (an older peer) is not known: got '%s'", smp.disturbed);
	smp = (struct cmp_sample){ .tps = 20000, .lat_us = { 0, 20 } };
	cmp_sample_disturbed(&smp, &c, &s, false, true, 0, 1);
	if (!strstr(smp.disturbed, "client: tx/s x mean latency is 0.40 for 1 flow"))
		fail_msg("a closed loop at 0.4 in flight for 1 flow was descheduled: got '%s'", smp.disturbed);
	cmp_sample_disturbed(&smp, &c, &s, false, true, 20000, 1);
	if (smp.disturbed[0])
		fail_msg("an open loop's rate is offered: no consistency rule, got '%s'", smp.disturbed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(remote_diagnosis),
		cmocka_unit_test(each_side_judged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
