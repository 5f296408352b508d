#pragma once
// The minimal reproducer of an evidence bundle: a trace holding only the ops that diverged in
// the campaign (with their original indices, inputs, parameters, recording devices and what
// those devices recorded), and reproduce.sh, which replays them with the exact `faultline
// replay` command of the campaign (targets, repetitions, seed, reference) and checks that every
// target's verdict and the exit code come out as the campaign found them.
#include <string>
#include <vector>

#include "../Result.h"
#include "CampaignEvidence.h"

namespace faultline {

struct ReproducerFiles {
    std::string trace;    // path written
    std::string script;   // path written
    std::string command;  // the replay command, relative to the reproducer folder
    std::vector<size_t> ops;
    int expectedExitCode = 0;
    std::vector<std::pair<std::string, std::string>> expectedVerdicts;  // target, verdict
};

// Writes DIR/trace.h5 and DIR/reproduce.sh (DIR exists) from the campaign's source trace.
Result<ReproducerFiles> writeMinimalReproducer(const CampaignEvidence& campaign,
                                               const std::string& sourceTrace, const std::string& dir);

// Single-quoted for sh.
std::string shellQuote(const std::string& s);

}  // namespace faultline
