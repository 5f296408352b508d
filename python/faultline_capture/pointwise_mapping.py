"""aten element-wise calls -> trace v1 ops: arithmetic with tensors and scalars, the optimizer
updates (per tensor and ``_foreach_*``), dropout with its recorded mask, selections and sums
over dims (the table in docs/capture.md). Registered by mapping.py's table.

Scalars become op parameters (``other``, ``alpha``, ``value``, ``weight``, ``exponent``): a Python
number, or a 0-dim tensor of another dtype than the op's (which PyTorch reads as a scalar). A
``_foreach_*`` call becomes one op per list element, each with a call spec that re-runs the
functional foreach op on that element alone.
"""

import torch

from .dtypes import dtype_name
from .mapping import Mapped, _golden, _plain, _ref, _spec

aten = torch.ops.aten


def _bind(func, args, kwargs):
    """The call's arguments by schema name (defaults where not given)."""
    bound = {}
    for i, a in enumerate(func._schema.arguments):
        if i < len(args):
            bound[a.name] = args[i]
        elif a.name in kwargs:
            bound[a.name] = kwargs[a.name]
        elif a.default_value is not None:
            bound[a.name] = a.default_value
        else:
            bound[a.name] = None
    return bound


def _number(v):
    """A scalar operand as a float, or None when it is not one (a tensor with dims, complex)."""
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, torch.Tensor) and v.dim() == 0 and not v.is_complex():
        return float(v.item())
    return None


def _operand(v, dtype):
    """("tensor", t) for a tensor read element-wise in `dtype`, ("scalar", x) for a number or a
    0-dim tensor of another dtype, or None."""
    if isinstance(v, torch.Tensor) and (v.dim() > 0 or v.dtype == dtype):
        return ("tensor", v) if v.dtype == dtype and _golden(v) else None
    x = _number(v)
    return None if x is None else ("scalar", x)


def _mask(*tensors):
    """Bool tensors in strided layout (causal masks built with triu)."""
    return all(isinstance(t, torch.Tensor) and t.dtype == torch.bool and t.layout == torch.strided for t in tensors)


def _value_ref(v):
    return {"value": v}


def _out(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def _sibling(func, overload):
    """The same aten op's `overload` (e.g. masked_fill.Scalar for masked_fill.Tensor), to re-run
    a call whose tensor scalar was recorded as a number; `func` when there is none."""
    packet = getattr(aten, func._schema.name.split("::", 1)[1], None)
    return getattr(packet, overload, None) or func


# ---- per-tensor calls ---------------------------------------------------------------------------

def _map_binary(op, scalar_name="other"):
    """add/sub/mul/div/pow (x, y | scalar[, alpha])."""
    def mapper(func, args, kwargs, out):
        b = _bind(func, args, kwargs)
        names = [a.name for a in func._schema.arguments]
        x = b[names[0]]
        y = b[names[1]]
        out = _out(out)
        if not _golden(x, out) or x.dtype != out.dtype or b.get("rounding_mode") is not None:
            return None
        second = _operand(y, x.dtype)
        if second is None:
            return None
        params = {}
        alpha = _number(b.get("alpha", 1)) if b.get("alpha", 1) is not None else 1.0
        if alpha is None:
            return None
        if alpha != 1.0:
            params["alpha"] = alpha
        spec_kwargs = {"alpha": _value_ref(alpha)} if "alpha" in params else {}
        if second[0] == "tensor":
            inputs, refs = [x, second[1]], [_ref(0), _ref(1)]
        else:
            params[scalar_name] = second[1]
            inputs, refs = [x], [_ref(0), _value_ref(second[1])]
            if func._schema.overload_name == "Tensor_Tensor":
                func = _sibling(func, "Tensor_Scalar")
            elif func._schema.name == "aten::pow_" and func._schema.overload_name == "Tensor":
                func = _sibling(func, "Scalar")
        return Mapped(op, inputs, params, [out], _spec(func, refs, spec_kwargs))
    return mapper


def _map_unary(op, params=None):
    def mapper(func, args, kwargs, out):
        x = args[0]
        out = _out(out)
        if not _golden(x, out) or x.dtype != out.dtype or out.shape != x.shape:
            return None
        return Mapped(op, [x], dict(params or {}), [out], _spec(func, [_ref(0)]))
    return mapper


def _map_addc(op):
    """addcmul / addcdiv (self, tensor1, tensor2, value=1)."""
    def mapper(func, args, kwargs, out):
        b = _bind(func, args, kwargs)
        s, t1, t2 = b["self"], b["tensor1"], b["tensor2"]
        out = _out(out)
        if not _golden(s, t1, t2, out) or not (s.dtype == t1.dtype == t2.dtype == out.dtype):
            return None
        value = _number(b.get("value", 1))
        if value is None:
            return None
        return Mapped(op, [s, t1, t2], {"value": value}, [out],
                      _spec(func, [_ref(0), _ref(1), _ref(2)], {"value": _value_ref(value)}))
    return mapper


def _map_lerp(func, args, kwargs, out):
    b = _bind(func, args, kwargs)
    s, end, w = b["self"], b["end"], b["weight"]
    out = _out(out)
    if not _golden(s, end, out) or not (s.dtype == end.dtype == out.dtype):
        return None
    weight = _operand(w, s.dtype)
    if weight is None:
        return None
    if weight[0] == "tensor":
        return Mapped("lerp", [s, end, weight[1]], {}, [out], _spec(func, [_ref(0), _ref(1), _ref(2)]))
    return Mapped("lerp", [s, end], {"weight": weight[1]}, [out],
                  _spec(_sibling(func, "Scalar"), [_ref(0), _ref(1), _value_ref(weight[1])]))


def _map_masked_fill(func, args, kwargs, out):
    x, mask, value = args[0], args[1], args[2]
    out = _out(out)
    v = _number(value)
    if not _golden(x, out) or x.dtype != out.dtype or not isinstance(mask, torch.Tensor) or v is None:
        return None
    if mask.dtype not in (torch.bool, torch.uint8):
        return None
    return Mapped("masked_fill", [x, mask], {"value": v}, [out],
                  _spec(_sibling(func, "Scalar"), [_ref(0), _ref(1), _value_ref(v)]))


def _map_where(func, args, kwargs, out):
    cond, x, y = args[0], args[1], args[2]
    out = _out(out)
    if not isinstance(cond, torch.Tensor) or cond.dtype not in (torch.bool, torch.uint8):
        return None
    if not _golden(x, y, out) or not (x.dtype == y.dtype == out.dtype):
        return None
    return Mapped("where", [cond, x, y], {}, [out], _spec(func, [_ref(0), _ref(1), _ref(2)]))


def _map_tri(op):
    def mapper(func, args, kwargs, out):
        x = args[0]
        diagonal = int(kwargs.get("diagonal", args[1] if len(args) > 1 else 0))
        out = _out(out)
        # Bytes moved without arithmetic: float tensors and masks alike.
        if not (_golden(x, out) or _mask(x, out)) or x.dtype != out.dtype or x.dim() < 2:
            return None
        return Mapped(op, [x], {"diagonal": diagonal}, [out], _spec(func, [_ref(0), _value_ref(diagonal)]))
    return mapper


def _map_threshold_backward(func, args, kwargs, out):
    """threshold_backward(grad_output, self, threshold): relu's backward."""
    b = _bind(func, args, kwargs)
    g, x = b["grad_output"], b["self"]
    threshold = _number(b["threshold"])
    out = _out(out)
    if not _golden(g, x, out) or not (g.dtype == x.dtype == out.dtype) or g.shape != x.shape \
            or out.shape != x.shape or threshold is None:
        return None
    return Mapped("threshold_backward", [g, x], {"threshold": threshold}, [out],
                  _spec(func, [_ref(0), _ref(1), _value_ref(threshold)]))


def _map_select_backward(func, args, kwargs, out):
    """select_backward(grad_output, input_sizes, dim, index): the gradient of x.select(dim, index)."""
    b = _bind(func, args, kwargs)
    g = b["grad_output"]
    out = _out(out)
    try:
        sizes = [int(v) for v in b["input_sizes"]]
        dim, index = int(b["dim"]), int(b["index"])
    except (TypeError, ValueError):  # symbolic sizes
        return None
    if not _golden(g, out) or g.dtype != out.dtype or list(out.shape) != sizes:
        return None
    params = {"input_sizes": sizes, "dim": dim, "index": index}
    return Mapped("select_backward", [g], params, [out],
                  _spec(func, [_ref(0), _value_ref(sizes), _value_ref(dim), _value_ref(index)]))


_ADAM_OPS = (("adam_param", 0), ("adam_exp_avg", 2), ("adam_exp_avg_sq", 3))


def _map_fused_adam(decoupled):
    """_fused_adam_ / _fused_adamw_ (params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
    state_steps, *, lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf):
    per parameter the three results (adam_param, adam_exp_avg, adam_exp_avg_sq), each from the
    state before the step, with a call spec that re-runs the fused step on that parameter alone.
    AMSGrad, gradient scaling and a tensor learning rate stay aten::."""
    def mapper(func, args, kwargs, out):
        b = _bind(func, args, kwargs)
        lists = [list(b[n]) for n in ("self", "grads", "exp_avgs", "exp_avg_sqs")]
        steps = list(b["state_steps"])
        after = list(out) if isinstance(out, (list, tuple)) else []
        if b.get("amsgrad") or b.get("grad_scale") is not None or b.get("found_inf") is not None \
                or len(after) < 4 or isinstance(b.get("lr"), torch.Tensor):
            return None
        n = len(lists[0])
        if any(len(x) != n for x in lists + [steps]) or any(len(list(after[k])) != n for k in (0, 2, 3)):
            return None
        hyper = {k: _number(b[k]) for k in ("lr", "beta1", "beta2", "weight_decay", "eps")}
        if any(v is None for v in hyper.values()):
            return None
        result = []
        for i in range(n):
            tensors = [x[i] for x in lists]
            step = _number(steps[i])
            if step is None or not _golden(*tensors) or len({t.dtype for t in tensors}) != 1 \
                    or len({tuple(t.shape) for t in tensors}) != 1:
                return None
            params = dict(hyper, step=step, maximize=int(bool(b.get("maximize"))), decoupled=int(decoupled))
            for op, k in _ADAM_OPS:
                y = list(after[k])[i]
                if y.dtype != tensors[0].dtype or y.shape != tensors[0].shape:
                    return None
                spec_kwargs = {k2: _value_ref(v) for k2, v in hyper.items()}
                spec_kwargs.update(amsgrad=_value_ref(False), maximize=_value_ref(bool(b.get("maximize"))))
                call_args = [{"list": [_ref(j)]} for j in range(4)] + [
                    {"list": []}, {"list": [{"scalar_tensor": step, "dtype": dtype_name(steps[i].dtype)}]}]
                call = _spec(func, call_args, spec_kwargs, outputs=[{"written": [k]}])
                result.append(Mapped(op, tensors, params, [y], call))
        return result
    return mapper


def _map_cat(func, args, kwargs, out):
    tensors = list(args[0])
    dim = int(kwargs.get("dim", args[1] if len(args) > 1 else 0))
    out = _out(out)
    if not tensors or not _golden(out, *tensors) or any(t.dtype != out.dtype for t in tensors):
        return None
    refs = {"list": [_ref(i) for i in range(len(tensors))]}
    return Mapped("cat", tensors, {"dim": dim}, [out], _spec(func, [refs, _value_ref(dim)]))


def _map_reduce(op):
    """sum / mean, over dims or all of them, with keepdim and an output dtype."""
    def mapper(func, args, kwargs, out):
        b = _bind(func, args, kwargs)
        x = b["self"]
        out = _out(out)
        if not _golden(x, out):
            return None
        dims = b.get("dim")
        keepdim = bool(b.get("keepdim") or False)
        params = {}
        if dims is not None and len(list(dims)) > 0:
            params["dims"] = [int(d) for d in dims]
        if keepdim:
            params["keepdim"] = 1
        if out.dtype != x.dtype:
            params["out_dtype"] = dtype_name(out.dtype)
        spec_args = [_ref(0)] + [_plain(v) for v in args[1:]]
        spec_kwargs = {k: _plain(v) for k, v in kwargs.items()}
        return Mapped(op, [x], params, [out], _spec(func, spec_args, spec_kwargs))
    return mapper


def _map_native_dropout(func, args, kwargs, out):
    """native_dropout(x, p, train) -> (output, mask): the output op reads x and the recorded
    mask (the mask itself, random, is not judged). No call spec: re-running it draws another
    mask."""
    x, p = args[0], float(args[1])
    train = args[2] if len(args) > 2 else kwargs.get("train")
    y, mask = out[0], out[1]
    if not _golden(x, y) or x.dtype != y.dtype or not isinstance(mask, torch.Tensor):
        return None
    if train is None or train:
        scale = 0.0 if p >= 1.0 else 1.0 / (1.0 - p)
    else:
        scale = 1.0
    return Mapped("dropout", [x, mask], {"scale": scale}, [y], None)


def _map_dropout_backward(func, args, kwargs, out):
    grad, mask, scale = args[0], args[1], float(args[2])
    out = _out(out)
    if not _golden(grad, out) or grad.dtype != out.dtype or not isinstance(mask, torch.Tensor):
        return None
    return Mapped("dropout", [grad, mask], {"scale": scale}, [out],
                  _spec(func, [_ref(0), _ref(1), _value_ref(scale)]))


# ---- _foreach_*: one op per list element ---------------------------------------------------------

def _foreach_call(func, refs, spec_kwargs):
    """The call spec of one element: the functional foreach op on one-element lists (scalars
    given as a tensor are re-run through the ScalarList overload)."""
    name = func._schema.name.split("::", 1)[1]
    overload = func._schema.overload_name or "default"
    packet = getattr(aten, name.rstrip("_"), None)
    functional = getattr(packet, overload, None)
    if overload == "Tensor":
        functional = getattr(packet, "ScalarList", None)
    if functional is None:
        return None
    return _spec(functional, refs, spec_kwargs, outputs=[{"result": 0, "transform": []}])


# Scalar arguments of _foreach_* schemas -> the trace op's parameter.
_FOREACH_SCALARS = {"scalar": "other", "other": "other", "value": "value", "weight": "weight"}
# List arguments read element by element, as further inputs.
_FOREACH_LISTS = ("other", "tensor1", "tensor2", "tensors1", "end", "weights")


def _map_foreach(op, params=None):
    """_foreach_<op>[_] over lists; the second operand a list, a scalar or a list of scalars."""
    def mapper(func, args, kwargs, out):
        b = _bind(func, args, kwargs)
        names = [a.name for a in func._schema.arguments]
        selfs = list(b[names[0]])
        outs = list(out) if isinstance(out, (list, tuple)) else []
        if len(outs) != len(selfs):
            return None
        result = []
        for i, (x, y) in enumerate(zip(selfs, outs, strict=True)):
            if not _golden(x, y) or x.dtype != y.dtype or x.shape != y.shape:
                return None
            inputs, refs, p, kw = [x], [{"list": [_ref(0)]}], dict(params or {}), {}
            for name in names[1:]:
                v = b[name]
                if name in _FOREACH_LISTS and isinstance(v, (list, tuple)):
                    t = v[i]
                    if not _golden(t) or t.dtype != x.dtype:
                        return None
                    inputs.append(t)
                    refs.append({"list": [_ref(len(inputs) - 1)]})
                elif name == "alpha":
                    s = _number(v)
                    if s is None:
                        return None
                    if s != 1.0:
                        p["alpha"] = s
                    kw["alpha"] = _value_ref(s)
                elif name in _FOREACH_SCALARS:
                    s = _number(v)
                    if s is None:
                        return None
                    p[_FOREACH_SCALARS[name]] = s
                    refs.append(_value_ref(s))
                elif name == "scalars":
                    scalars = v.tolist() if isinstance(v, torch.Tensor) else list(v)
                    s = _number(scalars[i])
                    if s is None:
                        return None
                    p["value" if op in ("addcmul", "addcdiv") else "other"] = s
                    refs.append(_value_ref([s]))
                else:
                    return None
            result.append(Mapped(op, inputs, p, [y], _foreach_call(func, refs, kw)))
        return result
    return mapper


# ---- the table ----------------------------------------------------------------------------------

def register(add):
    """Adds this module's mappers through mapping.py's `add(packet, overload, mapper, kind)`."""
    for op in ("add", "sub", "mul", "div"):
        for packet in (op, op + "_"):
            for overload in ("Tensor", "Scalar"):
                add(packet, overload, _map_binary(op), op)
    for packet in ("pow", "pow_"):
        add(packet, "Tensor_Scalar", _map_binary("pow", "exponent"), "pow")
        add(packet, "Tensor_Tensor", _map_binary("pow", "exponent"), "pow")
        add(packet, "Scalar", _map_binary("pow", "exponent"), "pow")  # pow_.Scalar: x ** number
        add(packet, "Tensor", _map_binary("pow", "exponent"), "pow")  # pow_.Tensor: x ** tensor
    for op in ("neg", "sqrt", "rsqrt", "exp"):
        add(op, "default", _map_unary(op), op)
        add(op + "_", "default", _map_unary(op), op)
    add("reciprocal", "default", _map_unary("pow", {"exponent": -1.0}), "pow")
    add("reciprocal_", "default", _map_unary("pow", {"exponent": -1.0}), "pow")
    for op in ("addcmul", "addcdiv"):
        add(op, "default", _map_addc(op), op)
        add(op + "_", "default", _map_addc(op), op)
    for packet in ("lerp", "lerp_"):
        add(packet, "Scalar", _map_lerp, "lerp")
        add(packet, "Tensor", _map_lerp, "lerp")
    for packet in ("masked_fill", "masked_fill_"):
        add(packet, "Scalar", _map_masked_fill, "masked_fill")
        add(packet, "Tensor", _map_masked_fill, "masked_fill")
    add("where", "self", _map_where, "where")
    for op in ("triu", "tril"):
        add(op, "default", _map_tri(op), op)
        add(op + "_", "default", _map_tri(op), op)
    add("cat", "default", _map_cat, "cat")
    add("relu", "default", _map_unary("relu"), "relu")
    add("relu_", "default", _map_unary("relu"), "relu")
    add("threshold_backward", "default", _map_threshold_backward, "threshold_backward")
    add("select_backward", "default", _map_select_backward, "select_backward")
    add("_fused_adam_", "default", _map_fused_adam(False), "adam_param")
    add("_fused_adamw_", "default", _map_fused_adam(True), "adam_param")
    add("sum", "dim_IntList", _map_reduce("sum"), "sum")
    add("sum", "default", _map_reduce("sum"), "sum")
    add("mean", "dim", _map_reduce("mean"), "mean")
    add("mean", "default", _map_reduce("mean"), "mean")
    add("native_dropout", "default", _map_native_dropout, "dropout")
    add("native_dropout_backward", "default", _map_dropout_backward, "dropout")
    for op in ("add", "sub", "mul", "div"):
        for packet in ("_foreach_" + op, "_foreach_" + op + "_"):
            for overload in ("Scalar", "List", "ScalarList", "Tensor"):
                add(packet, overload, _map_foreach(op), op)
    for op in ("addcmul", "addcdiv"):
        for packet in ("_foreach_" + op, "_foreach_" + op + "_"):
            for overload in ("Scalar", "ScalarList", "Tensor"):
                add(packet, overload, _map_foreach(op), op)
    for packet in ("_foreach_lerp", "_foreach_lerp_"):
        for overload in ("Scalar", "List"):
            add(packet, overload, _map_foreach("lerp"), "lerp")
    for op in ("sqrt", "neg", "exp"):
        for packet in ("_foreach_" + op, "_foreach_" + op + "_"):
            add(packet, "default", _map_foreach(op), op)
    for packet in ("_foreach_reciprocal", "_foreach_reciprocal_"):
        add(packet, "default", _map_foreach("pow", {"exponent": -1.0}), "pow")
