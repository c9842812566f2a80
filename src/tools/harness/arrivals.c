/* SPDX-License-Identifier: MIT */
/* An open loop's arrival clock (contract in tools/harness/arrivals.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/harness/arrivals.h"

int arrivals_init(struct arrivals *a, double rate, bool poisson, uint64_t seed)
{
	memset(a, 0, sizeof(*a));
	if (!(rate > 0))
		return -EINVAL;
	a->gap_ns = 1e9 / rate;
	a->poisson = poisson;
	a->xsubi[0] = (unsigned short)seed;
	a->xsubi[1] = (unsigned short)(seed >> 16);
	a->xsubi[2] = (unsigned short)(seed >> 32 ^ seed >> 48);
	return 0;
}

/* due_at - the due time distance d from the start, as a clock value. */
static uint64_t due_at(const struct arrivals *a, double d)
{
	return a->start_ns + (uint64_t)(d > 0 ? d : 0);
}

void arrivals_start(struct arrivals *a, uint64_t start_ns, double first_ns)
{
	a->start_ns = start_ns;
	a->first_ns = first_ns;
	a->k = 0;
	a->offset_ns = first_ns;
	a->next_ns = due_at(a, first_ns);
}

double arrivals_uniform(struct arrivals *a)
{
	return erand48(a->xsubi);
}

uint64_t arrivals_take(struct arrivals *a)
{
	uint64_t due = a->next_ns;

	a->k++;
	if (a->poisson) {
		/* an exponential gap with the mean gap: -ln(1 - U), U in [0, 1), never infinite */
		a->offset_ns += -log(1.0 - erand48(a->xsubi)) * a->gap_ns;
		a->next_ns = due_at(a, a->offset_ns);
	} else {
		a->next_ns = due_at(a, a->first_ns + (double)a->k * a->gap_ns);
	}
	return due;
}

uint64_t arrivals_behind(struct arrivals *a, uint64_t now_ns)
{
	uint64_t n = 0;

	if (!(a->gap_ns > 0))
		return 0;
	while (a->next_ns <= now_ns) {
		arrivals_take(a);
		n++;
	}
	return n;
}
