#include "FleetStatus.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../Text.h"

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
    std::ifstream in(path);
    if (!in)
        return fileError(path, "cannot open (not a directory made by faultline fleet submit?)",
                         ErrorCode::Io);
    std::ostringstream text;
    text << in.rdbuf();
    const auto j = nlohmann::json::parse(text.str(), nullptr, false);
    if (j.is_discarded() || !j.is_object() || j.value("faultline_format", std::string()) != "fleet-job")
        return fileError(path, "not a fleet job description (faultline_format \"fleet-job\")");
    FleetManifest m;
    try {
        m.scheduler = j.value("scheduler", std::string());
        m.tasks = j.at("tasks").get<uint32_t>();
        m.trace = j.value("trace", std::string());
        m.jobIds = j.value("job_ids", std::vector<std::string>{});
    } catch (const nlohmann::json::exception& e) {
        return fileError(path, std::string("bad field: ") + e.what());
    }
    return m;
}

Status writeFleetManifest(const std::string& dir, const FleetManifest& manifest)
{
    const std::string path = fleetManifestPath(dir);
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << manifest.toJson().dump(2) << "\n";
        if (!out) return fileError(tmp, "cannot write", ErrorCode::Io);
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) return fileError(path, "cannot write: " + ec.message(), ErrorCode::Io);
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
