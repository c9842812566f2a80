#!/bin/bash
# SPDX-License-Identifier: MIT
# `busypoll napi` on a fresh test bed (root): get a NAPI inside its namespace, set
# defer-hard-irqs and gro-flush-timeout and read them back, restore the old values;
# refusals name the bad key or value (exit 2); the device-wide sysfs knob round trip
# inside the namespace, checked against sysfs itself; every json output parses.
# Without privilege: one line naming the capability, exit 2, nothing changed.
# The bed is removed on every exit path; every command is bounded by `timeout`.
set -u

. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
bpt_require_root "busypoll napi on a test bed needs root (it creates network namespaces)"
bpt_require ip ethtool python3 timeout setpriv

name=n$$
ns=bp-$name-b

cleanup() {
	for side in a b; do
		if [ -e "/run/netns/bp-$name-$side" ]; then
			ip netns del "bp-$name-$side" 2>/dev/null
		fi
	done
}

# run EXPECTED_STATUS ARGS...: stdout in $tmp/out, stderr in $tmp/err, at most 30 s
run() {
	local want=$1 got
	shift
	timeout 30 "$BP" "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" -eq "$want" ] || fail "busypoll $* exited $got, want $want (stderr: $(head -c 300 "$tmp/err"))"
	return 0
}

json_get() { # FILE EXPR over the document d
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

valid_json() { # FILE WHAT
	python3 -m json.tool "$1" >/dev/null 2>&1 || fail "$2: not valid JSON: $(head -c 300 "$1")"
}

one_line() { # FILE WHAT
	[ "$(wc -l <"$1")" -eq 1 ] || fail "$2: stderr is not one line: $(cat "$1")"
}

# settings ID: S="defer gro suspend threaded" of NAPI ID in $ns, read with `napi get`
# (not in a $(...) subshell, so that its failures count)
settings() {
	run 0 napi get "$1" --netns "$ns" --format json
	valid_json "$tmp/out" "napi get --format json"
	S=$(json_get "$tmp/out" "'%s %s %s %s' % (d['defer_hard_irqs'], d['gro_flush_timeout_ns'], d['irq_suspend_timeout_ns'], d['threaded'])")
}

timeout 60 "$BP" testbed up --name "$name" >/dev/null 2>"$tmp/err" || {
	echo "FAIL: could not build the test bed: $(cat "$tmp/err")" >&2
	exit 1
}

# ---- list: the bed's end has exactly its one NAPI, on its device ----
run 0 napi list --netns "$ns" --format json
valid_json "$tmp/out" "napi list --format json"
[ "$(json_get "$tmp/out" "len(d['napi'])")" = 1 ] || fail "list in $ns: not exactly one NAPI: $(cat "$tmp/out")"
[ "$(json_get "$tmp/out" "d['napi'][0]['device']")" = bpvb ] || fail "list in $ns: the NAPI is not on bpvb"
[ "$(json_get "$tmp/out" "d['netns']")" = "$ns" ] || fail "list json does not name the namespace"
id=$(json_get "$tmp/out" "d['napi'][0]['id']")
[ "$id" -gt 0 ] 2>/dev/null || fail "NAPI id '$id' is not a positive number"
run 0 napi list --netns "$ns" --device bpvb
grep -Eq "^$id +[0-9]+ +bpvb " "$tmp/out" || fail "list --device bpvb table lacks id $id: $(cat "$tmp/out")"

# ---- get, set, read back, restore ----
run 0 napi get "$id" --netns "$ns"
grep -Eq "^$id +[0-9]+ +bpvb " "$tmp/out" || fail "get table lacks id $id: $(cat "$tmp/out")"
settings "$id"
old=$S
read -r old_defer old_gro old_susp old_thr <<<"$old"
# values the fresh bed does not already have, so a no-op set cannot pass
new_defer=3 new_gro=40000
[ "$old_defer" = 3 ] && new_defer=4
[ "$old_gro" = 40000 ] && new_gro=50000

run 0 napi set "$id" defer-hard-irqs=$new_defer gro-flush-timeout=$new_gro --netns "$ns" --format json
valid_json "$tmp/out" "napi set --format json"
[ "$(json_get "$tmp/out" "(d['defer_hard_irqs'], d['gro_flush_timeout_ns'])")" = "($new_defer, $new_gro)" ] ||
	fail "set did not print the new values: $(cat "$tmp/out")"
settings "$id"
now=$S
[ "$now" = "$new_defer $new_gro $old_susp $old_thr" ] ||
	fail "after set: '$now', want '$new_defer $new_gro $old_susp $old_thr' (the others untouched)"

# irq-suspend-timeout and threaded too, where this kernel has them
timeout 30 "$BP" napi set "$id" irq-suspend-timeout=80000 --netns "$ns" >"$tmp/out" 2>"$tmp/err"
st=$?
if [ "$st" -eq 0 ]; then
	settings "$id"
	[ "$(echo "$S" | cut -d' ' -f3)" = 80000 ] || fail "irq-suspend-timeout=80000 did not read back"
elif [ "$st" -eq 2 ] && grep -q "irq-suspend-timeout: this kernel lacks it" "$tmp/err"; then
	echo "note: this kernel lacks irq-suspend-timeout" >&2
else
	fail "set irq-suspend-timeout exited $st: $(cat "$tmp/err")"
fi
timeout 30 "$BP" napi set "$id" threaded=1 --netns "$ns" --format json >"$tmp/out" 2>"$tmp/err"
st=$?
if [ "$st" -eq 0 ]; then
	[ "$(json_get "$tmp/out" "(d['threaded'], bool(d['pid']))")" = "(1, True)" ] ||
		fail "threaded=1: no threaded NAPI with a kthread pid: $(cat "$tmp/out")"
elif [ "$st" -eq 2 ] && grep -q "threaded: this kernel lacks it" "$tmp/err"; then
	echo "note: this kernel lacks per-NAPI threaded" >&2
else
	fail "set threaded=1 exited $st: $(cat "$tmp/err")"
fi

run 0 napi set "$id" defer-hard-irqs="$old_defer" gro-flush-timeout="$old_gro" \
	irq-suspend-timeout="$old_susp" threaded="$old_thr" --netns "$ns"
settings "$id"
now=$S
[ "$now" = "$old" ] || fail "restore: '$now', want the old '$old'"

# ---- refusals: exit 2, one line naming what was wrong, nothing sent ----
run 2 napi set "$id" bogus=1 --netns "$ns"
one_line "$tmp/err" "set bogus=1"
grep -q "^busypoll napi: unknown key 'bogus'" "$tmp/err" || fail "set bogus=1 said: $(cat "$tmp/err")"
run 2 napi set "$id" defer-hard-irqs=5 bogus=1 --netns "$ns"
settings "$id"
[ "$S" = "$old" ] || fail "a refused set (a bad key after a good one) changed something"
run 2 napi set "$id" defer-hard-irqs=abc --netns "$ns"
grep -q "defer-hard-irqs=abc: not a whole number" "$tmp/err" || fail "defer-hard-irqs=abc said: $(cat "$tmp/err")"
run 2 napi set "$id" threaded=7 --netns "$ns"
grep -q "threaded=7" "$tmp/err" || fail "threaded=7 said: $(cat "$tmp/err")"
run 2 napi set "$id" --netns "$ns"
run 2 napi get nope --netns "$ns"
# an id of another namespace is not found here; the message points at --netns
run 2 napi get "$id"
grep -q -- "--netns" "$tmp/err" || fail "get of a namespace's id without --netns said: $(cat "$tmp/err")"
run 2 napi list --netns "bp-$name-nonexistent"
grep -q "no such network namespace" "$tmp/err" || fail "a missing --netns said: $(cat "$tmp/err")"

# ---- the device-wide sysfs knobs, inside the namespace ----
run 0 napi get --device bpvb --netns "$ns" --format json
valid_json "$tmp/out" "napi get --device --format json"
old_knob=$(json_get "$tmp/out" "d['knobs']['gro_flush_timeout']")
[ "$old_knob" = "$(ip netns exec "$ns" cat /sys/class/net/bpvb/gro_flush_timeout)" ] ||
	fail "get --device: gro_flush_timeout $old_knob is not what the namespace's sysfs says"
new_knob=123456
[ "$old_knob" = "$new_knob" ] && new_knob=654321
run 0 napi set --device bpvb --netns "$ns" gro_flush_timeout=$new_knob --format json
valid_json "$tmp/out" "napi set --device --format json"
[ "$(json_get "$tmp/out" "d['knobs']['gro_flush_timeout']")" = "$new_knob" ] || fail "set --device did not print $new_knob"
[ "$(ip netns exec "$ns" cat /sys/class/net/bpvb/gro_flush_timeout)" = "$new_knob" ] ||
	fail "set --device: the namespace's sysfs does not say $new_knob"
run 0 napi get --device bpvb --netns "$ns"
grep -Eq "^bpvb +[0-9]+ +$new_knob$" "$tmp/out" || fail "get --device table: $(cat "$tmp/out")"
run 0 napi set --device bpvb --netns "$ns" gro_flush_timeout="$old_knob"
[ "$(ip netns exec "$ns" cat /sys/class/net/bpvb/gro_flush_timeout)" = "$old_knob" ] ||
	fail "set --device: restoring $old_knob did not reach sysfs"
run 2 napi set --device bpvb --netns "$ns" gro-flush-timeout=1
grep -q "unknown device knob 'gro-flush-timeout'" "$tmp/err" || fail "a per-NAPI key as a knob said: $(cat "$tmp/err")"
run 2 napi get --device nodev0 --netns "$ns"
grep -q -- "--device nodev0: no such device in network namespace $ns" "$tmp/err" || fail "a missing device said: $(cat "$tmp/err")"

# ---- without privilege: one line naming the capability, exit 2, nothing changed ----
unpriv() {
	timeout 30 setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$BP" "$@" \
		>"$tmp/out" 2>"$tmp/err"
}
# in our own namespace: the kernel checks the capability before it looks up the id
unpriv napi set "$id" defer-hard-irqs=7
st=$?
[ "$st" -eq 2 ] || fail "unprivileged napi set exited $st, want 2"
one_line "$tmp/err" "unprivileged napi set"
grep -q "^busypoll napi: .*needs CAP_NET_ADMIN.*sudo" "$tmp/err" || fail "unprivileged napi set said: $(cat "$tmp/err")"
unpriv napi set "$id" defer-hard-irqs=7 --netns "$ns"
st=$?
[ "$st" -eq 2 ] || fail "unprivileged napi set --netns exited $st, want 2"
one_line "$tmp/err" "unprivileged napi set --netns"
grep -q "^busypoll napi: --netns needs root" "$tmp/err" || fail "unprivileged --netns said: $(cat "$tmp/err")"
unpriv napi set --device lo gro_flush_timeout=1
st=$?
[ "$st" -eq 2 ] || fail "unprivileged napi set --device exited $st, want 2"
one_line "$tmp/err" "unprivileged napi set --device"
grep -q "needs root (CAP_NET_ADMIN)" "$tmp/err" || fail "unprivileged set --device said: $(cat "$tmp/err")"
settings "$id"
[ "$S" = "$old" ] || fail "an unprivileged set changed the NAPI"
# reading needs no privilege
unpriv napi list --format json || fail "unprivileged napi list failed: $(cat "$tmp/err")"
valid_json "$tmp/out" "unprivileged napi list"

bpt_end "ok: busypoll napi"
