// Pairwise sweeps of simulated ranks: the transfers, the rounds, and the judgement.
#include "Sweep.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>

#include "../HostTensor.h"
#include "../compare/Divergence.h"
#include "../compare/Signature.h"
#include "../compare/TensorComparer.h"
#include "../replay/FaultModel.h"
#include "LinkFault.h"
#include "LinkMatrix.h"

namespace faultline {
namespace {

constexpr uint64_t kRowElements = 256;  // payloads are [rows, 256] float32: rows for the signature

std::string patternOp(SweepPattern p)
{
    return p == SweepPattern::AllReduce   ? "all_reduce"
           : p == SweepPattern::AllGather ? "all_gather"
                                          : "sendrecv";
}

HostTensor payload(const SweepOptions& o, size_t src, size_t dst, uint32_t rep)
{
    const uint64_t elements = o.bytes / 4;
    HostTensor t(DType::Float32, elements % kRowElements == 0
                                     ? std::vector<uint64_t>{elements / kRowElements, kRowElements}
                                     : std::vector<uint64_t>{elements});
    std::mt19937_64 rng(o.seed * 1000003 + src * 7919 + dst * 104729 + rep);
    std::normal_distribution<float> n(0.0f, 1.0f);
    float* v = t.as<float>();
    for (uint64_t i = 0; i < t.elementCount(); ++i) v[i] = n(rng);
    return t;
}

std::string signatureOf(const HostTensor& got, const HostTensor& expected)
{
    TensorComparer comparer;
    auto d = comparer.compare(got.dtype, got.shape, got.data.data(), expected.data.data(), "transfer");
    if (!d) return "unknown";
    return std::string(signatureKindName(d->signature.kind));
}

// The block kept for the links view: whole rows within `limit` bytes (at least one row).
std::shared_ptr<const SweepBlock> keptBlock(const HostTensor& got, const HostTensor& expected, uint32_t rep,
                                            uint64_t limit)
{
    auto block = std::make_shared<SweepBlock>();
    block->rep = rep;
    block->totalBytes = got.data.size();
    block->shape = got.shape;
    const uint64_t rowBytes = got.shape.size() == 2 ? got.shape[1] * 4 : 4;
    const uint64_t rows = std::max<uint64_t>(1, std::min<uint64_t>(got.data.size(), limit) / rowBytes);
    block->shape.front() = std::min<uint64_t>(block->shape.front(), rows);
    const size_t keep = size_t(block->shape.front() * (got.shape.size() == 2 ? got.shape[1] : 1) * 4);
    const auto* g = reinterpret_cast<const unsigned char*>(got.data.data());
    const auto* e = reinterpret_cast<const unsigned char*>(expected.data.data());
    block->received.assign(g, g + keep);
    block->expected.assign(e, e + keep);
    return block;
}

std::vector<std::pair<size_t, size_t>> allPairs(size_t n)
{
    std::vector<std::pair<size_t, size_t>> pairs;
    for (size_t a = 0; a < n; ++a)
        for (size_t b = a + 1; b < n; ++b) pairs.emplace_back(a, b);
    return pairs;
}

}  // namespace

std::string sweepPatternName(SweepPattern p)
{
    return p == SweepPattern::AllReduce   ? "allreduce"
           : p == SweepPattern::AllGather ? "allgather"
                                          : "sendrecv";
}

Result<SweepPattern> parseSweepPattern(const std::string& name)
{
    for (SweepPattern p : {SweepPattern::AllGather, SweepPattern::AllReduce, SweepPattern::SendRecv})
        if (sweepPatternName(p) == name) return p;
    return Error{"--pattern " + name + " is not allgather, allreduce or sendrecv", ErrorCode::Usage};
}

std::vector<size_t> SweepReport::faultyGpus() const
{
    std::vector<size_t> out;
    for (const SweepGpu& g : gpus)
        if (g.faulty) out.push_back(g.index);
    return out;
}

struct SweepRank::Impl {
    SweepOptions options;
    size_t self = 0;
    TargetSpec spec;
    std::unique_ptr<FaultModel> model;
    LinkFault link;
    uint64_t handled = 0;  // transfers through this GPU (hang/crash models count these)

    // What this GPU does to the data passing through it; false when it does not answer.
    bool passThrough(HostTensor& t, uint32_t rep, RunOutcome& failure)
    {
        FaultContext ctx;
        ctx.op = patternOp(options.pattern);
        ctx.opIndex = handled;
        ctx.opsRun = handled++;
        ctx.repetition = rep;
        ctx.seed = options.seed + handled;
        if (!model->applies(ctx)) return true;
        const FaultAction action = model->actionBefore(ctx);
        if (action != FaultAction::None) {
            failure = outcomeOf(action);
            return false;
        }
        model->corrupt(t, 0, ctx);
        return true;
    }
};

SweepRank::SweepRank(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
SweepRank::SweepRank(SweepRank&&) noexcept = default;
SweepRank& SweepRank::operator=(SweepRank&&) noexcept = default;
SweepRank::~SweepRank() = default;

Result<SweepRank> SweepRank::create(const SweepOptions& options, size_t self)
{
    if (self >= options.targets.size()) return Error{"rank beyond the targets", ErrorCode::Usage};
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    impl->self = self;
    auto spec = parseTargetSpec(options.targets[self]);
    if (!spec) return Error{spec.message(), ErrorCode::Usage};
    if (spec->kind != "sim")
        return Error{"target '" + spec->text +
                         "': sweeps run on sim: ranks here; NCCL ranks (cuda:N) are not built into sweep yet",
                     ErrorCode::Usage};
    auto link = takeLinkFault(*spec, self, options.targets.size());
    if (!link) return link.error();
    auto model = createFaultModel(*spec);
    if (!model) return Error{model.message(), ErrorCode::Usage};
    if ((*model)->trigger().any())
        return Error{"target '" + spec->text + "': " + kTriggerRefusal, ErrorCode::Usage};
    impl->spec = *spec;
    impl->model = std::move(*model);
    impl->link = *link;
    return SweepRank(std::move(impl));
}

std::string SweepRank::describe() const
{
    return m_impl->model->describe() + "; " + m_impl->link.describe();
}

SweepWire SweepRank::send(size_t dst, uint32_t rep)
{
    Impl& d = *m_impl;
    HostTensor t = payload(d.options, d.self, dst, rep);
    SweepWire wire;
    wire.answered = d.passThrough(t, rep, wire.failure);
    if (wire.answered && d.link.active() && size_t(d.link.to) == dst)
        d.link.corrupt(reinterpret_cast<unsigned char*>(t.data.data()), t.data.size(), d.self, rep);
    const auto* bytes = reinterpret_cast<const unsigned char*>(t.data.data());
    wire.bytes.assign(bytes, bytes + t.data.size());
    return wire;
}

SweepOutcome SweepRank::receive(size_t src, uint32_t rep, SweepWire wire)
{
    // At most three payloads live at once (what was sent, what arrived and, for allreduce, the
    // golden sum), so a sweep's memory is about 3 x --bytes.
    Impl& d = *m_impl;
    SweepOutcome out;
    const HostTensor sent = payload(d.options, src, d.self, rep);
    if (wire.bytes.size() != sent.data.size()) {
        out.ok = false;
        out.corruptedBytes = sent.data.size();
        out.signature = "truncated";
        return out;
    }
    HostTensor got(sent.dtype, sent.shape);
    std::memcpy(got.data.data(), wire.bytes.data(), wire.bytes.size());
    std::vector<unsigned char>().swap(wire.bytes);
    RunOutcome failure = wire.failure;
    const bool answered = wire.answered && d.passThrough(got, rep, failure);
    if (!answered) {
        out.ok = false;
        out.corruptedBytes = sent.data.size();
        out.signature = nameOf(failure);  // the signature kind: hang | crash
        return out;
    }
    const HostTensor* expected = &sent;
    HostTensor sum;
    if (d.options.pattern == SweepPattern::AllReduce) {
        sum = payload(d.options, d.self, src, rep);  // this rank's own contribution, summed in place
        float* own = sum.as<float>();
        for (uint64_t i = 0; i < got.elementCount(); ++i) {
            const float mine = own[i];
            got.as<float>()[i] = mine + got.as<float>()[i];
            own[i] = mine + sent.as<float>()[i];
        }
        expected = &sum;
    }
    for (size_t i = 0; i < got.data.size(); ++i) out.corruptedBytes += got.data[i] != expected->data[i];
    out.ok = out.corruptedBytes == 0;
    if (!out.ok) {
        out.signature = signatureOf(got, *expected);
        if (d.options.blockBytes > 0) out.block = keptBlock(got, *expected, rep, d.options.blockBytes);
    }
    return out;
}

void addSweepOutcome(SweepTransfer& t, const SweepOutcome& outcome, double seconds, uint64_t bytes)
{
    ++t.reps;
    t.seconds += seconds;
    t.gbps = t.seconds > 0 ? double(bytes) * t.reps / t.seconds / 1e9 : 0;
    if (outcome.ok) return;
    ++t.failures;
    t.corruptedBytes += outcome.corruptedBytes;
}

void finishSweepTransfer(SweepTransfer& t, const std::map<std::string, uint32_t>& signatures)
{
    uint32_t best = 0;
    for (const auto& [kind, n] : signatures)
        if (n > best) {
            best = n;
            t.signature = kind;
        }
}

std::vector<std::pair<size_t, size_t>> sweepFirstRound(size_t n, bool everyPair)
{
    if (everyPair) return allPairs(n);
    std::vector<std::pair<size_t, size_t>> first;
    for (size_t a = 0; a + 1 < n; a += 2) first.emplace_back(a, a + 1);
    if (n % 2) first.emplace_back(0, n - 1);
    return first;
}

std::vector<std::pair<size_t, size_t>> sweepSecondRound(size_t n, const SweepRound& round)
{
    std::vector<std::pair<size_t, size_t>> first;
    std::set<std::pair<size_t, size_t>> failing;
    for (const SweepTransfer& t : round.transfers) {
        if (std::find(first.begin(), first.end(), std::make_pair(t.a, t.b)) == first.end())
            first.emplace_back(t.a, t.b);
        if (t.failures > 0) failing.insert({t.a, t.b});
    }
    std::set<size_t> passingGpus;
    for (const auto& [a, b] : first)
        if (!failing.count({a, b})) {
            passingGpus.insert(a);
            passingGpus.insert(b);
        }
    std::vector<std::pair<size_t, size_t>> second;
    if (failing.empty()) return second;
    if (passingGpus.empty()) {
        // Every pair failed: nothing known good to pair with, so every pair not tried yet.
        for (const auto& p : allPairs(n))
            if (std::find(first.begin(), first.end(), p) == first.end()) second.push_back(p);
        return second;
    }
    // Each GPU of a failing pair meets a GPU of a passing pair: never itself (with an odd count
    // rank 0 is in two first-round pairs, one passing and one failing), never its failing partner,
    // and no pair twice.
    const std::vector<size_t> good(passingGpus.begin(), passingGpus.end());
    std::set<std::pair<size_t, size_t>> chosen;
    size_t k = 0;
    for (const auto& [a, b] : failing)
        for (size_t gpu : {a, b}) {
            for (size_t tried = 0; tried < good.size(); ++tried) {
                const size_t partner = good[k++ % good.size()];
                const auto pair = std::make_pair(std::min(gpu, partner), std::max(gpu, partner));
                if (partner == gpu || pair == std::make_pair(a, b) || chosen.count(pair)) continue;
                chosen.insert(pair);
                second.push_back(pair);
                break;
            }
        }
    return second;
}

Status checkSweepOptions(const SweepOptions& options)
{
    if (options.targets.size() < 2) return Error{"a sweep needs at least two targets", ErrorCode::Usage};
    if (options.targets.size() > kMaxLinkMatrixRanks)
        return Error{"a sweep takes at most " + std::to_string(kMaxLinkMatrixRanks) + " targets, not " +
                         std::to_string(options.targets.size()),
                     ErrorCode::Usage};
    if (options.bytes == 0 || options.bytes % 4 != 0 || options.bytes > kMaxSweepBytes)
        return Error{"--bytes must be a positive multiple of 4, at most " +
                         std::to_string(kMaxSweepBytes >> 20) +
                         " MiB (a sweep holds about three payloads at once)",
                     ErrorCode::Usage};
    if (options.reps == 0) return Error{"--reps must be at least 1", ErrorCode::Usage};
    return {};
}

Result<SweepReport> runSweep(const SweepOptions& options)
{
    if (Status st = checkSweepOptions(options); !st) return st.error();
    SweepReport report;
    report.options = options;
    std::vector<SweepRank> ranks;
    for (size_t i = 0; i < options.targets.size(); ++i) {
        auto rank = SweepRank::create(options, i);
        if (!rank) return rank.error();
        report.descriptions.push_back(rank->describe());
        ranks.push_back(std::move(*rank));
    }
    auto runRound = [&](const std::vector<std::pair<size_t, size_t>>& pairs) {
        SweepRound round;
        for (const auto& [a, b] : pairs)
            for (bool aToB : {true, false}) {
                SweepTransfer t;
                t.a = a;
                t.b = b;
                t.aToB = aToB;
                std::map<std::string, uint32_t> signatures;
                for (uint32_t rep = 0; rep < options.reps; ++rep) {
                    const auto start = std::chrono::steady_clock::now();
                    SweepWire wire = ranks[t.src()].send(t.dst(), rep);
                    const SweepOutcome o = ranks[t.dst()].receive(t.src(), rep, std::move(wire));
                    addSweepOutcome(
                        t, o, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                        options.bytes);
                    if (!o.ok) ++signatures[o.signature];
                    if (o.block && !t.block) t.block = o.block;
                }
                finishSweepTransfer(t, signatures);
                round.transfers.push_back(t);
            }
        return round;
    };
    const size_t n = ranks.size();
    report.rounds.push_back(runRound(sweepFirstRound(n, options.allPairs)));
    if (!options.allPairs)
        if (const auto second = sweepSecondRound(n, report.rounds[0]); !second.empty())
            report.rounds.push_back(runRound(second));
    judgeSweep(report);
    return report;
}

void judgeSweep(SweepReport& report)
{
    const size_t n = report.options.targets.size();
    std::map<std::pair<size_t, size_t>, SweepLink> edges;  // (src, dst)
    for (const SweepRound& r : report.rounds)
        for (const SweepTransfer& t : r.transfers) {
            SweepLink& e = edges[{t.src(), t.dst()}];
            e.src = t.src();
            e.dst = t.dst();
            e.reps += t.reps;
            e.failures += t.failures;
            if (!t.signature.empty()) e.signature = t.signature;
        }
    report.gpus.assign(n, SweepGpu{});
    report.faultyLinks.clear();
    for (size_t g = 0; g < n; ++g) {
        SweepGpu& gpu = report.gpus[g];
        gpu.index = g;
        std::set<size_t> failed, tested;
        for (const auto& [key, e] : edges) {
            if (e.src != g && e.dst != g) continue;
            const size_t partner = e.src == g ? e.dst : e.src;
            tested.insert(partner);
            gpu.transfers += e.reps;
            gpu.failures += e.failures;
            if (e.failures > 0) failed.insert(partner);
        }
        gpu.failedPartners.assign(failed.begin(), failed.end());
        gpu.testedPartners.assign(tested.begin(), tested.end());
        gpu.rate = wilsonInterval(gpu.failures, gpu.transfers);
    }
    auto bothWays = [&](size_t a, size_t b) {
        const auto ab = edges.find({a, b}), ba = edges.find({b, a});
        return ab != edges.end() && ba != edges.end() && ab->second.failures > 0 && ba->second.failures > 0;
    };
    for (SweepGpu& gpu : report.gpus) {
        if (gpu.failedPartners.size() >= 2) {
            gpu.faulty = true;
        } else if (gpu.failedPartners.size() == 1 && gpu.testedPartners.size() == 1) {
            // Its only partner: faulty when they fail both ways and the partner passes elsewhere.
            const SweepGpu& partner = report.gpus[gpu.failedPartners[0]];
            gpu.faulty = bothWays(gpu.index, partner.index) &&
                         partner.testedPartners.size() > partner.failedPartners.size();
        }
    }
    for (auto& [key, e] : edges) {
        if (e.failures == 0 || report.gpus[e.src].faulty || report.gpus[e.dst].faulty) continue;
        e.rate = wilsonInterval(e.failures, e.reps);
        report.faultyLinks.push_back(e);
    }
}

nlohmann::json sweepTransferJson(const SweepTransfer& t)
{
    return {{"a", t.a},
            {"b", t.b},
            {"direction", t.aToB ? "a->b" : "b->a"},
            {"src", t.src()},
            {"dst", t.dst()},
            {"pass", t.failures == 0},
            {"reps", t.reps},
            {"failures", t.failures},
            {"corrupted_bytes", t.corruptedBytes},
            {"signature", t.signature.empty() ? nlohmann::json() : nlohmann::json(t.signature)},
            {"gbps", t.gbps},
            {"seconds", t.seconds}};
}

Result<SweepTransfer> sweepTransferFromJson(const nlohmann::json& j)
{
    try {
        SweepTransfer t;
        t.a = j.at("a").get<size_t>();
        t.b = j.at("b").get<size_t>();
        t.aToB = j.at("direction").get<std::string>() == "a->b";
        t.reps = j.at("reps").get<uint32_t>();
        t.failures = j.at("failures").get<uint32_t>();
        t.corruptedBytes = j.at("corrupted_bytes").get<uint64_t>();
        if (j.at("signature").is_string()) t.signature = j["signature"].get<std::string>();
        t.gbps = j.at("gbps").get<double>();
        t.seconds = j.value("seconds", 0.0);
        return t;
    } catch (const nlohmann::json::exception& e) {
        return Error{std::string("a sweep transfer record is malformed: ") + e.what(), ErrorCode::Protocol};
    }
}

nlohmann::json sweepJson(const SweepReport& report)
{
    nlohmann::json rounds = nlohmann::json::array();
    for (const SweepRound& r : report.rounds) {
        nlohmann::json pairs = nlohmann::json::array();
        for (const SweepTransfer& t : r.transfers) pairs.push_back(sweepTransferJson(t));
        rounds.push_back({{"pairs", pairs}});
    }
    nlohmann::json gpus = nlohmann::json::array(), links = nlohmann::json::array(),
                   faultyLinks = nlohmann::json::array();
    for (const SweepGpu& g : report.gpus)
        gpus.push_back({{"index", g.index},
                        {"target", report.options.targets[g.index]},
                        {"description", report.descriptions[g.index]},
                        {"faulty", g.faulty},
                        {"transfers", g.transfers},
                        {"failures", g.failures},
                        {"rate", g.rate.rate},
                        {"ci", {g.rate.low, g.rate.high}},
                        {"failed_partners", g.failedPartners},
                        {"tested_partners", g.testedPartners}});
    for (const SweepLink& l : report.faultyLinks) {
        faultyLinks.push_back({l.src, l.dst});
        links.push_back({{"src", l.src},
                         {"dst", l.dst},
                         {"reps", l.reps},
                         {"failures", l.failures},
                         {"rate", l.rate.rate},
                         {"ci", {l.rate.low, l.rate.high}},
                         {"signature", l.signature}});
    }
    return {{"targets", report.options.targets},
            {"pattern", sweepPatternName(report.options.pattern)},
            {"bytes", report.options.bytes},
            {"reps", report.options.reps},
            {"seed", report.options.seed},
            {"mode", report.options.allPairs ? "all-pairs" : "two-round"},
            {"rounds", rounds},
            {"faulty_gpus", report.faultyGpus()},
            {"faulty_links", faultyLinks},
            {"gpus", gpus},
            {"links", links}};
}

std::string sweepText(const SweepReport& report)
{
    std::ostringstream out;
    out << "sweep (" << sweepPatternName(report.options.pattern) << ", " << report.options.bytes
        << " bytes x " << report.options.reps << " reps) of " << report.options.targets.size() << " GPUs, "
        << report.rounds.size() << " round(s)\n";
    for (size_t r = 0; r < report.rounds.size(); ++r) {
        out << "  round " << r + 1 << ":";
        for (const SweepTransfer& t : report.rounds[r].transfers)
            out << " " << t.src() << "->" << t.dst() << (t.failures ? " FAIL" : " ok");
        out << "\n";
    }
    for (const SweepGpu& g : report.gpus)
        if (g.faulty)
            out << "  faulty GPU " << g.index << " (" << report.options.targets[g.index]
                << "): " << g.failures << "/" << g.transfers << " transfers failed with "
                << g.failedPartners.size() << " partners, rate " << rateText(g.rate) << "\n";
    for (const SweepLink& l : report.faultyLinks)
        out << "  faulty link " << l.src << " -> " << l.dst << ": " << l.failures << "/" << l.reps
            << " transfers corrupted (" << l.signature << "), rate " << rateText(l.rate)
            << "; both GPUs pass elsewhere\n";
    if (report.healthy()) out << "  all GPUs and links tested are healthy\n";
    return out.str();
}

}  // namespace faultline
