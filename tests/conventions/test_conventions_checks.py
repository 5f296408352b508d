#!/usr/bin/env python3
"""The convention checks fail when a convention is violated: each check runs on a small tree
with planted violations (and must name each one) and on the same tree without them (and must
pass)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def run(script, root):
    p = subprocess.run([sys.executable, os.path.join(HERE, script), root], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def expect(cond, what, output):
    if not cond:
        print("FAIL:", what)
        print(output)
        sys.exit(1)
    print("ok:", what)


def layering():
    with tempfile.TemporaryDirectory() as root:
        write(root, "core/io/Reader.h", '#pragma once\n#include <vector>\n#include "../Types.h"\n')
        write(root, "core/Types.h", "#pragma once\n")
        write(root, "views/Panel.h", '#pragma once\n#include <QWidget>\n#include "core/Types.h"\n')
        write(root, "kernels/Kernel.cu", '#include "core/Types.h"\n')
        write(root, "app/main.cpp", '#include "views/Panel.h"\n#include "kernels/Kernel.h"\n')
        rc, out = run("check_layering.py", root)
        expect(rc == 0, "layering: a clean tree passes", out)

        write(root, "core/io/Bad.cpp",
              '#include <QString>\n#include "../../views/Panel.h"\n#include "kernels/Kernel.h"\n')
        write(root, "kernels/Bad.cu", '#include "views/Panel.h"\n')
        write(root, "views/Bad.cpp", '#include "kernels/Kernel.h"\n#include "app/main.cpp"\n')
        write(root, "kernels/Kernel.h", "#pragma once\n")
        rc, out = run("check_layering.py", root)
        expect(rc == 1, "layering: planted violations fail the check", out)
        for needle in ("core/io/Bad.cpp:1: core/ must not include Qt",
                       "core/io/Bad.cpp:2: core/ must not include views/",
                       "core/io/Bad.cpp:3: core/ must not include kernels/",
                       "kernels/Bad.cu:1: kernels/ must not include views/",
                       "views/Bad.cpp:1: views/ must not include kernels/",
                       "views/Bad.cpp:2: views/ must not include app/",
                       "layering: 6 violation(s)"):
            expect(needle in out, "layering names " + needle, out)


def formatting():
    with tempfile.TemporaryDirectory() as root:
        shutil.copy(os.path.join(SOURCE_ROOT, ".clang-format"), root)
        write(root, "core/Good.cpp", "int add(int a, int b)\n{\n    return a + b;\n}\n")
        rc, out = run("check_format.py", root)
        expect(rc == 0, "format: a formatted tree passes", out)
        write(root, "core/Bad.cpp", "int add(int a,int b){return a+b;}\n")
        rc, out = run("check_format.py", root)
        expect(rc == 1, "format: an unformatted file fails the check", out)
        expect("core/Bad.cpp:1: not formatted" in out, "format names the file and line", out)
        expect("2 file(s) checked, 1 not formatted" in out, "format counts", out)


def gpu_skips():
    """tests/gpu/run_gpu_test.py: a skip never hides a failure of another test function."""
    wrapper = os.path.join(SOURCE_ROOT, "tests", "gpu", "run_gpu_test.py")
    cases = {
        "all skipped": ("PASS   : T::initTestCase()\nSKIP   : T::a() no CUDA device\n"
                        "SKIP   : T::b() no CUDA device\n", 0, 77),
        "init skipped": ("SKIP   : T::initTestCase() no CUDA device: 35\nPASS   : T::cleanupTestCase()\n", 0, 77),
        "one skipped, one failed": ("SKIP   : T::a() needs 2 GPUs\n"
                                    "FAIL!  : T::b() Compared values are not the same\n", 1, 1),
        "one skipped, one passed": ("SKIP   : T::a() needs 2 GPUs\nPASS   : T::b()\n", 0, 0),
        "all passed": ("PASS   : T::initTestCase()\nPASS   : T::a()\nPASS   : T::cleanupTestCase()\n", 0, 0),
    }
    with tempfile.TemporaryDirectory() as root:
        for name, (output, rc, expected) in cases.items():
            fake = os.path.join(root, name.replace(" ", "_").replace(",", "") + ".sh")
            write(root, os.path.basename(fake), "#!/bin/sh\nprintf '%s'\nexit %d\n" % (output, rc))
            os.chmod(fake, 0o755)
            p = subprocess.run([sys.executable, wrapper, fake], capture_output=True, text=True)
            expect(p.returncode == expected, f"gpu wrapper: {name} -> {expected} (got {p.returncode})",
                   p.stdout + p.stderr)


def core_layers():
    docs = ("# Architecture\n\n## Layers inside core\n\n| layer | folders | builds on |\n|---|---|---|\n"
            "| formats | `core/` (top), `core/io/` | — |\n| trace | `core/trace/` | formats |\n"
            "| replay | `core/replay/` | trace |\n| health | `core/health/` | formats |\n\n## Next\n")
    with tempfile.TemporaryDirectory() as root:
        write(root, "docs/architecture.md", docs)
        write(root, "core/Types.h", "#pragma once\n")
        write(root, "core/io/File.h", '#pragma once\n#include "../Types.h"\n')
        write(root, "core/trace/Trace.h", '#pragma once\n#include "../io/File.h"\n')
        write(root, "core/replay/Bisect.h", '#pragma once\n#include "../trace/Trace.h"\n#include "../io/File.h"\n')
        write(root, "core/health/Log.h", '#pragma once\n#include "../io/File.h"\n')
        rc, out = run("check_layering.py", root)
        expect(rc == 0, "core layers: includes down the layers pass", out)

        write(root, "core/trace/Up.cpp", '#include "../replay/Bisect.h"\n')
        write(root, "core/health/Side.cpp", '#include "../trace/Trace.h"\n')
        write(root, "core/io/Top.cpp", '#include "../replay/Bisect.h"\n')
        write(root, "core/ledger/New.cpp", '#include "../io/File.h"\n')
        rc, out = run("check_layering.py", root)
        expect(rc == 1, "core layers: planted violations fail the check", out)
        for needle in ("core/trace/Up.cpp:1: core layer trace must not include layer replay",
                       "core/health/Side.cpp:1: core layer health must not include layer trace",
                       "core/io/Top.cpp:1: core layer formats must not include layer replay",
                       "core/ledger/New.cpp:1: core/ledger is in no layer",
                       "layering: 4 violation(s)"):
            expect(needle in out, "core layers names " + needle, out)


def op_table():
    ops = {"ops": [{"name": n} for n in ("gemm", "add", "mul")]}
    docs = ("# File formats\n\n### Ops\n\n| op | inputs | parameters |\n|---|---|---|\n"
            "| `gemm` | `[A, B]` | `trans_a` |\n| `add`, `mul` | `[x, y]` | none |\n\nAfter.\n")
    mapping = 'def f():\n    return Mapped("gemm", [], {}, [], None)\n'
    recorder = '_COLLECTIVES = {\n    "c10d::allgather_": "add",\n}\n'
    with tempfile.TemporaryDirectory() as root:
        write(root, "ops.json", json.dumps(ops))
        write(root, "docs/formats.md", docs)
        write(root, "python/faultline_capture/mapping.py", mapping)
        write(root, "python/faultline_capture/recorder.py", recorder)
        args = [sys.executable, os.path.join(HERE, "check_op_table.py"), root, "--ops-json",
                os.path.join(root, "ops.json")]
        p = subprocess.run(args, capture_output=True, text=True)
        expect(p.returncode == 0, "op table: a consistent tree passes", p.stdout + p.stderr)

        write(root, "docs/formats.md", docs.replace("| `add`, `mul` |", "| `add` |") + "\n")
        write(root, "python/faultline_capture/mapping.py", mapping + '    return Mapped("frob", [], {}, [], None)\n')
        write(root, "python/faultline_capture/recorder.py", recorder.replace('"add"', '"scatter"'))
        p = subprocess.run(args, capture_output=True, text=True)
        out = p.stdout + p.stderr
        expect(p.returncode == 1, "op table: an op half added fails the check", out)
        for needle in ("op 'mul' of the op table has no row",
                       "mapping.py:3: the capture package writes op 'frob'",
                       "recorder.py:2: the capture package writes op 'scatter'",
                       "3 problem(s)"):
            expect(needle in out, "op table names " + needle, out)


def python_lint():
    """check_python_lint.py: ruff's findings under the repository's settings fail the check; a
    missing ruff fails it too, saying how to install it."""
    script = os.path.join(HERE, "check_python_lint.py")
    with tempfile.TemporaryDirectory() as root:
        shutil.copy(os.path.join(SOURCE_ROOT, "pyproject.toml"), root)
        write(root, "python/pkg/__init__.py", '"""A package."""\nimport os\n\nHOME = os.sep\n')
        write(root, "tests/capture/test_x.py", "def f(a, b):\n    return a + b\n")
        write(root, "scripts/tool", "#!/usr/bin/env python3\nprint('tool')\n")
        write(root, "scripts/shell", "#!/bin/sh\nimport os; x=1\n")  # not Python: never linted
        rc, out = run("check_python_lint.py", root)
        expect(rc == 0, "python lint: a clean tree passes", out)
        expect("0 finding(s)" in out, "python lint counts none", out)

        write(root, "python/pkg/bad.py", "import os\n\nx = 1; y = 2\n")
        write(root, "tests/capture/test_long.py",
              "def f(a, b):\n    return [a + b for a in range(10) for b in range(10)] + " + "[a, b] + " * 12
              + "[]\n")
        write(root, "bench/tool/run.py", "def f(l):\n    return l\n")
        write(root, "scripts/tool", "#!/usr/bin/env python3\ntry:\n    pass\nexcept:\n    pass\n")
        rc, out = run("check_python_lint.py", root)
        expect(rc == 1, "python lint: planted findings fail the check", out)
        for needle in ("python/pkg/bad.py:1:8: F401", "python/pkg/bad.py:3:6: E702",
                       "tests/capture/test_long.py:2:121: E501", "bench/tool/run.py:1:7: E741",
                       "scripts/tool:4:1: E722", "5 finding(s)"):
            expect(needle in out, "python lint names " + needle, out)
        expect("scripts/shell" not in out, "python lint leaves shell scripts alone", out)

        p = subprocess.run([sys.executable, script, root], capture_output=True, text=True,
                           env=dict(os.environ, RUFF=os.path.join(root, "no-ruff")))
        out = p.stdout + p.stderr
        expect(p.returncode == 2, "python lint: a missing ruff fails the check", out)
        expect("run scripts/setup-deps" in out, "python lint says how to install ruff", out)


def python_types():
    """check_python_types.py: mypy's findings on the capture package under the repository's
    settings fail the check, each named by file and line; a clean package passes."""
    with tempfile.TemporaryDirectory() as root:
        shutil.copy(os.path.join(SOURCE_ROOT, "pyproject.toml"), root)
        write(root, "python/faultline_capture/__init__.py", '"""A package."""\n__version__: str = "1.0"\n')
        write(root, "python/faultline_capture/trace_file.py",
              "def size(path: str) -> int:\n    return len(path)\n")
        rc, out = run("check_python_types.py", root)
        expect(rc == 0, "python types: a clean package passes", out)
        expect("0 finding(s)" in out, "python types counts none", out)

        write(root, "python/faultline_capture/trace_file.py",
              "def size(path: str) -> int:\n    return path\n\n\nclass F:\n    def __init__(self) -> None:\n"
              "        self.f = None\n\n    def open(self) -> None:\n        self.f = open('x')\n")
        rc, out = run("check_python_types.py", root)
        expect(rc == 1, "python types: planted findings fail the check", out)
        for needle in ("trace_file.py:2: error: Incompatible return value", "trace_file.py:10: error:",
                       "2 finding(s)"):
            expect(needle in out, "python types names " + needle, out)


def vocabulary():
    """check_vocabulary.py: a replay word compared as a string fails the check, naming the file
    and line; the parser, comments, other vocabularies' words and enum comparisons pass."""
    with tempfile.TemporaryDirectory() as root:
        write(root, "core/replay/ReplayVocabulary.cpp", 'bool p(std::string s) { return s == "healthy"; }\n')
        write(root, "core/evidence/A.cpp", "if (t.verdict == Verdict::Healthy) {}  // not \"healthy\" == x\n"
              'if (approx == "none") {}\n')
        write(root, "core/replay/FaultModel.cpp", 'if (m == "healthy") {}\n')
        rc, out = run("check_vocabulary.py", root)
        expect(rc == 0, "vocabulary: a clean tree passes", out)
        write(root, "views/B.cpp", 'x;\nif (v == QLatin1String("persistent")) {}\n')
        write(root, "core/fleet/C.cpp", 'bool bad = "device-specific" != row.verdict;\n')
        rc, out = run("check_vocabulary.py", root)
        expect(rc == 1, "vocabulary: planted comparisons fail the check", out)
        for needle in ("views/B.cpp:2:", "core/fleet/C.cpp:1:", "2 string comparison(s)"):
            expect(needle in out, "vocabulary names " + needle, out)


def error_codes():
    """check_error_codes.py: an Error{...} in core/ without a code fails the check, naming the
    file and line; codes given or passed on pass."""
    with tempfile.TemporaryDirectory() as root:
        write(root, "core/io/A.cpp", 'return Error{"x: " + why,\n             ErrorCode::Format};\n'
              "return Error{e.message, e.code};\nreturn Error{{}, code};\n")
        rc, out = run("check_error_codes.py", root)
        expect(rc == 0, "error codes: a coded tree passes", out)
        write(root, "core/replay/B.cpp", 'int x;\nreturn Error{"op " + name + ": " + f(a, {1, 2})};\n')
        rc, out = run("check_error_codes.py", root)
        expect(rc == 1, "error codes: a planted error without a code fails the check", out)
        for needle in ("core/replay/B.cpp:2:", "1 error(s) without a code"):
            expect(needle in out, "error codes names " + needle, out)


if __name__ == "__main__":
    layering()
    core_layers()
    op_table()
    gpu_skips()
    python_lint()
    python_types()
    vocabulary()
    error_codes()
    if shutil.which("clang-format"):
        formatting()
    else:
        print("FAIL: clang-format not found (scripts/setup-deps installs it)")
        sys.exit(1)
