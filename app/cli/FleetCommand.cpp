// faultline fleet submit TRACE --out DIR [--nodes N | --nodelist LIST] [--gpus-per-node G] ...
// faultline fleet k8s TRACE --out DIR --image IMAGE --claim PVC [--manifest FILE] ...
// faultline fleet status DIR [--json]
// A fleet replay as a Slurm job array or a Kubernetes Indexed Job (core/fleet/FleetJob.h), and
// where its tasks stand (core/fleet/FleetStatus.h).
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "Cli.h"
#include "Commands.h"
#include "core/Text.h"
#include "core/fleet/FleetJob.h"
#include "core/fleet/FleetStatus.h"

namespace faultline::cli {
namespace {

namespace fs = std::filesystem;

struct FleetOptions {
    FleetJob job;
    uint32_t nodes = 0;
    std::string nodelist, trace, out, manifest;
    std::vector<std::string> taskTargets;
    bool dryRun = false, slurm = false, json = false;
};

// The program `name` on PATH ("" when absent).
std::string findOnPath(const std::string& name)
{
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    size_t start = 0;
    while (start <= dirs.size()) {
        const size_t end = dirs.find(':', start);
        const std::string dir =
            dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (!dir.empty()) {
            const std::string candidate = dir + "/" + name;
            if (access(candidate.c_str(), X_OK) == 0) return candidate;
        }
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return {};
}

struct CommandOutput {
    int exitCode = -1;
    std::string out;  // stdout and stderr
};

CommandOutput runCommand(const std::vector<std::string>& args)
{
    std::string line;
    for (const std::string& a : args) line += (line.empty() ? "" : " ") + shellQuote(a);
    line += " 2>&1";
    CommandOutput r;
    FILE* p = popen(line.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int status = pclose(p);
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

// Writes `text` to `path` as a new file: never over an existing file, never through a planted
// link (O_EXCL|O_NOFOLLOW); a failed write leaves nothing.
Status writeNewFile(const std::string& path, const std::string& text)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return errno == EEXIST
                   ? fileError(path, "exists already (not overwritten)", ErrorCode::Usage)
                   : fileError(path, std::string("cannot create: ") + std::strerror(errno), ErrorCode::Io);
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += size_t(n);
    }
    const bool ok = done == text.size() && ::close(fd) == 0;
    if (!ok) {
        if (done != text.size()) ::close(fd);
        ::unlink(path.c_str());
        return fileError(path, "cannot write (disk full?)", ErrorCode::Io);
    }
    return {};
}

std::string firstLine(const std::string& s)
{
    return s.substr(0, s.find('\n'));
}

// Fills job paths and targets from the options; errors name the option or file.
Status prepareJob(FleetOptions& o)
{
    FleetJob& job = o.job;
    for (const std::string& t : o.taskTargets) {
        const size_t eq = t.find('=');
        uint32_t task = 0;
        const auto [end, ec] = std::from_chars(t.data(), t.data() + (eq == std::string::npos ? 0 : eq), task);
        if (eq == std::string::npos || eq == 0 || ec != std::errc() || end != t.data() + eq)
            return Error{"--task-targets '" + printableText(t) +
                             "': expected TASK=TARGETS with TASK a task number (e.g. 2=sim:stuck-bit,cpu)",
                         ErrorCode::Usage};
        job.taskTargets[task] = t.substr(eq + 1);
    }
    if (!o.nodelist.empty()) {
        size_t start = 0;
        while (start <= o.nodelist.size()) {
            const size_t end = o.nodelist.find(',', start);
            const std::string node = o.nodelist.substr(start, end == std::string::npos ? end : end - start);
            if (node.empty())
                return Error{"--nodelist '" + printableText(o.nodelist) + "': an empty node name",
                             ErrorCode::Usage};
            job.nodelist.push_back(node);
            if (end == std::string::npos) break;
            start = end + 1;
        }
        if (o.nodes && o.nodes != job.nodelist.size())
            return Error{"--nodes " + std::to_string(o.nodes) + " and a --nodelist of " +
                             std::to_string(job.nodelist.size()) + " node(s) disagree",
                         ErrorCode::Usage};
        o.nodes = uint32_t(job.nodelist.size());
    }
    if (o.nodes == 0) return Error{"give --nodes N or --nodelist LIST", ErrorCode::Usage};
    job.tasks = o.nodes;
    return {};
}

int runSubmit(FleetOptions& o)
{
    if (Status s = prepareJob(o); !s) return failWith(s.error());
    std::error_code ec;
    if (!fs::is_regular_file(o.trace, ec))
        return failWith(fileError(o.trace, "no such trace file", ErrorCode::Io));
    o.job.trace = fs::canonical(o.trace, ec).string();
    o.job.outDir = fs::absolute(o.out, ec).lexically_normal().string();
    if (!o.job.outDir.empty() && o.job.outDir.back() == '/') o.job.outDir.pop_back();
    if (o.job.faultline.empty()) o.job.faultline = fs::read_symlink("/proc/self/exe", ec).string();
    if (Status s = validateSlurmJob(o.job); !s) return failWith(s.error());
    const std::string script = slurmBatchScript(o.job);
    if (o.dryRun) {
        std::cout << script;
        return kExitOk;
    }
    const fs::path dir = o.job.outDir;
    for (const char* f : {"job.sbatch", "fleet.json", "results"})
        if (fs::exists(dir / f, ec))
            return failWith(fileError((dir / f).string(),
                                      "exists already: a fleet job was set up here (choose "
                                      "another --out)",
                                      ErrorCode::Usage));
    fs::create_directories(dir / "results", ec);
    if (!ec) fs::create_directories(dir / "logs", ec);
    if (ec) return failWith(fileError(dir.string(), "cannot create: " + ec.message(), ErrorCode::Io));
    const std::string scriptPath = (dir / "job.sbatch").string();
    if (Status s = writeNewFile(scriptPath, script); !s) return failWith(s.error());
    FleetManifest manifest;
    manifest.scheduler = "slurm";
    manifest.tasks = o.job.tasks;
    manifest.trace = o.job.trace;
    if (Status s = writeFleetManifest(dir.string(), manifest); !s) return failWith(s.error());
    const std::string sbatch = findOnPath("sbatch");
    if (sbatch.empty())
        return failWith(
            Error{"sbatch is not on PATH: " + scriptPath + " is written; submit it on a Slurm login node",
                  ErrorCode::Usage});
    // One array for --nodes; with --nodelist, one array index per named node.
    std::vector<std::vector<std::string>> submissions;
    if (o.job.nodelist.empty())
        submissions.push_back({sbatch, "--parsable", scriptPath});
    else
        for (size_t i = 0; i < o.job.nodelist.size(); ++i)
            submissions.push_back({sbatch, "--parsable", "--array=" + std::to_string(i),
                                   "--nodelist=" + o.job.nodelist[i], scriptPath});
    for (const auto& args : submissions) {
        const CommandOutput r = runCommand(args);
        if (r.exitCode != 0)
            return failWith(Error{"sbatch " + scriptPath + " failed (exit " + std::to_string(r.exitCode) +
                                      "): " + firstLine(r.out),
                                  ErrorCode::Failed});
        const std::string line = firstLine(r.out);
        const std::string id = line.substr(0, line.find(';'));  // "JOBID[;CLUSTER]"
        if (id.empty() || id.size() > 20 || id.find_first_not_of("0123456789") != std::string::npos)
            return failWith(Error{"sbatch " + scriptPath + " answered '" + printableText(line) +
                                      "', not a job id (the job may be queued: see squeue)",
                                  ErrorCode::Failed});
        manifest.jobIds.push_back(id);
        if (Status s = writeFleetManifest(dir.string(), manifest); !s) return failWith(s.error());
    }
    std::cout << "submitted " << o.job.tasks << " task(s) as Slurm job";
    for (const std::string& id : manifest.jobIds) std::cout << " " << id;
    std::cout << "; results in " << (dir / "results").string() << "; follow with: faultline fleet status "
              << dir.string() << "\n";
    return kExitOk;
}

int runK8s(FleetOptions& o)
{
    if (Status s = prepareJob(o); !s) return failWith(s.error());
    o.job.trace = o.trace;
    o.job.outDir = o.out;
    if (o.job.faultline.empty()) o.job.faultline = "faultline";
    if (Status s = validateKubernetesJob(o.job); !s) return failWith(s.error());
    const std::string manifest = kubernetesJob(o.job).dump(2) + "\n";
    if (o.manifest.empty()) {
        std::cout << manifest;
        return kExitOk;
    }
    if (Status s = writeNewFile(o.manifest, manifest); !s) return failWith(s.error());
    std::cout << "wrote " << printableText(o.manifest) << ": kubectl apply -f "
              << printableText(shellQuote(o.manifest)) << "\n";
    return kExitOk;
}

// The scheduler's view of a fleet job's tasks; null maps where it cannot be asked.
void schedulerStates(const FleetManifest& m, std::optional<std::map<uint32_t, std::string>>& queue,
                     std::optional<std::map<uint32_t, std::string>>& accounting)
{
    if (m.scheduler != "slurm" || m.jobIds.empty()) return;
    std::string ids;
    for (const std::string& id : m.jobIds) ids += (ids.empty() ? "" : ",") + id;
    if (const std::string squeue = findOnPath("squeue"); !squeue.empty()) {
        const CommandOutput r = runCommand({squeue, "-h", "-r", "-j", ids, "-o", "%i %T"});
        // squeue exits non-zero for job ids it has forgotten: then nothing is queued.
        if (r.exitCode == 0 || r.out.find("Invalid job id") != std::string::npos)
            queue = r.exitCode == 0 ? parseSchedulerStates(r.out) : std::map<uint32_t, std::string>{};
    }
    if (const std::string sacct = findOnPath("sacct"); !sacct.empty()) {
        const CommandOutput r = runCommand({sacct, "-n", "-P", "-X", "-j", ids, "-o", "JobID,State"});
        if (r.exitCode == 0) accounting = parseSchedulerStates(r.out);
    }
}

int runFleetStatus(const std::string& dir, bool json)
{
    auto manifest = readFleetManifest(dir);
    if (!manifest) return failWith(manifest.error());
    std::optional<std::map<uint32_t, std::string>> queue, accounting;
    schedulerStates(*manifest, queue, accounting);
    const FleetStatus status =
        fleetStatus(dir, manifest->tasks, queue ? &*queue : nullptr, accounting ? &*accounting : nullptr);
    if (json)
        std::cout << status.toJson().dump(2) << "\n";
    else
        std::cout << status.text();
    return status.count("failed") ? kExitDiverged : kExitOk;
}

}  // namespace

CommandRunner addFleetCommand(CLI::App& app)
{
    auto o = std::make_shared<FleetOptions>();
    auto statusDir = std::make_shared<std::string>();
    CLI::App* fleet = app.add_subcommand(
        "fleet", "Replay a trace on every node of a cluster (Slurm job array, Kubernetes Indexed Job)");
    fleet->require_subcommand(1);

    auto common = [o](CLI::App* cmd) {
        cmd->add_option("TRACE", o->trace, "trace v1 file, on a filesystem every node mounts")->required();
        cmd->add_option("--out", o->out, "the fleet directory: results/<task>.h5, logs/, job files")
            ->required();
        cmd->add_option("--nodes", o->nodes, "number of nodes (one task each)")
            ->check(CLI::Range(1u, kMaxFleetTasks));
        cmd->add_option("--gpus-per-node", o->job.gpusPerNode, "GPUs per node: targets cuda:0..G-1")
            ->check(CLI::Range(0u, kMaxGpusPerNode));
        cmd->add_option("--reps", o->job.reps, "repetitions per op and target")
            ->check(CLI::Range(1u, kMaxFleetReps));
        cmd->add_option("--ops", o->job.ops, "op selection, as for replay");
        cmd->add_option("--targets", o->job.targets, "every task's targets instead of cuda:0..G-1");
        cmd->add_option("--task-targets", o->taskTargets,
                        "TASK=TARGETS: the targets of one task (repeatable), e.g. 2=sim:stuck-bit,cpu");
        // Checked with the job (validateSlurmJob): NaN and infinities parse as numbers.
        cmd->add_option("--timeout", o->job.timeoutSeconds,
                        "replay --timeout: seconds before a run is a hang (0.001 to 604800)");
        cmd->add_option("--time", o->job.timeLimitMinutes, "the scheduler's limit for one task, minutes")
            ->check(CLI::Range(1u, kMaxTimeLimitMinutes));
        cmd->add_option("--name", o->job.name, "job name");
        cmd->add_option(
            "--faultline", o->job.faultline,
            "the faultline executable on the nodes (default: this one; `faultline` on Kubernetes)");
    };

    CLI::App* submit =
        fleet->add_subcommand("submit", "Write DIR/job.sbatch, a Slurm job array, and submit it");
    common(submit);
    submit->add_flag("--slurm", o->slurm, "submit to Slurm (the default and only scheduler of submit)");
    submit->add_option("--partition", o->job.partition, "Slurm partition");
    submit->add_option("--nodelist", o->nodelist, "comma-separated nodes, one task each")
        ->excludes(submit->get_option("--nodes"));
    submit->add_flag("--dry-run", o->dryRun, "print the batch script; write and submit nothing");

    CLI::App* k8s = fleet->add_subcommand("k8s", "Write a Kubernetes Indexed Job (batch/v1) doing the same");
    common(k8s);
    k8s->add_option("--image", o->job.image, "container image with faultline and faultline-worker")
        ->required();
    k8s->add_option("--claim", o->job.claim, "PersistentVolumeClaim holding the trace and DIR")->required();
    k8s->add_option("--mount", o->job.mount,
                    "where the claim is mounted in the pods (TRACE and DIR are under it)");
    k8s->add_option("--manifest", o->manifest, "write the manifest here (default: standard output)");

    CLI::App* status = fleet->add_subcommand("status", "Tasks pending, running, done and failed");
    status->add_option("DIR", *statusDir, "the fleet directory of fleet submit")->required();
    status->add_flag("--json", o->json, "one JSON document");

    return [o, statusDir, submit, k8s, status] {
        if (submit->parsed()) return runSubmit(*o);
        if (k8s->parsed()) return runK8s(*o);
        if (status->parsed()) return runFleetStatus(*statusDir, o->json);
        return kExitError;
    };
}

}  // namespace faultline::cli
