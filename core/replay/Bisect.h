#pragma once
// Bisection of a trace in lock-step: every op's recorded output on the suspect is judged on ITS
// OWN recorded inputs, so errors do not accumulate and the first op that leaves its judgement is
// where the corruption entered. Each op gets the strictest judge the trace offers:
//   peer          a healthy device's outputs computed from the same recorded inputs
//                 (faultline_capture's rerun, /devices/<label> source = "rerun"), once it has
//                 shown it reproduces itself bit for bit (the output group's reproducible = 1):
//                 every recorded output, bit for bit; else data-parallel replicas: other
//                 devices' ops with the same op, parameters and inputs whose bits agree
//                 (ReplicaPeers.h);
//   golden_exact  the golden model, where the op's bound is 0 for every element;
//   golden_bound  the golden model within the op's error bound (strict or loose, from the
//                 op's recorded settings);
//   none          nothing can judge it (the reason says why).
#include <atomic>
#include <functional>
#include <map>
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
    size_t output = 0;                     // the recorded output k `divergence` is of
    // What judged the op: judgeLabel is the peer's label (judge peer); judgeReason says why
    // nothing judged it (none), or why the peer did not and the golden model did (a fallback).
    BisectJudge judge = BisectJudge::None;
    std::string judgeLabel, judgeReason;
    // Judge peer: the peer's recorded outputs the suspect's were held against, k order (of the
    // op itself for a rerun peer, of the replica's own op for data-parallel replicas), and the
    // replicas that agreed bit for bit (ReplicaPeers.h; empty for a rerun peer).
    std::vector<std::string> peerOutputs;
    std::vector<std::string> replicas;
    // How the bound was chosen from the op's recorded settings (golden/RecordedNumerics.h):
    // empty for the strict bounds; loose where it cannot be tight (narrow accumulation).
    std::string boundModel;
    bool boundLoose = false;
    // Collectives: the invariants on every rank's recorded output (CollectiveInvariants.h). One
    // that fails makes the op divergent whatever the suspect's own output.
    std::optional<CollectiveInvariantReport> collective;
};

// Which device judges bit for bit.
struct BisectOptions {
    std::string suspect;
    // A device of the trace other than the suspect. "" chooses the default: the devices whose
    // source is "rerun", other than the suspect; of several, the first in device order, with a
    // warning. noPeer: the golden model judges alone (no rerun peer, no replicas).
    std::string peer;
    bool noPeer = false;
};

struct BisectReport {
    std::string trace, suspect;
    std::string peer;                        // the peer that judged where it could ("" none)
    std::optional<size_t> firstDivergentOp;  // trace op index
    std::vector<BisectOp> ops;
    // Ops whose recorded output was judged (verdict ok or divergent). Zero means the trace gave
    // nothing to judge: no verdict, and `bisect` exits 2.
    size_t checkedOps = 0;
    std::map<BisectJudge, size_t> judgedBy;  // ops per judge (none: the ops nothing judged)
    std::vector<std::string> warnings;
    bool cancelled = false;
};

using BisectProgress = std::function<void(size_t, size_t, const std::string&)>;

// The peer options.peer names, or the default (see BisectOptions); "" when there is none.
// Errors (ErrorCode::Usage): a peer that is not a device of the trace, or is the suspect; the
// message lists the trace's devices. A warning is added when several devices could be the peer.
Result<std::string> chooseBisectPeer(const Trace& trace, const BisectOptions& options,
                                     std::vector<std::string>* warnings = nullptr);

// progress(done, total, what); cancel is checked between ops. An unknown suspect label is an
// error listing the trace's devices; so is a bad peer (chooseBisectPeer).
Result<BisectReport> bisectTrace(const Trace& trace, const BisectOptions& options,
                                 const BisectProgress& progress = {},
                                 const std::atomic<bool>* cancel = nullptr);
// The same with the default peer.
Result<BisectReport> bisectTrace(const Trace& trace, const std::string& suspect,
                                 const BisectProgress& progress = {},
                                 const std::atomic<bool>* cancel = nullptr);

// {"trace","suspect","peer": label|null,"first_divergent_op": index|null, "checked_ops": N,
// "judged_by": {"peer","golden_exact","golden_bound","none"},
// "ops":[{"index","op","name","elements",
//  "beyond_tolerance","max_ulp","signature","verdict"}…]} plus mismatches, detail, region,
//  bit_histogram, output, judge {"kind","label","bound","reason","replicas"}, bound_model (null: strict),
//  bound_loose, collective (collectiveInvariantJson, null for other ops) per op and warnings.
nlohmann::json bisectJson(const BisectReport& report);
std::string bisectText(const BisectReport& report);
// The op's judge in words, as the text output and the GUI show it: "peer cpu1, bitwise",
// "replicas cpu0, cpu2, bitwise", "golden, exact", "golden bound, strict" / "loose", "no judge";
// a fallback's reason after " — ".
std::string bisectJudgeText(const BisectOp& op);

}  // namespace faultline
