// The per-directed-link matrix: built from a sweep, written to and read from its results file,
// and the comparison of one link's stored block.
#include "LinkMatrix.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <initializer_list>

#include "../TensorFile.h"
#include "../io/SnapshotWriter.h"
#include "../replay/TensorLoad.h"

namespace faultline {
namespace {

constexpr int64_t kSweepFileVersion = 1;

std::string linkName(size_t src, size_t dst)
{
    return "link " + std::to_string(src) + "->" + std::to_string(dst);
}

void addTransfer(LinkMatrix& m, const SweepTransfer& t, uint64_t bytes)
{
    addLinkTransfers(m, t.src(), t.dst(), t.reps, t.failures, t.corruptedBytes, bytes * t.reps, t.seconds,
                     t.signature);
}

// Fields of the JSON read with their types checked; a wrong type is an exception caught below.
template <class T>
T field(const nlohmann::json& j, const char* key)
{
    return j.at(key).get<T>();
}

// Counts and rank indices must be non-negative integers (a float would be converted unchecked).
bool countsAreIntegers(const nlohmann::json& j, std::initializer_list<const char*> keys)
{
    if (!j.is_object()) return false;
    for (const char* key : keys)
        if (!j.contains(key) || !j[key].is_number_unsigned()) return false;
    return true;
}

uint64_t attrNumber(const TensorInfo& info, const std::string& key)
{
    const auto it = info.attributes.find(key);
    if (it == info.attributes.end()) return 0;
    try {
        return std::stoull(it->second);
    } catch (const std::exception&) {
        return 0;
    }
}

}  // namespace

uint64_t LinkMatrix::maxCorruptedBytes() const
{
    uint64_t m = 0;
    for (const LinkCell& c : cells) m = std::max(m, c.corruptedBytes);
    return m;
}

double LinkMatrix::maxGbps() const
{
    double m = 0;
    for (const LinkCell& c : cells) m = std::max(m, c.gbps());
    return m;
}

size_t LinkMatrix::faultyLinkCount() const
{
    return size_t(std::count_if(cells.begin(), cells.end(), [](const LinkCell& c) { return c.faultyLink; }));
}

LinkMatrix makeLinkMatrix(std::string kind, std::vector<std::string> ranks)
{
    LinkMatrix m;
    m.kind = std::move(kind);
    m.ranks = std::move(ranks);
    const size_t n = m.ranks.size();
    m.descriptions.assign(n, "");
    m.faultyGpus.assign(n, false);
    m.cells.resize(n * n);
    for (size_t s = 0; s < n; ++s)
        for (size_t d = 0; d < n; ++d) {
            m.at(s, d).src = s;
            m.at(s, d).dst = d;
        }
    return m;
}

void addLinkTransfers(LinkMatrix& m, size_t src, size_t dst, uint64_t transfers, uint64_t failures,
                      uint64_t corruptedBytes, uint64_t bytesMoved, double seconds,
                      const std::string& signature)
{
    LinkCell& c = m.at(src, dst);
    c.transfers += transfers;
    c.failures += failures;
    c.corruptedBytes += corruptedBytes;
    c.bytesMoved += bytesMoved;
    c.seconds += seconds;
    if (c.signature.empty() && !signature.empty()) c.signature = signature;
}

Result<LinkMatrix> linkMatrixFromCollectiveJson(const nlohmann::json& j, const std::string& path)
{
    try {
        if (!j.is_object()) return fileError(path, "the collective report is not a JSON object");
        const auto targets = field<std::vector<std::string>>(j, "targets");
        if (targets.size() < 2 || targets.size() > kMaxLinkMatrixRanks)
            return fileError(path, "the collective report has " + std::to_string(targets.size()) +
                                       " targets (2 to " + std::to_string(kMaxLinkMatrixRanks) +
                                       " expected)");
        LinkMatrix m = makeLinkMatrix("collective", targets);
        m.path = path;
        const size_t n = m.size();
        for (const auto& g : j.at("gpus")) {
            if (!countsAreIntegers(g, {"index"}) || g.at("index").get<uint64_t>() >= n)
                return fileError(path, "gpus[]: an index that is not a rank of the group");
            const auto index = field<size_t>(g, "index");
            m.faultyGpus[index] = field<bool>(g, "faulty");
            if (g.contains("description") && g["description"].is_string())
                m.descriptions[index] = g["description"].get<std::string>();
        }
        for (const auto& l : j.at("links")) {
            if (!countsAreIntegers(l, {"src", "dst", "transfers", "failures", "corrupted_bytes", "bytes"}))
                return fileError(path, "links[]: a rank or count that is not a count");
            const auto src = field<size_t>(l, "src"), dst = field<size_t>(l, "dst");
            if (src >= n || dst >= n || src == dst)
                return fileError(path, "links[]: link " + std::to_string(src) + "->" + std::to_string(dst) +
                                           " is not a link of a group of " + std::to_string(n));
            const auto transfers = field<uint64_t>(l, "transfers"), failures = field<uint64_t>(l, "failures");
            if (failures > transfers)
                return fileError(path, "links[]: a link failed more often than it carried");
            const auto bytes = field<uint64_t>(l, "bytes");
            const double gbps = l.contains("gbps") && l["gbps"].is_number() ? l["gbps"].get<double>() : 0.0;
            const double seconds = gbps > 0 && std::isfinite(gbps) ? double(bytes) / (gbps * 1e9) : 0.0;
            const std::string signature = l.contains("signature") && l["signature"].is_string()
                                              ? l["signature"].get<std::string>()
                                              : "";
            addLinkTransfers(m, src, dst, transfers, failures, field<uint64_t>(l, "corrupted_bytes"), bytes,
                             seconds, signature);
            m.at(src, dst).faultyLink = field<bool>(l, "faulty");
        }
        return m;
    } catch (const nlohmann::json::exception& e) {
        return fileError(path, std::string("the collective report is malformed: ") + e.what());
    }
}

std::string linkBlockDataset(size_t src, size_t dst, bool received)
{
    return "links/" + std::to_string(src) + "-" + std::to_string(dst) +
           (received ? "/received" : "/expected");
}

LinkMatrix linkMatrixFromSweep(const SweepReport& report)
{
    LinkMatrix m = makeLinkMatrix("sweep", report.options.targets);
    for (size_t g = 0; g < m.size() && g < report.descriptions.size(); ++g)
        m.descriptions[g] = report.descriptions[g];
    for (const SweepGpu& g : report.gpus)
        if (g.index < m.size()) m.faultyGpus[g.index] = g.faulty;
    for (const SweepRound& r : report.rounds)
        for (const SweepTransfer& t : r.transfers) {
            addTransfer(m, t, report.options.bytes);
            LinkCell& c = m.at(t.src(), t.dst());
            if (t.block && !c.hasBlock()) {
                c.blockExpected = linkBlockDataset(t.src(), t.dst(), false);
                c.blockReceived = linkBlockDataset(t.src(), t.dst(), true);
                c.blockRep = t.block->rep;
                c.blockBytes = t.block->received.size();
                c.blockTotalBytes = t.block->totalBytes;
            }
        }
    for (const SweepLink& l : report.faultyLinks) m.at(l.src, l.dst).faultyLink = true;
    return m;
}

Result<LinkMatrix> linkMatrixFromSweepJson(const nlohmann::json& j, const std::string& path)
{
    try {
        if (!j.is_object()) return fileError(path, "the sweep report is not a JSON object");
        if (!countsAreIntegers(j, {"bytes"}))
            return fileError(path, "the sweep report's bytes is not a count");
        const auto targets = field<std::vector<std::string>>(j, "targets");
        if (targets.size() < 2 || targets.size() > kMaxLinkMatrixRanks)
            return fileError(path, "the sweep report has " + std::to_string(targets.size()) +
                                       " targets (2 to " + std::to_string(kMaxLinkMatrixRanks) +
                                       " expected)");
        const uint64_t bytes = field<uint64_t>(j, "bytes");
        LinkMatrix m = makeLinkMatrix("sweep", targets);
        m.path = path;
        const size_t n = m.size();
        auto checkRank = [&](size_t r, const char* what) -> Status {
            if (r >= n)
                return fileError(path, std::string(what) + " names rank " + std::to_string(r) +
                                           " of a group of " + std::to_string(n));
            return {};
        };
        for (const auto& g : j.at("gpus")) {
            if (!countsAreIntegers(g, {"index"}))
                return fileError(path, "gpus[]: an index that is not a count");
            const auto index = field<size_t>(g, "index");
            if (Status st = checkRank(index, "gpus[]"); !st) return st.error();
            m.faultyGpus[index] = field<bool>(g, "faulty");
            if (g.contains("description") && g["description"].is_string())
                m.descriptions[index] = g["description"].get<std::string>();
        }
        for (const auto& round : j.at("rounds"))
            for (const auto& pair : round.at("pairs")) {
                if (!countsAreIntegers(pair, {"a", "b", "reps", "failures", "corrupted_bytes"}) ||
                    pair.at("reps").get<uint64_t>() > UINT32_MAX ||
                    pair.at("failures").get<uint64_t>() > UINT32_MAX)
                    return fileError(path, "a transfer record whose ranks or counts are not counts");
                auto t = sweepTransferFromJson(pair);
                if (!t) return fileError(path, t.message());
                if (Status st = checkRank(std::max(t->a, t->b), "a transfer"); !st) return st.error();
                if (t->a == t->b)
                    return fileError(path, "a transfer from rank " + std::to_string(t->a) + " to itself");
                if (t->failures > t->reps) return fileError(path, "a transfer failed more often than it ran");
                addTransfer(m, *t, bytes);
            }
        for (const auto& l : j.at("links")) {
            if (!countsAreIntegers(l, {"src", "dst"}))
                return fileError(path, "links[]: a rank that is not a count");
            const auto src = field<size_t>(l, "src"), dst = field<size_t>(l, "dst");
            if (Status st = checkRank(std::max(src, dst), "links[]"); !st) return st.error();
            m.at(src, dst).faultyLink = true;
        }
        return m;
    } catch (const nlohmann::json::exception& e) {
        return fileError(path, std::string("the sweep report is malformed: ") + e.what());
    }
}

Status writeSweepResults(const std::string& path, const SweepReport& report)
{
    auto w = SnapshotWriter::create(path, {.inMemory = true});
    if (!w) return w.error();
    const std::string text = sweepJson(report).dump();
    Status st = w->setRootAttribute("faultline_format", std::string("sweep"));
    if (st) st = w->setRootAttribute("faultline_version", kSweepFileVersion);
    if (st) st = w->writeTensor("report_json", DType::UInt8, {text.size()}, text.data());
    std::vector<std::pair<size_t, size_t>> written;
    for (const SweepRound& r : report.rounds)
        for (const SweepTransfer& t : r.transfers) {
            if (!st) return st;
            const std::pair<size_t, size_t> key{t.src(), t.dst()};
            if (!t.block || std::find(written.begin(), written.end(), key) != written.end()) continue;
            written.push_back(key);
            TensorWriteOptions o;
            o.attributes = {{"rep", int64_t(t.block->rep)},
                            {"total_bytes", int64_t(t.block->totalBytes)},
                            {"truncated", int64_t(t.block->truncated() ? 1 : 0)}};
            st = w->writeTensor(linkBlockDataset(t.src(), t.dst(), false), DType::Float32, t.block->shape,
                                t.block->expected.data(), o);
            if (st)
                st = w->writeTensor(linkBlockDataset(t.src(), t.dst(), true), DType::Float32, t.block->shape,
                                    t.block->received.data(), o);
        }
    if (!st) return st;
    return w->close();
}

namespace {

// The format a results file says it is ("" when it has no faultline_format).
std::string formatOf(const TensorFile& file)
{
    const auto& attributes = file.attributes();
    const auto format = attributes.find("faultline_format");
    return format != attributes.end() ? format->second : std::string();
}

Result<std::string> resultsFormat(const std::string& path)
{
    auto file = openTensorFile(path);
    if (!file) return file.error();
    return formatOf(**file);
}

// The report_json of a version-1 results file of `format` (sweep, collective), parsed.
Result<nlohmann::json> loadReportJson(const TensorFile& file, const std::string& path,
                                      const std::string& format)
{
    const auto& attributes = file.attributes();
    const auto found = attributes.find("faultline_format");
    if (found == attributes.end() || found->second != format)
        return fileError(path, "not a " + format + " results file (no faultline_format=\"" + format + "\")");
    const auto version = attributes.find("faultline_version");
    if (version == attributes.end() || version->second != std::to_string(kSweepFileVersion))
        return fileError(path, format + " results file version " +
                                   (version == attributes.end() ? std::string("(none)") : version->second) +
                                   " is not supported (this build reads version " +
                                   std::to_string(kSweepFileVersion) + ")");
    auto index = file.find("report_json");
    if (!index) return fileError(path, "no report_json in the " + format + " results file");
    if (file.tensors()[*index].byteCount() > (uint64_t(64) << 20))
        return fileError(path, "report_json is larger than 64 MiB");
    auto bytes = loadTensor(file, "report_json");
    if (!bytes) return bytes.error();
    const auto* begin = reinterpret_cast<const char*>(bytes->data.data());
    auto doc = nlohmann::json::parse(begin, begin + bytes->data.size(), nullptr, false);
    if (doc.is_discarded()) return fileError(path, "report_json is not JSON");
    return doc;
}

}  // namespace

Result<bool> isSweepResultsFile(const std::string& path)
{
    auto format = resultsFormat(path);
    if (!format) return format.error();
    return *format == "sweep";
}

Result<bool> isLinkResultsFile(const std::string& path)
{
    auto format = resultsFormat(path);
    if (!format) return format.error();
    return *format == "sweep" || *format == "collective";
}

namespace {

// The matrix of an opened sweep results file, with the blocks it stores.
Result<LinkMatrix> readSweepMatrix(const TensorFile& file, const std::string& path);

}  // namespace

Result<LinkMatrix> readLinkMatrix(const std::string& path)
{
    auto opened = openTensorFile(path);
    if (!opened) return opened.error();
    if (formatOf(**opened) != "collective") return readSweepMatrix(**opened, path);
    auto doc = loadReportJson(**opened, path, "collective");
    if (!doc) return doc.error();
    return linkMatrixFromCollectiveJson(*doc, path);
}

Result<LinkMatrix> readSweepLinkMatrix(const std::string& path)
{
    auto opened = openTensorFile(path);
    if (!opened) return opened.error();
    return readSweepMatrix(**opened, path);
}

namespace {

Result<LinkMatrix> readSweepMatrix(const TensorFile& file, const std::string& path)
{
    auto doc = loadReportJson(file, path, "sweep");
    if (!doc) return doc.error();
    auto matrix = linkMatrixFromSweepJson(*doc, path);
    if (!matrix) return matrix.error();
    for (LinkCell& c : matrix->cells) {
        if (c.failures == 0) continue;
        const auto e = file.find(linkBlockDataset(c.src, c.dst, false));
        const auto r = file.find(linkBlockDataset(c.src, c.dst, true));
        if (!e || !r) continue;  // not stored (the GPU did not answer, or an older file)
        const TensorInfo& ei = file.tensors()[*e];
        const TensorInfo& ri = file.tensors()[*r];
        if (ei.dtype != DType::Float32 || ri.dtype != DType::Float32 || ei.shape != ri.shape)
            return fileError(path, linkName(c.src, c.dst) +
                                       ": its expected and received blocks are not float32 of one shape");
        if (ri.byteCount() > kMaxLinkBlockBytes)
            return fileError(path, linkName(c.src, c.dst) + ": its block is larger than " +
                                       std::to_string(kMaxLinkBlockBytes >> 20) + " MiB");
        c.blockExpected = ei.name;
        c.blockReceived = ri.name;
        c.blockRep = uint32_t(attrNumber(ri, "rep"));
        c.blockBytes = ri.byteCount();
        c.blockTotalBytes = std::max(c.blockBytes, attrNumber(ri, "total_bytes"));
    }
    return matrix;
}

}  // namespace

Result<LinkBlockComparison> compareLinkBlock(const LinkMatrix& matrix, size_t src, size_t dst,
                                             const std::atomic<bool>* cancel)
{
    if (src >= matrix.size() || dst >= matrix.size())
        return Error{"no link " + std::to_string(src) + "->" + std::to_string(dst) + " in a group of " +
                         std::to_string(matrix.size()),
                     ErrorCode::Usage};
    const LinkCell& c = matrix.at(src, dst);
    const std::string name = linkName(src, dst);
    if (!c.hasBlock() || matrix.path.empty())
        return Error{name + ": no block stored" + (c.failures ? "" : " (it passed)"), ErrorCode::Usage};
    auto opened = openTensorFile(matrix.path);
    if (!opened) return opened.error();
    const TensorFile& file = **opened;
    for (const std::string* dataset : {&c.blockExpected, &c.blockReceived}) {
        const auto i = file.find(*dataset);
        if (!i) return fileError(matrix.path, "no dataset " + *dataset);
        const TensorInfo& info = file.tensors()[*i];
        if (info.dtype != DType::Float32 || info.byteCount() > kMaxLinkBlockBytes)
            return fileError(matrix.path, *dataset + ": not a float32 block of at most " +
                                              std::to_string(kMaxLinkBlockBytes >> 20) + " MiB");
    }
    auto expected = loadTensor(file, c.blockExpected);
    if (!expected) return expected.error();
    auto received = loadTensor(file, c.blockReceived);
    if (!received) return received.error();
    if (expected->shape != received->shape)
        return fileError(matrix.path, name + ": its expected and received blocks differ in shape");
    LinkBlockComparison out;
    const std::string label = matrix.path + " " + name;
    out.received = std::make_shared<MemoryTensorFile>(label + " received");
    out.expected = std::make_shared<MemoryTensorFile>(label + " expected");
    if (Status st = out.received->add(name, DType::Float32, received->shape, std::move(received->data)); !st)
        return st.error();
    if (Status st = out.expected->add(name, DType::Float32, expected->shape, std::move(expected->data)); !st)
        return st.error();
    auto report = compareFiles(*out.received, *out.expected, {}, {}, cancel);
    if (!report) return report.error();
    out.report = std::move(*report);
    return out;
}

}  // namespace faultline
