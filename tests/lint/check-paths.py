#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-paths.py [ROOT] - fail when a comment in src/ or include/ cites a path that does not exist.

A path is a word with a slash in it that ends in a file's extension (.c, .h, .md,
.sh, ...) or starts with one of the repository's top folders (src/, tests/, docs/,
...). It may be written from the repository's root (docs/cli.md), from src/
(core/loop.c, tools/common/opt.h), from include/ (busypoll/nic.h), from src/tools/
(common/opt.h, bed/testbed.h) or from the file's own folder; a glob (uring*.c) or a
name without its extension (tests/integration/test_faults_rr, a ctest name) counts
when a file matches. Another project's file is cited with that project first
(linux/include/linux/posix-timers.h, liburing/src/int_flags.h), and a system
header as it is included (linux/falloc.h, sys/epoll.h): those are not ours.

Prints file:line: the path, for each that names nothing here, and exits 1; exits 0
when every cited path exists (a comment naming a file that moved is how a reader
gets lost).
"""
import glob
import os
import re
import sys

EXT = r"(?:c|h|md|sh|py|mut|scd|txt|map|json|cmake|svg)"
TOP = r"(?:src|tests|docs|bench|fuzz|man|include|scripts|debian|examples)"
TOKEN = re.compile(r"(?<![\w./<>$-])((?:[\w.-]+/)+[\w.*-]*\." + EXT + r"|" + TOP + r"/[\w./*-]*)(?![\w/])")
# First folders that are another project's or the system's, never ours.
FOREIGN = {"linux", "liburing", "sys", "asm", "uapi", "netinet", "arpa", "Documentation"}


def comments(text):
    """Yield (line, text) for each comment of C source text, strings and characters skipped."""
    i, n, line = 0, len(text), 1
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j
            yield line, text[i + 2 : j]
            line += text.count("\n", i, j)
            i = j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            yield line, text[i + 2 : j]
            i = j
        elif text[i] in "\"'":
            q, j = text[i], i + 1
            while j < n and text[j] != q and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            if text[i] == "\n":
                line += 1
            i += 1


def exists(root, here, path):
    for base in (root, os.path.join(root, "src"), os.path.join(root, "include"), os.path.join(root, "src", "tools"), here):
        full = os.path.join(base, path)
        if glob.glob(full) or glob.glob(full + ".*"):
            return True
    return False


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    bad = checked = 0
    for top in ("src", "include"):
        for folder, _, files in sorted(os.walk(os.path.join(root, top))):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root)
                checked += 1
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for line, body in comments(text):
                    for k, part in enumerate(body.split("\n")):
                        for m in TOKEN.finditer(part):
                            cited = m.group(1).rstrip(".")
                            if cited.split("/", 1)[0] in FOREIGN or exists(root, folder, cited):
                                continue
                            print(f"{rel}:{line + k}: cites {cited}, which names no file here")
                            bad += 1
    if not checked:
        print(f"check-paths: no sources under {root}/src or {root}/include", file=sys.stderr)
        return 2
    if bad:
        print(f"check-paths: {bad} cited path(s) name no file (moved or renamed? cite where it is now)", file=sys.stderr)
        return 1
    print(f"check-paths: {checked} files, every path their comments cite exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
