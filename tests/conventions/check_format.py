#!/usr/bin/env python3
"""Checks that every C++/CUDA source under ROOT's source folders is formatted as the pinned
ROOT/.clang-format says (clang-format 14, Debian 12). Prints the files that are not, with the
first differing line, and exits 1 when there is any, 0 when there is none, 2 when clang-format
is missing or the usage is wrong. Fix with: clang-format -i FILE.
"""
import os
import shutil
import subprocess
import sys

SOURCE_FOLDERS = ("app", "core", "kernels", "views", "tests", "bench")
SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh")
SKIP_DIRS = {"build", "corpus", ".git"}


def sources(root):
    for folder in SOURCE_FOLDERS:
        for dirpath, dirnames, files in os.walk(os.path.join(root, folder)):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.join(dirpath, name)


def first_difference(original, formatted):
    a, b = original.splitlines(), formatted.splitlines()
    for i, (x, y) in enumerate(zip(a, b, strict=False), 1):
        if x != y:
            return i, x.strip()
    return min(len(a), len(b)) + 1, ""


def main(argv):
    if len(argv) != 2 or not os.path.isfile(os.path.join(argv[1], ".clang-format")):
        print("usage: check_format.py SOURCE_ROOT (with a .clang-format)", file=sys.stderr)
        return 2
    tool = shutil.which("clang-format")
    if not tool:
        print("check_format: clang-format not found (scripts/setup-deps installs it)", file=sys.stderr)
        return 2
    root = argv[1]
    bad = 0
    checked = 0
    for path in sources(root):
        checked += 1
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            original = f.read()
        formatted = subprocess.run([tool, "--style=file", "--assume-filename=" + path], input=original,
                                   capture_output=True, text=True, errors="surrogateescape", check=True).stdout
        if formatted != original:
            bad += 1
            line, text = first_difference(original, formatted)
            print(f"{os.path.relpath(path, root)}:{line}: not formatted ({text})")
    print(f"format: {checked} file(s) checked, {bad} not formatted")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
