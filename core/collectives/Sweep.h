#pragma once
// `faultline sweep`: pairwise bisection of a group of GPUs to find the faulty GPUs and links,
// as fleets do with allgather between pairs of nodes in two rounds.
//   round 1   pairs (0,1), (2,3), ... (an odd one out pairs with rank 0);
//   round 2   each GPU of a failing pair with a GPU of a passing pair (all pairs when none
//             passed);
//   all-pairs every pair once, for small groups.
// Each pair runs the pattern in both directions `reps` times; a direction passes when every
// byte arrived as sent (allgather, sendrecv) or the reduction is the golden sum (allreduce).
// Judgement: a GPU is faulty when its transfers fail with two or more partners, or with its
// only partner in both directions while that partner passes elsewhere; a directed link is faulty
// when it fails and neither end is a faulty GPU. Failure rates carry Wilson intervals.
//
// Ranks are simulated (`sim:` targets, each with its fault model corrupting what passes through
// the GPU and link_* parameters for its outgoing link, LinkFault.h): all in one process
// (runSweep), or one per process with the bytes going through MPI (faultline-sweep-rank).
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "../Result.h"
#include "../replay/ReplayVocabulary.h"
#include "../replay/Statistics.h"

namespace faultline {

enum class SweepPattern { AllGather, AllReduce, SendRecv };
// allgather | allreduce | sendrecv (public: --pattern and JSON "pattern").
std::string sweepPatternName(SweepPattern p);
Result<SweepPattern> parseSweepPattern(const std::string& name);

// The largest payload per rank and transfer (--bytes): a sweep's memory is about three payloads.
inline constexpr uint64_t kMaxSweepBytes = uint64_t(256) << 20;

struct SweepOptions {
    std::vector<std::string> targets;  // specs; a GPU is its index here (specs may repeat)
    SweepPattern pattern = SweepPattern::AllGather;
    uint64_t bytes = uint64_t(1) << 20;  // per rank and transfer
    uint32_t reps = 3;
    uint64_t seed = 1;
    bool allPairs = false;
    // Per failing direction, the expected and received bytes of its first failing repetition are
    // kept (SweepTransfer::block), cut to whole rows within this many bytes (0: none kept).
    uint64_t blockBytes = uint64_t(4) << 20;
};

// The block of a failing direction's first failing repetition, as the receiver saw it: float32
// elements, row-major in `shape` (the payload's, cut to whole rows when it held more than
// SweepOptions::blockBytes). For allreduce both are the receiver's sums (golden and observed).
struct SweepBlock {
    uint32_t rep = 0;
    uint64_t totalBytes = 0;  // the block's full size before any cut
    std::vector<uint64_t> shape;
    std::vector<unsigned char> expected, received;
    bool truncated() const { return expected.size() < totalBytes; }
};

// One direction of one pair in one round.
struct SweepTransfer {
    size_t a = 0, b = 0;
    bool aToB = true;  // the data went a -> b (else b -> a)
    uint32_t reps = 0, failures = 0;
    uint64_t corruptedBytes = 0;  // over all repetitions
    std::string signature;        // the most frequent signature kind among failures ("" none)
    double gbps = 0;
    double seconds = 0;  // summed over repetitions (gbps from it)
    // The first failing repetition's bytes (null when it passed, when the GPU did not answer or
    // when blocks are not kept, e.g. over MPI).
    std::shared_ptr<const SweepBlock> block;
    size_t src() const { return aToB ? a : b; }
    size_t dst() const { return aToB ? b : a; }
};

struct SweepRound {
    std::vector<SweepTransfer> transfers;
};

struct SweepGpu {
    size_t index = 0;
    bool faulty = false;
    uint64_t transfers = 0, failures = 0;
    RateInterval rate;
    std::vector<size_t> failedPartners, testedPartners;
};

struct SweepLink {
    size_t src = 0, dst = 0;
    uint64_t reps = 0, failures = 0;
    RateInterval rate;
    std::string signature;
};

struct SweepReport {
    SweepOptions options;
    std::vector<std::string> descriptions;  // per GPU: its fault model and link, in words
    std::vector<SweepRound> rounds;
    std::vector<SweepGpu> gpus;
    std::vector<SweepLink> faultyLinks;
    std::vector<size_t> faultyGpus() const;
    bool healthy() const { return faultyGpus().empty() && faultyLinks.empty(); }
};

// Checks the options (errors, exit 2: fewer than two targets, a target that is not `sim:` (NCCL
// ranks are not built yet), a bad parameter, bytes not a positive multiple of 4).
Status checkSweepOptions(const SweepOptions& options);

// Runs the sweep with every rank in this process.
Result<SweepReport> runSweep(const SweepOptions& options);

// ---- The parts, for ranks in separate processes (faultline-sweep-rank over MPI) ----

// What crosses the wire of one transfer: the bytes, or that the sending GPU did not answer.
struct SweepWire {
    bool answered = true;
    RunOutcome failure = RunOutcome::Ok;  // Hang | Crash when it did not answer
    std::vector<unsigned char> bytes;
};

struct SweepOutcome {
    bool ok = true;
    uint64_t corruptedBytes = 0;
    std::string signature;
    std::shared_ptr<const SweepBlock> block;  // when it failed with bytes to show (blockBytes > 0)
};

// One rank of a sweep: its GPU's fault model (what passes through it is corrupted) and its
// outgoing link. Every transfer is seeded by (seed, source, destination, repetition), so the
// receiver knows what should arrive.
class SweepRank {
public:
    static Result<SweepRank> create(const SweepOptions& options, size_t self);
    SweepRank(SweepRank&&) noexcept;
    SweepRank& operator=(SweepRank&&) noexcept;
    ~SweepRank();
    // Sending to `dst`: the payload through this GPU and, when it is the faulty link's, the link.
    SweepWire send(size_t dst, uint32_t rep);
    // Receiving from `src`: through this GPU, then checked (allreduce: summed with this rank's
    // own data and checked against the golden sum).
    SweepOutcome receive(size_t src, uint32_t rep, SweepWire wire);
    std::string describe() const;

private:
    struct Impl;
    explicit SweepRank(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

// The pairs of round one (or every pair with allPairs), and of round two after round one.
std::vector<std::pair<size_t, size_t>> sweepFirstRound(size_t ranks, bool allPairs);
std::vector<std::pair<size_t, size_t>> sweepSecondRound(size_t ranks, const SweepRound& first);
// Adds one repetition's outcome to a direction's record.
void addSweepOutcome(SweepTransfer& t, const SweepOutcome& outcome, double seconds, uint64_t bytes);
// Finishes a direction's record (its most frequent signature).
void finishSweepTransfer(SweepTransfer& t, const std::map<std::string, uint32_t>& signatures);
// Names the faulty GPUs and links from the rounds (report.rounds filled).
void judgeSweep(SweepReport& report);
// A transfer record's JSON and back (how MPI ranks share their rounds).
nlohmann::json sweepTransferJson(const SweepTransfer& t);
Result<SweepTransfer> sweepTransferFromJson(const nlohmann::json& j);

nlohmann::json sweepJson(const SweepReport& report);
std::string sweepText(const SweepReport& report);

}  // namespace faultline
