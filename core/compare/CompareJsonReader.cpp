#include "CompareJsonReader.h"

#include <limits>

#include "SignatureAxes.h"

namespace faultline {

using nlohmann::json;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Thrown inside the readers below, turned into one error naming the source.
struct BadMember {
    std::string what;
};

double statOf(const json& v, double ifNull = kNaN)
{
    return v.is_null() ? ifNull : v.get<double>();
}

double valueOf(const json& v)
{
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        if (s == "nan") return kNaN;
        if (s == "inf") return kInf;
        if (s == "-inf") return -kInf;
        throw BadMember{"a value is the string '" + s + "'"};
    }
    return v.get<double>();
}

std::optional<uint64_t> indexOf(const json& v)
{
    return v.is_null() ? std::nullopt : std::optional<uint64_t>(v.get<uint64_t>());
}

std::optional<Region> regionOf(const json& v)
{
    if (v.is_null()) return std::nullopt;
    const json &rows = v.at("rows"), &cols = v.at("cols");
    return Region{rows.at(0).get<uint64_t>(), rows.at(1).get<uint64_t>(), cols.at(0).get<uint64_t>(),
                  cols.at(1).get<uint64_t>()};
}

void decadesOf(const json& v, DecadeHistogram& h)
{
    if (v.at("min_decade").get<int>() != DecadeHistogram::kMinDecade ||
        v.at("max_decade").get<int>() != DecadeHistogram::kMaxDecade)
        throw BadMember{"a histogram's decades are not " + std::to_string(DecadeHistogram::kMinDecade) +
                        ".." + std::to_string(DecadeHistogram::kMaxDecade)};
    h.zero = v.at("zero").get<uint64_t>();
    h.decades = v.at("decades").get<std::array<uint64_t, DecadeHistogram::kDecades>>();
    h.infinite = v.at("infinite").get<uint64_t>();
}

uint64_t bitsOf(const json& v)
{
    const std::string s = v.get<std::string>();
    if (s.size() < 3 || s.size() > 18 || s.compare(0, 2, "0x") != 0) throw BadMember{"bits '" + s + "'"};
    size_t used = 0;
    const uint64_t bits = std::stoull(s.substr(2), &used, 16);
    if (used != s.size() - 2) throw BadMember{"bits '" + s + "'"};
    return bits;
}

SignatureEvidence evidenceOf(const json& j)
{
    SignatureEvidence e;
    if (j.contains("bit")) e.bit = j["bit"].get<unsigned>();
    if (j.contains("value")) e.bitValue = j["value"].get<unsigned>();
    if (j.contains("field")) e.field = j["field"].get<std::string>();
    if (j.contains("tile_size")) {
        e.tileRows = j["tile_size"].at(0).get<uint64_t>();
        e.tileCols = j["tile_size"].at(1).get<uint64_t>();
    }
    if (j.contains("tiles"))
        for (const json& t : j["tiles"])
            e.tiles.emplace_back(t.at(0).get<uint64_t>(), t.at(1).get<uint64_t>());
    if (j.contains("lines")) e.lines = j["lines"].get<std::vector<uint64_t>>();
    if (j.contains("line_count")) e.lineCount = j["line_count"].get<uint64_t>();
    if (j.contains("stride")) e.stride = j["stride"].get<uint64_t>();
    if (j.contains("range")) e.range = {j["range"].at(0).get<uint64_t>(), j["range"].at(1).get<uint64_t>()};
    if (j.contains("period")) {
        e.period = j["period"].get<uint64_t>();
        e.runLength = j.at("run_length").get<uint64_t>();
    }
    return e;
}

SignatureKind kindOf(const json& v)
{
    const std::string name = v.get<std::string>();
    const auto kind = parseSignatureKind(name);
    if (!kind) throw BadMember{"unknown signature kind '" + name + "'"};
    return *kind;
}

Signature signatureOf(const json& j)
{
    Signature s;
    s.kind = kindOf(j.at("kind"));
    const auto what = parseSignatureWhat(j.at("what").get<std::string>());
    const auto where = parseSignatureWhere(j.at("where").get<std::string>());
    if (!what || !where) throw BadMember{"unknown signature axis"};
    s.what = *what;
    s.where = *where;
    s.confidence = statOf(j.at("confidence"));
    s.detail = j.at("detail").get<std::string>();
    s.evidence = evidenceOf(j);
    for (const json& f : j.at("secondary"))
        s.secondary.push_back({kindOf(f.at("kind")), statOf(f.at("confidence")),
                               f.at("detail").get<std::string>(), evidenceOf(f)});
    return s;
}

BitFlips flipsOf(const json& flips, const json* toOne = nullptr)
{
    BitFlips b;
    b.flips = flips.get<std::vector<uint64_t>>();
    b.toOne = toOne ? toOne->get<std::vector<uint64_t>>() : std::vector<uint64_t>(b.flips.size(), 0);
    if (b.toOne.size() != b.flips.size()) throw BadMember{"bit_to_one and bit_histogram differ in length"};
    return b;
}

Divergence divergenceOf(const json& j)
{
    Divergence d;
    d.name = j.at("name").get<std::string>();
    d.suspectName = j.at("suspect_name").get<std::string>();
    d.referenceName = j.at("reference_name").get<std::string>();
    const std::string dtype = j.at("dtype").get<std::string>();
    const auto parsed = parseDTypeName(dtype);
    if (!parsed) throw BadMember{"tensor '" + d.name + "': unknown dtype '" + dtype + "'"};
    d.dtype = *parsed;
    d.shape = j.at("shape").get<std::vector<uint64_t>>();
    d.rows = j.at("rows").get<uint64_t>();
    d.cols = j.at("cols").get<uint64_t>();
    d.tolerance = j.at("tolerance").get<std::string>();
    d.elements = j.at("elements").get<uint64_t>();
    d.mismatches = j.at("mismatches").get<uint64_t>();
    d.beyondTolerance = j.at("beyond_tolerance").get<uint64_t>();
    d.anomalies = j.at("anomalies").get<uint64_t>();
    d.finitePairs = j.at("finite_pairs").get<uint64_t>();
    d.firstMismatch = indexOf(j.at("first_mismatch"));
    d.firstBeyond = indexOf(j.at("first_beyond"));
    d.nanIntroduced = j.at("nan_introduced").get<uint64_t>();
    d.nanRemoved = j.at("nan_removed").get<uint64_t>();
    d.infIntroduced = j.at("inf_introduced").get<uint64_t>();
    d.infRemoved = j.at("inf_removed").get<uint64_t>();
    d.infSignChanged = j.at("inf_sign_changed").get<uint64_t>();
    d.nanPayloadChanged = j.at("nan_payload_changed").get<uint64_t>();
    d.nonFiniteMismatches = j.at("nonfinite_mismatches").get<uint64_t>();
    d.absError.max = statOf(j.at("max_abs_error"), kInf);
    d.absError.mean = statOf(j.at("mean_abs_error"));
    d.absError.rms = statOf(j.at("rms_abs_error"));
    d.relError.max = statOf(j.at("max_rel_error"), kInf);
    d.relError.mean = statOf(j.at("mean_rel_error"));
    d.relError.rms = statOf(j.at("rms_rel_error"));
    d.relInfinite = j.at("rel_infinite").get<uint64_t>();
    d.maxUlp = j.at("max_ulp").get<uint64_t>();
    d.ulpHistogram = j.at("ulp_histogram").get<std::array<uint64_t, 65>>();
    decadesOf(j.at("abs_histogram"), d.absError.histogram);
    decadesOf(j.at("rel_histogram"), d.relError.histogram);
    d.bits = flipsOf(j.at("bit_histogram"), &j.at("bit_to_one"));
    d.beyondBits = flipsOf(j.at("beyond_bit_histogram"));
    d.anomalyBits = flipsOf(j.at("anomaly_bit_histogram"));
    d.region = regionOf(j.at("region"));
    d.beyondRegion = regionOf(j.at("beyond_region"));
    d.signature = signatureOf(j.at("signature"));
    for (const json& e : j.at("top")) {
        ElementDiff x;
        x.index = e.at("index").get<uint64_t>();
        x.row = e.at("row").get<uint64_t>();
        x.col = e.at("col").get<uint64_t>();
        x.suspect = valueOf(e.at("suspect"));
        x.reference = valueOf(e.at("reference"));
        x.suspectBits = bitsOf(e.at("suspect_bits"));
        x.referenceBits = bitsOf(e.at("reference_bits"));
        x.nonFinite = e.at("nonfinite").get<bool>();
        x.ulp = e.at("ulp").is_null() ? 0 : e.at("ulp").get<uint64_t>();
        x.absError = statOf(e.at("abs_error"));
        x.relError = statOf(e.at("rel_error"), kInf);
        x.beyond = e.at("beyond").get<bool>();
        d.top.push_back(x);
    }
    return d;
}

template <typename F>
auto guarded(const std::string& source, F&& read) -> Result<decltype(read())>
{
    try {
        return read();
    } catch (const BadMember& e) {
        return fileError(source, "comparison JSON: " + e.what, ErrorCode::Format);
    } catch (const std::exception& e) {
        return fileError(
            source,
            std::string("comparison JSON: a member is missing or of the wrong type (") + e.what() + ")",
            ErrorCode::Format);
    }
}

}  // namespace

Result<Divergence> divergenceFromJson(const json& j, const std::string& source)
{
    return guarded(source, [&] { return divergenceOf(j); });
}

Result<CompareReport> compareReportFromJson(const json& j, const std::string& source)
{
    auto report = guarded(source, [&] {
        CompareReport r;
        r.suspect = j.at("suspect").get<std::string>();
        r.reference = j.at("reference").get<std::string>();
        for (const json& t : j.at("tensors")) r.tensors.push_back(divergenceOf(t));
        for (const json& u : j.at("unpaired"))
            r.unpaired.push_back({u.at("side").get<std::string>(), u.at("name").get<std::string>()});
        for (const json& e : j.at("errors"))
            r.errors.push_back({e.at("name").get<std::string>(), e.at("message").get<std::string>()});
        for (const json& e : j.at("not_comparable"))
            r.notComparable.push_back({e.at("name").get<std::string>(), e.at("message").get<std::string>()});
        for (const json& n : j.at("not_compared"))
            r.notCompared.push_back({n.at("name").get<std::string>(), n.at("reason").get<std::string>()});
        return r;
    });
    if (!report) return report;
    const std::string tolerance = j.value("tolerance", std::string());
    auto parsed = parseTolerance(tolerance);
    if (!parsed)
        return fileError(source, "comparison JSON: tolerance '" + tolerance + "': " + parsed.message(),
                         ErrorCode::Format);
    report->tolerance = *parsed;
    return report;
}

}  // namespace faultline
