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

// The GPU inventory of `faultline devices --json` (or `faultline-worker --devices-json`) in
// `path`, reduced to what identifies each GPU: {"driver_version", "gpus": [{"index", "name",
// "uuid", "serial", "pci_bus_id", "sm_count", "peer_key"}]}. Errors name the file.
Result<nlohmann::json> readNodeInventory(const std::string& path);

}  // namespace faultline
