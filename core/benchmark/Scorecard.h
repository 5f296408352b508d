#pragma once
// `faultline benchmark`: runs Faultline's comparison and the other detectors (Detectors.h) on
// the planted cases of the pattern library (PatternLibrary.h) and scores them: signature
// accuracy on both axes and the primary kind, a confusion matrix of kinds, detection rates by
// pattern, rate and bit position, and false alarms on clean data. Seeded: the same options give
// the same scorecard, byte for byte, on any machine and thread count.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../Result.h"
#include "PatternLibrary.h"

namespace faultline {

// The single-pattern signature accuracy (primary kind) the classifier must reach on any seed.
inline constexpr double kTargetAccuracy = 0.95;

struct BenchmarkOptions {
    PatternSetOptions patterns;
    std::string tolerance = "ulp:2";
    unsigned threads = 0;  // comparison threads (0: all cores); results do not depend on it
};

struct CaseResult {
    PatternSpec spec;
    uint64_t planted = 0;
    SignatureWhat truthWhat = SignatureWhat::None, gotWhat = SignatureWhat::None;
    SignatureWhere truthWhere = SignatureWhere::None, gotWhere = SignatureWhere::None;
    SignatureKind truthKind = SignatureKind::Identical, gotKind = SignatureKind::Identical;
    std::string detail;         // the signature's detail line
    std::vector<bool> flagged;  // per detector, in Scorecard::detectors order
};

struct DetectorInfo {
    std::string name, description;
};

struct Scorecard {
    BenchmarkOptions options;
    std::vector<DetectorInfo> detectors;
    std::vector<CaseResult> cases;
};

// Signature accuracy over the cases of some groups.
struct SignatureAccuracy {
    uint64_t cases = 0, kind = 0, what = 0, where = 0;
    double kindRate() const { return cases ? double(kind) / double(cases) : 0.0; }
};

// `groups`: single, combined, clean, bit_sweep; "single_pattern" = single + bit_sweep.
SignatureAccuracy signatureAccuracy(const Scorecard& s, const std::string& group);

// Progress: cases done, cases in all; return false to cancel.
using BenchmarkProgress = std::function<bool(size_t done, size_t total)>;

// Errors: bad pattern-set options or tolerance (Usage), cancellation (Cancelled).
Result<Scorecard> runBenchmark(const BenchmarkOptions& options, const BenchmarkProgress& progress = {});

// The public JSON (docs/formats.md: benchmark scorecard) and the text report.
nlohmann::json scorecardToJson(const Scorecard& s);
std::string scorecardText(const Scorecard& s);

}  // namespace faultline
