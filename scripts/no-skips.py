#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fail when ctest skipped any test: on the CI machine every test must run.

    scripts/no-skips.py JUNIT.xml

JUNIT.xml is what `ctest --output-junit` wrote. A test counts as skipped when
ctest did not run it to a verdict (status "notrun": SKIP_RETURN_CODE 77, a
missing program, a failed requirement) or marked it <skipped>. Each is listed
with the reason the test printed (its last "SKIP" line). Exit 0 when none was
skipped, 1 when some were, 2 when the file is not ctest's JUnit output.
"""
import sys
import xml.etree.ElementTree as ET


def reason(case):
    out = case.findtext("system-out") or ""
    lines = [l.strip() for l in out.splitlines() if l.strip().startswith("SKIP")]
    if lines:
        return lines[-1]
    sk = case.find("skipped")
    if sk is not None and sk.get("message"):
        return sk.get("message")
    return "no reason printed"


def main(argv):
    if len(argv) != 2:
        print("usage: no-skips.py JUNIT.xml", file=sys.stderr)
        return 2
    try:
        root = ET.parse(argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"no-skips.py: cannot read {argv[1]}: {e}; did ctest run with --output-junit?", file=sys.stderr)
        return 2
    cases = root.iter("testcase")
    total = 0
    skipped = []
    for c in cases:
        total += 1
        name = c.get("name", "?")
        if (c.get("status") == "notrun" or c.find("skipped") is not None):
            skipped.append((name, reason(c)))
    if total == 0:
        print(f"no-skips.py: {argv[1]} lists no tests", file=sys.stderr)
        return 2
    if not skipped:
        print(f"no-skips: all {total} tests ran (none skipped)")
        return 0
    print(f"no-skips: {len(skipped)} of {total} tests were skipped on a machine where every test must run:",
          file=sys.stderr)
    for name, why in skipped:
        print(f"  {name}: {why}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
