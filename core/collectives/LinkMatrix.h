#pragma once
// The per-directed-link matrix of a group of ranks: what the links view shows. One cell per
// (source rank, destination rank) with the transfers tested, those that failed, the corrupted
// bytes, the bandwidth, the signature and where the failing block's bytes can be read; per rank
// its label (target spec), its description and whether it was judged faulty. Built from a sweep
// (SweepReport, or its results file) or filled by any other producer of per-link records (a
// collective replay) through addLinkTransfers.
//
// Sweep results file (`faultline sweep --out`, docs/formats.md "Group sweeps"): root attributes
// faultline_format="sweep", faultline_version=1; /report_json (the sweep's JSON, uint8); per
// failing direction /links/<src>-<dst>/expected and /received (float32, the first failing
// repetition's block, attributes rep, total_bytes, truncated).
#include <atomic>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../DType.h"
#include "../Result.h"
#include "../compare/CompareRun.h"
#include "../io/MemoryTensorFile.h"
#include "Sweep.h"

namespace faultline {

// A file's group is refused above this many ranks (the matrix holds ranks² cells).
inline constexpr size_t kMaxLinkMatrixRanks = 1024;
// A stored block above this is refused when read back (the writer keeps 4 MiB by default).
inline constexpr uint64_t kMaxLinkBlockBytes = uint64_t(256) << 20;

struct LinkCell {
    size_t src = 0, dst = 0;
    uint64_t transfers = 0, failures = 0;  // repetitions tested and failed, over all rounds
    uint64_t corruptedBytes = 0;           // over all repetitions
    uint64_t bytesMoved = 0;               // for the bandwidth
    double seconds = 0;
    std::string signature;    // the signature of the failures ("" when none failed)
    bool faultyLink = false;  // judged a faulty link (both ends pass elsewhere)
    // The failing block's bytes: datasets of the results file ("" when none was stored).
    std::string blockExpected, blockReceived;
    uint32_t blockRep = 0;
    uint64_t blockBytes = 0, blockTotalBytes = 0;  // stored and before any cut

    bool tested() const { return transfers > 0; }
    bool hasBlock() const { return !blockReceived.empty(); }
    double gbps() const { return seconds > 0 ? double(bytesMoved) / seconds / 1e9 : 0.0; }
};

struct LinkMatrix {
    std::string kind;                       // what produced it: "sweep", "collective"
    std::string path;                       // the results file it was read from ("" when built in memory)
    std::vector<std::string> ranks;         // label (target spec) per rank
    std::vector<std::string> descriptions;  // per rank, in words ("" when unknown)
    std::vector<bool> faultyGpus;           // per rank
    std::vector<LinkCell> cells;            // ranks × ranks, row-major by source

    size_t size() const { return ranks.size(); }
    LinkCell& at(size_t src, size_t dst) { return cells[src * ranks.size() + dst]; }
    const LinkCell& at(size_t src, size_t dst) const { return cells[src * ranks.size() + dst]; }
    uint64_t maxCorruptedBytes() const;
    double maxGbps() const;
    size_t faultyLinkCount() const;
};

// An empty matrix over `ranks` (labels); every cell untested.
LinkMatrix makeLinkMatrix(std::string kind, std::vector<std::string> ranks);
// Adds records to cell (src, dst) (indices checked by the caller).
void addLinkTransfers(LinkMatrix& m, size_t src, size_t dst, uint64_t transfers, uint64_t failures,
                      uint64_t corruptedBytes, uint64_t bytesMoved, double seconds,
                      const std::string& signature);

// The matrix of a sweep: every direction of every round, the judged GPUs and links. Blocks are
// named as writeSweepResults stores them (linkBlockDataset), for the directions that kept one.
LinkMatrix linkMatrixFromSweep(const SweepReport& report);
// The same from the sweep's JSON (sweepJson); `path` names the source in errors. Malformed or
// out-of-range fields are errors (Format), never a crash.
Result<LinkMatrix> linkMatrixFromSweepJson(const nlohmann::json& report, const std::string& path);

// "links/<src>-<dst>/expected" or ".../received".
std::string linkBlockDataset(size_t src, size_t dst, bool received);

// Writes a sweep results file (layout above), atomically (PATH.tmp renamed at the end).
Status writeSweepResults(const std::string& path, const SweepReport& report);
// Whether `path` is a sweep results file (HDF5 with faultline_format="sweep"); Io/Format errors
// for a file that cannot be read at all.
Result<bool> isSweepResultsFile(const std::string& path);
// Whether `path` holds a link matrix: a sweep or a collective replay results file
// (`faultline collective --out`: faultline_format="collective", report_json, no blocks).
Result<bool> isLinkResultsFile(const std::string& path);
// The matrix of a sweep or a collective replay results file (readSweepLinkMatrix for a sweep).
Result<LinkMatrix> readLinkMatrix(const std::string& path);
// The matrix of a collective replay's JSON (collectiveJson: targets, gpus[], links[]); errors as
// for the sweep's.
Result<LinkMatrix> linkMatrixFromCollectiveJson(const nlohmann::json& report, const std::string& path);
// Reads a sweep results file's matrix with the blocks it stores. Errors name the file: not a
// sweep file, a newer version, a malformed report, a block of the wrong type or size.
Result<LinkMatrix> readSweepLinkMatrix(const std::string& path);

// The block of one cell compared with the compare engine: `received` (suspect) against
// `expected` (reference), as float32 words. The two in-memory files are named after the link
// ("<file> link 3->5 received") and hold one tensor, "link 3->5".
struct LinkBlockComparison {
    std::shared_ptr<MemoryTensorFile> received, expected;
    CompareReport report;
};
Result<LinkBlockComparison> compareLinkBlock(const LinkMatrix& matrix, size_t src, size_t dst,
                                             const std::atomic<bool>* cancel = nullptr);

}  // namespace faultline
