#pragma once
// Where a fleet job stands (`faultline fleet status DIR`): per task pending, running, done or
// failed, from the scheduler's view (squeue, sacct) where there is one, else from what the
// tasks left in DIR/results (the results file and <task>.exit, replay's exit code). A task that
// neither the scheduler nor DIR knows of is failed, never dropped.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "../Result.h"

namespace faultline {

// DIR/fleet.json, written by `fleet submit` / `fleet k8s`: what the job is.
struct FleetManifest {
    std::string scheduler;  // slurm | kubernetes
    uint32_t tasks = 0;
    std::string trace;
    std::vector<std::string> jobIds;  // Slurm job ids (one array, or one per --nodelist node)
    nlohmann::json toJson() const;
};
std::string fleetManifestPath(const std::string& dir);
Result<FleetManifest> readFleetManifest(const std::string& dir);
Status writeFleetManifest(const std::string& dir, const FleetManifest& manifest);

struct FleetTask {
    uint32_t task = 0;
    std::string state;   // pending | running | done | failed | unknown
    std::string detail;  // why (scheduler state, exit code, verdict)
    std::optional<int> exitCode;
    std::string results;  // DIR/results/<task>.h5 when present
};

struct FleetStatus {
    uint32_t tasks = 0;
    std::vector<FleetTask> list;
    std::string source;  // what was asked: "squeue", "squeue+sacct", "results"
    uint32_t count(const std::string& state) const;
    bool complete() const { return count("pending") + count("running") + count("unknown") == 0; }
    nlohmann::json toJson() const;
    std::string text() const;
};

// Task index → scheduler state ("PENDING", "RUNNING", "TIMEOUT", ...) from the lines of
// `squeue -h -r -o "%i %T"` or `sacct -n -P -X -o JobID,State` ("123_4 RUNNING", "123_4|TIMEOUT").
std::map<uint32_t, std::string> parseSchedulerStates(const std::string& text);

// Combines what DIR/results holds with the scheduler's states. `queue` null: no scheduler
// could be asked (squeue missing); `accounting` null: no accounting (sacct missing or disabled).
FleetStatus fleetStatus(const std::string& dir, uint32_t tasks, const std::map<uint32_t, std::string>* queue,
                        const std::map<uint32_t, std::string>* accounting);

}  // namespace faultline
