#pragma once
// Joins the per-rank traces a distributed capture writes (one file per rank: its own ops with
// its own outputs and, for each collective, every rank's inputs with its own output) into one
// trace v1 (`faultline merge-traces`):
//   - devices: the union (one label with different identities in two files is an error);
//   - ops that are not collectives (or collectives without a `ranks` parameter) are kept per
//     rank, their tensor ids prefixed with the file's device label ("gpu1/t3"; "file2/t3"
//     when the file has no single device) so that ids of different files cannot collide;
//   - collectives are aligned by order per process group (the group is the `ranks` label list):
//     the k-th collective of a group in every file that records the group becomes one op, with
//     the inputs of the first such file and every file's outputs under their labels. Files that
//     disagree on the op, its input count, dtypes or shapes, reduce_op or root, or on how many
//     collectives the group had, are an error naming both files and the op positions;
//   - ops keep each file's order; a collective comes after every op its ranks recorded before
//     it, and ranks waiting on different collectives of crossing groups are an error;
//   - identical tensors (dtype, shape and bytes) are stored once.
// Written atomically (TraceWriter: PATH.tmp renamed to PATH).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../Result.h"
#include "../TensorFile.h"

namespace faultline {

struct MergedGroup {
    std::vector<std::string> ranks;  // the group's labels
    size_t collectives = 0;          // merged ops of this group
    std::vector<std::string> files;  // the files that recorded it
};

struct RankTraceMergeReport {
    std::string out;
    std::vector<std::string> files;
    std::vector<std::string> devices;  // labels, sorted
    size_t ops = 0;                    // ops written
    size_t rankOps = 0;                // of which kept per rank
    size_t collectives = 0;            // of which merged collectives
    size_t tensors = 0;                // tensors stored under /tensors
    size_t sharedTensors = 0;          // references that reused an identical stored tensor
    std::vector<MergedGroup> groups;
    std::vector<std::string> warnings;  // e.g. a rank of a group that no file recorded
};

// Errors (one line, naming the file): a file that cannot be read as a trace, `out` equal to an
// input, an input given twice, disagreeing ranks (above), a write failure.
Result<RankTraceMergeReport> mergeRankTraces(const std::vector<std::string>& files, const std::string& out,
                                             const OpenOptions& options = {});

// {"out", "files", "devices", "ops", "rank_ops", "collectives", "tensors", "shared_tensors",
//  "groups": [{"ranks", "collectives", "files"}], "warnings"}
nlohmann::json rankTraceMergeJson(const RankTraceMergeReport& report);

}  // namespace faultline
