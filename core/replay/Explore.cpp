#include "Explore.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "../Convert.h"
#include "../Text.h"
#include "../golden/ReplaySettings.h"
#include "../io/ScratchDirectory.h"
#include "../trace/TraceOps.h"
#include "FaultTrigger.h"
#include "InputCuts.h"
#include "OneOpTrace.h"
#include "TensorLoad.h"

namespace faultline {
namespace {

ExploreCondition conditionOf(std::string vary, std::string axis, std::string label)
{
    ExploreCondition c;
    c.vary = std::move(vary);
    c.axis = std::move(axis);
    c.label = std::move(label);
    return c;
}

// One condition with the inputs and op it replays.
struct Variant {
    ExploreCondition condition;
    TraceOp op;
    std::vector<HostTensor> inputs;
};

void describe(Variant& v)
{
    const TriggerInputs in = measureTriggerInputs(&v.op, v.inputs);
    v.condition.maxAbs = in.maxAbs;
    v.condition.inner = in.inner;
    v.condition.dtype = v.inputs.empty() ? std::string() : std::string(dtypeName(v.inputs.front().dtype));
}

// Every floating-point input converted through double: `f` applied to each value.
template <class F>
std::vector<HostTensor> mapFloats(const std::vector<HostTensor>& inputs, std::optional<DType> to, F f)
{
    std::vector<HostTensor> out;
    for (const HostTensor& t : inputs) {
        if (!isFloatingPoint(t.dtype)) {
            out.push_back(t);
            continue;
        }
        const uint64_t n = t.elementCount();
        std::vector<double> values(static_cast<size_t>(n));
        convertToDouble(t.dtype, t.data.data(), values.data(), size_t(n));
        for (double& v : values) v = f(v);
        HostTensor c(to.value_or(t.dtype), t.shape);
        convertFromDouble(c.dtype, values.data(), c.data.data(), size_t(n));
        out.push_back(std::move(c));
    }
    return out;
}

std::vector<Variant> scaleVariants(const TraceOp& op, const std::vector<HostTensor>& inputs)
{
    std::vector<Variant> out;
    for (int e : kExploreScales) {
        Variant v{conditionOf("scale", "scale", "x2^" + std::to_string(e)), op,
                  mapFloats(inputs, std::nullopt, [e](double x) { return std::ldexp(x, e); })};
        v.condition.recorded = e == 0;
        out.push_back(std::move(v));
    }
    return out;
}

std::vector<Variant> blockVariants(const TraceOp& op, const std::vector<HostTensor>& inputs)
{
    std::vector<Variant> out;
    TraceOp cut = op;
    dropLayoutParams(cut);
    for (const InputAxis& axis : inputAxes(op, inputs)) {
        const uint64_t size = axisSize(axis, inputs);
        auto keep = [&](uint64_t first, uint64_t count, std::string label) {
            std::vector<uint64_t> indices(static_cast<size_t>(count));
            for (uint64_t i = 0; i < count; ++i) indices[size_t(i)] = first + i;
            Variant v{conditionOf("block", axis.name, axis.name + " " + label), cut,
                      keepAlong(inputs, axis, indices)};
            v.condition.first = first;
            v.condition.size = count;
            out.push_back(std::move(v));
        };
        // Prefixes: the first half, quarter, ... one index (at most 8 of them).
        int prefixes = 0;
        for (uint64_t n = size / 2; n >= 1 && prefixes < 8; n /= 2, ++prefixes)
            keep(0, n, "first " + std::to_string(n) + " of " + std::to_string(size));
        if (size >= 4)
            for (uint64_t q = 0; q < 4; ++q) {
                const uint64_t first = q * size / 4, last = (q + 1) * size / 4;
                keep(first, last - first,
                     std::to_string(first) + ".." + std::to_string(last - 1) + " (quarter " +
                         std::to_string(q + 1) + " of 4)");
            }
    }
    return out;
}

// The float32 inputs replayed with TF32 operands: through cuBLAS (the recorded impl when it is
// cublas or cublaslt, else cublaslt) with tf32=1, judged with TF32's bound (golden::replayOperands).
Variant tf32Variant(const TraceOp& op, const std::vector<HostTensor>& inputs)
{
    Variant v{conditionOf("dtype", "dtype", "tf32"), op,
              mapFloats(inputs, DType::Float32, [](double x) { return x; })};
    auto& p = v.op.params;
    // cuBLAS as recorded (impl or its synonym library), else cuBLASLt.
    std::string impl = "cublaslt";
    const bool cublas = golden::replaysOnCublas(p);
    for (const char* key : {"library", "impl"})
        if (const auto it = p.find(key); cublas && it != p.end())
            if (const auto* text = std::get_if<std::string>(&it->second)) impl = lowerAscii(*text);
    for (const char* key : {"library", "math_mode", "compute_type", "grid"}) p.erase(key);
    if (!cublas) p.erase("algo"), p.erase("workspace");
    p["impl"] = impl;
    p["tf32"] = int64_t(1);
    if (p.count("out_dtype")) p["out_dtype"] = std::string(dtypeName(DType::Float32));
    return v;
}

std::vector<Variant> dtypeVariants(const TraceOp& op, const std::vector<HostTensor>& inputs, bool withTf32)
{
    std::vector<Variant> out;
    for (DType d : {DType::Float32, DType::BFloat16, DType::Float16}) {
        Variant v{conditionOf("dtype", "dtype", std::string(dtypeName(d))), op,
                  mapFloats(inputs, d, [](double x) { return x; })};
        if (op.op == "gemm" && op.params.count("out_dtype"))
            v.op.params["out_dtype"] = std::string(dtypeName(d));
        out.push_back(std::move(v));
        if (d == DType::Float32 && withTf32) out.push_back(tf32Variant(op, inputs));
    }
    return out;
}

// The recorded inputs with smaller grids: the same tiles computed by fewer blocks, on other SMs.
std::vector<Variant> gridVariants(const TraceOp& op, const std::vector<HostTensor>& inputs)
{
    std::vector<Variant> out;
    for (uint32_t g : kExploreGrids) {
        Variant v{conditionOf("placement", "grid",
                              "grid of " + std::to_string(g) + (g == 1 ? " block" : " blocks")),
                  op, inputs};
        v.op.params["grid"] = int64_t(g);
        v.condition.grid = g;
        out.push_back(std::move(v));
    }
    return out;
}

// The largest |x| as a text: "40", "0.156".
std::string magnitudeText(double v)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", v);
    return text;
}

ExploreFinding findingFor(const ExploreReport& r, const std::string& target, const std::string& vary,
                          const std::string& axis)
{
    ExploreFinding f{target, vary, axis, {}, {}, {}, 0, 0, {}};
    for (const ExploreCell& c : r.cells) {
        const ExploreCondition& k = r.conditions[c.condition];
        if (c.target != target || k.vary != vary || k.axis != axis || !c.rate.replayable || c.rate.runs == 0)
            continue;
        (c.rate.failures > 0 ? f.fired : f.never).push_back(c.condition);
    }
    auto measureOf = [&](size_t i) {
        const ExploreCondition& k = r.conditions[i];
        return vary == "scale" ? k.maxAbs : double(k.size);
    };
    const std::string what = vary == "scale" ? "largest |x|" : axis + " of size";
    if (f.fired.empty()) {
        f.text = "never fired under " + (vary == "block" ? axis + " sub-blocks" : vary) + " (" +
                 std::to_string(f.never.size()) + " conditions)";
        return f;
    }
    f.low = f.high = measureOf(f.fired.front());
    for (size_t i : f.fired) f.low = std::min(f.low, measureOf(i)), f.high = std::max(f.high, measureOf(i));
    if (vary == "dtype") {
        std::vector<std::string> fired, never;
        for (size_t i : f.fired) fired.push_back(r.conditions[i].label);
        for (size_t i : f.never) never.push_back(r.conditions[i].label);
        f.text = "fired on " + joinText(fired) + (never.empty() ? "" : "; never on " + joinText(never));
        return f;
    }
    // The quiet conditions nearest the band on either side.
    std::optional<double> below, above;
    for (size_t i : f.never) {
        const double m = measureOf(i);
        if (m < f.low) below = std::max(below.value_or(m), m);
        if (m > f.high) above = std::min(above.value_or(m), m);
    }
    f.text = "fired for " + what + " " + magnitudeText(f.low) + " to " + magnitudeText(f.high);
    std::string quiet;
    if (below) quiet += "at " + magnitudeText(*below) + " and below";
    if (above) quiet += std::string(quiet.empty() ? "at " : ", at ") + magnitudeText(*above) + " and above";
    if (!quiet.empty()) f.text += "; never " + quiet;
    if (vary == "block") {
        // Sub-blocks of the same size that did and did not fire: where in the dimension, not its size.
        std::set<uint64_t> firedSizes, quietSizes;
        for (size_t i : f.fired) firedSizes.insert(r.conditions[i].size);
        for (size_t i : f.never) quietSizes.insert(r.conditions[i].size);
        for (size_t i : f.fired)
            if (quietSizes.count(r.conditions[i].size)) {
                f.text +=
                    "; at size " + std::to_string(r.conditions[i].size) + " only in " + r.conditions[i].label;
                break;
            }
    }
    return f;
}

// What the smaller grids showed on one target: "" without grid conditions that fired, else whether
// the failures stayed on one SM while the grids moved the tiles (oneSm), or moved with them.
std::string gridText(const ExploreReport& r, const std::string& target, bool oneSm)
{
    std::vector<std::string> fired, never;
    std::set<std::set<int32_t>> smSets;
    for (const ExploreCell& c : r.cells) {
        const ExploreCondition& k = r.conditions[c.condition];
        if (c.target != target || k.axis != "grid" || !c.rate.replayable || c.rate.runs == 0) continue;
        if (c.rate.failures == 0) {
            never.push_back(std::to_string(k.grid));
            continue;
        }
        fired.push_back(std::to_string(k.grid));
        std::set<int32_t> sms;
        for (const auto& [sm, runs] : c.rate.failedRunsBySm) sms.insert(sm);
        if (!sms.empty()) smSets.insert(sms);
    }
    if (fired.empty())
        return never.empty() ? std::string() : "; never fired with grids of " + joinText(never) + " blocks";
    std::string text;
    if (oneSm && fired.size() >= 2)
        text = "; it stayed there with grids of " + joinText(fired) +
               " blocks, which compute the tiles on other SMs: bound to the SM, not to the tiles";
    else if (oneSm)
        text = "; it stayed there with a grid of " + fired.front() + " blocks";
    else if (smSets.size() >= 2)
        text = "; the SMs changed with the grid (grids of " + joinText(fired) +
               " blocks): the defect follows the tiles (their data or addresses), not one SM";
    if (!never.empty()) text += "; never fired with grids of " + joinText(never) + " blocks";
    return text;
}

// The SMs the failed runs of every condition differed in, on one target.
ExploreFinding placementFinding(const ExploreReport& r, const std::string& target)
{
    ExploreFinding f{target, "placement", "sm", {}, {}, {}, 0, 0, {}};
    std::map<int32_t, uint64_t> bySm;
    uint64_t failed = 0, withSms = 0;
    for (const ExploreCell& c : r.cells) {
        if (c.target != target) continue;
        failed += c.rate.failures;
        withSms += c.rate.failedRunsWithSms;
        for (const auto& [sm, runs] : c.rate.failedRunsBySm) bySm[sm] += runs;
        if (r.conditions[c.condition].vary == "placement")
            (c.rate.failures ? f.fired : f.never).push_back(c.condition);
    }
    for (const auto& [sm, runs] : bySm) f.sms.push_back(sm);
    const std::string grids = gridText(r, target, f.sms.size() == 1);
    if (failed == 0) {
        f.text = "never fired";
    } else if (withSms == 0) {
        f.text = "the failed runs did not say which SMs computed what (the target records no SMs)";
    } else if (f.sms.size() == 1) {
        f.text = "fired only in tiles of SM " + std::to_string(f.sms.front()) + " (every one of the " +
                 std::to_string(withSms) + " failed runs that recorded SMs); never in another SM's tiles";
        f.low = f.high = f.sms.front();
    } else {
        std::vector<std::string> names;
        for (int32_t sm : f.sms)
            names.push_back(std::to_string(sm) + " (" + std::to_string(bySm[sm]) + " runs)");
        f.text = "fired in tiles of " + std::to_string(f.sms.size()) + " SMs: " + joinText(names);
        f.low = f.sms.front();
        f.high = f.sms.back();
    }
    if (failed > 0 && withSms > 0) f.text += grids;
    return f;
}

}  // namespace

bool ExploreReport::anyFailure() const
{
    for (const ExploreCell& c : cells)
        if (c.rate.failures > 0) return true;
    return false;
}

Result<ExploreReport> exploreOp(const ExploreOptions& o)
{
    if (!(o.confidence >= 0.5 && o.confidence <= 0.999999))
        return Error{"--confidence " + std::to_string(o.confidence) + ": must be between 0.5 and 0.999999",
                     ErrorCode::Usage};
    if (o.targets.empty()) return Error{"no targets given", ErrorCode::Usage};
    if (o.runs == 0) return Error{"--runs must be at least 1", ErrorCode::Usage};
    for (const std::string& v : o.vary)
        if (v != "scale" && v != "block" && v != "dtype" && v != "placement")
            return Error{"--vary '" + v + "': expected scale, block, dtype or placement", ErrorCode::Usage};
    OpenOptions open;
    open.allowExternal = o.setup.allowExternal;
    auto trace = readTrace(o.tracePath, open);
    if (!trace) return trace.error();
    const TraceOp* found = findTraceOpByIndex(*trace, o.opIndex);
    if (!found) return fileError(o.tracePath, "has no op " + std::to_string(o.opIndex), ErrorCode::Usage);
    auto inputs = loadOpInputs(*trace, *found);
    if (!inputs) return inputs.error();

    ExploreReport r;
    r.trace = o.tracePath;
    r.op = found->op;
    r.name = found->name;
    r.opIndex = found->index;
    r.runs = o.runs;
    r.confidence = o.confidence;
    r.vary = o.vary;
    for (const TargetSpec& t : o.targets) r.targets.push_back(t.text);
    std::vector<Variant> variants;
    auto wants = [&](const char* v) { return std::find(o.vary.begin(), o.vary.end(), v) != o.vary.end(); };
    if (wants("scale"))
        for (Variant& v : scaleVariants(*found, *inputs)) variants.push_back(std::move(v));
    if (wants("block"))
        for (Variant& v : blockVariants(*found, *inputs)) variants.push_back(std::move(v));
    if (wants("dtype")) {
        // TF32 is a condition of a gemm on a GPU: a cuda target, or a simulated one (whose
        // triggers tell FP32 from TF32); a cpu target never computes with it.
        const bool gpu = std::any_of(o.targets.begin(), o.targets.end(),
                                     [](const TargetSpec& t) { return t.kind == "cuda" || t.kind == "sim"; });
        const bool tf32 = gpu && opKindOf(found->op) == OpKind::Gemm && !inputs->empty() &&
                          isFloatingPoint(inputs->front().dtype);
        for (Variant& v : dtypeVariants(*found, *inputs, tf32)) variants.push_back(std::move(v));
    }
    if (wants("placement")) {
        Variant v{conditionOf("placement", "sm", "recorded inputs (SM attribution)"), *found, *inputs};
        v.condition.recorded = true;
        variants.push_back(std::move(v));
        if (golden::replaysOnCublas(found->params))
            r.warnings.push_back(
                "the op runs through cuBLAS, whose grid Faultline does not choose: no smaller grids");
        else
            for (Variant& g : gridVariants(*found, *inputs)) variants.push_back(std::move(g));
    }

    RateProbeSetup setup = o.setup;
    auto ownScratch = ensureScratchDirectory(setup, "faultline-explore-", "the conditions");
    if (!ownScratch) return ownScratch.error();
    const uint64_t runs = o.runs;
    const RateRule rule = [runs](uint64_t n, uint64_t) { return n >= runs; };
    for (Variant& v : variants) {
        describe(v);
        const size_t index = r.conditions.size();
        r.conditions.push_back(v.condition);
        const std::string path = setup.scratchDir + "/condition-" + std::to_string(index) + ".h5";
        if (Status st = writeOneOpTrace(*trace, v.op, v.inputs, path); !st) return st.error();
        for (const TargetSpec& t : o.targets) {
            auto m =
                measureOpRate(path, found->index, t, rule, o.confidence, std::chrono::milliseconds(0), setup);
            if (!m) return m.error();
            r.cells.push_back({index, t.text, *m});
            if (o.setup.cancel && o.setup.cancel->load()) r.cancelled = true;
        }
        std::error_code ec;
        std::filesystem::remove(path, ec);
        if (r.cancelled) break;
    }
    for (const std::string& target : r.targets) {
        if (wants("placement")) r.findings.push_back(placementFinding(r, target));
        for (const char* vary : {"scale", "block", "dtype"}) {
            std::vector<std::string> axes;
            for (const ExploreCondition& c : r.conditions)
                if (c.vary == vary && std::find(axes.begin(), axes.end(), c.axis) == axes.end())
                    axes.push_back(c.axis);
            for (const std::string& axis : axes) r.findings.push_back(findingFor(r, target, vary, axis));
        }
    }
    return r;
}

}  // namespace faultline
