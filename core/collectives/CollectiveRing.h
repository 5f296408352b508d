#pragma once
// The written-down ring algorithms of `faultline collective` on simulated ranks, and one such rank.
//
// A ring is an order of the ranks p[0], ..., p[N-1]; position i sends to position i+1 (mod N)
// over the directed link p[i] -> p[i+1]. Every rank holds one buffer (its input; for all_gather
// the concatenation with its own input in its block) cut into N chunks; chunk c belongs to
// position c (all_gather, reduce_scatter: the block of rank p[c]; all_reduce: the c-th of N
// near-equal element ranges).
//   reduce-scatter phase, steps s = 0 .. N-2: position i sends chunk (i - s - 1) mod N; the
//       receiver reduces it into its own (received (op) own, rounded to the dtype), so chunk c
//       ends at position c as the fold of the inputs in ring order p[c+1], p[c+2], ..., p[c].
//   all-gather phase, steps s = 0 .. N-2: position i sends chunk (i - s) mod N; the receiver
//       copies it.
//   all_reduce = reduce-scatter then all-gather; reduce_scatter = the first phase (rank r keeps
//   block r); all_gather = the second phase.
//   broadcast: a pipelined chain along the ring from the root's position (no wrap-around), the
//       root's input cut into N segments: at step s the h-th hop forwards segment s - h.
//
// A simulated rank's target (`sim:MODEL[:link_to=K,...]`) corrupts what passes through its GPU
// (its fault model, on the way out and on the way in) and, on the link to rank K, what crosses
// the link (LinkFault.h). Every transfer of a clean run is computed beforehand (RingPlan), so a
// receiving rank knows what should arrive; the sender adds which bytes of its payload were
// already corrupted before it sent them, so the receiver names the hop where corruption entered.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../HostTensor.h"
#include "../Result.h"
#include "../golden/AllReduceGolden.h"
#include "../replay/ReplayVocabulary.h"
#include "../trace/Trace.h"

namespace faultline {

enum class CollectiveKind { AllReduce, AllGather, ReduceScatter, Broadcast };
// The trace op name (all_reduce, all_gather, reduce_scatter, broadcast); nullopt for other ops.
std::optional<CollectiveKind> collectiveKindOf(const std::string& op);
std::string collectiveKindName(CollectiveKind kind);

// One collective op of a trace with what every rank needs.
struct CollectiveProblem {
    size_t opIndex = 0;
    std::string moduleName;
    CollectiveKind kind = CollectiveKind::AllReduce;
    golden::ReduceOp reduce = golden::ReduceOp::Sum;
    std::string reduceName = "sum";
    size_t root = 0;
    std::vector<HostTensor> inputs;  // one per rank
};

// Reads op `op`'s inputs and parameters and checks them against a group of `ranks` ranks
// (errors name the trace file and the op: a rank count different from the group, inputs of
// different shapes or dtypes, reduce_scatter's dim 0 not divisible, a root out of range).
Result<CollectiveProblem> loadCollectiveProblem(const Trace& trace, const TraceOp& op, size_t ranks,
                                                const std::string& tracePath);

// One transfer of the schedule.
struct RingTransfer {
    size_t step = 0, src = 0, dst = 0;  // ranks
    uint64_t offset = 0, bytes = 0;     // the byte range of the buffers
    bool reduce = false;                // the receiver reduces (else copies)
};

// A ring order is valid when it is a permutation of 0 .. ranks-1.
Status checkRingOrder(const std::vector<size_t>& ring, size_t ranks);
std::string ringText(const std::vector<size_t>& ring);  // "0,1,2"
// The inverse of ringText, as --ring is given: comma-separated rank indices (a usage error naming
// the piece that is not one; checkRingOrder judges the order itself).
Result<std::vector<size_t>> parseRingText(const std::string& text);

// The schedule of `problem` on `ring`, in step order, and what each transfer carries in a run
// without faults (every rank computes the same plan).
struct RingPlan {
    std::vector<size_t> ring;
    std::vector<RingTransfer> transfers;
    std::vector<std::vector<unsigned char>> expected;  // per transfer
};
RingPlan planRing(const CollectiveProblem& problem, const std::vector<size_t>& ring);

// The initial buffer of rank `rank` and its output from its final buffer.
HostTensor ringInitialBuffer(const CollectiveProblem& problem, size_t rank);
HostTensor ringOutput(const CollectiveProblem& problem, size_t rank, const HostTensor& buffer);
// Reduces `received` into `into` (count elements of `dtype`): into = received (op) into, rounded.
void ringReduce(DType dtype, golden::ReduceOp op, const unsigned char* received, unsigned char* into,
                uint64_t count);

// What crosses the wire of one transfer.
struct RingWire {
    bool answered = true;                 // false: the sending GPU hung or crashed (failure says which)
    RunOutcome failure = RunOutcome::Ok;  // Hang | Crash when not answered
    std::vector<uint64_t> inherited;      // byte offsets the sender already held corrupted
    std::vector<unsigned char> bytes;
};

// What the receiver found.
struct RingArrival {
    bool answered = true;
    bool byReceiver = false;  // the receiving GPU (not the sender) hung or crashed
    // Not answered: Hang or Crash, or Error when the transfer arrived truncated or malformed.
    RunOutcome failure = RunOutcome::Ok;
    uint64_t differingBytes = 0;  // from what a clean run carries
    uint64_t enteredBytes = 0;    // of those, corrupted on this hop (not inherited)
    std::string signature;        // the signature kind of the hop's corruption ("" none)
};

// One simulated rank of a collective replay.
class RingRank {
public:
    // Rank `self` of the group `targets` (sim: specs; errors name the target).
    static Result<RingRank> create(const std::vector<std::string>& targets, size_t self, uint64_t seed);
    RingRank(RingRank&&) noexcept;
    RingRank& operator=(RingRank&&) noexcept;
    ~RingRank();

    std::string describe() const;
    // Starts one run of `problem` on `plan` (which must outlive the run), repetition `rep`.
    void begin(const CollectiveProblem& problem, const RingPlan* plan, uint32_t rep);
    // Sends transfer `t` (this rank is its source): the payload through this GPU and, on the
    // faulty link's destination, the link.
    RingWire send(size_t t);
    // Receives transfer `t` (this rank is its destination): through this GPU, judged against
    // the clean run, then reduced or copied into the buffer.
    RingArrival receive(size_t t, RingWire wire);
    // This rank's output after the run.
    HostTensor output() const;

private:
    struct Impl;
    explicit RingRank(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

}  // namespace faultline
