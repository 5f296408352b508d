#include "DetectionFloor.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <random>
#include <sstream>
#include <tuple>

#include "../compare/TensorComparer.h"
#include "BoundCompare.h"
#include "RecordedReference.h"
#include "TensorLoad.h"

namespace faultline {

namespace {

constexpr std::string_view kClasses[] = {"sign", "exponent", "mantissa_top2", "mantissa_rest"};

bool floorDType(DType t)
{
    return t == DType::Float64 || t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16;
}

bool finiteNonZero(uint64_t v, const BitLayout& l)
{
    const uint64_t expMask = (uint64_t(1) << l.exponentBits) - 1;
    const uint64_t e = (v >> l.mantissaBits) & expMask;
    const uint64_t m = v & ((uint64_t(1) << l.mantissaBits) - 1);
    return e != expMask && (e != 0 || m != 0);
}

// What judges one output: the peer's output bit for bit (bound empty), or the golden model's
// expected output within its bound.
struct OutputJudge {
    HostTensor recorded, expected;
    std::vector<double> bound;
    bool bitwise = false;
};

HostTensor subset(const HostTensor& t, const std::vector<uint64_t>& indices)
{
    HostTensor out(t.dtype, {uint64_t(indices.size())});
    for (size_t j = 0; j < indices.size(); ++j) setElementBits(out, j, elementBits(t, indices[j]));
    return out;
}

// Elements of `indices` whose bit `bit` is flipped in `candidate` that the judge flags.
Result<uint64_t> detected(const OutputJudge& judge, const std::vector<uint64_t>& indices, unsigned bit,
                          const std::string& name)
{
    HostTensor candidate = subset(judge.recorded, indices);
    for (size_t j = 0; j < indices.size(); ++j)
        setElementBits(candidate, j, elementBits(candidate, j) ^ (uint64_t(1) << bit));
    const HostTensor expected = subset(judge.expected, indices);
    if (judge.bitwise) {
        CompareOptions options;
        options.tolerance = Tolerance::exact();
        options.threads = 1;
        options.topK = 1;
        auto d = TensorComparer(options).compare(candidate.dtype, candidate.shape, candidate.data.data(),
                                                 expected.data.data(), name);
        if (!d) return d.error();
        return d->beyondTolerance;
    }
    std::vector<double> bound(indices.size());
    for (size_t j = 0; j < indices.size(); ++j) bound[j] = judge.bound[indices[j]];
    auto d = compareWithinBound(candidate, expected, bound, 1.0, name, 1, 1);
    if (!d) return d.error();
    return d->beyondTolerance;
}

// Plants the flips of one output into `row`: for every bit position and direction, up to
// `perBit` elements of a seeded shuffle of the finite non-zero ones whose bit is as needed.
Status plant(const OutputJudge& judge, const DetectionFloorOptions& options, uint64_t opSeed,
             const std::string& name, DetectionFloorRow& row)
{
    const BitLayout layout = bitLayout(judge.recorded.dtype);
    const uint64_t n = judge.recorded.elementCount();
    std::vector<uint64_t> pool;
    for (uint64_t i = 0; i < n; ++i)
        if (finiteNonZero(elementBits(judge.recorded, i), layout)) pool.push_back(i);
    std::mt19937_64 rng(options.seed * 0x9E3779B97F4A7C15ull ^ opSeed);
    std::shuffle(pool.begin(), pool.end(), rng);
    row.set.resize(layout.totalBits);
    row.clear.resize(layout.totalBits);
    for (unsigned bit = 0; bit < layout.totalBits; ++bit) {
        for (const bool set : {true, false}) {
            std::vector<uint64_t> picks;
            for (uint64_t i : pool) {
                if (picks.size() >= options.elementsPerBit) break;
                const bool isSet = (elementBits(judge.recorded, i) >> bit) & 1u;
                if (isSet != set) picks.push_back(i);  // set: the bit is 0 and becomes 1
            }
            if (picks.empty()) continue;
            auto found = detected(judge, picks, bit, name);
            if (!found) return found.error();
            FloorCount& c = (set ? row.set : row.clear)[bit];
            c.planted += picks.size();
            c.detected += *found;
        }
    }
    return {};
}

// The judges of a judged op's outputs, as bisect judged it; a reason where an output is left out.
Result<std::vector<OutputJudge>> judgesOf(const Trace& trace, const TraceOp& op, const BisectOp& b,
                                          const std::string& suspect, std::vector<std::string>& leftOut)
{
    std::vector<OutputJudge> out;
    const std::vector<std::string>& names = op.outputs.at(suspect);
    if (b.judge == BisectJudge::Peer) {
        const std::vector<std::string>& peer = b.peerOutputs;
        for (size_t k = 0; k < names.size() && k < peer.size(); ++k) {
            OutputJudge j;
            j.bitwise = true;
            auto recorded = loadTensor(*trace.file, names[k]);
            if (!recorded) return recorded.error();
            auto reference = loadTensor(*trace.file, peer[k]);
            if (!reference) return reference.error();
            j.recorded = std::move(recorded).value();
            j.expected = std::move(reference).value();
            if (!floorDType(j.recorded.dtype)) {
                leftOut.push_back("op " + std::to_string(op.index) + " " + op.op + " output " +
                                  std::to_string(k) + ": " + std::string(dtypeName(j.recorded.dtype)) +
                                  " (no floating-point bits to flip)");
                continue;
            }
            out.push_back(std::move(j));
        }
        return out;
    }
    auto reference = goldenJudgeReference(trace, op, suspect, names.front());
    if (!reference) return reference.error();
    OutputJudge j;
    j.recorded = std::move(reference->recorded);
    j.expected = std::move(reference->expected);
    j.bound = std::move(reference->bound);
    if (!floorDType(j.recorded.dtype)) {
        leftOut.push_back("op " + std::to_string(op.index) + " " + op.op + ": " +
                          std::string(dtypeName(j.recorded.dtype)) + " (no floating-point bits to flip)");
        return out;
    }
    out.push_back(std::move(j));
    return out;
}

nlohmann::json countJson(const FloorCount& c)
{
    nlohmann::json j = {{"planted", c.planted}, {"detected", c.detected}};
    j["rate"] = c.planted ? nlohmann::json(double(c.detected) / double(c.planted)) : nlohmann::json(nullptr);
    return j;
}

// Per bit class of a row (both directions together).
std::map<std::string, FloorCount> byClass(const DetectionFloorRow& row)
{
    std::map<std::string, FloorCount> out;
    for (unsigned bit = 0; bit < row.set.size(); ++bit) {
        FloorCount& c = out[std::string(floorBitClass(row.dtype, bit))];
        c.planted += row.set[bit].planted + row.clear[bit].planted;
        c.detected += row.set[bit].detected + row.clear[bit].detected;
    }
    return out;
}

std::string rateText(const FloorCount& c)
{
    if (!c.planted) return "-";
    std::ostringstream s;
    s << std::fixed << std::setprecision(1) << 100.0 * double(c.detected) / double(c.planted) << "%";
    return s.str();
}

}  // namespace

std::string_view floorBitClass(DType t, unsigned bit)
{
    const BitLayout l = bitLayout(t);
    if (l.hasSign && bit + 1 == l.totalBits) return kClasses[0];
    if (bit >= l.mantissaBits) return kClasses[1];
    if (bit + 2 >= l.mantissaBits) return kClasses[2];
    return kClasses[3];
}

Result<DetectionFloorReport> measureDetectionFloor(const Trace& trace, const DetectionFloorOptions& options,
                                                   const BisectProgress& progress,
                                                   const std::atomic<bool>* cancel)
{
    if (options.elementsPerBit < 1 || options.elementsPerBit > 1024)
        return Error{"elements per bit must be in [1, 1024], not " + std::to_string(options.elementsPerBit),
                     ErrorCode::Usage};
    auto bisect = bisectTrace(trace, options.bisect, {}, cancel);
    if (!bisect) return bisect.error();
    DetectionFloorReport report;
    report.trace = bisect->trace;
    report.suspect = bisect->suspect;
    report.peer = bisect->peer;
    report.seed = options.seed;
    report.elementsPerBit = options.elementsPerBit;
    report.recordedOps = bisect->ops.size();
    report.judgedOps = bisect->checkedOps;
    report.warnings = bisect->warnings;
    report.cancelled = bisect->cancelled;
    std::map<std::tuple<std::string, DType, BisectJudge>, DetectionFloorRow> rows;
    for (size_t i = 0; i < bisect->ops.size() && !report.cancelled; ++i) {
        if (cancel && cancel->load()) {
            report.cancelled = true;
            break;
        }
        const BisectOp& b = bisect->ops[i];
        if (progress) progress(i, bisect->ops.size(), "op " + std::to_string(b.index) + " " + b.op);
        if (b.verdict == BisectVerdict::Divergent) {
            report.falseAlarms.push_back(b);
            continue;
        }
        if (b.verdict != BisectVerdict::Ok || b.judge == BisectJudge::None) continue;
        // bisectTrace reports one op per trace op, in trace order.
        if (i >= trace.ops.size() || trace.ops[i].index != b.index) continue;
        auto judges = judgesOf(trace, trace.ops[i], b, report.suspect, report.warnings);
        if (!judges) return judges.error();
        bool counted = false;
        for (size_t k = 0; k < judges->size(); ++k) {
            const OutputJudge& j = (*judges)[k];
            DetectionFloorRow& row = rows[{b.op, j.recorded.dtype, b.judge}];
            row.op = b.op;
            row.dtype = j.recorded.dtype;
            row.judge = b.judge;
            row.loose = row.loose || b.boundLoose;
            const std::string name = "op " + std::to_string(b.index) + " output " + std::to_string(k);
            if (Status s = plant(j, options, (uint64_t(b.index) << 8) ^ k, name, row); !s) return s.error();
            ++row.outputs;
            if (!counted) ++row.ops;
            counted = true;
        }
        if (counted) ++report.floorOps;
    }
    for (auto& [key, row] : rows) report.rows.push_back(std::move(row));
    if (progress) progress(bisect->ops.size(), bisect->ops.size(), "done");
    return report;
}

nlohmann::json detectionFloorJson(const DetectionFloorReport& r)
{
    using nlohmann::json;
    json j = {{"format", "faultline-detection-floor"},
              {"trace", r.trace},
              {"suspect", r.suspect},
              {"peer", r.peer.empty() ? json(nullptr) : json(r.peer)},
              {"seed", r.seed},
              {"elements_per_bit", r.elementsPerBit},
              {"recorded_ops", r.recordedOps},
              {"judged_ops", r.judgedOps},
              {"floor_ops", r.floorOps},
              {"cancelled", r.cancelled},
              {"warnings", r.warnings}};
    json alarms = json::array();
    for (const BisectOp& b : r.falseAlarms)
        alarms.push_back({{"index", b.index},
                          {"op", b.op},
                          {"name", b.name},
                          {"detail", b.detail},
                          {"judge", std::string(bisectJudgeName(b.judge))}});
    j["false_alarms"] = alarms;
    json rows = json::array();
    std::map<std::string, std::map<std::string, FloorCount>> judgeTotals;
    std::map<std::string, FloorCount> totals;
    for (const DetectionFloorRow& row : r.rows) {
        json bits = json::array();
        for (unsigned bit = 0; bit < row.set.size(); ++bit)
            bits.push_back({{"bit", bit},
                            {"class", std::string(floorBitClass(row.dtype, bit))},
                            {"set", countJson(row.set[bit])},
                            {"clear", countJson(row.clear[bit])}});
        json classes = json::object();
        for (const auto& [cls, c] : byClass(row)) {
            classes[cls] = countJson(c);
            FloorCount& t = judgeTotals[std::string(bisectJudgeName(row.judge))][cls];
            t.planted += c.planted;
            t.detected += c.detected;
            totals[cls].planted += c.planted;
            totals[cls].detected += c.detected;
        }
        rows.push_back({{"op", row.op},
                        {"dtype", std::string(dtypeName(row.dtype))},
                        {"judge", std::string(bisectJudgeName(row.judge))},
                        {"loose", row.loose},
                        {"ops", row.ops},
                        {"outputs", row.outputs},
                        {"bits", bits},
                        {"by_class", classes}});
    }
    j["rows"] = rows;
    json byJudge = json::object();
    for (const auto& [judge, classes] : judgeTotals)
        for (const auto& [cls, c] : classes) byJudge[judge][cls] = countJson(c);
    j["by_judge"] = byJudge;
    json all = json::object();
    for (const auto& [cls, c] : totals) all[cls] = countJson(c);
    j["by_class"] = all;
    return j;
}

std::string detectionFloorText(const DetectionFloorReport& r)
{
    std::ostringstream out;
    out << "detection floor of " << r.trace << " (suspect " << r.suspect << ", "
        << (r.peer.empty() ? std::string("no peer") : "peer " + r.peer) << "): " << r.recordedOps
        << " recorded op(s), " << r.judgedOps << " judged, " << r.falseAlarms.size() << " false alarm(s); "
        << r.elementsPerBit << " flip(s) per bit position and direction, seed " << r.seed << "\n";
    if (r.cancelled) out << "cancelled: the figures cover the ops judged before the interrupt\n";
    out << std::left << std::setw(26) << "op" << std::setw(10) << "dtype" << std::setw(20) << "judge"
        << std::right << std::setw(5) << "ops" << std::setw(9) << "sign" << std::setw(10) << "exponent"
        << std::setw(15) << "mantissa top2" << std::setw(15) << "mantissa rest"
        << "\n";
    for (const DetectionFloorRow& row : r.rows) {
        const auto classes = byClass(row);
        auto cell = [&](std::string_view cls) {
            const auto it = classes.find(std::string(cls));
            return it == classes.end() ? std::string("-") : rateText(it->second);
        };
        std::string judge(bisectJudgeName(row.judge));
        if (row.judge == BisectJudge::GoldenBound) judge += row.loose ? " (loose)" : " (strict)";
        out << std::left << std::setw(26) << row.op << std::setw(10) << dtypeName(row.dtype) << std::setw(20)
            << judge << std::right << std::setw(5) << row.ops << std::setw(9) << cell(kClasses[0])
            << std::setw(10) << cell(kClasses[1]) << std::setw(15) << cell(kClasses[2]) << std::setw(15)
            << cell(kClasses[3]) << "\n";
    }
    if (r.falseAlarms.empty()) {
        out << "false alarms: none (no op of the unmodified trace is divergent)\n";
    } else {
        out << "false alarms (divergent on the unmodified trace, left out of the floor):\n";
        for (const BisectOp& b : r.falseAlarms)
            out << "  op " << b.index << " " << b.op << " " << b.name << ": " << b.detail << "\n";
    }
    for (const std::string& w : r.warnings) out << "warning: " << w << "\n";
    return out.str();
}

}  // namespace faultline
