#pragma once
// Bulk element conversions for the streaming compare engine and the golden model. Source and
// destination buffers hold `n` packed little-endian elements of the named dtype; they may be
// unaligned but must not overlap. Scalar float formats follow core/FloatFormats.h exactly.
//
// Rules:
// - To double: exact for every floating type and every integer up to 2^53 in magnitude; 64-bit
//   integers beyond that round to nearest even. Bool: any non-zero byte is 1.
// - To float: round to nearest even (float64, int32/uint32 above 2^24, int64/uint64).
// - To a floating dtype: round to nearest even once, per FloatFormats.h (overflow -> ±inf,
//   float8_e4m3fn overflow -> NaN).
// - To an integer dtype: round to nearest even, then saturate to the type's range; NaN -> 0,
//   ±inf saturate. Bool: x != 0 (so NaN -> true), stored as byte 0 or 1.
#include <cstddef>
#include <cstdint>

#include "DType.h"

namespace faultline {

void convertToDouble(DType t, const void* src, double* dst, size_t n);
void convertToFloat(DType t, const void* src, float* dst, size_t n);
void convertFromFloat(DType t, const float* src, void* dst, size_t n);
void convertFromDouble(DType t, const double* src, void* dst, size_t n);

// Raw bit pattern of element i of `src`, zero-extended (no sign extension), for XOR and
// per-bit histograms. 0 for an invalid dtype.
uint64_t loadBits(DType t, const void* src, size_t i);

}  // namespace faultline
