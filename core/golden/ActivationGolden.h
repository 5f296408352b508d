#pragma once
// Golden elementwise ops, float in and out: gelu (approximate none | tanh), silu, add and mul. The
// formulas are GoldenMath.h's geluErfGolden, geluTanhGolden, siluGolden; add is x + y and mul
// x * y, each one correctly rounded float operation.
#include <cstdint>

namespace faultline::golden {

enum class Activation {
    GeluErf,   // gelu, approximate = none
    GeluTanh,  // gelu, approximate = tanh
    Silu,
};

void activationGolden(Activation kind, const float* x, float* y, int64_t count);
void addGolden(const float* x, const float* y, float* out, int64_t count);
void mulGolden(const float* x, const float* y, float* out, int64_t count);

}  // namespace faultline::golden
