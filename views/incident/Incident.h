#pragma once
// What the workbench has open: a trace bisected against the golden model, a suspect/reference
// pair of snapshots compared, or both, or a lone file listed without comparison. Built on a
// worker thread by IncidentLoader, then shared read-only (std::shared_ptr<const Incident>) by
// every view. Entries are the rows the views show: one per bisected op or compared tensor.
#include <QString>
#include <QStringList>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/TensorFile.h"
#include "core/compare/CompareRun.h"
#include "core/incident/OpenIncident.h"
#include "core/replay/Bisect.h"
#include "core/replay/TileSmMap.h"
#include "core/trace/Trace.h"

namespace faultline::views {

enum class EntrySource { TraceOp, Tensor };

// What the comparison says of a tensor entry (trace ops carry BisectVerdict instead).
enum class TensorVerdict {
    Identical,      // every element bit for bit
    Within,         // differences, all within tolerance
    Beyond,         // differences beyond tolerance
    Differs,        // a dataset that is not a tensor, compared for equality, differs
    Error,          // the pair could not be read
    NotComparable,  // dtypes or shapes do not pair
    NotCompared,    // left out (filters, kinds)
    Unpaired,       // only in one of the two files
    Listed,         // a lone file: nothing to compare with
};

// The word shown for a tensor verdict ("identical", "not comparable", ...).
QString tensorVerdictText(TensorVerdict v);

struct IncidentEntry {
    int id = 0;  // index into Incident::entries
    EntrySource source = EntrySource::Tensor;
    QString name;        // module path (ops) or pairing key / tensor name (tensors)
    QString opKind;      // ops: gemm, softmax, ...
    size_t opIndex = 0;  // ops: trace order
    // The verdict as shown: ops nameOf(opVerdict), tensors tensorVerdictText(tensorVerdict).
    QString verdict;
    std::optional<BisectVerdict> opVerdict;      // ops
    std::optional<TensorVerdict> tensorVerdict;  // tensors and datasets
    QString detail;
    QString judge;  // ops: what judged the op (bisectJudgeText: "peer cpu1, bitwise", ...)
    const Divergence* divergence = nullptr;  // owned by the Incident; null when not compared
    bool hasInfo = false;                    // dtype and shape known
    DType dtype = DType::Float32;
    std::vector<uint64_t> shape;
    // Where the element values come from (ElementValueLoader): tensors: names in the suspect and
    // reference files; ops: the suspect's recorded output and, for ops a peer judged, the peer's
    // (in the trace; otherwise the reference is the golden model).
    std::string suspectTensor, referenceTensor;
    QString peerLabel;  // ops judged by a peer

    void setVerdict(BisectVerdict v);
    void setVerdict(TensorVerdict v);

    bool isDivergent() const
    {
        return opVerdict == BisectVerdict::Divergent || tensorVerdict == TensorVerdict::Beyond ||
               tensorVerdict == TensorVerdict::Differs;
    }
    // Nothing could judge it: an error, or no counterpart to compare with.
    bool isUnjudged() const
    {
        return opVerdict == BisectVerdict::Error || tensorVerdict == TensorVerdict::Error ||
               tensorVerdict == TensorVerdict::Unpaired || tensorVerdict == TensorVerdict::NotComparable ||
               tensorVerdict == TensorVerdict::NotCompared;
    }
    bool isListedOnly() const { return tensorVerdict == TensorVerdict::Listed; }
};

// Tile->SM maps that replays of the incident's trace recorded, per op index, one per target
// that recorded one (SmAttribution picks the suspect's own). Unlike the rest of an Incident it
// grows after loading: the replay panel adds maps as campaigns end and the heatmap reads them,
// both on the UI thread only.
struct ReplaySmMaps {
    struct Recorded {
        QString target;
        TileSmMap map;
    };
    std::map<size_t, std::vector<Recorded>> byOp;
};

struct Incident {
    // Entries point into the reports: an Incident is never copied.
    Incident() = default;
    Incident(const Incident&) = delete;
    Incident& operator=(const Incident&) = delete;

    QStringList paths;  // as opened

    // Trace part: the trace, the suspect device label, the bisect report.
    std::shared_ptr<const Trace> trace;
    QString tracePath;
    QString suspectLabel;
    QString simulatedDefect;  // the suspect device's simulated_defect attribute ("" when none)
    std::optional<BisectReport> bisect;

    // Pair part: suspect (first) and reference (second) snapshots and their comparison.
    std::shared_ptr<const TensorFile> suspectFile, referenceFile;
    std::optional<CompareReport> compare;

    // A lone snapshot: listed, not compared.
    std::shared_ptr<const TensorFile> singleFile;

    std::vector<IncidentEntry> entries;      // ops in trace order, then tensors in name order
    std::optional<int> firstDivergentEntry;  // the bisect's first divergent op
    std::optional<int> storyEntry;           // what to show first
    QStringList warnings;
    std::shared_ptr<ReplaySmMaps> replaySmMaps = std::make_shared<ReplaySmMaps>();

    bool hasTrace() const { return trace != nullptr; }
    bool hasPair() const { return compare.has_value(); }
    const IncidentEntry* entry(int id) const
    {
        return id >= 0 && size_t(id) < entries.size() ? &entries[size_t(id)] : nullptr;
    }
    // "incident-trace.h5 (gpu1 vs golden) + step-003-rank-1.h5 vs step-003-rank-1.h5"
    QString title() const;
    // One line per part for the status bar.
    QString summary() const;
    // Entries of one source, in their order.
    std::vector<int> entriesOf(EntrySource source) const;
    // Ops the bisect found divergent, as a campaign op selection ("8,12,13"), "" when none.
    QString divergentOpSelection() const;

    // Fills entries, firstDivergentEntry and storyEntry from the reports. Call once, after the
    // reports are in their final place (entries point into them).
    void buildEntries();
};

}  // namespace faultline::views
