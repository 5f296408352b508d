#pragma once
// Bisection of a trace in lock-step: every op is replayed on ITS OWN recorded inputs with the
// golden model and compared with what the suspect device recorded, within the op's error bound.
// Errors do not accumulate, so the first op that leaves its bound is where the corruption
// entered.
#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "../Result.h"
#include "../compare/Divergence.h"
#include "../trace/Trace.h"
#include "CollectiveInvariants.h"
#include "ReplayVocabulary.h"

namespace faultline {

struct BisectOp {
    size_t index = 0;
    std::string op, name;
    BisectVerdict verdict = BisectVerdict::Error;  // JSON: ok | divergent | skipped | error
    std::string detail;
    std::optional<Divergence> divergence;  // ok / divergent
    // How the bound was chosen from the op's recorded settings (golden/RecordedNumerics.h):
    // empty for the strict bounds; loose where it cannot be tight (narrow accumulation).
    std::string boundModel;
    bool boundLoose = false;
    // Collectives: the invariants on every rank's recorded output (CollectiveInvariants.h). One
    // that fails makes the op divergent whatever the suspect's own output.
    std::optional<CollectiveInvariantReport> collective;
};

struct BisectReport {
    std::string trace, suspect;
    std::optional<size_t> firstDivergentOp;  // trace op index
    std::vector<BisectOp> ops;
    // Ops whose recorded output was judged (verdict ok or divergent). Zero means the trace gave
    // nothing to judge: no verdict, and `bisect` exits 2.
    size_t checkedOps = 0;
    std::vector<std::string> warnings;
    bool cancelled = false;
};

// progress(done, total, what); cancel is checked between ops. An unknown suspect label is an
// error listing the trace's devices.
Result<BisectReport> bisectTrace(const Trace& trace, const std::string& suspect,
                                 const std::function<void(size_t, size_t, const std::string&)>& progress = {},
                                 const std::atomic<bool>* cancel = nullptr);

// {"trace","suspect","first_divergent_op": index|null, "checked_ops": N,
// "ops":[{"index","op","name","elements",
//  "beyond_tolerance","max_ulp","signature","verdict"}…]} plus mismatches, detail, region,
//  bit_histogram, bound_model (null: strict), bound_loose, collective (collectiveInvariantJson, null for
//  other ops) per op and warnings.
nlohmann::json bisectJson(const BisectReport& report);
std::string bisectText(const BisectReport& report);

}  // namespace faultline
