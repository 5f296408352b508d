#pragma once
// A fleet replay as a cluster job (`faultline fleet submit|k8s`): one task per node, each running
// `faultline replay TRACE --targets ... --out DIR/results/<task>.h5` with the node's identity and
// GPU inventory. The job's text (a Slurm batch script, a Kubernetes Indexed Job) is generated
// here from this description; submitting it is the CLI's.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../Result.h"

namespace faultline {

// The ranges a fleet job's numbers must lie in (fleet submit's options, fleet.json, merge --tasks).
inline constexpr uint32_t kMaxFleetTasks = 100000;
inline constexpr uint32_t kMaxGpusPerNode = 1024;
inline constexpr uint32_t kMaxFleetReps = 1000000;
inline constexpr uint32_t kMaxTimeLimitMinutes = 100000;
// replay --timeout's range: a run longer than this is a hang.
inline constexpr double kMinRunTimeoutSeconds = 0.001, kMaxRunTimeoutSeconds = 7 * 24 * 3600.0;

struct FleetJob {
    std::string trace;         // absolute path of the trace, readable on every node
    std::string outDir;        // absolute path of DIR (results/, logs/), shared by every node
    std::string faultline;     // the faultline executable on the nodes
    uint32_t tasks = 1;        // one per node
    uint32_t gpusPerNode = 8;  // default targets cuda:0..G-1; the GPUs the job asks for
    uint32_t reps = 3;
    std::string ops;                              // --ops selection ("" all)
    std::string targets;                          // every task's targets ("" cuda:0..G-1)
    std::map<uint32_t, std::string> taskTargets;  // per task: overrides `targets`
    double timeoutSeconds = 60;                   // replay --timeout (a run longer is a hang)
    uint32_t timeLimitMinutes = 60;               // the scheduler's limit for one task
    std::string name = "faultline-fleet";         // job name
    // Slurm
    std::string partition;
    std::vector<std::string> nodelist;  // one task per named node (submitted one array index each)
    // Kubernetes
    std::string image, claim, mount = "/fleet";
};

// The targets task `task` replays: its override, else `targets`, else cuda:0,...,cuda:G-1.
std::string taskTargets(const FleetJob& job, uint32_t task);

// Whether the job asks the scheduler for G GPUs per node: when some task has cuda: targets
// (simulated nodes need none).
bool asksForGpus(const FleetJob& job);

// Checks what a generated job would get wrong: no tasks, a targets override of a task that does
// not exist, a nodelist whose length is not the task count, a target list that does not parse,
// relative paths, numbers out of their ranges; Kubernetes needs an image and a claim, and paths
// under the mount. Every value that reaches the job's text is checked before any text is made
// (ErrorCode::Usage, naming the option): paths, targets and --ops are printable text (no newline
// or other control character: the shell lines quote them); what goes into an `#SBATCH` line,
// which no shell quoting protects, keeps to Slurm's own characters: the partition and the
// --nodelist entries letters, digits, '.', '_' and '-', the job name those and '+', ':', '@', ',',
// '='; the directory in --output no backslash (Slurm stops expanding %a). On Kubernetes the job
// name is a DNS label (it is also a label value and the pods' host names), the claim a DNS
// subdomain, the image one word and the mount path without ':'.
Status validateSlurmJob(const FleetJob& job);
Status validateKubernetesJob(const FleetJob& job);

// POSIX shell that runs one task; `taskVariable` holds the task index (SLURM_ARRAY_TASK_ID,
// JOB_COMPLETION_INDEX). It writes results/<task>.h5, <task>.devices.json and <task>.exit
// (replay's exit code: 0 healthy, 1 a target diverged, 2 error).
std::string taskShellScript(const FleetJob& job, const std::string& taskVariable);

// The Slurm batch script (DIR/job.sbatch): a job array 0..tasks-1, one node and all of its
// GPUs per task (--exclusive), output in DIR/logs/<task>.out.
std::string slurmBatchScript(const FleetJob& job);

// The Kubernetes Indexed Job (batch/v1): completions = parallelism = tasks, one pod per node
// (required pod anti-affinity on kubernetes.io/hostname), nvidia.com/gpu limits, the claim
// mounted at `mount`, the node's name in FAULTLINE_HOST.
nlohmann::json kubernetesJob(const FleetJob& job);

}  // namespace faultline
