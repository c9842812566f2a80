/* SPDX-License-Identifier: MIT */
/*
 * Placement by NAPI id: every connection of one NAPI id on one loop, because
 * epoll busy polls a single NAPI id per context (napi.rst), and a ring's NAPI
 * list should hold what that thread really serves.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <busypoll/net.h>

#include "core/internal.h"

#define PLACER_MAX_IDS 1024

struct bp_placer {
	pthread_mutex_t lock;
	struct bp_loop **loops;
	size_t nloops;
	size_t next_rr;                 /* round robin for NAPI id 0 */
	uint32_t ids[PLACER_MAX_IDS];   /* NAPI id -> loop index, in arrival order */
	uint32_t owner[PLACER_MAX_IDS];
	size_t nids;
	size_t *ids_per_loop;
};

int bp_placer_create(struct bp_placer **pp, struct bp_loop **loops, size_t nloops)
{
	struct bp_placer *p;

	if (!nloops)
		return bp_err_set(-EINVAL, "placer: no loops");
	p = calloc(1, sizeof(*p));
	if (p) {
		p->loops = calloc(nloops, sizeof(*loops));
		p->ids_per_loop = calloc(nloops, sizeof(size_t));
	}
	if (!p || !p->loops || !p->ids_per_loop) {
		if (p) {
			free(p->loops);
			free(p->ids_per_loop);
		}
		free(p);
		return bp_err_set(-ENOMEM, "placer: out of memory");
	}
	for (size_t i = 0; i < nloops; i++)
		p->loops[i] = loops[i];
	p->nloops = nloops;
	pthread_mutex_init(&p->lock, NULL);
	*pp = p;
	return 0;
}

void bp_placer_destroy(struct bp_placer *p)
{
	if (!p)
		return;
	pthread_mutex_destroy(&p->lock);
	free(p->loops);
	free(p->ids_per_loop);
	free(p);
}

size_t bp_placer_pick(struct bp_placer *p, uint32_t napi_id)
{
	size_t pick = 0;

	pthread_mutex_lock(&p->lock);
	if (napi_id < BP_MIN_NAPI_ID) {
		pick = p->next_rr++ % p->nloops;
		goto out;
	}
	for (size_t i = 0; i < p->nids; i++) {
		if (p->ids[i] == napi_id) {
			pick = p->owner[i];
			goto out;
		}
	}
	for (size_t i = 1; i < p->nloops; i++)
		if (p->ids_per_loop[i] < p->ids_per_loop[pick])
			pick = i;
	if (p->nids < PLACER_MAX_IDS) {
		p->ids[p->nids] = napi_id;
		p->owner[p->nids++] = (uint32_t)pick;
		p->ids_per_loop[pick]++;
	}
out:
	pthread_mutex_unlock(&p->lock);
	return pick;
}

struct placed_fd {
	int fd;
	bp_adopt_fn adopt;
	void *arg;
};

static void placed_run(struct bp_loop *loop, void *argp)
{
	struct placed_fd *pf = argp;

	pf->adopt(loop, pf->fd, pf->arg);
	free(pf);
}

int bp_placer_dispatch(struct bp_placer *p, int fd, bp_adopt_fn adopt, void *arg)
{
	uint32_t id = 0;
	struct placed_fd *pf;
	size_t idx;
	int ret;

	bp_sock_napi_id(fd, &id);
	idx = bp_placer_pick(p, id);
	pf = malloc(sizeof(*pf));
	if (!pf)
		return bp_err_set(-ENOMEM, "placer: out of memory");
	*pf = (struct placed_fd){ fd, adopt, arg };
	ret = bp_loop_post(p->loops[idx], placed_run, pf);
	if (ret) {
		free(pf);
		return ret;
	}
	return (int)idx;
}
