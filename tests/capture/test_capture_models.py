"""Small models recorded from PyTorch's own CPU kernels, fp32 and bf16, forward and backward:
`faultline bisect` flags no op; the same step with one op's output corrupted names exactly
that op. Prints the false-alarm count over every judged op."""
import os
import sys

import h5py
import torch

sys.path.insert(0, os.path.dirname(__file__))
import capture_support as cs  # noqa: E402
import faultline_capture  # noqa: E402

aten = torch.ops.aten
work = cs.tmpdir()
judged_total = 0
false_alarms = 0
models = sys.argv[1:] or list(cs.MODELS)

for name in models:
    for dtype in (torch.float32, torch.bfloat16):
        tag = "%s-%s" % (name, str(dtype)[6:])
        # Healthy step: nothing may be flagged.
        model, x = cs.make(name, dtype)
        path = os.path.join(work, tag + ".h5")
        with faultline_capture.record(path, "cpu0", model=model):
            cs.step(model, x)
        rc, report = cs.bisect(path, "cpu0")
        judged = cs.judged(report)
        phases = {o["index"]: o for o in report["ops"]}
        cs.check(len(judged) >= 6, "%s: only %d ops judged" % (tag, len(judged)))
        if name == "sdpa" and hasattr(torch.nn.functional, "scaled_dot_product_attention"):
            # torch 2.x: F.scaled_dot_product_attention reaches the recorder as the kernel it
            # chose (on the CPU _scaled_dot_product_flash_attention_for_cpu), judged as attention.
            cs.check(any(o["op"] == "attention" for o in judged), "%s: no attention op judged; recorded: %s"
                     % (tag, sorted({o["op"] for o in report["ops"]})))
        bad = cs.divergent(report)
        judged_total += len(judged)
        false_alarms += len(bad)
        cs.check(not bad and rc == 0, "%s: healthy capture flagged: %s" % (tag, cs.describe(report, bad)))

        # The same step with one op's output corrupted: the middle addmm call (forward), the
        # last mm call (backward), the first layernorm. A bf16 GEMM recorded from PyTorch's
        # CPU kernels is judged with the narrow-accumulation bound (k 2^-8 of sum |a||b|,
        # loose): a flip that shrinks an element is inside it, so there the defect is the
        # exponent's top bit (x 2^128, or inf / NaN), which any bound sees.
        gemm_bit = 14 if dtype == torch.bfloat16 else None
        cases = [(aten.addmm.default, "middle", "forward addmm", gemm_bit),
                 (aten.mm.default, "last", "backward mm", gemm_bit),
                 (aten.native_layer_norm.default, "first", "forward layernorm", None)]
        for func, which, label, bit in cases:
            counter = cs.FlipBits(func, nth=10**9)
            model, x = cs.make(name, dtype)
            with counter:
                cs.step(model, x)
            if counter.calls == 0:
                continue
            nth = {"first": 0, "middle": counter.calls // 2, "last": counter.calls - 1}[which]
            model, x = cs.make(name, dtype)
            bad_path = os.path.join(work, "%s-corrupt-%s.h5" % (tag, label.replace(" ", "-")))
            flipper = cs.FlipBits(func, nth=nth, bit=bit)
            with flipper:
                with faultline_capture.record(bad_path, "cpu0", model=model):
                    cs.step(model, x)
            cs.check(flipper.flipped, "%s: %s: the corruption never ran" % (tag, label))
            rc, report = cs.bisect(bad_path, "cpu0")
            bad = cs.divergent(report)
            cs.check(rc == 1 and len(bad) == 1, "%s: %s corrupted: divergent ops %s (%s)"
                     % (tag, label, bad, cs.describe(report, bad)))
            op = {o["index"]: o for o in report["ops"]}[bad[0]]
            expected_op = "layernorm" if func is aten.native_layer_norm.default else "gemm"
            cs.check(op["op"] == expected_op and report["first_divergent_op"] == bad[0],
                     "%s: %s corrupted but op %d %s was named" % (tag, label, bad[0], op["op"]))
            # It is the call that was corrupted: the nth recorded call of that aten op.
            with h5py.File(bad_path, "r") as f:
                same = [int(k) for k in sorted(f["ops"]) if f["ops"][k].attrs.get("aten") == func._schema.name]
            cs.check(same.index(bad[0]) == nth, "%s: %s: op %d is call %d of %s, the corrupted one was %d"
                     % (tag, label, bad[0], same.index(bad[0]), func._schema.name, nth))
            print("%s: %s corrupted -> op %d (%s, %s) found" % (tag, label, bad[0], op["name"], op["signature"]))
        print("%s: %d ops judged, none flagged" % (tag, len(judged)))

print("false alarms: %d of %d judged ops over %d captures" % (false_alarms, judged_total, 2 * len(models)))
