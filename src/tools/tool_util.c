/* SPDX-License-Identifier: MIT */
/* Helpers shared by the busypoll subcommands (contract in tools/tool_util.h). */
#include <errno.h>
#include <stdlib.h>

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
