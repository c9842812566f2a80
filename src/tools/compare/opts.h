/* SPDX-License-Identifier: MIT */
/* busypoll compare's options: the command line into a checked matrix (opts.c). */
#ifndef BP_TOOLS_COMPARE_OPTS_H
#define BP_TOOLS_COMPARE_OPTS_H

#include <stddef.h>

#include "tools/compare/compare.h"

/*
 * cmp_parse_opts - argv into o: the modes (each parsed and checked against this
 * machine; the default matrix notes in o->skipped what it cannot run), flows,
 * rates, CPUs and --remote. 0; 1 when --help or --version was printed; -EINVAL
 * with one line in err naming the option.
 */
int cmp_parse_opts(int argc, char **argv, struct cmp_opts *o, char *err, size_t errlen);

#endif
