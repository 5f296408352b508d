#include "ActivationGolden.h"

#include "GoldenMath.h"

namespace faultline::golden {

void activationGolden(Activation kind, const float* x, float* y, int64_t count)
{
    switch (kind) {
        case Activation::GeluErf:
            for (int64_t i = 0; i < count; ++i) y[i] = geluErfGolden(x[i]);
            break;
        case Activation::GeluTanh:
            for (int64_t i = 0; i < count; ++i) y[i] = geluTanhGolden(x[i]);
            break;
        case Activation::Silu:
            for (int64_t i = 0; i < count; ++i) y[i] = siluGolden(x[i]);
            break;
    }
}

}  // namespace faultline::golden
