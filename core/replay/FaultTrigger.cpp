#include "FaultTrigger.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "../Convert.h"
#include "../Text.h"
#include "../golden/GoldenSupport.h"
#include "../golden/ReplaySettings.h"
#include "FaultModel.h"

namespace faultline {
namespace {

std::string numberText(double v)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    return text;
}

double maxFiniteAbs(const HostTensor& t)
{
    if (!isFloatingPoint(t.dtype)) return 0;
    const uint64_t n = t.elementCount();
    constexpr uint64_t kChunk = 4096;
    std::vector<double> values(size_t(std::min(n, kChunk)));
    double best = 0;
    for (uint64_t first = 0; first < n; first += kChunk) {
        const uint64_t count = std::min(kChunk, n - first);
        convertToDouble(t.dtype, t.data.data() + first * dtypeSize(t.dtype), values.data(), size_t(count));
        for (uint64_t i = 0; i < count; ++i)
            if (std::isfinite(values[size_t(i)])) best = std::max(best, std::fabs(values[size_t(i)]));
    }
    return best;
}

}  // namespace

TriggerInputs measureTriggerInputs(const TraceOp* op, std::span<const HostTensor> inputs)
{
    TriggerInputs in;
    if (inputs.empty()) return in;
    in.hasInputs = true;
    in.dtype = inputs.front().dtype;
    in.tf32 = op && in.dtype == DType::Float32 &&
              golden::replayOperands(op->params) == golden::CublasOperands::Tf32;
    for (const HostTensor& t : inputs) in.maxAbs = std::max(in.maxAbs, maxFiniteAbs(t));
    const std::vector<uint64_t>& a = inputs.front().shape;
    if (!a.empty()) {
        in.inner = a.back();
        if (op && op->op == "gemm" && a.size() >= 2) {
            const Result<bool> transA = golden::paramBool("gemm", op->params, "trans_a", false);
            if (transA && *transA) in.inner = a[a.size() - 2];
        }
    }
    return in;
}

bool FaultTrigger::fires(const TriggerInputs& in, uint64_t seed, uint64_t opIndex, uint32_t repetition) const
{
    if (readsInputs() && !in.hasInputs) return false;
    if (magLo && in.maxAbs < *magLo) return false;
    if (magHi && in.maxAbs >= *magHi) return false;
    if (innerLo && in.inner < *innerLo) return false;
    if (innerHi && in.inner > *innerHi) return false;
    if (onlyDType && in.dtype != *onlyDType) return false;
    if (onlyTf32 && in.tf32 != *onlyTf32) return false;
    if (runRate >= 1.0) return true;
    // A uniform draw in [0, 1) from the top 53 bits of a hash of (seed, op, repetition).
    const uint64_t h =
        mixSeed(mixSeed(mixSeed(seed, 0x7472696767657273ull /* "triggers" */), opIndex), repetition);
    return double(h >> 11) * 0x1.0p-53 < runRate;
}

std::string FaultTrigger::describe() const
{
    std::vector<std::string> parts;
    if (runRate < 1.0) parts.push_back("in a fraction " + numberText(runRate) + " of runs");
    if (magLo || magHi)
        parts.push_back("for inputs of largest magnitude in [" + numberText(magLo.value_or(0)) + ", " +
                        (magHi ? numberText(*magHi) : std::string("inf")) + ")");
    if (onlySm) parts.push_back("in tiles of virtual SM " + std::to_string(*onlySm));
    if (innerLo || innerHi)
        parts.push_back("for inner dimensions " + std::to_string(innerLo.value_or(0)) + ".." +
                        (innerHi ? std::to_string(*innerHi) : std::string("any")));
    if (onlyTf32 && *onlyTf32)
        parts.push_back("on float32 inputs computed with TF32 operands (tensor cores)");
    else if (onlyTf32)
        parts.push_back("on float32 inputs computed in FP32 (not TF32)");
    else if (onlyDType)
        parts.push_back("on " + std::string(dtypeName(*onlyDType)) + " inputs");
    if (parts.empty()) return {};
    std::string text = "; fires only";
    for (const std::string& p : parts) text += " " + p + (&p == &parts.back() ? "" : ",");
    return text;
}

Result<FaultTrigger> parseFaultTrigger(const TargetSpec& spec, std::vector<std::string>& known)
{
    FaultTrigger t;
    constexpr double kMaxCount = 9007199254740992.0;  // 2^53
    constexpr double kMaxMagnitude = 1.7976931348623157e308;
    auto optional = [&](const char* key, double lo, double hi, bool real) -> Result<std::optional<double>> {
        known.push_back(key);
        if (!spec.params.count(key)) return std::optional<double>();
        auto v = spec.number(key, 0, lo, hi, real);
        if (!v) return v.error();
        return std::optional<double>(*v);
    };
    auto rate = optional("run_rate", 1e-7, 1, true);
    if (!rate) return rate.error();
    if (*rate) t.runRate = **rate;
    auto magLo = optional("mag_lo", 0, kMaxMagnitude, true);
    if (!magLo) return magLo.error();
    auto magHi = optional("mag_hi", 0, kMaxMagnitude, true);
    if (!magHi) return magHi.error();
    t.magLo = *magLo;
    t.magHi = *magHi;
    if (t.magLo && t.magHi && !(*t.magLo < *t.magHi))
        return Error{
            "target '" + spec.text + "': mag_lo must be below mag_hi (the band [mag_lo, mag_hi) is empty)",
            ErrorCode::Usage};
    if (t.magHi && *t.magHi == 0)
        return Error{"target '" + spec.text + "': mag_hi must be above 0 (the band [0, 0) is empty)",
                     ErrorCode::Usage};
    auto sm = optional("only_sm", 0, double(1u << 20), false);
    if (!sm) return sm.error();
    if (*sm) t.onlySm = uint32_t(**sm);
    auto innerLo = optional("inner_lo", 1, kMaxCount, false);
    if (!innerLo) return innerLo.error();
    auto innerHi = optional("inner_hi", 1, kMaxCount, false);
    if (!innerHi) return innerHi.error();
    if (*innerLo) t.innerLo = uint64_t(**innerLo);
    if (*innerHi) t.innerHi = uint64_t(**innerHi);
    if (t.innerLo && t.innerHi && *t.innerLo > *t.innerHi)
        return Error{"target '" + spec.text + "': inner_lo must not be above inner_hi", ErrorCode::Usage};
    known.push_back("only_dtype");
    if (spec.params.count("only_dtype")) {
        const std::string name = spec.param("only_dtype", "");
        const bool tf32 = lowerAscii(name) == "tf32";
        const std::optional<DType> d = tf32 ? DType::Float32 : parseDTypeName(name);
        if (!d || !isFloatingPoint(*d))
            return Error{"target '" + spec.text + "': only_dtype=" + name +
                             " is not a floating-point dtype (fp32, tf32, bf16, fp16, float64, "
                             "float8_e4m3fn, float8_e5m2)",
                         ErrorCode::Usage};
        t.onlyDType = *d;
        if (*d == DType::Float32) t.onlyTf32 = tf32;
    }
    return t;
}

}  // namespace faultline
