#pragma once
// How the collective replay's driver reaches its ranks: all in this process, or one process per
// rank spoken to in JSON lines over pipes with a watchdog (a rank that does not answer in time
// hung, one whose pipe closed crashed: both are recorded outcomes of the run, and every rank
// process is restarted for the next run). Internal to core/collectives.
#include <cstdio>
#include <memory>
#include <string>

#include "CollectiveReplay.h"

namespace faultline {

// A rank that hung or crashed during the current run (rank -1: none).
struct RankFault {
    int64_t rank = -1;
    RunOutcome what = RunOutcome::Ok;  // Hang | Crash
    bool happened() const { return rank >= 0; }
};

class RankTransport {
public:
    virtual ~RankTransport() = default;
    virtual std::string mode() const = 0;  // in-process | processes
    // Starts a run of problem `problem` on ring `ring` (`plan`, which outlives the run) on every rank.
    virtual Status begin(size_t problem, size_t ring, const RingPlan& plan, uint32_t rep,
                         RankFault& fault) = 0;
    virtual Result<RingWire> send(size_t rank, size_t transfer, RankFault& fault) = 0;
    virtual Result<RingArrival> receive(size_t rank, size_t transfer, RingWire wire, RankFault& fault) = 0;
    virtual Result<HostTensor> output(size_t rank, RankFault& fault) = 0;
    // After a fault: every rank fresh.
    virtual Status restart() = 0;
};

// A rank's output on the wire, and the line I/O of a rank process (also used by CollectiveNccl).
nlohmann::json collectiveOutputJson(const HostTensor& t);
Result<HostTensor> collectiveOutputFromJson(const nlohmann::json& j, DType dtype);
bool readRankLine(std::FILE* in, std::string& line);
void replyRankLine(std::FILE* out, const nlohmann::json& j);
std::string lastLineOf(std::string text);

Result<std::unique_ptr<RankTransport>> makeInProcessTransport(const CollectiveOptions& options,
                                                              const CollectiveSetup& setup);
Result<std::unique_ptr<RankTransport>> makeProcessTransport(const CollectiveOptions& options,
                                                            const CollectiveSetup& setup);

}  // namespace faultline
