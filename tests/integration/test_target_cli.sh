#!/bin/bash
# SPDX-License-Identifier: MIT
# `busypoll target` as a user runs it: one-line errors and exit 2 on bad input
# (options, namespaces, a port in use), the start-up description, counters on
# SIGUSR1 and at exit, a clean exit 0 on SIGTERM, a file namespace created with
# size=. Listens on loopback only, on a port the kernel picks.
set -u

. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
}

# bad EXPECTED_TEXT ARGS...: exit 2 and one line naming the problem
bad() {
	local want=$1 got
	shift
	timeout 10 "$BP" target "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" -eq 2 ] || fail "busypoll target $* exited $got, want 2"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "busypoll target $*: want one line, got: $(cat "$tmp/err")"
	grep -q -- "$want" "$tmp/err" || fail "busypoll target $*: '$want' not in: $(cat "$tmp/err")"
	grep -q '^busypoll target: ' "$tmp/err" || fail "busypoll target $*: message lacks the prefix"
}

bad "no namespace"
bad "ram:64Q" --ns ram:64Q
bad "bs=1000" --ns ram:64M,bs=1000
bad "not a multiple" --ns ram:1000
bad "no such file" --ns "file:$tmp/missing.img"
bad "queue-depth 4" --ns ram:1M --queue-depth 4
bad "threads 0" --ns ram:1M --threads 0
bad "poll-period-us x" --ns ram:1M --poll-period-us x
bad "so-priority 99" --ns ram:1M --so-priority 99
bad "priority 99" --ns ram:1M --priority 99
bad "unknown option" --ns ram:1M --bogus
bad "log-level loud" --ns ram:1M --log-level loud
bad "discovery" --ns ram:1M --nqn nqn.2014-08.org.nvmexpress.discovery
bad "--mode epoll:nope" --ns ram:1M --mode epoll:nope
bad "power of two" --ns ram:1M --max-transfer 3M
bad "--listen 1.2.3:x:y" --ns ram:1M --listen "1.2.3:x:y"

timeout 10 "$BP" target --help >"$tmp/out" 2>&1 || fail "--help exited non-zero"
grep -q -- '--poll-period-us' "$tmp/out" || fail "--help does not document --poll-period-us"

# A real run on a port the kernel picks, a ram and a created file namespace.
"$BP" target --listen 127.0.0.1:0 --nqn nqn.2024-01.io.busypoll:cli --ns ram:8M \
	--ns "file:$tmp/ns.img,size=4M" --threads 2 --poll-period-us 50 --log-level warn \
	>"$tmp/run.out" 2>"$tmp/run.err" &
pid=$!
bpt_wait_until 30 bpt_file_has "$tmp/run.err" 'listening on' ||
	die "the target never said it was listening (30 s): $(cat "$tmp/run.err")"
grep -q 'listening on 127.0.0.1:[1-9]' "$tmp/run.err" || fail "no start-up line: $(cat "$tmp/run.err")"
grep -q 'poll period 50 us' "$tmp/run.err" || fail "start-up line does not say the poll period"
grep -q 'nsid 2: file' "$tmp/run.err" || fail "start-up lines do not list the file namespace"
[ "$(stat -c %s "$tmp/ns.img" 2>/dev/null)" = 4194304 ] || fail "file namespace not created at 4M"
port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\),.*/\1/p' "$tmp/run.err")

# A second target on the same port: exit 2, one line. The same file: in use.
bad "in use" --listen "127.0.0.1:$port" --ns ram:1M
bad "in use by another process" --listen 127.0.0.1:0 --ns "file:$tmp/ns.img"

# Counters on SIGUSR1, without stopping.
kill -USR1 "$pid"
bpt_wait_until 30 bpt_file_has "$tmp/run.out" '^total' || fail "SIGUSR1 printed no counters within 30 s"
grep -q '^queue .*poll_passes idle_exits' "$tmp/run.out" || fail "SIGUSR1 printed no counter header"
kill -0 "$pid" 2>/dev/null || fail "the target died on SIGUSR1"

kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ "$rc" -eq 0 ] || fail "exit status $rc after SIGTERM, want 0"
[ "$(grep -c '^total' "$tmp/run.out")" -eq 2 ] || fail "want counters twice (SIGUSR1, exit): $(cat "$tmp/run.out")"

bpt_end
