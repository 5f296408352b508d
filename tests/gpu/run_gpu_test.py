#!/usr/bin/env python3
"""Runs one Qt Test executable of the `gpu` label and turns its result into CTest's terms:

- it failed (non-zero exit)       -> that exit code: a failure, even when other functions skipped;
- every test function skipped     -> 77 (SKIP_RETURN_CODE): CTest reports "skipped", with the
                                     reasons printed above;
- anything else                   -> 0: passed (functions that skipped are listed at the end).

initTestCase/cleanupTestCase do not count as test functions, except that a skip in initTestCase
skips them all. Usage: run_gpu_test.py EXECUTABLE [ARGS...]
"""
import re
import subprocess
import sys

SKIP_EXIT = 77
LINE = re.compile(r"^(PASS|FAIL!|SKIP|XFAIL|XPASS|BPASS|BFAIL|BXPASS|BXFAIL)\s*:\s*\S+::(\w+)\(")
FIXTURES = {"initTestCase", "cleanupTestCase"}


def main(argv):
    if len(argv) < 2:
        print("usage: run_gpu_test.py EXECUTABLE [ARGS...]", file=sys.stderr)
        return 2
    p = subprocess.run(argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    sys.stdout.write(p.stdout)
    if p.returncode != 0:
        return p.returncode
    passed, skipped = set(), set()
    for line in p.stdout.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        result, function = m.groups()
        if result == "SKIP":
            skipped.add(function)
        elif function not in FIXTURES:
            passed.add(function)
    if skipped and not passed:
        print(f"run_gpu_test: every test function skipped ({', '.join(sorted(skipped))})")
        return SKIP_EXIT
    if skipped:
        print(f"run_gpu_test: passed; skipped: {', '.join(sorted(skipped))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
