#include "RecordedReference.h"

#include "../golden/CollectiveGolden.h"
#include "../golden/RecordedNumerics.h"
#include "TensorLoad.h"

namespace faultline {

Result<GoldenJudgeReference> goldenJudgeReference(const Trace& trace, const TraceOp& op,
                                                  const std::string& suspect, const std::string& recordedName)
{
    auto inputs = loadOpInputs(trace, op);
    if (!inputs) return inputs.error();
    auto recorded = loadTensor(*trace.file, recordedName);
    if (!recorded) return recorded.error();
    // The golden model within the bound the recorded numerics allow, or the production order
    // itself (bound 0) where it is emulated (golden/RecordedNumerics.h).
    auto reference = golden::recordedReference(op.op, *inputs, op.params);
    if (!reference) return reference.error();
    GoldenJudgeReference r;
    r.recorded = std::move(recorded).value();
    r.model = reference->judgement.model;
    r.loose = reference->judgement.loose;
    r.expected = std::move(reference->expected);
    r.bound = std::move(reference->bound);
    // reduce_scatter: the suspect recorded its own block of the reduction.
    auto rows = golden::recordedRowsOf(op.op, op.params, suspect, r.expected.shape);
    if (!rows) return rows.error();
    if (*rows) {
        r.bound = golden::rowsOf(r.bound, r.expected.shape, **rows);
        r.expected = golden::rowsOf(r.expected, **rows);
    }
    return r;
}

}  // namespace faultline
