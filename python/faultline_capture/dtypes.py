"""Tensor <-> HDF5 dataset conversion with Faultline's snapshot dtype conventions.

bfloat16 is stored as ``uint16`` with the string attribute ``dtype="bfloat16"`` (the bits, never
converted); every other dtype as the matching numpy type. Reading back returns the same bits.
"""
import numpy as np
import torch

# The dtypes the golden model reads and writes (docs/formats.md).
GOLDEN_DTYPES = (torch.float32, torch.bfloat16, torch.float16)

_NAMES = {
    torch.float64: "float64",
    torch.float32: "float32",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.int8: "int8",
    torch.int16: "int16",
    torch.int32: "int32",
    torch.int64: "int64",
    torch.uint8: "uint8",
    torch.bool: "bool",
}
for _name in ("float8_e4m3fn", "float8_e5m2"):
    if hasattr(torch, _name):
        _NAMES[getattr(torch, _name)] = _name
_BY_NAME = {v: k for k, v in _NAMES.items()}


def dtype_name(dtype):
    """Faultline's canonical name of a torch dtype ("bfloat16"), or None when it has none."""
    return _NAMES.get(dtype)


def torch_dtype(name):
    """The torch dtype of a canonical Faultline dtype name, or None."""
    return _BY_NAME.get(name)


def is_storable(t):
    return isinstance(t, torch.Tensor) and t.dtype in _NAMES and t.layout == torch.strided \
        and not t.is_quantized and not t.is_complex()


def to_numpy(t):
    """(array, dtype attribute or None): the tensor's elements, row-major, on the host."""
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16), "bfloat16"
    if t.dtype in (getattr(torch, "float8_e4m3fn", None), getattr(torch, "float8_e5m2", None)):
        return t.view(torch.uint8).numpy(), _NAMES[t.dtype]
    return t.numpy(), None


def write_dataset(group, name, t, kind=None):
    """Writes tensor `t` as dataset `name` of h5py `group`; returns the bytes written."""
    array, dtype_attr = to_numpy(t)
    ds = group.create_dataset(name, data=array)
    if dtype_attr:
        ds.attrs["dtype"] = dtype_attr
    if kind:
        ds.attrs["kind"] = kind
    return int(array.nbytes)


def _attr_text(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


def read_dataset(ds, device="cpu"):
    """A tensor with the bits of h5py dataset `ds` (uint16 + dtype="bfloat16" is bfloat16)."""
    array = np.array(ds[()], order="C")  # keeps 0-d arrays 0-d
    dtype_attr = _attr_text(ds.attrs["dtype"]) if "dtype" in ds.attrs else None
    if dtype_attr in ("bfloat16", "bf16") and array.dtype.itemsize == 2:
        t = torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    elif dtype_attr in ("float8_e4m3fn", "float8_e5m2") and hasattr(torch, dtype_attr):
        t = torch.from_numpy(array.view(np.uint8)).view(getattr(torch, dtype_attr))
    else:
        if array.dtype == np.uint16:
            array = array.view(np.int16)  # torch 1.13 has no uint16; the bits are kept
        t = torch.from_numpy(array)
    return t.to(device) if device != "cpu" else t
