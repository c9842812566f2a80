#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# echo.sh - the engine's 1-byte echo in every mode beside the floor, over the veth
# test bed (netns-pair.sh: server in namespace b on CPU 1, client in a on CPU 0).
# Prints the floor's line, then one line per mode with p50/p99 and the p50 ratio
# to the floor's p50. Timings are for reading, not pass/fail.
#
# usage: echo.sh [ROUNDS]          (default 20000)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=${1:-20000}
build=${BUILD:-$here/../build}
echo_bin=$build/bench/bench_echo
floor_bin=$build/bench/bench_floor
[[ -x $echo_bin && -x $floor_bin ]] || { echo "echo.sh: build first (make build)" >&2; exit 2; }

modes=(
  epoll:block epoll:spin "epoll:napi,usecs=64,budget=8" "epoll:napi,usecs=64,budget=8,prefer"
  "epoll:hybrid,period=100" uring:block "uring:block,setup=plain" uring:spin "uring:spin,setup=plain"
  "uring:napi,usecs=64" "uring:napi,usecs=64,tracking=static" "uring:sqpoll,napi=64"
)

floor_p50=$(BENCH_FLOOR=$floor_bin "$here/floor.sh" -n "$rounds" --format json 2>/dev/null |
	python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["p50_us"])')
printf '%-34s p50 %7.2f us  (the floor: raw recv(MSG_DONTWAIT) spin)\n' floor "$floor_p50"
for m in "${modes[@]}"; do
	line=$("$here/netns-pair.sh" \
		"$echo_bin --server --mode '$m' --bind \"\$BP_SERVER_ADDR\"" \
		"$echo_bin --client \"\$BP_SERVER_ADDR\" --mode '$m' -n $rounds" 2>/dev/null) || {
		printf '%-34s failed or not usable here\n' "$m"; continue; }
	p50=$(sed -n 's/.* p50 *\([0-9.]*\) us.*/\1/p' <<<"$line")
	printf '%s  ratio %.2f\n' "$line" "$(python3 -c "print($p50/$floor_p50)")"
done
