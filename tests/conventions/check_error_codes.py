#!/usr/bin/env python3
"""Checks that every error core/ makes carries its code (core/Result.h's ErrorCode): each
`Error{...}` names an `ErrorCode::` or passes on another error's `.code` (or a `code` variable).
Callers decide by code, never by message text, so an error without one would read as `Failed`.
Prints FILE:LINE: text for each and exits 1 when there is any, else 0; 2 on a wrong usage.
"""
import os
import re
import sys

FOLDER = "core"
SUFFIXES = (".cpp", ".h")
START = re.compile(r"\bError\{")
CODED = re.compile(r"ErrorCode::|\bcode\b")


def uncoded(text):
    """(line, first line of the braces) of each Error{...} in `text` without a code."""
    found = []
    for m in START.finditer(text):
        i, depth = m.end(), 1
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        body = text[m.end():i - 1]
        if not CODED.search(body):
            line = text.count("\n", 0, m.start()) + 1
            found.append((line, text[m.start():].split("\n", 1)[0].strip()))
    return found


def main(argv):
    if len(argv) != 2 or not os.path.isdir(os.path.join(argv[1], FOLDER)):
        print("usage: check_error_codes.py SOURCE_ROOT (with a core/ folder)", file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    found = []
    for base, _, files in os.walk(os.path.join(root, FOLDER)):
        for name in sorted(files):
            if name.endswith(SUFFIXES):
                path = os.path.join(base, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for line, text in uncoded(f.read()):
                        found.append("%s:%d: %s" % (os.path.relpath(path, root), line, text))
    for line in sorted(found):
        print(line)
    print("error codes: %d error(s) without a code" % len(found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
