#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# valgrind memcheck on a short run of each busypoll tool that does not use io_uring
# (valgrind 3.19 blocks in io_uring_enter under its global lock, so the uring modes
# stay with `make test-asan`): modes, rr server and client over loopback, compare on
# loopback, pingpong server and clients, the NVMe/TCP target with a file and a ram
# namespace driven by perf (the initiator, also under valgrind) and, as root, testbed up/status/down and napi list on the bed. Any memcheck
# error, or a definite leak, fails the test; possible and reachable leaks are only
# listed. Skips (77) without valgrind and for a sanitizer build (ASan and valgrind
# cannot share a process).
#
# Suppressions: none. Notes for reading the logs: valgrind 3.19 warns "unhandled
# amd64-linux syscall: 441" (epoll_pwait2); the epoll backend then falls back to
# epoll_pwait, so that warning is expected and is not an error.
set -u

. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
bp=$BP
if ! command -v valgrind >/dev/null; then
	echo "SKIP: valgrind is not installed (apt-get install valgrind)"
	exit 77
fi
if ldd "$bp" 2>/dev/null | grep -q 'libasan\|libubsan'; then
	echo "SKIP: $bp is a sanitizer build; valgrind cannot run it"
	exit 77
fi

bed=
cleanup() {
	[ -n "$bed" ] && "$bp" testbed down --name "$bed" >/dev/null 2>&1
}
passed=0 failed=0

# 99: valgrind found something; any other non-zero status is the tool's own.
VG=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
    --show-leak-kinds=definite --track-origins=yes --num-callers=30)

# check NAME STATUS LOG: STATUS of the valgrind run whose output went to LOG
check() {
	local name=$1 st=$2 log=$3
	if [ "$st" -eq 0 ]; then
		echo "ok   valgrind clean: $name"
		passed=$((passed + 1))
	else
		if [ "$st" -eq 99 ]; then
			echo "FAIL: valgrind found errors in: $name" >&2
		else
			echo "FAIL: $name exited $st under valgrind" >&2
		fi
		grep -v 'syscall: 441\|write your own handler\|README_MISSING\|Nevertheless we consider\|bug_reports' \
			"$log" | head -80 >&2
		failed=$((failed + 1))
	fi
}

# 1. modes: every family probed (netlink, EPIOCSPARAMS, an io_uring ring set up and
#    torn down, never waited on)
"${VG[@]}" --log-file="$tmp/modes.vg" "$bp" modes >"$tmp/modes.out" 2>&1
check "busypoll modes" $? "$tmp/modes.vg"

# A port the kernel just handed out, free for TCP and UDP alike.
free_port() {
	python3 -c 'import socket
for _ in range(50):
    t, u = socket.socket(), socket.socket(type=socket.SOCK_DGRAM)
    t.bind(("127.0.0.1", 0)); p = t.getsockname()[1]
    try:
        u.bind(("127.0.0.1", p)); print(p); break
    except OSError: pass'
}

# server_up FILE PATTERN: PATTERN in FILE, $port listens, or $server is gone (the wait is over)
server_up() {
	grep -q "$2" "$1" 2>/dev/null || bpt_listening "$port" || bpt_gone "$server"
}

# start_server NAME PATTERN CMD...: CMD under valgrind in the background ($server), up
# once PATTERN shows in its stderr or once its port listens ($port), within 60 s; 1 if it never is.
start_server() {
	local name=$1 pattern=$2
	shift 2
	"${VG[@]}" --log-file="$tmp/$name.vg" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	server=$!
	pids+=("$server")
	bpt_wait_until 60 server_up "$tmp/$name.err" "$pattern" && ! bpt_gone "$server" && return 0
	echo "FAIL: $name under valgrind did not start: $(cat "$tmp/$name.err")" >&2
	cat "$tmp/$name.vg" >&2
	failed=$((failed + 1))
	return 1
}

# stop_server NAME WHAT: SIGINT (the real shutdown path), then valgrind's verdict
stop_server() {
	kill -INT "$server"
	wait "$server"
	check "$2" $? "$tmp/$1.vg"
}

# 2. rr: a server on a free loopback port, a client for a second, the server stopped
#    with SIGINT (its clean shutdown path) while valgrind watches both
port=$(free_port)
if start_server server 'listening on port' "$bp" rr --server --bind 127.0.0.1 --port "$port" \
	--mode epoll:block; then
	"${VG[@]}" --log-file="$tmp/client.vg" "$bp" rr --client 127.0.0.1 --port "$port" \
		--mode epoll:block -F 2 -l 1 --warmup 0.2 -q >"$tmp/client.out" 2>&1
	st=$?
	check "busypoll rr --client (epoll:block, 2 flows, 1 s)" $st "$tmp/client.vg"
	if [ $st -eq 0 ] && ! grep -q 'transactions/s' "$tmp/client.out"; then
		echo "FAIL: the rr client printed no result: $(head -c 500 "$tmp/client.out")" >&2
		failed=$((failed + 1))
	fi
	stop_server server "busypoll rr --server (epoll:block, stopped by SIGINT)"
fi

# 3. compare on loopback: the matrix driver, its table, both flow counts
"${VG[@]}" --log-file="$tmp/compare.vg" "$bp" compare --loopback --modes epoll:block -l 0.5 \
	--warmup 0.2 >"$tmp/compare.out" 2>&1
check "busypoll compare --loopback --modes epoll:block -l 0.5" $? "$tmp/compare.vg"

# 4. pingpong: a server, a UDP and a TCP client (breakdown on: timestamps, cmsgs)
port=$(free_port)
if start_server pp-server 'listening' "$bp" pingpong --server --bind 127.0.0.1 --port "$port" \
	--mode epoll:block; then
	"${VG[@]}" --log-file="$tmp/pp-udp.vg" "$bp" pingpong --client 127.0.0.1 --port "$port" \
		--mode epoll:block -n 300 --runs 2 --warmup-count 50 --breakdown >"$tmp/pp-udp.out" 2>&1
	check "busypoll pingpong --client (UDP, --breakdown)" $? "$tmp/pp-udp.vg"
	"${VG[@]}" --log-file="$tmp/pp-tcp.vg" "$bp" pingpong --client 127.0.0.1 --port "$port" \
		--mode epoll:block --tcp -n 300 --runs 2 --warmup-count 50 >"$tmp/pp-tcp.out" 2>&1
	check "busypoll pingpong --client (TCP)" $? "$tmp/pp-tcp.vg"
	stop_server pp-server "busypoll pingpong --server (stopped by SIGINT)"
fi

# 5. target and perf: a file namespace (nsid 1) and a ram one, written with --verify and
#    read back by busypoll perf (itself under valgrind for the file namespace: the
#    initiator, its jobs and the verify stamps), then the target stopped with SIGINT
port=$(free_port)
nqn=nqn.2024-01.io.busypoll:valgrind
if start_server target 'listening' "$bp" target --listen "127.0.0.1:$port" --nqn "$nqn" \
	--ns "file:$tmp/ns.img,size=8M" --ns ram:8M --mode epoll:block; then
	"${VG[@]}" --log-file="$tmp/perf.vg" "$bp" perf --target "127.0.0.1:$port" --nqn "$nqn" --nsid 1 \
		--rw randrw --verify --size 1M --iodepth 4 --iodepth-batch 2 --numjobs 2 --runtime 1 \
		--mode epoll:block -q >"$tmp/perf.out" 2>&1
	st=$?
	check "busypoll perf (randrw --verify, 2 jobs, file namespace)" $st "$tmp/perf.vg"
	if [ $st -eq 0 ] && ! grep -q 'no mismatch' "$tmp/perf.out"; then
		echo "FAIL: perf printed no verified result: $(head -c 500 "$tmp/perf.out")" >&2
		failed=$((failed + 1))
	fi
	"$bp" perf --target "127.0.0.1:$port" --nqn "$nqn" --nsid 2 --rw randrw --verify --size 1M \
		--iodepth 8 --runtime 1 -q >>"$tmp/perf.out" 2>&1 ||
		{ echo "FAIL: busypoll perf against the target: $(cat "$tmp/perf.out")" >&2; failed=$((failed + 1)); }
	stop_server target "busypoll target (file and ram namespaces, writes and reads, SIGINT)"
fi

# 6. as root: the test bed (netns, veth, netlink) and napi list on one end
if [ "$(id -u)" -eq 0 ]; then
	name=vg$$
	"${VG[@]}" --log-file="$tmp/tb-up.vg" "$bp" testbed up --name "$name" >"$tmp/tb.out" 2>&1
	st=$?
	[ $st -eq 0 ] && bed=$name
	check "busypoll testbed up" $st "$tmp/tb-up.vg"
	if [ -n "$bed" ]; then
		"${VG[@]}" --log-file="$tmp/tb-status.vg" "$bp" testbed status --name "$bed" --format json \
			>"$tmp/tb.out" 2>&1
		check "busypoll testbed status" $? "$tmp/tb-status.vg"
		ip netns exec "bp-$bed-a" "${VG[@]}" --log-file="$tmp/napi.vg" "$bp" napi list \
			>"$tmp/napi.out" 2>&1
		check "busypoll napi list (in the bed)" $? "$tmp/napi.vg"
		"${VG[@]}" --log-file="$tmp/tb-down.vg" "$bp" testbed down --name "$bed" >"$tmp/tb.out" 2>&1
		st=$?
		[ $st -eq 0 ] && bed=
		check "busypoll testbed down" $st "$tmp/tb-down.vg"
	fi
else
	echo "SKIP testbed and napi under valgrind: not root"
	skipped=1
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || exit 1
# a part that could not run here makes the whole test a skip, never a pass
[ -z "${skipped:-}" ] || exit 77
