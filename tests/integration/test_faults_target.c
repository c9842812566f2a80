/* SPDX-License-Identifier: MIT */
/*
 * busypoll target against hosts that misbehave, over loopback, in process:
 *
 *  1. Hosts that disappear (RST, and FIN) mid-PDU: half an ICReq, half a Connect
 *     capsule, half a command on a live admin queue (the controller dies with
 *     it), half the H2CData a R2T asked for, a 1 MiB read only begun to be read,
 *     and 32 reads of 1 MiB outstanding (the host reads none: once the socket
 *     and 4 MiB of send queue are full the target parks the rest, which the
 *     test waits to see in the queue's counters). After them
 *     every descriptor is back, only the well-behaved host's queues are live,
 *     and it keeps doing verified I/O; a new controller connects.
 *  2. At the same time, for 5 s and on until each is closed (WAIT_S at most): a client that connects and sends nothing, one
 *     that stops after its ICReq, a half-open connection before ICReq and one
 *     on a live admin queue (the client's kernel forgets them: TCP_REPAIR then
 *     close sends neither FIN nor RST), and two slow senders at one byte per
 *     second (an ICReq; a Keep Alive on an admin queue with KATO 1 s). The
 *     target closes each by its limit: the connect timeout (1.5 s here) before
 *     Connect, keep-alive after it; each closure is logged. Each limit has both
 *     bounds: measured from before the client's connect (or Connect), which
 *     precedes the target's timer, a closure never comes before the limit (a
 *     timer cannot fire early, however loaded the machine) nor more than
 *     TIMER_SLACK_MS after it (generous: it proves the timer fires at all). Meanwhile the good host's verified I/O runs at
 *     no less than a tenth of its rate just before.
 *
 * Prints the faults injected. Usage: [--rounds N (of each fault; default 8, make soak 100)]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <busypoll/busypoll.h>
#include <busypoll/nvme/host.h>
#include <busypoll/nvme/target.h>

#include "bpt_faults.h"
#include "bpt_nvmet.h"
#include "bptest.h"
#include "base/bytes.h"

#define NQN "nqn.2024-01.io.busypoll:faults"
#define HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:fa017000-0000-4000-8000-000000000001"
#define CONNECT_TIMEOUT_MS 1500
#define KATO_MS 1000               /* whole seconds: the target rounds KATO up to seconds */
/*
 * A closure by a timer may come this late (scheduling on a loaded machine), never early:
 * the upper bound only proves the timer fires at all. Waits for a closure last WAIT_S.
 */
#define TIMER_SLACK_MS 25000
#define WAIT_S 30
#define MIB (1u << 20)

static struct bp_nvmet *t;
static uint16_t port;
static struct sockaddr_in taddr;
static char dir[] = "/tmp/bpt-tfaults-XXXXXX";
static char log_path[300];
static FILE *log_file;
static uint64_t faults;
static const char *cur_mode = "";
static int rounds = 8;              /* of each fault; make soak: 100 */

/* The well-behaved host: a controller with kato 0 (its loop does not always run), one I/O queue. */
static struct bp_loop *loop;
static struct bp_nvmeh_ctrl *good;
static struct bp_nvmeh_queue *gq;
static uint64_t good_ops;

static void target_up(const struct bp_mode *mode)
{
	struct bp_nvmet_cfg cfg;
	char err[160];

	bp_nvmet_cfg_defaults(&cfg);
	((struct sockaddr_in *)&cfg.listen)->sin_port = 0;
	snprintf(cfg.nqn, sizeof(cfg.nqn), NQN);
	BPT_CHECK(bp_nvmet_ns_parse("ram:64M", &cfg.ns[0], err, sizeof(err)) == 0, "%s", err);
	cfg.n_ns = 1;
	cfg.threads = 2;
	cfg.connect_timeout_ms = CONNECT_TIMEOUT_MS;
	cfg.log_level = BP_NVMET_LOG_WARN;
	cfg.log = log_file;
	cfg.mode = *mode;
	BPT_CHECK(bp_nvmet_start(&cfg, &t) == 0, "target: %s", bp_last_error());
	port = bp_nvmet_port(t);
	taddr.sin_family = AF_INET;
	taddr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	taddr.sin_port = htons(port);
}

static struct bp_nvmeh_ctrl *ctrl_up(uint16_t nq)
{
	struct bp_nvmeh_opts o;
	struct bp_nvmeh_ctrl *c = NULL;

	bp_nvmeh_opts_defaults(&o);
	snprintf(o.subnqn, sizeof(o.subnqn), NQN);
	snprintf(o.hostnqn, sizeof(o.hostnqn), HOSTNQN);
	o.kato_ms = 0;
	o.timeout_ms = 10000;
	BPT_CHECK(bp_nvmeh_ctrl_connect(loop, (struct sockaddr *)&taddr, sizeof(taddr), &o, nq, &c) == 0,
		  "connect: %s", bp_last_error());
	return c;
}

/* A 4 KiB block stamped with its LBA and a round: written, read back, compared. */
static void good_io(int n, const char *when)
{
	uint8_t w[4096], r[4096], sqe[64];

	for (int i = 0; i < n; i++) {
		uint64_t lba = (good_ops % 1024) * 8;

		for (size_t k = 0; k < sizeof(w); k += 8) {
			bp_put_le32(w + k, (uint32_t)lba);
			bp_put_le32(w + k + 4, (uint32_t)good_ops);
		}
		bp_nvmeh_sqe_rw(sqe, true, 1, lba, 8);
		BPT_CHECK(bp_nvmeh_sync(gq, sqe, w, sizeof(w), true, NULL, 10000) == 0, "%s: write: %s", when,
			  bp_last_error());
		bp_nvmeh_sqe_rw(sqe, false, 1, lba, 8);
		BPT_CHECK(bp_nvmeh_sync(gq, sqe, r, sizeof(r), false, NULL, 10000) == 0, "%s: read: %s", when,
			  bp_last_error());
		BPT_CHECK(!memcmp(w, r, sizeof(w)), "%s: data read back differs at LBA %llu", when,
			  (unsigned long long)lba);
		good_ops++;
	}
}

/* ---- raw NVMe/TCP, by hand ---- */

static uint8_t icreq[BP_NVME_TCP_IC_LEN];

static int raw_ic(void)
{
	int fd = bpt_connect(port);
	uint8_t b[BP_NVME_TCP_IC_LEN];

	bpt_send_all(fd, icreq, sizeof(icreq));
	BPT_CHECK(bpt_recv_all(fd, b, sizeof(b), 5000) && b[0] == BP_NVME_TCP_ICRESP, "no ICResp");
	return fd;
}

/* A Connect capsule (admin when qid 0) into b; returns its length. */
static size_t connect_pdu(uint8_t *b, uint16_t qid, uint16_t cntlid, uint32_t kato_ms)
{
	uint8_t sqe[64], cd[1024] = { 0 };
	size_t h;

	bp_nvme_sqe_init(sqe, BP_NVME_FABRICS, 0x77, 0, 1024, true);
	sqe[4] = BP_NVMF_CONNECT;
	bp_put_le16(sqe + 42, qid);
	bp_put_le16(sqe + 44, 31);
	bp_put_le32(sqe + 48, kato_ms);
	bp_put_le16(cd + 16, cntlid);
	snprintf((char *)cd + 256, 256, NQN);
	snprintf((char *)cd + 512, 256, HOSTNQN);
	h = bp_nvme_tcp_cmd_encode(b, sqe, 1024, false, false, 0);
	memcpy(b + h, cd, 1024);
	return h + 1024;
}

/* One PDU header + body; returns its type. */
static uint8_t read_pdu(int fd, uint8_t *b, size_t cap)
{
	uint32_t plen;

	BPT_CHECK(bpt_recv_all(fd, b, 8, 5000), "no PDU");
	plen = bp_get_le32(b + 4);
	BPT_CHECK(plen >= 8 && plen <= cap, "PDU length %u", plen);
	BPT_CHECK(bpt_recv_all(fd, b + 8, plen - 8, 5000), "PDU body");
	return b[0];
}

static int raw_queue(uint16_t qid, uint16_t cntlid, uint32_t kato_ms)
{
	for (int tries = 0;; tries++) {
		int fd = raw_ic();
		uint8_t b[2048];
		size_t n = connect_pdu(b, qid, cntlid, kato_ms);
		struct bp_nvme_cqe cqe;

		bpt_send_all(fd, b, n);
		BPT_CHECK(read_pdu(fd, b, sizeof(b)) == BP_NVME_TCP_RSP, "Connect: no response");
		bp_nvme_cqe_decode(b + 8, &cqe);
		if (cqe.status == (BP_NVME_SC_CONNECT_CTRL_BUSY | BP_NVME_DNR) && tries < 100) {
			/* qids are reused: the target may not have seen that qid's last host vanish yet */
			close(fd);
			bpt_sleep_ms(10);
			continue;
		}
		BPT_CHECK(cqe.status == 0, "raw Connect qid %u refused: status 0x%x", qid, cqe.status);
		return fd;
	}
}

static size_t rw_pdu(uint8_t *b, bool write, uint16_t cid, uint64_t slba, uint32_t len)
{
	uint8_t sqe[64];

	bp_nvmeh_sqe_rw(sqe, write, 1, slba, len / 512);
	bp_nvme_sqe_set_cid(sqe, cid);
	bp_nvme_sqe_set_dw(sqe, 8, len); /* transport SGL: the data comes by R2T / C2HData */
	return bp_nvme_tcp_cmd_encode(b, sqe, 0, false, false, 0);
}

/* ---- 1. hosts that disappear mid-PDU ---- */

enum scenario { HALF_ICREQ, HALF_CONNECT, HALF_ADMIN_CMD, HALF_H2CDATA, READ_UNREAD, READS_PARKED, N_SCENARIOS };
static const char *const scenario_name[] = {
	"half an ICReq", "half a Connect", "half a command on a live admin queue", "half the H2CData of a R2T",
	"a 1 MiB read begun", "32 x 1 MiB reads outstanding, some parked",
};
static unsigned n_ioq_faults;

/* qids 2..64 in turn (1 is the good host's) */
static uint16_t next_qid(void)
{
	return (uint16_t)(2 + n_ioq_faults++ % 63);
}

static void next_qid_reset(void)
{
	n_ioq_faults = 0;
}

/* reads_parked - all n reads of len bytes taken on queue qid, and not all of their data handed out. */
static bool reads_parked(uint16_t qid, uint64_t n, uint64_t len)
{
	struct bp_nvmet_queue_stats st;

	return bpt_nvmet_queue(t, good->cntlid, qid, &st) && st.reads == n && st.bytes_out < n * len;
}

static void vanish_once(enum scenario sc, enum bpt_vanish how)
{
	static uint8_t b[32 * 128];
	int fd;

	switch (sc) {
	case HALF_ICREQ:
		fd = bpt_connect(port);
		bpt_send_all(fd, icreq, sizeof(icreq) / 2);
		break;
	case HALF_CONNECT: {
		size_t n;

		fd = raw_ic();
		n = connect_pdu(b, 0, 0xffff, 0);
		bpt_send_all(fd, b, n / 2);
		break;
	}
	case HALF_ADMIN_CMD: {
		uint8_t sqe[64];
		size_t n;

		fd = raw_queue(0, 0xffff, 0);
		bp_nvme_sqe_init(sqe, BP_NVME_ADM_KEEP_ALIVE, 9, 0, 0, false);
		n = bp_nvme_tcp_cmd_encode(b, sqe, 0, false, false, 0);
		bpt_send_all(fd, b, n / 2);
		break;
	}
	case HALF_H2CDATA: {
		struct bp_nvme_tcp_data r2t, d;
		size_t h;

		fd = raw_queue(next_qid(), good->cntlid, 0);
		bpt_send_all(fd, b, rw_pdu(b, true, 5, 4096, 65536)); /* beyond in-capsule: R2T */
		BPT_CHECK(read_pdu(fd, b, sizeof(b)) == BP_NVME_TCP_R2T, "expected a R2T");
		bp_nvme_tcp_data_decode(b, &r2t);
		d = (struct bp_nvme_tcp_data){ .cccid = 5, .ttag = r2t.ttag, .offset = 0, .length = r2t.length };
		h = bp_nvme_tcp_data_encode(b, BP_NVME_TCP_H2C_DATA, &d, BP_NVME_TCP_F_LAST, false, false, 0);
		bpt_send_all(fd, b, h);
		memset(b, 0xd5, sizeof(b));
		for (uint32_t sent = 0; sent < r2t.length / 2; sent += 2048)
			bpt_send_all(fd, b, 2048);
		break;
	}
	case READ_UNREAD:
		fd = raw_queue(next_qid(), good->cntlid, 0);
		bpt_send_all(fd, b, rw_pdu(b, false, 6, 0, MIB));
		BPT_CHECK(bpt_recv_all(fd, b, 1000, 5000), "no C2HData");
		break;
	case READS_PARKED: {
		uint16_t qid = next_qid();
		size_t n = 0;

		fd = raw_queue(qid, good->cntlid, 0);
		for (uint16_t cid = 0; cid < 32; cid++)
			n += rw_pdu(b + n, false, cid, (uint64_t)cid * 2048, MIB);
		bpt_send_all(fd, b, n);
		BPT_CHECK(BPT_WAIT_UNTIL(reads_parked(qid, 32, MIB), 30000),
			  "%s: 32 reads of 1 MiB the host never reads: the target did not take them all and park some",
			  cur_mode);
		break;
	}
	default:
		return;
	}
	if (how == BPT_FIN)
		shutdown(fd, SHUT_WR);
	bpt_vanish(fd, how);
	faults++;
}

static void hosts_vanish(int base)
{
	int after, live;
	uint64_t before = faults;

	for (int r = 0; r < rounds; r++)
		for (int sc = 0; sc < N_SCENARIOS; sc++) {
			vanish_once((enum scenario)sc, BPT_RST);
			vanish_once((enum scenario)sc, BPT_FIN);
		}
	after = bpt_fd_settle(0, base, 30000);
	BPT_CHECK(after == base, "%d descriptors before hosts vanished, %d after (a leak)", base, after);
	/* Only the good host's admin and I/O queue are left. */
	BPT_WAIT_UNTIL((live = bpt_nvmet_sum(t, false).live) == 2, 30000);
	BPT_CHECK(live == 2, "%d queues live after the faults, expected the good host's 2", live);
	good_io(50, "after hosts vanished");
	{
		struct bp_nvmeh_ctrl *c = ctrl_up(1);

		bp_nvmeh_ctrl_disconnect(c);
	}
	after = bpt_fd_settle(0, base, 30000);
	BPT_CHECK(after == base, "%d descriptors after a new controller came and went, %d before", after, base);
	printf("ok   %s: %llu hosts vanished mid-PDU (RST and FIN):", cur_mode,
	       (unsigned long long)(faults - before));
	for (int sc = 0; sc < N_SCENARIOS; sc++)
		printf("%s %s", sc ? "," : "", scenario_name[sc]);
	printf("; fds %d -> %d, the good host's verified I/O and a new controller fine\n", base, after);
}

/* ---- 2. silent, half-open and slow hosts while a good one works ---- */

struct trickler {
	bool admin;               /* a Keep Alive on an admin queue with KATO 1 s, else an ICReq */
	int closed_after_ms;      /* from before its connect (or Connect); -1: still open after the bound */
	pthread_t th;
};

static void *trickle(void *arg)
{
	struct trickler *tr = arg;
	uint8_t b[128], sqe[64];
	const uint8_t *src = icreq;
	size_t len = sizeof(icreq);
	uint64_t start = bpt_now_ns(); /* before the target's timer: its connect timer or KATO */
	int fd;

	if (tr->admin) {
		fd = raw_queue(0, 0xffff, KATO_MS);
		bp_nvme_sqe_init(sqe, BP_NVME_ADM_KEEP_ALIVE, 3, 0, 0, false);
		len = bp_nvme_tcp_cmd_encode(b, sqe, 0, false, false, 0);
		src = b;
	} else {
		fd = bpt_connect(port);
	}
	tr->closed_after_ms = -1;
	/* One byte per second for at most WAIT_S s. */
	for (size_t i = 0; i < WAIT_S && i < len; i++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (send(fd, src + i, 1, MSG_NOSIGNAL) != 1 || poll(&p, 1, 1000) == 1) {
			tr->closed_after_ms = (int)((bpt_now_ns() - start) / 1000000);
			break; /* nothing is owed to a half-sent PDU: only the close can arrive */
		}
	}
	close(fd);
	return NULL;
}

static int count_lines(const char *text)
{
	FILE *f = fopen(log_path, "r");
	char line[1024];
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, text) != NULL;
	fclose(f);
	return n;
}

/* A closure by a limit of limit_ms, after_ms from before the timer started: not early, not late. */
static void within_limit(int after_ms, int limit_ms, const char *what)
{
	BPT_CHECK(after_ms >= limit_ms, "%s closed after %d ms, before its limit of %d ms", what, after_ms, limit_ms);
	BPT_CHECK(after_ms <= limit_ms + TIMER_SLACK_MS, "%s closed after %d ms, more than %d ms past its limit of %d ms",
		  what, after_ms, TIMER_SLACK_MS, limit_ms);
}

static void idle_and_slow_hosts(int base)
{
	struct trickler tr[2] = { { .admin = false }, { .admin = true } };
	int silent, ic_only, t_silent, t_ic, n_forgotten = 0, no_icreq0 = count_lines("no ICReq within"),
					 no_connect0 = count_lines("no Connect within"),
					 no_ka0 = count_lines("no Keep Alive");
	uint64_t t0, ops0, t_open_silent, t_open_ic;
	double rate0, rate1;
	bool can_forget = bpt_can_forget();

	/* The good host's rate on its own. */
	t0 = bpt_now_ns();
	ops0 = good_ops;
	while (bpt_now_ns() - t0 < 1000000000ull)
		good_io(10, "baseline");
	rate0 = (double)(good_ops - ops0) * 1e9 / (double)(bpt_now_ns() - t0);

	t_open_silent = bpt_now_ns();
	silent = bpt_connect(port);
	t_open_ic = bpt_now_ns();
	ic_only = raw_ic();
	if (can_forget) {
		int fd = bpt_connect(port);

		BPT_CHECK(bpt_vanish(fd, BPT_FORGET), "TCP_REPAIR");
		fd = raw_queue(0, 0xffff, KATO_MS);
		BPT_CHECK(bpt_vanish(fd, BPT_FORGET), "TCP_REPAIR");
		n_forgotten = 2;
	} else {
		bpt_skip_part("half-open connections: TCP_REPAIR needs CAP_NET_ADMIN (run as root)");
	}
	for (int i = 0; i < 2; i++)
		BPT_CHECK(pthread_create(&tr[i].th, NULL, trickle, &tr[i]) == 0, "pthread_create");
	faults += 4 + (uint64_t)n_forgotten;

	/* The good host works on meanwhile, for 5 s, and on until both idle hosts are closed (WAIT_S at most). */
	t0 = bpt_now_ns();
	ops0 = good_ops;
	t_silent = t_ic = -1;
	while (bpt_now_ns() - t0 < 5000000000ull ||
	       ((t_silent < 0 || t_ic < 0) && bpt_now_ns() - t0 < WAIT_S * 1000000000ull)) {
		good_io(10, "alongside silent, half-open and slow hosts");
		if (t_silent < 0 && bpt_wait_closed(silent, 0) >= 0)
			t_silent = (int)((bpt_now_ns() - t_open_silent) / 1000000);
		if (t_ic < 0 && bpt_wait_closed(ic_only, 0) >= 0)
			t_ic = (int)((bpt_now_ns() - t_open_ic) / 1000000);
	}
	rate1 = (double)(good_ops - ops0) * 1e9 / (double)(bpt_now_ns() - t0);

	close(silent);
	close(ic_only);
	for (int i = 0; i < 2; i++)
		pthread_join(tr[i].th, NULL);
	BPT_CHECK(t_silent >= 0, "a client that sent nothing is still connected after %d s (connect timeout %d ms)",
		  WAIT_S, CONNECT_TIMEOUT_MS);
	BPT_CHECK(t_ic >= 0, "a client that stopped after its ICReq is still connected after %d s", WAIT_S);
	BPT_CHECK(tr[0].closed_after_ms >= 0,
		  "a slow sender trickling its ICReq was not closed by the connect timeout within %d s", WAIT_S);
	BPT_CHECK(tr[1].closed_after_ms >= 0, "a slow sender trickling a Keep Alive with KATO 1 s was not closed");
	/* Both bounds on every limit: never before it, at most TIMER_SLACK_MS after. */
	within_limit(t_silent, CONNECT_TIMEOUT_MS, "a silent client (connect timeout)");
	within_limit(t_ic, CONNECT_TIMEOUT_MS, "an ICReq-only client (connect timeout)");
	within_limit(tr[0].closed_after_ms, CONNECT_TIMEOUT_MS, "a slow sender of an ICReq (connect timeout)");
	within_limit(tr[1].closed_after_ms, KATO_MS, "a slow sender of a Keep Alive (KATO)");
	/* Each closure was said: silent + forgotten + ICReq trickler; ICReq-only; forgotten admin + KA trickler. */
	BPT_CHECK(count_lines("no ICReq within") - no_icreq0 >= 2 + n_forgotten / 2, "connect-timeout lines: %d",
		  count_lines("no ICReq within") - no_icreq0);
	BPT_CHECK(count_lines("no Connect within") - no_connect0 >= 1, "no line for the ICReq-only client");
	BPT_CHECK(count_lines("no Keep Alive") - no_ka0 >= 1 + n_forgotten / 2, "keep-alive expiry lines: %d",
		  count_lines("no Keep Alive") - no_ka0);
	{
		int after = bpt_fd_settle(0, base, 30000);

		BPT_CHECK(after == base, "%d descriptors after the idle hosts were closed, %d before", after, base);
	}
	BPT_CHECK(rate1 >= rate0 / 10, "the good host did %.0f verified I/Os per second beside them, %.0f before",
		  rate1, rate0);
	printf("ok   connect timeout %.1f s: a silent client closed after %.3f s, an ICReq-only one after %.3f s, a "
	       "slow sender (1 byte/s) of an ICReq after %.3f s; KATO 1 s: a slow sender of a Keep Alive closed "
	       "after %.3f s (each within [limit, limit + %d ms]); %d half-open (before ICReq, on a KATO 1 s admin "
	       "queue) closed and logged\n",
	       CONNECT_TIMEOUT_MS / 1000.0, t_silent / 1000.0, t_ic / 1000.0, tr[0].closed_after_ms / 1000.0,
	       tr[1].closed_after_ms / 1000.0, TIMER_SLACK_MS, n_forgotten);
	printf("ok   meanwhile the good host did %.0f verified I/O/s (%.0f%% of %.0f on its own)\n", rate1,
	       100 * rate1 / rate0, rate0);
}

int main(int argc, char **argv)
{
	struct bp_mode m;
	struct bp_nvme_tcp_ic ic = { 0 };
	int base;

	signal(SIGPIPE, SIG_IGN);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
			rounds = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: %s [--rounds N]\n", argv[0]);
			return 2;
		}
	}
	BPT_CHECK(mkdtemp(dir), "mkdtemp");
	bpt_rmdir_at_exit(dir);
	snprintf(log_path, sizeof(log_path), "%s/target.log", dir);
	log_file = fopen(log_path, "w+");
	BPT_CHECK(log_file, "log file");
	bp_nvme_tcp_ic_encode(icreq, BP_NVME_TCP_ICREQ, &ic);
	BPT_CHECK(bpt_mode_usable("epoll:block", &m), "epoll:block");
	BPT_CHECK(bp_loop_create(&loop, &m) == 0, "loop: %s", bp_last_error());
	/* Hosts vanish on both kinds of backend: readiness and completion differ most at a close. */
	for (int i = 0; i < 2; i++) {
		struct bp_mode tm;

		cur_mode = i ? "uring:block" : "epoll:block";
		if (!bpt_mode_usable(cur_mode, &tm))
			continue;
		target_up(&tm);
		good = ctrl_up(64);
		BPT_CHECK(bp_nvmeh_ctrl_io_queue(good, loop, 1, &gq) == 0, "I/O queue: %s", bp_last_error());
		good_io(20, "before");
		base = bpt_fd_count(0);
		hosts_vanish(base);
		if (i == 0)
			idle_and_slow_hosts(base); /* timers and limits: the same code on every backend */
		bp_nvmeh_queue_close(gq);
		bp_nvmeh_ctrl_disconnect(good);
		bp_nvmet_stop(t);
		next_qid_reset();
	}
	bp_loop_destroy(loop);
	fclose(log_file);
	if (getenv("BPT_VERBOSE")) {
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "cat %s >&2", log_path);
		if (system(cmd)) {
		}
	}
	unlink(log_path);
	rmdir(dir);
	printf("faults injected: %llu\n", (unsigned long long)faults);
	printf("PASS\n");
	return bpt_exit_status();
}
