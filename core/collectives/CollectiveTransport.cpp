// The transports of the collective replay (in this process, one process per rank), the rank
// side of the process protocol, and the wire and hop records as JSON.
//
// Protocol (JSON lines; the orchestrator asks, the rank answers each line with one line):
//   rank -> {"hello":"collective-rank","rank":R}                       once, after its setup
//   {"cmd":"begin","problem":P,"ring":G,"rep":N}             -> {"ok":true}
//   {"cmd":"send","transfer":T}                              -> a wire (ringWireJson)
//   {"cmd":"receive","transfer":T,"wire":{...}}              -> an arrival (collectiveHopJson)
//   {"cmd":"output"}                                         -> {"dtype":..,"shape":[..],"bytes":base64}
// A rank whose fault model hangs or crashes really does (its GPU stopped answering).
#include "CollectiveTransport.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <thread>

#include "../Base64.h"
#include "../replay/WorkerProcess.h"

namespace faultline {

namespace {

// A record's "failure": one of replay's run outcomes (anything else: the record is malformed).
RunOutcome runOutcomeField(const nlohmann::json& j)
{
    const nlohmann::json& f = j.at("failure");
    const auto outcome = parseRunOutcome(f.get<std::string>());
    if (!outcome)
        throw nlohmann::json::other_error::create(501, "failure " + f.dump() + " is not a run outcome", &f);
    return *outcome;
}

}  // namespace

nlohmann::json ringWireJson(const RingWire& wire)
{
    return {{"answered", wire.answered},
            {"failure", nameOf(wire.failure)},
            {"inherited", wire.inherited},
            {"bytes", base64Encode(wire.bytes.data(), wire.bytes.size())}};
}

Result<RingWire> ringWireFromJson(const nlohmann::json& j)
{
    try {
        RingWire w;
        w.answered = j.at("answered").get<bool>();
        w.failure = runOutcomeField(j);
        w.inherited = j.at("inherited").get<std::vector<uint64_t>>();
        auto bytes = base64Decode(j.at("bytes").get<std::string>());
        if (!bytes) return Error{"a wire record's bytes are not base64", ErrorCode::Protocol};
        w.bytes = std::move(*bytes);
        return w;
    } catch (const nlohmann::json::exception& e) {
        return Error{std::string("a wire record is malformed: ") + e.what(), ErrorCode::Protocol};
    }
}

nlohmann::json collectiveHopJson(const CollectiveHop& hop)
{
    return {{"transfer", hop.transfer},
            {"seconds", hop.seconds},
            {"answered", hop.arrival.answered},
            {"by_receiver", hop.arrival.byReceiver},
            {"failure", nameOf(hop.arrival.failure)},
            {"differing_bytes", hop.arrival.differingBytes},
            {"entered_bytes", hop.arrival.enteredBytes},
            {"signature", hop.arrival.signature}};
}

Result<CollectiveHop> collectiveHopFromJson(const nlohmann::json& j)
{
    try {
        CollectiveHop h;
        h.transfer = j.at("transfer").get<size_t>();
        h.seconds = j.value("seconds", 0.0);
        h.arrival.answered = j.at("answered").get<bool>();
        h.arrival.byReceiver = j.at("by_receiver").get<bool>();
        h.arrival.failure = runOutcomeField(j);
        h.arrival.differingBytes = j.at("differing_bytes").get<uint64_t>();
        h.arrival.enteredBytes = j.at("entered_bytes").get<uint64_t>();
        h.arrival.signature = j.at("signature").get<std::string>();
        return h;
    } catch (const nlohmann::json::exception& e) {
        return Error{std::string("a hop record is malformed: ") + e.what(), ErrorCode::Protocol};
    }
}

nlohmann::json collectiveOutputJson(const HostTensor& t)
{
    return {{"dtype", std::string(dtypeName(t.dtype))},
            {"shape", t.shape},
            {"bytes", base64Encode(reinterpret_cast<const uint8_t*>(t.data.data()), t.data.size())}};
}

Result<HostTensor> collectiveOutputFromJson(const nlohmann::json& j, DType dtype)
{
    try {
        HostTensor t(dtype, j.at("shape").get<std::vector<uint64_t>>());
        auto bytes = base64Decode(j.at("bytes").get<std::string>());
        if (!bytes || bytes->size() != t.data.size())
            return Error{"a rank's output has the wrong size", ErrorCode::Protocol};
        std::memcpy(t.data.data(), bytes->data(), bytes->size());
        return t;
    } catch (const nlohmann::json::exception& e) {
        return Error{std::string("a rank's output is malformed: ") + e.what(), ErrorCode::Protocol};
    }
}

bool readRankLine(std::FILE* in, std::string& line)
{
    line.clear();
    int c;
    while ((c = std::fgetc(in)) != EOF) {
        if (c == '\n') return true;
        line.push_back(char(c));
    }
    return !line.empty();
}

void replyRankLine(std::FILE* out, const nlohmann::json& j)
{
    const std::string text = j.dump() + "\n";
    std::fwrite(text.data(), 1, text.size(), out);
    std::fflush(out);
}

std::string lastLineOf(std::string text)
{
    while (!text.empty() && text.back() == '\n') text.pop_back();
    const size_t nl = text.rfind('\n');
    return nl == std::string::npos ? text : text.substr(nl + 1);
}

namespace {

class InProcessTransport : public RankTransport {
public:
    InProcessTransport(const CollectiveSetup& setup, std::vector<RingRank> ranks)
        : m_setup(setup), m_ranks(std::move(ranks))
    {
    }
    std::string mode() const override { return "in-process"; }
    Status begin(size_t problem, size_t, const RingPlan& plan, uint32_t rep, RankFault&) override
    {
        for (RingRank& r : m_ranks) r.begin(m_setup.problems[problem], &plan, rep);
        return {};
    }
    Result<RingWire> send(size_t rank, size_t t, RankFault&) override { return m_ranks[rank].send(t); }
    Result<RingArrival> receive(size_t rank, size_t t, RingWire wire, RankFault&) override
    {
        return m_ranks[rank].receive(t, std::move(wire));
    }
    Result<HostTensor> output(size_t rank, RankFault&) override { return m_ranks[rank].output(); }
    Status restart() override { return {}; }

private:
    const CollectiveSetup& m_setup;
    std::vector<RingRank> m_ranks;
};

class ProcessTransport : public RankTransport {
public:
    ProcessTransport(const CollectiveOptions& options, const CollectiveSetup& setup)
        : m_options(options), m_setup(setup), m_ranks(options.targets.size())
    {
        for (auto& p : m_ranks) p = std::make_unique<WorkerProcess>();
    }
    std::string mode() const override { return "processes"; }

    Status startAll()
    {
        for (size_t r = 0; r < m_ranks.size(); ++r) {
            m_ranks[r] = std::make_unique<WorkerProcess>();
            std::vector<std::string> args(m_options.rankCommand.begin() + 1, m_options.rankCommand.end());
            args.push_back(std::to_string(r));
            if (Status st = m_ranks[r]->start(m_options.rankCommand[0], args); !st) return st;
        }
        for (size_t r = 0; r < m_ranks.size(); ++r) {
            RankFault fault;
            auto hello = read(r, fault);
            if (!hello) return hello.error();
            if (fault.happened() || !hello->contains("hello"))
                return Error{"rank " + std::to_string(r) + " (" + m_options.targets[r] + ") did not start: " +
                                 m_ranks[r]->describeExit() + " " + lastLineOf(m_ranks[r]->stderrText()),
                             ErrorCode::Failed};
        }
        return {};
    }

    Status begin(size_t problem, size_t ring, const RingPlan&, uint32_t rep, RankFault& fault) override
    {
        for (size_t r = 0; r < m_ranks.size() && !fault.happened(); ++r) {
            auto reply =
                ask(r, {{"cmd", "begin"}, {"problem", problem}, {"ring", ring}, {"rep", rep}}, fault);
            if (!reply) return reply.error();
        }
        return {};
    }
    Result<RingWire> send(size_t rank, size_t t, RankFault& fault) override
    {
        auto reply = ask(rank, {{"cmd", "send"}, {"transfer", t}}, fault);
        if (!reply) return reply.error();
        if (fault.happened()) return RingWire{};
        return ringWireFromJson(*reply);
    }
    Result<RingArrival> receive(size_t rank, size_t t, RingWire wire, RankFault& fault) override
    {
        auto reply = ask(rank, {{"cmd", "receive"}, {"transfer", t}, {"wire", ringWireJson(wire)}}, fault);
        if (!reply) return reply.error();
        if (fault.happened()) return RingArrival{};
        auto hop = collectiveHopFromJson(*reply);
        if (!hop) return hop.error();
        return hop->arrival;
    }
    Result<HostTensor> output(size_t rank, RankFault& fault) override
    {
        auto reply = ask(rank, {{"cmd", "output"}}, fault);
        if (!reply) return reply.error();
        if (fault.happened()) return HostTensor{};
        return collectiveOutputFromJson(*reply, m_setup.problems.front().inputs.front().dtype);
    }
    Status restart() override
    {
        for (auto& p : m_ranks) p->kill();
        return startAll();
    }

private:
    Result<nlohmann::json> read(size_t rank, RankFault& fault)
    {
        std::string line;
        const auto timeout = std::chrono::milliseconds(int64_t(m_options.timeoutSeconds * 1000));
        switch (m_ranks[rank]->readLine(line, timeout)) {
            case WorkerProcess::ReadOutcome::Line:
                break;
            case WorkerProcess::ReadOutcome::Timeout:
                fault = {int64_t(rank), RunOutcome::Hang};
                return nlohmann::json();
            default:
                fault = {int64_t(rank), RunOutcome::Crash};
                return nlohmann::json();
        }
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object())
            return Error{"rank " + std::to_string(rank) +
                             " answered something that is not JSON: " + line.substr(0, 80),
                         ErrorCode::Protocol};
        if (j.contains("error"))
            return Error{"rank " + std::to_string(rank) + ": " + j["error"].get<std::string>(),
                         ErrorCode::Failed};
        return j;
    }

    Result<nlohmann::json> ask(size_t rank, const nlohmann::json& request, RankFault& fault)
    {
        if (Status st = m_ranks[rank]->send(request.dump()); !st) {
            fault = {int64_t(rank), RunOutcome::Crash};
            return nlohmann::json();
        }
        return read(rank, fault);
    }

    const CollectiveOptions& m_options;
    const CollectiveSetup& m_setup;
    std::vector<std::unique_ptr<WorkerProcess>> m_ranks;
};

// What a simulated GPU that stops answering does in a rank process: it really stops.
[[noreturn]] void actOut(RunOutcome failure, size_t self, std::FILE* out)
{
    std::fflush(out);
    if (failure == RunOutcome::Hang)
        for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    std::fprintf(stderr, "simulated device fault: rank %zu's GPU has fallen off the bus (like Xid 79)\n",
                 self);
    std::fflush(stderr);
    std::abort();
}

}  // namespace

Result<std::unique_ptr<RankTransport>> makeInProcessTransport(const CollectiveOptions& options,
                                                              const CollectiveSetup& setup)
{
    std::vector<RingRank> ranks;
    for (size_t r = 0; r < options.targets.size(); ++r) {
        auto rank = RingRank::create(options.targets, r, options.seed);
        if (!rank) return rank.error();
        ranks.push_back(std::move(*rank));
    }
    return std::unique_ptr<RankTransport>(std::make_unique<InProcessTransport>(setup, std::move(ranks)));
}

Result<std::unique_ptr<RankTransport>> makeProcessTransport(const CollectiveOptions& options,
                                                            const CollectiveSetup& setup)
{
    auto t = std::make_unique<ProcessTransport>(options, setup);
    if (Status st = t->startAll(); !st) return st.error();
    return std::unique_ptr<RankTransport>(std::move(t));
}

int serveCollectiveRank(const CollectiveOptions& options, size_t self, std::FILE* in, std::FILE* out)
{
    auto setup = prepareCollectiveReplay(options);
    if (!setup || self >= options.targets.size()) {
        std::fprintf(stderr, "error: %s\n", setup ? "rank beyond the targets" : setup.message().c_str());
        return 2;
    }
    auto rank = RingRank::create(options.targets, self, options.seed);
    if (!rank) {
        std::fprintf(stderr, "error: %s\n", rank.message().c_str());
        return 2;
    }
    replyRankLine(out, {{"hello", "collective-rank"}, {"rank", self}});
    std::map<std::pair<size_t, size_t>, RingPlan> plans;
    const RingPlan* plan = nullptr;  // of the run begun last
    std::string line;
    while (readRankLine(in, line)) {
        const auto j = nlohmann::json::parse(line, nullptr, false);
        const std::string cmd = j.is_object() ? j.value("cmd", "") : "";
        try {
            if (cmd == "begin") {
                const size_t p = j.at("problem").get<size_t>(), g = j.at("ring").get<size_t>();
                if (p >= setup->problems.size() || g >= setup->rings.size()) {
                    replyRankLine(out, {{"error", "begin names no such op or ring"}});
                    continue;
                }
                auto it = plans.find({p, g});
                if (it == plans.end())
                    it = plans.emplace(std::make_pair(p, g), planRing(setup->problems[p], setup->rings[g]))
                             .first;
                plan = &it->second;
                rank->begin(setup->problems[p], plan, j.at("rep").get<uint32_t>());
                replyRankLine(out, {{"ok", true}});
            } else if ((cmd == "send" || cmd == "receive" || cmd == "output") &&
                       (!plan ||
                        (cmd != "output" && j.at("transfer").get<size_t>() >= plan->transfers.size()))) {
                replyRankLine(out, {{"error", cmd + " without a run begun or beyond its transfers"}});
            } else if (cmd == "send") {
                RingWire wire = rank->send(j.at("transfer").get<size_t>());
                if (!wire.answered) actOut(wire.failure, self, out);
                replyRankLine(out, ringWireJson(wire));
            } else if (cmd == "receive") {
                auto wire = ringWireFromJson(j.at("wire"));
                if (!wire) {
                    replyRankLine(out, {{"error", wire.message()}});
                    continue;
                }
                CollectiveHop hop;
                hop.transfer = j.at("transfer").get<size_t>();
                hop.arrival = rank->receive(hop.transfer, std::move(*wire));
                if (!hop.arrival.answered && hop.arrival.byReceiver) actOut(hop.arrival.failure, self, out);
                replyRankLine(out, collectiveHopJson(hop));
            } else if (cmd == "output") {
                replyRankLine(out, collectiveOutputJson(rank->output()));
            } else {
                replyRankLine(out, {{"error", "unknown request: " + line.substr(0, 80)}});
            }
        } catch (const nlohmann::json::exception& e) {
            replyRankLine(out, {{"error", std::string("malformed request: ") + e.what()}});
        }
    }
    return 0;
}

}  // namespace faultline
