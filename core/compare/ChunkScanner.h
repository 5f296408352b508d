#pragma once
// Internal to the compare engine: the one streaming pass over a chunk of raw suspect/reference
// bits. Typed inner loops (one instantiation per dtype), no per-element virtual calls: blocks of
// 64 equal elements cost one vectorised XOR/OR reduction; only mismatching elements are decoded.
#include "ChunkAccumulator.h"

namespace faultline {

// Scans elements [acc.first, acc.first + acc.count) (acc.begin() called): `suspect` and
// `reference` hold acc.count packed little-endian elements of ctx.dtype; `bounds` holds acc.count
// absolute bounds when ctx.tolerance is `bound` (else unused, may be null).
void scanChunk(const ScanContext& ctx, const void* suspect, const void* reference, const double* bounds,
               ChunkAccumulator& acc);

}  // namespace faultline
