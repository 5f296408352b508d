// The NCCL path of the collective replay: target settings, the rank process's loop and the
// orchestrator with its watchdog (the protocol is in CollectiveNccl.h).
#include "CollectiveNccl.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <set>

#include "../Base64.h"
#include "../replay/WorkerProcess.h"
#include "CollectiveTransport.h"

namespace faultline {

namespace {

// NCCL's names (NCCL_ALGO, NCCL_PROTO); NCCL matches them case-insensitively.
constexpr std::array kAlgorithms{"Ring", "Tree", "CollnetDirect", "CollnetChain", "NVLS", "NVLSTree", "PAT"};
constexpr std::array kProtocols{"LL", "LL128", "Simple"};
constexpr int kMaxChannels = 64;

template <size_t N>
Result<std::string> canonicalName(const TargetSpec& spec, const std::string& key,
                                  const std::array<const char*, N>& names)
{
    const std::string value = spec.param(key, "");
    if (value.empty()) return std::string();
    std::string known;
    for (const char* n : names) {
        const std::string_view name(n);
        if (std::equal(value.begin(), value.end(), name.begin(), name.end(), [](char a, char b) {
                return std::tolower(static_cast<unsigned char>(a)) ==
                       std::tolower(static_cast<unsigned char>(b));
            }))
            return std::string(name);
        known += (known.empty() ? "" : ", ") + std::string(n);
    }
    return Error{"target '" + spec.text + "': " + key + "=" + value + " is not an NCCL " +
                     (key == "nccl_algo" ? "algorithm" : "protocol") + " (" + known + ")",
                 ErrorCode::Usage};
}

void setOrUnset(const char* name, const std::string& value)
{
    if (value.empty())
        ::unsetenv(name);
    else
        ::setenv(name, value.c_str(), 1);
}

}  // namespace

Result<NcclSettings> ncclSettingsOf(const TargetSpec& spec)
{
    for (const auto& [key, value] : spec.params)
        if (key != "nccl_algo" && key != "nccl_proto" && key != "nccl_min_channels" &&
            key != "nccl_max_channels")
            return Error{"target '" + spec.text + "': unknown parameter " + key +
                             " (cuda: takes nccl_algo, nccl_proto, nccl_min_channels, nccl_max_channels)",
                         ErrorCode::Usage};
    NcclSettings s;
    auto algo = canonicalName(spec, "nccl_algo", kAlgorithms);
    if (!algo) return algo.error();
    auto proto = canonicalName(spec, "nccl_proto", kProtocols);
    if (!proto) return proto.error();
    auto minChannels = spec.number("nccl_min_channels", 0, 1, kMaxChannels, false);
    if (!minChannels) return minChannels.error();
    auto maxChannels = spec.number("nccl_max_channels", 0, 1, kMaxChannels, false);
    if (!maxChannels) return maxChannels.error();
    s.algo = *algo;
    s.proto = *proto;
    s.minChannels = int(*minChannels);
    s.maxChannels = int(*maxChannels);
    if (s.minChannels > 0 && s.maxChannels > 0 && s.minChannels > s.maxChannels)
        return Error{"target '" + spec.text + "': nccl_min_channels " + std::to_string(s.minChannels) +
                         " exceeds nccl_max_channels " + std::to_string(s.maxChannels),
                     ErrorCode::Usage};
    return s;
}

nlohmann::json ncclSettingsJson(const NcclSettings& s)
{
    auto orNull = [](const auto& v, bool set) { return set ? nlohmann::json(v) : nlohmann::json(); };
    return {{"algo", orNull(s.algo, !s.algo.empty())},
            {"proto", orNull(s.proto, !s.proto.empty())},
            {"min_channels", orNull(s.minChannels, s.minChannels > 0)},
            {"max_channels", orNull(s.maxChannels, s.maxChannels > 0)}};
}

void applyNcclSettings(const NcclSettings& s)
{
    setOrUnset("NCCL_ALGO", s.algo);
    setOrUnset("NCCL_PROTO", s.proto);
    setOrUnset("NCCL_MIN_NCHANNELS", s.minChannels > 0 ? std::to_string(s.minChannels) : "");
    setOrUnset("NCCL_MAX_NCHANNELS", s.maxChannels > 0 ? std::to_string(s.maxChannels) : "");
}

std::vector<uint64_t> collectiveOutputShape(const CollectiveProblem& p)
{
    std::vector<uint64_t> shape = p.inputs[0].shape;
    const uint64_t n = p.inputs.size();
    if (p.kind == CollectiveKind::AllGather) {
        if (shape.empty()) return {n};
        shape[0] *= n;
    } else if (p.kind == CollectiveKind::ReduceScatter && !shape.empty()) {
        shape[0] /= n;
    }
    return shape;
}

Status describeNcclRanks(const CollectiveOptions& o, std::vector<std::string>& descriptions)
{
    if (!o.ring.empty())
        return Error{"--ring applies to sim: ranks; NCCL chooses the order of cuda: ranks itself",
                     ErrorCode::Usage};
    std::set<std::string> devices;
    for (const std::string& text : o.targets) {
        auto spec = parseTargetSpec(text);
        if (!spec) return Error{spec.message(), ErrorCode::Usage};
        if (spec->kind != "cuda") {
            const auto cudaTarget =
                std::find_if(o.targets.begin(), o.targets.end(),
                             [](const std::string& t) { return t.rfind("cuda:", 0) == 0; });
            return Error{"targets '" + *cudaTarget + "' and '" + spec->text +
                             "': cuda: ranks run through NCCL, and a communicator does not mix them with " +
                             spec->kind + " ranks",
                         ErrorCode::Usage};
        }
        auto settings = ncclSettingsOf(*spec);
        if (!settings) return settings.error();
        if (!devices.insert(spec->model).second)
            return Error{"target '" + spec->text + "': cuda:" + spec->model +
                             " holds two ranks (NCCL puts one rank on each GPU)",
                         ErrorCode::Usage};
        std::string d = "NCCL rank on cuda:" + spec->model;
        if (!settings->algo.empty()) d += ", algo " + settings->algo;
        if (!settings->proto.empty()) d += ", proto " + settings->proto;
        if (settings->minChannels) d += ", min channels " + std::to_string(settings->minChannels);
        if (settings->maxChannels) d += ", max channels " + std::to_string(settings->maxChannels);
        descriptions.push_back(d);
    }
    return {};
}

int serveNcclRank(const CollectiveOptions& options, size_t self, const NcclRankBackend* backend,
                  std::FILE* in, std::FILE* out)
{
    auto refuse = [&](const std::string& message) {
        replyRankLine(out, {{"error", message}});
        std::fprintf(stderr, "error: %s\n", message.c_str());
        return 2;
    };
    if (self >= options.targets.size()) return refuse("rank " + std::to_string(self) + " beyond the targets");
    auto setup = prepareCollectiveReplay(options);
    if (!setup) return refuse(setup.message());
    if (!setup->nccl) return refuse("the targets are not cuda: ranks");
    auto spec = parseTargetSpec(options.targets[self]);
    if (!spec) return refuse(spec.message());
    auto settings = ncclSettingsOf(*spec);
    if (!settings) return refuse(settings.message());
    if (!backend)
        return refuse("target '" + spec->text + "': this faultline-worker was built without the CUDA target");
    const int device = std::atoi(spec->model.c_str());
    if (Status st = backend->probe(device); !st)
        return refuse("target '" + spec->text + "': " + st.message());
    applyNcclSettings(*settings);
    replyRankLine(
        out,
        {{"hello", "nccl-rank"}, {"rank", self}, {"device", device}, {"nccl_version", backend->version}});
    std::string line;
    while (readRankLine(in, line)) {
        const auto j = nlohmann::json::parse(line, nullptr, false);
        const std::string cmd = j.is_object() ? j.value("cmd", "") : "";
        try {
            if (cmd == "unique_id") {
                auto id = backend->createUniqueId();
                if (!id)
                    replyRankLine(out, {{"error", id.message()}});
                else
                    replyRankLine(out, {{"unique_id", base64Encode(id->data(), id->size())}});
            } else if (cmd == "run") {
                const size_t p = j.at("problem").get<size_t>();
                auto id = base64Decode(j.at("unique_id").get<std::string>());
                if (p >= setup->problems.size() || !id) {
                    replyRankLine(out, {{"error", "run names no such op or carries no unique id"}});
                    continue;
                }
                auto output = backend->run(setup->problems[p], self, options.targets.size(), device, *id);
                if (!output)
                    replyRankLine(out, {{"error", output.message()}});
                else
                    replyRankLine(out, collectiveOutputJson(*output));
            } else {
                replyRankLine(out, {{"error", "unknown request: " + line.substr(0, 80)}});
            }
        } catch (const nlohmann::json::exception& e) {
            replyRankLine(out, {{"error", std::string("malformed request: ") + e.what()}});
        }
    }
    return 0;
}

namespace {

// The rank processes of one replay, spoken to with a watchdog.
class NcclRanks {
public:
    explicit NcclRanks(const CollectiveOptions& options) : m_options(options), m_procs(options.targets.size())
    {
    }
    ~NcclRanks() { kill(); }
    NcclRanks(const NcclRanks&) = delete;
    NcclRanks& operator=(const NcclRanks&) = delete;

    int version() const { return m_version; }

    Status start()
    {
        for (auto& p : m_procs) {
            if (p) p->kill();
            p = std::make_unique<WorkerProcess>();
        }
        std::string targets;
        for (const std::string& t : m_options.targets) targets += (targets.empty() ? "" : ",") + t;
        for (size_t r = 0; r < m_procs.size(); ++r) {
            std::vector<std::string> args = {"--collective-rank", std::to_string(r), "--trace",
                                             m_options.tracePath, "--targets",       targets};
            if (!m_options.ops.empty()) args.insert(args.end(), {"--ops", m_options.ops});
            if (Status st = m_procs[r]->start(m_options.workerProgram, args); !st) return st;
        }
        for (size_t r = 0; r < m_procs.size(); ++r) {
            RankFault fault;
            auto hello = read(r, fault);
            if (!hello) return Error{hello.message(), ErrorCode::Device};
            if (fault.happened() || !hello->contains("hello"))
                return Error{"target '" + m_options.targets[r] + "' (rank " + std::to_string(r) +
                                 ") did not start: " + m_procs[r]->describeExit() + " " +
                                 lastLineOf(m_procs[r]->stderrText()),
                             ErrorCode::Device};
            m_version = hello->value("nccl_version", 0);
        }
        return {};
    }

    void kill()
    {
        for (auto& p : m_procs)
            if (p) p->kill();
    }

    // One line from rank `r`: a fault on timeout or a closed pipe; an error reply is an Error.
    std::chrono::milliseconds watchdog() const
    {
        return std::chrono::milliseconds(int64_t(m_options.timeoutSeconds * 1000));
    }

    Result<nlohmann::json> read(size_t r, RankFault& fault) { return read(r, fault, watchdog()); }
    Result<nlohmann::json> read(size_t r, RankFault& fault, std::chrono::milliseconds timeout)
    {
        std::string line;
        switch (m_procs[r]->readLine(line, timeout)) {
            case WorkerProcess::ReadOutcome::Line:
                break;
            case WorkerProcess::ReadOutcome::Timeout:
                fault = {int64_t(r), RunOutcome::Hang};
                return nlohmann::json();
            default:
                fault = {int64_t(r), RunOutcome::Crash};
                return nlohmann::json();
        }
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object())
            return Error{"target '" + m_options.targets[r] +
                             "' answered something that is not JSON: " + line.substr(0, 80),
                         ErrorCode::Protocol};
        if (j.contains("error") && j["error"].is_string())
            return Error{j["error"].get<std::string>(), ErrorCode::Device};
        return j;
    }

    bool send(size_t r, const nlohmann::json& request, RankFault& fault)
    {
        if (m_procs[r]->send(request.dump())) return true;
        fault = {int64_t(r), RunOutcome::Crash};
        return false;
    }

private:
    const CollectiveOptions& m_options;
    std::vector<std::unique_ptr<WorkerProcess>> m_procs;
    int m_version = 0;
};

}  // namespace

Result<CollectiveReport> runNcclCollective(const CollectiveOptions& options, const CollectiveSetup& setup)
{
    if (options.workerProgram.empty())
        return Error{"cuda: ranks run in faultline-worker processes, and no worker program was given",
                     ErrorCode::Usage};
    NcclRanks ranks(options);
    if (Status st = ranks.start(); !st) return st.error();
    CollectiveReport report = startCollectiveReport(options, setup, "nccl");
    report.linksObservable = false;
    nlohmann::json settings = nlohmann::json::array();
    for (const std::string& t : options.targets) {
        auto spec = parseTargetSpec(t);
        auto s = spec ? ncclSettingsOf(*spec) : Result<NcclSettings>(spec.error());
        settings.push_back(s ? ncclSettingsJson(*s) : nlohmann::json());
    }
    const size_t n = options.targets.size();
    for (size_t pi = 0; pi < setup.problems.size(); ++pi) {
        const CollectiveProblem& problem = setup.problems[pi];
        for (uint32_t rep = 0; rep < options.reps; ++rep) {
            CollectiveRun run;
            run.opIndex = problem.opIndex;
            run.op = collectiveKindName(problem.kind);
            run.rep = rep;
            RankFault fault;
            std::vector<HostTensor> outputs;
            std::vector<bool> answered(n, false);
            auto failRun = [&](size_t r, const std::string& message) {
                if (run.status != RunOutcome::Error) {
                    run.status = RunOutcome::Error;
                    run.failedRank = int64_t(r);
                    run.error = message;
                }
            };
            std::string id;
            if (ranks.send(0, {{"cmd", "unique_id"}}, fault)) {
                auto reply = ranks.read(0, fault);
                if (!reply)
                    failRun(0, reply.message());
                else if (!fault.happened())
                    id = reply->value("unique_id", "");
            }
            // Every rank gets "run" before any reply is read: ncclCommInitRank waits for all.
            for (size_t r = 0; r < n && !fault.happened() && run.status != RunOutcome::Error; ++r)
                ranks.send(r, {{"cmd", "run"}, {"problem", pi}, {"rep", rep}, {"unique_id", id}}, fault);
            // The answers in whatever order they come: a rank that fails or dies leaves the others
            // waiting inside NCCL, so it is found while they are still silent.
            std::vector<HostTensor> answers(n);
            size_t pending = (fault.happened() || run.status == RunOutcome::Error) ? 0 : n;
            const auto deadline = std::chrono::steady_clock::now() + ranks.watchdog();
            while (pending > 0 && !fault.happened() && run.status != RunOutcome::Error &&
                   std::chrono::steady_clock::now() < deadline)
                for (size_t r = 0; r < n && !fault.happened() && run.status != RunOutcome::Error; ++r) {
                    if (answered[r]) continue;
                    RankFault silent;
                    auto reply = ranks.read(r, silent, std::chrono::milliseconds(pending == 1 ? 200 : 20));
                    if (!reply) {
                        failRun(r, reply.message());
                    } else if (silent.what == RunOutcome::Crash) {
                        fault = silent;
                    } else if (!silent.happened()) {
                        auto out = collectiveOutputFromJson(*reply, problem.inputs[0].dtype);
                        if (!out || out->shape != collectiveOutputShape(problem))
                            failRun(r, "target '" + options.targets[r] +
                                           "' answered an output of the wrong shape");
                        else
                            answers[r] = std::move(*out);
                        answered[r] = true;
                        --pending;
                    }
                }
            if (run.status != RunOutcome::Error) {
                if (fault.happened()) {
                    run.status = fault.what;
                    run.failedRank = fault.rank;
                } else if (pending > 0) {
                    // Hung. One silent rank is named; when several are silent, NCCL's ranks wait
                    // for each other and no single GPU can be blamed (failed_rank null).
                    run.status = RunOutcome::Hang;
                    if (pending == 1)
                        run.failedRank =
                            int64_t(std::find(answered.begin(), answered.end(), false) - answered.begin());
                } else {
                    outputs = std::move(answers);
                }
            }
            if (run.status != RunOutcome::Ok) {
                outputs.clear();
                if (Status st = ranks.start(); !st) return st.error();
            }
            judgeCollectiveRun(problem, outputs, run);
            report.addRun(std::move(run));
        }
    }
    ranks.kill();
    report.nccl = {{"version", ranks.version()}, {"settings", settings}};
    judgeCollectiveReport(report, {});
    return report;
}

}  // namespace faultline
