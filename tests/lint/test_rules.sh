#!/bin/bash
# SPDX-License-Identifier: MIT
# The rules the tests keep (issue 18), checked on the tree itself:
#  - no cmocka skip(): cmocka 1.1.5 reports a skipped test as passed (use
#    bpt_skip_part, and bpt_unit_exit in main, so the program exits 77);
#  - every mutant in tests/mutants/ still applies to the code (tests/mutants/run.py
#    --check): code that moved on shows here, in every `make test`, not only when
#    `make mutants` runs;
#  - every include guard in src/ and include/ names its header's path
#    (check-guards.sh), and every path a comment there cites exists
#    (check-paths.py): names true to the tree after a file moves (issue 21).
#    Each rule also runs on a copy of the tree with a violation planted, and
#    must fail there naming it: a rule that cannot fail is no rule.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
fails=0
fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

hits=$(grep -nE '(^|[^_a-z])skip\(\)' "$src"/tests/unit/*.c "$src"/tests/integration/*.c 2>/dev/null)
if [ -n "$hits" ]; then
	fail "cmocka skip() reports a pass; use bpt_skip_part (tests/lib/bptest.h):
$hits"
else
	echo "ok   no cmocka skip()"
fi

if out=$(python3 "$src/tests/mutants/run.py" --check 2>&1); then
	echo "ok   $(echo "$out" | tail -1 | sed 's/^mutants: //')"
else
	fail "mutants that no longer apply (re-target them):
$out"
fi

if out=$("$here/check-guards.sh" "$src" 2>&1); then
	echo "ok   $out"
else
	fail "include guards that do not name their path:
$out"
fi
if out=$(python3 "$here/check-paths.py" "$src" 2>&1); then
	echo "ok   $out"
else
	fail "comments that cite paths that do not exist:
$out"
fi

# The two rules fail on a planted violation, and only on it.
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# planted RULE WANT FILE LINE...: a copy of the tree with FILE's lines replaced by
# LINE... (or a new FILE); RULE must fail on it and say WANT.
planted() {
	local rule=$1 want=$2 file=$3 got
	shift 3
	rm -rf "$tmp/t" && mkdir -p "$tmp/t" && cp -r "$src/src" "$src/include" "$src/docs" "$src/tests" "$src/fuzz" "$src/bench" "$src/man" "$src/bpf" "$tmp/t/" || exit 1
	mkdir -p "$(dirname "$tmp/t/$file")" && printf '%s\n' "$@" >"$tmp/t/$file"
	if got=$($rule "$tmp/t" 2>&1); then
		fail "planted in $file: $(basename "${rule##* }") passed"
	elif ! grep -qF -- "$want" <<<"$got"; then
		fail "planted in $file: $(basename "${rule##* }") does not say '$want': $got"
	fi
}
guards=$here/check-guards.sh
paths="python3 $here/check-paths.py"
planted "$guards" "src/tools/common/emit.h: include guard BP_TOOLS_EMIT_H names another path; want BP_TOOLS_COMMON_EMIT_H" \
	src/tools/common/emit.h '#ifndef BP_TOOLS_EMIT_H' '#define BP_TOOLS_EMIT_H' '#endif'
planted "$guards" "src/core/planted.h: no include guard" src/core/planted.h '/* no guard */' 'int planted(void);'
planted "$guards" "src/core/planted.h: no include guard" src/core/planted.h '#ifndef BP_CORE_PLANTED_H' '#define BP_CORE_OTHER_H'
planted "$paths" "src/core/planted.c:2: cites tools/common/gone.h" src/core/planted.c '/* A file that moved:' ' * tools/common/gone.h. */'
planted "$paths" "src/core/planted.c:1: cites docs/gone.md" src/core/planted.c '// docs/gone.md'
# ... and nothing else: a string, another project's file and a glob are not stale paths.
rm -rf "$tmp/t" && mkdir -p "$tmp/t" && cp -r "$src/src" "$src/include" "$src/docs" "$src/tests" "$src/fuzz" "$src/bench" "$src/man" "$src/bpf" "$tmp/t/"
printf '%s\n' '/* linux/include/linux/gone.h, liburing/src/gone.h, backends/uring*.c, tests/unit/test_opt */' \
	'const char *s = "tools/common/gone.h";' >"$tmp/t/src/core/planted.c"
out=$(python3 "$here/check-paths.py" "$tmp/t" 2>&1) || fail "check-paths refused what is not a stale path: $out"

[ "$fails" -eq 0 ] || exit 1
echo "PASS"
