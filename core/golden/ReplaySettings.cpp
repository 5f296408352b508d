#include "ReplaySettings.h"

#include <cctype>
#include <cmath>
#include <string>

namespace faultline::golden {

namespace {

// A setting's text in upper case without cuBLAS's prefix ("cublas_compute_32f" -> "32F").
std::string settingText(const OpParams& params, const char* name, std::string_view prefix)
{
    const auto it = params.find(name);
    const auto* text = it != params.end() ? std::get_if<std::string>(&it->second) : nullptr;
    if (!text) return {};
    std::string s = *text;
    for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
    if (s.rfind(prefix, 0) == 0) s.erase(0, prefix.size());
    return s;
}

}  // namespace

bool flag(const OpParams& params, const char* name)
{
    const auto it = params.find(name);
    if (it == params.end()) return false;
    if (const auto* i = std::get_if<int64_t>(&it->second)) return *i != 0;
    if (const auto* d = std::get_if<double>(&it->second)) return *d != 0.0;
    if (const auto* s = std::get_if<std::string>(&it->second)) return *s == "1" || *s == "true";
    return false;
}

bool replaysOnCublas(const OpParams& params)
{
    for (const char* key : {"impl", "library"}) {
        const std::string s = settingText(params, key, "");
        if (s == "CUBLAS" || s == "CUBLASLT") return true;
    }
    return false;
}

CublasOperands replayOperands(const OpParams& params)
{
    const std::string compute = settingText(params, "compute_type", "CUBLAS_COMPUTE_");
    if (compute == "32F_FAST_16F") return CublasOperands::Fp16;
    if (compute == "32F_FAST_16BF") return CublasOperands::Bf16;
    const std::string math = settingText(params, "math_mode", "CUBLAS_");
    if (compute == "32F_FAST_TF32" || flag(params, "tf32") || math == "TF32" || math == "TF32_TENSOR_OP_MATH")
        return CublasOperands::Tf32;
    return CublasOperands::Exact;
}

Result<uint32_t> replayGrid(std::string_view op, const OpParams& params)
{
    const auto it = params.find("grid");
    if (it == params.end()) return uint32_t(0);
    double v = -1;
    if (const auto* i = std::get_if<int64_t>(&it->second)) v = double(*i);
    if (const auto* d = std::get_if<double>(&it->second)) v = *d;
    if (!(v >= 1 && v <= double(kMaxReplayGrid) && std::floor(v) == v))
        return opError(op, "parameter grid=" + attrValueToString(it->second) + " is not an integer in [1, " +
                               std::to_string(kMaxReplayGrid) + "] (thread blocks)");
    return uint32_t(v);
}

}  // namespace faultline::golden
