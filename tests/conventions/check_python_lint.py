#!/usr/bin/env python3
"""Checks every Python file under ROOT's Python folders (the capture package, the tests and their
fixtures, the benchmarks, samples, and the scripts written in Python) with ruff, configured by
ROOT/pyproject.toml ([tool.ruff]). Prints each finding as FILE:LINE:COL: CODE message and exits 1
when there is any, 0 when there is none, 2 when ruff is missing or the usage is wrong.

ruff is looked for in $RUFF (only there, when set), then in /opt/faultline-tools/bin (where
scripts/setup-deps installs the version pinned in pyproject.toml), then on PATH.
Fix with: /opt/faultline-tools/bin/ruff check --fix ROOT (then by hand what it cannot fix).
"""
import os
import re
import shutil
import subprocess
import sys

PYTHON_FOLDERS = ("python", "tests", "bench", "resources")
SCRIPT_FOLDER = "scripts"  # executables without a .py suffix: those whose #! line names python
TOOLS_RUFF = "/opt/faultline-tools/bin/ruff"


def find_ruff():
    if "RUFF" in os.environ:
        candidates = [os.environ["RUFF"]]
    else:
        candidates = [TOOLS_RUFF, shutil.which("ruff") or ""]
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def pinned_version(root):
    """The ruff version pyproject.toml's `lint` extra pins, or None."""
    try:
        with open(os.path.join(root, "pyproject.toml"), encoding="utf-8") as f:
            match = re.search(r'"ruff==([0-9][0-9.]*)"', f.read())
    except OSError:
        return None
    return match.group(1) if match else None


def python_scripts(root):
    folder = os.path.join(root, SCRIPT_FOLDER)
    if not os.path.isdir(folder):
        return []
    found = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not os.path.isfile(path) or name.endswith(".py"):
            continue
        with open(path, "rb") as f:
            first = f.readline()
        if first.startswith(b"#!") and b"python" in first:
            found.append(path)
    return found


def main(argv):
    if len(argv) != 2 or not os.path.isfile(os.path.join(argv[1], "pyproject.toml")):
        print("usage: check_python_lint.py SOURCE_ROOT (with a pyproject.toml)", file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    ruff = find_ruff()
    if not ruff:
        where = "$RUFF=" + os.environ["RUFF"] if "RUFF" in os.environ else TOOLS_RUFF + " or PATH"
        print("check_python_lint: ruff not found (%s): run scripts/setup-deps as root to install it" % where,
              file=sys.stderr)
        return 2
    version = subprocess.run([ruff, "--version"], capture_output=True, text=True).stdout.strip()
    pin = pinned_version(root)
    if pin and version != "ruff " + pin:
        print("check_python_lint: warning: %s is %s, pyproject.toml pins %s (scripts/setup-deps installs it)"
              % (ruff, version, pin), file=sys.stderr)
    targets = [os.path.join(root, d) for d in PYTHON_FOLDERS if os.path.isdir(os.path.join(root, d))]
    targets += python_scripts(root)
    if not targets:
        print("check_python_lint: no Python folder under %s" % root, file=sys.stderr)
        return 2
    # --no-cache: CI checks out a read-only-minded tree; nothing is written into it.
    cmd = [ruff, "check", "--no-cache", "--config", os.path.join(root, "pyproject.toml"),
           "--output-format", "concise", "--force-exclude", *targets]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
    findings = [line for line in p.stdout.splitlines() if re.match(r"^[^:\s][^:]*:\d+:\d+: ", line)]
    for line in findings:
        print(line)
    if p.returncode not in (0, 1) or (p.returncode == 1 and not findings):
        print("check_python_lint: %s exited %d: %s" % (ruff, p.returncode, (p.stderr or p.stdout).strip()),
              file=sys.stderr)
        return 2
    print("python lint (%s): %d finding(s)" % (version, len(findings)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
