"""aten ops -> trace v1 ops (the table in docs/capture.md).

``map_op(func, args, kwargs, out)`` returns a Mapped op whose inputs, parameters and outputs are
what the golden model's op of that name expects (a list of them for a call that becomes several
ops, such as ``_foreach_*`` over lists), or None when the call is not one trace v1 knows (the
recorder then records it as ``aten::<name>`` or skips it).

Each Mapped also carries ``call``: how to make the same aten call again from the recorded
inputs (``rerun``). Its references name inputs by position and list the views that turn a
recorded input back into the argument the op saw (``T``: transpose of the last two dims,
``reshape``, ``movedim``), and per output the views that turn the op's result into what was
recorded.
"""
import math

import torch

from .dtypes import GOLDEN_DTYPES, dtype_name

aten = torch.ops.aten


class Mapped:
    def __init__(self, op, inputs, params, outputs, call):
        self.op = op            # trace v1 op name
        self.inputs = inputs    # tensors, in the op's input order
        self.params = params    # op parameters
        self.outputs = outputs  # tensors, k = 0, 1, ...
        self.call = call        # rerun spec (dict) or None


def aten_name(func):
    """"aten::add.Tensor" (the overload only when it is not "default")."""
    schema = func._schema
    overload = schema.overload_name
    return schema.name + ("." + overload if overload and overload != "default" else "")


def _golden(*tensors):
    return all(isinstance(t, torch.Tensor) and t.dtype in GOLDEN_DTYPES and t.layout == torch.strided
               for t in tensors)


def _ref(i, *transform):
    return {"input": i, "transform": list(transform)}


def _spec(func, args, kwargs=None, outputs=None):
    return {"func": str(func), "args": args, "kwargs": kwargs or {},
            "outputs": outputs if outputs is not None else [{"result": None, "transform": []}]}


def _gemm_operand(t):
    """(stored tensor, transposed?) for a GEMM operand: its own row-major layout when it has
    one, the row-major layout of its transpose when that is how it lies in memory (a
    transposed weight), else a row-major copy."""
    if t.is_contiguous():
        return t, False
    tt = t.transpose(-1, -2)
    if tt.is_contiguous():
        return tt, True
    return t.contiguous(), False


def _gemm(func, a, b, c, alpha, beta, out, build_call):
    if not _golden(a, b, out) or a.dim() < 2 or b.dim() < 2:
        return None
    if c is not None and not _golden(c):
        return None
    sa, ta = _gemm_operand(a)
    sb, tb = _gemm_operand(b)
    inputs = [sa, sb]
    params = {"trans_a": int(ta), "trans_b": int(tb), "alpha": float(alpha), "beta": float(beta),
              "out_dtype": dtype_name(out.dtype)}
    if c is not None:
        inputs.append(c.contiguous())
    return Mapped("gemm", inputs, params, [out], build_call(ta, tb))


def _scalar(v, default):
    if v is None:
        return default
    if isinstance(v, torch.Tensor):
        return float(v.item())
    return float(v)


def _operand_refs(ta, tb):
    return _ref(0, *(["T"] if ta else [])), _ref(1, *(["T"] if tb else []))


def _map_mm(func, args, kwargs, out):
    return _gemm(func, args[0], args[1], None, 1.0, 0.0, out,
                 lambda ta, tb: _spec(func, list(_operand_refs(ta, tb))))


def _map_addmm(func, args, kwargs, out):
    """addmm / baddbmm: D = beta self + alpha A B, `self` (a broadcast bias) as C."""
    c, a, b = args[0], args[1], args[2]
    beta = _scalar(kwargs.get("beta", args[3] if len(args) > 3 else None), 1.0)
    alpha = _scalar(kwargs.get("alpha", args[4] if len(args) > 4 else None), 1.0)

    def call(ta, tb):
        ra, rb = _operand_refs(ta, tb)
        return _spec(func, [_ref(2), ra, rb], {"beta": {"value": beta}, "alpha": {"value": alpha}})

    return _gemm(func, a, b, c, alpha, beta, out, call)


def _map_layer_norm(func, args, kwargs, out):
    x, shape, weight, bias, eps = args[0], list(args[1]), args[2], args[3], float(args[4])
    y = out[0]
    if not _golden(x, y) or not shape:
        return None
    n = int(math.prod(shape))
    gamma = weight.reshape(n) if weight is not None else torch.ones(n, dtype=x.dtype)
    beta = bias.reshape(n) if bias is not None else torch.zeros(n, dtype=x.dtype)
    if not _golden(gamma, beta):
        return None
    lead = list(x.shape[: x.dim() - len(shape)])
    flat = lead + [n]
    xs, ys = x.reshape(flat), y.reshape(flat)
    reshape_x = [] if list(x.shape) == flat else [["reshape", list(x.shape)]]
    call = _spec(func,
                 [{"input": 0, "transform": reshape_x}, {"value": shape},
                  {"input": 1, "transform": [["reshape", shape]]} if weight is not None else {"none": True},
                  {"input": 2, "transform": [["reshape", shape]]} if bias is not None else {"none": True},
                  {"value": eps}],
                 outputs=[{"result": 0, "transform": [] if list(x.shape) == flat else [["reshape", flat]]}])
    return Mapped("layernorm", [xs, gamma.contiguous(), beta.contiguous()], {"eps": eps}, [ys], call)


def _map_rms_norm(func, args, kwargs, out):
    x, shape = args[0], list(args[1])
    weight = args[2] if len(args) > 2 else kwargs.get("weight")
    eps = args[3] if len(args) > 3 else kwargs.get("eps")
    y = out[0] if isinstance(out, (tuple, list)) else out
    if not _golden(x, y) or not shape or weight is None:
        return None
    if eps is None:
        eps = torch.finfo(x.dtype).eps  # PyTorch's default for rms_norm
    n = int(math.prod(shape))
    lead = list(x.shape[: x.dim() - len(shape)])
    flat = lead + [n]
    result = 0 if isinstance(out, (tuple, list)) else None
    call = _spec(func, [{"input": 0, "transform": [["reshape", list(x.shape)]]}, {"value": shape},
                        {"input": 1, "transform": [["reshape", shape]]}, {"value": float(eps)}],
                 outputs=[{"result": result, "transform": [["reshape", flat]]}])
    return Mapped("rmsnorm", [x.reshape(flat), weight.reshape(n).contiguous()], {"eps": float(eps)},
                  [y.reshape(flat)], call)


def _map_softmax(func, args, kwargs, out):
    x, dim, half_to_float = args[0], int(args[1]), bool(args[2])
    if not _golden(x, out) or half_to_float or x.dim() == 0:
        return None
    dim = dim % x.dim()
    last = x.dim() - 1
    if dim == last:
        return Mapped("softmax", [x], {}, [out],
                      _spec(func, [_ref(0), {"value": dim}, {"value": False}]))
    moved = [["movedim", last, dim]]
    call = _spec(func, [{"input": 0, "transform": moved}, {"value": dim}, {"value": False}],
                 outputs=[{"result": None, "transform": [["movedim", dim, last]]}])
    return Mapped("softmax", [x.movedim(dim, last)], {}, [out.movedim(dim, last)], call)


def _map_unary(op):
    def mapper(func, args, kwargs, out):
        x = args[0]
        if not _golden(x, out) or out.shape != x.shape:
            return None
        params = {}
        spec_kwargs = {}
        if op == "gelu":
            params["approximate"] = str(kwargs.get("approximate", args[1] if len(args) > 1 else "none"))
            spec_kwargs["approximate"] = {"value": params["approximate"]}
        return Mapped(op, [x], params, [out], _spec(func, [_ref(0)], spec_kwargs))
    return mapper


def _map_attention(func, args, kwargs, out):
    names = [a.name for a in func._schema.arguments]
    bound = dict(zip(names, args))
    bound.update(kwargs)
    q, k, v = bound.get("query"), bound.get("key"), bound.get("value")
    y = out[0] if isinstance(out, (tuple, list)) else out
    if bound.get("attn_mask") is not None or float(bound.get("dropout_p", 0.0) or 0.0) != 0.0:
        return None
    if not _golden(q, k, v, y) or q.dim() not in (3, 4) or not (q.dim() == k.dim() == v.dim()):
        return None
    d = q.shape[-1]
    scale = bound.get("scale")
    scale = float(scale) if scale is not None else 1.0 / math.sqrt(d)
    causal = int(bool(bound.get("is_causal", False)))
    four = (lambda t: t.unsqueeze(1)) if q.dim() == 3 else (lambda t: t)
    back = [] if q.dim() == 4 else [["reshape", list(q.shape)]]
    refs = []
    for i, (nm, val) in enumerate(zip(names, args)):
        if nm in ("query", "key", "value"):
            refs.append({"input": ("query", "key", "value").index(nm),
                         "transform": back if q.dim() == 4 else [["reshape", list(val.shape)]]})
        else:
            refs.append(_plain(val))
    kw = {nm: _plain(val) for nm, val in kwargs.items()}
    result = 0 if isinstance(out, (tuple, list)) else None
    call = _spec(func, refs, kw, outputs=[{"result": result,
                                            "transform": [] if q.dim() == 4 else [["reshape", list(four(y).shape)]]}])
    return Mapped("attention", [four(q).contiguous(), four(k).contiguous(), four(v).contiguous()],
                  {"causal": causal, "scale": scale}, [four(y)], call)


def _plain(v):
    """A JSON reference to a non-tensor argument, or raises TypeError."""
    if v is None:
        return {"none": True}
    if isinstance(v, (bool, int, float, str)):
        return {"value": v}
    if isinstance(v, (list, tuple)) and all(isinstance(e, (bool, int, float)) for e in v):
        return {"value": list(v)}
    if isinstance(v, torch.dtype):
        return {"dtype": str(v).replace("torch.", "")}
    if isinstance(v, torch.device):
        return {"device": v.type}
    if isinstance(v, torch.memory_format):
        return {"memory_format": str(v).replace("torch.", "")}
    if isinstance(v, torch.layout):
        return {"layout": str(v).replace("torch.", "")}
    raise TypeError("argument of type %s" % type(v).__name__)


def _table():
    table = {}

    def add(packet, overload, mapper):
        p = getattr(aten, packet, None)
        f = getattr(p, overload, None) if p is not None else None
        if f is not None:
            table[f] = mapper

    add("mm", "default", _map_mm)
    add("bmm", "default", _map_mm)
    add("addmm", "default", _map_addmm)
    add("baddbmm", "default", _map_addmm)
    add("native_layer_norm", "default", _map_layer_norm)
    add("_fused_rms_norm", "default", _map_rms_norm)
    add("rms_norm", "default", _map_rms_norm)
    add("_softmax", "default", _map_softmax)
    add("gelu", "default", _map_unary("gelu"))
    add("gelu_", "default", _map_unary("gelu"))
    add("silu", "default", _map_unary("silu"))
    add("silu_", "default", _map_unary("silu"))
    for name in ("_scaled_dot_product_attention_forward", "_scaled_dot_product_attention_math",
                 "scaled_dot_product_attention", "_scaled_dot_product_attention"):
        add(name, "default", _map_attention)

    # Element-wise arithmetic, optimizer updates (per tensor and _foreach_*), dropout,
    # selections and sums (pointwise_mapping.py); each with the trace op kind it writes.
    from .pointwise_mapping import register

    def add_kind(packet, overload, mapper, kind):
        add(packet, overload, mapper)
        p = getattr(aten, packet, None)
        f = getattr(p, overload, None) if p is not None else None
        if f is not None:
            KINDS[f] = kind

    register(add_kind)
    return table


# The trace op kind a mapped aten call writes, where the recorder cannot tell it from the name
# (_foreach_mul_ -> mul, native_dropout -> dropout, reciprocal -> pow).
KINDS = {}
MAPPERS = _table()


def map_op(func, args, kwargs, out):
    mapper = MAPPERS.get(func)
    if mapper is None:
        return None
    try:
        return mapper(func, args, kwargs, out)
    except (TypeError, ValueError, IndexError, RuntimeError):
        return None


def generic_call(func, args, kwargs, tensor_index):
    """The rerun spec of an unmapped op whose tensor arguments were recorded in order
    (`tensor_index(t)` gives an input's position), or None when an argument cannot be
    written down."""
    def ref(v):
        if isinstance(v, torch.Tensor):
            return {"input": tensor_index(v), "transform": []}
        if isinstance(v, (list, tuple)) and v and all(isinstance(e, torch.Tensor) for e in v):
            return {"list": [ref(e) for e in v]}
        return _plain(v)
    try:
        return _spec(func, [ref(a) for a in args], {k: ref(v) for k, v in kwargs.items()},
                     outputs=[{"result": "all", "transform": []}])
    except TypeError:
        return None
