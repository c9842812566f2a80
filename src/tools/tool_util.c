/* SPDX-License-Identifier: MIT */
/* Helpers shared by the busypoll subcommands (contract in tools/tool_util.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/tool_util.h"

int tool_parse_u64(const char *s, uint64_t *v, bool *neg)
{
	char *end;

	*neg = s[0] == '-' && s[1] >= '0' && s[1] <= '9';
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	return errno == ERANGE ? -ERANGE : 0;
}

size_t tool_utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and beyond U+10FFFF are not valid UTF-8. */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

void tool_json_string(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strnlen(s, max);

	fputc('"', out);
	for (size_t i = 0; i < n;) {
		size_t len = tool_utf8_len(p + i, n - i);

		if (p[i] == '"' || p[i] == '\\') {
			fputc('\\', out);
			fputc(p[i], out);
		} else if (p[i] < 0x20) {
			fprintf(out, "\\u%04x", p[i]);
		} else if (len == 0) {
			fputs("\\ufffd", out);
			len = 1;
		} else {
			fwrite(p + i, 1, len, out);
		}
		i += len ? len : 1;
	}
	fputc('"', out);
}
