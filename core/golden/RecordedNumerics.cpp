#include "RecordedNumerics.h"

#include <sstream>

#include "../trace/TraceOps.h"
#include "CpuGemmNumerics.h"
#include "GoldenSupport.h"
#include "ReplaySettings.h"

namespace faultline::golden {

namespace {

std::optional<int64_t> positiveInt(const OpParams& params, const char* name)
{
    const auto it = params.find(name);
    if (it == params.end()) return std::nullopt;
    if (const auto* i = std::get_if<int64_t>(&it->second); i && *i > 0) return *i;
    return std::nullopt;
}

// PyTorch before 2.8 (pytorch#153095) let cuBLASLt, which runs addmm with a bias (and every GEMM
// where the preferred BLAS library is cublaslt), reduce in the narrow type whatever
// allow_*_reduced_precision_reduction said. Unknown versions count as old.
bool cublasLtIgnoresSwitch(const OpParams& params)
{
    const auto aten = params.find("aten");
    const auto* name = aten != params.end() ? std::get_if<std::string>(&aten->second) : nullptr;
    const auto blas = params.find("blas_library");
    const auto* library = blas != params.end() ? std::get_if<std::string>(&blas->second) : nullptr;
    const bool lt = (name && *name == "aten::addmm") || (library && *library == "cublaslt");
    if (!lt) return false;
    const auto version = params.find("torch_version");
    const auto* text = version != params.end() ? std::get_if<std::string>(&version->second) : nullptr;
    if (!text) return true;
    int major = 0, minor = 0;
    char dot = 0;
    std::istringstream in(*text);
    if (!(in >> major >> dot >> minor)) return true;
    return major < 2 || (major == 2 && minor < 8);
}

// PyTorch's major version as recorded on the op (torch_version), or nullopt.
std::optional<int> torchMajor(const OpParams& params)
{
    const auto version = params.find("torch_version");
    const auto* text = version != params.end() ? std::get_if<std::string>(&version->second) : nullptr;
    if (!text) return std::nullopt;
    int major = 0;
    std::istringstream in(*text);
    if (!(in >> major)) return std::nullopt;
    return major;
}

// sqrt, or pow whose exponent is 0.5 (PyTorch computes it with sqrt).
bool usesSqrt(std::string_view op, const OpParams& params)
{
    if (op == "sqrt") return true;
    if (op != "pow") return false;
    const auto e = params.find("exponent");
    const auto* d = e != params.end() ? std::get_if<double>(&e->second) : nullptr;
    return d && *d == 0.5;
}

// The largest k of a GEMM's inputs (A's inner dimension).
int64_t gemmK(const OpParams& params, GoldenInputs inputs)
{
    const auto& a = inputs[0].shape;
    if (a.size() < 2) return 1;
    const bool ta = gemmFlag(params, "trans_a");
    return int64_t(ta ? a[a.size() - 2] : a[a.size() - 1]);
}

void judgeCudaProduct(const OpParams& params, GoldenInputs inputs, const std::string& type, double un,
                      bool attention, RecordedJudgement& j)
{
    // Tensor cores add products with truncation, not round-to-nearest (Fasi, Higham, Mikaitis,
    // Pranesh 2021): one float ulp (2u) per addition.
    j.options.accumulationUnitRoundoff = 0x1p-23;
    j.model = type + " operands, float32 accumulation (cuBLAS; additions may truncate)";
    const bool rpr = flag(params, "reduced_precision_reduction");
    const bool lt = !attention && cublasLtIgnoresSwitch(params);
    if (!attention && (rpr || lt)) {
        const int64_t depth =
            inputs[0].dtype == DType::Float16 ? kSplitKMinimumDepthFp16 : kSplitKMinimumDepthBf16;
        const int64_t k = std::max<int64_t>(1, gemmK(params, inputs));
        const auto recorded = positiveInt(params, "split_k_max");
        const int64_t splits = recorded ? *recorded : (k + depth - 1) / depth;
        if (splits > 1) {
            j.options.splitCount = splits;
            j.options.splitUnitRoundoff = un;
            j.loose = true;
            j.model = type + " split-K with up to " + std::to_string(splits) + " parts reduced in " + type +
                      " (" +
                      (rpr ? std::string("reduced_precision_reduction=1")
                           : std::string("cuBLASLt before PyTorch 2.8 ignores the switch")) +
                      (recorded ? std::string(", split_k_max")
                                : ", at least " + std::to_string(depth) + " of k per part") +
                      "): (s+1) u_" + type + " of sum |a||b|, loose";
        }
    } else if (attention && rpr) {
        j.options.accumulationUnitRoundoff = un;
        j.loose = true;
        j.model =
            type + " accumulation (reduced_precision_reduction=1): k u_" + type + " of sum |a||b|, loose";
    }
}

}  // namespace

RecordedJudgement recordedJudgement(std::string_view op, const OpParams& params, GoldenInputs inputs)
{
    RecordedJudgement j;
    const auto device = params.find("device_type");
    const TraceOpSpec* spec = findTraceOp(op);
    const bool cublas = replaysOnCublas(params);
    if ((device == params.end() && !cublas) || inputs.empty() || !spec) return j;
    const auto* deviceName = device != params.end() ? std::get_if<std::string>(&device->second) : nullptr;
    // A replay through cuBLAS (impl=cublas|cublaslt) computes as CUDA's libraries do, whatever
    // device recorded the op.
    const bool cuda = (deviceName && *deviceName == "cuda") || cublas;
    const DType dtype = inputs[0].dtype;
    const bool narrow = dtype == DType::BFloat16 || dtype == DType::Float16;
    const double un = narrow ? unitRoundoff(dtype) : 0.0;
    const std::string type(dtypeName(dtype));
    const bool product =
        spec->numerics == OpNumerics::MatrixProduct || spec->numerics == OpNumerics::Attention;
    if (product && dtype == DType::Float32 && cuda && flag(params, "allow_tf32")) {
        j.options.tf32 = true;
        j.model = "TF32 operands (allow_tf32=1)";
    }
    if (product && dtype == DType::Float32) {
        const CublasOperands operands = replayOperands(params);
        if (operands == CublasOperands::Tf32) {
            j.options.tf32 = true;
            j.model = "TF32 operands (the replay's cuBLAS setting: tf32=1, math_mode=tf32 or 32F_FAST_TF32)";
        } else if (operands == CublasOperands::Fp16 || operands == CublasOperands::Bf16) {
            const bool half = operands == CublasOperands::Fp16;
            j.options.operandUnitRoundoff = half ? 0x1p-11 : 0x1p-8;
            j.model = std::string("operands rounded to ") + (half ? "float16" : "bfloat16") +
                      " (compute_type=32F_FAST_" + (half ? "16F" : "16BF") + ")";
        }
    }
    // PyTorch 1.x's CPU sqrt is IEEE's (correctly rounded), as is CUDA's (PyTorch builds without
    // fast math); PyTorch 2.x's vectorised CPU sqrt is measured one ulp off (2.15, AVX-512), and a
    // CPU op without a recorded version may be either.
    if (!cuda && usesSqrt(op, params) && torchMajor(params).value_or(2) >= 2) {
        j.options.faithfulSqrt = true;
        j.model = "sqrt within one ulp (PyTorch 2.x CPU kernels: not correctly rounded)";
    }
    if (!narrow) return j;
    switch (spec->numerics) {
        case OpNumerics::MatrixProduct:
        case OpNumerics::Attention: {
            const bool attention = spec->numerics == OpNumerics::Attention;
            if (cuda) {
                judgeCudaProduct(params, inputs, type, un, attention, j);
            } else if (!attention) {
                const CpuGemmJudgement g = judgeCpuGemm(inputs, params);
                j.model = g.model;
                j.options.flushSubnormals = g.flushSubnormals;
                j.emulated = g.kind == CpuGemmJudgement::Kind::Emulated;
                // An emulated op keeps the options of its kernel's bound: what other
                // implementations (a replay) are judged with against the recorded output.
                const bool narrowSum = g.kind == CpuGemmJudgement::Kind::NarrowAccumulation ||
                                       (j.emulated && !g.plan.floatAccumulation);
                if (narrowSum) j.options.accumulationUnitRoundoff = un;
                j.loose = g.kind == CpuGemmJudgement::Kind::NarrowAccumulation;
            } else {
                j.options.accumulationUnitRoundoff = un;
                j.loose = true;
                j.model = type + " accumulation (PyTorch CPU kernels): k u_" + type + " of sum |a||b|, loose";
            }
            if (attention) {
                j.options.operandUnitRoundoff = un;  // scaled q and the probabilities in the narrow type
                j.options.intermediateUnitRoundoff = un;
                j.options.intermediateAbsoluteRoundoff = 0.5 * ulpAt(dtype, 0.0);
                if (j.model.empty()) j.model = type + " scores and probabilities";
            }
            break;
        }
        case OpNumerics::Reduction:
            j.options.accumulationUnitRoundoff = un;
            j.model = type + " sums";
            break;
        case OpNumerics::OneRounding:
        case OpNumerics::DataMovement:
        case OpNumerics::FloatSteps:
            break;  // one rounding each, none, or float steps rounded once: nothing to widen
        case OpNumerics::Intermediates:
            j.options.intermediateUnitRoundoff = un;
            j.options.intermediateAbsoluteRoundoff = 0.5 * ulpAt(dtype, 0.0);
            j.model = type + " intermediates";
            break;
        case OpNumerics::NarrowSums:
            j.options.intermediateUnitRoundoff = un;
            j.options.intermediateAbsoluteRoundoff = 0.5 * ulpAt(dtype, 0.0);
            j.model = type + " intermediates";
            if (cuda) break;
            // PyTorch's CPU kernels keep these partial sums in the narrow type: in their order,
            // emulated, where the capture recorded it (cpu_order), else any order, loose.
            if (flag(params, "cpu_order") && !flag(params, "scale_grad_by_freq")) {
                j.model = type + " sums in PyTorch's CPU order (cpu_order), emulated";
                break;
            }
            j.options.accumulationUnitRoundoff = un;
            j.loose = true;
            j.model = type + " sums (PyTorch CPU kernels): (terms - 1) u_" + type + " of sum |x|, loose";
            break;
        case OpNumerics::Pointwise:
            // PyTorch's CPU kernels (1.13) round alpha, value, other and exponent to the narrow
            // type and compute some formulas step by step in it (pow, rsqrt); CUDA kernels that
            // do arithmetic on c10::BFloat16 values round each step too.
            j.options.intermediateUnitRoundoff = un;
            j.options.intermediateAbsoluteRoundoff = 0.5 * ulpAt(dtype, 0.0);
            j.model = type + " steps and scalars";
            break;
        case OpNumerics::Summation:
            // Sums accumulate in float everywhere; the CPU's mean divides the sum rounded to
            // the narrow type.
            j.options.intermediateUnitRoundoff = un;
            j.options.intermediateAbsoluteRoundoff = 0.5 * ulpAt(dtype, 0.0);
            j.model = type + " sums in float, a mean of the sum rounded to " + type;
            break;
    }
    return j;
}

Result<RecordedReference> recordedReference(std::string_view op, GoldenInputs inputs, const OpParams& params,
                                            const GoldenRunOptions& options)
{
    RecordedReference r;
    r.judgement = recordedJudgement(op, params, inputs);
    if (r.judgement.emulated) {
        // Validates inputs and parameters as the golden op does, then runs the production order.
        auto spec = inferGoldenOutput(op, inputs, params);
        if (!spec) return spec.error();
        const CpuGemmJudgement g = judgeCpuGemm(inputs, params);
        auto out = emulateCpuGemm(inputs, params, g, options.threads);
        if (!out) return out.error();
        if (out->dtype != spec->dtype || out->shape != spec->shape)
            return opError(op, "the production order's emulation does not produce the op's output shape");
        r.expected = std::move(out).value();
        r.bound.assign(size_t(r.expected.elementCount()), 0.0);
        return r;
    }
    auto golden = runGolden(op, inputs, params, options);
    if (!golden) return golden.error();
    auto bound = goldenErrorBound(op, inputs, params, *golden, r.judgement.options);
    if (!bound) return bound.error();
    r.expected = std::move(golden).value();
    r.bound = std::move(bound).value();
    return r;
}

}  // namespace faultline::golden
