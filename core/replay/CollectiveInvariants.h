#pragma once
// Invariants of a collective op that hold whatever algorithm ran it (ring, tree, NVLS, ...),
// checked on the outputs every rank recorded (trace v1 collectives, docs/formats.md):
//   all_reduce      identical_bits: every rank holds the same bits (the ranks that differ from
//                   the majority are named, with their differing elements); golden: every rank's
//                   sum against the golden model
//   reduce_scatter  golden: rank r's block against block r of the golden reduction
//   all_gather      gathered_inputs: block s of rank d's output is rank s's input, bit for bit;
//                   a differing block names its source rank s and destination rank d
//   broadcast       root_input: every rank's output is the root's input, bit for bit (source:
//                   the root)
// The golden invariant is judged bit for bit where the result is exact in any order: max/min,
// and sums whose inputs are all integers with sum |x_r| <= 2^p (p: the dtype's significand
// bits), as nccl-tests' check does; otherwise within the op's error bound (the bound the
// recorded settings allow, golden/RecordedNumerics.h).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "../Result.h"
#include "../trace/Trace.h"

namespace faultline {

// One block that broke an invariant: what destination rank holds where source rank's bytes (or
// the majority's bits, or the golden) were due.
struct CollectiveFailure {
    std::optional<size_t> sourceRank;  // all_gather / broadcast: the rank the bytes came from
    size_t destinationRank = 0;        // the rank whose recorded output is wrong
    std::string source, destination;   // their labels ("" for no source)
    uint64_t elements = 0;             // elements of the block
    uint64_t differingElements = 0;    // bitwise (golden invariant: under the golden contract)
    uint64_t differingBytes = 0;
    std::optional<uint64_t> beyondBound;  // golden invariant judged within the bound
    std::string signature;                // the block's divergence signature (compare engine)
    std::string detail;                   // one line
};

struct InvariantCheck {
    std::string invariant;  // identical_bits | golden | gathered_inputs | root_input
    std::string judged;     // bitwise | bound
    bool holds = true;
    std::string detail;  // why it was judged this way, or what broke
    std::vector<CollectiveFailure> failures;
};

struct CollectiveInvariantReport {
    size_t index = 0;  // trace op index
    std::string op;
    std::vector<std::string> ranks;         // labels in rank order
    std::vector<std::string> missingRanks;  // ranks that recorded no output (not judged)
    std::vector<InvariantCheck> checks;     // empty when no rank's output could be judged
    std::string note;                       // why nothing was judged ("" when something was)
    bool holds() const;                     // every check holds
    std::string summary() const;            // one line: the first failure, or "holds"
};

// Checks the invariants of `op` (a collective: golden::isCollectiveOp). Errors: inputs or
// outputs that cannot be read, an op the golden model refuses (named after the file and op).
Result<CollectiveInvariantReport> checkCollectiveInvariants(const Trace& trace, const TraceOp& op);

// {"ranks", "missing_ranks", "holds", "note", "invariants": [{"invariant", "judged", "holds", "detail",
//  "failures": [{"source_rank", "source", "destination_rank", "destination", "elements",
//  "differing_elements", "differing_bytes", "beyond_bound", "signature", "detail"}]}]}
nlohmann::json collectiveInvariantJson(const CollectiveInvariantReport& report);

}  // namespace faultline
