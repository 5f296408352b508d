#include "Divergence.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

namespace faultline {

namespace {

// Bin boundaries: bin k (k >= 1) starts at 10^(kMinDecade + k), the double nearest the literal.
std::array<double, DecadeHistogram::kDecades> binStarts()
{
    std::array<double, DecadeHistogram::kDecades> p{};
    p[0] = 0.0;
    for (int k = 1; k < DecadeHistogram::kDecades; ++k) {
        const std::string text = "1e" + std::to_string(DecadeHistogram::kMinDecade + k);
        p[size_t(k)] = std::strtod(text.c_str(), nullptr);
    }
    return p;
}

DecadeHistogram::Table makeTable()
{
    const auto starts = binStarts();
    DecadeHistogram::Table t;
    const double inf = std::numeric_limits<double>::infinity();
    for (int e = 0; e < 2048; ++e) {
        // The binade [lo, hi) of biased exponent e (e == 0: zero and subnormals, all in bin 0).
        const double lo = e == 0 ? 0.0 : std::ldexp(1.0, e - 1023);
        const double hi = e == 0 ? std::ldexp(1.0, -1022) : std::ldexp(1.0, e - 1022);
        int k = 0;
        while (k + 1 < DecadeHistogram::kDecades && starts[size_t(k + 1)] <= lo) ++k;
        t.bin[size_t(e)] = int16_t(k);
        const bool splits = k + 1 < DecadeHistogram::kDecades && starts[size_t(k + 1)] < hi;
        t.nextFrom[size_t(e)] = splits ? starts[size_t(k + 1)] : inf;
    }
    return t;
}

}  // namespace

const DecadeHistogram::Table& DecadeHistogram::table()
{
    static const Table t = makeTable();
    return t;
}

void DecadeHistogram::add(double x)
{
    if (!(x >= 0)) return;  // NaN, negative: not a magnitude
    if (x == 0) {
        ++zero;
        return;
    }
    if (std::isinf(x)) {
        ++infinite;
        return;
    }
    addPositiveFinite(*this, x, table());
}

void DecadeHistogram::merge(const DecadeHistogram& o)
{
    zero += o.zero;
    infinite += o.infinite;
    for (size_t i = 0; i < decades.size(); ++i) decades[i] += o.decades[i];
}

uint64_t DecadeHistogram::total() const
{
    uint64_t n = zero + infinite;
    for (uint64_t v : decades) n += v;
    return n;
}

uint64_t nonFiniteIntroduced(const Divergence& d)
{
    return d.nanIntroduced + d.infIntroduced + d.infSignChanged;
}

std::string maxErrorText(const Divergence& d)
{
    const uint64_t introduced = nonFiniteIntroduced(d);
    const bool finiteDiffers = d.mismatches > d.nonFiniteMismatches;
    char buf[96];
    std::snprintf(buf, sizeof buf, "max |err| %.3g, max %llu ulp", d.absError.max,
                  static_cast<unsigned long long>(d.maxUlp));
    if (introduced == 0) return buf;
    const std::string nonFinite = std::to_string(introduced) + " NaN/Inf introduced";
    if (!finiteDiffers) return "no finite element differs; " + nonFinite;
    return std::string(buf) + " among finite pairs; " + nonFinite;
}

}  // namespace faultline
