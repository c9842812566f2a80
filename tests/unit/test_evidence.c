/* SPDX-License-Identifier: MIT */
/*
 * One side's evidence (src/tools/harness/evidence.h): an interval from two
 * snapshots counts the loop thread and its io_uring helpers (a helper born inside
 * the interval counts from 0, one that died is not counted), sides add up with
 * their threads merged by role, the wire round trip keeps every field, and the
 * json/csv names are the unified ones (per tx or per io, null without units).
 * A real snapshot of this thread finds this thread and no helper.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "tools/harness/control.h"
#include "tools/common/emit.h"
#include "tools/harness/evidence.h"

static struct ev_snap snap(uint64_t ns, uint64_t ut, uint64_t st, uint64_t sys)
{
	struct ev_snap s;

	memset(&s, 0, sizeof(s));
	s.loop.ns = ns;
	s.loop.utime_us = ut;
	s.loop.stime_us = st;
	s.loop.nvcsw = ns / 1000;
	s.loop.ctr.syscalls = sys;
	s.tid = 100;
	snprintf(s.comm, sizeof(s.comm), "rr-server-0");
	return s;
}

static void add_helper(struct ev_snap *s, int tid, const char *comm, uint64_t cpu_ns)
{
	s->helper[s->nhelpers].tid = tid;
	snprintf(s->helper[s->nhelpers].comm, EV_COMM_LEN, "%s", comm);
	s->helper[s->nhelpers].cpu_ns = cpu_ns;
	s->nhelpers++;
}

static void test_interval(void **state)
{
	struct ev_snap a = snap(1000, 10, 20, 5), b = snap(5000, 110, 220, 105);
	struct evidence ev = { 0 };
	char text[256];

	add_helper(&a, 101, "iou-sqp-100", 1000000);   /* 1000 us at the start */
	add_helper(&b, 101, "iou-sqp-100", 3000000);   /* 3000 us at the end: 2000 us in between */
	add_helper(&b, 102, "iou-wrk-100", 500000);    /* born inside: all of its 500 us */
	add_helper(&a, 103, "iou-wrk-100", 900000);    /* gone by the end: not counted */
	a.loop.ctr.direct_tried = 7;
	a.loop.ctr.direct_hit = 3;
	b.loop.ctr.direct_tried = 47;
	b.loop.ctr.direct_hit = 33;
	ev_add_interval(&ev, &a, &b);
	/* the direct reads of the interval, known from a loop's own counters */
	assert_true(ev.direct_known && ev.direct_tried == 40 && ev.direct_hit == 30);
	assert_true(ev.utime_us == 100);
	assert_true(ev.stime_us == 200 + 2000 + 500);
	assert_true(ev.helper_cpu_us == 2500);
	assert_true(ev.syscalls == 100);
	assert_true(ev.nvcsw == 4);
	assert_int_equal(ev.nthr, 3);
	assert_string_equal(ev.thr[0].comm, "rr-server-0");
	assert_true(ev.thr[0].cpu_us == 300);
	assert_string_equal(ev_threads_text(&ev, text, sizeof(text)),
			    "rr-server-0(100) + iou-sqp-100(101) + iou-wrk-100(102)");
	/* not pinned at both ends: other tasks' share of its CPU is not known */
	assert_false(ev.other_known);
	/* a counter that went backwards (a restarted source) gives 0, never 2^64 - x */
	memset(&ev, 0, sizeof(ev));
	ev_add_interval(&ev, &b, &a);
	assert_true(ev.utime_us == 0 && ev.syscalls == 0 && ev.nvcsw == 0);
}

/* Other tasks on a pinned loop thread's CPU: the CPU's task time less the loop's own and
 * its helpers'; known only for a thread pinned to the same CPU at both ends. */
static void test_other_tasks(void **state)
{
	struct ev_snap a = snap(1000, 0, 0, 0), b = snap(1000000000, 200000, 100000, 0);
	struct evidence ev = { 0 }, acc = { 0 };

	(void)state;
	a.sched = b.sched = true;
	a.pinned = b.pinned = true;
	a.cpu = b.cpu = 1;
	a.cpu_busy_us = 5000000;
	b.cpu_busy_us = 5000000 + 950000;        /* 950 ms of task time on CPU 1 */
	add_helper(&b, 102, "iou-wrk-100", 50000000); /* 50 ms of its helper's */
	ev_add_interval(&ev, &a, &b);
	assert_true(ev.other_known);
	assert_int_equal(ev.other_us, 950000 - 300000 - 50000);
	ev_add(&acc, &ev);
	assert_true(acc.other_known && acc.other_us == 600000);
	/* the CPU's task time under the loop's own (ticks against a precise clock): 0, not 2^64 - x */
	memset(&ev, 0, sizeof(ev));
	b.cpu_busy_us = a.cpu_busy_us + 1000;
	ev_add_interval(&ev, &a, &b);
	assert_true(ev.other_known && ev.other_us == 0);
	/* a thread that could move, or moved: not known, and a side with one such thread neither */
	memset(&ev, 0, sizeof(ev));
	b.pinned = false;
	ev_add_interval(&ev, &a, &b);
	assert_false(ev.other_known);
	memset(&ev, 0, sizeof(ev));
	b.pinned = true;
	b.cpu = 0;
	ev_add_interval(&ev, &a, &b);
	assert_false(ev.other_known);
	ev_add(&acc, &ev);
	assert_false(acc.other_known);
}

static void test_add(void **state)
{
	struct evidence acc = { 0 }, x = { .valid = true, .threads = 1, .transactions = 10, .syscalls = 30 };

	x.napi_ids[0] = 8193;
	x.n_napi_ids = 1;
	x.thr[0] = (struct ev_thread){ .tid = 1, .comm = "pp-client-0", .cpu_us = 5 };
	x.thr[1] = (struct ev_thread){ .tid = 2, .comm = "iou-sqp-1", .cpu_us = 7 };
	x.nthr = 2;
	ev_add(&acc, &x);
	/* the next run: a new thread in the same role, the same NAPI */
	x.thr[0].tid = 11;
	x.thr[1] = (struct ev_thread){ .tid = 12, .comm = "iou-sqp-11", .cpu_us = 3 };
	ev_add(&acc, &x);
	assert_true(acc.valid && acc.transactions == 20 && acc.syscalls == 60);
	assert_int_equal(acc.n_napi_ids, 1);
	assert_int_equal(acc.nthr, 2);
	assert_true(acc.thr[0].cpu_us == 10 && acc.thr[1].cpu_us == 10);
	ev_add_napi(&acc, 0);
	ev_add_napi(&acc, 8194);
	assert_int_equal(acc.n_napi_ids, 2);
	for (uint32_t id = 1; id < 20; id++)
		ev_add_napi(&acc, id);
	assert_int_equal(acc.n_napi_ids, EV_MAX_NAPI);
}

/* The xsk counters: an interval's deltas, sides summed, the binding kept, one line for tables. */
static void test_xsk(void **state)
{
	struct ev_snap a = snap(1000, 0, 0, 0), b = snap(2000, 0, 0, 0);
	struct evidence ev = { 0 }, acc = { 0 };
	char text[160];

	assert_string_equal(ev_xsk_text(&ev, text, sizeof(text)), "-");
	assert_null(ev_xsk_name(EV_XSK_NONE));
	a.loop.ctr.pkt_rx = 10, b.loop.ctr.pkt_rx = 110;
	b.loop.ctr.pkt_dropped = 2;
	a.loop.ctr.xsk_rx_ring_full = 5, b.loop.ctr.xsk_rx_ring_full = 8;
	b.loop.ctr.xsk_tx_empty = 9;
	b.xsk = EV_XSK_COPY;
	ev_add_interval(&ev, &a, &b);
	assert_int_equal(ev.xsk, EV_XSK_COPY);
	assert_true(ev.pkt_rx == 100 && ev.pkt_dropped == 2 && ev.xsk_rx_ring_full == 3 && ev.xsk_tx_empty == 9);
	assert_true(ev_xsk_lost(&ev) == 5);
	assert_string_equal(ev_xsk_text(&ev, text, sizeof(text)),
			    "copy; dropped 2, rx ring full 3, fill ring empty 0, tx ring empty 9");
	ev_add(&acc, &ev);
	ev_add(&acc, &ev);
	assert_true(acc.xsk == EV_XSK_COPY && acc.pkt_rx == 200 && acc.xsk_rx_ring_full == 6);
	assert_string_equal(ev_xsk_name(EV_XSK_ZEROCOPY), "zero-copy");
}

static void test_wire(void **state)
{
	struct evidence ev = { .valid = true, .threads = 2, .transactions = 1, .interval_ns = 2, .utime_us = 3,
			       .stime_us = 4, .nvcsw = 5, .nivcsw = 6, .busy_poll_rx = 7, .net_rx = 8,
			       .syscalls = 9, .empty_polls = 10, .wakeups = 11, .waits = 12, .completions = 13,
			       .helper_cpu_us = 14, .n_napi_ids = 2, .nthr = 1 }, d;
	struct ctl_msg *m = malloc(sizeof(*m));

	assert_non_null(m);
	snprintf(ev.mode, sizeof(ev.mode), "uring:sqpoll,idle=1000,napi=0");
	ev.napi_ids[0] = 8193;
	ev.napi_ids[1] = 8194;
	ev.thr[0] = (struct ev_thread){ .tid = 77, .comm = "iou-sqp-76", .cpu_us = 99 };
	ctl_msg_init(m, CTL_EVIDENCE);
	assert_int_equal(ev_encode(m, &ev), 0);
	assert_int_equal(ev_decode(m, &d), 0);
	assert_memory_equal(&ev, &d, sizeof(ev));
	assert_false(d.sched_known); /* not sent: not known (a peer that predates them) */
	/* the machine's share of the loop threads travels when it is known */
	ev.sched_known = true;
	ev.run_delay_ns = 15;
	ev.steal_us = 16;
	ctl_msg_init(m, CTL_EVIDENCE);
	assert_int_equal(ev_encode(m, &ev), 0);
	assert_int_equal(ev_decode(m, &d), 0);
	assert_true(d.sched_known && d.run_delay_ns == 15 && d.steal_us == 16);
	assert_false(d.other_known); /* not sent: not known (a peer that predates it) */
	/* other tasks' time on the pinned CPUs travels when it is known */
	ev.other_known = true;
	ev.other_us = 18;
	ctl_msg_init(m, CTL_EVIDENCE);
	assert_int_equal(ev_encode(m, &ev), 0);
	assert_int_equal(ev_decode(m, &d), 0);
	assert_true(d.other_known && d.other_us == 18);
	assert_false(d.direct_known); /* not sent: not known */
	/* the direct reads travel when they are known */
	ev.direct_known = true;
	ev.direct_tried = 17;
	ev.direct_hit = 12;
	ctl_msg_init(m, CTL_EVIDENCE);
	assert_int_equal(ev_encode(m, &ev), 0);
	assert_int_equal(ev_decode(m, &d), 0);
	assert_true(d.direct_known && d.direct_tried == 17 && d.direct_hit == 12);
	assert_int_equal(d.xsk, EV_XSK_NONE); /* no AF_XDP socket: nothing sent, none */
	/* an AF_XDP side's binding and counters travel, and a binding out of range is refused */
	ev.xsk = EV_XSK_COPY;
	ev.pkt_rx = 21, ev.pkt_tx = 22, ev.pkt_dropped = 23, ev.xsk_rx_dropped = 24;
	ev.xsk_rx_ring_full = 25, ev.xsk_fill_empty = 26, ev.xsk_tx_empty = 27;
	ctl_msg_init(m, CTL_EVIDENCE);
	assert_int_equal(ev_encode(m, &ev), 0);
	assert_int_equal(ev_decode(m, &d), 0);
	assert_memory_equal(&ev, &d, sizeof(ev));
	ctl_msg_init(m, CTL_EVIDENCE);
	ev.xsk = 3;
	assert_int_equal(ev_encode(m, &ev), 0);
	assert_int_equal(ev_decode(m, &d), -EPROTO);
	ev.xsk = EV_XSK_NONE;
	/* a message without the evidence's fields does not pass for evidence */
	ctl_msg_init(m, CTL_EVIDENCE);
	ctl_put_text(m, CTL_T_MODE, "epoll:block");
	assert_int_equal(ev_decode(m, &d), -EPROTO);
	free(m);
}

static void test_emit(void **state)
{
	struct evidence ev = { .valid = true, .transactions = 4, .syscalls = 6, .utime_us = 1, .stime_us = 3 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct emit e = { .kind = EMIT_JSON, .out = f };

	assert_non_null(f);
	ev_emit(&e, NULL, &ev, 2, "tx", false);
	e = (struct emit){ .kind = EMIT_JSON, .out = f };
	ev_emit(&e, NULL, &ev, 0, "io", false);
	fclose(f);
	assert_non_null(strstr(buf, "\"syscalls_per_tx\": 3"));
	assert_non_null(strstr(buf, "\"cpu_us_per_tx\": 2"));
	assert_non_null(strstr(buf, "\"syscalls_per_io\": null")); /* no units: no figure */
	assert_non_null(strstr(buf, "\"cpu_threads\": \"-\""));
	assert_null(strstr(buf, "per_rt"));
	assert_non_null(strstr(buf, "\"direct_tried\": null")); /* a peer that predates them */
	free(buf);
	/* known: the counts and per unit */
	ev.direct_known = true;
	ev.direct_tried = 8;
	ev.direct_hit = 6;
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	e = (struct emit){ .kind = EMIT_JSON, .out = f };
	ev_emit(&e, NULL, &ev, 2, "tx", false);
	fclose(f);
	assert_non_null(strstr(buf, "\"direct_tried\": 8"));
	assert_non_null(strstr(buf, "\"direct_hit_per_tx\": 3"));
	free(buf);
	/* the csv header has the same columns whether the side is there or null */
	{
		char *h1 = NULL, *h2 = NULL;
		size_t l1 = 0, l2 = 0;
		FILE *f1 = open_memstream(&h1, &l1), *f2 = open_memstream(&h2, &l2);
		struct emit e1 = { .kind = EMIT_CSV_HEADER, .out = f1 }, e2 = { .kind = EMIT_CSV_HEADER, .out = f2 };

		ev_emit(&e1, "server", &ev, 2, "tx", false);
		ev_emit(&e2, "server", &ev, 2, "tx", true);
		fclose(f1);
		fclose(f2);
		assert_string_equal(h1, h2);
		assert_non_null(strstr(h1, "server.busy_poll_rx_per_tx"));
		free(h1);
		free(h2);
	}
}

/* A real snapshot: this thread's loop, its name and tid, no io_uring helper (an epoll loop). */
static void test_real_snapshot(void **state)
{
	struct bp_mode mode = { .backend = BP_BACKEND_EPOLL, .policy = BP_POLICY_BLOCK };
	struct bp_loop *loop;
	struct ev_snap s;

	assert_int_equal(bp_loop_create(&loop, &mode), 0);
	ev_name_thread("unit", 3);
	ev_snap_take(loop, &s);
	bp_loop_destroy(loop);
	assert_int_equal(s.tid, (int)syscall(SYS_gettid));
	assert_string_equal(s.comm, "unit-3");
	assert_int_equal(s.nhelpers, 0); /* no ring of ours has an SQ thread */
	assert_true(s.sched); /* schedstat and /proc/stat read: the run-queue wait and steal are known */
	assert_true(s.cpu >= 0);
	assert_true(s.cpu_busy_us > 0); /* this CPU's task time since boot */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interval), cmocka_unit_test(test_other_tasks), cmocka_unit_test(test_add), cmocka_unit_test(test_xsk),
		cmocka_unit_test(test_wire),
		cmocka_unit_test(test_emit),     cmocka_unit_test(test_real_snapshot),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
