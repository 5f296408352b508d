#include "Bisect.h"

#include <algorithm>
#include <sstream>

#include "../Text.h"
#include "../compare/TensorComparer.h"
#include "../golden/CollectiveGolden.h"
#include "../golden/OpRegistry.h"
#include "BoundCompare.h"
#include "RecordedReference.h"
#include "ReplicaPeers.h"
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

// The golden model's judgement of the suspect's first output (today's bisect): exact where the
// op's bound is 0 everywhere, else within the bound.
void judgeByGolden(const Trace& trace, const TraceOp& op, const std::string& suspect,
                   const std::string& recordedName, BisectOp& b)
{
    auto reference = goldenJudgeReference(trace, op, suspect, recordedName);
    if (!reference) {
        b.verdict = BisectVerdict::Error;
        b.detail = reference.message();
        return;
    }
    const GoldenJudgeReference& r = *reference;
    b.boundModel = r.model;
    b.boundLoose = r.loose;
    b.judge = std::all_of(r.bound.begin(), r.bound.end(), [](double e) { return e == 0.0; })
                  ? BisectJudge::GoldenExact
                  : BisectJudge::GoldenBound;
    if (r.recorded.dtype != r.expected.dtype || r.recorded.shape != r.expected.shape) {
        b.verdict = BisectVerdict::Divergent;
        b.detail = "recorded output is " + std::string(dtypeName(r.recorded.dtype)) + " " +
                   shapeToString(r.recorded.shape) + ", the op produces " +
                   std::string(dtypeName(r.expected.dtype)) + " " + shapeToString(r.expected.shape);
        return;
    }
    auto d = compareWithinBound(r.recorded, r.expected, r.bound, 1.0, recordedName);
    if (!d) {
        b.verdict = BisectVerdict::Error;
        b.detail = d.message();
        return;
    }
    b.verdict = d->beyondTolerance > 0 ? BisectVerdict::Divergent : BisectVerdict::Ok;
    b.detail = d->signature.detail;
    b.divergence = std::move(d).value();
}

std::string extraOf(const TraceDevice* d, const char* key)
{
    if (!d) return {};
    const auto it = d->extra.find(key);
    return it == d->extra.end() ? std::string() : it->second;
}

// Why `peer` cannot judge the op bit for bit ("" when it can): it ran on another kind of device
// than the op was recorded on, or (CUDA) another GPU model than the suspect, so its kernels may
// differ legitimately; no output for the op; fewer outputs than the suspect recorded; or
// determinism not shown.
std::string peerCannotJudge(const Trace& trace, const TraceOp& op, const std::string& peer,
                            const std::string& suspect, size_t suspectOutputs)
{
    const TraceDevice* peerDevice = findTraceDevice(trace, peer);
    const std::string peerType = extraOf(peerDevice, "device_type");
    const auto recordedType = op.params.find("device_type");
    if (!peerType.empty() && recordedType != op.params.end()) {
        const auto* type = std::get_if<std::string>(&recordedType->second);
        if (type && *type != peerType)
            return "peer " + peer + " ran on " + peerType + ", the op was recorded on " + *type;
    }
    const TraceDevice* suspectDevice = findTraceDevice(trace, suspect);
    if (peerType == "cuda" && peerDevice && suspectDevice && !peerDevice->name.empty() &&
        !suspectDevice->name.empty() && peerDevice->name != suspectDevice->name)
        return "peer " + peer + " is a " + peerDevice->name + ", the suspect a " + suspectDevice->name;
    const auto outs = op.outputs.find(peer);
    if (outs == op.outputs.end() || outs->second.empty()) return "peer " + peer + " recorded no output";
    const OutputReproducibility r = outputReproducibility(op, peer);
    if (!r.reproducible || (r.repeats && *r.repeats < 2))
        return "peer " + peer + " reproducibility unknown (rerun with --repeat 2)";
    if (!*r.reproducible)
        return "peer " + peer + " did not reproduce itself bit for bit" +
               (r.repeats ? " in " + std::to_string(*r.repeats) + " runs" : std::string());
    if (outs->second.size() < suspectOutputs)
        return "peer " + peer + " recorded " + std::to_string(outs->second.size()) +
               " output(s), the suspect " + std::to_string(suspectOutputs);
    return "";
}

// Every recorded output k of the suspect against the peer's output k, bit for bit (any
// differing bit is beyond tolerance, NaNs compared by their bits). The op's divergence is the
// first differing output's, else output 0's.
void judgeByPeer(const Trace& trace, const std::vector<std::string>& suspectOutputs,
                 const std::vector<std::string>& peerOutputs, const std::string& peer, BisectOp& b)
{
    b.judge = BisectJudge::Peer;
    b.judgeLabel = peer;
    b.peerOutputs = peerOutputs;
    CompareOptions options;
    options.tolerance = Tolerance::exact();
    options.threads = 1;  // small tensors, one op at a time
    const TensorComparer comparer(options);
    std::vector<size_t> differing;
    std::string firstDetail;
    bool keptDiffering = false;  // b.divergence is of an output that differs
    for (size_t k = 0; k < suspectOutputs.size(); ++k) {
        auto recorded = loadTensor(*trace.file, suspectOutputs[k]);
        auto reference =
            recorded ? loadTensor(*trace.file, peerOutputs[k]) : Result<HostTensor>(recorded.error());
        if (!reference) {
            b.verdict = BisectVerdict::Error;
            b.detail = reference.message();
            b.divergence.reset();
            return;
        }
        if (recorded->dtype != reference->dtype || recorded->shape != reference->shape) {
            differing.push_back(k);
            if (firstDetail.empty())
                firstDetail = "output " + std::to_string(k) + " is " +
                              std::string(dtypeName(recorded->dtype)) + " " + shapeToString(recorded->shape) +
                              ", " + peer + "'s " + std::string(dtypeName(reference->dtype)) + " " +
                              shapeToString(reference->shape);
            continue;
        }
        auto d = comparer.compare(recorded->dtype, recorded->shape, recorded->data.data(),
                                  reference->data.data(), suspectOutputs[k]);
        if (!d) {
            b.verdict = BisectVerdict::Error;
            b.detail = d.message();
            b.divergence.reset();
            return;
        }
        d->referenceName = peerOutputs[k];
        const bool differs = d->beyondTolerance > 0;
        if (differs) differing.push_back(k);
        if (differs && firstDetail.empty())
            firstDetail = (suspectOutputs.size() > 1 ? "output " + std::to_string(k) + ": " : std::string()) +
                          d->signature.detail;
        if (differs ? !keptDiffering : !b.divergence) {
            b.output = k;
            b.divergence = std::move(d).value();
            keptDiffering = differs;
        }
    }
    b.verdict = differing.empty() ? BisectVerdict::Ok : BisectVerdict::Divergent;
    if (differing.empty()) {
        b.detail = b.divergence ? b.divergence->signature.detail : std::string();
        return;
    }
    if (!keptDiffering) b.divergence.reset();  // only dtypes or shapes differ: no element comparison
    b.detail = firstDetail;
    if (differing.size() > 1) {
        std::string list;
        for (size_t k : differing) list += (list.empty() ? "" : ", ") + std::to_string(k);
        b.detail += " (outputs " + list + " of " + std::to_string(suspectOutputs.size()) + " differ from " +
                    peer + ")";
    }
}

// Data-parallel replicas of the suspect's op (ReplicaPeers.h): true when they judged it (or
// reading them failed: an error verdict); else `missing` gains why they could not.
bool judgeByReplicas(const Trace& trace, const ReplicaIndex& index, const TraceOp& op,
                     const std::string& suspect, const std::vector<std::string>& suspectOutputs, BisectOp& b,
                     std::string& missing, bool& loneReplicaDiffers)
{
    const std::vector<ReplicaOutputs> replicas = index.replicasOf(op, suspect);
    if (replicas.empty()) return false;
    auto decision = decideReplicas(trace, replicas, suspectOutputs);
    if (!decision) {
        b.verdict = BisectVerdict::Error;
        b.detail = decision.message();
        return true;
    }
    if (decision->judges.empty()) {
        missing += (missing.empty() ? "" : "; ") + decision->reason;
        loneReplicaDiffers = decision->loneReplicaDiffers;
        return false;
    }
    const ReplicaOutputs& first = decision->judges.front();
    judgeByPeer(trace, suspectOutputs, first.outputs, first.label, b);
    for (const ReplicaOutputs& r : decision->judges) b.replicas.push_back(r.label);
    return true;
}

std::string deviceList(const Trace& trace)
{
    std::string labels;
    for (const TraceDevice& d : trace.devices) labels += (labels.empty() ? "" : ", ") + d.label;
    return labels.empty() ? "none" : labels;
}

// The loose-bound warning: how many judged ops, and why each is loose (its bound model), grouped
// by model with the ops it covers.
std::string looseBoundSummary(const std::vector<BisectOp>& ops)
{
    constexpr size_t kShownOps = 6;
    std::vector<std::pair<std::string, std::vector<size_t>>> groups;
    size_t loose = 0;
    for (const BisectOp& b : ops) {
        if (!b.boundLoose || b.judge != BisectJudge::GoldenBound ||
            (b.verdict != BisectVerdict::Ok && b.verdict != BisectVerdict::Divergent))
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

Result<std::string> chooseBisectPeer(const Trace& trace, const BisectOptions& options,
                                     std::vector<std::string>* warnings)
{
    const std::string path = trace.file ? trace.file->path() : std::string("trace");
    if (options.noPeer) return std::string();
    if (!options.peer.empty()) {
        const bool known = std::any_of(trace.devices.begin(), trace.devices.end(),
                                       [&](const TraceDevice& d) { return d.label == options.peer; });
        if (!known || options.peer == options.suspect)
            return Error{path + ": peer '" + options.peer + "' " +
                             (known ? "is the suspect" : "is not a device of the trace") +
                             "; the peer must be a device other than the suspect '" + options.suspect +
                             "' (devices: " + deviceList(trace) + ")",
                         ErrorCode::Usage};
        return options.peer;
    }
    std::vector<std::string> reruns;
    for (const TraceDevice& d : trace.devices)
        if (d.source() == "rerun" && d.label != options.suspect) reruns.push_back(d.label);
    if (reruns.empty()) return std::string();
    if (reruns.size() > 1 && warnings) {
        std::string others;
        for (size_t i = 1; i < reruns.size(); ++i) others += (i > 1 ? ", " : "") + reruns[i];
        warnings->push_back(path + ": " + std::to_string(reruns.size()) +
                            " devices were rerun from the recorded inputs; judged against the first, " +
                            reruns.front() + " (not " + others + "); choose one with --peer");
    }
    return reruns.front();
}

Result<BisectReport> bisectTrace(const Trace& trace, const std::string& suspect,
                                 const BisectProgress& progress, const std::atomic<bool>* cancel)
{
    BisectOptions options;
    options.suspect = suspect;
    return bisectTrace(trace, options, progress, cancel);
}

Result<BisectReport> bisectTrace(const Trace& trace, const BisectOptions& options,
                                 const BisectProgress& progress, const std::atomic<bool>* cancel)
{
    const std::string& suspect = options.suspect;
    const bool known = std::any_of(trace.devices.begin(), trace.devices.end(),
                                   [&](const TraceDevice& d) { return d.label == suspect; });
    if (!known)
        return Error{(trace.file ? trace.file->path() : std::string("trace")) + ": no device '" + suspect +
                         "' (devices: " + deviceList(trace) + ")",
                     ErrorCode::Usage};
    BisectReport report;
    report.trace = trace.file ? trace.file->path() : "";
    report.suspect = suspect;
    report.warnings = trace.warnings;
    auto peer = chooseBisectPeer(trace, options, &report.warnings);
    if (!peer) return peer.error();
    report.peer = *peer;
    const ReplicaIndex replicas(trace);
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
        const bool recorded = outs != op.outputs.end() && !outs->second.empty() && trace.file;
        // Why the peer did not judge ("" when it did, or there is no peer).
        const std::string peerMissing =
            recorded && !report.peer.empty()
                ? peerCannotJudge(trace, op, report.peer, suspect, outs->second.size())
                : "";
        if (!recorded) {
            b.verdict = BisectVerdict::Skipped;
            b.detail = suspect + " recorded no output for this op";
        } else if (!report.peer.empty() && peerMissing.empty()) {
            judgeByPeer(trace, outs->second, op.outputs.at(report.peer), report.peer, b);
        } else {
            // Why neither the rerun peer nor replicas judged it ("" when there were none).
            std::string missing = peerMissing;
            bool loneReplicaDiffers = false;
            const bool byReplicas =
                !options.noPeer &&
                judgeByReplicas(trace, replicas, op, suspect, outs->second, b, missing, loneReplicaDiffers);
            if (byReplicas) {
                // judged bit for bit by replicas (or an error reading them)
            } else if (!golden::findGoldenOp(op.op)) {
                b.verdict = BisectVerdict::Skipped;
                b.detail =
                    (missing.empty() ? "" : missing + "; ") + "the golden model has no '" + op.op + "' op";
            } else {
                judgeByGolden(trace, op, suspect, outs->second.front(), b);
                if (!missing.empty()) b.judgeReason = missing + ": judged by the golden model";
                if (loneReplicaDiffers && b.verdict == BisectVerdict::Ok)
                    report.warnings.push_back("op " + std::to_string(op.index) + " " + op.op +
                                              ": inside the golden bound, but its bits differ from its one "
                                              "replica's; one of the two devices is wrong (a second replica "
                                              "or a rerun peer decides which)");
            }
        }
        if (golden::isCollectiveOp(op.op) && trace.file) judgeCollective(trace, op, b, report.warnings);
        const bool judged = b.verdict == BisectVerdict::Divergent || b.verdict == BisectVerdict::Ok;
        if (!judged || (b.judge == BisectJudge::None)) {
            b.judge = BisectJudge::None;
            b.judgeLabel.clear();
            b.judgeReason = b.detail;
        }
        if (b.verdict == BisectVerdict::Divergent && !report.firstDivergentOp)
            report.firstDivergentOp = b.index;
        if (judged) ++report.checkedOps;
        ++report.judgedBy[b.judge];
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
        j["output"] = b.divergence ? nlohmann::json(b.output) : nlohmann::json();
        j["judge"] = {
            {"kind", nameOf(b.judge)},
            {"label", b.judgeLabel.empty() ? nlohmann::json() : nlohmann::json(b.judgeLabel)},
            {"bound", b.judge == BisectJudge::GoldenBound ? nlohmann::json(b.boundLoose ? "loose" : "strict")
                                                          : nlohmann::json()},
            {"reason", b.judgeReason.empty() ? nlohmann::json() : nlohmann::json(b.judgeReason)},
            {"replicas", b.replicas.empty() ? nlohmann::json() : nlohmann::json(b.replicas)}};
        ops.push_back(std::move(j));
    }
    size_t byReplicas = 0;
    for (const BisectOp& b : report.ops) byReplicas += b.judge == BisectJudge::Peer && !b.replicas.empty();
    nlohmann::json judgedBy = nlohmann::json::object();
    for (BisectJudge k :
         {BisectJudge::Peer, BisectJudge::GoldenExact, BisectJudge::GoldenBound, BisectJudge::None}) {
        const auto it = report.judgedBy.find(k);
        judgedBy[nameOf(k)] = it == report.judgedBy.end() ? 0 : it->second;
    }
    return {{"trace", report.trace},
            {"suspect", report.suspect},
            {"peer", report.peer.empty() ? nlohmann::json() : nlohmann::json(report.peer)},
            {"judged_by", judgedBy},
            {"judged_by_replicas", byReplicas},
            {"first_divergent_op",
             report.firstDivergentOp ? nlohmann::json(*report.firstDivergentOp) : nlohmann::json()},
            {"checked_ops", report.checkedOps},
            {"ops", ops},
            {"warnings", report.warnings},
            {"cancelled", report.cancelled}};
}

std::string bisectJudgeText(const BisectOp& b)
{
    std::string text;
    switch (b.judge) {
        case BisectJudge::Peer:
            text = b.replicas.empty() ? "peer " + b.judgeLabel + ", bitwise"
                                      : "replica" + std::string(b.replicas.size() > 1 ? "s " : " ") +
                                            joinText(b.replicas) + ", bitwise";
            break;
        case BisectJudge::GoldenExact:
            text = "golden, exact";
            break;
        case BisectJudge::GoldenBound:
            text = std::string("golden bound, ") + (b.boundLoose ? "loose" : "strict");
            break;
        case BisectJudge::None:
            return "no judge";
    }
    return b.judgeReason.empty() ? text : text + " — " + b.judgeReason;
}

std::string bisectText(const BisectReport& report)
{
    std::ostringstream out;
    out << "bisect " << report.trace << ", suspect " << report.suspect;
    if (report.peer.empty())
        out << ", against the golden model\n";
    else
        out << ", bit for bit against peer " << report.peer
            << " where it reproduces itself, else against the golden model\n";
    size_t divergent = 0;
    for (const BisectOp& b : report.ops) {
        if (b.verdict == BisectVerdict::Divergent) ++divergent;
        out << (b.verdict == BisectVerdict::Divergent ? "  ✗ "
                : b.verdict == BisectVerdict::Ok      ? "  ✓ "
                                                      : "  - ")
            << "op " << b.index << " " << b.op << " " << b.name << ": " << bisectVerdictName(b.verdict)
            << " [" << bisectJudgeText(b) << "]";
        if (b.divergence && b.divergence->mismatches)
            out << " (" << b.divergence->beyondTolerance << " of " << b.divergence->elements
                << (b.judge == BisectJudge::Peer ? " differ" : " beyond bound") << ", max "
                << b.divergence->maxUlp << " ulp, " << signatureKindName(b.divergence->signature.kind) << ")";
        if (b.verdict != BisectVerdict::Ok && !b.detail.empty()) out << " — " << b.detail;
        out << "\n";
        if (b.collective) out << collectiveInvariantText(*b.collective);
    }
    out << "checked " << report.checkedOps << " of " << report.ops.size() << " op(s); judged by:";
    for (BisectJudge k :
         {BisectJudge::Peer, BisectJudge::GoldenExact, BisectJudge::GoldenBound, BisectJudge::None}) {
        const auto it = report.judgedBy.find(k);
        out << " " << bisectJudgeName(k) << " " << (it == report.judgedBy.end() ? 0 : it->second)
            << (k == BisectJudge::None ? "\n" : ",");
    }
    const size_t byReplicas =
        size_t(std::count_if(report.ops.begin(), report.ops.end(), [](const BisectOp& b) {
            return b.judge == BisectJudge::Peer && !b.replicas.empty();
        }));
    if (byReplicas > 0)
        out << "of the peer's: " << byReplicas
            << " op(s) judged by data-parallel replicas (the same op on the "
            << "same inputs on another device)\n";
    if (report.firstDivergentOp)
        out << "first divergent op: " << *report.firstDivergentOp << " (" << divergent
            << " divergent op(s) in all)\n";
    else if (report.checkedOps == 0)
        out << "no op could be checked: no verdict\n";
    else
        out << (report.peer.empty() && byReplicas == 0
                    ? "no op left its error bound\n"
                    : "no op differed from the peer or left its error bound\n");
    for (const std::string& w : report.warnings) out << "warning: " << w << "\n";
    return out.str();
}

}  // namespace faultline
