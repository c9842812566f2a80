/* SPDX-License-Identifier: MIT */
/*
 * The control protocol (src/tools/harness/control.h): the exact bytes of a message
 * (another implementation must agree on them), every reason a decoder refuses,
 * records, unknown tags skipped, and a session over a socketpair: a reply matched
 * by seq, a CTL_ERROR turned into -errno with its reason, a session-wide refusal
 * (seq 0), a peer that closes, and a bounded wait.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/bytes.h"
#include "tools/harness/control.h"

static struct ctl_msg m, d;
static uint8_t buf[CTL_HDR_LEN + CTL_MAX_BODY];

static void test_bytes(void **state)
{
	int n;

	ctl_msg_init(&m, CTL_HELLO);
	m.seq = 0x01020304;
	ctl_put_u64(&m, CTL_T_RUN_ID, 0x1122334455667788ull);
	ctl_put_text(&m, CTL_T_TOOL, "rr");
	n = ctl_encode(&m, buf, sizeof(buf));
	assert_int_equal(n, CTL_HDR_LEN + 4 + 8 + 4 + 2);
	assert_memory_equal(buf, "BPCT", 4);
	assert_int_equal(buf[4], CTL_VERSION);
	assert_int_equal(buf[5], 0);
	assert_int_equal(bp_get_le16(buf + 6), CTL_HELLO);
	assert_int_equal(bp_get_le32(buf + 8), 18);
	assert_int_equal(bp_get_le32(buf + 12), 0x01020304);
	/* field: tag u16, len u16, value */
	assert_int_equal(bp_get_le16(buf + 16), CTL_T_RUN_ID);
	assert_int_equal(bp_get_le16(buf + 18), 8);
	assert_true(bp_get_le64(buf + 20) == 0x1122334455667788ull);
	assert_int_equal(bp_get_le16(buf + 28), CTL_T_TOOL);
	assert_int_equal(bp_get_le16(buf + 30), 2);
	assert_memory_equal(buf + 32, "rr", 2);
	/* and back */
	assert_int_equal(ctl_decode(buf, (size_t)n, &d, NULL), n);
	assert_int_equal(d.type, CTL_HELLO);
	assert_int_equal(d.seq, 0x01020304);
	{
		uint64_t v;
		char t[8];

		assert_int_equal(ctl_get_u64(&d, CTL_T_RUN_ID, &v), 0);
		assert_true(v == 0x1122334455667788ull);
		assert_int_equal(ctl_get_text(&d, CTL_T_TOOL, t, sizeof(t)), 0);
		assert_string_equal(t, "rr");
		assert_int_equal(ctl_get_u64(&d, CTL_T_PID, &v), -ENOENT);
		/* cut to the buffer, always terminated */
		assert_int_equal(ctl_get_text(&d, CTL_T_TOOL, t, 2), 0);
		assert_string_equal(t, "r");
	}
	/* a stream: fewer bytes than the message are "more needed", never an error */
	for (int k = 0; k < n; k++)
		assert_int_equal(ctl_decode(buf, (size_t)k, &d, NULL), 0);
}

static int decode_patched(int at, uint8_t v, const char **why)
{
	uint8_t b[64];
	int n;

	ctl_msg_init(&m, CTL_START);
	ctl_put_u64(&m, CTL_T_FLAGS, 1);
	n = ctl_encode(&m, b, sizeof(b));
	if (at >= 0)
		b[at] = v;
	return ctl_decode(b, (size_t)n, &d, why);
}

static void test_refusals(void **state)
{
	const char *why;

	assert_int_equal(decode_patched(-1, 0, &why), CTL_HDR_LEN + 12);
	for (int i = 0; i < 4; i++)
		assert_int_equal(decode_patched(i, 'x', &why), -EPROTO);
	assert_non_null(strstr(why, "magic"));
	assert_int_equal(decode_patched(4, 2, &why), -EPROTO);
	assert_non_null(strstr(why, "version"));
	assert_int_equal(decode_patched(5, 1, &why), -EPROTO);
	assert_int_equal(decode_patched(6, 0, &why), -EPROTO); /* type 0 */
	assert_int_equal(decode_patched(6, CTL_TYPE_MAX + 1, &why), -EPROTO);
	assert_non_null(strstr(why, "type"));
	/* a field longer than the body, an integer of the wrong length */
	assert_int_equal(decode_patched(CTL_HDR_LEN + 2, 9, &why), -EPROTO);
	assert_int_equal(decode_patched(CTL_HDR_LEN + 2, 4, &why), -EPROTO);
	/* a body longer than any message */
	{
		uint8_t b[CTL_HDR_LEN];

		ctl_msg_init(&m, CTL_STOP);
		ctl_encode(&m, b, sizeof(b));
		bp_put_le32(b + 8, CTL_MAX_BODY + 1);
		assert_int_equal(ctl_decode(b, sizeof(b), &d, &why), -EPROTO);
	}
	/* text: no NUL inside; a record inside a record */
	ctl_msg_init(&m, CTL_ERROR);
	ctl_put_text(&m, CTL_T_REASON, "abc");
	m.body[CTL_FIELD_HDR + 1] = 0;
	assert_int_equal(ctl_encode(&m, buf, sizeof(buf)), CTL_HDR_LEN + 7);
	assert_int_equal(ctl_decode(buf, CTL_HDR_LEN + 7, &d, &why), -EPROTO);
	ctl_msg_init(&m, CTL_EVIDENCE);
	{
		size_t a = ctl_record_begin(&m, CTL_T_Q), b = ctl_record_begin(&m, CTL_T_Q);

		ctl_record_end(&m, b);
		ctl_record_end(&m, a);
	}
	assert_int_equal(ctl_decode(buf, (size_t)ctl_encode(&m, buf, sizeof(buf)), &d, &why), -EPROTO);
	assert_non_null(strstr(why, "record"));
	/* unknown tags are skipped: a newer peer's extra field */
	ctl_msg_init(&m, CTL_HELLO);
	ctl_put_u64(&m, 250, 7);
	ctl_put_text(&m, CTL_T_TOOL, "x");
	assert_true(ctl_decode(buf, (size_t)ctl_encode(&m, buf, sizeof(buf)), &d, &why) > 0);
	/* a message that overflowed is never sent */
	ctl_msg_init(&m, CTL_EVIDENCE);
	for (int i = 0; i < CTL_MAX_BODY / 12 + 2; i++)
		ctl_put_u64(&m, CTL_T_EV_NAPI_ID, (uint64_t)i);
	assert_true(m.overflow);
	assert_int_equal(ctl_encode(&m, buf, sizeof(buf)), -EMSGSIZE);
}

static void test_records(void **state)
{
	struct ctl_iter it;
	const uint8_t *val;
	uint16_t tag;
	size_t len, rec;
	int nq = 0;
	uint64_t v;
	char peer[32];

	ctl_msg_init(&m, CTL_EVIDENCE);
	for (int i = 0; i < 3; i++) {
		rec = ctl_record_begin(&m, CTL_T_Q);
		ctl_put_u64(&m, CTL_T_Q_COMMANDS, 100 + (uint64_t)i);
		ctl_put_text(&m, CTL_T_Q_PEER, i == 1 ? "127.0.0.1:1" : "127.0.0.1:2");
		ctl_record_end(&m, rec);
	}
	assert_true(ctl_decode(buf, (size_t)ctl_encode(&m, buf, sizeof(buf)), &d, NULL) > 0);
	ctl_iter_body(&it, &d);
	while (ctl_next(&it, &tag, &val, &len)) {
		assert_int_equal(tag, CTL_T_Q);
		assert_int_equal(ctl_rec_u64(val, len, CTL_T_Q_COMMANDS, &v), 0);
		assert_true(v == 100 + (uint64_t)nq);
		assert_int_equal(ctl_rec_text(val, len, CTL_T_Q_PEER, peer, sizeof(peer)), 0);
		assert_string_equal(peer, nq == 1 ? "127.0.0.1:1" : "127.0.0.1:2");
		nq++;
	}
	assert_int_equal(nq, 3);
}

/* A server for one request: answers with type reply (or an error), on the other end of a socketpair. */
static void serve_one(int fd, uint16_t reply, int err, uint32_t seq_override, bool close_instead)
{
	int n = 0;

	while (n == 0) {
		ssize_t got = recv(fd, buf + n, sizeof(buf) - (size_t)n, 0);

		assert_true(got > 0);
		n = ctl_decode(buf, (size_t)got, &d, NULL);
		assert_true(n >= 0);
	}
	if (close_instead) {
		close(fd);
		return;
	}
	if (err)
		ctl_error_msg(&m, err, "no %s here", "thanks");
	else
		ctl_msg_init(&m, reply);
	m.seq = seq_override != UINT32_MAX ? seq_override : d.seq;
	assert_int_equal(ctl_send_fd(fd, &m), 0);
}

static void test_session(void **state)
{
	struct ctl_session s;
	struct ctl_msg *req = malloc(sizeof(*req)), *rep = malloc(sizeof(*rep));
	char err[256];
	int sv[2];

	assert_non_null(req);
	assert_non_null(rep);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(ctl_session_fd(&s, sv[0], "peer", 200), 0);

	/* a reply, numbered as the request */
	ctl_msg_init(req, CTL_START);
	assert_int_equal(ctl_send(&s, req), 0);
	serve_one(sv[1], CTL_STARTED, 0, UINT32_MAX, false);
	assert_int_equal(ctl_recv(&s, rep, -1), 0);
	assert_int_equal(rep->type, CTL_STARTED);
	assert_int_equal(rep->seq, req->seq);

	/* the request refused: -errno and the reason */
	ctl_msg_init(req, CTL_SET_MODE);
	if (fork() == 0) {
		serve_one(sv[1], 0, EINVAL, UINT32_MAX, false);
		_exit(0);
	}
	assert_int_equal(ctl_call(&s, req, CTL_MODE_SET, rep, err, sizeof(err)), -EINVAL);
	wait(NULL);
	assert_non_null(strstr(err, "server peer: no thanks here"));

	/* a session-wide refusal (seq 0) answers whatever was asked */
	ctl_msg_init(req, CTL_HELLO);
	if (fork() == 0) {
		serve_one(sv[1], 0, EBUSY, 0, false);
		_exit(0);
	}
	assert_int_equal(ctl_call(&s, req, CTL_HELLO_OK, rep, err, sizeof(err)), -EBUSY);
	wait(NULL);

	/* the wrong type of answer */
	ctl_msg_init(req, CTL_STOP);
	if (fork() == 0) {
		serve_one(sv[1], CTL_STARTED, 0, UINT32_MAX, false);
		_exit(0);
	}
	assert_int_equal(ctl_call(&s, req, CTL_EVIDENCE, rep, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "answered STOP with STARTED"));
	wait(NULL);

	/* no answer: a bounded wait */
	ctl_msg_init(req, CTL_SAMPLE);
	assert_int_equal(ctl_call(&s, req, CTL_EVIDENCE, rep, err, sizeof(err)), -ETIMEDOUT);
	assert_non_null(strstr(err, "no answer in time"));
	/* the peer closes */
	close(sv[1]);
	{
		int r = ctl_call(&s, req, CTL_EVIDENCE, rep, err, sizeof(err));

		/* the send itself may see it first */
		assert_true(r == -ECONNRESET || r == -EPIPE);
		assert_non_null(strstr(err, "control connection to peer"));
	}
	ctl_session_close(&s);
	free(req);
	free(rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_session),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
