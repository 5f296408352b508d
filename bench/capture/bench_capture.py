"""Recording cost: a training step (forward, backward, optimizer) of a small transformer, timed
unrecorded and inside faultline_capture.record, and the peak resident memory of each, each in
its own process. Also records 1 and 4 steps in one block to show that memory does not grow
with the recorded length (ops stream to the file).

    PYTHONPATH=python python3 bench/capture/bench_capture.py [--reps 5] [--dim 256]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def child(mode, steps, dim, reps, out_dir):
    import torch
    import torch.nn as nn

    import faultline_capture
    torch.manual_seed(0)
    torch.set_num_threads(int(os.environ.get("BENCH_THREADS", "2")))
    layer = nn.TransformerEncoderLayer(d_model=dim, nhead=4, dim_feedforward=4 * dim, dropout=0.0,
                                       batch_first=True, norm_first=True)
    model = nn.Sequential(layer, nn.Linear(dim, dim))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(8, 64, dim)

    def train(n):
        for _ in range(n):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()

    train(1)  # warm-up
    times = []
    size = 0
    for r in range(reps):
        path = os.path.join(out_dir, "bench-%s-%d.h5" % (mode, r))
        t0 = time.perf_counter()
        if mode == "record":
            with faultline_capture.record(path, "cpu0", model=model):
                train(steps)
        else:
            train(steps)
        times.append(time.perf_counter() - t0)
        if mode == "record":
            size = os.path.getsize(path)
            os.remove(path)
    print(json.dumps({"mode": mode, "steps": steps, "best_s": min(times), "median_s": sorted(times)[len(times) // 2],
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "trace_mib": size / 2**20}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--child", nargs=2)
    args = ap.parse_args()
    out_dir = tempfile.mkdtemp(prefix="faultline-bench-")
    if args.child:
        child(args.child[0], int(args.child[1]), args.dim, args.reps, out_dir)
        return
    results = []
    for mode, steps in (("plain", 1), ("record", 1), ("plain", 4), ("record", 4)):
        p = subprocess.run([sys.executable, __file__, "--child", mode, str(steps), "--reps", str(args.reps),
                            "--dim", str(args.dim)], capture_output=True, text=True, check=True)
        results.append(json.loads(p.stdout.strip().splitlines()[-1]))
    for r in results:
        print("%-6s %d step(s): best %.3f s, median %.3f s, peak RSS %.0f MiB, trace %.1f MiB"
              % (r["mode"], r["steps"], r["best_s"], r["median_s"], r["peak_rss_mib"], r["trace_mib"]))
    for steps in (1, 4):
        plain = next(r for r in results if r["mode"] == "plain" and r["steps"] == steps)
        rec = next(r for r in results if r["mode"] == "record" and r["steps"] == steps)
        print("%d step(s): recorded / unrecorded time %.2fx (median %.2fx), peak RSS +%.0f MiB"
              % (steps, rec["best_s"] / plain["best_s"], rec["median_s"] / plain["median_s"],
                 rec["peak_rss_mib"] - plain["peak_rss_mib"]))


if __name__ == "__main__":
    main()
