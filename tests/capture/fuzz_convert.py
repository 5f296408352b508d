"""Fuzzes `faultline_capture convert` (without --trust): mutates a small valid checkpoint zip
(byte flips, insertions and truncations of data.pkl, of storage records and of the zip itself,
changed numel / offset / size / stride values, compressed entries) and checks that converting
each either succeeds or raises ConvertError: never another exception, never a hang.

    PYTHONPATH=python /usr/bin/python3 tests/capture/fuzz_convert.py [SEED] [ITERATIONS]

Not named test_*.py, so CTest does not run it as its own test; test_capture_convert_hostile.py
runs run(seed, 100). Also holds the builders of handcrafted checkpoints that test uses: a pickle
written opcode by opcode through pickle's pure-Python pickler, so it can say anything."""
import collections
import io
import os
import pickle
import random
import signal
import struct
import sys
import tempfile
import time
import zipfile

import torch

from faultline_capture.convert import ConvertError, convert_checkpoint

# ---- handcrafted checkpoints ------------------------------------------------------------------

class Global:
    """A reference to module.name in the pickle (a GLOBAL opcode), whether or not it exists."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle's save_reduce wants a callable
        raise TypeError


class Storage:
    """A storage the pickle names by persistent id ('storage', TYPE, key, 'cpu', numel)."""

    def __init__(self, key, type_name="FloatStorage", numel=4):
        self.key, self.type_name, self.numel = key, type_name, numel


class Tensor:
    """A tensor pickled as torch.save does: REDUCE of torch._utils.`func` with these args."""

    def __init__(self, storage, offset=0, size=(4,), stride=(1,), func="_rebuild_tensor_v2", extra=()):
        self.args = (storage, offset, tuple(size), tuple(stride))
        self.func, self.extra = func, tuple(extra)

    def __reduce__(self):
        args = self.args
        if self.func != "_rebuild_tensor":
            args = args + (False, collections.OrderedDict()) + self.extra
        return Global("torch._utils", self.func), args


class Parameter:
    """A torch.nn.Parameter as torch.save pickles it."""

    def __init__(self, data):
        self.data = data

    def __reduce__(self):
        return Global("torch._utils", "_rebuild_parameter"), (self.data, True, collections.OrderedDict())


class _Pickler(pickle._Pickler):
    dispatch = dict(pickle._Pickler.dispatch)

    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            return ("storage", Global("torch", obj.type_name), obj.key, "cpu", obj.numel)
        return None

    def _save_global_ref(self, obj):
        self.write(pickle.GLOBAL + obj.module.encode() + b"\n" + obj.name.encode() + b"\n")
    dispatch[Global] = _save_global_ref


def dumps(obj):
    f = io.BytesIO()
    _Pickler(f, protocol=2).dump(obj)
    return f.getvalue()


def write_checkpoint(path, obj, records, prefix="archive", compress=False, extra_entries=()):
    """A torch.save-style zip: prefix/data.pkl of `obj` (bytes: the pickle itself),
    prefix/data/KEY for each records[KEY] (bytes), prefix/version, and any (name, bytes) of
    `extra_entries`."""
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", method) as z:
        z.writestr(prefix + "/data.pkl", obj if isinstance(obj, bytes) else dumps(obj))
        for key, data in records.items():
            z.writestr("%s/data/%s" % (prefix, key), data)
        z.writestr(prefix + "/version", "3\n")
        for name, data in extra_entries:
            z.writestr(name, data)


def write_raw_zip(path, entries):
    """A zip whose headers say what they are told: entries of (name, payload as stored,
    method (0 stored, 8 raw deflate), crc, claimed uncompressed size)."""
    out, central = bytearray(), bytearray()
    for name, payload, method, crc, size in entries:
        n = name.encode()
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0x21, crc, len(payload), size,
                           len(n), 0) + n + payload
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0x21, crc,
                               len(payload), size, len(n), 0, 0, 0, 0, 0, offset) + n
    out += central + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central),
                                 len(out), 0)
    with open(path, "wb") as f:
        f.write(out)


# ---- fuzzing ----------------------------------------------------------------------------------

class Hang(Exception):
    pass


def _on_alarm(signum, frame):
    raise Hang()


def _base(rng):
    """(object, records) of a small valid checkpoint with shared storages, views, bf16, ints."""
    s0 = Storage("0", "FloatStorage", 12)
    s1 = Storage("1", "BFloat16Storage", 6)
    s2 = Storage("2", "LongStorage", 3)
    obj = collections.OrderedDict([
        ("w", Tensor(s0, 0, (3, 4), (4, 1))),
        ("w_t", Tensor(s0, 0, (4, 3), (1, 4))),  # a transposed view of the same storage
        ("b", Tensor(s0, 8, (4,), (1,))),
        ("h", Parameter(Tensor(s1, 0, (2, 3), (3, 1)))),
        ("steps", Tensor(s2, 0, (3,), (1,))),
        ("opt", {"state": {0: {"exp_avg": Tensor(s0, 4, (2, 2), (2, 1)), "step": 3.0}},
                 "param_groups": [{"lr": 1e-3, "params": [0]}]}),
    ])
    records = {"0": bytes(rng.getrandbits(8) for _ in range(48)),
               "1": bytes(rng.getrandbits(8) for _ in range(12)),
               "2": struct.pack("<3q", 1, 2, 3)}
    return obj, records


def _mutate_numbers(rng, obj):
    """Changes one numel, offset, size or stride of the handcrafted pickle."""
    tensors = [obj["w"], obj["w_t"], obj["b"], obj["h"].data, obj["steps"], obj["opt"]["state"][0]["exp_avg"]]
    t = rng.choice(tensors)
    storage, offset, size, stride = t.args
    which = rng.randrange(4)
    big = rng.choice([-1, 0, 1, 2, 5, 13, 2**31, 2**40, 2**62, 2**63, 2**64 + 3, -2**63])
    if which == 0:
        storage.numel = big if rng.random() < 0.5 else storage.numel + rng.choice([-1, 1])
    elif which == 1:
        offset = big
    elif which == 2 and size:
        size = tuple(big if i == 0 else s for i, s in enumerate(size))
    elif stride:
        stride = tuple(big if i == len(stride) - 1 else s for i, s in enumerate(stride))
    t.args = (storage, offset, size, stride)


def _mutate_bytes(rng, data):
    data = bytearray(data)
    op = rng.randrange(4)
    if not data or op == 0:
        return bytes(data[:rng.randrange(len(data) + 1)])  # truncate
    if op == 1:  # insert
        i = rng.randrange(len(data) + 1)
        return bytes(data[:i] + bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 8))) + data[i:])
    for _ in range(rng.randint(1, 4)):  # flip bytes
        i = rng.randrange(len(data))
        data[i] = rng.getrandbits(8) if op == 2 else data[i] ^ (1 << rng.randrange(8))
    return bytes(data)


def _case(rng, path):
    """Writes one mutated checkpoint to `path`; returns what was mutated."""
    obj, records = _base(rng)
    what = rng.choice(["pickle", "pickle", "numbers", "record", "zip", "none"])
    if what == "numbers":
        _mutate_numbers(rng, obj)
    pickled = dumps(obj)
    if what == "pickle":
        pickled = _mutate_bytes(rng, pickled)
    if what == "record":
        key = rng.choice(sorted(records))
        records[key] = _mutate_bytes(rng, records[key])
    compress = rng.random() < 0.3
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pickled)
        for key, data in records.items():
            z.writestr("archive/data/" + key, data)
        z.writestr("archive/version", "3\n")
    if what == "zip":
        with open(path, "rb") as f:
            raw = f.read()
        with open(path, "wb") as f:
            f.write(_mutate_bytes(rng, raw))
    return what + (" (deflated)" if compress else "")


def run(seed=0, iterations=200, per_case_s=10, verbose=False):
    """Fuzzes `iterations` cases from `seed`; returns (ok, refused). Raises AssertionError
    naming the seed, the iteration and a kept copy of the file when a case misbehaves."""
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix="faultline-fuzz-")
    path, out = os.path.join(work, "case.pt"), os.path.join(work, "case.h5")
    ok = refused = 0
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        for i in range(iterations):
            what = _case(rng, path)
            signal.alarm(per_case_s)
            try:
                convert_checkpoint(path, out)
                ok += 1
            except ConvertError as e:
                refused += 1
                text = str(e)
                assert text.startswith(path + ":") and "\n" not in text, "seed %d case %d: %r" % (seed, i, text)
                if verbose:
                    print("%4d %-18s %s" % (i, what, text[len(path) + 2:][:150]))
            except BaseException as e:
                kept = os.path.join(work, "failing-%d-%d.pt" % (seed, i))
                os.replace(path, kept)
                raise AssertionError("seed %d case %d (%s): %s: %s; the file is %s"
                                     % (seed, i, what, type(e).__name__, e, kept)) from e
            finally:
                signal.alarm(0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    for name in os.listdir(work):
        if not name.startswith("failing-"):
            os.remove(os.path.join(work, name))
    if not os.listdir(work):
        os.rmdir(work)
    return ok, refused


if __name__ == "__main__":
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    torch.set_num_threads(1)
    start = time.time()
    ok, refused = run(seed, iterations, verbose="-v" in sys.argv)
    print("fuzz_convert seed %d: %d cases, %d converted, %d refused with ConvertError, %.1f s"
          % (seed, iterations, ok, refused, time.time() - start))
