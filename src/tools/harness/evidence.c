/* SPDX-License-Identifier: MIT */
/* One side's evidence: take, add, encode, decode, emit (contract in tools/harness/evidence.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tools/harness/control.h"
#include "tools/common/emit.h"
#include "tools/harness/evidence.h"

/* ---- taking ---- */

/* ev_read_line - see evidence.h: a small /proc file's first line. */
int ev_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int ret = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		ret = -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return ret;
}

/* thread_comm - thread tid's name as the kernel gives it ("?" when it is gone). */
static void thread_comm(int tid, char *comm, size_t len)
{
	char path[64], line[EV_COMM_LEN + 8];

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
	if (ev_read_line(path, line, sizeof(line)))
		snprintf(line, sizeof(line), "?");
	snprintf(comm, len, "%.*s", (int)len - 1, line); /* comm is at most 15 bytes */
}

/*
 * sched_read - thread tid's run-queue wait (schedstat's 2nd field), and of the CPU
 * it is on (/proc/stat "cpuN", in clock ticks) the steal time (8th value) and the
 * time every task took there (user, nice, system: interrupts not counted, as they
 * are no task's) into s, with whether the thread is pinned to that CPU (its
 * affinity that one CPU); s->sched false when any cannot be read.
 */
static void sched_read(struct ev_snap *s)
{
	char path[64], line[256], want[16];
	unsigned long long run, wait, st = 0, busy = 0, v[8];
	long hz = sysconf(_SC_CLK_TCK);
	cpu_set_t set;
	bool found = false;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", s->tid);
	s->cpu = sched_getcpu();
	if (ev_read_line(path, line, sizeof(line)) || sscanf(line, "%llu %llu", &run, &wait) != 2 || s->cpu < 0 ||
	    hz <= 0)
		return;
	f = fopen("/proc/stat", "re");
	if (!f)
		return;
	n = snprintf(want, sizeof(want), "cpu%d ", s->cpu);
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, want, (size_t)n) &&
		    sscanf(line + n, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
			   &v[6], &v[7]) == 8) {
			st = v[7];
			busy = v[0] + v[1] + v[2];
			found = true;
		}
	fclose(f);
	if (!found)
		return;
	s->run_delay_ns = wait;
	s->steal_us = st * 1000000ull / (unsigned long long)hz;
	s->cpu_busy_us = busy * 1000000ull / (unsigned long long)hz;
	CPU_ZERO(&set);
	s->pinned = !sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) == 1 && CPU_ISSET(s->cpu, &set);
	s->sched = true;
}

/*
 * The loop thread's own figures, and the kernel threads that work for its loop
 * (bp_loop_kthreads: a uring:sqpoll loop's SQ thread, the io-wq workers of its
 * submitter) with their CPU clocks, so that a mode's whole CPU is counted.
 */
void ev_snap_take(const struct bp_loop *loop, struct ev_snap *s)
{
	struct bp_loop_kthread kt[EV_MAX_HELPERS];
	int n;

	memset(s, 0, sizeof(*s));
	bp_loop_snapshot_take(loop, &s->loop);
	s->tid = (int32_t)syscall(SYS_gettid);
	thread_comm(s->tid, s->comm, sizeof(s->comm));
	sched_read(s);
	{
		struct bp_xsk_info xi;

		if (!bp_loop_xsk_info(loop, &xi))
			s->xsk = xi.zerocopy ? EV_XSK_ZEROCOPY : EV_XSK_COPY;
	}
	n = bp_loop_kthreads(loop, kt, EV_MAX_HELPERS);
	for (int i = 0; i < n && i < EV_MAX_HELPERS; i++) {
		uint64_t ns;

		if (bp_thread_cpu_ns(kt[i].tid, &ns))
			continue; /* exited since it was listed */
		s->helper[s->nhelpers].tid = kt[i].tid;
		thread_comm(kt[i].tid, s->helper[s->nhelpers].comm, EV_COMM_LEN);
		s->helper[s->nhelpers].cpu_ns = ns;
		s->nhelpers++;
	}
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* thread_add - x's CPU into t: the split stays known only while both parts know it. */
static void thread_add(struct ev_thread *t, const struct ev_thread *x)
{
	t->cpu_us += x->cpu_us;
	t->utime_us += x->utime_us;
	t->stime_us += x->stime_us;
	t->split = t->split && x->split;
}

/* name_thread - thread x->tid named in ev with x's CPU more (the same tid adds up). */
static void name_thread(struct evidence *ev, const struct ev_thread *x)
{
	for (uint32_t i = 0; i < ev->nthr; i++)
		if (ev->thr[i].tid == x->tid) {
			thread_add(&ev->thr[i], x);
			return;
		}
	if (ev->nthr == EV_MAX_THREADS)
		return;
	ev->thr[ev->nthr] = *x;
	ev->nthr++;
}

/* counted - a thread's record: its CPU time, user and system apart. */
static struct ev_thread counted(int32_t tid, const char *comm, uint64_t utime_us, uint64_t stime_us)
{
	struct ev_thread t = { .tid = tid, .cpu_us = utime_us + stime_us, .utime_us = utime_us,
			       .stime_us = stime_us, .split = true };

	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	return t;
}

void ev_add_interval(struct evidence *ev, const struct ev_snap *a, const struct ev_snap *b)
{
	const struct bp_loop_snapshot *x = &a->loop, *y = &b->loop;
	struct ev_thread own = counted(b->tid, b->comm, sub0(y->utime_us, x->utime_us), sub0(y->stime_us, x->stime_us));
	bool first = !ev->nthr; /* the first loop thread added */
	uint64_t own_us = own.cpu_us;

	ev->utime_us += sub0(y->utime_us, x->utime_us);
	ev->stime_us += sub0(y->stime_us, x->stime_us);
	ev->nvcsw += sub0(y->nvcsw, x->nvcsw);
	ev->nivcsw += sub0(y->nivcsw, x->nivcsw);
	ev->syscalls += sub0(y->ctr.syscalls, x->ctr.syscalls);
	ev->empty_polls += sub0(y->ctr.empty_polls, x->ctr.empty_polls);
	ev->wakeups += sub0(y->ctr.wakeups, x->ctr.wakeups);
	ev->waits += sub0(y->ctr.waits, x->ctr.waits);
	ev->completions += sub0(y->ctr.completions, x->ctr.completions);
	ev->direct_known = true; /* a loop's own counters: always there */
	ev->direct_tried += sub0(y->ctr.direct_tried, x->ctr.direct_tried);
	ev->direct_hit += sub0(y->ctr.direct_hit, x->ctr.direct_hit);
	if (b->xsk > ev->xsk)
		ev->xsk = b->xsk;
#define XSK_ADD(f) ev->f += sub0(y->ctr.f, x->ctr.f);
	EV_XSK_U64(XSK_ADD)
#undef XSK_ADD
	name_thread(ev, &own);
	/* the machine's share: known only while every loop thread's is (a thread that moved
	 * CPU counts no steal: its two readings are of different CPUs) */
	ev->sched_known = (first || ev->sched_known) && a->sched && b->sched;
	ev->run_delay_ns += sub0(b->run_delay_ns, a->run_delay_ns);
	if (a->cpu == b->cpu)
		ev->steal_us += sub0(b->steal_us, a->steal_us);
	/* A helper counts from the start when it was there, else from its birth (0); a
	 * kernel thread's time is all system time. */
	for (int i = 0; i < b->nhelpers; i++) {
		uint64_t start = 0, us;
		struct ev_thread h;

		for (int j = 0; j < a->nhelpers; j++)
			if (a->helper[j].tid == b->helper[i].tid)
				start = a->helper[j].cpu_ns;
		us = sub0(b->helper[i].cpu_ns, start) / 1000;
		ev->stime_us += us;
		ev->helper_cpu_us += us;
		own_us += us;
		h = counted(b->helper[i].tid, b->helper[i].comm, 0, us);
		name_thread(ev, &h);
	}
	/* other tasks on its CPU: known only for a thread pinned there at both ends (one that
	 * can move shares its CPU's time with nothing in particular); the CPU's task time less
	 * the loop's own and its helpers' (an SQPOLL thread elsewhere makes this smaller, never
	 * larger) */
	ev->other_known = (first || ev->other_known) && a->sched && b->sched && a->pinned && b->pinned &&
			  a->cpu == b->cpu;
	ev->other_us += sub0(sub0(b->cpu_busy_us, a->cpu_busy_us), own_us);
}

void ev_add_napi(struct evidence *ev, uint32_t id)
{
	if (!id)
		return;
	for (uint32_t i = 0; i < ev->n_napi_ids; i++)
		if (ev->napi_ids[i] == id)
			return;
	if (ev->n_napi_ids < EV_MAX_NAPI)
		ev->napi_ids[ev->n_napi_ids++] = id;
}

void ev_add_kstats(struct evidence *ev, const struct bp_kstats *a, const struct bp_kstats *b)
{
	ev->busy_poll_rx += sub0(b->busy_poll_rx, a->busy_poll_rx);
	ev->net_rx += sub0(b->net_rx, a->net_rx);
}

/* same_role - two threads that do the same job in different runs: the same name, an io_uring
 * helper's tid suffix aside ("iou-sqp-1234" and "iou-sqp-1300"). */
static bool same_role(const char *a, const char *b)
{
	if (!strncmp(a, "iou-", 4) && !strncmp(b, "iou-", 4))
		return !strncmp(a, b, 8);
	return !strcmp(a, b);
}

/* name_role - x's thread named in acc, merged with one of the same role. */
static void name_role(struct evidence *acc, const struct ev_thread *x)
{
	for (uint32_t i = 0; i < acc->nthr; i++)
		if (same_role(acc->thr[i].comm, x->comm)) {
			thread_add(&acc->thr[i], x);
			return;
		}
	name_thread(acc, x);
}

void ev_add(struct evidence *acc, const struct evidence *x)
{
	bool empty = !acc->valid && !acc->nthr;

	acc->valid |= x->valid;
	if (!acc->mode[0])
		memcpy(acc->mode, x->mode, sizeof(acc->mode));
	if (x->threads > acc->threads)
		acc->threads = x->threads;
	acc->transactions += x->transactions;
	acc->interval_ns += x->interval_ns;
	acc->utime_us += x->utime_us;
	acc->stime_us += x->stime_us;
	acc->nvcsw += x->nvcsw;
	acc->nivcsw += x->nivcsw;
	acc->busy_poll_rx += x->busy_poll_rx;
	acc->net_rx += x->net_rx;
	acc->syscalls += x->syscalls;
	acc->empty_polls += x->empty_polls;
	acc->wakeups += x->wakeups;
	acc->waits += x->waits;
	acc->completions += x->completions;
	acc->helper_cpu_us += x->helper_cpu_us;
	acc->sched_known = (empty || acc->sched_known) && x->sched_known;
	acc->run_delay_ns += x->run_delay_ns;
	acc->steal_us += x->steal_us;
	acc->other_known = (empty || acc->other_known) && x->other_known;
	acc->other_us += x->other_us;
	acc->direct_known = (empty || acc->direct_known) && x->direct_known;
	acc->direct_tried += x->direct_tried;
	acc->direct_hit += x->direct_hit;
	if (x->xsk > acc->xsk)
		acc->xsk = x->xsk;
#define XSK_SUM(f) acc->f += x->f;
	EV_XSK_U64(XSK_SUM)
#undef XSK_SUM
	for (uint32_t i = 0; i < x->n_napi_ids; i++)
		ev_add_napi(acc, x->napi_ids[i]);
	for (uint32_t i = 0; i < x->nthr; i++)
		name_role(acc, &x->thr[i]);
}

void ev_name_thread(const char *prefix, int i)
{
	char name[EV_COMM_LEN];

	snprintf(name, sizeof(name), "%s-%d", prefix, i);
	pthread_setname_np(pthread_self(), name);
}

/* ---- figures ---- */

double ev_per(uint64_t value, uint64_t units)
{
	return units ? (double)value / (double)units : NAN;
}

uint64_t ev_cpu_us(const struct evidence *ev)
{
	return ev->utime_us + ev->stime_us;
}

double ev_util_pct(uint64_t cpu_us, uint64_t interval_ns)
{
	return interval_ns ? (double)cpu_us * 1e5 / (double)interval_ns : NAN;
}

const char *ev_per_text(char *buf, size_t len, double v)
{
	int dec = 2;

	if (!isfinite(v)) {
		snprintf(buf, len, "-");
		return buf;
	}
	if (v > 0 && v < 0.005)
		dec = 1 - (int)floor(log10(v));
	snprintf(buf, len, "%.*f", dec < 12 ? dec : 12, v);
	return buf;
}

const char *ev_threads_text(const struct evidence *ev, char *buf, size_t len)
{
	size_t used = 0;

	snprintf(buf, len, "-");
	for (uint32_t i = 0; i < ev->nthr && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s(%" PRId32 ")", i ? " + " : "", ev->thr[i].comm,
					 ev->thr[i].tid);
	return buf;
}

const char *ev_threads_util_text(const struct evidence *ev, char *buf, size_t len)
{
	size_t used = 0;

	snprintf(buf, len, "-");
	if (!ev->interval_ns)
		return buf;
	for (uint32_t i = 0; i < ev->nthr && used < len; i++) {
		const struct ev_thread *t = &ev->thr[i];

		used += (size_t)snprintf(buf + used, len - used, "%s%s(%" PRId32 ") %.1f%%", i ? " + " : "", t->comm,
					 t->tid, ev_util_pct(t->cpu_us, ev->interval_ns));
		if (used < len && t->split)
			used += (size_t)snprintf(buf + used, len - used, " (user %.1f%%, system %.1f%%)",
						 ev_util_pct(t->utime_us, ev->interval_ns),
						 ev_util_pct(t->stime_us, ev->interval_ns));
	}
	return buf;
}

/* ---- json / csv ---- */

/* The counters of struct evidence, in output order; those per unit after them. */
#define EV_U64(X)                                                                     \
	X(transactions) X(interval_ns) X(utime_us) X(stime_us) X(nvcsw) X(nivcsw)      \
	X(busy_poll_rx) X(net_rx) X(syscalls) X(empty_polls) X(wakeups) X(waits)       \
	X(completions)
#define EV_PER_UNIT(X)                                                                \
	X(utime_us) X(stime_us) X(nvcsw) X(nivcsw) X(busy_poll_rx) X(net_rx)           \
	X(syscalls) X(empty_polls) X(wakeups) X(waits) X(completions)

void ev_emit(struct emit *e, const char *key, const struct evidence *ev, uint64_t units, const char *unit,
	     bool is_null)
{
	int64_t ids[EV_MAX_NAPI];
	uint32_t n = ev->n_napi_ids < EV_MAX_NAPI ? ev->n_napi_ids : EV_MAX_NAPI;
	char name[64], threads[EV_MAX_THREADS * 32], util[EV_MAX_THREADS * 96];

	em_begin(e, key, is_null);
	em_bool(e, "valid", ev->valid);
	em_string(e, "mode", ev->mode, sizeof(ev->mode));
	em_u64(e, "threads", ev->threads);
#define U64(f) em_u64(e, #f, ev->f);
	EV_U64(U64)
#undef U64
	for (uint32_t i = 0; i < n; i++)
		ids[i] = ev->napi_ids[i];
	em_list(e, "napi_ids", ids, n);
#define PER(f)                                                   \
	snprintf(name, sizeof(name), "%s_per_%s", #f, unit);     \
	em_double(e, name, ev_per(ev->f, units));
	EV_PER_UNIT(PER)
#undef PER
	snprintf(name, sizeof(name), "cpu_us_per_%s", unit);
	em_double(e, name, ev_per(ev_cpu_us(ev), units));
	snprintf(name, sizeof(name), "context_switches_per_%s", unit);
	em_double(e, name, ev_per(ev->nvcsw + ev->nivcsw, units));
	em_u64(e, "helper_cpu_us", ev->helper_cpu_us);
	/* direct reads before the wait: tried and hit, per unit; null from a peer that predates them */
	if (ev->direct_known) {
		em_u64(e, "direct_tried", ev->direct_tried);
		em_u64(e, "direct_hit", ev->direct_hit);
		snprintf(name, sizeof(name), "direct_tried_per_%s", unit);
		em_double(e, name, ev_per(ev->direct_tried, units));
		snprintf(name, sizeof(name), "direct_hit_per_%s", unit);
		em_double(e, name, ev_per(ev->direct_hit, units));
	} else {
		em_null(e, "direct_tried");
		em_null(e, "direct_hit");
		snprintf(name, sizeof(name), "direct_tried_per_%s", unit);
		em_null(e, name);
		snprintf(name, sizeof(name), "direct_hit_per_%s", unit);
		em_null(e, name);
	}
	ev_threads_text(ev, threads, sizeof(threads));
	em_string(e, "cpu_threads", threads, sizeof(threads));
	em_begin(e, "cpu_util_pct", false);
	em_double(e, "user", ev_util_pct(ev->utime_us, ev->interval_ns));
	em_double(e, "system", ev_util_pct(ev->stime_us, ev->interval_ns));
	em_double(e, "total", ev_util_pct(ev_cpu_us(ev), ev->interval_ns));
	em_end(e);
	em_string(e, "cpu_threads_util", ev_threads_util_text(ev, util, sizeof(util)), sizeof(util));
	em_begin(e, "xsk", ev->xsk == EV_XSK_NONE);
	em_string(e, "binding", ev->xsk == EV_XSK_NONE ? "" : ev_xsk_name(ev->xsk), 16);
#define XSK_EMIT(f) em_u64(e, #f, ev->f);
	EV_XSK_U64(XSK_EMIT)
#undef XSK_EMIT
	em_end(e);
	em_end(e);
}

const char *ev_xsk_name(uint8_t xsk)
{
	return xsk == EV_XSK_COPY ? "copy" : xsk == EV_XSK_ZEROCOPY ? "zero-copy" : NULL;
}

uint64_t ev_xsk_lost(const struct evidence *ev)
{
	return ev->pkt_dropped + ev->xsk_rx_dropped + ev->xsk_rx_ring_full;
}

const char *ev_xsk_text(const struct evidence *ev, char *buf, size_t len)
{
	if (ev->xsk == EV_XSK_NONE)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%s; dropped %" PRIu64 ", rx ring full %" PRIu64 ", fill ring empty %" PRIu64
			 ", tx ring empty %" PRIu64, ev_xsk_name(ev->xsk), ev->pkt_dropped + ev->xsk_rx_dropped,
			 ev->xsk_rx_ring_full, ev->xsk_fill_empty, ev->xsk_tx_empty);
	return buf;
}

/* ---- on the wire ---- */

/* The u64 counters and their tags, for encode and decode alike. */
#define EV_WIRE(X)                                                                            \
	X(transactions, CTL_T_EV_TRANSACTIONS) X(interval_ns, CTL_T_EV_INTERVAL_NS)               \
	X(utime_us, CTL_T_EV_UTIME_US) X(stime_us, CTL_T_EV_STIME_US) X(nvcsw, CTL_T_EV_NVCSW)     \
	X(nivcsw, CTL_T_EV_NIVCSW) X(busy_poll_rx, CTL_T_EV_BUSY_POLL_RX) X(net_rx, CTL_T_EV_NET_RX) \
	X(syscalls, CTL_T_EV_SYSCALLS) X(empty_polls, CTL_T_EV_EMPTY_POLLS)                     \
	X(wakeups, CTL_T_EV_WAKEUPS) X(waits, CTL_T_EV_WAITS) X(completions, CTL_T_EV_COMPLETIONS) \
	X(helper_cpu_us, CTL_T_EV_HELPER_CPU_US)

/* The xsk counters and their tags (sent only with an AF_XDP socket). */
#define EV_XSK_WIRE(X)                                                                        \
	X(pkt_rx, CTL_T_EV_PKT_RX) X(pkt_tx, CTL_T_EV_PKT_TX) X(pkt_dropped, CTL_T_EV_PKT_DROPPED) \
	X(xsk_rx_dropped, CTL_T_EV_XSK_RX_DROPPED) X(xsk_rx_ring_full, CTL_T_EV_XSK_RX_RING_FULL)   \
	X(xsk_fill_empty, CTL_T_EV_XSK_FILL_EMPTY) X(xsk_tx_empty, CTL_T_EV_XSK_TX_EMPTY)

int ev_encode(struct ctl_msg *m, const struct evidence *ev)
{
	ctl_put_text(m, CTL_T_MODE, ev->mode);
	ctl_put_u64(m, CTL_T_THREADS, ev->threads);
#define PUT(f, tag) ctl_put_u64(m, tag, ev->f);
	EV_WIRE(PUT)
#undef PUT
	for (uint32_t i = 0; i < ev->n_napi_ids && i < EV_MAX_NAPI; i++)
		ctl_put_u64(m, CTL_T_EV_NAPI_ID, ev->napi_ids[i]);
	for (uint32_t i = 0; i < ev->nthr && i < EV_MAX_THREADS; i++) {
		size_t rec = ctl_record_begin(m, CTL_T_EV_THREAD);

		ctl_put_u64(m, CTL_T_EV_TID, (uint64_t)ev->thr[i].tid);
		ctl_put_text(m, CTL_T_EV_COMM, ev->thr[i].comm);
		ctl_put_u64(m, CTL_T_EV_CPU_US, ev->thr[i].cpu_us);
		if (ev->thr[i].split) {
			ctl_put_u64(m, CTL_T_EV_THR_UTIME_US, ev->thr[i].utime_us);
			ctl_put_u64(m, CTL_T_EV_THR_STIME_US, ev->thr[i].stime_us);
		}
		ctl_record_end(m, rec);
	}
	if (ev->sched_known) {
		ctl_put_u64(m, CTL_T_EV_RUN_DELAY_NS, ev->run_delay_ns);
		ctl_put_u64(m, CTL_T_EV_STEAL_US, ev->steal_us);
	}
	if (ev->other_known)
		ctl_put_u64(m, CTL_T_EV_OTHER_US, ev->other_us);
	if (ev->direct_known) {
		ctl_put_u64(m, CTL_T_EV_DIRECT_TRIED, ev->direct_tried);
		ctl_put_u64(m, CTL_T_EV_DIRECT_HIT, ev->direct_hit);
	}
	if (ev->xsk != EV_XSK_NONE) {
		ctl_put_u64(m, CTL_T_EV_XSK, ev->xsk);
#define XSK_PUT(f, tag) ctl_put_u64(m, tag, ev->f);
		EV_XSK_WIRE(XSK_PUT)
#undef XSK_PUT
	}
	return m->overflow ? -ENOSPC : 0;
}

int ev_decode(const struct ctl_msg *m, struct evidence *ev)
{
	struct ctl_iter it;
	const uint8_t *val;
	uint16_t tag;
	size_t len;
	uint64_t v;

	memset(ev, 0, sizeof(*ev));
	if (ctl_get_text(m, CTL_T_MODE, ev->mode, sizeof(ev->mode)) ||
	    ctl_get_u64(m, CTL_T_THREADS, &v) || v > UINT32_MAX)
		return -EPROTO;
	ev->threads = (uint32_t)v;
#define GET(f, tag)                               \
	if (ctl_get_u64(m, tag, &ev->f))          \
		return -EPROTO;
	EV_WIRE(GET)
#undef GET
	/* optional: a peer that predates them sends neither, and they stay not known */
	ev->sched_known = !ctl_get_u64(m, CTL_T_EV_RUN_DELAY_NS, &ev->run_delay_ns) &&
			  !ctl_get_u64(m, CTL_T_EV_STEAL_US, &ev->steal_us);
	if (!ev->sched_known)
		ev->run_delay_ns = ev->steal_us = 0;
	ev->other_known = !ctl_get_u64(m, CTL_T_EV_OTHER_US, &ev->other_us);
	if (!ev->other_known)
		ev->other_us = 0;
	ev->direct_known = !ctl_get_u64(m, CTL_T_EV_DIRECT_TRIED, &ev->direct_tried) &&
			   !ctl_get_u64(m, CTL_T_EV_DIRECT_HIT, &ev->direct_hit) &&
			   ev->direct_hit <= ev->direct_tried;
	if (!ev->direct_known)
		ev->direct_tried = ev->direct_hit = 0;
	/* optional: a side without an AF_XDP socket (or a peer that predates them) sends none */
	if (!ctl_get_u64(m, CTL_T_EV_XSK, &v)) {
		if (v != EV_XSK_COPY && v != EV_XSK_ZEROCOPY)
			return -EPROTO;
		ev->xsk = (uint8_t)v;
#define XSK_GET(f, tag)                           \
		if (ctl_get_u64(m, tag, &ev->f))  \
			return -EPROTO;
		EV_XSK_WIRE(XSK_GET)
#undef XSK_GET
	}
	ctl_iter_body(&it, m);
	while (ctl_next(&it, &tag, &val, &len)) {
		if (tag == CTL_T_EV_NAPI_ID) {
			v = ctl_val_u64(val);
			if (v > UINT32_MAX)
				return -EPROTO;
			ev_add_napi(ev, (uint32_t)v);
		} else if (tag == CTL_T_EV_THREAD && ev->nthr < EV_MAX_THREADS) {
			struct ev_thread *t = &ev->thr[ev->nthr];

			if (ctl_rec_u64(val, len, CTL_T_EV_TID, &v) || v > INT32_MAX ||
			    ctl_rec_text(val, len, CTL_T_EV_COMM, t->comm, sizeof(t->comm)) ||
			    ctl_rec_u64(val, len, CTL_T_EV_CPU_US, &t->cpu_us))
				return -EPROTO;
			t->tid = (int32_t)v;
			/* the split is optional (a peer that predates it); both parts, summing up, or none */
			t->split = !ctl_rec_u64(val, len, CTL_T_EV_THR_UTIME_US, &t->utime_us) &&
				   !ctl_rec_u64(val, len, CTL_T_EV_THR_STIME_US, &t->stime_us) &&
				   t->utime_us <= t->cpu_us && t->stime_us == t->cpu_us - t->utime_us;
			if (!t->split)
				t->utime_us = t->stime_us = 0;
			ev->nthr++;
		}
	}
	ev->valid = true;
	return 0;
}
