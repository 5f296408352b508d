#include "FormulaGlue.h"

namespace faultline::golden::ops {

Result<HostTensor> runFormula(std::string_view op, GoldenInputs in, const Result<Formula>& f)
{
    if (!f) return f.error();
    if (f->operands > kMaxFormulaOperands) return opError(op, "a formula of more than 4 operands");
    std::vector<BroadcastOperand> operands;
    for (size_t i = 0; i < f->operands; ++i) operands.emplace_back(in[i], f->out.shape);
    const size_t count = size_t(elementCountOf(f->out.shape));
    std::vector<float> out(count);
    const FormulaRoundoff r{BoundOptions{}};
    float v[kMaxFormulaOperands] = {};
    for (size_t e = 0; e < count; ++e) {
        for (size_t k = 0; k < operands.size(); ++k) v[k] = operands[k][e];
        out[e] = f->element(v, r).value;
    }
    return fromFloatVector(f->out.dtype, f->out.shape, out);
}

Result<std::vector<double>> boundFormula(std::string_view op, GoldenInputs in, const Result<Formula>& f,
                                         const HostTensor& golden, const BoundOptions& o)
{
    if (!f) return f.error();
    if (Status s = checkGolden(op, f->out, golden); !s) return s.error();
    if (f->operands > kMaxFormulaOperands) return opError(op, "a formula of more than 4 operands");
    std::vector<BroadcastOperand> operands;
    for (size_t i = 0; i < f->operands; ++i) operands.emplace_back(in[i], f->out.shape);
    const std::vector<double> g = toDoubleVector(golden);
    std::vector<double> bound(g.size());
    const FormulaRoundoff r(o);
    float v[kMaxFormulaOperands] = {};
    for (size_t e = 0; e < g.size(); ++e) {
        for (size_t k = 0; k < operands.size(); ++k) v[k] = operands[k][e];
        bound[e] = formulaBound(f->element(v, r).pre, g[e], f->out.dtype);
    }
    return bound;
}

Result<OutputSpec> elementwiseOutput(std::string_view op, GoldenInputs in, size_t count)
{
    std::vector<size_t> idx(count);
    for (size_t i = 0; i < count; ++i) idx[i] = i;
    if (Status s = checkSameFloatInputs(op, in, idx); !s) return s.error();
    Result<std::vector<uint64_t>> shape = broadcastInputs(op, in, idx);
    if (!shape) return shape.error();
    return OutputSpec{in[0].dtype, std::move(shape).value()};
}

}  // namespace faultline::golden::ops
