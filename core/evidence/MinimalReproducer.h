#pragma once
// The minimal reproducer of an evidence bundle: a trace holding only the ops that diverged in
// the campaign (with their original indices, inputs, parameters, recording devices and what
// those devices recorded), and reproduce.sh, which replays them with the exact `faultline
// replay` command of the campaign (targets, repetitions, seed, reference) and checks that every
// target's verdict and the exit code come out as the campaign found them.
//
// The campaign's text is untrusted: the script's comments print it through shellCommentText
// (nothing can end the line) and every value in a command is shellQuote'd.
//
// What is replayed: a single-node campaign, its own targets. A merged fleet campaign's labels
// ("host/cuda:0") are no replay targets: its reproducer replays the suspect GPU alone, on the
// target it ran as on its node ("cuda:3"), the ops it failed on there, expecting the verdict its
// node found. When the campaign's targets cannot be replayed (a fleet suspect not among the
// fleet's GPUs, or one only the fleet's peer vote found different, or labels that are no
// targets), trace.h5 is still written and reproduce.sh says why and exits 2: no command that
// cannot work is written.
#include <string>
#include <vector>

#include "../Result.h"
#include "CampaignEvidence.h"

namespace faultline {

// The suspect GPU, to find it among a merged fleet campaign's GPUs (any of the three).
struct ReproducerSuspect {
    std::string uuid, serial, busId;
};

struct ReproducerFiles {
    std::string trace;    // path written
    std::string script;   // path written
    std::string command;  // the replay command, relative to the reproducer folder
    std::vector<size_t> ops;
    int expectedExitCode = 0;
    std::vector<std::pair<std::string, std::string>> expectedVerdicts;  // target, verdict
    bool replayable = true;
    std::string notReplayable;  // why not (then `command` is empty and reproduce.sh exits 2)
    std::string fleetGpu;       // a fleet campaign: the suspect's label there ("host/cuda:3")
};

// Writes DIR/trace.h5 and DIR/reproduce.sh (DIR exists) from the campaign's source trace.
Result<ReproducerFiles> writeMinimalReproducer(const CampaignEvidence& campaign,
                                               const std::string& sourceTrace, const std::string& dir,
                                               const ReproducerSuspect& suspect = {});

}  // namespace faultline
