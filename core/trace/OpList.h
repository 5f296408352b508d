// THE list of trace v1 ops (docs/formats.md): one row per op, read by every part that needs the
// op vocabulary. Adding an op is one row here; the rest follows from it or fails to build:
//   - core/trace/TraceOps: the op's name, kind (OpKind) and known parameters;
//   - core/golden/OpDefinitions.h and OpRegistry.cpp: the golden glue infer<Glue>, run<Glue> and
//     bound<Glue> are declared from this row and registered; one not written fails to link;
//   - core/golden/RecordedNumerics.cpp: how recorded settings widen the bound, by `numerics`;
//   - kernels/CudaTarget.cpp: a switch over OpKind with no default, so a new kind fails to compile
//     until the CUDA target says what it does with it (a kernel, or "not on cuda");
//   - the capture package's aten mapping (python/faultline_capture/mapping.py): CTest's
//     test_capture_op_table fails when it produces an op missing here (`faultline ops --json`);
//   - docs/formats.md's op table: test_op_table_docs fails when a row is missing there.
//
// FL_TRACE_OP(name, Glue, numerics, collective, "signature", "param", ...)
//   name        the op's name in traces (an identifier)
//   Glue        the OpKind enumerator and the golden glue's name part (inferGemm, runGemm, boundGemm)
//   numerics    OpNumerics: how the op computes, which decides what recorded settings do
//   collective  whether its inputs are one tensor per rank (all_reduce, all_gather, ...)
//   params      the parameters the op reads (other attributes of a known op are warnings)
//
// No include guard: included several times with different definitions of FL_TRACE_OP.
FL_TRACE_OP(gemm, Gemm, MatrixProduct, false, "gemm(A, B[, C])", "trans_a", "trans_b", "alpha", "beta",
            "out_dtype")
FL_TRACE_OP(layernorm, LayerNorm, Intermediates, false, "layernorm(x, gamma, beta)", "eps")
FL_TRACE_OP(rmsnorm, RmsNorm, Intermediates, false, "rmsnorm(x, gamma)", "eps")
FL_TRACE_OP(softmax, Softmax, Intermediates, false, "softmax(x)", "scale")
FL_TRACE_OP(gelu, Gelu, Intermediates, false, "gelu(x)", "approximate")
FL_TRACE_OP(silu, Silu, Intermediates, false, "silu(x)")
FL_TRACE_OP(add, Add, Pointwise, false, "add(x, y) | add(x; other)", "other", "alpha")
FL_TRACE_OP(mul, Mul, Pointwise, false, "mul(x, y) | mul(x; other)", "other")
FL_TRACE_OP(attention, Attention, Attention, false, "attention(q, k, v)", "causal", "scale")
FL_TRACE_OP(all_reduce, AllReduce, Reduction, true, "all_reduce(x_rank0, x_rank1, ...)", "reduce_op", "ranks")
FL_TRACE_OP(all_gather, AllGather, DataMovement, true, "all_gather(x_rank0, x_rank1, ...)", "ranks")
FL_TRACE_OP(reduce_scatter, ReduceScatter, Reduction, true, "reduce_scatter(x_rank0, x_rank1, ...)",
            "reduce_op", "ranks")
FL_TRACE_OP(broadcast, Broadcast, DataMovement, true, "broadcast(x_rank0, x_rank1, ...)", "root", "ranks")
// Loss, embedding and backward ops of a training step (#22: golden-rowops). Indices and targets are
// int64/int32 inputs.
FL_TRACE_OP(embedding, Embedding, DataMovement, false, "embedding(weight, indices)")
FL_TRACE_OP(embedding_backward, EmbeddingBackward, NarrowSums, false, "embedding_backward(grad, indices)",
            "num_weights", "padding_idx", "scale_grad_by_freq", "cpu_order")
FL_TRACE_OP(log_softmax, LogSoftmax, Intermediates, false, "log_softmax(x)")
FL_TRACE_OP(log_softmax_backward, LogSoftmaxBackward, Intermediates, false, "log_softmax_backward(grad, y)")
FL_TRACE_OP(nll_loss, NllLoss, NarrowSums, false, "nll_loss(x, target[, weight])", "reduction",
            "ignore_index")
FL_TRACE_OP(nll_loss_total_weight, NllLossTotalWeight, NarrowSums, false,
            "nll_loss_total_weight(x, target[, weight])", "reduction", "ignore_index")
FL_TRACE_OP(nll_loss_backward, NllLossBackward, OneRounding, false,
            "nll_loss_backward(grad, x, target, total_weight[, weight])", "reduction", "ignore_index")
FL_TRACE_OP(softmax_backward, SoftmaxBackward, Intermediates, false, "softmax_backward(grad, p)")
FL_TRACE_OP(layernorm_backward_input, LayerNormBackwardInput, Intermediates, false,
            "layernorm_backward_input(dy, x, mean, rstd, gamma, beta)")
FL_TRACE_OP(layernorm_backward_weight, LayerNormBackwardWeight, NarrowSums, false,
            "layernorm_backward_weight(dy, x, mean, rstd, gamma, beta)", "cpu_order")
FL_TRACE_OP(layernorm_backward_bias, LayerNormBackwardBias, NarrowSums, false,
            "layernorm_backward_bias(dy, x, mean, rstd, gamma, beta)", "cpu_order")
FL_TRACE_OP(gelu_backward, GeluBackward, Intermediates, false, "gelu_backward(grad, x)", "approximate")
FL_TRACE_OP(silu_backward, SiluBackward, Intermediates, false, "silu_backward(grad, x)")
// The fused attention backward (PyTorch 2.x's CPU flash kernel; CUDA flash/efficient): one op per
// gradient, each reading grad_out, q, k, v; float sums, narrow p and ds (AttentionBackwardGolden.h).
FL_TRACE_OP(attention_backward_q, AttentionBackwardQ, FloatSteps, false,
            "attention_backward_q(g, q, k, v, out, lse)", "causal", "scale")
FL_TRACE_OP(attention_backward_k, AttentionBackwardK, FloatSteps, false,
            "attention_backward_k(g, q, k, v, out, lse)", "causal", "scale")
FL_TRACE_OP(attention_backward_v, AttentionBackwardV, FloatSteps, false,
            "attention_backward_v(g, q, k, v, out, lse)", "causal", "scale")
// The element-wise part of a training step (#22): arithmetic with tensors and scalars, the
// optimizer updates' formulas, dropout with its recorded mask, selections, sums over dims.
FL_TRACE_OP(sub, Sub, Pointwise, false, "sub(x, y) | sub(x; other)", "other", "alpha")
FL_TRACE_OP(div, Div, Pointwise, false, "div(x, y) | div(x; other)", "other")
FL_TRACE_OP(neg, Neg, OneRounding, false, "neg(x)")
FL_TRACE_OP(sqrt, Sqrt, OneRounding, false, "sqrt(x)")
FL_TRACE_OP(rsqrt, Rsqrt, Pointwise, false, "rsqrt(x)")
FL_TRACE_OP(exp, Exp, Pointwise, false, "exp(x)")
FL_TRACE_OP(pow, Pow, Pointwise, false, "pow(x, y) | pow(x; exponent)", "exponent")
FL_TRACE_OP(addcmul, Addcmul, Pointwise, false, "addcmul(self, t1, t2)", "value")
FL_TRACE_OP(addcdiv, Addcdiv, Pointwise, false, "addcdiv(self, t1, t2)", "value")
FL_TRACE_OP(lerp, Lerp, Pointwise, false, "lerp(self, end[, weight])", "weight")
FL_TRACE_OP(dropout, Dropout, Pointwise, false, "dropout(x, mask)", "scale")
FL_TRACE_OP(masked_fill, MaskedFill, DataMovement, false, "masked_fill(x, mask)", "value")
FL_TRACE_OP(where, Where, DataMovement, false, "where(condition, x, y)")
FL_TRACE_OP(triu, Triu, DataMovement, false, "triu(x)", "diagonal")
FL_TRACE_OP(tril, Tril, DataMovement, false, "tril(x)", "diagonal")
FL_TRACE_OP(cat, Cat, DataMovement, false, "cat(x0, x1, ...)", "dim")
FL_TRACE_OP(sum, Sum, Summation, false, "sum(x)", "dims", "keepdim", "out_dtype")
FL_TRACE_OP(mean, Mean, Summation, false, "mean(x)", "dims", "keepdim", "out_dtype")
// Ops that pass elements through or route gradients (#22): relu, its backward, select's backward.
FL_TRACE_OP(relu, Relu, DataMovement, false, "relu(x)")
FL_TRACE_OP(threshold_backward, ThresholdBackward, DataMovement, false, "threshold_backward(grad, x)",
            "threshold")
FL_TRACE_OP(select_backward, SelectBackward, DataMovement, false, "select_backward(grad)", "input_sizes",
            "dim", "index")
// The fused Adam/AdamW step (PyTorch's _fused_adam_/_fused_adamw_), one op per result of each
// parameter, each from the recorded state before the step (#22).
FL_TRACE_OP(adam_exp_avg, AdamExpAvg, FloatSteps, false, "adam_exp_avg(param, grad, exp_avg, exp_avg_sq)",
            "lr", "beta1", "beta2", "weight_decay", "eps", "step", "maximize", "decoupled")
FL_TRACE_OP(adam_exp_avg_sq, AdamExpAvgSq, FloatSteps, false,
            "adam_exp_avg_sq(param, grad, exp_avg, exp_avg_sq)", "lr", "beta1", "beta2", "weight_decay",
            "eps", "step", "maximize", "decoupled")
FL_TRACE_OP(adam_param, AdamParam, FloatSteps, false, "adam_param(param, grad, exp_avg, exp_avg_sq)", "lr",
            "beta1", "beta2", "weight_decay", "eps", "step", "maximize", "decoupled")
