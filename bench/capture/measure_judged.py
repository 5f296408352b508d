"""How much of a real training step `faultline bisect` judges (issue 22's goals), measured on models
the capture tests were not written against: a LLaMA-style decoder (RMSNorm written out of pow, mean,
rsqrt and mul; SwiGLU MLP; dropout; causal attention written out; tied embeddings) and PyTorch's
own nn.TransformerEncoderLayer, each for one full step (forward, cross-entropy, backward, AdamW
or SGD with momentum), in float32 and bfloat16, recorded from PyTorch's CPU kernels with every op.

For each capture it prints: recorded ops, judged ops (verdict ok or divergent), false alarms
(divergent ops on the clean capture: there is no corruption), how the judged ops were judged
(golden_exact, golden_bound strict/loose), and the ops left unjudged by kind with the reason.
With --json PATH it also writes those figures. With --floor DIR it also measures each capture's
detection floor (`faultline benchmark --trace`) with the golden model alone and, after
`faultline_capture rerun --repeat 2` on the CPU, with the rerun peer, writing each floor's JSON,
text and PNG under DIR and printing the figures the issue's goals name (markdown). With --plant
it also captures each step again with a 25% error planted in a few elements of one op's output
(a GEMM, the AdamW update's addcdiv_, layer norm's weight gradient) and checks that bisect names
that op and only it.

    /usr/bin/python3 bench/capture/measure_judged.py [--faultline build/ci/app/faultline]
                     [--json out.json] [--floor DIR]
"""
import argparse
import collections
import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile

import h5py
import torch
import torch.nn as nn
import torch.nn.functional as F

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python"))
sys.path.insert(0, os.path.join(here, "..", "..", "tests", "capture"))
import capture_support as cs  # noqa: E402
import faultline_capture  # noqa: E402

torch.set_num_threads(2)


class RmsNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps, self.weight = eps, nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class LlamaBlock(nn.Module):
    def __init__(self, d, heads, hidden, dropout):
        super().__init__()
        self.heads = heads
        self.n1, self.n2 = RmsNorm(d), RmsNorm(d)
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.w1, self.w2, self.w3 = nn.Linear(d, hidden, bias=False), nn.Linear(hidden, d, bias=False), \
            nn.Linear(d, hidden, bias=False)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        b, t, d = x.shape
        h = self.n1(x)
        q, k, v = [w(h).view(b, t, self.heads, d // self.heads).transpose(1, 2) for w in (self.wq, self.wk, self.wv)]
        s = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)
        s = s.masked_fill(mask, float("-inf"))
        a = self.drop(F.softmax(s, dim=-1)) @ v
        x = x + self.drop(self.wo(a.transpose(1, 2).reshape(b, t, d)))
        h = self.n2(x)
        return x + self.drop(self.w2(F.silu(self.w1(h)) * self.w3(h)))


class Llama(nn.Module):
    def __init__(self, vocab=96, d=48, heads=4, hidden=128, layers=2, dropout=0.1):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([LlamaBlock(d, heads, hidden, dropout) for _ in range(layers)])
        self.norm = RmsNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.emb.weight  # tied

    def loss(self, idx, targets):
        x = self.emb(idx)
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), targets.view(-1))


class Encoder(nn.Module):
    """PyTorch's own encoder layer with a classifier head."""

    def __init__(self, d=32, classes=10):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model=d, nhead=4, dim_feedforward=64, dropout=0.0,
                                                batch_first=True)
        self.head = nn.Linear(d, classes)

    def loss(self, x, targets):
        return F.cross_entropy(self.head(self.layer(x).mean(1)).float(), targets)


aten = torch.ops.aten


# (what, model, aten call, nth call, output, elements, the trace op it becomes)
PLANTS = [("GEMM", "llama", aten.mm.default, 5, 0, 24, "gemm"),
          ("AdamW update (addcdiv_)", "llama", aten.addcdiv_.default, 3, 0, 4, "addcdiv"),
          ("GEMM", "encoder", aten.addmm.default, 2, 0, 24, "gemm"),
          ("layer norm weight gradient", "encoder", aten.native_layer_norm_backward.default, 0, 1, 4,
           "layernorm_backward_weight")]


def plant(args, work, name, dtype):
    """Each planted corruption of `name`'s step: bisect must name that op, and only it."""
    results = []
    for what, model, func, nth, output, count, kind in PLANTS:
        if model != name:
            continue
        path = os.path.join(work, "%s-%s-planted-%s.h5" % (name, str(dtype)[6:], kind))
        capture(path, name, dtype, cs.Scale(func, nth, count=count, output=output))
        p = subprocess.run([args.faultline, "bisect", path, "--suspect", "cpu0", "--json", "--quiet"],
                           capture_output=True, text=True, timeout=600)
        report = json.loads(p.stdout)
        bad = [o for o in report["ops"] if o["verdict"] == "divergent"]
        with h5py.File(path, "r") as f:
            atens = [f["ops"]["%06d" % o["index"]].attrs.get("aten", "") for o in bad]
        want = "aten::" + func._schema.name.split("::", 1)[1]
        found = p.returncode == 1 and len(bad) == 1 and bad[0]["op"] == kind and atens[0] == want
        results.append({"what": what, "found_exactly": found, "divergent": [(o["index"], o["op"]) for o in bad],
                        "judge": bad[0]["judge"]["kind"] if bad else None})
        print("    planted 25%% in %d elements of %s (%s call %d): %s%s" % (
            count, what, want, nth, "found, and only that op" if found else "NOT found exactly: %s" % (
                [(o["index"], o["op"]) for o in bad],), " (judge %s)" % bad[0]["judge"]["kind"] if bad else ""))
    return results


def capture(path, name, dtype, corruption=None):
    torch.manual_seed(1)
    if name == "llama":
        model = Llama().to(dtype)
        g = torch.Generator().manual_seed(2)
        tokens = torch.randint(0, 96, (2, 17), generator=g)
        inputs, targets = tokens[:, :-1], tokens[:, 1:].contiguous()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    else:
        model = Encoder().to(dtype)
        inputs = torch.randn(4, 8, 32, dtype=dtype)
        targets = torch.randint(0, 10, (4,), generator=torch.Generator().manual_seed(3))
        opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    model.train()
    torch.manual_seed(3)  # dropout's masks
    mode = corruption if corruption is not None else contextlib.nullcontext()
    with mode:
        with faultline_capture.record(path, "cpu0", model=model):
            opt.zero_grad()
            model.loss(inputs, targets).backward()
            opt.step()


def judge_counts(report):
    c = collections.Counter()
    for o in report["ops"]:
        if o["verdict"] not in ("ok", "divergent"):
            continue
        j = o["judge"]
        kind = j["kind"]
        if kind == "golden_bound":
            kind += " (loose)" if o.get("bound_loose") else " (strict)"
        c[kind] += 1
    return dict(sorted(c.items()))


GOAL_CLASSES = ("sign", "exponent", "mantissa_top2")
OPTIMIZER_OPS = {"add", "sub", "mul", "div", "sqrt", "addcmul", "addcdiv", "lerp"}


def rate(rows, pick, classes):
    planted = detected = 0
    for r in rows:
        if not pick(r):
            continue
        for c in classes:
            planted += r["by_class"].get(c, {}).get("planted", 0)
            detected += r["by_class"].get(c, {}).get("detected", 0)
    return (detected, planted)


def pct(dp):
    return "%.2f%% (%d/%d)" % (100.0 * dp[0] / dp[1], dp[0], dp[1]) if dp[1] else "-"


def floors(args, path, tag):
    """The detection floor of one capture, golden alone and with a rerun peer."""
    out = {}
    os.makedirs(args.floor, exist_ok=True)
    subprocess.run([sys.executable, "-m", "faultline_capture", "rerun", path, "peer", "cpu", "--repeat", "2"],
                   check=True, capture_output=True, env=dict(os.environ, PYTHONPATH=os.path.join(here, "..", "..",
                                                                                                  "python")))
    for mode, extra in (("golden", ["--no-peer"]), ("peer", ["--peer", "peer"])):
        d = os.path.join(args.floor, "%s-%s" % (tag, mode))
        p = subprocess.run([args.faultline, "benchmark", "--trace", path, "--suspect", "cpu0", "--json", "--quiet",
                            "--out", d] + extra, capture_output=True, text=True, timeout=1800)
        if p.returncode not in (0, 1):
            sys.exit("benchmark --trace %s: exit %d: %s" % (path, p.returncode, p.stderr.strip()))
        f = json.loads(p.stdout)
        rows = f["rows"]
        res = {"false_alarms": len(f["false_alarms"]), "floor_ops": f["floor_ops"],
               "all_bits": rate(rows, lambda r: True, ("sign", "exponent", "mantissa_top2", "mantissa_rest")),
               "goal_bits": rate(rows, lambda r: True, GOAL_CLASSES),
               "gemm_goal_bits": rate(rows, lambda r: r["op"] == "gemm", GOAL_CLASSES),
               "optimizer_goal_bits": rate(rows, lambda r: r["op"] in OPTIMIZER_OPS, GOAL_CLASSES),
               "by_judge": f["by_judge"]}
        out[mode] = res
        print("  | %s | %s | %d | %d | %s | %s | %s | %s |" % (
            tag, mode, res["floor_ops"], res["false_alarms"], pct(res["all_bits"]), pct(res["goal_bits"]),
            pct(res["gemm_goal_bits"]), pct(res["optimizer_goal_bits"])))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--faultline", default=os.environ.get("FAULTLINE_EXE", "faultline"))
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--keep", help="keep the captures in this directory")
    ap.add_argument("--floor", help="also measure the detection floors, written into this directory")
    ap.add_argument("--plant", action="store_true", help="also plant a corruption per op kind and bisect")
    args = ap.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="faultline-measure-")
    os.makedirs(work, exist_ok=True)
    rows = []
    print("torch %s" % torch.__version__)
    for name in ("llama", "encoder"):
        for dtype in (torch.float32, torch.bfloat16):
            tag = "%s-%s" % (name, str(dtype)[6:])
            path = os.path.join(work, tag + ".h5")
            capture(path, name, dtype)
            p = subprocess.run([args.faultline, "bisect", path, "--suspect", "cpu0", "--json", "--quiet"],
                               capture_output=True, text=True, timeout=600)
            if p.returncode not in (0, 1):
                sys.exit("bisect %s: exit %d: %s" % (path, p.returncode, p.stderr.strip()))
            report = json.loads(p.stdout)
            ops = report["ops"]
            judged = [o for o in ops if o["verdict"] in ("ok", "divergent")]
            alarms = [(o["index"], o["op"], o["name"], o.get("detail", "")[:100]) for o in ops
                      if o["verdict"] == "divergent"]
            unjudged = collections.Counter()
            reasons = {}
            for o in ops:
                if o["verdict"] in ("ok", "divergent"):
                    continue
                unjudged[o["op"]] += 1
                reasons.setdefault(o["op"], (o.get("detail") or o["judge"].get("reason") or "")[:110])
            row = {"capture": tag, "torch": torch.__version__, "recorded": len(ops), "judged": len(judged),
                   "judged_percent": round(100.0 * len(judged) / max(1, len(ops)), 1),
                   "false_alarms": len(alarms), "judges": judge_counts(report),
                   "unjudged": dict(unjudged.most_common()), "unjudged_reasons": reasons, "alarms": alarms[:10]}
            rows.append(row)
            print("%-18s %4d recorded, %4d judged (%5.1f%%), %d false alarms; judges %s" % (
                tag, row["recorded"], row["judged"], row["judged_percent"], row["false_alarms"], row["judges"]))
            for op, n in unjudged.most_common():
                print("    unjudged %-40s %3d  %s" % (op, n, reasons[op]))
            for a in alarms[:10]:
                print("    FALSE ALARM op %d %s %s: %s" % a)
            if args.floor:
                row["floor"] = floors(args, path, tag)
            if args.plant:
                row["planted"] = plant(args, work, name, dtype)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
