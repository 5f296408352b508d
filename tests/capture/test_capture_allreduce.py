"""c10d all_reduce on two gloo ranks: each rank's trace holds every rank's input (gathered before
the in-place call) and its own result, and bisects clean; {rank} names the files and labels."""
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
    w = torch.randn(16, 16)
    with faultline_capture.record(os.path.join(work, "ar-{rank}.h5"), "cpu{rank}"):
        for dtype in (torch.float32, torch.float16):  # gloo has no bfloat16 all_reduce
            g = (torch.randn(8, 16) @ w).to(dtype)
            dist.all_reduce(g)
            m = torch.randn(5).to(dtype)
            dist.all_reduce(m, op=dist.ReduceOp.MAX)
    dist.destroy_process_group()


if __name__ == "__main__":
    work = cs.tmpdir()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(worker, args=(2, port, work), nprocs=2)
    for rank in (0, 1):
        path = os.path.join(work, "ar-%d.h5" % rank)
        with h5py.File(path, "r") as f:
            ars = [f["ops"][k] for k in sorted(f["ops"]) if f["ops"][k].attrs["op"] == "all_reduce"]
            cs.check(len(ars) == 4, "rank %d: %d all_reduce ops" % (rank, len(ars)))
            for op in ars:
                cs.check(len(op.attrs["inputs"]) == 2,
                         "rank %d: all_reduce with %d inputs" % (rank, len(op.attrs["inputs"])))
                ranks = [r.decode() if isinstance(r, bytes) else r for r in op.attrs["ranks"]]
                cs.check(ranks == ["cpu0", "cpu1"], "ranks attribute %s" % ranks)
            cs.check(sorted({op.attrs["reduce_op"] for op in ars}) == ["max", "sum"], "reduce ops recorded")
        rc, report = cs.bisect(path, "cpu%d" % rank)
        judged = [o for o in cs.judged(report) if o["op"] == "all_reduce"]
        cs.check(len(judged) == 4 and rc == 0, "rank %d: bisect rc %d, %d all_reduce judged: %s"
                 % (rank, rc, len(judged), cs.describe(report, cs.divergent(report))))
    print("all_reduce: 2 ranks x 4 collectives recorded with both inputs, judged clean")
