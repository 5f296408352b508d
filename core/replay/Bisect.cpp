#include "Bisect.h"

#include <algorithm>
#include <sstream>

#include "../golden/CollectiveGolden.h"
#include "../golden/OpRegistry.h"
#include "../golden/RecordedNumerics.h"
#include "BoundCompare.h"
#include "TensorLoad.h"

namespace faultline {

namespace {

// A collective's invariants on every rank's output: one that fails is out of bound.
void judgeCollective(const Trace& trace, const TraceOp& op, BisectOp& b, std::vector<std::string>& warnings)
{
    auto report = checkCollectiveInvariants(trace, op);
    if (!report) {
        warnings.push_back(report.message());
        return;
    }
    if (!report->holds()) {
        const bool judged = b.verdict == BisectVerdict::Ok || b.verdict == BisectVerdict::Divergent;
        b.detail = report->summary() + (judged && !b.detail.empty() ? "; " + b.detail : std::string());
        b.verdict = BisectVerdict::Divergent;
    }
    b.collective = std::move(report).value();
}

// The invariants under the op's line, at most kShownFailures blocks each.
std::string collectiveInvariantText(const CollectiveInvariantReport& c)
{
    constexpr size_t kShownFailures = 8;
    std::ostringstream out;
    for (const InvariantCheck& check : c.checks) {
        out << "      " << (check.holds ? "✓ " : "✗ ") << check.invariant << " (" << check.judged << "): "
            << (check.holds ? check.detail : std::to_string(check.failures.size()) + " block(s) wrong")
            << "\n";
        for (size_t i = 0; i < check.failures.size() && i < kShownFailures; ++i)
            out << "        " << check.failures[i].detail << "\n";
        if (check.failures.size() > kShownFailures)
            out << "        ... and " << check.failures.size() - kShownFailures << " more\n";
    }
    if (c.checks.empty()) out << "      invariants not judged: " << c.note << "\n";
    if (!c.missingRanks.empty()) {
        out << "      not recorded, not judged:";
        for (const std::string& r : c.missingRanks) out << " " << r;
        out << "\n";
    }
    return out.str();
}

// The loose-bound warning: how many judged ops, and why each is loose (its bound model), grouped
// by model with the ops it covers.
std::string looseBoundSummary(const std::vector<BisectOp>& ops)
{
    constexpr size_t kShownOps = 6;
    std::vector<std::pair<std::string, std::vector<size_t>>> groups;
    size_t loose = 0;
    for (const BisectOp& b : ops) {
        if (!b.boundLoose || (b.verdict != BisectVerdict::Ok && b.verdict != BisectVerdict::Divergent))
            continue;
        ++loose;
        const std::string key = b.op + ": " + b.boundModel;
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
        if (it == groups.end()) it = groups.insert(groups.end(), {key, {}});
        it->second.push_back(b.index);
    }
    if (!loose) return {};
    std::string text = std::to_string(loose) +
                       " of the judged op(s) had a loose bound from their recorded "
                       "settings, where a corruption smaller than the bound is not seen:";
    for (const auto& [model, indices] : groups) {
        text +=
            " " + std::to_string(indices.size()) + " × " + model + " (op" + (indices.size() > 1 ? "s" : "");
        for (size_t i = 0; i < indices.size() && i < kShownOps; ++i)
            text += (i ? ", " : " ") + std::to_string(indices[i]);
        if (indices.size() > kShownOps) text += ", …";
        text += ");";
    }
    text.pop_back();
    return text;
}

}  // namespace

Result<BisectReport> bisectTrace(const Trace& trace, const std::string& suspect,
                                 const std::function<void(size_t, size_t, const std::string&)>& progress,
                                 const std::atomic<bool>* cancel)
{
    bool known = false;
    std::string labels;
    for (const TraceDevice& d : trace.devices) {
        known = known || d.label == suspect;
        labels += (labels.empty() ? "" : ", ") + d.label;
    }
    if (!known)
        return Error{(trace.file ? trace.file->path() : std::string("trace")) + ": no device '" + suspect +
                     "' (devices: " + (labels.empty() ? "none" : labels) + ")"};
    BisectReport report;
    report.trace = trace.file ? trace.file->path() : "";
    report.suspect = suspect;
    report.warnings = trace.warnings;
    // A capture cut short (faultline_capture's complete = 0): what it holds is judged, but the
    // ops after the cut are missing.
    if (auto c = trace.attributes.find("complete"); c != trace.attributes.end() && c->second == "0") {
        const auto why = trace.attributes.find("stop_reason");
        report.warnings.push_back(
            report.trace + ": the capture is incomplete (complete = 0" +
            (why != trace.attributes.end() && !why->second.empty() ? ": " + why->second : "") +
            "): ops after the cut are not in the trace");
    }
    for (size_t i = 0; i < trace.ops.size(); ++i) {
        if (cancel && cancel->load()) {
            report.cancelled = true;
            break;
        }
        const TraceOp& op = trace.ops[i];
        if (progress)
            progress(i, trace.ops.size(), "op " + std::to_string(op.index) + " " + op.op + " " + op.name);
        BisectOp b;
        b.index = op.index;
        b.op = op.op;
        b.name = op.name;
        auto outs = op.outputs.find(suspect);
        if (!golden::findGoldenOp(op.op)) {
            b.verdict = BisectVerdict::Skipped;
            b.detail = "the golden model has no '" + op.op + "' op";
        } else if (outs == op.outputs.end() || outs->second.empty()) {
            b.verdict = BisectVerdict::Skipped;
            b.detail = suspect + " recorded no output for this op";
        } else {
            auto inputs = loadOpInputs(trace, op);
            auto recorded =
                inputs ? loadTensor(*trace.file, outs->second.front()) : Result<HostTensor>(inputs.error());
            // The golden model within the bound the recorded numerics allow, or the production
            // order itself (bound 0) where it is emulated (golden/RecordedNumerics.h).
            auto reference = recorded ? golden::recordedReference(op.op, *inputs, op.params)
                                      : Result<golden::RecordedReference>(recorded.error());
            if (reference) {
                b.boundModel = reference->judgement.model;
                b.boundLoose = reference->judgement.loose;
            }
            auto gold = reference ? Result<HostTensor>(std::move(reference->expected))
                                  : Result<HostTensor>(reference.error());
            auto bound = reference ? Result<std::vector<double>>(std::move(reference->bound))
                                   : Result<std::vector<double>>(reference.error());
            // reduce_scatter: the suspect recorded its own block of the reduction.
            auto rows = bound ? golden::recordedRowsOf(op.op, op.params, suspect, gold->shape)
                              : Result<std::optional<golden::RowBlock>>(bound.error());
            if (rows && *rows) {
                *bound = golden::rowsOf(*bound, gold->shape, **rows);
                *gold = golden::rowsOf(*gold, **rows);
            } else if (!rows) {
                bound = rows.error();
            }
            if (!bound) {
                b.verdict = BisectVerdict::Error;
                b.detail = bound.message();
            } else if (recorded->dtype != gold->dtype || recorded->shape != gold->shape) {
                b.verdict = BisectVerdict::Divergent;
                b.detail = "recorded output is " + std::string(dtypeName(recorded->dtype)) + " " +
                           shapeToString(recorded->shape) + ", the op produces " +
                           std::string(dtypeName(gold->dtype)) + " " + shapeToString(gold->shape);
            } else {
                auto d = compareWithinBound(*recorded, *gold, *bound, 1.0, outs->second.front());
                if (!d) {
                    b.verdict = BisectVerdict::Error;
                    b.detail = d.message();
                } else {
                    b.verdict = d->beyondTolerance > 0 ? BisectVerdict::Divergent : BisectVerdict::Ok;
                    b.detail = d->signature.detail;
                    b.divergence = std::move(d).value();
                }
            }
        }
        if (golden::isCollectiveOp(op.op) && trace.file) judgeCollective(trace, op, b, report.warnings);
        if (b.verdict == BisectVerdict::Divergent && !report.firstDivergentOp)
            report.firstDivergentOp = b.index;
        if (b.verdict == BisectVerdict::Divergent || b.verdict == BisectVerdict::Ok) ++report.checkedOps;
        report.ops.push_back(std::move(b));
    }
    if (std::string why = looseBoundSummary(report.ops); !why.empty()) report.warnings.push_back(why);
    if (progress) progress(trace.ops.size(), trace.ops.size(), "done");
    return report;
}

nlohmann::json bisectJson(const BisectReport& report)
{
    nlohmann::json ops = nlohmann::json::array();
    for (const BisectOp& b : report.ops) {
        nlohmann::json j = {{"index", b.index},   {"op", b.op},
                            {"name", b.name},     {"verdict", nameOf(b.verdict)},
                            {"detail", b.detail}, {"bound_loose", b.boundLoose}};
        j["bound_model"] = b.boundModel.empty() ? nlohmann::json() : nlohmann::json(b.boundModel);
        if (b.divergence) {
            const Divergence& d = *b.divergence;
            j["elements"] = d.elements;
            j["mismatches"] = d.mismatches;
            j["beyond_tolerance"] = d.beyondTolerance;
            j["max_ulp"] = d.maxUlp;
            j["max_abs_error"] = d.absError.max;
            j["signature"] = std::string(signatureKindName(d.signature.kind));
            j["bit_histogram"] = d.bits.flips;
            if (d.beyondRegion)
                j["region"] = {{"rows", {d.beyondRegion->rowBegin, d.beyondRegion->rowEnd}},
                               {"cols", {d.beyondRegion->colBegin, d.beyondRegion->colEnd}}};
            else
                j["region"] = nullptr;
        } else {
            j["elements"] = nullptr;
            j["beyond_tolerance"] = nullptr;
            j["max_ulp"] = nullptr;
            j["signature"] = nullptr;
        }
        j["collective"] = b.collective ? collectiveInvariantJson(*b.collective) : nlohmann::json();
        ops.push_back(std::move(j));
    }
    return {{"trace", report.trace},
            {"suspect", report.suspect},
            {"first_divergent_op",
             report.firstDivergentOp ? nlohmann::json(*report.firstDivergentOp) : nlohmann::json()},
            {"checked_ops", report.checkedOps},
            {"ops", ops},
            {"warnings", report.warnings},
            {"cancelled", report.cancelled}};
}

std::string bisectText(const BisectReport& report)
{
    std::ostringstream out;
    out << "bisect " << report.trace << " against the golden model, suspect " << report.suspect << "\n";
    size_t divergent = 0;
    for (const BisectOp& b : report.ops) {
        if (b.verdict == BisectVerdict::Divergent) ++divergent;
        out << (b.verdict == BisectVerdict::Divergent ? "  ✗ "
                : b.verdict == BisectVerdict::Ok      ? "  ✓ "
                                                      : "  - ")
            << "op " << b.index << " " << b.op << " " << b.name << ": " << bisectVerdictName(b.verdict);
        if (b.divergence && b.divergence->mismatches)
            out << " (" << b.divergence->beyondTolerance << " of " << b.divergence->elements
                << " beyond bound, max " << b.divergence->maxUlp << " ulp, "
                << signatureKindName(b.divergence->signature.kind) << ")";
        if (b.verdict != BisectVerdict::Ok && !b.detail.empty()) out << " — " << b.detail;
        out << "\n";
        if (b.collective) out << collectiveInvariantText(*b.collective);
    }
    out << "checked " << report.checkedOps << " of " << report.ops.size() << " op(s)\n";
    if (report.firstDivergentOp)
        out << "first divergent op: " << *report.firstDivergentOp << " (" << divergent
            << " divergent op(s) in all)\n";
    else if (report.checkedOps == 0)
        out << "no op could be checked: no verdict\n";
    else
        out << "no op left its error bound\n";
    for (const std::string& w : report.warnings) out << "warning: " << w << "\n";
    return out.str();
}

}  // namespace faultline
