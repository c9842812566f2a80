#!/bin/bash
# SPDX-License-Identifier: MIT
# Bad input that depends on where a command runs (issue 12): without privileges a
# priority of 7 or more, a port below 1024, a test bed, a namespace are refused
# with exit 2 and one line that says what is needed; an address no interface has
# and a port in use are exit 2 naming the option, for every server; and rr inside
# a network namespace reads the global busy_poll/busy_read sysctls (not "?").
# As root the unprivileged cases run as nobody (setpriv); without root, as we are.
set -u

. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
bpt_require timeout python3
root=false
[ "$(id -u)" = 0 ] && root=true
if $root && ! command -v setpriv >/dev/null; then
	echo "SKIP: setpriv is not installed (to run as nobody)" >&2
	exit 77
fi

chmod 755 "$tmp"
port=$(bpt_free_port) || die "no free port for the servers"
ns=bp-ctx$$

cleanup() {
	$root && [ -e "/run/netns/$ns" ] && ip netns del "$ns"
}

# check RC TEXT: the last command's exit status and one stderr line holding TEXT
check() {
	local want=$1 text=$2
	if [ "$rc" != "$want" ]; then
		fail "$what exited $rc, want $want: $(head -3 "$tmp/err")"
	elif [ "$(wc -l <"$tmp/err")" != 1 ]; then
		fail "$what: stderr is not one line: $(cat "$tmp/err")"
	elif ! grep -qF -- "$text" "$tmp/err"; then
		fail "$what: '$text' not in: $(cat "$tmp/err")"
	fi
}

# unpriv TEXT ARGS...: `busypoll ARGS` as an unprivileged user: exit 2, one line holding TEXT
unpriv() {
	local text=$1
	shift
	what="busypoll $* (unprivileged)"
	if $root; then
		(cd "$tmp" && timeout 20 setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
			"$BP" "$@") >"$tmp/out" 2>"$tmp/err" </dev/null
	else
		(cd "$tmp" && timeout 20 "$BP" "$@") >"$tmp/out" 2>"$tmp/err" </dev/null
	fi
	rc=$?
	check 2 "$text"
}

# bad TEXT ARGS...: `busypoll ARGS` exits 2, one line holding TEXT
bad() {
	local text=$1
	shift
	what="busypoll $*"
	(cd "$tmp" && timeout 20 "$BP" "$@") >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	check 2 "$text"
}

# ---- privileges ----
unpriv "--priority 7: 7 and above need CAP_NET_ADMIN" rr --client 127.0.0.1 --port 1 --priority 7
unpriv "--priority 7: 7 and above need CAP_NET_ADMIN" pingpong --client 127.0.0.1 --port 1 --priority 7
unpriv "--priority 7: 7 and above need CAP_NET_ADMIN" rr --server --port "$port" --priority 7
unpriv "--priority 7: 7 and above need CAP_NET_ADMIN" target --ns ram:1M --listen "127.0.0.1:$port" --priority 7
unpriv "port 80 is below 1024: binding it needs root" rr --server --port 80
unpriv "port 80 is below 1024: binding it needs root" pingpong --server --port 80
unpriv "--listen port 80 is below 1024: binding it needs root" target --ns ram:1M --listen 127.0.0.1:80
unpriv "needs root" testbed up --name "ctx$$"
unpriv "--netns" napi list --netns "$ns"
unpriv "needs CAP_NET_ADMIN" rr --client 127.0.0.1 --port 1 --mode epoll:napi,budget=128

# ---- addresses: not here, in use ----
bad "--bind 192.0.2.1:$port: no interface here has that address" rr --server --bind 192.0.2.1 --port "$port"
bad "--bind 192.0.2.1:$port: no interface here has that address" pingpong --server --bind 192.0.2.1 --port "$port"
bad "--listen 192.0.2.1:$port: no interface here has that address" target --ns ram:1M --listen "192.0.2.1:$port"

"$BP" rr --server --bind 127.0.0.1 --port "$port" -q &
pids+=($!)
bpt_wait_until 30 bpt_listening "$port" || die "the rr server never listened on $port (30 s)"
bad "port $port is in use" rr --server --bind 127.0.0.1 --port "$port"
bad "port $port is in use" pingpong --server --bind 127.0.0.1 --port "$port"
bad "--listen port $port is in use" target --ns ram:1M --listen "127.0.0.1:$port"

# ---- the sysctls rr reports are its namespace's ----
if $root && command -v ip >/dev/null && ip netns add "$ns" 2>/dev/null; then
	ip -n "$ns" link set lo up
	# global sysctls: they exist in the first namespace only (here), not in $ns
	want=$(cat /proc/sys/net/core/busy_poll)
	ip netns exec "$ns" "$BP" rr --server --port "$port" -q &
	pids+=($!)
	bpt_wait_until 30 bpt_listening_in "$ns" "$port" ||
		die "the rr server in $ns never listened on $port (30 s)"
	ip netns exec "$ns" timeout 30 "$BP" rr --client 127.0.0.1 --port "$port" -l 0.2 --warmup 0 -q \
		--format json >"$tmp/ns.json" 2>"$tmp/err" || fail "rr in a namespace failed: $(cat "$tmp/err")"
	python3 - "$tmp/ns.json" "$want" <<'EOF' || fail "rr in $ns reported sysctls $(head -c 400 "$tmp/ns.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["sysctls"]["busy_poll"] == int(sys.argv[2]), d["sysctls"]
assert isinstance(d["sysctls"]["busy_read"], int), d["sysctls"]
EOF
	ip netns exec "$ns" timeout 30 "$BP" rr --client 127.0.0.1 --port "$port" -l 0.2 --warmup 0 -q \
		>"$tmp/ns.txt" 2>"$tmp/err"
	grep -q "net.core.busy_poll $want," "$tmp/ns.txt" || fail "rr's table in $ns: $(grep kernel "$tmp/ns.txt")"
	# a process that cannot enter the first namespace cannot read them: null and why, never -1
	if command -v setpriv >/dev/null; then
		ip netns exec "$ns" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all timeout 60 \
			"$BP" compare --flows 1 -l 0.2 --warmup 0 --runs 1 --modes epoll:block -q --format json \
			>"$tmp/nscmp.json" 2>"$tmp/err" || fail "compare as nobody in $ns failed: $(cat "$tmp/err")"
		python3 - "$tmp/nscmp.json" <<'EOF' || fail "compare in $ns as nobody: $(head -c 600 "$tmp/nscmp.json")"
import json, sys
s = json.load(open(sys.argv[1]))["settings"]
assert s["sysctl_busy_poll"] is None and s["sysctl_busy_read"] is None, s
assert "CAP_SYS_ADMIN" in (s["sysctl_note"] or ""), s
EOF
		ip netns exec "$ns" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all timeout 60 \
			"$BP" compare --flows 1 -l 0.2 --warmup 0 --runs 1 --modes epoll:block -q >"$tmp/nscmp.txt" 2>"$tmp/err"
		grep -q "net.core.busy_read unknown (net.core.busy_poll is not in this network namespace" "$tmp/nscmp.txt" ||
			fail "compare's header in $ns does not say why the sysctls are unknown: $(grep busy_poll "$tmp/nscmp.txt")"
	fi
else
	echo "namespace sysctl case skipped: needs root and ip"
fi

bpt_end
