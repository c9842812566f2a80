/* SPDX-License-Identifier: MIT */
/*
 * busypoll perf's options against fio's meanings (fio HOWTO "I/O depth", init.c
 * fixup_options, backend.c wait_for_completions): iodepth_batch 0 or above
 * iodepth = iodepth; complete_min 0 = reap at least one but poll; complete_max
 * defaults to complete_min and is raised to it; rwmixread 100 is all reads.
 * Also fio's spellings, the one-line errors, ARGS splitting for --spawn-target,
 * and the target's queue records.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tools/harness/control.h"
#include "tools/harness/spawn.h"
#include "tools/perf/perf.h"

static struct perf_opts o;
static char err[512];

#define T "--target", "127.0.0.1:4420", "--nqn", "nqn.x:y"

static int parse_v(int argc, const char **argv)
{
	return perf_parse_opts(argc, (char **)argv, &o, err, sizeof(err));
}
#define PARSE(...)                                                          \
	({                                                                  \
		const char *argv_[] = { "perf", __VA_ARGS__ };              \
		parse_v((int)(sizeof(argv_) / sizeof(argv_[0])), argv_);    \
	})
#define EXPECT_ERR(want, ...)                                                              \
	do {                                                                               \
		assert_int_equal(PARSE(__VA_ARGS__), -EINVAL);                             \
		if (!strstr(err, want))                                                    \
			fail_msg("message '%s' does not contain '%s'", err, want);         \
		assert_null(strchr(err, '\n'));                                            \
	} while (0)

static void test_fio_defaults(void **state)
{
	assert_int_equal(PARSE(T), 0);
	assert_int_equal(o.rw, PERF_RW_READ);        /* fio: rw=read */
	assert_int_equal(o.bs, 4096);
	assert_int_equal(o.iodepth, 1);
	assert_int_equal(o.numjobs, 1);
	assert_int_equal(o.rwmixread, 50);
	assert_int_equal(o.nsid, 1);
	/* iodepth_batch 1, complete_min 1, complete_max = min: submit one, reap one. */
	assert_int_equal(o.batch, 1);
	assert_int_equal(o.reap_min, 1);
	assert_int_equal(o.reap_max, 1);
	assert_false(o.reap_poll);
	assert_false(o.verify);
	assert_string_equal(o.mode_text, "epoll:block");
	assert_true(o.runtime_s == 10 && o.ramp_s == 0);
	assert_int_equal(o.io_timeout_ms, 30000);
	assert_int_equal(o.format, TOOL_FORMAT_TABLE);
}

/* The reference command, in our spelling and in fio's. */
static void test_reference(void **state)
{
	assert_int_equal(PARSE(T, "--rw", "randrw", "--rwmixread", "100", "--bs", "4k", "--iodepth", "32",
			       "--iodepth-batch", "8", "--iodepth-batch-complete-min", "1",
			       "--iodepth-batch-complete-max", "32", "--numjobs", "4", "--runtime", "60",
			       "--ramp-time", "10"),
			 0);
	assert_int_equal(o.rw, PERF_RW_RANDRW);
	assert_int_equal(o.rwmixread, 100);
	assert_true(perf_rw_reads(&o));
	assert_false(perf_rw_writes(&o)); /* rwmixread=100: all reads */
	assert_int_equal(o.batch, 8);
	assert_int_equal(o.reap_min, 1);
	assert_int_equal(o.reap_max, 32);
	assert_int_equal(o.numjobs, 4);
	assert_true(o.runtime_s == 60 && o.ramp_s == 10);

	assert_int_equal(PARSE(T, "--rw=randrw", "--rwmixread=100", "--bs=4k", "--iodepth=32", "--iodepth_batch=8",
			       "--iodepth_batch_complete_min=1", "--iodepth_batch_complete_max=32", "--numjobs=2",
			       "--direct=1", "--time_based", "--runtime=60", "--ramp_time=10"),
			 0);
	assert_int_equal(o.batch, 8);
	assert_int_equal(o.reap_max, 32);
	assert_true(o.ramp_s == 10);
}

static void test_batch(void **state)
{
	/* 0 = iodepth (HOWTO: "If it is set to 0 the iodepth value will be used"). */
	assert_int_equal(PARSE(T, "--iodepth", "16", "--iodepth-batch", "0"), 0);
	assert_int_equal(o.batch, 16);
	/* above iodepth = iodepth (init.c). */
	assert_int_equal(PARSE(T, "--iodepth", "16", "--iodepth-batch", "64"), 0);
	assert_int_equal(o.batch, 16);
	assert_int_equal(PARSE(T, "--iodepth", "16", "--iodepth_batch_submit", "4"), 0);
	assert_int_equal(o.batch, 4);
	EXPECT_ERR("--iodepth-batch -1", T, "--iodepth-batch", "-1");
}

static void test_complete(void **state)
{
	/* complete_min 0: at least one (backend.c forces min_evts 1) but the wait polls. */
	assert_int_equal(PARSE(T, "--iodepth", "32", "--iodepth-batch-complete-min", "0",
			       "--iodepth-batch-complete-max", "32"),
			 0);
	assert_int_equal(o.reap_min, 1);
	assert_true(o.reap_poll);
	assert_int_equal(o.reap_max, 32);
	/* complete_max defaults to complete_min. */
	assert_int_equal(PARSE(T, "--iodepth", "32", "--iodepth-batch-complete-min", "8"), 0);
	assert_int_equal(o.reap_min, 8);
	assert_int_equal(o.reap_max, 8);
	assert_false(o.reap_poll);
	/* complete_max below complete_min is raised to it (init.c), not refused. */
	assert_int_equal(PARSE(T, "--iodepth", "32", "--iodepth-batch-complete-min", "8",
			       "--iodepth-batch-complete-max", "4"),
			 0);
	assert_int_equal(o.reap_max, 8);
	/* complete_max 0 = unset. */
	assert_int_equal(PARSE(T, "--iodepth", "32", "--iodepth-batch-complete-max", "0"), 0);
	assert_int_equal(o.reap_max, 1);
	/* Never more than in flight: min(complete_min, cur_depth). */
	assert_int_equal(PARSE(T, "--iodepth", "4", "--iodepth_batch_complete", "16", "--iodepth_batch_complete_max",
			       "64"),
			 0);
	assert_int_equal(o.reap_min, 4);
	assert_int_equal(o.reap_max, 4);
	/* min 0, max 0: one at a time, polling. */
	assert_int_equal(PARSE(T, "--iodepth", "4", "--iodepth-batch-complete-min", "0"), 0);
	assert_int_equal(o.reap_min, 1);
	assert_int_equal(o.reap_max, 1);
	assert_true(o.reap_poll);
}

static void test_rwmix(void **state)
{
	assert_int_equal(PARSE(T, "--rw", "randrw"), 0);
	assert_int_equal(o.rwmixread, 50);
	assert_true(perf_rw_reads(&o) && perf_rw_writes(&o));
	assert_int_equal(PARSE(T, "--rw", "randrw", "--rwmixread", "0"), 0);
	assert_false(perf_rw_reads(&o));
	assert_true(perf_rw_writes(&o));
	assert_int_equal(PARSE(T, "--rw", "randrw", "--rwmixwrite", "30"), 0);
	assert_int_equal(o.rwmixread, 70);
	assert_int_equal(PARSE(T, "--readwrite", "randrw", "--rwmixread", "70", "--rwmixwrite", "30"), 0);
	assert_int_equal(o.rwmixread, 70);
	EXPECT_ERR("do not add up to 100", T, "--rw", "randrw", "--rwmixread", "70", "--rwmixwrite", "70");
	EXPECT_ERR("--rwmixread 101: must be between 0 and 100", T, "--rw", "randrw", "--rwmixread", "101");
	EXPECT_ERR("applies to --rw randrw and rw only", T, "--rw", "randread", "--rwmixread", "70");
	assert_int_equal(PARSE(T, "--rw", "write"), 0);
	assert_false(perf_rw_reads(&o));
	assert_int_equal(PARSE(T, "--rw", "randread"), 0);
	assert_false(perf_rw_writes(&o));
	EXPECT_ERR("--rw bogus: must be read, write, randread, randwrite", T, "--rw", "bogus");
	/* fio's rw and readwrite: sequential, mixed by rwmixread */
	assert_int_equal(PARSE(T, "--rw", "rw", "--rwmixread", "70"), 0);
	assert_int_equal(o.rw, PERF_RW_RW);
	assert_int_equal(o.rwmixread, 70);
	assert_true(perf_rw_reads(&o) && perf_rw_writes(&o));
	assert_int_equal(PARSE(T, "--rw=readwrite"), 0);
	assert_int_equal(o.rw, PERF_RW_RW);
	/* fio's trims: Dataset Management deallocate, neither reads nor writes, no mix, no --verify */
	assert_int_equal(PARSE(T, "--rw", "trim"), 0);
	assert_int_equal(o.rw, PERF_RW_TRIM);
	assert_true(perf_rw_trims(&o) && !perf_rw_reads(&o) && !perf_rw_writes(&o) && !perf_rw_random(o.rw));
	assert_int_equal(PARSE(T, "--readwrite=randtrim"), 0);
	assert_int_equal(o.rw, PERF_RW_RANDTRIM);
	assert_true(perf_rw_trims(&o) && perf_rw_random(o.rw));
	EXPECT_ERR("--verify with --rw trim: a trim deallocates", T, "--rw", "trim", "--verify");
	EXPECT_ERR("--verify with --rw randtrim", T, "--rw=randtrim", "--verify=crc32c");
	EXPECT_ERR("--rwmixread applies to --rw randrw and rw only (this is --rw trim)", T, "--rw", "trim",
		   "--rwmixread", "50");
}

static void test_values(void **state)
{
	assert_int_equal(PARSE(T, "--bs", "1M", "--size", "2G", "--offset", "1M", "--runtime", "1m", "--ramp-time",
			       "500ms", "--io-timeout", "5", "--digest", "hdr,data", "--cpus", "0", "--numjobs", "2",
			       "--verify", "--format", "json", "--hostnqn", "nqn.h:1", "--nsid", "3", "-q"),
			 0);
	assert_int_equal(o.bs, 1u << 20);
	assert_true(o.size == 2ull << 30 && o.offset == 1u << 20);
	assert_true(o.runtime_s == 60 && o.ramp_s == 0.5);
	assert_int_equal(o.io_timeout_ms, 5000);
	assert_true(o.hdgst && o.ddgst);
	assert_true(o.verify);
	assert_int_equal(o.format, TOOL_FORMAT_JSON);
	assert_string_equal(o.hostnqn, "nqn.h:1");
	assert_int_equal(o.nsid, 3);
	assert_true(o.quiet);
	assert_int_equal(PARSE(T, "--digest", "data"), 0);
	assert_true(!o.hdgst && o.ddgst);
	assert_int_equal(PARSE(T, "--verify=crc32c"), 0);
	assert_true(o.verify);
	EXPECT_ERR("--verify=md5", T, "--verify=md5");
}

static void test_sweep(void **state)
{
	assert_int_equal(PARSE(T, "--sweep", "numjobs=1..8", "--spawn-target", "--ns ram:1G", "--target-config",
			       "--poll-period-us 0", "--target-config", "--poll-period-us 50"),
			 0);
	assert_true(o.sweep && o.sweep_lo == 1 && o.sweep_hi == 8);
	assert_int_equal(o.nconfigs, 2);
	assert_string_equal(o.configs[1], "--poll-period-us 50");
	assert_string_equal(o.spawn_args, "--ns ram:1G");
	assert_int_equal(PARSE(T, "--sweep", "numjobs=2-3"), 0);
	assert_true(o.sweep_lo == 2 && o.sweep_hi == 3);
	assert_int_equal(PARSE(T, "--sweep", "numjobs=4"), 0);
	assert_true(o.sweep_lo == 4 && o.sweep_hi == 4);
	EXPECT_ERR("numjobs=A..B or rate_iops=A,B,.. can be swept", T, "--sweep", "iodepth=1..8");
	EXPECT_ERR("8 is more than 1", T, "--sweep", "numjobs=8..1");
	EXPECT_ERR("must be between 1 and 64", T, "--sweep", "numjobs=1..65");
	EXPECT_ERR("exclusive", T, "--sweep", "numjobs=1..2", "--numjobs", "2");
	EXPECT_ERR("needs --spawn-target", T, "--target-config", "--poll-period-us 0");
}

/* fio's rate_iops: R,W,T per job, one value for every direction, the last copied on, empty = not limited. */
static void test_rate(void **state)
{
	assert_int_equal(PARSE(T, "--rw", "randread"), 0);
	assert_false(perf_open_loop(&o)); /* no rate: the closed loop */
	assert_int_equal(PARSE(T, "--rw", "randread", "--rate_iops", "1000"), 0);
	assert_true(perf_open_loop(&o) && !o.rate_poisson);
	assert_true(o.rate_iops[0] == 1000 && o.rate_iops[1] == 1000 && o.rate_iops[2] == 1000);
	assert_true(perf_offered_iops(&o) == 1000); /* reads only */
	assert_int_equal(PARSE(T, "--rw", "randrw", "--rate-iops=500,200"), 0);
	assert_true(o.rate_iops[0] == 500 && o.rate_iops[1] == 200 && o.rate_iops[2] == 200);
	assert_true(perf_offered_iops(&o) == 700);
	assert_int_equal(PARSE(T, "--rw", "randread", "--rate_iops=2k,"), 0);
	assert_true(o.rate_iops[0] == 2000 && o.rate_iops[1] == 0 && o.rate_iops[2] == 0);
	assert_int_equal(PARSE(T, "--rw", "write", "--rate_iops=,300"), 0);
	assert_true(o.rate_iops[0] == 0 && o.rate_iops[1] == 300 && perf_offered_iops(&o) == 300);
	assert_int_equal(PARSE(T, "--rw", "randtrim", "--rate_iops=1,2,3", "--rate_process=poisson"), 0);
	assert_true(o.rate_iops[2] == 3 && perf_offered_iops(&o) == 3 && o.rate_poisson);
	/* rwmixread says nothing under per-direction rates: said once, not silently */
	assert_int_equal(PARSE(T, "--rw", "randrw", "--rwmixread", "70", "--rate_iops", "100,50"), 0);
	assert_non_null(strstr(o.notes, "--rwmix (no effect with --rate_iops"));
	EXPECT_ERR("--rate_iops 1,2,3,4: at most three rates", T, "--rate_iops", "1,2,3,4");
	EXPECT_ERR("--rate_iops abc", T, "--rate_iops", "abc");
	EXPECT_ERR("--rate_iops 0: no rate for the read that --rw read issues", T, "--rate_iops", "0");
	EXPECT_ERR("--rate_iops ,5: no rate for the read that --rw randread issues", T, "--rw", "randread",
		   "--rate_iops", ",5");
	EXPECT_ERR("--rw randrw issues read and write: give a rate for each", T, "--rw", "randrw", "--rate_iops", "500,");
	EXPECT_ERR("--rate_process poisson needs --rate_iops", T, "--rate_process", "poisson");
	EXPECT_ERR("--rate_process uniform: must be linear or poisson", T, "--rate_iops", "1", "--rate_process",
		   "uniform");
	/* the sweep over rates: a value in every direction the pattern issues, or a percentage of --rate_iops */
	assert_int_equal(PARSE(T, "--rw", "randrw", "--rate_iops", "2000,1000", "--sweep", "rate_iops=10%,50%,300",
			       "--sweep", "numjobs=1..2"),
			 0);
	assert_int_equal(o.nrates, 3);
	assert_true(o.sweep && o.sweep_hi == 2);
	{
		struct perf_opts p = o;

		perf_sweep_rate(&p, 0);
		assert_true(p.rate_iops[0] == 200 && p.rate_iops[1] == 100);
		p = o;
		perf_sweep_rate(&p, 2);
		assert_true(p.rate_iops[0] == 300 && p.rate_iops[1] == 300 && p.rate_iops[2] == 0);
	}
	assert_int_equal(PARSE(T, "--rw", "randread", "--sweep", "rate_iops=1000,5k"), 0);
	assert_true(o.nrates == 2 && o.sweep_rate[1] == 5000 && !o.sweep_pct[1] && !perf_open_loop(&o));
	EXPECT_ERR("a percentage of --rate_iops, which is not given", T, "--sweep", "rate_iops=10%");
	EXPECT_ERR("rate_iops is swept once", T, "--rate_iops", "1", "--sweep", "rate_iops=1", "--sweep",
		   "rate_iops=2");
	EXPECT_ERR("--sweep rate_iops", T, "--sweep", "rate_iops=1,,2");
	EXPECT_ERR("--sweep rate_iops 0", T, "--sweep", "rate_iops=0");
}

/* fio's cpus_allowed: shared (every job on the set, fio's default) or split (job i on the i-th CPU: --cpus). */
static void test_cpus_allowed(void **state)
{
	assert_int_equal(PARSE(T, "--cpus_allowed", "0", "--numjobs", "2"), 0);
	assert_int_equal(o.nallowed, 1);
	assert_int_equal(o.allowed[0], 0);
	assert_int_equal(o.ncpus, 0); /* not pinned one by one */
	assert_int_equal(o.notes[0], 0); /* applied, not said to be ignored */
	assert_int_equal(PARSE(T, "--cpus_allowed=0", "--cpus_allowed_policy=split", "--numjobs", "3"), 0);
	assert_int_equal(o.nallowed, 0);
	assert_int_equal(o.ncpus, 1);
	assert_int_equal(o.cpus[0], 0);
	EXPECT_ERR("--cpus and --cpus_allowed are exclusive", T, "--cpus", "0", "--cpus_allowed", "0");
	EXPECT_ERR("--cpus_allowed_policy split needs --cpus_allowed", T, "--cpus_allowed_policy", "split");
	EXPECT_ERR("--cpus_allowed_policy none: must be shared or split", T, "--cpus_allowed", "0",
		   "--cpus_allowed_policy", "none");
	EXPECT_ERR("--cpus_allowed 9999", T, "--cpus_allowed", "9999");
}

static void test_errors(void **state)
{
	EXPECT_ERR("--target ADDR:PORT is required", "--nqn", "n");
	EXPECT_ERR("--nqn NQN is required", "--target", "x");
	EXPECT_ERR("--bs 1000: must be a multiple of 512", T, "--bs", "1000");
	EXPECT_ERR("--bs 0", T, "--bs", "0");
	EXPECT_ERR("--iodepth 0: must be between 1 and 4096", T, "--iodepth", "0");
	EXPECT_ERR("--numjobs 65", T, "--numjobs", "65");
	EXPECT_ERR("--runtime 0: must be more than 0", T, "--runtime", "0");
	EXPECT_ERR("--runtime 5x: not a time", T, "--runtime", "5x");
	EXPECT_ERR("--size 1Q: not a size", T, "--size", "1Q");
	EXPECT_ERR("--size 1000 is smaller than --bs 4096", T, "--size", "1000");
	EXPECT_ERR("--size 100: must be between 512 bytes", T, "--size", "100");
	EXPECT_ERR("--offset 100: must be a multiple of 512", T, "--offset", "100");
	EXPECT_ERR("--digest crc", T, "--digest", "crc");
	EXPECT_ERR("--direct 0", T, "--direct", "0");
	EXPECT_ERR("--mode epoll:nope", T, "--mode", "epoll:nope");
	EXPECT_ERR("--cpus 0,1: 2 CPUs for 1 job", T, "--cpus", "0,1");
	EXPECT_ERR("unknown option '--bogus'", T, "--bogus");
	EXPECT_ERR("unexpected argument 'extra'", T, "extra");
	EXPECT_ERR("--iodepth needs a value", T, "--iodepth");
	EXPECT_ERR("--format xml: must be table, json or csv", T, "--format", "xml");
}

static void test_split(void **state)
{
	const char *args = "--ns ram:64M  --allow-host 'nqn a:b' \"--nqn\" x\\ y ";
	char buf[128], *w[8];

	assert_int_equal(spawn_split_args(args, buf, w, 8), 6);
	assert_string_equal(w[0], "--ns");
	assert_string_equal(w[1], "ram:64M");
	assert_string_equal(w[3], "nqn a:b");
	assert_string_equal(w[4], "--nqn");
	assert_string_equal(w[5], "x y");
	assert_int_equal(spawn_split_args("", buf, w, 8), 0);
	assert_int_equal(spawn_split_args("   ", buf, w, 8), 0);
	assert_int_equal(spawn_split_args("'open", buf, w, 8), -EINVAL);
	assert_int_equal(spawn_split_args("a b c", buf, w, 2), -EINVAL);
}

/* queue - one CTL_T_Q record of a target's EVIDENCE. */
static void queue(struct ctl_msg *m, const char *peer, uint64_t commands, uint64_t reads, uint64_t writes,
		  uint64_t r2ts, uint64_t bin, uint64_t bout, uint64_t errors, uint64_t passes, uint64_t idle)
{
	size_t rec = ctl_record_begin(m, CTL_T_Q);

	ctl_put_text(m, CTL_T_Q_PEER, peer);
	ctl_put_u64(m, CTL_T_Q_COMMANDS, commands);
	ctl_put_u64(m, CTL_T_Q_READS, reads);
	ctl_put_u64(m, CTL_T_Q_WRITES, writes);
	ctl_put_u64(m, CTL_T_Q_R2TS, r2ts);
	ctl_put_u64(m, CTL_T_Q_BYTES_IN, bin);
	ctl_put_u64(m, CTL_T_Q_BYTES_OUT, bout);
	ctl_put_u64(m, CTL_T_Q_ERRORS, errors);
	ctl_put_u64(m, CTL_T_Q_POLL_PASSES, passes);
	ctl_put_u64(m, CTL_T_Q_IDLE_EXITS, idle);
	ctl_record_end(m, rec);
}

/* The target's queue records: only ours (by peer address) are summed. */
static void test_target_queues(void **state)
{
	char peers[2][64] = { "127.0.0.1:40000", "127.0.0.1:40001" };
	struct perf_target_stats st = { 0 };
	struct ctl_msg *m = malloc(sizeof(*m));

	assert_non_null(m);
	ctl_msg_init(m, CTL_EVIDENCE);
	ctl_put_u64(m, CTL_T_PID, 99);
	queue(m, "127.0.0.1:40000", 1000, 900, 100, 5, 409600, 3686400, 0, 2000, 7);
	queue(m, "127.0.0.1:39999", 10, 0, 0, 0, 0, 0, 0, 10, 0); /* someone else's */
	queue(m, "127.0.0.1:40001", 10, 10, 0, 0, 0, 40960, 1, 10, 1);
	assert_int_equal(perf_target_add_queues(m, peers, 2, &st), 2);
	assert_true(st.commands == 1010 && st.reads == 910 && st.writes == 100 && st.r2ts == 5);
	assert_true(st.bytes_in == 409600 && st.bytes_out == 3686400 + 40960 && st.errors == 1);
	assert_true(st.poll_passes == 2010 && st.idle_exits == 8 && st.queues == 2);
	free(m);
}

/* A job file's text parsed as fio does, one row per case: the error's words, or "" for a good file. */
static void test_jobfile_format(void **state)
{
	static const struct {
		const char *text, *want;
	} rows[] = {
		{ "; fio comment\n# another\n[global]\nbs = 8k\n\n[j1]\nrw=randread\ntime_based\n", "" },
		{ "[only]\nbs=4k\r\n", "" },
		{ "[global]\nbs=4k\n", "no job section" },
		{ "bs=4k\n[j]\n", "before any section" },
		{ "[a]\nbs=4k\n[b]\nbs=8k\n", "t.fio:3: a second job section [b] after [a]" },
		{ "[a]\n[global]\n", "t.fio:2: [global] after job [a]" },
		{ "[a]\ninclude=x.fio\n", "t.fio:2: include" },
		{ "[a\n", "t.fio:1: '[a': a section header" },
		{ "[]\n", "an empty section name" },
		{ "[a]\n=4k\n", "t.fio:2: '=' without a key" },
	};
	static struct perf_jobfile jf;
	char text[256];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		snprintf(text, sizeof(text), "%s", rows[i].text);
		err[0] = 0;
		int r = perf_jobfile_parse("t.fio", text, &jf, err, sizeof(err));

		if (!rows[i].want[0] ? r != 0 : r != -EINVAL || !strstr(err, rows[i].want))
			fail_msg("row %zu: got %d '%s', want '%s'", i, r, err, rows[i].want);
		assert_null(strchr(err, '\n'));
	}
	snprintf(text, sizeof(text), "[global]\nbs=8k\niodepth=2\n[j1]\nbs = 16k\ntime_based\n");
	assert_int_equal(perf_jobfile_parse("t.fio", text, &jf, err, sizeof(err)), 0);
	assert_string_equal(jf.jobname, "j1");
	assert_int_equal(jf.nopts, 3);      /* the job's bs replaced [global]'s */
	assert_string_equal(jf.opt[0].key, "bs");
	assert_string_equal(jf.opt[0].val, "16k");
	assert_int_equal(jf.opt[0].line, 5);
	assert_string_equal(jf.opt[2].key, "time_based");
	assert_false(jf.opt[2].has_val);
}

/* write_jobfile - text into a temporary job file; its path in path. */
static void write_jobfile(char *path, size_t len, const char *text)
{
	int fd;
	FILE *f;

	snprintf(path, len, "/tmp/bp-perf-jobXXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A job file's keys are perf's options; the command line overrides them, alias or not. */
static void test_jobfile_options(void **state)
{
	char path[64];

	(void)state;
	write_jobfile(path, sizeof(path),
		      "[global]\ntarget=127.0.0.1:4420\nnqn=nqn.x:y\nblocksize=8k\nioengine=libaio\n"
		      "[randjob]\nrw=randrw\nrwmixread=70\niodepth=16\nnumjobs=2\nramp_time=1\n");
	assert_int_equal(perf_parse_opts(2, (char *[]){ "perf", path, NULL }, &o, err, sizeof(err)), 0);
	assert_int_equal(o.bs, 8192);
	assert_int_equal(o.rw, PERF_RW_RANDRW);
	assert_int_equal(o.rwmixread, 70);
	assert_int_equal(o.iodepth, 16);
	assert_int_equal(o.numjobs, 2);
	assert_true(o.ramp_s == 1.0);
	assert_string_equal(o.jobname, "randjob");
	assert_non_null(strstr(o.notes, "--ioengine ("));
	/* the command line wins: --bs over the file's blocksize, --ramp-time over ramp_time */
	assert_int_equal(perf_parse_opts(5, (char *[]){ "perf", path, "--bs", "16k", "--ramp-time=0", NULL }, &o, err,
					 sizeof(err)), 0);
	assert_int_equal(o.bs, 16384);
	assert_true(o.ramp_s == 0.0);
	assert_int_equal(o.iodepth, 16);
	unlink(path);

	/* a bad key or value names the file and its line */
	write_jobfile(path, sizeof(path), "[j]\ntarget=127.0.0.1:4420\nnqn=nqn.x:y\nrw=trimmish\n");
	assert_int_equal(perf_parse_opts(2, (char *[]){ "perf", path, NULL }, &o, err, sizeof(err)), -EINVAL);
	if (!strstr(err, ":4: ") || !strstr(err, "--rw"))
		fail_msg("'%s' must name line 4 and --rw", err);
	unlink(path);
	write_jobfile(path, sizeof(path), "[j]\nno_such_fio_opt=1\n");
	assert_int_equal(perf_parse_opts(2, (char *[]){ "perf", path, NULL }, &o, err, sizeof(err)), -EINVAL);
	if (!strstr(err, ":2: ") || !strstr(err, "no_such_fio_opt"))
		fail_msg("'%s' must name line 2 and the key", err);
	unlink(path);
	assert_int_equal(perf_parse_opts(2, (char *[]){ "perf", "/nonexistent/job.fio", NULL }, &o, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "job file /nonexistent/job.fio"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fio_defaults), cmocka_unit_test(test_reference), cmocka_unit_test(test_batch),
		cmocka_unit_test(test_complete),     cmocka_unit_test(test_rwmix),     cmocka_unit_test(test_values),
		cmocka_unit_test(test_sweep),        cmocka_unit_test(test_rate),      cmocka_unit_test(test_cpus_allowed),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_target_queues), cmocka_unit_test(test_jobfile_format),
		cmocka_unit_test(test_jobfile_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
