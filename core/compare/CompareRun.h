#pragma once
// Compares two tensor files: pairs their tensors (Pairing.h), compares every pair with all cores
// (TensorComparer.h), and ranks the results by severity; then the datasets that are not tensors,
// value by value for equality (RecordCompare.h). Every dataset of both files ends up in the
// report: compared, unpaired, not comparable, not compared (with the reason), or an error. One
// dataset's problem is recorded in the report and the run goes on.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "../Result.h"
#include "../TensorFile.h"
#include "Divergence.h"
#include "Pairing.h"
#include "RecordCompare.h"
#include "TensorComparer.h"
#include "Tolerance.h"

namespace faultline {

struct CompareRunOptions {
    CompareOptions compare;
    PairingOptions pairing;
};

// Per-element bounds for the `bound` tolerance: like BoundProvider, for the pair called `key`.
// Called from worker threads, concurrently: thread-safe.
using BoundSource =
    std::function<Status(const std::string& key, uint64_t first, uint64_t count, double* bounds)>;

// A pair of datasets that neither side can read value by value (an HDF5 time type, links that
// lead nowhere in both files): named, with why.
struct NotCompared {
    std::string name;
    std::string reason;
    bool operator==(const NotCompared&) const = default;
};

struct CompareReport {
    std::string suspect;  // file paths as opened
    std::string reference;
    Tolerance tolerance;
    std::vector<Divergence> tensors;        // most severe first (moreSevere)
    std::vector<RecordDivergence> records;  // other datasets: differing first, then by name
    std::vector<UnpairedTensor> unpaired;   // tensors and other datasets in one file only
    // Pairs whose dtype, shape or element type differ (a tensor against a table, a dataset
    // against a dangling link): a difference between the files, never compared element-wise.
    std::vector<PairError> notComparable;
    std::vector<NotCompared> notCompared;
    std::vector<PairError> errors;  // pairs that could not be read, keys taken twice
};

// Whether the files differ: a tensor beyond tolerance, another dataset with a differing value, or
// a pair that is not comparable. (Unpaired and not compared datasets are listed, not counted.)
bool reportDiffers(const CompareReport& report);
// Whether anything at all was paired (compared or found not comparable or not compared).
bool reportPairedAnything(const CompareReport& report);

// Severity ranking: NaN/Inf beyond tolerance first, then anything beyond tolerance, then larger
// max ulp, then more beyond-tolerance elements, then name.
bool moreSevere(const Divergence& a, const Divergence& b);

class CompareRun {
public:
    explicit CompareRun(CompareRunOptions options = {}) : m_options(std::move(options)) {}

    // Progress over the whole run (weighted by elements), on the calling thread; false cancels.
    void setProgress(ProgressCallback progress) { m_progress = std::move(progress); }
    // Checked between chunks; when set, run() returns kCompareCancelled.
    void setCancelFlag(const std::atomic<bool>* cancel) { m_cancel = cancel; }
    void setBoundSource(BoundSource bounds) { m_bounds = std::move(bounds); }
    // Called on the calling thread with each compared tensor as soon as it is done (index: its
    // position in pairing order), before it joins the report; it may take what it needs and
    // release the rest (e.g. store the tile pyramid and free it), so that a run over many large
    // tensors holds one tensor's tiles at a time. An error stops the run with that error.
    using TensorSink = std::function<Status(size_t index, Divergence& divergence)>;
    void setTensorSink(TensorSink sink) { m_sink = std::move(sink); }

    // Errors: cancellation (kCompareCancelled), or the `bound` tolerance without a BoundSource.
    // Everything about single tensors goes into the report.
    Result<CompareReport> run(const TensorFile& suspect, const TensorFile& reference) const;

private:
    CompareRunOptions m_options;
    ProgressCallback m_progress;
    const std::atomic<bool>* m_cancel = nullptr;
    BoundSource m_bounds;
    TensorSink m_sink;
};

// Convenience for CompareRun with these settings.
Result<CompareReport> compareFiles(const TensorFile& suspect, const TensorFile& reference,
                                   const CompareRunOptions& options = {}, ProgressCallback progress = {},
                                   const std::atomic<bool>* cancel = nullptr);

}  // namespace faultline
