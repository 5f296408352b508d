// Glue and math of the element-wise formula ops: add, sub, mul, div, neg, sqrt, rsqrt, exp, pow,
// addcmul, addcdiv, lerp, dropout. Inputs broadcast numpy-style; the output has the first
// input's dtype (every float input must have it) and the broadcast shape.
//
// Golden formulas (float, each step rounded as written: mulRn, divRn, sqrtRn, fmaRn; scalar
// parameters rounded from the trace's double to float; the output rounded once at the end):
//   add      x + y, or fmaRn(alpha, y, x) when |alpha| != 1 (y: the tensor or `other`)
//   sub      x - y, or fmaRn(-alpha, y, x) when |alpha| != 1
//   mul      mulRn(x, y)            div   divRn(x, y)          neg  -x        sqrt  sqrtRn(x)
//   rsqrt    divRn(1, sqrtRn(x))    exp   goldenExp(x) (GoldenMath.h)
//   pow      exponent 0: 1; 1: x; 2: mulRn(x, x); 3: mulRn(mulRn(x, x), x); 0.5: sqrtRn(x);
//            -0.5: rsqrt; -1: divRn(1, x); -2: divRn(1, mulRn(x, x)) (PyTorch's special
//            cases, CPU and CUDA); otherwise, and for a tensor exponent, pow in double rounded to
//            float
//   addcmul  fmaRn(mulRn(value, t1), t2, self)
//   addcdiv  self + divRn(mulRn(value, t1), t2)
//   lerp     d = end - self; |w| < 0.5: fmaRn(w, d, self); else fmaRn(-d, 1 - w, end)
//   dropout  mulRn(mulRn(x, mask), scale)
// (the CPU formulas of PyTorch 1.13, measured bit for bit in float32 by
// tests/core/test_golden_pointwise.cpp).
//
// Bound model. Per element, `pre` is what the golden formula and any implementation the
// recorded settings allow err together before their output roundings (first order, with the
// magnitudes of the golden intermediates); formulaBound (PointwiseSupport.h) turns it into the
// bound. u = 2^-24 for the golden model's float steps; an implementation's steps round with
// u_i (u, or the narrow type's unit roundoff where RecordedNumerics allows narrow steps) and
// its scalars may be rounded to the narrow type first (u_s: 0 or the narrow unit roundoff);
// eta, eta_i: a rounding's absolute error in the subnormal range; kF = kGoldenFunctionUlp u.
//   add/sub  |alpha| = 1, tensor y: 0 (one correctly rounded operation everywhere: exact);
//            scalar y: u_s |y|; |alpha| != 1: (u_i + u_s) |alpha y| + eta_i (the product
//            rounded, unfused, and alpha rounded) + u_s |alpha y| for a scalar y
//   mul      tensor: 0 (exact); scalar: u_s |x y| + eta_i |x|
//   div      tensor: 0 (exact); scalar: (u + u_s) |x / y| + eta |x| (CUDA multiplies by the
//            rounded reciprocal of a CPU scalar)
//   neg, sqrt, pow 0/1/2/0.5/-1: 0 (exact); sqrt and pow 0.5 one ulp where the recorded
//            numerics say the implementation's sqrt is only faithful (BoundOptions::faithfulSqrt)
//   rsqrt    (2u + max(kF, 2 u_i)) |r| (the golden's two roundings; CUDA's rsqrtf or two
//            narrow steps)
//   exp      2 kF ulp_float(r) (the golden's and the library's function error)
//   pow 3    narrow steps only: u_i |r| + eta_i (float32: the same two products everywhere)
//   pow -2   (u + u_i) |r| + eta_i (CUDA divides in double)
//   pow      (1/2 + kF) ulp_float(r) + u_s |e ln|x|| |r| (the exponent rounded to the narrow type)
//   addcmul  p = value t1 t2: (u + 2 u_i + u_s) |p| + eta |t2| + eta_i (2 + |t2| + |value|)
//            (the golden's one product rounding, any two on the other side)
//   addcdiv  q = value t1 / t2: (2u + 2 u_i + u_s) |q| + (eta + eta_i)(1 + |value| + 1/|t2|)
//   lerp     D = |end - self|, W = |w|, C = |1 - w|: the golden branch's roundings (small:
//            u W D; large: 2u C D) + the other side's branch (small: 2 u_i W D; large: 3 u_i C D;
//            either for w <= -0.5, where PyTorch 1.13 takes the small branch (w < 0.5) and later
//            versions the large one (|w| < 0.5 is small)) + u_s W D + eta terms
//   dropout  (3u + u_s) |r| + eta_i (the scale as float(1/(1-p)) or float(1/float(1-p)), and
//            in the narrow type)
// The bound is 0 exactly where pre is 0, so an op whose formula is one correctly rounded
// operation is judged bit for bit.
#include <cmath>
#include <functional>

#include "FormulaGlue.h"
#include "GoldenMath.h"
#include "OpDefinitions.h"
#include "PointwiseSupport.h"

namespace faultline::golden::ops {

namespace {

constexpr double kFn = kGoldenFunctionUlp * 0x1p-24;

// [x, y] or [x] with parameter `scalarName`: (formula skeleton, the scalar when there is one).
struct BinaryForm {
    Formula f;
    bool scalar = false;
    float y = 0;  // the scalar operand, rounded to float
};

Result<BinaryForm> binaryForm(std::string_view op, GoldenInputs in, const OpParams& p,
                              const std::string& scalarName, std::string_view tensorName)
{
    const std::string what =
        "1 input (x) with parameter " + scalarName + ", or 2 inputs (x, " + std::string(tensorName) + ")";
    if (Status s = checkCount(op, in, 1, 2, what); !s) return s.error();
    BinaryForm b;
    b.scalar = in.size() == 1;
    const bool has = p.count(scalarName) != 0;
    if (b.scalar && !has) return opError(op, "needs parameter " + scalarName + " with 1 input");
    if (!b.scalar && has)
        return opError(op, "parameter " + scalarName + " and inputs[1] (" + std::string(tensorName) +
                               ") both give the second operand");
    if (b.scalar) {
        Result<float> y = paramFloat(op, p, scalarName, std::nullopt);
        if (!y) return y.error();
        b.y = *y;
    }
    Result<OutputSpec> out = elementwiseOutput(op, in, in.size());
    if (!out) return out.error();
    b.f.out = std::move(out).value();
    b.f.operands = in.size();
    return b;
}

// ---- add, sub -------------------------------------------------------------------------------

Result<Formula> planAddSub(std::string_view op, GoldenInputs in, const OpParams& p, float sign)
{
    Result<BinaryForm> b = binaryForm(op, in, p, "other", "y");
    if (!b) return b.error();
    Result<float> alpha = paramFloat(op, p, "alpha", 1.0);
    if (!alpha) return alpha.error();
    const float a = sign * *alpha;  // exact
    const bool scalar = b->scalar;
    const float ys = b->y;
    b->f.element = [a, scalar, ys](const float* v, const FormulaRoundoff& r) {
        const float y = scalar ? ys : v[1];
        Elem e;
        double pre = 0.0;
        const double ay = std::fabs(double(a) * double(y));
        if (a == 1.0f) {
            e.value = v[0] + y;
        } else if (a == -1.0f) {
            e.value = v[0] - y;
        } else {
            e.value = fmaRn(a, y, v[0]);
            pre += (r.ui + r.us) * ay + r.etai;
        }
        if (scalar) pre += r.us * ay;
        e.pre = pre;
        return e;
    };
    return std::move(b->f);
}

// ---- mul, div -------------------------------------------------------------------------------

Result<Formula> planMul(GoldenInputs in, const OpParams& p)
{
    Result<BinaryForm> b = binaryForm("mul", in, p, "other", "y");
    if (!b) return b.error();
    const bool scalar = b->scalar;
    const float ys = b->y;
    b->f.element = [scalar, ys](const float* v, const FormulaRoundoff& r) {
        const float y = scalar ? ys : v[1];
        const float value = mulRn(v[0], y);
        const double pre =
            scalar ? r.us * std::fabs(double(v[0]) * double(y)) + (r.us > 0 ? r.etai * std::fabs(v[0]) : 0.0)
                   : 0.0;
        return Elem{value, pre};
    };
    return std::move(b->f);
}

Result<Formula> planDiv(GoldenInputs in, const OpParams& p)
{
    Result<BinaryForm> b = binaryForm("div", in, p, "other", "y");
    if (!b) return b.error();
    const bool scalar = b->scalar;
    const float ys = b->y;
    b->f.element = [scalar, ys](const float* v, const FormulaRoundoff& r) {
        const float y = scalar ? ys : v[1];
        const float value = divRn(v[0], y);
        const double pre =
            scalar ? (r.u + r.us) * std::fabs(double(v[0]) / double(y)) + r.eta * std::fabs(v[0]) : 0.0;
        return Elem{value, pre};
    };
    return std::move(b->f);
}

// ---- unary: neg, sqrt, rsqrt, exp ----------------------------------------------------------

Result<Formula> planUnary(std::string_view op, GoldenInputs in)
{
    if (Status s = checkCount(op, in, 1, 1, "1 input (x)"); !s) return s.error();
    Result<OutputSpec> out = elementwiseOutput(op, in, 1);
    if (!out) return out.error();
    Formula f;
    f.out = std::move(out).value();
    return f;
}

// Correctly rounded, or within one ulp where the implementation's sqrt is only faithful: a tiny
// pre-rounding error (2^-8 u |r|) makes formulaBound admit the neighbouring float and no other.
Elem sqrtElem(float x, const FormulaRoundoff& r)
{
    const float value = sqrtRn(x);
    return Elem{value, r.faithfulSqrt ? 0x1p-8 * r.u * std::fabs(double(value)) : 0.0};
}

Elem rsqrtElem(float x, const FormulaRoundoff& r)
{
    const float value = divRn(1.0f, sqrtRn(x));
    return Elem{value, (2.0 * r.u + std::max(kFn, 2.0 * r.ui)) * std::fabs(double(value))};
}

Result<Formula> planNeg(GoldenInputs in)
{
    Result<Formula> f = planUnary("neg", in);
    if (f) f->element = [](const float* v, const FormulaRoundoff&) { return Elem{-v[0], 0.0}; };
    return f;
}

Result<Formula> planSqrt(GoldenInputs in)
{
    Result<Formula> f = planUnary("sqrt", in);
    if (f) f->element = [](const float* v, const FormulaRoundoff& r) { return sqrtElem(v[0], r); };
    return f;
}

Result<Formula> planRsqrt(GoldenInputs in)
{
    Result<Formula> f = planUnary("rsqrt", in);
    if (f) f->element = [](const float* v, const FormulaRoundoff& r) { return rsqrtElem(v[0], r); };
    return f;
}

Result<Formula> planExp(GoldenInputs in)
{
    Result<Formula> f = planUnary("exp", in);
    if (f)
        f->element = [](const float* v, const FormulaRoundoff&) {
            const float value = goldenExp(v[0]);
            return Elem{value, 2.0 * kGoldenFunctionUlp * ulpAt(DType::Float32, value)};
        };
    return f;
}

// ---- pow ------------------------------------------------------------------------------------

float powDouble(float x, float e)
{
    return float(std::pow(double(x), double(e)));
}

// The golden pow (double, rounded to float) and a library's powf (kGoldenFunctionUlp ulp).
double powError(float value)
{
    return (0.5 + kGoldenFunctionUlp) * ulpAt(DType::Float32, value);
}

Result<Formula> planPow(GoldenInputs in, const OpParams& p)
{
    Result<BinaryForm> b = binaryForm("pow", in, p, "exponent", "exponent");
    if (!b) return b.error();
    if (!b->scalar) {
        b->f.element = [](const float* v, const FormulaRoundoff&) {
            const float value = powDouble(v[0], v[1]);
            return Elem{value, powError(value)};
        };
        return std::move(b->f);
    }
    Result<double> ed = paramDouble("pow", p, "exponent", std::nullopt);
    if (!ed) return ed.error();
    const double e = *ed;
    const float ef = b->y;
    using Fn = std::function<Elem(const float*, const FormulaRoundoff&)>;
    if (e == 0.0)
        b->f.element = Fn([](const float*, const FormulaRoundoff&) { return Elem{1.0f, 0.0}; });
    else if (e == 1.0)
        b->f.element = Fn([](const float* v, const FormulaRoundoff&) { return Elem{v[0], 0.0}; });
    else if (e == 2.0)
        b->f.element = Fn([](const float* v, const FormulaRoundoff&) {
            return Elem{mulRn(v[0], v[0]), 0.0};
        });
    else if (e == 0.5)
        b->f.element = Fn([](const float* v, const FormulaRoundoff& r) { return sqrtElem(v[0], r); });
    else if (e == -1.0)
        b->f.element = Fn([](const float* v, const FormulaRoundoff&) {
            return Elem{divRn(1.0f, v[0]), 0.0};
        });
    else if (e == -0.5)
        b->f.element = Fn([](const float* v, const FormulaRoundoff& r) { return rsqrtElem(v[0], r); });
    else if (e == 3.0)
        b->f.element = Fn([](const float* v, const FormulaRoundoff& r) {
            const float value = mulRn(mulRn(v[0], v[0]), v[0]);
            const double narrow = r.ui > r.u ? r.ui * std::fabs(value) + r.etai : 0.0;
            return Elem{value, narrow};
        });
    else if (e == -2.0)
        b->f.element = Fn([](const float* v, const FormulaRoundoff& r) {
            const float value = divRn(1.0f, mulRn(v[0], v[0]));
            return Elem{value, (r.u + (r.ui > r.u ? r.ui : 0.0)) * std::fabs(value) + r.etai};
        });
    else
        b->f.element = Fn([ef](const float* v, const FormulaRoundoff& r) {
            const float value = powDouble(v[0], ef);
            double pre = powError(value);
            if (r.us > 0 && std::isfinite(value) && value != 0.0f && v[0] != 0.0f)
                pre += r.us * std::fabs(double(ef) * std::log(std::fabs(double(v[0])))) * std::fabs(value);
            return Elem{value, pre};
        });
    return std::move(b->f);
}

// ---- addcmul, addcdiv -----------------------------------------------------------------------

Result<Formula> planAddc(std::string_view op, GoldenInputs in, const OpParams& p, bool divide)
{
    if (Status s = checkCount(op, in, 3, 3, "3 inputs (self, t1, t2)"); !s) return s.error();
    Result<float> scalar = paramFloat(op, p, "value", 1.0);
    if (!scalar) return scalar.error();
    Result<OutputSpec> out = elementwiseOutput(op, in, 3);
    if (!out) return out.error();
    Formula f;
    f.out = std::move(out).value();
    f.operands = 3;
    const float c = *scalar;
    const double ac = std::fabs(double(c));
    if (divide)
        f.element = [c, ac](const float* v, const FormulaRoundoff& r) {
            const float value = v[0] + divRn(mulRn(c, v[1]), v[2]);
            const double q = std::fabs(double(c) * double(v[1]) / double(v[2]));
            const double pre = (2.0 * r.u + 2.0 * r.ui + r.us) * q +
                               (r.eta + r.etai) * (1.0 + ac + 1.0 / std::fabs(double(v[2])));
            return Elem{value, pre};
        };
    else
        f.element = [c, ac](const float* v, const FormulaRoundoff& r) {
            const float value = fmaRn(mulRn(c, v[1]), v[2], v[0]);
            const double prod = std::fabs(double(c) * double(v[1]) * double(v[2]));
            const double at2 = std::fabs(double(v[2]));
            const double pre = (r.u + 2.0 * r.ui + r.us) * prod + r.eta * at2 + r.etai * (2.0 + at2 + ac);
            return Elem{value, pre};
        };
    return f;
}

// ---- lerp -----------------------------------------------------------------------------------

Result<Formula> planLerp(GoldenInputs in, const OpParams& p)
{
    const std::string_view op = "lerp";
    if (Status s =
            checkCount(op, in, 2, 3, "2 inputs (self, end) with parameter weight, or 3 (self, end, weight)");
        !s)
        return s.error();
    const bool scalar = in.size() == 2;
    const bool has = p.count("weight") != 0;
    if (scalar && !has) return opError(op, "needs parameter weight with 2 inputs");
    if (!scalar && has) return opError(op, "parameter weight and inputs[2] (weight) both give the weight");
    float ws = 0.0f;
    if (scalar) {
        Result<float> w = paramFloat(op, p, "weight", std::nullopt);
        if (!w) return w.error();
        ws = *w;
    }
    Result<OutputSpec> out = elementwiseOutput(op, in, in.size());
    if (!out) return out.error();
    Formula f;
    f.out = std::move(out).value();
    f.operands = in.size();
    f.element = [scalar, ws](const float* v, const FormulaRoundoff& r) {
        const float self = v[0], end = v[1], w = scalar ? ws : v[2];
        const float d = end - self;
        const bool small = std::fabs(w) < 0.5f;
        const float value = small ? fmaRn(w, d, self) : fmaRn(-d, 1.0f - w, end);
        const double D = std::fabs(double(end) - double(self));
        const double W = std::fabs(double(w)), C = std::fabs(1.0 - double(w));
        const double golden = small ? r.u * W * D + r.eta : 2.0 * r.u * C * D + r.eta * (1.0 + C);
        const double smallSide = 2.0 * r.ui * W * D + r.etai * (1.0 + W);
        const double largeSide = 3.0 * r.ui * C * D + r.etai * (2.0 + C);
        // PyTorch 1.13 takes the small branch for w < 0.5, later versions for |w| < 0.5: they
        // differ for w <= -0.5 only.
        const double other = w <= -0.5f ? std::max(smallSide, largeSide) : small ? smallSide : largeSide;
        const double pre = golden + other + r.us * W * D;
        return Elem{value, pre};
    };
    return f;
}

// ---- dropout --------------------------------------------------------------------------------

Result<Formula> planDropout(GoldenInputs in, const OpParams& p)
{
    const std::string_view op = "dropout";
    if (Status s = checkCount(op, in, 2, 2, "2 inputs (x, mask)"); !s) return s.error();
    if (Status s = checkGoldenInput(op, in[0], "inputs[0] (x)"); !s) return s.error();
    if (Status s = checkMaskInput(op, in, 1, "mask"); !s) return s.error();
    if (!broadcastsTo(in[1].shape, in[0].shape))
        return opError(op, "inputs[1] (mask) has shape " + shapeString(in[1].shape) + " but needs x's " +
                               shapeString(in[0].shape));
    Result<double> scale = paramDouble(op, p, "scale", std::nullopt);
    if (!scale) return scale.error();
    if (!std::isfinite(*scale) || *scale < 0)
        return opError(op, "parameter scale=" + std::to_string(*scale) + " must be finite and >= 0");
    Formula f;
    f.out = {in[0].dtype, in[0].shape};
    f.operands = 2;
    const float s = float(*scale);
    f.element = [s](const float* v, const FormulaRoundoff& r) {
        const float value = mulRn(mulRn(v[0], v[1]), s);
        return Elem{value, (3.0 * r.u + r.us) * std::fabs(double(value)) + r.etai};
    };
    return f;
}

}  // namespace

// ---- glue -----------------------------------------------------------------------------------

FL_FORMULA_GLUE(Add, "add", planAddSub("add", in, p, 1.0f))
FL_FORMULA_GLUE(Sub, "sub", planAddSub("sub", in, p, -1.0f))
FL_FORMULA_GLUE(Mul, "mul", planMul(in, p))
FL_FORMULA_GLUE(Div, "div", planDiv(in, p))
FL_FORMULA_GLUE(Neg, "neg", planNeg(in))
FL_FORMULA_GLUE(Sqrt, "sqrt", planSqrt(in))
FL_FORMULA_GLUE(Rsqrt, "rsqrt", planRsqrt(in))
FL_FORMULA_GLUE(Exp, "exp", planExp(in))
FL_FORMULA_GLUE(Pow, "pow", planPow(in, p))
FL_FORMULA_GLUE(Addcmul, "addcmul", planAddc("addcmul", in, p, false))
FL_FORMULA_GLUE(Addcdiv, "addcdiv", planAddc("addcdiv", in, p, true))
FL_FORMULA_GLUE(Lerp, "lerp", planLerp(in, p))
FL_FORMULA_GLUE(Dropout, "dropout", planDropout(in, p))

}  // namespace faultline::golden::ops
