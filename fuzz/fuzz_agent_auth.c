/* SPDX-License-Identifier: MIT */
/*
 * What an unauthenticated peer can send the standing agent (link/auth.c), and
 * what an authenticated one can send afterwards (link/chan.c). The first input
 * byte is the chunk size the bytes arrive in (1..64, as TCP may split them); the
 * rest goes to an agent-role handshake, then, whatever the handshake made of it, to
 * chan_open on a channel with a fixed key. Properties:
 *  - auth_input takes no more than it is given, never more than HELLO + RESPONSE in
 *    all, nothing once it failed, and stops at the first failure;
 *  - a failure is -EPROTO, -EPROTONOSUPPORT or -EACCES with a one-line reason;
 *  - random bytes never authenticate (the MAC cannot be guessed), and a CHALLENGE is
 *    answered exactly once, after a whole HELLO;
 *  - chan_open never takes more than it was given, and bytes that were not sealed
 *    with the key never open (0, -EMSGSIZE or -EBADMSG only).
 * Seeds: corpus/agent_auth/ (a HELLO, a HELLO and garbage RESPONSE, HTTP, a record
 * length above the limit).
 */
#include <errno.h>
#include <string.h>

#include "tools/link/auth.h"
#include "tools/link/chan.h"

#include "fuzz.h"

static void fuzz_handshake(const uint8_t *data, size_t size, size_t chunk)
{
	struct auth_key key;
	struct auth a;
	size_t off = 0, taken = 0, challenges = 0;

	memset(key.k, 0x42, sizeof(key.k));
	FUZZ_CHECK(auth_start(&a, AUTH_AGENT, &key) == 0, "auth_start");
	while (off < size) {
		size_t n = size - off < chunk ? size - off : chunk, out_len;
		enum auth_state before = a.state;
		size_t used = auth_input(&a, data + off, n);

		FUZZ_CHECK(used <= n, "took %zu of %zu", used, n);
		if (before == AUTH_FAILED)
			FUZZ_CHECK(used == 0, "took %zu bytes after failing", used);
		taken += used;
		auth_output(&a, &out_len);
		if (out_len) {
			FUZZ_CHECK(out_len == AUTH_CHALLENGE_LEN && taken >= AUTH_HELLO_LEN,
				   "sent %zu bytes after %zu", out_len, taken);
			challenges++;
			auth_output_sent(&a);
		}
		if (used < n)
			break;
		off += n;
	}
	FUZZ_CHECK(taken <= AUTH_HELLO_LEN + AUTH_RESPONSE_LEN, "took %zu bytes", taken);
	FUZZ_CHECK(challenges <= 1, "%zu challenges", challenges);
	FUZZ_CHECK(a.state != AUTH_DONE, "random bytes authenticated");
	if (a.state == AUTH_FAILED) {
		FUZZ_CHECK(a.err == -EPROTO || a.err == -EPROTONOSUPPORT || a.err == -EACCES, "err %d",
			   a.err);
		FUZZ_CHECK(a.why[0] && !strchr(a.why, '\n') && strnlen(a.why, sizeof(a.why)) < sizeof(a.why),
			   "reason '%s'", a.why);
	}
	auth_wipe(&a);
}

static void fuzz_records(const uint8_t *data, size_t size)
{
	static uint8_t out[CHAN_MAX_MSG];
	uint8_t k[CHAN_KEY_BYTES], header[CHAN_HEADER_BYTES];
	struct chan tx, rx;
	size_t len;
	int n;

	memset(k, 7, sizeof(k));
	chan_init_tx(&tx, k, header);
	if (chan_init_rx(&rx, k, header))
		abort();
	n = chan_open(&rx, data, size, out, sizeof(out), &len);
	FUZZ_CHECK(n == 0 || n == -EMSGSIZE || n == -EBADMSG, "unsealed bytes opened: %d", n);
	chan_wipe(&tx);
	chan_wipe(&rx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf;
	size_t chunk;

	if (size == 0)
		return 0;
	chunk = (size_t)(data[0] % 64) + 1;
	buf = fuzz_dup(data + 1, size - 1);
	fuzz_handshake(buf, size - 1, chunk);
	fuzz_records(buf, size - 1);
	free(buf);
	return 0;
}
