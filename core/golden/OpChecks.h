#pragma once
// Validation helpers of the golden ops' glue (internal to core/golden): every message reads
// "op NAME: inputs[i] ...".
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../HostTensor.h"
#include "../Result.h"
#include "GoldenSupport.h"

namespace faultline::golden {

inline constexpr uint64_t kMaxGoldenElements = uint64_t(1) << 31;  // largest output allocated

struct OutputSpec {
    DType dtype = DType::Float32;
    std::vector<uint64_t> shape;
};

using GoldenInputs = std::span<const HostTensor>;

std::string inputName(size_t i);  // "inputs[i]"
// The input count is in [lo, hi]; `what` describes the inputs ("2 or 3 inputs (A, B[, C])").
Status checkCount(std::string_view op, GoldenInputs in, size_t lo, size_t hi, std::string_view what);
// Every input has a golden dtype and bytes matching its shape.
Status checkInputs(std::string_view op, GoldenInputs in);
// The output has at most kMaxGoldenElements elements.
Status checkOutputSize(std::string_view op, std::span<const uint64_t> shape);
// A double parameter rounded to float (RNE).
Result<float> paramFloat(std::string_view op, const OpParams& p, const std::string& name,
                         std::optional<double> fallback);
// eps: finite and >= 0.
Result<float> paramEps(std::string_view op, const OpParams& p, std::optional<double> fallback);

// rows x n view of a tensor taken over its last axis.
struct RowView {
    int64_t rows = 0, n = 0;
};
Result<RowView> lastAxisRows(std::string_view op, const HostTensor& x, std::string_view what);
// inputs[i] has shape [n].
Status checkVector(std::string_view op, GoldenInputs in, size_t i, std::string_view role, uint64_t n);
// Integer inputs (embedding indices, nll_loss targets): int64 or int32, bytes matching the shape.
// The float inputs of an op that also reads integers are checked one by one (checkFloatInput).
bool isIndexDType(DType t);
Status checkIndexInput(std::string_view op, GoldenInputs in, size_t i, std::string_view role);
Status checkFloatInput(std::string_view op, GoldenInputs in, size_t i);
// The values of an index input (checked by checkIndexInput), widened to int64.
std::vector<int64_t> indexVector(const HostTensor& t);
// An integer parameter (int64, or a double holding an integer).
Result<int64_t> paramInt(std::string_view op, const OpParams& p, const std::string& name,
                         std::optional<int64_t> fallback);
// A golden output handed to a bound function matches what the op produces.
Status checkGolden(std::string_view op, const OutputSpec& spec, const HostTensor& golden);

}  // namespace faultline::golden
