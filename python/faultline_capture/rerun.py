"""rerun(): re-executes every recorded op with PyTorch on another device, from the recorded
inputs, and adds its outputs to the trace under a new label: a healthy device's answer to the
same inputs through the same production kernels. Each op runs `repeat` times: whether the device
reproduces itself bit for bit is recorded, so that `faultline bisect` judges by its bits only
where they are shown to be deterministic."""
from __future__ import annotations

import json
import os
import sys

import h5py
import numpy as np
import torch

from . import environment
from .dtypes import read_dataset, to_numpy, torch_dtype, write_dataset
from .trace_file import set_attrs


class TraceError(Exception):
    """A trace that cannot be re-run; the message names the file and the problem."""


def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def _apply(t, transform):
    for step in transform:
        if step == "T":
            t = t.transpose(-1, -2)
        elif step[0] == "reshape":
            t = t.reshape(step[1])
        elif step[0] == "movedim":
            t = t.movedim(step[1], step[2])
        else:
            raise ValueError("unknown view %r" % (step,))
    return t


def _resolve(ref, inputs, device):
    if "input" in ref:
        return _apply(inputs[ref["input"]], ref.get("transform", []))
    if "list" in ref:
        return [_resolve(r, inputs, device) for r in ref["list"]]
    if "none" in ref:
        return None
    if "scalar_tensor" in ref:  # a 0-dim tensor the call reads (a fused optimizer's state step)
        return torch.tensor(ref["scalar_tensor"], dtype=torch_dtype(ref.get("dtype", "float32")), device=device)
    if "dtype" in ref:
        return torch_dtype(ref["dtype"]) or getattr(torch, ref["dtype"])
    if "device" in ref:
        return torch.device(device)
    if "memory_format" in ref:
        return getattr(torch, ref["memory_format"])
    if "layout" in ref:
        return getattr(torch, ref["layout"])
    return ref["value"]


def _func(name):
    packet, _, overload = name.rpartition(".")
    namespace, _, op = packet.partition(".")
    return getattr(getattr(getattr(torch.ops, namespace), op), overload)


def _outputs(result, spec, args, kwargs):
    tensors = []
    for out in spec["outputs"]:
        if "written" in out:
            # An in-place call that returns nothing (_foreach_add_): the arguments it wrote.
            for k in out["written"]:
                value = args[k] if isinstance(k, int) else kwargs[k]
                values = value if isinstance(value, (list, tuple)) else [value]
                tensors.extend(v for v in values if isinstance(v, torch.Tensor))
            continue
        which = out.get("result")
        if which == "all":
            values = result if isinstance(result, (list, tuple)) else [result]
            tensors.extend(v for v in values if isinstance(v, torch.Tensor))
            continue
        value = result if which is None else result[which]
        tensors.append(_apply(value, out.get("transform", [])))
    return tensors


MAX_REPEAT = 100


def _bits(t):
    """(dtype, shape, bytes) of a tensor: equal triples mean bit-identical tensors (NaN payloads
    and the sign of zero included; bfloat16 compared by its bits)."""
    array, dtype_attr = to_numpy(t)
    return (str(t.dtype), tuple(t.shape), dtype_attr, array.tobytes())


def _call(group, spec, tensors, device):
    """One execution of the op's recorded call from freshly read inputs (an in-place call
    overwrites them, so every repetition reads them again)."""
    ids = group.attrs["inputs"]
    ids = [_text(ids)] if isinstance(ids, (str, bytes)) else [_text(i) for i in ids]
    inputs = [read_dataset(tensors[i], device) for i in ids]
    func = _func(spec["func"])
    args = [_resolve(r, inputs, device) for r in spec["args"]]
    kwargs = {k: _resolve(r, inputs, device) for k, r in spec["kwargs"].items()}
    return _outputs(func(*args, **kwargs), spec, args, kwargs)


def rerun(path: str | os.PathLike[str], label: str, device: str | torch.device, role: str = "reference",
          repeat: int = 2) -> tuple[int, int]:
    """Re-runs every op of trace `path` that records how it was called, `repeat` times (1..100)
    on torch device `device`, and writes the first run's results as
    /ops/<NNNNNN>/outputs/<label>/<k>, with the attributes `repeats` (the number of runs) and
    `reproducible` (1 when every run gave the same bits for every output, else 0; absent with
    repeat=1, which shows nothing) on the outputs/<label> group; adds /devices/<label> with
    `source = "rerun"`. An op whose call fails here is skipped and counted. Returns (re-run count, skipped count)."""
    device = str(device)
    if isinstance(repeat, bool) or not isinstance(repeat, int) or not 1 <= repeat <= MAX_REPEAT:
        raise TraceError("%s: repeat must be an integer from 1 to %d, not %r" % (path, MAX_REPEAT, repeat))
    try:
        f = h5py.File(path, "r+")
    except OSError as e:
        raise TraceError("%s: cannot open for writing: %s" % (path, e)) from None
    with f:
        if _text(f.attrs.get("faultline_format", b"")) != "trace" or "ops" not in f or "tensors" not in f:
            raise TraceError("%s: not a Faultline trace (no faultline_format='trace')" % path)
        if label in f.get("devices", {}):
            raise TraceError("%s: device label '%s' is already in the trace" % (path, label))
        tensors = f["tensors"]
        # CPU kernels split their sums by thread (layer norm's weight and bias gradients, GEMMs):
        # the rerun uses the thread count the capture ran with, else its bits differ legitimately.
        threads = torch.get_num_threads()
        recorded_threads = f.attrs.get("torch_num_threads")
        if device.startswith("cpu") and recorded_threads is not None and 1 <= int(recorded_threads) <= 4096:
            torch.set_num_threads(int(recorded_threads))
        try:
            done, skipped, failed, unreproducible = _rerun_ops(f, tensors, label, device, repeat)
        finally:
            torch.set_num_threads(threads)
        dev = f.require_group("devices").create_group(label)
        set_attrs(dev, environment.device_identity(device, role))
        dev.attrs["source"] = "rerun"
        if device.startswith("cpu"):
            dev.attrs["torch_num_threads"] = np.int64(torch.get_num_threads() if recorded_threads is None
                                                      else int(recorded_threads))
    print("faultline_capture: %s: re-ran %d op(s) %d time(s) each on %s as '%s', skipped %d without a "
          "recorded call%s%s"
          % (path, done, repeat, device, label, skipped,
             ", %d failed (first: %s)" % (len(failed), failed[0]) if failed else "",
             ", %d not reproducible bit for bit (first: %s)" % (len(unreproducible), unreproducible[0])
             if unreproducible else ""), file=sys.stderr)
    return done, skipped + len(failed)


def _rerun_ops(f, tensors, label, device, repeat):
    """Re-runs the ops with a recorded call; (done, skipped, failed, unreproducible)."""
    done = skipped = 0
    failed = []
    unreproducible = []
    with torch.no_grad():
        for index in sorted(f["ops"].keys()):
            group = f["ops"][index]
            if "call" not in group.attrs:
                skipped += 1
                continue
            try:
                spec = json.loads(_text(group.attrs["call"]))
                results = _call(group, spec, tensors, device)
                first = [_bits(t) for t in results]
            except Exception as e:  # a call this torch cannot make, a malformed entry
                failed.append("ops/%s: %s: %s" % (index, type(e).__name__, e))
                continue
            reproducible = True
            for _ in range(repeat - 1):
                try:
                    again = [_bits(t) for t in _call(group, spec, tensors, device)]
                except Exception:  # failing on a repetition is not reproducing the first run
                    again = None
                if again != first:
                    reproducible = False
            if not reproducible:
                unreproducible.append("ops/%s (%s)" % (index, _text(group.attrs.get("op", ""))))
            outputs = group.require_group("outputs").create_group(label)
            for k, t in enumerate(results):
                write_dataset(outputs, str(k), t)
            outputs.attrs["repeats"] = np.int64(repeat)
            if repeat > 1:  # one run shows nothing about determinism
                outputs.attrs["reproducible"] = np.int64(1 if reproducible else 0)
            done += 1
    return done, skipped, failed, unreproducible
