#pragma once
// Bitwise judgement against the golden model. Targets whose outputs are defined to be
// bit-identical to the golden model (the cpu target, sim targets, the golden CUDA kernels) are
// judged by bits, not by the op's rounding-error bound: on such a target any differing element
// is a defect, however small. Equality follows the golden contract (core/golden/GoldenOrder.h):
// identical bits, or a NaN on both sides (NaN payload and sign are not part of the contract).
#include <cstdint>

#include "../HostTensor.h"

namespace faultline {

// Elements of `candidate` that differ from `golden` under the golden contract. Both tensors
// must have the same dtype and element count (callers check; a mismatch counts every element).
uint64_t goldenDifferingElements(const HostTensor& candidate, const HostTensor& golden);

// Whether `bits` of a floating-point dtype is a NaN (float8_e4m3fn: only S.1111.111), and
// whether it is finite (true for integer dtypes).
bool isNanBits(DType t, uint64_t bits);
bool isFiniteBits(DType t, uint64_t bits);

}  // namespace faultline
