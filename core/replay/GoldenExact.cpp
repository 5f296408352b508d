#include "GoldenExact.h"

#include <cstring>

namespace faultline {

bool isNanBits(DType t, uint64_t bits)
{
    if (!isFloatingPoint(t)) return false;
    const BitLayout l = bitLayout(t);
    const uint64_t mag = (uint64_t(1) << (l.exponentBits + l.mantissaBits)) - 1;
    const uint64_t exp = ((uint64_t(1) << l.exponentBits) - 1) << l.mantissaBits;
    if (t == DType::Float8E4M3FN) return (bits & mag) == mag;
    return (bits & mag) > exp;
}

uint64_t goldenDifferingElements(const HostTensor& candidate, const HostTensor& golden)
{
    const uint64_t n = golden.elementCount();
    if (candidate.dtype != golden.dtype || candidate.elementCount() != n) return n;
    const unsigned size = dtypeSize(golden.dtype);
    if (std::memcmp(candidate.data.data(), golden.data.data(), n * size) == 0) return 0;
    uint64_t differing = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t a = elementBits(candidate, i), b = elementBits(golden, i);
        if (a != b && !(isNanBits(golden.dtype, a) && isNanBits(golden.dtype, b))) ++differing;
    }
    return differing;
}

}  // namespace faultline
