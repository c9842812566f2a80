/* SPDX-License-Identifier: MIT */
/*
 * The target: namespaces opened once, N loop threads (each with one storage queue
 * per namespace: the device's bounded depth on that loop), one listener,
 * connections placed on loops by NAPI id (bp_placer), SO_PRIORITY on every
 * accepted socket, and the per-queue counters gathered from each loop on its own
 * thread. At stop each thread closes its queues and waits for their storage I/O.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/resource.h>
#include <unistd.h>

#include "nvme/target/internal.h"

void bp_nvmet_cfg_defaults(struct bp_nvmet_cfg *cfg)
{
	char err[64];
	struct sockaddr_in *sin = (struct sockaddr_in *)&cfg->listen;

	memset(cfg, 0, sizeof(*cfg));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(BP_NVMET_DEFAULT_PORT);
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cfg->listen_len = sizeof(*sin);
	snprintf(cfg->nqn, sizeof(cfg->nqn), "nqn.2024-01.io.busypoll:target");
	cfg->threads = 1;
	if (bp_mode_parse("epoll:block", &cfg->mode, err, sizeof(err)))
		memset(&cfg->mode, 0, sizeof(cfg->mode));
	cfg->so_priority = -1;
	cfg->max_queues = 64;
	cfg->queue_depth = 128;
	cfg->max_conns = 1024;
	cfg->max_transfer = 1u << 20;
	cfg->inline_data = 8192;
	cfg->maxh2cdata = 128u * 1024;
	cfg->connect_timeout_ms = 10000;
	cfg->io_depth = 128;
	cfg->log_level = BP_NVMET_LOG_INFO;
}

static const char *level_name[] = { "error", "warning", "info", "debug" };

void nvmet_log(struct bp_nvmet *t, enum bp_nvmet_log level, const char *fmt, ...)
{
	FILE *out = t->cfg.log ? t->cfg.log : stderr;
	va_list ap;

	if (level > t->cfg.log_level)
		return;
	pthread_mutex_lock(&t->log_lock);
	fprintf(out, "busypoll target: %s: ", level_name[level]);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
	fflush(out);
	pthread_mutex_unlock(&t->log_lock);
}

void nvmet_record_closed(struct bp_nvmet *t, const struct bp_nvmet_queue_stats *st)
{
	pthread_mutex_lock(&t->lock);
	t->closed[t->n_closed % NVMET_CLOSED_KEEP] = *st;
	t->n_closed++;
	pthread_mutex_unlock(&t->lock);
}

/* ---- accepting ---- */

static void on_accept(struct bp_listener *l, int fd, void *arg)
{
	struct bp_nvmet *t = arg;
	char peer[64] = "?";

	(void)l;
	if (atomic_load(&t->stopping)) {
		/* the loops are being joined (draining their storage I/O meanwhile): no new queue */
		close(fd);
		return;
	}
	if ((uint32_t)atomic_fetch_add(&t->conns, 1) >= t->cfg.max_conns) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);

		atomic_fetch_sub(&t->conns, 1);
		if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
			bp_format_addr((struct sockaddr *)&ss, peer, sizeof(peer));
		nvmet_log(t, BP_NVMET_LOG_WARN, "%s: connection refused: %u connections already (--max-conns)", peer,
			  t->cfg.max_conns);
		close(fd);
		return;
	}
	/* Set before the first byte is answered, so the NIC can steer the queue from the start. */
	if (t->cfg.so_priority >= 0 && bp_sock_set_priority(fd, t->cfg.so_priority))
		nvmet_log(t, BP_NVMET_LOG_WARN, "SO_PRIORITY %d: %s", t->cfg.so_priority, bp_last_error());
	if (bp_placer_dispatch(t->placer, fd, nvmet_queue_adopt, NULL) < 0) {
		nvmet_log(t, BP_NVMET_LOG_ERROR, "placing a connection: %s", bp_last_error());
		atomic_fetch_sub(&t->conns, 1);
		close(fd);
	}
}

/* Out of descriptors (or memory): said once, and again when accepting works again. */
static void on_accept_error(struct bp_listener *l, int err, void *arg)
{
	struct bp_nvmet *t = arg;
	struct rlimit rl = { 0 };

	(void)l;
	if (!err) {
		nvmet_log(t, BP_NVMET_LOG_WARN, "accepting new connections again (%d open)", atomic_load(&t->conns));
		return;
	}
	if (err == -EMFILE && getrlimit(RLIMIT_NOFILE, &rl) == 0)
		nvmet_log(t, BP_NVMET_LOG_ERROR, "cannot accept new connections: accept4: %s with %d open "
			  "(RLIMIT_NOFILE %llu; raise it with ulimit -n); the queues already connected are still "
			  "served, and new ones are accepted as descriptors free up", strerror(-err),
			  atomic_load(&t->conns), (unsigned long long)rl.rlim_cur);
	else
		nvmet_log(t, BP_NVMET_LOG_ERROR, "cannot accept new connections: accept4: %s with %d open; the "
			  "queues already connected are still served, and new ones are accepted once it passes",
			  strerror(-err), atomic_load(&t->conns));
}

/* ---- threads ---- */

/* A batch of storage completions on this thread is over: send what they answered. */
static void storage_batch(struct bp_aio_queue *q, void *arg)
{
	(void)q;
	nvmet_thread_flush_dirty(arg);
}

static int thread_setup(struct bp_loop *loop, void *arg)
{
	struct nvmet_thread *th = arg;
	int ret;

	th->loop = loop;
	th->t->loops[th->idx] = loop;
	bp_loop_set_data(loop, th);
	for (int i = 0; i < th->t->n_ns; i++) {
		ret = bp_aio_queue_init(&th->nsq[i], loop, th->t->cfg.io_depth);
		if (ret)
			return ret;
		bp_aio_queue_on_batch(&th->nsq[i], storage_batch, th);
	}
	return 0;
}

static void thread_teardown(struct bp_loop *loop, void *arg)
{
	struct nvmet_thread *th = arg;

	nvmet_queue_free_all(th);
	/* Queues closed with storage I/O in flight are freed as it comes back. */
	if (bp_aio_drain(loop, NVMET_DRAIN_MS))
		nvmet_log(th->t, BP_NVMET_LOG_ERROR, "thread %d: %s at stop; their buffers stay allocated", th->idx,
			  bp_last_error());
}

/* Run fn on a loop's thread and wait for it (start-up only). */
struct sync_call {
	int (*fn)(struct bp_loop *, void *);
	void *arg;
	int ret;
	char err[256];
	bool done;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static void sync_call_run(struct bp_loop *loop, void *argp)
{
	struct sync_call *sc = argp;

	sc->ret = sc->fn(loop, sc->arg);
	if (sc->ret)
		snprintf(sc->err, sizeof(sc->err), "%s", bp_last_error());
	pthread_mutex_lock(&sc->lock);
	sc->done = true;
	pthread_cond_signal(&sc->cond);
	pthread_mutex_unlock(&sc->lock);
}

static int run_on_loop(struct bp_loop *loop, int (*fn)(struct bp_loop *, void *), void *arg)
{
	struct sync_call sc = { .fn = fn, .arg = arg };
	int ret;

	pthread_mutex_init(&sc.lock, NULL);
	pthread_cond_init(&sc.cond, NULL);
	ret = bp_loop_post(loop, sync_call_run, &sc);
	if (!ret) {
		pthread_mutex_lock(&sc.lock);
		while (!sc.done)
			pthread_cond_wait(&sc.cond, &sc.lock);
		pthread_mutex_unlock(&sc.lock);
		ret = sc.ret;
		if (ret)
			bp_set_last_error(ret, "%s", sc.err);
	}
	pthread_cond_destroy(&sc.cond);
	pthread_mutex_destroy(&sc.lock);
	return ret;
}

static int listen_on_loop(struct bp_loop *loop, void *arg)
{
	struct bp_nvmet *t = arg;
	char addr[80];
	int ret = bp_listener_create(loop, (struct sockaddr *)&t->cfg.listen, t->cfg.listen_len, on_accept, t,
				     &t->listener);

	bp_format_addr((struct sockaddr *)&t->cfg.listen, addr, sizeof(addr));
	if (ret == -EADDRINUSE)
		return bp_set_last_error(ret, "--listen %s: the port is in use (another target? pick another port)",
					 addr);
	if (ret) {
		/* a copy: bp_last_error() is the buffer bp_set_last_error writes (it garbled the line) */
		char why[256];

		snprintf(why, sizeof(why), "%s", bp_last_error());
		return bp_set_last_error(ret, "--listen %s: %s", addr, why);
	}
	bp_listener_on_error(t->listener, on_accept_error);
	t->port = bp_listener_port(t->listener);
	return 0;
}

static int cfg_check(const struct bp_nvmet_cfg *c)
{
	size_t n = strnlen(c->nqn, sizeof(c->nqn));

	if (!n || n > BP_NVMF_NQN_MAX)
		return bp_set_last_error(-EINVAL, "--nqn: must be 1 to 223 bytes");
	if (!strcmp(c->nqn, BP_NVME_DISC_NQN))
		return bp_set_last_error(-EINVAL, "--nqn %s: that is the discovery subsystem's name", c->nqn);
	if (c->threads < 1 || c->threads > BP_NVMET_MAX_THREADS)
		return bp_set_last_error(-EINVAL, "--threads %d: must be between 1 and %d", c->threads,
					 BP_NVMET_MAX_THREADS);
	if (c->n_ns < 0 || c->n_ns > BP_NVMET_MAX_NS)
		return bp_set_last_error(-EINVAL, "at most %d namespaces", BP_NVMET_MAX_NS);
	if (c->queue_depth < NVMET_ADMIN_DEPTH || c->queue_depth > 1024)
		return bp_set_last_error(-EINVAL, "--queue-depth %u: must be between 32 and 1024", c->queue_depth);
	if (c->max_queues < 1 || c->max_queues > 1024)
		return bp_set_last_error(-EINVAL, "--max-queues %u: must be between 1 and 1024", c->max_queues);
	if (c->max_transfer < 4096 || (c->max_transfer & (c->max_transfer - 1)) || c->max_transfer > (32u << 20))
		return bp_set_last_error(-EINVAL, "max transfer %u: a power of two from 4096 to 32M", c->max_transfer);
	if (c->inline_data < 4096 || c->inline_data > 65536 || c->inline_data % 16)
		return bp_set_last_error(-EINVAL, "in-capsule data %u: 4096..65536, a multiple of 16", c->inline_data);
	if (c->maxh2cdata < BP_NVME_TCP_MIN_MAXH2CDATA || c->maxh2cdata % 4 || c->maxh2cdata > (16u << 20))
		return bp_set_last_error(-EINVAL, "maxh2cdata %u: 4096..16M, a multiple of 4", c->maxh2cdata);
	if (!c->max_conns)
		return bp_set_last_error(-EINVAL, "--max-conns: at least 1");
	if (!c->io_depth || c->io_depth > BP_AIO_MAX_DEPTH)
		return bp_set_last_error(-EINVAL, "--io-depth %u: must be between 1 and %u", c->io_depth,
					 BP_AIO_MAX_DEPTH);
	return 0;
}

static void serial_of(const char *nqn, char out[21])
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const char *p = nqn; *p; p++) {
		h ^= (uint8_t)*p;
		h *= 0x100000001b3ull;
	}
	snprintf(out, 21, "%016llx%04x", (unsigned long long)h, (unsigned)(h >> 48) ^ 0xb9);
}

static void target_free(struct bp_nvmet *t)
{
	for (int i = 0; i < t->n_ns; i++)
		nvmet_ns_close(&t->ns[i]);
	while (t->ctrls) { /* only if a queue somehow outlived its loop */
		struct nvmet_ctrl *c = t->ctrls;

		t->ctrls = c->next;
		pthread_mutex_destroy(&c->lock);
		free(c->ioq);
		free(c);
	}
	nvmet_ctrl_free_kills(t);
	bp_placer_destroy(t->placer);
	pthread_mutex_destroy(&t->lock);
	pthread_mutex_destroy(&t->log_lock);
	free(t);
}

int bp_nvmet_start(const struct bp_nvmet_cfg *cfg, struct bp_nvmet **tp)
{
	struct bp_nvmet *t;
	int ret = cfg_check(cfg);

	if (ret)
		return ret;
	t = calloc(1, sizeof(*t));
	if (!t)
		return bp_set_last_error(-ENOMEM, "out of memory");
	t->cfg = *cfg;
	pthread_mutex_init(&t->lock, NULL);
	pthread_mutex_init(&t->log_lock, NULL);
	serial_of(cfg->nqn, t->serial);
	for (int i = 0; i < cfg->n_ns; i++) {
		ret = nvmet_ns_open(&t->ns[i], &cfg->ns[i], (uint32_t)i + 1, cfg->nqn);
		if (ret) {
			target_free(t);
			return ret;
		}
		t->n_ns = i + 1;
	}
	t->nthreads = cfg->threads;
	for (int i = 0; i < t->nthreads; i++) {
		t->th[i].t = t;
		t->th[i].idx = i;
		ret = bp_loop_thread_start(&t->th[i].lt, &cfg->mode, cfg->ncpus ? cfg->cpus[i % cfg->ncpus] : -1,
					   thread_setup, &t->th[i]);
		if (ret) {
			char msg[256];

			snprintf(msg, sizeof(msg), "%s", bp_last_error());
			for (int j = 0; j < i; j++)
				bp_loop_thread_join(t->th[j].lt, thread_teardown, &t->th[j]);
			target_free(t);
			return bp_set_last_error(ret, "%s", msg);
		}
	}
	ret = bp_placer_create(&t->placer, t->loops, (size_t)t->nthreads);
	if (!ret)
		ret = run_on_loop(t->loops[0], listen_on_loop, t);
	if (ret) {
		char msg[256];

		snprintf(msg, sizeof(msg), "%s", bp_last_error());
		for (int j = 0; j < t->nthreads; j++)
			bp_loop_thread_join(t->th[j].lt, thread_teardown, &t->th[j]);
		target_free(t);
		return bp_set_last_error(ret, "%s", msg);
	}
	*tp = t;
	return 0;
}

uint16_t bp_nvmet_port(const struct bp_nvmet *t)
{
	return t->port;
}

int bp_nvmet_ns_info(const struct bp_nvmet *t, int i, struct bp_nvmet_ns_info *info)
{
	const struct nvmet_ns *ns;

	if (i < 0 || i >= t->n_ns)
		return -ENOENT;
	ns = &t->ns[i];
	memset(info, 0, sizeof(*info));
	info->nsid = ns->nsid;
	info->kind = ns->kind;
	info->blockdev = ns->blockdev;
	info->direct = ns->direct;
	info->read_only = ns->readonly;
	info->write_cache = ns->vwc;
	info->write_zeroes = ns->can_zero;
	info->deallocate = ns->can_dealloc;
	info->dealloc_zeroes = ns->dealloc_zeroes;
	info->block_size = 1u << ns->lba_shift;
	info->size = ns->size;
	snprintf(info->desc, sizeof(info->desc), "%s", ns->desc);
	return 0;
}

void bp_nvmet_stop(struct bp_nvmet *t)
{
	if (!t)
		return;
	/* Under the lock: a controller's close posted to a loop is either in flight now or never. */
	pthread_mutex_lock(&t->lock);
	atomic_store(&t->stopping, true);
	pthread_mutex_unlock(&t->lock);
	for (int i = 0; i < t->nthreads; i++)
		bp_loop_thread_join(t->th[i].lt, thread_teardown, &t->th[i]);
	target_free(t);
}

/* ---- counters ---- */

/* Run fn(th, arg) on every loop's own thread, one at a time, and wait for all of them. */
struct each_loop {
	void (*fn)(struct nvmet_thread *th, void *arg);
	void *arg;
	int pending;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static void each_loop_run(struct bp_loop *loop, void *p)
{
	struct each_loop *e = p;

	pthread_mutex_lock(&e->lock);
	e->fn(bp_loop_data(loop), e->arg);
	if (--e->pending == 0)
		pthread_cond_signal(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

static void on_every_loop(struct bp_nvmet *t, void (*fn)(struct nvmet_thread *, void *), void *arg)
{
	struct each_loop e = { .fn = fn, .arg = arg };

	pthread_mutex_init(&e.lock, NULL);
	pthread_cond_init(&e.cond, NULL);
	pthread_mutex_lock(&e.lock);
	for (int i = 0; i < t->nthreads; i++)
		if (!bp_loop_post(t->loops[i], each_loop_run, &e))
			e.pending++;
	while (e.pending)
		pthread_cond_wait(&e.cond, &e.lock);
	pthread_mutex_unlock(&e.lock);
	pthread_cond_destroy(&e.cond);
	pthread_mutex_destroy(&e.lock);
}

struct snap {
	struct bp_nvmet_queue_stats *out;
	size_t max, n;
};

static void snap_thread(struct nvmet_thread *th, void *arg)
{
	struct snap *s = arg;

	for (struct nvmet_queue *q = th->queues; q; q = q->next)
		if (s->n < s->max)
			s->out[s->n++] = q->st;
}

int bp_nvmet_snapshot(struct bp_nvmet *t, struct bp_nvmet_queue_stats *out, size_t max, size_t *n)
{
	struct snap s = { .out = out, .max = max };
	uint32_t kept;

	on_every_loop(t, snap_thread, &s);
	pthread_mutex_lock(&t->lock);
	kept = t->n_closed < NVMET_CLOSED_KEEP ? t->n_closed : NVMET_CLOSED_KEEP;
	for (uint32_t i = 0; i < kept && s.n < max; i++)
		out[s.n++] = t->closed[(t->n_closed - kept + i) % NVMET_CLOSED_KEEP];
	pthread_mutex_unlock(&t->lock);
	*n = s.n;
	return 0;
}

struct storage_snap {
	struct bp_nvmet_storage_stats *out;
	size_t max, n;
};

static void storage_snap_thread(struct nvmet_thread *th, void *arg)
{
	struct storage_snap *s = arg;

	for (int i = 0; i < th->t->n_ns && s->n < s->max; i++) {
		if (th->t->ns[i].ram)
			continue;
		s->out[s->n].thread = th->idx;
		s->out[s->n].nsid = (uint32_t)i + 1;
		bp_aio_queue_stats(&th->nsq[i], &s->out[s->n].aio);
		s->n++;
	}
}

int bp_nvmet_storage_snapshot(struct bp_nvmet *t, struct bp_nvmet_storage_stats *out, size_t max, size_t *n)
{
	struct storage_snap s = { .out = out, .max = max };

	on_every_loop(t, storage_snap_thread, &s);
	*n = s.n;
	return 0;
}

/* The storage queues: one line per thread and namespace, each starting "storage". */
static void print_storage(struct bp_nvmet *t, FILE *out)
{
	size_t max = (size_t)t->nthreads * (size_t)t->n_ns, n = 0;
	struct bp_nvmet_storage_stats *st = calloc(max ? max : 1, sizeof(*st));

	if (!st)
		return;
	bp_nvmet_storage_snapshot(t, st, max, &n);
	if (!n) {
		free(st);
		return;
	}
	fprintf(out, "%-7s %-3s %-4s %5s %8s %12s %7s %12s %10s %12s %8s\n", "storage", "thr", "nsid", "depth",
		"inflight", "max_inflight", "waiting", "submitted", "waited", "completed", "errors");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%-7s %-3d %-4u %5u %8u %12u %7u %12llu %10llu %12llu %8llu\n", "storage", st[i].thread,
			st[i].nsid, st[i].aio.depth, st[i].aio.inflight, st[i].aio.max_inflight, st[i].aio.waiting,
			(unsigned long long)st[i].aio.submitted, (unsigned long long)st[i].aio.waited,
			(unsigned long long)st[i].aio.completed, (unsigned long long)st[i].aio.errors);
	free(st);
}

void bp_nvmet_print_stats(struct bp_nvmet *t, FILE *out)
{
	size_t max = 4096, n = 0;
	struct bp_nvmet_queue_stats *st = calloc(max, sizeof(*st)), tot = { 0 };

	if (!st)
		return;
	print_storage(t, out);
	bp_nvmet_snapshot(t, st, max, &n);
	fprintf(out, "%-6s %-6s %-4s %-3s %-22s %-6s %10s %10s %10s %8s %8s %12s %12s %8s %12s %10s %8s %8s %8s %12s\n",
		"queue", "cntlid", "qid", "thr", "peer", "state", "commands", "reads", "writes", "flushes", "r2ts",
		"bytes_in", "bytes_out", "errors", "poll_passes", "idle_exits", "zeroes", "deallocs", "st_errs", "polls");
	for (size_t i = 0; i < n; i++) {
		const struct bp_nvmet_queue_stats *q = &st[i];
		char cntlid[8] = "-";

		if (q->cntlid != 0xffff)
			snprintf(cntlid, sizeof(cntlid), "%u", q->cntlid);
		fprintf(out, "%-6llu %-6s %-4u %-3d %-22s %-6s %10llu %10llu %10llu %8llu %8llu %12llu %12llu %8llu %12llu "
			"%10llu %8llu %8llu %8llu %12llu\n",
			(unsigned long long)q->queue_id, cntlid, q->qid, q->thread, q->peer, q->live ? "live" : "closed",
			(unsigned long long)q->commands, (unsigned long long)q->reads, (unsigned long long)q->writes,
			(unsigned long long)q->flushes, (unsigned long long)q->r2ts, (unsigned long long)q->bytes_in,
			(unsigned long long)q->bytes_out, (unsigned long long)q->errors,
			(unsigned long long)q->poll_passes, (unsigned long long)q->idle_exits,
			(unsigned long long)q->write_zeroes, (unsigned long long)q->deallocs,
			(unsigned long long)q->storage_errors, (unsigned long long)q->polls);
		tot.commands += q->commands;
		tot.reads += q->reads;
		tot.writes += q->writes;
		tot.flushes += q->flushes;
		tot.r2ts += q->r2ts;
		tot.bytes_in += q->bytes_in;
		tot.bytes_out += q->bytes_out;
		tot.errors += q->errors;
		tot.poll_passes += q->poll_passes;
		tot.idle_exits += q->idle_exits;
		tot.write_zeroes += q->write_zeroes;
		tot.deallocs += q->deallocs;
		tot.storage_errors += q->storage_errors;
		tot.polls += q->polls;
	}
	fprintf(out, "%-6s %-6s %-4s %-3s %-22s %-6s %10llu %10llu %10llu %8llu %8llu %12llu %12llu %8llu %12llu %10llu "
		"%8llu %8llu %8llu %12llu\n",
		"total", "", "", "", "", "", (unsigned long long)tot.commands, (unsigned long long)tot.reads,
		(unsigned long long)tot.writes, (unsigned long long)tot.flushes, (unsigned long long)tot.r2ts,
		(unsigned long long)tot.bytes_in, (unsigned long long)tot.bytes_out, (unsigned long long)tot.errors,
		(unsigned long long)tot.poll_passes, (unsigned long long)tot.idle_exits,
		(unsigned long long)tot.write_zeroes, (unsigned long long)tot.deallocs,
		(unsigned long long)tot.storage_errors, (unsigned long long)tot.polls);
	if (t->n_closed > NVMET_CLOSED_KEEP)
		fprintf(out, "(%u closed queues before these are not shown)\n", t->n_closed - NVMET_CLOSED_KEEP);
	fflush(out);
	free(st);
}
