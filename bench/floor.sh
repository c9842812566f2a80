#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# floor.sh - the round-trip floor over the veth test bed: bench_floor's server in
# namespace b on CPU 1, its client in namespace a on CPU 0 (netns-pair.sh), both
# spinning on recv(MSG_DONTWAIT); prints the client's table.
#
# usage: floor.sh [CLIENT OPTIONS...]      e.g. floor.sh -n 100000 --format json
#
#   The options go to bench_floor --client (-n, --warmup, --format, --timeout).
#   The binary is $BENCH_FLOOR, else bench/bench_floor in a build*/ directory at the
#   top of the source tree.
#
# Exit status: as netns-pair.sh (0, 1 failed, 2 bad usage, 77 cannot run here).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${BENCH_FLOOR:-}
if [[ -z $bin ]]; then
	for candidate in "$here"/../build*/bench/bench_floor; do
		[[ -x $candidate ]] && bin=$candidate && break
	done
fi
if [[ -z $bin || ! -x $bin ]]; then
	echo "floor.sh: bench_floor not found; build it (make bench_floor) and set BENCH_FLOOR=/path/to/bench_floor" >&2
	exit 2
fi
# absolute: the commands run under bash -c inside the namespaces
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

q_bin=$(printf '%q' "$bin")
client_opts=
(($# == 0)) || client_opts=$(printf ' %q' "$@")

# $BP_SERVER_ADDR stays quoted here: netns-pair.sh sets it, the command's shell expands it.
exec "$here/netns-pair.sh" \
	"$q_bin --server --bind \"\$BP_SERVER_ADDR\"" \
	"$q_bin --client \"\$BP_SERVER_ADDR\"$client_opts"
