"""python3 -m faultline_capture convert on hostile input, without --trust: a TorchScript archive
never runs its code; storages and tensors that claim more than their records hold, deflate
bombs, views past their storage and repeated data are refused before memory is spent (each
conversion's peak RSS is measured); OUT never overwrites the checkpoint nor writes through a
planted link; a FIFO never blocks; torch 2.x's archive shapes convert; a fuzz run only ever
converts or refuses."""
import collections
import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import zlib

import h5py
import torch

sys.path.insert(0, os.path.dirname(__file__))
import capture_support as cs  # noqa: E402
import fuzz_convert as fz  # noqa: E402
from faultline_capture import convert as cv  # noqa: E402
from fuzz_convert import Global, Storage, Tensor  # noqa: E402

work = cs.tmpdir()
GiB = 1 << 30
peaks = {}


# Runs the CLI's main() and then writes the process's VmHWM (its peak RSS, from /proc) to the
# file argv[1]. Not ru_maxrss: a child's counts its parent's RSS at the fork.
_MEASURED = """import sys
from faultline_capture.__main__ import main
try:
    rc = main(sys.argv[2:])
finally:
    with open("/proc/self/status") as status, open(sys.argv[1], "w") as out:
        out.write([line.split()[1] for line in status if line.startswith("VmHWM:")][0])
sys.exit(rc)
"""


def convert(*args, timeout=120, name=None):
    """(exit code, stdout, stderr) of `python3 -m faultline_capture convert ARGS`; its peak
    RSS is kept in peaks[name]."""
    hwm = os.path.join(work, "hwm")
    p = subprocess.Popen([sys.executable, "-c", _MEASURED, hwm, "convert", *args], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        so, se = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        cs.fail("convert %s: still running after %d s" % (" ".join(args), timeout))
    with open(hwm) as f:
        peaks[name or os.path.basename(args[0])] = int(f.read()) * 1024
    os.remove(hwm)
    return p.returncode, so, se


def refused(path, out, *needles, name=None, timeout=120):
    """Converts `path` in a new process; checks it exits 2 with one line naming the file and
    each needle, and leaves no output (its peak RSS is checked at the end)."""
    rc, so, se = convert(path, out, name=name, timeout=timeout)
    cs.check(rc == 2 and se.startswith(path + ":") and len(se.strip().splitlines()) == 1,
             "%s: rc %d, %r" % (name or path, rc, se))
    for needle in needles:
        cs.check(needle in se, "%s: %r not in %r" % (name or path, needle, se))
    cs.check(not os.path.exists(out), "%s: a refused checkpoint left %s" % (name or path, out))
    leftovers = [n for n in os.listdir(os.path.dirname(out)) if n.endswith(".tmp")]
    cs.check(not leftovers, "%s: temporaries left: %s" % (name or path, leftovers))
    return se


def refused_here(path, out, *needles, name=None):
    """refused() in this process (faster: no torch import), through convert_checkpoint. An OUT
    that was there before (a link, a folder) must still be there, as it was."""
    before = os.lstat(out) if os.path.lexists(out) else None
    signal.alarm(60)  # SIGALRM's default action ends this test: a hang fails it
    try:
        cv.convert_checkpoint(path, out)
    except cv.ConvertError as e:
        text = str(e)
    else:
        cs.fail("%s: converted" % (name or path))
    finally:
        signal.alarm(0)
    cs.check(text.startswith(path + ":") and "\n" not in text, "%s: %r" % (name or path, text))
    for needle in needles:
        cs.check(needle in text, "%s: %r not in %r" % (name or path, needle, text))
    after = os.lstat(out) if os.path.lexists(out) else None
    cs.check(before == after, "%s: a refused checkpoint changed %s" % (name or path, out))
    leftovers = [n for n in os.listdir(os.path.dirname(out) or ".") if n.endswith(".tmp")]
    cs.check(not leftovers, "%s: temporaries left: %s" % (name or path, leftovers))
    return text


def handcrafted(name, obj, records, **kw):
    path = os.path.join(work, name)
    fz.write_checkpoint(path, obj, records, **kw)
    return path


out = os.path.join(work, "out.h5")

# ---- TorchScript: torch 1.13's torch.load hands it to torch.jit.load, which runs its code.


class Booby(torch.nn.Module):
    """A scripted module whose __setstate__ (run by torch.jit.load) creates the file `marker`."""

    def __init__(self, marker: str):
        super().__init__()
        self.w = torch.ones(2)
        self.marker = marker

    def forward(self, x):
        return x * self.w

    @torch.jit.export
    def __getstate__(self) -> tuple[torch.Tensor, str, bool]:
        return (self.w, self.marker, self.training)

    @torch.jit.export
    def __setstate__(self, state: tuple[torch.Tensor, str, bool]) -> None:
        touched = torch.from_file(state[1], True, 4, dtype=torch.uint8)  # shared: creates the file
        touched.fill_(65)
        self.w = state[0] + touched[:2].float() * 0  # used, so the scripted code keeps it
        self.marker = state[1]
        self.training = state[2]


marker = os.path.join(work, "MARKER")
script = os.path.join(work, "script.pt")
torch.jit.save(torch.jit.script(Booby(marker)), script)
torch.jit.load(script)  # proof that the archive is live
cs.check(os.path.exists(marker), "the TorchScript archive does not run its code under torch.jit.load")
os.remove(marker)
renamed = os.path.join(work, "script.zip")
shutil.copy(script, renamed)
for path in (script, renamed):
    refused(path, out, "TorchScript", "--trust")
    cs.check(not os.path.exists(marker), "%s: converting it ran its code" % path)
print("TorchScript archives refused; their code never ran")

# ---- Storages and tensors that claim more than the file holds.

numel = 2**30  # 4 GiB of float32, from a 16-byte record
path = handcrafted("numel.pt", {"w": Tensor(Storage("0", "FloatStorage", numel), 0, (numel,), (1,))},
                   {"0": bytes(16)})
refused(path, out, "%d" % numel, "holds 16 bytes", "data/0")


def deflate_zeros(n, chunk=64 << 20):
    """(raw deflate stream, crc) of n zero bytes (n a multiple of chunk), in about a second:
    one full-flushed chunk repeated (a full flush resets the compressor)."""
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    zeros = bytes(chunk)
    block = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(n // chunk):
        crc = zlib.crc32(zeros, crc)
    return block * (n // chunk) + c.flush(), crc


bomb, bomb_crc = deflate_zeros(2 * GiB)  # ~2 MB inflating to 2 GiB


def stored(name, data):
    return (name, data, 0, zlib.crc32(data), len(data))


def bomb_archive(path, obj, claimed_size):
    """data.pkl of `obj`, and the bomb as record data/0 with `claimed_size` in its header."""
    fz.write_raw_zip(path, [stored("archive/data.pkl", fz.dumps(obj)), stored("archive/version", b"3\n"),
                            ("archive/data/0", bomb, 8, bomb_crc, claimed_size)])


# A record whose header says 16 bytes (as its storage does) but inflates to 2 GiB.
liar = os.path.join(work, "liar.pt")
bomb_archive(liar, {"w": Tensor(Storage("0", "FloatStorage", 4))}, 16)
refused(liar, out, "CRC", name="lying deflate header")
# An honest header: 2 GiB of float32 storage from ~2 MB of file, past the 1 GiB allowance.
honest = os.path.join(work, "bomb.pt")
bomb_archive(honest, {"w": Tensor(Storage("0", "FloatStorage", 2**29), 0, (2**29,), (1,))}, 2 * GiB)
refused(honest, out, "beyond the file's own", "--trust", name="deflate bomb")

# Views past their storage (4 floats), and numbers torch would take as they are.
s4 = Storage("0", "FloatStorage", 4)
views = {"size": Tensor(s4, 0, (1000,), (1,)), "offset": Tensor(s4, 3, (2,), (1,)),
         "stride": Tensor(s4, 0, (2, 2), (1000, 1)), "offset_past_end": Tensor(s4, 10**6, (0,), (1,)),
         "negative_stride": Tensor(s4, 3, (2,), (-1,)), "negative_size": Tensor(s4, 0, (-1,), (1,)),
         "v3_wider_dtype": Tensor(Storage("0", "UntypedStorage", 16), 0, (3,), (1,), func="_rebuild_tensor_v3",
                                  extra=(Global("torch", "float64"),))}
for label, view in views.items():
    refused_here(handcrafted(label + ".pt", {"w": view}, {"0": bytes(16)}), out, "a tensor", name="view " + label)
# Views that repeat their storage: 2 x 1 GiB of one float (stride 0), past the allowance.
s1 = Storage("0", "FloatStorage", 1)
path = handcrafted("repeated.pt", {"a": Tensor(s1, 0, (2**28,), (0,)), "b": Tensor(s1, 0, (2**28,), (0,))},
                   {"0": bytes(4)})
refused(path, out, "beyond the file's own", name="repeated views")
print("storages and views beyond their data refused")

# ---- Pickles: nesting, shared containers, BUILD on a tensor, legacy files.

# {"w": [[[...]]]} 5000 deep: 5000 EMPTY_LISTs, each APPENDed to the one below (pickle's own
# pickler would recurse too deep to write it).
deep = b"\x80\x02}X\x01\x00\x00\x00w" + b"]" * 5000 + b"a" * 4999 + b"s."
refused_here(handcrafted("deep.pt", deep, {}), out, "nested", name="deep nesting")
laughs = [Tensor(s4)]
for _ in range(40):
    laughs = [laughs] * 10  # pickled once each (the memo), walked 10^40 times
refused_here(handcrafted("laughs.pt", {"w": laughs}, {"0": bytes(16)}), out, "values", name="shared containers")


# A data.pkl past MAX_PICKLE (its objects could take ~75x its size) is refused unread.
big = b"\x80\x02(" + b"}" * (cv.MAX_PICKLE + 1) + b"l."
refused_here(handcrafted("bigpickle.pt", big, {}), out, "data.pkl is %d bytes" % (len(big)), name="a big pickle")


class KeyedBy:
    """An OrderedDict {key: 1} as torch.save pickles one (SETITEMS), never hashing `key` here."""

    def __init__(self, key):
        self.key = key

    def __reduce__(self):
        return Global("collections", "OrderedDict"), (), None, None, iter([(self.key, 1)])


hashed = (1,)
for _ in range(100):
    hashed = (hashed, hashed)  # pickled once each; hashing it visits 2^100 tuples
refused_here(handcrafted("hash.pt", {"w": KeyedBy(hashed)}, {}), out, "dict key", name="tuple hash bomb")


class SetState:
    """A tensor with a state to BUILD: Tensor.__setstate__ calls set_ with the file's numbers."""

    def __reduce__(self):
        return (Global("torch._utils", "_rebuild_tensor"), (s4, 0, (4,), (1,)), (s4, 0, (1000,), (1,)))


refused_here(handcrafted("build.pt", {"w": SetState()}, {"0": bytes(16)}), out, "sets the state", name="BUILD")
legacy = os.path.join(work, "legacy.pt")
torch.save({"w": torch.ones(2)}, legacy, _use_new_zipfile_serialization=False)
refused(legacy, out, "legacy", "re-save", "--trust")
rc, so, se = convert(legacy, out, "--trust")
cs.check(rc == 0 and os.path.exists(out), "legacy with --trust: rc %d %s" % (rc, se))
os.remove(out)
print("deep, shared, hashed, big, BUILD and legacy pickles refused")

# ---- Output safety.

good = os.path.join(work, "good.pt")
torch.save({"w": torch.arange(6.0)}, good)
with open(good, "rb") as f:
    good_bytes = f.read()


def unchanged(what):
    with open(good, "rb") as f:
        cs.check(f.read() == good_bytes, "%s: the checkpoint changed" % what)


rc, so, se = convert(good, good)
cs.check(rc == 2 and se.startswith(good + ":") and "is the checkpoint itself" in se, "x.pt x.pt: rc %d %r" % (rc, se))
unchanged("convert x.pt x.pt")
hard = os.path.join(work, "hard.h5")
os.link(good, hard)
refused_here(good, hard, "is the checkpoint itself", name="a hard link as OUT")
os.remove(hard)
unchanged("a hard link as OUT")
link = os.path.join(work, "link.h5")
os.symlink(good, link)
refused_here(good, link, "is the checkpoint itself", name="a link to it as OUT")
cs.check(os.path.islink(link), "the link was replaced")
os.remove(link)
unchanged("a link to it as OUT")
other = os.path.join(work, "other.h5")
os.symlink(os.path.join(work, "elsewhere.h5"), other)
refused_here(good, other, "not a regular file", name="a link as OUT")
os.remove(other)

victim = os.path.join(work, "victim.txt")
with open(victim, "w") as f:
    f.write("precious")
planted = out + ".tmp"  # where the old code wrote its temporary
os.symlink(victim, planted)
rc, so, se = convert(good, out)
cs.check(rc == 0 and os.path.isfile(out) and not os.path.islink(out), "planted OUT.tmp: rc %d %s" % (rc, se))
cs.check(open(victim).read() == "precious", "the link planted at OUT.tmp was written through")
cs.check(os.stat(out).st_mode & 0o777 == 0o666 & ~cv._umask(), "OUT's mode is %o" % os.stat(out).st_mode)
os.remove(planted)
# A link at the very name mkstemp picks first: O_EXCL takes the next name, never the link.
names = iter(["planted", "fresh"])
real_names = tempfile._get_candidate_names
tempfile._get_candidate_names = lambda: names
try:
    trap = os.path.join(work, ".out.h5.planted.tmp")
    os.symlink(victim, trap)
    cv.convert_checkpoint(good, out)
finally:
    tempfile._get_candidate_names = real_names
cs.check(open(victim).read() == "precious" and os.path.islink(trap), "the link at mkstemp's name was written through")
os.remove(trap)
with h5py.File(out, "r") as f:
    cs.check(f["w"][()].tolist() == list(range(6)), "the converted values differ")

fifo = os.path.join(work, "fifo.pt")
os.mkfifo(fifo)
refused(fifo, out + "2", "not a regular file", timeout=30)
folder = os.path.join(work, "folder.h5")
os.mkdir(folder)
refused_here(good, folder, "not a regular file", name="a folder as OUT")
os.mkfifo(out + ".fifo")
refused_here(good, out + ".fifo", "not a regular file", name="a FIFO as OUT")
os.remove(out + ".fifo")
print("OUT: never the checkpoint, never through a link; a FIFO never blocks")

# ---- torch 2.x's shapes (written here by hand: this torch is 1.13): prefix "archive", a
# byteorder record, _rebuild_tensor_v2 with its metadata argument, _rebuild_tensor_v3 on an
# untyped storage, BFloat16Storage.

bf = torch.tensor([1.5, -2.0, float("nan")], dtype=torch.bfloat16)
obj = collections.OrderedDict([
    ("w", Tensor(Storage("0", "FloatStorage", 3), 0, (3,), (1,), extra=({},))),
    ("bf", Tensor(Storage("1", "BFloat16Storage", 3), 0, (3,), (1,), extra=({},))),
    ("raw", Tensor(Storage("2", "UntypedStorage", 4), 0, (2,), (1,), func="_rebuild_tensor_v3",
                   extra=(Global("torch", "int16"), {})))])
records = {"0": struct.pack("<3f", 1, 2, 3), "1": bf.view(torch.int16).numpy().tobytes(),
           "2": struct.pack("<2h", -7, 300)}
extras = [("archive/byteorder", b"little"), ("archive/.data/version", b"1\n"),
          ("archive/.data/serialization_id", b"0123456789")]
path = handcrafted("torch2.pt", obj, records, extra_entries=extras)
cv.convert_checkpoint(path, out)
with h5py.File(out, "r") as f:
    cs.check(f["w"][()].tolist() == [1, 2, 3] and f["raw"][()].tolist() == [-7, 300], "torch 2.x values")
    cs.check(f["bf"].attrs["dtype"] == "bfloat16" and f["bf"][()].tobytes() == records["1"], "torch 2.x bf16 bits")
os.remove(out)
extras[0] = ("archive/byteorder", b"big")
refused_here(handcrafted("big.pt", obj, records, extra_entries=extras), out, "big-endian")
print("torch 2.x archive shapes convert; big-endian ones are refused")

# ---- Fuzz, and memory.

ok, rejected = fz.run(seed=1, iterations=100)
cs.check(ok and rejected, "fuzz: %d converted, %d refused" % (ok, rejected))
print("fuzz: 100 mutated checkpoints, %d converted, %d refused, nothing else" % (ok, rejected))

worst = max(peaks, key=peaks.get)
cs.check(peaks[worst] < GiB, "convert of %s peaked at %.0f MiB" % (worst, peaks[worst] / 2**20))
here = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # the in-process conversions
cs.check(here < GiB, "this test (its in-process conversions) peaked at %.0f MiB" % (here / 2**20))
print("peak RSS: %.0f MiB at most in a conversion (%s), %.0f MiB in this test"
      % (peaks[worst] / 2**20, worst, here / 2**20))
print("  " + ", ".join("%s %.0f" % (k, v / 2**20) for k, v in peaks.items()))
shutil.rmtree(work)
