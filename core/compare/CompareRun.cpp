#include "CompareRun.h"

#include <algorithm>

namespace faultline {

bool moreSevere(const Divergence& a, const Divergence& b)
{
    // NaN/Inf mismatches beyond tolerance are never rounding-sized: all of them are anomalies.
    const bool an = a.anomalyNonFinite > 0, bn = b.anomalyNonFinite > 0;
    if (an != bn) return an;
    const bool ab = a.beyondTolerance > 0, bb = b.beyondTolerance > 0;
    if (ab != bb) return ab;
    if (a.maxUlp != b.maxUlp) return a.maxUlp > b.maxUlp;
    if (a.beyondTolerance != b.beyondTolerance) return a.beyondTolerance > b.beyondTolerance;
    if (a.mismatches != b.mismatches) return a.mismatches > b.mismatches;
    return a.name < b.name;
}

Result<CompareReport> CompareRun::run(const TensorFile& suspect, const TensorFile& reference) const
{
    if (m_options.compare.tolerance.kind == ToleranceKind::Bound && !m_bounds)
        return Error{"tolerance 'bound' needs per-element bounds from the caller, and none were given"};

    CompareReport report;
    report.suspect = suspect.path();
    report.reference = reference.path();
    report.tolerance = m_options.compare.tolerance;
    Pairing pairing = pairTensors(suspect.tensors(), reference.tensors(), m_options.pairing);
    report.unpaired = std::move(pairing.unpaired);
    report.errors = std::move(pairing.errors);

    double totalElements = 0.0;
    for (const TensorPair& p : pairing.pairs)
        totalElements += double(suspect.tensors()[p.suspectIndex].elementCount());
    double doneElements = 0.0;

    const auto buffers = std::make_shared<ChunkBufferPool>();
    for (const TensorPair& p : pairing.pairs) {
        if (m_cancel != nullptr && m_cancel->load()) return cancelledError(kCompareCancelled);
        const double pairElements = double(suspect.tensors()[p.suspectIndex].elementCount());
        TensorComparer comparer(m_options.compare);
        comparer.setCancelFlag(m_cancel);
        comparer.setBufferPool(buffers);
        if (m_progress) {
            comparer.setProgress([&](double fraction, const std::string&) {
                const double overall =
                    totalElements > 0 ? (doneElements + fraction * pairElements) / totalElements : 1.0;
                return m_progress(std::min(1.0, overall), p.key);
            });
        }
        if (m_bounds) {
            const std::string key = p.key;
            const BoundSource& source = m_bounds;
            comparer.setBoundProvider([key, &source](uint64_t first, uint64_t count, double* bounds) {
                return source(key, first, count, bounds);
            });
        }
        Result<Divergence> d = comparer.compare(suspect, p.suspectIndex, reference, p.referenceIndex);
        if (!d) {
            if (d.code() == ErrorCode::Cancelled) return d.error();
            report.errors.push_back({p.key, d.message()});
        } else {
            d->name = p.key;
            if (m_sink) {
                Status st = m_sink(size_t(&p - pairing.pairs.data()), *d);
                if (!st) return st.error();
            }
            report.tensors.push_back(std::move(d).value());
        }
        doneElements += pairElements;
        if (m_progress && !m_progress(totalElements > 0 ? doneElements / totalElements : 1.0, p.key))
            return cancelledError(kCompareCancelled);
    }
    std::stable_sort(report.tensors.begin(), report.tensors.end(), moreSevere);
    return report;
}

Result<CompareReport> compareFiles(const TensorFile& suspect, const TensorFile& reference,
                                   const CompareRunOptions& options, ProgressCallback progress,
                                   const std::atomic<bool>* cancel)
{
    CompareRun run(options);
    run.setProgress(std::move(progress));
    run.setCancelFlag(cancel);
    return run.run(suspect, reference);
}

}  // namespace faultline
