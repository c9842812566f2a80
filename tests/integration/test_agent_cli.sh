#!/bin/bash
# SPDX-License-Identifier: MIT
# `busypoll agent` from the command line: every bad input refused with one line
# naming the option, exit 2, before anything starts (no listener, no file made);
# --new-key writes a 0600 key and never overwrites; --restore with nothing to do
# exits 0; --path of loopback says, in both formats, why it has no coalescing, no
# NAPI and no IRQs, and the json parses; --path of a device that is not there
# exits 1. No root needed. Every command is bounded by `timeout`.
set -u

. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
bpt_require python3 timeout

# run EXPECTED_STATUS ARGS...: stdout in $tmp/out, stderr in $tmp/err
run() {
	local want=$1 got
	shift
	timeout 30 "$BP" agent "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" -eq "$want" ] || fail "busypoll agent $* exited $got, want $want (stderr: $(head -c 300 "$tmp/err"))"
	return 0
}

# refused TEXT ARGS...: exit 2, exactly one line on stderr containing TEXT, nothing on stdout
refused() {
	local text=$1
	shift
	run 2 "$@"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "busypoll agent $*: not one line: $(cat "$tmp/err")"
	grep -qF -- "$text" "$tmp/err" || fail "busypoll agent $*: '$(cat "$tmp/err")' does not say '$text'"
	[ ! -s "$tmp/out" ] || fail "busypoll agent $*: printed $(head -c 200 "$tmp/out")"
}

key=$tmp/agent.key
run 0 --new-key "$key"
[ "$(stat -c %a "$key")" = 600 ] || fail "--new-key: mode $(stat -c %a "$key")"
grep -qE '^[0-9a-f]{64}$' "$key" || fail "--new-key: no key line in $key"
cp "$key" "$tmp/copy" && chmod 600 "$tmp/copy"
refused "exists: not overwritten" --new-key "$key"
cmp -s "$key" "$tmp/copy" || fail "--new-key changed an existing key"

refused "give one of --stdio, --listen" 
refused "--stdio and --listen: give one of" --stdio --listen 127.0.0.1:0
refused "--stdio given twice" --stdio --stdio
refused "--listen needs --key-file FILE" --listen 127.0.0.1:0
refused "--listen 127.0.0.1: give ADDR:PORT" --listen 127.0.0.1 --key-file "$key"
refused "--key-file goes with --listen" --stdio --key-file "$key"
refused "--key-file given twice" --listen 127.0.0.1:0 --key-file "$key" --key-file "$key"
refused "--cpus" --stdio --cpus 0,99999
refused "--cpus goes with --stdio or --listen" --restore --cpus 0
refused "--auth-timeout" --listen 127.0.0.1:0 --key-file "$key" --auth-timeout 0
refused "--per-source" --listen 127.0.0.1:0 --key-file "$key" --per-source 0
refused "--max-startups 10:30: give START:RATE:FULL" --listen 127.0.0.1:0 --key-file "$key" --max-startups 10:30
refused "--max-startups 10:101:100: give START:RATE:FULL" --listen 127.0.0.1:0 --key-file "$key" --max-startups 10:101:100
refused "--max-startups 20:30:10: give START:RATE:FULL" --listen 127.0.0.1:0 --key-file "$key" --max-startups 20:30:10
refused "--auth-timeout, --max-startups and --per-source go with --listen" --stdio --per-source 5
refused "--auth-timeout, --max-startups and --per-source go with --listen" --stdio --max-startups 1:30:2
refused "--format goes with --path" --restore --format json
refused "--format" --path lo --format xml
refused "--path 'a/b' is not a device name" --path a/b
refused "--state-dir goes with" --path lo --state-dir "$tmp"
refused "unexpected argument 'extra'" --restore extra
refused "--listen needs a value" --listen
refused "busypoll agent --help" --frobnicate

chmod 644 "$key"
refused "is open to group or others (mode 0644): run chmod 600" --listen 127.0.0.1:0 --key-file "$key"
chmod 600 "$key"
refused "cannot open key file $tmp/none" --listen 127.0.0.1:0 --key-file "$tmp/none"

refused "--format csv2: must be table, json or csv" --path lo --format csv2
refused "--new-key needs a value" --new-key --stdio

run 0 --help
grep -q -- "--listen ADDR:PORT" "$tmp/out" || fail "--help does not list --listen"
run 0 --version
grep -qE '^busypoll agent [0-9]' "$tmp/out" || fail "--version: $(cat "$tmp/out")"

# nothing to restore: done
run 0 --restore --state-dir "$tmp/state"
[ ! -s "$tmp/out" ] || fail "--restore with nothing: printed $(cat "$tmp/out")"

# a state directory others could put a journal in (played back as this user) is refused at start
mkdir -m 700 "$tmp/real" && ln -s "$tmp/real" "$tmp/link"
mkdir -m 770 "$tmp/shared"
chmod 770 "$tmp/shared"
refused "state directory $tmp/link is a symbolic link" --restore --state-dir "$tmp/link"
refused "state directory $tmp/shared is writable by its group (mode 0770)" --stdio --state-dir "$tmp/shared"
chmod 703 "$tmp/shared"
refused "is writable by others" --restore --state-dir "$tmp/shared"
run 0 --restore --state-dir "$tmp/real"

# the limits a session is held to
refused "--max-servers 0" --stdio --max-servers 0
refused "--max-target-ram 1k: give a size of at least 1M" --stdio --max-target-ram 1k
refused "--target-listen 0.0.0.0:7: '0.0.0.0:7' is not an IPv4 or IPv6 address" --stdio --target-listen 0.0.0.0:7
refused "go with --stdio or --listen" --restore --max-target-ram 1G
[ ! -s "$tmp/out" ] || fail "--restore with nothing: printed $(cat "$tmp/out")"

run 0 --path lo
for text in "coalesce  not available: coalesce-get lo: its driver has no interrupt coalescing" \
	"napi      none: no NAPI instances on lo" "irqs      none: no IRQs: lo is a virtual device" \
	"features  GRO o"; do
	grep -qF "$text" "$tmp/out" || fail "--path lo does not say '$text': $(cat "$tmp/out")"
done
run 0 --path lo --format json
python3 - "$tmp/out" <<'EOF' || fail "--path lo --format json: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["device"] == "lo" and d["ifindex"] == 1, d
assert d["coalesce"] is None and "no interrupt coalescing" in d["coalesce_error"], d
assert d["napi"] == [] and d["irqs"] == [] and "virtual device" in d["irqs_note"], d
assert d["rx_queues"] >= 1, d
assert d["gro"] in (True, False) and d["tso"] in (True, False), d  # read here: known, never null
EOF
run 0 --path lo --format csv
[ "$(wc -l <"$tmp/out")" -eq 2 ] || fail "--path lo --format csv: not a header and one row: $(cat "$tmp/out")"
head -1 "$tmp/out" | grep -q '^device,ifindex,driver,channels,coalesce,coalesce_note,.*napi\.id' ||
	fail "--path lo --format csv: header $(head -1 "$tmp/out")"
sed -n 2p "$tmp/out" | grep -q '^lo,1,' || fail "--path lo --format csv: row $(sed -n 2p "$tmp/out")"

# -q: a session's start and end are not said; a refusal still is
timeout 10 "$BP" agent --stdio -q --state-dir "$tmp/state" </dev/null >/dev/null 2>"$tmp/err"
[ ! -s "$tmp/err" ] || fail "agent --stdio -q logged: $(cat "$tmp/err")"
printf 'not a frame' | timeout 10 "$BP" agent --stdio -q --state-dir "$tmp/state" >/dev/null 2>"$tmp/err"
grep -q "refused: an oversized message" "$tmp/err" || fail "agent --stdio -q did not say a refusal: $(cat "$tmp/err")"
timeout 10 "$BP" agent --stdio --state-dir "$tmp/state" </dev/null >/dev/null 2>"$tmp/err"
grep -q "session started" "$tmp/err" || fail "agent --stdio without -q: $(cat "$tmp/err")"

run 1 --path nosuch0
grep -qxF "busypoll agent: path nosuch0: no such device in this network namespace" "$tmp/err" ||
	fail "--path nosuch0: $(cat "$tmp/err")"

bpt_end ok
