#pragma once
// Internal to the compare engine: the one streaming pass over a chunk of raw suspect/reference
// bits. Typed inner loops (one instantiation per dtype), no per-element virtual calls: blocks of
// 64 equal elements cost one vectorised XOR/OR reduction; only mismatching elements are decoded.
#include <span>

#include "../TensorFile.h"
#include "ChunkAccumulator.h"

namespace faultline {

// Scans elements [acc.first, acc.first + acc.count) (acc.begin() called): `suspect` and
// `reference` hold them as runs in element order (offsets from acc.first, covering the range; a
// contiguous side is one run) of packed little-endian elements of ctx.dtype, each aligned for
// its type; `bounds` holds acc.count absolute bounds when ctx.tolerance is `bound` (else unused,
// may be null). The results do not depend on where the runs break: elements are taken in order.
void scanChunk(const ScanContext& ctx, std::span<const ElementRun> suspect,
               std::span<const ElementRun> reference, const double* bounds, ChunkAccumulator& acc);

}  // namespace faultline
