"""The detection floor of a real training step (issue 22's goals), measured by
`faultline benchmark --trace` on a tiny GPT step with AdamW recorded from PyTorch's CPU kernels,
float32 and bfloat16: the unmodified capture has 0 false alarms; with the golden model alone at
least 99% of the single flipped bits in the sign, exponent and top two mantissa bits of the GEMMs'
and the optimizer update's outputs are seen, and every flip at every position in ops judged bit
for bit; with a CPU rerun peer (`rerun --repeat 2`) every op is judged by it and every flip at
every position is seen. Prints the figures."""
import json
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
import capture_support as cs  # noqa: E402
import faultline_capture  # noqa: E402

work = cs.tmpdir()
GOAL = ("sign", "exponent", "mantissa_top2")
OPTIMIZER = {"add", "sub", "mul", "div", "sqrt", "addcmul", "addcdiv", "lerp"}


def floor(trace, *options):
    rc, out, err = cs.run_faultline("benchmark", "--trace", trace, "--suspect", "cpu0", "--json", "--quiet",
                                    "--elements", "6", *options)
    cs.check(rc in (0, 1), "benchmark --trace %s: exit %d: %s" % (trace, rc, err.strip()))
    return rc, json.loads(out)


def rate(rows, pick, classes):
    planted = detected = 0
    for r in rows:
        if pick(r):
            for c in classes:
                planted += r["by_class"].get(c, {}).get("planted", 0)
                detected += r["by_class"].get(c, {}).get("detected", 0)
    return detected, planted


for dtype in (torch.float32, torch.bfloat16):
    tag = str(dtype)[6:]
    torch.manual_seed(0)
    model = cs.TinyGpt().to(dtype)
    idx, targets = cs.gpt_batch()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    trace = os.path.join(work, "gpt-%s.h5" % tag)
    with faultline_capture.record(trace, "cpu0", model=model):
        optimizer.zero_grad()
        cs.gpt_step(model, idx, targets)
        optimizer.step()

    rc, f = floor(trace)
    rows = f["rows"]
    cs.check(rc == 0 and not f["false_alarms"], "%s: false alarms on the clean step: %s" % (tag, f["false_alarms"]))
    cs.check(f["judged_ops"] >= 0.95 * f["recorded_ops"], "%s: judged %d of %d" % (tag, f["judged_ops"],
                                                                                  f["recorded_ops"]))
    gemm = rate(rows, lambda r: r["op"] == "gemm", GOAL)
    opt = rate(rows, lambda r: r["op"] in OPTIMIZER, GOAL)
    exact = rate(rows, lambda r: r["judge"] == "golden_exact", GOAL + ("mantissa_rest",))
    cs.check(gemm[1] > 0 and gemm[0] >= 0.99 * gemm[1], "%s: GEMM flips seen %d/%d" % (tag, *gemm))
    cs.check(opt[1] > 0 and opt[0] >= 0.99 * opt[1], "%s: optimizer flips seen %d/%d" % (tag, *opt))
    cs.check(exact[1] > 0 and exact[0] == exact[1], "%s: bit-for-bit ops saw %d/%d" % (tag, *exact))
    # The bound is not a formality: low mantissa bits of bounded ops are not all seen.
    rest = rate(rows, lambda r: r["judge"] == "golden_bound", ("mantissa_rest",))
    cs.check(rest[0] < rest[1], "%s: every low mantissa flip seen within a bound: %d/%d" % (tag, *rest))
    print("%s: %d of %d ops judged, 0 false alarms; golden alone: GEMM %d/%d, optimizer %d/%d of the sign, "
          "exponent and top two mantissa flips, bit-for-bit ops %d/%d of all flips" % (
              tag, f["judged_ops"], f["recorded_ops"], *gemm, *opt, *exact))

    p = subprocess.run([sys.executable, "-m", "faultline_capture", "rerun", trace, "peer", "cpu", "--repeat", "2"],
                       capture_output=True, text=True)
    cs.check(p.returncode == 0, "rerun: %s" % p.stderr)
    rc, g = floor(trace, "--peer", "peer")
    everything = rate(g["rows"], lambda r: True, GOAL + ("mantissa_rest",))
    by_peer = sum(r["ops"] for r in g["rows"] if r["judge"] == "peer")
    cs.check(rc == 0 and not g["false_alarms"], "%s: false alarms with the peer: %s" % (tag, g["false_alarms"]))
    cs.check(everything[0] == everything[1] > 0, "%s: with the peer %d/%d flips seen" % (tag, *everything))
    cs.check(by_peer == g["floor_ops"] == g["recorded_ops"],
             "%s: %d of %d ops judged by the peer (%d recorded)" % (tag, by_peer, g["floor_ops"], g["recorded_ops"]))
    print("%s: with a rerun peer: %d ops judged by it, %d/%d flips seen" % (tag, by_peer, *everything))

print("detection floor: ok")
