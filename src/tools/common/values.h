/* SPDX-License-Identifier: MIT */
/*
 * The option values' parsers (numbers, sizes, seconds, rates, choices, CPU lists,
 * HOST:PORT, lists) that the option table's kinds use (tools/common/opt.h), the
 * one-line error they fill, and the few small helpers beside them (stop signals,
 * a net sysctl, bounded waits and reads on a descriptor). No state, so any
 * command (and its unit test) can use them. (JSON/csv strings and numbers are in
 * tools/common/emit.h.)
 */
#ifndef BP_TOOLS_COMMON_VALUES_H
#define BP_TOOLS_COMMON_VALUES_H

#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * tool_parse_u64 - a whole decimal number, nothing before or after it. strtoull
 * alone would take " 5", "+5" and "-1" (as 2^64-1); an option never means those.
 * Returns 0, -EINVAL (not a number; *neg set when it looked negative) or -ERANGE.
 */
int tool_parse_u64(const char *s, uint64_t *v, bool *neg);

/* The option parsers below return 0, or -EINVAL with one line in err naming the
 * option and the value ("--threads 0: must be between 1 and 64"). */

/* tool_fail - format err (if any) and return -EINVAL. */
int tool_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* tool_opt_int - a whole number in [lo, hi] (hi INT64_MAX: "at least lo"). */
int tool_opt_int(const char *name, const char *s, long long lo, long long hi, long long *out, char *err,
		 size_t errlen);
/* tool_opt_size - bytes with an optional k/K (KiB) or m/M (MiB) suffix, in 1..max. */
int tool_opt_size(const char *name, const char *s, uint64_t max, uint32_t *out, char *err, size_t errlen);
/*
 * tool_opt_seconds - a time: a plain decimal ("10", "0.5", ".5"; no sign, exponent,
 * hex, inf or nan, all of which strtod would take) with fio's optional unit (s, ms,
 * m, h; none = seconds), in seconds up to max; zero_ok: 0 allowed.
 */
int tool_opt_seconds(const char *name, const char *s, bool zero_ok, double max, double *out, char *err,
		     size_t errlen);
/*
 * tool_opt_rate - a rate per second: a plain decimal ("2000", "2.5") with an optional
 * k (thousand) or M (million) suffix, decimal as rates are ("20k" is 20000, unlike
 * a size's k), more than 0 and at most max.
 */
int tool_opt_rate(const char *name, const char *s, double max, double *out, char *err, size_t errlen);
/*
 * tool_opt_choice - the index of s in the NULL-terminated list names, else -EINVAL
 * with "--format x: must be table, json or csv".
 */
int tool_opt_choice(const char *name, const char *s, const char *const *names, char *err, size_t errlen);

/*
 * tool_opt_cpus - option NAME's CPU list S ("0,2-3") into cpus[] (at most max),
 * CPUs this machine has, none twice; *n set.
 */
int tool_opt_cpus(const char *name, const char *s, int *cpus, int max, int *n, char *err,
		  size_t errlen);

/*
 * tool_bad_option_name - the option getopt_long just refused, as the user typed it
 * ("--size" of "--size=", or "-Z" inside a cluster), in buf.
 */
const char *tool_bad_option_name(int argc, char **argv, const struct option *opts, char *buf,
				 size_t len);
/*
 * tool_unknown_option - the message for an option getopt refused: an ambiguous
 * abbreviation names its candidates, anything else points at `busypoll SUB --help`.
 * Returns -EINVAL.
 */
int tool_unknown_option(const char *sub, const struct option *opts, const char *name, char *err,
			size_t errlen);
/*
 * tool_opt_hostport - an ADDR:PORT the way every busypoll option takes it: an IPv6
 * address with a port in brackets ([::1]:4420), since "::1:4490" reads as one
 * address; a port of digits above 65535 is said to be out of range ("port 99999
 * is out of range 1..65535"). 0 or -EINVAL with the message in err.
 */
int tool_opt_hostport(const char *name, const char *s, char *err, size_t errlen);
/*
 * tool_opt_svg_file - a file an option writes an SVG chart to (--plot): named
 * *.svg (a .png would get SVG inside) and writable there, checked before any work
 * rather than after it. Copied into out (outlen bytes). 0 or -EINVAL, the
 * message in err naming the option.
 */
int tool_opt_svg_file(const char *name, const char *v, char *out, size_t outlen, char *err, size_t errlen);
/* tool_check_list - a sep-separated list with no empty item (none at either end, no two seps in a row). */
int tool_check_list(const char *name, const char *s, char sep, char *err, size_t errlen);

/* tool_pick_role - exactly one of --server and --client HOST, or -EINVAL saying so. */
int tool_pick_role(bool server, bool client, char *err, size_t errlen);
/*
 * tool_option_refused - getopt_long returned '?': a known long option given a
 * value it does not take ("--udp takes no value"), or an unknown or ambiguous one.
 * Returns -EINVAL with the message in err.
 */
int tool_option_refused(const char *sub, int argc, char **argv, const struct option *opts, char *err,
			size_t errlen);

/*
 * tool_catch_stop_signals - SIGINT, SIGTERM and SIGHUP set the returned flag (no
 * SA_RESTART: a blocking call returns EINTR and the caller looks at the flag);
 * SIGPIPE is ignored (a peer that went away is an error return, not a death).
 */
volatile sig_atomic_t *tool_catch_stop_signals(void);

/*
 * tool_read_net_sysctl - /proc/sys/net/core/NAME (busy_poll, busy_read) as an int.
 * They exist in the first network namespace only: from another one (ip netns exec,
 * a test bed end) it is read there, through /proc/1/ns/net or a parent's, by a
 * short-lived thread. 0, or -errno (-ENOENT: not visible from here without
 * CAP_SYS_ADMIN).
 */
int tool_read_net_sysctl(const char *name, int *out);

/*
 * tool_wait_fd - poll one fd for events. 0 when ready, -ETIMEDOUT, or -errno;
 * -EINTR on a signal, not restarted, so a Ctrl-C ends a wait on a silent peer.
 */
int tool_wait_fd(int fd, short events, int timeout_ms);
/*
 * tool_read_full - len bytes from a non-blocking socket, each wait bounded by
 * timeout_ms. 0, -ECONNRESET when the peer closed, -ETIMEDOUT, -EINTR, -errno.
 */
int tool_read_full(int fd, uint8_t *buf, size_t len, int timeout_ms);

/* tool_sort_doubles - v[0..n) in ascending order, in place (the one comparator of
 * every median, quantile and spread the tools take). */
void tool_sort_doubles(double *v, size_t n);
/* tool_median_doubles - the median of v[0..n) (n >= 1; the mean of the two middle
 * values when n is even), v sorted in place. */
double tool_median_doubles(double *v, size_t n);

#endif
