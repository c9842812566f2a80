/* SPDX-License-Identifier: MIT */
/* The agent's restore journal: record before change, play back newest first (journal.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <busypoll/loop.h>
#include <busypoll/napi.h>
#include <busypoll/nic.h>

#include "tools/agent/journal.h"
#include "tools/common/napi_show.h"
#include "tools/common/nic_text.h"
#include "tools/common/values.h"

#define HEADER "busypoll-journal 1"
#define LINE_MAX_LEN 256
#define JOURNAL_MAX_BYTES (1u << 20) /* far above any session's changes */

/* One line into err; returns rc. */
__attribute__((format(printf, 4, 5)))
static int say(int rc, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

__attribute__((format(printf, 3, 4)))
static void logf_(journal_log_fn log, void *arg, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log(arg, line);
}

/* The calling thread's network namespace, as the inode of its nsfs file. */
static uint64_t netns_id(void)
{
	struct stat st;

	return stat("/proc/thread-self/ns/net", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/*
 * netns_exists - whether any process or bind mount still holds network namespace ino:
 * a /run/netns/ name, a process's own namespace, or a descriptor a process keeps open on
 * one (/proc/PID/fd/N reading "net:[ino]"). A namespace nothing holds is gone for good,
 * and with it every device a journal written there names. Unreadable /proc entries
 * (a process that just ended) are skipped; when /proc cannot be read at all the answer
 * is true, the safe side (the journal is kept).
 */
static bool netns_exists(uint64_t ino)
{
	char want[48], path[540], link[64];
	struct dirent *de, *fe;
	struct stat st;
	bool found = false;
	DIR *d;

	snprintf(want, sizeof(want), "net:[%" PRIu64 "]", ino);
	if ((d = opendir("/run/netns"))) {
		while (!found && (de = readdir(d))) {
			snprintf(path, sizeof(path), "/run/netns/%s", de->d_name);
			found = de->d_name[0] != '.' && stat(path, &st) == 0 && (uint64_t)st.st_ino == ino;
		}
		closedir(d);
	}
	if (found)
		return true;
	if (!(d = opendir("/proc")))
		return true;
	while (!found && (de = readdir(d))) {
		DIR *fds;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/net", de->d_name);
		if (stat(path, &st) == 0 && (uint64_t)st.st_ino == ino) {
			found = true;
			break;
		}
		snprintf(path, sizeof(path), "/proc/%s/fd", de->d_name);
		if (!(fds = opendir(path)))
			continue;
		while (!found && (fe = readdir(fds))) {
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%s/fd/%s", de->d_name, fe->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			found = n > 0 && (link[n] = '\0', strcmp(link, want) == 0);
		}
		closedir(fds);
	}
	closedir(d);
	return found;
}

/* ---- the directory ---- */

int journal_dir_open(const char *dir, bool create, char *err, size_t errlen)
{
	struct stat st, fst;
	int fd;

	if (create && mkdir(dir, 0700) < 0 && errno != EEXIST)
		return say(-errno, err, errlen, "cannot create state directory %s: %s", dir, strerror(errno));
	if (lstat(dir, &st) < 0)
		return say(-errno, err, errlen, "state directory %s: %s", dir, strerror(errno));
	/* every journal in it is played back as this user: nobody else may put one there */
	if (S_ISLNK(st.st_mode))
		return say(-ELOOP, err, errlen, "state directory %s is a symbolic link: give the directory itself "
			   "(--state-dir)", dir);
	if (!S_ISDIR(st.st_mode))
		return say(-ENOTDIR, err, errlen, "state directory %s is not a directory", dir);
	if (st.st_uid != geteuid())
		return say(-EPERM, err, errlen, "state directory %s belongs to uid %u, not to this agent's user (uid "
			   "%u): give one of your own (--state-dir)", dir, (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return say(-EPERM, err, errlen, "state directory %s is writable by %s (mode %04o): chmod go-w %s", dir,
			   st.st_mode & S_IWOTH ? "others" : "its group", (unsigned)(st.st_mode & 07777), dir);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return say(-errno, err, errlen, "state directory %s: %s", dir, strerror(errno));
	/* the one looked at, not one put in its place since */
	if (fstat(fd, &fst) < 0 || fst.st_dev != st.st_dev || fst.st_ino != st.st_ino) {
		close(fd);
		return say(-EAGAIN, err, errlen, "state directory %s changed while it was opened", dir);
	}
	return fd;
}

/* journal_file_ok - a journal to play back: a regular file of ours, mode 0600. 0, or -EPERM with why. */
static int journal_file_ok(int fd, char *why, size_t len)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return say(-errno, why, len, "%s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return say(-EPERM, why, len, "not a regular file");
	if (st.st_uid != geteuid())
		return say(-EPERM, why, len, "it belongs to uid %u, not to this agent's user", (unsigned)st.st_uid);
	if ((st.st_mode & 07777) != 0600)
		return say(-EPERM, why, len, "its mode is %04o, not 0600", (unsigned)(st.st_mode & 07777));
	return 0;
}

/* ---- one line ---- */

/* sysctl_ok - a net.core sysctl the journal may change: the busy-poll ones only. */
static bool sysctl_ok(const char *name)
{
	return !strcmp(name, "busy_read") || !strcmp(name, "busy_poll");
}

/* sysctl_write - /proc/sys/net/core/NAME = value. 0 or -errno. */
static int sysctl_write(const char *name, uint64_t value)
{
	char path[96];
	FILE *f;
	int rc = 0;

	if (!sysctl_ok(name))
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/sys/net/core/%s", name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	if (fprintf(f, "%" PRIu64 "\n", value) < 0)
		rc = -EIO;
	if (fclose(f) && !rc)
		rc = -errno;
	return rc;
}

static bool dev_ok(const char *dev)
{
	return *dev && strlen(dev) < IFNAMSIZ && !strchr(dev, '/');
}

int jentry_format(const struct jentry *e, char *buf, size_t len)
{
	char list[192];
	int n;

	switch (e->kind) {
	case J_NAPI:
		nic_format_napi(&e->napi, list, sizeof(list));
		n = snprintf(buf, len, "napi %" PRIu32 " %s", e->napi_id, list);
		break;
	case J_KNOB:
		n = snprintf(buf, len, "knob %s %s=%" PRIu64, e->dev, e->knob, e->value);
		break;
	case J_COALESCE:
		nic_format_coalesce(&e->coal, list, sizeof(list));
		n = snprintf(buf, len, "coalesce %s %s", e->dev, list);
		break;
	case J_CHANNELS:
		nic_format_channels(&e->chan, list, sizeof(list));
		n = snprintf(buf, len, "channels %s %s", e->dev, list);
		break;
	case J_SYSCTL:
		if (!sysctl_ok(e->knob))
			return -EINVAL;
		n = snprintf(buf, len, "sysctl net.core %s=%" PRIu64, e->knob, e->value);
		break;
	default:
		return -EINVAL;
	}
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int jentry_parse(const char *line, struct jentry *e)
{
	char kind[16], target[32], list[LINE_MAX_LEN], err[160], extra;
	int rc = -EINVAL;

	memset(e, 0, sizeof(*e));
	if (strlen(line) >= LINE_MAX_LEN ||
	    sscanf(line, "%15s %31s %255s %c", kind, target, list, &extra) != 3)
		return -EINVAL;
	if (!strcmp(kind, "napi")) {
		uint64_t id;
		bool neg;

		e->kind = J_NAPI;
		if (tool_parse_u64(target, &id, &neg) || id == 0 || id > UINT32_MAX)
			return -EINVAL;
		e->napi_id = (uint32_t)id;
		return nic_parse_napi(list, &e->napi, err, sizeof(err));
	}
	if (!strcmp(kind, "sysctl")) {
		char name[32];
		unsigned long long v;
		int used = 0;

		e->kind = J_SYSCTL;
		if (strcmp(target, "net.core") || sscanf(list, "%31[a-z_]=%llu%n", name, &v, &used) != 2 ||
		    list[used] || !sysctl_ok(name))
			return -EINVAL;
		snprintf(e->knob, sizeof(e->knob), "%s", name);
		e->value = v;
		return 0;
	}
	if (!dev_ok(target))
		return -EINVAL;
	snprintf(e->dev, sizeof(e->dev), "%.*s", (int)sizeof(e->dev) - 1, target);
	if (!strcmp(kind, "knob")) {
		struct napi_knobs k = { 0 };

		e->kind = J_KNOB;
		if (napi_parse_knob(list, &k, err, sizeof(err)))
			return -EINVAL;
		for (int i = 0; i < NAPI_NKNOBS; i++)
			if (k.has[i]) {
				snprintf(e->knob, sizeof(e->knob), "%s", napi_knob_names[i]);
				e->value = k.value[i];
				rc = 0;
			}
		return rc;
	}
	if (!strcmp(kind, "coalesce")) {
		e->kind = J_COALESCE;
		return nic_parse_coalesce(list, &e->coal, err, sizeof(err));
	}
	if (!strcmp(kind, "channels")) {
		e->kind = J_CHANNELS;
		return nic_parse_channels(list, &e->chan, err, sizeof(err));
	}
	return -EINVAL;
}

int jentry_apply(const struct jentry *e)
{
	switch (e->kind) {
	case J_NAPI:
		return bp_napi_set(e->napi_id, &e->napi);
	case J_KNOB:
		return bp_dev_set_knob(e->dev, e->knob, e->value);
	case J_COALESCE:
		return bp_nic_coalesce_set(e->dev, &e->coal);
	case J_CHANNELS:
		return bp_nic_channels_set(e->dev, &e->chan);
	case J_SYSCTL:
		return sysctl_write(e->knob, e->value);
	}
	return -EINVAL;
}

/* ---- the file ---- */

static int restore_at(int dfd, const char *dir, journal_log_fn log, void *arg, int *left);

/*
 * The host's change lock: held, with holder written in it; -EBUSY naming who has it.
 * One per network namespace (host-NETNS.lock): the settings it guards are that
 * namespace's, so agents of two namespaces (two hosts on one test machine) never
 * hold each other up.
 */
static int lock_host(struct journal *j, const char *dir, const char *holder, char *err,
		     size_t errlen)
{
	char path[PATH_MAX], name[64], who[160] = "";
	ssize_t n;
	int len;

	snprintf(name, sizeof(name), "host-%" PRIu64 ".lock", netns_id());
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	j->lock_fd = openat(j->dir_fd, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (j->lock_fd < 0)
		return say(-errno, err, errlen, "cannot open %s: %s", path, strerror(errno));
	if (flock(j->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		int rc = errno == EWOULDBLOCK ? -EBUSY : -errno;

		n = pread(j->lock_fd, who, sizeof(who) - 1, 0);
		who[n > 0 ? n : 0] = '\0';
		who[strcspn(who, "\n")] = '\0';
		close(j->lock_fd);
		j->lock_fd = -1;
		if (rc == -EBUSY)
			return say(rc, err, errlen, "another session is changing this host's settings "
				   "(%s): one at a time, try again when it ends", who[0] ? who : "unknown");
		return say(rc, err, errlen, "flock(%s): %s", path, strerror(-rc));
	}
	len = snprintf(who, sizeof(who), "pid %d, %s\n", (int)getpid(), holder);
	if (ftruncate(j->lock_fd, 0) < 0 || pwrite(j->lock_fd, who, (size_t)len, 0) != len)
		return say(-EIO, err, errlen, "cannot write %s", path);
	return 0;
}

static void unlock_host(struct journal *j)
{
	if (j->lock_fd >= 0)
		close(j->lock_fd); /* the flock goes with it */
	j->lock_fd = -1;
	if (j->dir_fd >= 0)
		close(j->dir_fd);
	j->dir_fd = -1;
}

int journal_open(struct journal *j, const char *dir, const char *holder, journal_log_fn log,
		 void *arg, char *err, size_t errlen)
{
	static unsigned counter;
	char head[128];
	int len, rc;

	j->fd = j->lock_fd = j->dir_fd = -1;
	j->entries = 0;
	if ((j->dir_fd = journal_dir_open(dir, true, err, errlen)) < 0) {
		rc = j->dir_fd;
		j->dir_fd = -1;
		return rc;
	}
	if ((rc = lock_host(j, dir, holder, err, errlen))) {
		unlock_host(j);
		return rc;
	}
	/* the host is ours: what an agent that died here left goes back first */
	restore_at(j->dir_fd, dir, log, arg, NULL);
	snprintf(j->name, sizeof(j->name), "session-%d-%u.journal", (int)getpid(),
		 __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
	if ((size_t)snprintf(j->path, sizeof(j->path), "%s/%s", dir, j->name) >= sizeof(j->path)) {
		unlock_host(j);
		return say(-ENAMETOOLONG, err, errlen, "state directory %s: path too long", dir);
	}
	/* read and written through this one descriptor: the session's end plays it back through it too */
	j->fd = openat(j->dir_fd, j->name, O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (j->fd < 0) {
		rc = say(-errno, err, errlen, "cannot create journal %s: %s", j->path, strerror(errno));
		unlock_host(j);
		return rc;
	}
	/* held until journal_finish (or the process dies): the file is ours, alive */
	if (fchmod(j->fd, 0600) < 0 || flock(j->fd, LOCK_EX | LOCK_NB) < 0)
		goto fail;
	len = snprintf(head, sizeof(head), HEADER " pid=%d netns=%" PRIu64 "\n", (int)getpid(),
		       netns_id());
	if (write(j->fd, head, (size_t)len) != len || fsync(j->fd) < 0 || fsync(j->dir_fd) < 0)
		goto fail;
	return 0;
fail:
	rc = say(errno ? -errno : -EIO, err, errlen, "journal %s: %s", j->path,
		 strerror(errno ? errno : EIO));
	close(j->fd);
	unlinkat(j->dir_fd, j->name, 0);
	j->fd = -1;
	unlock_host(j);
	return rc;
}

int journal_record(struct journal *j, const struct jentry *e, char *err, size_t errlen)
{
	char line[LINE_MAX_LEN + 1];
	size_t len;
	int rc;

	if (j->fd < 0)
		return say(-EBADF, err, errlen, "no journal open: refusing to change anything");
	if ((rc = jentry_format(e, line, sizeof(line) - 1)))
		return say(rc, err, errlen, "journal: a setting too long to record");
	len = strlen(line);
	line[len++] = '\n';
	/* one write with O_APPEND: a line lands whole, or (torn by a crash) without its newline */
	if (write(j->fd, line, len) != (ssize_t)len || fsync(j->fd) < 0) {
		rc = errno ? -errno : -EIO;
		return say(rc, err, errlen, "journal %s: %s: not changing anything", j->path,
			   strerror(-rc));
	}
	j->entries++;
	return 0;
}

/* Lines of the journal whose fd is open for reading: the header checked, entries kept. */
struct played {
	struct jentry *e;
	size_t n;
	uint64_t netns;
	int pid;
};

static int read_journal(int fd, struct played *p)
{
	char *text = malloc(JOURNAL_MAX_BYTES + 1), *line, *next;
	ssize_t n;
	size_t total = 0;
	int rc = 0;

	memset(p, 0, sizeof(*p));
	if (!text)
		return -ENOMEM;
	while (total < JOURNAL_MAX_BYTES &&
	       (n = pread(fd, text + total, JOURNAL_MAX_BYTES - total, (off_t)total)) > 0)
		total += (size_t)n;
	text[total] = '\0';
	if (sscanf(text, HEADER " pid=%d netns=%" SCNu64, &p->pid, &p->netns) != 2) {
		free(text);
		return -EINVAL;
	}
	p->e = calloc(total / 8 + 1, sizeof(*p->e));
	if (!p->e) {
		free(text);
		return -ENOMEM;
	}
	line = strchr(text, '\n');
	for (line = line ? line + 1 : text + total; *line; line = next) {
		next = strchr(line, '\n');
		if (!next)
			break; /* torn: that change was never made */
		*next++ = '\0';
		if (jentry_parse(line, &p->e[p->n]) == 0)
			p->n++;
		else
			rc++; /* said by the caller */
	}
	free(text);
	return rc;
}

/* Newest first. Returns how many could not be restored. */
static int play_back(const struct played *p, journal_log_fn log, void *arg)
{
	int failed = 0;

	for (size_t i = p->n; i-- > 0;) {
		char line[LINE_MAX_LEN];
		int rc;

		jentry_format(&p->e[i], line, sizeof(line));
		rc = jentry_apply(&p->e[i]);
		if (rc == 0)
			logf_(log, arg, "restored %s", line);
		else if (rc == -ENOENT || rc == -ENODEV)
			logf_(log, arg, "restore %s: gone, nothing to restore (%s)", line, bp_last_error());
		else {
			failed++;
			logf_(log, arg, "restore %s: failed: %s", line, bp_last_error());
		}
	}
	return failed;
}

/* Play back the journal name in dfd (path: for the log) through fd (locked by the caller); removed when all went back. */
static int finish_file(int dfd, int fd, const char *name, const char *path, journal_log_fn log, void *arg)
{
	struct played p;
	int bad = read_journal(fd, &p), failed;

	if (bad < 0) {
		logf_(log, arg, "journal %s: %s; left in place", path,
		      bad == -EINVAL ? "not a busypoll journal" : strerror(-bad));
		return 1;
	}
	if (bad)
		logf_(log, arg, "journal %s: %d unreadable line(s) skipped", path, bad);
	failed = play_back(&p, log, arg);
	free(p.e);
	if (failed) {
		logf_(log, arg, "journal %s: %d setting(s) not restored; kept for the next start "
		      "(or busypoll agent --restore)", path, failed);
		return failed;
	}
	if (unlinkat(dfd, name, 0) == 0)
		fsync(dfd);
	return 0;
}

int journal_finish(struct journal *j, journal_log_fn log, void *arg)
{
	int failed;

	if (j->fd < 0)
		return 0;
	/* through the descriptor it was written with: never a file put at its path since */
	failed = finish_file(j->dir_fd, j->fd, j->name, j->path, log, arg);
	close(j->fd); /* the journal's lock goes with it */
	j->fd = -1;
	unlock_host(j); /* after the playback: nobody changes the host under it */
	return failed;
}

/* restore_at - journal_restore_dir on the directory dfd (dir: its name, for the log). */
static int restore_at(int dfd, const char *dir, journal_log_fn log, void *arg, int *left)
{
	uint64_t here = netns_id();
	struct dirent *de;
	int done = 0, held = 0, dup_fd = dup(dfd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;

	if (left)
		*left = 0;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		char path[PATH_MAX], why[160];
		size_t len = strlen(de->d_name);
		struct played p;
		bool foreign;
		int fd;

		if (len < 9 || strcmp(de->d_name + len - 8, ".journal"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = openat(dfd, de->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0) {
			if (errno == ELOOP) {
				logf_(log, arg, "journal %s: not played: a symbolic link; left in place", path);
				held++;
			}
			continue;
		}
		/* played back as this user: only a journal this user wrote, that nobody else could */
		if (journal_file_ok(fd, why, sizeof(why))) {
			logf_(log, arg, "journal %s: not played: %s (a journal is a regular file of this agent's "
			      "user, mode 0600); left in place", path, why);
			close(fd);
			held++;
			continue;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			/* its agent is alive and restores it itself: said, not a failure */
			int pid = read_journal(fd, &p) >= 0 ? p.pid : 0;

			free(p.e); /* NULL when it could not be read */
			if (pid > 0)
				logf_(log, arg, "journal %s: its agent (pid %d) is alive and restores it itself; "
				      "left to it", path, pid);
			else
				logf_(log, arg, "journal %s: its agent is alive and restores it itself; left to it",
				      path);
			close(fd);
			continue;
		}
		foreign = read_journal(fd, &p) >= 0 && p.netns != here;
		if (foreign && !netns_exists(p.netns)) {
			/* its devices went with the namespace; the busy-poll sysctls exist only in
			 * the initial namespace, which never goes: nothing left to restore */
			logf_(log, arg, "journal %s (agent pid %d) was written in network namespace "
			      "%" PRIu64 ", which no longer exists: nothing to restore there; removed",
			      path, p.pid, p.netns);
			free(p.e);
			if (unlinkat(dfd, de->d_name, 0) < 0)
				held++;
			close(fd);
			continue;
		}
		if (foreign) { /* a namespace that still exists */
			logf_(log, arg, "journal %s (agent pid %d) was written in network namespace "
			      "%" PRIu64 ", this is %" PRIu64 ": left for an agent there", path, p.pid,
			      p.netns, here);
			free(p.e);
			close(fd);
			held++;
			continue;
		}
		free(p.e);
		logf_(log, arg, "journal %s: agent pid %d is gone; restoring what it changed", path,
		      p.pid);
		if (finish_file(dfd, fd, de->d_name, path, log, arg) == 0)
			done++;
		else
			held++;
		close(fd);
	}
	closedir(d);
	if (left)
		*left = held;
	return done;
}

int journal_restore_dir(const char *dir, journal_log_fn log, void *arg, int *left)
{
	char err[300];
	int dfd, rc;

	if (left)
		*left = 0;
	if (access(dir, F_OK) < 0 && errno == ENOENT)
		return 0;
	dfd = journal_dir_open(dir, false, err, sizeof(err));
	if (dfd < 0) {
		logf_(log, arg, "%s: no journal played", err);
		return dfd;
	}
	rc = restore_at(dfd, dir, log, arg, left);
	close(dfd);
	return rc;
}

/* ---- changes, each recorded first ---- */

static int refused(char *err, size_t errlen, int rc)
{
	return say(rc, err, errlen, "%s", bp_last_error());
}

int journal_change_napi(struct journal *j, uint32_t id, const bp_napi_settings *s, char *err,
			size_t errlen)
{
	const uint32_t settable = BP_NAPI_HAS_DEFER | BP_NAPI_HAS_GRO_FLUSH |
				  BP_NAPI_HAS_IRQ_SUSPEND | BP_NAPI_HAS_THREADED;
	struct jentry e = { .kind = J_NAPI, .napi_id = id };
	int rc;

	if ((rc = bp_napi_get(id, &e.napi)))
		return refused(err, errlen, rc);
	e.napi.has &= s->has & settable;
	if (e.napi.has && (rc = journal_record(j, &e, err, errlen)))
		return rc;
	if ((rc = bp_napi_set(id, s)))
		return refused(err, errlen, rc);
	return 0;
}

int journal_change_knob(struct journal *j, const char *dev, const char *knob, uint64_t value,
			char *err, size_t errlen)
{
	struct jentry e = { .kind = J_KNOB };
	int rc;

	if ((rc = bp_dev_get_knob(dev, knob, &e.value)))
		return refused(err, errlen, rc);
	snprintf(e.dev, sizeof(e.dev), "%s", dev);
	snprintf(e.knob, sizeof(e.knob), "%s", knob);
	if ((rc = journal_record(j, &e, err, errlen)))
		return rc;
	if ((rc = bp_dev_set_knob(dev, knob, value)))
		return refused(err, errlen, rc);
	return 0;
}

/* A device's coalescing or channels: the current values of what set changes, recorded; then set. */
static int change_dev(struct journal *j, enum jentry_kind kind, const char *dev, const void *set,
		      char *err, size_t errlen)
{
	const struct bp_nic_coalesce *coal = set;
	const struct bp_nic_channels *chan = set;
	struct jentry e = { .kind = kind };
	uint32_t *has = kind == J_COALESCE ? &e.coal.has : &e.chan.has;
	int rc = kind == J_COALESCE ? bp_nic_coalesce_get(dev, &e.coal) : bp_nic_channels_get(dev, &e.chan);

	if (rc)
		return refused(err, errlen, rc);
	snprintf(e.dev, sizeof(e.dev), "%s", dev);
	*has &= kind == J_COALESCE ? coal->has : chan->has;
	if (*has && (rc = journal_record(j, &e, err, errlen)))
		return rc;
	rc = kind == J_COALESCE ? bp_nic_coalesce_set(dev, coal) : bp_nic_channels_set(dev, chan);
	return rc ? refused(err, errlen, rc) : 0;
}

int journal_change_coalesce(struct journal *j, const char *dev, const struct bp_nic_coalesce *s,
			    char *err, size_t errlen)
{
	return change_dev(j, J_COALESCE, dev, s, err, errlen);
}

int journal_change_channels(struct journal *j, const char *dev, const struct bp_nic_channels *s,
			    char *err, size_t errlen)
{
	return change_dev(j, J_CHANNELS, dev, s, err, errlen);
}

int journal_change_sysctl(struct journal *j, const char *name, uint64_t value, char *err, size_t errlen)
{
	struct jentry e = { .kind = J_SYSCTL };
	int now, rc;

	if (!sysctl_ok(name))
		return say(-EINVAL, err, errlen, "net.core.%s: not a setting the journal keeps", name);
	if (tool_read_net_sysctl(name, &now) || now < 0)
		return say(-EIO, err, errlen, "cannot read net.core.%s", name);
	snprintf(e.knob, sizeof(e.knob), "%s", name);
	e.value = (uint64_t)now;
	rc = journal_record(j, &e, err, errlen);
	if (rc)
		return rc;
	rc = sysctl_write(name, value);
	if (rc)
		return say(rc, err, errlen, "cannot set net.core.%s to %" PRIu64 ": %s", name, value, strerror(-rc));
	return 0;
}
