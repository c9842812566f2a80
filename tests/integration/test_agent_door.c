/* SPDX-License-Identifier: MIT */
/*
 * The standing agent's front door (`busypoll agent --listen`), on loopback: each
 * way a client can be wrong is refused, logged with that client's address, and the
 * agent serves a good client right after:
 *   a client with the wrong key (the client library finds the agent out; a raw
 *   client that sends a wrong proof anyway is refused by the agent), a client with
 *   no key that speaks the control protocol at once (refused as garbage), a replayed
 *   transcript, a client that connects and stalls, garbage, a truncated handshake,
 *   an oversized message and a tampered record after authenticating, a record
 *   that opens but holds no control message (answered with an error, the session
 *   goes on: the next request is served), 1,000
 *   unauthenticated connections at once (held: the agent's descriptors show them)
 *   and, with a small --max-pending, the oldest dropped to let a good client in;
 *   a key file open to others refused at start with one line and exit 2.
 * No root needed: everything is on 127.0.0.1 and in a temporary directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#include "bpt_agent.h"
#include "bpt_faults.h"
#include "bptest.h"
#include "tools/common/auth.h"
#include "tools/common/chan.h"
#include "tools/common/control.h"
#include "tools/common/agent_client.h"
#include "tools/common/remote.h"

#define FLOOD 1000
#define AUTH_TIMEOUT "3"

static char dir[64], key[128], wrong[128], state[128], hostport[64];
static struct bpt_agent agent;
static int idle_fds; /* the agent's descriptors before any client */

/* "127.0.0.1:PORT" of our end of fd: how the agent names us in its log. */
static const char *me(int fd, char *buf, size_t len)
{
	struct sockaddr_in a;
	socklen_t l = sizeof(a);

	BPT_CHECK(getsockname(fd, (struct sockaddr *)&a, &l) == 0, "getsockname");
	snprintf(buf, len, "127.0.0.1:%u: refused: ", ntohs(a.sin_port));
	return buf;
}

/* A good client gets a session and answers: its HELLO and its SAMPLE. */
static void good_client(const char *when)
{
	struct agent_remote_opts o;
	struct agent_conn c;
	struct evidence ev;
	char err[512];

	agent_remote_defaults(&o);
	snprintf(o.remote, sizeof(o.remote), "%s", hostport);
	snprintf(o.key_file, sizeof(o.key_file), "%s", key);
	BPT_CHECK(agent_open(&c, &o, err, sizeof(err)) == 0, "%s: %s", when, err);
	BPT_CHECK(c.hello.pid == (uint32_t)agent.pid || c.hello.pid > 0, "%s: HELLO_OK pid %u", when, c.hello.pid);
	BPT_CHECK(agent_sample(&c, &ev, err, sizeof(err)) == 0 && ev.valid, "%s: %s", when, err);
	BPT_CHECK(agent_close(&c, NULL, err, sizeof(err)) == 0, "%s: BYE: %s", when, err);
	printf("ok: a good client is served %s\n", when);
}

/* A raw client that runs the handshake by hand over fd, recording what it sent. */
static void raw_handshake(int fd, const char *keyfile, uint8_t *sent, size_t *sent_len,
			  struct auth *a)
{
	struct auth_key k;
	char err[256];
	uint8_t buf[AUTH_MSG_MAX];

	BPT_CHECK(auth_key_load(keyfile, &k, err, sizeof(err)) == 0, "%s", err);
	BPT_CHECK(auth_start(a, AUTH_CLIENT, &k) == 0, "auth_start");
	*sent_len = 0;
	for (int step = 0; step < 2; step++) {
		size_t len, want = step ? AUTH_ACCEPT_LEN : AUTH_CHALLENGE_LEN;
		const uint8_t *out = auth_output(a, &len);

		memcpy(sent + *sent_len, out, len);
		*sent_len += len;
		bpt_send_all(fd, out, len);
		auth_output_sent(a);
		BPT_CHECK(bpt_recv_all(fd, buf, want, 5000), "no answer at step %d", step);
		BPT_CHECK(auth_input(a, buf, want) == want && a->state != AUTH_FAILED, "%s", a->why);
	}
	BPT_CHECK(a->state == AUTH_DONE, "handshake not done");
}

static void wrong_key(void)
{
	struct remote r;
	char err[256], who[64];
	uint8_t hello[AUTH_HELLO_LEN], chal[AUTH_CHALLENGE_LEN], resp[AUTH_RESPONSE_LEN] = { 0 };
	int fd;

	/* the client library checks the agent first and says so */
	BPT_CHECK(remote_connect(&r, hostport, wrong, 5000, err, sizeof(err)) == -EACCES, "%s", err);
	BPT_CHECK(strstr(err, "does not hold this key"), "%s", err);
	/* a client that sends a proof made without the key */
	fd = bpt_connect(agent.port);
	me(fd, who, sizeof(who));
	memcpy(hello, "BPAU\1\1\0\0", 8);
	randombytes_buf(hello + 8, 32);
	bpt_send_all(fd, hello, sizeof(hello));
	BPT_CHECK(bpt_recv_all(fd, chal, sizeof(chal), 5000), "no challenge");
	memcpy(resp, "BPAU\1\1\0\0", 8);
	randombytes_buf(resp + 8, sizeof(resp) - 8);
	bpt_send_all(fd, resp, sizeof(resp));
	BPT_CHECK(bpt_wait_closed(fd, 30000) >= 0, "the agent kept a client with a wrong proof");
	close(fd);
	strcat(who, "wrong key");
	BPT_CHECK(bpt_agent_wait_log(&agent, who, 5000), "no log line '%s'", who);
	good_client("after a wrong key");
}

static void replayed(void)
{
	uint8_t sent[256];
	size_t sent_len;
	struct auth a;
	char who[64];
	int fd = bpt_connect(agent.port);

	raw_handshake(fd, key, sent, &sent_len, &a);
	close(fd);
	/* the same bytes again, on a new connection */
	fd = bpt_connect(agent.port);
	me(fd, who, sizeof(who));
	bpt_send_all(fd, sent, sent_len);
	BPT_CHECK(bpt_wait_closed(fd, 30000) >= 0, "a replayed transcript was kept");
	close(fd);
	strcat(who, "replayed transcript");
	BPT_CHECK(bpt_agent_wait_log(&agent, who, 5000), "no log line '%s'", who);
	good_client("after a replayed transcript");
}

static void stalled_and_garbage(void)
{
	const char *http = "GET / HTTP/1.1\r\nHost: agent\r\n\r\n";
	char who[64], line[128];
	int fd = bpt_connect(agent.port), ms;

	me(fd, who, sizeof(who));
	ms = bpt_wait_closed(fd, 10000);
	BPT_CHECK(ms >= 0, "a stalled client was never dropped");
	close(fd);
	snprintf(line, sizeof(line), "%sstalled: no complete handshake within " AUTH_TIMEOUT " s", who);
	BPT_CHECK(bpt_agent_wait_log(&agent, line, 5000), "no log line '%s'", line);

	/* a truncated HELLO, then nothing: stalled too; then one that hangs up */
	fd = bpt_connect(agent.port);
	bpt_send_all(fd, "BPAU\1\1\0\0", 8);
	BPT_CHECK(bpt_wait_closed(fd, 10000) >= 0, "a truncated handshake was never dropped");
	close(fd);
	fd = bpt_connect(agent.port);
	me(fd, who, sizeof(who));
	bpt_send_all(fd, "BPAU\1\1", 6);
	close(fd);
	snprintf(line, sizeof(line), "%sclosed during the handshake", who);
	BPT_CHECK(bpt_agent_wait_log(&agent, line, 5000), "no log line '%s'", line);

	fd = bpt_connect(agent.port);
	me(fd, who, sizeof(who));
	bpt_send_all(fd, http, strlen(http));
	BPT_CHECK(bpt_wait_closed(fd, 2000) >= 0, "garbage was not refused at once");
	close(fd);
	snprintf(line, sizeof(line), "%sgarbage: not a busypoll agent client", who);
	BPT_CHECK(bpt_agent_wait_log(&agent, line, 5000), "no log line '%s'", line);

	/* no key: the control protocol's HELLO straight away, as to an rr server */
	{
		static struct ctl_msg m;
		uint8_t wire[CTL_HDR_LEN + 64];
		int n;

		ctl_msg_init(&m, CTL_HELLO);
		ctl_put_text(&m, CTL_T_TOOL, "rr");
		n = ctl_encode(&m, wire, sizeof(wire));
		BPT_CHECK(n > 0, "ctl_encode %d", n);
		fd = bpt_connect(agent.port);
		me(fd, who, sizeof(who));
		bpt_send_all(fd, wire, (size_t)n);
		BPT_CHECK(bpt_wait_closed(fd, 2000) >= 0, "a control message without the handshake was not refused");
		close(fd);
		snprintf(line, sizeof(line), "%sgarbage: not a busypoll agent client", who);
		BPT_CHECK(bpt_agent_wait_log(&agent, line, 5000), "no log line '%s'", line);
	}
	good_client("after stalled, truncated, garbage and keyless clients");
}

/* sealed_reply - the type of the next control message the agent sends on fd's channel (-1: none). */
static int sealed_reply(int fd, struct auth *a)
{
	static uint8_t frame[CHAN_FRAME_MAX], msg[CHAN_MAX_MSG];
	static struct ctl_msg m;
	const char *why = "";
	uint32_t len;
	size_t mlen;

	if (!bpt_recv_all(fd, frame, 4, 5000))
		return -1;
	memcpy(&len, frame, 4); /* little-endian, as this machine */
	if (len > CHAN_MAX_MSG + CHAN_ABYTES || !bpt_recv_all(fd, frame + 4, len, 5000) ||
	    chan_open(&a->chan, frame, 4 + (size_t)len, msg, sizeof(msg), &mlen) <= 0 ||
	    ctl_decode(msg, mlen, &m, &why) != (int)mlen)
		return -1;
	return m.type;
}

static void after_authentication(void)
{
	static uint8_t frame[CHAN_FRAME_MAX];
	uint8_t sent[256], huge[4] = { 0xff, 0xff, 0xff, 0x7f };
	size_t sent_len;
	struct auth a;
	char who[64], line[160];
	int fd = bpt_connect(agent.port), n;

	/* oversized: refused from the length alone, before any of its bytes */
	me(fd, who, sizeof(who));
	raw_handshake(fd, key, sent, &sent_len, &a);
	bpt_send_all(fd, huge, sizeof(huge));
	BPT_CHECK(bpt_wait_closed(fd, 30000) >= 0, "an oversized message was not refused");
	close(fd);
	snprintf(line, sizeof(line), "%san oversized message", who);
	BPT_CHECK(bpt_agent_wait_log(&agent, line, 5000), "no log line '%s'", line);

	/* a record changed on the way */
	fd = bpt_connect(agent.port);
	me(fd, who, sizeof(who));
	raw_handshake(fd, key, sent, &sent_len, &a);
	n = chan_seal(&a.chan, "hello", 5, frame, sizeof(frame));
	frame[n - 1] ^= 0x40;
	bpt_send_all(fd, frame, (size_t)n);
	BPT_CHECK(bpt_wait_closed(fd, 30000) >= 0, "a tampered record was not refused");
	close(fd);
	snprintf(line, sizeof(line), "%sa record that does not open", who);
	BPT_CHECK(bpt_agent_wait_log(&agent, line, 5000), "no log line '%s'", line);

	/* a record that opens but is no control message: an error back, and the session goes on */
	fd = bpt_connect(agent.port);
	me(fd, who, sizeof(who));
	raw_handshake(fd, key, sent, &sent_len, &a);
	n = chan_seal(&a.chan, "GET / HTTP/1.1\r\n", 16, frame, sizeof(frame));
	bpt_send_all(fd, frame, (size_t)n);
	BPT_CHECK(sealed_reply(fd, &a) == CTL_ERROR, "no error for a record without a control message");
	{
		static struct ctl_msg m;
		uint8_t wire[CTL_HDR_LEN + 64];
		int len;

		ctl_msg_init(&m, CTL_HELLO);
		m.seq = 7;
		len = ctl_encode(&m, wire, sizeof(wire));
		n = chan_seal(&a.chan, wire, (size_t)len, frame, sizeof(frame));
		bpt_send_all(fd, frame, (size_t)n);
	}
	BPT_CHECK(sealed_reply(fd, &a) == CTL_HELLO_OK, "the session did not go on after a garbage record");
	close(fd);
	snprintf(line, sizeof(line), "%.*sa request refused: ", (int)(strlen(who) - strlen("refused: ")), who);
	BPT_CHECK(bpt_agent_wait_log(&agent, line, 5000), "no log line '%s'", line);
	good_client("after an oversized message, a tampered record and a garbage one");
}

static void flood(void)
{
	static int fds[FLOOD];
	/* every earlier client's socket closed on the agent's side too */
	int held = 0, before = bpt_agent_fd_settle(&agent, idle_fds, 5000);

	BPT_CHECK(bpt_raise_nofile(FLOOD + 256), "cannot have %d descriptors", FLOOD + 256);
	for (int i = 0; i < FLOOD; i++) {
		fds[i] = bpt_connect_nb(agent.port);
		BPT_CHECK(fds[i] >= 0, "connect %d: %s", i, strerror(-fds[i]));
	}
	/* the kernel's evidence that the agent holds them all: its descriptors */
	for (int t = 0; t < 200 && held < before + FLOOD; t++) {
		held = bpt_fd_count(agent.pid);
		if (held < before + FLOOD)
			bpt_agent_wait_log(&agent, "\a", 10); /* reads its log for 10 ms */
	}
	BPT_CHECK(held >= before + FLOOD, "the agent holds %d descriptors, %d before the flood", held,
		  before);
	printf("ok: the agent holds %d unauthenticated connections\n", held - before);
	good_client("while 1,000 unauthenticated connections are open");
	BPT_CHECK(bpt_agent_count(&agent, "stalled") < 3, "the flood timed out before the good client");
	for (int i = 0; i < FLOOD; i++)
		close(fds[i]);
	BPT_CHECK(bpt_agent_fd_settle(&agent, before, 10000) <= before,
		  "the agent kept the flood's descriptors");
}

static void oldest_dropped(void)
{
	const char *args[] = { "--listen", "127.0.0.1:0", "--key-file", key, "--state-dir", state,
			       "--max-pending", "8", NULL };
	struct bpt_agent small;
	char save[64];
	int fds[20];

	bpt_agent_start(&small, NULL, false, args);
	bpt_agent_wait_listening(&small, 5000);
	for (int i = 0; i < 20; i++)
		fds[i] = bpt_connect(small.port);
	snprintf(save, sizeof(save), "%s", hostport);
	snprintf(hostport, sizeof(hostport), "127.0.0.1:%u", small.port);
	good_client("by an agent full of waiting connections");
	snprintf(hostport, sizeof(hostport), "%s", save);
	BPT_CHECK(bpt_agent_wait_log(&small, "dropped: 8 connections waiting to authenticate", 5000),
		  "no drop logged");
	BPT_CHECK(bpt_agent_count(&small, "dropped:") >= 13, "%d dropped", bpt_agent_count(&small, "dropped:"));
	for (int i = 0; i < 20; i++)
		close(fds[i]);
	BPT_CHECK(bpt_agent_end(&small, SIGTERM, 5000) == 0, "the second agent did not end cleanly");
}

static void key_file_checks(void)
{
	char open_key[128], cmd[512], out[512];
	FILE *p;
	int status;

	snprintf(open_key, sizeof(open_key), "%s/open.key", dir);
	snprintf(cmd, sizeof(cmd), "'%s' agent --new-key '%s' && chmod 644 '%s' && '%s' agent --listen "
		 "127.0.0.1:0 --key-file '%s' 2>&1", bpt_busypoll(), open_key, open_key, bpt_busypoll(),
		 open_key);
	p = popen(cmd, "r");
	BPT_CHECK(p, "popen");
	out[0] = '\0';
	BPT_CHECK(fgets(out, sizeof(out), p), "no output");   /* --new-key's line */
	BPT_CHECK(fgets(out, sizeof(out), p), "no refusal");
	status = pclose(p);
	BPT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 2, "exit %d", WEXITSTATUS(status));
	snprintf(cmd, sizeof(cmd), "busypoll agent: key file %s is open to group or others (mode 0644): "
		 "run chmod 600 %s\n", open_key, open_key);
	BPT_CHECK(!strcmp(out, cmd), "'%s'", out);
	/* --new-key never overwrites */
	snprintf(cmd, sizeof(cmd), "'%s' agent --new-key '%s' 2>/dev/null", bpt_busypoll(), key);
	status = system(cmd);
	BPT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 2, "--new-key over a key: exit %d",
		  WEXITSTATUS(status));
	printf("ok: key files\n");
}

int main(void)
{
	const char *args[] = { "--listen", "127.0.0.1:0", "--key-file", key, "--state-dir", state,
			       "--auth-timeout", AUTH_TIMEOUT, NULL };
	char cmd[512];
	struct stat st;

	bpt_busypoll();
	bpt_tmpdir("agent-door", dir, sizeof(dir));
	snprintf(key, sizeof(key), "%s/agent.key", dir);
	snprintf(wrong, sizeof(wrong), "%s/wrong.key", dir);
	/* journals beside the keys: bpt_rmdir_at_exit removes files, not subdirectories */
	snprintf(state, sizeof(state), "%s", dir);
	snprintf(cmd, sizeof(cmd), "'%s' agent --new-key '%s' >/dev/null && '%s' agent --new-key '%s' "
		 ">/dev/null", bpt_busypoll(), key, bpt_busypoll(), wrong);
	BPT_CHECK(system(cmd) == 0, "--new-key failed");
	BPT_CHECK(stat(key, &st) == 0 && (st.st_mode & 07777) == 0600, "key mode %o", st.st_mode & 07777);
	BPT_CHECK(sodium_init() >= 0, "libsodium");

	bpt_agent_start(&agent, NULL, false, args);
	bpt_agent_wait_listening(&agent, 5000);
	snprintf(hostport, sizeof(hostport), "127.0.0.1:%u", agent.port);
	idle_fds = bpt_fd_count(agent.pid);

	good_client("first");
	wrong_key();
	replayed();
	stalled_and_garbage();
	after_authentication();
	flood();
	oldest_dropped();
	key_file_checks();
	good_client("at the end");

	BPT_CHECK(bpt_agent_end(&agent, SIGTERM, 5000) == 0, "the agent did not end cleanly on SIGTERM");
	BPT_CHECK(strstr(agent.log, "stopping:"), "no stop line");
	printf("ok\n");
	return 0;
}
