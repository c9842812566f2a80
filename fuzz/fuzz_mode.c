/* SPDX-License-Identifier: MIT */
/*
 * The mode grammar (bp_mode_parse / bp_mode_format), fed arbitrary text.
 * Properties:
 *  - a refusal is -EINVAL with a non-empty one-line message, NUL-terminated within
 *    errlen (also for tiny errlen), and *mode left untouched;
 *  - an accepted mode formats to canonical text that parses back to the same mode,
 *    and that text is a fixed point of format(parse(.));
 *  - bp_mode_format behaves like snprintf for every buffer length: same return value,
 *    the output a NUL-terminated prefix of the full text.
 */
#include <errno.h>
#include <string.h>

#include <busypoll/mode.h>

#include "fuzz.h"

#define MAX_TEXT 4096

static bool same_mode(const struct bp_mode *a, const struct bp_mode *b)
{
	return a->backend == b->backend && a->policy == b->policy &&
	       a->busy_usecs == b->busy_usecs && a->budget == b->budget &&
	       a->prefer == b->prefer && a->tracking == b->tracking &&
	       a->period_us == b->period_us && a->sq_idle_ms == b->sq_idle_ms &&
	       a->defer_hard_irqs == b->defer_hard_irqs && a->gro_flush_ns == b->gro_flush_ns &&
	       a->irq_suspend_ns == b->irq_suspend_ns && a->setup == b->setup;
}

static void check_message(const char *err, size_t errlen, const char *text)
{
	size_t n = strnlen(err, errlen);

	FUZZ_CHECK(n < errlen, "message not NUL-terminated within %zu for '%s'", errlen, text);
	FUZZ_CHECK(!memchr(err, '\n', n), "message is not one line: '%s'", err);
	if (errlen > 1)
		FUZZ_CHECK(n > 0, "refused '%s' without a message", text);
}

static void check_format_lengths(const struct bp_mode *m, const char *full, int n)
{
	const size_t lens[] = { 0, 1, 2, (size_t)n / 2, (size_t)n, (size_t)n + 1 };
	char buf[1024];

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t len = lens[i];
		int r;

		memset(buf, 'X', sizeof(buf));
		r = bp_mode_format(m, len ? buf : NULL, len);
		FUZZ_CHECK(r == n, "format into %zu bytes returned %d, full length %d", len, r, n);
		if (len == 0) {
			FUZZ_CHECK(buf[0] == 'X', "format with len 0 wrote");
			continue;
		}
		size_t want = len - 1 < (size_t)n ? len - 1 : (size_t)n;

		FUZZ_CHECK(buf[want] == '\0', "format into %zu bytes: no NUL at %zu", len, want);
		FUZZ_CHECK(!memcmp(buf, full, want), "format into %zu bytes is not a prefix", len);
		FUZZ_CHECK(buf[len] == 'X', "format into %zu bytes wrote past the buffer", len);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bp_mode m, m2, untouched;
	char err[256], small_err[8], text2[512], text3[512];
	char *text;
	int ret, n;

	if (size > MAX_TEXT)
		return 0;
	text = malloc(size + 1);
	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';

	memset(&m, 0x5a, sizeof(m));
	untouched = m;
	ret = bp_mode_parse(text, &m, err, sizeof(err));
	if (ret) {
		FUZZ_CHECK(ret == -EINVAL, "parse returned %d for '%s'", ret, text);
		FUZZ_CHECK(!memcmp(&m, &untouched, sizeof(m)), "a refused parse wrote *mode");
		check_message(err, sizeof(err), text);
		/* The same refusal into a tiny buffer: truncated, still terminated. */
		FUZZ_CHECK(bp_mode_parse(text, &m, small_err, sizeof(small_err)) == -EINVAL,
			   "second parse of '%s' differs", text);
		check_message(small_err, sizeof(small_err), text);
		FUZZ_CHECK(!strncmp(small_err, err, sizeof(small_err) - 1), "truncated message differs");
		FUZZ_CHECK(bp_mode_parse(text, &m, NULL, 0) == -EINVAL, "parse without err buffer");
		free(text);
		return 0;
	}
	FUZZ_CHECK(err[0] == '\0', "accepted '%s' with a message '%s'", text, err);
	FUZZ_CHECK(strcmp(bp_mode_name(&m), "invalid"), "accepted '%s' as no family", text);
	(void)bp_mode_is_busy_poll(&m);

	n = bp_mode_format(&m, text2, sizeof(text2));
	FUZZ_CHECK(n > 0 && (size_t)n < sizeof(text2), "format of '%s' returned %d", text, n);
	FUZZ_CHECK(strlen(text2) == (size_t)n, "format of '%s' returned %d for '%s'", text, n, text2);
	check_format_lengths(&m, text2, n);

	ret = bp_mode_parse(text2, &m2, err, sizeof(err));
	FUZZ_CHECK(ret == 0, "canonical text '%s' (from '%s') does not parse: %s", text2, text, err);
	FUZZ_CHECK(same_mode(&m, &m2), "'%s' and its canonical text '%s' differ", text, text2);
	FUZZ_CHECK(!strcmp(bp_mode_name(&m), bp_mode_name(&m2)), "family changed");
	FUZZ_CHECK(bp_mode_is_busy_poll(&m) == bp_mode_is_busy_poll(&m2), "busy-poll changed");
	n = bp_mode_format(&m2, text3, sizeof(text3));
	FUZZ_CHECK(n > 0 && !strcmp(text2, text3), "canonical text is no fixed point: '%s' -> '%s'",
		   text2, text3);
	free(text);
	return 0;
}
