"""record(): a context manager that writes every aten op run inside it to a trace v1 file.

Ops trace v1 knows (mapping.py) are written as those ops, with the inputs they saw and their
outputs under ``outputs/<label>/<k>``; other ops that compute are written as ``aten::<name>``
with their tensors (compared between labels, never replayed); views and data movement are
skipped. Each op goes to the file as soon as it has run.
"""
from __future__ import annotations

import collections
import os
import sys
import threading
import warnings
import weakref
from collections.abc import Iterable
from types import TracebackType
from typing import Literal

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import environment
from .dtypes import is_storable
from .mapping import KINDS, MAPPERS, TRAINING_TRACE_OPS, aten_name, generic_call, map_op
from .module_names import ModuleNames
from .trace_file import TraceFile

# Calls that move or create data without arithmetic on it: never recorded.
# c10d ops recorded like all_reduce (every rank's input, this rank's output), by trace op.
_COLLECTIVES = {
    "c10d::allgather_": "all_gather",              # dist.all_gather(list, t)
    "c10d::_allgather_base_": "all_gather",        # dist.all_gather_into_tensor (torch >= 2.0)
    "c10d::reduce_scatter_": "reduce_scatter",     # dist.reduce_scatter(out, list)
    "c10d::_reduce_scatter_base_": "reduce_scatter",  # dist.reduce_scatter_tensor (torch >= 2.0)
    "c10d::broadcast_": "broadcast",
}

_NO_ARITHMETIC = frozenset("aten::" + n for n in (
    "clone", "copy_", "_to_copy", "to", "contiguous", "_unsafe_view", "lift_fresh", "lift_fresh_copy",
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
    "full_like", "fill_", "zero_", "new_empty", "new_empty_strided", "new_zeros", "new_ones",
    "new_full", "scalar_tensor", "arange", "_local_scalar_dense", "resize_", "set_", "randn",
    "rand", "randint", "randperm", "normal_", "uniform_", "bernoulli_", "random_", "item",
    "is_nonzero", "equal", "_has_compatible_shallow_copy_type", "record_stream", "detach_",
    "_foreach_zero_", "_foreach_copy_"))

# The trace op each mapped aten call becomes (for the `ops` filter before the call runs).
_MAPPED_KIND = {}
for _f in MAPPERS:
    _n = _f._schema.name
    _MAPPED_KIND[_f] = ("gemm" if _n in ("aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm") else
                        "layernorm" if _n == "aten::native_layer_norm" else
                        "rmsnorm" if "rms_norm" in _n else
                        "softmax" if _n in ("aten::_softmax", "aten::_safe_softmax") else
                        TRAINING_TRACE_OPS[_n] if _n in TRAINING_TRACE_OPS else
                        "attention" if "scaled_dot_product" in _n else
                        _n[len("aten::"):].rstrip("_"))
_MAPPED_KIND.update(KINDS)  # _foreach_mul_ -> mul, native_dropout -> dropout, reciprocal -> pow

_state = threading.local()

Role = Literal["suspect", "reference"]


def _returns_alias(func):
    """'view' for calls whose result aliases an input without writing it, 'write' for in-place
    and out= calls, None for functional ones."""
    schema = func._schema
    writes = any(a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)
    if writes:
        return "write"
    if any(r.alias_info is not None for r in schema.returns):
        return "view"
    return None


def _written(func, args, kwargs):
    """The arguments an in-place or out= call writes, as (position or keyword name, value)."""
    out = []
    for i, a in enumerate(func._schema.arguments):
        if a.alias_info is None or not a.alias_info.is_write:
            continue
        if not a.kwarg_only and i < len(args):
            out.append((i, args[i]))
        elif a.name in kwargs:
            out.append((a.name, kwargs[a.name]))
    return out


def _snapshot(value):
    """A copy of a tensor, or of a list of tensors, that an in-place call is about to
    overwrite."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (list, tuple)) and any(isinstance(e, torch.Tensor) for e in value):
        return type(value)(e.detach().clone() if isinstance(e, torch.Tensor) else e for e in value)
    return value


def _flat_tensors(values):
    out = []
    for v in values:
        if isinstance(v, torch.Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out.extend(e for e in v if isinstance(e, torch.Tensor))
    return out


def _reduce_op_name(dist, op):
    """"sum", "max", ...: torch 1.13's ReduceOp values print as objects, so compare."""
    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"):
        value = getattr(dist.ReduceOp, name, None)
        try:
            if value is not None and op == value:
                return name.lower()
        except (TypeError, RuntimeError):
            continue
    return str(op).rsplit(".", 1)[-1].lower()


class _Mode(TorchDispatchMode):
    def __init__(self, recorder):
        super().__init__()
        self._recorder = recorder

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return self._recorder._dispatch(func, args, kwargs or {})


class record:
    """Records the aten ops run inside the block into the trace v1 file `path`.

    path      the trace file; ``{rank}`` is replaced by the torch.distributed rank
    label     the recording device's label (``/devices/<label>``; ``{rank}`` allowed)
    role      ``suspect`` | ``reference``
    model     an nn.Module: ops get its module paths as ``name`` (``<path>.grad`` in backward)
    ops       trace op kinds to keep (``gemm``, ``layernorm``, ..., ``aten::<name>``, or
              ``aten`` for every op trace v1 does not know); None keeps all
    modules   module-path prefixes to keep; None keeps all
    max_bytes stop recording (with a warning) before the file's tensors would exceed this

    After the block: ``kept`` (trace ops written, by kind), ``aten`` (``aten::*`` ops written),
    ``skipped`` (calls not written, by reason) and ``stopped`` (why recording stopped early, or
    None); ``summary()`` says the same in one line.
    """

    path: str
    label: str
    role: Role
    rank: int
    world: int
    model: torch.nn.Module | None
    ops: set[str] | None
    modules: list[str] | None
    max_bytes: int | None
    kept: collections.Counter[str]
    aten: collections.Counter[str]
    skipped: collections.Counter[str]
    stopped: str | None

    def __init__(self, path: str | os.PathLike[str], label: str, role: Role = "suspect",
                 model: torch.nn.Module | None = None, ops: Iterable[str] | None = None,
                 modules: Iterable[str] | None = None, max_bytes: int | None = None) -> None:
        if role not in ("suspect", "reference"):
            raise ValueError("role must be 'suspect' or 'reference', not %r" % (role,))
        rank, world = environment.rank_and_world()
        self.path = str(path).replace("{rank}", str(rank))
        self._label_template = str(label)
        self.label = str(label).replace("{rank}", str(rank))
        if not self.label or "/" in self.label:
            raise ValueError("label %r must be non-empty and contain no '/'" % (label,))
        self.role = role
        self.rank, self.world = rank, world
        self.model = model
        self.ops = set(ops) if ops is not None else None
        self.modules = list(modules) if modules is not None else None
        self.max_bytes = max_bytes
        self.kept: collections.Counter[str] = collections.Counter()
        self.aten: collections.Counter[str] = collections.Counter()
        self.skipped: collections.Counter[str] = collections.Counter()
        self.stopped: str | None = None
        self._file: TraceFile | None = None
        self._mode: _Mode | None = None
        self._names: ModuleNames | None = None
        self._next_index = 0
        self._next_tensor = 0
        # tensor key (_key) -> (weak reference to the tensor's base, the id it was written under)
        self._tensor_ids: dict[tuple, tuple[weakref.ref, str]] = {}
        self._params: dict[int, str] = {}  # id(parameter) -> its name in the model
        self._device: torch.device | None = None
        self._phase = "forward"
        self._pending_reduce_op = None
        self._patches: list[tuple[object, str, object]] = []  # (owner, attribute, original)

    # ---- context manager ------------------------------------------------------------------

    def __enter__(self) -> record:
        self._file = TraceFile(self.path)
        trace = self._file
        attrs = environment.versions()
        attrs.update({"rank": self.rank, "world_size": self.world, "recording_label": self.label})
        for key, value in environment.numerics_switches().items():
            attrs[key] = value
        trace.set_root(attrs)
        if self.model is not None:
            self._params = {id(p): n for n, p in self.model.named_parameters()}
            self._names = ModuleNames(self.model)
            try:
                self._device = next(self.model.parameters()).device
            except StopIteration:
                pass
        self._patch()
        mode = _Mode(self)
        mode.__enter__()
        self._mode = mode
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        if self._mode is not None:
            self._mode.__exit__(None, None, None)
        self._unpatch()
        if self._names:
            self._names.remove()
        device = self._device if self._device is not None else torch.device("cpu")
        self._trace.add_device(self.label, environment.device_identity(device, self.role))
        complete = exc_type is None and self.stopped is None
        reason = ("exception: %s: %s" % (exc_type.__name__, exc) if exc_type is not None else
                  self.stopped or "")
        self._trace.close(complete, {"stop_reason": reason or None, "ops_recorded": self._next_index})
        print(self.summary(), file=sys.stderr)
        return False

    @property
    def _trace(self) -> TraceFile:
        """The trace file being written; only inside the `with` block."""
        if self._file is None:
            raise RuntimeError("faultline_capture.record: the trace is written only inside its `with` block")
        return self._file

    def summary(self) -> str:
        """One line: the ops kept by kind, those written as aten::*, those skipped by reason, the
        bytes written and why recording stopped early, if it did."""

        def part(counter):
            return ", ".join("%s %d" % kv for kv in counter.most_common())
        kept = sum(self.kept.values())
        line = "faultline_capture: %s: kept %d op(s)" % (self.path, kept)
        if kept:
            line += " (%s)" % part(self.kept)
        line += ", %d as aten::*" % sum(self.aten.values())
        line += ", skipped %d" % sum(self.skipped.values())
        if self.skipped:
            line += " (%s)" % part(self.skipped)
        written = self._file.bytes_written if self._file is not None else 0
        line += "; %.1f MiB" % (written / 2**20)
        if self.stopped:
            line += "; stopped: " + self.stopped
        return line

    # ---- patches: phase and the reduce op of all_reduce ------------------------------------

    def _patch(self):
        import torch.autograd as autograd
        recorder = self

        def in_backward(original):
            def wrapper(*args, **kwargs):
                previous = recorder._phase
                recorder._phase = "backward"
                try:
                    return original(*args, **kwargs)
                finally:
                    recorder._phase = previous
            return wrapper

        for owner, name in ((autograd, "backward"), (autograd, "grad")):
            original = getattr(owner, name)
            self._patches.append((owner, name, original))
            setattr(owner, name, in_backward(original))
        try:
            import torch.distributed as dist
            if dist.is_available():
                original = dist.all_reduce

                def all_reduce(tensor, op=dist.ReduceOp.SUM, *args, **kwargs):
                    recorder._pending_reduce_op = _reduce_op_name(dist, op)
                    return original(tensor, op, *args, **kwargs)

                self._patches.append((dist, "all_reduce", original))
                dist.all_reduce = all_reduce
                for fname in ("reduce_scatter", "reduce_scatter_tensor"):
                    if hasattr(dist, fname):
                        self._patch_reduce_scatter(dist, fname)
        except ImportError:
            pass

    def _patch_reduce_scatter(self, dist, fname):
        recorder = self
        original = getattr(dist, fname)

        def reduce_scatter(output, input, op=dist.ReduceOp.SUM, *args, **kwargs):
            recorder._pending_reduce_op = _reduce_op_name(dist, op)
            return original(output, input, op, *args, **kwargs)

        self._patches.append((dist, fname, original))
        setattr(dist, fname, reduce_scatter)

    def _unpatch(self):
        for owner, name, original in reversed(self._patches):
            setattr(owner, name, original)
        self._patches = []

    # ---- dispatch ---------------------------------------------------------------------------

    def _current_name(self):
        if not self._names:
            return ""
        return self._names.backward_name() if self._phase == "backward" else self._names.forward_name()

    def _wanted(self, kind, name):
        if isinstance(kind, tuple):  # a call that becomes several trace ops: wanted if one is
            whys = [self._wanted(k, name) for k in kind]
            return None if None in whys else whys[0]
        if self.ops is not None and kind not in self.ops and not (kind.startswith("aten::") and "aten" in self.ops):
            return "not in ops"
        if self.modules is not None and not any(name == m or name.startswith(m + ".") for m in self.modules):
            return "outside modules"
        return None

    def _dispatch(self, func, args, kwargs):
        if self.stopped is not None:
            self.skipped["after recording stopped"] += 1
            if func._schema.name == "c10d::allreduce_":
                return self._all_reduce(func, args, kwargs, record_it=False)
            if func._schema.name in _COLLECTIVES:
                return self._collective(func, args, kwargs, record_it=False)
            return func(*args, **kwargs)
        schema_name = func._schema.name
        if schema_name == "c10d::allreduce_":
            return self._all_reduce(func, args, kwargs, record_it=True)
        if schema_name in _COLLECTIVES:
            return self._collective(func, args, kwargs, record_it=True)
        if schema_name.startswith("profiler::"):
            # torch.profiler.record_function's markers (torch.optim's step() enters one): no
            # arithmetic, and torch 1.13's returns a handle tensor whose value differs per run.
            self.skipped["profiler markers"] += 1
            return func(*args, **kwargs)
        alias = _returns_alias(func)
        if alias == "view" or schema_name in _NO_ARITHMETIC or schema_name.startswith("c10d::"):
            self.skipped["views and data movement" if alias == "view" or schema_name in _NO_ARITHMETIC
                         else schema_name] += 1
            return func(*args, **kwargs)
        kind = _MAPPED_KIND.get(func, aten_name(func))
        name = self._current_name()
        why = self._wanted(kind, name)
        # A mapped call that cannot be written as its trace op is written as aten::<name>.
        if why and (func not in MAPPERS or self._wanted(aten_name(func), name)):
            self.skipped[why] += 1
            return func(*args, **kwargs)
        # In-place and out= calls: keep what they will overwrite (lists of tensors too: the
        # _foreach_*_ calls and fused optimizers, which return nothing).
        seen_args, seen_kwargs = args, kwargs
        written = None
        if alias == "write":
            written = [k for k, _ in _written(func, args, kwargs)]
            seen_args = tuple(a.detach().clone() if isinstance(a, torch.Tensor) else
                              _snapshot(a) if i in written else a for i, a in enumerate(args))
            seen_kwargs = {k: v.detach().clone() if isinstance(v, torch.Tensor) else
                           _snapshot(v) if k in written else v for k, v in kwargs.items()}
        out = func(*args, **kwargs)
        try:
            self._record(func, seen_args, seen_kwargs, out, name, written, args, kwargs)
        except Exception as e:  # the training step must not fail because recording did
            self.stopped = "recording failed at op %d (%s): %s: %s" % (
                self._next_index, aten_name(func), type(e).__name__, e)
            warnings.warn("faultline_capture: %s: %s; the trace keeps the ops before" % (self.path, self.stopped),
                          RuntimeWarning, stacklevel=3)
        return out

    def _record(self, func, args, kwargs, out, name, written=None, after_args=(), after_kwargs=None):
        """`args`, `kwargs`: what the call saw (copies of what it overwrote); `written`: the
        positions and keyword names of the arguments it wrote, whose values after the call
        are in `after_args`, `after_kwargs`."""
        mapped_out = out
        if written and (out is None or (isinstance(out, (list, tuple)) and not out)):
            # An in-place call that returns nothing (_foreach_mul_): its result is what it wrote.
            after_kwargs = after_kwargs or {}
            values = [after_args[k] if isinstance(k, int) else after_kwargs[k] for k in written]
            mapped_out = values[0] if len(values) == 1 else values
        mapped = map_op(func, args, kwargs, mapped_out) if func in MAPPERS else None
        # A mapper may return several ops (one per output of the call): each is written.
        mapped = [m for m in (mapped if isinstance(mapped, list) else [mapped] if mapped is not None else [])
                  if not self._wanted(m.op, name)] or None
        if mapped is None:
            kind = aten_name(func)
            why = self._wanted(kind, name)
            if why:
                self.skipped[why] += 1
                return
            inputs = [t for t in _flat_tensors(list(args) + list(kwargs.values())) if is_storable(t)]
            outputs = [t for t in _flat_tensors(out if isinstance(out, (list, tuple)) else [out]) if is_storable(t)]
            from_written = False
            if not outputs and written:
                # An in-place call that returns nothing (_foreach_add_, _fused_adamw_): its
                # outputs are the tensors it wrote.
                after_kwargs = after_kwargs or {}
                values = [after_args[k] if isinstance(k, int) else after_kwargs[k] for k in written]
                outputs = [t for t in _flat_tensors(values) if is_storable(t)]
                from_written = True
            if not outputs:
                self.skipped["no tensor output"] += 1
                return
            positions = {id(t): i for i, t in enumerate(inputs)}
            call = None
            if len(positions) == len(inputs):
                call = generic_call(func, args, kwargs, lambda t: positions[id(t)])
            if call is not None and from_written:
                # rerun: the outputs are the written arguments after the call, when every
                # tensor they hold was stored.
                complete = len(outputs) == len(_flat_tensors(values))
                call = dict(call, outputs=[{"written": list(written)}]) if complete else None
            params = {}
            self._write(kind, inputs, params, outputs, name, func, call, self.aten)
            return
        for m in mapped:
            self._write(m.op, m.inputs, m.params, m.outputs, name, func, m.call, self.kept)

    def _write(self, op, inputs, params, outputs, name, func, call, counter):
        import json
        if self._device is None:
            for t in list(inputs) + list(outputs):
                self._device = t.device
                break
        device_type = (inputs[0].device.type if inputs else outputs[0].device.type)
        new_inputs = [t for t in inputs if self._find_tensor(t) is None]
        size = sum(t.numel() * t.element_size() for t in new_inputs) + \
            sum(t.numel() * t.element_size() for t in outputs)
        if self.max_bytes is not None and self._trace.bytes_written + size > self.max_bytes:
            self.stopped = "max_bytes=%d reached after %d op(s)" % (self.max_bytes, self._next_index)
            warnings.warn("faultline_capture: %s: %s; recording stopped, the trace keeps the ops before"
                          % (self.path, self.stopped), RuntimeWarning, stacklevel=4)
            self.skipped["after max_bytes"] += 1
            return
        ids = [self._tensor_id(t) for t in inputs]
        params = dict(params)
        params["aten"] = aten_name(func)
        params["device_type"] = device_type
        params.update(self._op_switches(op, device_type, inputs))
        if call is not None:
            try:
                params["call"] = json.dumps(call)
            except (TypeError, ValueError):
                pass
        paths = self._trace.add_op(self._next_index, op, ids, name=name, phase=self._phase, params=params,
                                  outputs={self.label: outputs})
        for t, path in zip(outputs, paths.get(self.label, []), strict=False):
            self._remember(t, "@" + path)  # a later op reading it links to these bytes
        self._next_index += 1
        counter[op] += 1

    def _op_switches(self, op, device_type, inputs):
        """The numerics switches that apply to this op where it ran."""
        if op in ("sqrt", "pow") and device_type == "cpu":
            # Whether the CPU's sqrt is correctly rounded depends on PyTorch's version.
            return {"torch_version": str(torch.__version__)}
        if op not in ("gemm", "attention") or not inputs:
            return {}
        out = environment.gemm_numerics(device_type)
        if device_type != "cuda":
            return out
        out.update(self._cuda_switches(inputs))
        return out

    @staticmethod
    def _cuda_switches(inputs):
        switches = environment.numerics_switches()
        dtype = inputs[0].dtype
        out = {}
        if dtype == torch.float32:
            out["allow_tf32"] = int(bool(switches["allow_tf32_matmul"]))
        elif dtype == torch.float16:
            out["reduced_precision_reduction"] = int(bool(switches["allow_fp16_reduced_precision_reduction"]))
        elif dtype == torch.bfloat16:
            flag = switches["allow_bf16_reduced_precision_reduction"]
            # torch versions without the switch always allowed it for bf16.
            out["reduced_precision_reduction"] = int(True if flag is None else bool(flag))
        return out

    def _key(self, t):
        return (t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.dtype, t.device, t._version)

    def _find_tensor(self, t):
        """The id (or "@path" of an op output) the tensor was written under, while the tensor
        it came from is alive and unchanged."""
        entry = self._tensor_ids.get(self._key(t))
        if entry is None:
            return None
        base_ref, tensor_id = entry
        return tensor_id if base_ref() is not None else None

    def _remember(self, t, tensor_id):
        base = t._base if t._base is not None else t
        try:
            self._tensor_ids[self._key(t)] = (weakref.ref(base), tensor_id)
        except TypeError:
            return
        if len(self._tensor_ids) % 4096 == 0:  # forget tensors that are gone
            self._tensor_ids = {k: v for k, v in self._tensor_ids.items() if v[0]() is not None}

    def _tensor_id(self, t):
        found = self._find_tensor(t)
        if found is not None and not found.startswith("@"):
            return found
        tensor_id = "t%06d" % self._next_tensor
        self._next_tensor += 1
        if found is not None:
            self._trace.link_tensor(tensor_id, found[1:])
        else:
            base = t._base if t._base is not None else t
            self._trace.add_tensor(tensor_id, t, kind="weight" if self._params.get(id(base)) else None)
        self._remember(t, tensor_id)
        return tensor_id

    # ---- c10d all_reduce --------------------------------------------------------------------

    def _all_reduce(self, func, args, kwargs, record_it):
        """c10d::allreduce_: every rank's input (all_gather on the default group, before the
        in-place call), then this rank's result."""
        import torch.distributed as dist
        tensors = list(args[0])
        reduce_op = self._pending_reduce_op or "sum"
        self._pending_reduce_op = None
        gathered = None
        world = dist.get_world_size() if dist.is_initialized() else 1
        if dist.is_initialized():
            gathered = [self._gather_bytes(t, world) for t in tensors]
        result = func(*args, **kwargs)
        try:
            result[1].wait()
        except (AttributeError, IndexError, TypeError, RuntimeError):
            pass
        if not record_it:
            return result
        name = self._current_name()
        why = self._wanted("all_reduce", name)
        if why:
            self.skipped[why] += 1
            return result
        labels = self._rank_labels(world)
        for i, t in enumerate(tensors):
            ranks = gathered[i] if gathered else [t]
            if not all(is_storable(p) for p in ranks) or t.dtype not in (torch.float32, torch.bfloat16, torch.float16):
                self.skipped["all_reduce of a non-float tensor"] += 1
                continue
            self._write("all_reduce", ranks, {"reduce_op": reduce_op, "ranks": labels if gathered else [self.label]},
                        [t], name, func, None, self.kept)
        return result

    # ---- c10d all_gather, reduce_scatter, broadcast -----------------------------------------

    @staticmethod
    def _gather_bytes(t, world):
        """Every rank's `t` (all_gather on the default group). Gathered as bytes: every backend
        moves them (gloo has no bfloat16 or int16 all_gather), and the bits are kept."""
        import torch.distributed as dist
        mine = t.detach().contiguous().reshape(-1).view(torch.uint8).clone()
        parts = [torch.empty_like(mine) for _ in range(world)]
        dist.all_gather(parts, mine)
        return [p.view(t.dtype).reshape(t.shape) for p in parts]

    def _rank_labels(self, world):
        if "{rank}" in self._label_template:
            return [self._label_template.replace("{rank}", str(r)) for r in range(world)]
        labels = ["rank%d" % r for r in range(world)]
        labels[self.rank] = self.label
        return labels

    def _collective(self, func, args, kwargs, record_it):
        """c10d all_gather / reduce_scatter / broadcast on the default group: every rank's
        input (gathered before the call), then this rank's output, in trace v1's conventions
        (docs/formats.md): all_gather's output is the gathered blocks concatenated along dim 0,
        reduce_scatter's input of a rank is its input list concatenated along dim 0."""
        import torch.distributed as dist
        schema = func._schema.name
        op = _COLLECTIVES[schema]
        reduce_op = self._pending_reduce_op or "sum"
        if op == "reduce_scatter":
            self._pending_reduce_op = None
        if schema == "c10d::allgather_":
            mine, out_of = args[1][0], (lambda r: torch.cat(list(args[0][0]), 0) if args[0][0] else None)
        elif schema == "c10d::_allgather_base_":
            mine, out_of = args[1], (lambda r: args[0].reshape((-1,) + tuple(args[1].shape[1:])))
        elif schema == "c10d::reduce_scatter_":
            chunks = list(args[1][0])
            mine = torch.cat(chunks, 0) if chunks and chunks[0].dim() > 0 else None
            out_of = lambda r: args[0][0]  # noqa: E731
        elif schema == "c10d::_reduce_scatter_base_":
            mine, out_of = args[1], (lambda r: args[0])
        else:  # broadcast_: (tensors, group, root_rank, root_tensor, timeout)
            mine, out_of = args[0][0], (lambda r: args[0][0])
        world = dist.get_world_size() if dist.is_initialized() else 1
        name = self._current_name()
        # What every rank decides alike: whether the inputs are gathered. The gather is a
        # collective, so it runs even where this rank does not record (after max_bytes, or a
        # failure), as for all_reduce; otherwise the ranks' gathers would not pair up.
        why = None
        if not dist.is_initialized() or not self._default_group(dist, args):
            why = op + " outside the default process group"
        elif mine is None or mine.dim() == 0:
            why = op + " of a scalar"
        elif mine.dtype not in (torch.float32, torch.bfloat16, torch.float16):
            why = op + " of a non-float tensor"
        gathered = self._gather_bytes(mine, world) if why is None else None
        if why is None and not record_it:
            why = "after recording stopped"
        if why is None:
            why = self._wanted(op, name)
        result = func(*args, **kwargs)
        try:
            result[1].wait()
        except (AttributeError, IndexError, TypeError, RuntimeError):
            pass
        if why is not None:
            if record_it:
                self.skipped[why] += 1
            return result
        try:
            out = out_of(self.rank)
            params = {"ranks": self._rank_labels(world)}
            if op == "reduce_scatter":
                params["reduce_op"] = reduce_op
            if op == "broadcast":
                params["root"] = int(args[2])
            if out is None or not is_storable(out) or not all(is_storable(p) for p in gathered):
                self.skipped[op + " of a tensor that cannot be stored"] += 1
                return result
            self._write(op, gathered, params, [out.detach().contiguous()], name, func, None, self.kept)
        except Exception as e:  # the training step must not fail because recording did
            self.stopped = "recording failed at op %d (%s): %s: %s" % (self._next_index, op, type(e).__name__, e)
            warnings.warn("faultline_capture: %s: %s; the trace keeps the ops before" % (self.path, self.stopped),
                          RuntimeWarning, stacklevel=3)
        return result

    @staticmethod
    def _default_group(dist, args):
        """The call runs on the default (world) group: the only one whose ranks the labels
        name."""
        for a in args:
            if isinstance(a, (torch.Tensor, list, tuple, int)):
                continue
            try:
                return a.size() == dist.get_world_size()
            except Exception:  # not a process group, or one that does not say its size
                continue
        return True
