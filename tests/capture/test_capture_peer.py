"""Peer judgement of a whole training step (issue 22): a step recorded on the CPU (forward,
cross-entropy loss, backward, AdamW), rerun on the CPU as `peer` with --repeat 2, is judged op by
op bit for bit against the peer: every op with a recorded call, the optimizer's aten:: updates,
the loss and the norms' backward included. A single flipped bit at any position of one op's
recorded output (an AdamW addcdiv_, a GEMM, a layer norm backward; float32 and bfloat16) makes
exactly that op divergent. A peer that did not reproduce itself, or whose determinism is unknown,
hands the op back to the golden model and says so."""
import os
import shutil
import subprocess
import sys

import h5py
import torch

sys.path.insert(0, os.path.dirname(__file__))
import capture_support as cs  # noqa: E402
import faultline_capture  # noqa: E402
from faultline_capture.rerun import TraceError  # noqa: E402

rerun_module = sys.modules["faultline_capture.rerun"]  # the package's `rerun` is the function

work = cs.tmpdir()
RERUN = [sys.executable, "-m", "faultline_capture", "rerun"]


def ops_of(path):
    """index -> (op, name, has call, output count of cpu0), from the file."""
    with h5py.File(path, "r") as f:
        return {int(k): (g.attrs["op"], g.attrs.get("name", ""), "call" in g.attrs, len(g["outputs"]["cpu0"]))
                for k, g in f["ops"].items()}


def judges(report):
    out = {}
    for o in report["ops"]:
        out[o["judge"]["kind"]] = out.get(o["judge"]["kind"], 0) + 1
    return out


def first(ops, kind, name=None):
    kinds = (kind,) if isinstance(kind, str) else kind
    return min(i for i, (op, n, _, _) in ops.items() if op in kinds and (name is None or n == name))


# The ops the flips go into, as the recorder keeps them: a Faultline op where the golden model has
# one (the optimizer's addcdiv, the norm's backward split into its gradients), else the aten:: op.
ADDCDIV = ("addcdiv", "aten::addcdiv_")
LN_BACKWARD = ("layernorm_backward_weight", "aten::native_layer_norm_backward")
NLL = ("nll_loss", "aten::nll_loss_forward")


# ---- rerun's repeat: range and the reproducible mark ---------------------------------------------
model, x, target, optimizer = cs.make_training("block", torch.float32)
tiny = os.path.join(work, "tiny.h5")
with faultline_capture.record(tiny, "cpu0", model=model, ops=["gemm"]):
    cs.train_step(model, x, target, optimizer)
for bad in ("0", "101"):
    p = subprocess.run(RERUN + [tiny, "peer", "cpu", "--repeat", bad], capture_output=True, text=True)
    cs.check(p.returncode == 2 and tiny in p.stderr and "repeat" in p.stderr,
             "rerun --repeat %s: exit %d, %r" % (bad, p.returncode, p.stderr))
try:
    faultline_capture.rerun(tiny, "peer", "cpu", repeat=0)
    cs.fail("rerun(repeat=0) was accepted")
except TraceError as e:
    cs.check(tiny in str(e), "error does not name the file: %s" % e)
# A device that gives other bits on the second run of one op: that op is marked unreproducible.
real_call, calls = rerun_module._call, {}


def flaky_call(group, spec, tensors, device):
    results = real_call(group, spec, tensors, device)
    calls[group.name] = calls.get(group.name, 0) + 1
    if group.name.endswith("000001") and calls[group.name] == 2:
        results = [t + 1 for t in results]
    return results


rerun_module._call = flaky_call
try:
    faultline_capture.rerun(tiny, "flaky", "cpu", repeat=3)
finally:
    rerun_module._call = real_call
with h5py.File(tiny, "r") as f:
    marks = {int(k): dict(g["outputs"]["flaky"].attrs) for k, g in f["ops"].items()}
    source = f["devices"]["flaky"].attrs["source"]
cs.check(source == "rerun", "rerun device source: %r" % source)
cs.check(all(m["repeats"] == 3 for m in marks.values()), "repeats: %s" % marks)
cs.check(marks[1]["reproducible"] == 0 and all(m["reproducible"] == 1 for i, m in marks.items() if i != 1),
         "reproducible marks: %s" % marks)
rc, report = cs.bisect(tiny, "cpu0")
op1 = report["ops"][1]
cs.check(rc == 0 and report["peer"] == "flaky" and op1["judge"]["kind"] == "golden_bound"
         and "did not reproduce itself bit for bit in 3 runs" in (op1["judge"]["reason"] or ""),
         "op 1 of an unreproducible peer: %s" % op1["judge"])
cs.check(all(o["judge"]["kind"] == "peer" for o in report["ops"] if o["index"] != 1),
         "the other ops: %s" % judges(report))
# Run once: determinism unknown, so the golden model judges.
subprocess.run(RERUN + [tiny, "once", "cpu", "--repeat", "1"], check=True, capture_output=True)
rc, report = cs.bisect(tiny, "cpu0", "--peer", "once")
cs.check(rc == 0 and all(o["judge"]["kind"] == "golden_bound" and "unknown" in o["judge"]["reason"]
                         for o in report["ops"]), "a peer run once: %s" % judges(report))
print("rerun --repeat: range checked, an unreproducible op and a single run fall back to the golden model")

# ---- a training step, float32 and bfloat16 -------------------------------------------------------
BITS = {torch.float32: 32, torch.bfloat16: 16}
for dtype in (torch.float32, torch.bfloat16):
    tag = str(dtype)[6:]
    model, x, target, optimizer = cs.make_training("block", dtype)
    trace = os.path.join(work, "step-%s.h5" % tag)
    with faultline_capture.record(trace, "cpu0", model=model):
        cs.train_step(model, x, target, optimizer)
    rc, alone = cs.bisect(trace, "cpu0")
    cs.check(rc == 0 and alone["peer"] is None, "%s: bisect without a peer: exit %d" % (tag, rc))
    # The rerun process starts with one thread: it must run the ops with the capture's thread
    # count (the CPU kernels split their sums by thread), else its bits differ legitimately.
    p = subprocess.run(RERUN + [trace, "peer", "cpu", "--repeat", "2"], capture_output=True, text=True,
                       env=dict(os.environ, OMP_NUM_THREADS="1"))
    cs.check(p.returncode == 0, "rerun: %s" % p.stderr)
    with h5py.File(trace, "r") as f:
        cs.check(f["devices"]["peer"].attrs["torch_num_threads"] == f.attrs["torch_num_threads"] == 2,
                 "rerun threads: %s vs %s" % (f["devices"]["peer"].attrs.get("torch_num_threads"),
                                              f.attrs.get("torch_num_threads")))
    ops = ops_of(trace)
    with_call = sum(1 for _, _, call, _ in ops.values() if call)
    with h5py.File(trace, "r") as f:
        cs.check(f["devices"]["peer"].attrs["source"] == "rerun", "peer device has no source = rerun")
        for k, g in f["ops"].items():
            if "peer" in g["outputs"]:
                a = g["outputs"]["peer"].attrs
                cs.check(a["repeats"] == 2 and a["reproducible"] == 1, "ops/%s peer marks: %s" % (k, dict(a)))
    kinds = {op for op, _, _, _ in ops.values()}
    for needed in (ADDCDIV, LN_BACKWARD, NLL, ("gemm",)):
        cs.check(any(k in kinds for k in needed), "%s: the step recorded no %s" % (tag, " or ".join(needed)))

    rc, report = cs.bisect(trace, "cpu0")
    by_peer = [o["index"] for o in report["ops"] if o["judge"]["kind"] == "peer"]
    cs.check(rc == 0 and not cs.divergent(report), "%s: clean step flagged %s" % (tag, cs.divergent(report)))
    cs.check(report["peer"] == "peer" and report["judged_by"]["peer"] == len(by_peer),
             "%s: peer %r, judged_by %s" % (tag, report["peer"], report["judged_by"]))
    cs.check(sorted(by_peer) == sorted(i for i, (_, _, call, _) in ops.items() if call),
             "%s: ops with a call not judged by the peer: %s" % (tag, sorted(
                 set(i for i, (_, _, c, _) in ops.items() if c) - set(by_peer))))
    cs.check(all(o["judge"]["label"] == "peer" and o["judge"]["bound"] is None for o in report["ops"]
                 if o["judge"]["kind"] == "peer"), "%s: peer judge fields" % tag)
    print("%s: %d ops recorded, %d with a call; judged without a peer %d (%s), with the peer %d by the "
          "peer, 0 divergent" % (tag, len(ops), with_call, alone["checked_ops"], alone["judged_by"], len(by_peer)))

    # One flipped bit in one op's recorded output, every bit position, three ops.
    ln_backward = first(ops, LN_BACKWARD)
    targets = [("AdamW addcdiv_", first(ops, ADDCDIV), 0),
               ("GEMM fc1", first(ops, "gemm", "fc1"), 0),
               ("layer norm backward (grad of gamma)", ln_backward,
                1 if ops[ln_backward][0].startswith("aten::") else 0)]
    corrupt = os.path.join(work, "corrupt-%s.h5" % tag)
    shutil.copy(trace, corrupt)
    for what, index, k in targets:
        path = "ops/%06d/outputs/cpu0/%d" % (index, k)
        with h5py.File(corrupt, "r+") as f:
            cs.unlink_output(f, path)
            element = f[path].size // 2
        missed = []
        for bit in range(BITS[dtype]):
            with h5py.File(corrupt, "r+") as f:
                cs.flip_recorded(f, path, element, bit)
            rc, report = cs.bisect(corrupt, "cpu0")
            op = next(o for o in report["ops"] if o["index"] == index)
            if not (rc == 1 and report["first_divergent_op"] == index and cs.divergent(report) == [index]
                    and op["judge"]["kind"] == "peer" and op["output"] == k and op["mismatches"] == 1):
                missed.append((bit, report["first_divergent_op"], cs.divergent(report)[:4], op["judge"]))
            with h5py.File(corrupt, "r+") as f:
                cs.flip_recorded(f, path, element, bit)  # restored
        cs.check(not missed, "%s %s (op %d): flips not named exactly: %s" % (tag, what, index, missed[:4]))
        print("%s %s (op %d, output %d): %d/%d single flipped bits named as the only divergent op" % (
            tag, what, index, k, BITS[dtype], BITS[dtype]))
    rc, report = cs.bisect(corrupt, "cpu0")
    cs.check(rc == 0, "%s: the restored copy is not clean" % tag)

    # --peer naming the suspect or no device: exit 2, naming the devices.
    for bad in ("cpu0", "cpu7"):
        rc, out, err = cs.run_faultline("bisect", trace, "--suspect", "cpu0", "--peer", bad)
        cs.check(rc == 2 and "cpu0" in err and "peer" in err, "--peer %s: exit %d %r" % (bad, rc, err))

print("peer judgement: ok")
