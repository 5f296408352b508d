#include "CompareResultsFile.h"

#include <cstdio>

#include "../io/SnapshotWriter.h"
#include "CompareJson.h"

namespace faultline {

Result<CompareResultsWriter> CompareResultsWriter::create(const std::string& path)
{
    auto w = SnapshotWriter::create(path);
    if (!w) return w.error();
    CompareResultsWriter r;
    r.m_writer = std::make_unique<SnapshotWriter>(std::move(*w));
    return r;
}

CompareResultsWriter::CompareResultsWriter(CompareResultsWriter&&) noexcept = default;
CompareResultsWriter& CompareResultsWriter::operator=(CompareResultsWriter&&) noexcept = default;
CompareResultsWriter::~CompareResultsWriter() = default;

Status CompareResultsWriter::addPair(size_t index, const Divergence& d)
{
    SnapshotWriter& writer = *m_writer;
    char group[32];
    std::snprintf(group, sizeof group, "pairs/%06zu", index);
    m_groupByName[d.name] = group;
    Status st;
    auto check = [&st](Status s) {
        if (st && !s) st = std::move(s);
    };
    check(writer.setGroupAttribute(group, "name", d.name));
    check(writer.setGroupAttribute(group, "dtype", std::string(dtypeName(d.dtype))));
    check(writer.setGroupAttribute(group, "rows", int64_t(d.rows)));
    check(writer.setGroupAttribute(group, "cols", int64_t(d.cols)));
    if (!st || !d.tiles.hasCounts()) return st;
    const auto& levels = d.tiles.levels();
    for (size_t l = 0; l < levels.size() && st; ++l) {
        const TileLevel& level = levels[l];
        const std::string g = std::string(group) + "/tiles/" + std::to_string(l);
        check(writer.setGroupAttribute(g, "tile_rows", int64_t(level.tileRows)));
        check(writer.setGroupAttribute(g, "tile_cols", int64_t(level.tileCols)));
        check(writer.setGroupAttribute(g, "grid_rows", int64_t(level.gridRows)));
        check(writer.setGroupAttribute(g, "grid_cols", int64_t(level.gridCols)));
        const std::vector<uint64_t> shape = {level.gridRows, level.gridCols};
        TensorWriteOptions opt;
        opt.gzipLevel = level.tileCount() > 4096 ? 4 : 0;
        check(writer.writeTensor(g + "/mismatches", DType::UInt64, shape, level.mismatches.data(), opt));
        check(writer.writeTensor(g + "/beyond", DType::UInt64, shape, level.beyond.data(), opt));
        check(writer.writeTensor(g + "/anomalies", DType::UInt64, shape, level.anomalies.data(), opt));
        check(writer.writeTensor(g + "/max_abs_error", DType::Float64, shape, level.maxAbsError.data(), opt));
    }
    return st;
}

Status CompareResultsWriter::finish(const CompareReport& report)
{
    SnapshotWriter& writer = *m_writer;
    Status st;
    auto check = [&st](Status s) {
        if (st && !s) st = std::move(s);
    };
    check(writer.setRootAttribute("faultline_format", std::string("compare")));
    check(writer.setRootAttribute("faultline_version", int64_t(kCompareResultsVersion)));
    check(writer.setRootAttribute("suspect", report.suspect));
    check(writer.setRootAttribute("reference", report.reference));
    check(writer.setRootAttribute("tolerance", report.tolerance.toString()));
    // Names and strings from the files may be any bytes: replaced, never thrown on.
    const std::string json =
        compareReportToJson(report).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    check(writer.writeTensor("report_json", DType::UInt8, {json.size()}, json.data()));
    for (size_t rank = 0; rank < report.tensors.size() && st; ++rank) {
        auto g = m_groupByName.find(report.tensors[rank].name);
        if (g == m_groupByName.end())
            return fileError(writer.path(),
                             "tensor '" + report.tensors[rank].name + "' was not added to the results");
        check(writer.setGroupAttribute(g->second, "report_rank", int64_t(rank)));
    }
    if (!st) return st;
    return writer.close();
}

Status writeCompareResults(const std::string& path, const CompareReport& report)
{
    auto w = CompareResultsWriter::create(path);
    if (!w) return w.error();
    for (size_t i = 0; i < report.tensors.size(); ++i)
        if (Status s = w->addPair(i, report.tensors[i]); !s) return s;
    return w->finish(report);
}

}  // namespace faultline
