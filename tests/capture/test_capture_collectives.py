"""c10d all_gather, broadcast and reduce_scatter on two gloo ranks: each rank's trace holds every
rank's input (gathered before the call) and its own output; merge-traces joins the two files
into one trace whose collectives carry both ranks' outputs, and bisect finds every invariant
holding for either suspect."""
import os
import socket
import sys

import h5py
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.dirname(__file__))
import capture_support as cs  # noqa: E402
import faultline_capture  # noqa: E402


def worker(rank, world, port, work):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(rank)
    w = torch.randn(6, 6)
    with faultline_capture.record(os.path.join(work, "coll-{rank}.h5"), "cpu{rank}"):
        x = torch.randn(3, 6) @ w
        parts = [torch.empty_like(x) for _ in range(world)]
        dist.all_gather(parts, x)
        b = torch.randn(5, 4) @ w[:4, :4]
        dist.broadcast(b, src=1)
        try:  # gloo of torch 1.13 has no reduce_scatter
            out = torch.empty(2, 6)
            dist.reduce_scatter(out, [torch.randn(2, 6) @ w for _ in range(world)])
            with open(os.path.join(work, "reduce_scatter-%d" % rank), "w") as f:
                f.write("ran")
        except RuntimeError:
            pass
    dist.destroy_process_group()


if __name__ == "__main__":
    work = cs.tmpdir()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(worker, args=(2, port, work), nprocs=2)
    scattered = os.path.exists(os.path.join(work, "reduce_scatter-0"))
    expected = ["all_gather", "broadcast"] + (["reduce_scatter"] if scattered else [])
    files = []
    for rank in (0, 1):
        path = os.path.join(work, "coll-%d.h5" % rank)
        files.append(path)
        with h5py.File(path, "r") as f:
            ops = [f["ops"][k] for k in sorted(f["ops"]) if f["ops"][k].attrs["op"] in expected]
            cs.check(sorted(op.attrs["op"] for op in ops) == sorted(expected),
                     "rank %d: collectives %s" % (rank, [op.attrs["op"] for op in ops]))
            for op in ops:
                cs.check(len(op.attrs["inputs"]) == 2, "rank %d: %s with %d inputs"
                         % (rank, op.attrs["op"], len(op.attrs["inputs"])))
                ranks = [r.decode() if isinstance(r, bytes) else r for r in op.attrs["ranks"]]
                cs.check(ranks == ["cpu0", "cpu1"], "ranks attribute %s" % ranks)
                cs.check(list(op["outputs"]) == ["cpu%d" % rank], "rank %d: outputs %s" % (rank, list(op["outputs"])))
                if op.attrs["op"] == "all_gather":
                    cs.check(op["outputs"]["cpu%d" % rank]["0"].shape == (6, 6), "all_gather output shape")
                if op.attrs["op"] == "broadcast":
                    cs.check(int(op.attrs["root"]) == 1, "broadcast root %s" % op.attrs["root"])
        rc, report = cs.bisect(path, "cpu%d" % rank)
        judged = [o for o in cs.judged(report) if o["op"] in expected]
        cs.check(len(judged) == len(expected) and rc == 0, "rank %d: bisect rc %d, %d collectives judged: %s"
                 % (rank, rc, len(judged), cs.describe(report, cs.divergent(report))))
    merged = os.path.join(work, "merged.h5")
    rc, out, err = cs.run_faultline("merge-traces", *files, "--out", merged, "--json")
    cs.check(rc == 0, "merge-traces exited %d: %s" % (rc, err.strip()))
    for rank in (0, 1):
        rc, report = cs.bisect(merged, "cpu%d" % rank)
        collectives = [o for o in report["ops"] if o["collective"] is not None]
        cs.check(rc == 0 and len(collectives) == len(expected),
                 "merged, suspect cpu%d: bisect rc %d, %d collectives: %s"
                 % (rank, rc, len(collectives), cs.describe(report, cs.divergent(report))))
        for o in collectives:
            cs.check(o["collective"]["holds"] and not o["collective"]["missing_ranks"],
                     "op %d %s: %s" % (o["index"], o["op"], o["detail"]))
    print("collectives: %s recorded on 2 ranks, merged, every invariant holds%s"
          % (", ".join(expected), "" if scattered else " (this gloo has no reduce_scatter)"))
