#include "CompareJson.h"

#include <cmath>
#include <cstdio>

namespace faultline {

using nlohmann::json;

namespace {

json statNumber(double v)
{
    return std::isfinite(v) ? json(v) : json(nullptr);
}

json valueNumber(double v)
{
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return v;
}

json optionalIndex(const std::optional<uint64_t>& v)
{
    return v ? json(*v) : json(nullptr);
}

json regionJson(const std::optional<Region>& r)
{
    if (!r) return nullptr;
    return json{{"rows", {r->rowBegin, r->rowEnd}}, {"cols", {r->colBegin, r->colEnd}}};
}

json decadesJson(const DecadeHistogram& h)
{
    return json{{"min_decade", DecadeHistogram::kMinDecade},
                {"max_decade", DecadeHistogram::kMaxDecade},
                {"zero", h.zero},
                {"decades", h.decades},
                {"infinite", h.infinite}};
}

void addEvidence(json& j, const SignatureEvidence& e)
{
    if (e.bit) j["bit"] = *e.bit;
    if (e.bitValue) j["value"] = *e.bitValue;
    if (!e.field.empty()) j["field"] = e.field;
    if (e.tileRows != 0) j["tile_size"] = {e.tileRows, e.tileCols};
    if (!e.tiles.empty()) {
        json tiles = json::array();
        for (const auto& [r, c] : e.tiles) tiles.push_back({r, c});
        j["tiles"] = std::move(tiles);
    }
    if (!e.lines.empty()) j["lines"] = e.lines;
    if (e.lineCount != 0) j["line_count"] = e.lineCount;
    if (e.stride != 0) j["stride"] = e.stride;
    if (e.range) j["range"] = {e.range->first, e.range->second};
    if (e.period != 0) {
        j["period"] = e.period;
        j["run_length"] = e.runLength;
    }
}

json findingJson(SignatureKind kind, double confidence, const std::string& detail, const SignatureEvidence& e)
{
    json j{{"kind", std::string(signatureKindName(kind))},
           {"confidence", statNumber(confidence)},
           {"detail", detail}};
    addEvidence(j, e);
    return j;
}

json tileLevelJson(const TileLevel& l)
{
    json j{{"tile_size", {l.tileRows, l.tileCols}}, {"grid", {l.gridRows, l.gridCols}}};
    j["mismatches"] = l.mismatches;
    j["beyond"] = l.beyond;
    j["anomalies"] = l.anomalies;
    json err = json::array();
    for (double v : l.maxAbsError) err.push_back(statNumber(v));
    j["max_abs_error"] = std::move(err);
    return j;
}

}  // namespace

std::string bitsToHex(uint64_t value, unsigned bits)
{
    char buf[32];
    const int digits = int(std::max(1u, (bits + 3) / 4));
    std::snprintf(buf, sizeof buf, "0x%0*llx", digits, static_cast<unsigned long long>(value));
    return buf;
}

json signatureToJson(const Signature& s)
{
    json j = findingJson(s.kind, s.confidence, s.detail, s.evidence);
    j["what"] = std::string(signatureWhatName(s.what));
    j["where"] = std::string(signatureWhereName(s.where));
    json secondary = json::array();
    for (const SignatureFinding& f : s.secondary)
        secondary.push_back(findingJson(f.kind, f.confidence, f.detail, f.evidence));
    j["secondary"] = std::move(secondary);
    return j;
}

json divergenceToJson(const Divergence& d, const CompareJsonOptions& options)
{
    const unsigned width = bitLayout(d.dtype).totalBits;
    json j;
    j["name"] = d.name;
    j["suspect_name"] = d.suspectName;
    j["reference_name"] = d.referenceName;
    j["dtype"] = std::string(dtypeName(d.dtype));
    j["shape"] = d.shape;
    j["rows"] = d.rows;
    j["cols"] = d.cols;
    j["tolerance"] = d.tolerance;
    j["elements"] = d.elements;
    j["mismatches"] = d.mismatches;
    j["beyond_tolerance"] = d.beyondTolerance;
    j["anomalies"] = d.anomalies;
    j["finite_pairs"] = d.finitePairs;
    j["first_mismatch"] = optionalIndex(d.firstMismatch);
    j["first_beyond"] = optionalIndex(d.firstBeyond);
    j["nan_introduced"] = d.nanIntroduced;
    j["nan_removed"] = d.nanRemoved;
    j["inf_introduced"] = d.infIntroduced;
    j["inf_removed"] = d.infRemoved;
    j["inf_sign_changed"] = d.infSignChanged;
    j["nan_payload_changed"] = d.nanPayloadChanged;
    j["nonfinite_mismatches"] = d.nonFiniteMismatches;
    j["max_abs_error"] = statNumber(d.absError.max);
    // The error maxima are over finite pairs; this says so, and counts the NaN/Inf beside them.
    j["max_error_note"] = maxErrorText(d);
    j["nonfinite_introduced"] = nonFiniteIntroduced(d);
    j["mean_abs_error"] = statNumber(d.absError.mean);
    j["rms_abs_error"] = statNumber(d.absError.rms);
    j["max_rel_error"] = statNumber(d.relError.max);
    j["mean_rel_error"] = statNumber(d.relError.mean);
    j["rms_rel_error"] = statNumber(d.relError.rms);
    j["rel_infinite"] = d.relInfinite;
    j["max_ulp"] = d.maxUlp;
    j["ulp_histogram"] = d.ulpHistogram;
    j["abs_histogram"] = decadesJson(d.absError.histogram);
    j["rel_histogram"] = decadesJson(d.relError.histogram);
    j["bit_histogram"] = d.bits.flips;
    json fields = json::array();
    json toZero = json::array();
    for (unsigned b = 0; b < width; ++b) {
        fields.push_back(std::string(bitFieldName(d.dtype, b)));
        toZero.push_back(b < d.bits.flips.size() ? d.bits.toZero(b) : 0);
    }
    j["bit_fields"] = std::move(fields);
    j["bit_to_one"] = d.bits.toOne;
    j["bit_to_zero"] = std::move(toZero);
    j["beyond_bit_histogram"] = d.beyondBits.flips;
    j["anomaly_bit_histogram"] = d.anomalyBits.flips;
    j["region"] = regionJson(d.region);
    j["beyond_region"] = regionJson(d.beyondRegion);
    if (!d.tiles.levels().empty()) {
        const TileLevel& l0 = d.tiles.levels().front();
        j["tile"] = json{{"rows", l0.tileRows},
                         {"cols", l0.tileCols},
                         {"grid", {l0.gridRows, l0.gridCols}},
                         {"levels", d.tiles.levels().size()}};
    } else {
        j["tile"] = nullptr;
    }
    j["signature"] = signatureToJson(d.signature);
    json top = json::array();
    for (const ElementDiff& e : d.top) {
        top.push_back(json{{"index", e.index},
                           {"row", e.row},
                           {"col", e.col},
                           {"suspect", valueNumber(e.suspect)},
                           {"reference", valueNumber(e.reference)},
                           {"suspect_bits", bitsToHex(e.suspectBits, width)},
                           {"reference_bits", bitsToHex(e.referenceBits, width)},
                           {"nonfinite", e.nonFinite},
                           {"ulp", e.nonFinite ? json(nullptr) : json(e.ulp)},
                           {"abs_error", statNumber(e.absError)},
                           {"rel_error", statNumber(e.relError)},
                           {"beyond", e.beyond}});
    }
    j["top"] = std::move(top);
    if (options.tiles) {
        json levels = json::array();
        if (d.tiles.hasCounts())
            for (const TileLevel& l : d.tiles.levels()) levels.push_back(tileLevelJson(l));
        j["tiles"] = std::move(levels);
    }
    if (options.spatial) {
        const SpatialProfile& s = d.spatial;
        j["spatial"] = json{{"row_bucket", s.rowBucket},
                            {"col_bucket", s.colBucket},
                            {"row_counts", s.rowCounts},
                            {"col_counts", s.colCounts},
                            {"first_anomaly", optionalIndex(s.firstAnomaly)},
                            {"last_anomaly", optionalIndex(s.lastAnomaly)},
                            {"first_indices", s.firstIndices},
                            {"spread_sample", s.spreadSample}};
    }
    return j;
}

json compareReportToJson(const CompareReport& r, const CompareJsonOptions& options)
{
    json j;
    j["suspect"] = r.suspect;
    j["reference"] = r.reference;
    j["tolerance"] = r.tolerance.toString();
    json tensors = json::array();
    for (const Divergence& d : r.tensors) tensors.push_back(divergenceToJson(d, options));
    j["tensors"] = std::move(tensors);
    json unpaired = json::array();
    for (const UnpairedTensor& u : r.unpaired) unpaired.push_back(json{{"side", u.side}, {"name", u.name}});
    j["unpaired"] = std::move(unpaired);
    json errors = json::array();
    for (const PairError& e : r.errors) errors.push_back(json{{"name", e.name}, {"message", e.message}});
    j["errors"] = std::move(errors);
    json records = json::array();
    for (const RecordDivergence& d : r.records) records.push_back(recordDivergenceToJson(d));
    j["records"] = std::move(records);
    json notComparable = json::array();
    for (const PairError& e : r.notComparable)
        notComparable.push_back(json{{"name", e.name}, {"message", e.message}});
    j["not_comparable"] = std::move(notComparable);
    json notCompared = json::array();
    for (const NotCompared& n : r.notCompared)
        notCompared.push_back(json{{"name", n.name}, {"reason", n.reason}});
    j["not_compared"] = std::move(notCompared);
    uint64_t beyond = 0, identical = 0, recordsDiffer = 0;
    for (const Divergence& d : r.tensors) {
        beyond += d.beyondTolerance > 0;
        identical += d.mismatches == 0;
    }
    for (const RecordDivergence& d : r.records) recordsDiffer += d.mismatches > 0;
    j["summary"] = json{{"tensors", r.tensors.size()},
                        {"tensors_beyond_tolerance", beyond},
                        {"tensors_bit_identical", identical},
                        {"records", r.records.size()},
                        {"records_differ", recordsDiffer},
                        {"not_comparable", r.notComparable.size()},
                        {"not_compared", r.notCompared.size()},
                        {"unpaired", r.unpaired.size()},
                        {"errors", r.errors.size()},
                        {"differ", reportDiffers(r)}};
    return j;
}

json recordDivergenceToJson(const RecordDivergence& d)
{
    json j;
    j["name"] = d.name;
    j["suspect_name"] = d.suspectName;
    j["reference_name"] = d.referenceName;
    j["type"] = d.type;
    j["shape"] = d.nullSpace ? json(nullptr) : json(d.shape);
    j["elements"] = d.elements;
    j["values"] = d.values;
    j["mismatches"] = d.mismatches;
    j["mismatched_elements"] = d.mismatchedElements;
    json fields = json::array();
    for (const RecordFieldCount& f : d.fields)
        fields.push_back(
            json{{"name", f.name}, {"type", f.type}, {"values", f.values}, {"mismatches", f.mismatches}});
    j["fields"] = std::move(fields);
    json differences = json::array();
    for (const RecordDifference& x : d.differences)
        differences.push_back(json{{"element", x.element},
                                   {"field", x.field},
                                   {"value", x.value},
                                   {"suspect", x.suspect},
                                   {"reference", x.reference}});
    j["differences"] = std::move(differences);
    return j;
}

}  // namespace faultline
