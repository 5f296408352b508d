#pragma once
// Element-wise ops written as a formula over up to four broadcast float operands (PointwiseOps,
// AdamOps): the golden value of each element and both sides' error before the output rounding,
// from which the run (the value rounded to the output dtype) and the bound (formulaBound)
// follow. FL_FORMULA_GLUE defines an op's infer/run/bound glue from its plan.
#include <functional>
#include <string_view>
#include <vector>

#include "OpDefinitions.h"
#include "PointwiseSupport.h"

namespace faultline::golden::ops {

// One element: the golden value before the output rounding and both sides' error before it.
struct Elem {
    float value;
    double pre;
};

// An op as a formula over its broadcast tensor operands (the first `operands` inputs, at most
// kMaxFormulaOperands).
inline constexpr size_t kMaxFormulaOperands = 4;
struct Formula {
    OutputSpec out;
    size_t operands = 1;
    std::function<Elem(const float* v, const FormulaRoundoff& r)> element;
};

Result<HostTensor> runFormula(std::string_view op, GoldenInputs in, const Result<Formula>& f);
Result<std::vector<double>> boundFormula(std::string_view op, GoldenInputs in, const Result<Formula>& f,
                                         const HostTensor& golden, const BoundOptions& o);
// Inputs [0, count) are float tensors of one dtype that broadcast together: the output spec.
Result<OutputSpec> elementwiseOutput(std::string_view op, GoldenInputs in, size_t count);

}  // namespace faultline::golden::ops

#define FL_FORMULA_GLUE(Glue, name, plan)                                                                 \
    Result<OutputSpec> infer##Glue(GoldenInputs in, const OpParams& p)                                    \
    {                                                                                                     \
        (void)p;                                                                                          \
        Result<Formula> f = plan;                                                                         \
        if (!f) return f.error();                                                                         \
        return f->out;                                                                                    \
    }                                                                                                     \
    Result<HostTensor> run##Glue(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)             \
    {                                                                                                     \
        (void)p;                                                                                          \
        return runFormula(name, in, plan);                                                                \
    }                                                                                                     \
    Result<std::vector<double>> bound##Glue(GoldenInputs in, const OpParams& p, const HostTensor& golden, \
                                            const BoundOptions& o)                                        \
    {                                                                                                     \
        (void)p;                                                                                          \
        return boundFormula(name, in, plan, golden, o);                                                   \
    }
