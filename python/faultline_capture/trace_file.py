"""Writes Faultline trace v1 files (docs/formats.md) with h5py, one op at a time.

Everything goes to ``PATH.tmp``; ``close()`` sets the root attribute ``complete`` and renames the
file to ``PATH``. Each op is flushed as it is added, so a process killed mid-run leaves a
``PATH.tmp`` holding every op written so far.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import stat
from collections.abc import Iterable, Mapping, Sequence

import h5py
import numpy as np
import torch

from .dtypes import write_dataset

# An attribute value trace v1 stores (see _attr_value); None means "leave the attribute out".
AttrValue = bool | int | float | str | Sequence[bool | int | float | str] | np.generic | None

_RESERVED = ("op", "inputs", "name", "phase")
_TRIM_EVERY = 16 << 20  # bytes written between returns of freed heap memory to the system


def _malloc_trim():
    """glibc keeps the host copies of written tensors on its heap once its mmap threshold has
    grown, so a long recording's resident memory would grow with the bytes written; trimming
    hands them back. A no-op where libc has no malloc_trim."""
    global _trim
    if _trim is None:
        try:
            _trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _trim = False
    if _trim:
        _trim(0)


_trim = None


def _attr_value(value):
    """An op/device/root attribute value as h5py should store it (trace v1 attribute types)."""
    if isinstance(value, (bool, np.bool_)):
        return np.int64(1 if value else 0)
    if isinstance(value, (int, np.integer)):
        return np.int64(value)
    if isinstance(value, (float, np.floating)):
        return np.float64(value)
    if isinstance(value, str):
        return str(value)  # a str subclass (torch.__version__) is not one h5py writes
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, str) for v in value) and value:
            return np.array([str(v) for v in value], dtype=h5py.string_dtype())
        if all(isinstance(v, (bool, int, np.integer)) for v in value):
            return np.array([int(v) for v in value], dtype=np.int64)
        if all(isinstance(v, (int, float, np.integer, np.floating)) for v in value):
            return np.array([float(v) for v in value], dtype=np.float64)
    return str(value)


def set_attrs(obj: h5py.Group | h5py.Dataset, attrs: Mapping[str, AttrValue]) -> None:
    for key, value in attrs.items():
        if value is None:
            continue
        obj.attrs[key] = _attr_value(value)


def _claim_temporary(path):
    """Creates (or empties) PATH.tmp without following a link: a link planted there by another
    user would otherwise have h5py truncate what it points at. A stale PATH.tmp of an earlier,
    killed recording (a regular file) is replaced."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise ValueError("%s exists and is not a regular file (a link or a special file): "
                         "remove it or record to another path" % path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    os.close(fd)


class TraceFile:
    """One trace v1 file being written: root attributes, devices, input tensors and ops, each
    flushed as it is added; ``close()`` renames PATH.tmp to PATH, ``discard()`` removes it."""

    path: str
    tmp_path: str
    bytes_written: int

    def __init__(self, path: str) -> None:
        self.path = path
        self.tmp_path = path + ".tmp"
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        _claim_temporary(self.tmp_path)
        self._file = h5py.File(self.tmp_path, "w")
        self._file.attrs["faultline_format"] = "trace"
        self._file.attrs["faultline_version"] = np.int64(1)
        self._file.attrs["complete"] = np.int64(0)
        self._tensors = self._file.create_group("tensors")
        self._ops = self._file.create_group("ops")
        self._devices = self._file.create_group("devices")
        self.bytes_written = 0
        self._trimmed_at = 0

    def set_root(self, attrs: Mapping[str, AttrValue]) -> None:
        set_attrs(self._file, attrs)

    def add_device(self, label: str, attrs: Mapping[str, AttrValue]) -> None:
        group = self._devices.require_group(label)
        set_attrs(group, attrs)

    def has_tensor(self, tensor_id: str) -> bool:
        return tensor_id in self._tensors

    def add_tensor(self, tensor_id: str, tensor: torch.Tensor, kind: str | None = None) -> None:
        self.bytes_written += write_dataset(self._tensors, tensor_id, tensor, kind)

    def link_tensor(self, tensor_id: str, path: str) -> None:
        """/tensors/<id> as a hard link to the dataset at `path` (an op output written
        earlier): the same bytes under both names, stored once."""
        self._tensors[tensor_id] = self._file[path]

    def add_op(self, index: int, op: str, inputs: Iterable[str], name: str = "", phase: str = "",
               params: Mapping[str, AttrValue] | None = None,
               outputs: Mapping[str, Sequence[torch.Tensor]] | None = None) -> dict[str, list[str]]:
        """/ops/<NNNNNN>: `inputs` are ids already added; `outputs` maps label -> tensors.
        Returns, per label, the paths of the output datasets written."""
        group = self._ops.create_group("%06d" % index)
        group.attrs["op"] = op
        group.attrs.create("inputs", np.array(list(inputs), dtype=h5py.string_dtype()),
                           dtype=h5py.string_dtype())
        if name:
            group.attrs["name"] = name
        if phase:
            group.attrs["phase"] = phase
        for key, value in (params or {}).items():
            if key in _RESERVED:
                raise ValueError("op parameter %r is reserved" % key)
            if value is not None:
                group.attrs[key] = _attr_value(value)
        paths: dict[str, list[str]] = {}
        if outputs:
            out = group.create_group("outputs")
            for label, tensors in outputs.items():
                lg = out.create_group(label)
                for k, t in enumerate(tensors):
                    self.bytes_written += write_dataset(lg, str(k), t)
                    paths.setdefault(label, []).append("ops/%06d/outputs/%s/%d" % (index, label, k))
        self._file.flush()
        if self.bytes_written - self._trimmed_at >= _TRIM_EVERY:
            self._trimmed_at = self.bytes_written
            _malloc_trim()
        return paths

    def close(self, complete: bool, attrs: Mapping[str, AttrValue] | None = None) -> None:
        """Writes `complete` (0/1) and `attrs`, closes, and renames PATH.tmp to PATH."""
        self._file.attrs["complete"] = np.int64(1 if complete else 0)
        set_attrs(self._file, attrs or {})
        self._file.close()
        os.replace(self.tmp_path, self.path)

    def discard(self) -> None:
        try:
            self._file.close()
        finally:
            if os.path.exists(self.tmp_path):
                os.remove(self.tmp_path)
