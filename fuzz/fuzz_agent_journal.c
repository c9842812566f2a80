/* SPDX-License-Identifier: MIT */
/*
 * The restore journal's lines (agent/journal.c) and the key=value lists inside them
 * (common/nic_text.c), fed arbitrary text: a journal on disk may be damaged. Properties:
 *  - a line is refused with -EINVAL or taken; a taken line formats back to text that
 *    parses to the same entry and is a fixed point of format(parse(.));
 *  - the list parsers refuse with -EINVAL and a one-line message, or take a list that
 *    formats to a list they take again, to the same settings.
 * Seeds: corpus/agent_journal/ (one line of each kind, and near misses).
 */
#include <errno.h>
#include <string.h>

#include "tools/agent/journal.h"
#include "tools/common/nic_text.h"

#include "fuzz.h"

#define MAX_TEXT 512

static void fuzz_line(const char *text)
{
	struct jentry e, again;
	char out[300], out2[300];
	int rc = jentry_parse(text, &e);

	FUZZ_CHECK(rc == 0 || rc == -EINVAL, "jentry_parse returned %d", rc);
	if (rc)
		return;
	FUZZ_CHECK(jentry_format(&e, out, sizeof(out)) == 0, "a taken line does not format: '%s'", text);
	FUZZ_CHECK(jentry_parse(out, &again) == 0, "'%s' formats to '%s', refused", text, out);
	FUZZ_CHECK(jentry_format(&again, out2, sizeof(out2)) == 0 && !strcmp(out, out2),
		   "not a fixed point: '%s' -> '%s'", out, out2);
}

static void check_err(int rc, const char *err, const char *text)
{
	FUZZ_CHECK(rc == -EINVAL, "refusal %d for '%s'", rc, text);
	FUZZ_CHECK(err[0] && !strchr(err, '\n'), "message '%s' for '%s'", err, text);
}

static void fuzz_lists(const char *text)
{
	struct bp_nic_coalesce c, c2;
	struct bp_nic_channels ch, ch2;
	char err[256], out[256];
	int rc;

	if ((rc = nic_parse_coalesce(text, &c, err, sizeof(err)))) {
		check_err(rc, err, text);
	} else {
		nic_format_coalesce(&c, out, sizeof(out));
		FUZZ_CHECK(nic_parse_coalesce(out, &c2, err, sizeof(err)) == 0 && c2.has == c.has &&
			   c2.rx_usecs == c.rx_usecs && c2.rx_frames == c.rx_frames &&
			   c2.tx_usecs == c.tx_usecs && c2.tx_frames == c.tx_frames &&
			   c2.adaptive_rx == c.adaptive_rx && c2.adaptive_tx == c.adaptive_tx,
			   "coalescing '%s' -> '%s' differs", text, out);
	}
	if ((rc = nic_parse_channels(text, &ch, err, sizeof(err)))) {
		check_err(rc, err, text);
	} else {
		nic_format_channels(&ch, out, sizeof(out));
		FUZZ_CHECK(nic_parse_channels(out, &ch2, err, sizeof(err)) == 0 && ch2.has == ch.has &&
			   !memcmp(ch2.count, ch.count, sizeof(ch.count)),
			   "channels '%s' -> '%s' differs", text, out);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[MAX_TEXT + 1];
	size_t n = size < MAX_TEXT ? size : MAX_TEXT;

	memcpy(text, data, n);
	text[n] = '\0';
	fuzz_line(text);
	fuzz_lists(text);
	return 0;
}
