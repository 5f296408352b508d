"""The snapshot dtype conventions of dtypes.py without a faultline binary: every dtype name maps
to its torch dtype and back, bfloat16 is written as uint16 + dtype="bfloat16" and read back bit
for bit (NaN payloads, -0.0, subnormals), other dtypes as their numpy type, and tensors Faultline
cannot store (complex, sparse) are said to be so."""
import os
import sys

import h5py
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
import capture_support as cs  # noqa: E402
from faultline_capture.dtypes import (  # noqa: E402
    GOLDEN_DTYPES,
    dtype_name,
    is_storable,
    read_dataset,
    to_numpy,
    torch_dtype,
    write_dataset,
)

NAMES = {torch.float64: "float64", torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
         torch.int8: "int8", torch.int16: "int16", torch.int32: "int32", torch.int64: "int64",
         torch.uint8: "uint8", torch.bool: "bool"}
for _name in ("float8_e4m3fn", "float8_e5m2"):  # torch >= 2.1
    if hasattr(torch, _name):
        NAMES[getattr(torch, _name)] = _name


def bits(t):
    """The tensor's bytes, row-major: equal bytes mean the same bits."""
    flat = t.contiguous().reshape(-1)
    return flat.view(torch.uint8).numpy().tobytes() if t.dtype != torch.bool else flat.numpy().tobytes()


def names():
    for dtype, name in NAMES.items():
        cs.check(dtype_name(dtype) == name, "dtype_name(%s) = %r" % (dtype, dtype_name(dtype)))
        cs.check(torch_dtype(name) == dtype, "torch_dtype(%r) = %s" % (name, torch_dtype(name)))
    cs.check(dtype_name(torch.complex64) is None and torch_dtype("complex64") is None, "complex64 has a name")
    cs.check(torch_dtype("bf16") is None, "torch_dtype accepts the alias bf16 (not a canonical name)")
    cs.check(set(GOLDEN_DTYPES) == {torch.float32, torch.bfloat16, torch.float16}, "GOLDEN_DTYPES %s"
             % (GOLDEN_DTYPES,))
    print("ok: %d dtype names, both ways" % len(NAMES))


def storable():
    cs.check(is_storable(torch.zeros(2, dtype=torch.bfloat16)), "bf16 not storable")
    cs.check(not is_storable(torch.zeros(2, dtype=torch.complex64)), "complex storable")
    cs.check(not is_storable(torch.zeros(2, 2).to_sparse()), "sparse storable")
    cs.check(not is_storable(np.zeros(2)), "a numpy array is storable")
    print("ok: is_storable (bf16 yes; complex, sparse, numpy no)")


def round_trip():
    # bf16 bit patterns that a conversion through float would change or lose: a NaN with a
    # payload, -0.0, the smallest subnormal, infinities, the largest finite.
    patterns = torch.from_numpy(np.array([0x7FC1, 0xFFA0, 0x8000, 0x0001, 0x7F80, 0xFF80, 0x7F7F, 0x3F80],
                                         dtype=np.uint16).view(np.int16))
    tensors = {
        "bf16": patterns.view(torch.bfloat16).reshape(2, 4),
        "f32": torch.tensor([1.5, -0.0, float("nan"), float("inf"), 1e-45], dtype=torch.float32),
        "f16": torch.tensor([[65504.0, -6e-8]], dtype=torch.float16),
        "i64": torch.arange(6).reshape(2, 3),
        "bool": torch.tensor([True, False, True]),
        "scalar": torch.tensor(2.5),
        "transposed": torch.arange(6, dtype=torch.float32).reshape(2, 3).t(),
    }
    if hasattr(torch, "float8_e4m3fn"):
        tensors["f8"] = torch.tensor([0x7F, 0x01, 0x80], dtype=torch.uint8).view(torch.float8_e4m3fn)  # NaN, tiny, -0
    with h5py.File("dtypes.h5", "w", driver="core", backing_store=False) as f:
        for name, t in tensors.items():
            nbytes = write_dataset(f, name, t, kind="weight" if name == "bf16" else None)
            cs.check(nbytes == t.numel() * t.element_size(), "%s: %d bytes written" % (name, nbytes))
            back = read_dataset(f[name])
            cs.check(back.dtype == t.dtype and back.shape == t.shape, "%s: read back as %s %s"
                     % (name, back.dtype, list(back.shape)))
            cs.check(bits(back) == bits(t), "%s: the bits changed on the way" % name)
        ds = f["bf16"]
        cs.check(ds.dtype == np.uint16 and ds.attrs["dtype"] == "bfloat16" and ds.attrs["kind"] == "weight",
                 "bf16 stored as %s with attrs %s" % (ds.dtype, dict(ds.attrs)))
        cs.check("dtype" not in f["f32"].attrs and "kind" not in f["f32"].attrs, "f32 has attrs it needs not")
        if "f8" in tensors:
            cs.check(f["f8"].dtype == np.uint8 and f["f8"].attrs["dtype"] == "float8_e4m3fn", "f8 stored as uint8")
        # What other writers produce: uint16 marked "bf16", plain uint16 (kept as int16 bits).
        f.create_dataset("alias", data=np.array([0x3F80], dtype=np.uint16)).attrs["dtype"] = "bf16"
        cs.check(read_dataset(f["alias"]).item() == 1.0, "dtype=\"bf16\" is not read as bfloat16")
        f.create_dataset("u16", data=np.array([0xFFFF], dtype=np.uint16))
        u16 = read_dataset(f["u16"])
        cs.check(u16.dtype == torch.int16 and u16.item() == -1, "plain uint16 read as %s %s" % (u16.dtype, u16))
    array, attr = to_numpy(tensors["bf16"])
    cs.check(array.dtype == np.uint16 and attr == "bfloat16" and int(array[0, 0]) == 0x7FC1, "to_numpy of bf16")
    print("ok: write_dataset/read_dataset keep the bits of %d tensors; other writers' bf16 read" % len(tensors))


if __name__ == "__main__":
    names()
    storable()
    round_trip()
    print("dtypes: torch %s: all checks passed" % torch.__version__)
