"""What the recorder leaves on disk: max_bytes and an exception inside the block leave valid
traces `faultline inspect` opens (complete=0); {rank} in the path; op and module filters; no
.tmp left behind; rerun on the CPU reproduces the recording bit for bit."""
import contextlib
import io
import json
import os
import sys
import warnings

import h5py
import torch

sys.path.insert(0, os.path.dirname(__file__))
import capture_support as cs  # noqa: E402
import faultline_capture  # noqa: E402
from faultline_capture.rerun import TraceError  # noqa: E402

work = cs.tmpdir()


def inspect(path):
    rc, out, err = cs.run_faultline("inspect", path, "--json")
    cs.check(rc == 0, "inspect %s exited %d: %s" % (path, rc, err.strip()))
    return json.loads(out)


def root(path):
    with h5py.File(path, "r") as f:
        return {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}, len(f["ops"])


# ---- a complete recording: metadata, names, phases -------------------------------------------
model, x = cs.make("block", torch.float32)
path = os.path.join(work, "full-{rank}.h5")
err = io.StringIO()
with contextlib.redirect_stderr(err):
    with faultline_capture.record(path, "gpu{rank}", model=model) as rec:
        cs.step(model, x)
summary = err.getvalue().strip().splitlines()
cs.check(len(summary) == 1 and "kept %d op(s)" % sum(rec.kept.values()) in summary[0] and "gemm" in summary[0]
         and "skipped" in summary[0], "summary line: %r" % summary)
full = os.path.join(work, "full-0.h5")
cs.check(os.path.exists(full) and not os.path.exists(full + ".tmp"), "{rank} not replaced or .tmp left")
attrs, full_ops = root(full)
cs.check(attrs["complete"] == 1 and attrs["faultline_version"] == 1, "complete trace attributes: %s" % attrs)
for key in ("torch_version", "allow_tf32_matmul", "deterministic_algorithms", "rank", "world_size"):
    cs.check(key in attrs, "root attribute %s missing" % key)
with h5py.File(full, "r") as f:
    dev = dict(f["devices"]["gpu0"].attrs)
    cs.check(dev["role"] == "suspect" and "hostname" in dev, "device attributes: %s" % dev)
    names = {f["ops"][k].attrs.get("name", "") for k in f["ops"]}
    phases = {f["ops"][k].attrs.get("phase", "") for k in f["ops"]}
    kinds = {f["tensors"][k].attrs.get("kind", "") for k in f["tensors"]}
cs.check({"ln1", "attn.qkv", "fc2"} <= names, "module names missing: %s" % sorted(names))
cs.check(any(n.endswith(".grad") for n in names), "no backward names: %s" % sorted(names))
cs.check(phases == {"forward", "backward"}, "phases: %s" % phases)
cs.check("weight" in kinds, "parameters not marked kind=weight")
report = inspect(full)
print("complete trace: %d ops, names and phases recorded" % full_ops)

# ---- filters -----------------------------------------------------------------------------------
model, x = cs.make("block", torch.float32)
only = os.path.join(work, "filtered.h5")
with faultline_capture.record(only, "cpu0", model=model, ops=["gemm"], modules=["attn"]):
    cs.step(model, x)
with h5py.File(only, "r") as f:
    got = {(f["ops"][k].attrs["op"], f["ops"][k].attrs.get("name", "")) for k in f["ops"]}
cs.check(got and all(op == "gemm" and n.startswith("attn") for op, n in got), "filters let through: %s" % got)
print("filters: %d op(s), all gemm under attn" % len(got))

# ---- max_bytes: a clean stop with a warning ----------------------------------------------------
model, x = cs.make("block", torch.float32)
small = os.path.join(work, "small.h5")
limit = 40_000
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with faultline_capture.record(small, "cpu0", model=model, max_bytes=limit) as rec:
        cs.step(model, x)
cs.check(any("max_bytes" in str(w.message) for w in caught), "no max_bytes warning")
attrs, small_ops = root(small)
cs.check(attrs["complete"] == 0 and "max_bytes" in attrs["stop_reason"], "max_bytes attrs: %s" % attrs)
cs.check(0 < small_ops < full_ops, "max_bytes trace has %d of %d ops" % (small_ops, full_ops))
sizes = []
with h5py.File(small, "r") as f:
    f.visititems(lambda name, obj: sizes.append(obj.nbytes) if isinstance(obj, h5py.Dataset) else None)
stored = sum(sizes)
cs.check(stored <= limit, "max_bytes=%d but %d bytes of tensors stored" % (limit, stored))
inspect(small)
rc, bis = cs.bisect(small, "cpu0")
cs.check(rc == 0 and bis["ops"], "bisect of the truncated trace: rc %d" % rc)
print("max_bytes: %d ops, %d bytes, warning given, trace opens" % (small_ops, stored))

# ---- an exception inside the block -------------------------------------------------------------
model, x = cs.make("block", torch.float32)
broken = os.path.join(work, "exception.h5")
try:
    with faultline_capture.record(broken, "cpu0", model=model):
        model(x)
        raise RuntimeError("loss is NaN")
except RuntimeError as e:
    cs.check(str(e) == "loss is NaN", "the block's exception was replaced: %s" % e)
else:
    cs.fail("the exception was swallowed")
attrs, broken_ops = root(broken)
cs.check(attrs["complete"] == 0 and "loss is NaN" in attrs["stop_reason"] and broken_ops > 0,
         "exception trace: %s, %d ops" % (attrs, broken_ops))
cs.check(not os.path.exists(broken + ".tmp"), ".tmp left after an exception")
inspect(broken)
rc, bis = cs.bisect(broken, "cpu0")
cs.check(rc == 0, "bisect of the exception trace flagged ops")
cs.check(any("incomplete" in w and "loss is NaN" in w for w in bis["warnings"]),
         "bisect does not say the capture is incomplete")
print("exception: complete=0, %d ops kept, trace opens" % broken_ops)

# ---- a write error stops the recording, not the training step -------------------------------
import faultline_capture.trace_file as trace_file  # noqa: E402

real_add_op = trace_file.TraceFile.add_op
calls = []


def failing_add_op(self, *args, **kwargs):
    calls.append(1)
    if len(calls) == 4:
        raise OSError("No space left on device")
    return real_add_op(self, *args, **kwargs)


trace_file.TraceFile.add_op = failing_add_op
model, x = cs.make("block", torch.float32)
full_disk = os.path.join(work, "full-disk.h5")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with faultline_capture.record(full_disk, "cpu0", model=model):
        loss = cs.step(model, x)
trace_file.TraceFile.add_op = real_add_op
cs.check(torch.isfinite(loss) and x.grad is not None, "the training step did not complete")
cs.check(any("No space left" in str(w.message) for w in caught), "no warning for the write error")
attrs, disk_ops = root(full_disk)
cs.check(attrs["complete"] == 0 and "No space left" in attrs["stop_reason"] and disk_ops == 3,
         "write-error trace: %s, %d ops" % (attrs, disk_ops))
inspect(full_disk)
print("write error: warning, complete=0, %d ops kept, the step completed" % disk_ops)

# ---- rerun on the CPU reproduces the recording bit for bit --------------------------------------
for dtype in (torch.float32, torch.bfloat16):
    model, x = cs.make("block", dtype)
    trace = os.path.join(work, "rerun-%s.h5" % str(dtype)[6:])
    with faultline_capture.record(trace, "cpu0", model=model):
        cs.step(model, x)
    done, skipped = faultline_capture.rerun(trace, "cpu1", "cpu")
    cs.check(done > 10, "rerun re-ran only %d ops" % done)
    differing = []
    with h5py.File(trace, "r") as f:
        for k in f["ops"]:
            outs = f["ops"][k]["outputs"]
            if "cpu1" not in outs:
                continue
            for j in outs["cpu0"]:
                a, b = outs["cpu0"][j][()], outs["cpu1"][j][()]
                if a.shape != b.shape or a.tobytes() != b.tobytes():
                    differing.append((k, f["ops"][k].attrs["aten"]))
        cs.check(f["devices"]["cpu1"].attrs["role"] == "reference", "rerun device role")
    cs.check(not differing, "%s: rerun differs from the recording in %s" % (dtype, differing[:5]))
    rc, bis = cs.bisect(trace, "cpu1")
    cs.check(rc == 0, "bisect of the rerun label flagged ops")
    print("rerun %s: %d ops re-run bit-identically, %d without a recorded call" % (dtype, done, skipped))

# A rerun under an existing label is refused with the file named.
try:
    faultline_capture.rerun(trace, "cpu1", "cpu")
    cs.fail("rerun under an existing label was accepted")
except TraceError as e:
    cs.check(trace in str(e), "error does not name the file: %s" % e)
# A link planted at PATH.tmp (another user's trap in a shared folder) is refused, and what it
# points at keeps its bytes; a stale regular PATH.tmp of a killed recording is replaced.
victim = os.path.join(work, "victim.txt")
with open(victim, "w") as fh:
    fh.write("precious")
trapped = os.path.join(work, "trapped.h5")
os.symlink(victim, trapped + ".tmp")
try:
    with faultline_capture.record(trapped, "gpu0", model=model):
        cs.step(model, x)
    cs.fail("recording through a planted link at PATH.tmp was accepted")
except ValueError as e:
    cs.check(trapped + ".tmp" in str(e), "error does not name the link: %s" % e)
with open(victim) as fh:
    cs.check(fh.read() == "precious", "the link's target was written")
stale = os.path.join(work, "stale.h5")
with open(stale + ".tmp", "w") as fh:
    fh.write("left by a killed recording")
with faultline_capture.record(stale, "gpu0", model=model):
    cs.step(model, x)
cs.check(os.path.exists(stale) and not os.path.exists(stale + ".tmp"), "stale PATH.tmp not replaced")

# ---- torch >= 2.9's fp32_precision API -----------------------------------------------------------
# Once it set TF32, torch refuses to read the legacy switches (allow_tf32,
# get_float32_matmul_precision): record() still starts and writes TF32 as that API says.
if hasattr(torch._C, "_get_fp32_precision_getter"):
    torch.backends.cuda.matmul.fp32_precision = "tf32"
    tf32 = os.path.join(work, "tf32.h5")
    with faultline_capture.record(tf32, "cpu0"):
        torch.mm(torch.randn(4, 4), torch.randn(4, 4))
    attrs, _ = root(tf32)
    cs.check(attrs["allow_tf32_matmul"] == 1 and attrs["fp32_precision_cuda_matmul"] == "tf32",
             "fp32_precision='tf32' recorded as %s" % {k: v for k, v in attrs.items() if "32" in k})
    print("fp32_precision API: TF32 recorded")
print("ok")
