"""rerun(): re-executes every recorded op with PyTorch on another device, from the recorded
inputs, and adds its outputs to the trace under a new label: a healthy device's answer to the
same inputs through the same production kernels."""
import json
import sys

import h5py
import torch

from . import environment
from .dtypes import read_dataset, torch_dtype, write_dataset
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


def rerun(path, label, device, role="reference"):
    """Re-runs every op of trace `path` that records how it was called, on torch device
    `device`, and writes the results as /ops/<NNNNNN>/outputs/<label>/<k>; adds
    /devices/<label>. An op whose call fails here is skipped and counted. Returns (re-run
    count, skipped count)."""
    device = str(device)
    try:
        f = h5py.File(path, "r+")
    except OSError as e:
        raise TraceError("%s: cannot open for writing: %s" % (path, e)) from None
    done = skipped = 0
    failed = []
    with f:
        if _text(f.attrs.get("faultline_format", b"")) != "trace" or "ops" not in f or "tensors" not in f:
            raise TraceError("%s: not a Faultline trace (no faultline_format='trace')" % path)
        if label in f.get("devices", {}):
            raise TraceError("%s: device label '%s' is already in the trace" % (path, label))
        tensors = f["tensors"]
        with torch.no_grad():
            for index in sorted(f["ops"].keys()):
                group = f["ops"][index]
                if "call" not in group.attrs:
                    skipped += 1
                    continue
                try:
                    spec = json.loads(_text(group.attrs["call"]))
                    ids = group.attrs["inputs"]
                    ids = [_text(ids)] if isinstance(ids, (str, bytes)) else [_text(i) for i in ids]
                    inputs = [read_dataset(tensors[i], device) for i in ids]
                    func = _func(spec["func"])
                    args = [_resolve(r, inputs, device) for r in spec["args"]]
                    kwargs = {k: _resolve(r, inputs, device) for k, r in spec["kwargs"].items()}
                    results = _outputs(func(*args, **kwargs), spec, args, kwargs)
                except Exception as e:  # a call this torch cannot make, a malformed entry
                    failed.append("ops/%s: %s: %s" % (index, type(e).__name__, e))
                    continue
                outputs = group.require_group("outputs").create_group(label)
                for k, t in enumerate(results):
                    write_dataset(outputs, str(k), t)
                done += 1
        dev = f.require_group("devices").create_group(label)
        set_attrs(dev, environment.device_identity(device, role))
    print("faultline_capture: %s: re-ran %d op(s) on %s as '%s', skipped %d without a recorded call%s"
          % (path, done, device, label, skipped,
             ", %d failed (first: %s)" % (len(failed), failed[0]) if failed else ""), file=sys.stderr)
    return done, skipped + len(failed)
