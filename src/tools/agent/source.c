/* SPDX-License-Identifier: MIT */
/* Sources of the agent's connections and the refusal log (contract in source.h). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "tools/agent/agent.h"
#include "tools/agent/source.h"

void src_of(const struct sockaddr *sa, struct src *s)
{
	memset(s, 0, sizeof(*s));
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)sa;

		if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
			memcpy(s->b, a6->sin6_addr.s6_addr, 16);
			inet_ntop(AF_INET, s->b + 12, s->text, sizeof(s->text));
			return;
		}
		memcpy(s->b, a6->sin6_addr.s6_addr, 8);
		inet_ntop(AF_INET6, s->b, s->text, sizeof(s->text));
		strncat(s->text, "/64", sizeof(s->text) - strlen(s->text) - 1);
	} else if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *a4 = (const struct sockaddr_in *)sa;

		s->b[10] = s->b[11] = 0xff;
		memcpy(s->b + 12, &a4->sin_addr, 4);
		inet_ntop(AF_INET, &a4->sin_addr, s->text, sizeof(s->text));
	} else {
		snprintf(s->text, sizeof(s->text), "other");
	}
}

bool src_same(const struct src *a, const struct src *b)
{
	return memcmp(a->b, b->b, sizeof(a->b)) == 0;
}

uint64_t src_hash(const struct src *s)
{
	static uint8_t key[crypto_shorthash_KEYBYTES];
	static bool keyed;
	uint8_t h[crypto_shorthash_BYTES];
	uint64_t v;

	if (!keyed) {
		randombytes_buf(key, sizeof(key));
		keyed = true;
	}
	crypto_shorthash(h, s->b, sizeof(s->b), key);
	memcpy(&v, h, sizeof(v));
	return v;
}

/* The slot of s; a slot another source held gives its count to the interval's rest. */
static struct src_log_slot *slot_of(struct src_log *l, const struct src *s)
{
	struct src_log_slot *sl = &l->slot[src_hash(s) % SRC_LOG_SLOTS];

	if (sl->used && src_same(&sl->src, s))
		return sl;
	if (sl->used && sl->held) {
		l->over += sl->held;
		l->over_sources++;
	}
	memset(sl, 0, sizeof(*sl));
	sl->src = *s;
	sl->used = true;
	return sl;
}

void src_log_refused(struct src_log *l, const struct src *s, const char *peer, const char *why)
{
	struct src_log_slot *sl = slot_of(l, s);

	if (!sl->written && l->lines < SRC_LOG_LINES) {
		sl->written = true;
		l->lines++;
		agent_log(peer, "refused: %s", why);
		return;
	}
	sl->held++;
	snprintf(sl->last_why, sizeof(sl->last_why), "%s", why);
}

void src_log_flush(struct src_log *l)
{
	int lines = 0;

	for (int i = 0; i < SRC_LOG_SLOTS; i++) {
		struct src_log_slot *sl = &l->slot[i];

		if (!sl->used)
			continue;
		if (sl->held && lines < SRC_LOG_LINES) {
			lines++;
			agent_log(sl->src.text, "refused %llu more connection(s) in the last %d s (the last: %s)",
				  (unsigned long long)sl->held, SRC_LOG_INTERVAL_S, sl->last_why);
		} else if (sl->held) {
			l->over += sl->held;
			l->over_sources++;
		}
		sl->held = 0;
		sl->written = false;
	}
	if (l->over)
		agent_log(NULL, "%llu more refusals from %llu sources suppressed in the last %d s (at most %d "
			  "lines of refusals per %d s)", (unsigned long long)l->over,
			  (unsigned long long)l->over_sources, SRC_LOG_INTERVAL_S, SRC_LOG_LINES,
			  SRC_LOG_INTERVAL_S);
	l->lines = 0;
	l->over = l->over_sources = 0;
}
