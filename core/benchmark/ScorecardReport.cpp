// The scorecard's JSON and text (Scorecard.h).
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "Scorecard.h"

namespace faultline {

using nlohmann::json;

namespace {

constexpr size_t kKinds = size_t(SignatureKind::Scattered) + 1;
const char* const kGroups[] = {"single_pattern", "single", "bit_sweep", "combined", "clean"};

std::string percent(double fraction)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * fraction);
    return buf;
}

json axesJson(SignatureKind k, SignatureWhat what, SignatureWhere where)
{
    return json{{"kind", std::string(signatureKindName(k))},
                {"what", std::string(signatureWhatName(what))},
                {"where", std::string(signatureWhereName(where))}};
}

json accuracyJson(const SignatureAccuracy& a)
{
    auto rate = [&](uint64_t n) { return a.cases ? double(n) / double(a.cases) : 0.0; };
    return json{{"cases", a.cases},
                {"kind", rate(a.kind)},
                {"what", rate(a.what)},
                {"where", rate(a.where)},
                {"kind_right", a.kind}};
}

bool singlePattern(const CaseResult& c)
{
    return c.spec.group == "single" || c.spec.group == "bit_sweep";
}

// Detection rates per detector over the cases `select` accepts, grouped by `key`.
template <class Key, class Select>
std::map<Key, std::pair<uint64_t, std::vector<uint64_t>>> detectionBy(const Scorecard& s,
                                                                      Key (*key)(const CaseResult&),
                                                                      Select select)
{
    std::map<Key, std::pair<uint64_t, std::vector<uint64_t>>> out;
    for (const CaseResult& c : s.cases) {
        if (!select(c)) continue;
        auto& [n, hits] = out[key(c)];
        hits.resize(s.detectors.size(), 0);
        ++n;
        for (size_t d = 0; d < c.flagged.size(); ++d) hits[d] += c.flagged[d] ? 1 : 0;
    }
    return out;
}

std::string patternKey(const CaseResult& c)
{
    return c.spec.pattern;
}
double rateKey(const CaseResult& c)
{
    return c.spec.rate;
}

json ratesJson(const Scorecard& s, uint64_t n, const std::vector<uint64_t>& hits)
{
    json j = json::object();
    for (size_t d = 0; d < s.detectors.size(); ++d)
        j[s.detectors[d].name] = n ? double(hits[d]) / double(n) : 0.0;
    return j;
}

bool corrupted(const CaseResult& c)
{
    return c.spec.group != "clean";
}

}  // namespace

json scorecardToJson(const Scorecard& s)
{
    json j;
    j["format"] = "faultline-benchmark";
    j["version"] = 1;
    const PatternSetOptions& p = s.options.patterns;
    j["seed"] = p.seed;
    j["tolerance"] = s.options.tolerance;
    json sizes = json::array();
    for (const auto& [r, c] : p.sizes) sizes.push_back({r, c});
    j["sizes"] = std::move(sizes);
    json dtypes = json::array();
    for (DType t : p.dtypes) dtypes.push_back(std::string(dtypeName(t)));
    j["dtypes"] = std::move(dtypes);
    json detectors = json::array();
    for (const DetectorInfo& d : s.detectors)
        detectors.push_back({{"name", d.name}, {"description", d.description}});
    j["detectors"] = std::move(detectors);
    j["target_accuracy"] = kTargetAccuracy;

    json accuracy = json::object();
    for (const char* g : kGroups) accuracy[g] = accuracyJson(signatureAccuracy(s, g));
    j["accuracy"] = std::move(accuracy);
    j["target_met"] = signatureAccuracy(s, "single_pattern").kindRate() >= kTargetAccuracy;

    // Confusion matrix of primary kinds on the single-pattern cases: rows = truth, cols = result.
    std::vector<std::vector<uint64_t>> matrix(kKinds, std::vector<uint64_t>(kKinds, 0));
    for (const CaseResult& c : s.cases)
        if (singlePattern(c)) ++matrix[size_t(c.truthKind)][size_t(c.gotKind)];
    json kinds = json::array();
    for (size_t k = 0; k < kKinds; ++k) kinds.push_back(std::string(signatureKindName(SignatureKind(k))));
    j["confusion"] = json{{"kinds", std::move(kinds)}, {"truth_by_result", matrix}};

    // False alarms on clean data.
    const auto clean =
        detectionBy<std::string>(s, patternKey, [](const CaseResult& c) { return !corrupted(c); });
    json falseAlarms = json::object();
    uint64_t cleanCases = 0;
    std::vector<uint64_t> cleanHits(s.detectors.size(), 0);
    for (const auto& [k, v] : clean) {
        cleanCases += v.first;
        for (size_t d = 0; d < v.second.size(); ++d) cleanHits[d] += v.second[d];
    }
    for (size_t d = 0; d < s.detectors.size(); ++d) falseAlarms[s.detectors[d].name] = cleanHits[d];
    j["false_alarms"] = json{{"clean_cases", cleanCases}, {"flagged", std::move(falseAlarms)}};

    json byPattern = json::array();
    for (const auto& [k, v] : detectionBy<std::string>(s, patternKey, corrupted)) {
        SignatureAccuracy a;
        for (const CaseResult& c : s.cases)
            if (c.spec.pattern == k) {
                ++a.cases;
                a.kind += c.gotKind == c.truthKind ? 1 : 0;
            }
        byPattern.push_back({{"pattern", k},
                             {"cases", v.first},
                             {"signature", a.kindRate()},
                             {"detected", ratesJson(s, v.first, v.second)}});
    }
    json byRate = json::array();
    for (const auto& [k, v] : detectionBy<double>(s, rateKey, [](const CaseResult& c) {
             return corrupted(c) && c.spec.rate > 0 && c.spec.group != "bit_sweep";
         }))
        byRate.push_back({{"rate", k}, {"cases", v.first}, {"detected", ratesJson(s, v.first, v.second)}});
    json byBit = json::array();
    for (const CaseResult& c : s.cases) {
        if (c.spec.group != "bit_sweep") continue;
        json flagged = json::object();
        for (size_t d = 0; d < s.detectors.size(); ++d) flagged[s.detectors[d].name] = bool(c.flagged[d]);
        byBit.push_back({{"dtype", std::string(dtypeName(c.spec.dtype))},
                         {"bit", c.spec.bit},
                         {"field", std::string(bitFieldName(c.spec.dtype, unsigned(c.spec.bit)))},
                         {"signature_right", c.gotKind == c.truthKind},
                         {"detected", std::move(flagged)}});
    }
    j["detection"] = json{
        {"by_pattern", std::move(byPattern)}, {"by_rate", std::move(byRate)}, {"by_bit", std::move(byBit)}};

    json misclassified = json::array();
    json cases = json::array();
    for (const CaseResult& c : s.cases) {
        json flagged = json::object();
        for (size_t d = 0; d < s.detectors.size(); ++d) flagged[s.detectors[d].name] = bool(c.flagged[d]);
        json one{{"id", patternCaseId(c.spec)},
                 {"group", c.spec.group},
                 {"pattern", c.spec.pattern},
                 {"dtype", std::string(dtypeName(c.spec.dtype))},
                 {"shape", {c.spec.rows, c.spec.cols}},
                 {"rate", c.spec.rate},
                 {"bit", c.spec.bit >= 0 ? json(c.spec.bit) : json(nullptr)},
                 {"value", c.spec.value >= 0 ? json(c.spec.value) : json(nullptr)},
                 {"noise", c.spec.noise},
                 {"planted", c.planted},
                 {"truth", axesJson(c.truthKind, c.truthWhat, c.truthWhere)},
                 {"result", axesJson(c.gotKind, c.gotWhat, c.gotWhere)},
                 {"detected", std::move(flagged)}};
        if (c.gotKind != c.truthKind)
            misclassified.push_back({{"id", one["id"]},
                                     {"truth", one["truth"]},
                                     {"result", one["result"]},
                                     {"detail", c.detail}});
        cases.push_back(std::move(one));
    }
    j["misclassified"] = std::move(misclassified);
    j["cases"] = std::move(cases);
    return j;
}

std::string scorecardText(const Scorecard& s)
{
    std::ostringstream out;
    const PatternSetOptions& p = s.options.patterns;
    out << "faultline benchmark: seed " << p.seed << ", tolerance " << s.options.tolerance << ", "
        << s.cases.size() << " cases, sizes";
    for (const auto& [r, c] : p.sizes) out << " " << r << "x" << c;
    out << "\n\nsignature accuracy (primary kind / what / where):\n";
    for (const char* g : kGroups) {
        const SignatureAccuracy a = signatureAccuracy(s, g);
        if (!a.cases) continue;
        char line[160];
        std::snprintf(line, sizeof line, "  %-15s %4llu cases  %6s  %6s  %6s\n", g,
                      static_cast<unsigned long long>(a.cases), percent(a.kindRate()).c_str(),
                      percent(double(a.what) / double(a.cases)).c_str(),
                      percent(double(a.where) / double(a.cases)).c_str());
        out << line;
    }
    const double single = signatureAccuracy(s, "single_pattern").kindRate();
    out << "  target: single-pattern kind accuracy >= " << percent(kTargetAccuracy) << ": "
        << (single >= kTargetAccuracy ? "met" : "NOT met") << "\n\n";

    out << "detection rate by pattern (";
    for (size_t d = 0; d < s.detectors.size(); ++d) out << (d ? ", " : "") << s.detectors[d].name;
    out << "):\n";
    for (const auto& [k, v] : detectionBy<std::string>(s, patternKey, corrupted)) {
        char line[64];
        std::snprintf(line, sizeof line, "  %-20s %4llu", k.c_str(),
                      static_cast<unsigned long long>(v.first));
        out << line;
        for (size_t d = 0; d < s.detectors.size(); ++d)
            out << "  " << percent(v.first ? double(v.second[d]) / double(v.first) : 0.0);
        out << "\n";
    }
    out << "detection rate by rate:\n";
    for (const auto& [k, v] : detectionBy<double>(s, rateKey, [](const CaseResult& c) {
             return corrupted(c) && c.spec.rate > 0 && c.spec.group != "bit_sweep";
         })) {
        char line[64];
        std::snprintf(line, sizeof line, "  rate %-15g %4llu", k, static_cast<unsigned long long>(v.first));
        out << line;
        for (size_t d = 0; d < s.detectors.size(); ++d)
            out << "  " << percent(v.first ? double(v.second[d]) / double(v.first) : 0.0);
        out << "\n";
    }
    // The bit sweep: which positions each detector misses, per dtype.
    std::map<std::string, std::vector<std::string>> bitsMissed;
    for (const CaseResult& c : s.cases) {
        if (c.spec.group != "bit_sweep") continue;
        auto& missed = bitsMissed[std::string(dtypeName(c.spec.dtype))];
        missed.resize(s.detectors.size());
        for (size_t d = 0; d < s.detectors.size(); ++d)
            if (!c.flagged[d]) missed[d] += (missed[d].empty() ? "" : ",") + std::to_string(c.spec.bit);
    }
    if (!bitsMissed.empty()) out << "bit positions missed (one bit flipped at 0.1% of the elements):\n";
    for (const auto& [dtype, missed] : bitsMissed) {
        out << "  " << dtype << ":";
        for (size_t d = 0; d < s.detectors.size(); ++d)
            out << " " << s.detectors[d].name << " [" << (missed[d].empty() ? "none" : missed[d]) << "]";
        out << "\n";
    }
    const auto clean =
        detectionBy<std::string>(s, patternKey, [](const CaseResult& c) { return !corrupted(c); });
    for (const auto& [k, v] : clean) {
        out << "false alarms on " << v.first << " clean cases:";
        for (size_t d = 0; d < s.detectors.size(); ++d)
            out << " " << s.detectors[d].name << " " << v.second[d];
        out << "\n";
    }

    // Confusion: only kinds that occur.
    std::map<std::pair<int, int>, uint64_t> cells;
    std::set<int> used;
    for (const CaseResult& c : s.cases)
        if (singlePattern(c)) {
            ++cells[{int(c.truthKind), int(c.gotKind)}];
            used.insert(int(c.truthKind));
            used.insert(int(c.gotKind));
        }
    out << "\nconfusion of primary kinds, single-pattern cases (row: planted, column: named):\n"
        << "                   ";
    for (int k : used) {
        char h[16];
        std::snprintf(h, sizeof h, " %5.5s", std::string(signatureKindName(SignatureKind(k))).c_str());
        out << h;
    }
    out << "\n";
    for (int t : used) {
        char line[32];
        std::snprintf(line, sizeof line, "  %-17s", std::string(signatureKindName(SignatureKind(t))).c_str());
        out << line;
        for (int g : used) {
            auto it = cells.find({t, g});
            char cell[16];
            std::snprintf(cell, sizeof cell, " %5llu",
                          static_cast<unsigned long long>(it == cells.end() ? 0 : it->second));
            out << cell;
        }
        out << "\n";
    }
    size_t shown = 0;
    for (const CaseResult& c : s.cases) {
        if (c.gotKind == c.truthKind) continue;
        if (shown++ == 0) out << "\nmisnamed:\n";
        if (shown > 40) {
            out << "  ...\n";
            break;
        }
        out << "  " << patternCaseId(c.spec) << ": planted " << signatureKindName(c.truthKind) << " ("
            << signatureWhatName(c.truthWhat) << "/" << signatureWhereName(c.truthWhere) << "), named "
            << signatureKindName(c.gotKind) << " (" << signatureWhatName(c.gotWhat) << "/"
            << signatureWhereName(c.gotWhere) << "): " << c.detail << "\n";
    }
    return out.str();
}

}  // namespace faultline
