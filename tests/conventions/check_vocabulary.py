#!/usr/bin/env python3
"""Checks that replay's vocabularies (core/replay/ReplayVocabulary.h: verdicts, run outcomes,
bisect verdicts and judges, what stopped an adaptive run) are never compared as strings outside
their parsers: C++ code compares the enums, and reads a word once, at the edge, with parse*().

Flags a comparison (== or !=) of a string literal holding one of those words in core/, views/,
app/ and kernels/ (ReplayVocabulary.cpp, the parser, excepted). Words that other vocabularies
share ("none", "ok", "error", "hang", "crash", ...) are not checked: only the words that belong
to replay alone. Prints FILE:LINE: text for each and exits 1 when there is any, else 0; 2 on a
wrong usage.
"""
import os
import re
import sys

FOLDERS = ("core", "views", "app", "kernels")
SUFFIXES = (".cpp", ".h", ".cu", ".cuh")
PARSERS = {os.path.join("core", "replay", "ReplayVocabulary.cpp")}
# Words only replay's vocabularies use (a fault model may be named "healthy": FaultModel.cpp
# parses model names, another vocabulary).
WORDS = ("healthy", "transient", "persistent", "device-specific", "mismatch", "diverged", "divergent",
         "golden_exact", "golden_bound")
EXEMPT = {("healthy", os.path.join("core", "replay", "FaultModel.cpp"))}
LITERAL = r'(?:QLatin1String\(|QStringLiteral\(|std::string\(|QString\()?"(%s)"\)?' % "|".join(
    re.escape(w) for w in WORDS)
PATTERN = re.compile(r"(?:==|!=)\s*%s|%s\s*(?:==|!=)" % (LITERAL, LITERAL))


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: check_vocabulary.py SOURCE_ROOT", file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    found = []
    for folder in FOLDERS:
        for base, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if not name.endswith(SUFFIXES):
                    continue
                path = os.path.join(base, name)
                rel = os.path.relpath(path, root)
                if rel in PARSERS:
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        code = line.split("//", 1)[0]
                        for m in PATTERN.finditer(code):
                            word = m.group(1) or m.group(2)
                            if (word, rel) not in EXEMPT:
                                found.append("%s:%d: %s" % (rel, number, line.strip()))
    for line in found:
        print(line)
    print("vocabulary: %d string comparison(s) of replay's words" % len(found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
