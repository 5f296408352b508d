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

namespace faultline {
namespace {

constexpr uint64_t kRowElements = 256;  // payloads are [rows, 256] float32: rows for the signature

struct Rank {
    TargetSpec spec;
    std::unique_ptr<FaultModel> model;
    LinkFault link;
    uint64_t transfers = 0;  // what it has handled (hang/crash models count these)
};

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

// What a GPU does to the data that passes through it; false when it does not answer.
bool passThroughGpu(Rank& r, HostTensor& t, const SweepOptions& o, uint32_t rep, std::string& failure)
{
    FaultContext ctx;
    ctx.op = patternOp(o.pattern);
    ctx.opIndex = r.transfers;
    ctx.opsRun = r.transfers++;
    ctx.repetition = rep;
    ctx.seed = o.seed + r.transfers;
    if (!r.model->applies(ctx)) return true;
    const FaultAction action = r.model->actionBefore(ctx);
    if (action != FaultAction::None) {
        failure = action == FaultAction::Hang ? "hang" : "crash";
        return false;
    }
    r.model->corrupt(t, 0, ctx);
    return true;
}

struct Outcome {
    bool ok = true;
    uint64_t corruptedBytes = 0;
    std::string signature;
    double seconds = 0;
};

std::string signatureOf(const HostTensor& got, const HostTensor& expected)
{
    TensorComparer comparer;
    auto d = comparer.compare(got.dtype, got.shape, got.data.data(), expected.data.data(), "transfer");
    if (!d) return "unknown";
    return std::string(signatureKindName(d->signature.kind));
}

// One direction: src's data arrives at dst (and, for allreduce, is summed with dst's own).
Outcome transfer(std::vector<Rank>& ranks, size_t src, size_t dst, uint32_t rep, const SweepOptions& o)
{
    Outcome out;
    const auto start = std::chrono::steady_clock::now();
    const HostTensor sent = payload(o, src, dst, rep);
    HostTensor wire = sent;
    std::string failure;
    bool answered = passThroughGpu(ranks[src], wire, o, rep, failure);
    if (answered && ranks[src].link.active() && size_t(ranks[src].link.to) == dst)
        ranks[src].link.corrupt(reinterpret_cast<unsigned char*>(wire.data.data()), wire.data.size(), src,
                                rep);
    answered = answered && passThroughGpu(ranks[dst], wire, o, rep, failure);
    HostTensor got = wire, expected = sent;
    if (o.pattern == SweepPattern::AllReduce) {
        const HostTensor own = payload(o, dst, src, rep);
        for (uint64_t i = 0; i < got.elementCount(); ++i) {
            got.as<float>()[i] = own.as<float>()[i] + wire.as<float>()[i];
            expected.as<float>()[i] = own.as<float>()[i] + sent.as<float>()[i];
        }
    }
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!answered) {
        out.ok = false;
        out.corruptedBytes = sent.data.size();
        out.signature = failure;
        return out;
    }
    for (size_t i = 0; i < got.data.size(); ++i) out.corruptedBytes += got.data[i] != expected.data[i];
    out.ok = out.corruptedBytes == 0;
    if (!out.ok) out.signature = signatureOf(got, expected);
    return out;
}

SweepTransfer runDirection(std::vector<Rank>& ranks, size_t a, size_t b, bool aToB, const SweepOptions& o)
{
    SweepTransfer t;
    t.a = a;
    t.b = b;
    t.aToB = aToB;
    std::map<std::string, uint32_t> signatures;
    double seconds = 0;
    for (uint32_t rep = 0; rep < o.reps; ++rep) {
        const Outcome r = transfer(ranks, t.src(), t.dst(), rep, o);
        ++t.reps;
        seconds += r.seconds;
        if (r.ok) continue;
        ++t.failures;
        t.corruptedBytes += r.corruptedBytes;
        ++signatures[r.signature];
    }
    uint32_t best = 0;
    for (const auto& [kind, n] : signatures)
        if (n > best) {
            best = n;
            t.signature = kind;
        }
    t.gbps = seconds > 0 ? double(o.bytes) * t.reps / seconds / 1e9 : 0;
    return t;
}

SweepRound runPairs(std::vector<Rank>& ranks, const std::vector<std::pair<size_t, size_t>>& pairs,
                    const SweepOptions& o)
{
    SweepRound round;
    for (const auto& [a, b] : pairs) {
        round.transfers.push_back(runDirection(ranks, a, b, true, o));
        round.transfers.push_back(runDirection(ranks, a, b, false, o));
    }
    return round;
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

Result<SweepReport> runSweep(const SweepOptions& options)
{
    if (options.targets.size() < 2) return Error{"a sweep needs at least two targets", ErrorCode::Usage};
    if (options.bytes == 0 || options.bytes % 4 != 0 || options.bytes > (uint64_t(1) << 32))
        return Error{"--bytes must be a positive multiple of 4, at most 4 GiB", ErrorCode::Usage};
    if (options.reps == 0) return Error{"--reps must be at least 1", ErrorCode::Usage};
    SweepReport report;
    report.options = options;
    std::vector<Rank> ranks(options.targets.size());
    for (size_t i = 0; i < ranks.size(); ++i) {
        auto spec = parseTargetSpec(options.targets[i]);
        if (!spec) return Error{spec.message(), ErrorCode::Usage};
        if (spec->kind != "sim")
            return Error{
                "target '" + spec->text +
                    "': sweeps run on sim: ranks here; NCCL ranks (cuda:N) are not built into sweep yet",
                ErrorCode::Usage};
        auto link = takeLinkFault(*spec, i, ranks.size());
        if (!link) return link.error();
        auto model = createFaultModel(*spec);
        if (!model) return Error{model.message(), ErrorCode::Usage};
        ranks[i] = Rank{*spec, std::move(*model), *link, 0};
        report.descriptions.push_back(ranks[i].model->describe() + "; " + ranks[i].link.describe());
    }

    // Rounds.
    const size_t n = ranks.size();
    if (options.allPairs) {
        report.rounds.push_back(runPairs(ranks, allPairs(n), options));
    } else {
        std::vector<std::pair<size_t, size_t>> first;
        for (size_t a = 0; a + 1 < n; a += 2) first.emplace_back(a, a + 1);
        if (n % 2) first.emplace_back(0, n - 1);
        report.rounds.push_back(runPairs(ranks, first, options));
        std::set<std::pair<size_t, size_t>> failing;
        std::set<size_t> passingGpus;
        for (const auto& [a, b] : first) {
            bool failed = false;
            for (const SweepTransfer& t : report.rounds[0].transfers)
                if (t.a == a && t.b == b && t.failures > 0) failed = true;
            if (failed) failing.insert({a, b});
        }
        for (const auto& [a, b] : first)
            if (!failing.count({a, b})) {
                passingGpus.insert(a);
                passingGpus.insert(b);
            }
        if (!failing.empty()) {
            std::vector<std::pair<size_t, size_t>> second;
            if (passingGpus.empty()) {
                // Every pair failed: nothing known good to pair with, so every pair not tried yet.
                for (const auto& p : allPairs(n))
                    if (std::find(first.begin(), first.end(), p) == first.end()) second.push_back(p);
            } else {
                const std::vector<size_t> good(passingGpus.begin(), passingGpus.end());
                size_t k = 0;
                for (const auto& [a, b] : failing)
                    for (size_t gpu : {a, b}) {
                        const size_t partner = good[k++ % good.size()];
                        second.emplace_back(std::min(gpu, partner), std::max(gpu, partner));
                    }
            }
            if (!second.empty()) report.rounds.push_back(runPairs(ranks, second, options));
        }
    }

    // Judgement.
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
    report.gpus.resize(n);
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
    return report;
}

nlohmann::json sweepJson(const SweepReport& report)
{
    nlohmann::json rounds = nlohmann::json::array();
    for (const SweepRound& r : report.rounds) {
        nlohmann::json pairs = nlohmann::json::array();
        for (const SweepTransfer& t : r.transfers)
            pairs.push_back(
                {{"a", t.a},
                 {"b", t.b},
                 {"direction", t.aToB ? "a->b" : "b->a"},
                 {"src", t.src()},
                 {"dst", t.dst()},
                 {"pass", t.failures == 0},
                 {"reps", t.reps},
                 {"failures", t.failures},
                 {"corrupted_bytes", t.corruptedBytes},
                 {"signature", t.signature.empty() ? nlohmann::json() : nlohmann::json(t.signature)},
                 {"gbps", t.gbps}});
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
                << g.failedPartners.size() << " partners, rate " << percentText(g.rate.rate) << " ["
                << percentText(g.rate.low) << ", " << percentText(g.rate.high) << "]\n";
    for (const SweepLink& l : report.faultyLinks)
        out << "  faulty link " << l.src << " -> " << l.dst << ": " << l.failures << "/" << l.reps
            << " transfers corrupted (" << l.signature << "), rate " << percentText(l.rate.rate) << " ["
            << percentText(l.rate.low) << ", " << percentText(l.rate.high) << "]; both GPUs pass elsewhere\n";
    if (report.healthy()) out << "  all GPUs and links tested are healthy\n";
    return out.str();
}

}  // namespace faultline
