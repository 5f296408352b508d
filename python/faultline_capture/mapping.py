"""aten ops -> trace v1 ops (the table in docs/capture.md).

``map_op(func, args, kwargs, out)`` returns a Mapped op (or a list of them: one per output of
the call, one per list element of a ``_foreach_*`` call) whose inputs, parameters and outputs are
what the golden model's op of that name expects, or None when the call is not one trace v1
knows (the recorder then records it as ``aten::<name>`` or skips it).

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
              "out_dtype": dtype_name(out.dtype),
              # the operands' layouts as the call saw them: they choose the CPU kernel
              "a_strides": [int(x) for x in a.stride()], "b_strides": [int(x) for x in b.stride()]}
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


def _map_safe_softmax(func, args, kwargs, out):
    """aten::_safe_softmax(self, dim, dtype=None), torch >= 2.5's softmax in the math attention:
    _softmax, except that a row entirely -inf gives 0 instead of NaN (such rows are not mapped)."""
    x, dim = args[0], int(args[1])
    dtype = args[2] if len(args) > 2 else kwargs.get("dtype")
    if dtype is not None and dtype != x.dtype:
        return None
    if not _golden(x, out) or x.dim() == 0 or bool(torch.isneginf(x).all(dim).any()):
        return None
    m = _map_softmax(func, [x, dim, False], {}, out)
    if m is not None:
        m.call["args"][2] = {"none": True}  # the same call again: dtype None
    return m


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
    bound = dict(zip(names, args, strict=False))  # trailing arguments defaulted
    bound.update(kwargs)
    q, k, v = bound.get("query"), bound.get("key"), bound.get("value")
    y = out[0] if isinstance(out, (tuple, list)) else out
    # A mask or bias (attn_mask; attn_bias in torch 2.x's CUDA kernels) and dropout are not what
    # the attention op computes.
    if bound.get("attn_mask") is not None or bound.get("attn_bias") is not None \
            or float(bound.get("dropout_p", 0.0) or 0.0) != 0.0:
        return None
    if not _golden(q, k, v, y) or q.dim() not in (3, 4) or not (q.dim() == k.dim() == v.dim()):
        return None
    if q.shape[:-2] != k.shape[:-2] or q.shape[:-2] != v.shape[:-2]:
        return None  # grouped-query attention (enable_gqa): k and v have fewer heads
    d = q.shape[-1]
    scale = bound.get("scale")
    scale = float(scale) if scale is not None else 1.0 / math.sqrt(d)
    causal = int(bool(bound.get("is_causal", False)))
    four = (lambda t: t.unsqueeze(1)) if q.dim() == 3 else (lambda t: t)
    back = [] if q.dim() == 4 else [["reshape", list(q.shape)]]
    refs = []
    for nm, val in zip(names, args, strict=False):
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


_ATTENTION_BACKWARD_INPUTS = ("grad_out", "query", "key", "value", "out", "logsumexp")
_ATTENTION_GRADS = ("attention_backward_q", "attention_backward_k", "attention_backward_v")


def _map_attention_backward(func, args, kwargs, out):
    """A fused attention backward (torch 2.x's CPU flash kernel: grad_out, query, key, value, out,
    logsumexp, dropout_p, is_causal, *, attn_mask, scale) -> (grad_query, grad_key, grad_value):
    one trace op per gradient, each with the six tensors the call reads."""
    names = [a.name for a in func._schema.arguments]
    bound = dict(zip(names, args, strict=False))
    bound.update(kwargs)
    tensors = [bound.get(n) for n in _ATTENTION_BACKWARD_INPUTS]
    if bound.get("attn_mask") is not None or float(bound.get("dropout_p", 0.0) or 0.0) != 0.0:
        return None
    if not _golden(*tensors) or any(t.dim() != 4 for t in tensors[:5]):
        return None
    g, q, k, v, o, lse = tensors
    if k.shape[:2] != q.shape[:2] or v.shape[:3] != k.shape[:3] or g.shape != o.shape:
        return None  # grouped-query attention: k and v have fewer heads
    scale = bound.get("scale")
    scale = float(scale) if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    params = {"causal": int(bool(bound.get("is_causal", False))), "scale": scale}
    refs = [_ref(_ATTENTION_BACKWARD_INPUTS.index(nm)) if nm in _ATTENTION_BACKWARD_INPUTS else _plain(val)
            for nm, val in zip(names, args, strict=False)]
    kw = {nm: _ref(_ATTENTION_BACKWARD_INPUTS.index(nm)) if nm in _ATTENTION_BACKWARD_INPUTS else _plain(val)
          for nm, val in kwargs.items()}
    inputs = [t.contiguous() for t in tensors]
    mapped = []
    for i, op in enumerate(_ATTENTION_GRADS):
        if out[i] is None or not _golden(out[i]):
            continue
        mapped.append(Mapped(op, inputs, dict(params), [out[i]],
                             _spec(func, refs, kw, outputs=[{"result": i, "transform": []}])))
    return mapped or None


# ---- loss, embedding and backward ops of a training step (#22) ----------------------------------
# Each trace op has one output: an aten call with several (nll_loss_forward, native_layer_norm_backward)
# maps to a list of Mapped, one per output, each with every input the call takes and a call spec
# selecting its result. Index inputs (embedding indices, nll_loss targets) are stored as they are.

_INDEX_DTYPES = (torch.int64, torch.int32)
_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}
# torch versions whose CPU kernels were checked bit for bit against the golden model's emulation of
# their narrow-type summation order (embedding_dense_backward; native_layer_norm_backward's weight
# and bias gradients, bfloat16): the capture records `cpu_order` there, and the golden model
# follows that order instead of bounding any order.
_CPU_ORDER_TORCH = ("1.13.", "2.15.")


def _cpu_order_known(t, dtypes):
    return t.device.type == "cpu" and t.dtype in dtypes and torch.__version__.startswith(_CPU_ORDER_TORCH)


def _indices(t):
    return isinstance(t, torch.Tensor) and t.dtype in _INDEX_DTYPES and t.layout == torch.strided


def _last_dim_pair(op, func, args, out):
    """_log_softmax_backward_data / _softmax_backward_data (grad, output, dim, input_dtype): the
    gradient over `dim`, moved to the last axis."""
    g, y, dim, input_dtype = args[0], args[1], int(args[2]), args[3]
    if not _golden(g, y, out) or g.shape != y.shape or g.dim() == 0 or input_dtype != g.dtype:
        return None
    dim = dim % g.dim()
    last = g.dim() - 1
    moved = [] if dim == last else [["movedim", last, dim]]
    back = [] if dim == last else [["movedim", dim, last]]
    call = _spec(func, [_ref(0, *moved), _ref(1, *moved), {"value": dim}, _plain(input_dtype)],
                 outputs=[{"result": None, "transform": back}])
    return Mapped(op, [g.movedim(dim, last), y.movedim(dim, last)], {}, [out.movedim(dim, last)], call)


def _map_log_softmax(func, args, kwargs, out):
    x, dim, half_to_float = args[0], int(args[1]), bool(args[2])
    if not _golden(x, out) or half_to_float or x.dim() == 0:
        return None
    dim = dim % x.dim()
    last = x.dim() - 1
    moved = [] if dim == last else [["movedim", last, dim]]
    back = [] if dim == last else [["movedim", dim, last]]
    call = _spec(func, [_ref(0, *moved), {"value": dim}, {"value": False}],
                 outputs=[{"result": None, "transform": back}])
    return Mapped("log_softmax", [x.movedim(dim, last)], {}, [out.movedim(dim, last)], call)


def _map_log_softmax_backward(func, args, kwargs, out):
    return _last_dim_pair("log_softmax_backward", func, args, out)


def _map_softmax_backward(func, args, kwargs, out):
    return _last_dim_pair("softmax_backward", func, args, out)


def _map_embedding(func, args, kwargs, out):
    weight, idx = args[0], args[1]
    if not _golden(weight, out) or weight.dim() != 2 or not _indices(idx):
        return None
    rest = [_plain(a) for a in args[2:]]
    return Mapped("embedding", [weight, idx], {}, [out],
                  _spec(func, [_ref(0), _ref(1)] + rest, {k: _plain(v) for k, v in kwargs.items()}))


def _map_embedding_backward(func, args, kwargs, out):
    grad, idx, num_weights, padding_idx, scale = args[0], args[1], int(args[2]), int(args[3]), bool(args[4])
    if not _golden(grad, out) or not _indices(idx) or grad.dim() == 0:
        return None
    params = {"num_weights": num_weights, "padding_idx": padding_idx, "scale_grad_by_freq": int(scale)}
    if not scale and _cpu_order_known(grad, (torch.bfloat16, torch.float16)):
        params["cpu_order"] = 1  # each index's rows added in index order, partial sums rounded
    call = _spec(func, [_ref(0), _ref(1), {"value": num_weights}, {"value": padding_idx}, {"value": scale}])
    return Mapped("embedding_backward", [grad, idx], params, [out], call)


def _nll_rows(x, target):
    """(x as [rows, classes] or [classes], target as [rows] or [], transforms back, rows): nll_loss2d's
    [N, C, H, W] and [N, H, W] flattened to rows, classes last."""
    if x.dim() <= 2:
        return x, target, [], [], None
    c = x.shape[1]
    moved = x.movedim(1, -1)
    flat = moved.reshape(-1, c)
    x_back = [["reshape", list(moved.shape)], ["movedim", x.dim() - 1, 1]]
    t_back = [["reshape", list(target.shape)]]
    return flat, target.reshape(-1), x_back, t_back, flat.shape[0]


def _map_nll_loss(func, args, kwargs, out):
    """nll_loss_forward / nll_loss2d_forward (x, target, weight, reduction, ignore_index) ->
    (output, total_weight): nll_loss and nll_loss_total_weight."""
    x, target, weight, reduction, ignore = args[0], args[1], args[2], int(args[3]), int(args[4])
    loss, total = out[0], out[1]
    if not _golden(x, loss, total) or not _indices(target) or reduction not in _REDUCTIONS:
        return None
    if weight is not None and not _golden(weight):
        return None
    xs, ts, x_back, t_back, rows = _nll_rows(x, target)
    inputs = [xs, ts] + ([weight] if weight is not None else [])
    params = {"reduction": _REDUCTIONS[reduction], "ignore_index": ignore}
    refs = [_ref(0, *x_back), _ref(1, *t_back), _ref(2) if weight is not None else {"none": True},
            {"value": reduction}, {"value": ignore}]
    flat_loss = [["reshape", [rows]]] if rows is not None and reduction == 0 else []
    loss_out = loss.reshape(-1) if flat_loss else loss
    return [Mapped("nll_loss", inputs, params, [loss_out],
                   _spec(func, refs, outputs=[{"result": 0, "transform": flat_loss}])),
            Mapped("nll_loss_total_weight", inputs, dict(params), [total],
                   _spec(func, refs, outputs=[{"result": 1, "transform": []}]))]


def _map_nll_loss_backward(func, args, kwargs, out):
    """nll_loss_backward / nll_loss2d_backward (grad, x, target, weight, reduction, ignore_index,
    total_weight)."""
    grad, x, target, weight, reduction, ignore, total = args[:7]
    reduction, ignore = int(reduction), int(ignore)
    if not _golden(grad, x, total, out) or not _indices(target) or reduction not in _REDUCTIONS:
        return None
    if weight is not None and not _golden(weight):
        return None
    xs, ts, x_back, t_back, rows = _nll_rows(x, target)
    grads = grad.reshape(-1) if rows is not None and reduction == 0 else grad
    g_back = [["reshape", list(grad.shape)]] if grads is not grad else []
    inputs = [grads, xs, ts, total] + ([weight] if weight is not None else [])
    refs = [_ref(0, *g_back), _ref(1, *x_back), _ref(2, *t_back), _ref(4) if weight is not None else {"none": True},
            {"value": reduction}, {"value": ignore}, _ref(3)]
    out_back = [] if rows is None else [["movedim", 1, -1], ["reshape", [rows, x.shape[1]]]]
    result = out if rows is None else out.movedim(1, -1).reshape(rows, x.shape[1])
    return Mapped("nll_loss_backward", inputs, {"reduction": _REDUCTIONS[reduction], "ignore_index": ignore},
                  [result], _spec(func, refs, outputs=[{"result": None, "transform": out_back}]))


def _map_layer_norm_backward(func, args, kwargs, out):
    """native_layer_norm_backward (dy, x, normalized_shape, mean, rstd, weight, bias, output_mask)
    -> (grad_input, grad_weight, grad_bias): one trace op per output the mask asks for."""
    dy, x, shape, mean, rstd, weight, bias, mask = args[:8]
    shape = list(shape)
    if not _golden(dy, x, mean, rstd) or not shape or dy.shape != x.shape:
        return None
    n = int(math.prod(shape))
    lead = list(x.shape[: x.dim() - len(shape)])
    rows = int(math.prod(lead))
    gamma = weight.reshape(n) if weight is not None else torch.ones(n, dtype=x.dtype)
    beta = bias.reshape(n) if bias is not None else torch.zeros(n, dtype=x.dtype)
    if not _golden(gamma, beta) or mean.numel() != rows or rstd.numel() != rows:
        return None
    flat = lead + [n]
    inputs = [dy.reshape(flat), x.reshape(flat), mean.reshape(rows), rstd.reshape(rows), gamma, beta]
    refs = [_ref(0, ["reshape", list(x.shape)]), _ref(1, ["reshape", list(x.shape)]), {"value": shape},
            _ref(2, ["reshape", list(mean.shape)]), _ref(3, ["reshape", list(rstd.shape)]),
            _ref(4, ["reshape", shape]) if weight is not None else {"none": True},
            _ref(5, ["reshape", shape]) if bias is not None else {"none": True},
            {"value": [bool(m) for m in mask]}]
    # The weight and bias gradients' partial sums: in bf16 per thread's chunk of rows.
    sums = {"cpu_order": torch.get_num_threads()} if _cpu_order_known(x, (torch.bfloat16,)) else {}
    mapped = []
    for k, (op, view) in enumerate((("layernorm_backward_input", flat), ("layernorm_backward_weight", [n]),
                                    ("layernorm_backward_bias", [n]))):
        if not mask[k] or out[k] is None or not _golden(out[k]):
            continue
        mapped.append(Mapped(op, inputs, dict(sums) if k else {}, [out[k].reshape(view)],
                             _spec(func, refs, outputs=[{"result": k, "transform": [["reshape", view]]}])))
    return mapped or None


def _map_activation_backward(op):
    def mapper(func, args, kwargs, out):
        g, x = args[0], args[1]
        if not _golden(g, x, out) or g.shape != x.shape or out.shape != x.shape:
            return None
        params, spec_kwargs = {}, {}
        if op == "gelu_backward":
            params["approximate"] = str(kwargs.get("approximate", args[2] if len(args) > 2 else "none"))
            spec_kwargs["approximate"] = {"value": params["approximate"]}
        return Mapped(op, [g, x], params, [out], _spec(func, [_ref(0), _ref(1)], spec_kwargs))
    return mapper


def _add_training_ops(add):
    add("embedding", "default", _map_embedding)
    add("embedding_dense_backward", "default", _map_embedding_backward)
    add("_log_softmax", "default", _map_log_softmax)
    add("_log_softmax_backward_data", "default", _map_log_softmax_backward)
    add("_softmax_backward_data", "default", _map_softmax_backward)
    add("nll_loss_forward", "default", _map_nll_loss)
    add("nll_loss2d_forward", "default", _map_nll_loss)
    add("nll_loss_backward", "default", _map_nll_loss_backward)
    add("nll_loss2d_backward", "default", _map_nll_loss_backward)
    add("native_layer_norm_backward", "default", _map_layer_norm_backward)
    add("gelu_backward", "default", _map_activation_backward("gelu_backward"))
    add("silu_backward", "default", _map_activation_backward("silu_backward"))
    add("_scaled_dot_product_flash_attention_for_cpu_backward", "default", _map_attention_backward)


# The trace ops each aten call of the block above may become (the recorder's `ops` filter).
TRAINING_TRACE_OPS = {
    "aten::embedding": ("embedding",),
    "aten::embedding_dense_backward": ("embedding_backward",),
    "aten::_log_softmax": ("log_softmax",),
    "aten::_log_softmax_backward_data": ("log_softmax_backward",),
    "aten::_softmax_backward_data": ("softmax_backward",),
    "aten::nll_loss_forward": ("nll_loss", "nll_loss_total_weight"),
    "aten::nll_loss2d_forward": ("nll_loss", "nll_loss_total_weight"),
    "aten::nll_loss_backward": ("nll_loss_backward",),
    "aten::nll_loss2d_backward": ("nll_loss_backward",),
    "aten::native_layer_norm_backward": ("layernorm_backward_input", "layernorm_backward_weight",
                                         "layernorm_backward_bias"),
    "aten::gelu_backward": ("gelu_backward",),
    "aten::silu_backward": ("silu_backward",),
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward": _ATTENTION_GRADS,
}


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
    # torch 1.13's and 2.x's attention calls; the fused kernels return the output first (the
    # CPU kernel of 2.x: output, logsumexp).
    for name in ("_scaled_dot_product_attention_forward", "_scaled_dot_product_attention_math",
                 "scaled_dot_product_attention", "_scaled_dot_product_attention",
                 "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention",
                 "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
                 "_scaled_dot_product_fused_attention_overrideable"):
        add(name, "default", _map_attention)
    add("_safe_softmax", "default", _map_safe_softmax)
    _add_training_ops(add)

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
KINDS: dict[object, str] = {}  # aten OpOverload -> trace op kind
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
