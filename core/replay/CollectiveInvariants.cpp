#include "CollectiveInvariants.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "../compare/SignatureAxes.h"
#include "../compare/TensorComparer.h"
#include "../golden/CollectiveGolden.h"
#include "../golden/OpRegistry.h"
#include "../golden/RecordedNumerics.h"
#include "BoundCompare.h"
#include "GoldenExact.h"
#include "TensorLoad.h"

namespace faultline {

namespace {

struct RankOutput {
    size_t rank = 0;
    std::string label;
    HostTensor tensor;
};

std::string rankName(size_t rank, const std::string& label)
{
    return "rank " + std::to_string(rank) + " (" + label + ")";
}

std::string describeTensor(const HostTensor& t)
{
    return std::string(dtypeName(t.dtype)) + " " + golden::shapeString(t.shape);
}

// The compare engine's signature of `got` against `expected` (same dtype and shape).
std::string signatureOf(const HostTensor& got, const HostTensor& expected)
{
    CompareOptions options;
    options.threads = 1;
    TensorComparer comparer(options);
    auto d = comparer.compare(got.dtype, got.shape, got.data.data(), expected.data.data(), "block");
    return d ? std::string(signatureKindName(d->signature.kind)) : std::string("unknown");
}

// A block that should hold `expected`'s bytes: nullopt when it does.
std::optional<CollectiveFailure> bitwiseBlock(const HostTensor& got, const HostTensor& expected)
{
    CollectiveFailure f;
    f.elements = expected.elementCount();
    if (got.dtype != expected.dtype || got.shape != expected.shape) {
        f.differingElements = f.elements;
        f.differingBytes = expected.byteCount();
        f.signature = "shape";
        f.detail = "holds " + describeTensor(got) + " where " + describeTensor(expected) + " was due";
        return f;
    }
    if (got.data == expected.data) return std::nullopt;
    const size_t size = dtypeSize(got.dtype);
    for (uint64_t i = 0; i < f.elements; ++i) {
        uint64_t bytes = 0;
        for (size_t b = 0; b < size; ++b) bytes += got.data[i * size + b] != expected.data[i * size + b];
        f.differingBytes += bytes;
        f.differingElements += bytes != 0;
    }
    f.signature = signatureOf(got, expected);
    return f;
}

void fail(InvariantCheck& check, CollectiveFailure f)
{
    if (check.holds) check.detail = f.detail;
    check.holds = false;
    check.failures.push_back(std::move(f));
}

InvariantCheck identicalBits(const std::vector<RankOutput>& outputs)
{
    InvariantCheck check{"identical_bits", "bitwise", true, "", {}};
    // Groups of ranks with identical bits; the majority is the largest (the lowest rank on a tie).
    std::vector<std::vector<size_t>> groups;
    for (size_t i = 0; i < outputs.size(); ++i) {
        auto same = std::find_if(groups.begin(), groups.end(), [&](const std::vector<size_t>& g) {
            const HostTensor& a = outputs[g.front()].tensor;
            const HostTensor& b = outputs[i].tensor;
            return a.dtype == b.dtype && a.shape == b.shape && a.data == b.data;
        });
        if (same == groups.end())
            groups.push_back({i});
        else
            same->push_back(i);
    }
    if (groups.size() <= 1) {
        check.detail = std::to_string(outputs.size()) + " rank(s) hold identical bits";
        return check;
    }
    const auto majority = std::max_element(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
        return a.size() < b.size();  // the first largest group: the lowest rank wins a tie
    });
    std::string majorityRanks;
    for (size_t i : *majority) majorityRanks += (majorityRanks.empty() ? "" : ", ") + outputs[i].label;
    const HostTensor& reference = outputs[majority->front()].tensor;
    for (const auto& group : groups) {
        if (&group == &*majority) continue;
        for (size_t i : group) {
            auto f = bitwiseBlock(outputs[i].tensor, reference);
            if (!f) continue;
            f->destinationRank = outputs[i].rank;
            f->destination = outputs[i].label;
            f->detail = rankName(outputs[i].rank, outputs[i].label) + " differs from the majority (" +
                        majorityRanks + ") in " + std::to_string(f->differingElements) + " of " +
                        std::to_string(f->elements) + " elements (" + f->signature + ")";
            fail(check, std::move(*f));
        }
    }
    return check;
}

// Block s of every rank's output is rank s's input (all_gather); every rank's output is the
// root's input (broadcast).
InvariantCheck movedBytes(const std::string& op, const std::vector<HostTensor>& inputs,
                          const std::vector<RankOutput>& outputs, const std::vector<std::string>& labels,
                          size_t root)
{
    const bool gather = op == "all_gather";
    InvariantCheck check{gather ? "gathered_inputs" : "root_input", "bitwise", true, "", {}};
    const HostTensor expectedWhole = gather ? golden::concatenateRows(inputs) : inputs[root];
    for (const RankOutput& out : outputs) {
        if (out.tensor.dtype != expectedWhole.dtype || out.tensor.shape != expectedWhole.shape) {
            auto f = bitwiseBlock(out.tensor, expectedWhole);
            f->destinationRank = out.rank;
            f->destination = out.label;
            f->detail = rankName(out.rank, out.label) + " " + f->detail;
            fail(check, std::move(*f));
            continue;
        }
        const size_t blocks = gather ? inputs.size() : 1;
        for (size_t s = 0; s < blocks; ++s) {
            const size_t source = gather ? s : root;
            const HostTensor got =
                gather ? golden::rowsOf(out.tensor, {s * inputs[0].shape[0], inputs[0].shape[0]})
                       : out.tensor;
            auto f = bitwiseBlock(got, inputs[source]);
            if (!f) continue;
            f->sourceRank = source;
            f->source = labels[source];
            f->destinationRank = out.rank;
            f->destination = out.label;
            f->detail = "the block from " + rankName(source, labels[source]) + " on " +
                        rankName(out.rank, out.label) + ": " + std::to_string(f->differingBytes) +
                        " byte(s) differ in " + std::to_string(f->differingElements) + " of " +
                        std::to_string(f->elements) + " elements (" + f->signature + ")";
            fail(check, std::move(*f));
        }
    }
    if (check.holds)
        check.detail = std::to_string(outputs.size()) + " rank(s) hold " +
                       (gather ? "every rank's input" : rankName(root, labels[root]) + "'s input") +
                       " bit for bit";
    return check;
}

// Exact in any order: max/min, and sums of integers whose magnitudes add up to at most 2^p.
bool exactInAnyOrder(const std::string& reduceOp, const std::vector<HostTensor>& inputs)
{
    if (reduceOp == "max" || reduceOp == "min") return true;
    const double limit = 1.0 / golden::unitRoundoff(inputs[0].dtype);  // 2^p
    std::vector<double> sums(size_t(inputs[0].elementCount()), 0.0);
    for (const HostTensor& t : inputs) {
        const std::vector<double> v = golden::toDoubleVector(t);
        for (size_t i = 0; i < v.size() && i < sums.size(); ++i) {
            if (!std::isfinite(v[i]) || v[i] != std::floor(v[i])) return false;
            sums[i] += std::fabs(v[i]);
            if (sums[i] > limit) return false;
        }
    }
    return true;
}

Result<InvariantCheck> againstGolden(const TraceOp& op, const std::vector<HostTensor>& inputs,
                                     const std::vector<RankOutput>& outputs)
{
    auto reduceOp = golden::paramString(op.op, op.params, "reduce_op", std::string("sum"));
    if (!reduceOp) return reduceOp.error();
    auto gold = golden::runGolden(op.op, inputs, op.params);
    if (!gold) return gold.error();
    const bool exact = exactInAnyOrder(*reduceOp, inputs);
    InvariantCheck check{"golden", exact ? "bitwise" : "bound", true, "", {}};
    std::vector<double> bound;
    if (!exact) {
        const auto judgement = golden::recordedJudgement(op.op, op.params, inputs);
        auto b = golden::goldenErrorBound(op.op, inputs, op.params, *gold, judgement.options);
        if (!b) return b.error();
        bound = std::move(b).value();
    }
    for (const RankOutput& out : outputs) {
        auto rows = golden::recordedRowsOf(op.op, op.params, out.label, gold->shape);
        if (!rows) return rows.error();
        const HostTensor expected = *rows ? golden::rowsOf(*gold, **rows) : *gold;
        std::optional<CollectiveFailure> f;
        if (out.tensor.dtype != expected.dtype || out.tensor.shape != expected.shape) {
            f = bitwiseBlock(out.tensor, expected);
            f->detail =
                "holds " + describeTensor(out.tensor) + " where " + describeTensor(expected) + " was due";
        } else if (exact) {
            f = bitwiseBlock(out.tensor, expected);
            if (f) f->differingElements = goldenDifferingElements(out.tensor, expected);  // NaN = NaN
            if (f && f->differingElements == 0) f.reset();
            if (f)
                f->detail = std::to_string(f->differingElements) + " of " + std::to_string(f->elements) +
                            " elements differ from the exact " + *reduceOp + " (" + f->signature + ")";
        } else {
            const std::vector<double> b = *rows ? golden::rowsOf(bound, gold->shape, **rows) : bound;
            auto d = compareWithinBound(out.tensor, expected, b, 1.0, out.label, 1, 4);
            if (!d) return d.error();
            if (d->beyondTolerance > 0) {
                f = bitwiseBlock(out.tensor, expected);
                f->beyondBound = d->beyondTolerance;
                f->signature = std::string(signatureKindName(d->signature.kind));
                f->detail = std::to_string(d->beyondTolerance) + " of " + std::to_string(f->elements) +
                            " elements beyond the golden " + *reduceOp + "'s bound (" + f->signature + ")";
            }
        }
        if (!f) continue;
        f->destinationRank = out.rank;
        f->destination = out.label;
        f->detail = rankName(out.rank, out.label) + ": " + f->detail;
        fail(check, std::move(*f));
    }
    if (check.holds)
        check.detail = exact ? "inputs are integers whose " + *reduceOp + " is exact in " +
                                   std::string(dtypeName(inputs[0].dtype)) + ": judged bit for bit"
                             : "within the golden " + *reduceOp + "'s bound";
    if (*reduceOp == "max" || *reduceOp == "min") check.detail = *reduceOp + " is exact in any order";
    return check;
}

}  // namespace

bool CollectiveInvariantReport::holds() const
{
    return std::all_of(checks.begin(), checks.end(), [](const InvariantCheck& c) { return c.holds; });
}

std::string CollectiveInvariantReport::summary() const
{
    for (const InvariantCheck& c : checks)
        if (!c.holds)
            return op + " invariant " + c.invariant + " fails (" + std::to_string(c.failures.size()) +
                   " block(s)): " + c.detail;
    if (checks.empty()) return op + " invariants not judged: " + note;
    std::string names;
    for (const InvariantCheck& c : checks) names += (names.empty() ? "" : ", ") + c.invariant;
    return op + " invariants hold (" + names + ")";
}

Result<CollectiveInvariantReport> checkCollectiveInvariants(const Trace& trace, const TraceOp& op)
{
    CollectiveInvariantReport report;
    report.index = op.index;
    report.op = op.op;
    const std::string where = (trace.file ? trace.file->path() : std::string("trace")) + ": op " +
                              std::to_string(op.index) + " " + op.op + ": ";
    auto inputs = loadOpInputs(trace, op);
    if (!inputs) return Error{where + inputs.message(), inputs.error().code};
    report.ranks = golden::rankLabels(op.params);
    if (auto spec = golden::inferGoldenOutput(op.op, *inputs, op.params); !spec)
        return Error{where + spec.message(), ErrorCode::Format};
    if (report.ranks.size() != inputs->size()) {
        report.note = "the op names no ranks (parameter ranks), so whose output is whose is unknown";
        return report;
    }
    std::vector<RankOutput> outputs;
    for (size_t r = 0; r < report.ranks.size(); ++r) {
        const auto it = op.outputs.find(report.ranks[r]);
        if (it == op.outputs.end() || it->second.empty()) {
            report.missingRanks.push_back(report.ranks[r]);
            continue;
        }
        auto t = loadTensor(*trace.file, it->second.front());
        if (!t) return Error{where + t.message(), t.error().code};
        outputs.push_back({r, report.ranks[r], std::move(t).value()});
    }
    if (outputs.empty()) {
        report.note = "no rank recorded its output";
        return report;
    }
    if (op.op == "all_gather" || op.op == "broadcast") {
        size_t root = 0;
        if (auto it = op.params.find("root"); it != op.params.end())
            if (const auto* v = std::get_if<int64_t>(&it->second)) root = size_t(*v);  // validated above
        report.checks.push_back(movedBytes(op.op, *inputs, outputs, report.ranks, root));
        return report;
    }
    if (op.op == "all_reduce" && outputs.size() > 1) report.checks.push_back(identicalBits(outputs));
    auto golden = againstGolden(op, *inputs, outputs);
    if (!golden) return Error{where + golden.message(), ErrorCode::Format};
    report.checks.push_back(std::move(golden).value());
    return report;
}

nlohmann::json collectiveInvariantJson(const CollectiveInvariantReport& report)
{
    nlohmann::json checks = nlohmann::json::array();
    for (const InvariantCheck& c : report.checks) {
        nlohmann::json failures = nlohmann::json::array();
        for (const CollectiveFailure& f : c.failures)
            failures.push_back(
                {{"source_rank", f.sourceRank ? nlohmann::json(*f.sourceRank) : nlohmann::json()},
                 {"source", f.sourceRank ? nlohmann::json(f.source) : nlohmann::json()},
                 {"destination_rank", f.destinationRank},
                 {"destination", f.destination},
                 {"elements", f.elements},
                 {"differing_elements", f.differingElements},
                 {"differing_bytes", f.differingBytes},
                 {"beyond_bound", f.beyondBound ? nlohmann::json(*f.beyondBound) : nlohmann::json()},
                 {"signature", f.signature},
                 {"detail", f.detail}});
        checks.push_back({{"invariant", c.invariant},
                          {"judged", c.judged},
                          {"holds", c.holds},
                          {"detail", c.detail},
                          {"failures", failures}});
    }
    return {{"ranks", report.ranks},
            {"missing_ranks", report.missingRanks},
            {"holds", report.holds()},
            {"note", report.note.empty() ? nlohmann::json() : nlohmann::json(report.note)},
            {"invariants", checks}};
}

}  // namespace faultline
