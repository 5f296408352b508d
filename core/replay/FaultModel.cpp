#include "FaultModel.h"

#include "../trace/Trace.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

namespace faultline {
namespace {

uint64_t columnsOf(const HostTensor& t)
{
    return t.shape.empty() ? 1 : std::max<uint64_t>(t.shape.back(), 1);
}

// Quiet NaN / +Inf bit pattern of a float dtype; 0 when it has none.
uint64_t specialBits(DType t, bool inf)
{
    switch (t) {
        case DType::Float64:
            return inf ? 0x7ff0000000000000ull : 0x7ff8000000000000ull;
        case DType::Float32:
            return inf ? 0x7f800000u : 0x7fc00000u;
        case DType::Float16:
            return inf ? 0x7c00u : 0x7e00u;
        case DType::BFloat16:
            return inf ? 0x7f80u : 0x7fc0u;
        case DType::Float8E4M3FN:
            return 0x7fu;  // no infinities: NaN either way
        case DType::Float8E5M2:
            return inf ? 0x7cu : 0x7eu;
        default:
            return 0;
    }
}

// Bits [lo, hi] that a defect flips when the user gives no range: the upper mantissa and the
// lowest exponent bit for floats (errors an engineer would notice), the low byte for integers.
std::pair<unsigned, unsigned> defaultFlipBits(DType t)
{
    const BitLayout l = bitLayout(t);
    if (!isFloatingPoint(t)) return {0, std::min(7u, l.totalBits - 1)};
    const unsigned hi = l.mantissaBits;  // lowest exponent bit
    return {l.mantissaBits > 6 ? l.mantissaBits - 6 : 0, hi};
}

unsigned defaultStuckBit(DType t)
{
    const BitLayout l = bitLayout(t);
    if (!isFloatingPoint(t)) return 3;
    return l.mantissaBits >= 3 ? l.mantissaBits - 3 : 0;
}

class FlipModel : public FaultModel {
public:
    double rate = 1e-4;
    int bitLo = -1, bitHi = -1;  // -1: whole word
    std::string modelName = "flip";
    std::string name() const override { return modelName; }
    std::string describe() const override
    {
        return "random single-bit flips at rate " + std::to_string(rate) +
               (bitLo >= 0 ? " in bits " + std::to_string(bitLo) + "-" + std::to_string(bitHi) : "");
    }
    uint64_t corrupt(HostTensor& out, size_t outputIndex, const FaultContext& ctx) const override
    {
        const uint64_t n = out.elementCount();
        if (n == 0 || rate <= 0) return 0;
        std::mt19937_64 rng(
            mixSeed(mixSeed(mixSeed(m_seed ^ ctx.seed, ctx.opIndex), ctx.repetition), outputIndex));
        const unsigned total = bitLayout(out.dtype).totalBits;
        const unsigned lo = bitLo >= 0 ? unsigned(bitLo) : 0;
        const unsigned hi = bitHi >= 0 ? std::min(unsigned(bitHi), total - 1) : total - 1;
        std::uniform_int_distribution<unsigned> bit(lo, std::max(lo, hi));
        uint64_t changed = 0;
        if (rate >= 1.0) {
            for (uint64_t i = 0; i < n; ++i, ++changed)
                setElementBits(out, i, elementBits(out, i) ^ (1ull << bit(rng)));
            return changed;
        }
        std::geometric_distribution<uint64_t> gap(rate);
        for (uint64_t i = gap(rng); i < n; i += 1 + gap(rng)) {
            setElementBits(out, i, elementBits(out, i) ^ (1ull << bit(rng)));
            ++changed;
        }
        return changed;
    }
};

class StuckBitModel : public FaultModel {
public:
    int bit = -1;  // -1: dtype default
    unsigned value = 1, lane = 5, lanes = 32;
    std::string name() const override { return "stuck-bit"; }
    std::string describe() const override
    {
        return "bit " + (bit >= 0 ? std::to_string(bit) : std::string("<dtype default>")) + " stuck at " +
               std::to_string(value) + " in lane " + std::to_string(lane) + " of " + std::to_string(lanes);
    }
    uint64_t corrupt(HostTensor& out, size_t, const FaultContext&) const override
    {
        const unsigned b = bit >= 0 ? unsigned(bit) : defaultStuckBit(out.dtype);
        if (b >= bitLayout(out.dtype).totalBits) return 0;
        const uint64_t cols = columnsOf(out), n = out.elementCount(), mask = 1ull << b;
        uint64_t changed = 0;
        for (uint64_t i = 0; i < n; ++i) {
            if ((i % cols) % lanes != lane) continue;
            const uint64_t v = elementBits(out, i);
            const uint64_t forced = value ? (v | mask) : (v & ~mask);
            if (forced != v) {
                setElementBits(out, i, forced);
                ++changed;
            }
        }
        return changed;
    }
};

class SmModel : public FaultModel {
public:
    uint32_t sm = 7;
    double rate = 0.25;
    std::string name() const override { return "sm"; }
    std::string describe() const override
    {
        return "tiles of virtual SM " + std::to_string(sm) + " (of " + std::to_string(m_sm.sms) + ", " +
               std::to_string(m_sm.tile) + "x" + std::to_string(m_sm.tile) + " tiles) corrupted at rate " +
               std::to_string(rate);
    }
    uint64_t corrupt(HostTensor& out, size_t outputIndex, const FaultContext& ctx) const override
    {
        const uint64_t cols = columnsOf(out), n = out.elementCount();
        std::mt19937_64 rng(
            mixSeed(mixSeed(mixSeed(m_seed ^ ctx.seed, ctx.opIndex), ctx.repetition), outputIndex));
        std::uniform_real_distribution<double> u(0.0, 1.0);
        const auto [lo, hi] = defaultFlipBits(out.dtype);
        std::uniform_int_distribution<unsigned> bit(lo, hi);
        uint64_t changed = 0;
        for (uint64_t i = 0; i < n; ++i) {
            if (m_sm.smOfElement(i / cols, i % cols, cols, ctx.grid) != int32_t(sm)) continue;
            if (u(rng) >= rate) continue;
            setElementBits(out, i, elementBits(out, i) ^ (1ull << bit(rng)));
            ++changed;
        }
        return changed;
    }
};

class RangeModel : public FaultModel {
public:
    double start = -1, length = 1024, stride = 0, rate = 1.0;
    std::string name() const override { return "range"; }
    std::string describe() const override
    {
        return "address range of " + std::to_string(uint64_t(length)) + " elements" +
               (stride > 0 ? " every " + std::to_string(uint64_t(stride)) + " elements" : std::string()) +
               " corrupted";
    }
    uint64_t corrupt(HostTensor& out, size_t outputIndex, const FaultContext& ctx) const override
    {
        const uint64_t n = out.elementCount();
        if (n == 0) return 0;
        std::mt19937_64 rng(
            mixSeed(mixSeed(mixSeed(m_seed ^ ctx.seed, ctx.opIndex), ctx.repetition), outputIndex));
        std::uniform_real_distribution<double> u(0.0, 1.0);
        const auto [lo, hi] = defaultFlipBits(out.dtype);
        std::uniform_int_distribution<unsigned> bit(lo, hi);
        const uint64_t first = start >= 0 ? uint64_t(start) : n / 3;
        const uint64_t step = stride > 0 ? uint64_t(stride) : 1;
        uint64_t changed = 0;
        for (uint64_t k = 0; k < uint64_t(length); ++k) {
            const uint64_t i = first + k * step;
            if (i >= n) break;
            if (rate < 1.0 && u(rng) >= rate) continue;
            setElementBits(out, i, elementBits(out, i) ^ (1ull << bit(rng)));
            ++changed;
        }
        return changed;
    }
};

class NanModel : public FaultModel {
public:
    double rate = 1e-5;
    bool inf = false;
    std::string name() const override { return "nan"; }
    std::string describe() const override
    {
        return std::string(inf ? "Inf" : "NaN") + " written at rate " + std::to_string(rate);
    }
    uint64_t corrupt(HostTensor& out, size_t outputIndex, const FaultContext& ctx) const override
    {
        const uint64_t special = specialBits(out.dtype, inf), n = out.elementCount();
        if (!special || n == 0) return 0;
        std::mt19937_64 rng(
            mixSeed(mixSeed(mixSeed(m_seed ^ ctx.seed, ctx.opIndex), ctx.repetition), outputIndex));
        std::geometric_distribution<uint64_t> gap(std::clamp(rate, 1e-12, 1.0));
        uint64_t changed = 0;
        for (uint64_t i = gap(rng); i < n; i += 1 + gap(rng)) {
            setElementBits(out, i, special);
            ++changed;
        }
        if (changed == 0) {  // at least one, so a small output still shows the defect
            setElementBits(out, rng() % n, special);
            changed = 1;
        }
        return changed;
    }
};

class ProcessFaultModel : public FaultModel {
public:
    bool crash = false;
    uint64_t after = 3;
    std::string name() const override { return crash ? "crash" : "hang"; }
    std::string describe() const override
    {
        return std::string(crash ? "process dies" : "device stops answering") + " after " +
               std::to_string(after) + " ops";
    }
    FaultAction actionBefore(const FaultContext& ctx) const override
    {
        if (ctx.opsRun < after || !applies(ctx)) return FaultAction::None;
        return crash ? FaultAction::Crash : FaultAction::Hang;
    }
    uint64_t corrupt(HostTensor&, size_t, const FaultContext&) const override { return 0; }
};

// No defect: a healthy device of the simulated kind (a peer for the defective ones).
class HealthyModel : public FaultModel {
public:
    std::string name() const override { return "healthy"; }
    std::string describe() const override { return "no defect"; }
    uint64_t corrupt(HostTensor&, size_t, const FaultContext&) const override { return 0; }
};

}  // namespace

uint64_t mixSeed(uint64_t a, uint64_t b)
{
    uint64_t z = a + 0x9e3779b97f4a7c15ull + (b * 0xbf58476d1ce4e5b9ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int32_t VirtualSmLayout::smOfTile(uint64_t t, uint32_t grid) const
{
    const uint64_t block = grid ? t % grid : t;
    return int32_t(block % sms);
}

int32_t VirtualSmLayout::smOfElement(uint64_t row, uint64_t col, uint64_t cols, uint32_t grid) const
{
    const uint64_t tilesPerRow = (cols + tile - 1) / tile;
    return smOfTile((row / tile) * tilesPerRow + col / tile, grid);
}

std::vector<int32_t> VirtualSmLayout::tileMap(uint64_t rows, uint64_t cols, uint32_t grid) const
{
    const uint64_t tr = (rows + tile - 1) / tile, tc = (cols + tile - 1) / tile;
    std::vector<int32_t> map(size_t(tr * tc));
    for (uint64_t t = 0; t < tr * tc; ++t) map[size_t(t)] = smOfTile(t, grid);
    return map;
}

FaultAction FaultModel::actionBefore(const FaultContext&) const
{
    return FaultAction::None;
}

bool FaultModel::applies(const FaultContext& ctx) const
{
    if (!m_opFilter.empty() && ctx.op != m_opFilter) return false;
    if (!m_nameFilter.empty() && ctx.moduleName.find(m_nameFilter) == std::string::npos) return false;
    if (m_failN > 1 && ((ctx.repetition + m_seed) % m_failN) >= m_failK) return false;
    return true;
}

uint64_t FaultModel::inject(std::vector<HostTensor>& outputs, const FaultContext& ctx, const TraceOp* op,
                            std::span<const HostTensor> inputs) const
{
    if (!applies(ctx)) return 0;
    const TriggerInputs in = m_trigger.readsInputs() ? measureTriggerInputs(op, inputs) : TriggerInputs{};
    if (!m_trigger.fires(in, m_seed ^ ctx.seed, ctx.opIndex, ctx.repetition)) return 0;
    uint64_t changed = 0;
    for (size_t i = 0; i < outputs.size(); ++i) {
        HostTensor& out = outputs[i];
        if (!m_trigger.onlySm) {
            changed += corrupt(out, i, ctx);
            continue;
        }
        // Corrupt a copy, then keep the changes that fall in the trigger's SM's tiles.
        HostTensor corrupted = out;
        if (corrupt(corrupted, i, ctx) == 0) continue;
        const uint64_t cols = columnsOf(out), n = out.elementCount();
        for (uint64_t e = 0; e < n; ++e) {
            const uint64_t bits = elementBits(corrupted, e);
            if (bits == elementBits(out, e)) continue;
            if (m_sm.smOfElement(e / cols, e % cols, cols, ctx.grid) != int32_t(*m_trigger.onlySm)) continue;
            setElementBits(out, e, bits);
            ++changed;
        }
    }
    return changed;
}

std::vector<std::string> faultModelNames()
{
    return {"healthy", "flip", "stuck-bit", "sm", "range", "nan", "intermittent", "hang", "crash"};
}

Result<std::unique_ptr<FaultModel>> createFaultModel(const TargetSpec& spec)
{
    if (spec.kind != "sim")
        return Error{"target '" + spec.text + "' is not a simulated device", ErrorCode::Usage};
    std::unique_ptr<FaultModel> model;
    // `library` is read by the sim target itself (SimLibrary.h).
    std::vector<std::string> known = {"op", "name", "k", "n", "seed", "sms", "tile", "library"};
    // A number in [lo, hi], integral unless `real`: a value a model cannot use is an error, never
    // clamped or ignored.
    auto value = [&](const char* key, double fallback, double& out, double lo, double hi,
                     bool real) -> Status {
        auto r = spec.number(key, fallback, lo, hi, real);
        if (!r) return r.error();
        known.push_back(key);
        out = *r;
        return {};
    };
    auto num = [&](const char* key, double fallback, double& out, double lo = 0,
                   double hi = 9007199254740992.0 /* 2^53 */) {
        return value(key, fallback, out, lo, hi, false);
    };
    auto fraction = [&](const char* key, double fallback, double& out) {
        return value(key, fallback, out, 0, 1, true);
    };
    Status st;
    double tmp = 0;
    const std::string& m = spec.model;
    if (m == "healthy") {
        model = std::make_unique<HealthyModel>();
    } else if (m == "flip" || m == "intermittent") {
        auto f = std::make_unique<FlipModel>();
        f->modelName = m;
        if (!(st = fraction("rate", m == "flip" ? 1e-4 : 1e-3, f->rate))) return st.error();
        if (!(st = num("bit_lo", -1, tmp, 0, 63))) return st.error();
        f->bitLo = int(tmp);
        if (!(st = num("bit_hi", -1, tmp, 0, 63))) return st.error();
        f->bitHi = int(tmp);
        if (f->bitLo >= 0 && f->bitHi >= 0 && f->bitLo > f->bitHi)
            return Error{"target '" + spec.text + "': bit_lo must not be above bit_hi", ErrorCode::Usage};
        model = std::move(f);
    } else if (m == "stuck-bit") {
        auto s = std::make_unique<StuckBitModel>();
        if (!(st = num("bit", -1, tmp, 0, 63))) return st.error();
        s->bit = int(tmp);
        if (!(st = num("value", 1, tmp, 0, 1))) return st.error();
        s->value = tmp != 0;
        if (!(st = num("lane", 5, tmp, 0, 65535))) return st.error();
        s->lane = unsigned(tmp);
        if (!(st = num("lanes", 32, tmp, 1, 65536))) return st.error();
        s->lanes = unsigned(tmp);
        if (s->lane >= s->lanes)
            return Error{"target '" + spec.text + "': lane must be below lanes", ErrorCode::Usage};
        model = std::move(s);
    } else if (m == "sm") {
        auto s = std::make_unique<SmModel>();
        if (!(st = num("sm", 7, tmp, 0, 1u << 20))) return st.error();
        s->sm = uint32_t(tmp);
        if (!(st = fraction("rate", 0.25, s->rate))) return st.error();
        model = std::move(s);
    } else if (m == "range") {
        auto r = std::make_unique<RangeModel>();
        if (!(st = num("start", -1, r->start))) return st.error();
        if (!(st = num("length", 1024, r->length, 1))) return st.error();
        if (!(st = num("stride", 0, r->stride))) return st.error();
        if (!(st = fraction("rate", 1.0, r->rate))) return st.error();
        model = std::move(r);
    } else if (m == "nan") {
        auto nm = std::make_unique<NanModel>();
        if (!(st = fraction("rate", 1e-5, nm->rate))) return st.error();
        const std::string v = spec.param("value", "nan");
        known.push_back("value");
        if (v != "nan" && v != "inf")
            return Error{"target '" + spec.text + "': value must be nan or inf", ErrorCode::Usage};
        nm->inf = v == "inf";
        model = std::move(nm);
    } else if (m == "hang" || m == "crash") {
        auto p = std::make_unique<ProcessFaultModel>();
        p->crash = m == "crash";
        if (!(st = num("after", 3, tmp))) return st.error();
        p->after = uint64_t(tmp);
        model = std::move(p);
    } else {
        std::string names;
        for (const std::string& n : faultModelNames()) names += (names.empty() ? "" : ", ") + n;
        return Error{"target '" + spec.text + "': unknown fault model '" + m + "' (known: " + names + ")",
                     ErrorCode::Usage};
    }
    // Conditions under which the defect fires (FaultTrigger.h); hang and crash models strike by
    // op count and a healthy device has no defect to trigger.
    if (m != "healthy" && m != "hang" && m != "crash") {
        auto trigger = parseFaultTrigger(spec, known);
        if (!trigger) return trigger.error();
        model->m_trigger = *trigger;
    }
    for (const auto& [k, v] : spec.params)
        if (std::find(known.begin(), known.end(), k) == known.end())
            return Error{"target '" + spec.text + "': unknown parameter '" + k + "' for sim:" + m,
                         ErrorCode::Usage};
    model->m_opFilter = spec.param("op", "");
    if (!model->m_opFilter.empty() && !isKnownTraceOp(model->m_opFilter))
        return Error{"target '" + spec.text + "': op=" + model->m_opFilter +
                         " is not a trace op: the defect would never be planted",
                     ErrorCode::Usage};
    model->m_nameFilter = spec.param("name", "");
    if (!(st = num("seed", 0, tmp))) return st.error();
    model->m_seed = uint64_t(tmp);
    double k = 1, n = m == "intermittent" ? 3 : 1;
    if (!(st = num("k", k, k)) || !(st = num("n", n, n, 1, 1u << 20))) return st.error();
    if (n < 1 || k < 0 || k > n)
        return Error{"target '" + spec.text + "': need 0 <= k <= n and n >= 1", ErrorCode::Usage};
    model->m_failK = uint32_t(k);
    model->m_failN = uint32_t(n);
    if (!(st = num("sms", 132, tmp, 1, 1u << 20))) return st.error();
    model->m_sm.sms = uint32_t(tmp);
    if (!(st = num("tile", 64, tmp, 1, 1u << 16))) return st.error();
    model->m_sm.tile = uint32_t(tmp);
    if (const auto* sm = dynamic_cast<const SmModel*>(model.get()); sm && sm->sm >= model->m_sm.sms)
        return Error{"target '" + spec.text + "': sm=" + std::to_string(sm->sm) + " is not below sms=" +
                         std::to_string(model->m_sm.sms) + ": no tile would be corrupted",
                     ErrorCode::Usage};
    if (model->m_trigger.onlySm && *model->m_trigger.onlySm >= model->m_sm.sms)
        return Error{"target '" + spec.text + "': only_sm=" + std::to_string(*model->m_trigger.onlySm) +
                         " is not below sms=" + std::to_string(model->m_sm.sms) +
                         ": the defect would never fire",
                     ErrorCode::Usage};
    return model;
}

}  // namespace faultline
