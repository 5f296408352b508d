#pragma once
// Helpers shared by the golden ops' glue (OpRegistry) and ErrorBounds: dtype support, float
// conversion of HostTensors, shape text, op parameter parsing, ulps.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../DType.h"
#include "../HostTensor.h"
#include "../Result.h"
#include "../trace/Trace.h"

namespace faultline::golden {

using OpParams = std::map<std::string, AttrValue>;

// float32, bfloat16, float16, float8_e4m3fn, float8_e5m2: the dtypes whose values float holds
// exactly, which the golden ops read and write.
bool isGoldenDType(DType t);
std::string goldenDTypeList();

// "op NAME: MESSAGE", a Format error: the trace gave the op inputs or parameters it cannot take.
Error opError(std::string_view op, const std::string& message);

// "[2, 3, 4]".
std::string shapeString(std::span<const uint64_t> shape);

// Element values widened to float (exact for golden dtypes).
std::vector<float> toFloatVector(const HostTensor& t);
// A tensor of `dtype` and `shape` whose elements are `values` rounded once (RNE).
HostTensor fromFloatVector(DType dtype, std::vector<uint64_t> shape, std::span<const float> values);
// Element values as double (exact for golden dtypes).
std::vector<double> toDoubleVector(const HostTensor& t);

// Checks that the tensor's byte count matches its dtype and shape, and that its dtype is one the
// golden ops read. `what` names it in messages ("inputs[1]").
Status checkGoldenInput(std::string_view op, const HostTensor& t, std::string_view what);
// An input whose bytes an op moves without arithmetic (triu, tril): any dtype, bytes matching
// its shape.
Status checkMovedInput(std::string_view op, const HostTensor& t, std::string_view what);

// Parameter readers: a missing parameter gives `fallback` (or an error when there is none);
// a parameter of the wrong kind is an error naming the op and the parameter.
// Booleans accept integers 0/1, doubles 0.0/1.0 and strings true/false/0/1.
// gemm's boolean parameter `name`, false when absent or not a boolean.
bool gemmFlag(const OpParams& p, const char* name);

Result<bool> paramBool(std::string_view op, const OpParams& p, const std::string& name,
                       std::optional<bool> fallback);
// Doubles accept int64 and double (and one-element vectors of them).
Result<double> paramDouble(std::string_view op, const OpParams& p, const std::string& name,
                           std::optional<double> fallback);
Result<std::string> paramString(std::string_view op, const OpParams& p, const std::string& name,
                                std::optional<std::string> fallback);

// Unit roundoff (half an ulp of 1) of a floating dtype: 2^-24 for float32, 2^-8 for bfloat16.
double unitRoundoff(DType t);
// Spacing of `t`'s representable values at magnitude |x| (the subnormal spacing near 0; inf for
// an infinite or NaN x).
double ulpAt(DType t, double x);

// numpy broadcasting (right-aligned; a dimension of 1 stretches). nullopt when incompatible.
std::optional<std::vector<uint64_t>> broadcastShapes(std::span<const uint64_t> a,
                                                     std::span<const uint64_t> b);
// True when `src` broadcasts to exactly `dst`.
bool broadcastsTo(std::span<const uint64_t> src, std::span<const uint64_t> dst);
// For every element of `dst` (row-major), the index of the element of `src` it reads, where
// `src` broadcasts to `dst`. `innerBlock` > 1 treats each index as a block of that many elements
// (used for batch offsets: src/dst are then the batch dims only and the result is scaled by it).
std::vector<int64_t> broadcastIndex(std::span<const uint64_t> src, std::span<const uint64_t> dst,
                                    int64_t innerBlock = 1);

// Product of the dimensions (the caller has bounded them).
uint64_t elementCountOf(std::span<const uint64_t> shape);

// n u / (1 - n u), or +inf when n u >= 1.
double gammaN(double n, double u);

}  // namespace faultline::golden
