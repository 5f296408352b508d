// The campaign results file (RESULTS.h5, docs/formats.md): written when a campaign ends, read
// back by the GUI.
#include "CampaignResultsFile.h"

#include <algorithm>

#include "../io/SnapshotWriter.h"
#include "TensorLoad.h"

namespace faultline {

Status writeCampaignResults(const std::string& path, const CampaignReport& report)
{
    // Small (the report is bounded by ops x targets), so built in memory: a full disk is one
    // checked write that fails cleanly, nothing half-written, no .tmp left.
    auto w = SnapshotWriter::create(path, {.inMemory = true});
    if (!w) return w.error();
    SnapshotWriter& writer = *w;
    Status st;
    auto check = [&](Status s) {
        if (st && !s) st = s;
    };
    check(writer.setRootAttribute("faultline_format", std::string("campaign")));
    check(writer.setRootAttribute("faultline_version", int64_t(1)));
    check(writer.setRootAttribute("trace", report.trace));
    check(writer.setRootAttribute("reps", int64_t(report.reps)));
    check(writer.setRootAttribute("seed", int64_t(report.seed)));
    // A cancelled campaign's verdicts rest on the runs that finished: the file says so.
    check(writer.setRootAttribute("cancelled", int64_t(report.cancelled)));
    check(writer.setRootAttribute("runs", int64_t(std::max<uint64_t>(report.runsTotal, report.runs.size()))));
    for (size_t i = 0; i < report.targets.size(); ++i) {
        const TargetSummary& t = report.targets[i];
        const std::string g = "targets/" + std::to_string(i);
        check(writer.setGroupAttribute(g, "target", t.target));
        check(writer.setGroupAttribute(g, "description", t.description));
        check(writer.setGroupAttribute(g, "verdict", nameOf(t.verdict)));
        check(writer.setGroupAttribute(g, "explanation", t.explanation));
        check(writer.setGroupAttribute(g, "runs", int64_t(t.runs)));
        check(writer.setGroupAttribute(g, "failures", int64_t(t.failures)));
        check(writer.setGroupAttribute(g, "rate", t.rate.rate));
        check(writer.setGroupAttribute(g, "ci", std::vector<double>{t.rate.low, t.rate.high}));
        check(writer.setGroupAttribute(g, "deterministic", int64_t(t.deterministic)));
    }
    // The whole report as JSON bytes: what the GUI reads back.
    const std::string json = campaignJson(report).dump();
    check(writer.writeTensor("report_json", DType::UInt8, {json.size()}, json.data()));
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
    auto json = nlohmann::json::parse(begin, begin + bytes->data.size(), nullptr, false);
    if (json.is_discarded() || !json.is_object()) return fileError(path, "report_json is not a JSON object");
    return json;
}

}  // namespace faultline
