#!/bin/bash
# SPDX-License-Identifier: MIT
# Every public header (include/busypoll/*.h, the ones installed) compiles on its own,
# with only include/ on the path, with -Wall -Wextra -Werror -pedantic, as strict C11
# and as C++17, and twice in one unit (its include guard works). A header that needs
# another one it does not include, an internal header, GNU C or something C++
# refuses fails here, naming the header and the language.
. "$(dirname "$0")/lib.sh"
need BP_SOURCE_DIR
need_tool "${CC:-cc}:gcc" "${CXX:-g++}:g++"

inc=$BP_SOURCE_DIR/include
headers=("$inc"/busypoll/*.h)
[ -e "${headers[0]}" ] || { fail "no headers in $inc/busypoll"; finish headers; }

# compile LANG COMPILER FLAGS... < unit: one unit, errors kept for the message
compile() {
	local lang=$1 compiler=$2
	shift 2
	"$compiler" -x "$lang" "$@" -Wall -Wextra -Werror -pedantic -I"$inc" -fsyntax-only - \
		>"$tmp/err" 2>&1
}

for h in "${headers[@]}"; do
	name=busypoll/$(basename "$h")
	unit="#include <$name>"
	twice=$(printf '#include <%s>\n#include <%s>\n' "$name" "$name")
	compile c "${CC:-cc}" -std=c11 <<<"$unit" ||
		fail "$name does not compile alone as C11: $(head -c 600 "$tmp/err")"
	compile c++ "${CXX:-g++}" -std=c++17 <<<"$unit" ||
		fail "$name does not compile alone as C++17: $(head -c 600 "$tmp/err")"
	compile c "${CC:-cc}" -std=c11 <<<"$twice" ||
		fail "$name included twice does not compile (include guard?): $(head -c 600 "$tmp/err")"
done

# busypoll.h is the whole API: it includes every other public header.
for h in "${headers[@]}"; do
	b=$(basename "$h")
	[ "$b" = busypoll.h ] && continue
	grep -q "^#include <busypoll/$b>" "$inc/busypoll/busypoll.h" ||
		fail "include/busypoll/busypoll.h does not include busypoll/$b"
done

finish "${#headers[@]} public headers compile alone as C11 and C++17"
