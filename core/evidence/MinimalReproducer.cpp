#include "MinimalReproducer.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "../Text.h"
#include "../replay/TargetSpec.h"
#include "../trace/TraceWriter.h"
#include "BundleSealer.h"

namespace faultline {
namespace {

constexpr uint64_t kMaxTensorBytes = uint64_t(4) << 30;

struct LoadedTensor {
    TensorInfo info;
    std::vector<std::byte> bytes;
};

Result<LoadedTensor> loadTensor(const TensorFile& file, const std::string& name)
{
    auto index = file.find(name);
    if (!index) return fileError(file.path(), "no tensor '" + name + "'");
    LoadedTensor t;
    t.info = file.tensors()[*index];
    if (t.info.byteCount() > kMaxTensorBytes)
        return fileError(file.path(), "'" + name + "' is too big to copy");
    t.bytes.resize(size_t(t.info.byteCount()));
    if (Status st = file.read(*index, 0, t.info.elementCount(), t.bytes.data()); !st) return st.error();
    return t;
}

// What reproduce.sh replays: targets with the verdicts the campaign found (the suspect's must
// fail again), the ops, the reference, the repetitions; or why nothing can be replayed.
struct ReplayPlan {
    std::vector<std::pair<std::string, Verdict>> verdicts;
    std::vector<std::string> mustFail;
    std::set<size_t> ops;
    std::string reference;
    std::string fleetGpu;
    std::string notReplayable;
    ReproducerReps reps;
};

// A target `faultline replay --targets` runs: printable, no spaces, and parsed as one (the
// parser takes a sim model's name as it is; the model is looked up when the replay runs).
bool isReplayTarget(const std::string& s)
{
    return isPrintableText(s) && s.find(' ') == std::string::npos && parseTargetSpec(s);
}

std::string suspectText(const BoardIdentity& s)
{
    return s.empty() ? "the suspect GPU (no identity given)" : "the suspect GPU (" + s.text() + ")";
}

// The suspect's targets, in the campaign's order.
std::vector<const CampaignTargetEvidence*> suspectTargets(const CampaignEvidence& c, const SuspectTargets& s)
{
    std::vector<const CampaignTargetEvidence*> out;
    for (const CampaignTargetEvidence& t : c.targets)
        if (s.isSuspect(t.target)) out.push_back(&t);
    return out;
}

// The suspect's failures and runs on `ops` (the per-op counts; the target's own where the report
// has none), to size the repetitions.
ReproducerReps sizedReps(const CampaignEvidence& c, const std::vector<const CampaignTargetEvidence*>& mine,
                         const std::set<size_t>& ops)
{
    uint64_t failures = 0, runs = 0;
    for (const CampaignTargetEvidence* t : mine) {
        uint64_t f = 0, n = 0;
        for (const CampaignOpEvidence& o : c.divergentOps) {
            if (!ops.count(o.index)) continue;
            if (auto it = o.targets.find(t->target); it != o.targets.end()) {
                f += std::min(it->second.failures, it->second.runs);
                n += it->second.runs;
            }
        }
        if (n == 0) f = t->failures, n = t->runs;
        failures += f;
        runs += n;
    }
    return reproducerReps(failures, runs, ops.size());
}

// A merged fleet campaign: the suspect alone, on the target it ran as on its own node.
ReplayPlan fleetPlan(const CampaignEvidence& c, const std::set<size_t>& divergent, const SuspectTargets& s,
                     const std::set<size_t>* only)
{
    ReplayPlan p;
    const CampaignTargetEvidence* mine = nullptr;
    for (const CampaignTargetEvidence* t : suspectTargets(c, s))
        if (t->fleetGpu) {
            mine = t;
            break;
        }
    if (!mine) {
        p.notReplayable =
            "a merged fleet campaign's GPUs (labelled host/target) replay on their own nodes, and " +
            suspectText(s.suspect) + " is not among them (give --suspect with its UUID or serial)";
        return p;
    }
    const CampaignTargetEvidence::FleetGpu& g = *mine->fleetGpu;
    p.fleetGpu = mine->target;
    // Its own ops: those it failed on its node (what its node's verdict rests on); for a GPU only
    // the peer vote found, those it differed from its peers on (kept for a replay by hand).
    for (size_t i : mine->failingOps.empty() ? g.outlierOps : mine->failingOps)
        if (divergent.count(i) && (!only || only->count(i))) p.ops.insert(i);
    p.reps = sizedReps(c, {mine}, p.ops);
    if (!g.nodeVerdict || *g.nodeVerdict == Verdict::Healthy || *g.nodeVerdict == Verdict::NoVerdict) {
        p.notReplayable = "the suspect GPU " + mine->target + " was " +
                          (g.nodeVerdict ? nameOf(*g.nodeVerdict) : std::string("not judged")) +
                          " on its own node; only the fleet's peer vote found its bits different (" +
                          nameOf(mine->verdict) +
                          "), which replaying it alone cannot show: replay the ops on it and on a healthy "
                          "peer of the same model and compare";
        return p;
    }
    if (!isReplayTarget(g.target)) {
        p.notReplayable = "the suspect GPU " + mine->target + " ran as '" + g.target +
                          "' on its node, which is not a replay target (cpu, sim:<model>, cuda:<index>)";
        return p;
    }
    p.verdicts.emplace_back(g.target, *g.nodeVerdict);
    p.mustFail.push_back(g.target);
    return p;
}

// A single-node campaign: the suspect's targets on the ops they failed, with the golden model and
// the reference as controls.
// `only`: the ops of a shrunk reproducer (null: every divergent op of the suspect's).
ReplayPlan replayPlan(const CampaignEvidence& c, const std::set<size_t>& divergent, const SuspectTargets& s,
                      const std::set<size_t>* only)
{
    if (c.fleet) return fleetPlan(c, divergent, s, only);
    ReplayPlan p;
    std::vector<const CampaignTargetEvidence*> mine;
    for (const CampaignTargetEvidence* t : suspectTargets(c, s)) {
        bool failedHere = false;
        for (size_t i : t->failingOps)
            if (divergent.count(i) && (!only || only->count(i))) {
                p.ops.insert(i);
                failedHere = true;
            }
        // Sized as before on every target of the suspect's; a shrunk op on those that failed it.
        if (failedHere || !only) mine.push_back(t);
    }
    p.reps = sizedReps(c, mine, p.ops);
    std::string bad;
    for (const CampaignTargetEvidence& t : c.targets) {
        const bool suspect = s.isSuspect(t.target);
        if (!suspect && t.target != "cpu" && t.target != c.reference) continue;
        if (suspect && (t.failingOps.empty() || std::find(mine.begin(), mine.end(), &t) == mine.end()))
            continue;
        if (!isReplayTarget(t.target)) bad += (bad.empty() ? "'" : ", '") + t.target + "'";
        p.verdicts.emplace_back(t.target, t.verdict);
        if (suspect) p.mustFail.push_back(t.target);
    }
    if (!c.reference.empty() && !isReplayTarget(c.reference))
        bad += (bad.empty() ? "reference '" : ", reference '") + c.reference + "'";
    if (!bad.empty()) {
        p.verdicts.clear();
        p.mustFail.clear();
        p.notReplayable = "the campaign's " + bad +
                          " are not replay targets (cpu, sim:<model>, cuda:<index>), so `faultline replay` "
                          "cannot run them";
        return p;
    }
    p.reference = c.reference;
    return p;
}

bool isMustFail(const ReproducerFiles& r, const std::string& target)
{
    return std::find(r.mustFail.begin(), r.mustFail.end(), target) != r.mustFail.end();
}

// A line printed on stderr, whatever it holds (printf, not echo: no escapes are interpreted).
std::string printLine(const std::string& text)
{
    return "printf '%s\\n' " + shellQuote(printableText(text)) + " >&2\n";
}

std::string replayScript(const ReproducerFiles& r, const std::string& args)
{
    const std::string ops = opListArgument(r.ops);
    std::string s;
    s += "#!/bin/sh\n";
    std::string mine;
    for (const std::string& t : r.suspectTargets) mine += (mine.empty() ? "" : ", ") + t;
    char rate[160];
    std::snprintf(rate, sizeof rate,
                  "%llu of %llu runs failed (%.3g%%); %u repetitions of %zu op(s) fail at least once "
                  "with probability %.4g%%%s",
                  static_cast<unsigned long long>(r.reps.failures),
                  static_cast<unsigned long long>(r.reps.runs), 100 * r.reps.rate, r.reps.reps, r.reps.ops,
                  100 * r.reps.probability, r.reps.capped ? " (capped)" : "");
    s += "# Reproduces the suspect GPU's divergence of this evidence bundle: replays ops " + ops +
         ", the ops the suspect's\n# target(s) " + shellCommentText(mine) +
         " failed in the campaign (reproducer/trace.h5 holds only those ops and\n# their inputs), "
         "with the campaign's seed and the golden model and reference as controls:\n#\n#   " +
         shellCommentText(r.command) +
         "\n#\n# Repetitions sized to the suspect's measured rate on these ops: " + rate +
         "\n# (reps = ceil(ln(1 - 0.99) / (ops * ln(1 - rate))), 2 to 1000).\n#\n";
    if (!r.shrunkFrom.empty())
        s += "# trace.h5 is " + shellCommentText(r.shrunkFrom) +
             ", made by `faultline shrink`: the op alone, its inputs cut down to the\n# fewest elements that "
             "still fail at the rate the incident's inputs did.\n#\n";
    if (!r.fleetGpu.empty())
        s += "# (" + shellCommentText(r.fleetGpu) +
             " of the fleet campaign, alone, on the target it ran as on its node; on another machine\n"
             "# the board may have another index: change --targets below.)\n#\n";
    s += "# Expected:";
    for (const auto& [t, v] : r.expectedVerdicts)
        s += "\n#   " + shellCommentText(t) + ": " +
             (isMustFail(r, t) ? "fails again (the campaign found " + nameOf(v) + ")" : nameOf(v));
    s += "\n#   exit code " + std::to_string(r.expectedExitCode) +
         "\n# Needs faultline on PATH (or FAULTLINE=/path/to/faultline). Exit 0: reproduced; 1: not "
         "reproduced; 2: could not run.\n";
    s += "set -u\n";
    s += "here=$(cd \"$(dirname \"$0\")\" && pwd)\n";
    s += "faultline=${FAULTLINE:-faultline}\n";
    s += "command -v \"$faultline\" >/dev/null 2>&1 || { printf '%s\\n' \"reproduce.sh: $faultline not found "
         "(set FAULTLINE)\" >&2; exit 2; }\n";
    s += "out=$(mktemp) || exit 2\n";
    s += "trap 'rm -f \"$out\"' EXIT\n";
    s += "\"$faultline\" replay \"$here/trace.h5\" " + args + " --quiet >\"$out\" 2>&1\n";
    s += "rc=$?\n";
    s += "cat \"$out\"\n";
    s += "[ \"$rc\" -eq 2 ] && { echo \"reproduce.sh: the replay failed to run\" >&2; exit 2; }\n";
    s += "status=0\n";
    // The replay prints one row per target: its label, then its verdict (campaignText). Both are
    // compared as strings, passed through the environment (awk -v would interpret backslashes).
    s += "expect() {\n";
    s +=
        "    if t=\"$1\" v=\"$2\" awk '$1 == ENVIRON[\"t\"] && $2 == ENVIRON[\"v\"] { found = 1 } END { exit "
        "!found }' \"$out\"; then\n";
    s += "        printf 'reproduced: %s is %s\\n' \"$1\" \"$2\"\n";
    s += "    else\n";
    s += "        printf 'NOT reproduced: %s should be %s\\n' \"$1\" \"$2\"; status=1\n";
    s += "    fi\n";
    s += "}\n";
    // The suspect's targets reproduce with any failing verdict.
    s += "fails() {\n";
    s += "    if t=\"$1\" awk '$1 == ENVIRON[\"t\"] && ($2 == \"" + nameOf(Verdict::Transient) +
         "\" || $2 == \"" + nameOf(Verdict::Persistent) + "\" || $2 == \"" + nameOf(Verdict::DeviceSpecific) +
         "\") { found = 1 } END { exit !found }' \"$out\"; then\n";
    s += "        printf 'reproduced: %s fails again\\n' \"$1\"\n";
    s += "    else\n";
    s += "        printf 'NOT reproduced: %s should fail again (the campaign found %s)\\n' \"$1\" \"$2\"; "
         "status=1\n";
    s += "    fi\n";
    s += "}\n";
    for (const auto& [t, v] : r.expectedVerdicts)
        s += (isMustFail(r, t) ? "fails " : "expect ") + shellQuote(t) + " " + shellQuote(nameOf(v)) + "\n";
    s += "[ \"$rc\" -eq " + std::to_string(r.expectedExitCode) +
         " ] || { echo \"NOT reproduced: exit code $rc, expected " + std::to_string(r.expectedExitCode) +
         "\"; status=1; }\n";
    s += "exit $status\n";
    return s;
}

std::string notReplayableScript(const ReproducerFiles& r)
{
    std::string s;
    s += "#!/bin/sh\n";
    s += "# The minimal reproducer of this evidence bundle: reproducer/trace.h5 holds ops " +
         opListArgument(r.ops) +
         " of the incident's\n# trace and their inputs. This script cannot replay them automatically:\n#\n#  "
         " " +
         shellCommentText(r.notReplayable) +
         "\n#\n# Replay them by hand: faultline replay trace.h5 --targets TARGETS --ops " +
         opListArgument(r.ops) + "\n# Exit 2: could not run.\n";
    s += printLine("reproduce.sh: cannot replay this campaign automatically: " + r.notReplayable);
    s += "exit 2\n";
    return s;
}

}  // namespace

Status writeTraceSubset(const Trace& trace, const std::set<size_t>& ops, const std::string& path)
{
    auto w = TraceWriter::create(path);
    if (!w) return w.error();
    for (const auto& [name, value] : trace.attributes)
        if (Status st = w->setAttribute(name, value); !st) return st;
    if (Status st = w->setAttribute("faultline_evidence",
                                    std::string("minimal reproducer: ops ") +
                                        opListArgument(std::vector<size_t>(ops.begin(), ops.end())));
        !st)
        return st;
    for (const TraceDevice& d : trace.devices)
        if (Status st = w->addDevice(d); !st) return st;
    std::set<std::string> written;
    for (const TraceOp& op : trace.ops) {
        if (!ops.count(op.index)) continue;
        for (const std::string& id : op.inputs) {
            if (!written.insert(id).second) continue;
            auto t = loadTensor(*trace.file, "tensors/" + id);
            if (!t) return t.error();
            TensorWriteOptions o;
            o.kind = t->info.kind;
            if (Status st = w->addTensor(id, {t->info.dtype, t->info.shape, t->bytes.data()}, o); !st)
                return st;
        }
        std::vector<LoadedTensor> kept;
        for (const auto& [label, names] : op.outputs)
            for (const std::string& n : names) {
                auto t = loadTensor(*trace.file, n);
                if (!t) return t.error();
                kept.push_back(std::move(*t));
            }
        std::map<std::string, std::vector<TensorData>> outputs;
        size_t k = 0;
        for (const auto& [label, names] : op.outputs)
            for (size_t i = 0; i < names.size(); ++i, ++k)
                outputs[label].push_back({kept[k].info.dtype, kept[k].info.shape, kept[k].bytes.data()});
        if (Status st = w->addOp(op, outputs); !st) return st;
    }
    return w->close();
}

std::vector<size_t> suspectDivergentOps(const CampaignEvidence& campaign, const SuspectTargets& suspect)
{
    std::set<size_t> divergent, mine;
    for (const CampaignOpEvidence& o : campaign.divergentOps) divergent.insert(o.index);
    for (const CampaignTargetEvidence& t : campaign.targets) {
        if (!suspect.isSuspect(t.target)) continue;
        for (size_t i : t.failingOps)
            if (divergent.count(i)) mine.insert(i);
        if (t.fleetGpu)
            for (size_t i : t.fleetGpu->outlierOps)
                if (divergent.count(i)) mine.insert(i);
    }
    return {mine.begin(), mine.end()};
}

Result<ReproducerFiles> writeMinimalReproducer(const CampaignEvidence& campaign,
                                               const std::string& sourceTrace, const std::string& dir,
                                               const SuspectTargets& suspect, const std::string& shrunkTrace)
{
    const std::vector<size_t> mine = suspectDivergentOps(campaign, suspect);
    if (mine.empty())
        return Error{"the suspect GPU failed no op in the campaign: nothing to reproduce", ErrorCode::Failed};
    std::set<size_t> shrunkOps;  // the op of a shrunk reproducer
    if (!shrunkTrace.empty()) {
        auto shrunk = readTrace(shrunkTrace);
        if (!shrunk) return shrunk.error();
        if (shrunk->ops.size() != 1)
            return fileError(shrunkTrace,
                             "holds " + std::to_string(shrunk->ops.size()) +
                                 " ops; a minimal reproducer (faultline shrink --out) holds one",
                             ErrorCode::Usage);
        const size_t op = shrunk->ops.front().index;
        if (std::find(mine.begin(), mine.end(), op) == mine.end())
            return fileError(shrunkTrace,
                             "reproduces op " + std::to_string(op) +
                                 ", which the suspect GPU did not fail in the campaign (it failed op(s) " +
                                 opListArgument(mine) + ")",
                             ErrorCode::Usage);
        shrunkOps.insert(op);
    }
    auto trace = readTrace(sourceTrace);
    if (!trace) return trace.error();
    std::set<size_t> divergent;
    for (const CampaignOpEvidence& o : campaign.divergentOps) divergent.insert(o.index);
    for (size_t i : divergent) {
        bool found = false;
        for (const TraceOp& op : trace->ops) found = found || op.index == i;
        if (!found)
            return fileError(sourceTrace, "has no op " + std::to_string(i) + " (not the campaign's trace?)");
    }
    ReplayPlan plan = replayPlan(campaign, divergent, suspect, shrunkTrace.empty() ? nullptr : &shrunkOps);
    if (plan.ops.empty())
        plan.ops = shrunkTrace.empty() ? std::set<size_t>(mine.begin(), mine.end()) : shrunkOps;
    ReproducerFiles r;
    r.ops.assign(plan.ops.begin(), plan.ops.end());
    r.trace = (std::filesystem::path(dir) / "trace.h5").string();
    r.script = (std::filesystem::path(dir) / "reproduce.sh").string();
    r.fleetGpu = plan.fleetGpu;
    r.reps = plan.reps;
    r.mustFail = plan.mustFail;
    for (const TargetTie& t : suspect.ties)
        if (suspect.isSuspect(t.target)) r.suspectTargets.push_back(t.target);
    if (shrunkTrace.empty()) {
        if (Status st = writeTraceSubset(*trace, plan.ops, r.trace); !st) return st.error();
    } else {
        // Byte-identical: what `faultline shrink` wrote and checked is what the vendor replays.
        std::error_code ec;
        std::filesystem::copy_file(shrunkTrace, r.trace, ec);
        if (ec)
            return fileError(shrunkTrace, "cannot be copied into the bundle: " + ec.message(), ErrorCode::Io);
        r.shrunkFrom = std::filesystem::path(shrunkTrace).filename().string();
    }

    std::string script;
    if (!plan.notReplayable.empty()) {
        r.replayable = false;
        r.notReplayable = plan.notReplayable;
        script = notReplayableScript(r);
    } else {
        std::string targets;
        for (const auto& [t, v] : plan.verdicts) {
            targets += (targets.empty() ? "" : ",") + t;
            r.expectedVerdicts.emplace_back(t, v);
            if (v != Verdict::Healthy || isMustFail(r, t)) r.expectedExitCode = 1;
        }
        std::string args = "--targets " + shellQuote(targets) + " --ops " + opListArgument(r.ops) +
                           " --reps " + std::to_string(r.reps.reps) + " --seed " +
                           std::to_string(campaign.seed);
        if (!plan.reference.empty()) args += " --reference " + shellQuote(plan.reference);
        r.command = "faultline replay trace.h5 " + args;
        script = replayScript(r, args);
    }
    if (Status st = writeNewTextFile(r.script, script); !st) return st.error();
    ::chmod(r.script.c_str(), 0755);
    return r;
}

}  // namespace faultline
