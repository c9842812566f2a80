#!/bin/bash
# SPDX-License-Identifier: MIT
# The rules the tests keep (issue 18), checked on the tree itself:
#  - no cmocka skip(): cmocka 1.1.5 reports a skipped test as passed (use
#    bpt_skip_part, and bpt_unit_exit in main, so the program exits 77);
#  - every mutant in tests/mutants/ still applies to the code (tests/mutants/run.py
#    --check): code that moved on shows here, in every `make test`, not only when
#    `make mutants` runs.
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

[ "$fails" -eq 0 ] || exit 1
echo "PASS"
