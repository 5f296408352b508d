#!/usr/bin/env python3
"""Writes the small sample files bundled with Faultline (run with Debian's python3: h5py, numpy).

sample-snapshot.h5   a suspect-rank snapshot of a tiny MLP in the conventions Faultline reads:
                     float32, bfloat16 as an HDF5 custom float (+ dtype attribute), bfloat16 as
                     uint16 + dtype, fp8 as uint8 + dtype, int64, bool.
sample.safetensors   the same weights as safetensors.
Deterministic: the same bytes every run.
"""
import json
import struct
import sys

import h5py
import numpy as np


def bf16_bits(x):
    """Round-to-nearest-even float32 -> bfloat16 bit patterns."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def bf16_type():
    t = h5py.h5t.IEEE_F32LE.copy()
    t.set_fields(15, 7, 8, 0, 7)
    t.set_precision(16)
    t.set_size(2)
    t.set_ebias(127)
    return t


def main(outdir):
    rng = np.random.default_rng(20261129)
    w1 = (rng.standard_normal((64, 32)) * 0.05).astype(np.float32)
    w2 = (rng.standard_normal((32, 64)) * 0.05).astype(np.float32)
    gamma = np.ones(32, dtype=np.float32)
    act = rng.standard_normal((8, 64)).astype(np.float32)

    with h5py.File(f"{outdir}/sample-snapshot.h5", "w", libver="earliest") as f:
        f.attrs["device"] = "GPU-3 (H200, serial 1652822001234)"
        f.attrs["role"] = "suspect"
        f.attrs["step"] = np.int64(1200)
        f.attrs["rank"] = np.int64(3)
        d = f.create_dataset("model/layers.0/mlp/fc1/weight", data=w1)
        d.attrs["kind"] = "weight"
        bits = bf16_bits(w2)
        d = f["model/layers.0/mlp"].create_dataset("fc2/weight", shape=w2.shape,
                                                   dtype=h5py.Datatype(bf16_type()))
        d.id.write(h5py.h5s.ALL, h5py.h5s.ALL, bits, mtype=bf16_type())
        d.attrs["dtype"] = "bfloat16"
        d.attrs["kind"] = "weight"
        d = f.create_dataset("model/layers.0/norm/weight", data=bf16_bits(gamma))
        d.attrs["dtype"] = "bfloat16"
        d.attrs["kind"] = "weight"
        d = f.create_dataset("grads/layers.0/mlp/fc1/weight", data=(w1 * 1e-3).astype(np.float32),
                             chunks=(16, 32), compression="gzip", shuffle=True)
        d.attrs["kind"] = "grad"
        d = f.create_dataset("activations/layers.0/mlp/input", data=act)
        d.attrs["kind"] = "activation"
        d = f.create_dataset("activations/layers.0/mlp/input_fp8", data=np.arange(256, dtype=np.uint8))
        d.attrs["dtype"] = "float8_e4m3fn"
        d.attrs["kind"] = "activation"
        f.create_dataset("optimizer/step", data=np.int64(1200))
        f.create_dataset("optimizer/found_inf", data=np.array([False, False, True]))

    tensors = [
        ("model.layers.0.mlp.fc1.weight", "F32", w1.shape, w1.tobytes()),
        ("model.layers.0.mlp.fc2.weight", "BF16", w2.shape, bf16_bits(w2).tobytes()),
        ("model.layers.0.norm.weight", "BF16", gamma.shape, bf16_bits(gamma).tobytes()),
    ]
    header, offset, blob = {"__metadata__": {"format": "pt", "step": "1200"}}, 0, b""
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blob += data
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(f"{outdir}/sample.safetensors", "wb") as out:
        out.write(struct.pack("<Q", len(text)) + text + blob)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
