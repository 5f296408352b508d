"""Detection floor of `faultline bisect` with and without a rerun peer (issue 22).

Records one training step (tests/capture/capture_support.py's pre-norm transformer block,
cross-entropy loss, backward, AdamW) on the CPU in float32 and bfloat16, counts the ops each
judge takes without a peer and after `rerun ... peer cpu --repeat 2`, then flips one bit of one
element (the middle one) of one op's recorded output, at every bit position, in a few ops, and
counts the flips bisect names exactly (that op the first and only divergent one), with the peer
and with --no-peer (the golden model alone).

    PYTHONPATH=python FAULTLINE_EXE=build/ci/app/faultline python3 bench/capture/bench_peer_floor.py
"""
import argparse
import os
import shutil
import subprocess
import sys

import h5py
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "capture"))
import capture_support as cs  # noqa: E402
import faultline_capture  # noqa: E402

BITS = {torch.float32: 32, torch.bfloat16: 16}


def target_ops(path):
    """(description, op index, output k) of the ops flipped."""
    with h5py.File(path, "r") as f:
        ops = {int(k): (g.attrs["op"], g.attrs.get("name", "")) for k, g in f["ops"].items()}

    def first(kind, name=None):
        return min(i for i, (op, n) in ops.items() if op == kind and (name is None or n == name))
    return [("gemm fc1 (forward)", first("gemm", "fc1"), 0),
            ("gemm fc1.grad (backward)", first("gemm", "fc1.grad"), 0),
            ("layernorm ln1", first("layernorm", "ln1"), 0),
            ("softmax attn", first("softmax"), 0),
            ("aten::native_layer_norm_backward (grad x)", first("aten::native_layer_norm_backward"), 0),
            ("aten::native_layer_norm_backward (grad gamma)", first("aten::native_layer_norm_backward"), 1),
            ("aten::nll_loss_backward", first("aten::nll_loss_backward"), 0),
            ("aten::addcdiv_ (AdamW update)", first("aten::addcdiv_"), 0),
            ("aten::addcmul_ (AdamW second moment)", first("aten::addcmul_"), 0)]


def named(path, index, *options):
    rc, report = cs.bisect(path, "cpu0", *options)
    return rc == 1 and report["first_divergent_op"] == index and cs.divergent(report) == [index]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=None, help="folder for the traces (default: a new temporary one)")
    args = parser.parse_args()
    work = args.work or cs.tmpdir()
    os.makedirs(work, exist_ok=True)
    print("torch %s, faultline %s, traces in %s" % (torch.__version__, cs.FAULTLINE, work))
    for dtype in (torch.float32, torch.bfloat16):
        tag = str(dtype)[6:]
        model, x, target, optimizer = cs.make_training("block", dtype)
        trace = os.path.join(work, "step-%s.h5" % tag)
        if os.path.exists(trace):
            os.remove(trace)
        with faultline_capture.record(trace, "cpu0", model=model):
            cs.train_step(model, x, target, optimizer)
        _, alone = cs.bisect(trace, "cpu0")
        subprocess.run([sys.executable, "-m", "faultline_capture", "rerun", trace, "peer", "cpu", "--repeat", "2"],
                       check=True, capture_output=True)
        _, peer = cs.bisect(trace, "cpu0")
        with h5py.File(trace, "r") as f:
            calls = sum(1 for g in f["ops"].values() if "call" in g.attrs)
        print("\n%s: %d ops recorded, %d with a call" % (tag, len(peer["ops"]), calls))
        print("  without a peer: %d judged %s" % (alone["checked_ops"], alone["judged_by"]))
        print("  with the peer:  %d judged %s, %d divergent" % (peer["checked_ops"], peer["judged_by"],
                                                              len(cs.divergent(peer))))
        corrupt = os.path.join(work, "corrupt-%s.h5" % tag)
        shutil.copy(trace, corrupt)
        print("  single flipped bit, middle element, bits 0..%d: named exactly (peer / golden alone)"
              % (BITS[dtype] - 1))
        for what, index, k in target_ops(trace):
            path = "ops/%06d/outputs/cpu0/%d" % (index, k)
            with h5py.File(corrupt, "r+") as f:
                cs.unlink_output(f, path)
                element = f[path].size // 2
            with_peer, alone_bits = [], []
            for bit in range(BITS[dtype]):
                with h5py.File(corrupt, "r+") as f:
                    cs.flip_recorded(f, path, element, bit)
                if named(corrupt, index):
                    with_peer.append(bit)
                if named(corrupt, index, "--no-peer"):
                    alone_bits.append(bit)
                with h5py.File(corrupt, "r+") as f:
                    cs.flip_recorded(f, path, element, bit)
            print("    op %3d %-46s peer %2d/%d   golden %2d/%d  (golden sees bits %s)" % (
                index, what, len(with_peer), BITS[dtype], len(alone_bits), BITS[dtype],
                ranges(alone_bits) or "none"))


def ranges(bits):
    out, start = [], None
    for i, b in enumerate(bits):
        if start is None:
            start = b
        if i + 1 == len(bits) or bits[i + 1] != b + 1:
            out.append(str(start) if start == b else "%d-%d" % (start, b))
            start = None
    return ",".join(out)


if __name__ == "__main__":
    main()
