#pragma once
// The implementation a simulated device runs ops with: a sim target's `library` parameter.
//
//   golden (default)  the golden model: outputs bit-identical to the cpu target, judged by bits.
//   blas              a simulated production BLAS for gemm: deterministic and inside the golden
//                     model's error bound, but not the golden order, like cuBLAS on a real GPU.
//                     On about one in four nonzero finite output elements, chosen by a hash of
//                     the op index and the element index, the magnitude is one ulp smaller. The
//                     choice is the same on every run and every sim target, so sim targets with
//                     library=blas are peers: their gemm outputs are compared bitwise with each
//                     other and against the golden model within the bound. Other ops stay golden.
#include <cstdint>
#include <string>

#include "../HostTensor.h"
#include "../Result.h"
#include "TargetSpec.h"

namespace faultline {

enum class SimLibrary { Golden, Blas };

// Reads `library` from a sim target's parameters; errors name the target and the accepted values.
Result<SimLibrary> simLibraryOf(const TargetSpec& spec);

// Whether an op's output on this library is the golden model's, bit for bit.
bool simLibraryIsGoldenExact(SimLibrary library, const std::string& op);

// Turns the golden output of op `opIndex` into this library's output. Returns the elements changed.
uint64_t applySimLibrary(SimLibrary library, const std::string& op, uint64_t opIndex, HostTensor& out);

// The peer key of a sim target on this library ("" for golden: golden-exact targets need none).
std::string simLibraryPeerKey(SimLibrary library);

}  // namespace faultline
