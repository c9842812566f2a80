/* SPDX-License-Identifier: MIT */
/*
 * Controllers: one per admin-queue Connect. The admin queue's loop owns the
 * controller's registers and its keep-alive timer; I/O queues attach from any
 * loop (Connect with the cntlid) under the controller's lock. When the controller
 * dies (admin queue gone, keep-alive expired) or is reset (CC.EN 1 -> 0), each
 * I/O queue is closed on its own loop by a posted message that names it by its
 * unique id, so a queue that closed meanwhile is never touched.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nvme/target/internal.h"
#include "base/bytes.h"

#define CSTS_SHST_OCCURRING (1u << 2)
#define CSTS_SHST_CMPLT (2u << 2)
#define CSTS_SHST_MASK (3u << 2)

uint64_t nvmet_ctrl_cap(const struct bp_nvmet *t, const struct nvmet_ctrl *c)
{
	uint64_t mqes = (c && c->discovery ? NVMET_ADMIN_DEPTH : t->cfg.queue_depth) - 1;

	/* MQES, TO = 15 (7.5 s, as nvmet), CSS bit 37 = NVM command set; MPSMIN 0 (4 KiB); CRMS clear. */
	return mqes | (15ull << 24) | (1ull << 37);
}

static void ka_check(struct bp_loop *loop, void *arg)
{
	struct nvmet_ctrl *c = arg;
	/*
	 * A fresh clock, not the loop's cached one: a Keep Alive handled in this same
	 * iteration stamped ka_last_ns after the cached time, and the unsigned
	 * difference would wrap into an expiry. The host's Keep Alives (every KATO/2)
	 * line up with this check at exactly KATO, so that is the common case.
	 */
	uint64_t now = bp_now_ns(), limit, idle;

	if (!c->kato_ms || !c->admin)
		return;
	/* Like nvmet: the timeout in whole seconds, rounded up. */
	limit = (uint64_t)((c->kato_ms + 999) / 1000) * 1000000000ull;
	idle = now > c->ka_last_ns ? now - c->ka_last_ns : 0;
	if (idle >= limit) {
		nvmet_log(c->t, BP_NVMET_LOG_WARN,
			  "%s (cntlid %u, host %s): no Keep Alive for %u ms (KATO); closing the controller",
			  c->admin->peer, c->cntlid, c->hostnqn, c->kato_ms);
		nvmet_queue_kill(c->admin, "keep-alive timeout");
		return; /* c may be gone now */
	}
	bp_timer_start(loop, &c->ka_timer, (limit - idle) / 1000 + 1, ka_check, c);
}

void nvmet_ctrl_keep_alive(struct nvmet_ctrl *c)
{
	struct bp_loop *loop;

	if (!c->admin)
		return;
	loop = bp_conn_loop(c->admin->conn);
	c->ka_last_ns = bp_now_ns();
	if (c->kato_ms && !bp_timer_armed(&c->ka_timer))
		bp_timer_start(loop, &c->ka_timer, (uint64_t)c->kato_ms * 1000, ka_check, c);
	else if (!c->kato_ms && bp_timer_armed(&c->ka_timer))
		bp_timer_stop(loop, &c->ka_timer);
}

static bool cntlid_in_use(const struct bp_nvmet *t, uint16_t id)
{
	for (const struct nvmet_ctrl *c = t->ctrls; c; c = c->next)
		if (c->cntlid == id)
			return true;
	return false;
}

struct nvmet_ctrl *nvmet_ctrl_create(struct bp_nvmet *t, struct nvmet_queue *admin, const uint8_t *cd,
				     bool discovery, uint32_t kato_ms)
{
	struct nvmet_ctrl *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ioq = calloc(t->cfg.max_queues + 1, sizeof(*c->ioq));
	if (!c->ioq) {
		free(c);
		return NULL;
	}
	c->t = t;
	c->discovery = discovery;
	memcpy(c->hostid, cd + BP_NVMF_CD_HOSTID, 16);
	snprintf(c->subnqn, sizeof(c->subnqn), "%.*s", BP_NVMF_NQN_MAX, (const char *)cd + BP_NVMF_CD_SUBNQN);
	snprintf(c->hostnqn, sizeof(c->hostnqn), "%.*s", BP_NVMF_NQN_MAX, (const char *)cd + BP_NVMF_CD_HOSTNQN);
	c->admin = admin;
	c->kato_ms = kato_ms;
	atomic_store(&c->feat_vwc, 1);
	c->refs = 1;
	pthread_mutex_init(&c->lock, NULL);
	atomic_store(&c->csts, 0);

	pthread_mutex_lock(&t->lock);
	/* Dynamic controller ids 1..0xffef (0xfff0 and up are reserved), never two alike at once. */
	for (int tries = 0; tries < 0xffef; tries++) {
		t->next_cntlid = (uint16_t)(t->next_cntlid % 0xffef + 1);
		if (!cntlid_in_use(t, t->next_cntlid))
			break;
	}
	c->cntlid = t->next_cntlid;
	c->next = t->ctrls;
	t->ctrls = c;
	pthread_mutex_unlock(&t->lock);
	nvmet_ctrl_keep_alive(c);
	return c;
}

uint16_t nvmet_ctrl_attach_ioq(struct bp_nvmet *t, struct nvmet_queue *q, const uint8_t *cd, uint16_t qid,
			       uint32_t *result, struct nvmet_ctrl **out)
{
	uint16_t cntlid = bp_get_le16(cd + BP_NVMF_CD_CNTLID);
	const char *sub = (const char *)cd + BP_NVMF_CD_SUBNQN, *host = (const char *)cd + BP_NVMF_CD_HOSTNQN;
	struct nvmet_ctrl *c;
	uint16_t status = 0;

	pthread_mutex_lock(&t->lock);
	for (c = t->ctrls; c; c = c->next)
		if (c->cntlid == cntlid)
			break;
	if (!c || c->discovery || strncmp(c->subnqn, sub, BP_NVMF_NQN_LEN) ||
	    strncmp(c->hostnqn, host, BP_NVMF_NQN_LEN)) {
		pthread_mutex_unlock(&t->lock);
		*result = BP_NVMF_IPO(1, BP_NVMF_CD_CNTLID);
		return BP_NVME_SC_CONNECT_INVALID_PARAM | BP_NVME_DNR;
	}
	pthread_mutex_lock(&c->lock);
	if (c->dead) {
		*result = BP_NVMF_IPO(1, BP_NVMF_CD_CNTLID);
		status = BP_NVME_SC_CONNECT_INVALID_PARAM | BP_NVME_DNR;
	} else if (qid > t->cfg.max_queues || (c->nr_io_queues && qid > c->nr_io_queues)) {
		*result = BP_NVMF_IPO(0, 42);
		status = BP_NVME_SC_CONNECT_INVALID_PARAM | BP_NVME_DNR;
	} else if (c->ioq[qid].qid_seq) {
		status = BP_NVME_SC_CONNECT_CTRL_BUSY | BP_NVME_DNR;
	} else {
		c->ioq[qid].q = q;
		c->ioq[qid].loop = bp_conn_loop(q->conn);
		c->ioq[qid].qid_seq = q->id;
		c->refs++;
		*out = c;
	}
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_unlock(&t->lock);
	return status;
}

void nvmet_ctrl_put(struct nvmet_ctrl *c)
{
	struct bp_nvmet *t = c->t;
	int left;

	pthread_mutex_lock(&c->lock);
	left = --c->refs;
	pthread_mutex_unlock(&c->lock);
	if (left)
		return;
	pthread_mutex_lock(&t->lock);
	for (struct nvmet_ctrl **pp = &t->ctrls; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	pthread_mutex_unlock(&t->lock);
	pthread_mutex_destroy(&c->lock);
	free(c->ioq);
	free(c);
}

/*
 * A close posted to an I/O queue's loop. Each is on the target's list (t->lock)
 * until it runs: one that a stopping loop drops unrun is freed with the target.
 */
struct nvmet_ioq_kill {
	struct nvmet_ctrl *c;
	uint16_t qid;
	uint64_t seq;
	struct nvmet_ioq_kill *next, *prev;
};

static void kill_unlink(struct bp_nvmet *t, struct nvmet_ioq_kill *k)
{
	if (k->prev)
		k->prev->next = k->next;
	else
		t->kills = k->next;
	if (k->next)
		k->next->prev = k->prev;
}

void nvmet_ctrl_free_kills(struct bp_nvmet *t)
{
	while (t->kills) {
		struct nvmet_ioq_kill *k = t->kills;

		t->kills = k->next;
		free(k);
	}
}

/* On the I/O queue's own loop: close it if it is still the one we meant. */
static void ioq_kill_run(struct bp_loop *loop, void *arg)
{
	struct nvmet_ioq_kill *k = arg;
	struct nvmet_queue *q = NULL;

	(void)loop;
	pthread_mutex_lock(&k->c->t->lock);
	kill_unlink(k->c->t, k);
	pthread_mutex_unlock(&k->c->t->lock);
	pthread_mutex_lock(&k->c->lock);
	if (k->c->ioq[k->qid].qid_seq == k->seq)
		q = k->c->ioq[k->qid].q;
	pthread_mutex_unlock(&k->c->lock);
	if (q) /* only this loop frees q, and we are on it */
		nvmet_queue_kill(q, "controller reset or gone");
	nvmet_ctrl_put(k->c);
	free(k);
}

void nvmet_ctrl_kill_ioqs(struct nvmet_ctrl *c)
{
	struct bp_nvmet *t = c->t;

	/* Under t->lock: once the stop has said so, no loop (maybe gone) is posted to. */
	pthread_mutex_lock(&t->lock);
	if (atomic_load(&t->stopping)) {
		pthread_mutex_unlock(&t->lock);
		return; /* every loop is closing all of its queues anyway */
	}
	pthread_mutex_lock(&c->lock);
	for (uint32_t qid = 1; qid <= t->cfg.max_queues; qid++) {
		struct nvmet_ioq_kill *k;

		if (!c->ioq[qid].qid_seq)
			continue;
		k = malloc(sizeof(*k));
		if (!k)
			continue;
		*k = (struct nvmet_ioq_kill){ c, (uint16_t)qid, c->ioq[qid].qid_seq, t->kills, NULL };
		if (k->next)
			k->next->prev = k;
		t->kills = k;
		c->refs++;
		if (bp_loop_post(c->ioq[qid].loop, ioq_kill_run, k)) {
			c->refs--;
			kill_unlink(t, k);
			free(k);
		}
	}
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_unlock(&t->lock);
}

void nvmet_ctrl_detach(struct nvmet_queue *q)
{
	struct nvmet_ctrl *c = q->ctrl;

	if (!c)
		return;
	q->ctrl = NULL;
	if (q->qid == 0) {
		/* The admin queue is the controller: without it, its I/O queues go too. */
		if (bp_timer_armed(&c->ka_timer))
			bp_timer_stop(bp_conn_loop(q->conn), &c->ka_timer);
		c->admin = NULL;
		pthread_mutex_lock(&c->lock);
		c->dead = true;
		pthread_mutex_unlock(&c->lock);
		nvmet_ctrl_kill_ioqs(c);
	} else {
		pthread_mutex_lock(&c->lock);
		if (q->qid <= q->t->cfg.max_queues && c->ioq[q->qid].qid_seq == q->id)
			memset(&c->ioq[q->qid], 0, sizeof(c->ioq[q->qid]));
		pthread_mutex_unlock(&c->lock);
	}
	nvmet_ctrl_put(c);
}

/* ---- shutdown: every write cache flushed, then SHST complete ---- */

static void shn_step(struct nvmet_ctrl *c);

static void shn_done(struct bp_aio *a, int res)
{
	struct nvmet_ctrl *c = a->arg;

	if (res < 0)
		nvmet_log(c->t, BP_NVMET_LOG_ERROR, "cntlid %u: shutdown: fdatasync of namespace %d: %s", c->cntlid,
			  c->shn_next, strerror(-res));
	shn_step(c);
}

/* The next namespace with a write cache to flush; after the last, SHST complete. */
static void shn_step(struct nvmet_ctrl *c)
{
	struct bp_nvmet *t = c->t;

	while (c->shn_next < t->n_ns) {
		struct nvmet_ns *ns = &t->ns[c->shn_next++];

		if (ns->fd < 0 || ns->readonly || !ns->vwc)
			continue;
		c->shn_aio = (struct bp_aio){ .op = BP_AIO_FDATASYNC, .fd = ns->fd, .done = shn_done, .arg = c };
		if (!bp_aio_submit(&c->shn_th->nsq[ns->nsid - 1], &c->shn_aio))
			return;
		nvmet_log(t, BP_NVMET_LOG_ERROR, "cntlid %u: shutdown: cannot flush %s: %s", c->cntlid, ns->desc,
			  bp_last_error());
	}
	/* Only this thread writes CSTS (the admin queue's, where Property Set runs). */
	atomic_store(&c->csts, (atomic_load(&c->csts) & ~CSTS_SHST_MASK) | CSTS_SHST_CMPLT);
	c->shn_busy = false;
	nvmet_ctrl_put(c);
}

void nvmet_ctrl_shutdown(struct nvmet_ctrl *c, struct nvmet_queue *admin)
{
	if (c->shn_busy)
		return;
	c->shn_busy = true;
	c->shn_next = 0;
	c->shn_th = admin->th;
	pthread_mutex_lock(&c->lock);
	c->refs++; /* the controller stays until the last flush is back */
	pthread_mutex_unlock(&c->lock);
	atomic_store(&c->csts, (atomic_load(&c->csts) & ~CSTS_SHST_MASK) | CSTS_SHST_OCCURRING);
	shn_step(c);
}
