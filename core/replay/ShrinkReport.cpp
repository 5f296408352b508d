// The JSON and text of `faultline shrink` (Shrink.h).
#include <cstdio>
#include <sstream>

#include "../Text.h"
#include "RulesOut.h"
#include "Shrink.h"
#include "StoppingRule.h"

namespace faultline {
namespace {

const char* endName(ShrinkEnd end)
{
    switch (end) {
        case ShrinkEnd::Done:
            return "done";
        case ShrinkEnd::Budget:
            return "budget";
        case ShrinkEnd::Cancelled:
            return "cancelled";
    }
    return "done";
}

nlohmann::json sideJson(const ShrinkSide& s)
{
    nlohmann::json inputs = nlohmann::json::array();
    for (const auto& [id, shape] : s.inputs) inputs.push_back({{"id", id}, {"shape", shape}});
    return {{"inputs", inputs},
            {"elements", s.elements},
            {"zero_elements", s.zeroElements},
            {"runs", s.rate.runs},
            {"failures", s.rate.failures},
            {"rate", s.rate.interval.rate},
            {"ci", {s.rate.interval.low, s.rate.interval.high}},
            {"ms_per_run", s.rate.runs ? nlohmann::json(s.rate.msPerRun) : nlohmann::json()}};
}

std::string shapesText(const ShrinkSide& s)
{
    std::string text;
    for (const auto& [id, shape] : s.inputs) {
        text += (text.empty() ? "" : ", ") + id + " [";
        for (size_t i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
        text += "]";
    }
    return text;
}

double ratio(double a, double b)
{
    return b > 0 ? a / b : 0;
}

}  // namespace

nlohmann::json shrinkJson(const ShrinkReport& r)
{
    nlohmann::json steps = nlohmann::json::array();
    for (const ShrinkStep& s : r.steps)
        steps.push_back(
            {{"what", s.what}, {"elements", s.elements}, {"runs", s.runs}, {"failures", s.failures}});
    const bool timed = r.reproduced && r.original.rate.msPerRun > 0 && r.minimal.rate.runs > 0;
    return {{"trace", r.trace},
            {"out", r.reproduced ? nlohmann::json(r.out) : nlohmann::json()},
            {"target", r.target},
            {"op", {{"index", r.opIndex}, {"op", r.op}, {"name", r.name}}},
            {"confidence", r.confidence},
            {"reproduced", r.reproduced},
            {"rules_out", rulesOutJson(r.original.rate.failures, r.original.rate.runs, r.confidence)},
            {"original", sideJson(r.original)},
            {"minimal", r.reproduced ? sideJson(r.minimal) : nlohmann::json()},
            {"minimal_reproduces", r.minimalReproduces},
            {"element_ratio",
             r.reproduced ? nlohmann::json(ratio(double(r.minimal.elements), double(r.original.elements)))
                          : nlohmann::json()},
            {"time_ratio", timed ? nlohmann::json(ratio(r.minimal.rate.msPerRun, r.original.rate.msPerRun))
                                 : nlohmann::json()},
            {"candidates", r.candidates},
            {"steps", steps},
            {"stopped_by", endName(r.end)},
            {"warnings", r.warnings}};
}

std::string shrinkText(const ShrinkReport& r)
{
    std::ostringstream out;
    out << "shrink op " << r.opIndex << " " << r.op << (r.name.empty() ? "" : " (" + r.name + ")") << " on "
        << r.target << "\n";
    if (!r.reproduced) {
        out << "  the op never failed: " << cleanRateText(r.original.rate.runs, r.confidence)
            << "; nothing to shrink, nothing written\n";
        for (const std::string& w : r.warnings) out << "warning: " << w << "\n";
        return out.str();
    }
    char line[256];
    out << "  original: " << r.original.elements << " elements (" << shapesText(r.original) << "), failed "
        << r.original.rate.failures << " of " << r.original.rate.runs
        << " runs: " << rateText(r.original.rate.interval) << " at " << confidenceText(r.confidence) << "\n";
    out << "  minimal:  " << r.minimal.elements << " elements (" << shapesText(r.minimal) << ")";
    if (r.minimal.zeroElements) out << ", " << r.minimal.zeroElements << " of them 0";
    out << ", failed " << r.minimal.rate.failures << " of " << r.minimal.rate.runs
        << " runs: " << rateText(r.minimal.rate.interval) << " ("
        << (r.minimalReproduces ? "inside" : "NOT inside") << " the original interval)\n";
    std::snprintf(line, sizeof line, "  elements: %.4g of the original (1/%.1f)",
                  ratio(double(r.minimal.elements), double(r.original.elements)),
                  ratio(double(r.original.elements), double(r.minimal.elements)));
    out << line;
    if (r.original.rate.msPerRun > 0 && r.minimal.rate.runs > 0) {
        std::snprintf(line, sizeof line, "; time per run: %.3g ms -> %.3g ms (ratio %.3g)",
                      r.original.rate.msPerRun, r.minimal.rate.msPerRun,
                      ratio(r.minimal.rate.msPerRun, r.original.rate.msPerRun));
        out << line;
    }
    out << "\n  " << r.candidates << " candidates replayed, " << r.steps.size() << " cuts kept"
        << (r.end == ShrinkEnd::Budget ? " (the budget ended the search)" : "") << ":\n";
    for (const ShrinkStep& s : r.steps)
        out << "    " << s.what << ": " << s.elements << " elements, failed " << s.failures << " of "
            << s.runs << "\n";
    out << "  written: " << r.out << " (replay it: faultline replay " << shellQuote(r.out) << " --targets "
        << shellQuote(r.target) << " --ops " << r.opIndex << ")\n";
    for (const std::string& w : r.warnings) out << "warning: " << w << "\n";
    return out.str();
}

}  // namespace faultline
