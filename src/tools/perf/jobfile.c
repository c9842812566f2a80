/* SPDX-License-Identifier: MIT */
/*
 * busypoll perf: fio job files read into perf's own options (contract in
 * tools/perf/perf.h). fio's format (fio HOWTO "Job file format"): [section]
 * headers, key=value or a bare key per line, lines starting with ; or # are
 * comments, [global] holds what every job takes. perf runs one job section; a
 * second is refused, since fio would run both at once (or one after another
 * with stonewall), which perf cannot do yet.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/perf/perf.h"
#include "tools/common/values.h"

#define JOBFILE_MAX_BYTES (256u << 10)

/* trim - s without its leading and trailing blanks (in place). */
static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

/* add - one key (and value, NULL for a bare key) of line; a later one replaces an earlier of that name (a job's, [global]'s). */
static int add(struct perf_jobfile *jf, const char *path, int line, const char *key, const char *val,
	       char *err, size_t errlen)
{
	struct perf_jobfile_opt *op = NULL;

	if (strlen(key) >= sizeof(jf->opt[0].key) || (val && strlen(val) >= sizeof(jf->opt[0].val)))
		return tool_fail(err, errlen, "%s:%d: %s: longer than perf reads (a key of %zu, a value of %zu "
				 "characters)", path, line, key, sizeof(jf->opt[0].key) - 1, sizeof(jf->opt[0].val) - 1);
	for (int i = 0; i < jf->nopts; i++)
		if (!strcmp(jf->opt[i].key, key))
			op = &jf->opt[i];
	if (!op) {
		if (jf->nopts == PERF_JOBFILE_MAX_OPTS)
			return tool_fail(err, errlen, "%s:%d: more than %d options", path, line, PERF_JOBFILE_MAX_OPTS);
		op = &jf->opt[jf->nopts++];
	}
	snprintf(op->key, sizeof(op->key), "%s", key);
	snprintf(op->val, sizeof(op->val), "%s", val ? val : "");
	op->has_val = val != NULL;
	op->line = line;
	op->global = !jf->jobname[0];
	return 0;
}

int perf_jobfile_parse(const char *path, char *text, struct perf_jobfile *jf, char *err, size_t errlen)
{
	char *ln, *next;
	int line = 0;
	bool in_global = false;

	memset(jf, 0, sizeof(*jf));
	for (ln = text; ln; ln = next) {
		char *s, *eq;

		next = strchr(ln, '\n');
		if (next)
			*next++ = 0;
		line++;
		s = trim(ln);
		if (!*s || *s == ';' || *s == '#')
			continue;
		if (*s == '[') {
			char *name = s + 1, *end = strchr(name, ']');

			if (!end || *trim(end + 1))
				return tool_fail(err, errlen, "%s:%d: '%s': a section header is [name] alone on its line",
						 path, line, s);
			*end = 0;
			name = trim(name);
			if (!*name)
				return tool_fail(err, errlen, "%s:%d: an empty section name []", path, line);
			if (!strcmp(name, "global")) {
				if (jf->jobname[0])
					return tool_fail(err, errlen, "%s:%d: [global] after job [%s]: perf takes [global] "
							 "before the job section", path, line, jf->jobname);
				in_global = true;
				continue;
			}
			if (jf->jobname[0])
				return tool_fail(err, errlen, "%s:%d: a second job section [%s] after [%s]: perf runs one "
						 "job section (fio would run them together); use numjobs= in one section, "
						 "or one file per job", path, line, name, jf->jobname);
			if (strlen(name) >= sizeof(jf->jobname))
				return tool_fail(err, errlen, "%s:%d: job name [%s] longer than %zu characters", path, line,
						 name, sizeof(jf->jobname) - 1);
			snprintf(jf->jobname, sizeof(jf->jobname), "%s", name);
			jf->job_line = line;
			in_global = false;
			continue;
		}
		if (!in_global && !jf->jobname[0])
			return tool_fail(err, errlen, "%s:%d: '%s' before any section: start with [global] or [jobname]",
					 path, line, s);
		eq = strchr(s, '=');
		if (eq)
			*eq = 0;
		{
			char *key = trim(s);

			if (!*key)
				return tool_fail(err, errlen, "%s:%d: '=' without a key", path, line);
			if (!strcmp(key, "include"))
				return tool_fail(err, errlen, "%s:%d: include: perf reads one job file (put the options "
						 "in it)", path, line);
			if (add(jf, path, line, key, eq ? trim(eq + 1) : NULL, err, errlen))
				return -EINVAL;
		}
	}
	if (!jf->jobname[0])
		return tool_fail(err, errlen, "%s: no job section (only [global]): add one, e.g. [job1]", path);
	return 0;
}

int perf_jobfile_read(const char *path, struct perf_jobfile *jf, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text;
	size_t n;
	int r;

	if (!f)
		return tool_fail(err, errlen, "job file %s: %s", path, strerror(errno));
	text = malloc(JOBFILE_MAX_BYTES + 1);
	if (!text) {
		fclose(f);
		return tool_fail(err, errlen, "job file %s: out of memory", path);
	}
	n = fread(text, 1, JOBFILE_MAX_BYTES + 1, f);
	fclose(f);
	if (n > JOBFILE_MAX_BYTES) {
		free(text);
		return tool_fail(err, errlen, "job file %s: larger than %u KiB: not a job file?", path,
				 JOBFILE_MAX_BYTES >> 10);
	}
	text[n] = 0;
	if (memchr(text, 0, n)) {
		free(text);
		return tool_fail(err, errlen, "job file %s: holds a NUL byte: not a text file", path);
	}
	r = perf_jobfile_parse(path, text, jf, err, errlen);
	free(text);
	return r;
}
