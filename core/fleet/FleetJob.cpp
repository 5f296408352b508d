#include "FleetJob.h"

#include <cmath>
#include <sstream>
#include <string_view>

#include "../Text.h"
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

bool isAsciiAlnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// 1 to `maxLength` characters, each a letter, a digit or one of `extra` (ASCII only).
bool isWord(std::string_view s, std::string_view extra, size_t maxLength)
{
    if (s.empty() || s.size() > maxLength) return false;
    for (char c : s)
        if (!isAsciiAlnum(c) && extra.find(c) == std::string_view::npos) return false;
    return true;
}

// A DNS-1123 label: lower-case letters, digits and '-', starting and ending alphanumeric.
bool isDnsLabel(std::string_view s, size_t maxLength = 63)
{
    if (s.empty() || s.size() > maxLength || s.front() == '-' || s.back() == '-') return false;
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
    return true;
}

// A DNS-1123 subdomain: DNS labels joined by '.', at most 253 characters.
bool isDnsSubdomain(std::string_view s)
{
    if (s.empty() || s.size() > 253) return false;
    size_t start = 0;
    while (true) {
        const size_t dot = s.find('.', start);
        if (!isDnsLabel(s.substr(start, dot == std::string_view::npos ? dot : dot - start), 253))
            return false;
        if (dot == std::string_view::npos) return true;
        start = dot + 1;
    }
}

std::string quoted(const std::string& value)
{
    return "'" + printableText(value) + "'";
}

// Text that goes into the job's script: no newline (it would start a command of its own), no
// other control character, valid UTF-8.
Status checkText(const std::string& what, const std::string& value)
{
    if (isPrintableText(value)) return {};
    return Error{what + " " + quoted(value) +
                     ": holds a newline, another control character or bytes that are not UTF-8 (it "
                     "would break the job's script)",
                 ErrorCode::Usage};
}

std::string numberText(double v)
{
    std::ostringstream s;
    s << v;
    return s.str();
}

Status checkRange(const char* option, uint64_t value, uint64_t low, uint64_t high)
{
    if (value >= low && value <= high) return {};
    return Error{std::string(option) + " " + std::to_string(value) + ": must be from " + std::to_string(low) +
                     " to " + std::to_string(high),
                 ErrorCode::Usage};
}

Status validateNumbers(const FleetJob& job)
{
    if (job.tasks == 0) return Error{"a fleet job needs at least one task (node)", ErrorCode::Usage};
    if (Status s = checkRange("--nodes", job.tasks, 1, kMaxFleetTasks); !s) return s;
    if (Status s = checkRange("--gpus-per-node", job.gpusPerNode, 0, kMaxGpusPerNode); !s) return s;
    if (Status s = checkRange("--reps", job.reps, 1, kMaxFleetReps); !s) return s;
    if (Status s = checkRange("--time", job.timeLimitMinutes, 1, kMaxTimeLimitMinutes); !s) return s;
    if (!std::isfinite(job.timeoutSeconds) || job.timeoutSeconds < kMinRunTimeoutSeconds ||
        job.timeoutSeconds > kMaxRunTimeoutSeconds)
        return Error{"--timeout " + numberText(job.timeoutSeconds) + ": must be a number of seconds from " +
                         numberText(kMinRunTimeoutSeconds) + " to " + numberText(kMaxRunTimeoutSeconds),
                     ErrorCode::Usage};
    return {};
}

Status validateCommon(const FleetJob& job)
{
    if (Status s = validateNumbers(job); !s) return s;
    if (Status s = checkText("the trace path", job.trace); !s) return s;
    if (Status s = checkText("--out", job.outDir); !s) return s;
    if (Status s = checkText("--faultline", job.faultline); !s) return s;
    if (Status s = checkText("--ops", job.ops); !s) return s;
    if (Status s = checkText("--targets", job.targets); !s) return s;
    for (const auto& [task, targets] : job.taskTargets)
        if (Status s = checkText("--task-targets " + std::to_string(task) + "=", targets); !s) return s;
    if (job.trace.empty() || job.trace.front() != '/')
        return Error{"the trace path must be absolute (every node opens it): " + quoted(job.trace),
                     ErrorCode::Usage};
    if (job.outDir.empty() || job.outDir.front() != '/')
        return Error{"--out must be an absolute path: " + quoted(job.outDir), ErrorCode::Usage};
    if (job.faultline.empty()) return Error{"--faultline: no faultline executable", ErrorCode::Usage};
    if (job.targets.empty() && job.gpusPerNode == 0 && job.taskTargets.size() < job.tasks)
        return Error{"no targets: give --gpus-per-node, --targets or --task-targets for every task",
                     ErrorCode::Usage};
    for (const auto& [task, targets] : job.taskTargets)
        if (task >= job.tasks)
            return Error{"--task-targets " + std::to_string(task) + "=...: there are only " +
                             std::to_string(job.tasks) + " task(s), 0 to " + std::to_string(job.tasks - 1),
                         ErrorCode::Usage};
    // Each list once: the overrides, then the list every other task replays.
    for (const auto& [task, targets] : job.taskTargets)
        if (auto parsed = parseTargetList(targets); !parsed)
            return Error{"targets of task " + std::to_string(task) + ": " + parsed.message(),
                         ErrorCode::Usage};
    for (uint32_t t = 0; t < job.tasks && job.taskTargets.size() < job.tasks; ++t) {
        if (job.taskTargets.count(t)) continue;
        if (auto parsed = parseTargetList(taskTargets(job, t)); !parsed)
            return Error{"targets of task " + std::to_string(t) + ": " + parsed.message(), ErrorCode::Usage};
        break;
    }
    return {};
}

// The value of `#SBATCH --output`: DIR/logs/%a.out in sbatch's double quotes (a '"' escaped with
// a backslash), with DIR's '%' doubled so Slurm does not read it as a pattern.
std::string slurmOutputValue(const std::string& outDir)
{
    std::string v = "\"";
    for (char c : outDir) {
        if (c == '"') v += '\\';
        if (c == '%') v += '%';
        v += c;
    }
    return v + "/logs/%a.out\"";
}

}  // namespace

Status validateSlurmJob(const FleetJob& job)
{
    // `#SBATCH` lines are read by sbatch, not by a shell: nothing there can be quoted for sure,
    // so what goes there keeps to characters Slurm reads as they are.
    if (!isWord(job.name, "._-+:@,=", 128))
        return Error{"--name " + quoted(job.name) +
                         ": a job name is 1 to 128 letters, digits and '.', '_', '-', '+', ':', '@', ',', "
                         "'=' (no spaces, quotes or control characters)",
                     ErrorCode::Usage};
    if (!job.partition.empty()) {
        bool ok = job.partition.size() <= 1024;
        for (size_t start = 0; ok;) {
            const size_t comma = job.partition.find(',', start);
            ok = isWord(std::string_view(job.partition)
                            .substr(start, comma == std::string::npos ? comma : comma - start),
                        "._-", 128);
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
        if (!ok)
            return Error{"--partition " + quoted(job.partition) +
                             ": a Slurm partition is named by letters, digits, '.', '_' and '-' (several "
                             "separated by commas; no spaces)",
                         ErrorCode::Usage};
    }
    for (const std::string& node : job.nodelist)
        if (!isWord(node, "._-", 255))
            return Error{"--nodelist entry " + quoted(node) +
                             ": a node name is letters, digits, '.', '_' and '-' (one node per entry, no "
                             "ranges or spaces)",
                         ErrorCode::Usage};
    if (!job.nodelist.empty() && job.nodelist.size() != job.tasks)
        return Error{"--nodelist names " + std::to_string(job.nodelist.size()) + " node(s) for " +
                         std::to_string(job.tasks) + " task(s)",
                     ErrorCode::Usage};
    if (Status s = validateCommon(job); !s) return s;
    if (job.outDir.find('\\') != std::string::npos)
        return Error{"--out " + quoted(job.outDir) +
                         ": holds a backslash, which turns off the task number in Slurm's log file names "
                         "(#SBATCH --output); choose a directory without one",
                     ErrorCode::Usage};
    return {};
}

Status validateKubernetesJob(const FleetJob& job)
{
    if (job.image.empty())
        return Error{"--image: the container image with faultline is required", ErrorCode::Usage};
    if (job.claim.empty())
        return Error{"--claim: the PersistentVolumeClaim holding the trace and results is required",
                     ErrorCode::Usage};
    if (!isDnsLabel(job.name))
        return Error{
            "--name " + quoted(job.name) +
                ": a Kubernetes Job name here is a DNS label: 1 to 63 lower-case letters, digits and "
                "'-', starting and ending with a letter or digit",
            ErrorCode::Usage};
    if (!isDnsSubdomain(job.claim))
        return Error{"--claim " + quoted(job.claim) +
                         ": a PersistentVolumeClaim name is lower-case letters, digits, '-' and '.' (a DNS "
                         "subdomain, at most 253 characters)",
                     ErrorCode::Usage};
    if (!isPrintableText(job.image) || job.image.find_first_of(" ") != std::string::npos)
        return Error{"--image " + quoted(job.image) + ": an image reference is one word of printable text",
                     ErrorCode::Usage};
    if (Status s = checkText("--mount", job.mount); !s) return s;
    if (job.mount.empty() || job.mount.front() != '/' || job.mount.find(':') != std::string::npos)
        return Error{"--mount must be an absolute path in the container, without ':': " + quoted(job.mount),
                     ErrorCode::Usage};
    if (Status s = validateCommon(job); !s) return s;
    const std::string prefix = job.mount.back() == '/' ? job.mount : job.mount + "/";
    for (const std::string* p : {&job.trace, &job.outDir})
        if (p->rfind(prefix, 0) != 0 && *p != job.mount)
            return Error{
                quoted(*p) + " is not on the volume mounted at " + job.mount + " (pods see only the volume)",
                ErrorCode::Usage};
    return {};
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
      << "#SBATCH --output=" << slurmOutputValue(job.outDir) << "\n";
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
