/* SPDX-License-Identifier: MIT */
/*
 * The restore journal's file and lines without touching a setting (the live
 * record/change/restore and SIGKILL cases are tests/integration/test_agent_journal.c):
 * NIC settings as text both ways, journal lines both ways and the lines refused,
 * the journal file (0600, locked while its session lives, fsynced header), and
 * journal_restore_dir's choices: a held journal (said, not a failure) and one of
 * another namespace are left, a torn last line is a change never made, an empty journal is removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpt_agent.h"

#include "tools/agent/journal.h"
#include "tools/common/nic_text.h"

static char dir[64], err[512];
static char logged[16][512];
static int nlogged;

static void log_line(void *arg, const char *line)
{
	if (nlogged < 16)
		snprintf(logged[nlogged++], sizeof(logged[0]), "%s", line);
}

static bool logged_has(const char *text)
{
	for (int i = 0; i < nlogged; i++)
		if (strstr(logged[i], text))
			return true;
	return false;
}

/* ---- text ---- */

static void test_coalesce_text(void **state)
{
	struct bp_nic_coalesce c;
	char buf[256];

	assert_int_equal(nic_parse_coalesce("rx-usecs=0,adaptive-rx=off,tx-frames=64", &c, err,
					    sizeof(err)), 0);
	assert_int_equal(c.has, BP_COAL_RX_USECS | BP_COAL_ADAPTIVE_RX | BP_COAL_TX_FRAMES);
	assert_int_equal(c.tx_frames, 64);
	assert_false(c.adaptive_rx);
	nic_format_coalesce(&c, buf, sizeof(buf));
	assert_string_equal(buf, "rx-usecs=0,adaptive-rx=off,tx-frames=64");
	assert_int_equal(nic_parse_coalesce("adaptive-tx=on,rx-frames=4294967295", &c, err,
					    sizeof(err)), 0);
	nic_format_coalesce(&c, buf, sizeof(buf));
	assert_string_equal(buf, "rx-frames=4294967295,adaptive-tx=on");

	assert_int_equal(nic_parse_coalesce("rx-usecs=1,rx-usecs=2", &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "rx-usecs is given twice");
	assert_int_equal(nic_parse_coalesce("rx-usec=1", &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown coalescing key 'rx-usec'; keys: rx-usecs, rx-frames, "
			    "adaptive-rx, tx-usecs, tx-frames, adaptive-tx");
	assert_int_equal(nic_parse_coalesce("rx-usecs=-1", &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "rx-usecs=-1: must be a whole number between 0 and 4294967295");
	assert_int_equal(nic_parse_coalesce("rx-frames=4294967296", &c, err, sizeof(err)), -EINVAL);
	assert_int_equal(nic_parse_coalesce("adaptive-rx=yes", &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "adaptive-rx=yes: must be on or off");
	assert_int_equal(nic_parse_coalesce("rx-usecs=1,,tx-usecs=2", &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "an empty item"));
	assert_int_equal(nic_parse_coalesce("", &c, err, sizeof(err)), -EINVAL);
	assert_int_equal(nic_parse_coalesce("rx-usecs", &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "'rx-usecs': expected key=value");
	/* messages quote the list: a control character in it is refused first (fuzz/agent_journal) */
	assert_int_equal(nic_parse_coalesce("rx-usecs=1\n", &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "a control character (0x0a) at byte 10 of the list");
}

static void test_channels_and_napi_text(void **state)
{
	struct bp_nic_channels ch;
	bp_napi_settings n;
	char buf[256];

	assert_int_equal(nic_parse_channels("combined=8,rx=2", &ch, err, sizeof(err)), 0);
	assert_int_equal(ch.has, 1u << BP_CHAN_COMBINED | 1u << BP_CHAN_RX);
	nic_format_channels(&ch, buf, sizeof(buf));
	assert_string_equal(buf, "rx=2,combined=8");
	assert_int_equal(nic_parse_channels("queues=2", &ch, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown channel kind 'queues'; kinds: rx, tx, other, combined");

	assert_int_equal(nic_parse_napi("gro-flush-timeout=20000,defer-hard-irqs=2", &n, err,
					sizeof(err)), 0);
	nic_format_napi(&n, buf, sizeof(buf));
	assert_string_equal(buf, "defer-hard-irqs=2,gro-flush-timeout=20000");
	assert_int_equal(nic_parse_napi("irq=5", &n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "read-only"));
}

static void test_entry_lines(void **state)
{
	const char *good[] = {
		"napi 8193 defer-hard-irqs=0,gro-flush-timeout=0,irq-suspend-timeout=0,threaded=0",
		"knob eth0 gro_flush_timeout=20000",
		"knob bpvb napi_defer_hard_irqs=2",
		"coalesce eth0 rx-usecs=8,rx-frames=1,adaptive-rx=on",
		"channels bpva rx=4,tx=4",
	};
	const char *bad[] = {
		"", "napi", "napi 8193", "napi 0 threaded=1", "napi x threaded=1",
		"napi 8193 threaded=1 extra", "knob eth0 threaded=1", "knob ../x gro_flush_timeout=1",
		"knob averyveryverylongdevicename gro_flush_timeout=1", "coalesce eth0 rx-usecs=x",
		"channels eth0 rx=", "reboot now please",
	};
	struct jentry e;
	char buf[300];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (jentry_parse(good[i], &e))
			fail_msg("refused: %s", good[i]);
		assert_int_equal(jentry_format(&e, buf, sizeof(buf)), 0);
		assert_string_equal(buf, good[i]);
	}
	assert_int_equal(jentry_parse(good[0], &e), 0);
	assert_int_equal(e.kind, J_NAPI);
	assert_int_equal(e.napi_id, 8193);
	assert_int_equal(jentry_parse(good[2], &e), 0);
	assert_string_equal(e.knob, "napi_defer_hard_irqs");
	assert_int_equal(e.value, 2);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (jentry_parse(bad[i], &e) != -EINVAL)
			fail_msg("taken: '%s'", bad[i]);
	assert_int_equal(jentry_parse(good[3], &e), 0);
	assert_int_equal(jentry_format(&e, buf, 8), -ENAMETOOLONG);
}

/* ---- the file ---- */

static uint64_t my_netns(void)
{
	struct stat st;

	assert_int_equal(stat("/proc/thread-self/ns/net", &st), 0);
	return st.st_ino;
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void test_journal_file(void **state)
{
	struct jentry e = { .kind = J_CHANNELS, .dev = "bpva",
			    .chan = { .count = { 4, 4 }, .has = 3 } };
	struct journal j;
	struct stat st;
	char text[512], head[128];
	int fd, n;

	assert_int_equal(journal_open(&j, dir, "unit", log_line, NULL, err, sizeof(err)), 0);
	assert_int_equal(stat(j.path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(journal_record(&j, &e, err, sizeof(err)), 0);
	fd = open(j.path, O_RDONLY);
	n = (int)read(fd, text, sizeof(text) - 1);
	text[n] = '\0';
	snprintf(head, sizeof(head), "busypoll-journal 1 pid=%d netns=%" PRIu64 "\nchannels bpva "
		 "rx=4,tx=4\n", (int)getpid(), my_netns());
	assert_string_equal(text, head);
	/* the session holds it: nobody else may take it */
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), -1);
	assert_int_equal(errno, EWOULDBLOCK);
	close(fd);
	/* and restore_dir leaves it to its living owner */
	nlogged = 0;
	{
		int left;

		assert_int_equal(journal_restore_dir(dir, log_line, NULL, &left), 0);
		assert_int_equal(left, 0); /* not a failure: its agent restores it */
		assert_int_equal(access(j.path, F_OK), 0);
		assert_true(logged_has("is alive and restores it itself"));
	}
	/* one session at a time changes a host: a second is refused, naming the first */
	{
		struct journal j2;
		char want[128];

		assert_int_equal(journal_open(&j2, dir, "second", log_line, NULL, err, sizeof(err)), -EBUSY);
		snprintf(want, sizeof(want), "another session is changing this host's settings (pid %d, "
			 "unit): one at a time, try again when it ends", (int)getpid());
		assert_string_equal(err, want);
		assert_int_equal(j2.fd, -1);
	}
	close(j.fd); /* as if its agent were gone: now restore_dir may take it */
	close(j.lock_fd);
	unlink(j.path);
	/* and with the first gone, the host is free again */
	assert_int_equal(journal_open(&j, dir, "third", log_line, NULL, err, sizeof(err)), 0);
	assert_int_equal(journal_finish(&j, log_line, NULL), 0);
	assert_int_equal(access(j.path, F_OK), -1);
}

/*
 * other_netns - a child process in a network namespace of its own (a user namespace
 * too when not root), alive until killed; returns the namespace's inode, *child its pid.
 */
static uint64_t other_netns(pid_t *child)
{
	int pfd[2];
	char c = 0, path[64];
	struct stat st;

	assert_int_equal(pipe(pfd), 0);
	*child = fork();
	assert_true(*child >= 0);
	if (*child == 0) {
		int flags = CLONE_NEWNET | (geteuid() == 0 ? 0 : CLONE_NEWUSER);

		/* gone with the test however it ends, and not holding ctest's output open */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(1);
		close(STDOUT_FILENO);
		close(STDERR_FILENO);

		c = unshare(flags) == 0 ? 'y' : 'n';
		if (write(pfd[1], &c, 1) != 1 || c != 'y')
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	assert_int_equal(read(pfd[0], &c, 1), 1);
	close(pfd[0]);
	if (c != 'y')
		fail_msg("cannot make a network namespace here (unshare: not root, no user namespaces)");
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)*child);
	assert_int_equal(stat(path, &st), 0);
	return st.st_ino;
}

static void end_child(pid_t child)
{
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, NULL, 0), child);
}

static void test_restore_dir_choices(void **state)
{
	char other[160], gone[160], empty[160], torn[160], text[256];
	pid_t holder, dead;
	uint64_t ns_alive = other_netns(&holder), ns_gone = other_netns(&dead);
	int left;

	end_child(dead); /* nothing holds its namespace any more: gone with its devices */
	snprintf(other, sizeof(other), "%s/session-1-1.journal", dir);
	snprintf(text, sizeof(text), "busypoll-journal 1 pid=1 netns=%" PRIu64 "\nnapi 300 threaded=0\n",
		 ns_alive);
	write_file(other, text);
	snprintf(gone, sizeof(gone), "%s/session-9-1.journal", dir);
	snprintf(text, sizeof(text), "busypoll-journal 1 pid=9 netns=%" PRIu64 "\nnapi 300 threaded=0\n",
		 ns_gone);
	write_file(gone, text);
	snprintf(empty, sizeof(empty), "%s/session-2-1.journal", dir);
	snprintf(text, sizeof(text), "busypoll-journal 1 pid=2 netns=%" PRIu64 "\n", my_netns());
	write_file(empty, text);
	/* a torn last line: that change was never made, there is nothing to restore */
	snprintf(torn, sizeof(torn), "%s/session-3-1.journal", dir);
	snprintf(text, sizeof(text), "busypoll-journal 1 pid=3 netns=%" PRIu64 "\nnapi 300 thr",
		 my_netns());
	write_file(torn, text);

	nlogged = 0;
	assert_int_equal(journal_restore_dir(dir, log_line, NULL, &left), 2);
	assert_int_equal(left, 1);
	assert_int_equal(access(other, F_OK), 0); /* its namespace lives: an agent there restores it */
	assert_int_equal(access(gone, F_OK), -1); /* its namespace is gone: removed, not a failure */
	assert_int_equal(access(empty, F_OK), -1);
	assert_int_equal(access(torn, F_OK), -1);
	assert_true(logged_has("left for an agent there"));
	assert_true(logged_has("which no longer exists: nothing to restore there; removed"));
	assert_true(logged_has("agent pid 2 is gone"));
	unlink(other);
	end_child(holder);

	/* not a journal at all: left, and said so */
	write_file(other, "hello\n");
	nlogged = 0;
	assert_int_equal(journal_restore_dir(dir, log_line, NULL, &left), 0);
	assert_int_equal(left, 1);
	assert_true(logged_has("not a busypoll journal"));
	unlink(other);
	/* no directory: nothing to do */
	assert_int_equal(journal_restore_dir("/nonexistent/busypoll", log_line, NULL, &left), 0);
}

/* A journal is played back as this user: only one this user wrote, mode 0600, in a directory of its own. */
static void test_foreign_journals(void **state)
{
	char loose[160], foreign[160], shared[160], link[200], text[256];
	struct journal j;
	int left;

	snprintf(text, sizeof(text), "busypoll-journal 1 pid=4 netns=%" PRIu64 "\nnapi 300 threaded=0\n",
		 my_netns());
	snprintf(loose, sizeof(loose), "%s/session-4-1.journal", dir);
	write_file(loose, text);
	assert_int_equal(chmod(loose, 0644), 0);
	nlogged = 0;
	assert_int_equal(journal_restore_dir(dir, log_line, NULL, &left), 0);
	assert_int_equal(left, 1);
	assert_int_equal(access(loose, F_OK), 0);
	assert_true(logged_has("not played: its mode is 0644, not 0600"));
	unlink(loose);
	if (geteuid() == 0) {
		snprintf(foreign, sizeof(foreign), "%s/session-5-1.journal", dir);
		write_file(foreign, text);
		assert_int_equal(chown(foreign, 12345, 12345), 0);
		nlogged = 0;
		assert_int_equal(journal_restore_dir(dir, log_line, NULL, &left), 0);
		assert_int_equal(left, 1);
		assert_true(logged_has("not played: it belongs to uid 12345"));
		unlink(foreign);
	}
	/* the directory: group-writable or a symbolic link is refused, nothing played or made in it */
	snprintf(shared, sizeof(shared), "%s/shared", dir);
	assert_int_equal(mkdir(shared, 0700), 0);
	assert_int_equal(chmod(shared, 0770), 0);
	assert_true(journal_restore_dir(shared, log_line, NULL, &left) < 0);
	assert_int_equal(journal_open(&j, shared, "unit", log_line, NULL, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "is writable by its group (mode 0770)"));
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(chmod(shared, 0700), 0);
	assert_int_equal(symlink(shared, link), 0);
	assert_int_equal(journal_open(&j, link, "unit", log_line, NULL, err, sizeof(err)), -ELOOP);
	assert_non_null(strstr(err, "is a symbolic link"));
	assert_int_equal(journal_restore_dir(link, log_line, NULL, &left), -ELOOP);
	unlink(link);
	rmdir(shared);
}

static void test_journal_refusals(void **state)
{
	struct journal j = { .fd = -1 };
	struct jentry e = { .kind = J_KNOB, .dev = "eth0", .knob = "gro_flush_timeout" };

	assert_int_equal(journal_record(&j, &e, err, sizeof(err)), -EBADF);
	assert_string_equal(err, "no journal open: refusing to change anything");
	assert_int_equal(journal_open(&j, "/proc/no-such/dir", "unit", log_line, NULL, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "cannot create state directory /proc/no-such/dir"));
}

static int setup(void **state)
{
	bpt_tmpdir("test-journal", dir, sizeof(dir));
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_coalesce_text),
		cmocka_unit_test(test_channels_and_napi_text),
		cmocka_unit_test(test_entry_lines),
		cmocka_unit_test(test_journal_file),
		cmocka_unit_test(test_restore_dir_choices),
		cmocka_unit_test(test_foreign_journals),
		cmocka_unit_test(test_journal_refusals),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
