#pragma once
// Who ran a campaign: the node's host name, the scheduler's job and task (Slurm array task,
// Kubernetes Indexed Job completion index), and the node's GPUs as `faultline devices --json`
// listed them. Recorded in the campaign report's "node" object (docs/formats.md) so that a
// fleet merge can say host × GPU with UUID and serial.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "../Result.h"

namespace faultline {

// Reads an environment variable (nullopt when unset); tests pass their own.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup processEnvironment();

// {"host", "scheduler": "slurm"|"kubernetes"|"none", "job_id", "task", "pod"}: the host is
// FAULTLINE_HOST when set (a Kubernetes pod's node, from the downward API), else SLURMD_NODENAME,
// else gethostname(); the task is SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX (absent otherwise).
nlohmann::json nodeIdentity(const EnvLookup& env = processEnvironment());

}  // namespace faultline
