#pragma once
// The results file of `faultline compare --out RESULT.h5`: everything the GUI needs to draw a
// comparison without recomputing it.
//
//   /                         faultline_format="compare", faultline_version=1, suspect, reference,
//                             tolerance
//   /report_json              uint8: the `compare --json` document (UTF-8)
//   /pairs/<NNNNNN>           attrs name, dtype, rows, cols, report_rank (one group per compared
//                             tensor, NNNNNN = its position in pairing order; report_rank = its
//                             position in report_json "tensors", most severe first)
//   /pairs/<NNNNNN>/tiles/<L> attrs tile_rows, tile_cols, grid_rows, grid_cols; datasets
//                             mismatches, beyond, anomalies (uint64 [grid_rows, grid_cols]) and
//                             max_abs_error (float64, +inf where a NaN/Inf mismatch lies)
//
// Written as the run goes (CompareRun's tensor sink): each tensor's tiles go to the file when
// that tensor is done and can then be freed, so memory does not grow with the tensor count.
// The file appears under its name only when finish() succeeds (SnapshotWriter's PATH.tmp).
#include <cstddef>
#include <map>
#include <memory>
#include <string>

#include "../Result.h"
#include "CompareRun.h"

namespace faultline {

inline constexpr int kCompareResultsVersion = 1;

class SnapshotWriter;

class CompareResultsWriter {
public:
    static Result<CompareResultsWriter> create(const std::string& path);
    CompareResultsWriter(CompareResultsWriter&&) noexcept;
    CompareResultsWriter& operator=(CompareResultsWriter&&) noexcept;
    ~CompareResultsWriter();

    // One compared tensor: its group and tile pyramid (index: position in pairing order).
    Status addPair(size_t index, const Divergence& d);
    // The report (tensors already added by name), root attributes; closes the file.
    Status finish(const CompareReport& report);

private:
    CompareResultsWriter() = default;
    std::unique_ptr<SnapshotWriter> m_writer;
    std::map<std::string, std::string> m_groupByName;
};

// The whole file from a report that still holds its tiles (pairs numbered in report order).
Status writeCompareResults(const std::string& path, const CompareReport& report);

// The file read back for the GUI: the report (report_json, CompareJsonReader.h) with each
// tensor's tile pyramid from /pairs (matched by the group's name attribute; a tensor whose tiles
// are not stored keeps an empty pyramid). Refuses, naming the file and the problem: another
// format or version, a report_json over 64 MiB, a pyramid whose stored shapes differ from the
// geometry its tensor's "tile" member gives, more than 2^22 tiles in one level.
Result<CompareReport> readCompareResults(const std::string& path);

}  // namespace faultline
