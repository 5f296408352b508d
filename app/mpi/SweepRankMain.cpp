// faultline-sweep-rank: one rank of `faultline sweep` per process, the bytes going through MPI,
// as a fleet sweeps its nodes (one rank per node):
//   mpirun -np N faultline-sweep-rank --targets T0,...,TN-1 [--pattern P] [--bytes B] [--reps R]
//          [--all-pairs] [--json]
// Rank r is target r. Every rank plans the same rounds; each transfer is a blocking send and
// receive between its two ranks, taken in the same global order on every rank (so no two wait on
// each other); after each round the ranks share their records (the receiver's), so round two and
// the judgement are the same everywhere. Rank 0 prints the result. Exit codes as `sweep`.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "core/collectives/Sweep.h"
#include "core/replay/TargetSpec.h"

using namespace faultline;

namespace {

constexpr int kTagAnswered = 1, kTagBytes = 2, kTagFailure = 3;

int fail(int rank, const std::string& message)
{
    if (rank == 0) std::cerr << "error: " << message << "\n";
    return 2;
}

// Every rank's records of the round's transfers it received, shared with all ranks.
Result<SweepRound> shareRound(const std::vector<SweepTransfer>& mine, int ranks)
{
    nlohmann::json j = nlohmann::json::array();
    for (const SweepTransfer& t : mine) j.push_back(sweepTransferJson(t));
    const std::string text = j.dump();
    int length = int(text.size());
    std::vector<int> lengths(static_cast<size_t>(ranks)), offsets(static_cast<size_t>(ranks));
    MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; r < ranks; ++r) {
        offsets[size_t(r)] = total;
        total += lengths[size_t(r)];
    }
    std::string all(size_t(total), '\0');
    MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                   MPI_COMM_WORLD);
    SweepRound round;
    for (int r = 0; r < ranks; ++r) {
        auto part = nlohmann::json::parse(all.substr(size_t(offsets[size_t(r)]), size_t(lengths[size_t(r)])),
                                          nullptr, false);
        if (!part.is_array())
            return Error{"rank " + std::to_string(r) + " sent a malformed record", ErrorCode::Protocol};
        for (const auto& t : part) {
            auto transfer = sweepTransferFromJson(t);
            if (!transfer) return transfer.error();
            round.transfers.push_back(*transfer);
        }
    }
    return round;
}

// The records in the order of the plan (they arrive grouped by the rank that received them).
SweepRound inPlanOrder(const SweepRound& shared, const std::vector<std::pair<size_t, size_t>>& plan)
{
    SweepRound round;
    for (const auto& [a, b] : plan)
        for (bool aToB : {true, false})
            for (const SweepTransfer& t : shared.transfers)
                if (t.a == a && t.b == b && t.aToB == aToB) round.transfers.push_back(t);
    return round;
}

// This rank's part of one round; the records of the transfers it received.
std::vector<SweepTransfer> runRound(SweepRank& me, int self,
                                    const std::vector<std::pair<size_t, size_t>>& pairs,
                                    const SweepOptions& o)
{
    std::vector<SweepTransfer> received;
    for (const auto& [a, b] : pairs)
        for (bool aToB : {true, false}) {
            SweepTransfer t;
            t.a = a;
            t.b = b;
            t.aToB = aToB;
            const int src = int(t.src()), dst = int(t.dst());
            if (self != src && self != dst) continue;
            std::map<std::string, uint32_t> signatures;
            for (uint32_t rep = 0; rep < o.reps; ++rep) {
                if (self == src) {
                    SweepWire wire = me.send(size_t(dst), rep);
                    int answered = wire.answered ? 1 : 0;
                    MPI_Send(&answered, 1, MPI_INT, dst, kTagAnswered, MPI_COMM_WORLD);
                    const std::string failure = nameOf(wire.failure);
                    MPI_Send(failure.data(), int(failure.size()), MPI_CHAR, dst, kTagFailure, MPI_COMM_WORLD);
                    MPI_Send(wire.bytes.data(), int(wire.bytes.size()), MPI_BYTE, dst, kTagBytes,
                             MPI_COMM_WORLD);
                    continue;
                }
                const auto start = std::chrono::steady_clock::now();
                SweepWire wire;
                int answered = 0;
                MPI_Recv(&answered, 1, MPI_INT, src, kTagAnswered, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Status status;
                int count = 0;
                MPI_Probe(src, kTagFailure, MPI_COMM_WORLD, &status);
                MPI_Get_count(&status, MPI_CHAR, &count);
                std::string failure(size_t(count), '\0');
                MPI_Recv(failure.data(), count, MPI_CHAR, src, kTagFailure, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                // A word this build does not know: the transfer cannot be judged.
                wire.failure = parseRunOutcome(failure).value_or(RunOutcome::Error);
                MPI_Probe(src, kTagBytes, MPI_COMM_WORLD, &status);
                MPI_Get_count(&status, MPI_BYTE, &count);
                wire.bytes.resize(size_t(count));
                MPI_Recv(wire.bytes.data(), count, MPI_BYTE, src, kTagBytes, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                const double seconds =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                wire.answered = answered != 0;
                const SweepOutcome outcome = me.receive(size_t(src), rep, std::move(wire));
                addSweepOutcome(t, outcome, seconds, o.bytes);
                if (!outcome.ok) ++signatures[outcome.signature];
            }
            if (self == dst) {
                finishSweepTransfer(t, signatures);
                received.push_back(t);
            }
        }
    return received;
}

}  // namespace

int main(int argc, char** argv)
{
    // Past a file-size limit (ulimit -f) a write fails with EFBIG and is reported, naming the
    // file, instead of the process dying of SIGXFSZ without a word.
    std::signal(SIGXFSZ, SIG_IGN);
    MPI_Init(&argc, &argv);
    int self = 0, ranks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &self);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    CLI::App app(
        "One rank of faultline sweep, through MPI (mpirun -np N faultline-sweep-rank --targets ...)");
    std::string targets, pattern = "allgather";
    SweepOptions o;
    bool json = false;
    app.add_option("--targets", targets, "the group, one target per MPI rank")->required();
    app.add_option("--pattern", pattern, "allgather (default), allreduce or sendrecv");
    app.add_option("--bytes", o.bytes, "bytes each rank sends per transfer (a multiple of 4)");
    app.add_option("--reps", o.reps, "repetitions per pair and direction");
    app.add_option("--seed", o.seed, "seed of the payloads and simulated faults");
    app.add_flag("--all-pairs", o.allPairs, "test every pair once instead of two rounds");
    app.add_flag("--json", json, "print the result as JSON (rank 0)");
    int code = 0;
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        code = self == 0 ? app.exit(e) : 2;
        MPI_Finalize();
        return code == 0 ? 0 : 2;
    }
    auto list = parseTargetList(targets);
    auto parsedPattern = parseSweepPattern(pattern);
    if (!list) code = fail(self, list.message());
    if (!code && !parsedPattern) code = fail(self, parsedPattern.message());
    if (!code) {
        o.pattern = *parsedPattern;
        o.blockBytes = 0;  // no results file here: the failing blocks are not kept
        for (const TargetSpec& t : *list) o.targets.push_back(t.text);
        if (Status st = checkSweepOptions(o); !st)
            code = fail(self, st.message());
        else if (int(o.targets.size()) != ranks)
            code = fail(self, std::to_string(o.targets.size()) + " targets for " + std::to_string(ranks) +
                                  " MPI ranks: give one target per rank (mpirun -np " +
                                  std::to_string(o.targets.size()) + ")");
    }
    // Every rank must agree that the setup is good before any transfer starts.
    auto rank = code ? Result<SweepRank>(Error{"setup"}) : SweepRank::create(o, size_t(self));
    int bad = code || !rank ? 1 : 0, anyBad = 0;
    if (!code && !rank) std::cerr << "error: rank " << self << ": " << rank.message() << "\n";
    MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (anyBad) {
        MPI_Finalize();
        return 2;
    }
    SweepReport report;
    report.options = o;
    // Descriptions: what each rank's target is (every rank can say it from the specs).
    for (size_t i = 0; i < o.targets.size(); ++i) {
        auto r = SweepRank::create(o, i);
        report.descriptions.push_back(r ? r->describe() : o.targets[i]);
    }
    const auto firstPlan = sweepFirstRound(o.targets.size(), o.allPairs);
    auto first = shareRound(runRound(*rank, self, firstPlan, o), ranks);
    if (!first) code = fail(self, first.message());
    if (!code) {
        report.rounds.push_back(inPlanOrder(*first, firstPlan));
        if (!o.allPairs)
            if (const auto pairs = sweepSecondRound(o.targets.size(), report.rounds[0]); !pairs.empty()) {
                auto second = shareRound(runRound(*rank, self, pairs, o), ranks);
                if (!second)
                    code = fail(self, second.message());
                else
                    report.rounds.push_back(inPlanOrder(*second, pairs));
            }
    }
    if (!code) {
        judgeSweep(report);
        if (self == 0) {
            if (json)
                std::cout << sweepJson(report).dump(2) << "\n";
            else
                std::cout << sweepText(report);
        }
        code = report.healthy() ? 0 : 1;
    }
    MPI_Finalize();
    return code;
}
