#!/bin/bash
# SPDX-License-Identifier: MIT
# The manual pages cannot drift from the program or the headers:
# - every subcommand `busypoll --help` lists has man/busypoll-SUB.1.scd, every such
#   page a subcommand, and busypoll(1)'s SUBCOMMANDS section names each one;
# - each page's options equal its command's --help, term for term: an option term is
#   a --help line indented 1..6 spaces that starts with '-', up to the first two
#   spaces ("-T, --threads N"); in the page's OPTIONS section (its ## subsections
#   too), a line at column 0 that starts with '*-' ("*-T*, *--threads* _N_"),
#   scdoc's markup removed. Both sides keyed by each
#   option they name; a missing, extra or differently written term is one line;
# - the commands of napi and testbed (--help lines indented 1..6 that start with a
#   lowercase word) equal the page's COMMANDS section;
# - libbusypoll(3) mentions every function the public headers declare.
# The pages are scdoc sources, so a fix is an edit of man/*.scd.
. "$(dirname "$0")/lib.sh"
need BP_SOURCE_DIR BUSYPOLL
need_tool python3 "${CC:-cc}:gcc"
man=$BP_SOURCE_DIR/man

# help_terms: --help on stdin -> "OPTION<TAB>TERM" per option, "cmd<TAB>WORD" per command
help_terms() {
	python3 -c '
import re, sys
for line in sys.stdin.read().splitlines():
    m = re.match(r"^( {1,6})(\S.*)$", line)
    if not m:
        continue
    term = re.split(r"\s{2,}", m.group(2))[0].strip()
    if term.startswith("-"):
        for opt in re.findall(r"(?:^|[\s,\[])(--?[A-Za-z0-9][A-Za-z0-9-]*)", term):
            print(opt + "\t" + " ".join(term.split()))
    elif re.match(r"[a-z]", term):
        print("cmd\t" + term.split()[0])
'
}

# page_terms SECTION < page.scd: the same from scdoc source; commands from SECTION
page_terms() {
	python3 -c '
import re, sys
section, cmds_in = None, sys.argv[1]
for line in sys.stdin.read().splitlines():
    if line.startswith("# "):
        section = line[2:].strip()
        continue
    if line.startswith("## "):
        continue  # subsections stay in their section
    if not line.startswith("*"):
        continue
    plain = line.replace("\\_", "\x01")
    plain = re.sub(r"[*_]", "", plain).replace("\x01", "_").replace("\\", "")
    plain = " ".join(plain.split())
    if line.startswith("*-") and section == "OPTIONS":
        for opt in re.findall(r"\*(--?[A-Za-z0-9][A-Za-z0-9-]*)\*", line):
            print(opt + "\t" + plain)
    elif section == cmds_in and re.match(r"\*[a-z]", line):
        print("cmd\t" + plain.split()[0])
' "$1"
}

# compare NAME PAGE: the help terms in $tmp/help.terms against the page's
compare() {
	local name=$1 page=$2 key
	page_terms "$3" <"$page" | sort -u >"$tmp/page.terms"
	sort -u "$tmp/help.terms" -o "$tmp/help.terms"
	for key in $(cut -f1 "$tmp/help.terms" "$tmp/page.terms" | grep -v '^cmd$' | sort -u); do
		h=$(awk -F'\t' -v k="$key" '$1 == k { print $2 }' "$tmp/help.terms" | head -n 1)
		p=$(awk -F'\t' -v k="$key" '$1 == k { print $2 }' "$tmp/page.terms" | head -n 1)
		if [ -z "$p" ]; then
			fail "$(basename "$page"): \`$name --help\` lists $key ('$h'), the page does not: add it to the page"
		elif [ -z "$h" ]; then
			fail "$(basename "$page") documents $key ('$p'), which \`$name --help\` does not list: remove it from the page"
		elif [ "$h" != "$p" ]; then
			fail "$(basename "$page"): $key is '$p' in the page, '$h' in \`$name --help\`: make the page's term read '$h'"
		fi
	done
	for key in $(awk -F'\t' '$1 == "cmd" { print $2 }' "$tmp/help.terms"); do
		grep -qxF "cmd	$key" "$tmp/page.terms" ||
			fail "$(basename "$page"): \`$name --help\` has the command '$key', the page's $3 section does not"
	done
	for key in $(awk -F'\t' '$1 == "cmd" { print $2 }' "$tmp/page.terms"); do
		grep -qxF "cmd	$key" "$tmp/help.terms" ||
			fail "$(basename "$page")'s $3 section has '$key', which \`$name --help\` does not list"
	done
}

# ---- the program and busypoll(1) ----
"$BUSYPOLL" --help >"$tmp/help" 2>&1 || fail "busypoll --help exited $?"
help_terms <"$tmp/help" >"$tmp/help.terms"
subs=$(awk -F'\t' '$1 == "cmd" { print $2 }' "$tmp/help.terms")
[ -n "$subs" ] || fail "found no subcommand in busypoll --help"
compare busypoll "$man/busypoll.1.scd" SUBCOMMANDS

for sub in $subs; do
	page=$man/busypoll-$sub.1.scd
	if [ ! -f "$page" ]; then
		fail "no manual page for 'busypoll $sub': write man/busypoll-$sub.1.scd (see man/busypoll-rr.1.scd)"
		continue
	fi
	"$BUSYPOLL" "$sub" --help >"$tmp/help" 2>&1 || fail "busypoll $sub --help exited $?"
	help_terms <"$tmp/help" >"$tmp/help.terms"
	grep -q . "$tmp/help.terms" || fail "found no option in \`busypoll $sub --help\`"
	compare "busypoll $sub" "$page" COMMANDS
	head -n 1 "$page" | grep -qx "busypoll-$sub(1)" || fail "$(basename "$page")'s first line is not busypoll-$sub(1)"
done
for page in "$man"/busypoll-*.1.scd; do
	sub=$(basename "$page" .1.scd)
	sub=${sub#busypoll-}
	grep -qxF "$sub" <<<"$subs" || fail "man/busypoll-$sub.1.scd is for a subcommand \`busypoll --help\` does not list"
done

# ---- libbusypoll(3) and the headers ----
public_functions "$tmp/api" || fail "the public headers do not compile: $(head -c 400 "$tmp/api.err")"
for f in $(cat "$tmp/api.names" "$tmp/api.inline" 2>/dev/null); do
	grep -qw "$f" "$man/libbusypoll.3.scd" ||
		fail "libbusypoll(3) does not mention $f ($(awk -v n="$f" '$1 == n { print "include/busypoll/" $2 }' "$tmp/api")): describe it in man/libbusypoll.3.scd"
done

finish "manual pages agree with --help of busypoll and $(echo $subs | wc -w) subcommands, and with the headers"
