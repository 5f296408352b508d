#include "HostRepeatCheck.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "../golden/GoldenSupport.h"

namespace faultline {

RepeatCheck compareRepetitions(const HostTensor& output, const HostTensor& kept, uint32_t keptRep)
{
    RepeatCheck c;
    c.againstRep = keptRep;
    c.tile = 0;
    c.worstTile = -1;
    const uint64_t n = kept.elementCount();
    if (output.dtype != kept.dtype || output.shape != kept.shape) {
        c.mismatched = std::max(n, output.elementCount());
        c.maxAbsError = std::numeric_limits<double>::infinity();
        return c;
    }
    if (std::memcmp(output.data.data(), kept.data.data(), output.data.size()) == 0) return c;
    std::vector<double> a, b;
    if (isFloatingPoint(kept.dtype)) {
        a = golden::toDoubleVector(output);
        b = golden::toDoubleVector(kept);
    }
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t x = elementBits(output, i) ^ elementBits(kept, i);
        if (!x) continue;
        ++c.mismatched;
        c.flippedBits += uint64_t(std::popcount(x));
        if (!a.empty()) {
            const double d = std::fabs(a[i] - b[i]);
            c.maxAbsError =
                std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(c.maxAbsError, d);
        }
    }
    return c;
}

std::optional<RepeatCheck> HostRepeatCheck::check(size_t opIndex, uint32_t rep, const HostTensor& output0)
{
    if (m_valid && m_opIndex == opIndex && m_rep != rep) return compareRepetitions(output0, m_kept, m_rep);
    m_kept = output0;
    m_opIndex = opIndex;
    m_rep = rep;
    m_valid = true;
    return std::nullopt;
}

}  // namespace faultline
