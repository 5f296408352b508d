#pragma once
// What `bisect` judges a suspect's recorded output against, loaded from the trace: the golden
// model under the op's recorded numerics (or the production order it emulates), with the
// per-element bound, cut to the suspect's rows for reduce_scatter. Shared by bisect and the
// detection floor (DetectionFloor.h), so that both judge an element the same way.
#include <string>
#include <vector>

#include "../HostTensor.h"
#include "../Result.h"
#include "../trace/Trace.h"

namespace faultline {

struct GoldenJudgeReference {
    HostTensor recorded;        // the suspect's output as recorded
    HostTensor expected;        // the golden model's (or the emulated production order's) output
    std::vector<double> bound;  // per element of expected; all 0: judged bit for bit
    std::string model;          // how the bound was chosen ("" strict; RecordedNumerics.h)
    bool loose = false;
};

// Errors: the op's inputs or the recorded output cannot be read, the golden model refuses the
// op. A recorded output of another dtype or shape than `expected` is not an error here.
Result<GoldenJudgeReference> goldenJudgeReference(const Trace& trace, const TraceOp& op,
                                                  const std::string& suspect,
                                                  const std::string& recordedName);

}  // namespace faultline
