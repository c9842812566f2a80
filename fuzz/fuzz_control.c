/* SPDX-License-Identifier: MIT */
/*
 * The control protocol (src/tools/harness/control.h) as a peer's bytes reach it: a
 * stream of messages decoded one after another, as ctl_recv and the servers do.
 * Properties:
 *  - ctl_decode returns 0 (more bytes), -EPROTO, or a length within the input,
 *    and never reads past the bytes given (an exact-size copy);
 *  - an accepted message re-encodes to exactly its bytes (the format is canonical);
 *  - every field a walk finds lies inside the body, records too;
 *  - the readers the tools use (text, integers, the evidence) return only their
 *    documented values, texts NUL-terminated; evidence that decodes re-encodes
 *    and decodes to the same evidence;
 *  - the agent's readers (tools/link/agent_wire.h: its HELLO_OK, a NAPI, the
 *    path report) return 0 or -EPROTO, keep their counts and CPUs in range and
 *    their texts terminated; a HELLO_OK that decodes re-encodes to the same one,
 *    a path report that decodes re-encodes to one that decodes to the same.
 */
#include <errno.h>
#include <string.h>

#include "tools/link/agent_wire.h"
#include "tools/harness/control.h"
#include "tools/harness/evidence.h"

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

/* terminated - a char array holds its NUL. */
#define terminated(a) (memchr((a), 0, sizeof(a)) != NULL)

static void check_hello(const struct ctl_msg *m)
{
	static struct aw_hello h, again;
	static struct ctl_msg copy;
	int r = aw_hello_get(m, &h);

	FUZZ_CHECK(r == 0 || r == -EPROTO, "aw_hello_get %d", r);
	if (r)
		return;
	FUZZ_CHECK(terminated(h.version) && terminated(h.hostname) && terminated(h.kernel), "hello text not terminated");
	FUZZ_CHECK(h.ncpus >= 0 && h.ncpus <= AW_MAX_CPUS, "hello: %d CPUs", h.ncpus);
	for (int i = 0; i < h.ncpus; i++)
		FUZZ_CHECK(h.cpus[i] >= -1 && h.cpus[i] < 65536, "hello: CPU %d", h.cpus[i]);
	FUZZ_CHECK(h.busy_poll >= -1 && h.busy_read >= -1, "hello: sysctls %d %d", h.busy_poll, h.busy_read);
	aw_hello_put(&copy, &h);
	FUZZ_CHECK(!copy.overflow && aw_hello_get(&copy, &again) == 0, "a decoded HELLO_OK does not re-encode");
	FUZZ_CHECK(!memcmp(&h, &again, sizeof(h)), "HELLO_OK changed across encode and decode");
}

static void check_path(const struct ctl_msg *m)
{
	static struct bp_path_report p, again;
	static struct ctl_msg copy;
	int r = aw_path_get(m, &p);

	FUZZ_CHECK(r == 0 || r == -EPROTO, "aw_path_get %d", r);
	if (r)
		return;
	FUZZ_CHECK(p.n_queues <= BP_PATH_MAX && p.n_irqs <= BP_PATH_MAX, "path: %zu queues, %zu IRQs", p.n_queues,
		   p.n_irqs);
	FUZZ_CHECK(terminated(p.dev) && terminated(p.driver.driver) && terminated(p.driver.version), "path text");
	for (size_t i = 0; i < p.n_irqs; i++)
		FUZZ_CHECK(terminated(p.irq[i].name) && terminated(p.irq[i].affinity), "path IRQ text");
	for (int s = 0; s < BP_PATH_SECTIONS; s++)
		FUZZ_CHECK(terminated(p.why[s]) && p.err[s] <= 0 && p.err[s] >= -4095, "path section %d", s);
	aw_path_put(&copy, &p);
	FUZZ_CHECK(!copy.overflow, "a decoded path report does not fit one message");
	FUZZ_CHECK(aw_path_get(&copy, &again) == 0, "a decoded path report re-encodes to one that does not decode");
	FUZZ_CHECK(!memcmp(&p, &again, sizeof(p)), "path report changed across encode and decode");
}

/* check_agent - the agent's readers on whatever decoded, whatever its type (they check it). */
static void check_agent(const struct ctl_msg *m)
{
	struct bp_napi_info n;
	int cpus[8], r;

	check_hello(m);
	check_path(m);
	r = aw_napi_get(m->body, m->len, &n);
	FUZZ_CHECK(r == 0 || r == -EPROTO, "aw_napi_get %d", r);
	r = aw_cpus(m->body, m->len, cpus, 8);
	FUZZ_CHECK(r >= 0 && r <= 8, "aw_cpus %d", r);
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
		check_agent(m);
		off += (size_t)n;
	}
	free(out);
	free(m);
	free(buf);
	return 0;
}
