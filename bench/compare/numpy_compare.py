#!/usr/bin/env python3
"""The numpy/h5py anchor for the compare benchmark: for every tensor pair, read both, count
bitwise mismatches, max |error| and max ulp distance. This is less analysis than Faultline does
(no histograms, tiles, signatures), so it is a generous anchor.

/usr/bin/python3 numpy_compare.py SUSPECT.h5 REFERENCE.h5
"""
import sys

import h5py
import numpy as np


def ordered(bits, width):
    sign = np.uint64(1) << np.uint64(width - 1)
    b = bits.astype(np.uint64)
    neg = (b & sign) != 0
    mag = b & (sign - np.uint64(1))
    return np.where(neg, -mag.astype(np.int64), mag.astype(np.int64))


def main(sus, ref):
    total = 0
    with h5py.File(sus, "r") as fs, h5py.File(ref, "r") as fr:
        names = []
        fs.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        for name in names:
            a = fs[name][...]
            b = fr[name][...]
            if a.dtype.itemsize == 2 and a.dtype.kind == "f":  # bf16 arrives promoted by h5py
                pass
            ua = a.view(np.uint32) if a.dtype == np.float32 else a.astype(np.float32).view(np.uint32)
            ub = b.view(np.uint32) if b.dtype == np.float32 else b.astype(np.float32).view(np.uint32)
            mism = int(np.count_nonzero(ua != ub))
            err = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))
            ulp = int(np.max(np.abs(ordered(ua, 32) - ordered(ub, 32))))
            total += mism
            print(f"{name}: mismatches={mism} max_abs={err:.3g} max_ulp={ulp}")
    print(f"total mismatches {total}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
