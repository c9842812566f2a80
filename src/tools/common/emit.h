/* SPDX-License-Identifier: MIT */
/*
 * Structured output for the tools (json, csv header, csv row) from one walk over a
 * result: call em_begin/em_end around objects and em_* for fields, once per
 * format. A csv column is the json path with dots ("latency_us.p50"); a null json
 * object becomes empty csv fields, so every row matches its header.
 */
#ifndef BP_TOOLS_COMMON_EMIT_H
#define BP_TOOLS_COMMON_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum emit_kind { EMIT_JSON, EMIT_CSV_HEADER, EMIT_CSV_ROW };

#define EMIT_MAX_DEPTH 8 /* pingpong: document > rows[] > row > runs[] > run > side */
#define EMIT_LIST_MAX 64

struct emit {
	enum emit_kind kind;
	FILE *out;
	int depth;
	int null_depth;               /* depth of the null object we are inside, 0 = none */
	bool first[EMIT_MAX_DEPTH + 1]; /* json: no member printed yet at this depth */
	const char *path[EMIT_MAX_DEPTH + 1]; /* csv: object keys down to here */
	int ncols;                    /* csv: fields printed on this line */
	bool in_array[EMIT_MAX_DEPTH + 1]; /* json: this depth is an array of objects */
};

/* utf8_len - length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
size_t utf8_len(const unsigned char *s, size_t n);
/* json_string - s (at most max bytes) as a JSON string, control chars escaped, bad UTF-8 as U+FFFD. */
void json_string(FILE *out, const char *s, size_t max);
/* csv_string - RFC 4180 quoting when needed; bad UTF-8 as U+FFFD. */
void csv_string(FILE *out, const char *s, size_t max);
/* put_number - the shortest decimal that reads back as exactly v. */
void put_number(FILE *out, double v);

/* em_field - start a member; true when its value is to be printed now (see emit.c). */
bool em_field(struct emit *e, const char *key);
/* em_begin - an object (key NULL for the document); is_null: json null, csv empty fields. */
void em_begin(struct emit *e, const char *key, bool is_null);
void em_end(struct emit *e);
/* em_array_begin/end - json only: an array whose elements are em_begin(e, NULL, ..) objects. */
void em_array_begin(struct emit *e, const char *key);
void em_array_end(struct emit *e);
void em_u64(struct emit *e, const char *key, uint64_t v);
void em_int(struct emit *e, const char *key, long long v);
/* em_double - NaN or infinity (never valid JSON) is null. */
void em_double(struct emit *e, const char *key, double v);
void em_null(struct emit *e, const char *key);
void em_bool(struct emit *e, const char *key, bool v);
/* em_string - s is a char array of max bytes that may lack its NUL. */
void em_string(struct emit *e, const char *key, const char *s, size_t max);
/* em_list - json: an array; csv: one quoted field "a,b,c". At most EMIT_LIST_MAX values. */
void em_list(struct emit *e, const char *key, const int64_t *v, size_t n);

/*
 * emit_one - one record walked by walk(e, arg): json (csv false) as one document,
 * or a csv header and its one row, each line ended. The formats never disagree.
 */
void emit_one(FILE *out, bool csv, void (*walk)(struct emit *e, const void *arg), const void *arg);

#endif
