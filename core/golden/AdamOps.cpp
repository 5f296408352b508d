// Glue and math of the fused Adam/AdamW step (PyTorch's _fused_adam_ / _fused_adamw_ on CPU and
// CUDA): each parameter's step becomes three ops, adam_exp_avg, adam_exp_avg_sq and adam_param,
// each computed from the state the step read (inputs [param, grad, exp_avg, exp_avg_sq], one
// shape and dtype), with the step's hyperparameters as op parameters: lr, beta1, beta2,
// weight_decay, eps, step (the state step after its increment, >= 1), maximize (0/1) and
// decoupled (1: AdamW's decay of the parameter; 0: Adam's weight decay added to the gradient).
//
// The golden value is the step in double (the fused kernels compute in float whatever the dtype):
//   g  = maximize ? -grad : grad;  Adam with weight decay: g += weight_decay * param
//   m' = exp_avg + (1 - beta1) (g - exp_avg)
//   v' = beta2 exp_avg_sq + (1 - beta2) g^2
//   p  = param (AdamW: param (1 - lr weight_decay))
//   p' = p - (lr / (1 - beta1^step)) m' / (sqrt(v') / sqrt(1 - beta2^step) + eps)
// The bound is the float kernel's error before the output rounding, step by step (u = 2^-24 for
// each rounding, scalars rounded to float, sqrt within one ulp, the lerp in either of PyTorch's
// two forms): E_m, E_v, and E_p through sqrt, the division and the update; the golden's own
// error in double is far below it. AMSGrad and gradient scaling are not ops of this kind (the
// capture keeps such calls as aten::).
#include <cmath>
#include <limits>

#include "FormulaGlue.h"

namespace faultline::golden::ops {

namespace {

constexpr double kU = 0x1p-24;
constexpr double kEta = 0x1p-149;  // a float rounding's absolute error near zero, with margin

enum class AdamResult { ExpAvg, ExpAvgSq, Param };

struct AdamHyper {
    double lr = 0, beta1 = 0, beta2 = 0, weightDecay = 0, eps = 0, step = 1;
    bool maximize = false, decoupled = true;
};

Result<AdamHyper> adamHyper(std::string_view op, const OpParams& p)
{
    AdamHyper h;
    const std::pair<const char*, double*> numbers[] = {{"lr", &h.lr},       {"beta1", &h.beta1},
                                                       {"beta2", &h.beta2}, {"weight_decay", &h.weightDecay},
                                                       {"eps", &h.eps},     {"step", &h.step}};
    for (const auto& [name, out] : numbers) {
        Result<double> v = paramDouble(op, p, name, std::nullopt);
        if (!v) return v.error();
        if (!std::isfinite(*v)) return opError(op, std::string("parameter ") + name + " is not finite");
        *out = *v;
    }
    if (h.lr < 0 || h.eps < 0 || h.weightDecay < 0)
        return opError(op, "parameters lr, eps and weight_decay must be >= 0");
    if (!(h.beta1 >= 0 && h.beta1 < 1) || !(h.beta2 >= 0 && h.beta2 < 1))
        return opError(op, "parameters beta1 and beta2 must be in [0, 1)");
    if (h.step < 1 || h.step != std::floor(h.step))
        return opError(op, "parameter step must be an integer >= 1");
    Result<int64_t> maximize = paramInt(op, p, "maximize", 0);
    if (!maximize) return maximize.error();
    Result<int64_t> decoupled = paramInt(op, p, "decoupled", 1);
    if (!decoupled) return decoupled.error();
    h.maximize = *maximize != 0;
    h.decoupled = *decoupled != 0;
    return h;
}

// One element of the step in double, and the float kernel's error of each result.
struct AdamElement {
    double m = 0, v = 0, p = 0;     // exp_avg', exp_avg_sq', param'
    double em = 0, ev = 0, ep = 0;  // their bounds before the output rounding
};

AdamElement adamElement(const AdamHyper& h, double param, double grad, double expAvg, double expAvgSq)
{
    AdamElement e;
    const double bc1 = 1.0 - std::pow(h.beta1, h.step), bc2 = 1.0 - std::pow(h.beta2, h.step);
    const double bc2s = std::sqrt(bc2), stepSize = h.lr / bc1;
    const double c1 = 1.0 - h.beta1, c2 = 1.0 - h.beta2;
    double g = h.maximize ? -grad : grad, eg = 0.0;
    if (h.weightDecay != 0.0 && !h.decoupled) {
        const double wdp = h.weightDecay * param;
        g += wdp;
        eg = 2 * kU * std::fabs(wdp) + kU * std::fabs(g) + kEta;
    }
    // exp_avg.lerp_(g, 1 - beta1), small-weight form m + c (g - m) or large form g - (g - m)(1 - c).
    e.m = expAvg + c1 * (g - expAvg);
    const double diff = std::fabs(g - expAvg);
    e.em = c1 * eg + 3 * kU * (h.beta1 * std::fabs(expAvg) + c1 * std::fabs(g)) + 3 * kU * diff +
           kU * std::fabs(g) + kU * std::fabs(e.m) + 3 * kEta;
    e.v = h.beta2 * expAvgSq + c2 * g * g;
    e.ev = 2 * kU * h.beta2 * std::fabs(expAvgSq) + 3 * kU * c2 * g * g + 2 * c2 * std::fabs(g) * eg +
           c2 * eg * eg + kU * std::fabs(e.v) + 4 * kEta;
    // denom = sqrt(v') / bc2s + eps, each step rounded; sqrt faithful (one ulp).
    const double s = std::sqrt(std::max(e.v, 0.0));
    const double es =
        std::sqrt(std::max(e.v, 0.0) + e.ev) - std::sqrt(std::max(e.v - e.ev, 0.0)) + 2 * kU * s;
    const double q = s / bc2s, eq = es / bc2s + 2 * kU * q + kEta;
    const double d = q + h.eps, ed = eq + kU * h.eps + kU * d + kEta;
    const double update = stepSize * e.m / d;
    double eu = std::numeric_limits<double>::infinity();
    if (d - ed > 0)
        eu = stepSize * e.em / (d - ed) + stepSize * std::fabs(e.m) * ed / (d * (d - ed)) +
             3 * kU * std::fabs(update) + 2 * kEta;
    double p = param, epd = 0.0;
    if (h.weightDecay != 0.0 && h.decoupled) {
        p = param * (1.0 - h.lr * h.weightDecay);
        epd = 2 * kU * std::fabs(p) + kEta;
    }
    e.p = p - update;
    e.ep = epd + eu + kU * std::fabs(e.p) + kEta;
    return e;
}

Result<Formula> planAdam(std::string_view op, GoldenInputs in, const OpParams& p, AdamResult which)
{
    if (Status s = checkCount(op, in, 4, 4, "4 inputs (param, grad, exp_avg, exp_avg_sq)"); !s)
        return s.error();
    Result<OutputSpec> out = elementwiseOutput(op, in, 4);
    if (!out) return out.error();
    for (size_t i = 1; i < 4; ++i)
        if (in[i].shape != in[0].shape)
            return opError(op, inputName(i) + " has shape " + shapeString(in[i].shape) +
                                   " but inputs[0] (param) " + shapeString(in[0].shape));
    Result<AdamHyper> h = adamHyper(op, p);
    if (!h) return h.error();
    Formula f;
    f.out = std::move(out).value();
    f.operands = 4;
    f.element = [hyper = *h, which](const float* v, const FormulaRoundoff&) {
        const AdamElement e = adamElement(hyper, v[0], v[1], v[2], v[3]);
        switch (which) {
            case AdamResult::ExpAvg:
                return Elem{float(e.m), e.em};
            case AdamResult::ExpAvgSq:
                return Elem{float(e.v), e.ev};
            case AdamResult::Param:
                break;
        }
        return Elem{float(e.p), e.ep};
    };
    return f;
}

}  // namespace

FL_FORMULA_GLUE(AdamExpAvg, "adam_exp_avg", planAdam("adam_exp_avg", in, p, AdamResult::ExpAvg))
FL_FORMULA_GLUE(AdamExpAvgSq, "adam_exp_avg_sq", planAdam("adam_exp_avg_sq", in, p, AdamResult::ExpAvgSq))
FL_FORMULA_GLUE(AdamParam, "adam_param", planAdam("adam_param", in, p, AdamResult::Param))

}  // namespace faultline::golden::ops
