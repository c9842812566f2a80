/* SPDX-License-Identifier: MIT */
/*
 * The agent's authentication (link/auth.c) and secure channel (link/chan.c)
 * without sockets: both ends of the handshake in one process, bytes passed by
 * hand, so every refusal can be provoked exactly: a wrong key on either side, a
 * replayed transcript, a reflected message, garbage, another version, bytes split
 * anywhere; then records tampered with, replayed, reordered, reflected, oversized.
 * And the key file: written 0600 with O_EXCL, refused when others may read it.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "bpt_agent.h"

#include "tools/link/auth.h"
#include "tools/link/chan.h"

static char dir[64], err[512];

static struct auth_key key_of(uint8_t fill)
{
	struct auth_key k;

	memset(k.k, fill, sizeof(k.k));
	return k;
}

/* ---- the key file ---- */

static void path_in_dir(char *path, size_t len, const char *name)
{
	snprintf(path, len, "%s/%s", dir, name);
}

static void test_key_file(void **state)
{
	char path[128], other[128];
	struct auth_key k1, k2;
	struct stat st;

	path_in_dir(path, sizeof(path), "agent.key");
	assert_int_equal(auth_key_new(path, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(auth_key_load(path, &k1, err, sizeof(err)), 0);
	/* never over an existing file */
	assert_int_equal(auth_key_new(path, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "exists: not overwritten"));
	assert_int_equal(auth_key_load(path, &k2, err, sizeof(err)), 0);
	assert_memory_equal(k1.k, k2.k, sizeof(k1.k));
	/* two new keys differ */
	path_in_dir(other, sizeof(other), "other.key");
	assert_int_equal(auth_key_new(other, err, sizeof(err)), 0);
	assert_int_equal(auth_key_load(other, &k2, err, sizeof(err)), 0);
	assert_memory_not_equal(k1.k, k2.k, sizeof(k1.k));
	/* readable by others: refused, one line saying how to fix it */
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(auth_key_load(path, &k2, err, sizeof(err)), -EACCES);
	{
		char want[512];

		snprintf(want, sizeof(want), "key file %s is open to group or others (mode 0644): "
			 "run chmod 600 %s", path, path);
		assert_string_equal(err, want);
	}
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(auth_key_load(path, &k2, err, sizeof(err)), -EACCES);
	assert_int_equal(chmod(path, 0602), 0);
	assert_int_equal(auth_key_load(path, &k2, err, sizeof(err)), -EACCES);
	assert_int_equal(chmod(path, 0400), 0);
	assert_int_equal(auth_key_load(path, &k2, err, sizeof(err)), 0);
	/* not a file, a link, another user's */
	assert_int_equal(auth_key_load(dir, &k2, err, sizeof(err)), -EACCES);
	path_in_dir(other, sizeof(other), "link.key");
	assert_int_equal(symlink(path, other), 0);
	assert_int_equal(auth_key_load(other, &k2, err, sizeof(err)), -ELOOP);
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 12345, 0), 0);
		assert_int_equal(auth_key_load(path, &k2, err, sizeof(err)), -EACCES);
		assert_non_null(strstr(err, "belongs to uid 12345"));
	}
}

static void test_key_file_contents(void **state)
{
	char path[128];
	struct auth_key k;
	const char *bad[] = { "", "# only a comment\n", "abcd\n",
		"zz000000000000000000000000000000000000000000000000000000000000zz\n" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/bad%zu.key", dir, i);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, bad[i], strlen(bad[i])), (ssize_t)strlen(bad[i]));
		close(fd);
		assert_int_equal(auth_key_load(path, &k, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "holds no key"));
	}
}

/* ---- the handshake ---- */

struct wire {
	uint8_t c2a[1024], a2c[1024]; /* everything each side sent, in order */
	size_t c2a_len, a2c_len;
};

/* Move pending output of from into to, chunk bytes at a time; record it in log. */
static void pump(struct auth *from, struct auth *to, uint8_t *log, size_t *log_len, size_t chunk)
{
	size_t len;
	const uint8_t *out = auth_output(from, &len);

	memcpy(log + *log_len, out, len);
	*log_len += len;
	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;

		assert_int_equal(auth_input(to, out + off, n), n);
	}
	auth_output_sent(from);
}

/* A whole handshake between client and agent, chunk bytes per auth_input. */
static void handshake(struct auth *c, struct auth *a, const struct auth_key *kc,
		      const struct auth_key *ka, struct wire *w, size_t chunk)
{
	memset(w, 0, sizeof(*w));
	assert_int_equal(auth_start(c, AUTH_CLIENT, kc), 0);
	assert_int_equal(auth_start(a, AUTH_AGENT, ka), 0);
	for (int i = 0; i < 4 && c->state == AUTH_RUNNING && a->state != AUTH_FAILED; i++) {
		pump(c, a, w->c2a, &w->c2a_len, chunk);
		pump(a, c, w->a2c, &w->a2c_len, chunk);
	}
}

/* One message each way over the channels, and back. */
static void talk(struct chan *from, struct chan *to, const char *text)
{
	uint8_t frame[256], msg[CHAN_MAX_MSG];
	size_t len = 0;
	int n = chan_seal(from, text, strlen(text), frame, sizeof(frame));

	assert_int_equal(n, 4 + strlen(text) + CHAN_ABYTES);
	assert_int_equal(chan_open(to, frame, (size_t)n, msg, sizeof(msg), &len), n);
	assert_int_equal(len, strlen(text));
	assert_memory_equal(msg, text, len);
}

static void test_handshake_ok(void **state)
{
	struct auth_key k = key_of(7);
	struct auth c, a;
	struct wire w;

	for (size_t chunk = 1; chunk <= 80; chunk += chunk < 8 ? 1 : 36) {
		handshake(&c, &a, &k, &k, &w, chunk);
		assert_int_equal(c.state, AUTH_DONE);
		assert_int_equal(a.state, AUTH_DONE);
		assert_int_equal(w.c2a_len, AUTH_HELLO_LEN + AUTH_RESPONSE_LEN);
		assert_int_equal(w.a2c_len, AUTH_CHALLENGE_LEN + AUTH_ACCEPT_LEN);
		talk(&c.chan, &a.chan, "napi-get 8193");
		talk(&a.chan, &c.chan, "ok defer-hard-irqs=0");
		talk(&c.chan, &a.chan, "");
	}
	/* both nonces are fresh: two handshakes never share a transcript */
	{
		struct auth c2, a2;
		struct wire w2;

		handshake(&c2, &a2, &k, &k, &w2, 80);
		assert_memory_not_equal(w.c2a + 8, w2.c2a + 8, AUTH_NONCE_BYTES);
		assert_memory_not_equal(w.a2c + 8, w2.a2c + 8, AUTH_NONCE_BYTES);
	}
}

/* The construction auth.h documents, recomputed here with libsodium from the wire. */
static void hmac3(const uint8_t key[32], const char *label, const uint8_t *t, size_t tlen,
		  const uint8_t *extra, size_t elen, uint8_t out[32])
{
	crypto_auth_hmacsha256_state st;

	crypto_auth_hmacsha256_init(&st, key, 32);
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)label, strlen(label));
	crypto_auth_hmacsha256_update(&st, t, tlen);
	if (elen)
		crypto_auth_hmacsha256_update(&st, extra, elen);
	crypto_auth_hmacsha256_final(&st, out);
}

static void test_construction(void **state)
{
	struct auth_key k = key_of(0x5a);
	uint8_t kauth[32], ksess[32], t[80], mac[32], c2a[32], frame[64], msg[CHAN_MAX_MSG];
	crypto_secretstream_xchacha20poly1305_state rx;
	unsigned long long mlen;
	unsigned char tag;
	struct auth c, a;
	struct wire w;
	int n;

	handshake(&c, &a, &k, &k, &w, 80);
	assert_int_equal(a.state, AUTH_DONE);
	crypto_kdf_derive_from_key(kauth, 32, 1, "bpagent1", k.k);
	crypto_kdf_derive_from_key(ksess, 32, 2, "bpagent1", k.k);
	memcpy(t, w.c2a, 40);      /* HELLO */
	memcpy(t + 40, w.a2c, 40); /* CHALLENGE without its MAC */
	hmac3(kauth, "agent", t, sizeof(t), NULL, 0, mac);
	assert_memory_equal(mac, w.a2c + 40, 32);
	hmac3(kauth, "client", t, sizeof(t), w.a2c + 40, 32, mac);
	assert_memory_equal(mac, w.c2a + AUTH_HELLO_LEN + 8, 32);
	/* the client's first record opens with HMAC(Ksess, "c2a" || T) and its header */
	hmac3(ksess, "c2a", t, sizeof(t), NULL, 0, c2a);
	assert_int_equal(crypto_secretstream_xchacha20poly1305_init_pull(&rx, w.c2a + AUTH_HELLO_LEN + 40,
									 c2a), 0);
	n = chan_seal(&c.chan, "hello", 5, frame, sizeof(frame));
	assert_int_equal(crypto_secretstream_xchacha20poly1305_pull(&rx, msg, &mlen, &tag, frame + 4,
								    (unsigned long long)n - 4, NULL, 0), 0);
	assert_int_equal(mlen, 5);
	assert_memory_equal(msg, "hello", 5);
}

/* The handshake's bytes end where the channel's begin: auth_input takes no more. */
static void test_handshake_stops_at_its_end(void **state)
{
	struct auth_key k = key_of(1);
	struct auth c, a;
	uint8_t buf[AUTH_ACCEPT_LEN + 64];
	size_t len;
	const uint8_t *out;
	int n;

	assert_int_equal(auth_start(&c, AUTH_CLIENT, &k), 0);
	assert_int_equal(auth_start(&a, AUTH_AGENT, &k), 0);
	out = auth_output(&c, &len);
	assert_int_equal(auth_input(&a, out, len), len);
	auth_output_sent(&c);
	out = auth_output(&a, &len);
	assert_int_equal(auth_input(&c, out, len), len);
	auth_output_sent(&a);
	out = auth_output(&c, &len);
	assert_int_equal(auth_input(&a, out, len), len);
	auth_output_sent(&c);
	assert_int_equal(a.state, AUTH_DONE);
	/* ACCEPT and the agent's first record in one segment */
	out = auth_output(&a, &len);
	memcpy(buf, out, len);
	n = chan_seal(&a.chan, "hi", 2, buf + len, sizeof(buf) - len);
	assert_true(n > 0);
	assert_int_equal(auth_input(&c, buf, len + (size_t)n), AUTH_ACCEPT_LEN);
	assert_int_equal(c.state, AUTH_DONE);
	/* and the record opens on the channel that came out of it */
	{
		uint8_t msg[CHAN_MAX_MSG];
		size_t mlen;

		assert_int_equal(chan_open(&c.chan, buf + len, (size_t)n, msg, sizeof(msg), &mlen), n);
		assert_memory_equal(msg, "hi", 2);
	}
}

static void test_wrong_key(void **state)
{
	struct auth_key k1 = key_of(1), k2 = key_of(2);
	struct auth c, a;
	struct wire w;

	/* the client checks the agent first: an agent without our key is found out */
	handshake(&c, &a, &k1, &k2, &w, 80);
	assert_int_equal(c.state, AUTH_FAILED);
	assert_int_equal(c.err, -EACCES);
	assert_string_equal(c.why, "the agent's proof is wrong: it does not hold this key");
	assert_int_equal(a.state, AUTH_RUNNING); /* it never got a RESPONSE */
	assert_int_equal(w.c2a_len, AUTH_HELLO_LEN);
}

/* A RESPONSE whose MAC is off by one bit: the agent refuses, nothing to send. */
static void test_forged_response(void **state)
{
	struct auth_key k = key_of(3);
	struct auth c, a;
	size_t len;
	const uint8_t *out;
	uint8_t resp[AUTH_RESPONSE_LEN];

	assert_int_equal(auth_start(&c, AUTH_CLIENT, &k), 0);
	assert_int_equal(auth_start(&a, AUTH_AGENT, &k), 0);
	out = auth_output(&c, &len);
	auth_input(&a, out, len);
	auth_output_sent(&c);
	out = auth_output(&a, &len);
	auth_input(&c, out, len);
	auth_output_sent(&a);
	out = auth_output(&c, &len);
	memcpy(resp, out, len);
	resp[8 + 5] ^= 0x10;
	assert_int_equal(auth_input(&a, resp, len), len);
	assert_int_equal(a.state, AUTH_FAILED);
	assert_int_equal(a.err, -EACCES);
	assert_string_equal(a.why, "wrong key: the client's proof does not match");
	out = auth_output(&a, &len);
	assert_int_equal(len, 0);
}

/* A recorded good session played again to a new agent: its nonce is new, the MAC fails. */
static void test_replayed_transcript(void **state)
{
	struct auth_key k = key_of(4);
	struct auth c, a, a2;
	struct wire w;

	handshake(&c, &a, &k, &k, &w, 80);
	assert_int_equal(a.state, AUTH_DONE);
	assert_false(auth_nonce_seen(w.c2a + 8));
	assert_int_equal(auth_start(&a2, AUTH_AGENT, &k), 0);
	assert_int_equal(auth_input(&a2, w.c2a, AUTH_HELLO_LEN), AUTH_HELLO_LEN);
	assert_int_equal(a2.state, AUTH_RUNNING);
	assert_true(auth_nonce_seen(w.c2a + 8)); /* what the door logs as a replay */
	auth_input(&a2, w.c2a + AUTH_HELLO_LEN, AUTH_RESPONSE_LEN);
	assert_int_equal(a2.state, AUTH_FAILED);
	assert_int_equal(a2.err, -EACCES);
}

/* An agent's CHALLENGE sent to another agent (or a client's HELLO to a client). */
static void test_reflection(void **state)
{
	struct auth_key k = key_of(5);
	struct auth c, a, other;
	struct wire w;

	handshake(&c, &a, &k, &k, &w, 80);
	assert_int_equal(auth_start(&other, AUTH_AGENT, &k), 0);
	auth_input(&other, w.a2c, AUTH_HELLO_LEN);
	assert_int_equal(other.state, AUTH_FAILED);
	assert_int_equal(other.err, -EPROTO);
	assert_string_equal(other.why, "garbage: a hello with role 2, wanted 1");
	assert_int_equal(auth_start(&other, AUTH_CLIENT, &k), 0);
	auth_input(&other, w.c2a, AUTH_CHALLENGE_LEN);
	assert_int_equal(other.state, AUTH_FAILED);
	assert_int_equal(other.err, -EPROTO);
}

static void test_garbage_and_versions(void **state)
{
	struct auth_key k = key_of(6);
	struct auth a, c;
	const char *http = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	uint8_t hello[AUTH_HELLO_LEN];
	size_t len;

	/* refused at the fourth byte, not after 40 */
	assert_int_equal(auth_start(&a, AUTH_AGENT, &k), 0);
	assert_int_equal(auth_input(&a, (const uint8_t *)http, 3), 3);
	assert_int_equal(a.state, AUTH_RUNNING);
	assert_int_equal(auth_input(&a, (const uint8_t *)http + 3, 1), 1);
	assert_int_equal(a.state, AUTH_FAILED);
	assert_int_equal(a.err, -EPROTO);
	assert_string_equal(a.why, "garbage: not a busypoll agent client (no \"BPAU\" hello)");
	/* nothing more is taken once it failed */
	assert_int_equal(auth_input(&a, (const uint8_t *)http, strlen(http)), 0);

	assert_int_equal(auth_start(&c, AUTH_CLIENT, &k), 0);
	memcpy(hello, auth_output(&c, &len), AUTH_HELLO_LEN);
	hello[4] = 2;
	assert_int_equal(auth_start(&a, AUTH_AGENT, &k), 0);
	auth_input(&a, hello, sizeof(hello));
	assert_int_equal(a.err, -EPROTONOSUPPORT);
	assert_string_equal(a.why, "speaks handshake version 2, this side 1 (update both ends to "
			    "one busypoll release)");
	hello[4] = 1;
	hello[6] = 1; /* reserved bytes must be 0 */
	assert_int_equal(auth_start(&a, AUTH_AGENT, &k), 0);
	auth_input(&a, hello, sizeof(hello));
	assert_int_equal(a.err, -EPROTO);
}

/* ---- the channel ---- */

static void channels(struct chan *c, struct chan *a)
{
	struct auth_key k = key_of(9);
	struct auth ca, aa;
	struct wire w;

	handshake(&ca, &aa, &k, &k, &w, 80);
	assert_int_equal(aa.state, AUTH_DONE);
	*c = ca.chan;
	*a = aa.chan;
}

/* BUSY: a client told so at its eighth byte, however it is split; to an agent it is garbage. */
static void test_busy(void **state)
{
	struct auth_key k = key_of(7);
	uint8_t busy[AUTH_BUSY_LEN];
	struct auth a;

	auth_busy_msg(busy);
	assert_memory_equal(busy, "BPAU\1\2B\0", AUTH_BUSY_LEN);
	assert_int_equal(auth_start(&a, AUTH_CLIENT, &k), 0);
	auth_output_sent(&a);
	for (int i = 0; i < AUTH_BUSY_LEN - 1; i++) {
		assert_int_equal(auth_input(&a, busy + i, 1), 1);
		assert_int_equal(a.state, AUTH_RUNNING);
	}
	assert_int_equal(auth_input(&a, busy + AUTH_BUSY_LEN - 1, 1), 1);
	assert_int_equal(a.state, AUTH_FAILED);
	assert_int_equal(a.err, -EBUSY);
	assert_non_null(strstr(a.why, "busy"));
	assert_int_equal(auth_start(&a, AUTH_AGENT, &k), 0);
	auth_input(&a, busy, sizeof(busy));
	assert_int_equal(a.state, AUTH_RUNNING); /* not yet a whole HELLO */
	auth_wipe(&a);
}

/* The replay memory: a nonce is seen the second time, a new one is not. */
static void test_nonce_memory(void **state)
{
	uint8_t n[AUTH_NONCE_BYTES], m[AUTH_NONCE_BYTES];

	randombytes_buf(n, sizeof(n));
	memcpy(m, n, sizeof(m));
	m[31] ^= 1;
	assert_false(auth_nonce_seen(n));
	assert_true(auth_nonce_seen(n));
	assert_false(auth_nonce_seen(m));
	assert_true(auth_nonce_seen(m));
}

static void test_chan_refusals(void **state)
{
	static uint8_t f1[CHAN_FRAME_MAX], f2[CHAN_FRAME_MAX], msg[CHAN_MAX_MSG];
	struct chan c, a;
	size_t len;
	int n1, n2;

	channels(&c, &a);
	n1 = chan_seal(&c, "one", 3, f1, sizeof(f1));
	n2 = chan_seal(&c, "two", 3, f2, sizeof(f2));
	/* reordered: the second record first */
	assert_int_equal(chan_open(&a, f2, (size_t)n2, msg, sizeof(msg), &len), -EBADMSG);

	channels(&c, &a);
	n1 = chan_seal(&c, "one", 3, f1, sizeof(f1));
	/* partial: wait for the rest */
	assert_int_equal(chan_open(&a, f1, 3, msg, sizeof(msg), &len), 0);
	assert_int_equal(chan_open(&a, f1, (size_t)n1 - 1, msg, sizeof(msg), &len), 0);
	assert_int_equal(chan_open(&a, f1, (size_t)n1, msg, sizeof(msg), &len), n1);
	/* replayed */
	assert_int_equal(chan_open(&a, f1, (size_t)n1, msg, sizeof(msg), &len), -EBADMSG);

	channels(&c, &a);
	n1 = chan_seal(&c, "one", 3, f1, sizeof(f1));
	f1[4 + 1] ^= 1; /* tampered */
	assert_int_equal(chan_open(&a, f1, (size_t)n1, msg, sizeof(msg), &len), -EBADMSG);

	channels(&c, &a);
	n1 = chan_seal(&a, "mine", 4, f1, sizeof(f1));
	/* reflected: the agent's own record back to it */
	assert_int_equal(chan_open(&a, f1, (size_t)n1, msg, sizeof(msg), &len), -EBADMSG);
	/* and it still opens where it was meant to */
	assert_int_equal(chan_open(&c, f1, (size_t)n1, msg, sizeof(msg), &len), n1);

	/* oversized: refused from the length alone */
	channels(&c, &a);
	f1[0] = 0xff, f1[1] = 0xff, f1[2] = 0xff, f1[3] = 0x7f;
	assert_int_equal(chan_open(&a, f1, 4, msg, sizeof(msg), &len), -EMSGSIZE);
	f1[0] = 3, f1[1] = f1[2] = f1[3] = 0; /* shorter than its MAC */
	assert_int_equal(chan_open(&a, f1, 4, msg, sizeof(msg), &len), -EBADMSG);
	assert_int_equal(chan_seal(&c, msg, CHAN_MAX_MSG + 1, f1, sizeof(f1)), -EMSGSIZE);
	/* the largest message goes through */
	memset(msg, 'x', CHAN_MAX_MSG);
	n1 = chan_seal(&c, msg, CHAN_MAX_MSG, f1, sizeof(f1));
	assert_int_equal(n1, CHAN_FRAME_MAX);
	assert_int_equal(chan_open(&a, f1, (size_t)n1, msg, sizeof(msg), &len), n1);
	assert_int_equal(len, CHAN_MAX_MSG);
}

static int setup(void **state)
{
	bpt_tmpdir("test-auth", dir, sizeof(dir));
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_file),
		cmocka_unit_test(test_key_file_contents),
		cmocka_unit_test(test_handshake_ok),
		cmocka_unit_test(test_construction),
		cmocka_unit_test(test_handshake_stops_at_its_end),
		cmocka_unit_test(test_wrong_key),
		cmocka_unit_test(test_forged_response),
		cmocka_unit_test(test_replayed_transcript),
		cmocka_unit_test(test_reflection),
		cmocka_unit_test(test_garbage_and_versions),
		cmocka_unit_test(test_busy),
		cmocka_unit_test(test_nonce_memory),
		cmocka_unit_test(test_chan_refusals),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
