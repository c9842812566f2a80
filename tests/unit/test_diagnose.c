/* SPDX-License-Identifier: MIT */
/*
 * The busy-poll diagnosis (tools/harness/diagnose.c) on facts made by hand: a
 * correct path (veth, GRO on, TSO off, NAPI ids served, sysctls set) gives no
 * line while busy polling ran, and a line naming "no cause found" when it did
 * not; each broken fact, alone on that path, gives its own cause and fix.
 */
#include <setjmp.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tools/harness/diagnose.h"

/* A correct test-bed path where busy polling did not run (bprx 0). */
static struct diag_facts good(void)
{
	struct diag_facts f = {
		.side = "client", .where = "test bed", .dev = "va", .veth = true,
		.busy_poll_mode = true, .mode_usecs = 50, .bprx_per_tx = 0,
		.dev_napis = 1, .served_napis = 1, .gro = DIAG_ON, .tso = DIAG_OFF,
		.threaded = DIAG_OFF, .sysctl_busy_poll = 0, .sysctl_busy_read = 0,
		.flows = 1, .threads = 1, .mean_us = 20, .served_id = 8193,
	};
	return f;
}

static void no_line_when_busy_polling_ran(void **state)
{
	struct diag_facts f = good();
	char buf[512];

	(void)state;
	f.bprx_per_tx = 0.99;
	if (diag_explain(&f, buf, sizeof(buf)) || buf[0])
		fail_msg("busy polling ran (0.99 BusyPollRxPackets/tx): no diagnosis wanted, got '%s'", buf);
	f.bprx_per_tx = EV_PROOF_MIN;
	if (diag_explain(&f, buf, sizeof(buf)))
		fail_msg("the threshold itself is proof that busy polling ran: got '%s'", buf);
	f = good();
	f.busy_poll_mode = false;
	f.tso = DIAG_ON;
	if (diag_explain(&f, buf, sizeof(buf)))
		fail_msg("a blocking side never busy-polls, whatever its path: got '%s'", buf);
}

static void correct_path_says_no_cause(void **state)
{
	struct diag_facts f = good();
	char buf[512];

	(void)state;
	if (!diag_explain(&f, buf, sizeof(buf)) || !strstr(buf, "no cause found"))
		fail_msg("a correct path without proof must say no cause was found: got '%s'", buf);
	if (strncmp(buf, "client on the test bed: ", 24))
		fail_msg("the line must name the side and where it is: got '%s'", buf);
}

/* One broken fact on the correct path and the words its line must hold. */
struct rule_case {
	const char *what;
	void (*breakit)(struct diag_facts *f);
	const char *want1, *want2;
};

static void no_napi(struct diag_facts *f) { f->dev = "lo"; f->veth = false; f->dev_napis = 0; f->served_napis = 0; }
static void gro_off(struct diag_facts *f) { f->gro = DIAG_OFF; f->served_napis = 0; }
static void gro_off_no_napi(struct diag_facts *f) { f->gro = DIAG_OFF; f->dev_napis = 0; f->served_napis = 0; }
static void tso_on(struct diag_facts *f) { f->tso = DIAG_ON; }
static void tso_on_gro_unknown(struct diag_facts *f) { f->tso = DIAG_ON; f->gro = DIAG_UNKNOWN; }
static void nic_tso_on_slow(struct diag_facts *f)
{
	f->dev = "eth0"; f->veth = false; f->tso = DIAG_ON; f->mode_usecs = 30; f->mean_us = 900;
}
static void no_napi_id(struct diag_facts *f) { f->served_napis = 0; }
static void no_time(struct diag_facts *f) { f->mode_usecs = 0; }
static void suspend_zero(struct diag_facts *f) { f->suspend_mode = true; f->mode_usecs = 0; f->sysctl_busy_poll = 50; }
static void threaded(struct diag_facts *f) { f->threaded = DIAG_ON; }
static void many_flows(struct diag_facts *f) { f->flows = 4; }
static void short_timeout(struct diag_facts *f) { f->mode_usecs = 10; f->mean_us = 40; }
static void short_sysctl(struct diag_facts *f) { f->mode_usecs = 0; f->sysctl_busy_read = 10; f->mean_us = 40; }
static void many_queues(struct diag_facts *f) { f->served_napis = 2; f->flows = 2; }

static const struct rule_case rules[] = {
	{ "loopback: no NAPI", no_napi, "lo has no NAPI", "device with NAPI" },
	{ "veth without GRO", gro_off, "GRO is off for va", "ethtool -K va gro on" },
	{ "veth without GRO, so without NAPI", gro_off_no_napi, "GRO is off for va", "ethtool -K va gro on" },
	{ "veth with TSO on", tso_on, "TSO is on for va", "ethtool -K va tso off" },
	{ "TSO on, GRO not known", tso_on_gro_unknown, "TSO is on for va", "ethtool -K va tso off" },
	{ "a NIC with TSO on (it segments on the wire): the slow path blamed, not TSO", nic_tso_on_slow,
	  "busy-poll timeout (30 us) is shorter than a transaction (900 us", "usecs=1800" },
	{ "sockets with no NAPI id", no_napi_id, "no NAPI id", "tso off" },
	{ "no busy-poll time anywhere", no_time, "net.core.busy_poll", "usecs=50" },
	{ "suspend with usecs=0", suspend_zero, "usecs=0", "usecs=30" },
	{ "threaded NAPI", threaded, "threaded NAPI is on for va", "/sys/class/net/va/threaded" },
	{ "more flows than threads", many_flows, "4 flows on 1 thread", "one flow per thread" },
	{ "a timeout shorter than a transaction", short_timeout, "busy-poll timeout (10 us) is shorter than a "
	  "transaction (40 us on average)", "usecs=80" },
	{ "the sysctl's timeout, the mode giving none", short_sysctl, "busy-poll timeout (10 us)", "usecs=80" },
	{ "the flows on more queues than threads", many_queues, "arrive on 2 queues (NAPIs) of va for 1 loop thread",
	  "one queue per thread" },
};

/* The facts a line without a cause went by: the queue the flows arrive on, the budget and the timeout. */
static void no_cause_says_its_facts(void **state)
{
	struct diag_facts f = good();
	char buf[512];

	(void)state;
	f.mode_budget = 16;
	if (!diag_explain(&f, buf, sizeof(buf)) ||
	    !strstr(buf, "the flows arrive on NAPI 8193; busy-poll budget 16, timeout 50 us"))
		fail_msg("the line without a cause names the queue, budget and timeout: got '%s'", buf);
	f.mode_budget = 0;
	f.served_id = 0;
	f.mode_usecs = f.mean_us = 40; /* the bound itself: a wait as long as a transaction */
	if (!diag_explain(&f, buf, sizeof(buf)) ||
	    !strstr(buf, "the flows arrive on not known; busy-poll budget 8, timeout 40 us"))
		fail_msg("a timeout as long as a transaction is no cause; the kernel's budget 8: got '%s'", buf);
	f.mode_usecs = 10;
	f.mean_us = NAN;
	if (!diag_explain(&f, buf, sizeof(buf)) || !strstr(buf, "no cause found"))
		fail_msg("a latency not known blames no timeout: got '%s'", buf);
}

static void each_cause_named(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		struct diag_facts f = good();
		char buf[512];

		rules[i].breakit(&f);
		if (!diag_explain(&f, buf, sizeof(buf)))
			fail_msg("%s: busy polling did not run, a diagnosis is wanted", rules[i].what);
		if (!strstr(buf, rules[i].want1) || !strstr(buf, rules[i].want2))
			fail_msg("%s: the line must name the cause '%s' and the fix '%s': got '%s'", rules[i].what,
				 rules[i].want1, rules[i].want2, buf);
	}
}

static void unknown_facts_fire_nothing(void **state)
{
	struct diag_facts f = good();
	char buf[512];

	(void)state;
	f.gro = f.tso = f.threaded = DIAG_UNKNOWN;
	f.dev_napis = f.served_napis = -1;
	f.sysctl_busy_poll = f.sysctl_busy_read = -1;
	f.mode_usecs = 0;
	if (!diag_explain(&f, buf, sizeof(buf)) || !strstr(buf, "no cause found"))
		fail_msg("facts not known must not be blamed: got '%s'", buf);
}

static void short_buffer_terminated(void **state)
{
	struct diag_facts f = good();
	char buf[16];

	(void)state;
	f.tso = DIAG_ON;
	if (!diag_explain(&f, buf, sizeof(buf)) || strlen(buf) >= sizeof(buf))
		fail_msg("a short buffer still holds a terminated line: %zu bytes", strlen(buf));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_line_when_busy_polling_ran),
		cmocka_unit_test(correct_path_says_no_cause),
		cmocka_unit_test(each_cause_named),
		cmocka_unit_test(no_cause_says_its_facts),
		cmocka_unit_test(unknown_facts_fire_nothing),
		cmocka_unit_test(short_buffer_terminated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
