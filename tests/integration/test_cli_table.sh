#!/bin/bash
# SPDX-License-Identifier: MIT
# Every subcommand's bad input, from one table (issue 12): each single-value option
# given twice, each list option with an empty item (and a duplicate), each number
# out of range, each host/port malformed. Every case must exit 2 with exactly one
# line on stderr naming the option, nothing on stdout, and leave nothing behind:
# no namespace, no process, no file (each case runs in an empty directory that is
# its TMPDIR too, with a marker in its environment that any process it left would
# carry). The option list of every --help must be covered by the repeat table, so a
# new option without a row fails here. As root the test bed and compare cases run
# for real (and must build nothing); without root they still check the parsing.
set -u

. "${BP_TESTLIB:-$(dirname "$0")/../lib}/bpt_lib.sh"
bpt_require timeout ip

bed=clit$$             # a test bed name no other run uses
marker=BP_CLI_TABLE_$$ # in every case's environment
cases=0

cleanup() {
	# a failing case may have built what it must not: remove it with plain ip
	for side in a b; do
		[ -e "/run/netns/bp-$bed-$side" ] && ip netns del "bp-$bed-$side" 2>/dev/null
	done
}

# leftovers N: what case N left behind, one word per kind, or nothing
leftovers() {
	local n=$1 left="" p pid
	[ -n "$(ls -A "$tmp/cwd")" ] && left+=" files($(ls -A "$tmp/cwd" | tr '\n' ' '))"
	# one grep over every process's environment (a grep per process is minutes on a busy machine)
	for p in $(grep -lsz "^$marker=$n\$" /proc/[0-9]*/environ 2>/dev/null); do
		p=${p#/proc/}
		p=${p%/environ}
		left+=" process($p)"
		kill -KILL "$p" 2>/dev/null
	done
	for p in $(ip netns list 2>/dev/null | awk '{print $1}'); do
		case $p in
		bp-$bed-*) left+=" netns($p)" ;;
		bp-cmp*-[ab])
			# a compare bed that was not there before the case, whose compare is gone
			# (another user's compare running meanwhile is not ours; the next compare
			# removes a stale bed, so none is removed here)
			pid=${p#bp-cmp}
			pid=${pid%-[ab]}
			if ! grep -qx "$p" "$tmp/netns.before" && [ ! -d "/proc/$pid" ]; then
				left+=" netns($p)"
			fi
			;;
		esac
	done
	[ -e "/run/busypoll/testbed-$bed.pid" ] && left+=" /run/busypoll/testbed-$bed.pid"
	echo "$left"
}

# refused TEXT ARGS...: `busypoll ARGS` exits 2, one stderr line holding TEXT, no stdout, no leftovers
refused() {
	local text=$1 rc pid left lines
	shift
	cases=$((cases + 1))
	rm -rf "$tmp/cwd"
	mkdir "$tmp/cwd"
	ip netns list 2>/dev/null | awk '{print $1}' >"$tmp/netns.before"
	(cd "$tmp/cwd" && exec env "$marker=$cases" TMPDIR="$tmp/cwd" timeout -k 5 20 "$BP" "$@") \
		>"$tmp/out" 2>"$tmp/err" </dev/null &
	pid=$!
	wait "$pid"
	rc=$?
	lines=$(wc -l <"$tmp/err")
	if [ "$rc" != 2 ]; then
		fail "busypoll $* exited $rc, want 2: $(head -3 "$tmp/err")"
	elif [ "$lines" != 1 ]; then
		fail "busypoll $*: $lines lines on stderr, want one: $(head -3 "$tmp/err")"
	elif ! grep -qF -- "$text" "$tmp/err"; then
		fail "busypoll $*: '$text' not in: $(cat "$tmp/err")"
	elif [ -s "$tmp/out" ]; then
		fail "busypoll $*: wrote to stdout: $(head -3 "$tmp/out")"
	fi
	left=$(leftovers "$cases")
	[ -n "$left" ] && fail "busypoll $* left:$left"
	# a test bed built by mistake: down it (and count it above)
	if [ -e "/run/netns/bp-$bed-a" ] || [ -e "/run/netns/bp-$bed-b" ]; then
		"$BP" testbed down --name "$bed" -q >/dev/null 2>&1
	fi
}

# ---------------------------------------------------------------------------
# Each option given twice. One row per option of every --help:
#   SUBCOMMAND|ARGS BEFORE|OPTION|VALUE
# VALUE is a valid one ("" for a flag); "R" as VALUE marks a repeatable option
# (refusing it would be the bug). The message must say "OPTION given twice".
# ---------------------------------------------------------------------------
rr_c="rr --client 127.0.0.1 --port 1"
pp_c="pingpong --client 127.0.0.1 --port 1"
perf_b="perf --target 127.0.0.1:1 --nqn nqn.2024-01.io.busypoll:clitable"
tgt_b="target --ns ram:1M --listen 127.0.0.1:0"
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:aaaaaaaa-0000-4000-8000-0000000000aa
repeat_table="
rr|$rr_c|--quiet|
rr|$rr_c|--format|json
rr|rr --port 1|--server|
rr|rr --port 1|--client|127.0.0.1
rr|rr --server --port 1|--bind|127.0.0.1
rr|rr --client 127.0.0.1|--port|1
rr|$rr_c|--tcp|
rr|$rr_c|--udp|
rr|$rr_c|--priority|1
rr|$rr_c|--mode|epoll:block
rr|$rr_c|--cpus|0
rr|$rr_c|--threads|1
rr|$rr_c|--flows|1
rr|$rr_c|--request-size|1
rr|$rr_c|--response-size|1
rr|$rr_c|--duration|1
rr|$rr_c|--transactions|10
rr|$rr_c|--warmup|1
rr|$rr_c|--interval|1
rr|$rr_c|--rate|1k
rr|$rr_c --rate 1k|--arrivals|fixed
rr|$rr_c --rate 1k|--max-outstanding|10
pingpong|$pp_c|--quiet|
pingpong|$pp_c|--format|json
pingpong|pingpong --port 1|--server|
pingpong|pingpong --port 1|--client|127.0.0.1
pingpong|pingpong --server --port 1|--bind|127.0.0.1
pingpong|pingpong --client 127.0.0.1|--port|1
pingpong|$pp_c|--tcp|
pingpong|$pp_c|--udp|
pingpong|$pp_c|--priority|1
pingpong|$pp_c|--mode|epoll:block
pingpong|$pp_c|--cpus|0
pingpong|pingpong --server --port 1|--server-delay-us|0
pingpong|$pp_c|--size|64
pingpong|$pp_c|-n|10
pingpong|$pp_c|--runs|1
pingpong|$pp_c|--warmup-count|0
pingpong|$pp_c|--matrix|
pingpong|$pp_c|--breakdown|
pingpong|$pp_c|--timeout|1
pingpong|$pp_c|--remote|h
pingpong|$pp_c --remote h|--key-file|k
pingpong|$pp_c --remote h|--ssh|ssh
pingpong|$pp_c --remote h|--agent-cmd|x
pingpong|$pp_c --remote h|--server-cpus|0
pingpong|$pp_c --remote h|--server-mode|epoll:block
perf|$perf_b|--quiet|
perf|$perf_b|--format|json
perf|perf --nqn nqn.2024-01.io.busypoll:clitable|--target|127.0.0.1:1
perf|perf --target 127.0.0.1:1|--nqn|nqn.2024-01.io.busypoll:clitable
perf|$perf_b|--nsid|1
perf|$perf_b|--hostnqn|$HOSTNQN
perf|$perf_b|--digest|none
perf|$perf_b|--io-timeout|1
perf|$perf_b|--rw|read
perf|$perf_b --rw randrw|--rwmixread|50
perf|$perf_b --rw randrw|--rwmixwrite|50
perf|$perf_b|--bs|4k
perf|$perf_b|--iodepth|1
perf|$perf_b|--iodepth-batch|1
perf|$perf_b|--iodepth-batch-complete-min|1
perf|$perf_b|--iodepth-batch-complete-max|1
perf|$perf_b|--numjobs|1
perf|$perf_b|--cpus|0
perf|$perf_b|--runtime|1
perf|$perf_b|--ramp-time|0
perf|$perf_b|--warmup|0
perf|$perf_b|--offset|0
perf|$perf_b|--size|1M
perf|$perf_b|--verify|
perf|$perf_b|--mode|epoll:block
perf|$perf_b|--interval|0
perf|$perf_b|--sweep|R
perf|$perf_b --rw randread|--rate-iops|1000
perf|$perf_b --rate-iops 1|--rate-process|linear
perf|$perf_b|--cpus-allowed|0
perf|$perf_b --cpus-allowed 0|--cpus-allowed-policy|split
perf|$perf_b|--spawn-target|--ns ram:1M
perf|$perf_b|--target-config|R
perf|$perf_b|--remote|h
perf|$perf_b --remote h|--key-file|k
perf|$perf_b --remote h|--ssh|ssh
perf|$perf_b --remote h|--agent-cmd|x
target|$tgt_b|--quiet|
target|$tgt_b|--format|json
target|target --ns ram:1M|--listen|127.0.0.1:0
target|$tgt_b|--nqn|nqn.2024-01.io.busypoll:clitable
target|$tgt_b|--ns|R
target|$tgt_b|--allow-host|R
target|$tgt_b|--threads|1
target|$tgt_b|--cpus|0
target|$tgt_b|--mode|epoll:block
target|$tgt_b|--poll-period-us|0
target|$tgt_b|--priority|1
target|$tgt_b|--max-queues|1
target|$tgt_b|--queue-depth|32
target|$tgt_b|--io-depth|8
target|$tgt_b|--max-conns|1
target|$tgt_b|--connect-timeout-ms|0
target|$tgt_b|--max-transfer|1M
target|$tgt_b|--inline-data|8K
target|$tgt_b|--log-level|info
target|$tgt_b|--ram-beyond-memory|
target|$tgt_b|--file-beyond-space|
compare|compare|--quiet|
compare|compare|--format|json
compare|compare|--modes|epoll:block
compare|compare --client-mode epoll:block|--server-mode|epoll:block
compare|compare --server-mode epoll:block|--client-mode|epoll:block
compare|compare|--flows|1
compare|compare|--rates|max
compare|compare|--duration|1
compare|compare|--warmup|0
compare|compare|--runs|1
compare|compare|--threads|1
compare|compare|--request-size|1
compare|compare|--response-size|1
compare|compare|--client-cpus|0
compare|compare|--server-cpus|1
compare|compare|--loopback|
compare|compare|--bed-tso|
compare|compare|--bed-no-gro|
compare|compare|--udp|
compare|compare|--plot|x.svg
compare|compare|--remote|h
compare|compare --remote h|--key-file|k
compare|compare --remote h|--ssh|ssh
compare|compare --remote h|--agent-cmd|x
compare|compare --remote h|--server-addr|127.0.0.1
compare|compare --remote h|--coalesce|rx-usecs=0
compare|compare --remote h|--coalesce-matrix|
modes|modes|--quiet|
modes|modes|--format|json
modes|modes|--check|epoll:block
modes|modes|--features|
napi|napi list|--quiet|
napi|napi list|--format|json
napi|napi list|--netns|bp-$bed-a
napi|napi list|--device|lo
testbed|testbed status --name $bed|--quiet|
testbed|testbed status --name $bed|--format|json
testbed|testbed status|--name|$bed
testbed|testbed up --name $bed|--queues|1
testbed|testbed up --name $bed|--threaded|
testbed|testbed up --vm --name $bed|--vm|
testbed|testbed up --vm --name $bed|--nic|virtio
agent|agent --path lo|--quiet|
agent|agent --path lo|--format|json
agent|agent|--stdio|
agent|agent|--listen|127.0.0.1:0
agent|agent --listen 127.0.0.1:0|--key-file|k
agent|agent|--new-key|k
agent|agent|--restore|
agent|agent|--path|lo
agent|agent --stdio|--cpus|0
agent|agent --stdio|--state-dir|d
agent|agent --listen 127.0.0.1:0|--auth-timeout|1
agent|agent --listen 127.0.0.1:0|--max-startups|1:30:2
agent|agent --listen 127.0.0.1:0|--per-source|1
agent|agent --stdio|--max-servers|2
agent|agent --stdio|--max-target-ram|1G
agent|agent --stdio|--target-listen|127.0.0.1
"

# every option of every --help has a row (help and version are built in)
for sub in rr pingpong perf target compare modes napi testbed agent; do
	"$BP" "$sub" --help >"$tmp/help" 2>&1 || fail "busypoll $sub --help failed"
	for opt in $(sed -n 's/^  \(-[a-zA-Z], \)\{0,1\}\(--[a-z0-9-]*\|-[a-zA-Z]\)\([ [].*\)\{0,1\}$/\2/p' "$tmp/help"); do
		case $opt in --help | --version) continue ;; esac
		grep -q "^$sub|[^|]*|$opt|" <<<"$repeat_table" || fail "busypoll $sub $opt: no row in the repeat table"
	done
done

# the README's option claims are true per subcommand: each "`--opt` SUB, SUB and SUB" (or
# "all of them") of its vocabulary paragraph is in each of those subcommands' --help
readme="${BP_TESTLIB:-$(dirname "$0")/../lib}/../../README.md"
for sub in rr pingpong perf target compare modes napi testbed agent; do
	"$BP" "$sub" --help >"$tmp/help-$sub" 2>&1
done
if ! command -v python3 >/dev/null; then
	echo "SKIP part: the README's option claims (needs python3)"
elif ! python3 - "$readme" "$tmp" <<'EOF'; then
import re, sys
text = open(sys.argv[1]).read()
para = text[text.index("Every subcommand speaks one option vocabulary"):]
para = para[:para.index("\n\n")].replace("\n", " ")
para = para[para.index(":") + 1:para.index(". ")]
subs = "rr pingpong perf target compare modes napi testbed agent".split()
helps = {s: open(f"{sys.argv[2]}/help-{s}").read() for s in subs}
bad, claims = [], 0
for seg in para.split(";"):
    for paren in re.findall(r"\(([^)]*)\)", seg):  # "(compare: `--x`/`--y`)": compare's own spelling
        m = re.match(r"\s*(\w+): (.*)", paren)
        if m and m.group(1) in subs:
            for opt in re.findall(r"`(-[-\w]+)", m.group(2)):
                claims += 1
                bad += [] if re.search(rf"(^|\s){re.escape(opt)}\b", helps[m.group(1)], re.M) else [(m.group(1), opt)]
    seg = re.sub(r"\([^)]*\)", "", seg)
    opts = re.findall(r"`(-[-\w]+)", seg)
    named = subs if "all of them" in seg else [w for w in re.findall(r"[a-z]+", re.sub(r"`[^`]*`", "", seg)) if w in subs]
    assert opts and named, ("a claim the check cannot read", seg)
    for s in named:
        for opt in opts:
            claims += 1
            if not re.search(rf"(^|\s){re.escape(opt)}\b", helps[s], re.M):
                bad.append((s, opt))
assert claims >= 20, ("too few claims read", claims, para)
if bad:
    sys.exit(f"the README says these subcommands take these options, their --help does not: {bad}")
EOF
	fail "README's option claims: see above"
fi

while IFS='|' read -r sub before opt value; do
	[ -n "$sub" ] || continue
	[ "$value" = R ] && continue
	# shellcheck disable=SC2086 # the words of the row are separate arguments
	if [ "$opt" = --spawn-target ]; then
		refused "$opt given twice" $before "$opt" "$value" "$opt" "$value"
	elif [ -z "$value" ]; then
		refused "$opt given twice" $before "$opt" "$opt"
	else
		refused "$opt given twice" $before "$opt" "$value" "$opt" "$value"
	fi
done <<<"$repeat_table"

# an alias and its option, a short and its long spelling: still one option given twice
refused "--threads given twice" rr --client 127.0.0.1 --port 1 -T 1 --threads 1
refused "given twice" perf --target 127.0.0.1:1 --nqn n --ramp-time 1 --ramp_time 1
refused "given twice" perf --target 127.0.0.1:1 --nqn n --ramp-time 1 --warmup 1
refused "given twice" target --ns ram:1M --priority 1 --so-priority 1

# ---------------------------------------------------------------------------
# Lists: an empty item, a duplicate, a trailing separator.
# ---------------------------------------------------------------------------
refused "--cpus" rr --client 127.0.0.1 --port 1 -T 2 --cpus 0,,1
refused "--cpus" rr --client 127.0.0.1 --port 1 -T 2 --cpus 0,0
refused "--cpus" rr --client 127.0.0.1 --port 1 --cpus 0,
refused "--cpus" rr --client 127.0.0.1 --port 1 --cpus ""
refused "--cpus" rr --server --port 1 --cpus 1-0
refused "--cpus" pingpong --client 127.0.0.1 --port 1 --cpus ,0
refused "--cpus" $perf_b --numjobs 2 --cpus 0,,1
refused "--cpus" $perf_b --numjobs 2 --cpus 1,1
refused "--digest" $perf_b --digest hdr,,data
refused "--digest" $perf_b --digest hdr,hdr
refused "--digest" $perf_b --digest ""
refused "--cpus" target --ns ram:1M --threads 2 --cpus 0,,1
refused "--cpus" target --ns ram:1M --threads 2 --cpus 0,0
refused "--ns" target --ns ram:1M,,bs=512
refused "--ns" target --ns "file:$tmp/f,size=1M" --ns "file:$tmp/f,size=1M"
refused "--allow-host" target --ns ram:1M --allow-host "$HOSTNQN" --allow-host "$HOSTNQN"
refused "--modes" compare --modes "epoll:block;;epoll:spin"
refused "--modes" compare --modes "epoll:block;epoll:block"
refused "--modes" compare --modes "epoll:block;"
refused "--modes" compare --modes ""
refused "--flows" compare --flows 1,,2
refused "--flows" compare --flows 1,1
refused "--flows" compare --flows 1,
refused "--rates" compare --rates 1k,,max
refused "--rates" compare --rates 1k,1000
refused "--rates" compare --rates max,
refused "--rates" compare --rates ""
refused "--rates 0" compare --rates 0,max
refused "--rates 5x" compare --rates 5x
refused "cells, at most 1024" compare --flows 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 \
	--rates 1k,2k,3k,4k,5k,6k,7k,8k,9k,10k,11k,12k,13k,14k,15k,max
refused "--client-cpus" compare -T 2 --client-cpus 0,,1
refused "--client-cpus" compare -T 2 --client-cpus 0,0
refused "--server-cpus" compare -T 2 --server-cpus 1,,0
refused "--sweep" $perf_b --sweep numjobs=1..
refused "--sweep" $perf_b --sweep numjobs=2..1

# ---------------------------------------------------------------------------
# Numbers out of range (and not numbers).
# ---------------------------------------------------------------------------
refused "--port 0" rr --client 127.0.0.1 --port 0
refused "--port 65536" rr --client 127.0.0.1 --port 65536
refused "--priority 16" rr --client 127.0.0.1 --port 1 --priority 16
refused "--priority -1" rr --client 127.0.0.1 --port 1 --priority -1
refused "--threads 0" rr --client 127.0.0.1 --port 1 -T 0
refused "--threads 65" rr --client 127.0.0.1 --port 1 -T 65
refused "--flows 0" rr --client 127.0.0.1 --port 1 -F 0
refused "--flows 1000001" rr --client 127.0.0.1 --port 1 -F 1000001
refused "--request-size 0" rr --client 127.0.0.1 --port 1 -Q 0
refused "--request-size 17M" rr --client 127.0.0.1 --port 1 -Q 17M
refused "--response-size 0" rr --client 127.0.0.1 --port 1 -R 0
refused "--response-size 65508" rr --client 127.0.0.1 --port 1 --udp -Q 8 -R 65508
refused "--request-size 7" rr --client 127.0.0.1 --port 1 --udp -Q 7
refused "--duration 0" rr --client 127.0.0.1 --port 1 -l 0
refused "--duration 169h" rr --client 127.0.0.1 --port 1 -l 169h
refused "--duration 1x" rr --client 127.0.0.1 --port 1 -l 1x
refused "--transactions 0" rr --client 127.0.0.1 --port 1 -n 0
refused "--warmup -1" rr --client 127.0.0.1 --port 1 --warmup -1
refused "--interval -1" rr --client 127.0.0.1 --port 1 -I -1
refused "--cpus 100000" rr --client 127.0.0.1 --port 1 --cpus 100000
refused "--rate 0" rr --client 127.0.0.1 --port 1 --rate 0
refused "--rate 5x" rr --client 127.0.0.1 --port 1 --rate 5x
refused "--rate 200M" rr --client 127.0.0.1 --port 1 --rate 200M
refused "--arrivals even" rr --client 127.0.0.1 --port 1 --rate 1k --arrivals even
refused "--arrivals needs --rate" rr --client 127.0.0.1 --port 1 --arrivals fixed
refused "--max-outstanding 0" rr --client 127.0.0.1 --port 1 --rate 1k --max-outstanding 0
refused "--max-outstanding 2" rr --client 127.0.0.1 --port 1 --rate 1k -F 3 --max-outstanding 2
refused "--port 70000" pingpong --client 127.0.0.1 --port 70000
refused "--priority 16" pingpong --client 127.0.0.1 --port 1 --priority 16
refused "--server-delay-us 1000001" pingpong --server --port 1 --server-delay-us 1000001
refused "--size 47" pingpong --client 127.0.0.1 --port 1 --size 47
refused "--size 65508" pingpong --client 127.0.0.1 --port 1 --size 65508
refused "-n 0" pingpong --client 127.0.0.1 --port 1 -n 0
refused "--runs 0" pingpong --client 127.0.0.1 --port 1 --runs 0
refused "--runs 1001" pingpong --client 127.0.0.1 --port 1 --runs 1001
refused "--warmup-count -1" pingpong --client 127.0.0.1 --port 1 --warmup-count -1
refused "--warmup-count" pingpong --client 127.0.0.1 --port 1 --warmup 100
refused "--timeout 0" pingpong --client 127.0.0.1 --port 1 --timeout 0
refused "--nsid 0" $perf_b --nsid 0
refused "--io-timeout 0" $perf_b --io-timeout 0
refused "--rw" $perf_b --rw sideways
refused "--rwmixread 101" $perf_b --rw randrw --rwmixread 101
refused "--rwmixwrite 101" $perf_b --rw randrw --rwmixwrite 101
refused "--bs 0" $perf_b --bs 0
refused "--iodepth 0" $perf_b --iodepth 0
refused "--iodepth 4097" $perf_b --iodepth 4097
refused "--numjobs 0" $perf_b --numjobs 0
refused "--numjobs 65" $perf_b --numjobs 65
refused "--runtime 0" $perf_b --runtime 0
refused "--ramp-time -1" $perf_b --ramp-time -1
refused "--offset x" $perf_b --offset x
refused "--size 100" $perf_b --size 100
refused "--interval -1" $perf_b --interval -1
refused "--threads 0" target --ns ram:1M --threads 0
refused "--threads 65" target --ns ram:1M --threads 65
refused "--priority 16" target --ns ram:1M --priority 16
refused "--max-queues 0" target --ns ram:1M --max-queues 0
refused "--max-queues 1025" target --ns ram:1M --max-queues 1025
refused "--queue-depth 31" target --ns ram:1M --queue-depth 31
refused "--io-depth 0" target --ns ram:1M --io-depth 0
refused "--io-depth 4097" target --ns ram:1M --io-depth 4097
refused "--queue-depth 1025" target --ns ram:1M --queue-depth 1025
refused "--max-conns 0" target --ns ram:1M --max-conns 0
refused "--connect-timeout-ms -1" target --ns ram:1M --connect-timeout-ms -1
refused "--max-transfer 3K" target --ns ram:1M --max-transfer 3K
refused "--max-transfer 64M" target --ns ram:1M --max-transfer 64M
refused "--inline-data 3K" target --ns ram:1M --inline-data 3K
refused "--poll-period-us -1" target --ns ram:1M --poll-period-us -1
refused "--log-level" target --ns ram:1M --log-level loud
refused "--ns ram:0" target --ns ram:0
refused "--ns" target --ns ram:1M,bs=513
refused "--ns" target --ns "file:$tmp/cwd/f,size=1000"
refused "--flows 0" compare --flows 0
refused "--duration 0" compare -l 0
refused "--warmup -1" compare --warmup -1
refused "--runs 0" compare --runs 0
refused "--threads 0" compare -T 0
refused "--request-size 0" compare -Q 0
refused "--response-size 0" compare -R 0
refused "--client-cpus 100000" compare --client-cpus 100000
refused "--server-cpus 100000" compare --server-cpus 100000
refused "--plot" compare --plot /nonexistent/x.svg
refused "--plot x.png: the plot is SVG, give a name ending in .svg" compare --plot x.png
refused "--plot /tmp/.svg: the plot is SVG" compare --plot /tmp/.svg
refused "--format yaml" modes --format yaml
refused "--check" modes --check epoll:nope
refused "--queues 0" testbed up --name "$bed" --queues 0
refused "--queues 65" testbed up --name "$bed" --queues 65
refused "--name" testbed up --name "bad name"
refused "--name" testbed up --name ""
refused "--name" testbed up --name abcdefghijabcdefghijabcdefghij123
refused "--netns" napi list --netns "no-such-netns-$$"
refused "--device" napi list --device "nosuchdev$$"

# ---------------------------------------------------------------------------
# Hosts and ports, malformed.
# ---------------------------------------------------------------------------
refused "--client" rr --client "" --port 1
refused "--client 1.2.3.256" rr --client 1.2.3.256 --port 1
refused "--client no.such.host.invalid" rr --client no.such.host.invalid --port 1
refused "--bind 1.2.3.256" rr --server --bind 1.2.3.256 --port 1
refused "--bind" rr --server --bind "" --port 1
refused "--port 80a" rr --client 127.0.0.1 --port 80a
refused "--client" pingpong --client "" --port 1
refused "--client no.such.host.invalid" pingpong --client no.such.host.invalid --port 1
refused "--bind 1.2.3.256" pingpong --server --bind 1.2.3.256 --port 1
refused "--target" perf --target ::1:4420 --nqn n
refused "--target" perf --target 127.0.0.1:99999 --nqn n
refused "--target" perf --target 127.0.0.1: --nqn n
refused "--target" perf --target "[::1" --nqn n
refused "--target" perf --target no.such.host.invalid:4420 --nqn n
refused "--listen" target --ns ram:1M --listen ::1:4490
refused "--listen" target --ns ram:1M --listen 127.0.0.1:99999
refused "--listen" target --ns ram:1M --listen "[::1]x"
refused "--listen" target --ns ram:1M --listen no.such.host.invalid:4420

# ---------------------------------------------------------------------------
# The remote host (--remote, the agent there): options that go together, a host
# that does not resolve, a key file that cannot be used. Nothing is reached.
# ---------------------------------------------------------------------------
printf '%064d\n' 0 >"$tmp/open.key" && chmod 644 "$tmp/open.key"
refused "--key-file goes with --remote HOST" compare --key-file k
refused "--ssh goes with --remote HOST" compare --ssh ssh
refused "--server-addr goes with --remote HOST" compare --server-addr 127.0.0.1
refused "--coalesce goes with --remote HOST" compare --coalesce rx-usecs=0
refused "--coalesce-matrix goes with --remote HOST" compare --coalesce-matrix
refused "--coalesce rx-usec=0: unknown coalescing key 'rx-usec'" compare --remote 127.0.0.1 --coalesce rx-usec=0
refused "--coalesce and --coalesce-matrix exclude each other" compare --remote 127.0.0.1 --coalesce rx-usecs=0 --coalesce-matrix
refused "--loopback and --remote exclude each other" compare --remote 127.0.0.1 --loopback
refused "--remote no.such.host.invalid: no.such.host.invalid does not resolve here (" compare --remote no.such.host.invalid
! grep -q -- "--server-addr" "$tmp/err" || fail "an agent host that does not resolve is told to give --server-addr: $(cat "$tmp/err")"
refused "--server-addr no.such.host.invalid: does not resolve here" compare --remote 127.0.0.1 --server-addr no.such.host.invalid
refused "--remote 127.0.0.1: a standing agent is HOST:PORT" compare --remote 127.0.0.1 --key-file "$tmp/open.key"
refused "is open to group or others (mode 0644)" compare --remote 127.0.0.1:7100 --key-file "$tmp/open.key"
refused "cannot open key file" compare --remote 127.0.0.1:7100 --key-file "$tmp/no.key"
refused "--key-file reaches a standing agent over TCP: --ssh is for ssh" compare --remote 127.0.0.1:7100 --key-file k --ssh ssh
refused "--remote user@: no host after the '@'" compare --remote user@
refused "--remote 127.0.0.1:7100: HOST:PORT needs --key-file FILE" compare --remote 127.0.0.1:7100
refused "--remote u@[::1]:7100: HOST:PORT needs --key-file FILE" pingpong --client ::1 --remote "u@[::1]:7100"
printf '%064d\n' 0 >"$tmp/good.key" && chmod 600 "$tmp/good.key"
refused "--remote no.such.host.invalid:7100: the agent host no.such.host.invalid does not resolve here" compare --remote no.such.host.invalid:7100 --key-file "$tmp/good.key"
refused "--server-cpus goes with --remote HOST" pingpong --client 127.0.0.1 --server-cpus 0
refused "--server-mode goes with --remote HOST" pingpong --client 127.0.0.1 --server-mode epoll:block
refused "--server-cpus 0,1: one CPU" pingpong --client 127.0.0.1 --remote h --server-cpus 0,1
refused "--remote starts the server on another host: it goes with --client" pingpong --server --remote h
refused "--remote h starts the target there: give its arguments with --spawn-target" $perf_b --remote h
refused "--port 0: must be between 1 and 65535" pingpong --client 127.0.0.1 --port 0

echo "$cases cases"
bpt_end
