#!/bin/bash
# SPDX-License-Identifier: MIT
#
# check-guards.sh [ROOT] - fail when a header's include guard does not name its path.
#
# The guard of src/A/B/C.h is BP_A_B_C_H, of include/busypoll/A/C.h BUSYPOLL_A_C_H:
# the path below src/ (with BP_ before it) or below include/, upper case, every
# character that is not a letter or a digit an underscore; a header named after its
# folder drops the repeat (src/tools/agent/agent.h: BP_TOOLS_AGENT_H,
# include/busypoll/busypoll.h: BUSYPOLL_H). A header is guarded by its first
# preprocessor lines, `#ifndef G` then `#define G`.
#
# Prints one line per header whose guard is missing or names another file (a guard
# left from an earlier name is how two headers come to shut each other out) and
# exits 1; exits 0 when every guard matches.
set -u

root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}

# want_guard PATH (relative to root): sets WANT to the guard the header must carry.
want_guard() {
	local rel=${1%.h} prefix last parent
	case $rel in
	src/*) rel=${rel#src/} prefix=BP_ ;;
	include/*) rel=${rel#include/} prefix= ;;
	esac
	last=${rel##*/}
	parent=${rel%/*}
	[[ $parent != "$rel" && ${parent##*/} == "$last" ]] && rel=$parent
	WANT=$prefix$(tr '[:lower:]' '[:upper:]' <<<"$rel" | tr -c 'A-Z0-9\n' '_')_H
}

bad=0
checked=0
while IFS= read -r file; do
	checked=$((checked + 1))
	want_guard "$file"
	# the first two preprocessor lines: #ifndef G, #define G
	mapfile -t pp < <(grep -m2 -E '^[[:space:]]*#' "$root/$file")
	ifndef= define=
	[[ ${pp[0]:-} =~ ^[[:space:]]*#[[:space:]]*ifndef[[:space:]]+([A-Za-z0-9_]+) ]] && ifndef=${BASH_REMATCH[1]}
	[[ ${pp[1]:-} =~ ^[[:space:]]*#[[:space:]]*define[[:space:]]+([A-Za-z0-9_]+) ]] && define=${BASH_REMATCH[1]}
	if [[ -z $ifndef || $define != "$ifndef" ]]; then
		echo "$file: no include guard (its first lines must be #ifndef $WANT, #define $WANT)"
		bad=$((bad + 1))
	elif [[ $ifndef != "$WANT" ]]; then
		echo "$file: include guard $ifndef names another path; want $WANT"
		bad=$((bad + 1))
	fi
done < <(cd "$root" && find src include -type f -name '*.h' | sort)

if ((checked == 0)); then
	echo "check-guards: no headers under $root/src or $root/include" >&2
	exit 2
fi
if ((bad)); then
	echo "check-guards: $bad header(s) with a guard that does not name the path" >&2
	exit 1
fi
echo "check-guards: $checked headers, every guard names its path"
