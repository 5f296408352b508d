#pragma once
// Helpers of the element-wise golden ops (PointwiseOps.cpp, SelectOps.cpp, ReduceOps.cpp): numpy
// broadcasting of operands, mask inputs, integer parameters, and the bound of a formula from the
// error both sides make before the output rounding (PointwiseOps.cpp's model comment).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ErrorBounds.h"
#include "OpChecks.h"

namespace faultline::golden {

// An input widened to float and read at every element of the output (numpy broadcasting; the
// caller has checked that it broadcasts).
class BroadcastOperand {
public:
    BroadcastOperand() = default;
    BroadcastOperand(const HostTensor& t, std::span<const uint64_t> outShape);
    float operator[](size_t e) const { return m_index.empty() ? m_values[e] : m_values[size_t(m_index[e])]; }

private:
    std::vector<float> m_values;
    std::vector<int64_t> m_index;  // empty: the input has the output's shape
};

// The unit roundoffs a formula's bound is made of, from what the recorded settings allow.
struct FormulaRoundoff {
    double u = 0x1p-24;         // a float step (the golden model's and any float implementation's)
    double ui = 0x1p-24;        // a step of the implementation judged: u, or the narrow type's when
                                // its kernels may round intermediates to it (RecordedNumerics.h)
    double us = 0.0;            // a scalar (alpha, value, other, weight, exponent) rounded to the
                                // narrow type before use (PyTorch's CPU kernels do): 0 when not allowed
    double eta = 0x1p-150;      // absolute error of a float rounding in the subnormal range
    double etai = 0x1p-150;     // of an implementation's step
    bool faithfulSqrt = false;  // the implementation's sqrt may be one ulp off (BoundOptions)
    explicit FormulaRoundoff(const BoundOptions& options);
};

// The bound of one element whose golden value (after the output rounding) is `golden` and whose
// two sides (golden and implementation) together err by at most `pre` before their output
// roundings: 0 where pre is 0 (both round the same value once: the op is exact there);
// otherwise kBoundSafety pre + the float rounding of a narrow output's value (2u|golden|) + one
// ulp of the output dtype (both output roundings). +inf where the golden value is not finite
// (checkWithinBound and the comparer then require the same class).
double formulaBound(double pre, double golden, DType out);

// Masks and conditions: bool or uint8 (any non-zero byte is true), or a float dtype the golden
// model reads (0 / non-zero).
bool isMaskDType(DType t);
Status checkMaskInput(std::string_view op, GoldenInputs in, size_t i, std::string_view role);

// The float inputs `indices` of `in` are golden dtypes of one dtype (that of the first).
Status checkSameFloatInputs(std::string_view op, GoldenInputs in, std::span<const size_t> indices);

// Every input broadcasts together; their broadcast shape (an error naming the first that does not).
Result<std::vector<uint64_t>> broadcastInputs(std::string_view op, GoldenInputs in,
                                              std::span<const size_t> indices);

// A list of integers (an int64 vector, or a single integer: OpChecks.h's paramInt); nullopt when
// the parameter is absent.
Result<std::optional<std::vector<int64_t>>> paramInts(std::string_view op, const OpParams& p,
                                                      const std::string& name);
// The bound of an op without arithmetic (its output is its inputs' bytes): 0 for every element
// of `golden`, after checking it matches `out` (status says why not; the bound is then empty).
std::vector<double> zeroBound(std::string_view op, const OutputSpec& out, const HostTensor& golden,
                              Status& status);

// A dimension index in [-rank, rank) made non-negative (rank 0 accepts -1 and 0, as PyTorch).
Result<size_t> wrapDim(std::string_view op, const std::string& what, int64_t dim, size_t rank);

}  // namespace faultline::golden
