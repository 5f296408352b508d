// faultline-collective-rank: `faultline collective` with the ranks in MPI processes, the chunks
// going through MPI, as nccl-tests bootstraps across nodes:
//   mpirun -np P faultline-collective-rank TRACE --targets T0,...,TN-1 [--ops SEL] [--reps N]
//          [--ring 0,1,...] [--seed S] [--json]
// N simulated ranks on P processes (P divides into N, one node's GPUs per process: process p
// hosts ranks p*N/P .. (p+1)*N/P - 1; P = N is one rank per process). Every process reads the
// trace and plans the same rings; transfers run in the schedule's order on every process (so no
// two wait on each other), between hosted ranks directly and between processes as one MPI
// message each. After each run the processes send their ranks' outputs and hop records to
// process 0, which judges exactly as the in-process replay does and prints the result. Exit
// codes as `faultline collective`.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "core/Base64.h"
#include "core/collectives/CollectiveReplay.h"
#include "core/replay/TargetSpec.h"

using namespace faultline;

namespace {

constexpr int kTagWire = 11;

int fail(int self, const std::string& message)
{
    if (self == 0) std::cerr << "error: " << message << "\n";
    return 2;
}

void sendText(const std::string& text, int to)
{
    MPI_Send(text.data(), int(text.size()), MPI_CHAR, to, kTagWire, MPI_COMM_WORLD);
}

std::string receiveText(int from)
{
    MPI_Status status;
    int count = 0;
    MPI_Probe(from, kTagWire, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_CHAR, &count);
    std::string text(size_t(count), '\0');
    MPI_Recv(text.data(), count, MPI_CHAR, from, kTagWire, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return text;
}

// Every process's text, at process 0 (empty elsewhere).
std::vector<std::string> gatherTexts(const std::string& mine, int processes)
{
    int length = int(mine.size());
    std::vector<int> lengths(static_cast<size_t>(processes)), offsets(static_cast<size_t>(processes));
    MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    int total = 0;
    for (int p = 0; p < processes; ++p) {
        offsets[size_t(p)] = total;
        total += lengths[size_t(p)];
    }
    std::string all(size_t(total), '\0');
    MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
                MPI_COMM_WORLD);
    std::vector<std::string> out;
    for (int p = 0; p < processes; ++p)
        out.push_back(all.substr(size_t(offsets[size_t(p)]), size_t(lengths[size_t(p)])));
    return out;
}

}  // namespace

int main(int argc, char** argv)
{
    // Past a file-size limit (ulimit -f) a write fails with EFBIG and is reported, naming the
    // file, instead of the process dying of SIGXFSZ without a word.
    std::signal(SIGXFSZ, SIG_IGN);
    MPI_Init(&argc, &argv);
    int self = 0, processes = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &self);
    MPI_Comm_size(MPI_COMM_WORLD, &processes);
    CLI::App app(
        "faultline collective with the ranks in MPI processes (mpirun -np P faultline-collective-rank ...)");
    std::string targets, ring;
    CollectiveOptions o;
    bool json = false;
    app.add_option("TRACE", o.tracePath, "trace v1 file with collective ops")->required();
    app.add_option("--targets", targets, "the communicator, one target per rank")->required();
    app.add_option("--ops", o.ops, "ops to replay: indices, ranges, op kinds (default: every collective)");
    app.add_option("--reps", o.reps, "repetitions per op and ring");
    app.add_option("--ring", ring, "ring order of the ranks (default: the target order)");
    app.add_option("--seed", o.seed, "seed of the simulated faults");
    app.add_flag("--json", json, "print the result as JSON (process 0)");
    int code = 0;
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        code = self == 0 ? app.exit(e) : 2;
        MPI_Finalize();
        return code == 0 ? 0 : 2;
    }
    auto list = parseTargetList(targets);
    if (!list) code = fail(self, list.message());
    if (!code && !ring.empty()) {
        auto parsed = parseRingText(ring);
        if (!parsed)
            code = fail(self, parsed.message());
        else
            o.ring = *parsed;
    }
    if (!code)
        for (const TargetSpec& t : *list) o.targets.push_back(t.text);
    const size_t n = o.targets.size();
    if (!code && (processes > int(n) || (n % size_t(processes)) != 0))
        code = fail(self, std::to_string(n) + " ranks on " + std::to_string(processes) +
                              " MPI processes: the process count must divide the rank count (mpirun -np " +
                              std::to_string(n) + " for one rank per process)");
    auto setup = code ? Result<CollectiveSetup>(Error{"setup"}) : prepareCollectiveReplay(o);
    if (!code && !setup) code = fail(self, setup.message());
    // The ranks this process hosts.
    auto owner = [&](size_t rank) { return int(rank * size_t(processes) / n); };
    std::map<size_t, RingRank> hosted;
    for (size_t r = 0; !code && r < n; ++r)
        if (owner(r) == self) {
            auto rank = RingRank::create(o.targets, r, o.seed);
            if (!rank) {
                code = 2;
                std::cerr << "error: rank " << r << ": " << rank.message() << "\n";
                break;
            }
            hosted.emplace(r, std::move(*rank));
        }
    int bad = code ? 1 : 0, anyBad = 0;
    MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (anyBad) {
        MPI_Finalize();
        return 2;
    }
    CollectiveReport report = startCollectiveReport(o, *setup, "mpi");
    std::map<std::pair<size_t, size_t>, CollectiveLink> links;
    for (const CollectiveProblem& problem : setup->problems)
        for (size_t ri = 0; ri < setup->rings.size(); ++ri) {
            const RingPlan plan = planRing(problem, setup->rings[ri]);
            for (uint32_t rep = 0; rep < o.reps; ++rep) {
                for (auto& [r, rank] : hosted) rank.begin(problem, &plan, rep);
                nlohmann::json hops = nlohmann::json::array();
                for (size_t t = 0; t < plan.transfers.size(); ++t) {
                    const RingTransfer& x = plan.transfers[t];
                    const int from = owner(x.src), to = owner(x.dst);
                    if (from != self && to != self) continue;
                    const auto start = std::chrono::steady_clock::now();
                    RingWire wire;
                    if (from == self) {
                        wire = hosted.at(x.src).send(t);
                        if (to != self) {
                            sendText(ringWireJson(wire).dump(), to);
                            continue;
                        }
                    } else {
                        auto received =
                            ringWireFromJson(nlohmann::json::parse(receiveText(from), nullptr, false));
                        if (received) {
                            wire = std::move(*received);
                        } else {
                            wire.answered = false;  // a malformed message: the hop is lost
                            wire.failure = RunOutcome::Error;
                        }
                    }
                    CollectiveHop hop;
                    hop.transfer = t;
                    hop.arrival = hosted.at(x.dst).receive(t, std::move(wire));
                    hop.seconds =
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                    hops.push_back(collectiveHopJson(hop));
                }
                nlohmann::json outputs = nlohmann::json::object();
                for (auto& [r, rank] : hosted) {
                    const HostTensor t = rank.output();
                    outputs[std::to_string(r)] = {
                        {"shape", t.shape},
                        {"bytes",
                         base64Encode(reinterpret_cast<const uint8_t*>(t.data.data()), t.data.size())}};
                }
                const auto all =
                    gatherTexts(nlohmann::json{{"hops", hops}, {"outputs", outputs}}.dump(), processes);
                if (self != 0) continue;
                CollectiveRun run;
                run.opIndex = problem.opIndex;
                run.op = collectiveKindName(problem.kind);
                run.ring = ri;
                run.rep = rep;
                std::vector<CollectiveHop> runHops;
                std::vector<HostTensor> rankOutputs(n);
                for (const std::string& text : all) {
                    const auto part = nlohmann::json::parse(text, nullptr, false);
                    for (const auto& h : part.at("hops")) {
                        auto hop = collectiveHopFromJson(h);
                        if (hop) runHops.push_back(*hop);
                    }
                    for (const auto& [key, value] : part.at("outputs").items()) {
                        HostTensor t(problem.inputs[0].dtype, value.at("shape").get<std::vector<uint64_t>>());
                        const auto bytes = base64Decode(value.at("bytes").get<std::string>());
                        if (bytes && bytes->size() == t.data.size())
                            std::memcpy(t.data.data(), bytes->data(), bytes->size());
                        rankOutputs[std::stoul(key)] = std::move(t);
                    }
                }
                std::sort(runHops.begin(), runHops.end(), [](const CollectiveHop& a, const CollectiveHop& b) {
                    return a.transfer < b.transfer;
                });
                for (const CollectiveHop& hop : runHops) noteCollectiveHop(run, plan, hop);
                judgeCollectiveRun(problem, rankOutputs, run);
                addCollectiveHops(links, plan, runHops);
                report.addRun(std::move(run));
            }
        }
    if (self == 0) {
        judgeCollectiveReport(report, std::move(links));
        const nlohmann::json j = collectiveJson(report);
        if (json)
            std::cout << j.dump(2) << "\n";
        else
            std::cout << collectiveText(report);
        code = report.healthy() ? 0 : 1;
    }
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return code;
}
