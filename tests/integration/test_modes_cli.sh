#!/bin/bash
# SPDX-License-Identifier: MIT
# `busypoll modes` as a user and a script see it: the listing, --format json, --check's
# exit statuses and one-line errors, --help, and a bad option. Needs no privilege and
# touches no network: it only reads what the program prints.
set -u

. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
bpt_require python3
[ "$(id -u)" != 0 ] || bpt_require setpriv

# run EXPECTED_STATUS ARGS...: stdout in $tmp/out, stderr in $tmp/err
run() {
	local want=$1 got
	shift
	"$BP" "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" -eq "$want" ] || fail "busypoll $* exited $got, want $want (stderr: $(head -c 300 "$tmp/err"))"
}

# The listing: a header and one line per family, each with a status.
run 0 modes
for fam in epoll:block epoll:napi epoll:spin epoll:hybrid epoll:suspend \
	uring:block uring:napi uring:spin uring:hybrid uring:sqpoll xsk:block xsk:napi xsk:spin; do
	grep -Eq "^$fam +[^ ]+ +(ok|no: )" "$tmp/out" || fail "listing has no status line for $fam"
done
[ "$(wc -l <"$tmp/out")" -eq 14 ] || fail "listing has $(wc -l <"$tmp/out") lines, want 14"
grep -q 'usecs=64,budget=8\[,prefer\]' "$tmp/out" || fail "epoll:napi keys/defaults missing"
grep -Eq '^epoll:napi .*budget>64' "$tmp/out" || fail "epoll:napi line does not say whether budget>64 works"
[ -s "$tmp/err" ] && fail "listing wrote to stderr: $(cat "$tmp/err")"

# JSON must be valid and carry every family.
run 0 modes --format json
python3 -m json.tool "$tmp/out" >/dev/null || fail "--format json is not valid JSON"
n=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["modes"]))' "$tmp/out")
[ "$n" = 13 ] || fail "json has $n modes, want 13"
run 0 modes --format=json
run 0 modes --format table

# --check: canonical text and ok, exit 0
run 0 modes --check epoll:block
[ "$(cat "$tmp/out")" = "epoll:block ok" ] || fail "--check epoll:block printed '$(cat "$tmp/out")'"
run 0 modes --check uring:napi,prefer
[ "$(cat "$tmp/out")" = "uring:napi,usecs=64,prefer,tracking=dynamic,setup=defer ok" ] ||
	fail "--check uring:napi,prefer printed '$(cat "$tmp/out")' (or io_uring is unusable here)"

# --check errors: exit 2 and exactly one line "busypoll modes: ..." on stderr
check_bad() {
	local mode=$1 needle=$2
	run 2 modes --check "$mode"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "--check '$mode': stderr is not one line: $(cat "$tmp/err")"
	grep -q "^busypoll modes: .*$needle" "$tmp/err" || fail "--check '$mode': '$(cat "$tmp/err")' lacks '$needle'"
	[ -s "$tmp/out" ] && fail "--check '$mode' printed to stdout"
}
check_bad foo "unknown backend 'foo'"
check_bad epoll:napi,foo=1 "unknown key 'foo'"
check_bad uring:napi,usecs=20000 "usecs=20000 is out of range (1..10000)"
check_bad "epoll: napi" "whitespace"
# the same refusal for a process without CAP_NET_ADMIN (root drops it; others lack it)
unpriv=("$BP")
[ "$(id -u)" = 0 ] && unpriv=(setpriv --reuid=65534 --regid=65534 --clear-groups "$BP")
"${unpriv[@]}" modes --check epoll:napi,budget=128 >"$tmp/out" 2>"$tmp/err"
st=$?
[ "$st" -eq 2 ] || fail "unprivileged --check epoll:napi,budget=128 exited $st, want 2"
grep -qx "busypoll modes: --check epoll:napi,budget=128 needs CAP_NET_ADMIN" "$tmp/err" ||
	fail "unprivileged budget=128 said '$(cat "$tmp/err")'"

# --features: one line per optional kernel feature, each with a status; the environment
# turns them off (the uring backend's fallback path) and a bad value says so
run 0 modes --features
for feat in uring:multishot uring:direct uring:regring uring:nosqarray; do
	grep -Eq "^$feat +(in use|no: |off )" "$tmp/out" || fail "--features has no status line for $feat"
done
BP_URING_FEATURES=none "$BP" modes --features >"$tmp/out" 2>"$tmp/err" || fail "--features with none failed"
grep -Eq '^uring:multishot +(off \(BP_URING_FEATURES\)|no: this kernel lacks it)' "$tmp/out" ||
	fail "BP_URING_FEATURES=none left multishot on: $(grep multishot "$tmp/out")"
run 0 modes --features --format json
if command -v python3 >/dev/null; then
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert any(f["name"]=="multishot" for f in d["features"])' \
		"$tmp/out" || fail "--features --format json is not valid or lacks multishot"
fi
BP_URING_FEATURES=bogus "$BP" modes --check uring:block >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "^busypoll modes: --check uring:block: BP_URING_FEATURES: unknown feature 'bogus'" "$tmp/err" ||
	fail "BP_URING_FEATURES=bogus: '$(cat "$tmp/err")'"
run 2 modes --features --check epoll:block

# help and bad usage
run 0 modes --help
grep -q "usage: busypoll modes" "$tmp/out" || fail "--help has no usage line"
run 2 modes --bogus
[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "^busypoll modes: unknown option '--bogus'" "$tmp/err" ||
	fail "--bogus said '$(cat "$tmp/err")'"
run 2 modes --format yaml
run 2 modes --check
run 2 modes extra

bpt_end "ok: busypoll modes"
