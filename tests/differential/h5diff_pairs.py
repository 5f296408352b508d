"""Pairs of HDF5 files written with h5py for the differential test against h5diff
(test_h5diff.py): every layout, filter, dtype convention, link kind and type of dataset that is
not a tensor, with differences planted in known places. write_pairs(DIR) writes them and returns
the cases: which files, which modes, and per dataset how h5diff's count maps onto Faultline's
(docs/h5diff.md)."""
import os

import h5py
import numpy as np

# How h5diff's answer for a dataset maps onto Faultline's (docs/h5diff.md):
#   count      h5diff's "N differences found" = Faultline's count (tensors: exact mismatches
#              without NaN-payload-only pairs, else beyond tolerance; other datasets: mismatches)
#   bits       the same, h5diff reading the bits as integers (bf16 as uint16, fp8 as uint8):
#              NaN payloads count
#   numpy      Faultline's count = numpy's (long doubles: h5diff 1.10 counts every element)
#   empty      a null dataspace: h5diff calls it not comparable, Faultline compares no value
#   refsum:T,U references that lead to the same paths: h5diff counts the differences of the
#              data there, which Faultline counts under T and U
#   positions  the positions h5diff lists, distinct = the elements Faultline finds differing
#              (h5diff counts strings and opaque values byte by byte)
#   differs    both find a difference, or neither (references: h5diff compares the data they
#              lead to, Faultline where they lead)
#   soft:T     a soft link: h5diff compares it as its target T, which Faultline compares once
#   not_comparable / not_compared / error   Faultline lists the pair there; h5diff finds a
#              difference / none / exits 2
#   padding    long doubles whose padding bytes differ: h5diff counts them, Faultline does not


def _normal(rng, shape, dtype='<f4'):
    return (rng.standard_normal(shape) * 0.5 + np.sign(rng.standard_normal(shape)) * 1.0).astype(dtype)


def _plant_float(a, rng, specials=True):
    """A copy of native-endian float array `a` with planted differences: exponent and mantissa
    bit flips, and (specials, also written into `a`) NaN on one side, NaNs with other payloads,
    signed zeros, opposite infinities."""
    b = a.copy()
    flat = b.reshape(-1)
    bits = flat.view({2: '<u2', 4: '<u4', 8: '<u8'}[flat.dtype.itemsize])
    n = flat.size
    width = 8 * flat.dtype.itemsize
    idx = rng.choice(n, size=min(n, 12), replace=False)
    bits[idx[:4]] ^= np.array(1 << (width - 3), dtype=bits.dtype)  # exponent
    bits[idx[4:8]] ^= np.array(1, dtype=bits.dtype)  # one ulp
    if specials and n >= 12:
        nan = {16: 0x7e00, 32: 0x7fc00000, 64: 0x7ff8000000000000}[width]
        flat[idx[8]] = np.nan  # NaN on one side
        a.reshape(-1)[idx[9]] = np.nan  # NaN on both sides, other payloads
        bits[idx[9]] = np.array(nan | 1, dtype=bits.dtype)
        a.reshape(-1)[idx[10]] = 0.0  # signed zero
        flat[idx[10]] = -0.0
        a.reshape(-1)[idx[11]] = np.inf  # opposite infinities
        flat[idx[11]] = -np.inf
    return b


def _pair(d, name, build):
    paths = []
    for side in ('a', 'b'):
        path = os.path.join(d, '%s_%s.h5' % (name, side))
        with h5py.File(path, 'w') as f:
            build(f, side)
        paths.append(path)
    return paths


def layouts(d, rng):
    """Every storage layout and filter, float32 and int32, differences planted alike."""
    base = {k: _normal(rng, shape) for k, shape in
            (('contiguous', (4000,)), ('chunked_ragged', (37, 29)), ('compact', (60,)), ('external_raw', (500,)),
             ('gzip', (50, 70)), ('shuffle_gzip', (50, 70)), ('fletcher32', (33, 33)), ('scaleoffset', (40, 40)))}
    planted = {k: _plant_float(v, rng, specials=k != 'scaleoffset') for k, v in base.items()}
    ints = np.arange(3000, dtype='<i4') * 7 - 9000
    ints_b = ints.copy()
    ints_b[[5, 700, 2999]] += [1, -100, 5000]

    def build(f, side):
        pick = (lambda k: base[k]) if side == 'a' else (lambda k: planted[k])
        f['contiguous'] = pick('contiguous')
        f.create_dataset('chunked_ragged', data=pick('chunked_ragged'), chunks=(8, 8))
        space = h5py.h5s.create_simple((60,))
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        h5py.h5d.create(f.id, b'compact', h5py.h5t.IEEE_F32LE, space, dcpl=dcpl).write(
            h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(pick('compact')))
        raw = 'layouts_%s.raw' % side
        pick('external_raw').tofile(os.path.join(d, raw))
        f.create_dataset('external_raw', shape=(500,), dtype='<f4', external=[(raw, 0, 2000)])
        f.create_dataset('gzip', data=pick('gzip'), chunks=(16, 16), compression='gzip')
        f.create_dataset('shuffle_gzip', data=pick('shuffle_gzip'), chunks=(16, 32), compression='gzip',
                         shuffle=True)
        f.create_dataset('fletcher32', data=pick('fletcher32'), chunks=(10, 10), fletcher32=True)
        f.create_dataset('scaleoffset', data=pick('scaleoffset'), chunks=(16, 16), scaleoffset=3)
        f.create_dataset('int_scaleoffset', data=ints if side == 'a' else ints_b, chunks=(256,), scaleoffset=0)
        f.create_dataset('int_gzip', data=ints if side == 'a' else ints_b, chunks=(500,), compression='gzip')

    files = _pair(d, 'layouts', build)
    datasets = {k: 'count' for k in base}
    datasets.update({'int_scaleoffset': 'count', 'int_gzip': 'count'})
    return {'name': 'layouts', 'files': files, 'modes': ['exact', 'abs', 'rel'], 'datasets': datasets}


def filters_missing(d, rng):
    """A filter neither HDF5 has (h5py's own lzf): both tools say the pair cannot be read."""
    v = _normal(rng, (100,))
    compressible = np.repeat(v[:10], 10)  # lzf is an optional filter: incompressible chunks stay raw

    def build(f, side):
        f.create_dataset('lzf', data=compressible, chunks=(50,), compression='lzf')
        f['readable'] = v if side == 'a' else v * 2

    return {'name': 'filters_missing', 'files': _pair(d, 'filters_missing', build), 'modes': ['exact'],
            'datasets': {'lzf': 'error', 'readable': 'count'}}


def dtypes(d, rng):
    """Every dtype convention, little- and big-endian, with special values planted."""
    a, b = {}, {}
    for code in ('<i1', '<i2', '<i4', '<i8', '<u1', '<u2', '<u4', '<u8', '>i4', '>u2'):
        info = np.iinfo(code)
        v = rng.integers(max(info.min, -10**6), min(info.max, 10**6), 2000).astype(code)
        w = v.copy()
        w[rng.choice(2000, 9, replace=False)] ^= 1 << (rng.integers(0, 8 * w.itemsize - 1) % 15)
        a['int/' + code.replace('<', 'le_').replace('>', 'be_')] = v
        b['int/' + code.replace('<', 'le_').replace('>', 'be_')] = w
    for code in ('<f2', '<f4', '<f8', '>f4', '>f8', '>f2'):
        name = 'float/' + code.replace('<', 'le_').replace('>', 'be_')
        v = _normal(rng, (40, 50), '<' + code[1:])
        w = _plant_float(v, rng)
        a[name] = v.astype(code)
        b[name] = w.astype(code)
    bools = rng.integers(0, 2, 500).astype(bool)
    bools_b = bools.copy()
    bools_b[[3, 77, 400]] ^= True
    bf_a = (_normal(rng, 3000).view('<u4') >> 16).astype('<u2')
    bf_b = bf_a.copy()
    bf_b[rng.choice(3000, 10, replace=False)] ^= np.array([1, 0x80, 0x4000, 0x8000, 2, 4, 8, 16, 32, 64], '<u2')
    fp8_a = rng.integers(0, 0x7e, 1000).astype('u1')
    fp8_b = fp8_a.copy()
    fp8_b[[1, 2, 999]] ^= np.array([1, 0x40, 0x80], 'u1')

    def build(f, side):
        for k, v in (a if side == 'a' else b).items():
            f[k] = v
        f['bool'] = bools if side == 'a' else bools_b
        bf = bf_a if side == 'a' else bf_b
        t = h5py.h5t.IEEE_F32LE.copy()
        t.set_fields(15, 7, 8, 0, 7)
        t.set_precision(16)
        t.set_size(2)
        t.set_ebias(127)
        f.require_group('bf16')
        ds = h5py.h5d.create(f.id, b'bf16/custom_float', t, h5py.h5s.create_simple((3000,)))
        ds.write(h5py.h5s.ALL, h5py.h5s.ALL, bf, mtype=t)
        f['bf16/custom_float'].attrs['dtype'] = 'bfloat16'
        f['bf16/uint16'] = bf
        f['bf16/uint16'].attrs['dtype'] = 'bfloat16'
        f['bf16/opaque'] = bf.view('V2')
        f['fp8/e4m3fn'] = fp8_a if side == 'a' else fp8_b
        f['fp8/e4m3fn'].attrs['dtype'] = 'float8_e4m3fn'

    datasets = {k: 'count' for k in a}
    datasets.update({'bool': 'count', 'bf16/custom_float': 'count', 'bf16/uint16': 'bits',
                     'bf16/opaque': 'positions', 'fp8/e4m3fn': 'bits'})
    # h5diff reads bf16 stored as uint16 or opaque, and fp8 as uint8, as integers or bytes: only
    # bit-for-bit equality means the same to both tools.
    return {'name': 'dtypes', 'files': _pair(d, 'dtypes', build), 'modes': ['exact', 'abs', 'rel'],
            'datasets': datasets, 'exact_only': ['bf16/uint16', 'bf16/opaque', 'fp8/e4m3fn', 'bool']}


def records(d, rng):
    """Datasets that are not tensors."""
    table = np.dtype([('step', '<i8'), ('loss', '<f8'), ('tag', 'S4'), ('hist', '<i4', (3,)), ('h', '<f2')])
    t_a = np.zeros(40, dtype=table)
    t_a['step'] = np.arange(40)
    t_a['loss'] = rng.random(40)
    t_a['tag'] = b'ab'
    t_a['hist'] = rng.integers(0, 50, (40, 3))
    t_a['h'] = rng.random(40)
    t_b = t_a.copy()
    t_b['step'][[2, 9]] += 1
    t_b['loss'][[3, 4, 5]] *= 1.5
    t_b['tag'][7] = b'ax'
    t_b['hist'][10, 1] += 1
    t_b['h'][39] = -t_b['h'][39]
    colour = h5py.enum_dtype({'RED': 0, 'GREEN': 1, 'BLUE': 2}, basetype='i1')
    c_a = rng.integers(0, 3, 50).astype('i1')
    c_b = c_a.copy()
    c_b[[1, 20, 49]] = (c_b[[1, 20, 49]] + 1) % 3
    ld_a = np.array([1.5, -2.25, 3.0, 1e300, 7.0, 0.1], dtype=np.longdouble)
    ld_b = ld_a.copy()
    ld_b[[1, 5]] = np.nextafter(ld_b[[1, 5]], np.longdouble(np.inf))
    for v in (ld_a, ld_b):
        v.view(np.uint8).reshape(v.size, -1)[:, 10:] = 0  # padding alike: see 'ld_padding'
    pad_a = ld_a.copy()
    pad_b = ld_a.copy()
    pad_b.view(np.uint8).reshape(pad_b.size, -1)[:, 12] = 0x5A

    def build(f, side):
        first = side == 'a'
        f['table'] = t_a if first else t_b
        f['strings_fixed'] = np.array([b'alpha', b'beta', b'gamma', b'delta'], 'S8') if first else \
            np.array([b'alpha', b'bexa', b'gamma', b'dxltz'], 'S8')
        f.create_dataset('strings_vlen', data=['one', 'two', 'three'] if first else ['one', 'twx', 'thrEE'],
                         dtype=h5py.string_dtype())
        f.create_dataset('enum', data=c_a if first else c_b, dtype=colour)
        f['opaque'] = np.array([np.void(bytes([1, 2, 3, 4])), np.void(bytes([5, 6, 7, 8]))]) if first else \
            np.array([np.void(bytes([1, 9, 3, 9])), np.void(bytes([5, 6, 7, 8]))])
        ds = h5py.h5d.create(f.id, b'bitfield', h5py.h5t.STD_B8LE, h5py.h5s.create_simple((6,)))
        ds.write(h5py.h5s.ALL, h5py.h5s.ALL, np.array([1, 2, 3, 4, 5, 6] if first else [1, 2, 7, 4, 5, 0], 'u1'),
                 mtype=h5py.h5t.STD_B8LE)
        seq = f.create_dataset('sequences', (3,), dtype=h5py.vlen_dtype(np.dtype('<i4')))
        seq[0] = [1, 2, 3]
        seq[1] = [4, 5] if first else [4, 6]
        seq[2] = [7] if first else [8]
        f['long_double'] = ld_a if first else ld_b
        f['ld_padding'] = pad_a if first else pad_b
        f.create_dataset('empty', data=h5py.Empty('<f4'))
        f['target_1'] = np.arange(5, dtype='<f4')
        f['target_2'] = np.arange(5, dtype='<f4') * (1 if first else 2)
        f['refs'] = np.array([f['target_1'].ref, f['target_2'].ref], dtype=h5py.ref_dtype)
        f['refs_other'] = np.array([f['target_1'].ref if first else f['target_2'].ref], dtype=h5py.ref_dtype)

    datasets = {'table': 'count', 'strings_fixed': 'positions', 'strings_vlen': 'positions', 'enum': 'count',
                'opaque': 'positions', 'bitfield': 'count', 'sequences': 'positions', 'long_double': 'numpy',
                'ld_padding': 'padding', 'empty': 'empty', 'target_1': 'count', 'target_2': 'count',
                'refs': 'refsum:target_1,target_2', 'refs_other': 'differs'}
    return {'name': 'records', 'files': _pair(d, 'records', build), 'modes': ['exact'], 'datasets': datasets}


def links(d, rng):
    """Soft links, external links (into a third file, each side its own), links that lead
    nowhere (a soft link in both files, an external link to a missing file in both, a soft link
    in one file where the other has a dataset)."""
    v = _normal(rng, (300,))
    w = _plant_float(v.copy(), rng, specials=False)
    for side, data in (('a', v), ('b', w)):
        with h5py.File(os.path.join(d, 'links_held_%s.h5' % side), 'w') as f:
            f['padding'] = np.zeros(10000, '<f4')
            f['data'] = data
            f.create_dataset('chunked', data=data.reshape(20, 15), chunks=(7, 7), compression='gzip')

    def build(f, side):
        f['local'] = v if side == 'a' else w
        f['soft'] = h5py.SoftLink('/local')
        f['external'] = h5py.ExternalLink('links_held_%s.h5' % side, '/data')
        f['external_chunked'] = h5py.ExternalLink('links_held_%s.h5' % side, '/chunked')
        f['dangling_both'] = h5py.SoftLink('/nowhere')
        f['dangling_external'] = h5py.ExternalLink('links_missing.h5', '/data')
        if side == 'a':
            f['dangling_one'] = h5py.SoftLink('/nowhere')
        else:
            f['dangling_one'] = np.zeros(3, '<f4')

    datasets = {'local': 'count', 'soft': 'soft:local', 'external': 'count', 'external_chunked': 'count',
                'dangling_both': 'not_compared', 'dangling_external': 'not_compared',
                'dangling_one': 'not_comparable'}
    return {'name': 'links', 'files': _pair(d, 'links', build), 'modes': ['exact', 'abs'], 'datasets': datasets}


def write_pairs(d):
    rng = np.random.default_rng(272727)
    return [layouts(d, rng), filters_missing(d, rng), dtypes(d, rng), records(d, rng), links(d, rng)]
