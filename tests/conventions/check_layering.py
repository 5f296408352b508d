#!/usr/bin/env python3
"""Checks the one-way dependencies between the top-level folders (docs/architecture.md):

    core/     no Qt at all, nothing from views/, app/ or kernels/
    kernels/  core only: nothing from views/ or app/
    views/    core and Qt: nothing from kernels/ or app/

Inside core/, the folders are libraries in layers: the table "Layers inside core" of
ROOT/docs/architecture.md names each layer, its folders (`core/` alone meaning the files directly
in core/) and the layers it builds on; a file may include its own layer and the layers below it
(transitively), nothing above or beside.

Every #include of every C++/CUDA source under ROOT is resolved (quoted includes relative to the
including file, then to ROOT) and judged by the folder it lands in; angle-bracket includes are
judged by name (Qt headers start with Q or Qt). Prints one line per violation as
`FILE:LINE: <folder> must not include <what> (#include ...)` and exits 1 when there is any,
0 when there is none, 2 on bad usage.
"""
import os
import re
import sys

SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
QT_HEADER = re.compile(r"^(Q[A-Z]\w*|Qt\w*/.*|Qt\w*|qcustomplot\.h)$")

# folder -> folders it must not include from, and whether Qt is forbidden
RULES = {
    "core": ({"views", "app", "kernels"}, True),
    "kernels": ({"views", "app"}, True),
    "views": ({"kernels", "app"}, False),
}


def top_folder(root, path):
    rel = os.path.relpath(os.path.realpath(path), os.path.realpath(root))
    if rel.startswith(".."):
        return None
    return rel.split(os.sep)[0]


def resolve(root, including_file, target):
    for base in (os.path.dirname(including_file), root):
        candidate = os.path.normpath(os.path.join(base, target))
        if os.path.exists(candidate):
            return candidate
    # Not found on disk: judge it by its spelling relative to the root.
    first = target.split("/")[0]
    return os.path.join(root, target) if first in RULES or first == "app" else None


def core_layers(root):
    """{folder: layer} and {layer: set of layers it may include} from docs/architecture.md
    ({} , {} when the table is not there)."""
    path = os.path.join(root, "docs", "architecture.md")
    if not os.path.exists(path):
        return {}, {}
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start = text.find("## Layers inside core")
    if start < 0:
        return {}, {}
    folder_layer, deps = {}, {}
    for line in text[start:].splitlines()[1:]:
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not line.startswith("|") or cells[0] in ("layer", "") or set(cells[0]) <= set("-"):
            continue
        layer = cells[0].strip("`")
        for folder in re.findall(r"`core/([a-z]*)/?`", cells[1]):
            folder_layer[folder] = layer  # "" is core/ itself
        deps[layer] = {d.strip().strip("`") for d in cells[2].split(",") if d.strip().strip("`") not in ("", "—", "-")}
    closure = {}
    for layer in deps:
        seen, todo = set(), [layer]
        while todo:
            for d in deps.get(todo.pop(), ()):
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        closure[layer] = seen | {layer}
    return folder_layer, closure


def core_folder(root, path):
    """The folder of core/ that `path` is in ("" for core/ itself), or None outside core/."""
    rel = os.path.relpath(os.path.realpath(path), os.path.realpath(root)).split(os.sep)
    if rel[0] != "core":
        return None
    return rel[1] if len(rel) > 2 else ""


def violations(root):
    found = []
    folder_layer, allowed = core_layers(root)
    for folder, (forbidden, no_qt) in RULES.items():
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        kind, target = m.groups()
                        rel = os.path.relpath(path, root)
                        if no_qt and QT_HEADER.match(target):
                            found.append(f"{rel}:{lineno}: {folder}/ must not include Qt ({line.strip()})")
                            continue
                        if kind != '"':
                            continue
                        resolved = resolve(root, path, target)
                        dest = top_folder(root, resolved) if resolved else None
                        if dest in forbidden:
                            found.append(f"{rel}:{lineno}: {folder}/ must not include {dest}/ ({line.strip()})")
                        elif folder == "core" and dest == "core" and folder_layer:
                            src_layer = folder_layer.get(core_folder(root, path))
                            dst_layer = folder_layer.get(core_folder(root, resolved))
                            if src_layer is None or dst_layer is None:
                                where = path if src_layer is None else resolved
                                found.append(f"{rel}:{lineno}: core/{core_folder(root, where)} is in no layer of "
                                             f"docs/architecture.md ({line.strip()})")
                            elif dst_layer not in allowed.get(src_layer, ()):
                                found.append(f"{rel}:{lineno}: core layer {src_layer} must not include layer "
                                             f"{dst_layer} ({line.strip()})")
    return found


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: check_layering.py SOURCE_ROOT", file=sys.stderr)
        return 2
    found = violations(argv[1])
    for v in found:
        print(v)
    print(f"layering: {len(found)} violation(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
