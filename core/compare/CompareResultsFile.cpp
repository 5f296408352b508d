#include "CompareResultsFile.h"

#include <cstdio>

#include "../io/SnapshotWriter.h"
#include "CompareJson.h"

namespace faultline {

Status writeCompareResults(const std::string& path, const CompareReport& report)
{
    auto w = SnapshotWriter::create(path);
    if (!w) return w.error();
    SnapshotWriter& writer = *w;
    Status st;
    auto check = [&st](Status s) {
        if (st && !s) st = std::move(s);
    };
    check(writer.setRootAttribute("faultline_format", std::string("compare")));
    check(writer.setRootAttribute("faultline_version", int64_t(kCompareResultsVersion)));
    check(writer.setRootAttribute("suspect", report.suspect));
    check(writer.setRootAttribute("reference", report.reference));
    check(writer.setRootAttribute("tolerance", report.tolerance.toString()));
    const std::string json = compareReportToJson(report).dump();
    check(writer.writeTensor("report_json", DType::UInt8, {json.size()}, json.data()));
    for (size_t i = 0; i < report.tensors.size() && st; ++i) {
        const Divergence& d = report.tensors[i];
        char group[32];
        std::snprintf(group, sizeof group, "pairs/%06zu", i);
        check(writer.setGroupAttribute(group, "name", d.name));
        check(writer.setGroupAttribute(group, "dtype", std::string(dtypeName(d.dtype))));
        check(writer.setGroupAttribute(group, "rows", int64_t(d.rows)));
        check(writer.setGroupAttribute(group, "cols", int64_t(d.cols)));
        if (!d.tiles.hasCounts()) continue;
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
    }
    if (!st) return st;
    return writer.close();
}

}  // namespace faultline
