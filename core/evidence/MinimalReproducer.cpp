#include "MinimalReproducer.h"

#include <sys/stat.h>

#include <cctype>
#include <filesystem>
#include <set>

#include "../Text.h"
#include "../health/BusId.h"
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

// What reproduce.sh replays: targets with the verdicts the campaign found, the ops, the
// reference; or why nothing can be replayed.
struct ReplayPlan {
    std::vector<std::pair<std::string, std::string>> verdicts;
    std::set<size_t> ops;
    std::string reference;
    std::string fleetGpu;
    std::string notReplayable;
};

// A target `faultline replay --targets` runs: printable, no spaces, and parsed as one (the
// parser takes a sim model's name as it is; the model is looked up when the replay runs).
bool isReplayTarget(const std::string& s)
{
    return isPrintableText(s) && s.find(' ') == std::string::npos && parseTargetSpec(s);
}

std::string lower(std::string s)
{
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool isSuspect(const CampaignTargetEvidence::FleetGpu& g, const ReproducerSuspect& s)
{
    if (!s.uuid.empty() && lower(s.uuid) == lower(g.uuid)) return true;
    if (!s.serial.empty() && s.serial == g.serial) return true;
    const std::string bus = normalizeBusId(s.busId);
    return !bus.empty() && bus == normalizeBusId(g.pciBusId);
}

std::string suspectText(const ReproducerSuspect& s)
{
    std::string t;
    for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"UUID", &s.uuid},
                                      {"serial", &s.serial},
                                      {"bus id", &s.busId}})
        if (!value->empty()) t += (t.empty() ? "" : ", ") + std::string(name) + " " + *value;
    return t.empty() ? "the suspect GPU (no identity given)" : "the suspect GPU (" + t + ")";
}

// A merged fleet campaign: the suspect alone, on the target it ran as on its own node.
ReplayPlan fleetPlan(const CampaignEvidence& c, const std::set<size_t>& divergent, const ReproducerSuspect& s)
{
    ReplayPlan p;
    p.ops = divergent;
    const CampaignTargetEvidence* mine = nullptr;
    for (const CampaignTargetEvidence& t : c.targets)
        if (t.fleetGpu && isSuspect(*t.fleetGpu, s)) {
            mine = &t;
            break;
        }
    if (!mine) {
        p.notReplayable =
            "a merged fleet campaign's GPUs (labelled host/target) replay on their own nodes, and " +
            suspectText(s) + " is not among them (give --suspect with its UUID or serial)";
        return p;
    }
    const CampaignTargetEvidence::FleetGpu& g = *mine->fleetGpu;
    p.fleetGpu = mine->target;
    // Its own ops: those it failed on its node (what its node's verdict rests on); for a GPU only
    // the peer vote found, those it differed from its peers on (kept for a replay by hand).
    std::set<size_t> own;
    for (size_t i : mine->failingOps.empty() ? g.outlierOps : mine->failingOps)
        if (divergent.count(i)) own.insert(i);
    if (!own.empty()) p.ops = own;
    if (g.nodeVerdict.empty() || g.nodeVerdict == "healthy" || g.nodeVerdict == "none") {
        p.notReplayable = "the suspect GPU " + mine->target + " was " +
                          (g.nodeVerdict.empty() ? std::string("not judged") : g.nodeVerdict) +
                          " on its own node; only the fleet's peer vote found its bits different (" +
                          mine->verdict +
                          "), which replaying it alone cannot show: replay the ops on it and on a healthy "
                          "peer of the same model and compare";
        return p;
    }
    if (!isReplayTarget(g.target)) {
        p.notReplayable = "the suspect GPU " + mine->target + " ran as '" + g.target +
                          "' on its node, which is not a replay target (cpu, sim:<model>, cuda:<index>)";
        return p;
    }
    p.verdicts.emplace_back(g.target, g.nodeVerdict);
    return p;
}

ReplayPlan replayPlan(const CampaignEvidence& c, const std::set<size_t>& divergent,
                      const ReproducerSuspect& s)
{
    if (c.fleet) return fleetPlan(c, divergent, s);
    ReplayPlan p;
    p.ops = divergent;
    std::string bad;
    for (const CampaignTargetEvidence& t : c.targets) {
        if (!isReplayTarget(t.target)) bad += (bad.empty() ? "'" : ", '") + t.target + "'";
        p.verdicts.emplace_back(t.target, t.verdict);
    }
    if (!c.reference.empty() && !isReplayTarget(c.reference))
        bad += (bad.empty() ? "reference '" : ", reference '") + c.reference + "'";
    if (!bad.empty()) {
        p.verdicts.clear();
        p.notReplayable = "the campaign's " + bad +
                          " are not replay targets (cpu, sim:<model>, cuda:<index>), so `faultline replay` "
                          "cannot run them";
        return p;
    }
    p.reference = c.reference;
    return p;
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
    s += "# Reproduces the divergence of this evidence bundle: replays ops " + ops +
         " of the incident's trace\n# (reproducer/trace.h5 holds only those ops and their inputs) with the "
         "command the campaign ran:\n#\n#   " +
         shellCommentText(r.command) + "\n#\n";
    if (!r.fleetGpu.empty())
        s += "# (" + shellCommentText(r.fleetGpu) +
             " of the fleet campaign, alone, on the target it ran as on its node; on another machine\n"
             "# the board may have another index: change --targets below.)\n#\n";
    s += "# Expected:";
    for (const auto& [t, v] : r.expectedVerdicts)
        s += "\n#   " + shellCommentText(t) + ": " + shellCommentText(v);
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
    for (const auto& [t, v] : r.expectedVerdicts) s += "expect " + shellQuote(t) + " " + shellQuote(v) + "\n";
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

Result<ReproducerFiles> writeMinimalReproducer(const CampaignEvidence& campaign,
                                               const std::string& sourceTrace, const std::string& dir,
                                               const ReproducerSuspect& suspect)
{
    if (!campaign.reproduced()) return Error{"the campaign found no divergent op to reproduce"};
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
    const ReplayPlan plan = replayPlan(campaign, divergent, suspect);
    ReproducerFiles r;
    r.ops.assign(plan.ops.begin(), plan.ops.end());
    r.trace = (std::filesystem::path(dir) / "trace.h5").string();
    r.script = (std::filesystem::path(dir) / "reproduce.sh").string();
    r.fleetGpu = plan.fleetGpu;
    if (Status st = writeTraceSubset(*trace, plan.ops, r.trace); !st) return st.error();

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
            if (v != "healthy") r.expectedExitCode = 1;
        }
        std::string args = "--targets " + shellQuote(targets) + " --ops " + opListArgument(r.ops) +
                           " --reps " + std::to_string(campaign.reps) + " --seed " +
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
