#include "RecordedNumerics.h"

#include "../trace/TraceOps.h"

namespace faultline::golden {

namespace {

bool flag(const OpParams& params, const char* name)
{
    const auto it = params.find(name);
    if (it == params.end()) return false;
    if (const auto* i = std::get_if<int64_t>(&it->second)) return *i != 0;
    if (const auto* d = std::get_if<double>(&it->second)) return *d != 0.0;
    if (const auto* s = std::get_if<std::string>(&it->second)) return *s == "1" || *s == "true";
    return false;
}

}  // namespace

RecordedJudgement recordedJudgement(std::string_view op, const OpParams& params, GoldenInputs inputs)
{
    RecordedJudgement j;
    const auto device = params.find("device_type");
    const TraceOpSpec* spec = findTraceOp(op);
    if (device == params.end() || inputs.empty() || !spec) return j;
    const auto* deviceName = std::get_if<std::string>(&device->second);
    const bool cuda = deviceName && *deviceName == "cuda";
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
    if (!narrow) return j;
    switch (spec->numerics) {
        case OpNumerics::MatrixProduct:
        case OpNumerics::Attention: {
            const bool narrowSum = !cuda || flag(params, "reduced_precision_reduction");
            if (narrowSum) {
                j.options.accumulationUnitRoundoff = un;
                j.loose = true;
                j.model = type + " accumulation (" +
                          std::string(cuda ? "reduced_precision_reduction=1" : "PyTorch CPU kernels") +
                          "): k u_" + type + " of sum |a||b|, loose";
            }
            if (spec->numerics == OpNumerics::Attention) {
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
            break;  // one rounding each, or none: nothing to widen
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

}  // namespace faultline::golden
