/* SPDX-License-Identifier: MIT */
/*
 * busypoll rr's open loop (--rate) over loopback, by counts and by a server that
 * stalls once, never by timings:
 * - the server holds one answer 100 ms (its --test-hold hook): the requests due
 *   meanwhile queue behind it, so the latency from when they were due shows the
 *   wait (its P99 is above 50 ms) while the latency from when they went out does
 *   not (its P99.9 is below: only the held request itself waited on the wire);
 * - the schedule keeps the rate: requests answered in the measured seconds are
 *   within 1% of rate x seconds, evenly spaced and Poisson, one thread and three;
 * - a server that stops answering for longer than --max-outstanding requests take
 *   to pile up ends the run with -EOVERFLOW and "cannot keep up", the figures so
 *   far kept.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "bptest.h"
#include "tools/rr/rr.h"

static struct rr_result res;

static struct rr_server *server_up(uint32_t hold_after, uint32_t hold_ms)
{
	struct rr_opts so;
	struct rr_server *s;
	char err[256];

	rr_opts_defaults(&so);
	so.server = true;
	so.quiet = true;
	so.port = 0; /* any free port */
	so.threads = 2;
	so.hold_after = hold_after;
	so.hold_ms = hold_ms;
	snprintf(so.host, sizeof(so.host), "127.0.0.1");
	BPT_CHECK(rr_server_start(&so, &s, err, sizeof(err)) == 0, "server: %s", err);
	return s;
}

static void client_opts(struct rr_opts *o, struct rr_server *s, double rate, int arrivals)
{
	rr_opts_defaults(o);
	o->quiet = true;
	o->rate = rate;
	o->arrivals = arrivals;
	o->port = rr_server_port(s);
	snprintf(o->host, sizeof(o->host), "127.0.0.1");
}

/* p_us - a percentile of h in us. */
static double p_us(const struct bp_hist *h, double p)
{
	return (double)bp_hist_percentile(h, p) / 1e3;
}

static void held_answer(void)
{
	struct rr_server *s = server_up(50, 100);
	struct rr_opts o;
	char err[512];

	/* 1000/s evenly: request 50 is due at 49 ms, its answer comes at 149 ms; the
	 * hundred due in between wait for it on the one flow */
	client_opts(&o, s, 1000, RR_ARRIVALS_FIXED);
	o.duration_s = 2;
	o.warmup_s = 0;
	BPT_CHECK(rr_client_run(&o, NULL, &res, err, sizeof(err)) == 0, "client: %s", err);
	rr_server_stop(s);
	printf("held answer: %llu tx, %llu queued; latency from due P99 %.0f us max %.0f us, from send P99.9 %.0f us "
	       "max %.0f us\n",
	       (unsigned long long)res.transactions, (unsigned long long)res.queued, p_us(&res.hist, 99),
	       res.hist.max / 1e3, p_us(&res.hist_send, 99.9), res.hist_send.max / 1e3);
	BPT_CHECK(res.hist.count == res.transactions && res.hist_send.count == res.transactions &&
			  res.hist_lag.count == res.transactions,
		  "every measured transaction in each histogram: %llu %llu %llu of %llu",
		  (unsigned long long)res.hist.count, (unsigned long long)res.hist_send.count,
		  (unsigned long long)res.hist_lag.count, (unsigned long long)res.transactions);
	BPT_CHECK(res.queued >= 90, "only %llu requests queued behind the held answer",
		  (unsigned long long)res.queued);
	/* about 50 of 2000 waited 50..100 ms counted from when they were due */
	BPT_CHECK(p_us(&res.hist, 99) > 50000, "latency from due P99 %.0f us: the wait does not show",
		  p_us(&res.hist, 99));
	BPT_CHECK(p_us(&res.hist_send, 99.9) < 50000, "latency from send P99.9 %.0f us: it counts the queue",
		  p_us(&res.hist_send, 99.9));
	/* the held request itself waited on the wire, from when it was due and sent alike */
	BPT_CHECK(res.hist.max >= 99000000 && res.hist_send.max >= 99000000, "held answer not seen: max %llu %llu ns",
		  (unsigned long long)res.hist.max, (unsigned long long)res.hist_send.max);
	BPT_CHECK(res.hist_lag.max >= 50000000, "the queued requests' send lag %llu ns does not show the wait",
		  (unsigned long long)res.hist_lag.max);
	BPT_CHECK(res.client.transactions == res.server.transactions, "counts: client %llu, server %llu",
		  (unsigned long long)res.client.transactions, (unsigned long long)res.server.transactions);
}

static void keeps_rate(double rate, int arrivals, int threads, int flows, double seconds)
{
	struct rr_server *s = server_up(0, 0);
	struct rr_opts o;
	char err[512];
	double want = rate * seconds;

	client_opts(&o, s, rate, arrivals);
	o.threads = threads;
	o.flows = flows;
	o.duration_s = seconds;
	o.warmup_s = 0.5;
	/* Two seconds of the rate may wait: a loaded machine stalls the server that long. */
	o.max_outstanding = (uint64_t)(rate * 2);
	BPT_CHECK(rr_client_run(&o, NULL, &res, err, sizeof(err)) == 0, "client: %s", err);
	rr_server_stop(s);
	printf("rate %.0f/s %s, %d thread%s, %d flows: %llu answered in %.3f s (%.0f wanted), %.1f/s\n", rate,
	       arrivals == RR_ARRIVALS_FIXED ? "fixed" : "poisson", threads, threads == 1 ? "" : "s", flows,
	       (unsigned long long)res.transactions, res.seconds, want, res.tps);
	BPT_CHECK(fabs((double)res.transactions - want) <= want * 0.01, "%llu answered, not within 1%% of %.0f",
		  (unsigned long long)res.transactions, want);
	BPT_CHECK(res.client.transactions == res.server.transactions, "counts: client %llu, server %llu",
		  (unsigned long long)res.client.transactions, (unsigned long long)res.server.transactions);
}

static void cannot_keep_up(void)
{
	struct rr_server *s = server_up(10, 2000);
	struct rr_opts o;
	char err[512];
	int ret;

	client_opts(&o, s, 2000, RR_ARRIVALS_FIXED);
	o.duration_s = 5;
	o.warmup_s = 0;
	o.max_outstanding = 50;
	ret = rr_client_run(&o, NULL, &res, err, sizeof(err));
	rr_server_stop(s);
	printf("a stalled server: %d, \"%s\"\n", ret, err);
	BPT_CHECK(ret == -EOVERFLOW, "returned %d (%s), wanted -EOVERFLOW", ret, err);
	BPT_CHECK(strstr(err, "cannot keep up") && strstr(err, "--max-outstanding 50") && !strchr(err, '\n'),
		  "message: %s", err);
	BPT_CHECK(rr_measured(&res) && !strcmp(res.failed, err), "the partial result is not kept: failed '%s'",
		  res.failed);
	BPT_CHECK(res.outstanding_peak == 50, "most outstanding %llu, wanted the limit 50",
		  (unsigned long long)res.outstanding_peak);
}

int main(void)
{
	held_answer();
	keeps_rate(4000, RR_ARRIVALS_FIXED, 1, 1, 5);
	keeps_rate(6000, RR_ARRIVALS_FIXED, 3, 6, 4);
	keeps_rate(20000, RR_ARRIVALS_POISSON, 2, 8, 6);
	cannot_keep_up();
	printf("5 passed, 0 failed\n");
	return 0;
}
