#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make mutants: every mutant in tests/mutants/*.mut must be caught by its tests.

    tests/mutants/run.py [--only NAME[,NAME...]] [--jobs N] [--keep] [--no-baseline]
                         [--baseline-commands-only] [--sample K/N] [--shard K/N] [--parallel N]
                         [--list] [--check]

A mutant is a small deliberate bug: exact search/replace edits of the source
(or a unified diff), and the tests that must fail because of it. The runner
copies the tree (the files git knows of, uncommitted changes included) into a
scratch directory under /tmp, configures one build there, then for each mutant:
applies it, rebuilds (incrementally), runs its tests, and puts the file back.

Each mutant rebuilds only the targets its tests run (the program and the test's own
executable, from ctest's listing) and those the previous mutant relinked; a survivor is
tried again after a full build, so a partial build never makes a false survivor.

  killed    a named test failed (or timed out): good
  survived  every named test passed: the tests do not catch that bug
  stale     a search text is not in its file exactly once, or the patch does not
            apply: the code moved on; re-target the mutant (never silently ok)
  broken    the mutated tree does not build, or a test could not run (exit 77):
            the mutant proves nothing; fix it

Before the mutants, each distinct test command runs once on the unmutated copy
and must pass (--no-baseline skips that), so a kill is the mutant's doing.
Exit 0 when every mutant was killed, 1 otherwise, 2 on bad usage or a bad file.
--sample K/N keeps every N-th mutant (from the K-th), before --shard/--parallel split
them: CI checks one third per commit, the third set by the commit count (.ci/run), so
consecutive commits cover them all and every run of one commit checks the same ones.
--check only says whether every mutant still applies to the tree (no build, no
tests: a second's look after a refactor).

File format (tests/mutants/*.mut), one or more mutants per file:

    === name-of-the-mutant
    why: the bug it plants, in one line
    file: src/path/to/file.c
    tests: integration/test_x unit/test_y      ctest names (exact)
    run: tests/integ_test_x --mode epoll:block   or a command in the build dir
    find:
    <the exact text, one or more lines>
    replace:
    <what it becomes (may be empty)>

More find/replace pairs may follow (a bug in two places), each in the file of
the last `file:` line. Or, instead of file/find/replace, `patch:` followed by a
unified diff (-p1). A `tests:`/`run:` line may repeat; at least one is required. Keys start at
column 0; the find/replace/patch text (whole lines, tabs as in the source) runs
until the next key line or '===', trailing blank lines dropped. Lines starting
with '#' outside those blocks are comments.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import json
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, "..", ".."))
KEY = re.compile(r"^(why|file|tests|run|find|replace|patch):(?: (.*))?$")
BLOCKS = ("find", "replace", "patch")
TEST_TIMEOUT = 600


class MutantError(Exception):
    pass


def parse(path):
    mutants = []
    cur = None
    block = None
    with open(path) as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()

    def close_block():
        nonlocal block
        if block:
            body = cur[block]
            while body and not body[-1].strip():
                body.pop()  # the blank lines before the next mutant are not part of it
            text = "".join(l + "\n" for l in body)
            if block == "patch":
                cur["patch"] = text
            elif block == "find":
                cur["edits"].append([cur.get("file"), text, None])
            else:
                cur["edits"][-1][2] = text
            block = None

    for n, line in enumerate(lines, 1):
        where = f"{os.path.relpath(path, SRC)}:{n}"
        if line.startswith("=== "):
            close_block()
            cur = {"name": line[4:].strip(), "where": where, "tests": [], "run": [], "edits": []}
            mutants.append(cur)
            continue
        m = KEY.match(line)
        if m and cur is not None:
            close_block()
            key, val = m.group(1), m.group(2) or ""
            if key in BLOCKS:
                if val:
                    raise MutantError(f"{where}: '{key}:' takes its text on the lines after it")
                if key == "find" and not cur.get("file"):
                    raise MutantError(f"{where}: 'find:' before any 'file:'")
                if key == "replace" and (not cur["edits"] or cur["edits"][-1][2] is not None):
                    raise MutantError(f"{where}: 'replace:' without its 'find:'")
                if key == "find" and cur["edits"] and cur["edits"][-1][2] is None:
                    raise MutantError(f"{where}: 'find:' after a 'find:' without its 'replace:'")
                cur[key] = []
                block = key
            elif key == "tests":
                cur["tests"] += val.split()
            elif key == "run":
                cur["run"].append(val)
            else:
                cur[key] = val
            continue
        if block:
            cur[block].append(line)
        elif line.strip() and not line.startswith("#"):
            raise MutantError(f"{where}: not a key line and not inside find/replace/patch: {line!r}")
    close_block()
    for m in mutants:
        w = m["where"]
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", m["name"]):
            raise MutantError(f"{w}: mutant name {m['name']!r}: lower case, digits and '-' only")
        if not m.get("why"):
            raise MutantError(f"{w}: {m['name']}: no 'why:'")
        if not m["tests"] and not m["run"]:
            raise MutantError(f"{w}: {m['name']}: no 'tests:' or 'run:'")
        if "patch" in m:
            if m["edits"] or "file" in m:
                raise MutantError(f"{w}: {m['name']}: either patch, or file/find/replace")
        elif not m["edits"] or m["edits"][-1][2] is None:
            raise MutantError(f"{w}: {m['name']}: needs file, find and replace (or patch)")
        for f, find, repl in m["edits"]:
            if find == repl:
                raise MutantError(f"{w}: {m['name']}: a replace is the same as its find")
            if not find:
                raise MutantError(f"{w}: {m['name']}: an empty find")
    return mutants


def sh(cmd, cwd, log, env=None, timeout=None):
    with open(log, "ab") as out:
        out.write(f"$ {cmd if isinstance(cmd, str) else ' '.join(cmd)}\n".encode())
        out.flush()
        try:
            p = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env, timeout=timeout,
                               shell=isinstance(cmd, str))
            return p.returncode
        except subprocess.TimeoutExpired:
            out.write(b"\n(timed out)\n")
            return None


def tail(path, n=25):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


class Scratch:
    def __init__(self, jobs, keep):
        self.jobs = jobs
        self.keep = keep
        self.dir = tempfile.mkdtemp(prefix=f"bp-mutants-{os.getpid()}-", dir="/tmp")
        self.src = os.path.join(self.dir, "src")
        self.build = os.path.join(self.dir, "build")
        self.log = os.path.join(self.dir, "log")
        os.makedirs(self.log)

    def populate(self):
        files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=SRC, check=True,
                               stdout=subprocess.PIPE).stdout.decode().split("\0")
        for rel in files:
            if not rel or rel.startswith("build/") or rel.startswith("build-"):
                continue
            src = os.path.join(SRC, rel)
            if not os.path.isfile(src):
                continue  # deleted in the working tree
            dst = os.path.join(self.src, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(src, dst)

    def configure(self):
        log = os.path.join(self.log, "configure.log")
        if sh(["cmake", "-S", self.src, "-B", self.build, "-DCMAKE_BUILD_TYPE=RelWithDebInfo"], self.dir, log):
            raise MutantError(f"cmake configure failed:\n{tail(log)}")

    def compile(self, log, targets=None):
        """Build the tree, or only the named targets (with what they link). True if it built."""
        cmd = ["cmake", "--build", self.build, "-j", str(self.jobs)]
        if targets:
            cmd += ["--target"] + sorted(targets)
        return sh(cmd, self.dir, log) == 0

    def load_targets(self):
        """What a check runs, as build targets: the executable of each ctest test (from
        ctest's own listing) and the target of each buildable name, so a mutant rebuilds
        only what its tests run (a relink of every binary costs more than most tests)."""
        out = subprocess.run(["cmake", "--build", self.build, "--target", "help"], cwd=self.dir,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode()
        self.targets = {m.group(1) for m in re.finditer(r"^\.\.\. (\S+)", out, re.M)}
        j = subprocess.run(["ctest", "--show-only=json-v1"], cwd=self.build, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, env=self.env()).stdout.decode()
        self.test_exe = {}
        try:
            for t in json.loads(j).get("tests", []):
                if t.get("command"):
                    self.test_exe[t["name"]] = t["command"][0]
        except ValueError:
            pass

    def outputs(self):
        """{target: mtime} of the executables under the build dir named as a target."""
        got = {}
        for d, _, files in os.walk(self.build):
            if "CMakeFiles" in d:
                continue
            for f in files:
                t = "busypoll-cli" if f == "busypoll" else f
                path = os.path.join(d, f)
                if t in self.targets and os.access(path, os.X_OK):
                    got[t] = os.stat(path).st_mtime_ns
        return got

    def targets_of(self, m):
        """The targets m's checks run, or None when one of them is not known (build all).
        The program (busypoll-cli) is always among them: most tests start it."""
        want = {"busypoll-cli"}
        for kind, what in checks(m):
            exe = self.test_exe.get(what) if kind == "ctest" else what.split()[0]
            if exe is None:
                return None
            base = os.path.basename(exe)
            base = "busypoll-cli" if base == "busypoll" else base
            if base in self.targets:
                want.add(base)
            elif exe.startswith(self.build) or not os.path.isabs(exe) and "/" in exe:
                return None  # a binary of ours that is not a target by that name
        return want

    def env(self):
        e = dict(os.environ)
        e["BUSYPOLL"] = os.path.join(self.build, "busypoll")
        e["BP_TESTLIB"] = os.path.join(self.src, "tests", "lib")
        e.pop("BP_TEST_VERBOSE", None)
        return e

    def cleanup(self):
        if self.keep:
            print(f"mutants: scratch tree kept in {self.dir}")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def run_ctest(scratch, name, log):
    """'pass', 'fail' or 'skip' for one ctest test, by exact name."""
    junit = os.path.join(scratch.dir, "junit.xml")
    if os.path.exists(junit):
        os.unlink(junit)
    rc = sh(["ctest", "-R", "^" + re.escape(name) + "$", "--output-on-failure", "--timeout", str(TEST_TIMEOUT),
             "--output-junit", junit, "--no-tests=error"], scratch.build, log, env=scratch.env(),
            timeout=TEST_TIMEOUT + 60)
    if rc is None:
        return "fail"
    try:
        cases = list(ET.parse(junit).getroot().iter("testcase"))
    except (OSError, ET.ParseError):
        return "fail" if rc else "skip"
    if len(cases) != 1:
        raise MutantError(f"ctest name {name!r} matches {len(cases)} tests, want exactly 1")
    c = cases[0]
    if c.get("status") == "notrun" or c.find("skipped") is not None:
        return "skip"
    if c.find("failure") is not None or c.get("status") == "fail" or rc:
        return "fail"
    return "pass"


def run_command(scratch, cmd, log):
    rc = sh(cmd, scratch.build, log, env=scratch.env(), timeout=TEST_TIMEOUT)
    if rc is None:
        return "fail"
    if rc == 77:
        return "skip"
    return "pass" if rc == 0 else "fail"


def checks(m):
    return [("ctest", t) for t in m["tests"]] + [("run", r) for r in m["run"]]


def run_check(scratch, check, log):
    kind, what = check
    return run_ctest(scratch, what, log) if kind == "ctest" else run_command(scratch, what, log)


def apply(scratch, m):
    """Apply m to the scratch tree; returns an undo function, or raises MutantError('stale: ...')."""
    if "patch" in m:
        pf = os.path.join(scratch.dir, "mutant.patch")
        with open(pf, "w") as f:
            f.write(m["patch"])
        p = subprocess.run(["patch", "-p1", "--dry-run", "-s", "-f", "-i", pf], cwd=scratch.src,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode:
            raise MutantError("stale: the patch no longer applies: " + p.stdout.decode(errors="replace").strip())
        subprocess.run(["patch", "-p1", "-s", "-f", "-i", pf], cwd=scratch.src, check=True)

        def undo():
            subprocess.run(["patch", "-p1", "-R", "-s", "-f", "-i", pf], cwd=scratch.src, check=True)
        return undo
    try:
        originals, texts = edited(scratch.src, m)
    except MutantError as e:
        raise MutantError(f"stale: {e}")
    for path, text in texts.items():
        with open(path, "w") as f:
            f.write(text)

    def undo():
        for path, text in originals.items():
            with open(path, "w") as f:
                f.write(text)
    return undo


def edited(root, m):
    """m's search/replace edits done in memory on the files under root: (originals, texts)
    by path. Raises MutantError when a search text is not in its file exactly once."""
    originals, texts = {}, {}
    for rel, find, repl in m["edits"]:
        path = os.path.join(root, rel)
        if path not in texts:
            try:
                with open(path) as f:
                    originals[path] = texts[path] = f.read()
            except OSError as e:
                raise MutantError(f"{rel}: {e.strerror}")
        n = texts[path].count(find)
        if n != 1:
            first = find.strip().splitlines()[0] if find.strip() else find
            raise MutantError(f"the search text occurs {n} times in {rel} (want exactly 1): {first!r}")
        texts[path] = texts[path].replace(find, repl)
    return originals, texts


def check_applies(m):
    """Raise MutantError when m no longer applies to the source tree itself."""
    if "patch" in m:
        p = subprocess.run(["patch", "-p1", "--dry-run", "-s", "-f"], cwd=SRC, input=m["patch"].encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode:
            raise MutantError("the patch no longer applies: " + p.stdout.decode(errors="replace").strip())
        return
    edited(SRC, m)


def run_shards(argv, args):
    """--parallel N: this runner N times at once with --shard K/N, each in its own scratch
    tree; each shard's report is printed whole when it ends. Exit: the worst of theirs."""
    n = args.parallel
    rest, skip = [], False
    for a in argv[1:]:
        if skip:
            skip = False
            continue
        if a in ("--parallel", "--jobs", "--shard"):
            skip = True
            continue
        if a.startswith(("--parallel=", "--jobs=", "--shard=")):
            continue
        rest.append(a)
    jobs = str(max(1, args.jobs // n))
    t0 = time.time()
    procs = []
    for k in range(n):
        out = tempfile.TemporaryFile(mode="w+")
        p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--shard", f"{k}/{n}",
                              "--jobs", jobs] + rest, stdout=out, stderr=subprocess.STDOUT)
        procs.append((k, p, out))
    print(f"mutants: {n} shards at once (--jobs {jobs} each)", flush=True)
    worst = 0
    try:
        for k, p, out in procs:
            rc = p.wait()
            out.seek(0)
            sys.stdout.write(f"---- shard {k}/{n} (exit {rc}) ----\n" + out.read())
            sys.stdout.flush()
            worst = max(worst, rc)
    finally:
        for _, p, _ in procs:
            if p.poll() is None:
                p.terminate()
    print(f"mutants: {n} shards ended in {time.time() - t0:.0f} s, exit {worst}")
    return worst


def main(argv):
    ap = argparse.ArgumentParser(description="make mutants")
    ap.add_argument("--only", help="comma-separated mutant names")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--keep", action="store_true", help="keep the scratch tree")
    ap.add_argument("--no-baseline", action="store_true", help="do not run the tests on the unmutated tree first")
    ap.add_argument("--baseline-commands-only", action="store_true",
                    help="run only the run: commands on the unmutated tree first (the ctest tests just "
                         "passed in the same tree, as in CI after make test)")
    ap.add_argument("--sample", help="K/N: only the mutants whose index modulo N is K (0-based), before "
                    "--shard and --parallel split them: CI's share (.ci/run)")
    ap.add_argument("--shard", help="K/N: run only the mutants whose index modulo N is K (0-based)")
    ap.add_argument("--parallel", type=int, default=1,
                    help="run the mutants in N shards at once, each in its own scratch tree and "
                         "with --jobs/N build jobs (most of a test's time is spent waiting)")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--check", action="store_true", help="only check that every mutant still applies")
    args = ap.parse_args(argv[1:])

    mutants = []
    try:
        for fn in sorted(os.listdir(HERE)):
            if fn.endswith(".mut"):
                mutants += parse(os.path.join(HERE, fn))
    except MutantError as e:
        print(f"mutants: {e}", file=sys.stderr)
        return 2
    names = [m["name"] for m in mutants]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        print(f"mutants: names used twice: {', '.join(sorted(dup))}", file=sys.stderr)
        return 2
    if args.only:
        want = args.only.split(",")
        unknown = [w for w in want if w not in names]
        if unknown:
            print(f"mutants: no such mutant: {', '.join(unknown)} (--list shows them)", file=sys.stderr)
            return 2
        mutants = [m for m in mutants if m["name"] in want]
    for opt in ("sample", "shard"):
        part = getattr(args, opt)
        if not part:
            continue
        k, _, n = part.partition("/")
        if not (k.isdigit() and n.isdigit() and int(k) < int(n)):
            print(f"mutants: --{opt} {part}: not K/N with 0 <= K < N", file=sys.stderr)
            return 2
        mutants = [m for i, m in enumerate(mutants) if i % int(n) == int(k)]
    if args.parallel > 1 and not (args.list or args.check):
        return run_shards(argv, args)
    if args.list:
        for m in mutants:
            print(f"{m['name']:<36} {m['why']}")
        return 0
    if not mutants:
        print("mutants: none found in tests/mutants/*.mut", file=sys.stderr)
        return 2
    if args.check:
        stale = 0
        for m in mutants:
            try:
                check_applies(m)
            except MutantError as e:
                stale += 1
                print(f"mutants: STALE: {m['name']} ({m['where']}): {e}", file=sys.stderr)
        print(f"mutants: {len(mutants) - stale} of {len(mutants)} apply")
        return 1 if stale else 0

    scratch = Scratch(args.jobs, args.keep)
    results = []
    t_start = time.time()
    try:
        print(f"mutants: {len(mutants)} mutants; scratch tree {scratch.dir}", flush=True)
        scratch.populate()
        scratch.configure()
        log = os.path.join(scratch.log, "baseline.log")
        if not scratch.compile(log):
            print(f"mutants: the unmutated tree does not build:\n{tail(log)}", file=sys.stderr)
            return 1
        if not args.no_baseline:
            seen = []
            for m in mutants:
                for c in checks(m):
                    if c not in seen and not (args.baseline_commands_only and c[0] == "ctest"):
                        seen.append(c)
            for c in seen:
                t0 = time.time()
                r = run_check(scratch, c, log)
                print(f"  baseline  {c[1]:<60} {r} ({time.time() - t0:.0f} s)", flush=True)
                if r != "pass":
                    print(f"mutants: {c[1]} does not pass on the unmutated tree ({r}); nothing can be "
                          f"concluded from its kills. Log: {log}\n{tail(log)}", file=sys.stderr)
                    return 1
        scratch.load_targets()
        # Targets whose binaries hold the last mutant's code (those its builds relinked):
        # rebuilt with the next mutant, so every binary holds the unmutated tree or the
        # current mutant.
        dirty = set()
        for i, m in enumerate(mutants, 1):
            t0 = time.time()
            mlog = os.path.join(scratch.log, m["name"] + ".log")
            verdict, detail = None, ""
            try:
                undo = apply(scratch, m)
            except MutantError as e:
                verdict, detail = "stale", str(e)[len("stale: "):] if str(e).startswith("stale: ") else str(e)
                undo = None
            if undo:
                try:
                    mine = scratch.targets_of(m)
                    build = None if mine is None else mine | dirty
                    # A survivor of a partial build is tried again after a full one: a test may
                    # run a binary of ours that is not its own (never a false survivor).
                    before, relinked = scratch.outputs(), set()
                    for attempt in ((build, None) if build is not None else (None,)):
                        verdict, detail = None, ""
                        built = scratch.compile(mlog, attempt)
                        now = scratch.outputs()
                        relinked |= {t for t, mt in now.items() if before.get(t) != mt}
                        dirty = relinked
                        if not built:
                            verdict, detail = "broken", "the mutated tree does not build:\n" + tail(mlog, 12)
                            break
                        for c in checks(m):
                            r = run_check(scratch, c, mlog)
                            if r == "fail":
                                verdict, detail = "killed", f"by {c[1]}"
                                break
                            if r == "skip":
                                verdict, detail = "broken", f"{c[1]} skipped (exit 77): the mutant was not tested"
                                break
                        if verdict:
                            break
                        verdict = "survived"
                        detail = "every test passed: " + ", ".join(c[1] for c in checks(m))
                finally:
                    undo()
            results.append((m, verdict, detail))
            print(f"[{i:2}/{len(mutants)}] {verdict:<8} {m['name']:<36} {detail.splitlines()[0] if detail else ''} "
                  f"({time.time() - t0:.0f} s)", flush=True)
            if verdict in ("broken",) and "\n" in detail:
                print("\n".join("           " + l for l in detail.splitlines()[1:]), flush=True)
        # the last build must be of the unmutated tree again for --keep
    except MutantError as e:
        print(f"mutants: {e}", file=sys.stderr)
        return 2
    finally:
        bad = [r for r in results if r[1] != "killed"]
        if results:
            print(f"mutants: {len(results) - len(bad)} of {len(results)} killed in {time.time() - t_start:.0f} s")
        for m, verdict, detail in bad:
            print(f"mutants: {verdict.upper()}: {m['name']} ({m['where']}): {m['why']}: {detail.splitlines()[0]}",
                  file=sys.stderr)
        if bad:
            scratch.keep = True  # the logs say why
            print(f"mutants: logs in {scratch.log}", file=sys.stderr)
        scratch.cleanup()
    return 0 if results and not bad else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
