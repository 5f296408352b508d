#pragma once
// One run of a campaign and its JSON form (a journal line, an entry of the report's "runs").
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "../Result.h"
#include "ReplayVocabulary.h"
#include "TileSmMap.h"

namespace faultline {

// One run: (target, op, repetition). An Error outcome may be a device fault (deviceFault).
struct RunRecord {
    std::string target;
    size_t opIndex = 0;
    std::string op, name;
    uint32_t rep = 0;
    RunOutcome outcome = RunOutcome::Error;
    double ms = 0;
    std::string digest;     // outputDigest of the outputs (ok/mismatch)
    uint64_t injected = 0;  // sim: elements the defect changed
    // The output is defined to be the golden model's bit for bit (ReplayOutput::goldenExact):
    // judged by bits ("judged":"bitwise" in vsGolden), else within the op's bound ("bound").
    bool goldenExact = false;
    std::string peerKey;  // the worker's Target::peerKey; "" = no peers
    nlohmann::json
        vsGolden;  // {"judged","differing","mismatches","beyond_tolerance","max_ulp","max_abs_error","signature",...}
    nlohmann::json vsRecorded;  // {label: {"mismatches","beyond_tolerance","max_ulp"}}
    nlohmann::json vsRep;  // the target's on-device comparison with an earlier repetition (WorkerProtocol.h)
    // False when the target found the output bitwise identical to an earlier repetition's and it
    // was not copied to the host: digest and judgement are that repetition's.
    bool hostCopy = true;
    // Set by summarizeCampaign for runs that have peers: {"basis":"reference"|"majority"|"none",
    // "equal":BOOL (absent with basis none), "peers":N}. Not journaled.
    nlohmann::json vsPeers;
    std::string error;  // error / crash description
    // An `error` the target reported as fatal: a sticky device error that poisoned the worker's
    // CUDA context (the worker was restarted). Journaled as "device_fault": true.
    bool deviceFault = false;
    // An `error` that is not the target's: the op cannot be replayed at all (the golden model
    // refuses its inputs or parameters: a malformed trace). Never counts for or against a target.
    // Journaled as "setup_error": true.
    bool setupError = false;
    std::string stderrTail;  // hang/crash: the worker's last stderr lines
    // Which SM computed each tile of output 0, when the target records it; kept with the first
    // completed run of each op on each target in a campaign (it is the same for every run of a
    // sim target), empty otherwise.
    TileSmMap smMap;

    bool failed() const { return outcome != RunOutcome::Ok; }
    // Failed, or its bits differ from what its peers' reference says they must be.
    bool failedOrPeerMismatch() const
    {
        return failed() ||
               (vsPeers.is_object() && vsPeers.contains("equal") && !vsPeers.value("equal", true));
    }
    nlohmann::json toJson() const;
    static Result<RunRecord> fromJson(const nlohmann::json& j);
};

}  // namespace faultline
