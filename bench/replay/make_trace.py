#!/usr/bin/env python3
"""Writes the replay benchmark's trace (trace v1): OPS element-wise `add` ops on float32 tensors
of SIZE x SIZE, with the output device gpu0 recorded (the exact sum, i.e. a healthy device).
Cheap to compute, large to move: what a replay campaign spends per repetition beyond the op
itself is the copy of the output to the host and its judgement there.

Usage: make_trace.py OUT.h5 [--size 4096] [--ops 2]
"""
import argparse

import h5py
import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument('out')
    p.add_argument('--size', type=int, default=4096)
    p.add_argument('--ops', type=int, default=2)
    a = p.parse_args()
    rng = np.random.default_rng(7)
    with h5py.File(a.out, 'w') as f:
        f.attrs['faultline_format'] = 'trace'
        f.attrs['faultline_version'] = np.int64(1)
        d = f.create_group('devices/gpu0')
        d.attrs['name'] = 'recorded device'
        d.attrs['role'] = 'reference'
        for i in range(a.ops):
            x = rng.standard_normal((a.size, a.size), dtype=np.float32)
            y = rng.standard_normal((a.size, a.size), dtype=np.float32)
            f.create_dataset('tensors/x%d' % i, data=x)
            f.create_dataset('tensors/y%d' % i, data=y)
            g = f.create_group('ops/%06d' % i)
            g.attrs['op'] = 'add'
            g.attrs['inputs'] = ['x%d' % i, 'y%d' % i]
            g.attrs['name'] = 'layer.%d.residual' % i
            g.create_dataset('outputs/gpu0/0', data=x + y)


if __name__ == '__main__':
    main()
