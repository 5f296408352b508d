#pragma once
// Golden activations, float in and out: gelu (approximate none | tanh), silu. The formulas are
// GoldenMath.h's geluErfGolden, geluTanhGolden, siluGolden (add, mul: PointwiseOps.cpp).
#include <cstdint>

namespace faultline::golden {

enum class Activation {
    GeluErf,   // gelu, approximate = none
    GeluTanh,  // gelu, approximate = tanh
    Silu,
};

void activationGolden(Activation kind, const float* x, float* y, int64_t count);

}  // namespace faultline::golden
