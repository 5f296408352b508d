#include "FleetJob.h"

#include <sstream>

#include "../evidence/MinimalReproducer.h"  // shellQuote
#include "../replay/TargetSpec.h"

namespace faultline {

std::string taskTargets(const FleetJob& job, uint32_t task)
{
    if (auto t = job.taskTargets.find(task); t != job.taskTargets.end()) return t->second;
    if (!job.targets.empty()) return job.targets;
    std::string list;
    for (uint32_t g = 0; g < job.gpusPerNode; ++g) list += (g ? ",cuda:" : "cuda:") + std::to_string(g);
    return list;
}

bool asksForGpus(const FleetJob& job)
{
    if (job.gpusPerNode == 0) return false;
    for (uint32_t t = 0; t < job.tasks; ++t)
        if (taskTargets(job, t).find("cuda:") != std::string::npos) return true;
    return false;
}

namespace {

Status validateCommon(const FleetJob& job)
{
    if (job.tasks == 0) return Error{"a fleet job needs at least one task (node)", ErrorCode::Usage};
    if (job.trace.empty() || job.trace.front() != '/')
        return Error{"the trace path must be absolute (every node opens it): '" + job.trace + "'",
                     ErrorCode::Usage};
    if (job.outDir.empty() || job.outDir.front() != '/')
        return Error{"--out must be an absolute path: '" + job.outDir + "'", ErrorCode::Usage};
    if (job.targets.empty() && job.gpusPerNode == 0 && job.taskTargets.size() < job.tasks)
        return Error{"no targets: give --gpus-per-node, --targets or --task-targets for every task",
                     ErrorCode::Usage};
    for (const auto& [task, targets] : job.taskTargets)
        if (task >= job.tasks)
            return Error{"--task-targets " + std::to_string(task) + "=...: there are only " +
                             std::to_string(job.tasks) + " task(s), 0 to " + std::to_string(job.tasks - 1),
                         ErrorCode::Usage};
    for (uint32_t t = 0; t < job.tasks; ++t) {
        auto parsed = parseTargetList(taskTargets(job, t));
        if (!parsed)
            return Error{"targets of task " + std::to_string(t) + ": " + parsed.message(), ErrorCode::Usage};
    }
    return {};
}

}  // namespace

Status validateSlurmJob(const FleetJob& job)
{
    if (!job.nodelist.empty() && job.nodelist.size() != job.tasks)
        return Error{"--nodelist names " + std::to_string(job.nodelist.size()) + " node(s) for " +
                         std::to_string(job.tasks) + " task(s)",
                     ErrorCode::Usage};
    return validateCommon(job);
}

Status validateKubernetesJob(const FleetJob& job)
{
    if (job.image.empty())
        return Error{"--image: the container image with faultline is required", ErrorCode::Usage};
    if (job.claim.empty())
        return Error{"--claim: the PersistentVolumeClaim holding the trace and results is required",
                     ErrorCode::Usage};
    if (job.mount.empty() || job.mount.front() != '/')
        return Error{"--mount must be an absolute path in the container: '" + job.mount + "'",
                     ErrorCode::Usage};
    const std::string prefix = job.mount.back() == '/' ? job.mount : job.mount + "/";
    for (const std::string* p : {&job.trace, &job.outDir})
        if (p->rfind(prefix, 0) != 0 && *p != job.mount)
            return Error{
                "'" + *p + "' is not on the volume mounted at " + job.mount + " (pods see only the volume)",
                ErrorCode::Usage};
    return validateCommon(job);
}

std::string taskShellScript(const FleetJob& job, const std::string& var)
{
    std::ostringstream s;
    s << "task=\"${" << var << ":?not run as a task of a fleet job (" << var << " is not set)}\"\n"
      << "results=" << shellQuote(job.outDir + "/results") << "\n"
      << "exe=" << shellQuote(job.faultline) << "\n"
      << "mkdir -p \"$results\" || exit 2\n"
      << "case \"$task\" in\n";
    for (const auto& [task, targets] : job.taskTargets)
        s << "  " << task << ") targets=" << shellQuote(targets) << " ;;\n";
    s << "  *) targets=" << shellQuote(taskTargets(job, job.tasks)) << " ;;\n"
      << "esac\n"
      << "# The node's GPUs (identity, serials, peer keys) go into the results file.\n"
      << "if \"$exe\" devices --json >\"$results/$task.devices.json\" 2>\"$results/$task.devices.err\"; "
         "then\n"
      << "  set -- --inventory \"$results/$task.devices.json\"\n"
      << "else\n"
      << "  set --\n"
      << "fi\n"
      << "rm -f \"$results/$task.exit\" \"$results/$task.h5\" \"$results/$task.h5.journal.jsonl\"\n"
      << "\"$exe\" replay " << shellQuote(job.trace) << " --targets \"$targets\" --reps " << job.reps;
    if (!job.ops.empty()) s << " --ops " << shellQuote(job.ops);
    std::ostringstream timeout;
    timeout << job.timeoutSeconds;
    s << " --timeout " << timeout.str()
      << " --quiet --out \"$results/$task.h5\" \"$@\" >\"$results/$task.txt\"\n"
      << "rc=$?\n"
      << "echo \"$rc\" >\"$results/$task.exit\"\n"
      << "# 1 = a target diverged: the task did its job; the verdicts are in the results file.\n"
      << "[ \"$rc\" -le 1 ] && exit 0\n"
      << "exit \"$rc\"\n";
    return s.str();
}

std::string slurmBatchScript(const FleetJob& job)
{
    std::ostringstream s;
    s << "#!/bin/sh\n"
      << "# Generated by faultline fleet submit: replays " << job.trace << " on " << job.tasks
      << " node(s), one array task per node.\n"
      << "#SBATCH --job-name=" << job.name << "\n"
      << "#SBATCH --array=0-" << job.tasks - 1 << "\n"
      << "#SBATCH --nodes=1\n"
      << "#SBATCH --ntasks=1\n"
      << "#SBATCH --exclusive\n"
      << "#SBATCH --time=" << job.timeLimitMinutes << "\n"
      << "#SBATCH --output=" << job.outDir << "/logs/%a.out\n";
    if (asksForGpus(job)) s << "#SBATCH --gpus-per-node=" << job.gpusPerNode << "\n";
    if (!job.partition.empty()) s << "#SBATCH --partition=" << job.partition << "\n";
    s << taskShellScript(job, "SLURM_ARRAY_TASK_ID");
    return s.str();
}

nlohmann::json kubernetesJob(const FleetJob& job)
{
    const nlohmann::json labels = {{"app.kubernetes.io/name", "faultline"}, {"faultline-fleet", job.name}};
    nlohmann::json container = {
        {"name", "replay"},
        {"image", job.image},
        {"command", {"/bin/sh", "-c", taskShellScript(job, "JOB_COMPLETION_INDEX")}},
        {"env",
         {{{"name", "FAULTLINE_HOST"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}}}},
        {"volumeMounts", {{{"name", "fleet"}, {"mountPath", job.mount}}}}};
    if (asksForGpus(job)) {
        const uint32_t gpus = job.gpusPerNode;
        container["resources"] = {{"limits", {{"nvidia.com/gpu", gpus}}},
                                  {"requests", {{"nvidia.com/gpu", gpus}}}};
    }
    nlohmann::json podSpec = {
        {"restartPolicy", "Never"},
        {"containers", {container}},
        {"volumes", {{{"name", "fleet"}, {"persistentVolumeClaim", {{"claimName", job.claim}}}}}},
        {"affinity",
         {{"podAntiAffinity",
           {{"requiredDuringSchedulingIgnoredDuringExecution",
             {{{"labelSelector", {{"matchLabels", {{"faultline-fleet", job.name}}}}},
               {"topologyKey", "kubernetes.io/hostname"}}}}}}}}};
    return {{"apiVersion", "batch/v1"},
            {"kind", "Job"},
            {"metadata", {{"name", job.name}, {"labels", labels}}},
            {"spec",
             {{"completionMode", "Indexed"},
              {"completions", job.tasks},
              {"parallelism", job.tasks},
              {"backoffLimit", 0},
              {"activeDeadlineSeconds", uint64_t(job.timeLimitMinutes) * 60},
              {"template", {{"metadata", {{"labels", labels}}}, {"spec", podSpec}}}}}};
}

}  // namespace faultline
