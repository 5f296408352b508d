"""The aten -> trace v1 mapping (mapping.py, pointwise_mapping.py) without a faultline binary:
aten calls on small CPU tensors become the trace op, inputs and parameters the golden model
expects, calls it does not judge map to nothing, and each Mapped's rerun spec makes the same call
again from the recorded inputs, giving the recorded outputs bit for bit."""
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
import capture_support as cs  # noqa: E402
from faultline_capture.mapping import KINDS, MAPPERS, TRAINING_TRACE_OPS, aten_name, generic_call, map_op  # noqa: E402

rr = importlib.import_module("faultline_capture.rerun")  # the module; the package exports rerun()
aten = torch.ops.aten
g = torch.Generator().manual_seed(0)


def rnd(*shape, dtype=torch.float32):
    return torch.randn(*shape, generator=g).to(dtype)


def mapped(func, *args, **kwargs):
    """(Mapped, or list of them) of calling `func`, checked to be mapped at all."""
    out = func(*args, **kwargs)
    m = map_op(func, list(args), kwargs, out)
    cs.check(m is not None, "%s: not mapped" % aten_name(func))
    return m


def replayed(m):
    """The outputs of the Mapped's rerun spec called on copies of its recorded inputs, as rerun
    makes them; checked equal bit for bit to what was recorded."""
    inputs = [t.clone() for t in m.inputs]
    func = rr._func(m.call["func"])
    args = [rr._resolve(r, inputs, "cpu") for r in m.call["args"]]
    kwargs = {k: rr._resolve(r, inputs, "cpu") for k, r in m.call["kwargs"].items()}
    outs = rr._outputs(func(*args, **kwargs), m.call, args, kwargs)
    cs.check(len(outs) == len(m.outputs), "%s: rerun gives %d output(s), recorded %d"
             % (m.call["func"], len(outs), len(m.outputs)))
    for k, (a, b) in enumerate(zip(outs, m.outputs, strict=True)):
        cs.check(rr._bits(a) == rr._bits(b), "%s: rerun output %d differs from the recorded one (%s %s vs %s %s)"
                 % (m.call["func"], k, a.dtype, list(a.shape), b.dtype, list(b.shape)))
    return outs


def gemm():
    a, b = rnd(3, 4), rnd(4, 5)
    m = mapped(aten.mm.default, a, b)
    cs.check(m.op == "gemm", "mm: op %s" % m.op)
    cs.check(m.params == {"trans_a": 0, "trans_b": 0, "alpha": 1.0, "beta": 0.0, "out_dtype": "float32",
                          "a_strides": [4, 1], "b_strides": [5, 1]}, "mm: params %s" % m.params)
    cs.check(m.call["func"] == "aten.mm.default", "mm: call %s" % m.call["func"])
    cs.check(m.call["args"] == [{"input": 0, "transform": []}, {"input": 1, "transform": []}],
             "mm: call args %s" % m.call["args"])
    replayed(m)

    # A transposed weight (x @ w.t(), as nn.Linear has it) is recorded as it lies in memory.
    w = rnd(5, 4)
    m = mapped(aten.mm.default, a.t().contiguous().t(), w.t())
    cs.check(m.params["trans_a"] == 1 and m.params["trans_b"] == 1, "mm of transposes: %s" % m.params)
    cs.check(m.params["b_strides"] == [1, 4], "mm of transposes: b strides %s" % m.params["b_strides"])
    cs.check(list(m.inputs[1].shape) == [5, 4] and m.inputs[1].is_contiguous(), "mm: w recorded as stored")
    cs.check(m.call["args"][1] == {"input": 1, "transform": ["T"]}, "mm: w's view %s" % m.call["args"][1])
    replayed(m)

    c = rnd(5)
    m = mapped(aten.addmm.default, c, a, b, beta=0.5, alpha=2.0)
    cs.check(m.op == "gemm" and m.params["alpha"] == 2.0 and m.params["beta"] == 0.5, "addmm: %s" % m.params)
    cs.check(len(m.inputs) == 3 and m.inputs[2] is not None, "addmm: C is the third input")
    cs.check(m.call["kwargs"] == {"beta": {"value": 0.5}, "alpha": {"value": 2.0}}, "addmm: %s" % m.call["kwargs"])
    replayed(m)

    m = mapped(aten.bmm.default, rnd(2, 3, 4, dtype=torch.bfloat16), rnd(2, 4, 5, dtype=torch.bfloat16))
    cs.check(m.op == "gemm" and m.params["out_dtype"] == "bfloat16", "bmm bf16: %s" % m.params)
    replayed(m)

    for dtype in (torch.float64, torch.int64):
        x = torch.ones(2, 2, dtype=dtype)
        cs.check(map_op(aten.mm.default, [x, x], {}, aten.mm.default(x, x)) is None,
                 "mm of %s is mapped; the golden model has no such gemm" % dtype)
    print("ok: gemm (mm, transposed operands, addmm, bmm bf16, unjudged dtypes)")


def norms_and_softmax():
    x, w, b = rnd(2, 3, 8), rnd(8), rnd(8)
    m = mapped(aten.native_layer_norm.default, x, [8], w, b, 1e-5)
    cs.check(m.op == "layernorm" and m.params == {"eps": 1e-5}, "layer norm: %s %s" % (m.op, m.params))
    cs.check([list(t.shape) for t in m.inputs] == [[2, 3, 8], [8], [8]], "layer norm inputs %s"
             % [list(t.shape) for t in m.inputs])
    replayed(m)
    # Normalized over the last two dims: recorded with those flattened into one.
    m = mapped(aten.native_layer_norm.default, x, [3, 8], rnd(3, 8), rnd(3, 8), 1e-6)
    cs.check([list(t.shape) for t in m.inputs] == [[2, 24], [24], [24]], "layer norm over [3, 8]: inputs %s"
             % [list(t.shape) for t in m.inputs])
    cs.check([list(t.shape) for t in m.outputs] == [[2, 24]], "layer norm over [3, 8]: output flattened")
    replayed(m)

    m = mapped(aten.native_layer_norm.default, x, [8], None, None, 1e-5)
    cs.check(bool((m.inputs[1] == 1).all()) and bool((m.inputs[2] == 0).all()),
             "layer norm without affine: gamma 1, beta 0")
    cs.check(m.call["args"][2] == {"none": True}, "layer norm without affine: call passes None")
    replayed(m)

    m = mapped(aten._softmax.default, x, 2, False)
    cs.check(m.op == "softmax" and m.params == {}, "softmax: %s %s" % (m.op, m.params))
    replayed(m)
    m = mapped(aten._softmax.default, x, 1, False)
    cs.check(list(m.inputs[0].shape) == [2, 8, 3], "softmax over dim 1: recorded with it last, %s"
             % list(m.inputs[0].shape))
    cs.check(m.call["args"][0]["transform"] == [["movedim", 2, 1]], "softmax over dim 1: %s" % m.call["args"][0])
    replayed(m)
    # half_to_float (a CUDA kernel's fp16 -> fp32 softmax; the CPU has none): the output stands in.
    half = x.half()
    cs.check(map_op(aten._softmax.default, [half, 2, True], {}, torch.softmax(half.float(), 2)) is None,
             "softmax with half_to_float is mapped")
    print("ok: layer norm (affine and not), softmax (last dim, other dim, half_to_float refused)")


def pointwise():
    x, y = rnd(4, 3), rnd(4, 3)
    m = mapped(aten.add.Tensor, x, y, alpha=2)
    cs.check(m.op == "add" and m.params == {"alpha": 2.0}, "add alpha: %s %s" % (m.op, m.params))
    cs.check(m.call["kwargs"] == {"alpha": {"value": 2.0}}, "add alpha: call %s" % m.call["kwargs"])
    replayed(m)

    m = mapped(aten.mul.Tensor, x, 2.5)
    cs.check(m.op == "mul" and m.params == {"other": 2.5} and len(m.inputs) == 1, "mul by a number: %s" % m.params)
    replayed(m)

    m = mapped(aten.mul.Tensor, x, torch.tensor(3.0, dtype=torch.float64))
    cs.check(m.params == {"other": 3.0} and len(m.inputs) == 1, "mul by a 0-dim float64 tensor: %s" % m.params)

    m = mapped(aten.pow.Tensor_Scalar, x.abs(), 2)
    cs.check(m.op == "pow" and m.params == {"exponent": 2.0}, "pow: %s %s" % (m.op, m.params))
    replayed(m)

    m = mapped(aten.reciprocal.default, x)
    cs.check(m.op == "pow" and m.params == {"exponent": -1.0}, "reciprocal: %s %s" % (m.op, m.params))
    replayed(m)

    m = mapped(aten.gelu.default, x, approximate="tanh")
    cs.check(m.op == "gelu" and m.params == {"approximate": "tanh"}, "gelu tanh: %s" % m.params)
    replayed(m)
    m = mapped(aten.gelu.default, x)
    cs.check(m.params == {"approximate": "none"}, "gelu: %s" % m.params)

    t1, t2 = rnd(4, 3), rnd(4, 3)
    m = mapped(aten.addcmul.default, x, t1, t2, value=0.5)
    cs.check(m.op == "addcmul" and m.params == {"value": 0.5} and len(m.inputs) == 3, "addcmul: %s" % m.params)
    replayed(m)

    cs.check(map_op(aten.add.Tensor, [x, y.double()], {}, aten.add.Tensor(x, y.double())) is None,
             "add with a float64 result is mapped")
    cs.check(map_op(aten.div.Tensor_mode, [x, y], {"rounding_mode": "floor"},
                    aten.div.Tensor_mode(x, y, rounding_mode="floor")) is None, "floor division is mapped")
    print("ok: add (alpha), mul (number, 0-dim tensor), pow, reciprocal, gelu, addcmul; float64 and "
          "floor division refused")


def foreach():
    xs = [rnd(3), rnd(2, 2)]
    out = aten._foreach_mul.Scalar(xs, 0.25)
    ms = map_op(aten._foreach_mul.Scalar, [xs, 0.25], {}, out)
    cs.check(isinstance(ms, list) and len(ms) == 2, "_foreach_mul: %r" % (ms,))
    for i, m in enumerate(ms):
        cs.check(m.op == "mul" and m.params == {"other": 0.25}, "_foreach_mul %d: %s %s" % (i, m.op, m.params))
        cs.check(m.inputs[0] is xs[i] and m.outputs[0] is out[i], "_foreach_mul %d: tensors" % i)
        replayed(m)
    cs.check(KINDS.get(aten._foreach_mul.Scalar) == "mul", "KINDS: _foreach_mul is a mul")
    print("ok: _foreach_mul: one mul per list element, each re-run alone")


def table():
    cs.check(aten.mm.default in MAPPERS and aten.native_layer_norm.default in MAPPERS, "mm, layer norm in MAPPERS")
    cs.check(aten.sort.default not in MAPPERS, "sort in MAPPERS")
    x = rnd(5)
    cs.check(map_op(aten.sort.default, [x], {}, aten.sort.default(x)) is None, "sort is mapped")
    # A mapper that meets arguments it cannot read maps to nothing instead of raising.
    cs.check(map_op(aten.mm.default, [x], {}, x) is None, "mm with one argument is mapped")
    for name, ops in TRAINING_TRACE_OPS.items():
        cs.check(name.startswith("aten::") and ops and all(isinstance(o, str) for o in ops),
                 "TRAINING_TRACE_OPS %s: %s" % (name, ops))
    cs.check(aten_name(aten.add.Tensor) == "aten::add.Tensor", "aten_name %s" % aten_name(aten.add.Tensor))
    cs.check(aten_name(aten.mm.default) == "aten::mm", "aten_name %s" % aten_name(aten.mm.default))

    values, indices = aten.sort.default(x)
    spec = generic_call(aten.sort.default, [x, 0, True], {}, lambda t: 0)
    cs.check(spec == {"func": "aten.sort.default", "args": [{"input": 0, "transform": []}, {"value": 0},
                                                            {"value": True}],
                      "kwargs": {}, "outputs": [{"result": "all", "transform": []}]}, "generic_call: %s" % spec)
    cs.check(generic_call(aten.sort.default, [x, object()], {}, lambda t: 0) is None,
             "generic_call of an argument it cannot write down")
    spec = generic_call(aten._to_copy.default, [x], {"dtype": torch.bfloat16}, lambda t: 0)
    cs.check(spec["kwargs"] == {"dtype": {"dtype": "bfloat16"}}, "generic_call dtype: %s" % spec["kwargs"])
    print("ok: the table, unmapped calls, aten names, generic rerun specs")


if __name__ == "__main__":
    gemm()
    norms_and_softmax()
    pointwise()
    foreach()
    table()
    print("mapping: torch %s: all checks passed" % torch.__version__)
