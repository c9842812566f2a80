#!/bin/bash
# SPDX-License-Identifier: MIT
#
# check-includes.sh [ROOT] - fail when a file includes from a layer above its own.
#
# Every file under src/ and include/ belongs to a unit with a rank (the table in
# unit_of below, the layer drawing of docs/ARCHITECTURE.md). A file may include a
# header of its own unit or of a unit of lower rank; units of equal rank are peers
# and may not include each other (net and stats; the NVMe target and host; one
# subcommand and another) unless the edge is listed in ALLOWED; a downward edge
# listed in DENIED is refused all the same (the agent and its client). Public headers
# (include/busypoll/) include only public headers: they are installed without src/.
# tests/, fuzz/ and bench/ may include anything, so they are not read.
#
# Includes resolve as the compiler resolves them: "x.h" next to the file first,
# then under src/ (the -I of every library), then include/; <busypoll/x.h> under
# include/. Anything else is a system header and not ours.
#
# Prints one line per upward include (file:line: what, and the rule) and exits 1;
# exits 0 when every include points down or sideways within a unit.
set -u

root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}

# Peer edges that are the design: compare runs rr's server and client in one process;
# the agent parses a target's arguments with the target's own option table (its limits);
# tune runs its cells through compare's and changes sysctls through the agent's journal.
ALLOWED=(
	"tools/compare -> tools/rr"
	"tools/agent -> tools/target"
	"tools/tune -> tools/compare"
	"tools/tune -> tools/agent"
)

# Downward edges that are not the design, each with its reason: the agent is the
# other end of its client, and shares with it only tools/link (wire, handshake,
# channel), never the client itself.
DENIED=(
	"tools/agent -> tools/remote: the agent is the client's other end; what both ends share lives in tools/link"
)

# unit_of PATH (relative to root): sets UNIT and RANK, both empty for a path outside the
# layers. A public header has the rank of what it describes: the engine's headers are
# one vocabulary just above base, each NVMe header sits with its side.
unit_of() {
	UNIT= RANK=
	case $1 in
	src/base/*)                    UNIT=base RANK=0 ;;
	include/busypoll/nvme/tcp.h)   UNIT=nvme/wire RANK=6 ;;
	include/busypoll/nvme/target.h) UNIT=nvme/target RANK=7 ;;
	include/busypoll/nvme/host.h)  UNIT=nvme/host RANK=7 ;;
	include/busypoll/nvme/*)       UNIT=nvme/api RANK=6 ;;
	include/busypoll/*)            UNIT=api RANK=1 ;;
	src/net/*)                     UNIT=net RANK=2 ;;
	src/stats/*)                   UNIT=stats RANK=2 ;;
	src/backends/*)                UNIT=backends RANK=3 ;;
	src/core/*)                    UNIT=core RANK=4 ;;
	src/nvme/wire/*)               UNIT=nvme/wire RANK=6 ;;
	src/nvme/target/*)             UNIT=nvme/target RANK=7 ;;
	src/nvme/host/*)               UNIT=nvme/host RANK=7 ;;
	src/nvme/*)                    UNIT=nvme RANK=7 ;;
	src/tools/common/*)            UNIT=tools/common RANK=8 ;;
	src/tools/bed/*)               UNIT=tools/bed RANK=8 ;;
	src/tools/harness/*)           UNIT=tools/harness RANK=9 ;;
	src/tools/link/*)              UNIT=tools/link RANK=10 ;;
	src/tools/remote/*)            UNIT=tools/remote RANK=11 ;;
	src/tools/main.c)              UNIT=tools/main RANK=13 ;;
	src/tools/*/*)                 UNIT=${1#src/tools/}; UNIT=tools/${UNIT%%/*} RANK=12 ;;
	src/tools/*)                   UNIT=tools/main RANK=13 ;;
	esac
}

# resolve FILE q|a NAME: sets TARGET to the path (relative to root) the include names,
# or empty for a header that is not ours.
resolve() {
	local file=$1 kind=$2 name=$3 cand
	TARGET=
	if [[ $kind == q ]]; then
		for cand in "${file%/*}/$name" "src/$name" "include/$name"; do
			if [[ -f $root/$cand ]]; then
				[[ $cand == *..* ]] && cand=$(realpath -m --relative-to="$root" "$root/$cand")
				TARGET=$cand
				return
			fi
		done
	elif [[ $name == busypoll/* && -f $root/include/$name ]]; then
		TARGET=include/$name
	fi
}

# denied FROM TO: sets WHY to the reason when the edge is listed in DENIED.
denied() {
	local edge
	WHY=
	for edge in "${DENIED[@]}"; do
		if [[ ${edge%%: *} == "$1 -> $2" ]]; then
			WHY=${edge#*: }
			return 0
		fi
	done
	return 1
}

allowed() {
	local edge
	for edge in "${ALLOWED[@]}"; do
		[[ $edge == "$1 -> $2" ]] && return 0
	done
	return 1
}

re_include='^[[:space:]]*#[[:space:]]*include[[:space:]]*([<"])([^>"]+)[>"]'
bad=0
checked=0
while IFS= read -r file; do
	unit_of "$file"
	funit=$UNIT frank=$RANK
	[[ -n $funit ]] || continue
	checked=$((checked + 1))
	while IFS=: read -r line text; do
		[[ $text =~ $re_include ]] || continue
		kind=q
		[[ ${BASH_REMATCH[1]} == "<" ]] && kind=a
		name=${BASH_REMATCH[2]}
		resolve "$file" "$kind" "$name"
		[[ -n $TARGET ]] || continue
		unit_of "$TARGET"
		tunit=$UNIT trank=$RANK
		[[ -n $tunit ]] || continue
		why=
		if [[ $file == include/* && $TARGET != include/* ]]; then
			why="a public header includes only public headers"
		elif [[ $tunit == "$funit" ]]; then
			continue
		elif ((trank > frank)); then
			why="$tunit (rank $trank) is above $funit (rank $frank)"
		elif ((trank == frank)) && ! allowed "$funit" "$tunit"; then
			why="$tunit and $funit are peers (rank $frank); list the edge in ALLOWED if it is the design"
		elif denied "$funit" "$tunit"; then
			why="$funit -> $tunit is denied: $WHY"
		fi
		if [[ -n $why ]]; then
			echo "$file:$line: includes $name: $why"
			bad=$((bad + 1))
		fi
	done < <(grep -n '#[[:space:]]*include' "$root/$file")
done < <(cd "$root" && find src include -type f \( -name '*.c' -o -name '*.h' \) | sort)

if ((checked == 0)); then
	echo "check-includes: no sources under $root/src or $root/include" >&2
	exit 2
fi
if ((bad)); then
	echo "check-includes: $bad include(s) point up the layers (docs/ARCHITECTURE.md, Layers)" >&2
	exit 1
fi
echo "check-includes: $checked files, every include points down or within its unit"
