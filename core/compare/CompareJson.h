#pragma once
// The JSON form of comparison results (public: `faultline compare --json`). Document:
//
// {"suspect": path, "reference": path, "tolerance": "ulp:4",
//  "tensors": [{"name", "suspect_name", "reference_name", "dtype", "shape", "rows", "cols",
//               "elements", "mismatches", "beyond_tolerance", "anomalies", "finite_pairs",
//               "first_mismatch", "first_beyond",                       (flat index or null)
//               "nan_introduced", "nan_removed", "inf_introduced", "inf_removed",
//               "inf_sign_changed", "nan_payload_changed", "nonfinite_mismatches",
//               "max_abs_error", "mean_abs_error", "rms_abs_error",   (over finite pairs)
//               "max_error_note": "max |err| X, max N ulp[ among finite pairs; K NaN/Inf
//                                 introduced]" (or "no finite element differs; K NaN/Inf ..."),
//               "nonfinite_introduced": NaN introduced + Inf introduced + Inf sign changed,
//               "max_rel_error", "mean_rel_error", "rms_rel_error", "rel_infinite",
//               "max_ulp", "ulp_histogram": [65: bin 0 = 0 ulp, bin k = [2^(k-1), 2^k)],
//               "abs_histogram"/"rel_histogram": {"min_decade": -45, "max_decade": 38,
//                                                 "zero", "decades": [84], "infinite"},
//               "bit_histogram": [per bit, 0 = LSB], "bit_fields": ["mantissa", ...],
//               "bit_to_one": [...], "bit_to_zero": [...],
//               "beyond_bit_histogram": [...], "anomaly_bit_histogram": [...],
//               "region": {"rows": [r0, r1], "cols": [c0, c1]} or null (half-open),
//               "beyond_region": same,
//               "tile": {"rows", "cols", "grid": [grid rows, grid cols], "levels"},
//               "signature": {"kind", "what", "where", "confidence", "detail", evidence...,
//                             "secondary":
//                             [{"kind", "confidence", "detail", evidence...}]},
//               "top": [{"index", "row", "col", "suspect", "reference", "suspect_bits",
//                        "reference_bits", "nonfinite", "ulp", "abs_error", "rel_error",
//                        "beyond"}]}],
//  "unpaired": [{"side", "name"}], "errors": [{"name", "message"}],
//  "records": [{"name", "suspect_name", "reference_name", "type", "shape" (null: null dataspace),
//               "elements", "values", "mismatches", "mismatched_elements",
//               "fields": [{"name", "type", "values", "mismatches"}],
//               "differences": [{"element", "field", "value", "suspect", "reference"}]}],
//  "not_comparable": [{"name", "message"}], "not_compared": [{"name", "reason"}],
//  "summary": {"tensors", "tensors_beyond_tolerance", "tensors_bit_identical", "records",
//              "records_differ", "not_comparable", "not_compared", "unpaired", "errors", "differ"}}
//
// "records" are the datasets that are not tensors, compared for equality (RecordCompare.h);
// "not_comparable" pairs whose dtype, shape or element type differ; "not_compared" pairs that
// neither side can read value by value; "errors" pairs that could not be read and keys taken
// twice.
//
// Non-finite numbers: statistics (errors) are written as null (so "max_rel_error" is null when
// some relative error is infinite, counted in "rel_infinite"); element values in "top" as the
// strings "nan", "inf", "-inf" (they are data). Bit patterns are hex strings padded to the dtype
// width ("0x3f800000"). "ulp" is null for NaN/Inf pairs. Evidence members appear only when set:
// "bit", "value", "field", "tile_size": [rows, cols], "tiles": [[tile row, tile col], ...],
// "lines", "line_count", "stride", "range": [first, end), "period", "run_length".
#include <nlohmann/json.hpp>

#include "CompareRun.h"
#include "Divergence.h"

namespace faultline {

struct CompareJsonOptions {
    bool tiles = false;    // add "tiles": every pyramid level's counts (large)
    bool spatial = false;  // add "spatial": per-row/column anomaly counts and the samples (large)
};

nlohmann::json signatureToJson(const Signature& s);
nlohmann::json divergenceToJson(const Divergence& d, const CompareJsonOptions& options = {});
nlohmann::json compareReportToJson(const CompareReport& r, const CompareJsonOptions& options = {});
nlohmann::json recordDivergenceToJson(const RecordDivergence& d);

// "0x" + hex digits, zero-padded to `bits` / 4 digits.
std::string bitsToHex(uint64_t value, unsigned bits);

}  // namespace faultline
