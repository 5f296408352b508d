#pragma once
// The results file of `faultline compare --out RESULT.h5`: everything the GUI needs to draw a
// comparison without recomputing it.
//
//   /                         faultline_format="compare", faultline_version=1, suspect, reference,
//                             tolerance
//   /report_json              uint8: the `compare --json` document (UTF-8)
//   /pairs/<NNNNNN>           attrs name, dtype, rows, cols (one group per compared tensor, in
//                             report order)
//   /pairs/<NNNNNN>/tiles/<L> attrs tile_rows, tile_cols, grid_rows, grid_cols; datasets
//                             mismatches, beyond, anomalies (uint64 [grid_rows, grid_cols]) and
//                             max_abs_error (float64, +inf where a NaN/Inf mismatch lies)
#include <string>

#include "../Result.h"
#include "CompareRun.h"

namespace faultline {

inline constexpr int kCompareResultsVersion = 1;

Status writeCompareResults(const std::string& path, const CompareReport& report);

}  // namespace faultline
