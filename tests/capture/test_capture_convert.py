"""python3 -m faultline_capture convert: a torch.save checkpoint (model and optimizer state,
bf16 and fp32, nested) round-trips bit-exactly into an HDF5 snapshot Faultline reads with
dotted names and kinds; a checkpoint that needs full unpickling is refused unless --trust;
bad input exits 2 naming the file."""
import json
import os
import subprocess
import sys

import h5py
import torch

sys.path.insert(0, os.path.dirname(__file__))
import capture_support as cs  # noqa: E402
from faultline_capture.dtypes import read_dataset  # noqa: E402

work = cs.tmpdir()


def convert(*args):
    p = subprocess.run([sys.executable, "-m", "faultline_capture", "convert", *args],
                       capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


torch.manual_seed(0)
model = cs.Block()
model.fc1.to(torch.bfloat16)
model.register_buffer("steps", torch.arange(5))
opt = torch.optim.AdamW(model.parameters())
model.fc1.to(torch.float32)
cs.step(model, torch.randn(2, 8, 32))
opt.step()
model.fc1.to(torch.bfloat16)
state = {"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3,
         "extra": [torch.tensor([1.5, -0.0, float("nan")], dtype=torch.bfloat16)]}
ckpt = os.path.join(work, "ckpt.pt")
torch.save(state, ckpt)
out = os.path.join(work, "ckpt.h5")
rc, so, se = convert(ckpt, out)
cs.check(rc == 0, "convert exited %d: %s" % (rc, se))

expected = {}
for k, v in state["model"].items():
    expected["model." + k] = (v, "weight")
for pid, s in state["optimizer"]["state"].items():
    for k, v in s.items():
        if isinstance(v, torch.Tensor):
            expected["optimizer.state.%s.%s" % (pid, k)] = (v, "optimizer")
expected["extra.0"] = (state["extra"][0], "weight")
with h5py.File(out, "r") as f:
    cs.check(set(f.keys()) == set(expected), "names: %s" % sorted(set(f.keys()) ^ set(expected)))
    for name, (tensor, kind) in expected.items():
        back = read_dataset(f[name])
        cs.check(back.dtype == tensor.dtype and back.shape == tensor.shape,
                 "%s: %s %s" % (name, back.dtype, back.shape))
        same = back.contiguous().view(-1).view(torch.uint8).equal(tensor.contiguous().view(-1).view(torch.uint8)) \
            if tensor.numel() else True
        cs.check(same, "%s: bits differ after the round trip" % name)
        cs.check(f[name].attrs["kind"] == kind, "%s: kind %s, expected %s" % (name, f[name].attrs["kind"], kind))
    cs.check(f["model.fc1.weight"].dtype.name == "uint16" and f["model.fc1.weight"].attrs["dtype"] == "bfloat16",
             "bf16 not stored as uint16 + dtype")

rc, so, se = cs.run_faultline("inspect", out, "--json")
cs.check(rc == 0, "inspect of the converted snapshot: %s" % se)
info = json.dumps(json.loads(so))
cs.check('"bfloat16"' in info and '"optimizer"' in info, "inspect does not see bf16 or kinds")
print("convert: %d tensors round-trip bit-exactly" % len(expected))

# Shapes this package's own reader must rebuild as torch.load does: tied tensors (one storage,
# two names), a strided view into a larger storage, a Parameter, empty and 0-d tensors.
base = torch.randn(4, 6)
tied = torch.nn.Parameter(torch.randn(3, 2))
shapes = {"tied_a": tied, "tied_b": tied, "view": base[1:, ::2], "column": base[:, 5],
          "empty": torch.empty(0, 3), "scalar": torch.tensor(2.5, dtype=torch.float64),
          "mask": torch.tensor([True, False, True]), "i8": torch.tensor([-128, 127], dtype=torch.int8)}
views = os.path.join(work, "views.pt")
torch.save(shapes, views)
rc, so, se = convert(views, os.path.join(work, "views.h5"))
cs.check(rc == 0, "views: rc %d %s" % (rc, se))
with h5py.File(os.path.join(work, "views.h5"), "r") as f:
    for name, tensor in shapes.items():
        back = read_dataset(f[name])
        cs.check(back.dtype == tensor.dtype and back.shape == tensor.shape and back.equal(tensor.detach()),
                 "%s: %s %s differs after the round trip" % (name, back.dtype, tuple(back.shape)))
print("convert: tied, strided, empty and 0-d tensors round-trip")

# Refusal: a class that weights_only loading does not allow.
evil = os.path.join(work, "evil.pt")
torch.save({"w": torch.ones(2), "module": torch.nn.Linear(2, 2)}, evil)  # a whole module object
rc, so, se = convert(evil, os.path.join(work, "evil.h5"))
cs.check(rc == 2 and evil in se and "--trust" in se and "refused" in se, "refusal: rc %d, %s" % (rc, se))
cs.check(not os.path.exists(os.path.join(work, "evil.h5")), "a refused checkpoint left an output")
rc, so, se = convert(evil, os.path.join(work, "evil.h5"), "--trust")
cs.check(rc == 0, "--trust: rc %d %s" % (rc, se))

# Bad input: not a checkpoint, missing.
junk = os.path.join(work, "junk.pt")
with open(junk, "wb") as fh:
    fh.write(b"\x00not a checkpoint")
for path in (junk, os.path.join(work, "missing.pt")):
    rc, so, se = convert(path, os.path.join(work, "x.h5"))
    cs.check(rc == 2 and se.startswith(path + ":") and len(se.strip().splitlines()) == 1,
             "bad input %s: rc %d, %r" % (path, rc, se))
print("refusal and bad input: exit 2 naming the file")
