/* SPDX-License-Identifier: MIT */
/*
 * busypoll target: its end of a control session over an inherited descriptor
 * (--control-fd, how `busypoll perf --spawn-target` drives the target it starts).
 * The protocol is tools/harness/control.h: HELLO is answered with where the target
 * listens, SAMPLE with the target's evidence now (its whole process: CPU, context
 * switches, this namespace's kernel counters), its poll period and one record per
 * queue.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tools/harness/control.h"
#include "tools/harness/evidence.h"
#include "tools/target/target.h"

#define MAX_QUEUES 4096

/* queue_record - one queue's counters as a CTL_T_Q record. */
static void queue_record(struct ctl_msg *m, const struct bp_nvmet_queue_stats *q)
{
	size_t rec = ctl_record_begin(m, CTL_T_Q);

	ctl_put_u64(m, CTL_T_Q_ID, q->queue_id);
	ctl_put_u64(m, CTL_T_Q_CNTLID, q->cntlid);
	ctl_put_u64(m, CTL_T_Q_QID, q->qid);
	ctl_put_u64(m, CTL_T_Q_THREAD, (uint64_t)q->thread);
	ctl_put_u64(m, CTL_T_Q_LIVE, q->live);
	ctl_put_text(m, CTL_T_Q_PEER, q->peer);
	ctl_put_u64(m, CTL_T_Q_COMMANDS, q->commands);
	ctl_put_u64(m, CTL_T_Q_READS, q->reads);
	ctl_put_u64(m, CTL_T_Q_WRITES, q->writes);
	ctl_put_u64(m, CTL_T_Q_FLUSHES, q->flushes);
	ctl_put_u64(m, CTL_T_Q_BYTES_IN, q->bytes_in);
	ctl_put_u64(m, CTL_T_Q_BYTES_OUT, q->bytes_out);
	ctl_put_u64(m, CTL_T_Q_ERRORS, q->errors);
	ctl_put_u64(m, CTL_T_Q_POLL_PASSES, q->poll_passes);
	ctl_put_u64(m, CTL_T_Q_IDLE_EXITS, q->idle_exits);
	ctl_put_u64(m, CTL_T_Q_R2TS, q->r2ts);
	ctl_put_u64(m, CTL_T_Q_POLLS, q->polls);
	ctl_record_end(m, rec);
}

/* sample - the target's evidence since it started, and its queues: out becomes EVIDENCE. */
static void sample(struct bp_nvmet *t, const struct target_opts *o, struct ctl_msg *out)
{
	struct bp_nvmet_queue_stats *st = calloc(MAX_QUEUES, sizeof(*st));
	struct evidence ev = { .valid = true };
	struct bp_kstats k = { 0 }, zero = { 0 };
	size_t n = 0;

	if (!st) {
		ctl_error_msg(out, ENOMEM, "out of memory");
		return;
	}
	snprintf(ev.mode, sizeof(ev.mode), "%s", o->mode_text);
	ev.threads = (uint32_t)o->cfg.threads;
	bp_kstats_read(&k); /* the whole process: every loop thread and helper of the target */
	ev.utime_us = k.utime_us;
	ev.stime_us = k.stime_us;
	ev.nvcsw = k.nvcsw;
	ev.nivcsw = k.nivcsw;
	ev_add_kstats(&ev, &zero, &k);
	ev.interval_ns = bp_now_ns();
	if (bp_nvmet_snapshot(t, st, MAX_QUEUES, &n)) {
		ctl_error_msg(out, EIO, "%s", bp_last_error());
		free(st);
		return;
	}
	ctl_msg_init(out, CTL_EVIDENCE);
	ev_encode(out, &ev);
	ctl_put_u64(out, CTL_T_PID, (uint64_t)getpid());
	ctl_put_u64(out, CTL_T_POLL_PERIOD_US, (uint64_t)o->cfg.poll_period_us);
	for (size_t i = 0; i < n; i++)
		queue_record(out, &st[i]);
	if (out->overflow)
		ctl_error_msg(out, EMSGSIZE, "%zu queues do not fit one message", n);
	free(st);
}

int target_control(struct bp_nvmet *t, const struct target_opts *o, struct target_ctl *c)
{
	struct ctl_msg *in = malloc(sizeof(*in)), *out = malloc(sizeof(*out));
	ssize_t got;
	int ret = 0;

	if (!in || !out) {
		free(in);
		free(out);
		return -ENOMEM;
	}
	got = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, MSG_DONTWAIT);
	if (got == 0)
		ret = -ECONNRESET; /* the peer that started us is gone */
	else if (got < 0 && errno != EAGAIN && errno != EINTR)
		ret = -errno;
	else if (got > 0)
		c->len += (size_t)got;
	while (!ret) {
		const char *why;
		int n = ctl_decode(c->buf, c->len, in, &why);

		if (n == 0)
			break;
		if (n < 0) {
			ret = -EPROTO;
			break;
		}
		memmove(c->buf, c->buf + n, c->len - (size_t)n);
		c->len -= (size_t)n;
		if (in->type == CTL_HELLO) {
			char addr[80];

			bp_format_addr((const struct sockaddr *)&o->cfg.listen, addr, sizeof(addr));
			ctl_msg_init(out, CTL_HELLO_OK);
			ctl_put_text(out, CTL_T_TOOL, "target");
			ctl_put_text(out, CTL_T_ADDR, addr);
			ctl_put_u64(out, CTL_T_PID, (uint64_t)getpid());
			ctl_put_text(out, CTL_T_MODE, o->mode_text);
		} else if (in->type == CTL_SAMPLE) {
			sample(t, o, out);
		} else {
			ctl_error_msg(out, EPROTO, "unexpected %s", ctl_type_name(in->type));
		}
		out->seq = in->seq;
		ret = ctl_send_fd(c->fd, out);
	}
	free(in);
	free(out);
	return ret;
}
