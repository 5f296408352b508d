#include "RankTraceMerge.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "../golden/CollectiveGolden.h"
#include "../replay/TensorLoad.h"
#include "../trace/TraceWriter.h"

namespace faultline {

namespace {

namespace fs = std::filesystem;

struct RankFile {
    std::string path;
    Trace trace;
    std::string prefix;                  // tensor id prefix of its per-rank ops
    size_t next = 0;                     // the next op to place
    std::map<std::string, size_t> seen;  // group key -> collectives placed
};

std::string groupKey(const std::vector<std::string>& ranks)
{
    return attrValueToString(AttrValue(ranks));
}

// A collective joined across files: it has a rank group.
bool isGroupCollective(const TraceOp& op)
{
    return golden::isCollectiveOp(op.op) && !golden::rankLabels(op.params).empty();
}

std::string paramText(const TraceOp& op, const std::string& name)
{
    const auto it = op.params.find(name);
    return it == op.params.end() ? std::string("-") : attrValueToString(it->second);
}

std::string describeOp(const RankFile& f, const TraceOp& op)
{
    return f.path + " (op " + std::to_string(op.index) + " " + op.op + ")";
}

class Merger {
public:
    Merger(std::vector<RankFile>& files, TraceWriter& writer, RankTraceMergeReport& report)
        : m_files(files), m_writer(writer), m_report(report)
    {
    }

    Status run()
    {
        if (Status s = countGroups(); !s) return s;
        for (;;) {
            for (size_t f = 0; f < m_files.size(); ++f)
                if (Status s = placeRankOps(f); !s) return s;
            if (std::all_of(m_files.begin(), m_files.end(),
                            [](const RankFile& f) { return f.next == f.trace.ops.size(); }))
                break;
            if (Status s = placeOneCollective(); !s) return s;
        }
        for (auto& [key, group] : m_groups) {
            (void)key;
            m_report.groups.push_back(group);
        }
        return Status::success();
    }

private:
    // Every group's collective count agrees between the files that record it.
    Status countGroups()
    {
        std::map<std::string, std::vector<std::pair<size_t, size_t>>> counts;  // key -> (file, count)
        for (size_t f = 0; f < m_files.size(); ++f) {
            std::map<std::string, size_t> mine;
            for (const TraceOp& op : m_files[f].trace.ops)
                if (isGroupCollective(op)) {
                    const auto ranks = golden::rankLabels(op.params);
                    ++mine[groupKey(ranks)];
                    MergedGroup& g = m_groups[groupKey(ranks)];
                    g.ranks = ranks;
                }
            for (const auto& [key, n] : mine) {
                counts[key].emplace_back(f, n);
                m_groups[key].files.push_back(m_files[f].path);
            }
        }
        for (const auto& [key, list] : counts)
            for (const auto& [f, n] : list)
                if (n != list.front().second) {
                    const RankFile& a = m_files[list.front().first];
                    const RankFile& b = m_files[f];
                    return fileError(b.path, "ranks disagree on the sequence of group " + key + ": " +
                                                 a.path + " recorded " + std::to_string(list.front().second) +
                                                 " collective(s) of it, " + b.path + " " + std::to_string(n) +
                                                 incomplete(a) + incomplete(b));
                }
        for (const auto& [key, group] : m_groups) {
            std::set<std::string> recorded;
            for (const RankFile& f : m_files)
                for (const TraceOp& op : f.trace.ops)
                    if (isGroupCollective(op) && groupKey(golden::rankLabels(op.params)) == key)
                        for (const auto& [label, names] : op.outputs) recorded.insert(label);
            for (const std::string& r : group.ranks)
                if (!recorded.count(r))
                    m_report.warnings.push_back("group " + key + ": no file recorded rank " + r +
                                                "'s outputs; its blocks are not judged");
        }
        return Status::success();
    }

    static std::string incomplete(const RankFile& f)
    {
        const auto c = f.trace.attributes.find("complete");
        return c != f.trace.attributes.end() && c->second == "0"
                   ? " (" + f.path + " is an incomplete capture)"
                   : "";
    }

    // The file's ops up to its next group collective, each kept as this rank's own.
    Status placeRankOps(size_t f)
    {
        RankFile& file = m_files[f];
        while (file.next < file.trace.ops.size() && !isGroupCollective(file.trace.ops[file.next])) {
            const TraceOp& op = file.trace.ops[file.next];
            std::vector<HostTensor> inputs;
            auto ids = storeInputs(file, op, inputs);
            if (!ids) return ids.error();
            TraceOp merged = op;
            merged.index = m_report.ops;
            merged.inputs = *ids;
            std::map<std::string, std::vector<HostTensor>> outputs;
            if (Status s = loadOutputs(file, op, outputs); !s) return s;
            if (Status s = writeOp(merged, outputs); !s) return s;
            ++m_report.rankOps;
            ++file.next;
        }
        return Status::success();
    }

    // One collective every file of its group is waiting at.
    Status placeOneCollective()
    {
        for (size_t f = 0; f < m_files.size(); ++f) {
            RankFile& file = m_files[f];
            if (file.next == file.trace.ops.size()) continue;
            const TraceOp& op = file.trace.ops[file.next];
            const std::string key = groupKey(golden::rankLabels(op.params));
            const size_t k = file.seen[key];
            std::vector<size_t> members;
            bool ready = true;
            for (size_t g = 0; g < m_files.size() && ready; ++g) {
                const RankFile& other = m_files[g];
                if (std::find(m_groups[key].files.begin(), m_groups[key].files.end(), other.path) ==
                    m_groups[key].files.end())
                    continue;
                members.push_back(g);
                ready = other.next < other.trace.ops.size() &&
                        isGroupCollective(other.trace.ops[other.next]) &&
                        groupKey(golden::rankLabels(other.trace.ops[other.next].params)) == key;
            }
            if (ready) return mergeCollective(members, key, k);
        }
        std::string waits;
        for (const RankFile& f : m_files)
            if (f.next < f.trace.ops.size())
                waits += (waits.empty() ? "" : ", ") + describeOp(f, f.trace.ops[f.next]) + " of group " +
                         groupKey(golden::rankLabels(f.trace.ops[f.next].params));
        return Error{
            "ranks disagree on the order of collectives: each waits for another group (" + waits + ")",
            ErrorCode::Format};
    }

    Status mergeCollective(const std::vector<size_t>& members, const std::string& key, size_t k)
    {
        RankFile& first = m_files[members.front()];
        const TraceOp& op = first.trace.ops[first.next];
        std::vector<HostTensor> inputs;
        auto ids = storeInputs(first, op, inputs);
        if (!ids) return ids.error();
        std::map<std::string, std::vector<HostTensor>> outputs;
        std::map<std::string, std::string> outputFile;
        const std::string position = "collective #" + std::to_string(k + 1) + " of group " + key;
        for (size_t m : members) {
            RankFile& file = m_files[m];
            const TraceOp& other = file.trace.ops[file.next];
            if (m != members.front()) {
                auto loaded = loadOpInputs(file.trace, other);
                if (!loaded) return Error{file.path + ": " + loaded.message(), loaded.error().code};
                if (Status s = sameCollective(first, op, inputs, file, other, *loaded, position); !s)
                    return s;
                for (size_t i = 0; i < inputs.size(); ++i)
                    if ((*loaded)[i].data != inputs[i].data)
                        m_report.warnings.push_back(describeOp(file, other) + ": inputs[" +
                                                    std::to_string(i) + "] differs from " +
                                                    describeOp(first, op) +
                                                    "'s copy (the gather of the inputs moved other bits); "
                                                    "the merged op keeps the first file's");
            }
            std::map<std::string, std::vector<HostTensor>> mine;
            if (Status s = loadOutputs(file, other, mine); !s) return s;
            for (auto& [label, tensors] : mine) {
                if (outputs.count(label))
                    return fileError(file.path, position + ": device " + label + "'s output is in " +
                                                    outputFile[label] + " too");
                outputs[label] = std::move(tensors);
                outputFile[label] = file.path;
            }
        }
        TraceOp merged = op;
        merged.index = m_report.ops;
        merged.inputs = *ids;
        if (Status s = writeOp(merged, outputs); !s) return s;
        for (size_t m : members) {
            ++m_files[m].next;
            ++m_files[m].seen[key];
        }
        ++m_groups[key].collectives;
        ++m_report.collectives;
        return Status::success();
    }

    static Status sameCollective(const RankFile& a, const TraceOp& x, const std::vector<HostTensor>& xin,
                                 const RankFile& b, const TraceOp& y, const std::vector<HostTensor>& yin,
                                 const std::string& position)
    {
        std::string what;
        if (x.op != y.op)
            what = "op " + x.op + " vs " + y.op;
        else if (xin.size() != yin.size())
            what = std::to_string(xin.size()) + " vs " + std::to_string(yin.size()) + " inputs";
        for (size_t i = 0; what.empty() && i < xin.size(); ++i)
            if (xin[i].dtype != yin[i].dtype || xin[i].shape != yin[i].shape)
                what = "inputs[" + std::to_string(i) + "] " + std::string(dtypeName(xin[i].dtype)) + " " +
                       golden::shapeString(xin[i].shape) + " vs " + std::string(dtypeName(yin[i].dtype)) +
                       " " + golden::shapeString(yin[i].shape);
        for (const char* p : {"reduce_op", "root"})
            if (what.empty() && paramText(x, p) != paramText(y, p))
                what = std::string(p) + " " + paramText(x, p) + " vs " + paramText(y, p);
        if (what.empty()) return Status::success();
        return fileError(b.path, "ranks disagree on the sequence: " + position + " is " + describeOp(a, x) +
                                     " in " + a.path + " but " + describeOp(b, y) + ": " + what);
    }

    // Stores the op's inputs (once per identical tensor); their ids in the merged trace.
    Result<std::vector<std::string>> storeInputs(const RankFile& file, const TraceOp& op,
                                                 std::vector<HostTensor>& inputs)
    {
        auto loaded = loadOpInputs(file.trace, op);
        if (!loaded) return Error{file.path + ": " + loaded.message(), loaded.error().code};
        inputs = std::move(loaded).value();
        std::vector<std::string> ids;
        for (size_t i = 0; i < inputs.size(); ++i) {
            const std::string digest = outputDigest({inputs[i]});
            if (auto it = m_stored.find(digest); it != m_stored.end()) {
                ids.push_back(it->second);
                ++m_report.sharedTensors;
                continue;
            }
            std::string id = file.prefix + "/" + op.inputs[i];
            for (int n = 2; m_ids.count(id); ++n)
                id = file.prefix + "/" + op.inputs[i] + "~" + std::to_string(n);
            const HostTensor& t = inputs[i];
            if (Status s = m_writer.addTensor(id, {t.dtype, t.shape, t.data.data()}); !s) return s.error();
            m_ids.insert(id);
            m_stored[digest] = id;
            ++m_report.tensors;
            ids.push_back(id);
        }
        return ids;
    }

    static Status loadOutputs(const RankFile& file, const TraceOp& op,
                              std::map<std::string, std::vector<HostTensor>>& outputs)
    {
        for (const auto& [label, names] : op.outputs)
            for (const std::string& name : names) {
                auto t = loadTensor(*file.trace.file, name);
                if (!t) return Error{file.path + ": " + t.message(), t.error().code};
                outputs[label].push_back(std::move(t).value());
            }
        return Status::success();
    }

    Status writeOp(const TraceOp& op, const std::map<std::string, std::vector<HostTensor>>& outputs)
    {
        std::map<std::string, std::vector<TensorData>> data;
        for (const auto& [label, tensors] : outputs)
            for (const HostTensor& t : tensors) data[label].push_back({t.dtype, t.shape, t.data.data()});
        if (Status s = m_writer.addOp(op, data); !s) return s;
        ++m_report.ops;
        return Status::success();
    }

    std::vector<RankFile>& m_files;
    TraceWriter& m_writer;
    RankTraceMergeReport& m_report;
    std::map<std::string, MergedGroup> m_groups;
    std::map<std::string, std::string> m_stored;  // digest -> id
    std::set<std::string> m_ids;
};

Status addDevices(const std::vector<RankFile>& files, TraceWriter& writer, RankTraceMergeReport& report)
{
    std::map<std::string, std::pair<TraceDevice, std::string>> devices;  // label -> (device, file)
    for (const RankFile& f : files)
        for (const TraceDevice& d : f.trace.devices) {
            const auto it = devices.find(d.label);
            if (it == devices.end()) {
                devices[d.label] = {d, f.path};
                continue;
            }
            const TraceDevice& e = it->second.first;
            if (e.name != d.name || e.uuid != d.uuid || e.serial != d.serial || e.pciBusId != d.pciBusId)
                return fileError(f.path, "device " + d.label + " is another device in " + it->second.second +
                                             " (name, uuid, serial or pci_bus_id differ): two ranks recorded "
                                             "under one label");
        }
    for (const auto& [label, entry] : devices) {
        if (Status s = writer.addDevice(entry.first); !s) return s;
        report.devices.push_back(label);
    }
    return Status::success();
}

// Root attributes every file has with the same value, the capture's completeness, the sources.
Status addAttributes(const std::vector<RankFile>& files, TraceWriter& writer)
{
    for (const auto& attribute : files.front().trace.attributes) {
        const std::string& name = attribute.first;
        const std::string& value = attribute.second;
        if (name == "complete" || name == "stop_reason") continue;
        const bool shared = std::all_of(files.begin(), files.end(), [&](const RankFile& f) {
            const auto it = f.trace.attributes.find(name);
            return it != f.trace.attributes.end() && it->second == value;
        });
        if (shared)
            if (Status s = writer.setAttribute(name, value); !s) return s;
    }
    std::string stop;
    for (const RankFile& f : files) {
        const auto c = f.trace.attributes.find("complete");
        if (c == f.trace.attributes.end() || c->second != "0") continue;
        const auto why = f.trace.attributes.find("stop_reason");
        stop += (stop.empty() ? "" : "; ") + f.path + ": " +
                (why != f.trace.attributes.end() ? why->second : std::string("incomplete"));
    }
    if (!stop.empty()) {
        if (Status s = writer.setAttribute("complete", int64_t(0)); !s) return s;
        if (Status s = writer.setAttribute("stop_reason", stop); !s) return s;
    }
    std::vector<std::string> sources;
    for (const RankFile& f : files) sources.push_back(fs::path(f.path).filename().string());
    return writer.setAttribute("merged_from", sources);
}

}  // namespace

Result<RankTraceMergeReport> mergeRankTraces(const std::vector<std::string>& paths, const std::string& out,
                                             const OpenOptions& options)
{
    if (paths.empty()) return Error{"merge-traces: no rank files", ErrorCode::Usage};
    std::error_code ec;
    const fs::path outPath = fs::weakly_canonical(out, ec);
    std::set<fs::path> seen;
    for (const std::string& p : paths) {
        const fs::path canonical = fs::weakly_canonical(p, ec);
        if (canonical == outPath)
            return fileError(out, "is one of the rank files (--out must be a new path)", ErrorCode::Usage);
        if (!seen.insert(canonical).second) return fileError(p, "is given twice", ErrorCode::Usage);
    }
    RankTraceMergeReport report;
    report.out = out;
    report.files = paths;
    std::vector<RankFile> files;
    std::map<std::string, size_t> prefixUse;
    for (const std::string& p : paths) {
        auto trace = readTrace(p, options);
        if (!trace) return trace.error();
        RankFile f{p, std::move(trace).value(), "", 0, {}};
        f.prefix = f.trace.devices.size() == 1 ? f.trace.devices.front().label : "";
        files.push_back(std::move(f));
    }
    for (const RankFile& f : files) ++prefixUse[f.prefix];
    for (size_t i = 0; i < files.size(); ++i)
        if (files[i].prefix.empty() || prefixUse[files[i].prefix] > 1)
            files[i].prefix = "file" + std::to_string(i);
    for (const RankFile& f : files)
        for (const std::string& w : f.trace.warnings) report.warnings.push_back(f.path + ": " + w);
    auto writer = TraceWriter::create(out);
    if (!writer) return writer.error();
    if (Status s = addDevices(files, *writer, report); !s) return s.error();
    if (Status s = addAttributes(files, *writer); !s) return s.error();
    Merger merger(files, *writer, report);
    if (Status s = merger.run(); !s) return s.error();
    if (Status s = writer->close(); !s) return s.error();
    return report;
}

nlohmann::json rankTraceMergeJson(const RankTraceMergeReport& report)
{
    nlohmann::json groups = nlohmann::json::array();
    for (const MergedGroup& g : report.groups)
        groups.push_back({{"ranks", g.ranks}, {"collectives", g.collectives}, {"files", g.files}});
    return {{"out", report.out},          {"files", report.files},
            {"devices", report.devices},  {"ops", report.ops},
            {"rank_ops", report.rankOps}, {"collectives", report.collectives},
            {"tensors", report.tensors},  {"shared_tensors", report.sharedTensors},
            {"groups", groups},           {"warnings", report.warnings}};
}

}  // namespace faultline
