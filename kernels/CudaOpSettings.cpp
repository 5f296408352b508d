#include "CudaOpSettings.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/golden/GoldenSupport.h"
#include "core/golden/ReplaySettings.h"

namespace faultline::cuda {
namespace {

std::string upper(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::toupper(c)); });
    return s;
}

Result<CudaImpl> parseImpl(const std::string& op, const std::string& key, const std::string& text)
{
    if (text == "golden") return CudaImpl::Golden;
    if (text == "cublas") return CudaImpl::Cublas;
    if (text == "cublaslt") return CudaImpl::CublasLt;
    if (text == "nccl") return CudaImpl::Nccl;
    return golden::opError(op, "parameter " + key + "=" + text + " is not golden, cublas, cublaslt or nccl");
}

Result<LtComputeType> parseComputeType(const std::string& op, const std::string& text)
{
    std::string t = upper(text);
    if (t.rfind("CUBLAS_COMPUTE_", 0) == 0) t = t.substr(15);
    for (LtComputeType c : {LtComputeType::F32, LtComputeType::F32Pedantic, LtComputeType::F32FastTf32,
                            LtComputeType::F32Fast16F, LtComputeType::F32Fast16BF})
        if (t == ltComputeTypeName(c)) return c;
    return golden::opError(op, "parameter compute_type=" + text +
                                   " is not 32F, 32F_PEDANTIC, 32F_FAST_TF32, 32F_FAST_16F or 32F_FAST_16BF");
}

// A non-negative integer parameter (integers, or doubles holding one).
Result<int64_t> paramCount(const std::string& op, const std::map<std::string, AttrValue>& p,
                           const std::string& name, int64_t fallback)
{
    auto it = p.find(name);
    if (it == p.end()) return fallback;
    if (const auto* i = std::get_if<int64_t>(&it->second); i && *i >= 0) return *i;
    if (const auto* d = std::get_if<double>(&it->second); d && *d >= 0 && *d < 9.0e18 && std::floor(*d) == *d)
        return int64_t(*d);
    return golden::opError(
        op, "parameter " + name + "=" + attrValueToString(it->second) + " is not a non-negative integer");
}

}  // namespace

const char* ltComputeTypeName(LtComputeType t)
{
    switch (t) {
        case LtComputeType::Auto:
            return "auto";
        case LtComputeType::F32:
            return "32F";
        case LtComputeType::F32Pedantic:
            return "32F_PEDANTIC";
        case LtComputeType::F32FastTf32:
            return "32F_FAST_TF32";
        case LtComputeType::F32Fast16F:
            return "32F_FAST_16F";
        case LtComputeType::F32Fast16BF:
            return "32F_FAST_16BF";
    }
    return "?";
}

const char* cudaImplName(CudaImpl impl)
{
    switch (impl) {
        case CudaImpl::Golden:
            return "golden";
        case CudaImpl::Cublas:
            return "cublas";
        case CudaImpl::CublasLt:
            return "cublaslt";
        case CudaImpl::Nccl:
            return "nccl";
    }
    return "?";
}

LtComputeType resolveLtComputeType(const CudaOpSettings& s, bool float32Inputs)
{
    if (s.computeType != LtComputeType::Auto) return s.computeType;
    if (s.tf32) return LtComputeType::F32FastTf32;
    return float32Inputs ? LtComputeType::F32Pedantic : LtComputeType::F32;
}

Result<CudaOpSettings> parseCudaOpSettings(const std::string& op,
                                           const std::map<std::string, AttrValue>& params)
{
    CudaOpSettings s;
    const bool hasImpl = params.count("impl") != 0, hasLibrary = params.count("library") != 0;
    if (hasImpl || hasLibrary) {
        Result<std::string> implText =
            golden::paramString(op, params, hasImpl ? "impl" : "library", std::nullopt);
        if (!implText) return implText.error();
        auto impl = parseImpl(op, hasImpl ? "impl" : "library", *implText);
        if (!impl) return impl.error();
        if (hasImpl && hasLibrary) {
            Result<std::string> libText = golden::paramString(op, params, "library", std::nullopt);
            if (!libText) return libText.error();
            auto lib = parseImpl(op, "library", *libText);
            if (!lib) return lib.error();
            if (*lib != *impl)
                return golden::opError(
                    op, "parameters impl=" + *implText + " and library=" + *libText + " disagree");
        }
        s.impl = *impl;
    }
    const std::string implName = cudaImplName(s.impl);
    if ((s.impl == CudaImpl::Cublas || s.impl == CudaImpl::CublasLt) && op != "gemm")
        return golden::opError(op,
                               "impl=" + implName + " replays gemm only (this op has golden kernels only)");
    if (s.impl == CudaImpl::Nccl && op != "all_reduce")
        return golden::opError(op, "impl=nccl replays all_reduce only");

    Result<bool> tf32 = golden::paramBool(op, params, "tf32", false);
    if (!tf32) return tf32.error();
    s.tf32 = *tf32;
    if (s.tf32 && s.impl != CudaImpl::Cublas && s.impl != CudaImpl::CublasLt)
        return golden::opError(op,
                               "tf32=1 needs impl=cublas or impl=cublaslt (golden kernels never use TF32)");

    // Settings read by one library only.
    auto onlyFor = [&](const char* key, CudaImpl wanted) -> Status {
        if (params.count(key) && s.impl != wanted)
            return golden::opError(op, std::string("parameter ") + key + " applies to impl=" +
                                           cudaImplName(wanted) + ", not impl=" + implName);
        return Status::success();
    };
    for (auto [key, wanted] :
         {std::pair{"math_mode", CudaImpl::Cublas}, std::pair{"compute_type", CudaImpl::CublasLt},
          std::pair{"algo", CudaImpl::CublasLt}, std::pair{"workspace", CudaImpl::CublasLt},
          std::pair{"grid", CudaImpl::Golden}})
        if (Status st = onlyFor(key, wanted); !st) return st.error();
    auto grid = golden::replayGrid(op, params);
    if (!grid) return grid.error();
    s.grid = *grid;

    if (s.impl == CudaImpl::Cublas) {
        s.mathMode = s.tf32 ? CublasMathMode::Tf32 : CublasMathMode::Pedantic;
        if (params.count("math_mode")) {
            Result<std::string> mm = golden::paramString(op, params, "math_mode", std::nullopt);
            if (!mm) return mm.error();
            const std::string m = upper(*mm);
            if (m == "DEFAULT" || m == "CUBLAS_DEFAULT_MATH")
                s.mathMode = CublasMathMode::Default;
            else if (m == "PEDANTIC" || m == "CUBLAS_PEDANTIC_MATH")
                s.mathMode = CublasMathMode::Pedantic;
            else if (m == "TF32" || m == "CUBLAS_TF32_TENSOR_OP_MATH")
                s.mathMode = CublasMathMode::Tf32;
            else
                return golden::opError(op,
                                       "parameter math_mode=" + *mm + " is not default, pedantic or tf32");
            if (s.mathMode == CublasMathMode::Tf32 && params.count("tf32") && !s.tf32)
                return golden::opError(op, "math_mode=tf32 contradicts tf32=0");
            if (s.tf32 && s.mathMode == CublasMathMode::Pedantic)
                return golden::opError(op, "tf32=1 contradicts math_mode=pedantic");
        }
    }
    if (s.impl == CudaImpl::CublasLt) {
        if (params.count("compute_type")) {
            Result<std::string> ct = golden::paramString(op, params, "compute_type", std::nullopt);
            if (!ct) return ct.error();
            auto c = parseComputeType(op, *ct);
            if (!c) return c.error();
            s.computeType = *c;
            if (s.tf32 && *c != LtComputeType::F32FastTf32)
                return golden::opError(op, "tf32=1 contradicts compute_type=" + *ct);
            if (*c == LtComputeType::F32FastTf32 && params.count("tf32") && !s.tf32)
                return golden::opError(op, "compute_type=" + *ct + " contradicts tf32=0");
        }
        auto algo = paramCount(op, params, "algo", 0);
        if (!algo) return algo.error();
        s.algo = *algo;
        auto ws = paramCount(op, params, "workspace", int64_t(kDefaultLtWorkspace));
        if (!ws) return ws.error();
        s.workspace = uint64_t(*ws);
    }
    return s;
}

}  // namespace faultline::cuda
