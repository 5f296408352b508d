#include "CompareRun.h"

#include <algorithm>

namespace faultline {

namespace {

// Names in one file only, after a tensor and another dataset with the same key were taken out as
// not comparable (a tensor in one file, a table under its name in the other).
std::vector<UnpairedTensor> crossKindPairs(const TensorFile& suspect, const TensorFile& reference,
                                           const std::vector<UnpairedTensor>& tensors,
                                           const std::vector<UnpairedTensor>& records,
                                           const PairingOptions& options,
                                           std::vector<PairError>* notComparable)
{
    auto keyOf = [&options](const UnpairedTensor& u) {
        return pairingKey(u.name, u.side == "suspect" ? options.suspect : options.reference, nullptr);
    };
    auto tensorText = [](const TensorFile& f, const std::string& name) {
        const auto i = f.find(name);
        if (!i) return std::string("tensor");
        const TensorInfo& t = f.tensors()[*i];
        return std::string(dtypeName(t.dtype)) + " tensor " + shapeToString(t.shape);
    };
    auto recordText = [](const TensorFile& f, const std::string& name) {
        for (const RecordInfo& r : f.records())
            if (r.name == name) {
                if (!r.notComparable.empty() && r.fields.empty()) return r.type;  // a link that leads nowhere
                return r.type + " " + (r.nullSpace ? std::string("null dataspace") : shapeToString(r.shape));
            }
        return std::string("dataset");
    };
    std::vector<bool> recordTaken(records.size(), false);
    std::vector<UnpairedTensor> out;
    for (const UnpairedTensor& t : tensors) {
        bool taken = false;
        for (size_t i = 0; i < records.size() && !taken; ++i) {
            const UnpairedTensor& r = records[i];
            if (recordTaken[i] || r.side == t.side || keyOf(r) != keyOf(t)) continue;
            recordTaken[i] = taken = true;
            const bool tensorIsSuspect = t.side == "suspect";
            const std::string tensor = tensorText(tensorIsSuspect ? suspect : reference, t.name);
            const std::string record = recordText(tensorIsSuspect ? reference : suspect, r.name);
            notComparable->push_back({keyOf(t), tensorIsSuspect
                                                    ? tensor + " (suspect) vs " + record + " (reference)"
                                                    : record + " (suspect) vs " + tensor + " (reference)"});
        }
        if (!taken) out.push_back(t);
    }
    for (size_t i = 0; i < records.size(); ++i)
        if (!recordTaken[i]) out.push_back(records[i]);
    // Suspect names first, each side in file order (tensors, then the other datasets).
    std::stable_partition(out.begin(), out.end(),
                          [](const UnpairedTensor& u) { return u.side == "suspect"; });
    return out;
}

}  // namespace

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
        return Error{"tolerance 'bound' needs per-element bounds from the caller, and none were given",
                     ErrorCode::Usage};

    CompareReport report;
    report.suspect = suspect.path();
    report.reference = reference.path();
    report.tolerance = m_options.compare.tolerance;
    Pairing pairing = pairTensors(suspect.tensors(), reference.tensors(), m_options.pairing);
    report.notComparable = std::move(pairing.mismatched);
    report.errors = std::move(pairing.errors);
    Pairing records = pairRecords(suspect.records(), reference.records(), m_options.pairing);
    for (PairError& e : records.mismatched) report.notComparable.push_back(std::move(e));
    for (PairError& e : records.errors) report.errors.push_back(std::move(e));
    report.unpaired = crossKindPairs(suspect, reference, pairing.unpaired, records.unpaired,
                                     m_options.pairing, &report.notComparable);

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

    RecordCompareOptions recordOptions;
    recordOptions.cancel = m_cancel;
    for (const TensorPair& p : records.pairs) {
        const RecordInfo& s = suspect.records()[p.suspectIndex];
        const RecordInfo& r = reference.records()[p.referenceIndex];
        if (!s.notComparable.empty() || !r.notComparable.empty()) {
            if (s.notComparable.empty() || r.notComparable.empty())
                report.notComparable.push_back(
                    {p.key, s.type + " (suspect) vs " + r.type + " (reference): " +
                                (s.notComparable.empty() ? r.notComparable : s.notComparable)});
            else
                report.notCompared.push_back(
                    {p.key, s.notComparable == r.notComparable
                                ? s.notComparable
                                : s.notComparable + " (suspect); " + r.notComparable + " (reference)"});
            continue;
        }
        Result<RecordDivergence> d =
            compareRecords(suspect, p.suspectIndex, reference, p.referenceIndex, recordOptions);
        if (!d) {
            if (d.code() == ErrorCode::Cancelled) return d.error();
            report.errors.push_back({p.key, d.message()});
            continue;
        }
        d->name = p.key;
        report.records.push_back(std::move(d).value());
    }
    std::stable_sort(report.records.begin(), report.records.end(),
                     [](const RecordDivergence& a, const RecordDivergence& b) {
                         if ((a.mismatches > 0) != (b.mismatches > 0)) return a.mismatches > 0;
                         return a.name < b.name;
                     });
    return report;
}

bool reportDiffers(const CompareReport& report)
{
    if (!report.notComparable.empty()) return true;
    for (const Divergence& d : report.tensors)
        if (d.beyondTolerance > 0) return true;
    for (const RecordDivergence& d : report.records)
        if (d.mismatches > 0) return true;
    return false;
}

bool reportPairedAnything(const CompareReport& report)
{
    return !report.tensors.empty() || !report.records.empty() || !report.notComparable.empty() ||
           !report.notCompared.empty();
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
