#pragma once
// What a campaign runs (Campaign.h): the trace, targets, op selection, repetitions, and where
// its results and journal go.
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "StoppingRule.h"
#include "TargetSpec.h"

namespace faultline {

struct CampaignOptions {
    std::string tracePath;
    std::vector<TargetSpec> targets;
    std::string ops;    // selection: "" all; "3,5-7", op kinds "gemm,softmax"
    uint32_t reps = 3;  // ignored when `stopping` is adaptive
    // replay --until-rate: repeat each op on each target until a failure, a clean bound below the
    // rate or the budget (StoppingRule.h) instead of a fixed number of repetitions.
    StoppingRule stopping;
    uint64_t seed = 1;
    std::string outPath;                       // RESULTS.h5; "" writes no results file
    bool resume = false;                       // continue from OUT's journal
    std::chrono::milliseconds timeout{60000};  // per run: longer is a hang
    std::string workerProgram;                 // the faultline-worker executable
    bool allowExternal = false;
    std::string scratchDir;  // where workers write outputs ("" = a temp dir)
    // A target known to be healthy: where it and other targets are peers (same peer key), its
    // outputs are the bits the others must reproduce. "" = the peers' majority decides.
    std::string reference;
    unsigned maxRestartsPerTarget = 64;
    // Copy every repetition's outputs to the host. By default a repetition the target found
    // bitwise identical to one already judged (its repetition check) is not copied: it takes that
    // run's judgement (RunRecord::hostCopy false). Copying all catches bits that change on the
    // way from the device to the host (transfer mismatches), at the cost of the copies.
    bool copyAll = false;
    // Where the campaign runs, copied into the report's "node" (host, scheduler job and task,
    // GPU inventory: core/fleet/NodeIdentity.h); null: not recorded.
    nlohmann::json node;
};

}  // namespace faultline
