# SPDX-License-Identifier: MIT
# Shell helpers for the tests: states reached, never slept for. Source it:
#   . "$BP_TESTLIB/bpt_wait.sh"
# (ctest sets BP_TESTLIB to this folder.)

# bpt_wait_until SECONDS CMD [ARGS...] - run CMD every 50 ms until it succeeds.
# Returns 0 as soon as it does, 1 when SECONDS passed first. The bound only says how
# long a failure takes to report: a pass never depends on the machine being fast.
bpt_wait_until() {
	local limit=$1 end
	shift
	end=$(($(date +%s%N) + limit * 1000000000))
	until "$@"; do
		[ "$(date +%s%N)" -lt "$end" ] || return 1
		sleep 0.05
	done
}

# bpt_now_ms - CLOCK_REALTIME in ms (for the bounds of a timeout).
bpt_now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# bpt_rx_bytes PORT - bytes this host's established TCP connections to PORT have
# received (the kernel's tcp_info bytes_received, summed over them).
bpt_rx_bytes() {
	ss -Htni state established "dport = :$1" 2>/dev/null |
		grep -o 'bytes_received:[0-9]*' | awk -F: '{ s += $2 } END { print s + 0 }'
}

# bpt_rx_over PORT BYTES - true once connections to PORT have received more than BYTES.
bpt_rx_over() {
	[ "$(bpt_rx_bytes "$1")" -gt "$2" ]
}

# bpt_file_has FILE REGEX - FILE (a log) has a line matching REGEX (grep -E).
bpt_file_has() {
	grep -Eq -- "$2" "$1" 2>/dev/null
}

# bpt_vcsw_over PID N - some thread of PID has blocked (voluntary context switches,
# /proc/PID/task/*/status) more than N times: a loop that sleeps once per round trip
# in a blocking mode has done about that many round trips.
bpt_vcsw_over() {
	local max
	max=$(cat /proc/"$1"/task/*/status 2>/dev/null |
		awk '/^voluntary_ctxt_switches:/ { if ($2 > m) m = $2 } END { print m + 0 }')
	[ "$max" -gt "$2" ]
}

# bpt_established PORT N - at least N established TCP connections to PORT on this host.
bpt_established() {
	[ "$(ss -Htn state established "dport = :$1" 2>/dev/null | wc -l)" -ge "$2" ]
}

# bpt_listening PORT - something listens on TCP PORT.
bpt_listening() {
	[ -n "$(ss -Htln "sport = :$1" 2>/dev/null)" ]
}

# bpt_free_port - a port no TCP or UDP socket here uses, below the kernel's ephemeral
# range (ip_local_port_range), so no outgoing connection takes it while the test holds
# it; a port derived from the pid alone can collide with a connection's local port.
bpt_free_port() {
	local low p
	low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
	[ "$low" -gt 11000 ] || low=32768
	for _ in $(seq 1 200); do
		p=$((10000 + (RANDOM * 32768 + RANDOM) % (low - 10000)))
		[ -z "$(ss -Htuan "sport = :$p" 2>/dev/null)" ] && { echo "$p"; return 0; }
	done
	echo "bpt_free_port: no free port below $low after 200 tries" >&2
	return 1
}

# bpt_listening_in NS PORT - something listens on TCP PORT in network namespace NS.
bpt_listening_in() {
	[ -n "$(ip netns exec "$1" ss -Htln "sport = :$2" 2>/dev/null)" ]
}

# bpt_require TOOL... - exit 77 (ctest: skipped) naming the first TOOL not installed:
# a test that needs it cannot run here, and must not pass without it.
bpt_require() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null || {
			echo "SKIP: $t is not installed (scripts/install-deps.sh installs what the tests need)"
			exit 77
		}
	done
}

# bpt_skip_part WHY - say that a part of this test could not run here; bpt_verdict
# then makes the whole test a skip rather than a pass.
bpt_skip_part() {
	echo "SKIP $*"
	BPT_SKIPPED=1
}

# bpt_verdict FAILS - the test's exit: 1 when FAILS > 0, 77 when a part was skipped, 0.
bpt_verdict() {
	[ "$1" -eq 0 ] || exit 1
	[ -z "${BPT_SKIPPED:-}" ] || exit 77
	exit 0
}

# bpt_freeze_and_wait PEER CHILD [SECONDS] - SIGSTOP the peer CHILD talks to and wait
# (at most SECONDS, 60) for CHILD to give up on it: sets rc (CHILD's exit status; 124
# when it never gave up, and then it is killed) and waited (ms from the stop to its
# end, or to the limit), for a timeout's two bounds (bpt_within): the lower one
# exact, the upper one generous (it only proves the timeout fires at all).
bpt_freeze_and_wait() {
	local t
	kill -STOP "$1"
	t=$(bpt_now_ms)
	if bpt_wait_until "${3:-60}" bpt_gone "$2"; then
		waited=$(($(bpt_now_ms) - t))
		wait "$2"
		rc=$?
	else
		waited=$(($(bpt_now_ms) - t))
		kill -KILL "$2" 2>/dev/null
		wait "$2" 2>/dev/null
		rc=124
	fi
}

# bpt_within MS LO HI - LO <= MS <= HI.
bpt_within() {
	[ "$1" -ge "$2" ] && [ "$1" -le "$3" ]
}

# bpt_udp_bound PORT - something has UDP PORT bound.
bpt_udp_bound() {
	[ -n "$(ss -Hulan "sport = :$1" 2>/dev/null)" ]
}

# bpt_gone PID - PID no longer runs.
bpt_gone() {
	! kill -0 "$1" 2>/dev/null
}

# bpt_exists PATH - PATH exists (a namespace's /run/netns entry, a file).
bpt_exists() {
	[ -e "$1" ]
}
