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
// What is replayed: only the suspect GPU's own divergent ops (core/evidence/SuspectTargets.h),
// on the targets that ran on it (or its declared simulated stand-in), with the campaign's golden
// `cpu` and its --reference as controls when it had them; never another GPU's or a simulation's
// failures. The suspect's targets must fail again (any failing verdict: with fewer targets and
// repetitions, persistent and device-specific may trade places); the controls must come out as
// the campaign found them. The repetitions are sized to the suspect's measured failure rate on
// those ops (reproducerReps: at least one failure with 99 % probability, 2 to 1000).
//
// A merged fleet campaign's labels ("host/cuda:0") are no replay targets: its reproducer replays
// the suspect GPU alone, on the target it ran as on its node ("cuda:3"), the ops it failed on
// there, expecting it to fail again. When the suspect's targets cannot be replayed (a fleet
// suspect only the fleet's peer vote found different, a reference that is no target), trace.h5 is
// still written and reproduce.sh says why and exits 2: no command that cannot work is written.
//
// With a minimal reproducer of `faultline shrink` (`evidence --min-reproducer MIN.h5`: one op,
// the suspect's own divergent op, its inputs cut down), trace.h5 is that file, byte-identical,
// and reproduce.sh replays its op alone, on the targets that failed it, with the same controls
// and repetitions sized to the suspect's rate on that op.
#include <set>
#include <string>
#include <vector>

#include "../Result.h"
#include "CampaignEvidence.h"
#include "SuspectTargets.h"

namespace faultline {

struct ReproducerFiles {
    std::string trace;    // path written
    std::string script;   // path written
    std::string command;  // the replay command, relative to the reproducer folder
    std::vector<size_t> ops;
    int expectedExitCode = 0;
    std::vector<std::pair<std::string, Verdict>> expectedVerdicts;  // target, campaign verdict
    std::vector<std::string> mustFail;  // the suspect's targets: any failing verdict reproduces
    std::vector<std::string> suspectTargets;
    ReproducerReps reps;  // how --reps was sized
    bool replayable = true;
    std::string notReplayable;  // why not (then `command` is empty and reproduce.sh exits 2)
    std::string fleetGpu;       // a fleet campaign: the suspect's label there ("host/cuda:3")
    // trace.h5 is this `faultline shrink` output (the file name given), "" when it holds the
    // campaign trace's divergent ops.
    std::string shrunkFrom;
};

// The ops the suspect's targets failed (a fleet GPU only the peer vote found: its outlier ops);
// empty when the suspect failed nothing, and then there is nothing to reproduce.
std::vector<size_t> suspectDivergentOps(const CampaignEvidence& campaign, const SuspectTargets& suspect);

// Writes DIR/trace.h5 and DIR/reproduce.sh (DIR exists) from the campaign's source trace, or
// from `shrunkTrace` (a `faultline shrink` output; "" none). Errors: the suspect failed no op
// (suspectDivergentOps is empty); a shrunk trace that does not hold exactly one op, or whose op
// the suspect did not fail (Usage, naming the file).
Result<ReproducerFiles> writeMinimalReproducer(const CampaignEvidence& campaign,
                                               const std::string& sourceTrace, const std::string& dir,
                                               const SuspectTargets& suspect,
                                               const std::string& shrunkTrace = {});

// The ops `ops` of `trace` with their inputs, devices and recorded outputs, as trace v1 at `path`.
Status writeTraceSubset(const Trace& trace, const std::set<size_t>& ops, const std::string& path);

}  // namespace faultline
