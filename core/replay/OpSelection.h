#pragma once
// Which ops of a trace a campaign replays (`replay --ops SEL`).
#include <string>
#include <vector>

#include "../Result.h"
#include "../trace/Trace.h"

namespace faultline {

// The ops an op selection names, whatever they are: indices and ranges ("0,3-5") and op kinds
// ("gemm"); "" selects every op. Errors: a piece that names nothing, a malformed range.
Result<std::vector<size_t>> selectOpIndices(const Trace& trace, const std::string& selection);

// Resolves an op selection against the trace: indices and ranges ("0,3-5") and op kinds
// ("gemm"); "" selects every op. Ops the golden model cannot run are left out with a warning.
Result<std::vector<size_t>> selectOps(const Trace& trace, const std::string& selection,
                                      std::vector<std::string>& warnings);

}  // namespace faultline
