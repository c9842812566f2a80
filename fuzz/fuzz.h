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
#include <string.h>

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

/*
 * An exact-size heap copy, so reading one byte past the input is an ASan report (for
 * size 0 too: every byte of a malloc(0) block is out of bounds). noipa: gcc would
 * otherwise warn that the bytes of a size-0 copy may be used uninitialised.
 */
#if defined(__clang__)
#define FUZZ_OPAQUE __attribute__((noinline, unused))
#else
#define FUZZ_OPAQUE __attribute__((noipa, unused))
#endif
static FUZZ_OPAQUE uint8_t *fuzz_dup(const uint8_t *data, size_t size)
{
	uint8_t *p = malloc(size);

	if (!p && (size || !(p = malloc(1)))) /* malloc(0) may give NULL: never for memcpy */
		abort();
	memcpy(p, data, size);
	return p;
}

#endif
