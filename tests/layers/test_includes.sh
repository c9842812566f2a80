#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The include-direction check (check-includes.sh) passes on the tree, and fails on a
# copy of it with one upward include planted, for each kind of rule: a lower layer
# including a higher one, two peers, a public header including a private one, and
# two subcommands, the agent's client below the shared link, and the agent including its
# client (a denied edge); the listed compare -> rr edge stays allowed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
check=$here/check-includes.sh
fails=0

fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

out=$("$check" "$root" 2>&1) || fail "the tree has upward includes:"$'\n'"$out"

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# plant FILE LINE WANT: copy the tree, add LINE at the top of FILE, expect a failure naming WANT.
plant() {
	local file=$1 line=$2 want=$3 got
	rm -rf "$tmp/t" && mkdir -p "$tmp/t" && cp -r "$root/src" "$root/include" "$tmp/t/" || exit 1
	[[ -f $tmp/t/$file ]] || { fail "no $file to plant into"; return; }
	{ echo "$line"; cat "$root/$file"; } >"$tmp/t/$file"
	got=$("$check" "$tmp/t" 2>&1) && { fail "planted '$line' in $file and the check passed"; return; }
	grep -qF -- "$want" <<<"$got" || fail "planted '$line' in $file: output lacks '$want': $got"
}

plant src/net/cpu.c '#include "core/internal.h"' "src/net/cpu.c:1: includes core/internal.h: core (rank 4) is above net (rank 2)"
plant src/base/error.c '#include <busypoll/loop.h>' "src/base/error.c:1: includes busypoll/loop.h: api (rank 1) is above base (rank 0)"
plant src/backends/epoll.c '#include "core/internal.h"' "core (rank 4) is above backends (rank 3)"
plant src/stats/hist.c '#include "net/napi_nl.h"' "net and stats are peers"
plant src/nvme/host/ctrl.c '#include "nvme/target/internal.h"' "nvme/target and nvme/host are peers"
plant src/nvme/wire/pdu.c '#include <busypoll/nvme/host.h>' "nvme/host (rank 7) is above nvme/wire (rank 6)"
plant include/busypoll/loop.h '#include "base/error.h"' "a public header includes only public headers"
plant src/tools/common/emit.c '#include "tools/rr/rr.h"' "tools/rr (rank 12) is above tools/common (rank 8)"
plant src/tools/rr/opts.c '#include "tools/compare/compare.h"' "tools/compare and tools/rr are peers"
plant src/tools/common/emit.c '#include "tools/harness/control.h"' "tools/harness (rank 9) is above tools/common (rank 8)"
plant src/tools/link/auth.c '#include "tools/remote/agent_client.h"' "tools/remote (rank 11) is above tools/link (rank 10)"
plant src/tools/agent/door.c '#include "tools/remote/agent_client.h"' "tools/agent -> tools/remote is denied"

# The design's one peer edge stays allowed.
rm -rf "$tmp/t" && mkdir -p "$tmp/t" && cp -r "$root/src" "$root/include" "$tmp/t/"
{ echo '#include "tools/rr/rr.h"'; cat "$root/src/tools/compare/cmd.c"; } >"$tmp/t/src/tools/compare/cmd.c"
"$check" "$tmp/t" >/dev/null 2>&1 || fail "compare -> rr is listed as allowed but the check refused it"

((fails == 0)) || exit 1
echo "ok: the tree passes; 12 planted upward or denied includes fail; the listed edge passes"
