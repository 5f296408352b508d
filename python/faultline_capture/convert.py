"""convert_checkpoint(): a torch.save checkpoint (state dicts, nested dicts and lists, optimizer
state, pytorch_model.bin) to an HDF5 snapshot Faultline opens: one dataset per tensor named by
its dotted path, a `kind` attribute (weight / grad / optimizer), bfloat16 as uint16 + dtype.

The checkpoint is loaded the way ``weights_only=True`` means: only tensors, storages,
containers and plain values are unpickled. A checkpoint that needs more (any other class, whose
unpickling can run code) is refused with the class named unless ``trust=True``. The restricted
unpickler is this module's own: torch 1.13's ``weights_only`` loader refuses float values
(pickle opcode BINFLOAT), so it refuses every optimizer state dict.
"""
import collections
import os
import pickle
import types

import h5py
import numpy as np
import torch

from .dtypes import is_storable, write_dataset

_OPTIMIZER_KEYS = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq", "momentum_buffer", "square_avg",
                   "acc_delta", "sum", "mu_product", "prev", "step_size")


class ConvertError(Exception):
    """A checkpoint that cannot be converted; the message names the file and the problem."""


class Refused(pickle.UnpicklingError):
    """A class outside what weights-only loading allows."""


def _allowed():
    allowed = {("collections", "OrderedDict"): collections.OrderedDict,
               ("torch", "Size"): torch.Size, ("torch", "device"): torch.device}
    import torch._utils as tu
    for name in ("_rebuild_tensor", "_rebuild_tensor_v2", "_rebuild_parameter",
                 "_rebuild_parameter_with_state", "_rebuild_device_tensor_from_numpy"):
        if hasattr(tu, name):
            allowed[("torch._utils", name)] = getattr(tu, name)
    for name in dir(torch):
        if name.endswith("Storage") and isinstance(getattr(torch, name), type):
            allowed[("torch", name)] = getattr(torch, name)
    allowed[("torch.nn.parameter", "Parameter")] = torch.nn.Parameter
    allowed[("torch", "Tensor")] = torch.Tensor
    for name in ("float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8",
                 "uint8", "bool"):
        allowed[("torch", name)] = getattr(torch, name)
    try:
        import torch._tensor as tt
        allowed[("torch._tensor", "_rebuild_from_type_v2")] = tt._rebuild_from_type_v2
    except (ImportError, AttributeError):
        pass
    return allowed


class _RestrictedUnpickler(pickle.Unpickler):
    _ALLOWED = None

    def find_class(self, module, name):
        if _RestrictedUnpickler._ALLOWED is None:
            _RestrictedUnpickler._ALLOWED = _allowed()
        found = _RestrictedUnpickler._ALLOWED.get((module, name))
        if found is None:
            raise Refused("it holds a %s.%s" % (module, name))
        return found


def _restricted_pickle():
    module = types.ModuleType("faultline_restricted_pickle")
    module.Unpickler = _RestrictedUnpickler
    module.UnpicklingError = pickle.UnpicklingError
    module.load = lambda f, **kw: _RestrictedUnpickler(f, **kw).load()
    module.loads = pickle.loads  # never used by torch.load's zip format; kept for its checks
    module.__version__ = "restricted"
    return module


def _kind(parts):
    lowered = [str(p).lower() for p in parts]
    if any(p.startswith("optim") for p in lowered) or (lowered and lowered[-1] in _OPTIMIZER_KEYS) \
            or ("state" in lowered and any(p in _OPTIMIZER_KEYS for p in lowered)):
        return "optimizer"
    if any(p == "grad" or p.endswith("_grad") or p.startswith("grad") for p in lowered):
        return "grad"
    return "weight"


def _walk(value, parts, out, skipped):
    if isinstance(value, torch.Tensor):
        out.append((parts, value))
    elif isinstance(value, dict):
        for key, v in value.items():
            _walk(v, parts + [str(key)], out, skipped)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _walk(v, parts + [str(i)], out, skipped)
    elif isinstance(value, torch.nn.Module):
        _walk(value.state_dict(), parts, out, skipped)
    else:
        skipped.append(".".join(parts) or "<root>")


def _load_restricted(path):
    """torch.load through the restricted unpickler. torch 1.13 ignores `pickle_module` unless
    weights_only=True, and then uses its own module-level unpickler, so that is the one this
    swaps for the duration of the call; newer torch versions' weights_only loader allows
    floats and is used as it is."""
    ser = torch.serialization
    if int(torch.__version__.split(".")[0]) >= 2 or not hasattr(ser, "_weights_only_unpickler"):
        try:
            return torch.load(path, map_location="cpu", weights_only=True)
        except pickle.UnpicklingError as e:
            text = " ".join(str(e).split())
            if "weights only" in text.lower():
                raise Refused(text.split("WeightsUnpickler error:")[-1].strip().rstrip(".")) from None
            raise
    original = ser._weights_only_unpickler
    ser._weights_only_unpickler = _restricted_pickle()
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    finally:
        ser._weights_only_unpickler = original


def load_checkpoint(path, trust=False):
    if not os.path.isfile(path):
        raise ConvertError("%s: no such file" % path)
    try:
        if trust:
            return torch.load(path, map_location="cpu", weights_only=False)
        return _load_restricted(path)
    except Refused as e:
        raise ConvertError("%s: refused: %s, and loading it needs full unpickling, which can run code "
                           "from the file (pass --trust only if you trust where it came from)" % (path, e)) from None
    except Exception as e:  # torch.load raises many kinds on a damaged file
        text = " ".join(str(e).split())
        raise ConvertError("%s: not a readable torch.save checkpoint (%s: %s)"
                           % (path, type(e).__name__, text)) from None


def convert_checkpoint(checkpoint, out_path, trust=False):
    """Writes every tensor of `checkpoint` to the HDF5 snapshot `out_path` (through
    OUT.tmp, renamed when complete). Returns (tensor count, bytes, skipped names)."""
    obj = load_checkpoint(checkpoint, trust)
    found, skipped = [], []
    _walk(obj, [], found, skipped)
    tmp = out_path + ".tmp"
    total = 0
    names = set()
    try:
        with h5py.File(tmp, "w") as f:
            f.attrs["source"] = os.path.basename(checkpoint)
            for parts, t in found:
                name = ".".join(p.replace("/", ".") for p in parts) or "tensor"
                if not is_storable(t) or t.is_sparse:
                    skipped.append(name)
                    continue
                if name in names:
                    raise ConvertError("%s: two tensors are both named '%s'" % (checkpoint, name))
                names.add(name)
                total += write_dataset(f, name, t, kind=_kind(parts))
            if skipped:
                f.attrs["skipped_values"] = np.array(skipped[:1000], dtype=h5py.string_dtype())
        os.replace(tmp, out_path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return len(names), total, skipped
