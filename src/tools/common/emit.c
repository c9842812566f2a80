/* SPDX-License-Identifier: MIT */
/*
 * The tools' structured output: one walk over a result prints json (nested) or a
 * csv header or row (flattened, columns named by the json path with dots), so the
 * formats can never disagree on which fields exist. Strings from the wire are
 * escaped and made valid UTF-8. Contract in tools/common/emit.h.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/common/emit.h"

/* ---- strings ---- */

/* utf8_len - length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
size_t utf8_len(const unsigned char *s, size_t n)
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

/*
 * json_string - s (at most max bytes, NUL or not) as a JSON string. The server's
 * mode text arrives off the wire: control characters are escaped and invalid UTF-8
 * becomes U+FFFD, so the document stays valid JSON whatever a peer sent.
 */
void json_string(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strnlen(s, max);

	fputc('"', out);
	for (size_t i = 0; i < n;) {
		size_t len = utf8_len(p + i, n - i);

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

/*
 * csv_string - RFC 4180: quoted (quotes doubled) when it holds a comma, quote or line
 * break. Invalid UTF-8 becomes U+FFFD here too, so the file is always valid text.
 */
void csv_string(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strnlen(s, max);
	bool quote = false;

	/* not strcspn: s need not be NUL-terminated within max */
	for (size_t i = 0; i < n; i++)
		quote |= s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
	if (quote)
		fputc('"', out);
	for (size_t i = 0; i < n;) {
		size_t len = utf8_len(p + i, n - i);

		if (len == 0) {
			fputs("\xef\xbf\xbd", out);
			i++;
			continue;
		}
		if (p[i] == '"')
			fputc('"', out);
		fwrite(p + i, 1, len, out);
		i += len;
	}
	if (quote)
		fputc('"', out);
}

/*
 * put_number - the shortest decimal that reads back as exactly v: readers compare
 * these closely, so no digits are dropped, and none are invented (%.17g would print
 * 0.1 as 0.10000000000000001). Plain notation where a person would write it (10,
 * 0.00025, not 1e+01 or 2.5e-04); both are valid JSON and csv numbers.
 */
void put_number(FILE *out, double v)
{
	char buf[64];
	double a = fabs(v);

	if (a < 1e15 && v == trunc(v)) {
		fprintf(out, "%.0f", v);
		return;
	}
	if (a >= 1e-6 && a < 1e15) {
		for (int dec = 1; dec <= 24; dec++) {
			snprintf(buf, sizeof(buf), "%.*f", dec, v);
			if (strtod(buf, NULL) == v) {
				fputs(buf, out);
				return;
			}
		}
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, out);
}

/* ---- the writer: json, csv header, csv row ---- */

static void json_indent(struct emit *e)
{
	fputc('\n', e->out);
	for (int i = 0; i < e->depth; i++)
		fputs("  ", e->out);
}

/*
 * em_field - start a member named key. Returns true when its value is to be printed
 * now; false when there is nothing (more) to print: a csv header (the name is the
 * whole output), a field inside a null object (json: omitted; csv: empty).
 */
bool em_field(struct emit *e, const char *key)
{
	if (e->kind == EMIT_JSON) {
		if (e->null_depth)
			return false;
		if (!e->first[e->depth])
			fputc(',', e->out);
		e->first[e->depth] = false;
		json_indent(e);
		if (key)
			fprintf(e->out, "\"%s\": ", key);
		return true;
	}
	if (e->ncols++)
		fputc(',', e->out);
	if (e->kind == EMIT_CSV_HEADER) {
		for (int i = 1; i <= e->depth; i++)
			if (e->path[i]) /* the document itself has no name */
				fprintf(e->out, "%s.", e->path[i]);
		fputs(key, e->out);
		return false;
	}
	return !e->null_depth;
}

/* em_begin - an object; key NULL for the document itself. is_null: json null, csv empties. */
void em_begin(struct emit *e, const char *key, bool is_null)
{
	if (e->kind == EMIT_JSON && !e->null_depth) {
		/* A member has a key; an element of an array has none but still a comma. */
		if (key || e->in_array[e->depth]) {
			if (!e->first[e->depth])
				fputc(',', e->out);
			e->first[e->depth] = false;
			json_indent(e);
			if (key)
				fprintf(e->out, "\"%s\": ", key);
		}
		fputs(is_null ? "null" : "{", e->out);
	}
	e->depth++;
	e->first[e->depth] = true;
	e->in_array[e->depth] = false;
	e->path[e->depth] = key;
	if (is_null && !e->null_depth)
		e->null_depth = e->depth;
}

void em_array_begin(struct emit *e, const char *key)
{
	if (e->kind != EMIT_JSON)
		return;
	if (!e->first[e->depth])
		fputc(',', e->out);
	e->first[e->depth] = false;
	json_indent(e);
	fprintf(e->out, "\"%s\": [", key);
	e->depth++;
	e->first[e->depth] = true;
	e->in_array[e->depth] = true;
	e->path[e->depth] = key;
}

void em_array_end(struct emit *e)
{
	if (e->kind != EMIT_JSON)
		return;
	e->depth--;
	json_indent(e);
	fputc(']', e->out);
}

void em_end(struct emit *e)
{
	if (e->kind == EMIT_JSON && !e->null_depth) {
		e->depth--;
		json_indent(e);
		fputc('}', e->out);
		return;
	}
	if (e->null_depth == e->depth)
		e->null_depth = 0;
	e->depth--;
}

void em_u64(struct emit *e, const char *key, uint64_t v)
{
	if (em_field(e, key))
		fprintf(e->out, "%" PRIu64, v);
}

void em_int(struct emit *e, const char *key, long long v)
{
	if (em_field(e, key))
		fprintf(e->out, "%lld", v);
}

/* em_double - a measured or derived value; NaN or infinity (never valid JSON) is null. */
void em_double(struct emit *e, const char *key, double v)
{
	if (!em_field(e, key))
		return;
	if (isfinite(v))
		put_number(e->out, v);
	else if (e->kind == EMIT_JSON)
		fputs("null", e->out);
}

void em_null(struct emit *e, const char *key)
{
	if (em_field(e, key) && e->kind == EMIT_JSON)
		fputs("null", e->out);
}

void em_bool(struct emit *e, const char *key, bool v)
{
	if (em_field(e, key))
		fputs(v ? "true" : "false", e->out);
}

/* em_string - s is a char array of max bytes that may lack its NUL. */
void em_string(struct emit *e, const char *key, const char *s, size_t max)
{
	if (!em_field(e, key))
		return;
	if (e->kind == EMIT_JSON)
		json_string(e->out, s, max);
	else
		csv_string(e->out, s, max);
}

/* em_list - json: an array; csv: one field "a,b,c" (quoted by em_string). */
void em_list(struct emit *e, const char *key, const int64_t *v, size_t n)
{
	char buf[EMIT_LIST_MAX * 12 + 1];
	size_t len = 0;

	if (e->kind == EMIT_JSON) {
		if (!em_field(e, key))
			return;
		fputc('[', e->out);
		for (size_t i = 0; i < n; i++)
			fprintf(e->out, "%s%" PRId64, i ? ", " : "", v[i]);
		fputc(']', e->out);
		return;
	}
	buf[0] = 0;
	for (size_t i = 0; i < n && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%" PRId64, i ? "," : "", v[i]);
	em_string(e, key, buf, sizeof(buf));
}


void emit_one(FILE *out, bool csv, void (*walk)(struct emit *e, const void *arg), const void *arg)
{
	struct emit e = { .kind = csv ? EMIT_CSV_HEADER : EMIT_JSON, .out = out };

	walk(&e, arg);
	fputc('\n', out);
	if (!csv)
		return;
	e = (struct emit){ .kind = EMIT_CSV_ROW, .out = out };
	walk(&e, arg);
	fputc('\n', out);
}
