/* SPDX-License-Identifier: MIT */
/*
 * busypoll target: the per-queue counters in the chosen format (contract in
 * tools/target/target.h): the library's table, or json and csv through the
 * shared writer (one record per queue, the same columns every row; json also
 * the storage queues).
 */
#include <stdlib.h>

#include "tools/common/emit.h"
#include "tools/target/target.h"

#define MAX_QUEUES 4096

/* The u64 counters of a queue, in output order. */
#define Q_U64(X) X(commands) X(reads) X(writes) X(flushes) X(r2ts) X(bytes_in) X(bytes_out) X(errors) \
		 X(poll_passes) X(idle_exits) X(write_zeroes) X(deallocs) X(storage_errors) X(polls)

/* json: each file or block-device namespace's storage queue on each thread (depth, in flight, waits). */
static void emit_storage(struct emit *e, struct bp_nvmet *t)
{
	struct bp_nvmet_storage_stats *st = calloc(MAX_QUEUES, sizeof(*st));
	size_t n = 0;

	if (!st || bp_nvmet_storage_snapshot(t, st, MAX_QUEUES, &n))
		n = 0;
	em_array_begin(e, "storage");
	for (size_t i = 0; i < n; i++) {
		em_begin(e, NULL, false);
		em_int(e, "thread", st[i].thread);
		em_u64(e, "nsid", st[i].nsid);
		em_u64(e, "depth", st[i].aio.depth);
		em_u64(e, "inflight", st[i].aio.inflight);
		em_u64(e, "max_inflight", st[i].aio.max_inflight);
		em_u64(e, "waiting", st[i].aio.waiting);
		em_u64(e, "submitted", st[i].aio.submitted);
		em_u64(e, "waited", st[i].aio.waited);
		em_u64(e, "completed", st[i].aio.completed);
		em_u64(e, "errors", st[i].aio.errors);
		em_end(e);
	}
	em_array_end(e);
	free(st);
}

static void emit_queue(struct emit *e, const struct bp_nvmet_queue_stats *q)
{
	em_begin(e, NULL, false);
	em_u64(e, "queue", q->queue_id);
	if (q->cntlid != 0xffff)
		em_u64(e, "cntlid", q->cntlid);
	else
		em_null(e, "cntlid"); /* not connected yet */
	em_u64(e, "qid", q->qid);
	em_int(e, "thread", q->thread);
	em_string(e, "peer", q->peer, sizeof(q->peer));
	em_string(e, "state", q->live ? "live" : "closed", 8);
#define U64(f) em_u64(e, #f, q->f);
	Q_U64(U64)
#undef U64
	em_end(e);
}

void target_print_counters(FILE *out, struct bp_nvmet *t, const struct target_opts *o)
{
	struct bp_nvmet_queue_stats *st, tot = { .cntlid = 0xffff };
	struct emit e = { .out = out };
	size_t n = 0;

	if (o->format == TOOL_FORMAT_TABLE) {
		bp_nvmet_print_stats(t, out);
		fflush(out);
		return;
	}
	st = calloc(MAX_QUEUES, sizeof(*st));
	if (!st || bp_nvmet_snapshot(t, st, MAX_QUEUES, &n)) {
		free(st);
		return;
	}
	if (o->format == TOOL_FORMAT_CSV) {
		e.kind = EMIT_CSV_HEADER;
		emit_queue(&e, &tot);
		fputc('\n', out);
		for (size_t i = 0; i < n; i++) {
			e = (struct emit){ .kind = EMIT_CSV_ROW, .out = out };
			emit_queue(&e, &st[i]);
			fputc('\n', out);
		}
	} else {
		e.kind = EMIT_JSON;
		em_begin(&e, NULL, false);
		em_array_begin(&e, "queues");
		for (size_t i = 0; i < n; i++) {
			emit_queue(&e, &st[i]);
#define SUM(f) tot.f += st[i].f;
			Q_U64(SUM)
#undef SUM
		}
		em_array_end(&e);
		em_begin(&e, "total", false);
#define U64(f) em_u64(&e, #f, tot.f);
		Q_U64(U64)
#undef U64
		em_end(&e);
		emit_storage(&e, t);
		em_end(&e);
		fputc('\n', out);
	}
	fflush(out);
	free(st);
}
