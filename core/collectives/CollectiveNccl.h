#pragma once
// The NCCL path of `faultline collective` for `cuda:N` targets: one faultline-worker process per
// GPU (`--collective-rank R`), NCCL's own algorithms between them.
//
// Per run: rank 0 creates an ncclUniqueId, the orchestrator relays it to every rank with "run"
// (sent to every rank before any reply is read: ncclCommInitRank blocks until all ranks have
// joined), each rank initialises its communicator on its device, runs the op in the tensors'
// dtype and answers with its output. The outputs are judged by judgeCollectiveRun, the same
// invariants as simulated ranks. A rank that does not answer within the watchdog hung, one whose
// pipe closed crashed, one that answers an error (a CUDA or NCCL failure naming the device)
// failed the run: each is a recorded outcome, and every rank process is restarted for the next
// run. NCCL hides its hops, so no link is attributed: the report's links table stays empty
// (`links_observable: false`).
//
// Protocol (JSON lines; the rank speaks first, then answers each request with one line):
//   rank -> {"hello":"nccl-rank","rank":R,"device":N,"nccl_version":V}   or {"error":"..."} and exit 2
//   {"cmd":"unique_id"}                                   -> {"unique_id":base64}
//   {"cmd":"run","problem":P,"rep":N,"unique_id":base64}  -> {"dtype":..,"shape":[..],"bytes":base64}
//                                                            or {"error":"..."}
#include <cstdint>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../Result.h"
#include "../replay/TargetSpec.h"
#include "CollectiveReplay.h"

namespace faultline {

// The NCCL settings a cuda: target pins (target parameters nccl_algo, nccl_proto,
// nccl_min_channels, nccl_max_channels). Empty / 0: NCCL's own choice (the variable is unset).
struct NcclSettings {
    std::string algo, proto;
    int minChannels = 0, maxChannels = 0;
};

// The device index and NCCL settings of a cuda: target; errors name the target (an unknown
// parameter, an algorithm or protocol NCCL does not know, channels outside [1, 64], min > max).
Result<NcclSettings> ncclSettingsOf(const TargetSpec& spec);
nlohmann::json ncclSettingsJson(const NcclSettings& s);
// Sets (or unsets) NCCL_ALGO, NCCL_PROTO, NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS in this process.
void applyNcclSettings(const NcclSettings& s);

// The shape of a rank's output of the problem (all_gather: dim 0 times the ranks, reduce_scatter:
// dim 0 divided by them, else the input's).
std::vector<uint64_t> collectiveOutputShape(const CollectiveProblem& p);

// What a rank process needs from the CUDA side (kernels/NcclCollective; faultline-worker fills it).
struct NcclRankBackend {
    std::function<Status(int device)> probe;  // the device is usable (errors name it)
    std::function<Result<std::vector<uint8_t>>()> createUniqueId;
    std::function<Result<HostTensor>(const CollectiveProblem&, size_t rank, size_t ranks, int device,
                                     const std::vector<uint8_t>& uniqueId)>
        run;
    int version = 0;  // ncclGetVersion
};

// The rank side: serves rank `self` of the replay on `in`/`out` until the input ends. `backend`
// null: this executable has no CUDA target (the hello is an error). Returns the exit code.
int serveNcclRank(const CollectiveOptions& options, size_t self, const NcclRankBackend* backend,
                  std::FILE* in, std::FILE* out);

// The setup's check of a communicator of cuda: ranks: every target cuda:N with valid settings,
// each device once, no --ring (NCCL picks its own); one description per rank.
Status describeNcclRanks(const CollectiveOptions& options, std::vector<std::string>& descriptions);

// The orchestrator side: every selected op `reps` times on the ranks of options.workerProgram.
// Errors (exit 2): a rank that cannot start (no driver, no such device, a worker without CUDA),
// naming the rank's target.
Result<CollectiveReport> runNcclCollective(const CollectiveOptions& options, const CollectiveSetup& setup);

}  // namespace faultline
