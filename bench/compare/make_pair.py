#!/usr/bin/env python3
"""Writes the compare benchmark pair: reference.h5 and suspect.h5, each `--tensors` tensors of
`--size`x`--size` (default 16 x 4096x4096 float32 = 1 GiB per file), where 30% of the suspect's
elements are 1 ulp away from the reference. With --dtype bfloat16 the tensors are bf16 stored as
an HDF5 custom float with dtype="bfloat16" (half the bytes). --layout chunked stores them in
--chunk x --chunk chunks (default 512), --layout gzip likewise with gzip level 4 (h5py's
default) after the shuffle filter, as h5py and Keras checkpoints often are; --layout fletcher32
likewise with no compression but HDF5's fletcher32 checksum on every chunk.

Run with Debian's python3 (h5py, numpy): /usr/bin/python3 make_pair.py OUTDIR [--dtype ...]
"""
import argparse
import os

import h5py
import numpy as np


def bf16_type():
    t = h5py.h5t.IEEE_F32LE.copy()
    t.set_fields(15, 7, 8, 0, 7)
    t.set_precision(16)
    t.set_size(2)
    t.set_ebias(127)
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--tensors", type=int, default=16)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--fraction", type=float, default=0.30)
    ap.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    ap.add_argument("--layout", choices=["contiguous", "chunked", "gzip", "fletcher32"], default="contiguous")
    ap.add_argument("--chunk", type=int, default=512)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    rng = np.random.default_rng(1234)
    ref_path = os.path.join(a.outdir, "reference.h5")
    sus_path = os.path.join(a.outdir, "suspect.h5")
    storage = {}
    if a.layout != "contiguous":
        storage["chunks"] = (min(a.chunk, a.size), min(a.chunk, a.size))
    if a.layout == "gzip":
        storage.update(compression="gzip", compression_opts=4, shuffle=True)
    if a.layout == "fletcher32":
        storage["fletcher32"] = True
    with h5py.File(ref_path, "w") as fr, h5py.File(sus_path, "w") as fs:
        fr.attrs["role"] = "reference"
        fs.attrs["role"] = "suspect"
        for i in range(a.tensors):
            name = f"model/layers.{i}/weight"
            ref = (rng.standard_normal((a.size, a.size), dtype=np.float32) * 0.02).astype(np.float32)
            if a.dtype == "float32":
                bits = ref.view(np.uint32)
                mask = rng.random(ref.shape, dtype=np.float32) < a.fraction
                sus_bits = bits + mask.astype(np.uint32)  # +1 ulp in magnitude (finite, normal values)
                fr.create_dataset(name, data=ref, **storage)
                fs.create_dataset(name, data=sus_bits.view(np.float32), **storage)
            else:
                bits = (ref.view(np.uint32) >> 16).astype(np.uint16)
                mask = rng.random(ref.shape, dtype=np.float32) < a.fraction
                sus_bits = bits + mask.astype(np.uint16)
                for f, b in ((fr, bits), (fs, sus_bits)):
                    d = f.create_dataset(name, shape=b.shape, dtype=h5py.Datatype(bf16_type()), **storage)
                    d.id.write(h5py.h5s.ALL, h5py.h5s.ALL, b, mtype=bf16_type())
                    d.attrs["dtype"] = "bfloat16"
    print(ref_path, sus_path)


if __name__ == "__main__":
    main()
