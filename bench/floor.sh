#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# floor.sh - the floors over the veth test bed, server in namespace b on CPU 1, client in
# namespace a on CPU 0 (netns-pair.sh):
#   floor        one flow: bench_floor, both ends spinning on recv(MSG_DONTWAIT); the
#                client's round-trip table
#   lean-epoll   fifteen flows: bench_lean --backend epoll, the leanest epoll loop
#   lean-uring   fifteen flows: bench_lean --backend uring, the leanest io_uring loop
#   all          the three, one after the other
#
# usage: floor.sh [floor|lean-epoll|lean-uring|all] [CLIENT OPTIONS...]
#                 e.g. floor.sh -n 100000 --format json; floor.sh lean-epoll -l 3
#
#   The options go to the client (bench_floor: -n, --warmup, --format, --timeout;
#   bench_lean: -F, -l, --warmup, --format, --timeout). The binaries are
#   $BENCH_FLOOR and $BENCH_LEAN, else bench/bench_floor and bench/bench_lean in a
#   build*/ directory at the top of the source tree. To compare them with busypoll rr
#   and neper, alternated round after round: bench/neper.sh.
#
# Exit status: as netns-pair.sh (0, 1 failed, 2 bad usage, 77 cannot run here).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
what=floor
case ${1:-} in
floor | lean-epoll | lean-uring | all) what=$1; shift ;;
esac

# find NAME VAR: the absolute path of bench/NAME ($VAR, else a build*/ directory's)
find_bin() {
	local bin=${!2:-} candidate
	if [[ -z $bin ]]; then
		for candidate in "$here"/../build*/bench/"$1"; do
			[[ -x $candidate ]] && bin=$candidate && break
		done
	fi
	if [[ -z $bin || ! -x $bin ]]; then
		echo "floor.sh: $1 not found; build it (make build) and set $2=/path/to/$1" >&2
		exit 2
	fi
	# absolute: the commands run under bash -c inside the namespaces
	echo "$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
}

client_opts=
(($# == 0)) || client_opts=$(printf ' %q' "$@")

# run PROGRAM: one pair over a fresh bed. $BP_SERVER_ADDR stays quoted here:
# netns-pair.sh sets it, the command's shell expands it.
run() {
	local q_bin server client
	case $1 in
	floor)
		q_bin=$(printf '%q' "$(find_bin bench_floor BENCH_FLOOR)")
		server="$q_bin --server --bind \"\$BP_SERVER_ADDR\""
		client="$q_bin --client \"\$BP_SERVER_ADDR\"$client_opts"
		;;
	lean-*)
		q_bin=$(printf '%q' "$(find_bin bench_lean BENCH_LEAN)")
		server="$q_bin --server --backend ${1#lean-} --bind \"\$BP_SERVER_ADDR\""
		client="$q_bin --client \"\$BP_SERVER_ADDR\" --backend ${1#lean-}$client_opts"
		;;
	esac
	"$here/netns-pair.sh" "$server" "$client"
}

if [[ $what == all ]]; then
	for w in floor lean-epoll lean-uring; do
		echo "== $w"
		run "$w"
	done
else
	run "$what"
fi
