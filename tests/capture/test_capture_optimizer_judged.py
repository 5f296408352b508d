"""One training step with its optimizer, recorded from PyTorch's CPU kernels: forward, backward
and optimizer.step() of a transformer block in float32 and bfloat16, with AdamW (foreach=False
and foreach=True), Adam and SGD with momentum. `faultline bisect` maps and judges every op of
the optimizer update (no aten::* left) with no false alarm; a flipped exponent bit in one
parameter update (addcdiv_, _foreach_addcdiv_) and a 25% error in one element of a moment
update (mul_, _foreach_mul_) are found exactly at that op. Prints judged/recorded ops per
capture, and the detection floor of the optimizer's ops: every exponent bit and the top two
mantissa bits flipped in their recorded outputs, found or not."""
import collections
import os
import shutil
import sys

import h5py
import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, os.path.dirname(__file__))
import capture_support as cs  # noqa: E402
import faultline_capture  # noqa: E402

aten = torch.ops.aten

OPTIMIZERS = {
    "adamw": lambda p: torch.optim.AdamW(p, lr=1e-3, weight_decay=0.01, foreach=False),
    "adamw_foreach": lambda p: torch.optim.AdamW(p, lr=1e-3, weight_decay=0.01, foreach=True),
    "adam": lambda p: torch.optim.Adam(p, lr=1e-3, foreach=False),
    "sgd_momentum": lambda p: torch.optim.SGD(p, lr=1e-2, momentum=0.9, foreach=False),
}


def cpu_fused_adam():
    """Whether this torch runs AdamW(fused=True) on the CPU (PyTorch 2.4 and later)."""
    try:
        p = torch.zeros(2, requires_grad=True)
        p.grad = torch.ones(2)
        torch.optim.AdamW([p], fused=True).step()
        return True
    except (RuntimeError, TypeError, ValueError):
        return False


FUSED = cpu_fused_adam()
if FUSED:
    OPTIMIZERS["adamw_fused"] = lambda p: torch.optim.AdamW(p, lr=1e-3, weight_decay=0.01, fused=True)
else:
    print("torch %s has no fused AdamW on the CPU: its step is checked on PyTorch 2.x (scripts/capture-torch2)"
          % torch.__version__)


class Corrupt(TorchDispatchMode):
    """Applies `how` to the output of call `nth` of `func` (element `item` of an in-place foreach
    call's list). Enter it OUTSIDE record(): the recorder sees what the device produced."""

    def __init__(self, func, nth, how, item=0):
        super().__init__()
        self.func, self.nth, self.how, self.item = func, nth, how, item
        self.calls = 0
        self.done = False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is self.func:
            if self.calls == self.nth:
                name = func._schema.name
                in_place_list = name.startswith(("aten::_foreach", "aten::_fused_")) and name.endswith("_")
                t = args[0][self.item] if in_place_list else out
                with torch.no_grad():
                    self.how(t)
                self.done = True
            self.calls += 1
        return out


def flip_exponent(t):
    cs.flip(t, bit=None, count=1)  # bit 27 (float32) / 11 (bfloat16) of the largest element


def off_by_25_percent(t):
    flat = t.view(-1)
    i = int(flat.float().abs().argmax())
    flat[i] = flat[i] * 1.25


def step(name, opt_name, dtype, path=None, corrupt=None):
    """A warm-up step, then the recorded one (forward, backward, optimizer.step())."""
    model, x = cs.make(name, dtype)
    opt = OPTIMIZERS[opt_name](model.parameters())
    cs.step(model, x)
    opt.step()
    opt.zero_grad()
    if path is None:
        return None
    modes = [corrupt] if corrupt else []
    for m in modes:
        m.__enter__()
    try:
        with faultline_capture.record(path, "cpu0", model=model):
            cs.step(model, x)
            opt.step()
    finally:
        for m in reversed(modes):
            m.__exit__(None, None, None)
    return model


def optimizer_ops(path):
    """Indices of the ops after the last backward op (the optimizer update), with their aten."""
    with h5py.File(path, "r") as f:
        ops = [(int(k), f["ops"][k].attrs) for k in sorted(f["ops"])]
        last_bw = max(i for i, a in ops if a.get("phase") == "backward")
        return {i: (str(a["op"]), str(a.get("aten", ""))) for i, a in ops if i > last_bw}


def aten_calls(path, aten_name):
    with h5py.File(path, "r") as f:
        return [int(k) for k in sorted(f["ops"]) if f["ops"][k].attrs.get("aten") == aten_name]


# ---- healthy captures: every optimizer op mapped and judged, no false alarm ---------------------

work = cs.tmpdir()
judged_total = recorded_total = alarms = 0
healthy = {}
for opt_name in OPTIMIZERS:
    for dtype in (torch.float32, torch.bfloat16):
        tag = "%s-%s" % (opt_name, str(dtype)[6:])
        path = os.path.join(work, tag + ".h5")
        step("block", opt_name, dtype, path)
        healthy[tag] = path
        rc, report = cs.bisect(path, "cpu0")
        judged = cs.judged(report)
        bad = cs.divergent(report)
        judged_total += len(judged)
        recorded_total += len(report["ops"])
        alarms += len(bad)
        cs.check(not bad and rc == 0, "%s: healthy capture flagged: %s" % (tag, cs.describe(report, bad)))
        update = optimizer_ops(path)
        by_index = {o["index"]: o for o in report["ops"]}
        cs.check(update, "%s: no optimizer op recorded" % tag)
        unmapped = sorted({a for i, (op, a) in update.items() if op.startswith("aten::")})
        cs.check(not unmapped, "%s: optimizer calls not mapped: %s" % (tag, unmapped))
        not_ok = [(i, op, by_index[i]["verdict"], by_index[i]["detail"][:80]) for i, (op, _) in update.items()
                  if by_index[i]["verdict"] != "ok"]
        cs.check(not not_ok, "%s: optimizer ops not judged ok: %s" % (tag, not_ok[:5]))
        kinds = collections.Counter(op for op, _ in update.values())
        print("%s: %d of %d ops judged; optimizer update: %d of %d judged (%s)" % (
            tag, len(judged), len(report["ops"]), len(update), len(update),
            ", ".join("%s %d" % kv for kv in sorted(kinds.items()))))
print("false alarms: %d of %d judged ops (%d recorded) over %d captures"
      % (alarms, judged_total, recorded_total, len(healthy)))

# ---- planted corruption, found exactly at its op --------------------------------------------------

cases = [
    # (optimizer, aten call, which call, foreach element, corruption, what)
    ("adamw", aten.addcdiv_.default, 5, 0, flip_exponent, "flipped exponent bit in a parameter update"),
    ("adamw_foreach", aten._foreach_addcdiv_.ScalarList, 0, 3, flip_exponent,
     "flipped exponent bit in a foreach parameter update"),
    ("adamw", aten.mul_.Tensor, 4, 0, off_by_25_percent, "25% error in one element of exp_avg.mul_"),
    ("adamw_foreach", aten._foreach_mul_.Scalar, 1, 2, off_by_25_percent,
     "25% error in one element of _foreach_mul_(exp_avgs)"),
    # None: the last call (the last parameter's update; how many add_ calls a step makes
    # depends on the torch version).
    ("sgd_momentum", aten.add_.Tensor, None, 0, off_by_25_percent, "25% error in one element of an SGD add_"),
]
for opt_name, func, nth_or_last, item, how, what in cases:
    for dtype in (torch.float32, torch.bfloat16):
        nth = nth_or_last
        if nth is None:
            counter = Corrupt(func, -1, how)
            step("block", opt_name, dtype, os.path.join(work, "count.h5"), counter)
            nth = counter.calls - 1
        tag = "%s-%s" % (opt_name, str(dtype)[6:])
        path = os.path.join(work, "%s-corrupt-%s-%d.h5" % (tag, func._schema.name[6:], nth))
        corrupt = Corrupt(func, nth, how, item)
        step("block", opt_name, dtype, path, corrupt)
        cs.check(corrupt.done, "%s: %s: the corruption never ran" % (tag, what))
        rc, report = cs.bisect(path, "cpu0")
        bad = cs.divergent(report)
        cs.check(rc == 1 and len(bad) == 1,
                 "%s: %s: divergent ops %s (%s)" % (tag, what, bad, cs.describe(report, bad)))
        # Exactly the corrupted call (its element, for a foreach call).
        same = aten_calls(path, faultline_capture.mapping.aten_name(func))
        per_call = len(same) // (corrupt.calls or 1) if func._schema.name.startswith("aten::_foreach") else 1
        expected = same[nth * per_call + item]
        cs.check(bad[0] == expected, "%s: %s: op %d named, the corrupted one is %d" % (tag, what, bad[0], expected))
        op = {o["index"]: o for o in report["ops"]}[bad[0]]
        print("%s: %s -> op %d (%s) found, %s element(s) beyond the bound" % (
            tag, what, bad[0], op["op"], op["beyond_tolerance"]))

# The fused step: one parameter's update corrupted inside _fused_adamw_ is named at its adam_param op.
if FUSED:
    for dtype in (torch.float32, torch.bfloat16):
        tag = "adamw_fused-%s" % str(dtype)[6:]
        path = os.path.join(work, "%s-corrupt.h5" % tag)
        corrupt = Corrupt(aten._fused_adamw_.default, 0, flip_exponent, item=3)
        step("block", "adamw_fused", dtype, path, corrupt)
        cs.check(corrupt.done, "%s: the corruption never ran" % tag)
        rc, report = cs.bisect(path, "cpu0")
        bad = cs.divergent(report)
        same = aten_calls(path, "aten::_fused_adamw_")
        expected = same[3 * 3]  # parameter 3's ops: adam_param, adam_exp_avg, adam_exp_avg_sq
        ops_by_index = {o["index"]: o for o in report["ops"]}
        cs.check(rc == 1 and bad == [expected] and ops_by_index[expected]["op"] == "adam_param",
                 "%s: divergent %s, the corrupted parameter update is op %d" % (tag, bad, expected))
        print("%s: flipped exponent bit in parameter 3's fused update -> op %d (adam_param) found"
              % (tag, expected))

# ---- detection floor of the optimizer's ops ---------------------------------------------------------


def watched_bits(dtype):
    return list(range(21, 31)) if dtype == "float32" else list(range(5, 15))  # top 2 mantissa + exponent


def flipped_copy(src, dst, ops, bit, per_op=16):
    """A copy of trace `src` where bit `bit` is flipped in up to `per_op` non-zero finite elements
    of each op's recorded output (a new dataset: inputs that link to the output keep the healthy
    bytes). Returns {op index: elements flipped}."""
    shutil.copyfile(src, dst)
    flipped = {}
    with h5py.File(dst, "r+") as f:
        for i in ops:
            group = f["ops"]["%06d" % i]["outputs"]["cpu0"]
            ds = group["0"]
            attrs = dict(ds.attrs)
            raw = np.array(ds[()])
            bits = raw.view(np.uint32 if raw.dtype.itemsize == 4 else np.uint16).reshape(-1).copy()
            values = (bits.view(np.float32) if raw.dtype.itemsize == 4 else
                      (bits.astype(np.uint32) << 16).view(np.float32))
            chosen = [k for k in range(bits.size) if values[k] != 0 and np.isfinite(values[k])][:per_op]
            for k in chosen:
                bits[k] ^= type(bits[k])(1 << bit)
            del group["0"]
            new = group.create_dataset("0", data=bits.view(raw.dtype).reshape(raw.shape))
            for key, value in attrs.items():
                new.attrs[key] = value
            flipped[i] = len(chosen)
    return flipped


floor = collections.defaultdict(lambda: [0, 0])  # (dtype, op) -> [detected, flips]
for tag in ("adamw-float32", "adamw-bfloat16", "adamw_foreach-bfloat16", "sgd_momentum-float32"):
    dtype = tag.split("-")[1]
    update = optimizer_ops(healthy[tag])
    for bit in watched_bits(dtype):
        dst = os.path.join(work, "%s-flip-%d.h5" % (tag, bit))
        flipped = flipped_copy(healthy[tag], dst, update, bit)
        _, report = cs.bisect(dst, "cpu0")
        for o in report["ops"]:
            if o["index"] in flipped:
                cell = floor[(dtype, o["op"])]
                cell[0] += min(o["beyond_tolerance"] or 0, flipped[o["index"]])
                cell[1] += flipped[o["index"]]
        os.remove(dst)
for dtype in ("float32", "bfloat16"):
    found = sum(v[0] for (d, _), v in floor.items() if d == dtype)
    total = sum(v[1] for (d, _), v in floor.items() if d == dtype)
    print("detection floor, %s optimizer ops: %d of %d flips found (%.2f%%): %s" % (
        dtype, found, total, 100.0 * found / total,
        ", ".join("%s %.2f%%" % (op, 100.0 * v[0] / v[1]) for (d, op), v in sorted(floor.items()) if d == dtype)))
    cs.check(found >= 0.99 * total, "%s: the optimizer's ops see %d of %d flips" % (dtype, found, total))
