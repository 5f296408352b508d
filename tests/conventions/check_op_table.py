#!/usr/bin/env python3
"""The op table (core/trace/OpList.h, as `faultline ops --json` prints it) against the places that
name ops without reading it: the trace v1 op table of docs/formats.md (one row per op) and the
capture package's aten mapping (every trace op it writes must be in the table). An op added to
one and not the others fails here.

Usage: check_op_table.py SOURCE_ROOT (--faultline EXE | --ops-json FILE)
"""
import json
import os
import re
import subprocess
import sys


def table_ops(args):
    if args[0] == "--faultline":
        out = subprocess.run([args[1], "ops", "--json"], capture_output=True, text=True, check=True).stdout
    else:
        with open(args[1]) as f:
            out = f.read()
    return [op["name"] for op in json.loads(out)["ops"]]


def documented_ops(root):
    """The op names in the first column of docs/formats.md's trace v1 op table (### Ops)."""
    with open(os.path.join(root, "docs", "formats.md")) as f:
        text = f.read()
    start = text.find("### Ops")
    if start < 0:
        return set()
    names = set()
    in_table = False
    for line in text[start:].splitlines()[1:]:
        if line.startswith("| op |"):
            in_table = True
            continue
        if in_table:
            if not line.startswith("|"):
                break
            names.update(re.findall(r"`([a-z_]+)`", line.split("|")[1]))
    return names


def captured_ops(root):
    """(name, where) of every trace op the capture package writes."""
    found = []
    package = os.path.join(root, "python", "faultline_capture")
    for name in sorted(os.listdir(package)) if os.path.isdir(package) else []:
        path = os.path.join(package, name)
        if not name.endswith(".py"):
            continue
        with open(path) as f:
            for n, line in enumerate(f, 1):
                for op in re.findall(r'Mapped\("([a-z_]+)"', line):
                    found.append((op, "%s:%d" % (os.path.relpath(path, root), n)))
                for op in re.findall(r'"c10d::\w+":\s*"([a-z_]+)"', line):
                    found.append((op, "%s:%d" % (os.path.relpath(path, root), n)))
    return found


def main(argv):
    if len(argv) != 4 or argv[2] not in ("--faultline", "--ops-json"):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    root = argv[1]
    ops = table_ops(argv[2:])
    problems = []
    documented = documented_ops(root)
    for op in ops:
        if op not in documented:
            problems.append("docs/formats.md: op '%s' of the op table has no row in the trace v1 op table" % op)
    for op in sorted(documented - set(ops)):
        problems.append("docs/formats.md: op '%s' is documented but not in the op table" % op)
    for op, where in captured_ops(root):
        if op not in ops:
            problems.append("%s: the capture package writes op '%s', which is not in the op table" % (where, op))
    for p in problems:
        print(p)
    print("op table: %d op(s), %d problem(s)" % (len(ops), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
