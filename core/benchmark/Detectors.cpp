#include "Detectors.h"

#include <cmath>
#include <vector>

#include "../FloatFormats.h"
#include "../golden/ErrorBounds.h"
#include "../golden/OpRegistry.h"

namespace faultline {
namespace {

double valueAt(const HostTensor& t, uint64_t i)
{
    const uint64_t b = elementBits(t, i);
    switch (t.dtype) {
        case DType::BFloat16:
            return bf16ToFloat(uint16_t(b));
        case DType::Float16:
            return halfToFloat(uint16_t(b));
        default:
            return floatFromBits(uint32_t(b));
    }
}

// Faultline: anything beyond the comparison's tolerance.
class FaultlineCompare : public Detector {
public:
    std::string name() const override { return "faultline_compare"; }
    std::string describe() const override
    {
        return "Faultline compare against the healthy/golden output: any element beyond the tolerance "
               "(NaN/Inf by bits)";
    }
    bool flags(const DetectorInput& in) const override { return in.compare.beyondTolerance > 0; }
};

// gpu-burn's check as its compare kernel writes it: fabsf(a - b) > EPSILON with EPSILON = 0.001f,
// against another iteration of the same GEMM. Here the other iteration is the healthy output
// (the best case for it: a defect that struck one iteration only); a NaN compares false.
class GpuBurnCompare : public Detector {
public:
    std::string name() const override { return "gpu_burn"; }
    std::string describe() const override
    {
        return "gpu-burn self-compare: |a - b| > 1e-3 in float (its compare kernel; a NaN compares false "
               "and passes), against a clean iteration";
    }
    bool flags(const DetectorInput& in) const override
    {
        const uint64_t n = in.c.suspect.elementCount();
        for (uint64_t i = 0; i < n; ++i)
            if (std::fabs(float(valueAt(in.c.suspect, i)) - float(valueAt(in.c.healthy, i))) > 0.001f)
                return true;
        return false;
    }
};

// A fixed relative tolerance, the check most fleet scripts write: |a - b| > 1e-3 |b|, NaN/Inf fail.
class RelativeTolerance : public Detector {
public:
    std::string name() const override { return "rel_tolerance"; }
    std::string describe() const override
    {
        return "self-compare with a fixed relative tolerance: |a - b| > 1e-3 |b|; NaN/Inf fail";
    }
    bool flags(const DetectorInput& in) const override
    {
        const uint64_t n = in.c.suspect.elementCount();
        for (uint64_t i = 0; i < n; ++i) {
            const double a = valueAt(in.c.suspect, i), b = valueAt(in.c.healthy, i);
            if (!std::isfinite(a) || !(std::fabs(a - b) <= 1e-3 * std::fabs(b))) return true;
        }
        return false;
    }
};

// Algorithm-based fault tolerance (Huang & Abraham): the column sums of C = A·B must equal
// (1ᵀA)·B and the row sums A·(B1). The threshold is statistical, as practical ABFT sets it: the
// output's rounding errors (and 1-2 ulp of benign noise) are independent with a variance of at
// most kErrorVar ulp² per element, an ulp at most 2^-m |c|, and E[c²] = Σ_k a² b²; a sum is
// flagged beyond kSigmas standard deviations (or when it is not finite). Corruptions smaller
// than that hide in the sums, as they do in real ABFT.
class AbftChecksums : public Detector {
public:
    static constexpr double kErrorVar = 1.0;  // ulp²: final rounding 1/12 plus noise 0.3 x 2.5
    static constexpr double kSigmas = 10.0;

    std::string name() const override { return "abft"; }
    std::string describe() const override
    {
        return "ABFT row/column checksums of the GEMM (sums of C vs (1'A)B and A(B1)), flagged beyond 10 "
               "sigma of the output's rounding error";
    }
    bool flags(const DetectorInput& in) const override
    {
        const PatternCase& c = in.c;
        const uint64_t rows = c.spec.rows, cols = c.spec.cols, k = kInnerDim;
        const double ulp = std::ldexp(1.0, -int(bitLayout(c.spec.dtype).mantissaBits));
        const double var = kErrorVar * ulp * ulp;
        const float* A = c.inputs[0].as<float>();
        const float* B = c.inputs[1].as<float>();
        std::vector<double> colSum(size_t(cols), 0.0), rowSum(size_t(rows), 0.0);
        for (uint64_t r = 0; r < rows; ++r)
            for (uint64_t j = 0; j < cols; ++j) {
                const double v = valueAt(c.suspect, r * cols + j);
                colSum[size_t(j)] += v;
                rowSum[size_t(r)] += v;
            }
        auto beyond = [&](double sum, double expected, double squares) {
            return !(std::fabs(sum - expected) <= kSigmas * std::sqrt(var * squares) + 1e-30);
        };
        // Column checks: (1ᵀA), and Σ_i a² per inner index for the variance.
        std::vector<double> aSum(size_t(k), 0.0), aSq(size_t(k), 0.0);
        for (uint64_t r = 0; r < rows; ++r)
            for (uint64_t j = 0; j < k; ++j) {
                const double a = A[r * k + j];
                aSum[size_t(j)] += a;
                aSq[size_t(j)] += a * a;
            }
        for (uint64_t col = 0; col < cols; ++col) {
            double expected = 0.0, squares = 0.0;
            for (uint64_t j = 0; j < k; ++j) {
                const double b = B[j * cols + col];
                expected += aSum[size_t(j)] * b;
                squares += aSq[size_t(j)] * b * b;
            }
            if (beyond(colSum[size_t(col)], expected, squares)) return true;
        }
        // Row checks: (B1), and Σ_j b² per inner index.
        std::vector<double> bSum(size_t(k), 0.0), bSq(size_t(k), 0.0);
        for (uint64_t j = 0; j < k; ++j)
            for (uint64_t col = 0; col < cols; ++col) {
                const double b = B[j * cols + col];
                bSum[size_t(j)] += b;
                bSq[size_t(j)] += b * b;
            }
        for (uint64_t r = 0; r < rows; ++r) {
            double expected = 0.0, squares = 0.0;
            for (uint64_t j = 0; j < k; ++j) {
                const double a = A[r * k + j];
                expected += a * bSum[size_t(j)];
                squares += a * a * bSq[size_t(j)];
            }
            if (beyond(rowSum[size_t(r)], expected, squares)) return true;
        }
        return false;
    }
};

// What `faultline bisect` applies to each op: the recorded output against the golden model within
// the op's error bound (core/golden/ErrorBounds.h: rigorous for any correct GEMM with float
// accumulation; one output ulp for the final rounding). The healthy output is the golden one.
class BisectBound : public Detector {
public:
    std::string name() const override { return "faultline_bisect"; }
    std::string describe() const override
    {
        return "Faultline bisect's judgment of the op: the output against the golden model within the GEMM's "
               "error bound (any correct float-accumulating GEMM passes)";
    }
    bool flags(const DetectorInput& in) const override
    {
        const PatternCase& c = in.c;
        golden::BoundOptions options;
        options.threads = 1;
        auto bound = golden::goldenErrorBound(
            "gemm", c.inputs, {{"out_dtype", std::string(dtypeName(c.spec.dtype))}}, c.healthy, options);
        if (!bound) return true;  // cannot judge: an alarm, never a silent pass
        const uint64_t n = c.suspect.elementCount();
        std::vector<double> suspect(static_cast<size_t>(n)), healthy(static_cast<size_t>(n));
        for (uint64_t i = 0; i < n; ++i) {
            suspect[size_t(i)] = valueAt(c.suspect, i);
            healthy[size_t(i)] = valueAt(c.healthy, i);
        }
        return golden::checkWithinBound(suspect, healthy, *bound).violations > 0;
    }
};

// What a training loop watches: a NaN/Inf in the output, or a loss spike. The loss is modelled as
// the mean square of the output (an MSE-style loss on it); a spike is a rise of more than 25%
// over the healthy step's loss.
class NanLossMonitor : public Detector {
public:
    std::string name() const override { return "nan_loss_monitor"; }
    std::string describe() const override
    {
        return "training-loop monitor: NaN/Inf in the output, or a loss spike (mean square of the output "
               "> 1.25x the healthy step's)";
    }
    bool flags(const DetectorInput& in) const override
    {
        const uint64_t n = in.c.suspect.elementCount();
        double suspect = 0.0, healthy = 0.0;
        for (uint64_t i = 0; i < n; ++i) {
            const double a = valueAt(in.c.suspect, i), b = valueAt(in.c.healthy, i);
            if (!std::isfinite(a)) return true;
            suspect += a * a;
            healthy += b * b;
        }
        return suspect > 1.25 * healthy;
    }
};

}  // namespace

std::vector<std::unique_ptr<Detector>> standardDetectors()
{
    std::vector<std::unique_ptr<Detector>> out;
    out.push_back(std::make_unique<FaultlineCompare>());
    out.push_back(std::make_unique<BisectBound>());
    out.push_back(std::make_unique<GpuBurnCompare>());
    out.push_back(std::make_unique<RelativeTolerance>());
    out.push_back(std::make_unique<AbftChecksums>());
    out.push_back(std::make_unique<NanLossMonitor>());
    return out;
}

}  // namespace faultline
