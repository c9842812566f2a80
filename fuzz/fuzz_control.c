/* SPDX-License-Identifier: MIT */
/*
 * The control protocol (src/tools/common/control.h) as a peer's bytes reach it: a
 * stream of messages decoded one after another, as ctl_recv and the servers do.
 * Properties:
 *  - ctl_decode returns 0 (more bytes), -EPROTO, or a length within the input,
 *    and never reads past the bytes given (an exact-size copy);
 *  - an accepted message re-encodes to exactly its bytes (the format is canonical);
 *  - every field a walk finds lies inside the body, records too;
 *  - the readers the tools use (text, integers, the evidence) return only their
 *    documented values, texts NUL-terminated; evidence that decodes re-encodes
 *    and decodes to the same evidence.
 */
#include <errno.h>
#include <string.h>

#include "tools/common/control.h"
#include "tools/common/evidence.h"

#include "fuzz.h"

static void check_walk(const struct ctl_msg *m)
{
	struct ctl_iter it;
	const uint8_t *val;
	uint16_t tag;
	size_t len;

	ctl_iter_body(&it, m);
	while (ctl_next(&it, &tag, &val, &len)) {
		FUZZ_CHECK(val >= m->body && val + len <= m->body + m->len, "field outside the body");
		if (ctl_tag_kind(tag) == CTL_K_RECORD) {
			struct ctl_iter r;
			const uint8_t *rv;
			uint16_t rt;
			size_t rl;

			ctl_iter_record(&r, val, len);
			while (ctl_next(&r, &rt, &rv, &rl))
				FUZZ_CHECK(rv >= val && rv + rl <= val + len, "record field outside its record");
		}
	}
}

static void check_readers(const struct ctl_msg *m)
{
	char text[CTL_MAX_TEXT + 1];
	struct evidence ev, again;
	struct ctl_msg *copy;
	uint64_t v;
	int r;

	r = ctl_get_text(m, CTL_T_REASON, text, sizeof(text));
	FUZZ_CHECK(r == 0 || r == -ENOENT, "get_text %d", r);
	if (!r)
		FUZZ_CHECK(memchr(text, 0, sizeof(text)), "text not terminated");
	r = ctl_get_u64(m, CTL_T_RUN_ID, &v);
	FUZZ_CHECK(r == 0 || r == -ENOENT, "get_u64 %d", r);
	r = ev_decode(m, &ev);
	FUZZ_CHECK(r == 0 || r == -EPROTO, "ev_decode %d", r);
	if (r)
		return;
	FUZZ_CHECK(ev.n_napi_ids <= EV_MAX_NAPI && ev.nthr <= EV_MAX_THREADS, "evidence counts out of range");
	FUZZ_CHECK(memchr(ev.mode, 0, sizeof(ev.mode)), "mode not terminated");
	copy = malloc(sizeof(*copy));
	if (!copy)
		abort();
	ctl_msg_init(copy, CTL_EVIDENCE);
	FUZZ_CHECK(ev_encode(copy, &ev) == 0, "decoded evidence does not encode");
	FUZZ_CHECK(ev_decode(copy, &again) == 0, "re-encoded evidence does not decode");
	FUZZ_CHECK(!memcmp(&ev, &again, sizeof(ev)), "evidence changed across encode and decode");
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = fuzz_dup(data, size);
	struct ctl_msg *m = malloc(sizeof(*m));
	uint8_t *out = malloc(CTL_HDR_LEN + CTL_MAX_BODY);
	size_t off = 0;

	if (!m || !out)
		abort();
	while (off < size) {
		const char *why = NULL;
		int n = ctl_decode(buf + off, size - off, m, &why);

		FUZZ_CHECK(n == 0 || n == -EPROTO || (n >= CTL_HDR_LEN && (size_t)n <= size - off), "decode %d", n);
		if (n <= 0) {
			FUZZ_CHECK(n == 0 || (why && *why), "a refusal without a reason");
			break;
		}
		FUZZ_CHECK(ctl_encode(m, out, CTL_HDR_LEN + CTL_MAX_BODY) == n, "re-encoded length differs");
		FUZZ_CHECK(!memcmp(out, buf + off, (size_t)n), "accepted message does not re-encode to itself");
		check_walk(m);
		check_readers(m);
		off += (size_t)n;
	}
	free(out);
	free(m);
	free(buf);
	return 0;
}
