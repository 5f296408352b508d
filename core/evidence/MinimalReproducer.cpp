#include "MinimalReproducer.h"

#include <sys/stat.h>

#include <filesystem>
#include <set>

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

std::string joinOps(const std::vector<size_t>& ops)
{
    std::string s;
    for (size_t i : ops) s += (s.empty() ? "" : ",") + std::to_string(i);
    return s;
}

Status writeTraceSubset(const Trace& trace, const std::set<size_t>& ops, const std::string& path)
{
    auto w = TraceWriter::create(path);
    if (!w) return w.error();
    for (const auto& [name, value] : trace.attributes)
        if (Status st = w->setAttribute(name, value); !st) return st;
    if (Status st = w->setAttribute("faultline_evidence", std::string("minimal reproducer: ops ") +
                                                              joinOps({ops.begin(), ops.end()}));
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

}  // namespace

std::string shellQuote(const std::string& s)
{
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

Result<ReproducerFiles> writeMinimalReproducer(const CampaignEvidence& campaign,
                                               const std::string& sourceTrace, const std::string& dir)
{
    if (!campaign.reproduced()) return Error{"the campaign found no divergent op to reproduce"};
    auto trace = readTrace(sourceTrace);
    if (!trace) return trace.error();
    std::set<size_t> ops;
    for (const CampaignOpEvidence& o : campaign.divergentOps) ops.insert(o.index);
    for (size_t i : ops) {
        bool found = false;
        for (const TraceOp& op : trace->ops) found = found || op.index == i;
        if (!found)
            return fileError(sourceTrace, "has no op " + std::to_string(i) + " (not the campaign's trace?)");
    }
    ReproducerFiles r;
    r.ops.assign(ops.begin(), ops.end());
    r.trace = (std::filesystem::path(dir) / "trace.h5").string();
    r.script = (std::filesystem::path(dir) / "reproduce.sh").string();
    if (Status st = writeTraceSubset(*trace, ops, r.trace); !st) return st.error();

    std::string targets;
    for (const CampaignTargetEvidence& t : campaign.targets) {
        targets += (targets.empty() ? "" : ",") + t.target;
        r.expectedVerdicts.emplace_back(t.target, t.verdict);
        if (t.verdict != "healthy") r.expectedExitCode = 1;
    }
    std::string args = "--targets " + shellQuote(targets) + " --ops " + joinOps(r.ops) + " --reps " +
                       std::to_string(campaign.reps) + " --seed " + std::to_string(campaign.seed);
    if (!campaign.reference.empty()) args += " --reference " + shellQuote(campaign.reference);
    r.command = "faultline replay trace.h5 " + args;

    std::string s;
    s += "#!/bin/sh\n";
    s += "# Reproduces the divergence of this evidence bundle: replays ops " + joinOps(r.ops) +
         " of the incident's trace\n# (reproducer/trace.h5 holds only those ops and their inputs) with the "
         "command "
         "the campaign ran:\n#\n#   " +
         r.command + "\n#\n# Expected:";
    for (const auto& [t, v] : r.expectedVerdicts) s += "\n#   " + t + ": " + v;
    s += "\n#   exit code " + std::to_string(r.expectedExitCode) +
         "\n# Needs faultline on PATH (or FAULTLINE=/path/to/faultline). Exit 0: reproduced; 1: not "
         "reproduced; "
         "2: could not run.\n";
    s += "set -u\n";
    s += "here=$(cd \"$(dirname \"$0\")\" && pwd)\n";
    s += "faultline=${FAULTLINE:-faultline}\n";
    s += "command -v \"$faultline\" >/dev/null 2>&1 || { echo \"reproduce.sh: $faultline not found (set "
         "FAULTLINE)\" "
         ">&2; exit 2; }\n";
    s += "out=$(mktemp) || exit 2\n";
    s += "trap 'rm -f \"$out\"' EXIT\n";
    s += "\"$faultline\" replay \"$here/trace.h5\" " + args + " --quiet >\"$out\" 2>&1\n";
    s += "rc=$?\n";
    s += "cat \"$out\"\n";
    s += "[ \"$rc\" -eq 2 ] && { echo \"reproduce.sh: the replay failed to run\" >&2; exit 2; }\n";
    s += "status=0\n";
    s += "expect() {\n";
    s += "    if awk -v t=\"$1\" -v v=\"$2\" '$1 == t && $2 == v { found = 1 } END { exit !found }' "
         "\"$out\"; then\n";
    s += "        echo \"reproduced: $1 is $2\"\n";
    s += "    else\n";
    s += "        echo \"NOT reproduced: $1 should be $2\"; status=1\n";
    s += "    fi\n";
    s += "}\n";
    for (const auto& [t, v] : r.expectedVerdicts) s += "expect " + shellQuote(t) + " " + shellQuote(v) + "\n";
    s += "[ \"$rc\" -eq " + std::to_string(r.expectedExitCode) +
         " ] || { echo \"NOT reproduced: exit code $rc, expected " + std::to_string(r.expectedExitCode) +
         "\"; status=1; }\n";
    s += "exit $status\n";
    if (Status st = writeNewTextFile(r.script, s); !st) return st.error();
    ::chmod(r.script.c_str(), 0755);
    return r;
}

}  // namespace faultline
