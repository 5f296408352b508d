"""convert_checkpoint(): a torch.save checkpoint (state dicts, nested dicts and lists, optimizer
state, pytorch_model.bin) to an HDF5 snapshot Faultline opens: one dataset per tensor named by
its dotted path, a `kind` attribute (weight / grad / optimizer), bfloat16 as uint16 + dtype.

Without ``trust`` the checkpoint never reaches torch.load: torch 1.13 hands a TorchScript zip to
torch.jit.load (which runs its code) before it looks at ``weights_only``, and believes the
element count a pickle gives a storage (copying heap memory past a short record). This module
reads torch's zip format itself (since PyTorch 1.6: ``<prefix>/data.pkl``, one record
``<prefix>/data/<key>`` per storage, optional ``version`` and ``byteorder``):

* the pickle is read by a restricted unpickler: containers, plain values, torch.Size, dtypes and
  this module's own rebuild functions; any other class is refused with its name;
* a storage is its record's bytes, which must be exactly ``numel * itemsize`` long (read with a
  bound, whatever a compressed entry inflates to), and a tensor a view of them that must lie
  inside them;
* what the checkpoint expands to (records inflated from compressed entries, tensors repeating
  their storage's bytes) may exceed the file's own size by at most ALLOWANCE; the pickle's size,
  its dict keys, the nesting, the values walked and the names are bounded too, so a small
  hostile file cannot take much memory, time or disk.

TorchScript archives, the legacy (pre-1.6) format and big-endian archives are refused;
``trust=True`` loads anything with torch.load, which can run code from the file. The output is
written to a new temporary file in OUT's directory (never through a planted link), then renamed
onto OUT; OUT may not be the checkpoint, nor exist as anything but a regular file.
"""
import collections
import io
import math
import os
import pickle
import stat
import sys
import tempfile
import zipfile
from collections.abc import Callable
from typing import ClassVar

import h5py
import numpy as np
import torch

from .dtypes import is_storable, write_dataset

_OPTIMIZER_KEYS = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq", "momentum_buffer", "square_avg",
                   "acc_delta", "sum", "mu_product", "prev", "step_size")

ALLOWANCE = 1 << 30  # bytes a checkpoint may expand to beyond the file's own size
MAX_PICKLE = 8 << 20  # data.pkl bytes: its objects take up to ~75x that (~600 MiB at most)
_MAX_DIMS = 64  # torch's own limit
_MAX_DEPTH = 1000  # container nesting
_MAX_NAME_BYTES = 256 << 20  # memory of all tensor and kept value names together
_KEPT_SKIPPED = 1000  # names of skipped values kept (and stored in the snapshot)
_TRUST_HINT = "pass --trust only if you trust where it came from"
# torch.save's legacy format starts with a pickled magic number (protocol 2, LONG1 of 10 bytes).
_LEGACY_MAGIC = b"\x80\x02\x8a\x0a" + (0x1950a86a20f9469cfc6c).to_bytes(10, "little")


class ConvertError(Exception):
    """A checkpoint that cannot be converted; the message names the file and the problem."""


class Refused(pickle.UnpicklingError):
    """What only full unpickling (trust) could load: a class outside the allowed ones, a
    TorchScript or legacy archive, more data than the allowance."""


class _Bad(Exception):
    """A damaged or inconsistent checkpoint (hostile ones included); the message says what."""


def _one_line(e):
    return " ".join(str(e).split())


def _brief(value, depth=0):
    """A short description of a value from the file, for a message: its repr could be huge
    (shared nested tuples repeat exponentially) or raise (ints past 4300 digits)."""
    if isinstance(value, (str, bytes)):
        return repr(value[:40]) + ("..." if len(value) > 40 else "")
    if isinstance(value, (bool, float)) or value is None or (isinstance(value, int) and value.bit_length() < 128):
        return repr(value)
    if isinstance(value, (tuple, list)) and depth < 2:
        items = [_brief(v, depth + 1) for v in value[:6]] + (["..."] if len(value) > 6 else [])
        return "(%s)" % ", ".join(items) if isinstance(value, tuple) else "[%s]" % ", ".join(items)
    return "a " + type(value).__name__


_KEY_TYPES = (str, int, float, bool, type(None), bytes)


def _check_keys(keys):
    """Dict keys and set items may be scalars or flat tuples of them: hashing a tuple hashes its
    items, every time, so a short pickle of nested shared tuples would take forever."""
    for k in keys:
        if type(k) not in _KEY_TYPES and not (type(k) is tuple and len(k) <= _MAX_DIMS
                                               and all(type(v) in _KEY_TYPES for v in k)):
            raise _Bad("a dict key or set item that is %s" % _brief(k))


# ---- the restricted unpickler's world -------------------------------------------------------

class _StorageType:
    """What the pickle's `torch.FloatStorage` (etc.) global stands for: a dtype, never callable."""
    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype


class _TensorType:
    """torch.Tensor / torch.nn.Parameter as a `_rebuild_from_type_v2` argument: a plain tensor."""
    __slots__ = ()


_STORAGE_DTYPES = {"FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
                   "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
                   "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
                   "BoolStorage": "bool", "ComplexFloatStorage": "complex64",
                   "ComplexDoubleStorage": "complex128", "UntypedStorage": "uint8"}
_DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
           "bool", "complex64", "complex128", "float8_e4m3fn", "float8_e5m2")


class _Storage:
    """One storage record's bytes, and views of them as 1-D tensors of a dtype."""
    __slots__ = ("key", "dtype", "numel", "data", "_flat")

    def __init__(self, key, dtype, numel, data):
        self.key, self.dtype, self.numel, self.data, self._flat = key, dtype, numel, data, {}

    def flat(self, dtype):
        t = self._flat.get(dtype)
        if t is None:
            itemsize = _itemsize(dtype)
            if len(self.data) % itemsize:
                raise _Bad("storage '%s' of %d bytes read as %s" % (self.key, len(self.data), dtype))
            # frombuffer shares the bytearray (no copy); it refuses an empty buffer.
            t = torch.frombuffer(self.data, dtype=dtype) if self.data else torch.empty(0, dtype=dtype)
            self._flat[dtype] = t
        return t


_ITEMSIZES = {}


def _itemsize(dtype):
    if dtype not in _ITEMSIZES:
        _ITEMSIZES[dtype] = torch.empty(0, dtype=dtype).element_size()
    return _ITEMSIZES[dtype]


def _dims(value, what):
    if not isinstance(value, (tuple, list)) or len(value) > _MAX_DIMS \
            or any(type(v) is not int or not 0 <= v < 2**62 for v in value):
        raise _Bad("a tensor %s that is not a list of at most %d non-negative integers: %s"
                   % (what, _MAX_DIMS, _brief(value)))
    return tuple(value)


def _tensor(storage, offset, size, stride, dtype=None):
    """A view of `storage` (elements of `dtype`, by default the storage's) that must lie within
    it: torch trusts these numbers, so a view past the end would read foreign memory."""
    if not isinstance(storage, _Storage):
        raise _Bad("a tensor whose storage is a %s" % type(storage).__name__)
    size, stride = _dims(size, "size"), _dims(stride, "stride")
    dtype = storage.dtype if dtype is None else dtype
    flat = storage.flat(dtype)
    available = flat.numel()
    if type(offset) is not int or not 0 <= offset <= available or len(size) != len(stride):
        raise _Bad("a tensor with offset %s, size %s and stride %s in storage '%.40s' of %d elements"
                   % (_brief(offset), list(size), list(stride), storage.key, available))
    if 0 in size:
        return torch.empty(size, dtype=dtype)
    end = offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True)) + 1
    if end > available or math.prod(size) >= 2**62:
        raise _Bad("a tensor (offset %d, size %s, stride %s) reaching past the %d elements of "
                   "storage '%.40s'" % (offset, list(size), list(stride), available, storage.key))
    return flat.as_strided(size, stride, offset)


def _check_metadata(metadata):
    # torch 2.x records conj/neg bits here ({} for ordinary tensors); applying them is not done.
    if metadata is not None and not (isinstance(metadata, dict) and all(v is False for v in metadata.values())):
        raise _Bad("a tensor with metadata (conj or neg bits) this reader does not apply")


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _tensor(storage, storage_offset, size, stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    _check_metadata(metadata)
    return _tensor(storage, storage_offset, size, stride)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype,
                       metadata=None):
    # torch 2.x, dtypes without a typed storage (float8 ...): an untyped storage read as `dtype`.
    if not isinstance(dtype, torch.dtype):
        raise _Bad("a tensor whose dtype is %s" % _brief(dtype))
    _check_metadata(metadata)
    return _tensor(storage, storage_offset, size, stride, dtype)


def _rebuild_parameter(data, requires_grad, backward_hooks, state=None):
    if not isinstance(data, torch.Tensor):
        raise _Bad("a parameter whose data is a %s" % type(data).__name__)
    return data


_REBUILDERS = (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter)


def _rebuild_from_type_v2(func, new_type, args, state):
    """A tensor of a Python subclass; only torch.Tensor and Parameter, loaded as plain tensors
    (their Python attributes, `state`, are dropped)."""
    if not any(func is f for f in _REBUILDERS) or not isinstance(new_type, _TensorType) \
            or not isinstance(args, tuple):
        raise Refused("it holds a tensor of a type this reader does not rebuild, and loading it "
                      "needs full unpickling, which can run code from the file")
    return func(*args)


def _ordered_dict(*args):
    """collections.OrderedDict, as torch.save pickles it: called without arguments (its items
    are set by SETITEMS, where their keys are checked)."""
    if args:
        raise _Bad("an OrderedDict built from arguments")
    return collections.OrderedDict()


def _safe_globals():
    found = {("collections", "OrderedDict"): _ordered_dict,
             ("torch", "Size"): torch.Size, ("torch", "device"): torch.device,
             ("torch", "Tensor"): _TensorType(), ("torch.nn.parameter", "Parameter"): _TensorType(),
             ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
             ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter}
    for f in _REBUILDERS:
        found[("torch._utils", f.__name__)] = f
    for name, dtype in _STORAGE_DTYPES.items():
        found[("torch", name)] = _StorageType(name, getattr(torch, dtype))
    for name in _DTYPES:
        if hasattr(torch, name):
            found[("torch", name)] = getattr(torch, name)
    return found


class _Unpickler(pickle._Unpickler):
    """The pure-Python unpickler, whose opcodes can be overridden: BUILD (set an object's
    state; on a tensor, Tensor.__setstate__ calls set_ with numbers from the file) is allowed on
    an OrderedDict only, as torch.save writes a state dict's `_metadata`; items are set on dicts
    only (SETITEM on a tensor would write into it), and keys are checked (_check_keys)."""
    _GLOBALS = None
    dispatch = dict(pickle._Unpickler.dispatch)
    # The same table, typed for this class's loaders (typeshed types it for the base class only).
    _loaders: ClassVar[dict[int, Callable[["_Unpickler"], None]]] = dispatch  # type: ignore[assignment]

    def __init__(self, data, archive):
        super().__init__(io.BytesIO(data), encoding="utf-8")  # as torch.load decodes py2 strings
        self._archive = archive
        if _Unpickler._GLOBALS is None:
            _Unpickler._GLOBALS = _safe_globals()

    def find_class(self, module, name):
        found = _Unpickler._GLOBALS.get((module, name))
        if found is None:
            raise Refused("it holds a %.100s.%.100s, and loading it needs full unpickling, which can "
                          "run code from the file" % (module, name))
        return found

    def persistent_load(self, pid):
        return self._archive.storage(pid)

    def load_build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        if isinstance(state, tuple) and len(state) == 2 and state[1] is None:
            state = state[0]
        if type(inst) is not collections.OrderedDict or not isinstance(state, dict) \
                or not all(type(k) is str for k in state):
            raise Refused("it sets the state of a %s, and loading it needs full unpickling, which "
                          "can run code from the file" % type(inst).__name__)
        inst.__dict__.update(state)
    _loaders[pickle.BUILD[0]] = load_build

    @staticmethod
    def _check_target(target):
        if type(target) not in (dict, collections.OrderedDict):
            raise _Bad("items set on %s" % _brief(target))

    def load_setitem(self):  # stack: ... dict key value
        self._check_target(self.stack[-3])
        _check_keys(self.stack[-2:-1])
        pickle._Unpickler.load_setitem(self)
    _loaders[pickle.SETITEM[0]] = load_setitem

    def load_setitems(self):  # stack since the mark: key value key value ...; the dict below it
        self._check_target(self.metastack[-1][-1])
        _check_keys(self.stack[0::2])
        pickle._Unpickler.load_setitems(self)
    _loaders[pickle.SETITEMS[0]] = load_setitems

    def load_dict(self):
        _check_keys(self.stack[0::2])
        pickle._Unpickler.load_dict(self)
    _loaders[pickle.DICT[0]] = load_dict

    def load_additems(self):
        _check_keys(self.stack)
        pickle._Unpickler.load_additems(self)
    _loaders[pickle.ADDITEMS[0]] = load_additems

    def load_frozenset(self):
        _check_keys(self.stack)
        pickle._Unpickler.load_frozenset(self)
    _loaders[pickle.FROZENSET[0]] = load_frozenset


# ---- the zip archive ------------------------------------------------------------------------

class _Budget:
    """Bytes the checkpoint expands to: records read (data.pkl, storages), and tensors written.
    What each exceeds the file's size by, added up, may be at most ALLOWANCE."""

    def __init__(self, size):
        self.size, self.read, self.written = size, 0, 0

    def _check(self, what):
        extra = max(0, self.read - self.size) + max(0, self.written - self.size)
        if extra > ALLOWANCE:
            raise Refused("%s would take %d bytes beyond the file's own %d, more than the %d MiB "
                          "allowed (compressed records or repeated data)"
                          % (what, extra, self.size, ALLOWANCE >> 20))

    def spend_read(self, n, what):
        self.read += n
        self._check(what)

    def spend_written(self, n, what):
        self.written += n
        self._check(what)


def _read_entry(zf, info, n):
    """Entry `info`'s bytes, which must be exactly `n`. Reads at most n+1 (in chunks, into a
    growing buffer), so a compressed entry that inflates to more than its header says costs
    nothing; zipfile stops at the header's size and checks the CRC there."""
    buf = bytearray()
    with zf.open(info) as f:
        while len(buf) <= n:
            chunk = f.read(min(16 << 20, n + 1 - len(buf)))
            if not chunk:
                break
            buf += chunk
    if len(buf) != n:
        raise _Bad("zip entry %s holds %d bytes, not the %d its header says" % (info.filename, len(buf), n))
    return buf


class _Archive:
    def __init__(self, zf, infos, prefix, budget):
        self.zf, self.infos, self.prefix, self.budget = zf, infos, prefix, budget
        self.storages = {}

    def storage(self, pid):
        """The storage a persistent id ('storage', type, key, location, numel) names, read
        once per key (tensors sharing a storage share it)."""
        if not isinstance(pid, tuple) or len(pid) != 5 or pid[0] != "storage":
            raise _Bad("a persistent id that is not a storage: %s" % _brief(pid))
        _, kind, key, location, numel = pid
        if not isinstance(kind, _StorageType) or type(key) is not str or type(location) is not str \
                or type(numel) is not int or numel < 0:
            raise _Bad("a malformed storage id %s" % _brief(pid))
        cached = self.storages.get(key)
        if cached is not None:
            if cached.dtype != kind.dtype or cached.numel != numel:
                raise _Bad("storage '%.40s' declared twice, with different types or sizes" % key)
            return cached
        name = "%s/data/%s" % (self.prefix, key)
        info = self.infos.get(name)
        if info is None:
            raise _Bad("storage '%.40s' has no record %.60s" % (key, name))
        nbytes = numel * _itemsize(kind.dtype)
        if info.file_size != nbytes:
            raise _Bad("storage '%.40s' claims %d %s elements (%d bytes), but its record %s holds %d bytes"
                       % (key, numel, kind.name, nbytes, name, info.file_size))
        self.budget.spend_read(nbytes, "its storages")
        storage = _Storage(key, kind.dtype, numel, _read_entry(self.zf, info, nbytes))
        self.storages[key] = storage
        return storage


def _load_zip(fh, size):
    """(object, max walk visits) of the torch.save zip open as `fh` (`size` bytes)."""
    head = fh.read(len(_LEGACY_MAGIC))
    fh.seek(0)
    if head == _LEGACY_MAGIC:
        raise Refused("it is in the legacy torch.save format (PyTorch < 1.6, or "
                      "_use_new_zipfile_serialization=False), which only torch.load reads, by full "
                      "unpickling: re-save it with torch.save from PyTorch >= 1.6 where you trust it")
    if not zipfile.is_zipfile(fh):
        raise _Bad("not a zip archive")
    fh.seek(0)
    zf = zipfile.ZipFile(fh)
    names = zf.namelist()
    infos = {i.filename: i for i in zf.infolist()}
    if len(infos) != len(names):
        raise _Bad("two zip entries have the same name")
    for name in names:
        parts = name.split("/")
        if parts[-1] == "constants.pkl" or "code" in parts[:-1]:
            raise Refused("it is a TorchScript archive (torch.jit.save: %s), whose code would run "
                          "at load; convert reads torch.save checkpoints" % name)
    pickles = [n for n in names if n.count("/") == 1 and n.endswith("/data.pkl")]
    if len(pickles) != 1:
        raise _Bad("%d entries <prefix>/data.pkl, not one" % len(pickles))
    prefix = pickles[0][:-len("/data.pkl")]
    byteorder = infos.get("%s/byteorder" % prefix)
    if byteorder is not None:  # torch >= 2.1 writes it; older ones saved little-endian only
        order = bytes(_read_entry(zf, byteorder, byteorder.file_size)) if byteorder.file_size < 16 else b"?"
        if order.strip() == b"big":
            raise Refused("it was saved on a big-endian machine, and this reader does not byteswap")
        if order.strip() != b"little":
            raise _Bad("byteorder %s" % _brief(order))
    if sys.byteorder != "little":
        raise Refused("this machine is big-endian, and this reader does not byteswap")
    budget = _Budget(size)
    info = infos[pickles[0]]
    if info.file_size > MAX_PICKLE:
        raise Refused("its %s is %d bytes, more than the %d MiB this reader unpickles"
                      % (pickles[0], info.file_size, MAX_PICKLE >> 20))
    budget.spend_read(info.file_size, "its data.pkl")
    data = _read_entry(zf, info, info.file_size)
    obj = _Unpickler(bytes(data), _Archive(zf, infos, prefix, budget)).load()
    # A value is at least one pickle byte; more visits than that mean shared containers
    # (references to one list from many places: exponential walks).
    return obj, budget, len(data) + 1_000_000


# ---- walking the loaded object ----------------------------------------------------------------

def _kind(parts):
    lowered = [str(p).lower() for p in parts]
    if any(p.startswith("optim") for p in lowered) or (lowered and lowered[-1] in _OPTIMIZER_KEYS) \
            or ("state" in lowered and any(p in _OPTIMIZER_KEYS for p in lowered)):
        return "optimizer"
    if any(p == "grad" or p.endswith("_grad") or p.startswith("grad") for p in lowered):
        return "grad"
    return "weight"


def _key_text(key):
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None or isinstance(key, float) \
            or (isinstance(key, int) and key.bit_length() < 128):
        return str(key)
    return "<%s>" % type(key).__name__  # str() of a hostile key could be huge


def _children(value):
    if isinstance(value, dict):
        return ((_key_text(k), v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ((str(i), v) for i, v in enumerate(value))
    return None


def _walk(root, max_visits=None):
    """([(name parts, tensor)], [skipped value names]) under `root`. Iterative, and bounded for a
    hostile pickle: the nesting, the values visited (one list referenced from many places makes
    the walk exponential) and the memory the names take. Names of skipped values past the first
    _KEPT_SKIPPED are not built: a shared placeholder keeps the count."""
    found, skipped = [], []
    name_bytes = visits = 0
    # Iterators over the open containers' (name, value) pairs, the first over the root alone;
    # path[i] is the name of the container stack[i + 1] iterates (the root's, "", is no part of
    # the names).
    stack, path = [iter([("", root)])], []
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
            if path:
                path.pop()
            continue
        key, value = item
        visits += 1
        if max_visits is not None and visits > max_visits:
            raise _Bad("more than %d values (containers referenced from many places)" % max_visits)
        if isinstance(value, torch.nn.Module):  # only from a trusted (fully unpickled) file
            value = value.state_dict()
        children = _children(value)
        if children is not None:
            if len(stack) >= _MAX_DEPTH:
                raise _Bad("containers nested more than %d deep" % _MAX_DEPTH)
            stack.append(children)
            path.append(key)
            continue
        is_tensor = isinstance(value, torch.Tensor)
        if not is_tensor and len(skipped) >= _KEPT_SKIPPED:
            skipped.append("...")
            continue
        parts = path[1:] + [key] if len(stack) > 1 else []
        name_bytes += 64 + sum(len(p) + 9 for p in parts)  # the list, its pointers, the joined name
        if name_bytes > _MAX_NAME_BYTES:
            raise _Bad("value names taking more than %d MiB" % (_MAX_NAME_BYTES >> 20))
        if is_tensor:
            found.append((parts, value))
        else:
            skipped.append(".".join(parts) or "<root>")
    return found, skipped


# ---- files ----------------------------------------------------------------------------------

def _open_checkpoint(path):
    """(binary file, stat) of the regular file `path`. A FIFO or device is refused before it is
    opened, and the open never blocks (O_NONBLOCK) should one be swapped in meanwhile."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise ConvertError("%s: not a regular file" % path)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ConvertError("%s: no such file" % path) from None
    except OSError as e:
        raise ConvertError("%s: cannot open (%s)" % (path, e.strerror)) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise ConvertError("%s: not a regular file" % path)
    return os.fdopen(fd, "rb"), st


def _check_output(checkpoint, source, out_path):
    """OUT may be missing or a regular file (not a link), and not the checkpoint itself."""
    try:
        target = os.stat(out_path)
        if (target.st_dev, target.st_ino) == (source.st_dev, source.st_ino):
            raise ConvertError("%s: refused: the output %s is the checkpoint itself" % (checkpoint, out_path))
        link = os.lstat(out_path)
    except FileNotFoundError:
        try:
            link = os.lstat(out_path)  # a dangling link
        except FileNotFoundError:
            return
        except OSError as e:
            raise ConvertError("%s: cannot write %s (%s)" % (checkpoint, out_path, e.strerror)) from None
    except OSError as e:
        raise ConvertError("%s: cannot write %s (%s)" % (checkpoint, out_path, e.strerror)) from None
    if not stat.S_ISREG(link.st_mode):
        raise ConvertError("%s: refused: the output %s exists and is not a regular file" % (checkpoint, out_path))


def load_checkpoint(path, trust=False):
    """(object, budget or None, max walk visits or None) of checkpoint `path`."""
    fh, st = _open_checkpoint(path)
    with fh:
        return _load(path, fh, st.st_size, trust)


def _load(path, fh, size, trust):
    try:
        if trust:
            return torch.load(fh, map_location="cpu", weights_only=False), None, None
        return _load_zip(fh, size)
    except Refused as e:
        raise ConvertError("%s: refused: %s (%s)" % (path, _one_line(e), _TRUST_HINT)) from None
    except _Bad as e:
        raise ConvertError("%s: not a readable torch.save checkpoint: %s" % (path, _one_line(e))) from None
    except Exception as e:  # a damaged file raises many kinds (zipfile, zlib, pickle, torch)
        raise ConvertError("%s: not a readable torch.save checkpoint (%s: %s)"
                           % (path, type(e).__name__, _one_line(e))) from None


def _umask():
    """The process's umask, read without setting it where Linux shows it (os.umask sets it,
    for a moment, under every other thread too)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


def convert_checkpoint(checkpoint: str | os.PathLike[str], out_path: str | os.PathLike[str],
                       trust: bool = False) -> tuple[int, int, list[str]]:
    """Writes every tensor of `checkpoint` to the HDF5 snapshot `out_path` (through a new
    temporary file beside it, renamed when complete). Returns (tensor count, bytes, skipped
    names). Without `trust` the checkpoint is read without running its pickle's code (only
    tensors, containers and plain values); raises ConvertError naming the file otherwise."""
    fh, st = _open_checkpoint(checkpoint)
    with fh:
        _check_output(checkpoint, st, out_path)
        obj, budget, max_visits = _load(checkpoint, fh, st.st_size, trust)
    try:
        found, skipped = _walk(obj, max_visits)
        if budget is not None:  # before any tensor is copied (views of one storage can repeat it)
            budget.spend_written(sum(t.numel() * t.element_size() for _, t in found if is_storable(t)),
                                 "its tensors")
    except Refused as e:
        raise ConvertError("%s: refused: %s (%s)" % (checkpoint, _one_line(e), _TRUST_HINT)) from None
    except _Bad as e:
        raise ConvertError("%s: not a readable torch.save checkpoint: %s" % (checkpoint, e)) from None
    try:
        # mkstemp: O_CREAT | O_EXCL, so a link planted at the name is never followed.
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(out_path) + ".", suffix=".tmp",
                                   dir=os.path.dirname(os.path.abspath(out_path)))
    except OSError as e:
        raise ConvertError("%s: cannot write %s (%s)" % (checkpoint, out_path, e.strerror)) from None
    total = 0
    names = set()
    try:
        # h5py writes through the open file (its fileobj driver), never reopening the name.
        with os.fdopen(fd, "w+b") as out, h5py.File(out, "w") as f:
            os.fchmod(out.fileno(), 0o666 & ~_umask())  # as open() would make it, not mkstemp's 0600
            f.attrs["source"] = os.path.basename(checkpoint)
            for parts, t in found:
                name = ".".join(p.replace("/", ".") for p in parts) or "tensor"
                if not is_storable(t) or t.is_sparse:
                    skipped.append(name if len(skipped) < _KEPT_SKIPPED else "...")
                    continue
                if name in names:
                    raise ConvertError("%s: two tensors are both named '%.200s'" % (checkpoint, name))
                names.add(name)
                total += write_dataset(f, name, t, kind=_kind(parts))
            if skipped:
                f.attrs["skipped_values"] = np.array(skipped[:_KEPT_SKIPPED], dtype=h5py.string_dtype())
        os.replace(tmp, out_path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, Exception) and not isinstance(e, ConvertError):
            raise ConvertError("%s: cannot write %s (%s: %s)"
                               % (checkpoint, out_path, type(e).__name__, _one_line(e))) from None
        raise
    return len(names), total, skipped
