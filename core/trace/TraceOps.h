#pragma once
// The op vocabulary of trace v1 (docs/formats.md): which ops and which attributes per op this
// version understands. Anything else is reported as a warning when reading, never an error.
#include <string>
#include <string_view>
#include <vector>

namespace faultline {

// Attributes every op group may carry: op, inputs, name, phase.
const std::vector<std::string_view>& commonTraceOpAttributes();
// The op parameters this version knows for `op` (e.g. gemm: trans_a, trans_b, alpha, beta,
// out_dtype); empty for unknown ops.
const std::vector<std::string_view>& knownTraceOpParameters(const std::string& op);
// True when `attribute` is a common attribute or a known parameter of `op`.
bool isKnownTraceOpAttribute(const std::string& op, const std::string& attribute);

}  // namespace faultline
