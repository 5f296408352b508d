#include "PatternLibrary.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>
#include <random>

#include "../FloatFormats.h"
#include "../compare/Signature.h"
#include "../golden/OpRegistry.h"
#include "../replay/FaultModel.h"
#include "../replay/TargetSpec.h"

namespace faultline {
namespace {

constexpr uint64_t kTile = 64;      // the virtual SM tile of the sm patterns
constexpr uint64_t kFineTile = 16;  // the comparison's finest tiles (TileOptions), for the truth

double decodeValue(DType t, uint64_t bits)
{
    switch (t) {
        case DType::BFloat16:
            return bf16ToFloat(uint16_t(bits));
        case DType::Float16:
            return halfToFloat(uint16_t(bits));
        default:
            return floatFromBits(uint32_t(bits));
    }
}

uint64_t encodeValue(DType t, double v)
{
    switch (t) {
        case DType::BFloat16:
            return doubleToBf16(v);
        case DType::Float16:
            return doubleToHalf(v);
        default:
            return floatBits(float(v));
    }
}

bool nonFinite(DType t, uint64_t bits)
{
    return !std::isfinite(decodeValue(t, bits));
}

uint64_t nanBits(DType t)
{
    return t == DType::Float32 ? 0x7fc00000u : t == DType::BFloat16 ? 0x7fc0u : 0x7e00u;
}

uint64_t infBits(DType t)
{
    return t == DType::Float32 ? 0x7f800000u : t == DType::BFloat16 ? 0x7f80u : 0x7c00u;
}

struct Planter {
    PatternCase& c;
    std::mt19937_64 rng;
    std::normal_distribution<double> normal{0.0, 1.0};
    BitLayout layout = bitLayout(c.spec.dtype);
    uint64_t n() const { return c.spec.rows * c.spec.cols; }
    uint64_t get(uint64_t i) const { return elementBits(c.suspect, i); }
    void set(uint64_t i, uint64_t v)
    {
        if (v != get(i)) ++c.planted;
        setElementBits(c.suspect, i, v);
    }
    // How many elements a rate pattern plants.
    uint64_t count(double rate) const
    {
        return std::clamp<uint64_t>(uint64_t(std::llround(rate * double(n()))), kMinScattered, n());
    }
    // `k` distinct random flat indices, ascending.
    std::vector<uint64_t> pick(uint64_t k)
    {
        std::vector<uint64_t> out;
        if (k * 4 >= n()) {
            std::uniform_real_distribution<double> u(0.0, 1.0);
            const double p = double(k) / double(n());
            for (uint64_t i = 0; i < n(); ++i)
                if (u(rng) < p) out.push_back(i);
            return out;
        }
        std::vector<bool> used(size_t(n()), false);
        while (out.size() < k) {
            const uint64_t i = rng() % n();
            if (used[size_t(i)]) continue;
            used[size_t(i)] = true;
            out.push_back(i);
        }
        std::sort(out.begin(), out.end());
        return out;
    }
    // An unrelated value: a fresh draw that differs from the element in several mantissa bits
    // above rounding (so it reads as neither a sign, exponent nor single-bit change).
    uint64_t unrelated(uint64_t old)
    {
        const uint64_t mantissa = (uint64_t(1) << layout.mantissaBits) - 1;
        for (;;) {
            const uint64_t v = encodeValue(c.spec.dtype, normal(rng));
            const uint64_t x = (v ^ old) & mantissa & ~uint64_t(3);
            if (std::popcount(x) >= 2 && !nonFinite(c.spec.dtype, v)) return v;
        }
    }
    // One random exponent bit flipped, the field's top bit excluded (no NaN/Inf from it).
    uint64_t exponentFlip(uint64_t old)
    {
        const unsigned b = layout.mantissaBits + unsigned(rng() % (layout.exponentBits - 1));
        return old ^ (uint64_t(1) << b);
    }
    bool inSmTile(uint64_t i, uint64_t sm, const VirtualSmLayout& l) const
    {
        return l.smOfElement(i / c.spec.cols, i % c.spec.cols, c.spec.cols) == int32_t(sm);
    }
};

Result<uint64_t> applyFaultModel(HostTensor& t, const std::string& spec, uint64_t seed)
{
    auto target = parseTargetSpec(spec);
    if (!target) return target.error();
    auto model = createFaultModel(*target);
    if (!model) return model.error();
    FaultContext ctx;
    ctx.op = "gemm";
    ctx.seed = seed;
    return (*model)->corrupt(t, 0, ctx);
}

std::string num(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

// Moves kNoiseShare of the elements by 1 or 2 ulp (finite, same sign, nonzero).
void addNoise(HostTensor& t, std::mt19937_64& rng)
{
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const uint64_t signBit = uint64_t(1) << (bitLayout(t.dtype).totalBits - 1);
    for (uint64_t i = 0; i < t.elementCount(); ++i) {
        if (u(rng) >= kNoiseShare) continue;
        const uint64_t b = elementBits(t, i), step = 1 + rng() % 2;
        const uint64_t nb = (rng() & 1) ? b + step : b - step;
        if (((nb ^ b) & signBit) != 0 || nonFinite(t.dtype, nb) || decodeValue(t.dtype, nb) == 0 ||
            decodeValue(t.dtype, b) == 0)
            continue;
        setElementBits(t, i, nb);
    }
}

Status healthyGemm(PatternCase& c, std::mt19937_64& rng)
{
    const uint64_t rows = c.spec.rows, cols = c.spec.cols, k = kInnerDim;
    std::normal_distribution<float> unit(0.0f, 1.0f);
    std::normal_distribution<float> scaled(0.0f, float(1.0 / std::sqrt(double(k))));
    HostTensor a(DType::Float32, {rows, k}), b(DType::Float32, {k, cols});
    for (uint64_t i = 0; i < a.elementCount(); ++i) a.as<float>()[i] = unit(rng);
    for (uint64_t i = 0; i < b.elementCount(); ++i) b.as<float>()[i] = scaled(rng);
    c.inputs = {std::move(a), std::move(b)};
    golden::GoldenRunOptions run;
    run.threads = 1;
    auto out =
        golden::runGolden("gemm", c.inputs, {{"out_dtype", std::string(dtypeName(c.spec.dtype))}}, run);
    if (!out)
        return Error{"benchmark pattern " + c.spec.pattern + ": " + out.error().message, out.error().code};
    c.healthy = std::move(*out);
    return {};
}

// Plants spec.pattern into c.suspect and sets the truth. Returns an error for an unknown name.
Status plant(Planter& p)
{
    PatternCase& c = p.c;
    const PatternSpec& s = c.spec;
    const DType t = s.dtype;
    const uint64_t rows = s.rows, cols = s.cols, seed = mixSeed(s.seed, 7);
    auto model = [&](const std::string& spec) -> Status {
        auto changed = applyFaultModel(c.suspect, spec + ",seed=" + std::to_string(seed % 1000000007), seed);
        if (!changed)
            return Error{"pattern " + s.pattern + ": " + changed.error().message, changed.error().code};
        c.planted += *changed;
        return {};
    };
    // A rate the fault models plant at least kMinScattered elements with.
    const double rate = std::max(s.rate, double(kMinScattered) / double(rows * cols));
    auto truth = [&](SignatureWhat what, SignatureWhere where) {
        c.what = what;
        c.where = where;
    };
    const std::string& name = s.pattern;
    VirtualSmLayout sm;
    sm.tile = uint32_t(kTile);
    const uint64_t tiles = ((rows + kTile - 1) / kTile) * ((cols + kTile - 1) / kTile);
    sm.sms = uint32_t(tiles);  // one tile per SM
    const uint64_t smId = p.rng() % tiles;

    if (name == "clean") {
        truth(s.noise ? SignatureWhat::Rounding : SignatureWhat::None, SignatureWhere::None);
    } else if (name == "nan_scattered") {
        Status st = model("sim:nan:rate=" + num(rate) + ",value=" + (s.rate >= 1e-3 ? "inf" : "nan"));
        if (!st) return st;
        truth(SignatureWhat::NanInf, SignatureWhere::Scattered);
    } else if (name == "nan_row") {
        const uint64_t r = p.rng() % rows;
        for (uint64_t col = 0; col < cols; ++col) p.set(r * cols + col, nanBits(t));
        truth(SignatureWhat::NanInf, SignatureWhere::RowStripe);
    } else if (name == "nan_tile") {
        for (uint64_t i = 0; i < p.n(); ++i)
            if (p.inSmTile(i, smId, sm) && (p.rng() & 1)) p.set(i, nanBits(t));
        truth(SignatureWhat::NanInf, SignatureWhere::Tile);
    } else if (name == "nan_element") {
        p.set(p.rng() % p.n(), (p.rng() & 1) ? nanBits(t) : infBits(t));
        truth(SignatureWhat::NanInf, SignatureWhere::Element);
    } else if (name == "sign_scattered") {
        const uint64_t sign = uint64_t(1) << (p.layout.totalBits - 1);
        for (uint64_t i : p.pick(p.count(s.rate))) p.set(i, p.get(i) ^ sign);
        truth(SignatureWhat::Sign, SignatureWhere::Scattered);
    } else if (name == "sign_element") {
        const uint64_t i = p.rng() % p.n();
        p.set(i, p.get(i) ^ (uint64_t(1) << (p.layout.totalBits - 1)));
        truth(SignatureWhat::Sign, SignatureWhere::Element);
    } else if (name == "exponent_random") {
        const unsigned lo = p.layout.mantissaBits, hi = lo + p.layout.exponentBits - 1;
        Status st = model("sim:flip:rate=" + num(rate) + ",bit_lo=" + std::to_string(lo) +
                          ",bit_hi=" + std::to_string(hi));
        if (!st) return st;
        truth(SignatureWhat::Exponent, SignatureWhere::Scattered);
    } else if (name == "random_bit") {
        Status st = model("sim:flip:rate=" + num(rate) + ",bit_lo=2");
        if (!st) return st;
        truth(SignatureWhat::RandomBit, SignatureWhere::Scattered);
    } else if (name == "fixed_bit" || name == "bit_flip") {
        Status st = model("sim:flip:rate=" + num(rate) + ",bit_lo=" + std::to_string(s.bit) +
                          ",bit_hi=" + std::to_string(s.bit));
        if (!st) return st;
        const unsigned m = p.layout.mantissaBits, sign = p.layout.totalBits - 1;
        if ((uint64_t(1) << s.bit) <= kRoundingUlps)
            truth(SignatureWhat::Rounding, SignatureWhere::None);  // a rounding-sized flip
        else if (unsigned(s.bit) == sign)
            truth(SignatureWhat::Sign, SignatureWhere::Scattered);
        else if (unsigned(s.bit) >= m)
            truth(SignatureWhat::Exponent, SignatureWhere::Scattered);
        else
            truth(SignatureWhat::FixedBit, SignatureWhere::Scattered);
    } else if (name == "stuck_lane" || name == "stuck_column") {
        const uint64_t lanes = name == "stuck_lane" ? 32 : cols;
        Status st = model("sim:stuck-bit:bit=" + std::to_string(s.bit) + ",value=" + std::to_string(s.value) +
                          ",lane=" + std::to_string(p.rng() % std::min(lanes, cols)) +
                          ",lanes=" + std::to_string(lanes));
        if (!st) return st;
        truth(SignatureWhat::StuckBit, SignatureWhere::ColumnStripe);
    } else if (name == "garbage_scattered" || name == "garbage_widespread") {
        for (uint64_t i : p.pick(p.count(s.rate))) p.set(i, p.unrelated(p.get(i)));
        truth(SignatureWhat::MultiBit, SignatureWhere::Scattered);
    } else if (name == "garbage_element") {
        const uint64_t i = p.rng() % p.n();
        p.set(i, p.unrelated(p.get(i)));
        truth(SignatureWhat::MultiBit, SignatureWhere::Element);
    } else if (name == "sm_tile") {
        Status st = model("sim:sm:sm=" + std::to_string(smId) + ",sms=" + std::to_string(sm.sms) +
                          ",tile=" + std::to_string(kTile) + ",rate=0.25");
        if (!st) return st;
        truth(SignatureWhat::RandomBit, SignatureWhere::Tile);
    } else if (name == "garbage_rows") {
        const uint64_t k = 1 + p.rng() % 3;
        for (uint64_t j = 0; j < k; ++j) {
            const uint64_t r = p.rng() % rows;
            for (uint64_t col = 0; col < cols; ++col)
                p.set(r * cols + col, p.unrelated(p.get(r * cols + col)));
        }
        truth(SignatureWhat::MultiBit, SignatureWhere::RowStripe);
    } else if (name == "garbage_column") {
        const uint64_t col = p.rng() % cols;
        for (uint64_t r = 0; r < rows; ++r) p.set(r * cols + col, p.unrelated(p.get(r * cols + col)));
        truth(SignatureWhat::MultiBit, SignatureWhere::ColumnStripe);
    } else if (name == "range") {
        const uint64_t start = p.n() / 3 + 17 + p.rng() % 64;
        Status st = model("sim:range:start=" + std::to_string(start) + ",length=1000");
        if (!st) return st;
        truth(SignatureWhat::RandomBit, SignatureWhere::AddressRange);
    } else if (name == "periodic") {
        // A stride that draws no columns: it neither divides nor is a multiple of the row length.
        const uint64_t periods[] = {97, 100, 129, 250, 333};
        uint64_t period = 0;
        for (int tries = 0; tries < 16 && period == 0; ++tries) {
            const uint64_t cand = periods[p.rng() % std::size(periods)];
            if (cols % cand != 0 && cand % cols != 0) period = cand;
        }
        if (period == 0) period = 97;
        const uint64_t run = (p.rng() & 1) ? 4 : 1;
        const uint64_t start = p.rng() % period;
        const uint64_t count = std::min<uint64_t>(200, (p.n() - start) / period);
        for (uint64_t k = 0; k < count; ++k)
            for (uint64_t j = 0; j < run; ++j) {
                const uint64_t i = start + k * period + j;
                p.set(i, p.unrelated(p.get(i)));
            }
        truth(SignatureWhat::MultiBit, SignatureWhere::Periodic);
    } else if (name == "stuck_in_sm_tile") {
        const uint64_t mask = uint64_t(1) << s.bit;
        for (uint64_t i = 0; i < p.n(); ++i)
            if (p.inSmTile(i, smId, sm)) p.set(i, s.value ? (p.get(i) | mask) : (p.get(i) & ~mask));
        truth(SignatureWhat::StuckBit, SignatureWhere::Tile);
    } else if (name == "exponent_in_sm_tile") {
        std::uniform_real_distribution<double> u(0.0, 1.0);
        for (uint64_t i = 0; i < p.n(); ++i)
            if (p.inSmTile(i, smId, sm) && u(p.rng) < 0.25) p.set(i, p.exponentFlip(p.get(i)));
        truth(SignatureWhat::Exponent, SignatureWhere::Tile);
    } else if (name == "nan_with_flips") {
        Status st = model("sim:nan:rate=" + num(rate));
        if (!st) return st;
        // A few one-bit flips beside the NaNs (an eighth as many): NaN/Inf stay the story.
        for (uint64_t i : p.pick(std::max<uint64_t>(1, c.planted / 8)))
            p.set(i, p.get(i) ^ (uint64_t(1) << (p.layout.mantissaBits - 2)));
        truth(SignatureWhat::NanInf, SignatureWhere::Scattered);
    } else {
        return Error{"unknown benchmark pattern '" + name + "'", ErrorCode::Usage};
    }
    return {};
}

}  // namespace

std::vector<std::string> patternNames()
{
    return {"clean",
            "nan_scattered",
            "nan_row",
            "nan_tile",
            "nan_element",
            "sign_scattered",
            "sign_element",
            "exponent_random",
            "random_bit",
            "fixed_bit",
            "stuck_lane",
            "stuck_column",
            "garbage_scattered",
            "garbage_widespread",
            "garbage_element",
            "sm_tile",
            "garbage_rows",
            "garbage_column",
            "range",
            "periodic",
            "stuck_in_sm_tile",
            "exponent_in_sm_tile",
            "nan_with_flips",
            "bit_flip"};
}

std::string patternCaseId(const PatternSpec& s)
{
    std::string id = std::string(dtypeName(s.dtype)) + " " + std::to_string(s.rows) + "x" +
                     std::to_string(s.cols) + " " + s.pattern;
    if (s.rate > 0) id += " rate=" + num(s.rate);
    if (s.bit >= 0) id += " bit=" + std::to_string(s.bit);
    if (s.value >= 0) id += " value=" + std::to_string(s.value);
    if (s.noise) id += " +noise";
    return id;
}

Result<std::vector<PatternSpec>> patternSpecs(const PatternSetOptions& o)
{
    if (o.sizes.empty()) return Error{"benchmark: no tensor size given", ErrorCode::Usage};
    if (o.dtypes.empty()) return Error{"benchmark: no dtype given", ErrorCode::Usage};
    for (const auto& [r, c] : o.sizes)
        if (r < kTile || c < kTile || r * c < 4 * kTile * kTile)
            return Error{"benchmark: size " + std::to_string(r) + "x" + std::to_string(c) +
                             " is too small: each side at least 64 and at least 4 tiles of 64x64 elements",
                         ErrorCode::Usage};
    for (DType t : o.dtypes)
        if (t != DType::Float32 && t != DType::BFloat16 && t != DType::Float16)
            return Error{
                "benchmark: dtype " + std::string(dtypeName(t)) + " is not one of float32, bfloat16, float16",
                ErrorCode::Usage};
    std::vector<PatternSpec> out;
    auto add = [&](PatternSpec s) {
        s.seed = mixSeed(o.seed, out.size());
        out.push_back(std::move(s));
    };
    for (const auto& size : o.sizes) {
        const uint64_t rows = size.first, cols = size.second;  // named copies: lambdas capture them
        for (DType t : o.dtypes) {
            const int m = int(bitLayout(t).mantissaBits);
            for (bool noise : {false, true}) {
                if (noise && !o.noiseVariants) continue;
                auto base = [&](const char* pattern, const char* group, double rate = 0, int bit = -1,
                                int value = -1) {
                    PatternSpec s;
                    s.pattern = pattern;
                    s.group = group;
                    s.dtype = t;
                    s.rows = rows;
                    s.cols = cols;
                    s.rate = rate;
                    s.bit = bit;
                    s.value = value;
                    s.noise = noise;
                    add(s);
                };
                if (o.clean) base("clean", "clean");
                for (double r : {1e-4, 1e-3}) base("nan_scattered", "single", r);
                base("nan_row", "single");
                base("nan_tile", "single");
                base("nan_element", "single");
                for (double r : {1e-4, 1e-3}) base("sign_scattered", "single", r);
                base("sign_element", "single");
                for (double r : {1e-3, 1e-2}) base("exponent_random", "single", r);
                for (double r : {1e-4, 1e-2}) base("random_bit", "single", r);
                base("fixed_bit", "single", 1e-3, m - 1);
                base("fixed_bit", "single", 1e-2, m - 3);
                base("stuck_lane", "single", 0, m - 1, 1);
                base("stuck_lane", "single", 0, m - 4, 0);
                base("stuck_column", "single", 0, m, 1);
                for (double r : {1e-4, 1e-3}) base("garbage_scattered", "single", r);
                for (double r : {0.02, 0.3}) base("garbage_widespread", "single", r);
                base("garbage_element", "single");
                base("sm_tile", "single");
                base("garbage_rows", "single");
                base("garbage_column", "single");
                base("range", "single");
                base("periodic", "single");
                if (o.combined) {
                    base("stuck_in_sm_tile", "combined", 0, m - 2, 1);
                    base("exponent_in_sm_tile", "combined");
                    base("nan_with_flips", "combined", 1e-3);
                }
            }
        }
    }
    if (o.bitSweep) {
        const auto [rows, cols] = o.sizes.front();
        for (DType t : o.dtypes)
            for (unsigned b = 0; b < bitLayout(t).totalBits; ++b) {
                PatternSpec s;
                s.pattern = "bit_flip";
                s.group = "bit_sweep";
                s.dtype = t;
                s.rows = rows;
                s.cols = cols;
                s.rate = 1e-3;
                s.bit = int(b);
                add(s);
            }
    }
    return out;
}

Result<PatternCase> generatePattern(const PatternSpec& spec)
{
    PatternCase c;
    c.spec = spec;
    std::mt19937_64 rng(spec.seed);
    if (Status st = healthyGemm(c, rng); !st) return st.error();
    c.suspect = c.healthy;
    if (spec.noise) addNoise(c.suspect, rng);
    const HostTensor before = c.suspect;
    Planter p{c, std::mt19937_64(mixSeed(spec.seed, 3))};
    Status st = plant(p);
    if (!st) return st.error();
    if (c.where == SignatureWhere::Scattered || c.where == SignatureWhere::Widespread) {
        // Random placement: widespread when the planted elements reach half the finest tiles.
        const uint64_t gridCols = (spec.cols + kFineTile - 1) / kFineTile;
        const uint64_t tiles = ((spec.rows + kFineTile - 1) / kFineTile) * gridCols;
        std::vector<bool> hit(size_t(tiles), false);
        uint64_t occupied = 0;
        for (uint64_t i = 0; i < c.suspect.elementCount(); ++i) {
            if (elementBits(c.suspect, i) == elementBits(before, i)) continue;
            const size_t t = size_t((i / spec.cols / kFineTile) * gridCols + (i % spec.cols) / kFineTile);
            if (!hit[t]) ++occupied;
            hit[t] = true;
        }
        c.where = 2 * occupied >= tiles ? SignatureWhere::Widespread : SignatureWhere::Scattered;
    }
    if (c.planted == 1 && c.where != SignatureWhere::None) c.where = SignatureWhere::Element;
    if (c.planted == 0 && c.what != SignatureWhat::None && c.what != SignatureWhat::Rounding) {
        // Nothing changed (every element already held the stuck value): nothing to name.
        c.what = spec.noise ? SignatureWhat::Rounding : SignatureWhat::None;
        c.where = SignatureWhere::None;
    }
    c.kind = signatureKindFor(c.what, c.where);
    return c;
}

}  // namespace faultline
