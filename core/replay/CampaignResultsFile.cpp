// The campaign results file (RESULTS.h5, docs/formats.md): written when a campaign ends, read
// back by the GUI.
#include "CampaignResultsFile.h"

#include <algorithm>
#include <fstream>

#include "../io/SnapshotWriter.h"
#include "TensorLoad.h"

namespace faultline {

Status writeCampaignResults(const std::string& path, const CampaignReport& report)
{
    return writeCampaignResultsJson(path, campaignJson(report));
}

namespace {

// Root attributes from the report's scalar fields.
Status writeRootAttributes(SnapshotWriter& writer, const nlohmann::json& report)
{
    Status st;
    auto check = [&](Status s) {
        if (st && !s) st = s;
    };
    check(writer.setRootAttribute("faultline_format", std::string("campaign")));
    check(writer.setRootAttribute("faultline_version", int64_t(1)));
    check(writer.setRootAttribute("trace", report.value("trace", std::string())));
    check(writer.setRootAttribute("reps", report.value("reps", int64_t(0))));
    check(writer.setRootAttribute("seed", report.value("seed", int64_t(0))));
    // A cancelled campaign's verdicts rest on the runs that finished: the file says so.
    check(writer.setRootAttribute("cancelled", int64_t(report.value("cancelled", false))));
    check(writer.setRootAttribute("runs", report.value("runs_total", int64_t(0))));
    if (const auto node = report.find("node"); node != report.end() && node->is_object())
        if (const auto host = node->find("host"); host != node->end() && host->is_string())
            check(writer.setRootAttribute("host", host->get<std::string>()));
    if (report.contains("fleet")) check(writer.setRootAttribute("fleet", int64_t(1)));
    return st;
}

// targets/<i>: one target's summary as attributes.
Status writeTargetGroup(SnapshotWriter& writer, size_t i, const nlohmann::json& t)
{
    Status st;
    auto check = [&](Status s) {
        if (st && !s) st = s;
    };
    const std::string g = "targets/" + std::to_string(i);
    const nlohmann::json ci = t.value("ci", nlohmann::json::array({0.0, 0.0}));
    check(writer.setGroupAttribute(g, "target", t.value("target", std::string())));
    check(writer.setGroupAttribute(g, "description", t.value("description", std::string())));
    check(writer.setGroupAttribute(g, "verdict", t.value("verdict", std::string())));
    check(writer.setGroupAttribute(g, "explanation", t.value("explanation", std::string())));
    check(writer.setGroupAttribute(g, "runs", t.value("runs", int64_t(0))));
    check(writer.setGroupAttribute(g, "failures", t.value("failures", int64_t(0))));
    check(writer.setGroupAttribute(g, "rate", t.value("rate", 0.0)));
    check(writer.setGroupAttribute(g, "ci",
                                   std::vector<double>{ci.size() == 2 ? ci[0].get<double>() : 0.0,
                                                       ci.size() == 2 ? ci[1].get<double>() : 0.0}));
    const nlohmann::json det = t.value("determinism", nlohmann::json::object());
    const bool deterministic = det.value("certified", false) || t.value("runs", int64_t(0)) == 0;
    check(writer.setGroupAttribute(g, "deterministic", int64_t(deterministic)));
    return st;
}

}  // namespace

Status writeCampaignResultsJson(const std::string& path, const nlohmann::json& report)
{
    // Small (a campaign's report is bounded by ops x targets), so built in memory: a full disk is
    // one checked write that fails cleanly, nothing half-written, no .tmp left.
    auto w = SnapshotWriter::create(path, {.inMemory = true});
    if (!w) return w.error();
    SnapshotWriter& writer = *w;
    Status st = writeRootAttributes(writer, report);
    if (const auto targets = report.find("targets"); st && targets != report.end() && targets->is_array())
        for (size_t i = 0; i < targets->size() && st; ++i) st = writeTargetGroup(writer, i, (*targets)[i]);
    // The whole report as JSON bytes: what the GUI reads back.
    const std::string doc = report.dump();
    if (st) st = writer.writeTensor("report_json", DType::UInt8, {doc.size()}, doc.data());
    if (!st) return st;
    return writer.close();
}

struct CampaignResultsStream::Impl {
    SnapshotWriter writer;
    size_t targets = 0;
};

CampaignResultsStream::CampaignResultsStream(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
CampaignResultsStream::CampaignResultsStream(CampaignResultsStream&&) noexcept = default;
CampaignResultsStream& CampaignResultsStream::operator=(CampaignResultsStream&&) noexcept = default;
CampaignResultsStream::~CampaignResultsStream() = default;

Result<CampaignResultsStream> CampaignResultsStream::create(const std::string& path,
                                                            const nlohmann::json& header)
{
    // One group per target of a whole fleet: no free-space manager, whose bookkeeping would
    // grow with them (SnapshotWriterOptions).
    auto w = SnapshotWriter::create(path, {.reuseFreedSpace = false});
    if (!w) return w.error();
    auto impl = std::make_unique<Impl>(Impl{std::move(*w), 0});
    if (Status st = writeRootAttributes(impl->writer, header); !st) return st.error();
    return CampaignResultsStream(std::move(impl));
}

Status CampaignResultsStream::addTarget(const nlohmann::json& target)
{
    return writeTargetGroup(m_impl->writer, m_impl->targets++, target);
}

Status CampaignResultsStream::finish(const std::string& jsonPath)
{
    std::ifstream in(jsonPath, std::ios::binary | std::ios::ate);
    if (!in) return fileError(jsonPath, "cannot open", ErrorCode::Io);
    const uint64_t size = uint64_t(in.tellg());
    in.seekg(0);
    SnapshotWriter& writer = m_impl->writer;
    TensorWriteOptions chunked;
    chunked.chunkShape = {std::min<uint64_t>(size, uint64_t(1) << 20)};
    Status st =
        writer.beginTensor("report_json", DType::UInt8, {size}, size ? chunked : TensorWriteOptions{});
    std::vector<char> buffer(size_t(1) << 20);
    for (uint64_t done = 0; st && done < size;) {
        const uint64_t n = std::min<uint64_t>(buffer.size(), size - done);
        if (!in.read(buffer.data(), std::streamsize(n)))
            return fileError(jsonPath, "cannot read", ErrorCode::Io);
        st = writer.appendElements(buffer.data(), n);
        done += n;
    }
    if (st) st = writer.endTensor();
    if (!st) return st;
    return writer.close();
}

Result<nlohmann::json> readCampaignResults(const std::string& path)
{
    auto file = openTensorFile(path);
    if (!file) return file.error();
    const auto& attributes = (*file)->attributes();
    const auto format = attributes.find("faultline_format");
    if (format == attributes.end() || format->second != "campaign")
        return fileError(path, "not a campaign results file (no faultline_format=\"campaign\")");
    auto bytes = loadTensor(**file, "report_json");
    if (!bytes) return bytes.error();
    const auto* begin = reinterpret_cast<const char*>(bytes->data.data());
    auto doc = nlohmann::json::parse(begin, begin + bytes->data.size(), nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return fileError(path, "report_json is not a JSON object");
    return doc;
}

}  // namespace faultline
