#!/usr/bin/env python3
"""Type-checks the capture package (ROOT/python/faultline_capture) with mypy, configured by
ROOT/pyproject.toml ([tool.mypy]). Prints each finding as FILE:LINE: error: message and exits 1
when there is any, 0 when there is none, 2 when mypy is missing or the usage is wrong.

mypy is Debian's (the `mypy` package, installed by scripts/setup-deps), run as `python3 -m mypy`
with the interpreter running this script, so that it sees the same torch, numpy and h5py.
Its cache goes to a temporary directory (or $MYPY_CACHE_DIR): nothing is written into the tree.
"""
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

PACKAGE = os.path.join("python", "faultline_capture")


def main(argv):
    if len(argv) != 2 or not os.path.isfile(os.path.join(argv[1], "pyproject.toml")):
        print("usage: check_python_types.py SOURCE_ROOT (with a pyproject.toml)", file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    if importlib.util.find_spec("mypy") is None:
        print("check_python_types: mypy not found for %s: run scripts/setup-deps as root to install it"
              % sys.executable, file=sys.stderr)
        return 2
    package = os.path.join(root, PACKAGE)
    if not os.path.isdir(package):
        print("check_python_types: no package at %s" % package, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="faultline-mypy.") as scratch:
        cache = os.environ.get("MYPY_CACHE_DIR") or scratch
        cmd = [sys.executable, "-m", "mypy", "--config-file", os.path.join(root, "pyproject.toml"),
               "--cache-dir", cache, "--no-error-summary", "--show-error-codes", package]
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
    findings = [line for line in p.stdout.splitlines() if re.match(r"^[^:\s][^:]*:\d+: error: ", line)]
    for line in findings:
        print(line)
    if p.returncode not in (0, 1) or (p.returncode == 1 and not findings):
        print("check_python_types: mypy exited %d: %s" % (p.returncode, (p.stderr or p.stdout).strip()),
              file=sys.stderr)
        return 2
    print("python types (mypy): %d finding(s)" % len(findings))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
