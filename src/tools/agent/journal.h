/* SPDX-License-Identifier: MIT */
/*
 * The agent's restore journal: before the agent changes a setting of this host
 * (a NAPI's settings over netdev netlink, a device's sysfs knob, its coalescing
 * or its channel counts), it appends the setting's value as it is now to the
 * session's journal file and fsyncs it; only then does it change it. At the end of
 * the session (normal end, the client gone) the journal is played back newest
 * first, which leaves every setting as it was before the session's first change,
 * and the file is removed. A journal whose agent died (SIGKILL) is still there at
 * the next start, which plays it back first; `busypoll agent --restore` does that
 * and nothing else.
 *
 * Files: STATE_DIR/session-PID-N.journal (STATE_DIR default /run/busypoll), text:
 *
 *   busypoll-journal 1 pid=1234 netns=4026531840
 *   napi 8193 defer-hard-irqs=0,gro-flush-timeout=0
 *   knob eth0 gro_flush_timeout=0
 *   coalesce eth0 rx-usecs=8,rx-frames=1
 *   channels eth0 combined=8
 *   sysctl net.core busy_read=0
 *
 * The owning agent holds an exclusive flock on its file as long as the session
 * lives; a file no one holds belongs to an agent that is gone. One session at a
 * time may change a host's settings (two would restore over each other): the
 * first to change holds STATE_DIR/host-NETNS.lock (one per network namespace, whose
 * settings they are) until it has played its journal back,
 * and a second is refused with -EBUSY naming the first, in this agent or another. A line without its
 * newline (a torn last write) is a change never made and is skipped. Settings live
 * in a network namespace: a journal written in another one (netns= differs) is left
 * for an agent in that namespace, and said so.
 */
#ifndef BP_TOOLS_AGENT_JOURNAL_H
#define BP_TOOLS_AGENT_JOURNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <busypoll/napi.h>
#include <busypoll/nic.h>

#define JOURNAL_DEFAULT_DIR "/run/busypoll"

/* What the journal says it did, one line each (the agent's log). */
typedef void (*journal_log_fn)(void *arg, const char *line);

enum jentry_kind { J_NAPI, J_KNOB, J_COALESCE, J_CHANNELS, J_SYSCTL };

/* One setting's value before a change. */
struct jentry {
	enum jentry_kind kind;
	uint32_t napi_id;              /* J_NAPI */
	char dev[16];                  /* J_KNOB, J_COALESCE, J_CHANNELS */
	char knob[32];                 /* J_KNOB: "gro_flush_timeout"; J_SYSCTL: "busy_read" */
	uint64_t value;                /* J_KNOB, J_SYSCTL */
	bp_napi_settings napi;         /* J_NAPI: the settings in .has */
	struct bp_nic_coalesce coal;   /* J_COALESCE: the parameters in .has */
	struct bp_nic_channels chan;   /* J_CHANNELS: the counts in .has */
};

/* jentry_format - e as one journal line, without the newline. 0 or -ENAMETOOLONG. */
int jentry_format(const struct jentry *e, char *buf, size_t len);
/* jentry_parse - one journal line (no newline) into *e. 0 or -EINVAL. */
int jentry_parse(const char *line, struct jentry *e);
/* jentry_apply - put the setting back to e's value (in this thread's namespace). 0 or -errno. */
int jentry_apply(const struct jentry *e);

struct journal {
	int fd;                        /* -1: not open; read and written (O_RDWR | O_APPEND) */
	int lock_fd;                   /* host-NETNS.lock, held while fd is open */
	int dir_fd;                    /* the state directory, every file in it reached through it */
	char name[64];                 /* session-PID-N.journal */
	char path[PATH_MAX];           /* DIR/name, for messages */
	unsigned entries;
};

/*
 * journal_dir_open - the state directory dir (made 0700 first when create and it is
 * missing), checked and opened O_DIRECTORY | O_NOFOLLOW: a directory, not a
 * symbolic link, owned by this process's user, writable by nobody else (every
 * journal in it is played back as that user). Its descriptor, or -errno with one
 * line in err saying what to fix.
 */
int journal_dir_open(const char *dir, bool create, char *err, size_t errlen);

/*
 * journal_open - take the host's change lock in dir (created 0700 if missing),
 * writing holder ("PEER") into it for whoever is refused next; play back the
 * journals of agents that are gone (logged); then a new journal for one session,
 * locked, its header written and fsynced (and the directory). 0; -EBUSY when
 * another session holds the host (err names it); or -errno with one line in err.
 */
int journal_open(struct journal *j, const char *dir, const char *holder, journal_log_fn log,
		 void *arg, char *err, size_t errlen);

/*
 * journal_record - append e and fsync; the caller changes the setting only after 0.
 * -errno with one line in err (then it must not change it).
 */
int journal_record(struct journal *j, const struct jentry *e, char *err, size_t errlen);

/*
 * journal_finish - play j back (newest first), then remove it and close it, and
 * give up the host's change lock. Every restore is logged. Returns how many settings could not be restored (then the file
 * is kept, unlocked, for the next start or --restore to try again).
 */
int journal_finish(struct journal *j, journal_log_fn log, void *arg);

/*
 * journal_restore_dir - play back and remove every journal in dir (journal_dir_open's
 * checks; every file reached by openat) that no live agent holds, that was written
 * in this network namespace, and that is a regular file of this user with mode
 * 0600 (another is logged and left). Logs each, a journal a live agent holds
 * too (it restores its own).
 * Returns how many journals were restored completely, or -errno (dir unreadable;
 * a missing dir is 0); *left (may be NULL) counts those left for a person to see
 * to (another namespace, not this user's, or a setting that could not be
 * restored), not those a live agent holds. A journal of a namespace that no longer
 * exists is removed and logged (nothing of it is left to restore), counted in neither.
 */
int journal_restore_dir(const char *dir, journal_log_fn log, void *arg, int *left);

/*
 * The changes, each journalled first: read the current value of exactly what s
 * changes, record it, then change it. 0, or -errno with one line in err.
 */
int journal_change_napi(struct journal *j, uint32_t id, const bp_napi_settings *s, char *err,
			size_t errlen);
int journal_change_knob(struct journal *j, const char *dev, const char *knob, uint64_t value,
			char *err, size_t errlen);
int journal_change_coalesce(struct journal *j, const char *dev, const struct bp_nic_coalesce *s,
			    char *err, size_t errlen);
int journal_change_channels(struct journal *j, const char *dev, const struct bp_nic_channels *s,
			    char *err, size_t errlen);
/* net.core.NAME (busy_read or busy_poll, global: the first namespace's) to value. */
int journal_change_sysctl(struct journal *j, const char *name, uint64_t value, char *err, size_t errlen);

#endif
