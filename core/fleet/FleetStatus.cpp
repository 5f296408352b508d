#include "FleetStatus.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../Text.h"
#include "../io/SafeFiles.h"
#include "FleetJob.h"  // kMaxFleetTasks

namespace faultline {

nlohmann::json FleetManifest::toJson() const
{
    return {{"faultline_format", "fleet-job"},
            {"faultline_version", 1},
            {"scheduler", scheduler},
            {"tasks", tasks},
            {"trace", trace},
            {"job_ids", jobIds}};
}

std::string fleetManifestPath(const std::string& dir)
{
    return (std::filesystem::path(dir) / "fleet.json").string();
}

Result<FleetManifest> readFleetManifest(const std::string& dir)
{
    const std::string path = fleetManifestPath(dir);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return fileError(path, "cannot open (not a directory made by faultline fleet submit?)",
                         ErrorCode::Io);
    if (Status regular = checkRegularInput(path); !regular) return regular.error();
    constexpr uintmax_t kMaxManifestBytes = 16u << 20;
    if (std::filesystem::file_size(path, ec) > kMaxManifestBytes)
        return fileError(path, "is larger than 16 MiB: not a fleet job description");
    std::ifstream in(path);
    if (!in) return fileError(path, "cannot open", ErrorCode::Io);
    std::ostringstream text;
    text << in.rdbuf();
    const auto j = nlohmann::json::parse(text.str(), nullptr, false);
    const auto format = j.is_object() ? j.find("faultline_format") : j.end();
    if (j.is_discarded() || !j.is_object() || format == j.end() || *format != "fleet-job")
        return fileError(path, "not a fleet job description (faultline_format \"fleet-job\")");
    if (const auto version = j.find("faultline_version");
        version != j.end() && !(version->is_number_integer() && *version == 1))
        return fileError(path, "faultline_version " + printableText(version->dump()) +
                                   ": this Faultline reads version 1 of fleet job descriptions");
    // Every field is checked with its range: the task count drives loops and lists, the job ids
    // go to squeue and sacct.
    const auto bad = [&](const std::string& field, const std::string& why) {
        return fileError(path, "\"" + field + "\" " + why);
    };
    FleetManifest m;
    const auto tasks = j.find("tasks");
    if (tasks == j.end())
        return bad("tasks", "is missing (the job's task count, 1 to " + std::to_string(kMaxFleetTasks) + ")");
    const bool inRange = tasks->is_number_unsigned()
                             ? tasks->get<uint64_t>() >= 1 && tasks->get<uint64_t>() <= kMaxFleetTasks
                             : tasks->is_number_integer() && tasks->get<int64_t>() >= 1 &&
                                   tasks->get<int64_t>() <= int64_t(kMaxFleetTasks);
    if (!inRange)
        return bad("tasks", "is " + printableText(tasks->dump()) + ": must be an integer from 1 to " +
                                std::to_string(kMaxFleetTasks));
    m.tasks = tasks->get<uint32_t>();
    const auto scheduler = j.find("scheduler");
    if (scheduler == j.end() || !scheduler->is_string() ||
        (*scheduler != "slurm" && *scheduler != "kubernetes"))
        return bad("scheduler", "must be \"slurm\" or \"kubernetes\"");
    m.scheduler = scheduler->get<std::string>();
    if (const auto trace = j.find("trace"); trace != j.end()) {
        if (!trace->is_string() || !isPrintableText(trace->get_ref<const std::string&>()))
            return bad("trace", "must be a path in printable text");
        m.trace = trace->get<std::string>();
    }
    if (const auto ids = j.find("job_ids"); ids != j.end()) {
        if (!ids->is_array() || ids->size() > kMaxFleetTasks)
            return bad("job_ids", "must be a list of Slurm job ids");
        for (const nlohmann::json& id : *ids) {
            const bool digits =
                id.is_string() && !id.get_ref<const std::string&>().empty() &&
                id.get_ref<const std::string&>().size() <= 20 &&
                id.get_ref<const std::string&>().find_first_not_of("0123456789") == std::string::npos;
            if (!digits)
                return bad("job_ids", "holds " + printableText(id.dump()) + ": a Slurm job id is a number");
            m.jobIds.push_back(id.get<std::string>());
        }
    }
    return m;
}

Status writeFleetManifest(const std::string& dir, const FleetManifest& manifest)
{
    // A new temporary beside it (O_EXCL, no link followed), renamed into place.
    const std::string path = fleetManifestPath(dir);
    auto tmp = createTempBeside(path);
    if (!tmp) return tmp.error();
    std::error_code ec;
    {
        std::ofstream out(*tmp, std::ios::trunc);
        out << manifest.toJson().dump(2) << "\n";
        out.close();
        if (!out) {
            std::filesystem::remove(*tmp, ec);
            return fileError(*tmp, "cannot write", ErrorCode::Io);
        }
    }
    std::filesystem::rename(*tmp, path, ec);
    if (ec) {
        std::error_code ignored;
        std::filesystem::remove(*tmp, ignored);
        return fileError(path, "cannot write: " + ec.message(), ErrorCode::Io);
    }
    return {};
}

std::map<uint32_t, std::string> parseSchedulerStates(const std::string& text)
{
    std::map<uint32_t, std::string> states;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        line = trimmed(line);
        const size_t sep = line.find_first_of(" |");
        if (sep == std::string::npos) continue;
        const std::string id = line.substr(0, sep);
        std::string state = trimmed(line.substr(sep + 1));
        state = state.substr(0, state.find_first_of(" |"));  // "CANCELLED by 0" -> CANCELLED
        const size_t underscore = id.find('_');
        if (underscore == std::string::npos || state.empty()) continue;
        const std::string index = id.substr(underscore + 1);
        if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos) continue;
        try {
            states[uint32_t(std::stoul(index))] = state;
        } catch (...) {
        }
    }
    return states;
}

uint32_t FleetStatus::count(const std::string& state) const
{
    uint32_t n = 0;
    for (const FleetTask& t : list) n += t.state == state;
    return n;
}

nlohmann::json FleetStatus::toJson() const
{
    nlohmann::json list_ = nlohmann::json::array();
    for (const FleetTask& t : list) {
        nlohmann::json j = {{"task", t.task}, {"state", t.state}, {"detail", t.detail}};
        j["exit_code"] = t.exitCode ? nlohmann::json(*t.exitCode) : nlohmann::json();
        if (!t.results.empty()) j["results"] = t.results;
        list_.push_back(std::move(j));
    }
    return {{"tasks", tasks},
            {"pending", count("pending")},
            {"running", count("running")},
            {"done", count("done")},
            {"failed", count("failed")},
            {"unknown", count("unknown")},
            {"complete", complete()},
            {"source", source},
            {"task_states", list_}};
}

std::string FleetStatus::text() const
{
    std::ostringstream out;
    out << tasks << " task(s): " << count("pending") << " pending, " << count("running") << " running, "
        << count("done") << " done, " << count("failed") << " failed";
    if (count("unknown")) out << ", " << count("unknown") << " unknown";
    out << " (from " << source << ")\n";
    for (const FleetTask& t : list)
        if (t.state != "done") out << "  task " << t.task << ": " << t.state << " (" << t.detail << ")\n";
    return out.str();
}

namespace {

bool isRunningState(const std::string& s)
{
    return s == "RUNNING" || s == "COMPLETING" || s == "CONFIGURING" || s == "STAGE_OUT" ||
           s == "SUSPENDED" || s == "RESIZING" || s == "SIGNALING";
}

}  // namespace

FleetStatus fleetStatus(const std::string& dir, uint32_t tasks, const std::map<uint32_t, std::string>* queue,
                        const std::map<uint32_t, std::string>* accounting)
{
    namespace fs = std::filesystem;
    FleetStatus status;
    status.tasks = tasks;
    status.source = queue ? (accounting ? "squeue+sacct" : "squeue") : "results";
    const fs::path results = fs::path(dir) / "results";
    for (uint32_t t = 0; t < tasks; ++t) {
        FleetTask task;
        task.task = t;
        const fs::path h5 = results / (std::to_string(t) + ".h5");
        const fs::path exitFile = results / (std::to_string(t) + ".exit");
        std::error_code ec;
        const bool haveResults = fs::is_regular_file(h5, ec);
        if (haveResults) task.results = h5.string();
        std::ifstream exitIn(exitFile);
        int rc = -1;
        if (exitIn && (exitIn >> rc)) task.exitCode = rc;
        const std::string queued = queue && queue->count(t) ? queue->at(t) : std::string();
        const std::string accounted = accounting && accounting->count(t) ? accounting->at(t) : std::string();
        if (task.exitCode) {
            if ((rc == 0 || rc == 1) && haveResults) {
                task.state = "done";
                task.detail = rc == 0 ? "all targets healthy" : "a target diverged";
            } else {
                task.state = "failed";
                task.detail = "replay exited " + std::to_string(rc) +
                              (haveResults ? "" : " without a results file") + " (see logs/" +
                              std::to_string(t) + ".out and results/" + std::to_string(t) + ".txt)";
            }
        } else if (!queued.empty()) {
            task.state = queued == "PENDING" ? "pending" : isRunningState(queued) ? "running" : "failed";
            task.detail = "squeue: " + queued;
        } else if (!accounted.empty()) {
            task.state = accounted == "PENDING"      ? "pending"
                         : isRunningState(accounted) ? "running"
                                                     : "failed";
            task.detail = "sacct: " + accounted + (task.state == "failed" ? ", no results" : "");
        } else if (queue) {
            task.state = "failed";
            task.detail = "not in the queue and no results: the task timed out, was cancelled or was lost";
        } else {
            task.state = "unknown";
            task.detail =
                haveResults ? "a results file but no exit code yet" : "no results yet (no scheduler to ask)";
        }
        status.list.push_back(std::move(task));
    }
    return status;
}

}  // namespace faultline
