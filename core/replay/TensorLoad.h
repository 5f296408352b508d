#pragma once
// Reading whole tensors into memory for replay (op inputs and recorded outputs), bounded.
#include <cstdint>
#include <string>
#include <vector>

#include "../HostTensor.h"
#include "../Result.h"
#include "../TensorFile.h"
#include "../trace/Trace.h"

namespace faultline {

// Replay holds op inputs and outputs in memory; a tensor above this is refused with an error.
inline constexpr uint64_t kMaxReplayTensorBytes = uint64_t(8) << 30;

// Reads the tensor called `name` whole. Errors name the file and the tensor.
Result<HostTensor> loadTensor(const TensorFile& file, const std::string& name);
// The op's inputs ("tensors/<id>"), in order.
Result<std::vector<HostTensor>> loadOpInputs(const Trace& trace, const TraceOp& op);

// Hex digest (XXH3 128-bit) of the outputs' dtypes, shapes and bytes: equal digests mean
// bitwise-identical outputs.
std::string outputDigest(const std::vector<HostTensor>& outputs);

}  // namespace faultline
