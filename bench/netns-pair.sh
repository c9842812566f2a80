#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# netns-pair.sh - run a server/client command pair over a veth test bed like
# `busypoll testbed`'s (src/tools/bed/testbed.h): two fresh network namespaces joined by a veth
# pair with GRO on, so each end has a NAPI instance and kernel busy polling can engage
# (loopback has no NAPI, so busy polling measured there measures nothing).
#
# usage: netns-pair.sh 'SERVER COMMAND' 'CLIENT COMMAND'
#
#   Each command is a bash command line. The server's runs in namespace b pinned to
#   CPU $BP_SERVER_CPU (default 1), the client's in namespace a pinned to CPU
#   $BP_CLIENT_CPU (default 0): always two different CPUs, or the two ends fight for
#   one. The client starts once something listens on TCP in namespace b (at most 10 s);
#   after the client ends, the server gets 10 s to exit by itself, then is killed.
#   Both commands see, exported:
#     BP_SERVER_ADDR, BP_CLIENT_ADDR   the two ends of a private /30
#     BP_NS_SERVER, BP_NS_CLIENT       namespace names (bpbench-PID-b, bpbench-PID-a)
#     BP_DEV_SERVER, BP_DEV_CLIENT     veth names inside them (vb, va)
#   Quote them so the command's own shell expands them, e.g.
#     netns-pair.sh 'bench_floor --server' 'bench_floor --client "$BP_SERVER_ADDR"'
#
#   Nothing outside the two namespaces is touched: the addresses exist only inside
#   them, and both namespaces (with every process left in them, all started here) are
#   removed on every exit path, Ctrl-C included.
#
# Exit status: the client's if it failed, else the server's; 2 bad usage; 77 this
# machine cannot host the bed (not root, a tool or a CPU missing), as the tests do.
set -euo pipefail

prog=netns-pair
die() { echo "$prog: $*" >&2; exit 1; }
usage_error() { echo "$prog: $* (usage: netns-pair.sh 'SERVER COMMAND' 'CLIENT COMMAND')" >&2; exit 2; }
skip() { echo "$prog: cannot run here: $*" >&2; exit 77; }

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
	sed -n '4,/^set /{/^#/s/^# \{0,1\}//p}' "$0"
	exit 0
fi
[[ $# -eq 2 ]] || usage_error "expected 2 arguments, got $#"
[[ -n $1 && -n $2 ]] || usage_error "empty command"
server_cmd=$1
client_cmd=$2

server_cpu=${BP_SERVER_CPU:-1}
client_cpu=${BP_CLIENT_CPU:-0}
[[ $server_cpu =~ ^[0-9]+$ && $client_cpu =~ ^[0-9]+$ ]] ||
	usage_error "BP_SERVER_CPU and BP_CLIENT_CPU must be CPU numbers"
[[ $server_cpu != "$client_cpu" ]] ||
	usage_error "BP_SERVER_CPU and BP_CLIENT_CPU must differ: both ends may spin"

[[ $(id -u) -eq 0 ]] || skip "creating network namespaces needs root"
for tool in ip ethtool taskset ss setsid; do
	command -v "$tool" >/dev/null || skip "$tool not found (apt-get install iproute2 ethtool util-linux)"
done
for cpu in "$server_cpu" "$client_cpu"; do
	taskset -c "$cpu" true 2>/dev/null || skip "CPU $cpu is not available ($(nproc) online)"
done

# Unique per run: a parallel run or a leftover from a crash never collides with us.
ns_a="bpbench-$$-a"
ns_b="bpbench-$$-b"
dev_a=va
dev_b=vb
# A /30 that only exists inside the two namespaces; varied by PID for readable
# debugging of parallel beds, though the namespaces would isolate equal ones too.
net="10.$((($$ >> 14) & 255)).$((($$ >> 6) & 255))"
host0=$((($$ & 63) << 2))
addr_a="$net.$((host0 + 1))"
addr_b="$net.$((host0 + 2))"

server_pid=
client_pid=
# shellcheck disable=SC2317  # called by the EXIT trap, not unreachable
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ -n $client_pid ]] && kill -0 "$client_pid" 2>/dev/null; then
		kill -TERM "$client_pid" 2>/dev/null || true
		wait "$client_pid" 2>/dev/null || true
	fi
	if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
		# the server runs in its own session: its group holds whatever it started
		kill -TERM -- "-$server_pid" 2>/dev/null || kill -TERM "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	for ns in "$ns_a" "$ns_b"; do
		[[ -e /run/netns/$ns ]] || continue
		# Anything still inside was started by this script (the namespace is
		# ours); a live process would keep the namespace and its veth alive.
		local pids
		pids=$(ip netns pids "$ns" 2>/dev/null || true)
		if [[ -n $pids ]]; then
			# shellcheck disable=SC2086
			kill -KILL $pids 2>/dev/null || true
		fi
		ip netns del "$ns" 2>/dev/null || echo "$prog: could not delete namespace $ns" >&2
	done
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- the bed, as in the reference ----
ip netns add "$ns_a"
ip netns add "$ns_b"
ip -n "$ns_a" link add "$dev_a" type veth peer name "$dev_b" netns "$ns_b"
ip -n "$ns_a" addr add "$addr_a/30" dev "$dev_a"
ip -n "$ns_b" addr add "$addr_b/30" dev "$dev_b"
ip -n "$ns_a" link set lo up
ip -n "$ns_b" link set lo up
# GRO on gives veth a NAPI per receive queue (napi id 0 without it); TSO off keeps
# segments the size they are sent, as a NIC would deliver them.
ip netns exec "$ns_a" ethtool -K "$dev_a" gro on tso off >/dev/null
ip netns exec "$ns_b" ethtool -K "$dev_b" gro on tso off >/dev/null
ip -n "$ns_a" link set "$dev_a" up
ip -n "$ns_b" link set "$dev_b" up

export BP_SERVER_ADDR=$addr_b BP_CLIENT_ADDR=$addr_a
export BP_NS_SERVER=$ns_b BP_NS_CLIENT=$ns_a
export BP_DEV_SERVER=$dev_b BP_DEV_CLIENT=$dev_a
echo "$prog: server $ns_b $addr_b cpu $server_cpu, client $ns_a $addr_a cpu $client_cpu" >&2

# ---- the pair ----
# setsid: the server gets its own process group, so cleanup can stop all of it, and
# a Ctrl-C meant for the client reaches the server only through cleanup.
setsid ip netns exec "$ns_b" taskset -c "$server_cpu" bash -c "$server_cmd" &
server_pid=$!

# Start the client once the server listens: the namespace is new, so any TCP listener
# in it is the server's. A server that never listens (not TCP) gets 10 s, then the
# client starts anyway.
for ((i = 0; i < 200; i++)); do
	if ! kill -0 "$server_pid" 2>/dev/null; then
		rc=0
		wait "$server_pid" || rc=$?
		server_pid=
		die "the server exited (status $rc) before the client started"
	fi
	[[ -n $(ip netns exec "$ns_b" ss -Hltn 2>/dev/null) ]] && break
	sleep 0.05
done
((i < 200)) || echo "$prog: nothing listens on TCP in $ns_b after 10 s; starting the client anyway" >&2

# In the background and waited for: bash runs a trap only between commands, so a
# foreground client would hold off a TERM (and the clean-up) until it ended by itself;
# "wait" returns as soon as a trapped signal arrives.
ip netns exec "$ns_a" taskset -c "$client_cpu" bash -c "$client_cmd" &
client_pid=$!
client_rc=0
wait "$client_pid" || client_rc=$?
client_pid=

# A server that serves one client exits now; one that does not is stopped, and only
# its own failure (not our TERM) counts. After a failed client there is nothing to
# wait for: the server may never have seen a connection.
server_rc=0
for ((i = 0; i < 100 && client_rc == 0; i++)); do
	kill -0 "$server_pid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$server_pid" 2>/dev/null; then
	((client_rc != 0)) ||
		echo "$prog: the server is still running 10 s after the client ended; stopping it" >&2
	kill -TERM -- "-$server_pid" 2>/dev/null || true
	wait "$server_pid" 2>/dev/null || true
else
	wait "$server_pid" || server_rc=$?
fi
server_pid=

if ((client_rc != 0)); then
	echo "$prog: the client failed (status $client_rc)" >&2
	exit "$client_rc"
fi
if ((server_rc != 0)); then
	echo "$prog: the server failed (status $server_rc)" >&2
	exit "$server_rc"
fi
exit 0
