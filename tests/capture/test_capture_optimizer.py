"""An optimizer step recorded with the training step: the in-place calls that return nothing
(torch.optim's foreach path, `_foreach_add_` and friends, and the fused optimizers of torch 2.x,
`_fused_adamw_`, `_fused_sgd_`) are written with the tensors they wrote as outputs, so the
updated parameters are in the trace; torch.profiler's markers (which torch.optim enters) are not
ops; rerun on the CPU reproduces every re-run op bit for bit."""
import os
import sys

import h5py
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
import capture_support as cs  # noqa: E402
import faultline_capture  # noqa: E402

work = cs.tmpdir()
configs = [("SGD", {"momentum": 0.9}), ("SGD", {"momentum": 0.9, "foreach": True}),
           ("AdamW", {}), ("AdamW", {"foreach": True}), ("AdamW", {"fused": True}),
           ("SGD", {"momentum": 0.9, "fused": True})]
ran = []
for opt_name, kw in configs:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
    try:
        opt = getattr(torch.optim, opt_name)(model.parameters(), lr=0.01, **kw)
    except (TypeError, ValueError, RuntimeError) as e:  # no fused optimizer (on the CPU) here
        print("%s %s: not in this torch (%s)" % (opt_name, kw, str(e).splitlines()[0][:80]))
        continue
    tag = "%s-%s" % (opt_name, "-".join(sorted(kw)))
    for step in range(2):  # the second step has optimizer state (momentum, exp_avg)
        path = os.path.join(work, "%s-%d.h5" % (tag, step))
        with faultline_capture.record(path, "cpu0", model=model) as rec:
            model(torch.randn(4, 8)).pow(2).mean().backward()
            opt.step()
            opt.zero_grad()
        cs.check(not rec.skipped.get("no tensor output"),
                 "%s: calls skipped without output: %s" % (tag, dict(rec.skipped)))
        with h5py.File(path, "r") as f:
            atens = [f["ops"][k].attrs["aten"] for k in sorted(f["ops"])]
            cs.check(not any(a.startswith("profiler::") for a in atens),
                     "%s: profiler markers recorded: %s" % (tag, atens))
            outputs = [f["ops"][k]["outputs"]["cpu0"][j][()].tobytes()
                       for k in f["ops"] for j in f["ops"][k]["outputs"]["cpu0"]]
        for n, p in model.named_parameters():
            cs.check(p.detach().numpy().tobytes() in outputs,
                     "%s step %d: the updated %s is no recorded op's output (ops %s)" % (tag, step, n, atens))
        done, skipped = faultline_capture.rerun(path, "cpu1", "cpu")
        differing = []
        with h5py.File(path, "r") as f:
            for k in f["ops"]:
                outs = f["ops"][k]["outputs"]
                if "cpu1" not in outs:
                    continue
                if sorted(outs["cpu1"]) != sorted(outs["cpu0"]):
                    counts = "outputs %d, re-run %d" % (len(outs["cpu0"]), len(outs["cpu1"]))
                    differing.append((k, f["ops"][k].attrs["aten"], counts))
                    continue
                for j in outs["cpu0"]:
                    if outs["cpu0"][j][()].tobytes() != outs["cpu1"][j][()].tobytes():
                        differing.append((k, f["ops"][k].attrs["aten"]))
        cs.check(done > 0 and not differing, "%s step %d: rerun differs in %s" % (tag, step, differing[:5]))
        rc, report = cs.bisect(path, "cpu1")
        cs.check(rc == 0, "%s step %d: bisect of the rerun flagged %s" % (tag, step, cs.divergent(report)))
    written = sorted({a for a in atens if a.startswith("aten::_f")})
    ran.append(tag)
    print("%s: updated parameters recorded, %d ops re-run bit-identically%s"
          % (tag, done, " (%s)" % ", ".join(written) if written else ""))
cs.check(len(ran) >= 4, "only %s ran" % ran)
print("ok")
