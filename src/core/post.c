/* SPDX-License-Identifier: MIT */
/* Work posted to a loop from other threads, and the eventfd that wakes it. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/internal.h"

int bp_loop_post(struct bp_loop *loop, bp_post_fn fn, void *arg)
{
	uint64_t one = 1;

	pthread_mutex_lock(&loop->post_lock);
	if (loop->nposts == loop->posts_cap) {
		uint32_t cap = loop->posts_cap ? loop->posts_cap * 2 : 64;
		struct bp_post_item *items = realloc(loop->posts, cap * sizeof(*items));

		if (!items) {
			pthread_mutex_unlock(&loop->post_lock);
			return bp_err_set(-ENOMEM, "bp_loop_post: out of memory");
		}
		loop->posts = items;
		loop->posts_cap = cap;
	}
	loop->posts[loop->nposts++] = (struct bp_post_item){ fn, arg };
	pthread_mutex_unlock(&loop->post_lock);

	/* One eventfd write per batch of posts: the loop clears wake_pending when it reads. */
	if (!atomic_exchange(&loop->wake_pending, true)) {
		if (write(loop->wake.fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			return bp_err_sys("write(eventfd)", -errno);
	}
	return 0;
}

void bp_loop_run_posts(struct bp_loop *loop)
{
	struct bp_post_item stack[64];
	uint32_t n;

	/* Take a batch under the lock, run it outside: a post may post again. */
	for (;;) {
		pthread_mutex_lock(&loop->post_lock);
		n = loop->nposts < 64 ? loop->nposts : 64;
		for (uint32_t i = 0; i < n; i++)
			stack[i] = loop->posts[i];
		for (uint32_t i = n; i < loop->nposts; i++)
			loop->posts[i - n] = loop->posts[i];
		loop->nposts -= n;
		pthread_mutex_unlock(&loop->post_lock);
		if (!n)
			return;
		for (uint32_t i = 0; i < n; i++)
			stack[i].fn(loop, stack[i].arg);
	}
}
