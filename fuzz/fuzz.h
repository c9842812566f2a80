/* SPDX-License-Identifier: MIT */
/*
 * Shared by the fuzz targets. Each fuzz_NAME.c defines LLVMFuzzerTestOneInput and
 * is built two ways: with clang's libFuzzer (BP_FUZZ=ON, `make fuzz`), and with any
 * compiler against standalone_main.c, which replays fuzz/corpus/NAME/ as a ctest in
 * the normal and sanitizer builds so the seeds (and every crash kept there as a
 * regression) run on each `make test`.
 */
#ifndef BP_FUZZ_H
#define BP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property the code under test must keep: a violation is a crash for the fuzzer. */
#define FUZZ_CHECK(cond, ...)                                                        \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "fuzz property failed at %s:%d: %s: ", __FILE__, \
				__LINE__, #cond);                                    \
			fprintf(stderr, __VA_ARGS__);                                \
			fputc('\n', stderr);                                         \
			abort();                                                     \
		}                                                                    \
	} while (0)

/* An exact-size heap copy, so reading one byte past the input is an ASan report. */
static inline uint8_t *fuzz_dup(const uint8_t *data, size_t size)
{
	uint8_t *p = malloc(size);

	if (!p && size)
		abort();
	for (size_t i = 0; i < size; i++)
		p[i] = data[i];
	return p;
}

#endif
