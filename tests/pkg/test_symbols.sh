#!/bin/bash
# SPDX-License-Identifier: MIT
# libbusypoll.so exports exactly the functions the public headers declare:
# - declared: what gcc itself reports (-aux-info) for include/busypoll/*.h, static
#   inline functions left out (they are not in the library);
# - exported: nm -D --defined-only of the built shared object;
# - mapped: the global: names of src/libbusypoll.map.
# Every difference is one line naming the function and what to do. Also: the
# SONAME is libbusypoll.so.$BP_SOVERSION, every export carries a LIBBUSYPOLL_ version,
# and every version node of the map has its line in debian/libbusypoll0.symbols.
. "$(dirname "$0")/lib.sh"
need BP_SOURCE_DIR BP_LIBSO BP_SOVERSION
need_tool "${CC:-cc}:gcc" nm:binutils readelf:binutils

map=$BP_SOURCE_DIR/src/libbusypoll.map
symbols=$BP_SOURCE_DIR/debian/libbusypoll$BP_SOVERSION.symbols
[ -r "$BP_LIBSO" ] || skip "$BP_LIBSO is not built (a libFuzzer build has no shared object)"

# declared: "name header:line", one per function
public_functions "$tmp/declared.loc" ||
	{ fail "the public headers do not compile: $(head -c 600 "$tmp/declared.loc.err")"; finish symbols; }
cp "$tmp/declared.loc.names" "$tmp/declared"
[ -s "$tmp/declared" ] || fail "found no function declared in include/busypoll/*.h (gcc -aux-info format changed?)"

# exported: defined dynamic symbols of any type except the version nodes (A)
nm -D --defined-only "$BP_LIBSO" >"$tmp/nm" || fail "nm -D $BP_LIBSO failed"
awk '$2 != "A" { print $3 }' "$tmp/nm" | sed 's/@.*//' | sort -u >"$tmp/exported"
awk '$2 != "A" && $3 !~ /@@?LIBBUSYPOLL_[0-9]+\.[0-9]+$/ { print $3 }' "$tmp/nm" >"$tmp/unversioned"

# mapped: identifiers ending in ';' inside global: sections (comments removed)
sed 's|/\*.*\*/||g' "$map" | awk '
	/\/\*/ { incomment = 1 } incomment { if ($0 ~ /\*\//) incomment = 0; next }
	/global:/ { g = 1; next } /local:/ { g = 0; next } /}/ { g = 0 }
	g { for (i = 1; i <= NF; i++) { s = $i; sub(/;$/, "", s); if (s ~ /^[A-Za-z_][A-Za-z0-9_]*$/) print s } }' |
	sort -u >"$tmp/mapped"

where() { awk -v n="$1" '$1 == n { print "include/busypoll/" $2 }' "$tmp/declared.loc"; }

while read -r f; do
	if grep -qx "$f" "$tmp/mapped"; then
		fail "$f ($(where "$f")) is in src/libbusypoll.map but libbusypoll.so does not define it: implement it in src/"
	else
		fail "$f ($(where "$f")) is declared but not exported: add it to src/libbusypoll.map (the node of the release that adds it)"
	fi
done < <(comm -23 "$tmp/declared" "$tmp/exported")
while read -r f; do
	fail "libbusypoll.so exports $f, which no public header declares: remove it from src/libbusypoll.map, or declare it in include/busypoll/"
done < <(comm -13 "$tmp/declared" "$tmp/exported")
while read -r f; do
	fail "src/libbusypoll.map lists $f, which nothing defines and no public header declares: remove it from the map"
done < <(sort -u "$tmp/declared" "$tmp/exported" | comm -13 - "$tmp/mapped")
while read -r f; do
	fail "libbusypoll.so exports $f without a LIBBUSYPOLL_ symbol version"
done <"$tmp/unversioned"

soname=$(readelf -d "$BP_LIBSO" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libbusypoll.so.$BP_SOVERSION" ] ||
	fail "SONAME is '$soname', want libbusypoll.so.$BP_SOVERSION (BP_SOVERSION in CMakeLists.txt)"

# The Debian symbols file names each version node (dpkg-gensymbols fails on the rest).
if [ -r "$symbols" ]; then
	for node in $(awk '$2 == "A" { print $3 }' "$tmp/nm" | sed 's/@.*//' | sort -u); do
		grep -q "^ (symver)$node " "$symbols" ||
			fail "$(basename "$symbols") lacks its line for $node: add ' (symver)$node VERSION'"
	done
else
	fail "no $symbols for SONAME libbusypoll.so.$BP_SOVERSION (rename it with the SONAME)"
fi

finish "libbusypoll.so exports the $(wc -l <"$tmp/declared") functions the headers declare"
