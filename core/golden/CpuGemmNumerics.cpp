#include "CpuGemmNumerics.h"

#include <cfloat>
#include <cmath>
#include <optional>
#include <sstream>

#include "GoldenSupport.h"

namespace faultline::golden {

namespace {

// A boolean op parameter, false when absent or unreadable.
using Kind = CpuGemmJudgement::Kind;

const AttrValue* find(const OpParams& p, const char* name)
{
    const auto it = p.find(name);
    return it == p.end() ? nullptr : &it->second;
}

std::optional<std::string> stringParam(const OpParams& p, const char* name)
{
    const AttrValue* v = find(p, name);
    if (const auto* s = v ? std::get_if<std::string>(v) : nullptr) return *s;
    return std::nullopt;
}

std::optional<int64_t> intParam(const OpParams& p, const char* name)
{
    const AttrValue* v = find(p, name);
    if (!v) return std::nullopt;
    if (const auto* i = std::get_if<int64_t>(v)) return *i;
    if (const auto* d = std::get_if<double>(v); d && std::floor(*d) == *d) return int64_t(*d);
    return std::nullopt;
}

std::optional<std::vector<int64_t>> intsParam(const OpParams& p, const char* name)
{
    const AttrValue* v = find(p, name);
    if (!v) return std::nullopt;
    if (const auto* i = std::get_if<std::vector<int64_t>>(v)) return *i;
    return std::nullopt;
}

// "1.13.0a0" -> (1, 13); "2.4.1+cpu" -> (2, 4).
std::optional<std::pair<int, int>> torchVersion(const OpParams& p)
{
    const auto text = stringParam(p, "torch_version");
    if (!text) return std::nullopt;
    int major = -1, minor = -1;
    char dot = 0;
    std::istringstream in(*text);
    if (!(in >> major >> dot >> minor) || dot != '.' || major < 0 || minor < 0) return std::nullopt;
    return std::make_pair(major, minor);
}

bool hasFlag(const std::string& flags, std::string_view flag)
{
    std::istringstream in(flags);
    std::string f;
    while (in >> f)
        if (f == flag) return true;
    return false;
}

std::optional<Torch113Aten> atenCall(const OpParams& p)
{
    const auto a = stringParam(p, "aten");
    if (!a) return std::nullopt;
    if (*a == "aten::mm") return Torch113Aten::Mm;
    if (*a == "aten::addmm") return Torch113Aten::Addmm;
    if (*a == "aten::bmm") return Torch113Aten::Bmm;
    if (*a == "aten::baddbmm") return Torch113Aten::Baddbmm;
    return std::nullopt;
}

// The gemm op as the aten call saw it: logical operands and the call's shape parameters.
struct RecordedCall {
    Torch113Call call;
    bool transA = false, transB = false;
};

std::optional<RecordedCall> recordedCall(GoldenInputs in, const OpParams& p, Torch113Aten aten,
                                         std::string& why)
{
    RecordedCall r;
    r.call.aten = aten;
    const bool batched = aten == Torch113Aten::Bmm || aten == Torch113Aten::Baddbmm;
    const bool withC = aten == Torch113Aten::Addmm || aten == Torch113Aten::Baddbmm;
    const size_t rank = batched ? 3 : 2;
    if (in.size() != (withC ? 3u : 2u) || in[0].shape.size() != rank || in[1].shape.size() != rank) {
        why = "the recorded inputs do not have the aten call's shapes";
        return std::nullopt;
    }
    auto ta = paramBool("gemm", p, "trans_a", false), tb = paramBool("gemm", p, "trans_b", false);
    auto alpha = paramFloat("gemm", p, "alpha", 1.0), beta = paramFloat("gemm", p, "beta", 0.0);
    if (!ta || !tb || !alpha || !beta) {
        why = "unreadable gemm parameters";
        return std::nullopt;
    }
    r.transA = *ta;
    r.transB = *tb;
    const auto& a = in[0].shape;
    const auto& b = in[1].shape;
    r.call.batch = batched ? int64_t(a[0]) : 1;
    r.call.m = int64_t(r.transA ? a[rank - 1] : a[rank - 2]);
    r.call.k = int64_t(r.transA ? a[rank - 2] : a[rank - 1]);
    r.call.n = int64_t(r.transB ? b[rank - 2] : b[rank - 1]);
    if (batched && b[0] != a[0]) {
        why = "batch dimensions differ (bmm does not broadcast)";
        return std::nullopt;
    }
    r.call.alpha = *alpha;
    r.call.beta = *beta;
    r.call.hasC = withC;
    auto sa = intsParam(p, "a_strides"), sb = intsParam(p, "b_strides");
    if (!sa || !sb) {
        why = "no a_strides/b_strides recorded";
        return std::nullopt;
    }
    r.call.aStrides = *sa;
    r.call.bStrides = *sb;
    if (sa->size() != rank || sb->size() != rank) {
        why = "a_strides/b_strides of the wrong rank";
        return std::nullopt;
    }
    return r;
}

// The smallest and largest magnitude among the finite nonzero values (ignoring subnormals where
// the kernel reads them as zero).
struct Magnitudes {
    double smallest = INFINITY, largest = 0.0;
};

Magnitudes magnitudes(const HostTensor& t, bool subnormalsAsZero)
{
    Magnitudes m;
    for (float x : toFloatVector(t)) {
        const double a = std::fabs(double(x));
        if (a == 0.0 || !std::isfinite(a) || (subnormalsAsZero && a < double(FLT_MIN))) continue;
        m.smallest = std::min(m.smallest, a);
        m.largest = std::max(m.largest, a);
    }
    return m;
}

// A product of two bf16 values is exact in float unless it underflows or overflows; there a fused
// and an unfused multiply-add differ, and which one ran (GCC's contraction in ATen's dot kernel,
// vdpbf16ps's internal product) is not verified (doc §6.5). Empty when no product can.
std::string productsInexact(GoldenInputs in, bool subnormalsAsZero)
{
    const Magnitudes a = magnitudes(in[0], subnormalsAsZero), b = magnitudes(in[1], subnormalsAsZero);
    if (a.smallest * b.smallest < double(FLT_MIN))
        return "a product may underflow, where fused and unfused sums differ";
    if (a.largest * b.largest >= 0x1p128)
        return "a product may overflow, where fused and unfused sums differ";
    return {};
}

std::string narrowName(DType t)
{
    return std::string(dtypeName(t));
}

// "PyTorch CPU: why", unless `why` names the version itself ("PyTorch 1.13 CPU, ...").
std::string cpuContext(const std::string& why)
{
    return why.rfind("PyTorch", 0) == 0 ? why : "PyTorch CPU: " + why;
}

CpuGemmJudgement narrow(DType t, const std::string& why)
{
    CpuGemmJudgement j;
    j.kind = Kind::NarrowAccumulation;
    j.model = narrowName(t) + " accumulation (" + cpuContext(why) + "): k u_" + narrowName(t) +
              " of sum |a||b|, loose";
    return j;
}

CpuGemmJudgement floatSum(DType t, const std::string& what, bool flush)
{
    CpuGemmJudgement j;
    j.kind = Kind::FloatAccumulation;
    j.flushSubnormals = flush;
    j.model = narrowName(t) + " operands, float32 accumulation (" + cpuContext(what) + ")";
    return j;
}

// PyTorch 1.13 (and 2.0, whose CPU GEMMs are 1.13's): the kernel from the recorded environment.
CpuGemmJudgement judgeTorch113(GoldenInputs in, const OpParams& p, bool is113)
{
    const DType t = in[0].dtype;
    const auto aten = atenCall(p);
    if (!aten) return narrow(t, "the aten call is not mm/addmm/bmm/baddbmm, its kernel is unknown");
    const auto mkldnn = intParam(p, "mkldnn");
    const auto flags = stringParam(p, "cpu_flags");
    if (!mkldnn || !flags) return narrow(t, "mkldnn or cpu_flags not recorded, its kernel is unknown");
    std::string why;
    const auto rec = recordedCall(in, p, *aten, why);
    if (!rec) return narrow(t, why);
    const auto outType = paramString("gemm", p, "out_dtype", std::string(dtypeName(t)));
    if (!outType || *outType != dtypeName(t)) return narrow(t, "an out_dtype other than the inputs'");
    Torch113Environment env;
    // mkldnn_bf16_device_check(): avx512bw, avx512vl, avx512dq (doc §2.1).
    env.onednn = *mkldnn != 0 && hasFlag(*flags, "avx512bw") && hasFlag(*flags, "avx512vl") &&
                 hasFlag(*flags, "avx512dq");
    const auto version = stringParam(p, "onednn_version");
    const bool amx = hasFlag(*flags, "amx_bf16") || hasFlag(*flags, "amx_tile");
    env.onednnVerified = version && *version == "2.6.3" && hasFlag(*flags, "avx512_bf16") && !amx &&
                         !find(p, "onednn_max_cpu_isa");
    env.capability = stringParam(p, "cpu_capability").value_or("");
    const auto threads = intParam(p, "torch_threads");
    env.threads = threads && *threads > 0 ? int(*threads) : 1;
    Torch113Plan plan = planTorch113Gemm(rec->call, env);
    std::string notExact = plan.notExact;
    if (!is113)
        notExact = "PyTorch 2.0 runs 1.13's CPU kernels, but the emulation is verified on 1.13 only";
    else if (t != DType::BFloat16)
        notExact = "not bfloat16";
    else if (!threads)
        notExact = "torch_threads not recorded";
    else if (env.capability.empty())
        notExact = "cpu_capability not recorded";
    const bool flush =
        plan.kernel == Torch113Kernel::OneDnnBrgemm || plan.kernel == Torch113Kernel::OneDnnGemmJit;
    const bool alphaZero3d = plan.description.find("alpha = 0") != std::string::npos;  // no products
    if (notExact.empty() && (plan.kernel == Torch113Kernel::FallbackDot || flush) && !alphaZero3d)
        notExact = productsInexact(in, flush);
    const std::string where =
        std::string(is113 ? "PyTorch 1.13" : "PyTorch 2.0") + " CPU, " + plan.description;
    if (notExact.empty() && is113) {
        CpuGemmJudgement j;
        j.kind = Kind::Emulated;
        j.flushSubnormals = flush;
        j.model = where + ": the production order, emulated bit for bit";
        j.call = rec->call;
        j.plan = plan;
        return j;
    }
    if (plan.floatAccumulation) return floatSum(t, where + "; not emulated: " + notExact, flush);
    return narrow(t, where + "; not emulated: " + notExact);
}

}  // namespace

CpuGemmJudgement judgeCpuGemm(GoldenInputs inputs, const OpParams& params)
{
    const DType t = inputs.empty() ? DType::BFloat16 : inputs[0].dtype;
    if (inputs.size() < 2) return narrow(t, "unexpected inputs");
    const auto version = torchVersion(params);
    if (!version) return narrow(t, "torch_version not recorded, its kernel is unknown");
    const auto [major, minor] = *version;
    if (major == 1 && minor == 13) return judgeTorch113(inputs, params, true);
    if (major == 2 && minor == 0) return judgeTorch113(inputs, params, false);
    if (major >= 2) {
        // PyTorch >= 2.1 (pytorch#96074): ATen's fallback sums bf16/fp16 products in float
        // (opmath); oneDNN, MKL and OpenBLAS's sbgemm accumulate in float too. Only the small
        // bmm kernel (k m n < 400) is not verified here.
        const auto aten = atenCall(params);
        const bool batched = aten && (*aten == Torch113Aten::Bmm || *aten == Torch113Aten::Baddbmm);
        if (batched) {
            const auto& a = inputs[0].shape;
            const auto& b = inputs[1].shape;
            const bool ta = gemmFlag(params, "trans_a");
            const bool tb = gemmFlag(params, "trans_b");
            const bool known = a.size() == 3 && b.size() == 3;
            const uint64_t m = known ? (ta ? a[2] : a[1]) : 0, k = known ? (ta ? a[1] : a[2]) : 0;
            const uint64_t n = known ? (tb ? b[1] : b[2]) : 0;
            if (!known || k * m * n < 400)
                return narrow(t, "PyTorch " + std::to_string(major) + "." + std::to_string(minor) +
                                     " CPU, small bmm kernel (k m n < 400), whose accumulation type is not "
                                     "verified for PyTorch 2.x");
        } else if (!aten) {
            return narrow(t, "the aten call is not mm/addmm/bmm/baddbmm, its kernel is unknown");
        }
        return floatSum(t,
                        "PyTorch " + std::to_string(major) + "." + std::to_string(minor) +
                            " CPU: oneDNN, BLAS and ATen's opmath fallback all sum in float",
                        true);
    }
    return narrow(t, "PyTorch " + std::to_string(major) + "." + std::to_string(minor) +
                         " CPU, whose kernels are not modelled");
}

Result<HostTensor> emulateCpuGemm(GoldenInputs in, const OpParams& p, const CpuGemmJudgement& j, int threads)
{
    if (j.kind != Kind::Emulated) return opError("gemm", "the production order is not emulated for this op");
    const Torch113Call& c = j.call;
    const bool transA = gemmFlag(p, "trans_a");
    const bool transB = gemmFlag(p, "trans_b");
    const std::vector<float> sa = toFloatVector(in[0]), sb = toFloatVector(in[1]);
    // Logical row-major operands: A [batch, m, k] (stored [batch, k, m] when trans_a), B [batch, k, n].
    std::vector<float> a(size_t(c.batch * c.m * c.k)), b(size_t(c.batch * c.k * c.n));
    for (int64_t bt = 0; bt < c.batch; ++bt) {
        for (int64_t i = 0; i < c.m; ++i)
            for (int64_t l = 0; l < c.k; ++l)
                a[size_t((bt * c.m + i) * c.k + l)] =
                    sa[size_t(bt * c.m * c.k + (transA ? l * c.m + i : i * c.k + l))];
        for (int64_t l = 0; l < c.k; ++l)
            for (int64_t jj = 0; jj < c.n; ++jj)
                b[size_t((bt * c.k + l) * c.n + jj)] =
                    sb[size_t(bt * c.k * c.n + (transB ? jj * c.k + l : l * c.n + jj))];
    }
    std::vector<uint64_t> shape;
    if (c.aten == Torch113Aten::Bmm || c.aten == Torch113Aten::Baddbmm) shape.push_back(uint64_t(c.batch));
    shape.push_back(uint64_t(c.m));
    shape.push_back(uint64_t(c.n));
    std::vector<float> cb;
    if (c.hasC && in.size() > 2) {
        if (!broadcastsTo(in[2].shape, shape))
            return opError("gemm", "inputs[2] (C) has shape " + shapeString(in[2].shape) +
                                       " which does not broadcast to the output shape " + shapeString(shape));
        const std::vector<float> cv = toFloatVector(in[2]);
        const std::vector<int64_t> idx = broadcastIndex(in[2].shape, shape);
        cb.resize(idx.size());
        for (size_t e = 0; e < idx.size(); ++e) cb[e] = cv[size_t(idx[e])];
    }
    std::vector<float> out(size_t(elementCountOf(shape)));
    runTorch113Gemm(c, j.plan, a.data(), b.data(), cb.empty() ? nullptr : cb.data(), out.data(), threads);
    return fromFloatVector(DType::BFloat16, shape, out);
}

}  // namespace faultline::golden
