// Collective replay: setup, the in-process driver, the judgement of runs, GPUs and links, and the
// report's JSON and text. The process transport is in CollectiveProcesses.cpp.
#include "CollectiveReplay.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <set>
#include <sstream>

#include "../golden/GoldenSupport.h"
#include "../golden/OpRegistry.h"
#include "../replay/OpSelection.h"
#include "CollectiveNccl.h"
#include "CollectiveTransport.h"
#include "LinkMatrix.h"

namespace faultline {

std::vector<size_t> CollectiveReport::faultyGpus() const
{
    std::vector<size_t> out;
    for (const CollectiveGpu& g : gpus)
        if (g.faulty) out.push_back(g.index);
    return out;
}

std::vector<std::pair<size_t, size_t>> CollectiveReport::faultyLinks() const
{
    std::vector<std::pair<size_t, size_t>> out;
    for (const CollectiveLink& l : links)
        if (l.faulty) out.emplace_back(l.src, l.dst);
    return out;
}

std::string collectiveStatusName(RunOutcome status)
{
    return status == RunOutcome::Mismatch ? "diverged" : nameOf(status);
}

bool CollectiveReport::healthy() const
{
    if (!faultyGpus().empty() || !faultyLinks().empty()) return false;
    for (const CollectiveRun& r : runs)
        if (r.status != RunOutcome::Ok) return false;
    return true;
}

Result<CollectiveSetup> prepareCollectiveReplay(const CollectiveOptions& o)
{
    const size_t n = o.targets.size();
    if (n < 2) return Error{"a collective needs at least two targets (one per rank)", ErrorCode::Usage};
    if (n > kMaxLinkMatrixRanks)
        return Error{"a collective takes at most " + std::to_string(kMaxLinkMatrixRanks) + " targets, not " +
                         std::to_string(n),
                     ErrorCode::Usage};
    if (o.reps == 0) return Error{"--reps must be at least 1", ErrorCode::Usage};
    CollectiveSetup setup;
    setup.nccl = std::any_of(o.targets.begin(), o.targets.end(),
                             [](const std::string& t) { return t.rfind("cuda:", 0) == 0; });
    if (setup.nccl) {
        if (Status st = describeNcclRanks(o, setup.descriptions); !st) return st.error();
    } else {
        for (size_t r = 0; r < n; ++r) {
            auto rank = RingRank::create(o.targets, r, o.seed);
            if (!rank) return rank.error();
            setup.descriptions.push_back(rank->describe());
        }
        std::vector<size_t> ring = o.ring;
        if (ring.empty())
            for (size_t r = 0; r < n; ++r) ring.push_back(r);
        if (Status st = checkRingOrder(ring, n); !st) return st.error();
        setup.rings.push_back(ring);
        if (o.reverseRing && n > 2) setup.rings.emplace_back(ring.rbegin(), ring.rend());
    }
    auto trace = readTrace(o.tracePath);
    if (!trace) return trace.error();
    setup.trace = std::move(*trace);
    auto chosen = selectOpIndices(setup.trace, o.ops);
    if (!chosen) return Error{o.tracePath + ": " + chosen.message(), ErrorCode::Usage};
    size_t others = 0;
    for (size_t index : *chosen) {
        const TraceOp* op = nullptr;
        for (const TraceOp& x : setup.trace.ops)
            if (x.index == index) op = &x;
        if (!op || !collectiveKindOf(op->op)) {
            ++others;
            continue;
        }
        auto problem = loadCollectiveProblem(setup.trace, *op, n, o.tracePath);
        if (!problem) return problem.error();
        setup.problems.push_back(std::move(*problem));
    }
    if (setup.problems.empty())
        return Error{
            o.tracePath + ": no collective op (all_reduce, all_gather, reduce_scatter, broadcast) selected",
            ErrorCode::Usage};
    if (others > 0)
        setup.warnings.push_back("skipped " + std::to_string(others) +
                                 " selected op(s) that are not collectives");
    return setup;
}

namespace {

bool exactInputs(const CollectiveProblem& p)
{
    if (p.reduce != golden::ReduceOp::Sum) return true;
    const double limit = 1.0 / golden::unitRoundoff(p.inputs[0].dtype);
    std::vector<std::vector<float>> values;
    for (const HostTensor& x : p.inputs) values.push_back(golden::toFloatVector(x));
    for (size_t i = 0; i < values[0].size(); ++i) {
        double sum = 0;
        for (const auto& v : values) {
            if (!std::isfinite(v[i]) || std::trunc(v[i]) != v[i]) return false;
            sum += std::fabs(double(v[i]));
        }
        if (sum > limit) return false;
    }
    return true;
}

// Elements of `got` (block `block` of the reduction, -1 the whole) out of the golden judgement.
uint64_t reductionViolations(const CollectiveProblem& p, const HostTensor& got, int64_t block, bool exact,
                             const HostTensor& golden, const std::vector<double>& bound)
{
    const uint64_t count = got.elementCount(), first = block < 0 ? 0 : uint64_t(block) * count;
    const unsigned es = dtypeSize(p.inputs[0].dtype);
    uint64_t bad = 0;
    if (exact) {
        for (uint64_t i = 0; i < count; ++i)
            bad += std::memcmp(got.data.data() + i * es, golden.data.data() + (first + i) * es, es) != 0;
        return bad;
    }
    const std::vector<double> all = golden::toDoubleVector(golden), candidate = golden::toDoubleVector(got);
    const std::span<const double> g(all.data() + first, count), b(bound.data() + first, count);
    return golden::checkWithinBound(candidate, g, b).violations;
}

}  // namespace

void judgeCollectiveRun(const CollectiveProblem& p, const std::vector<HostTensor>& outputs,
                        CollectiveRun& run)
{
    if (outputs.empty()) return;
    const size_t n = outputs.size();
    auto mark = [&](size_t rank, uint64_t bad) {
        if (bad == 0) return;
        run.violations += bad;
        run.ranksOff.push_back(rank);
    };
    if (p.kind == CollectiveKind::AllReduce || p.kind == CollectiveKind::ReduceScatter) {
        const bool exact = exactInputs(p);
        golden::OpParams params{{"reduce_op", p.reduceName}};
        auto golden = golden::runGolden("all_reduce", p.inputs, params);
        std::vector<double> bound;
        if (golden && !exact) {
            golden::BoundOptions bo;
            if (p.inputs[0].dtype != DType::Float32)
                bo.accumulationUnitRoundoff = golden::unitRoundoff(p.inputs[0].dtype);
            auto b = golden::goldenErrorBound("all_reduce", p.inputs, params, *golden, bo);
            if (b) bound = std::move(*b);
        }
        if (p.kind == CollectiveKind::AllReduce)
            for (size_t r = 1; r < n; ++r)
                if (outputs[r].data != outputs[0].data) run.identical = false;
        run.judged = std::string(p.kind == CollectiveKind::AllReduce ? "identical+" : "") +
                     (exact ? "bitwise" : "bound");
        for (size_t r = 0; r < n; ++r) {
            if (!golden || (!exact && bound.empty())) {
                mark(r, outputs[r].elementCount());
                continue;
            }
            mark(r,
                 reductionViolations(p, outputs[r], p.kind == CollectiveKind::ReduceScatter ? int64_t(r) : -1,
                                     exact, *golden, bound));
        }
    } else {
        run.judged = "exact";
        const uint64_t blockBytes = p.inputs[0].data.size();
        for (size_t dst = 0; dst < n; ++dst) {
            uint64_t bad = 0;
            const unsigned es = dtypeSize(p.inputs[0].dtype);
            const size_t blocks = p.kind == CollectiveKind::AllGather ? n : 1;
            for (size_t b = 0; b < blocks; ++b) {
                const size_t src = p.kind == CollectiveKind::AllGather ? b : p.root;
                const std::byte* got = outputs[dst].data.data() + b * blockBytes;
                const std::byte* want = p.inputs[src].data.data();
                uint64_t differing = 0;
                for (uint64_t i = 0; i < blockBytes / es; ++i)
                    differing += std::memcmp(got + i * es, want + i * es, es) != 0;
                if (differing) run.differingBlocks.emplace_back(src, dst);
                bad += differing;
            }
            mark(dst, bad);
        }
    }
    if (run.status == RunOutcome::Ok && (run.violations > 0 || !run.identical))
        run.status = RunOutcome::Mismatch;
}

void noteCollectiveHop(CollectiveRun& run, const RingPlan& plan, const CollectiveHop& hop)
{
    if (hop.arrival.answered || run.failedRank >= 0) return;
    const RingTransfer& x = plan.transfers[hop.transfer];
    run.status = hop.arrival.failure;
    run.failedRank = int64_t(hop.arrival.byReceiver ? x.dst : x.src);
    if (run.status == RunOutcome::Error)
        run.error = "the transfer " + std::to_string(x.src) + "->" + std::to_string(x.dst) +
                    " arrived truncated or malformed";
}

void addCollectiveHops(std::map<std::pair<size_t, size_t>, CollectiveLink>& links, const RingPlan& plan,
                       const std::vector<CollectiveHop>& hops)
{
    for (const CollectiveHop& hop : hops) {
        const RingTransfer& t = plan.transfers[hop.transfer];
        CollectiveLink& l = links[{t.src, t.dst}];
        l.src = t.src;
        l.dst = t.dst;
        if (!hop.arrival.answered) continue;
        ++l.transfers;
        l.bytes += t.bytes;
        l.seconds += hop.seconds;
        if (hop.arrival.enteredBytes == 0) continue;
        ++l.failures;
        l.corruptedBytes += hop.arrival.enteredBytes;
        ++l.signatures[hop.arrival.signature];
    }
}

void CollectiveReport::addRun(CollectiveRun run)
{
    ++runsTotal;
    ++runStatusCounts[collectiveStatusName(run.status)];
    if (run.failedRank >= 0) {
        if (unansweredByRank.size() <= size_t(run.failedRank))
            unansweredByRank.resize(size_t(run.failedRank) + 1);
        ++unansweredByRank[size_t(run.failedRank)];
    }
    const bool notable = run.status != RunOutcome::Ok;
    const size_t listedNotable = runs.size() > kListedRuns ? runs.size() - kListedRuns : 0;
    if (runs.size() < kListedRuns || (notable && listedNotable < kListedRuns))
        runs.push_back(std::move(run));
    else
        ++runsNotListed;
}

void judgeCollectiveReport(CollectiveReport& report,
                           std::map<std::pair<size_t, size_t>, CollectiveLink> links)
{
    const size_t n = report.options.targets.size();
    report.gpus.assign(n, {});
    std::vector<std::set<size_t>> partners(n);
    for (size_t g = 0; g < n; ++g) report.gpus[g].index = g;
    for (size_t g = 0; g < n && g < report.unansweredByRank.size(); ++g)
        report.gpus[g].unanswered = report.unansweredByRank[g];
    for (const auto& [key, l] : links)
        for (size_t g : {l.src, l.dst}) {
            report.gpus[g].transfers += l.transfers;
            report.gpus[g].failures += l.failures;
            if (l.failures > 0) partners[g].insert(g == l.src ? l.dst : l.src);
        }
    for (CollectiveGpu& g : report.gpus) {
        g.failedPartners.assign(partners[g.index].begin(), partners[g.index].end());
        g.faulty = g.failedPartners.size() >= 2 || g.unanswered > 0;
        g.rate = wilsonInterval(g.failures + g.unanswered, g.transfers + g.unanswered);
    }
    report.links.clear();
    for (auto& [key, l] : links) {
        uint64_t best = 0;
        for (const auto& [kind, count] : l.signatures)
            if (count > best) {
                best = count;
                l.signature = kind;
            }
        l.rate = wilsonInterval(l.failures, l.transfers);
        l.faulty = l.failures > 0 && !report.gpus[l.src].faulty && !report.gpus[l.dst].faulty;
        report.links.push_back(l);
    }
}

CollectiveReport startCollectiveReport(const CollectiveOptions& options, const CollectiveSetup& setup,
                                       const std::string& mode)
{
    CollectiveReport report;
    report.options = options;
    report.mode = mode;
    report.descriptions = setup.descriptions;
    report.rings = setup.rings;
    report.warnings = setup.warnings;
    for (const CollectiveProblem& p : setup.problems) {
        CollectiveOpInfo info;
        info.index = p.opIndex;
        info.op = collectiveKindName(p.kind);
        info.name = p.moduleName;
        info.dtype = std::string(dtypeName(p.inputs[0].dtype));
        info.shape = p.inputs[0].shape;
        if (p.kind == CollectiveKind::AllReduce || p.kind == CollectiveKind::ReduceScatter)
            info.reduceOp = p.reduceName;
        if (p.kind == CollectiveKind::Broadcast) info.root = int64_t(p.root);
        report.ops.push_back(info);
    }
    return report;
}

Result<CollectiveReport> runCollectiveReplay(const CollectiveOptions& options)
{
    auto setup = prepareCollectiveReplay(options);
    if (!setup) return setup.error();
    if (setup->nccl) return runNcclCollective(options, *setup);
    std::unique_ptr<RankTransport> transport;
    if (options.rankCommand.empty()) {
        auto t = makeInProcessTransport(options, *setup);
        if (!t) return t.error();
        transport = std::move(*t);
    } else {
        auto t = makeProcessTransport(options, *setup);
        if (!t) return t.error();
        transport = std::move(*t);
    }
    CollectiveReport report = startCollectiveReport(options, *setup, transport->mode());
    std::map<std::pair<size_t, size_t>, CollectiveLink> links;
    const size_t n = options.targets.size();
    for (size_t pi = 0; pi < setup->problems.size(); ++pi) {
        const CollectiveProblem& problem = setup->problems[pi];
        for (size_t ri = 0; ri < setup->rings.size(); ++ri) {
            const RingPlan plan = planRing(problem, setup->rings[ri]);
            for (uint32_t rep = 0; rep < options.reps; ++rep) {
                CollectiveRun run;
                run.opIndex = problem.opIndex;
                run.op = collectiveKindName(problem.kind);
                run.ring = ri;
                run.rep = rep;
                std::vector<CollectiveHop> hops;
                RankFault fault;
                Status st = transport->begin(pi, ri, plan, rep, fault);
                for (size_t t = 0; st && !fault.happened() && t < plan.transfers.size(); ++t) {
                    const RingTransfer& x = plan.transfers[t];
                    const auto start = std::chrono::steady_clock::now();
                    auto wire = transport->send(x.src, t, fault);
                    if (!wire) {
                        st = wire.error();
                        break;
                    }
                    if (fault.happened()) break;
                    auto arrival = transport->receive(x.dst, t, std::move(*wire), fault);
                    if (!arrival) {
                        st = arrival.error();
                        break;
                    }
                    if (fault.happened()) break;
                    CollectiveHop hop;
                    hop.transfer = t;
                    hop.arrival = *arrival;
                    hop.seconds =
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                    noteCollectiveHop(run, plan, hop);
                    hops.push_back(hop);
                }
                if (!st) return st.error();
                std::vector<HostTensor> outputs;
                if (fault.happened()) {
                    run.status = fault.what;
                    run.failedRank = int64_t(fault.rank);
                } else {
                    for (size_t r = 0; r < n && st; ++r) {
                        auto out = transport->output(r, fault);
                        if (!out) return out.error();
                        if (fault.happened()) break;
                        outputs.push_back(std::move(*out));
                    }
                    if (fault.happened()) {
                        run.status = fault.what;
                        run.failedRank = int64_t(fault.rank);
                        outputs.clear();
                    }
                }
                if (fault.happened())
                    if (Status restart = transport->restart(); !restart) return restart.error();
                judgeCollectiveRun(problem, outputs, run);
                addCollectiveHops(links, plan, hops);
                report.addRun(std::move(run));
            }
        }
    }
    judgeCollectiveReport(report, std::move(links));
    return report;
}

nlohmann::json collectiveJson(const CollectiveReport& report)
{
    nlohmann::json ops = nlohmann::json::array(), runs = nlohmann::json::array(),
                   links = nlohmann::json::array(), gpus = nlohmann::json::array(),
                   faultyLinks = nlohmann::json::array();
    for (const CollectiveOpInfo& o : report.ops) {
        nlohmann::json j = {
            {"index", o.index}, {"op", o.op}, {"name", o.name}, {"dtype", o.dtype}, {"shape", o.shape}};
        if (!o.reduceOp.empty()) j["reduce_op"] = o.reduceOp;
        if (o.root >= 0) j["root"] = o.root;
        ops.push_back(j);
    }
    for (const CollectiveRun& r : report.runs) {
        nlohmann::json blocks = nlohmann::json::array();
        for (const auto& [src, dst] : r.differingBlocks) blocks.push_back({src, dst});
        runs.push_back({{"op_index", r.opIndex},
                        {"op", r.op},
                        {"ring", r.ring},
                        {"rep", r.rep},
                        {"status", collectiveStatusName(r.status)},
                        {"error", r.error.empty() ? nlohmann::json() : nlohmann::json(r.error)},
                        {"failed_rank", r.failedRank >= 0 ? nlohmann::json(r.failedRank) : nlohmann::json()},
                        {"judged", r.judged},
                        {"identical", r.identical},
                        {"violations", r.violations},
                        {"ranks_off", r.ranksOff},
                        {"differing_blocks", blocks}});
    }
    for (const CollectiveLink& l : report.links) {
        if (l.faulty) faultyLinks.push_back({l.src, l.dst});
        links.push_back({{"src", l.src},
                         {"dst", l.dst},
                         {"transfers", l.transfers},
                         {"failures", l.failures},
                         {"corrupted_bytes", l.corruptedBytes},
                         {"bytes", l.bytes},
                         {"signature", l.signature.empty() ? nlohmann::json() : nlohmann::json(l.signature)},
                         {"gbps", l.gbps()},
                         {"rate", l.rate.rate},
                         {"ci", {l.rate.low, l.rate.high}},
                         {"faulty", l.faulty}});
    }
    for (const CollectiveGpu& g : report.gpus)
        gpus.push_back({{"index", g.index},
                        {"target", report.options.targets[g.index]},
                        {"description", report.descriptions[g.index]},
                        {"faulty", g.faulty},
                        {"transfers", g.transfers},
                        {"failures", g.failures},
                        {"unanswered", g.unanswered},
                        {"rate", g.rate.rate},
                        {"ci", {g.rate.low, g.rate.high}},
                        {"failed_partners", g.failedPartners}});
    nlohmann::json out = {{"targets", report.options.targets},
                          {"mode", report.mode},
                          {"rings", report.rings},
                          {"reps", report.options.reps},
                          {"seed", report.options.seed},
                          {"ops", ops},
                          {"runs", runs},
                          {"runs_total", report.runsTotal},
                          {"runs_not_listed", report.runsNotListed},
                          {"run_status_counts", report.runStatusCounts},
                          {"links", links},
                          {"gpus", gpus},
                          {"faulty_gpus", report.faultyGpus()},
                          {"faulty_links", faultyLinks},
                          {"healthy", report.healthy()},
                          {"warnings", report.warnings},
                          {"links_observable", report.linksObservable}};
    if (!report.nccl.is_null()) out["nccl"] = report.nccl;
    return out;
}

std::string collectiveText(const CollectiveReport& report)
{
    std::ostringstream out;
    out << "collective replay (" << report.mode << ") of " << report.ops.size() << " op(s) on "
        << report.options.targets.size() << " ranks, " << report.options.reps << " rep(s) per ring; rings:";
    for (const auto& ring : report.rings) out << " [" << ringText(ring) << "]";
    if (!report.nccl.is_null()) out << " none (NCCL " << report.nccl.value("version", 0) << " chooses)";
    out << "\n";
    for (const std::string& w : report.warnings) out << "  warning: " << w << "\n";
    for (const CollectiveRun& r : report.runs) {
        if (r.status == RunOutcome::Ok) continue;
        out << "  op " << r.opIndex << " (" << r.op << ") ring " << r.ring << " rep " << r.rep << ": "
            << collectiveStatusName(r.status);
        if (r.failedRank >= 0) out << " of rank " << r.failedRank;
        if (!r.error.empty()) out << ": " << r.error;
        if (!r.identical) out << ", ranks hold different bits";
        if (r.violations) out << ", " << r.violations << " element(s) off (" << r.judged << ")";
        if (!r.differingBlocks.empty())
            out << ", " << r.differingBlocks.size() << " block(s) differ (src->dst):";
        for (size_t i = 0; i < r.differingBlocks.size() && i < 8; ++i)
            out << " " << r.differingBlocks[i].first << "->" << r.differingBlocks[i].second;
        if (r.differingBlocks.size() > 8) out << " ...";
        out << "\n";
    }
    if (report.runsNotListed)
        out << "  (" << report.runsNotListed << " of " << report.runsTotal
            << " runs not listed: every run counts in the tables below)\n";
    if (!report.linksObservable)
        out << "  links: not observable (NCCL hides its hops; the invariants judge each rank's output)\n";
    else
        out << "  links (src->dst: transfers, failures, corrupted bytes, signature, GB/s):\n";
    for (const CollectiveLink& l : report.links)
        out << "    " << l.src << "->" << l.dst << ": " << l.transfers << ", " << l.failures << ", "
            << l.corruptedBytes << ", " << (l.signature.empty() ? "-" : l.signature) << ", " << l.gbps()
            << (l.faulty ? "  FAULTY" : "") << "\n";
    for (const CollectiveGpu& g : report.gpus)
        if (g.faulty)
            out << "  faulty GPU " << g.index << " (" << report.options.targets[g.index]
                << "): " << g.failures << "/" << g.transfers << " hops failed with "
                << g.failedPartners.size() << " partners"
                << (g.unanswered ? ", " + std::to_string(g.unanswered) + " run(s) hung or crashed" : "")
                << ", rate " << rateText(g.rate) << "\n";
    for (const CollectiveLink& l : report.links)
        if (l.faulty)
            out << "  faulty link " << l.src << " -> " << l.dst << ": " << l.failures << "/" << l.transfers
                << " hops corrupted (" << l.signature << "), rate " << rateText(l.rate) << "\n";
    if (report.healthy()) out << "  every rank, link and invariant is healthy\n";
    return out.str();
}

}  // namespace faultline
