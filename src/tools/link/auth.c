/* SPDX-License-Identifier: MIT */
/*
 * The agent's key file and its mutual challenge-response handshake (see auth.h for
 * the messages and the derivations). Everything cryptographic is libsodium's:
 * randombytes_buf for the key and nonces, crypto_kdf for the two subkeys,
 * crypto_auth_hmacsha256 for the MACs and the session keys, crypto_verify_32 to
 * compare MACs in constant time, sodium_memzero to forget.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "tools/link/auth.h"
#include "tools/common/values.h"

#define KDF_CONTEXT "bpagent1" /* crypto_kdf_CONTEXTBYTES = 8 */
#define KDF_ID_AUTH 1
#define KDF_ID_SESSION 2
#define KEY_FILE_HEADER "# busypoll agent key: keep it secret (mode 0600)\n"

static const uint8_t magic[4] = { 'B', 'P', 'A', 'U' };

__attribute__((format(printf, 4, 5)))
static int fail(int rc, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static int sodium_ready(void)
{
	return sodium_init() < 0 ? -ENOSYS : 0;
}

/* ---- the key file ---- */

int auth_key_new(const char *path, char *err, size_t errlen)
{
	uint8_t key[AUTH_KEY_BYTES];
	char text[sizeof(KEY_FILE_HEADER) + 2 * AUTH_KEY_BYTES + 2];
	size_t len;
	ssize_t n;
	int fd, rc = 0;

	if (sodium_ready())
		return fail(-ENOSYS, err, errlen, "libsodium cannot start (no entropy source?)");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST)
		return fail(-EEXIST, err, errlen, "key file %s exists: not overwritten (remove it, or "
			    "name a new file)", path);
	if (fd < 0)
		return fail(-errno, err, errlen, "cannot create key file %s: %s", path, strerror(errno));
	randombytes_buf(key, sizeof(key));
	len = (size_t)snprintf(text, sizeof(text), "%s", KEY_FILE_HEADER);
	sodium_bin2hex(text + len, sizeof(text) - len, key, sizeof(key));
	len += 2 * AUTH_KEY_BYTES;
	text[len++] = '\n';
	/* the umask cannot widen 0600, but a default ACL could: say what we mean */
	if (fchmod(fd, 0600) < 0)
		rc = fail(-errno, err, errlen, "chmod 600 %s: %s", path, strerror(errno));
	if (!rc && ((n = write(fd, text, len)) < 0 || (size_t)n != len))
		rc = fail(n < 0 ? -errno : -EIO, err, errlen, "write(%s): %s", path,
			  n < 0 ? strerror(errno) : "short write");
	if (!rc && fsync(fd) < 0)
		rc = fail(-errno, err, errlen, "fsync(%s): %s", path, strerror(errno));
	close(fd);
	sodium_memzero(key, sizeof(key));
	sodium_memzero(text, sizeof(text));
	if (rc)
		unlink(path);
	return rc;
}

int auth_key_load(const char *path, struct auth_key *key, char *err, size_t errlen)
{
	char text[512], *line, *save = NULL;
	struct stat st;
	ssize_t n;
	int fd, rc = -EINVAL;

	if (sodium_ready())
		return fail(-ENOSYS, err, errlen, "libsodium cannot start (no entropy source?)");
	/* O_NONBLOCK: a FIFO opens at once (and is refused below) instead of waiting for a writer */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ELOOP)
		return fail(-ELOOP, err, errlen, "key file %s is a symbolic link: name the file itself", path);
	if (fd < 0)
		return fail(-errno, err, errlen, "cannot open key file %s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		rc = fail(-errno, err, errlen, "fstat(%s): %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = fail(-EACCES, err, errlen, "key file %s is not a regular file (%s): name the file "
			  "`busypoll agent --new-key` wrote", path, S_ISFIFO(st.st_mode) ? "a FIFO" :
			  S_ISDIR(st.st_mode) ? "a directory" : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ?
			  "a device" : S_ISSOCK(st.st_mode) ? "a socket" : "not a file");
		goto out;
	}
	if (st.st_mode & 077) {
		rc = fail(-EACCES, err, errlen, "key file %s is open to group or others (mode %04o): "
			  "run chmod 600 %s", path, (unsigned)(st.st_mode & 07777), path);
		goto out;
	}
	if (st.st_uid != geteuid()) {
		rc = fail(-EACCES, err, errlen, "key file %s belongs to uid %u, not to this user (%u)",
			  path, (unsigned)st.st_uid, (unsigned)geteuid());
		goto out;
	}
	n = read(fd, text, sizeof(text) - 1);
	if (n < 0) {
		rc = fail(-errno, err, errlen, "read(%s): %s", path, strerror(errno));
		goto out;
	}
	text[n] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t bin_len;
		const char *end;

		if (line[0] == '#' || !line[0])
			continue;
		if (strlen(line) == 2 * AUTH_KEY_BYTES &&
		    sodium_hex2bin(key->k, sizeof(key->k), line, strlen(line), NULL, &bin_len, &end) == 0 &&
		    bin_len == AUTH_KEY_BYTES && !*end)
			rc = 0;
		break;
	}
	if (rc)
		fail(rc, err, errlen, "key file %s holds no key (one line of %d hex digits; "
		     "`busypoll agent --new-key FILE` writes one)", path, 2 * AUTH_KEY_BYTES);
out:
	sodium_memzero(text, sizeof(text));
	close(fd);
	return rc;
}

void auth_key_wipe(struct auth_key *key)
{
	sodium_memzero(key, sizeof(*key));
}

/* ---- the handshake ---- */

/* "BPAU" version role 0 0: the first 8 bytes of every handshake message. */
static void put_head(uint8_t *p, enum auth_role role)
{
	memcpy(p, magic, 4);
	p[4] = AUTH_VERSION;
	p[5] = (uint8_t)role;
	p[6] = p[7] = 0;
}

__attribute__((format(printf, 3, 4)))
static void refuse(struct auth *a, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->why, sizeof(a->why), fmt, ap);
	va_end(ap);
	a->err = err;
	a->state = AUTH_FAILED;
	a->out_len = 0;
}

void auth_busy_msg(uint8_t out[AUTH_BUSY_LEN])
{
	put_head(out, AUTH_AGENT);
	out[6] = 'B';
}

/* A client's first 8 bytes from the agent are BUSY. */
static bool is_busy(const struct auth *a)
{
	uint8_t busy[AUTH_BUSY_LEN];

	auth_busy_msg(busy);
	return a->role == AUTH_CLIENT && a->step == 0 && a->in_len >= AUTH_BUSY_LEN &&
	       !memcmp(a->in, busy, AUTH_BUSY_LEN);
}

/* The peer's head: right magic, version and role, reserved bytes 0. */
static bool check_head(struct auth *a, const uint8_t *p, const char *what)
{
	enum auth_role peer = a->role == AUTH_AGENT ? AUTH_CLIENT : AUTH_AGENT;

	if (memcmp(p, magic, 4)) {
		refuse(a, -EPROTO, "garbage: not a busypoll agent%s (no \"BPAU\" %s)",
		       a->role == AUTH_AGENT ? " client" : "", what);
		return false;
	}
	if (p[4] != AUTH_VERSION) {
		refuse(a, -EPROTONOSUPPORT, "speaks handshake version %u, this side %u (update both "
		       "ends to one busypoll release)", p[4], AUTH_VERSION);
		return false;
	}
	if (p[5] != peer || p[6] || p[7]) {
		refuse(a, -EPROTO, "garbage: a %s with role %u, wanted %u", what, p[5], peer);
		return false;
	}
	return true;
}

/* HMAC(Kauth, label || T [|| extra]) into mac. */
static void mac_of(const struct auth *a, const char *label, const uint8_t *extra, size_t extra_len,
		   uint8_t mac[AUTH_MAC_BYTES])
{
	crypto_auth_hmacsha256_state st;

	crypto_auth_hmacsha256_init(&st, a->kauth, sizeof(a->kauth));
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)label, strlen(label));
	crypto_auth_hmacsha256_update(&st, a->transcript, sizeof(a->transcript));
	if (extra_len)
		crypto_auth_hmacsha256_update(&st, extra, extra_len);
	crypto_auth_hmacsha256_final(&st, mac);
	sodium_memzero(&st, sizeof(st));
}

/* The two directions' stream keys from Ksess and T: ours to send, the peer's to read. */
static void session_keys(const struct auth *a, uint8_t tx[CHAN_KEY_BYTES], uint8_t rx[CHAN_KEY_BYTES])
{
	uint8_t c2a[32], a2c[32];
	crypto_auth_hmacsha256_state st;

	crypto_auth_hmacsha256_init(&st, a->ksess, sizeof(a->ksess));
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)"c2a", 3);
	crypto_auth_hmacsha256_update(&st, a->transcript, sizeof(a->transcript));
	crypto_auth_hmacsha256_final(&st, c2a);
	crypto_auth_hmacsha256_init(&st, a->ksess, sizeof(a->ksess));
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)"a2c", 3);
	crypto_auth_hmacsha256_update(&st, a->transcript, sizeof(a->transcript));
	crypto_auth_hmacsha256_final(&st, a2c);
	memcpy(tx, a->role == AUTH_CLIENT ? c2a : a2c, CHAN_KEY_BYTES);
	memcpy(rx, a->role == AUTH_CLIENT ? a2c : c2a, CHAN_KEY_BYTES);
	sodium_memzero(c2a, sizeof(c2a));
	sodium_memzero(a2c, sizeof(a2c));
	sodium_memzero(&st, sizeof(st));
}

int auth_start(struct auth *a, enum auth_role role, const struct auth_key *key)
{
	memset(a, 0, sizeof(*a));
	if (sodium_ready())
		return -ENOSYS;
	a->role = role;
	a->state = AUTH_RUNNING;
	crypto_kdf_derive_from_key(a->kauth, sizeof(a->kauth), KDF_ID_AUTH, KDF_CONTEXT, key->k);
	crypto_kdf_derive_from_key(a->ksess, sizeof(a->ksess), KDF_ID_SESSION, KDF_CONTEXT, key->k);
	randombytes_buf(a->nonce, sizeof(a->nonce));
	if (role == AUTH_CLIENT) {
		put_head(a->out, AUTH_CLIENT);
		memcpy(a->out + 8, a->nonce, AUTH_NONCE_BYTES);
		a->out_len = AUTH_HELLO_LEN;
		memcpy(a->transcript, a->out, AUTH_HELLO_LEN);
	}
	return 0;
}

/* Agent: a HELLO came; answer with CHALLENGE. */
static void agent_hello(struct auth *a)
{
	if (!check_head(a, a->in, "hello"))
		return;
	memcpy(a->peer_nonce, a->in + 8, AUTH_NONCE_BYTES);
	memcpy(a->transcript, a->in, AUTH_HELLO_LEN);
	put_head(a->out, AUTH_AGENT);
	memcpy(a->out + 8, a->nonce, AUTH_NONCE_BYTES);
	memcpy(a->transcript + AUTH_HELLO_LEN, a->out, 40);
	mac_of(a, "agent", NULL, 0, a->mac_a);
	memcpy(a->out + 40, a->mac_a, AUTH_MAC_BYTES);
	a->out_len = AUTH_CHALLENGE_LEN;
}

/* Client: the CHALLENGE came; check the agent's MAC, answer with RESPONSE. */
static void client_challenge(struct auth *a)
{
	uint8_t want[AUTH_MAC_BYTES], tx[CHAN_KEY_BYTES], rx[CHAN_KEY_BYTES];

	if (!check_head(a, a->in, "challenge"))
		return;
	memcpy(a->transcript + AUTH_HELLO_LEN, a->in, 40);
	mac_of(a, "agent", NULL, 0, want);
	if (crypto_verify_32(want, a->in + 40) != 0) {
		refuse(a, -EACCES, "the agent's proof is wrong: it does not hold this key");
		return;
	}
	memcpy(a->mac_a, a->in + 40, AUTH_MAC_BYTES);
	put_head(a->out, AUTH_CLIENT);
	mac_of(a, "client", a->mac_a, AUTH_MAC_BYTES, a->out + 8);
	session_keys(a, tx, rx);
	chan_init_tx(&a->chan, tx, a->out + 40);
	memcpy(a->rx_key, rx, CHAN_KEY_BYTES); /* waits for ACCEPT's stream header */
	a->out_len = AUTH_RESPONSE_LEN;
	sodium_memzero(tx, sizeof(tx));
	sodium_memzero(rx, sizeof(rx));
}

/* Agent: the RESPONSE came; check the client's MAC, ACCEPT. */
static void agent_response(struct auth *a)
{
	uint8_t want[AUTH_MAC_BYTES], tx[CHAN_KEY_BYTES], rx[CHAN_KEY_BYTES];

	if (!check_head(a, a->in, "response"))
		return;
	mac_of(a, "client", a->mac_a, AUTH_MAC_BYTES, want);
	if (crypto_verify_32(want, a->in + 8) != 0) {
		refuse(a, -EACCES, "wrong key: the client's proof does not match");
		return;
	}
	session_keys(a, tx, rx);
	if (chan_init_rx(&a->chan, rx, a->in + 40)) {
		refuse(a, -EPROTO, "garbage: the client's stream header is refused");
	} else {
		put_head(a->out, AUTH_AGENT);
		chan_init_tx(&a->chan, tx, a->out + 8);
		a->out_len = AUTH_ACCEPT_LEN;
		a->state = AUTH_DONE;
	}
	sodium_memzero(tx, sizeof(tx));
	sodium_memzero(rx, sizeof(rx));
}

/* Client: ACCEPT came; the agent's stream starts. */
static void client_accept(struct auth *a)
{
	if (!check_head(a, a->in, "accept"))
		return;
	if (chan_init_rx(&a->chan, a->rx_key, a->in + 8)) {
		refuse(a, -EPROTO, "garbage: the agent's stream header is refused");
		return;
	}
	sodium_memzero(a->rx_key, sizeof(a->rx_key));
	a->state = AUTH_DONE;
}

/* The length of the message expected next, 0 when none is. */
static size_t expected(const struct auth *a)
{
	static const size_t agent_in[] = { AUTH_HELLO_LEN, AUTH_RESPONSE_LEN };
	static const size_t client_in[] = { AUTH_CHALLENGE_LEN, AUTH_ACCEPT_LEN };

	if (a->state != AUTH_RUNNING || a->step > 1)
		return 0;
	return a->role == AUTH_AGENT ? agent_in[a->step] : client_in[a->step];
}

size_t auth_input(struct auth *a, const uint8_t *data, size_t len)
{
	size_t used = 0;

	while (used < len) {
		size_t want = expected(a), take;

		if (!want)
			break;
		take = want - a->in_len < len - used ? want - a->in_len : len - used;
		memcpy(a->in + a->in_len, data + used, take);
		a->in_len += take;
		used += take;
		/* garbage is refused at its first bytes, not after a whole message's worth */
		if (a->in_len >= 4 && a->in_len - take < 4 && memcmp(a->in, magic, 4)) {
			check_head(a, a->in, a->step ? "message" : "hello");
			break;
		}
		if (is_busy(a)) {
			refuse(a, -EBUSY, "busy (too many unauthenticated connections); try again");
			break;
		}
		if (a->in_len < want)
			break;
		if (a->role == AUTH_AGENT)
			a->step == 0 ? agent_hello(a) : agent_response(a);
		else
			a->step == 0 ? client_challenge(a) : client_accept(a);
		a->step++;
		a->in_len = 0;
	}
	return used;
}

const uint8_t *auth_output(const struct auth *a, size_t *len)
{
	*len = a->out_len;
	return a->out;
}

void auth_output_sent(struct auth *a)
{
	a->out_len = 0;
}

/*
 * The agent's memory of client nonces, for the log's words only: a HELLO whose nonce
 * came before is named a replay (a new client draws 32 random bytes). It protects
 * nothing: a replayed HELLO gets a fresh Na in its CHALLENGE, so the replayed
 * RESPONSE's MAC (over T, which holds Na) fails and the connection is refused as a
 * wrong proof with or without it. So it only has to be cheap and bounded: a
 * direct-mapped table of SEEN_SLOTS nonces, each in the slot its keyed hash
 * (crypto_shorthash under a random key, which a peer cannot aim at) names, kept
 * until another nonce lands there. One hash and one compare per HELLO.
 */
#define SEEN_SLOTS 4096
static struct {
	uint8_t n[AUTH_NONCE_BYTES];
	bool used;
} seen[SEEN_SLOTS];
static uint8_t seen_key[crypto_shorthash_KEYBYTES];
static bool seen_keyed;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

bool auth_nonce_seen(const uint8_t n[AUTH_NONCE_BYTES])
{
	uint8_t h[crypto_shorthash_BYTES];
	uint64_t v;
	bool hit;

	pthread_mutex_lock(&seen_lock);
	if (!seen_keyed) {
		randombytes_buf(seen_key, sizeof(seen_key));
		seen_keyed = true;
	}
	crypto_shorthash(h, n, AUTH_NONCE_BYTES, seen_key);
	memcpy(&v, h, sizeof(v));
	v %= SEEN_SLOTS;
	hit = seen[v].used && sodium_memcmp(seen[v].n, n, AUTH_NONCE_BYTES) == 0;
	memcpy(seen[v].n, n, AUTH_NONCE_BYTES);
	seen[v].used = true;
	pthread_mutex_unlock(&seen_lock);
	return hit;
}

void auth_wipe(struct auth *a)
{
	sodium_memzero(a, sizeof(*a));
}

/* ---- the client's side, blocking ---- */

int auth_client_run(int fd, const struct auth_key *key, const char *peer, int timeout_ms,
		    struct chan *ch, char *err, size_t errlen)
{
	struct auth a;
	int rc = auth_start(&a, AUTH_CLIENT, key);

	if (rc)
		return fail(rc, err, errlen, "libsodium cannot start");
	while (a.state == AUTH_RUNNING) {
		uint8_t buf[AUTH_MSG_MAX];
		size_t len;
		const uint8_t *out = auth_output(&a, &len);
		ssize_t n;

		while (len) {
			if ((rc = tool_wait_fd(fd, POLLOUT, timeout_ms)))
				goto io_error;
			n = send(fd, out, len, MSG_NOSIGNAL);
			if (n < 0 && errno != EAGAIN && errno != EINTR) {
				rc = -errno;
				goto io_error;
			}
			if (n > 0) {
				out += n;
				len -= (size_t)n;
			}
		}
		auth_output_sent(&a);
		if ((rc = tool_wait_fd(fd, POLLIN, timeout_ms)))
			goto io_error;
		/* never more than the next message: what follows is the channel's */
		n = recv(fd, buf, sizeof(buf), MSG_PEEK);
		if (n == 0) {
			rc = a.step == 1 ? fail(-EACCES, err, errlen, "agent %s refused our key", peer)
					 : fail(-ECONNRESET, err, errlen, "agent %s closed the connection "
						"during the handshake", peer);
			auth_wipe(&a);
			return rc;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			rc = -errno;
			goto io_error;
		}
		if (n > 0) {
			size_t used = auth_input(&a, buf, (size_t)n);

			if (recv(fd, buf, used, 0) != (ssize_t)used) {
				rc = -EIO;
				goto io_error;
			}
		}
	}
	if (a.state == AUTH_FAILED && a.err == -EBUSY) {
		auth_wipe(&a);
		return fail(-EBUSY, err, errlen, "the agent at %s is busy (too many unauthenticated "
			    "connections); try again", peer);
	}
	if (a.state == AUTH_FAILED) {
		rc = fail(a.err, err, errlen, "agent %s: %s", peer, a.why);
		auth_wipe(&a);
		return rc;
	}
	*ch = a.chan;
	auth_wipe(&a);
	return 0;
io_error:
	auth_wipe(&a);
	return fail(rc, err, errlen, "agent %s: %s during the handshake", peer,
		    rc == -ETIMEDOUT ? "no answer" : strerror(-rc));
}
